//! `quire-bench load`: a closed-loop load driver. N connections each send one request, wait
//! for the whole answer, and send the next, for a fixed time; latencies go to an HDR histogram
//! per endpoint family.
//!
//! Each family runs in its own phase, so every figure is that family alone at the phase's
//! concurrency: reads at `--connections`, writes (which serialize on one space) at
//! `--write-connections`, after every read phase so that reads see the generated dataset.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::{Answer, Conn};
use crate::dataset::Dataset;
use crate::text::{self, Rng};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Family {
    /// GET /v1/spaces/{id}: one of the spaces, at random.
    GetSpace,
    /// GET /v1/orgs/{id}/spaces: the first page.
    ListSpacesP1,
    /// GET /v1/orgs/{id}/spaces: a deep page (the last one, or page 20).
    ListSpacesDeep,
    /// GET /v1/spaces/{big}/comments?limit=100: page 1 of the 10,000-item list.
    ListCommentsP1,
    /// The same list, page 50 (keyset cursor found by walking once before the phase).
    ListCommentsP50,
    /// GET /v1/spaces/{big}/content/pages: the 10,000-page tree.
    PageTree,
    /// GET /v1/spaces/{big}/content/page/{id}?format=markdown, a page at random.
    PageMarkdown,
    /// GET /v1/spaces/{big}/comments?status=open&targetPage={a commented page}.
    CommentsFiltered,
    /// GET /v1/spaces/{big}/search?query=one word.
    SearchOneWord,
    /// The same with two words.
    SearchTwoWords,
    /// The same with the prefix of a word.
    SearchPrefix,
    /// POST /v1/spaces/{big}/comments on a page at random.
    CreateComment,
    /// POST /v1/spaces/{big}/change-requests/{cr}/content: one update_page, in the
    /// connection's own change request.
    ContentBatch,
    /// Create a change request, write one page (both untimed), merge it (timed).
    Merge,
    /// GET /v1/orgs/{org}/sites/{site}/published?visitorAuthToken=...: the `sites` phase's
    /// visitor-auth site, whose conditions are evaluated with the token's claims (only in that
    /// phase: the site is made by it, see `crate::sites`).
    SitePublished,
    /// The same view of the `sites` phase's public site without conditions, without a token.
    SitePublishedPlain,
    /// GET /s/{site}/{page path}: a page of the big space as a visitor's browser reads it on
    /// the `sites` phase's public site (HTML, no token), one of a few thousand pages at random.
    ReaderPage,
    /// Builds two docs sites, then measures `site-published` and `site-published-plain` (see
    /// `crate::sites`; the sites are made by the phase, not by the driver's workers).
    Sites,
    /// Bursts of new comments on one space and on 16 spaces, search before and after, the
    /// comment counts checked (see `crate::writers`; not run by the driver's workers).
    Writers,
    /// GitBook's OpenAPI description processed three times, then its computed reference pages
    /// generated in a space and read (see `crate::openapi`; not run by the driver's workers).
    OpenApi,
    /// Merges at 4 writers without, then with, an installed integration whose receiver is the
    /// bench: every event delivered, and how long after the merge (see `crate::events`; run
    /// with the driver's `merge` workers, by its own code).
    Events,
    /// Components of an integration rendered by its script in quire: a cached render, uncached
    /// renders, and the server's memory while 100 renders arrive at once (see
    /// `crate::scripts`; not run by the driver's workers).
    Scripts,
    /// PDF exports of a 500-page space: the whole space (time and the server's memory), one
    /// page at a time, and a ready PDF against a file download of the same bytes (see
    /// `crate::pdf`; not run by the driver's workers).
    Pdf,
    /// Support conversations ingested into a fresh organization with a docs space, analysed and
    /// clustered: the time until every issue is clustered, then for one more conversation, and
    /// how the issues and clusters match the generator's topics (see `crate::conversations`;
    /// not run by the driver's workers).
    Conversations,
    /// Merges of a page at the content limits, with get-space and a small write measured
    /// alongside (see `crate::pathological`; not run by the driver's workers).
    Pathological,
    /// GET / on the reference server.
    Reference,
}

impl Family {
    pub const READS: [Family; 11] = [
        Family::GetSpace,
        Family::ListSpacesP1,
        Family::ListSpacesDeep,
        Family::ListCommentsP1,
        Family::ListCommentsP50,
        Family::PageTree,
        Family::PageMarkdown,
        Family::CommentsFiltered,
        Family::SearchOneWord,
        Family::SearchTwoWords,
        Family::SearchPrefix,
    ];
    pub const WRITES: [Family; 3] = [Family::CreateComment, Family::ContentBatch, Family::Merge];
    /// Phases after the writes, run by their own code, in this order: `sites`, `writers`,
    /// `openapi` (it adds a space of generated reference pages to the first organization),
    /// `events` (it publishes an integration, and unpublishes it when done), `scripts` (the
    /// same with an integration whose script renders components), `pdf` (it adds a 500-page
    /// space to the first organization), `conversations` (in an organization of its own), then
    /// `pathological` (last: it adds a page of about 20 MB of JSON to the big space).
    pub const SPECIAL: [Family; 8] = [
        Family::Sites,
        Family::Writers,
        Family::OpenApi,
        Family::Events,
        Family::Scripts,
        Family::Pdf,
        Family::Conversations,
        Family::Pathological,
    ];
    /// The first and a deep page of each list, compared by a budget: measured together, in
    /// alternating slices (see [`alternate`]).
    pub const LIST_PAIRS: [[Family; 2]; 2] = [
        [Family::ListSpacesP1, Family::ListSpacesDeep],
        [Family::ListCommentsP1, Family::ListCommentsP50],
    ];

