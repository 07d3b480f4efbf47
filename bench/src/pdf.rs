//! The `pdf` phase (`docs/pdf.md`): PDF exports of a 500-page space, the budget being
//! "a 500-page space (about 1 MB of markdown with tables, code and images) renders in under
//! 10 s on this machine, and the server's resident memory during the render stays under
//! 300 MB; a one-page PDF under 300 ms. Cached PDFs are served at file-download speed."
//!
//! In order, with the administrator's token, in the dataset's first organization:
//!
//! 1. **setup** ([`content`]): a space of [`PAGES`] pages in 5 groups (each group holds top
//!    pages with [`CHILDREN`] children each), about 2 KB of markdown per page (marks, two `##`
//!    sections, a link to another page, a list, a fenced code block, a table of 5 to 8 rows;
//!    every fifth page one of [`IMAGES`] PNG figures, every fourth a Chinese and Japanese
//!    paragraph), written through one change request per group in batches of at most 50
//!    changes (the API's maximum), each merged into main;
//! 2. **whole space**, [`FULL_RENDERS`] times, each on a fresh revision of main (a one-page
//!    edit merged before the second, so nothing is cached): from just before `GET
//!    /v1/spaces/{id}/pdf` to the last byte of the link's 200, following its 202s (the link
//!    itself waits up to `--pdf-wait` before answering 202) after `Retry-After`, but never more
//!    than [`POLL_AT_MOST`] apart. The server's resident set is read a second before (**idle**)
//!    and every [`RSS_POLL`] meanwhile (**peak**);
//! 3. **one page**: [`ONE_PAGE_EXPORTS`] pages across the tree, each `?page={id}&only=true`, one
//!    after the other, each a new export, timed the same way;
//! 4. **cached**: a ready export's link against a download link of the same bytes stored as a
//!    file of the space (uploaded through the API; the two then share one blob, so what differs
//!    is only how each link is served): [`CACHED_CONNECTIONS`] connections on each side in
//!    alternating slices (`load::ALTERNATING_ROUNDS` of each), `warmup` unmeasured then
//!    `duration`; every answer must be 200 with the whole PDF's size. For the one-page PDF and
//!    for the whole space's.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::load::{Driver, FamilyResult};
use crate::scripts::RssWatch;
use crate::text::Rng;

mod content;

pub use content::{CHILDREN, IMAGES, PAGES, TOPS_PER_GROUP};

