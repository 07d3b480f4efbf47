//! The `openapi` phase: GitBook's own OpenAPI description (`npm pack @gitbook/api`, unpacked by
//! `.ci/gitbook-api` into `target/gitbook-api/package/spec/openapi.json`) processed by quire,
//! then the API reference pages computed from it (`docs/openapi-specs.md`).
//!
//! The bench serves the description itself over HTTP on 127.0.0.1 (an ephemeral port; `run`
//! starts quire with `QUIRE_OUTBOUND_ALLOW=127.0.0.1`, as quire refuses loopback addresses
//! otherwise). Then, with the administrator's token, in the dataset's first organization:
//!
//! 1. [`SPECS`] specifications are created from that URL, one after another, each with a fresh
//!    slug, each timed from just before its `POST /v1/orgs/{org}/openapi` to the answer of the
//!    first `GET .../openapi/{slug}` (polled every [`POLL`]) that shows `processingState:
//!    complete`. One that completes with `lastProcessErrorCode` fails the phase (its errors are
//!    reported). Budget: the worst ≤ [`PROCESS_BUDGET_MS`];
//! 2. a fresh space gets a computed page (`builtin:openapi`, the first specification) through a
//!    change request, which is merged; the time from just before the merge request to the first
//!    `GET /v1/spaces/{space}/content` that lists the generated pages is shown (no budget; more
//!    than [`PAGES_TIMEOUT`] fails the phase);
//! 3. every generated page is read once with `?format=markdown` (cold: the first read of that
//!    page, each request timed alone), then once more (warm). Budget: the worst cold read
//!    ≤ [`PAGE_BUDGET_MS`].

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::dataset::Dataset;

