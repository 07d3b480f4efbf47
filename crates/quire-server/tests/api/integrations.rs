//! Integrations: publishing (checks, versions, secrets never answered), installations on
//! organizations, spaces and sites, and events delivered to a local receiver that verifies
//! their signatures, fails on purpose, and sees retries in the event's trace.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{KeyInit, Mac};
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A receiver of deliveries: records each one, answers 500 to the first `fail_first`
/// deliveries of `space_content_updated` events.
#[derive(Clone, Default)]
struct Receiver {
    url: String,
    got: Arc<Mutex<Vec<(HeaderMap, String)>>>,
    fail_first: Arc<Mutex<usize>>,
}

impl Receiver {
    async fn start(fail_first: usize) -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let receiver = Receiver {
            url,
            got: Arc::default(),
            fail_first: Arc::new(Mutex::new(fail_first)),
        };
        let router = axum::Router::new().fallback(receive).with_state(receiver.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        receiver
    }

    fn deliveries(&self) -> Vec<(HeaderMap, Value)> {
        self.got
            .lock()
            .unwrap()
            .iter()
            .map(|(h, b)| (h.clone(), serde_json::from_str(b).unwrap()))
            .collect()
    }

    /// Waits until `n` deliveries arrived (or fails after 20 s).
    async fn wait_for(&self, n: usize) -> Vec<(HeaderMap, Value)> {
        let start = Instant::now();
        loop {
            let got = self.deliveries();
            if got.len() >= n {
                return got;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{n} deliveries expected, got {}",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: String) -> StatusCode {
    let content = body.contains("\"type\":\"space_content_updated\"");
    receiver.got.lock().unwrap().push((headers, body));
    let mut left = receiver.fail_first.lock().unwrap();
    if content && *left > 0 {
        *left -= 1;
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    StatusCode::OK
}

/// Verifies a delivery's signature as a receiver would (docs/integrations.md).
fn verify(secret: &str, headers: &HeaderMap, body: &Value) -> bool {
    let header = headers
        .get("x-gitbook-signature")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut t = "";
    let mut v1 = "";
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => t = value,
            Some(("v1", value)) => v1 = value,
            _ => {}
        }
    }
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    let expected: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    !t.is_empty() && expected == v1
}

const FAST: &[&str] = &[
    "--outbound-allow",
    "127.0.0.1",
    "--delivery-backoff",
    "50ms",
    "--delivery-attempts",
    "5",
];

fn publish_body(org: &str, scopes: &[&str]) -> Value {
    json!({
        "organization": org,
        "title": "Notifier",
        "description": "Tells a channel what changed.",
        "script": "export default {}",
        "scopes": scopes,
        "categories": ["collaboration"],
        "visibility": "public",
        "secrets": {"API_KEY": "s3cret-value"},
        "blocks": [{"id": "card", "title": "A card", "urlUnfurl": ["https://cards.example.com/*"]}],
    })
}

async fn publish(app: &TestApp, user: &TestUser, name: &str, org: &str, scopes: &[&str]) -> Value {
    app.post(
        user,
        &format!("/v1/integrations/{name}"),
        publish_body(org, scopes),
    )
    .await
    .expect(200)
}

pub(crate) async fn space(app: &TestApp, user: &TestUser, org: &str, title: &str) -> String {
    let space = app
        .post(user, &format!("/v1/orgs/{org}/spaces"), json!({"title": title}))
        .await
        .expect(201);
    space["id"].as_str().unwrap().to_string()
}

/// Installs `name` in `org` and enables it on `space`.
pub(crate) async fn install_on(
    app: &TestApp,
    admin: &TestUser,
    name: &str,
    org: &str,
    space: &str,
) -> String {
    let installation = app
        .post(
            admin,
            &format!("/v1/integrations/{name}/installations"),
            json!({"organization": org}),
        )
        .await
        .expect(201);
    let id = installation["id"].as_str().unwrap().to_string();
    app.post(
        admin,
        &format!("/v1/integrations/{name}/installations/{id}/spaces"),
        json!({"space": space}),
    )
    .await
    .expect(201);
    id
}

/// Sends integration `name`'s events to `url` (its dev tunnel).
async fn tunnel(app: &TestApp, admin: &TestUser, name: &str, url: &str) {
    app.put(
        admin,
        &format!("/v1/integrations/{name}/dev"),
        json!({"tunnelUrl": url}),
    )
    .await
    .expect(204);
}

/// A URL on a port nobody listens on: every attempt there is refused.
fn closed_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}/hook", listener.local_addr().unwrap())
}