/// Whole-space exports, each on a fresh revision.
pub const FULL_RENDERS: usize = 2;
/// One-page exports, each of another page.
pub const ONE_PAGE_EXPORTS: usize = 20;
/// Connections on each side of the cached comparison.
pub const CACHED_CONNECTIONS: usize = 16;
/// How often the resident set is read during a whole-space render.
pub const RSS_POLL: Duration = Duration::from_millis(20);
/// The longest pause between two requests of a pending link, whatever `Retry-After` says: the
/// figure is the render's time, not the client's patience.
pub const POLL_AT_MOST: Duration = Duration::from_millis(250);
/// A PDF not ready by then fails the phase.
const GIVE_UP: Duration = Duration::from_secs(300);
/// The pause before the idle resident set is read.
const SETTLE: Duration = Duration::from_secs(1);
/// The largest file the API takes as `base64` (`quire_store`'s `MAX_BASE64_BYTES`); a larger
/// copy is inserted by `url`: the PDF's own link, which the server fetches from itself (the run
/// allows it to fetch from 127.0.0.1).
const MAX_BASE64_BYTES: usize = 1 << 20;
/// Budgets.
pub const FULL_BUDGET_S: f64 = 10.0;
pub const RSS_BUDGET_MB: f64 = 300.0;
pub const ONE_PAGE_P99_BUDGET_MS: f64 = 300.0;
/// A cached PDF's p99 at most this many times the file download's, and its requests per
/// second at least the file's divided by it.
pub const CACHED_RATIO_BUDGET: f64 = 1.5;
/// Family names of the phase's figures.
pub const ONE_PAGE: &str = "pdf-one-page";
pub const CACHED_PDF: &str = "pdf-cached";
pub const FILE_DOWNLOAD: &str = "file-download";

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PdfResult {
    pub org: String,
    pub space: String,
    /// What was written: document pages, groups, markdown, figures and which pages show them.
    pub pages: usize,
    pub groups: usize,
    pub markdown_bytes: usize,
    pub image_bytes: usize,
    pub pages_with_image: usize,
    pub pages_with_cjk: usize,
    pub change_requests: usize,
    pub batches: usize,
    pub setup_seconds: f64,
    /// The whole space's exports, in order.
    pub full: Vec<FullRender>,
    /// The one-page exports (latency from the API call to the whole PDF).
    pub one_page: Option<FamilyResult>,
    /// Their sizes, bytes.
    pub one_page_bytes_min: usize,
    pub one_page_bytes_max: usize,
    /// Ready exports' links against file downloads of the same bytes.
    pub cached: Vec<CachedPair>,
    /// Why a comparison was left out (the copy of its PDF could not be uploaded as a file).
    pub cached_skipped: Vec<String>,
    /// The server has no PDF route: nothing measured.
    pub endpoint_missing: bool,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Peak resident set of the server during the whole phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

impl PdfResult {
    /// The slowest whole-space export.
    pub fn worst_full(&self) -> Option<&FullRender> {
        self.full.iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }

    /// The highest resident set read during a whole-space export, MB.
    pub fn worst_rss_mb(&self) -> Option<f64> {
        self.full.iter().filter_map(|f| f.rss_peak_mb).reduce(f64::max)
    }
}

/// One whole-space export.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FullRender {
    /// Which revision of main: after the import, or after one more merge.
    pub label: String,
    /// The API call's own time, ms.
    pub url_ms: f64,
    /// From the API call to the last byte of the PDF, s.
    pub seconds: f64,
    /// Requests of the link: its 202s, then the 200.
    pub link_requests: usize,
    pub bytes: usize,
    /// The server's resident set a second before, and its peak during the export, MB; how
    /// many times it was read.
    pub rss_idle_mb: Option<f64>,
    pub rss_peak_mb: Option<f64>,
    pub rss_samples: usize,
}

impl FullRender {
    pub fn rss_delta_mb(&self) -> Option<f64> {
        Some(self.rss_peak_mb? - self.rss_idle_mb?)
    }
}

/// A ready PDF's link and a file download of the same bytes, measured alike.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CachedPair {
    /// Which PDF: the one-page one or the whole space's.
    pub what: String,
    pub bytes: usize,
    pub pdf: FamilyResult,
    pub file: FamilyResult,
}

impl CachedPair {
    /// The PDF's p99 over the file's.
    pub fn p99_ratio(&self) -> f64 {
        self.pdf.p99_ms / self.file.p99_ms.max(1e-9)
    }

    /// The file's requests per second over the PDF's (above 1: the PDF is slower).
    pub fn rps_ratio(&self) -> f64 {
        self.file.rps / self.pdf.rps.max(1e-9)
    }

    pub fn within_budget(&self) -> bool {
        self.pdf.requests > 0
            && self.file.requests > 0
            && self.pdf.errors == 0
            && self.file.errors == 0
            && self.p99_ratio() <= CACHED_RATIO_BUDGET
            && self.rps_ratio() <= CACHED_RATIO_BUDGET
    }
}

/// The server's resident set, MB (None without its process id or /proc).
fn rss_mb(pid: Option<u32>) -> Option<f64> {
    pid.and_then(crate::run::rss_kb).map(|kb| kb as f64 / 1024.0)
}

