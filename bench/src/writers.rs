//! The `writers` phase: bursts of new comments from [`WRITERS`] connections, first all on one
//! space, then each connection on its own space, with space search measured before and after
//! the bursts and the spaces' comment counts checked against the comments made.
//!
//! In order, each step `warmup` unmeasured then `duration` measured:
//!
//! 1. `search-one-word` (the load driver's family) on the big space at each of
//!    [`SEARCH_CONNECTIONS`]: the baseline;
//! 2. the same-space burst: [`WRITERS`] connections post comments (a short markdown body, no
//!    page: both bursts do the same work, so their ratio is what sharing a space costs) on the
//!    big space;
//! 3. the own-space burst: the same, connection `i` on space `i` of [`WRITERS`] spaces (the big
//!    space and the next ones of the dataset; spaces the dataset lacks are made through the API
//!    in the first organization before step 1);
//! 4. `search-one-word` again at each of [`SEARCH_CONNECTIONS`];
//! 5. when the run measures no `list-comments-p1` at [`LIST_CONNECTIONS`] with a limit of
//!    [`LIST_LIMIT`] elsewhere, page 1 of the big space's comments at that limit and concurrency;
//! 6. the counts: each space's open comments (`comments` of `GET /v1/spaces/{id}`) and the size
//!    of its comment list (`count` of `GET /v1/spaces/{id}/comments`), read before step 1 and
//!    after the bursts (with the administrator's token and a writer's), must have grown by the
//!    comments answered 2xx (warm-up included).
//!
//! Comments are posted with the tokens of the members who joined every organization, as the
//! `create-comment` family does.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::dataset::Dataset;
use crate::load::{Driver, Family, FamilyResult};
use crate::text::{self, Rng};

/// Connections of each comment burst, and spaces of the own-space burst.
pub const WRITERS: usize = 16;
/// Concurrencies at which search is measured before and after the bursts.
pub const SEARCH_CONNECTIONS: [usize; 2] = [16, 64];
/// The comment list's budget: its concurrency and page size.
pub const LIST_CONNECTIONS: usize = 64;
pub const LIST_LIMIT: usize = 100;
/// Budget: the same-space burst's rate, as a share of the own-space burst's.
pub const SAME_SPACE_SHARE: f64 = 0.80;
/// Budget (PostgreSQL only): the same-space burst's rate, comments per second.
pub const POSTGRES_SAME_SPACE_RPS: f64 = 2_000.0;
/// Budget: search after the bursts, as a share of its rate before.
pub const SEARCH_AFTER_SHARE: f64 = 0.90;
/// Budget: p99 of a comment's creation in the same-space burst.
pub const CREATE_P99_MS: f64 = 30.0;
/// Budget: p99 of the comment list's page 1 at [`LIST_CONNECTIONS`].
pub const LIST_P99_MS: f64 = 20.0;

