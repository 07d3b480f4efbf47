//! The `events` phase (issue 42, `docs/integrations.md`): merges at [`WRITERS`] writers with one
//! installed integration whose receiver (the bench itself) answers at once. Every event must be
//! delivered, soon after its commit, and delivery must not slow the merges down.
//!
//! In order, with the administrator's token, on the big space (the driver's `merge` family:
//! each writer makes a change request, rewrites one of its own pages, both untimed, then merges
//! it, timed):
//!
//! 1. the baseline: the merges at [`WRITERS`] connections, `warmup` unmeasured then `duration`,
//!    no integration installed;
//! 2. a receiver starts in the bench on 127.0.0.1 (an ephemeral port; `run` starts quire with
//!    `QUIRE_OUTBOUND_ALLOW=127.0.0.1`, as quire refuses loopback addresses otherwise): it
//!    records each POST's arrival and its body's `type`, `eventId` and `revisionId`, and
//!    answers 200 at once;
//! 3. an integration (scope `space:content:read`, so it hears content and change requests) is
//!    published in the big space's organization, its dev tunnel set to the receiver, installed
//!    in that organization and given every space (`space_selection: all`);
//! 4. the same merges again. For each merge that merged, the time from its answer's arrival to
//!    the receipt of the `space_content_updated` whose `revisionId` is the answer's `revision`
//!    is its delivery latency. The commit is before the answer, so this understates the time
//!    from the commit by the rest of the merge request (an event that arrives before the answer
//!    counts 0); the time from the request's sending, which overstates it, is shown beside it;
//! 5. for up to [`SETTLE_TIMEOUT`] after the load: until every merged revision's
//!    `space_content_updated` has arrived, then until `GET /v1/integrations/{name}/events`
//!    (every page) lists no `pending` event. Then no event may be `failed` or `pending`, and the
//!    receiver must have had every listed one;
//! 6. the integration is unpublished (its installation goes with it), so that later phases do
//!    not make events for a receiver that is gone.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::load::{Driver, FamilyResult, Merged};

/// Connections merging, with and without the integration (the 4 writers).
pub const WRITERS: usize = 4;
/// Budget: p99 from a merge to the receipt of its `space_content_updated`.
pub const DELIVERY_P99_BUDGET_MS: f64 = 500.0;
/// Budget: merge p50 with the integration at most this share of the baseline's. Two runs of
/// the same merges on this shared two-core machine differ by up to this much (the list pages'
/// budget allows the same 20% for the same reason): "unchanged within noise".
pub const MERGE_P50_SHARE: f64 = 1.20;
/// After the load, how long the phase waits for every event to be delivered.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How often the receiver's records are looked at while waiting.
const RECEIPT_POLL: Duration = Duration::from_millis(10);
/// How often the events are listed again while some are pending.
const LISTING_POLL: Duration = Duration::from_millis(250);
/// Events per page of the listing (the API's maximum).
const EVENTS_PAGE: usize = 100;
/// The event a merge into main makes, with the revision it made.
pub const CONTENT_UPDATED: &str = "space_content_updated";
/// The integration's one scope: what it needs to hear content and change requests.
pub const SCOPE: &str = "space:content:read";

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EventsResult {
    /// The big space's organization: the integration's owner and where it is installed.
    pub org: String,
    /// The integration's name (fresh for each run).
    pub integration: String,
    /// The dev tunnel: the bench's receiver.
    pub receiver_url: String,
    pub installation: Option<String>,
    /// The merges without an integration, and with it installed.
    pub baseline: Option<FamilyResult>,
    pub with_integration: Option<FamilyResult>,
    /// From each measured merge's answer to the receipt of its `space_content_updated` (0 when
    /// it came first): a lower bound of the time from the commit.
    pub delivery: Option<Latency>,
    /// From each measured merge's request sent to that receipt: an upper bound.
    pub delivery_from_sent: Option<Latency>,
    /// Measured merges whose event arrived before their answer (counted 0 above).
    pub before_answer: usize,
    /// Merges that merged with the integration installed (the probe's and the warm-up's
    /// included): each one's `space_content_updated` is expected.
    pub expected: usize,
    /// Of those, received by the end of the wait.
    pub received: usize,
    /// A few of the revisions whose event never arrived.
    pub missing_revisions: Vec<String>,
    /// From the end of the load until every expected event had arrived, ms.
    pub all_received_ms: Option<f64>,
    /// From the end of the load until the listing showed nothing pending (or the wait ended), ms.
    pub settle_ms: f64,
    /// POSTs the receiver answered, distinct `eventId`s among them, bodies that were not JSON.
    pub posts: usize,
    pub distinct: usize,
    pub not_json: usize,
    /// Distinct events received, per `type`.
    pub by_type: BTreeMap<String, usize>,
    /// `GET /v1/integrations/{name}/events` was read to its end after the wait.
    pub checked: bool,
    /// Events it listed (its `count`), and per status.
    pub listed: usize,
    pub success: usize,
    pub pending: usize,
    pub failed: usize,
    /// Listed events that took more than one attempt (`attempts` > 1).
    pub retried: usize,
    /// Listed events whose `eventId` the receiver never had.
    pub not_received: usize,
    /// The trace of the first failed or pending event (a few lines).
    pub trace_sample: Vec<String>,
    /// The server has no integration routes: nothing measured.
    pub endpoint_missing: bool,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Unpublishing the integration at the end failed (not a failure of the phase).
    pub cleanup: Option<String>,
    /// Peak resident set of the server during the phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

/// A latency distribution, ms.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub count: u64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl Latency {
    fn of(hist: &Histogram<u64>) -> Option<Latency> {
        if hist.is_empty() {
            return None;
        }
        let ms = |us: u64| us as f64 / 1000.0;
        Some(Latency {
            count: hist.len(),
            p50_ms: ms(hist.value_at_quantile(0.50)),
            p90_ms: ms(hist.value_at_quantile(0.90)),
            p99_ms: ms(hist.value_at_quantile(0.99)),
            max_ms: ms(hist.max()),
            mean_ms: hist.mean() / 1000.0,
        })
    }
}