/// Runs the phase; errors of the phase itself are in `failure`. `pid` is the server's process
/// (its resident set is read in /proc); without it the memory figures are missing and their
/// budget fails.
pub async fn run(driver: &Driver, pid: Option<u32>, warmup: Duration, duration: Duration) -> PdfResult {
    let mut out = PdfResult::default();
    if let Err(e) = steps(driver, pid, warmup, duration, &mut out).await {
        eprintln!("pdf: {e}");
        out.failure = Some(e);
    }
    out
}

async fn steps(
    driver: &Driver,
    pid: Option<u32>,
    warmup: Duration,
    duration: Duration,
    out: &mut PdfResult,
) -> Result<(), String> {
    let data = driver.dataset();
    let token = data.admin_token.as_str();
    let mut conn = Conn::new(driver.addr())?;
    out.org = data
        .orgs
        .first()
        .cloned()
        .ok_or("the dataset has no organization")?;
    let space = call(
        &mut conn,
        "POST",
        &format!("/v1/orgs/{}/spaces", out.org),
        token,
        Some(&json!({"title": "PDF handbook", "empty": true})),
    )
    .await?;
    out.space = id(&space, "space")?;
    let space = out.space.clone();
    // A page that does not exist: 404 from the operation, "no route" from a server without it.
    let probe = conn
        .get(&format!("/v1/spaces/{space}/pdf?page=none&only=true"), token)
        .await?;
    if probe.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no PDF route".into());
    }

    let started = Instant::now();
    let pages = content::write_space(&mut conn, token, &space, out).await?;
    out.setup_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "pdf: {} pages ({:.2} MB of markdown, {} with a figure, {} with CJK) in {} groups, {} change \
         requests, {} batches, in {:.1} s",
        out.pages,
        out.markdown_bytes as f64 / 1e6,
        out.pages_with_image,
        out.pages_with_cjk,
        out.groups,
        out.change_requests,
        out.batches,
        out.setup_seconds
    );

    let last_full = whole_space(&mut conn, pid, token, &space, &pages, out).await?;
    let first_one_page = one_pages(&mut conn, token, &space, &pages, out).await?;
    // Cached: each ready PDF against the same bytes as a file download.
    let candidates = [("one-page PDF", first_one_page), ("whole-space PDF", last_full)];
    for (what, fetched) in candidates {
        let Some(f) = fetched else { continue };
        let file = match upload_copy(&mut conn, token, &space, what, &f).await {
            Ok(file) => file,
            // Without the file there is nothing to compare with: said so, the rest stands.
            Err(e) => {
                eprintln!("pdf: not compared: {e}");
                out.cached_skipped.push(format!("{what}: {e}"));
                continue;
            }
        };
        eprintln!(
            "pdf: the cached {what} ({} bytes) and the same bytes as a file, {CACHED_CONNECTIONS} connections each",
            f.body.len()
        );
        let pair = compare(
            driver.addr(),
            what,
            &f.link,
            &file,
            f.body.len(),
            warmup,
            duration,
        )
        .await?;
        print_one(&pair.pdf);
        print_one(&pair.file);
        out.cached.push(pair);
    }
    Ok(())
}

