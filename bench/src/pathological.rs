//! The `pathological` phase: merges of a page at the content limits (`quire_content::limits`),
//! with get-space and a small write measured alongside.
//!
//! The page is one GFM table of [`COLUMNS`] × [`ROWS`] cells (the table limits: 100,000 cells,
//! about 600 KB of markdown, a document of about 20 MB of JSON) between two paragraphs, in the
//! big space. It is merged [`REPEATS`] times on the fast path (main did not move since the change
//! request was made: the change request's tree becomes main) and [`REPEATS`] times three-way
//! (another change request edited the paragraph before the table and was merged first, so the
//! merge loads the three versions of the page and diffs them). Each merge is timed from just
//! before its request to its answer: that is its *window*. Without pause meanwhile, get-space
//! ([`READ_CONNECTIONS`]) and a small write (a short comment on another space,
//! [`WRITE_CONNECTIONS`]) run in closed loops; a request counts in a window when it overlapped
//! it (sent before the merge answered, answered after the merge was sent). The same requests in
//! a quiet window before the merges (no merge, no content write) are the comparison.
//!
//! A merge that answers anything but `result: "merge"` ends the phase: the report shows it as
//! a failure.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::dataset::Dataset;
use crate::load::FamilyResult;
use crate::text::{self, Rng};

/// Columns of the table: `MAX_TABLE_COLUMNS`.
pub const COLUMNS: usize = 1_000;
/// Body rows of the table: `COLUMNS * ROWS` is `MAX_TABLE_CELLS` (the header row holds the
/// column titles, not cells).
pub const ROWS: usize = 100;
/// Merges of each kind, each with fresh change requests.
pub const REPEATS: usize = 3;
/// Connections running get-space alongside the merges.
pub const READ_CONNECTIONS: usize = 2;
/// Connections running the small write alongside the merges.
pub const WRITE_CONNECTIONS: usize = 1;
/// Budget: the worst merge of the phase.
pub const MERGE_BUDGET_MS: f64 = 1000.0;
/// Budget: p99 of the small write over every merge window.
pub const SMALL_WRITE_P99_BUDGET_MS: f64 = 100.0;
/// The longest quiet window (it lasts `--duration`, up to this).
pub const QUIET_MAX: Duration = Duration::from_secs(10);
/// Pause between a change request's content write and its merge, so that the write's answer
/// and anything after it does not run into the merge's window.
const SETTLE: Duration = Duration::from_millis(500);
const TITLE: &str = "Pathological table";

