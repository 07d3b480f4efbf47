//! The `scripts` phase (`docs/integrations.md`, "The runtime"): components of an integration
//! rendered by its script in quire (`POST /v1/integrations/{name}/render`), from the render
//! cache and not, and the server's memory while 100 renders arrive at once.
//!
//! In order, with the tokens of the members who joined every organization (the administrator's
//! when they cannot render), on the big space:
//!
//! 1. an integration with a fresh name (`quire-bench-scripts-<unix seconds>`) is published in
//!    the big space's organization with [`SCRIPT`], written by hand in the protocol of
//!    `@gitbook/runtime` (one POST of a form whose `event` is the `ui_render` event); it is
//!    installed in that organization and enabled on the big space;
//! 2. one render (**first render**: the script read from the object store, the installation
//!    token made) and the cached request twice: the second answer must be the first's bytes
//!    (the script puts a random UUID in every render, so only a kept answer repeats);
//! 3. **memory**: after a second's pause, the server's resident set (**idle**); then
//!    [`MEMORY_CONNECTIONS`] connections, released together, each send [`MEMORY_ROUNDS`]
//!    uncached renders one after the other, while the resident set is read every
//!    [`RSS_POLL`]: the peak over the idle figure must stay under [`MEMORY_DELTA_BUDGET_MB`].
//!    The server runs at most `QUIRE_SCRIPT_CONCURRENCY` (8) scripts at once; the others wait
//!    for a slot, so their latencies are shown, not budgeted;
//! 4. **cached**: `connections` connections send the cached request, `warmup` unmeasured then
//!    `duration`; every answer must be the kept one's bytes;
//! 5. **uncached**: [`UNCACHED_CONNECTIONS`] connections send renders whose props carry a
//!    nonce (step, connection, counter), so nothing is cached: each is a script run in a fresh
//!    QuickJS context; every answer must carry its request's nonce;
//! 6. with an unloaded pass (`latency_duration` > 0), steps 4 and 5 again on one connection;
//! 7. the integration is unpublished (its installation goes with it).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::{Answer, Conn};
use crate::load::{Driver, FamilyResult};

/// Connections rendering fresh (uncached) components: a few, fewer than the server's 8 script
/// slots, so that the figure is a render's cost (context creation included), not a wait for a
/// slot.
pub const UNCACHED_CONNECTIONS: usize = 4;
/// Renders arriving at once in the memory step.
pub const MEMORY_CONNECTIONS: usize = 100;
/// Uncached renders each of those connections sends, one after the other.
pub const MEMORY_ROUNDS: usize = 3;
/// Budget: p99 of a render answered from the render cache.
pub const CACHED_P99_BUDGET_MS: f64 = 20.0;
/// Budget: p99 of an uncached render of a small component, context creation included.
pub const UNCACHED_P99_BUDGET_MS: f64 = 50.0;
/// Budget: the server's peak resident set during the memory step over its idle figure.
pub const MEMORY_DELTA_BUDGET_MB: f64 = 100.0;
/// The server's script slots by default (`QUIRE_SCRIPT_CONCURRENCY`): for the report.
pub const SCRIPT_SLOTS: usize = 8;
/// How often the resident set is read during the memory step.
pub const RSS_POLL: Duration = Duration::from_millis(5);
/// The pause before the idle figure is read, and before the figure after the memory step.
const SETTLE: Duration = Duration::from_secs(1);
/// How long a cached render is kept (`Cache-Control: max-age`): longer than any run.
pub const MAX_AGE_S: u64 = 3600;
/// The component the script renders.
pub const COMPONENT: &str = "card";
/// Family names of the phase's loads.
pub const CACHED: &str = "render-cached";
pub const UNCACHED: &str = "render-uncached";
pub const CONCURRENT: &str = "render-100-at-once";