    pub fn name(self) -> &'static str {
        match self {
            Family::GetSpace => "get-space",
            Family::ListSpacesP1 => "list-spaces-p1",
            Family::ListSpacesDeep => "list-spaces-deep",
            Family::ListCommentsP1 => "list-comments-p1",
            Family::ListCommentsP50 => "list-comments-p50",
            Family::PageTree => "page-tree",
            Family::PageMarkdown => "page-markdown",
            Family::CommentsFiltered => "comments-filtered",
            Family::SearchOneWord => "search-one-word",
            Family::SearchTwoWords => "search-two-words",
            Family::SearchPrefix => "search-prefix",
            Family::CreateComment => "create-comment",
            Family::ContentBatch => "content-batch",
            Family::Merge => "merge",
            Family::SitePublished => crate::sites::SITE_PUBLISHED,
            Family::SitePublishedPlain => crate::sites::SITE_PUBLISHED_PLAIN,
            Family::ReaderPage => crate::sites::READER_PAGE,
            Family::Sites => "sites",
            Family::Writers => "writers",
            Family::OpenApi => "openapi",
            Family::Events => "events",
            Family::Scripts => "scripts",
            Family::Pdf => "pdf",
            Family::Conversations => "conversations",
            Family::Pathological => "pathological",
            Family::Reference => "reference",
        }
    }

    pub fn is_write(self) -> bool {
        Family::WRITES.contains(&self)
    }

    pub fn by_name(name: &str) -> Option<Family> {
        Family::READS
            .iter()
            .chain(Family::WRITES.iter())
            .chain(Family::SPECIAL.iter())
            .chain(std::iter::once(&Family::Reference))
            .copied()
            .find(|f| f.name() == name)
    }
}

/// One phase's figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FamilyResult {
    pub family: String,
    /// What exactly was requested (page number, list size, words).
    pub detail: String,
    pub connections: usize,
    /// Measured seconds (after warm-up).
    pub seconds: f64,
    /// Successful requests measured.
    pub requests: u64,
    pub rps: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    /// Failed requests (non-2xx or transport errors), and a few of their messages.
    pub errors: u64,
    pub error_samples: Vec<String>,
    /// The endpoint does not exist on this server ("no route"): nothing measured.
    pub missing: bool,
}

impl FamilyResult {
    /// The figures of `hist` (latencies in microseconds of the successful requests) and
    /// `errors` (message → count) over `seconds` measured.
    pub fn measured(
        family: &str,
        detail: String,
        connections: usize,
        hist: &Histogram<u64>,
        errors: BTreeMap<String, u64>,
        seconds: f64,
    ) -> FamilyResult {
        let ms = |us: u64| us as f64 / 1000.0;
        let mut r = FamilyResult {
            family: family.to_string(),
            detail,
            connections,
            seconds,
            requests: hist.len(),
            rps: if seconds > 0.0 {
                hist.len() as f64 / seconds
            } else {
                0.0
            },
            errors: errors.values().sum(),
            error_samples: errors
                .into_iter()
                .take(5)
                .map(|(k, v)| format!("{v}× {k}"))
                .collect(),
            ..FamilyResult::default()
        };
        if !hist.is_empty() {
            r.p50_ms = ms(hist.value_at_quantile(0.50));
            r.p90_ms = ms(hist.value_at_quantile(0.90));
            r.p99_ms = ms(hist.value_at_quantile(0.99));
            r.max_ms = ms(hist.max());
            r.mean_ms = hist.mean() / 1000.0;
        }
        r
    }
}

/// The phases of a mix: (family, connections).
pub fn plan(mix: &str, connections: usize, write_connections: usize) -> Result<Vec<(Family, usize)>, String> {
    let conns = |f: Family| {
        if f.is_write() {
            write_connections
        } else {
            connections
        }
    };
    match mix {
        "default" => Ok(Family::READS
            .iter()
            .chain(Family::WRITES.iter())
            .chain(Family::SPECIAL.iter())
            .map(|f| (*f, conns(*f)))
            .collect()),
        "reads" => Ok(Family::READS.iter().map(|f| (*f, conns(*f))).collect()),
        "writes" => Ok(Family::WRITES.iter().map(|f| (*f, conns(*f))).collect()),
        list => list
            .split(',')
            .map(|name| {
                Family::by_name(name.trim())
                    .map(|f| (f, conns(f)))
                    .ok_or_else(|| format!("unknown family {name:?}; families: {}", family_names()))
            })
            .collect(),
    }
}