/// Where `.ci/gitbook-api` unpacks GitBook's description (relative to the repository's root).
pub const DEFAULT_DESCRIPTION: &str = "target/gitbook-api/package/spec/openapi.json";
/// Specifications created, one after another.
pub const SPECS: usize = 3;
/// Budget: the slowest of the [`SPECS`] from create to `complete`.
pub const PROCESS_BUDGET_MS: f64 = 5_000.0;
/// Budget: the slowest cold read of a generated page as markdown.
pub const PAGE_BUDGET_MS: f64 = 50.0;
/// How often the specification (and the space's content) is polled.
pub const POLL: Duration = Duration::from_millis(20);
/// A specification not complete by then fails the phase (quire bounds a run at 45 s).
pub const PROCESS_TIMEOUT: Duration = Duration::from_secs(60);
/// Generated pages not visible by then after the merge fail the phase.
pub const PAGES_TIMEOUT: Duration = Duration::from_secs(120);
const COMPUTED_TITLE: &str = "API reference";
/// What quire writes in place of a page too large to show (`quire_store::openapi::pages`).
const TOO_LARGE: &str = "too large to show here";

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpenApiResult {
    /// The description file read.
    pub description: String,
    /// Its size, operations (path × method), schemas (`components.schemas`), tags.
    pub description_bytes: usize,
    pub operations: usize,
    pub schemas: usize,
    pub tags: usize,
    /// The description file was not there (`.ci/gitbook-api` failed or was not run): nothing
    /// measured.
    pub description_missing: bool,
    /// The server has no OpenAPI routes: nothing measured.
    pub endpoint_missing: bool,
    pub org: String,
    /// The URL quire fetched it from (the bench's own server).
    pub source_url: String,
    /// Requests the bench's server answered (one per processing).
    pub fetches: u64,
    /// Each specification, in order (a failed one last).
    pub specs: Vec<SpecRun>,
    /// The space of the computed page (made by the phase).
    pub space: Option<String>,
    /// The merge request itself, ms.
    pub merge_ms: Option<f64>,
    /// From just before the merge request to the first content listing with the generated
    /// pages, ms.
    pub pages_visible_ms: Option<f64>,
    /// Content listings polled until then.
    pub pages_polls: usize,
    /// The computed page's `computedSeed` (with `computed=false`) is the first specification's
    /// `lastVersion`.
    pub seed_matches: Option<bool>,
    /// Every generated page, in tree order, with its cold and warm read.
    pub pages: Vec<PageRead>,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Peak resident set of the server during the phase, MB (the largest of the steps' below
    /// and of what `run` samples after them).
    pub peak_rss_mb: f64,
    /// Peak resident set of the server per step, MB (0 when not sampled): processing the
    /// specifications; from the merge to the generated pages listed (the pages job); reading
    /// the pages.
    #[serde(default)]
    pub peak_rss_processing_mb: f64,
    #[serde(default)]
    pub peak_rss_generation_mb: f64,
    #[serde(default)]
    pub peak_rss_reads_mb: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SpecRun {
    pub slug: String,
    /// The create request's answer, ms.
    pub create_ms: f64,
    /// From just before the create request to the first GET showing `complete`, ms (to the
    /// last poll when it did not complete).
    pub complete_ms: f64,
    pub polls: usize,
    /// A poll saw `processingState: progress`.
    pub saw_progress: bool,
    pub version: Option<String>,
    /// `lastProcessErrorCode`, and `lastProcessedErrors` (code, message, where).
    pub error_code: Option<String>,
    pub errors: Vec<String>,
    /// Completed without an error, with a version.
    pub ok: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PageRead {
    pub id: String,
    pub title: String,
    pub path: String,
    /// Bytes of the page's markdown (the answer's `markdown`).
    pub markdown_bytes: usize,
    /// Bytes of the answer as sent (gzip-compressed when `gzipped`).
    pub answer_bytes: usize,
    pub gzipped: bool,
    /// quire wrote a note instead of the page (too large for the content limits).
    pub too_large: bool,
    /// The first read of the page, ms.
    pub cold_ms: f64,
    /// The second read, ms.
    pub warm_ms: Option<f64>,
    /// A read that failed (status and body, or the transport error).
    pub error: Option<String>,
}

impl OpenApiResult {
    /// The slowest processing (a failed one counts).
    pub fn worst_processing(&self) -> Option<&SpecRun> {
        self.specs
            .iter()
            .max_by(|a, b| a.complete_ms.total_cmp(&b.complete_ms))
    }

    /// Every specification was processed, without an error.
    pub fn processing_complete(&self) -> bool {
        self.specs.len() == SPECS && self.specs.iter().all(|s| s.ok)
    }

    /// The slowest cold read.
    pub fn slowest_page(&self) -> Option<&PageRead> {
        self.pages.iter().max_by(|a, b| a.cold_ms.total_cmp(&b.cold_ms))
    }

    pub fn cold_median_ms(&self) -> f64 {
        median(self.pages.iter().map(|p| p.cold_ms).collect())
    }

    pub fn warm_max_ms(&self) -> Option<f64> {
        self.pages.iter().filter_map(|p| p.warm_ms).reduce(f64::max)
    }

    pub fn warm_median_ms(&self) -> f64 {
        median(self.pages.iter().filter_map(|p| p.warm_ms).collect())
    }

    pub fn page_errors(&self) -> usize {
        self.pages.iter().filter(|p| p.error.is_some()).count()
    }
}

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Operations (path × method), schemas and tags of a description.
pub fn counts(description: &Value) -> (usize, usize, usize) {
    const METHODS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];
    let operations = description["paths"]
        .as_object()
        .map(|paths| {
            paths
                .values()
                .filter_map(Value::as_object)
                .map(|item| item.keys().filter(|k| METHODS.contains(&k.as_str())).count())
                .sum()
        })
        .unwrap_or(0);
    let schemas = description["components"]["schemas"]
        .as_object()
        .map_or(0, serde_json::Map::len);
    let tags = description["tags"].as_array().map_or(0, Vec::len);
    (operations, schemas, tags)
}

/// Serves `body` as JSON at any path on 127.0.0.1 (an ephemeral port), counting requests.
async fn serve(
    body: bytes::Bytes,
    fetches: Arc<AtomicU64>,
) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), String> {
    use axum::http::header;
    use axum::response::IntoResponse;
    let handler = move || {
        let (body, fetches) = (body.clone(), fetches.clone());
        async move {
            fetches.fetch_add(1, Ordering::Relaxed);
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
    };
    let app = axum::Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((addr, task))
}

/// The server's peak resident set since the last call, MB (`run`'s sampler; 0 without one).
pub type PeakRss<'a> = &'a (dyn Fn() -> f64 + Sync);

/// Runs the phase against the server at `addr`; errors of the phase itself are in `failure`.
/// `peak` gives the server's peak resident set since its last call, for each step's.
pub async fn run(addr: SocketAddr, data: &Dataset, description: &Path, peak: PeakRss<'_>) -> OpenApiResult {
    let mut out = OpenApiResult {
        description: description.display().to_string(),
        ..OpenApiResult::default()
    };
    let text = match std::fs::read(description) {
        Ok(t) => t,
        Err(e) => {
            out.description_missing = true;
            out.failure = Some(format!(
                "GitBook's description is missing ({}: {e}): run `bash .ci/gitbook-api` (needs npm)",
                description.display()
            ));
            eprintln!("openapi: {}", out.failure.as_deref().unwrap_or_default());
            return out;
        }
    };
    out.description_bytes = text.len();
    match serde_json::from_slice::<Value>(&text) {
        Ok(v) => (out.operations, out.schemas, out.tags) = counts(&v),
        Err(e) => eprintln!(
            "openapi: {} is not JSON ({e}); quire is given it anyway",
            description.display()
        ),
    }
    let fetches = Arc::new(AtomicU64::new(0));
    let (file_addr, server) = match serve(bytes::Bytes::from(text), fetches.clone()).await {
        Ok(s) => s,
        Err(e) => {
            out.failure = Some(e);
            return out;
        }
    };
    out.source_url = format!("http://{file_addr}/openapi.json");
    eprintln!(
        "openapi: {} ({} bytes, {} operations, {} schemas, {} tags) served at {}",
        out.description, out.description_bytes, out.operations, out.schemas, out.tags, out.source_url
    );
    peak();
    if let Err(e) = steps(addr, data, &mut out, peak).await {
        eprintln!("openapi: {e}");
        out.failure = Some(e);
    }
    out.fetches = fetches.load(Ordering::Relaxed);
    server.abort();
    out.peak_rss_mb = out
        .peak_rss_processing_mb
        .max(out.peak_rss_generation_mb)
        .max(out.peak_rss_reads_mb);
    out
}

async fn steps(
    addr: SocketAddr,
    data: &Dataset,
    out: &mut OpenApiResult,
    peak: PeakRss<'_>,
) -> Result<(), String> {
    let org = data
        .orgs
        .first()
        .cloned()
        .ok_or("the dataset has no organization")?;
    out.org = org.clone();
    let token = data.admin_token.as_str();
    let mut conn = Conn::new(addr)?;
    let base = format!("/v1/orgs/{org}/openapi");
    let probe = conn.get(&base, token).await?;
    if probe.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no OpenAPI specification routes".into());
    }
    // Fresh slugs, also against a server that already has this phase's.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for n in 1..=SPECS {
        let slug = format!("gitbook-api-{stamp}-{n}");
        let run = process(&mut conn, &base, token, &slug, &out.source_url).await?;
        eprintln!(
            "openapi: {slug}: complete after {:.0} ms (create answered in {:.0} ms, {} polls){}",
            run.complete_ms,
            run.create_ms,
            run.polls,
            run.error_code
                .as_ref()
                .map(|c| format!(": {c} {}", run.errors.join("; ")))
                .unwrap_or_default()
        );
        let failed = (!run.ok).then(|| {
            format!(
                "{slug}: {}{}",
                run.error_code.as_deref().unwrap_or("no version"),
                if run.errors.is_empty() {
                    String::new()
                } else {
                    format!(": {}", run.errors.join("; "))
                }
            )
        });
        out.specs.push(run);
        out.peak_rss_processing_mb = out.peak_rss_processing_mb.max(peak());
        if let Some(f) = failed {
            return Err(f);
        }
    }
    let first = out.specs[0].clone();
    pages(&mut conn, data, &org, &first, out, peak).await
}