impl EventsResult {
    /// Every event delivered: every merge's `space_content_updated` received, and the listing,
    /// read to its end, shows none failed or pending and none the receiver did not have.
    pub fn all_delivered(&self) -> bool {
        self.checked
            && self.expected > 0
            && self.received == self.expected
            && self.failed == 0
            && self.pending == 0
            && self.not_received == 0
    }

    /// Merge p50 with the integration over the baseline's.
    pub fn merge_p50_ratio(&self) -> Option<f64> {
        match (&self.baseline, &self.with_integration) {
            (Some(a), Some(b)) if a.requests > 0 && b.requests > 0 && a.p50_ms > 0.0 => {
                Some(b.p50_ms / a.p50_ms)
            }
            _ => None,
        }
    }
}

/// One POST the receiver answered.
#[derive(Clone, Debug)]
struct Receipt {
    at: Instant,
    kind: String,
    event_id: String,
    revision: Option<String>,
}

/// What the receiver has had.
#[derive(Default)]
struct Inbox {
    received: Mutex<Received>,
    not_json: AtomicUsize,
}

#[derive(Default)]
struct Received {
    receipts: Vec<Receipt>,
    /// The revisions of the `space_content_updated` received: what the wait looks at, without
    /// going through every receipt each time.
    revisions: HashSet<String>,
}

impl Inbox {
    fn snapshot(&self) -> Vec<Receipt> {
        self.received
            .lock()
            .map(|r| r.receipts.clone())
            .unwrap_or_default()
    }

    fn has_all(&self, revisions: &HashSet<&str>) -> bool {
        self.received
            .lock()
            .map(|r| revisions.iter().all(|rev| r.revisions.contains(*rev)))
            .unwrap_or(false)
    }
}