/// Changes main of `space` through a merged change request: a `space_content_updated`.
pub(crate) async fn change_main(app: &TestApp, user: &TestUser, space: &str, title: &str) {
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": title}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap();
    app.post(
        user,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [{"operation": "insert_page", "title": title, "document": {"markdown": "Text.\n"}}]}),
    )
    .await
    .expect(200);
    app.post(
        user,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
}

/// Waits until the event is no longer pending, and answers it with its trace.
pub(crate) async fn settled(app: &TestApp, user: &TestUser, name: &str, event: &str) -> Value {
    let start = Instant::now();
    loop {
        let detail = app
            .get(user, &format!("/v1/integrations/{name}/events/{event}"))
            .await
            .expect(200);
        if detail["event"]["status"] != "pending" {
            return detail;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still pending: {detail}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn publishing_checks_input_counts_versions_and_never_answers_secrets() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let bob = app.user("bob").await;
    let org = app.org(&ann, "Acme").await;
    app.add_member(&ann, &org, &bob, Some("create")).await;

    let first = publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    assert_eq!(first["version"], 1);
    assert_eq!(first["owner"]["id"], org.as_str());
    assert_eq!(first["permissions"]["admin"], true);
    assert!(first["signingSecret"].as_str().is_some_and(|s| s.len() >= 32));
    assert!(!first.to_string().contains("s3cret-value"));
    let second = publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    assert_eq!(second["version"], 2);
    assert_eq!(
        second["signingSecret"], first["signingSecret"],
        "one secret per integration"
    );
    let read = app.get(&bob, "/v1/integrations/notifier").await.expect(200);
    assert_eq!(read["permissions"]["admin"], false);
    assert!(read.get("signingSecret").is_none());
    assert!(!read.to_string().contains("s3cret-value"));
    // Sealed at rest too.
    let stored = app
        .scalar(
            "SELECT count(*) FROM integrations WHERE secrets LIKE ?1",
            "%s3cret%",
        )
        .await;
    assert_eq!(stored, 0);

    // Bad input: 400, nothing stored.
    for (name, body) in [
        ("bad name!", publish_body(&org, &[])),
        (
            "ok",
            json!({"organization": org, "title": "X", "description": "", "script": "", "scopes": []}),
        ),
        (
            "ok",
            json!({"organization": org, "title": "Fine", "description": "", "script": "", "scopes": ["space:everything"]}),
        ),
        (
            "ok",
            json!({"organization": org, "title": "Fine", "description": "", "script": "", "scopes": [], "icon": "not base64!"}),
        ),
        (
            "ok",
            json!({"organization": org, "title": "Fine", "description": "", "script": "", "scopes": [], "blocks": [{"id": "b", "title": "B!", "urlUnfurl": ["nohost"]}]}),
        ),
    ] {
        let path = format!("/v1/integrations/{}", name.replace(' ', "%20"));
        let status = app.post(&ann, &path, body).await.status;
        assert!(status == 400 || status == 404, "{name}: {status}");
    }
    app.post(&ann, "/v1/integrations/other", publish_body("no-such-org", &[]))
        .await
        .expect(404);
    app.post(&bob, "/v1/integrations/other", publish_body(&org, &[]))
        .await
        .expect(403);
    let listed = app.get(&ann, "/v1/integrations?owner=nobody").await.expect(200);
    assert_eq!(listed["count"], 0);
    let listed = app
        .get(
            &ann,
            &format!("/v1/integrations?owner={org}&blockDomain=cards.example.com&scope=space:content:read"),
        )
        .await
        .expect(200);
    assert_eq!(listed["items"][0]["name"], "notifier");
    let none = app
        .get(&ann, "/v1/integrations?blockDomain=other.example.com")
        .await
        .expect(200);
    assert_eq!(none["count"], 0);
    app.get(&ann, "/v1/integrations?blockDomain=bad%20domain")
        .await
        .expect(400);
    // NUL, which PostgreSQL refuses in text, is refused before any lookup.
    app.get(&ann, "/v1/integrations?search=a%00b").await.expect(400);
    app.get(&ann, "/v1/integrations?owner=%00").await.expect(400);
    let nul =
        json!({"organization": org, "title": "Fine", "description": "a\u{0}b", "script": "", "scopes": []});
    app.post(&ann, "/v1/integrations/nul", nul).await.expect(400);
    app.post(
        &ann,
        "/v1/integrations/nul/installations",
        json!({"organization": "a\u{0}"}),
    )
    .await
    .expect(400);
    // Another organization cannot take the name.
    let carl = app.user("carl").await;
    let other = app.org(&carl, "Other").await;
    app.post(&carl, "/v1/integrations/notifier", publish_body(&other, &[]))
        .await
        .expect(409);
    app.delete(&ann, "/v1/integrations/notifier").await.expect(204);
    app.get(&ann, "/v1/integrations/notifier").await.expect(404);
}

#[tokio::test]
async fn a_delivery_fails_twice_then_succeeds_signed_with_every_attempt_in_the_trace() {
    let app = TestApp::start_with(FAST).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    let published = publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    let secret = published["signingSecret"].as_str().unwrap().to_string();
    let receiver = Receiver::start(2).await;
    tunnel(&app, &ann, "notifier", &receiver.url).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "notifier", &org, &docs).await;
    // The setup events are delivered first.
    let setups = receiver.wait_for(2).await;
    assert!(setups.iter().any(|(_, b)| b["type"] == "installation_setup"));
    assert!(
        setups
            .iter()
            .any(|(_, b)| b["type"] == "space_installation_setup")
    );

    // The content event's first two attempts fail.
    let before = receiver.deliveries().len();
    change_main(&app, &ann, &docs, "Guide").await;
    let got = receiver.wait_for(before + 5).await;
    let content: Vec<&(HeaderMap, Value)> = got
        .iter()
        .filter(|(_, b)| b["type"] == "space_content_updated")
        .collect();
    assert_eq!(content.len(), 3, "two refused, then acknowledged: {got:?}");
    assert!(
        content.windows(2).all(|w| w[0].1["eventId"] == w[1].1["eventId"]),
        "the same event"
    );
    let (headers, body) = content[2];
    assert!(verify(&secret, headers, body), "the signature verifies");
    assert!(!verify("wrong", headers, body));
    assert_eq!(body["spaceId"], docs.as_str());
    assert_eq!(body["updatedBy"][0]["id"], ann.id.as_str());
    let event = body["eventId"].as_str().unwrap();
    let detail = settled(&app, &ann, "notifier", event).await;
    assert_eq!(detail["event"]["status"], "success");
    let logs: Vec<&str> = detail["trace"]["logs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    let attempts: Vec<&&str> = logs.iter().filter(|m| m.starts_with("attempt ")).collect();
    assert!(attempts.len() >= 3, "{logs:?}");
    assert!(logs.iter().any(|m| m.contains("answered 200")), "{logs:?}");
    let listed = app
        .get(&ann, "/v1/integrations/notifier/events")
        .await
        .expect(200);
    assert!(
        listed["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["id"] == event)
    );
}

/// A receiver that holds every answer until it is released.
#[derive(Clone)]
struct Held {
    url: String,
    arrived: Arc<Mutex<usize>>,
    release: tokio::sync::watch::Sender<bool>,
}

impl Held {
    async fn start() -> Held {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let held = Held {
            url: format!("http://{}/hook", listener.local_addr().unwrap()),
            arrived: Arc::default(),
            release: tokio::sync::watch::channel(false).0,
        };
        let state = held.clone();
        let router = axum::Router::new().fallback(move || {
            let state = state.clone();
            async move {
                *state.arrived.lock().unwrap() += 1;
                let mut released = state.release.subscribe();
                let _ = released.wait_for(|r| *r).await;
                StatusCode::OK
            }
        });
        tokio::spawn(async move { axum::serve(listener, router).await });
        held
    }
}

/// Waits until integration `name` has an event of type `kind` and every one of its events is
/// settled, and answers them.
pub(crate) async fn all_settled(app: &TestApp, user: &TestUser, name: &str, kind: &str) -> Vec<Value> {
    let start = Instant::now();
    loop {
        let listed = app
            .get(user, &format!("/v1/integrations/{name}/events"))
            .await
            .expect(200);
        let items = listed["items"].as_array().unwrap().clone();
        if items.iter().any(|e| e["payload"]["type"] == kind)
            && items.iter().all(|e| e["status"] != "pending")
        {
            return items;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{name}'s events still pending: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn an_endpoint_that_does_not_answer_holds_back_no_other_delivery() {
    let app = TestApp::start_with(&["--outbound-allow", "127.0.0.1", "--delivery-timeout", "60s"]).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish(&app, &ann, "slow", &org, &["space:content:read"]).await;
    publish(&app, &ann, "quick", &org, &["space:content:read"]).await;
    let held = Held::start().await;
    let quick = Receiver::start(0).await;
    tunnel(&app, &ann, "slow", &held.url).await;
    tunnel(&app, &ann, "quick", &quick.url).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "slow", &org, &docs).await;
    let start = Instant::now();
    while *held.arrived.lock().unwrap() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "nothing reached the slow endpoint"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // While the slow endpoint holds its answers, the other integration's events are delivered
    // and recorded.
    install_on(&app, &ann, "quick", &org, &docs).await;
    change_main(&app, &ann, &docs, "Guide").await;
    let delivered = all_settled(&app, &ann, "quick", "space_content_updated").await;
    assert!(
        delivered.iter().all(|e| e["status"] == "success"),
        "{delivered:?}"
    );
    assert!(
        delivered
            .iter()
            .any(|e| e["payload"]["type"] == "space_content_updated")
    );
    let slow = app.get(&ann, "/v1/integrations/slow/events").await.expect(200);
    assert!(
        slow["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["status"] == "pending"),
        "the slow endpoint has not answered yet: {slow}"
    );
    held.release.send_replace(true);
    let slow = all_settled(&app, &ann, "slow", "space_installation_setup").await;
    assert!(slow.iter().all(|e| e["status"] == "success"), "{slow:?}");
}

#[tokio::test]
async fn events_of_another_organization_reach_the_tunnel_only_with_all() {
    let app = TestApp::start_with(FAST).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Owner").await;
    let bea = app.user("bea").await;
    let theirs = app.org(&bea, "Customer").await;
    publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    let receiver = Receiver::start(0).await;
    tunnel(&app, &ann, "notifier", &receiver.url).await;
    let space = space(&app, &bea, &theirs, "Their docs").await;
    let installation = install_on(&app, &bea, "notifier", &theirs, &space).await;
    change_main(&app, &bea, &space, "Page").await;
    // Every event of theirs ends unsent, saying why; nothing reaches the tunnel.
    let start = Instant::now();
    loop {
        let list = app
            .get(&ann, "/v1/integrations/notifier/events")
            .await
            .expect(200);
        let items = list["items"].as_array().unwrap().clone();
        let content = items
            .iter()
            .find(|e| e["payload"]["type"] == "space_content_updated");
        if let Some(e) = content.filter(|e| e["status"] != "pending") {
            assert_eq!(e["status"], "failed");
            let detail = app
                .get(
                    &ann,
                    &format!("/v1/integrations/notifier/events/{}", e["id"].as_str().unwrap()),
                )
                .await
                .expect(200);
            assert!(
                detail.to_string().contains("only the owner organization"),
                "{detail}"
            );
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(receiver.deliveries().is_empty());
    // With `all`, they are forwarded.
    app.put(
        &ann,
        "/v1/integrations/notifier/dev",
        json!({"tunnelUrl": receiver.url, "all": true}),
    )
    .await
    .expect(204);
    change_main(&app, &bea, &space, "Second").await;
    let got = receiver.wait_for(1).await;
    assert_eq!(got[0].1["installationId"], installation.as_str());
    assert_eq!(got[0].1["spaceId"], space.as_str());
}

#[tokio::test]
async fn an_event_waiting_for_its_next_attempt_survives_a_restart_and_is_delivered_once() {
    let mut app = TestApp::start_with(&["--outbound-allow", "127.0.0.1", "--delivery-backoff", "1s"]).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    let receiver = Receiver::start(0).await;
    // The tunnel refuses connections at first: a port nobody listens on.
    tunnel(&app, &ann, "notifier", &closed_url()).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "notifier", &org, &docs).await;
    // The first attempts fail; then the process stops between attempts (its jobs stay in
    // the database) and another takes over with the receiver up.
    let start = Instant::now();
    loop {
        let failed: i64 = app
            .scalar(
                "SELECT count(*) FROM integration_events WHERE attempts >= 1 AND status = 'pending' AND type <> ?1",
                "x",
            )
            .await;
        if failed >= 2 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    app.kill();
    let next = app
        .beside_with(&["--outbound-allow", "127.0.0.1", "--delivery-backoff", "1s"])
        .await;
    tunnel(&next, &ann, "notifier", &receiver.url).await;
    // Once every event is recorded delivered, none is sent again: each arrived once.
    let events = all_settled(&next, &ann, "notifier", "space_installation_setup").await;
    assert!(events.iter().all(|e| e["status"] == "success"), "{events:?}");
    let mut ids: Vec<String> = receiver
        .deliveries()
        .iter()
        .map(|(_, b)| b["eventId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    let mut expected: Vec<String> = events
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    expected.sort();
    assert_eq!(ids, expected, "every event delivered exactly once");
}

#[tokio::test]
async fn events_past_their_retention_are_pruned_once_settled() {
    // The first attempt of each event is the only one this test waits for.
    let app = TestApp::start_with(&["--outbound-allow", "127.0.0.1", "--delivery-backoff", "1h"]).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    publish(&app, &ann, "stuck", &org, &["space:content:read"]).await;
    let receiver = Receiver::start(0).await;
    tunnel(&app, &ann, "notifier", &receiver.url).await;
    tunnel(&app, &ann, "stuck", &closed_url()).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "notifier", &org, &docs).await;
    install_on(&app, &ann, "stuck", &org, &docs).await;
    change_main(&app, &ann, &docs, "Guide").await;
    let delivered = all_settled(&app, &ann, "notifier", "space_content_updated").await;
    // The stuck integration's events failed once and wait an hour for their next attempt.
    let start = Instant::now();
    let stuck = loop {
        let listed = app.get(&ann, "/v1/integrations/stuck/events").await.expect(200);
        let items = listed["items"].as_array().unwrap().clone();
        if items
            .iter()
            .any(|e| e["payload"]["type"] == "space_content_updated")
            && items.iter().all(|e| e["attempts"] == 1)
        {
            break items;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{listed}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(stuck.iter().all(|e| e["status"] == "pending"));
    // What happens after the cutoff is younger than it, whatever its state.
    let cutoff = quire_store::clock::now_ms() + 1;
    while quire_store::clock::now_ms() <= cutoff {
        tokio::task::yield_now().await;
    }
    change_main(&app, &ann, &docs, "Later").await;
    let younger = "SELECT count(*) FROM events WHERE created_at >= ?1";
    let younger_before = app.scalar(younger, cutoff).await;
    assert!(younger_before > 0);

    // Everything settled before the cutoff goes; pending events and their traces stay.
    let pruned = quire_store::integrations::retention::prune(app.server(), cutoff)
        .await
        .unwrap();
    assert_eq!(pruned.events, delivered.len() as u64, "{pruned:?}");
    assert!(pruned.outbox > 0, "{pruned:?}");
    assert_eq!(app.scalar(younger, cutoff).await, younger_before);
    assert_eq!(
        app.scalar(
            "SELECT count(*) FROM events WHERE dispatched_at IS NOT NULL AND created_at < ?1",
            cutoff
        )
        .await,
        0
    );
    let listed = app
        .get(&ann, "/v1/integrations/notifier/events")
        .await
        .expect(200);
    let ids: Vec<&Value> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["id"])
        .collect();
    assert!(delivered.iter().all(|e| !ids.contains(&&e["id"])), "{listed}");
    let gone = delivered[0]["id"].as_str().unwrap();
    app.get(&ann, &format!("/v1/integrations/notifier/events/{gone}"))
        .await
        .expect(404);
    for event in &stuck {
        let id = event["id"].as_str().unwrap();
        let detail = app
            .get(&ann, &format!("/v1/integrations/stuck/events/{id}"))
            .await
            .expect(200);
        assert!(!detail["trace"]["logs"].as_array().unwrap().is_empty());
    }
    assert_eq!(
        app.scalar(
            "SELECT count(*) FROM integration_event_logs WHERE event_id NOT IN (SELECT id FROM integration_events) AND event_id <> ?1",
            ""
        )
        .await,
        0,
        "no trace outlives its event"
    );
}

#[tokio::test]
async fn installations_are_seen_and_managed_by_the_right_people() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Owner").await;
    let bea = app.user("bea").await;
    let theirs = app.org(&bea, "Customer").await;
    let reader = app.user("reader").await;
    app.add_member(&bea, &theirs, &reader, Some("read")).await;
    publish(&app, &ann, "notifier", &org, &["space:content:read"]).await;
    let space = space(&app, &bea, &theirs, "Docs").await;
    // Only an admin of the target organization installs.
    app.post(
        &reader,
        "/v1/integrations/notifier/installations",
        json!({"organization": theirs}),
    )
    .await
    .expect(403);
    let id = install_on(&app, &bea, "notifier", &theirs, &space).await;
    app.post(
        &bea,
        "/v1/integrations/notifier/installations",
        json!({"organization": theirs}),
    )
    .await
    .expect(409);
    let path = format!("/v1/integrations/notifier/installations/{id}");
    let got = app.get(&reader, &path).await.expect(200);
    assert_eq!(got["target"]["organization"], theirs.as_str());
    assert_eq!(got["spaces"], 1);
    app.patch(&reader, &path, json!({"configuration": {"channel": "x"}}))
        .await
        .expect(403);
    let updated = app
        .patch(
            &bea,
            &path,
            json!({"configuration": {"channel": "docs"}, "externalIds": ["ext-1"]}),
        )
        .await
        .expect(200);
    assert_eq!(updated["configuration"]["channel"], "docs");
    // The integration's admin lists installations and bindings, by external id too.
    let listed = app
        .get(&ann, "/v1/integrations/notifier/installations?externalId=ext-1")
        .await
        .expect(200);
    assert_eq!(listed["count"], 1);
    app.get(&bea, "/v1/integrations/notifier/installations")
        .await
        .expect(403);
    let spaces = app
        .get(&bea, &format!("{path}/spaces?extended=true"))
        .await
        .expect(200);
    assert_eq!(spaces["items"][0]["space"]["id"], space.as_str());
    let ids = app
        .get(&ann, "/v1/integrations/notifier/spaces")
        .await
        .expect(200);
    assert_eq!(ids["items"][0]["space"], space.as_str());
    // The setup change was recorded with the previous configuration.
    let events = app
        .get(&ann, "/v1/integrations/notifier/events")
        .await
        .expect(200);
    let setup = events["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["payload"]["type"] == "installation_setup" && e["payload"].get("previous").is_some())
        .expect("a setup event with previous");
    assert_eq!(setup["payload"]["previous"]["configuration"], json!({}));
    app.delete(&bea, &format!("{path}/spaces/{space}"))
        .await
        .expect(204);
    app.delete(&bea, &path).await.expect(204);
    app.get(&bea, &path).await.expect(404);
    // An outsider sees neither the private integration's installations nor its events.
    app.get(&bea, "/v1/integrations/notifier/events")
        .await
        .expect(403);
}

#[tokio::test]
async fn an_installation_token_reads_only_its_installations_spaces() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Owner").await;
    let bea = app.user("bea").await;
    let theirs = app.org(&bea, "Customer").await;
    publish(
        &app,
        &ann,
        "reader-app",
        &org,
        &["space:content:read", "space:metadata:read"],
    )
    .await;
    let enabled = space(&app, &bea, &theirs, "Enabled").await;
    let other = space(&app, &bea, &theirs, "Not enabled").await;
    let own = space(&app, &ann, &org, "Owner's own").await;
    let installation = install_on(&app, &bea, "reader-app", &theirs, &enabled).await;
    let tokens = format!("/v1/integrations/reader-app/installations/{installation}/tokens");
    // Only the integration's admins make tokens.
    app.post(&bea, &tokens, json!({})).await.expect(403);
    let token = app.post(&ann, &tokens, json!({})).await.expect(200);
    let token = token["token"].as_str().unwrap().to_string();
    let as_installation = |path: String| {
        let (app, token) = (&app, token.clone());
        async move { app.request("GET", Some(&token), &path, None).await }
    };
    let read = as_installation(format!("/v1/spaces/{enabled}")).await.expect(200);
    assert_eq!(read["id"], enabled.as_str());
    as_installation(format!("/v1/spaces/{enabled}/content"))
        .await
        .expect(200);
    as_installation(format!("/v1/spaces/{other}")).await.expect(404);
    as_installation(format!("/v1/spaces/{own}")).await.expect(404);
    // The organization's list shows it the enabled space only.
    let listed = as_installation(format!("/v1/orgs/{theirs}/spaces"))
        .await
        .expect(200);
    let ids: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![enabled.as_str()]);
    // Writing is outside its scopes.
    let write = app
        .request(
            "POST",
            Some(&token),
            &format!("/v1/spaces/{enabled}/change-requests"),
            Some(json!({"subject": "x"})),
        )
        .await;
    assert_eq!(write.status, 403, "{}", write.body);
    // Disabled on the space: the token no longer reads it.
    app.delete(
        &bea,
        &format!("/v1/integrations/reader-app/installations/{installation}/spaces/{enabled}"),
    )
    .await
    .expect(204);
    as_installation(format!("/v1/spaces/{enabled}")).await.expect(404);
    // The `all` selection: every space of the organization.
    app.patch(
        &bea,
        &format!("/v1/integrations/reader-app/installations/{installation}"),
        json!({"space_selection": "all"}),
    )
    .await
    .expect(200);
    as_installation(format!("/v1/spaces/{other}")).await.expect(200);
    as_installation(format!("/v1/spaces/{own}")).await.expect(404);
    // Uninstalled: the token is gone.
    app.delete(
        &bea,
        &format!("/v1/integrations/reader-app/installations/{installation}"),
    )
    .await
    .expect(204);
    let after = as_installation(format!("/v1/spaces/{other}")).await;
    assert!(after.status == 401 || after.status == 404, "{}", after.status);
}

#[tokio::test]
async fn an_endpoint_failing_too_long_is_disabled_until_dev_is_set_again() {
    // Every attempt fails; an endpoint failing for 1 ms is disabled at its second failure.
    let app = TestApp::start_with(&[
        "--outbound-allow",
        "127.0.0.1",
        "--delivery-backoff",
        "20ms",
        "--delivery-disable-after",
        "1ms",
    ])
    .await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish(&app, &ann, "flaky", &org, &["space:content:read"]).await;
    let receiver = Receiver::start(usize::MAX).await;
    app.put(
        &ann,
        "/v1/integrations/flaky/dev",
        json!({"tunnelUrl": receiver.url}),
    )
    .await
    .expect(204);
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "flaky", &org, &docs).await;
    change_main(&app, &ann, &docs, "One").await;
    let content = |list: &Value| -> Vec<Value> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["payload"]["type"] == "space_content_updated")
            .cloned()
            .collect()
    };
    let start = Instant::now();
    let first = loop {
        let list = app.get(&ann, "/v1/integrations/flaky/events").await.expect(200);
        if let Some(e) = content(&list).into_iter().find(|e| e["status"] != "pending") {
            break e;
        }
        assert!(start.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(first["status"], "failed");
    let detail = settled(&app, &ann, "flaky", first["id"].as_str().unwrap()).await;
    assert!(
        detail.to_string().contains("disabled until the next PUT dev"),
        "{detail}"
    );
    // Disabled: the next event is not sent at all.
    let sent = receiver.deliveries().len();
    change_main(&app, &ann, &docs, "Two").await;
    let start = Instant::now();
    loop {
        let list = app.get(&ann, "/v1/integrations/flaky/events").await.expect(200);
        let events = content(&list);
        if events.len() == 2 && events.iter().all(|e| e["status"] != "pending") {
            let detail = settled(&app, &ann, "flaky", events[0]["id"].as_str().unwrap()).await;
            assert!(
                detail.to_string().contains("the dev tunnel is disabled"),
                "{detail}"
            );
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = receiver.deliveries();
    assert!(
        after[sent..]
            .iter()
            .all(|(_, b)| b["type"] != "space_content_updated"),
        "nothing of the second change reached the disabled tunnel"
    );
    // PUT dev enables it again.
    *receiver.fail_first.lock().unwrap() = 0;
    app.put(
        &ann,
        "/v1/integrations/flaky/dev",
        json!({"tunnelUrl": receiver.url}),
    )
    .await
    .expect(204);
    let before = receiver.deliveries().len();
    change_main(&app, &ann, &docs, "Three").await;
    let got = receiver.wait_for(before + 1).await;
    let start = Instant::now();
    while !receiver.deliveries()[before..]
        .iter()
        .any(|(_, b)| b["type"] == "space_content_updated")
    {
        assert!(start.elapsed() < Duration::from_secs(20), "{got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