/// The whole space's exports, each on a fresh revision, with the server's resident set; the
/// last one's PDF.
async fn whole_space(
    conn: &mut Conn,
    pid: Option<u32>,
    token: &str,
    space: &str,
    pages: &[String],
    out: &mut PdfResult,
) -> Result<Option<Fetched>, String> {
    let whole = format!("/v1/spaces/{space}/pdf");
    let mut last = None;
    for n in 0..FULL_RENDERS {
        let label = if n == 0 {
            "main after the import".to_string()
        } else {
            // A new revision of main: its export is a new one, typeset again.
            let page = pages.get(n).ok_or("no page to edit")?;
            edit_and_merge(conn, token, space, page, n).await?;
            format!("main after {n} more merge{}", if n == 1 { "" } else { "s" })
        };
        tokio::time::sleep(SETTLE).await;
        let rss_idle_mb = rss_mb(pid);
        let watch = pid.map(|pid| RssWatch::start(pid, RSS_POLL));
        let fetched = fetch(conn, &whole, token).await;
        let (rss_peak_mb, rss_samples) = match watch {
            Some(w) => {
                let (peak, samples) = w.finish();
                (Some(peak).filter(|_| samples > 0), samples)
            }
            None => (None, 0),
        };
        let fetched = fetched?;
        let render = FullRender {
            label,
            url_ms: fetched.url_ms,
            seconds: fetched.seconds,
            link_requests: fetched.link_requests,
            bytes: fetched.body.len(),
            rss_idle_mb,
            rss_peak_mb,
            rss_samples,
        };
        eprintln!(
            "pdf: whole space ({}): {:.2} s, {} link requests, {:.2} MB; RSS idle {}, peak {}",
            render.label,
            render.seconds,
            render.link_requests,
            render.bytes as f64 / 1e6,
            mb(render.rss_idle_mb),
            mb(render.rss_peak_mb)
        );
        out.full.push(render);
        last = Some(fetched);
    }
    Ok(last)
}

/// One-page exports across the tree (top pages and children, with and without figures or CJK
/// text), one after the other; the first one's PDF.
async fn one_pages(
    conn: &mut Conn,
    token: &str,
    space: &str,
    pages: &[String],
    out: &mut PdfResult,
) -> Result<Option<Fetched>, String> {
    let mut hist = new_histogram()?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut first = None;
    let stride = (PAGES / ONE_PAGE_EXPORTS).max(1);
    let started = Instant::now();
    for k in 0..ONE_PAGE_EXPORTS {
        let Some(page) = pages.get((k * stride + k % 5) % PAGES) else {
            continue;
        };
        let path = format!("/v1/spaces/{space}/pdf?page={page}&only=true");
        match fetch(conn, &path, token).await {
            Ok(f) => {
                hist.saturating_record(us(f.seconds));
                let size = f.body.len();
                out.one_page_bytes_max = out.one_page_bytes_max.max(size);
                out.one_page_bytes_min = if out.one_page_bytes_min == 0 {
                    size
                } else {
                    out.one_page_bytes_min.min(size)
                };
                first.get_or_insert(f);
            }
            Err(e) => record(&mut errors, e),
        }
    }
    let one_page = FamilyResult::measured(
        ONE_PAGE,
        format!("{ONE_PAGE_EXPORTS} pages, `?page=ID&only=true`, one after the other, each a new export"),
        1,
        &hist,
        errors,
        started.elapsed().as_secs_f64(),
    );
    print_one(&one_page);
    out.one_page = Some(one_page);
    Ok(first)
}

/// A request that must answer 2xx; its JSON.
async fn call(
    conn: &mut Conn,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> Result<Value, String> {
    let m = http::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
    let a = conn
        .send(m, path, token, body)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    if !a.ok() {
        return Err(format!("{method} {path}: {}", a.describe()));
    }
    Ok(a.json())
}

/// Opens a change request on the space; its id.
async fn open_change_request(
    conn: &mut Conn,
    token: &str,
    space: &str,
    subject: &str,
) -> Result<String, String> {
    let path = format!("/v1/spaces/{space}/change-requests");
    let cr = call(conn, "POST", &path, token, Some(&json!({ "subject": subject }))).await?;
    id(&cr, "change request")
}

/// Merges a change request into main; `what` names it in the error when it does not merge.
async fn merge(conn: &mut Conn, token: &str, space: &str, cr: &str, what: &str) -> Result<(), String> {
    let path = format!("/v1/spaces/{space}/change-requests/{cr}/merge");
    let merged = call(conn, "POST", &path, token, Some(&json!({}))).await?;
    if merged["result"] != "merge" {
        return Err(format!("{what} did not merge: {merged}"));
    }
    Ok(())
}

fn id(v: &Value, what: &str) -> Result<String, String> {
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {v}"))
}

/// A ready PDF, and how long it took.
struct Fetched {
    /// The link as the API answered it, and its path and query (it needs no token).
    url: String,
    link: String,
    url_ms: f64,
    seconds: f64,
    link_requests: usize,
    body: bytes::Bytes,
}

/// The path and query of an absolute URL of the server.
fn path_of(url: &str) -> Result<String, String> {
    let rest = url
        .split_once("://")
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("not an absolute URL: {url}"))?;
    let at = rest.find('/').ok_or_else(|| format!("no path in {url}"))?;
    Ok(rest[at..].to_string())
}