/// Creates one specification and polls it until it is complete.
async fn process(conn: &mut Conn, base: &str, token: &str, slug: &str, url: &str) -> Result<SpecRun, String> {
    let mut run = SpecRun {
        slug: slug.to_string(),
        ..SpecRun::default()
    };
    let started = Instant::now();
    let a = conn
        .post(base, token, &json!({"slug": slug, "source": {"url": url}}))
        .await
        .map_err(|e| format!("POST {base}: {e}"))?;
    run.create_ms = ms_since(started);
    if a.status != 201 {
        return Err(format!("POST {base} ({slug}): {}", a.describe()));
    }
    let path = format!("{base}/{slug}");
    loop {
        tokio::time::sleep(POLL).await;
        let a = conn
            .get(&path, token)
            .await
            .map_err(|e| format!("GET {path}: {e}"))?;
        run.polls += 1;
        run.complete_ms = ms_since(started);
        if !a.ok() {
            return Err(format!("GET {path}: {}", a.describe()));
        }
        let v = a.json();
        match v["processingState"].as_str() {
            Some("complete") => {
                run.version = v["lastVersion"].as_str().map(str::to_string);
                run.error_code = v["lastProcessErrorCode"].as_str().map(str::to_string);
                run.errors = v["lastProcessedErrors"]
                    .as_array()
                    .map(|es| es.iter().take(5).map(describe_error).collect())
                    .unwrap_or_default();
                run.ok = run.error_code.is_none() && run.version.is_some();
                return Ok(run);
            }
            Some("progress") => run.saw_progress = true,
            Some(_) => {}
            None => return Err(format!("GET {path}: no processingState in {}", short(&v))),
        }
        if started.elapsed() > PROCESS_TIMEOUT {
            run.error_code = Some(format!(
                "not complete after {} s (state {})",
                PROCESS_TIMEOUT.as_secs(),
                v["processingState"]
            ));
            return Ok(run);
        }
    }
}