pub const FAST_PATH: &str = "fast path";
pub const THREE_WAY: &str = "three-way";
/// Window names, in report order.
pub const QUIET: &str = "no merge (quiet)";
pub const DURING_FAST_PATH: &str = "fast-path merges";
pub const DURING_THREE_WAY: &str = "three-way merges";
pub const DURING_ALL: &str = "all merges";

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PathologicalResult {
    /// The page, in words.
    pub document: String,
    /// Markdown of the page as written (the largest version written).
    pub markdown_bytes: usize,
    /// The page's JSON with its document (`GET …/content/page/{id}?format=document`), after
    /// the merges.
    pub page_json_bytes: Option<usize>,
    /// Every merge, in order (a failed one last).
    pub merges: Vec<MergeRun>,
    /// The requests measured alongside, per window: [`QUIET`], then the merge windows.
    pub windows: Vec<Window>,
    /// Why the phase stopped early (a merge that did not merge, a request that failed).
    pub failure: Option<String>,
    /// Peak resident set of the server during the phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MergeRun {
    /// [`FAST_PATH`] or [`THREE_WAY`].
    pub kind: String,
    /// 1-based.
    pub repeat: usize,
    /// The content write of the document at the limits into the change request (untimed by
    /// any budget), ms.
    pub write_ms: f64,
    /// The merge request, from sending to the whole answer, ms.
    pub merge_ms: f64,
    /// `merge`, or what was answered instead.
    pub result: String,
    pub ok: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Window {
    pub name: String,
    /// Merges in it (0 for the quiet window).
    pub merges: usize,
    /// Total length of its windows, s.
    pub seconds: f64,
    pub small_write: FamilyResult,
    pub get_space: FamilyResult,
}

impl PathologicalResult {
    pub fn window(&self, name: &str) -> Option<&Window> {
        self.windows.iter().find(|w| w.name == name)
    }

    /// The slowest merge (a failed one counts).
    pub fn worst_merge(&self) -> Option<&MergeRun> {
        self.merges
            .iter()
            .max_by(|a, b| a.merge_ms.total_cmp(&b.merge_ms))
    }

    /// Whether every planned merge ran and merged.
    pub fn complete(&self) -> bool {
        self.failure.is_none() && self.merges.len() == 2 * REPEATS && self.merges.iter().all(|m| m.ok)
    }
}

/// The page's markdown: a heading, a paragraph of version `intro`, the table of version
/// `table`, a closing paragraph. Versions only change text, never the shape.
pub fn markdown(intro: usize, table: usize) -> String {
    let mut s = String::with_capacity(COLUMNS * (ROWS + 2) * 6 + 256);
    s.push_str(&format!("# {TITLE}\n\n"));
    s.push_str(&format!(
        "Introduction, version {intro}: a table at the content limits follows ({COLUMNS} columns, {ROWS} rows).\n\n"
    ));
    for c in 0..COLUMNS {
        s.push_str(&format!("| h{c} "));
    }
    s.push_str("|\n");
    for _ in 0..COLUMNS {
        s.push_str("|---");
    }
    s.push_str("|\n");
    for r in 0..ROWS {
        for c in 0..COLUMNS {
            s.push_str(&format!("| {} ", (r * 31 + c * 17 + table * 7) % 1000));
        }
        s.push_str("|\n");
    }
    s.push_str("\nThe table ends here.\n");
    s
}

/// One request measured alongside: when it was sent and answered.
struct Sample {
    start: Instant,
    end: Instant,
    error: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    GetSpace,
    SmallWrite,
}

async fn alongside(
    addr: SocketAddr,
    data: Arc<Dataset>,
    side: Side,
    index: usize,
    stop: Arc<AtomicBool>,
) -> Result<Vec<Sample>, String> {
    let mut conn = Conn::new(addr)?;
    let tokens = data.read_tokens();
    let token = tokens[index % tokens.len()].clone();
    let mut rng = Rng::new(0x9A71_0000 + index as u64 * 7919 + side as u64);
    let other = other_space(&data);
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        let answer = match side {
            Side::GetSpace => {
                let space = rng.pick(&data.spaces).cloned().unwrap_or_default();
                conn.get(&format!("/v1/spaces/{space}"), &token).await
            }
            Side::SmallWrite => {
                let body = json!({"body": {"markdown": text::comment(&mut rng)}});
                conn.post(&format!("/v1/spaces/{other}/comments"), &token, &body)
                    .await
            }
        };
        let end = Instant::now();
        let error = match answer {
            Ok(a) if a.ok() => None,
            Ok(a) => Some(a.describe()),
            Err(e) => Some(e),
        };
        samples.push(Sample { start, end, error });
    }
    Ok(samples)
}

/// Figures of the samples that overlapped any of `windows`.
fn figures(
    family: &str,
    detail: String,
    connections: usize,
    samples: &[Sample],
    windows: &[(Instant, Instant)],
) -> Result<FamilyResult, String> {
    let mut hist = Histogram::<u64>::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for s in samples {
        if !windows.iter().any(|(from, to)| s.start < *to && s.end > *from) {
            continue;
        }
        match &s.error {
            None => {
                let us = u64::try_from(s.end.duration_since(s.start).as_micros()).unwrap_or(u64::MAX);
                hist.saturating_record(us.max(1));
            }
            Some(e) => *errors.entry(e.chars().take(160).collect()).or_default() += 1,
        }
    }
    let seconds: f64 = windows
        .iter()
        .map(|(from, to)| to.duration_since(*from).as_secs_f64())
        .sum();
    Ok(FamilyResult::measured(
        family,
        detail,
        connections,
        &hist,
        errors,
        seconds,
    ))
}