/// The receiver: answers any POST 200 at once, after recording when it arrived (its whole
/// body read) and what it was.
async fn receive(inbox: Arc<Inbox>) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), String> {
    use axum::http::StatusCode;
    let handler = move |body: bytes::Bytes| {
        let inbox = inbox.clone();
        async move {
            let at = Instant::now();
            match serde_json::from_slice::<Value>(&body) {
                Ok(v) => {
                    let text = |key: &str| v[key].as_str().map(str::to_string);
                    let receipt = Receipt {
                        at,
                        kind: text("type").unwrap_or_default(),
                        event_id: text("eventId").unwrap_or_default(),
                        revision: text("revisionId"),
                    };
                    if let Ok(mut r) = inbox.received.lock() {
                        if let (CONTENT_UPDATED, Some(rev)) = (receipt.kind.as_str(), &receipt.revision) {
                            r.revisions.insert(rev.clone());
                        }
                        r.receipts.push(receipt);
                    }
                }
                Err(_) => {
                    inbox.not_json.fetch_add(1, Ordering::Relaxed);
                }
            }
            StatusCode::OK
        }
    };
    let app = axum::Router::new().fallback(axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((addr, task))
}

/// Runs the phase; errors of the phase itself are in `failure`.
pub async fn run(driver: &Driver, warmup: Duration, duration: Duration) -> EventsResult {
    let mut out = EventsResult::default();
    let inbox = Arc::new(Inbox::default());
    let mut receiver = None;
    if let Err(e) = steps(driver, warmup, duration, &inbox, &mut receiver, &mut out).await {
        eprintln!("events: {e}");
        out.failure = Some(e);
    }
    if !out.integration.is_empty() && !out.endpoint_missing {
        out.cleanup = unpublish(driver, &out.integration).await.err();
        if let Some(e) = &out.cleanup {
            eprintln!("events: {e}");
        }
    }
    if let Some(task) = receiver {
        task.abort();
    }
    out
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

async fn steps(
    driver: &Driver,
    warmup: Duration,
    duration: Duration,
    inbox: &Arc<Inbox>,
    receiver: &mut Option<tokio::task::JoinHandle<()>>,
    out: &mut EventsResult,
) -> Result<(), String> {
    let data = driver.dataset();
    let token = data.admin_token.as_str();
    let mut conn = Conn::new(driver.addr())?;
    // The merges' space decides the organization: its events are the owner organization's,
    // which is what a dev tunnel hears.
    let path = format!("/v1/spaces/{}", data.big_space);
    let a = conn.get(&path, token).await?;
    if !a.ok() {
        return Err(format!("GET {path}: {}", a.describe()));
    }
    out.org = a.json()["organization"]
        .as_str()
        .map(str::to_string)
        .or_else(|| data.orgs.first().cloned())
        .ok_or("the dataset has no organization")?;

    eprintln!("events: merge at {WRITERS} connections, no integration installed");
    let (mut baseline, _) = driver.merges(WRITERS, warmup, duration).await?;
    if baseline.missing {
        return Err("the server has no merge route".into());
    }
    baseline.detail = "merge, no integration installed".into();
    print_one(&baseline);
    out.baseline = Some(baseline);

    let (addr, task) = receive(inbox.clone()).await?;
    *receiver = Some(task);
    out.receiver_url = format!("http://{addr}/hook");
    install(&mut conn, token, out).await?;
    eprintln!(
        "events: integration {} installed in {} (every space), events to {}",
        out.integration, out.org, out.receiver_url
    );

    eprintln!("events: merge at {WRITERS} connections, the integration installed");
    let (mut with, merged) = driver.merges(WRITERS, warmup, duration).await?;
    let load_end = Instant::now();
    with.detail = "merge, the integration installed (every space)".into();
    print_one(&with);
    out.with_integration = Some(with);

    // Every merged revision's event, then nothing pending, within the same wait.
    let deadline = load_end + SETTLE_TIMEOUT;
    let wanted: HashSet<&str> = merged.iter().map(|m| m.revision.as_str()).collect();
    loop {
        if inbox.has_all(&wanted) {
            out.all_received_ms = Some(load_end.elapsed().as_secs_f64() * 1000.0);
            break;
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(RECEIPT_POLL).await;
    }
    let listing = loop {
        let listing = list_events(&mut conn, token, &out.integration).await?;
        if listing.pending() == 0 || Instant::now() >= deadline {
            break listing;
        }
        tokio::time::sleep(LISTING_POLL).await;
    };
    out.settle_ms = load_end.elapsed().as_secs_f64() * 1000.0;
    // Read after the listing: an event is marked delivered after the receiver answered it.
    let receipts = inbox.snapshot();
    out.not_json = inbox.not_json.load(Ordering::Relaxed);
    tally(out, &merged, &receipts, &listing)?;
    if let Some(id) = listing
        .events
        .iter()
        .find(|e| e.status != "success")
        .map(|e| e.id.clone())
    {
        out.trace_sample = trace(&mut conn, token, &out.integration, &id).await;
    }
    eprintln!(
        "events: {} of {} merges' {CONTENT_UPDATED} received{}; {} events listed: {} success, {} pending, {} failed, {} not received",
        out.received,
        out.expected,
        out.all_received_ms
            .map(|t| format!(" (all {t:.0} ms after the load)"))
            .unwrap_or_default(),
        out.listed,
        out.success,
        out.pending,
        out.failed,
        out.not_received
    );
    Ok(())
}

/// Publishes the integration, points its dev tunnel at the receiver, installs it in the
/// organization and gives it every space.
async fn install(conn: &mut Conn, token: &str, out: &mut EventsResult) -> Result<(), String> {
    // A fresh name, also against a server that already has this phase's.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let name = format!("quire-bench-events-{stamp}");
    let base = format!("/v1/integrations/{name}");
    let body = json!({"organization": out.org, "title": "Bench hook", "description": "",
        "script": "", "scopes": [SCOPE]});
    let a = conn.post(&base, token, &body).await?;
    if a.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no integration routes".into());
    }
    if !a.ok() {
        return Err(format!("POST {base}: {}", a.describe()));
    }
    out.integration = name;
    let dev = format!("{base}/dev");
    let a = conn
        .send(
            http::Method::PUT,
            &dev,
            token,
            Some(&json!({"tunnelUrl": out.receiver_url})),
        )
        .await?;
    if !a.ok() {
        return Err(format!("PUT {dev}: {}", a.describe()));
    }
    let installs = format!("{base}/installations");
    let a = conn
        .post(&installs, token, &json!({"organization": out.org}))
        .await?;
    let id = match a.json()["id"].as_str() {
        Some(id) if a.ok() => id.to_string(),
        _ => return Err(format!("POST {installs}: {}", a.describe())),
    };
    out.installation = Some(id.clone());
    let one = format!("{installs}/{id}");
    let a = conn
        .send(
            http::Method::PATCH,
            &one,
            token,
            Some(&json!({"space_selection": "all"})),
        )
        .await?;
    if !a.ok() {
        return Err(format!("PATCH {one}: {}", a.describe()));
    }
    Ok(())
}

/// The first receipt of each revision's `space_content_updated`.
fn content_receipts(receipts: &[Receipt]) -> HashMap<&str, Instant> {
    let mut first: HashMap<&str, Instant> = HashMap::new();
    for r in receipts.iter().filter(|r| r.kind == CONTENT_UPDATED) {
        if let Some(rev) = &r.revision {
            first
                .entry(rev.as_str())
                .and_modify(|t| *t = (*t).min(r.at))
                .or_insert(r.at);
        }
    }
    first
}

/// One listed event.
#[derive(Clone, Debug, PartialEq)]
struct Listed {
    id: String,
    status: String,
    attempts: i64,
}

/// The integration's events, every page.
#[derive(Clone, Debug, Default)]
struct Listing {
    count: u64,
    events: Vec<Listed>,
}

impl Listing {
    fn pending(&self) -> usize {
        self.events.iter().filter(|e| e.status == "pending").count()
    }
}

async fn list_events(conn: &mut Conn, token: &str, name: &str) -> Result<Listing, String> {
    let base = format!("/v1/integrations/{name}/events?limit={EVENTS_PAGE}");
    let mut listing = Listing::default();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{base}&page={}", crate::load::encode(c)),
            None => base.clone(),
        };
        let a = conn.get(&path, token).await?;
        if !a.ok() {
            return Err(format!("GET {path}: {}", a.describe()));
        }
        let v = a.json();
        listing.count = v["count"].as_u64().unwrap_or(listing.count);
        for e in v["items"].as_array().map_or(&[][..], Vec::as_slice) {
            listing.events.push(Listed {
                id: e["id"].as_str().unwrap_or_default().to_string(),
                status: e["status"].as_str().unwrap_or_default().to_string(),
                attempts: e["attempts"].as_i64().unwrap_or(0),
            });
        }
        match v["next"]["page"].as_str() {
            // A cursor that does not move would loop for ever.
            Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_string()),
            _ => break,
        }
    }
    Ok(listing)
}