/// Asks for a PDF (`api`: the operation's path and query) and reads its link until it answers
/// the PDF: from just before the API call to the PDF's last byte.
async fn fetch(conn: &mut Conn, api: &str, token: &str) -> Result<Fetched, String> {
    let started = Instant::now();
    let answer = call(conn, "GET", api, token, None).await?;
    let url_ms = started.elapsed().as_secs_f64() * 1000.0;
    let url = answer["url"]
        .as_str()
        .ok_or_else(|| format!("GET {api}: no url in {answer}"))?
        .to_string();
    let link = path_of(&url)?;
    let mut link_requests = 0;
    loop {
        // No token: the link is signed.
        let a = conn
            .get(&link, "")
            .await
            .map_err(|e| format!("GET {link}: {e}"))?;
        link_requests += 1;
        match a.status {
            200 if a.body.starts_with(b"%PDF-") => {
                return Ok(Fetched {
                    url,
                    link,
                    url_ms,
                    seconds: started.elapsed().as_secs_f64(),
                    link_requests,
                    body: a.body,
                });
            }
            200 => return Err(format!("GET {link}: 200 but not a PDF: {}", a.describe())),
            202 if started.elapsed() < GIVE_UP => {
                let wait = a.retry_after.unwrap_or(POLL_AT_MOST).min(POLL_AT_MOST);
                tokio::time::sleep(wait).await;
            }
            202 => return Err(format!("{api}: not ready after {} s", GIVE_UP.as_secs())),
            _ => return Err(format!("GET {link}: {}", a.describe())),
        }
    }
}

/// Rewrites one page in a change request and merges it: a new revision of main.
async fn edit_and_merge(
    conn: &mut Conn,
    token: &str,
    space: &str,
    page: &str,
    n: usize,
) -> Result<(), String> {
    let cr = open_change_request(conn, token, space, &format!("Edit {n}")).await?;
    let md = content::page_markdown(
        &mut Rng::new(n as u64),
        n,
        &format!("Edited page {n}"),
        &[],
        None,
        false,
    );
    let body = json!({"changes": [{"operation": "update_page", "page": page, "document": {"markdown": md}}]});
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    call(conn, "POST", &content, token, Some(&body)).await?;
    merge(
        conn,
        token,
        space,
        &cr,
        &format!("the edit before export {}", n + 1),
    )
    .await
}

/// Stores the PDF's bytes as a file of the space (through a merged change request) and answers
/// its download link's path and query.
async fn upload_copy(
    conn: &mut Conn,
    token: &str,
    space: &str,
    what: &str,
    pdf: &Fetched,
) -> Result<String, String> {
    let cr = open_change_request(conn, token, space, &format!("A copy of the {what}")).await?;
    let name = format!("{}.pdf", what.replace(' ', "-"));
    let source = if pdf.body.len() <= MAX_BASE64_BYTES {
        json!({"base64": content::base64(&pdf.body)})
    } else {
        json!({"url": pdf.url})
    };
    let mut file = json!({"name": name, "contentType": "application/pdf"});
    if let (Some(f), Some(s)) = (file.as_object_mut(), source.as_object()) {
        f.extend(s.clone());
    }
    let body = json!({"changes": [{"operation": "insert_files", "files": [file]}]});
    let a = call(
        conn,
        "POST",
        &format!("/v1/spaces/{space}/change-requests/{cr}/content?compat=false"),
        token,
        Some(&body),
    )
    .await?;
    let inserted = &a["insertedFiles"][0];
    let file = id(inserted, "inserted file")?;
    if inserted["size"].as_u64() != u64::try_from(pdf.body.len()).ok() {
        return Err(format!(
            "the copy of the {what} has {} bytes, not {}",
            inserted["size"],
            pdf.body.len()
        ));
    }
    merge(conn, token, space, &cr, &format!("the copy of the {what}")).await?;
    let path = format!("/v1/spaces/{space}/content/files/{file}");
    let f = call(conn, "GET", &path, token, None).await?;
    path_of(
        f["downloadURL"]
            .as_str()
            .ok_or_else(|| format!("GET {path}: no downloadURL in {f}"))?,
    )
}