/// Runs the phase: `warmup` of the requests alongside, a quiet window of `quiet` (at most
/// [`QUIET_MAX`]), then the merges. Errors of the phase itself are in `failure`.
pub async fn run(addr: SocketAddr, data: &Dataset, warmup: Duration, quiet: Duration) -> PathologicalResult {
    let mut out = PathologicalResult {
        document: format!(
            "One page of the big space: a GFM table of {COLUMNS} columns × {ROWS} rows ({} cells) between two paragraphs",
            COLUMNS * ROWS
        ),
        ..PathologicalResult::default()
    };
    let data = Arc::new(data.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let mut handles = Vec::new();
    for (side, n) in [
        (Side::GetSpace, READ_CONNECTIONS),
        (Side::SmallWrite, WRITE_CONNECTIONS),
    ] {
        for i in 0..n {
            handles.push((
                side,
                tokio::spawn(alongside(addr, data.clone(), side, i, stop.clone())),
            ));
        }
    }
    tokio::time::sleep(warmup).await;
    let quiet_from = Instant::now();
    tokio::time::sleep(quiet.min(QUIET_MAX)).await;
    let quiet_window = (quiet_from, Instant::now());
    let mut windows: Vec<(&'static str, Instant, Instant)> = Vec::new();
    if let Err(e) = merges(addr, &data, &mut out, &mut windows).await {
        eprintln!("pathological: {e}");
        out.failure = Some(e);
    }
    stop.store(true, Ordering::Relaxed);
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for (side, h) in handles {
        match h.await {
            Ok(Ok(samples)) if side == Side::GetSpace => reads.extend(samples),
            Ok(Ok(samples)) => writes.extend(samples),
            Ok(Err(e)) => {
                out.failure = out
                    .failure
                    .take()
                    .or(Some(format!("a connection alongside: {e}")))
            }
            Err(e) => {
                out.failure = out
                    .failure
                    .take()
                    .or(Some(format!("a connection alongside: {e}")))
            }
        }
    }
    let other = other_space(&data);
    let sets: [(&str, Vec<(Instant, Instant)>); 4] = [
        (QUIET, vec![quiet_window]),
        (
            DURING_FAST_PATH,
            windows
                .iter()
                .filter(|w| w.0 == FAST_PATH)
                .map(|w| (w.1, w.2))
                .collect(),
        ),
        (
            DURING_THREE_WAY,
            windows
                .iter()
                .filter(|w| w.0 == THREE_WAY)
                .map(|w| (w.1, w.2))
                .collect(),
        ),
        (DURING_ALL, windows.iter().map(|w| (w.1, w.2)).collect()),
    ];
    for (name, set) in sets {
        let merges = if name == QUIET { 0 } else { set.len() };
        let small_write = figures(
            "small-write",
            format!("POST /v1/spaces/{other}/comments, a short comment on another space"),
            WRITE_CONNECTIONS,
            &writes,
            &set,
        );
        let get_space = figures(
            "get-space",
            format!("one of {} spaces at random", data.spaces.len()),
            READ_CONNECTIONS,
            &reads,
            &set,
        );
        match (small_write, get_space) {
            (Ok(small_write), Ok(get_space)) => out.windows.push(Window {
                name: name.to_string(),
                merges,
                seconds: small_write.seconds,
                small_write,
                get_space,
            }),
            (Err(e), _) | (_, Err(e)) => out.failure = out.failure.take().or(Some(e)),
        }
    }
    out.page_json_bytes = page_json_bytes(addr, &data, &out).await;
    out
}

/// Size of the page's JSON as served, when the page exists.
/// The space the small writes go to: another than the big one, where the merges run.
fn other_space(data: &Dataset) -> String {
    data.spaces
        .get(1)
        .or(data.spaces.first())
        .cloned()
        .unwrap_or_default()
}

async fn page_json_bytes(addr: SocketAddr, data: &Dataset, out: &PathologicalResult) -> Option<usize> {
    out.merges.first()?;
    let mut conn = Conn::new(addr).ok()?;
    let tree = conn
        .get(
            &format!("/v1/spaces/{}/content/pages", data.big_space),
            &data.admin_token,
        )
        .await
        .ok()?
        .json();
    let id = find_page(&tree["pages"], TITLE)?;
    let a = conn
        .get(
            &format!("/v1/spaces/{}/content/page/{id}?format=document", data.big_space),
            &data.admin_token,
        )
        .await
        .ok()?;
    a.ok().then(|| a.text().len())
}

fn find_page(pages: &Value, title: &str) -> Option<String> {
    for p in pages.as_array()? {
        if p["title"] == title {
            return p["id"].as_str().map(str::to_string);
        }
        if let Some(id) = find_page(&p["pages"], title) {
            return Some(id);
        }
    }
    None
}

/// A request of the phase's own steps: the answer's JSON and its time, or why it failed.
async fn post(
    conn: &mut Conn,
    path: &str,
    token: &str,
    body: &Value,
    what: &str,
) -> Result<(Value, f64), String> {
    let started = Instant::now();
    let a = conn
        .post(path, token, body)
        .await
        .map_err(|e| format!("{what}: {e}"))?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if !a.ok() {
        return Err(format!("{what}: {}", a.describe()));
    }
    Ok((a.json(), ms))
}

async fn create(conn: &mut Conn, base: &str, token: &str, subject: &str) -> Result<String, String> {
    let (v, _) = post(
        conn,
        base,
        token,
        &json!({"subject": subject}),
        "create a change request",
    )
    .await?;
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("create a change request: no id in {v}"))
}

fn update(page: &str, markdown: String) -> Value {
    json!({"changes": [{"operation": "update_page", "page": page, "document": {"markdown": markdown}}]})
}

/// The merges, in order; each merge's window goes to `windows`.
async fn merges(
    addr: SocketAddr,
    data: &Dataset,
    out: &mut PathologicalResult,
    windows: &mut Vec<(&'static str, Instant, Instant)>,
) -> Result<(), String> {
    let mut conn = Conn::new(addr)?;
    let token = data.admin_token.as_str();
    let base = format!("/v1/spaces/{}/change-requests", data.big_space);
    let mut page: Option<String> = None;
    // Versions of the paragraph before the table and of the table, as on main.
    let (mut intro, mut table) = (0, 0);
    let merge = |kind: &'static str, repeat: usize, cr: String, write_ms: f64| {
        let path = format!("{base}/{cr}/merge");
        async move {
            let mut conn = Conn::new(addr)?;
            tokio::time::sleep(SETTLE).await;
            let from = Instant::now();
            let answer = conn.post(&path, token, &json!({})).await;
            let to = Instant::now();
            let mut run = MergeRun {
                kind: kind.to_string(),
                repeat,
                write_ms,
                merge_ms: to.duration_since(from).as_secs_f64() * 1000.0,
                ..MergeRun::default()
            };
            run.result = match &answer {
                Ok(a) if a.ok() => match a.json()["result"].as_str() {
                    Some(r) => r.to_string(),
                    None => a.describe(),
                },
                Ok(a) => a.describe(),
                Err(e) => e.clone(),
            };
            run.ok = run.result == "merge";
            Ok::<_, String>((run, (kind, from, to)))
        }
    };
    for repeat in 1..=REPEATS {
        // Fast path: main has not moved since the change request was made.
        let cr = create(&mut conn, &base, token, "Pathological: rewrite the table").await?;
        table += 1;
        let md = markdown(intro, table);
        out.markdown_bytes = out.markdown_bytes.max(md.len());
        let body = match &page {
            None => json!({"changes": [{"operation": "insert_page", "ref": "table", "title": TITLE,
                "document": {"markdown": md}}]}),
            Some(p) => update(p, md),
        };
        let (answer, write_ms) = post(
            &mut conn,
            &format!("{base}/{cr}/content?compat=false"),
            token,
            &body,
            "write the table page",
        )
        .await?;
        if page.is_none() {
            page = Some(
                answer["changes"][0]["page"]["id"]
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("insert_page: no page id in the answer ({})", short(&answer)))?,
            );
        }
        let (run, window) = merge(FAST_PATH, repeat, cr, write_ms).await?;
        record(out, windows, run, window)?;
    }
    let page = page.ok_or("no page")?;
    for repeat in 1..=REPEATS {
        // Three-way: both change requests start from the same main; the one that edits the
        // paragraph before the table merges first, then the one that rewrites the table.
        let rewrite = create(&mut conn, &base, token, "Pathological: rewrite the table").await?;
        let edit = create(&mut conn, &base, token, "Pathological: edit the introduction").await?;
        let md = markdown(intro, table + 1);
        out.markdown_bytes = out.markdown_bytes.max(md.len());
        let (_, write_ms) = post(
            &mut conn,
            &format!("{base}/{rewrite}/content?compat=false"),
            token,
            &update(&page, md),
            "write the table page",
        )
        .await?;
        post(
            &mut conn,
            &format!("{base}/{edit}/content?compat=false"),
            token,
            &update(&page, markdown(intro + 1, table)),
            "write the introduction",
        )
        .await?;
        let (merged, _) = post(
            &mut conn,
            &format!("{base}/{edit}/merge"),
            token,
            &json!({}),
            "merge the introduction's change request first",
        )
        .await?;
        if merged["result"] != "merge" {
            return Err(format!(
                "merge the introduction's change request first: result {} ({})",
                merged["result"],
                short(&merged)
            ));
        }
        (intro, table) = (intro + 1, table + 1);
        let (run, window) = merge(THREE_WAY, repeat, rewrite, write_ms).await?;
        record(out, windows, run, window)?;
    }
    Ok(())
}