/// The first lines of an event's trace.
async fn trace(conn: &mut Conn, token: &str, name: &str, id: &str) -> Vec<String> {
    let path = format!("/v1/integrations/{name}/events/{id}");
    match conn.get(&path, token).await {
        Ok(a) if a.ok() => {
            let v = a.json();
            let mut lines = vec![format!(
                "{} {} (attempts {})",
                v["event"]["payload"]["type"].as_str().unwrap_or("?"),
                v["event"]["status"].as_str().unwrap_or("?"),
                v["event"]["attempts"]
            )];
            lines.extend(
                v["trace"]["logs"]
                    .as_array()
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .take(5)
                    .map(|l| {
                        format!(
                            "{}: {}",
                            l["level"].as_str().unwrap_or("?"),
                            l["message"].as_str().unwrap_or_default()
                        )
                        .chars()
                        .take(200)
                        .collect()
                    }),
            );
            lines
        }
        Ok(a) => vec![format!("GET {path}: {}", a.describe())],
        Err(e) => vec![format!("GET {path}: {e}")],
    }
}

/// The figures of the merges, the receipts and the listing.
fn tally(
    out: &mut EventsResult,
    merged: &[Merged],
    receipts: &[Receipt],
    listing: &Listing,
) -> Result<(), String> {
    let arrived = content_receipts(receipts);
    let mut from_answer = new_histogram()?;
    let mut from_sent = new_histogram()?;
    let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1);
    out.expected = merged.len();
    out.received = 0;
    out.before_answer = 0;
    out.missing_revisions.clear();
    for m in merged {
        match arrived.get(m.revision.as_str()) {
            Some(at) => {
                out.received += 1;
                if m.measured {
                    if *at < m.answered {
                        out.before_answer += 1;
                    }
                    from_answer.saturating_record(us(at.saturating_duration_since(m.answered)));
                    from_sent.saturating_record(us(at.saturating_duration_since(m.sent)));
                }
            }
            None if out.missing_revisions.len() < 5 => out.missing_revisions.push(m.revision.clone()),
            None => {}
        }
    }
    out.delivery = Latency::of(&from_answer);
    out.delivery_from_sent = Latency::of(&from_sent);
    out.posts = receipts.len();
    let mut seen: HashSet<&str> = HashSet::new();
    out.by_type.clear();
    for r in receipts {
        if seen.insert(r.event_id.as_str()) {
            *out.by_type.entry(r.kind.clone()).or_default() += 1;
        }
    }
    out.distinct = seen.len();
    out.checked = true;
    out.listed = usize::try_from(listing.count)
        .unwrap_or(usize::MAX)
        .max(listing.events.len());
    let status = |s: &str| listing.events.iter().filter(|e| e.status == s).count();
    out.success = status("success");
    out.pending = status("pending");
    out.failed = status("failed");
    out.retried = listing.events.iter().filter(|e| e.attempts > 1).count();
    out.not_received = listing
        .events
        .iter()
        .filter(|e| !seen.contains(e.id.as_str()))
        .count();
    Ok(())
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // As the load driver's: microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