/// The PDF's link and the file's, [`CACHED_CONNECTIONS`] connections each, in alternating
/// slices, so that both see the same moments of a shared machine.
async fn compare(
    addr: SocketAddr,
    what: &str,
    pdf: &str,
    file: &str,
    bytes: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<CachedPair, String> {
    let rounds = crate::load::ALTERNATING_ROUNDS.max(1);
    let slice = duration / rounds;
    let sides = [(CACHED_PDF, pdf), (FILE_DOWNLOAD, file)];
    let mut totals = [Totals::new()?, Totals::new()?];
    for round in 0..rounds {
        // Later slices only reopen their connections; the first warms the server up.
        let warm = if round == 0 {
            warmup
        } else {
            warmup.min(Duration::from_millis(250))
        };
        for ((_, path), total) in sides.iter().zip(totals.iter_mut()) {
            let path = Arc::new(path.to_string());
            total.add(load_slice(addr, &path, bytes, warm, slice).await?)?;
        }
    }
    let [p, f] = totals;
    let detail = |side: &str| format!("the {what} ({bytes} bytes) {side}, no token");
    Ok(CachedPair {
        what: what.to_string(),
        bytes,
        pdf: p.result(CACHED_PDF, detail("by its PDF link")),
        file: f.result(FILE_DOWNLOAD, detail("as a file's download link")),
    })
}

/// One side's figures over its slices.
struct Totals {
    hist: Histogram<u64>,
    errors: BTreeMap<String, u64>,
    seconds: f64,
}

impl Totals {
    fn new() -> Result<Totals, String> {
        Ok(Totals {
            hist: new_histogram()?,
            errors: BTreeMap::new(),
            seconds: 0.0,
        })
    }

    fn add(&mut self, other: Totals) -> Result<(), String> {
        self.hist.add(&other.hist).map_err(|e| e.to_string())?;
        for (k, v) in other.errors {
            *self.errors.entry(k).or_default() += v;
        }
        self.seconds += other.seconds;
        Ok(())
    }

    fn result(self, family: &str, detail: String) -> FamilyResult {
        FamilyResult::measured(
            family,
            detail,
            CACHED_CONNECTIONS,
            &self.hist,
            self.errors,
            self.seconds.max(1e-9),
        )
    }
}

/// [`CACHED_CONNECTIONS`] connections reading `path` in a closed loop, `warm` unmeasured then
/// `measure`; every answer must be 200 with `bytes` bytes.
async fn load_slice(
    addr: SocketAddr,
    path: &Arc<String>,
    bytes: usize,
    warm: Duration,
    measure: Duration,
) -> Result<Totals, String> {
    let measure_from = Instant::now() + warm;
    let end = measure_from + measure;
    let handles: Vec<_> = (0..CACHED_CONNECTIONS)
        .map(|_| {
            let path = path.clone();
            tokio::spawn(async move {
                let mut conn = Conn::new(addr)?;
                let mut t = Totals::new()?;
                let mut last = end;
                loop {
                    let started = Instant::now();
                    if started >= end {
                        break;
                    }
                    let answer = conn.get(&path, "").await;
                    let latency = started.elapsed();
                    if started < measure_from {
                        continue;
                    }
                    last = last.max(Instant::now());
                    match answer {
                        Ok(a) if a.status == 200 && a.body.len() == bytes => {
                            t.hist.saturating_record(us_of(latency))
                        }
                        Ok(a) if a.status == 200 => record(
                            &mut t.errors,
                            format!("200 with {} bytes, not {bytes}", a.body.len()),
                        ),
                        Ok(a) => record(&mut t.errors, a.describe()),
                        Err(e) => record(&mut t.errors, e),
                    }
                }
                t.seconds = last.duration_since(measure_from).as_secs_f64();
                Ok::<_, String>(t)
            })
        })
        .collect();
    let mut total = Totals::new()?;
    let mut seconds: f64 = 0.0;
    for h in handles {
        let t = h.await.map_err(|e| format!("a connection failed: {e}"))??;
        seconds = seconds.max(t.seconds);
        total.add(t)?;
    }
    // The slice lasted as long as its longest connection, not the sum of them.
    total.seconds = seconds;
    Ok(total)
}

fn record(errors: &mut BTreeMap<String, u64>, e: String) {
    // Few distinct messages are kept; the rest are counted together.
    let key = if errors.len() < 20 || errors.contains_key(&e) {
        e
    } else {
        "other errors".to_string()
    };
    *errors.entry(key).or_default() += 1;
}

fn us(seconds: f64) -> u64 {
    us_of(Duration::from_secs_f64(seconds.max(0.0)))
}

fn us_of(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // As the load driver's: microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

fn mb(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.1} MB"))
}

/// A plain-text summary for the progress output.
pub fn table(r: &PdfResult) -> String {
    let mut s = String::new();
    for f in &r.full {
        s += &format!(
            "whole space ({}): {:.2} s to the whole PDF ({:.2} MB, {} link requests); RSS idle {}, peak {}\n",
            f.label,
            f.seconds,
            f.bytes as f64 / 1e6,
            f.link_requests,
            mb(f.rss_idle_mb),
            mb(f.rss_peak_mb)
        );
    }
    let mut rows: Vec<FamilyResult> = r.one_page.iter().cloned().collect();
    for p in &r.cached {
        rows.push(p.pdf.clone());
        rows.push(p.file.clone());
    }
    s += &crate::load::table(&rows);
    for p in &r.cached {
        s += &format!(
            "cached {}: p99 {:.2}× the file's, file rps {:.2}× the PDF's\n",
            p.what,
            p.p99_ratio(),
            p.rps_ratio()
        );
    }
    for skipped in &r.cached_skipped {
        s += &format!("not compared: {skipped}\n");
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
    fn paths_of_links() {
        assert_eq!(
            path_of("http://127.0.0.1:8080/pdfs/x/A%20b.pdf?e=1&s=2").unwrap(),
            "/pdfs/x/A%20b.pdf?e=1&s=2"
        );
        assert!(path_of("/pdfs/x").is_err());
    }

    #[test]
    fn cached_budget_needs_both_ratios() {
        let side = |rps: f64, p99: f64| FamilyResult {
            requests: 100,
            rps,
            p99_ms: p99,
            ..FamilyResult::default()
        };
        let mut pair = CachedPair {
            what: "one-page PDF".into(),
            bytes: 1000,
            pdf: side(900.0, 14.0),
            file: side(1000.0, 10.0),
        };
        assert!(pair.within_budget());
        pair.pdf.p99_ms = 16.0;
        assert!(!pair.within_budget(), "p99 1.6×");
        pair.pdf = side(600.0, 10.0);
        assert!(!pair.within_budget(), "rps 1/1.67");
        pair.pdf = FamilyResult {
            errors: 1,
            ..side(1000.0, 10.0)
        };
        assert!(!pair.within_budget(), "errors");
    }
}