pub const SAME_SPACE: &str = "comments-one-space";
pub const OWN_SPACES: &str = "comments-own-spaces";

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WritersResult {
    /// The spaces of the own-space burst, in connection order; the first (the big space) is
    /// the same-space burst's.
    pub spaces: Vec<String>,
    /// How many of them the phase made (the dataset had fewer).
    pub spaces_made: usize,
    /// `search-one-word` before the bursts, at each of [`SEARCH_CONNECTIONS`].
    pub search_before: Vec<FamilyResult>,
    /// The same-space burst ([`SAME_SPACE`]).
    pub same_space: Option<FamilyResult>,
    /// The own-space burst ([`OWN_SPACES`]).
    pub own_spaces: Option<FamilyResult>,
    /// `search-one-word` after the bursts.
    pub search_after: Vec<FamilyResult>,
    /// Page 1 of the big space's comments at [`LIST_CONNECTIONS`], limit [`LIST_LIMIT`], after
    /// the bursts; None when the run measured it in the `list-comments-p1` phase.
    pub list_comments: Option<FamilyResult>,
    /// Per space: the counts before and after and the comments made.
    pub counts: Vec<SpaceCount>,
    /// Whether every count read after the bursts is the count before plus the comments made;
    /// None when the counts could not be read.
    pub counts_exact: Option<bool>,
    /// The server has no comment routes: nothing measured.
    #[serde(default)]
    pub comments_missing: bool,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Peak resident set of the server during the phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct SpaceCount {
    pub space: String,
    /// `comments` of the space (open comments) and `count` of its comment list, before.
    pub open_before: i64,
    pub listed_before: i64,
    /// Comments answered 2xx, both bursts, warm-up included.
    pub made: u64,
    /// Requests without an HTTP answer (transport errors, timeouts): made or not, unknown.
    pub unanswered: u64,
    /// The same counts after the bursts, read with the administrator's token and with a
    /// writer's (the server keeps spaces with their caller's role in memory).
    pub open_after: i64,
    pub listed_after: i64,
    pub open_after_writer: i64,
    pub listed_after_writer: i64,
}

impl SpaceCount {
    pub fn exact(&self) -> bool {
        let made = i64::try_from(self.made).unwrap_or(i64::MAX);
        [self.open_after, self.open_after_writer]
            .iter()
            .all(|v| *v == self.open_before + made)
            && [self.listed_after, self.listed_after_writer]
                .iter()
                .all(|v| *v == self.listed_before + made)
    }
}

impl WritersResult {
    pub fn search(&self, after: bool, connections: usize) -> Option<&FamilyResult> {
        let list = if after {
            &self.search_after
        } else {
            &self.search_before
        };
        list.iter().find(|r| r.connections == connections)
    }

    /// Comments made in the phase, in all.
    pub fn made(&self) -> u64 {
        self.counts.iter().map(|c| c.made).sum()
    }
}

/// One request of a closed loop.
type Request = (http::Method, String, Option<Value>);

/// What a closed loop measured.
struct Looped {
    result: FamilyResult,
    /// Answers 2xx per connection, warm-up included.
    succeeded: Vec<u64>,
    /// Requests without an HTTP answer per connection, warm-up included.
    unanswered: Vec<u64>,
}

/// What one connection of a closed loop measured.
struct Connection {
    hist: Histogram<u64>,
    errors: BTreeMap<String, u64>,
    succeeded: u64,
    unanswered: u64,
    last: Instant,
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // As the load driver's: microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

/// `connections` connections in a closed loop, as the load driver's: `warmup` unmeasured, then
/// `duration`; connection `i` sends `make(i, rng)` with token `i` of `tokens`. Latencies and
/// rps count the successful requests started in the measured window, over the window (until
/// the last of them answered).
#[allow(clippy::too_many_arguments)]
async fn closed_loop<F>(
    addr: SocketAddr,
    tokens: &[String],
    connections: usize,
    warmup: Duration,
    duration: Duration,
    family: &str,
    detail: String,
    make: F,
) -> Result<Looped, String>
where
    F: Fn(usize, &mut Rng) -> Request + Send + Sync + 'static,
{
    if tokens.is_empty() {
        return Err("no token to send requests with".into());
    }
    let make = Arc::new(make);
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + duration;
    let mut handles = Vec::with_capacity(connections);
    for i in 0..connections {
        let make = make.clone();
        let token = tokens[i % tokens.len()].clone();
        let mut conn = Conn::new(addr)?;
        let mut hist = new_histogram()?;
        handles.push(tokio::spawn(async move {
            let mut rng = Rng::new(0x5717_0000 + i as u64 * 7919);
            let mut errors: BTreeMap<String, u64> = BTreeMap::new();
            let (mut succeeded, mut unanswered) = (0, 0);
            let mut last = end;
            loop {
                let started = Instant::now();
                if started >= end {
                    break;
                }
                let (method, path, body) = make(i, &mut rng);
                let answer = conn.send(method, &path, &token, body.as_ref()).await;
                let latency = started.elapsed();
                let error = match answer {
                    Ok(a) if a.ok() => {
                        succeeded += 1;
                        None
                    }
                    Ok(a) => Some(a.describe()),
                    Err(e) => {
                        unanswered += 1;
                        Some(e)
                    }
                };
                if started < measure_from {
                    continue;
                }
                last = last.max(Instant::now());
                match error {
                    None => {
                        let us = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX).max(1);
                        hist.saturating_record(us);
                    }
                    Some(e) => {
                        let key = if errors.len() < 20 || errors.contains_key(&e) {
                            e
                        } else {
                            "other errors".to_string()
                        };
                        *errors.entry(key).or_default() += 1;
                    }
                }
            }
            Connection {
                hist,
                errors,
                succeeded,
                unanswered,
                last,
            }
        }));
    }
    let mut hist = new_histogram()?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let (mut succeeded, mut unanswered) = (Vec::new(), Vec::new());
    let mut last = end;
    for h in handles {
        let c = h.await.map_err(|e| format!("a connection failed: {e}"))?;
        hist.add(&c.hist).map_err(|e| e.to_string())?;
        for (k, v) in c.errors {
            *errors.entry(k).or_default() += v;
        }
        succeeded.push(c.succeeded);
        unanswered.push(c.unanswered);
        last = last.max(c.last);
    }
    let seconds = last.duration_since(measure_from).as_secs_f64().max(1e-9);
    Ok(Looped {
        result: FamilyResult::measured(family, detail, connections, &hist, errors, seconds),
        succeeded,
        unanswered,
    })
}

/// The phase's spaces: the dataset's first [`WRITERS`] (the big space first), and as many more
/// as it lacks, made in the first organization with the administrator's token.
async fn spaces(conn: &mut Conn, data: &Dataset) -> Result<(Vec<String>, usize), String> {
    let mut spaces: Vec<String> = data.spaces.iter().take(WRITERS).cloned().collect();
    if spaces.first() != Some(&data.big_space) {
        spaces.retain(|s| *s != data.big_space);
        spaces.insert(0, data.big_space.clone());
        spaces.truncate(WRITERS);
    }
    let org = data.orgs.first().ok_or("the dataset has no organization")?;
    let mut made = 0;
    while spaces.len() < WRITERS {
        let title = format!("Writers space {}", spaces.len() + 1);
        let a = conn
            .post(
                &format!("/v1/orgs/{org}/spaces"),
                &data.admin_token,
                &json!({"title": title}),
            )
            .await?;
        if !a.ok() {
            return Err(format!("create a space: {}", a.describe()));
        }
        let id = a.json()["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("create a space: no id in {}", a.describe()))?;
        spaces.push(id);
        made += 1;
    }
    Ok((spaces, made))
}

/// A space's open comments (`comments` of the space) and the size of its comment list
/// (`count`).
async fn counts(conn: &mut Conn, space: &str, token: &str) -> Result<(i64, i64), String> {
    let path = format!("/v1/spaces/{space}");
    let a = conn.get(&path, token).await?;
    if !a.ok() {
        return Err(format!("GET {path}: {}", a.describe()));
    }
    let open = a.json()["comments"]
        .as_i64()
        .ok_or_else(|| format!("GET {path}: no comments count in {}", a.describe()))?;
    let path = format!("/v1/spaces/{space}/comments?limit=1");
    let a = conn.get(&path, token).await?;
    if !a.ok() {
        return Err(format!("GET {path}: {}", a.describe()));
    }
    let listed = a.json()["count"]
        .as_i64()
        .ok_or_else(|| format!("GET {path}: no count in {}", a.describe()))?;
    Ok((open, listed))
}

/// Whether the list budget's figure comes from the `list-comments-p1` phase of this run: it is
/// in the (read) plan at [`LIST_CONNECTIONS`] and the dataset's list limit is [`LIST_LIMIT`].
/// Otherwise the `writers` phase measures it.
pub fn list_measured(plan: &[(Family, usize)], data: &Dataset) -> bool {
    data.list_limit == LIST_LIMIT
        && plan
            .iter()
            .any(|(f, c)| *f == Family::ListCommentsP1 && *c == LIST_CONNECTIONS)
}

/// Runs the phase. Errors of the phase itself are in `failure`.
pub async fn run(driver: &Driver, warmup: Duration, duration: Duration, measure_list: bool) -> WritersResult {
    let mut out = WritersResult::default();
    if !driver.dataset().comments {
        out.comments_missing = true;
        out.failure = Some("the server has no comment routes".into());
        return out;
    }
    if let Err(e) = steps(driver, warmup, duration, measure_list, &mut out).await {
        eprintln!("writers: {e}");
        out.failure = Some(e);
    }
    out
}

async fn steps(
    driver: &Driver,
    warmup: Duration,
    duration: Duration,
    measure_list: bool,
    out: &mut WritersResult,
) -> Result<(), String> {
    let addr = driver.addr();
    let data = driver.dataset().clone();
    let tokens = data.read_tokens();
    let mut conn = Conn::new(addr)?;
    let (spaces, made) = spaces(&mut conn, &data).await?;
    out.spaces = spaces.clone();
    out.spaces_made = made;
    for space in &spaces {
        let (open, listed) = counts(&mut conn, space, &data.admin_token).await?;
        // Read with a writer's token too, so that the server has the space in memory for them.
        counts(&mut conn, space, &tokens[0]).await?;
        out.counts.push(SpaceCount {
            space: space.clone(),
            open_before: open,
            listed_before: listed,
            ..SpaceCount::default()
        });
    }
    for conns in SEARCH_CONNECTIONS {
        eprintln!("writers: search-one-word at {conns} connections, before the bursts");
        let r = driver.run(Family::SearchOneWord, conns, warmup, duration).await?;
        print_one(&r);
        out.search_before.push(r);
    }
    let comment = |rng: &mut Rng| Some(json!({"body": {"markdown": text::comment(rng)}}));
    let bursts: [(&str, Vec<String>); 2] = [
        (SAME_SPACE, vec![data.big_space.clone()]),
        (OWN_SPACES, spaces.clone()),
    ];
    for (name, targets) in bursts {
        eprintln!("writers: {name} at {WRITERS} connections");
        let detail = if targets.len() == 1 {
            "POST /v1/spaces/{big}/comments, a short comment, every connection on the big space".to_string()
        } else {
            format!(
                "POST /v1/spaces/{{id}}/comments, a short comment, each connection on its own space ({} spaces)",
                targets.len()
            )
        };
        let paths: Vec<String> = targets
            .iter()
            .map(|s| format!("/v1/spaces/{s}/comments"))
            .collect();
        let looped = closed_loop(
            addr,
            &tokens,
            WRITERS,
            warmup,
            duration,
            name,
            detail,
            move |i, rng| (http::Method::POST, paths[i % paths.len()].clone(), comment(rng)),
        )
        .await?;
        print_one(&looped.result);
        for (i, (ok, lost)) in looped.succeeded.iter().zip(&looped.unanswered).enumerate() {
            let space = &targets[i % targets.len()];
            if let Some(c) = out.counts.iter_mut().find(|c| c.space == *space) {
                c.made += ok;
                c.unanswered += lost;
            }
        }
        if name == SAME_SPACE {
            out.same_space = Some(looped.result);
        } else {
            out.own_spaces = Some(looped.result);
        }
    }
    for conns in SEARCH_CONNECTIONS {
        eprintln!("writers: search-one-word at {conns} connections, after the bursts");
        let r = driver.run(Family::SearchOneWord, conns, warmup, duration).await?;
        print_one(&r);
        out.search_after.push(r);
    }
    if measure_list {
        eprintln!("writers: list-comments-p1 (limit {LIST_LIMIT}) at {LIST_CONNECTIONS} connections");
        let path = format!("/v1/spaces/{}/comments?limit={LIST_LIMIT}", data.big_space);
        let big = out
            .counts
            .first()
            .map(|c| c.listed_before + c.made as i64)
            .unwrap_or(0);
        let looped = closed_loop(
            addr,
            &tokens,
            LIST_CONNECTIONS,
            warmup,
            duration,
            Family::ListCommentsP1.name(),
            format!("page 1, limit={LIST_LIMIT} of {big} comments, after the bursts"),
            move |_, _| (http::Method::GET, path.clone(), None),
        )
        .await?;
        print_one(&looped.result);
        out.list_comments = Some(looped.result);
    }
    for c in &mut out.counts {
        (c.open_after, c.listed_after) = counts(&mut conn, &c.space, &data.admin_token).await?;
        (c.open_after_writer, c.listed_after_writer) = counts(&mut conn, &c.space, &tokens[0]).await?;
    }
    out.counts_exact = Some(out.counts.iter().all(SpaceCount::exact));
    Ok(())
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

/// A plain-text summary for the progress output.
pub fn table(r: &WritersResult) -> String {
    let mut s = String::new();
    let rows = r
        .search_before
        .iter()
        .chain(&r.same_space)
        .chain(&r.own_spaces)
        .chain(&r.search_after)
        .chain(&r.list_comments)
        .cloned()
        .collect::<Vec<_>>();
    s += &crate::load::table(&rows);
    match r.counts_exact {
        Some(exact) => {
            s += &format!(
                "counts exact: {} ({} comments made on {} spaces)\n",
                if exact { "yes" } else { "no" },
                r.made(),
                r.counts.len()
            );
            for c in r.counts.iter().filter(|c| !c.exact()) {
                s += &format!(
                    "  {}: open {} -> {} (writer {}), listed {} -> {} (writer {}), made {}, unanswered {}\n",
                    c.space,
                    c.open_before,
                    c.open_after,
                    c.open_after_writer,
                    c.listed_before,
                    c.listed_after,
                    c.listed_after_writer,
                    c.made,
                    c.unanswered
                );
            }
        }
        None => s += "counts not checked\n",
    }
    if let Some(f) = &r.failure {
        s += &format!("FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_exact_when_every_reading_grew_by_the_comments_made() {
        let c = SpaceCount {
            space: "s".into(),
            open_before: 10,
            listed_before: 12,
            made: 5,
            unanswered: 0,
            open_after: 15,
            listed_after: 17,
            open_after_writer: 15,
            listed_after_writer: 17,
        };
        assert!(c.exact());
        assert!(
            !SpaceCount {
                open_after_writer: 14,
                ..c.clone()
            }
            .exact(),
            "a stale count for one caller"
        );
        assert!(
            !SpaceCount {
                listed_after: 18,
                ..c.clone()
            }
            .exact()
        );
        assert!(!SpaceCount { made: 4, ..c }.exact());
    }

    #[test]
    fn the_list_is_measured_here_unless_the_run_has_it_at_64_connections_and_limit_100() {
        let full = Dataset {
            list_limit: 100,
            ..Dataset::default()
        };
        let small = Dataset {
            list_limit: 1,
            ..Dataset::default()
        };
        let default = crate::load::plan("default", 64, 4).unwrap();
        assert!(list_measured(&default, &full));
        assert!(!list_measured(&default, &small));
        assert!(!list_measured(
            &crate::load::plan("default", 32, 4).unwrap(),
            &full
        ));
        assert!(!list_measured(
            &crate::load::plan("writers", 64, 4).unwrap(),
            &full
        ));
    }

    #[test]
    fn searches_are_found_by_concurrency() {
        let at = |n: usize, rps: f64| FamilyResult {
            connections: n,
            rps,
            ..FamilyResult::default()
        };
        let r = WritersResult {
            search_before: vec![at(16, 100.0), at(64, 200.0)],
            search_after: vec![at(16, 90.0)],
            ..WritersResult::default()
        };
        assert_eq!(r.search(false, 64).map(|x| x.rps), Some(200.0));
        assert_eq!(r.search(true, 16).map(|x| x.rps), Some(90.0));
        assert!(r.search(true, 64).is_none());
    }
}