/// The integration's script: what `@gitbook/runtime`'s `createIntegration` answers, written by
/// hand. A `ui_render` of `card` answers a block with one markdown element (a heading, a line
/// with the request's nonce and a random UUID, two list items), `Cache-Control: max-age` when
/// its props ask to be cached.
pub const SCRIPT: &str = r#"
export default {
  async fetch(request) {
    if (new URL(request.url).pathname !== "/v1") {
      return Response.json({ error: "Unsupported version" }, { status: 400 });
    }
    const form = await request.formData();
    const event = JSON.parse(form.get("event"));
    if (event.type !== "ui_render") {
      return Response.json({ error: `No handler for ${event.type}` }, { status: 406 });
    }
    if (event.componentId !== "card") {
      return Response.json({ error: "unknown component" }, { status: 404 });
    }
    const p = event.props;
    const content = `### ${p.title}\n\nRender ${p.n}, ${crypto.randomUUID()}.\n\n- one\n- two\n`;
    return Response.json(
      { type: "element", state: {}, props: p, element: { type: "block", children: [{ type: "markdown", content }] } },
      { headers: p.cache ? { "Cache-Control": "max-age=3600" } : {} },
    );
  },
};
"#;

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ScriptsResult {
    /// The big space's organization: the integration's owner and where it is installed.
    pub org: String,
    /// The space it renders on (the big space).
    pub space: String,
    /// The integration's name (fresh for each run).
    pub integration: String,
    pub installation: Option<String>,
    /// Whose tokens rendered: "members" or "the administrator".
    pub callers: String,
    /// The first render (the script read, the installation token made), ms.
    pub first_render_ms: Option<f64>,
    /// The cached request's first render (a miss), then the same request again (a hit), ms.
    pub cache_miss_ms: Option<f64>,
    pub cache_hit_ms: Option<f64>,
    /// The size of a render's answer (ContentKit JSON), bytes.
    pub answer_bytes: usize,
    /// The cached request at `connections`, and on one connection.
    pub cached: Option<FamilyResult>,
    pub cached_single: Option<FamilyResult>,
    /// Uncached renders at [`UNCACHED_CONNECTIONS`], and on one connection.
    pub uncached: Option<FamilyResult>,
    pub uncached_single: Option<FamilyResult>,
    /// The memory step: its renders' figures ([`MEMORY_CONNECTIONS`] at once).
    pub concurrent: Option<FamilyResult>,
    /// The server's resident set at the phase's start, idle before the memory step, its peak
    /// during it and a second after it, MB; how many times it was read during it.
    pub rss_start_mb: Option<f64>,
    pub rss_idle_mb: Option<f64>,
    pub rss_peak_mb: Option<f64>,
    pub rss_after_mb: Option<f64>,
    pub rss_samples: usize,
    /// The server has no integration or render routes: nothing measured.
    pub endpoint_missing: bool,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Unpublishing the integration at the end failed (not a failure of the phase).
    pub cleanup: Option<String>,
    /// Peak resident set of the server during the whole phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

impl ScriptsResult {
    /// Peak resident set during the memory step over the idle figure before it.
    pub fn rss_delta_mb(&self) -> Option<f64> {
        match (self.rss_idle_mb, self.rss_peak_mb) {
            (Some(idle), Some(peak)) => Some(peak - idle),
            _ => None,
        }
    }
}

/// The server's resident set, MB (None without its process id or /proc).
fn rss_mb(pid: Option<u32>) -> Option<f64> {
    pid.and_then(crate::run::rss_kb).map(|kb| kb as f64 / 1024.0)
}

/// Runs the phase; errors of the phase itself are in `failure`. `pid` is the server's process
/// (its resident set is read in /proc); without it the memory step measures only latencies.
pub async fn run(
    driver: &Driver,
    pid: Option<u32>,
    connections: usize,
    warmup: Duration,
    duration: Duration,
    latency_duration: Duration,
) -> ScriptsResult {
    let mut out = ScriptsResult {
        rss_start_mb: rss_mb(pid),
        ..ScriptsResult::default()
    };
    let timing = Timing {
        connections,
        warmup,
        duration,
        latency_duration,
    };
    if let Err(e) = steps(driver, pid, timing, &mut out).await {
        eprintln!("scripts: {e}");
        out.failure = Some(e);
    }
    // Published, it goes, even when the render route is missing.
    if !out.integration.is_empty() {
        out.cleanup = unpublish(driver, &out.integration).await.err();
        if let Some(e) = &out.cleanup {
            eprintln!("scripts: {e}");
        }
    }
    out
}

#[derive(Clone, Copy)]
struct Timing {
    connections: usize,
    warmup: Duration,
    duration: Duration,
    latency_duration: Duration,
}

async fn unpublish(driver: &Driver, name: &str) -> Result<(), String> {
    let mut conn = Conn::new(driver.addr())?;
    let path = format!("/v1/integrations/{name}");
    let a = conn
        .send(http::Method::DELETE, &path, &driver.dataset().admin_token, None)
        .await
        .map_err(|e| format!("DELETE {path}: {e}"))?;
    if a.ok() {
        Ok(())
    } else {
        Err(format!("DELETE {path}: {}", a.describe()))
    }
}

/// The body of `POST .../render` for `props`, on `space`.
pub fn render_body(space: &str, props: Value) -> Value {
    json!({
        "componentId": COMPONENT,
        "props": props,
        "context": {"type": "document", "spaceId": space, "editable": false, "theme": "light"},
    })
}

/// The props of the cached request: the same every time.
fn cached_props() -> Value {
    json!({"title": "Bench card", "n": "cached", "cache": true})
}

/// The props of an uncached render, with its nonce.
fn uncached_props(nonce: &str) -> Value {
    json!({"title": "Bench card", "n": nonce, "cache": false})
}

/// Where the renders go and who sends them.
struct Target {
    addr: SocketAddr,
    path: String,
    space: String,
    tokens: Vec<String>,
}

impl Target {
    fn token(&self, index: usize) -> &str {
        &self.tokens[index % self.tokens.len()]
    }
}

async fn steps(driver: &Driver, pid: Option<u32>, t: Timing, out: &mut ScriptsResult) -> Result<(), String> {
    let data = driver.dataset();
    let admin = data.admin_token.as_str();
    let mut conn = Conn::new(driver.addr())?;
    out.space = data.big_space.clone();
    let path = format!("/v1/spaces/{}", data.big_space);
    let a = conn.get(&path, admin).await?;
    if !a.ok() {
        return Err(format!("GET {path}: {}", a.describe()));
    }
    out.org = a.json()["organization"]
        .as_str()
        .map(str::to_string)
        .or_else(|| data.orgs.first().cloned())
        .ok_or("the dataset has no organization")?;
    install(&mut conn, admin, out).await?;
    eprintln!(
        "scripts: integration {} installed in {} on the big space {}",
        out.integration, out.org, out.space
    );

    // Who renders: the members who joined every organization, when they may.
    let render = format!("/v1/integrations/{}/render", out.integration);
    let members = data.read_tokens();
    let mut first = Instant::now();
    let a = conn
        .post(
            &render,
            &members[0],
            &render_body(&out.space, uncached_props("first")),
        )
        .await?;
    let (tokens, a) = if a.ok() {
        (members, a)
    } else if a.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no render route".into());
    } else if members[0] != admin {
        eprintln!(
            "scripts: a member cannot render ({}): the administrator renders",
            a.describe()
        );
        first = Instant::now();
        let a = conn
            .post(&render, admin, &render_body(&out.space, uncached_props("first")))
            .await?;
        (vec![admin.to_string()], a)
    } else {
        (members, a)
    };
    out.callers = if tokens.iter().any(|t| t != admin) {
        "members".into()
    } else {
        "the administrator".into()
    };
    out.first_render_ms = Some(first.elapsed().as_secs_f64() * 1000.0);
    if !a.ok() {
        return Err(format!("POST {render}: {}", a.describe()));
    }
    let v = a.json();
    if v["type"] != "element" || !text_of(&a).contains("Render first,") {
        return Err(format!(
            "POST {render}: not the script's element: {}",
            a.describe()
        ));
    }
    out.answer_bytes = a.text().len();
    let target = Arc::new(Target {
        addr: driver.addr(),
        path: render,
        space: out.space.clone(),
        tokens,
    });

    // The cached request: a miss, then a hit that must repeat it byte for byte.
    let body = render_body(&target.space, cached_props());
    let started = Instant::now();
    let miss = conn.post(&target.path, target.token(0), &body).await?;
    out.cache_miss_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    if !miss.ok() {
        return Err(format!(
            "POST {} (cached props): {}",
            target.path,
            miss.describe()
        ));
    }
    let started = Instant::now();
    let hit = conn.post(&target.path, target.token(0), &body).await?;
    out.cache_hit_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    let kept = miss.text();
    if !hit.ok() || hit.text() != kept {
        eprintln!(
            "scripts: the cached request answered differently the second time: {}",
            hit.describe()
        );
    }

    // Memory: idle, then 100 renders at once.
    tokio::time::sleep(SETTLE).await;
    out.rss_idle_mb = rss_mb(pid);
    eprintln!(
        "scripts: {MEMORY_CONNECTIONS} uncached renders at once, {MEMORY_ROUNDS} rounds (idle RSS {})",
        out.rss_idle_mb
            .map_or_else(|| "unknown".into(), |m| format!("{m:.1} MB"))
    );
    let (r, peak, samples) = at_once(&target, pid).await?;
    print_one(&r);
    out.concurrent = Some(r);
    out.rss_peak_mb = peak;
    out.rss_samples = samples;
    tokio::time::sleep(SETTLE).await;
    out.rss_after_mb = rss_mb(pid);
    if let Some(d) = out.rss_delta_mb() {
        eprintln!(
            "scripts: peak RSS {:.1} MB, {d:+.1} MB over idle ({samples} samples); {:.1} MB a second later",
            out.rss_peak_mb.unwrap_or_default(),
            out.rss_after_mb.unwrap_or_default()
        );
    }

    let cached = Mode::Cached {
        body: body.clone(),
        expected: kept,
    };
    eprintln!("scripts: the cached render at {} connections", t.connections);
    let r = measure(&target, &cached, t.connections, t.warmup, t.duration).await?;
    print_one(&r);
    out.cached = Some(r);
    eprintln!("scripts: uncached renders at {UNCACHED_CONNECTIONS} connections");
    let uncached = Mode::Uncached { step: "u".into() };
    let r = measure(&target, &uncached, UNCACHED_CONNECTIONS, t.warmup, t.duration).await?;
    print_one(&r);
    out.uncached = Some(r);
    if t.latency_duration > Duration::ZERO {
        eprintln!("scripts: the cached render, then uncached renders, at 1 connection");
        let r = measure(&target, &cached, 1, t.warmup, t.latency_duration).await?;
        print_one(&r);
        out.cached_single = Some(r);
        let single = Mode::Uncached { step: "s".into() };
        let r = measure(&target, &single, 1, t.warmup, t.latency_duration).await?;
        print_one(&r);
        out.uncached_single = Some(r);
    }
    Ok(())
}