fn describe_error(e: &Value) -> String {
    let mut s = e["code"].as_str().unwrap_or("?").to_string();
    if let Some(m) = e["message"].as_str() {
        s += &format!(" {m}");
    }
    for key in ["pointer", "path", "location"] {
        if let Some(p) = e[key].as_str() {
            s += &format!(" at {p}");
            break;
        }
    }
    s.chars().take(300).collect()
}

/// A fresh space with the computed page, merged; the generated pages waited for, then read.
async fn pages(
    conn: &mut Conn,
    data: &Dataset,
    org: &str,
    spec: &SpecRun,
    out: &mut OpenApiResult,
    peak: PeakRss<'_>,
) -> Result<(), String> {
    let token = data.admin_token.as_str();
    let space = id_of(
        conn.post(
            &format!("/v1/orgs/{org}/spaces"),
            token,
            &json!({"title": "OpenAPI reference (bench)", "empty": true}),
        )
        .await?,
        "create a space",
    )?;
    out.space = Some(space.clone());
    let crs = format!("/v1/spaces/{space}/change-requests");
    let cr = id_of(
        conn.post(&crs, token, &json!({"subject": "API reference"}))
            .await?,
        "create a change request",
    )?;
    let source = json!({"type": "builtin:openapi",
        "dependencies": {"spec": {"ref": {"kind": "openapi", "spec": spec.slug}}},
        "props": {"models": true}});
    let batch = json!({"changes": [{"operation": "insert_page", "type": "computed",
        "title": COMPUTED_TITLE, "computed": source}]});
    let a = conn.post(&format!("{crs}/{cr}/content"), token, &batch).await?;
    if !a.ok() {
        return Err(format!("insert the computed page: {}", a.describe()));
    }
    let content = format!("/v1/spaces/{space}/content");
    peak();
    let started = Instant::now();
    let a = conn.post(&format!("{crs}/{cr}/merge"), token, &json!({})).await?;
    out.merge_ms = Some(ms_since(started));
    if !a.ok() || a.json()["result"] != "merge" {
        return Err(format!("merge the computed page: {}", a.describe()));
    }
    let listed = loop {
        out.peak_rss_generation_mb = out.peak_rss_generation_mb.max(peak());
        let a = conn.get(&content, token).await?;
        out.pages_polls += 1;
        if !a.ok() {
            return Err(format!("GET {content}: {}", a.describe()));
        }
        let listed = documents(&a.json()["pages"]);
        if !listed.is_empty() {
            out.pages_visible_ms = Some(ms_since(started));
            out.peak_rss_generation_mb = out.peak_rss_generation_mb.max(peak());
            break listed;
        }
        if started.elapsed() > PAGES_TIMEOUT {
            return Err(format!(
                "no generated page in {content} {} s after the merge",
                PAGES_TIMEOUT.as_secs()
            ));
        }
        tokio::time::sleep(POLL).await;
    };
    eprintln!(
        "openapi: merge answered in {:.0} ms; {} generated pages listed {:.0} ms after it was sent",
        out.merge_ms.unwrap_or_default(),
        listed.len(),
        out.pages_visible_ms.unwrap_or_default()
    );
    let a = conn.get(&format!("{content}?computed=false"), token).await?;
    if a.ok() {
        let v = a.json();
        let seed = v["pages"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["type"] == "computed"))
            .and_then(|p| p["computedSeed"].as_str().map(str::to_string));
        out.seed_matches = Some(seed.is_some() && seed == spec.version);
    }
    for (id, title, path) in listed {
        let (cold, read) = read_page(conn, &space, &id, token).await;
        out.pages.push(PageRead {
            id,
            title,
            path,
            cold_ms: cold,
            ..read
        });
    }
    for p in &mut out.pages {
        let (warm, read) = read_page(conn, &space, &p.id, token).await;
        p.warm_ms = Some(warm);
        if p.error.is_none() {
            p.error = read.error;
        }
    }
    out.peak_rss_reads_mb = peak();
    if let Some(p) = out.slowest_page() {
        eprintln!(
            "openapi: {} pages read: cold worst {:.1} ms ({}, {} bytes of markdown), median {:.1} ms; warm worst {:.1} ms",
            out.pages.len(),
            p.cold_ms,
            p.title,
            p.markdown_bytes,
            out.cold_median_ms(),
            out.warm_max_ms().unwrap_or_default()
        );
    }
    match out.page_errors() {
        0 => Ok(()),
        n => Err(format!(
            "{n} page reads failed, e.g. {}",
            out.pages.iter().find_map(|p| p.error.clone()).unwrap_or_default()
        )),
    }
}

