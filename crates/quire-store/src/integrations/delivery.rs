//! Delivering an integration event: a POST of its payload, signed, to the integration's dev
//! tunnel (for its owner organization's events, or every organization's with `all`) or else
//! its webhook, retried with exponential backoff and jitter, every attempt in the event's
//! trace (`docs/integrations.md`, "Delivery").
//!
//! Each event has one `integration_deliver` job on the durable runner (dedupe key
//! `deliver:<event>`), scheduled in the transaction that made the event. An attempt is
//! recorded in its own transaction after the answer; the job then asks to run again at the
//! next attempt's time, or ends. A process killed between attempts leaves the job row, which
//! another process (or the restarted one) runs when it is due; a process killed during an
//! attempt leaves a leased job that runs again when the lease expires, so an event whose
//! answer was lost is delivered again, with the same `eventId` (at least once). An event
//! marked delivered is never sent again: the job checks its status first.

use std::time::Duration;

use hmac::{KeyInit, Mac};
use serde_json::Value as Json;

use super::events::{self, Level};
use super::model::{self, EventStatus, Integration};
use crate::db::Conn;
use crate::error::StoreError;
use crate::{Store, clock, params};

pub const DELIVER_JOB: &str = "integration_deliver";

/// The header that carries the signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
/// "<t>.<body>" under the integration's signing secret>`, as GitBook signs its requests.
pub const SIGNATURE_HEADER: &str = "X-GitBook-Signature";

/// How deliveries retry (`Settings::delivery`).
#[derive(Clone, Copy, Debug)]
pub struct DeliverySettings {
    /// Attempts in all, the first included.
    pub attempts: i64,
    /// The wait before the second attempt; each later wait doubles, ±20% jitter.
    pub backoff_ms: i64,
    /// How long one attempt may take.
    pub timeout: Duration,
    /// An endpoint that has failed for this long is disabled.
    pub disable_after_ms: i64,
}

impl Default for DeliverySettings {
    /// 8 attempts 30 s apart, doubling: the last one about an hour after the first.
    fn default() -> Self {
        DeliverySettings {
            attempts: 8,
            backoff_ms: 30_000,
            timeout: Duration::from_secs(10),
            disable_after_ms: 24 * 3600 * 1000,
        }
    }
}

impl DeliverySettings {
    /// The wait after failed attempt `attempt` (1-based), jittered by ±20%.
    pub fn wait_after(&self, attempt: i64) -> i64 {
        let base = self.backoff_ms.saturating_mul(1i64 << (attempt - 1).clamp(0, 30));
        let jitter: f64 = 0.8 + 0.4 * rand::random::<f64>();
        (base as f64 * jitter) as i64
    }
}

/// Schedules the delivery of `event` at `at`.
pub fn schedule(c: &mut dyn Conn, event: &str, at: i64) -> Result<(), crate::db::DbError> {
    crate::jobs::enqueue(
        c,
        DELIVER_JOB,
        &serde_json::json!({ "event": event }),
        at,
        Some(&format!("deliver:{event}")),
    )
    .map_err(|e| crate::db::DbError::Other(e.message))
}

/// Where an event goes, or why it goes nowhere.
enum Endpoint {
    Tunnel(String),
    Webhook(String),
    /// The integration's own script, run by quire (`scripts`), with why not the tunnel.
    Script(Vec<String>),
    Nowhere(String),
}

fn endpoint(
    integration: &Integration,
    dev_disabled: Option<i64>,
    webhook_disabled: Option<i64>,
    event_org: &str,
) -> Endpoint {
    let mut why = Vec::new();
    if let Some(tunnel) = &integration.dev_tunnel_url {
        if dev_disabled.is_some() {
            why.push(
                "the dev tunnel is disabled for failing for a day (PUT dev enables it again)".to_string(),
            );
        } else if integration.dev_all || event_org == integration.org_id {
            return Endpoint::Tunnel(tunnel.clone());
        } else {
            why.push("the dev tunnel gets only the owner organization's events (`all` is off)".to_string());
        }
    }
    match &integration.webhook_url {
        Some(_) if webhook_disabled.is_some() => {
            why.push("the webhook is disabled for failing for a day (publishing enables it again)".into())
        }
        Some(url) => return Endpoint::Webhook(url.clone()),
        // GitBook's way: the platform runs the script. A tunnel or a webhook, quire's, comes
        // first: a developer's tunnel, or a team's own endpoint, asked for explicitly.
        None => return Endpoint::Script(why),
    }
    Endpoint::Nowhere(why.join("; "))
}

/// The signature header's value for `body` at `timestamp` (Unix seconds).
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("t={timestamp},v1={hex}")
}