/// A plain-text summary for the progress output.
pub fn table(r: &EventsResult) -> String {
    let rows: Vec<FamilyResult> = r.baseline.iter().chain(&r.with_integration).cloned().collect();
    let mut s = crate::load::table(&rows);
    let line = |name: &str, l: &Option<Latency>| match l {
        Some(l) => format!(
            "{name}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} merges)\n",
            l.p50_ms, l.p99_ms, l.max_ms, l.count
        ),
        None => format!("{name}: -\n"),
    };
    s += &line("delivery, merge answered -> event received", &r.delivery);
    s += &line("delivery, merge sent -> event received", &r.delivery_from_sent);
    s += &format!(
        "{CONTENT_UPDATED}: {} of {} received; receiver: {} POSTs, {} distinct events; listed {}: {} success, {} pending, {} failed, {} not received\n",
        r.received, r.expected, r.posts, r.distinct, r.listed, r.success, r.pending, r.failed, r.not_received
    );
    if let Some(f) = &r.failure {
        s += &format!("FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(at: Instant, kind: &str, id: &str, revision: Option<&str>) -> Receipt {
        Receipt {
            at,
            kind: kind.into(),
            event_id: id.into(),
            revision: revision.map(str::to_string),
        }
    }

    fn listed(id: &str, status: &str, attempts: i64) -> Listed {
        Listed {
            id: id.into(),
            status: status.into(),
            attempts,
        }
    }

    #[test]
    fn tallies_deliveries_against_merges_and_the_listing() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let merge = |rev: &str, sent: u64, answered: u64, measured: bool| Merged {
            sent: at(sent),
            answered: at(answered),
            revision: rev.into(),
            measured,
        };
        let merged = vec![
            merge("r1", 0, 50, false),
            merge("r2", 100, 150, true),
            merge("r3", 200, 250, true),
            merge("r4", 300, 350, true),
        ];
        let receipts = vec![
            receipt(at(60), CONTENT_UPDATED, "e1", Some("r1")),
            receipt(at(170), CONTENT_UPDATED, "e2", Some("r2")),
            // Delivered again (at least once): the first receipt counts.
            receipt(at(400), CONTENT_UPDATED, "e2", Some("r2")),
            // Before the merge's answer arrived: counted 0 from the answer.
            receipt(at(240), CONTENT_UPDATED, "e3", Some("r3")),
            receipt(at(245), "change_request_merged", "e4", Some("r3")),
        ];
        let listing = Listing {
            count: 5,
            events: vec![
                listed("e1", "success", 1),
                listed("e2", "success", 2),
                listed("e3", "success", 1),
                listed("e4", "success", 1),
                listed("e5", "pending", 0),
            ],
        };
        let mut out = EventsResult::default();
        tally(&mut out, &merged, &receipts, &listing).unwrap();
        assert_eq!((out.expected, out.received), (4, 3));
        assert_eq!(out.missing_revisions, ["r4"]);
        assert_eq!(out.before_answer, 1);
        let d = out.delivery.clone().unwrap();
        assert_eq!(d.count, 2, "only measured merges that arrived");
        assert!((d.max_ms - 20.0).abs() < 0.1, "{d:?}");
        let s = out.delivery_from_sent.clone().unwrap();
        assert!((s.max_ms - 70.0).abs() < 0.1, "{s:?}");
        assert_eq!((out.posts, out.distinct), (5, 4));
        assert_eq!(out.by_type.get(CONTENT_UPDATED), Some(&3));
        assert_eq!(
            (
                out.listed,
                out.success,
                out.pending,
                out.failed,
                out.retried,
                out.not_received
            ),
            (5, 4, 1, 0, 1, 1)
        );
        assert!(!out.all_delivered());
        // Everything there: delivered.
        let receipts: Vec<Receipt> = receipts
            .into_iter()
            .chain([
                receipt(at(380), CONTENT_UPDATED, "e6", Some("r4")),
                receipt(at(390), "change_request_created", "e5", None),
            ])
            .collect();
        let mut listing = listing;
        listing.events[4].status = "success".into();
        listing.events.push(listed("e6", "success", 1));
        listing.count = 6;
        tally(&mut out, &merged, &receipts, &listing).unwrap();
        assert_eq!(out.received, 4);
        assert!(out.all_delivered(), "{out:?}");
        out.failed = 1;
        assert!(!out.all_delivered());
    }

    #[test]
    fn merge_ratio_needs_both_loads() {
        let merges = |p50: f64| FamilyResult {
            requests: 10,
            p50_ms: p50,
            ..FamilyResult::default()
        };
        let mut r = EventsResult {
            baseline: Some(merges(40.0)),
            ..EventsResult::default()
        };
        assert_eq!(r.merge_p50_ratio(), None);
        r.with_integration = Some(merges(46.0));
        assert!((r.merge_p50_ratio().unwrap() - 1.15).abs() < 1e-9);
    }

    #[tokio::test]
    async fn the_receiver_records_and_answers_at_once() {
        let inbox = Arc::new(Inbox::default());
        let (addr, task) = receive(inbox.clone()).await.unwrap();
        let mut conn = Conn::new(addr).unwrap();
        let body = json!({"type": CONTENT_UPDATED, "eventId": "ev1", "spaceId": "s", "revisionId": "r9"});
        let a = conn.post("/hook", "", &body).await.unwrap();
        assert_eq!(a.status, 200);
        let r = inbox.snapshot();
        assert_eq!(r.len(), 1);
        assert_eq!(
            (
                r[0].kind.as_str(),
                r[0].event_id.as_str(),
                r[0].revision.as_deref()
            ),
            (CONTENT_UPDATED, "ev1", Some("r9"))
        );
        task.abort();
    }
}