/// One read of a page as markdown: its time, and what it answered.
async fn read_page(conn: &mut Conn, space: &str, id: &str, token: &str) -> (f64, PageRead) {
    let path = format!("/v1/spaces/{space}/content/page/{id}?format=markdown");
    let started = Instant::now();
    let a = conn.get(&path, token).await;
    let ms = ms_since(started);
    let mut read = PageRead::default();
    match a {
        Ok(a) if a.ok() => {
            read.answer_bytes = a.body.len();
            read.gzipped = a.gzipped;
            let v = a.json();
            match v["markdown"].as_str() {
                Some(md) => {
                    read.markdown_bytes = md.len();
                    read.too_large = md.contains(TOO_LARGE);
                }
                None => read.error = Some(format!("GET {path}: no markdown in {}", a.describe())),
            }
        }
        Ok(a) => read.error = Some(format!("GET {path}: {}", a.describe())),
        Err(e) => read.error = Some(format!("GET {path}: {e}")),
    }
    (ms, read)
}

/// The document pages of a content listing, in tree order: (id, title, path).
pub fn documents(pages: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for p in pages.as_array().map_or(&[][..], Vec::as_slice) {
        if p["type"] == "document"
            && let Some(id) = p["id"].as_str()
        {
            out.push((
                id.to_string(),
                p["title"].as_str().unwrap_or_default().to_string(),
                p["path"].as_str().unwrap_or_default().to_string(),
            ));
        }
        out.extend(documents(&p["pages"]));
    }
    out
}