/// A content security policy as a header value: a string as it is, an object as its
/// directives joined.
pub fn csp_header(csp: &Json) -> Option<String> {
    match csp {
        Json::String(s) if !s.is_empty() => Some(s.clone()),
        Json::Object(map) if !map.is_empty() => Some(
            map.iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

/// What an attempt needs, read in one transaction.
struct Attempt {
    event: events::Event,
    integration: Integration,
    secret: String,
    /// Empty for the script.
    url: String,
    /// `dev_tunnel`, `webhook` or `script`.
    target: &'static str,
    /// Why the event goes to the script and not the tunnel, said in the first attempt's trace.
    notes: Vec<String>,
}

/// What the job does this time.
enum Step {
    /// Nothing: the event is gone or was delivered or given up.
    Done,
    /// End the event unsent, saying why.
    Nowhere(String),
    Send(Box<Attempt>),
}

/// What an attempt found or did, for [`record`] to write down.
#[derive(Debug)]
pub enum Attempted {
    /// Nothing to do: the event is gone, delivered or given up.
    Nothing,
    /// The event goes nowhere: it ends `failed` with this line.
    Unsent { event_id: String, message: String },
    /// It was sent; `ok` when the endpoint acknowledged it.
    Sent {
        event_id: String,
        integration_id: String,
        target: &'static str,
        ok: bool,
        /// What the script logged first (none for a POST).
        logs: Vec<(Level, String)>,
        line: String,
        number: i64,
    },
}

/// Writes down what [`attempt`] did; Some(time) when another attempt is due then. The job
/// runner records a batch of attempts in one transaction.
pub fn record(
    c: &mut dyn Conn,
    attempted: &Attempted,
    settings: &DeliverySettings,
) -> Result<Option<i64>, StoreError> {
    match attempted {
        Attempted::Nothing => Ok(None),
        Attempted::Unsent { event_id, message } => {
            let changed = c.execute(
                "UPDATE integration_events SET status = 'failed', completed_at = ?2 WHERE id = ?1 AND status = 'pending'",
                params![event_id.clone(), clock::now_ms()],
            )?;
            if changed > 0 {
                events::log(c, event_id, Level::Warn, message)?;
            }
            Ok(None)
        }
        Attempted::Sent {
            event_id,
            integration_id,
            target,
            ok,
            logs,
            line,
            number,
        } => {
            for (level, text) in logs {
                events::log(c, event_id, *level, text)?;
            }
            record_attempt(c, event_id, integration_id, target, *ok, line, *number, settings)
        }
    }
}

/// Makes one attempt of the job's event (reads and the POST; no write).
pub async fn attempt(store: &Store, payload: &Json) -> Result<Attempted, StoreError> {
    let event_id = payload
        .get("event")
        .and_then(Json::as_str)
        .ok_or_else(|| StoreError::internal("an integration_deliver job without an event"))?
        .to_string();
    let key = store.settings.secrets_key.clone();
    let id = event_id.clone();
    let step = store
        .db
        .read(move |c| -> Result<Step, StoreError> {
            let Some(event) = events::load(c, &id)? else {
                return Ok(Step::Done);
            };
            if event.status != EventStatus::Pending {
                return Ok(Step::Done);
            }
            let Some(integration) = model::load_by_id(c, &event.integration_id)? else {
                return Ok(Step::Nowhere("the integration was unpublished".into()));
            };
            let disabled: Option<crate::db::Row> = c.query_opt(
                "SELECT dev_disabled_at, webhook_disabled_at FROM integrations WHERE id = ?1",
                params![integration.id.clone()],
            )?;
            let (dev_disabled, webhook_disabled): (Option<i64>, Option<i64>) = match disabled {
                Some(row) => (row.get(0)?, row.get(1)?),
                None => (None, None),
            };
            let (url, target, notes) = match endpoint(
                &integration,
                dev_disabled,
                webhook_disabled,
                &event.organization_id,
            ) {
                Endpoint::Tunnel(url) => (url, "dev_tunnel", Vec::new()),
                Endpoint::Webhook(url) => (url, "webhook", Vec::new()),
                Endpoint::Script(notes) => (String::new(), "script", notes),
                Endpoint::Nowhere(why) => return Ok(Step::Nowhere(why)),
            };
            let secret = super::signing_secret_of(c, &key, &integration.id)?;
            Ok(Step::Send(Box::new(Attempt {
                integration,
                secret,
                event,
                url,
                target,
                notes,
            })))
        })
        .await?;
    let attempt = match step {
        Step::Done => return Ok(Attempted::Nothing),
        Step::Nowhere(why) => {
            return Ok(Attempted::Unsent {
                event_id,
                message: format!("not delivered: {why}"),
            });
        }
        Step::Send(attempt) => attempt,
    };
    if attempt.target == "script" {
        return run_script(store, event_id, &attempt).await;
    }
    let (url, target) = (attempt.url.clone(), attempt.target);
    let settings = store.settings.delivery;
    let number = attempt.event.attempts + 1;
    let body = bytes::Bytes::from(attempt.event.payload.to_string());
    let now_s = clock::now_ms() / 1000;
    let mut headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            SIGNATURE_HEADER.to_string(),
            signature(&attempt.secret, now_s, &body),
        ),
        ("X-Quire-Event-Id".to_string(), attempt.event.id.clone()),
        ("X-Quire-Delivery-Attempt".to_string(), number.to_string()),
    ];
    if let Some(csp) = attempt
        .integration
        .definition
        .get("contentSecurityPolicy")
        .and_then(csp_header)
    {
        headers.push(("Content-Security-Policy".to_string(), csp));
    }
    let started = std::time::Instant::now();
    let outcome = store.fetch.post(&url, &headers, body, settings.timeout).await;
    let took = started.elapsed().as_millis();
    let (ok, line) = match &outcome {
        Ok(posted) if (200..300).contains(&posted.status) => (
            true,
            format!("attempt {number}: {url} answered {} in {took} ms", posted.status),
        ),
        Ok(posted) => {
            let said: String = posted.body.trim().chars().take(200).collect();
            let said = if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            };
            (
                false,
                format!(
                    "attempt {number}: {url} answered {} in {took} ms{said}",
                    posted.status
                ),
            )
        }
        Err(e) => (false, format!("attempt {number}: {e}")),
    };
    Ok(Attempted::Sent {
        event_id,
        integration_id: attempt.integration.id.clone(),
        target,
        ok,
        logs: Vec::new(),
        line,
        number,
    })
}