pub fn family_names() -> String {
    let mut names: Vec<&str> = Family::READS
        .iter()
        .chain(Family::WRITES.iter())
        .chain(Family::SPECIAL.iter())
        .map(|f| f.name())
        .collect();
    names.push("reference");
    names.join(", ")
}

/// Slices of each side when two families are measured together (see [`alternate`]).
pub const ALTERNATING_ROUNDS: u32 = 5;

/// How a phase is named in progress lines: its families joined by "and".
pub fn phase_name(families: &[Family]) -> String {
    let names: Vec<&str> = families.iter().map(|f| f.name()).collect();
    names.join(" and ")
}

/// Groups phases: the two pages of a list (both in the mix, at the same concurrency) become one
/// phase at the position of the first; every other family is a phase of its own.
pub fn phases(plan: &[(Family, usize)]) -> Vec<(Vec<Family>, usize)> {
    let mut out: Vec<(Vec<Family>, usize)> = Vec::new();
    for (family, conns) in plan {
        let partner = Family::LIST_PAIRS
            .iter()
            .find(|pair| pair[1] == *family)
            .map(|pair| pair[0]);
        if let Some(first) = partner
            && let Some(phase) = out.iter_mut().find(|(f, c)| f == &[first] && c == conns)
        {
            phase.0.push(*family);
            continue;
        }
        out.push((vec![*family], *conns));
    }
    out
}

/// What every connection reads: the dataset and cursors found before the phases.
#[derive(Clone)]
struct Shared {
    data: Dataset,
    tokens: Vec<String>,
    spaces_limit: usize,
    spaces_deep: Option<(usize, String)>,
    comments_p50: Option<(usize, String)>,
    /// 2 KB page texts written by the write families.
    texts: Vec<String>,
    /// The docs sites of the `sites` phase, once it has made them.
    sites: Option<crate::sites::Targets>,
}

pub struct Driver {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

/// Percent-encodes a query parameter value.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl Driver {
    /// A driver for the reference server: only the `reference` family.
    pub fn reference(addr: SocketAddr) -> Driver {
        Driver {
            addr,
            shared: Arc::new(Shared {
                data: Dataset::default(),
                tokens: vec!["reference".into()],
                spaces_limit: 1,
                spaces_deep: None,
                comments_p50: None,
                texts: Vec::new(),
                sites: None,
            }),
        }
    }

    /// Prepares a driver: walks the lists once to find the deep pages' cursors.
    pub async fn new(addr: SocketAddr, data: Dataset) -> Result<Driver, String> {
        let mut conn = Conn::new(addr)?;
        let token = data.admin_token.clone();
        let spaces_limit = (data.list_org_spaces / 20).max(1);
        let spaces_path = format!("/v1/orgs/{}/spaces?limit={spaces_limit}", data.list_org);
        let spaces_deep = walk(&mut conn, &spaces_path, &token, 20).await?;
        let comments_p50 = if data.comments {
            let path = format!("/v1/spaces/{}/comments?limit={}", data.big_space, data.list_limit);
            walk(&mut conn, &path, &token, 50).await?
        } else {
            None
        };
        let mut rng = Rng::new(1234);
        let texts = (0..16)
            .map(|i| text::page_markdown(&mut rng, &format!("Benchmark edit {i}"), &[], 2048))
            .collect();
        Ok(Driver {
            addr,
            shared: Arc::new(Shared {
                tokens: data.read_tokens(),
                data,
                spaces_limit,
                spaces_deep,
                comments_p50,
                texts,
                sites: None,
            }),
        })
    }