/// The markdown of a render's answer.
fn text_of(a: &Answer) -> String {
    a.json()["element"]["children"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Publishes the integration with [`SCRIPT`], installs it in the organization and enables it
/// on the big space.
async fn install(conn: &mut Conn, token: &str, out: &mut ScriptsResult) -> Result<(), String> {
    // A fresh name, also against a server that already has this phase's.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = format!("quire-bench-scripts-{stamp}");
    let base = format!("/v1/integrations/{name}");
    let body = json!({
        "organization": out.org,
        "runtime": "v2",
        "title": "Bench cards",
        "description": "Renders a small card (quire-bench's scripts phase).",
        "script": SCRIPT,
        "scopes": ["space:content:read"],
        "blocks": [{"id": COMPONENT, "title": "A card"}],
    });
    let a = conn.post(&base, token, &body).await?;
    if a.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no integration routes".into());
    }
    if !a.ok() {
        return Err(format!("POST {base}: {}", a.describe()));
    }
    out.integration = name;
    let installs = format!("{base}/installations");
    let a = conn
        .post(&installs, token, &json!({"organization": out.org}))
        .await?;
    let id = match a.json()["id"].as_str() {
        Some(id) if a.ok() => id.to_string(),
        _ => return Err(format!("POST {installs}: {}", a.describe())),
    };
    out.installation = Some(id.clone());
    let spaces = format!("{installs}/{id}/spaces");
    let a = conn.post(&spaces, token, &json!({"space": out.space})).await?;
    if !a.ok() {
        return Err(format!("POST {spaces}: {}", a.describe()));
    }
    Ok(())
}

/// What a load sends, and what its answers must be.
#[derive(Clone)]
enum Mode {
    /// The same request every time: every answer must be the kept one's bytes.
    Cached { body: Value, expected: Bytes },
    /// A render with a nonce of its own (`{step}-{connection}-{counter}`), which its answer
    /// must carry: never cached.
    Uncached { step: String },
}

impl Mode {
    /// The request body of a connection's `counter`th request, and the nonce its answer must
    /// carry (uncached).
    fn request(&self, space: &str, connection: usize, counter: u64) -> (Value, Option<String>) {
        match self {
            Mode::Cached { body, .. } => (body.clone(), None),
            Mode::Uncached { step } => {
                let nonce = format!("{step}-{connection}-{counter}");
                (render_body(space, uncached_props(&nonce)), Some(nonce))
            }
        }
    }

    /// Why an answer is not what the request must get, if it is not.
    fn check(&self, a: &Answer, nonce: Option<&str>) -> Option<String> {
        if !a.ok() {
            return Some(a.describe());
        }
        match (self, nonce) {
            (Mode::Cached { expected, .. }, _) if a.text() != *expected => {
                Some("not the kept answer: rendered again".into())
            }
            (Mode::Uncached { .. }, Some(n)) if !contains(&a.text(), format!("Render {n},").as_bytes()) => {
                Some("the answer does not carry its request's nonce".into())
            }
            _ => None,
        }
    }
}

/// Checks an uncached answer against its nonce (the step does not matter to the check).
const UNCACHED_CHECK: Mode = Mode::Uncached { step: String::new() };

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// One connection's figures.
struct Done {
    hist: Histogram<u64>,
    errors: BTreeMap<String, u64>,
    last: Instant,
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

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

/// A closed loop: `connections` connections send the mode's renders, `warmup` unmeasured, then
/// `duration`; the figures are the requests sent in the measured window.
async fn measure(
    target: &Arc<Target>,
    mode: &Mode,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<FamilyResult, String> {
    let (family, detail) = match mode {
        Mode::Cached { .. } => (
            CACHED,
            "the same request, answered from the render cache".to_string(),
        ),
        Mode::Uncached { .. } => (
            UNCACHED,
            "props with a nonce each: the script runs in a fresh context every time".to_string(),
        ),
    };
    // Each load's nonces its own: the step and its connections.
    let mode = Arc::new(match mode {
        Mode::Uncached { step } => Mode::Uncached {
            step: format!("{step}{connections}"),
        },
        cached => cached.clone(),
    });
    let start = Instant::now();
    let measure_from = start + warmup;
    let end = measure_from + duration;
    let handles: Vec<_> = (0..connections)
        .map(|i| {
            let (target, mode) = (target.clone(), mode.clone());
            tokio::spawn(async move { connection(&target, &mode, i, measure_from, end).await })
        })
        .collect();
    let mut hist = new_histogram()?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut last = end;
    for h in handles {
        let done = h.await.map_err(|e| format!("a connection failed: {e}"))??;
        hist.add(&done.hist).map_err(|e| e.to_string())?;
        for (k, v) in done.errors {
            *errors.entry(k).or_default() += v;
        }
        last = last.max(done.last);
    }
    Ok(FamilyResult::measured(
        family,
        detail,
        connections,
        &hist,
        errors,
        last.duration_since(measure_from).as_secs_f64().max(1e-9),
    ))
}

async fn connection(
    target: &Target,
    mode: &Mode,
    index: usize,
    measure_from: Instant,
    end: Instant,
) -> Result<Done, String> {
    let mut conn = Conn::new(target.addr)?;
    let mut hist = new_histogram()?;
    let mut errors = BTreeMap::new();
    let mut last = end;
    let token = target.token(index);
    for counter in 0u64.. {
        let started = Instant::now();
        if started >= end {
            break;
        }
        let (body, nonce) = mode.request(&target.space, index, counter);
        let answer = conn.post(&target.path, token, &body).await;
        let latency = started.elapsed();
        if started < measure_from {
            continue;
        }
        last = last.max(Instant::now());
        let error = match answer {
            Ok(a) => mode.check(&a, nonce.as_deref()),
            Err(e) => Some(e),
        };
        match error {
            None => hist.saturating_record(us(latency)),
            Some(e) => record(&mut errors, e),
        }
    }
    Ok(Done { hist, errors, last })
}

/// Reads a process's resident set every given interval on a thread of its own, keeping the
/// peak (the `pdf` phase's too).
pub struct RssWatch {
    peak_kb: Arc<AtomicU64>,
    samples: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssWatch {
    pub fn start(pid: u32, every: Duration) -> RssWatch {
        let peak_kb = Arc::new(AtomicU64::new(0));
        let samples = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, n, s) = (peak_kb.clone(), samples.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(kb) = crate::run::rss_kb(pid) {
                    p.fetch_max(kb, Ordering::Relaxed);
                    n.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(every);
            }
        });
        RssWatch {
            peak_kb,
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// Stops reading; the peak (MB) and how many reads.
    pub fn finish(mut self) -> (f64, usize) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        (
            self.peak_kb.load(Ordering::Relaxed) as f64 / 1024.0,
            usize::try_from(self.samples.load(Ordering::Relaxed)).unwrap_or(usize::MAX),
        )
    }
}

impl Drop for RssWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// [`MEMORY_CONNECTIONS`] connections released together (each connects with its first
/// request), each sending
/// [`MEMORY_ROUNDS`] uncached renders; the server's peak resident set meanwhile (MB, when its
/// process is known) and how many times it was read.
async fn at_once(
    target: &Arc<Target>,
    pid: Option<u32>,
) -> Result<(FamilyResult, Option<f64>, usize), String> {
    let gate = Arc::new(tokio::sync::Barrier::new(MEMORY_CONNECTIONS + 1));
    let handles: Vec<_> = (0..MEMORY_CONNECTIONS)
        .map(|i| {
            let (target, gate) = (target.clone(), gate.clone());
            tokio::spawn(async move {
                // Nothing may fail before the gate: the others would wait for ever.
                gate.wait().await;
                let mut hist = new_histogram()?;
                let mut errors = BTreeMap::new();
                let mut conn = Conn::new(target.addr)?;
                let token = target.token(i);
                for round in 0..MEMORY_ROUNDS {
                    let nonce = format!("m-{i}-{round}");
                    let body = render_body(&target.space, uncached_props(&nonce));
                    let started = Instant::now();
                    let answer = conn.post(&target.path, token, &body).await;
                    let latency = started.elapsed();
                    let error = match answer {
                        Ok(a) => UNCACHED_CHECK.check(&a, Some(&nonce)),
                        Err(e) => Some(e),
                    };
                    match error {
                        None => hist.saturating_record(us(latency)),
                        Some(e) => record(&mut errors, e),
                    }
                }
                Ok::<_, String>((hist, errors))
            })
        })
        .collect();
    let watch = pid.map(|pid| RssWatch::start(pid, RSS_POLL));
    // Let the watch read the resident set once before the renders are released.
    tokio::time::sleep(RSS_POLL * 2).await;
    gate.wait().await;
    let started = Instant::now();
    let mut hist = new_histogram()?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for h in handles {
        let (one, errs) = h.await.map_err(|e| format!("a connection failed: {e}"))??;
        hist.add(&one).map_err(|e| e.to_string())?;
        for (k, v) in errs {
            *errors.entry(k).or_default() += v;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let (peak, samples) = match watch {
        Some(w) => {
            let (peak, samples) = w.finish();
            (Some(peak).filter(|_| samples > 0), samples)
        }
        None => (None, 0),
    };
    let r = FamilyResult::measured(
        CONCURRENT,
        format!(
            "{MEMORY_CONNECTIONS} connections released together, {MEMORY_ROUNDS} uncached renders each; \
             at most {SCRIPT_SLOTS} scripts run at once, the others wait"
        ),
        MEMORY_CONNECTIONS,
        &hist,
        errors,
        seconds,
    );
    Ok((r, peak, samples))
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // As the load driver's: microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

/// A plain-text summary for the progress output.
pub fn table(r: &ScriptsResult) -> String {
    let rows: Vec<FamilyResult> = [
        &r.cached,
        &r.uncached,
        &r.concurrent,
        &r.cached_single,
        &r.uncached_single,
    ]
    .into_iter()
    .flatten()
    .cloned()
    .collect();
    let mut s = crate::load::table(&rows);
    let mb = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{v:.1} MB"));
    s += &format!(
        "first render {}; RSS idle {}, peak during {MEMORY_CONNECTIONS} at once {}, delta {}, a second later {}\n",
        r.first_render_ms
            .map_or_else(|| "-".into(), |v| format!("{v:.1} ms")),
        mb(r.rss_idle_mb),
        mb(r.rss_peak_mb),
        r.rss_delta_mb()
            .map_or_else(|| "-".into(), |v| format!("{v:+.1} MB")),
        mb(r.rss_after_mb),
    );
    if let Some(f) = &r.failure {
        s += &format!("FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            status,
            body: Bytes::from(body.to_string()),
            gzipped: false,
            retry_after: None,
        }
    }

    #[test]
    fn checks_answers_against_the_mode() {
        let kept = r#"{"type":"element","element":{"children":[{"content":"Render cached, 1."}]}}"#;
        let cached = Mode::Cached {
            body: render_body("s", cached_props()),
            expected: Bytes::from(kept),
        };
        assert_eq!(cached.check(&answer(200, kept), None), None);
        assert_eq!(
            cached
                .check(&answer(200, &kept.replace("1.", "2.")), None)
                .as_deref(),
            Some("not the kept answer: rendered again")
        );
        assert!(
            cached
                .check(&answer(502, "stopped"), None)
                .unwrap()
                .starts_with("502")
        );
        let uncached = Mode::Uncached { step: "u4".into() };
        let (body, nonce) = uncached.request("space", 3, 17);
        assert_eq!(nonce.as_deref(), Some("u4-3-17"));
        assert_eq!(body["props"]["n"], "u4-3-17");
        assert_eq!(body["props"]["cache"], false);
        assert_eq!(body["context"]["spaceId"], "space");
        let good = answer(200, "{\"content\":\"Render u4-3-17, abc.\"}");
        assert_eq!(uncached.check(&good, nonce.as_deref()), None);
        // Another request's nonce that begins the same is not this one's.
        let other = answer(200, "{\"content\":\"Render u4-3-170, abc.\"}");
        assert!(uncached.check(&other, nonce.as_deref()).is_some());
        // The cached request is the same every time.
        let (a, n) = cached.request("s", 0, 0);
        assert_eq!((a, n), cached.request("s", 5, 9));
    }

    #[test]
    fn delta_needs_both_figures() {
        let mut r = ScriptsResult {
            rss_idle_mb: Some(150.0),
            ..ScriptsResult::default()
        };
        assert_eq!(r.rss_delta_mb(), None);
        r.rss_peak_mb = Some(190.5);
        assert!((r.rss_delta_mb().unwrap() - 40.5).abs() < 1e-9);
    }

    #[test]
    fn the_script_speaks_the_runtimes_protocol() {
        assert!(SCRIPT.contains("export default"));
        assert!(SCRIPT.contains("request.formData()"));
        assert!(SCRIPT.contains(r#"form.get("event")"#));
        assert!(SCRIPT.contains(&format!("max-age={MAX_AGE_S}")));
        assert!(SCRIPT.contains(&format!(r#"event.componentId !== "{COMPONENT}""#)));
    }
}