/// An attempt that runs the integration's script with the event.
async fn run_script(store: &Store, event_id: String, attempt: &Attempt) -> Result<Attempted, StoreError> {
    let number = attempt.event.attempts + 1;
    let payload = &attempt.event.payload;
    let field = |name: &str| payload.get(name).and_then(Json::as_str).map(str::to_string);
    let call = super::scripts::ScriptCall {
        integration_id: attempt.integration.id.clone(),
        installation_id: field("installationId"),
        space_id: field("spaceId"),
        site_id: field("siteId"),
        event: payload.clone(),
        fetch_body: None,
    };
    let started = std::time::Instant::now();
    let outcome = match store.scripts.call(store, call).await {
        Ok(outcome) => outcome,
        Err(e)
            if matches!(
                e.kind,
                crate::error::ErrorKind::Invalid | crate::error::ErrorKind::NotFound
            ) =>
        {
            return Ok(Attempted::Unsent {
                event_id,
                message: format!("not delivered: {}", e.message),
            });
        }
        Err(e) => return Err(e),
    };
    let took = started.elapsed().as_millis();
    let mut logs: Vec<(Level, String)> = Vec::new();
    if number == 1 {
        logs.extend(
            attempt
                .notes
                .iter()
                .map(|n| (Level::Info, format!("to the script: {n}"))),
        );
    }
    logs.extend(outcome.logs);
    let (ok, line) = match &outcome.answer {
        Ok(answer) if (200..300).contains(&answer.status) => (
            true,
            format!(
                "attempt {number}: the script answered {} in {took} ms ({} ms of CPU)",
                answer.status, outcome.cpu_ms
            ),
        ),
        Ok(answer) => {
            let said: String = String::from_utf8_lossy(&answer.body)
                .trim()
                .chars()
                .take(200)
                .collect();
            (
                false,
                format!(
                    "attempt {number}: the script answered {} in {took} ms: {said}",
                    answer.status
                ),
            )
        }
        Err(why) => (false, format!("attempt {number}: {why}")),
    };
    Ok(Attempted::Sent {
        event_id,
        integration_id: attempt.integration.id.clone(),
        target: "script",
        ok,
        logs,
        line,
        number,
    })
}