fn record(
    out: &mut PathologicalResult,
    windows: &mut Vec<(&'static str, Instant, Instant)>,
    run: MergeRun,
    window: (&'static str, Instant, Instant),
) -> Result<(), String> {
    eprintln!(
        "pathological: {} merge {}: {:.0} ms (content write {:.0} ms): {}",
        run.kind, run.repeat, run.merge_ms, run.write_ms, run.result
    );
    let failed = (!run.ok).then(|| format!("{} merge {} answered: {}", run.kind, run.repeat, run.result));
    out.merges.push(run);
    windows.push(window);
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(160).collect()
}

/// A plain-text summary for the progress output.
pub fn table(r: &PathologicalResult) -> String {
    let mut s = String::new();
    for m in &r.merges {
        s += &format!(
            "{:<20} merge {}: {:>8.1} ms (content write {:.0} ms) {}\n",
            m.kind, m.repeat, m.merge_ms, m.write_ms, m.result
        );
    }
    s += &format!(
        "{:<20} {:>6} {:>9} {:>9} {:>9} | {:>6} {:>9} {:>9} {:>9}\n",
        "window", "writes", "p50 ms", "p99 ms", "max ms", "gets", "p50 ms", "p99 ms", "max ms"
    );
    for w in &r.windows {
        let (a, b) = (&w.small_write, &w.get_space);
        s += &format!(
            "{:<20} {:>6} {:>9.2} {:>9.2} {:>9.2} | {:>6} {:>9.2} {:>9.2} {:>9.2}{}\n",
            w.name,
            a.requests,
            a.p50_ms,
            a.p99_ms,
            a.max_ms,
            b.requests,
            b.p50_ms,
            b.p99_ms,
            b.max_ms,
            if a.errors + b.errors > 0 {
                format!("  errors: {}", a.errors + b.errors)
            } else {
                String::new()
            }
        );
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
    fn the_page_is_at_the_table_limits() {
        let md = markdown(1, 2);
        let lines: Vec<&str> = md.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(lines.len(), ROWS + 2, "header, delimiter, rows");
        assert!(lines.iter().all(|l| l.matches('|').count() == COLUMNS + 1));
        assert_eq!(COLUMNS * ROWS, 100_000, "MAX_TABLE_CELLS");
        assert!((500_000..2 * 1024 * 1024).contains(&md.len()), "{}", md.len());
        // Versions change the paragraph or the table, nothing else.
        let (a, b, c) = (markdown(1, 2), markdown(2, 2), markdown(1, 3));
        let differ = |x: &str, y: &str| x.lines().zip(y.lines()).filter(|(p, q)| p != q).count();
        assert_eq!(differ(&a, &b), 1);
        assert!(differ(&a, &c) > 1 && a.lines().nth(2) == c.lines().nth(2));
    }

    #[test]
    fn samples_count_when_they_overlap_a_window() {
        let t = Instant::now();
        let at = |ms: u64| t + Duration::from_millis(ms);
        let sample = |from: u64, to: u64| Sample {
            start: at(from),
            end: at(to),
            error: None,
        };
        let samples = [
            sample(0, 5),   // before
            sample(8, 12),  // across the start
            sample(12, 14), // inside
            sample(18, 30), // across the end
            sample(21, 22), // after
        ];
        let r = figures("small-write", String::new(), 1, &samples, &[(at(10), at(20))]).unwrap();
        assert_eq!(r.requests, 3);
        assert!((r.max_ms - 12.0).abs() < 0.1, "{}", r.max_ms);
        assert!((r.seconds - 0.010).abs() < 1e-9);
    }
}