    /// The same driver, with the docs sites the `site-published*` families read.
    pub fn with_sites(&self, sites: crate::sites::Targets) -> Driver {
        let mut shared = (*self.shared).clone();
        shared.sites = Some(sites);
        Driver {
            addr: self.addr,
            shared: Arc::new(shared),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn dataset(&self) -> &Dataset {
        &self.shared.data
    }

    /// What a family requests, for the report.
    pub fn detail(&self, family: Family) -> String {
        let d = &self.shared.data;
        match family {
            Family::GetSpace => format!("one of {} spaces at random", d.spaces.len()),
            Family::ListSpacesP1 => format!(
                "page 1, limit={} of {} spaces",
                self.shared.spaces_limit, d.list_org_spaces
            ),
            Family::ListSpacesDeep => match &self.shared.spaces_deep {
                Some((n, _)) => format!(
                    "page {n}, limit={} of {} spaces",
                    self.shared.spaces_limit, d.list_org_spaces
                ),
                None => "no second page".into(),
            },
            Family::ListCommentsP1 => format!(
                "page 1, limit={} of {} comments",
                d.list_limit, d.big_space_comments
            ),
            Family::ListCommentsP50 => match &self.shared.comments_p50 {
                Some((n, _)) => format!(
                    "page {n}, limit={} of {} comments",
                    d.list_limit, d.big_space_comments
                ),
                None => "no second page".into(),
            },
            Family::PageTree => format!("{} pages, gzip", d.pages.len()),
            Family::PageMarkdown => format!("one of {} pages at random", d.pages.len()),
            Family::CommentsFiltered => format!(
                "status=open & targetPage=one of {} commented pages",
                d.commented_pages.len()
            ),
            Family::SearchOneWord => format!("query={:?}", d.search.one_word),
            Family::SearchTwoWords => format!("query={:?}", d.search.two_words),
            Family::SearchPrefix => format!("query={:?}", d.search.prefix),
            Family::CreateComment => "a comment on a page at random".into(),
            Family::ContentBatch => "one update_page (2 KB) in the connection's change request".into(),
            Family::Merge => "merge of a change request that rewrote one page".into(),
            Family::SitePublished => self
                .shared
                .sites
                .as_ref()
                .map_or_else(|| "no site made".into(), |s| s.detail.clone()),
            Family::SitePublishedPlain => self
                .shared
                .sites
                .as_ref()
                .map_or_else(|| "no site made".into(), |s| s.plain_detail.clone()),
            Family::ReaderPage => self
                .shared
                .sites
                .as_ref()
                .map_or_else(|| "no site made".into(), |s| s.pages_detail.clone()),
            Family::Sites => "two docs sites built, their published views read".into(),
            Family::Writers => "comment bursts on one space and on 16, search before and after".into(),
            Family::OpenApi => {
                "GitBook's OpenAPI description processed, its reference pages generated and read".into()
            }
            Family::Events => "merges without and with an installed integration, its events' delivery".into(),
            Family::Scripts => "an integration's component rendered by its script, cached and not".into(),
            Family::Pdf => "PDF exports of a 500-page space, of single pages, and cached ones".into(),
            Family::Conversations => {
                "support conversations ingested, analysed and clustered, then one more".into()
            }
            Family::Pathological => "merges of a page at the content limits".into(),
            Family::Reference => "precomputed JSON body".into(),
        }
    }

    /// Runs one family on `connections` connections: `warmup` unmeasured, then `duration`.
    pub async fn run(
        &self,
        family: Family,
        connections: usize,
        warmup: Duration,
        duration: Duration,
    ) -> Result<FamilyResult, String> {
        let measured = self.measure(family, connections, warmup, duration).await?;
        self.summarize(family, connections, measured)
    }

    /// Runs the `merge` family as [`Driver::run`] does, and also answers every merge that
    /// merged (the probe's and the warm-up's included): when it was sent and answered, and the
    /// revision it made (the `events` phase matches them with the events it receives).
    pub async fn merges(
        &self,
        connections: usize,
        warmup: Duration,
        duration: Duration,
    ) -> Result<(FamilyResult, Vec<Merged>), String> {
        let mut measured = self.measure(Family::Merge, connections, warmup, duration).await?;
        let merged = std::mem::take(&mut measured.merged);
        Ok((self.summarize(Family::Merge, connections, measured)?, merged))
    }

    /// Runs one phase of [`phases`]: a family alone, or a list's two pages alternating.
    pub async fn run_phase(
        &self,
        families: &[Family],
        connections: usize,
        warmup: Duration,
        duration: Duration,
    ) -> Result<Vec<FamilyResult>, String> {
        match families {
            [a, b] => {
                let sides = [(self, *a), (self, *b)];
                Ok(
                    alternate(sides, connections, warmup, duration, ALTERNATING_ROUNDS)
                        .await?
                        .to_vec(),
                )
            }
            _ => {
                let mut out = Vec::with_capacity(families.len());
                for f in families {
                    out.push(self.run(*f, connections, warmup, duration).await?);
                }
                Ok(out)
            }
        }
    }

    async fn measure(
        &self,
        family: Family,
        connections: usize,
        warmup: Duration,
        duration: Duration,
    ) -> Result<Measured, String> {
        // One untimed request first: a missing endpoint is reported, not hammered.
        let mut probe = Worker::new(self.addr, self.shared.clone(), family, 0, connections)?;
        probe.setup().await?;
        let first = probe.op().await;
        if first.no_route {
            return Ok(Measured::missing());
        }
        let mut merged: Vec<Merged> = probe.merged.take().into_iter().collect();
        let mut workers = Vec::with_capacity(connections);
        for i in 0..connections {
            let mut w = Worker::new(self.addr, self.shared.clone(), family, i, connections)?;
            w.setup().await?;
            workers.push(w);
        }
        let start = Instant::now();
        let measure_from = start + warmup;
        let end = measure_from + duration;
        let handles: Vec<_> = workers
            .into_iter()
            .map(|w| tokio::spawn(w.run(measure_from, end)))
            .collect();
        let mut hist = new_histogram()?;
        let mut errors: BTreeMap<String, u64> = BTreeMap::new();
        let mut last = end;
        for h in handles {
            let done = h.await.map_err(|e| format!("a connection failed: {e}"))?;
            hist.add(&done.hist).map_err(|e| e.to_string())?;
            for (k, v) in done.errors {
                *errors.entry(k).or_default() += v;
            }
            last = last.max(done.last);
            merged.extend(done.merged);
        }
        Ok(Measured {
            hist: Some(hist),
            errors,
            seconds: last.duration_since(measure_from).as_secs_f64().max(1e-9),
            merged,
        })
    }

    fn summarize(&self, family: Family, connections: usize, m: Measured) -> Result<FamilyResult, String> {
        let Some(hist) = m.hist else {
            return Ok(FamilyResult {
                family: family.name().to_string(),
                detail: self.detail(family),
                connections,
                missing: true,
                ..FamilyResult::default()
            });
        };
        Ok(FamilyResult::measured(
            family.name(),
            self.detail(family),
            connections,
            &hist,
            m.errors,
            m.seconds,
        ))
    }
}

/// Runs two families, each with its driver (quire's or the reference's), in alternating slices
/// of one phase (`rounds` of each), so that both see the same moments of a shared machine. Run
/// one after the other, the same request measured 30% apart from one phase to the next here,
/// and the reference server drifted by 40% within one run: a comparison must not depend on
/// which side ran while a neighbour was busy.
pub async fn alternate(
    sides: [(&Driver, Family); 2],
    connections: usize,
    warmup: Duration,
    duration: Duration,
    rounds: u32,
) -> Result<[FamilyResult; 2], String> {
    let rounds = rounds.max(1);
    let slice = duration / rounds;
    // Later slices only reopen their connections; the first warms the server up.
    let rewarm = warmup.min(Duration::from_millis(250));
    let mut totals: [Option<Measured>; 2] = [None, None];
    for round in 0..rounds {
        for ((driver, family), total) in sides.iter().zip(&mut totals) {
            let warm = if round == 0 { warmup } else { rewarm };
            let m = driver.measure(*family, connections, warm, slice).await?;
            match total {
                Some(t) => t.add(m)?,
                None => *total = Some(m),
            }
        }
    }
    let [a, b] = totals;
    Ok([
        sides[0]
            .0
            .summarize(sides[0].1, connections, a.unwrap_or_else(Measured::missing))?,
        sides[1]
            .0
            .summarize(sides[1].1, connections, b.unwrap_or_else(Measured::missing))?,
    ])
}

/// What one or more slices of a phase measured; no histogram when the endpoint is missing.
struct Measured {
    hist: Option<Histogram<u64>>,
    errors: BTreeMap<String, u64>,
    seconds: f64,
    /// The merges that merged (`merge` family only).
    merged: Vec<Merged>,
}

impl Measured {
    fn missing() -> Measured {
        Measured {
            hist: None,
            errors: BTreeMap::new(),
            seconds: 0.0,
            merged: Vec::new(),
        }
    }

    fn add(&mut self, other: Measured) -> Result<(), String> {
        match (&mut self.hist, &other.hist) {
            (Some(mine), Some(theirs)) => mine.add(theirs).map_err(|e| e.to_string())?,
            _ => self.hist = None,
        }
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.seconds += other.seconds;
        self.merged.extend(other.merged);
        Ok(())
    }
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // Microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

/// Follows `next.page` from `path` to page `target` (or the last page); returns the page
/// reached and its cursor, None when the list has one page.
async fn walk(
    conn: &mut Conn,
    path: &str,
    token: &str,
    target: usize,
) -> Result<Option<(usize, String)>, String> {
    let mut cursor: Option<String> = None;
    let mut page = 1;
    while page < target {
        let url = match &cursor {
            Some(c) => format!("{path}&page={}", encode(c)),
            None => path.to_string(),
        };
        let answer = conn.get(&url, token).await?;
        if answer.no_route() {
            return Ok(None);
        }
        if !answer.ok() {
            return Err(format!("GET {url}: {}", answer.describe()));
        }
        match answer.json()["next"]["page"].as_str() {
            Some(next) => {
                cursor = Some(next.to_string());
                page += 1;
            }
            None => break,
        }
    }
    Ok(cursor.map(|c| (page, c)))
}

struct Sample {
    latency: Duration,
    error: Option<String>,
    no_route: bool,
}

struct Done {
    hist: Histogram<u64>,
    errors: BTreeMap<String, u64>,
    last: Instant,
    merged: Vec<Merged>,
}

/// A merge of the `merge` family that answered `result: merge`.
#[derive(Clone, Debug)]
pub struct Merged {
    /// Just before the merge request was sent.
    pub sent: Instant,
    /// When its whole answer had arrived (after the commit, which the server made before
    /// answering).
    pub answered: Instant,
    /// The answer's `revision`: main's new revision.
    pub revision: String,
    /// Sent in the measured window (not the probe's, not during the warm-up).
    pub measured: bool,
}

struct Worker {
    conn: Conn,
    shared: Arc<Shared>,
    family: Family,
    rng: Rng,
    token: String,
    /// This connection's pages (writes: disjoint between connections, so merges never conflict).
    pages: Vec<usize>,
    /// This connection's change request (content-batch).
    change_request: Option<String>,
    /// The merge of the last operation, when it merged (`merge`).
    merged: Option<Merged>,
    counter: usize,
    hist: Histogram<u64>,
}

impl Worker {
    fn new(
        addr: SocketAddr,
        shared: Arc<Shared>,
        family: Family,
        index: usize,
        of: usize,
    ) -> Result<Worker, String> {
        let token = shared.tokens[index % shared.tokens.len()].clone();
        let n = shared.data.pages.len();
        let pages = (0..n).filter(|p| p % of.max(1) == index).collect();
        Ok(Worker {
            conn: Conn::new(addr)?,
            rng: Rng::new(0xB3AC_0000 + index as u64 * 7919 + family as u64),
            shared,
            family,
            token,
            pages,
            change_request: None,
            merged: None,
            counter: 0,
            hist: new_histogram()?,
        })
    }

    fn admin(&self) -> String {
        self.shared.data.admin_token.clone()
    }

    async fn setup(&mut self) -> Result<(), String> {
        if self.family == Family::ContentBatch {
            let d = &self.shared.data;
            let answer = self
                .conn
                .post(
                    &format!("/v1/spaces/{}/change-requests", d.big_space),
                    &d.admin_token,
                    &json!({"subject": "Benchmark edits"}),
                )
                .await?;
            if answer.ok() {
                self.change_request = answer.json()["id"].as_str().map(str::to_string);
            }
        }
        Ok(())
    }

    fn page(&mut self) -> String {
        let d = &self.shared.data;
        let i = if self.family.is_write() && !self.pages.is_empty() {
            self.pages[self.rng.below(self.pages.len())]
        } else {
            self.rng.below(d.pages.len())
        };
        d.pages.get(i).cloned().unwrap_or_default()
    }

    fn edit(&mut self) -> Value {
        self.counter += 1;
        let texts = &self.shared.texts;
        let text = texts
            .get(self.counter % texts.len().max(1))
            .cloned()
            .unwrap_or_default();
        let page = self.page();
        json!({"changes": [{"operation": "update_page", "page": page,
            "document": {"markdown": format!("{text}\nRevision {}.\n", self.counter)}}]})
    }

    async fn timed(&mut self, method: http::Method, path: &str, token: &str, body: Option<&Value>) -> Sample {
        let started = Instant::now();
        let answer = self.conn.send(method, path, token, body).await;
        let latency = started.elapsed();
        match answer {
            Ok(a) => judge(&a, latency, self.family),
            Err(e) => Sample {
                latency,
                error: Some(e),
                no_route: false,
            },
        }
    }

    /// One operation of the family; the latency is the timed request's.
    async fn op(&mut self) -> Sample {
        let d = self.shared.clone();
        let data = &d.data;
        let token = self.token.clone();
        let get = http::Method::GET;
        match self.family {
            Family::Reference => self.timed(get, "/", &token, None).await,
            Family::Pathological => {
                setup_failed("the pathological phase runs on its own (crate::pathological)")
            }
            Family::Writers => setup_failed("the writers phase runs on its own (crate::writers)"),
            Family::OpenApi => setup_failed("the openapi phase runs on its own (crate::openapi)"),
            Family::Events => setup_failed("the events phase runs on its own (crate::events)"),
            Family::Scripts => setup_failed("the scripts phase runs on its own (crate::scripts)"),
            Family::Pdf => setup_failed("the pdf phase runs on its own (crate::pdf)"),
            Family::Conversations => {
                setup_failed("the conversations phase runs on its own (crate::conversations)")
            }
            Family::Sites => setup_failed("the sites phase runs on its own (crate::sites)"),
            Family::SitePublished | Family::SitePublishedPlain => {
                let Some(sites) = &d.sites else {
                    return setup_failed("no docs site: the sites phase makes them");
                };
                let path = if self.family == Family::SitePublished {
                    sites.path()
                } else {
                    sites.plain_path()
                };
                self.timed(get, &path, &token, None).await
            }
            Family::ReaderPage => {
                let Some(url) = d.sites.as_ref().and_then(|s| self.rng.pick(&s.pages)).cloned() else {
                    return setup_failed("no reader page: the sites phase finds them");
                };
                // A visitor's browser: no token.
                self.timed(get, &url, "", None).await
            }
            Family::GetSpace => {
                let space = self.rng.pick(&data.spaces).cloned().unwrap_or_default();
                self.timed(get, &format!("/v1/spaces/{space}"), &token, None)
                    .await
            }
            Family::ListSpacesP1 => {
                let path = format!("/v1/orgs/{}/spaces?limit={}", data.list_org, d.spaces_limit);
                self.timed(get, &path, &token, None).await
            }
            Family::ListSpacesDeep => {
                let cursor = d.spaces_deep.as_ref().map(|(_, c)| encode(c)).unwrap_or_default();
                let path = format!(
                    "/v1/orgs/{}/spaces?limit={}&page={cursor}",
                    data.list_org, d.spaces_limit
                );
                self.timed(get, &path, &token, None).await
            }
            Family::ListCommentsP1 => {
                let path = format!("/v1/spaces/{}/comments?limit={}", data.big_space, data.list_limit);
                self.timed(get, &path, &token, None).await
            }
            Family::ListCommentsP50 => {
                let cursor = d
                    .comments_p50
                    .as_ref()
                    .map(|(_, c)| encode(c))
                    .unwrap_or_default();
                let path = format!(
                    "/v1/spaces/{}/comments?limit={}&page={cursor}",
                    data.big_space, data.list_limit
                );
                self.timed(get, &path, &token, None).await
            }
            Family::PageTree => {
                let path = format!("/v1/spaces/{}/content/pages", data.big_space);
                self.timed(get, &path, &token, None).await
            }
            Family::PageMarkdown => {
                let page = self.page();
                let path = format!(
                    "/v1/spaces/{}/content/page/{page}?format=markdown",
                    data.big_space
                );
                self.timed(get, &path, &token, None).await
            }
            Family::CommentsFiltered => {
                let page = self
                    .rng
                    .pick(&data.commented_pages)
                    .cloned()
                    .unwrap_or_else(|| data.pages.first().cloned().unwrap_or_default());
                let path = format!(
                    "/v1/spaces/{}/comments?status=open&targetPage={page}",
                    data.big_space
                );
                self.timed(get, &path, &token, None).await
            }
            Family::SearchOneWord | Family::SearchTwoWords | Family::SearchPrefix => {
                let query = match self.family {
                    Family::SearchOneWord => &data.search.one_word,
                    Family::SearchTwoWords => &data.search.two_words,
                    _ => &data.search.prefix,
                };
                let path = format!("/v1/spaces/{}/search?query={}", data.big_space, encode(query));
                self.timed(get, &path, &token, None).await
            }
            Family::CreateComment => {
                let page = self.page();
                let body = json!({"body": {"markdown": text::comment(&mut self.rng)}, "page": page});
                let path = format!("/v1/spaces/{}/comments", data.big_space);
                self.timed(http::Method::POST, &path, &token, Some(&body)).await
            }
            Family::ContentBatch => {
                let Some(cr) = self.change_request.clone() else {
                    return setup_failed("no change request to write into");
                };
                let body = self.edit();
                let path = format!("/v1/spaces/{}/change-requests/{cr}/content", data.big_space);
                let admin = self.admin();
                self.timed(http::Method::POST, &path, &admin, Some(&body)).await
            }
            Family::Merge => {
                let admin = self.admin();
                let base = format!("/v1/spaces/{}/change-requests", data.big_space);
                let created = self
                    .conn
                    .post(&base, &admin, &json!({"subject": "Benchmark merge"}))
                    .await;
                let cr = match created {
                    Ok(a) if a.ok() => a.json()["id"].as_str().map(str::to_string).unwrap_or_default(),
                    Ok(a) => return setup_failed(&format!("create: {}", a.describe())),
                    Err(e) => return setup_failed(&e),
                };
                let body = self.edit();
                match self
                    .conn
                    .post(&format!("{base}/{cr}/content"), &admin, &body)
                    .await
                {
                    Ok(a) if a.ok() => {}
                    Ok(a) => return setup_failed(&format!("write: {}", a.describe())),
                    Err(e) => return setup_failed(&e),
                }
                let path = format!("{base}/{cr}/merge");
                let sent = Instant::now();
                let answer = self
                    .conn
                    .send(http::Method::POST, &path, &admin, Some(&json!({})))
                    .await;
                let answered = Instant::now();
                let latency = answered - sent;
                match answer {
                    Ok(a) => {
                        let sample = judge(&a, latency, self.family);
                        if sample.error.is_none() {
                            // Parsed after the latency was taken: not in the figure.
                            self.merged = a.json()["revision"].as_str().map(|revision| Merged {
                                sent,
                                answered,
                                revision: revision.to_string(),
                                measured: false,
                            });
                        }
                        sample
                    }
                    Err(e) => Sample {
                        latency,
                        error: Some(e),
                        no_route: false,
                    },
                }
            }
        }
    }

    async fn run(mut self, measure_from: Instant, end: Instant) -> Done {
        let mut errors = BTreeMap::new();
        let mut last = end;
        let mut merged = Vec::new();
        loop {
            let started = Instant::now();
            if started >= end {
                break;
            }
            let sample = self.op().await;
            if let Some(m) = self.merged.take() {
                merged.push(Merged {
                    measured: started >= measure_from,
                    ..m
                });
            }
            if started < measure_from {
                continue;
            }
            last = last.max(Instant::now());
            match sample.error {
                None => {
                    let us = u64::try_from(sample.latency.as_micros())
                        .unwrap_or(u64::MAX)
                        .max(1);
                    self.hist.saturating_record(us);
                }
                Some(e) => {
                    // Few distinct messages are kept; the rest are counted together.
                    let key = if errors.len() < 20 || errors.contains_key(&e) {
                        e
                    } else {
                        "other errors".to_string()
                    };
                    *errors.entry(key).or_default() += 1;
                }
            }
        }
        Done {
            hist: self.hist,
            errors,
            last,
            merged,
        }
    }
}

fn setup_failed(message: &str) -> Sample {
    Sample {
        latency: Duration::ZERO,
        error: Some(format!(
            "setup: {}",
            message.chars().take(120).collect::<String>()
        )),
        no_route: false,
    }
}

/// Whether an answer is a success for its family (a merge must merge).
fn judge(a: &Answer, latency: Duration, family: Family) -> Sample {
    let no_route = a.no_route();
    let error = if !a.ok() {
        Some(a.describe())
    } else if family == Family::Merge && a.json()["result"] != "merge" {
        Some(format!("merge result: {}", a.json()["result"]))
    } else {
        None
    };
    Sample {
        latency,
        error,
        no_route,
    }
}

/// A plain-text table of results.
pub fn table(results: &[FamilyResult]) -> String {
    let mut out = format!(
        "{:<20} {:>5} {:>10} {:>9} {:>9} {:>9} {:>7}  {}\n",
        "family", "conns", "rps", "p50 ms", "p99 ms", "max ms", "errors", "detail"
    );
    for r in results {
        if r.missing {
            out += &format!(
                "{:<20} {:>5} {:>10}  n/a (endpoint missing)\n",
                r.family, r.connections, "-"
            );
            continue;
        }
        out += &format!(
            "{:<20} {:>5} {:>10.1} {:>9.2} {:>9.2} {:>9.2} {:>7}  {}\n",
            r.family, r.connections, r.rps, r.p50_ms, r.p99_ms, r.max_ms, r.errors, r.detail
        );
        for e in &r.error_samples {
            out += &format!("{:<20}   error: {e}\n", "");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_and_names() {
        let p = plan("default", 64, 4).unwrap();
        assert_eq!(p.len(), 22);
        assert_eq!(p[0], (Family::GetSpace, 64));
        assert_eq!(p[13], (Family::Merge, 4));
        assert_eq!(p[14], (Family::Sites, 64), "after the writes");
        assert_eq!(p[15].0, Family::Writers);
        assert_eq!(p[16].0, Family::OpenApi);
        assert_eq!(p[17].0, Family::Events, "after openapi");
        assert_eq!(p[18].0, Family::Scripts, "after events");
        assert_eq!(p[19].0, Family::Pdf, "after scripts");
        assert_eq!(p[20].0, Family::Conversations, "after pdf");
        assert_eq!(p[21].0, Family::Pathological, "last");
        assert_eq!(plan("openapi", 64, 4).unwrap(), vec![(Family::OpenApi, 64)]);
        assert_eq!(plan("events", 64, 4).unwrap(), vec![(Family::Events, 64)]);
        assert_eq!(plan("scripts", 64, 4).unwrap(), vec![(Family::Scripts, 64)]);
        assert_eq!(plan("pdf", 64, 4).unwrap(), vec![(Family::Pdf, 64)]);
        assert_eq!(
            plan("conversations", 64, 4).unwrap(),
            vec![(Family::Conversations, 64)]
        );
        assert_eq!(plan("writers", 64, 4).unwrap(), vec![(Family::Writers, 64)]);
        assert_eq!(plan("sites", 64, 4).unwrap(), vec![(Family::Sites, 64)]);
        // The sites' families need the sites the phase makes: not a mix of their own.
        assert!(plan("site-published", 64, 4).is_err());
        assert_eq!(
            plan("pathological", 64, 4).unwrap(),
            vec![(Family::Pathological, 64)]
        );
        assert!(
            !plan("writes", 64, 4)
                .unwrap()
                .iter()
                .any(|(f, _)| Family::SPECIAL.contains(f))
        );
        assert_eq!(
            plan("page-tree,merge", 8, 2).unwrap(),
            vec![(Family::PageTree, 8), (Family::Merge, 2)]
        );
        assert!(plan("nope", 1, 1).is_err());
        assert_eq!(Family::by_name("reference"), Some(Family::Reference));
    }

    #[test]
    fn pairs_list_pages_into_one_phase() {
        let p = phases(&plan("default", 64, 4).unwrap());
        assert_eq!(p[1], (vec![Family::ListSpacesP1, Family::ListSpacesDeep], 64));
        assert_eq!(p[2], (vec![Family::ListCommentsP1, Family::ListCommentsP50], 64));
        assert_eq!(p.len(), 20);
        // A deep page without its first page runs alone.
        assert_eq!(
            phases(&plan("list-spaces-deep", 8, 2).unwrap()),
            vec![(vec![Family::ListSpacesDeep], 8)]
        );
    }

    #[test]
    fn encodes_queries() {
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
        assert_eq!(encode("abc-_.~"), "abc-_.~");
    }
}