/// Records an attempt's outcome; Some(time) when another attempt is due then.
#[allow(clippy::too_many_arguments)]
fn record_attempt(
    c: &mut dyn Conn,
    event_id: &str,
    integration_id: &str,
    target: &str,
    ok: bool,
    line: &str,
    number: i64,
    settings: &DeliverySettings,
) -> Result<Option<i64>, StoreError> {
    let now = clock::now_ms();
    let status: Option<EventStatus> = c.query_scalar(
        "SELECT status FROM integration_events WHERE id = ?1",
        params![event_id],
    )?;
    if status != Some(EventStatus::Pending) {
        return Ok(None);
    }
    events::log(c, event_id, if ok { Level::Info } else { Level::Warn }, line)?;
    c.execute(
        "UPDATE integration_events SET attempts = ?2 WHERE id = ?1",
        params![event_id, number],
    )?;
    // `target` is one of three literals: the columns of the endpoint that was tried. A
    // script is quire's own to run: it is never disabled, and each event gives up alone.
    let columns = match target {
        "dev_tunnel" => Some(("dev_failing_since", "dev_disabled_at")),
        "webhook" => Some(("webhook_failing_since", "webhook_disabled_at")),
        _ => None,
    };
    if ok {
        c.execute(
            "UPDATE integration_events SET status = 'success', completed_at = ?2 WHERE id = ?1",
            params![event_id, now],
        )?;
        if let Some((failing, _)) = columns {
            c.execute(
                &format!("UPDATE integrations SET {failing} = NULL WHERE id = ?1"),
                params![integration_id],
            )?;
        }
        return Ok(None);
    }
    if let Some((failing, disabled)) = columns
        && disabling(
            c,
            event_id,
            integration_id,
            target,
            failing,
            disabled,
            now,
            settings,
        )?
    {
        return Ok(None);
    }
    if number >= settings.attempts {
        fail(c, event_id, now, &format!("given up after {number} attempts"))?;
        return Ok(None);
    }
    let next = now + settings.wait_after(number);
    events::log(
        c,
        event_id,
        Level::Debug,
        &format!("attempt {} in {} ms", number + 1, next - now),
    )?;
    Ok(Some(next))
}

/// Notes that the endpoint fails, and disables it (ending the event) once it has failed
/// longer than the settings allow; true when it did.
#[allow(clippy::too_many_arguments)]
fn disabling(
    c: &mut dyn Conn,
    event_id: &str,
    integration_id: &str,
    target: &str,
    failing: &str,
    disabled: &str,
    now: i64,
    settings: &DeliverySettings,
) -> Result<bool, StoreError> {
    c.execute(
        &format!("UPDATE integrations SET {failing} = COALESCE({failing}, ?2) WHERE id = ?1"),
        params![integration_id, now],
    )?;
    let since: Option<i64> = c.query_scalar(
        &format!("SELECT {failing} FROM integrations WHERE id = ?1"),
        params![integration_id],
    )?;
    if since.is_some_and(|s| now - s >= settings.disable_after_ms) {
        c.execute(
            &format!("UPDATE integrations SET {disabled} = ?2 WHERE id = ?1 AND {disabled} IS NULL"),
            params![integration_id, now],
        )?;
        events::log(
            c,
            event_id,
            Level::Error,
            &format!(
                "the {} has been failing longer than QUIRE_DELIVERY_DISABLE_AFTER ({} s): disabled until {}",
                target.replace('_', " "),
                settings.disable_after_ms / 1000,
                if target == "dev_tunnel" {
                    "the next PUT dev"
                } else {
                    "the next publish"
                }
            ),
        )?;
        fail(c, event_id, now, "given up: the endpoint is disabled")?;
        return Ok(true);
    }
    Ok(false)
}

fn fail(c: &mut dyn Conn, event_id: &str, now: i64, why: &str) -> Result<(), StoreError> {
    events::log(c, event_id, Level::Error, why)?;
    c.execute(
        "UPDATE integration_events SET status = 'failed', completed_at = ?2 WHERE id = ?1",
        params![event_id, now],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_over_timestamp_and_body() {
        // RFC 4231 does not cover the "t.body" framing; this pins the format and the digest.
        let s = signature("secret", 1700000000, b"{}");
        assert!(s.starts_with("t=1700000000,v1="));
        assert_eq!(s.len(), "t=1700000000,v1=".len() + 64);
        assert_ne!(s, signature("secret", 1700000001, b"{}"));
        assert_ne!(s, signature("other", 1700000000, b"{}"));
    }

    #[test]
    fn waits_double_within_their_jitter() {
        let settings = DeliverySettings::default();
        for attempt in 1..8 {
            let wait = settings.wait_after(attempt);
            let base = 30_000 * (1i64 << (attempt - 1));
            assert!(
                wait >= base * 8 / 10 && wait <= base * 12 / 10,
                "{attempt}: {wait}"
            );
        }
        let total: i64 = (1..8).map(|a| 30_000 * (1i64 << (a - 1))).sum();
        assert!((3_000_000..=4_500_000).contains(&total), "about an hour: {total}");
    }
}