fn id_of(a: crate::conn::Answer, what: &str) -> Result<String, String> {
    if !a.ok() {
        return Err(format!("{what}: {}", a.describe()));
    }
    a.json()["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {}", a.describe()))
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn short(v: &Value) -> String {
    v.to_string().chars().take(160).collect()
}

/// A plain-text summary for the progress output.
pub fn table(r: &OpenApiResult) -> String {
    let mut s = String::new();
    for x in &r.specs {
        s += &format!(
            "{:<32} complete after {:>8.1} ms ({} polls, create {:.0} ms) {}\n",
            x.slug,
            x.complete_ms,
            x.polls,
            x.create_ms,
            if x.ok {
                "ok".to_string()
            } else {
                format!(
                    "{} {}",
                    x.error_code.as_deref().unwrap_or("no version"),
                    x.errors.join("; ")
                )
            }
        );
    }
    if let (Some(m), Some(v)) = (r.merge_ms, r.pages_visible_ms) {
        s += &format!("merge {m:.0} ms; generated pages listed after {v:.0} ms\n");
    }
    if let Some(p) = r.slowest_page() {
        s += &format!(
            "{} pages: cold worst {:.2} ms ({}, {} bytes), median {:.2} ms; warm worst {:.2} ms, median {:.2} ms\n",
            r.pages.len(),
            p.cold_ms,
            p.title,
            p.markdown_bytes,
            r.cold_median_ms(),
            r.warm_max_ms().unwrap_or_default(),
            r.warm_median_ms()
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
    fn counts_operations_schemas_and_tags() {
        let d = json!({
            "tags": [{"name": "a"}, {"name": "b"}],
            "paths": {
                "/x": {"get": {}, "post": {}, "parameters": [], "summary": "not an operation"},
                "/y": {"delete": {}}
            },
            "components": {"schemas": {"A": {}, "B": {}, "C": {}}}
        });
        assert_eq!(counts(&d), (3, 3, 2));
        assert_eq!(counts(&json!({})), (0, 0, 0));
    }

    #[test]
    fn lists_document_pages_in_tree_order() {
        let listing = json!([
            {"type": "document", "id": "a", "title": "A", "path": "a", "pages": [
                {"type": "document", "id": "b", "title": "B", "path": "a/b"}
            ]},
            {"type": "group", "id": "g", "title": "G", "pages": [
                {"type": "document", "id": "c", "title": "C", "path": "c"}
            ]},
            {"type": "link", "id": "l", "title": "L"}
        ]);
        let ids: Vec<String> = documents(&listing).into_iter().map(|(id, _, _)| id).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        assert!(documents(&json!([])).is_empty());
        assert!(documents(&Value::Null).is_empty());
    }

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), 0.0);
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[tokio::test]
    async fn serves_the_description_and_counts_fetches() {
        let fetches = Arc::new(AtomicU64::new(0));
        let (addr, task) = serve(
            bytes::Bytes::from_static(b"{\"openapi\":\"3.1.0\"}"),
            fetches.clone(),
        )
        .await
        .unwrap();
        let mut conn = Conn::new(addr).unwrap();
        let a = conn.get("/openapi.json", "").await.unwrap();
        assert_eq!(a.status, 200);
        assert_eq!(a.json()["openapi"], "3.1.0");
        assert_eq!(fetches.load(Ordering::Relaxed), 1);
        task.abort();
    }

    #[tokio::test]
    async fn a_missing_description_is_reported_not_fatal() {
        let data = Dataset::default();
        let r = run(
            "127.0.0.1:9".parse().unwrap(),
            &data,
            Path::new("/nonexistent/openapi.json"),
            &|| 0.0,
        )
        .await;
        assert!(r.description_missing);
        assert!(r.failure.unwrap().contains(".ci/gitbook-api"));
        assert!(r.specs.is_empty());
    }
}
