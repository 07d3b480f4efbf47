//! Cross-cutting HTTP conventions: authentication, error envelopes, paging, health, metrics.

use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn requests_without_a_valid_token_get_401_with_the_envelope() {
    let app = TestApp::start().await;
    let missing = app.request("GET", None, "/v1/orgs", None).await.expect_error(401);
    assert!(missing.contains("Authorization"));
    app.request("GET", Some("quire_neverissued"), "/v1/orgs", None)
        .await
        .expect_error(401);
    app.request("GET", Some("quire_neverissued"), "/v1/user", None)
        .await
        .expect_error(401);
    let resp = app.request("GET", None, "/v1/user", None).await;
    assert_eq!(resp.headers["content-type"], "application/json");
}

#[tokio::test]
async fn every_failure_is_a_json_error() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    app.get(&ann, "/v1/no/such/route").await.expect_error(404);
    app.request("DELETE", Some(&ann.token), "/v1/orgs", None)
        .await
        .expect_error(405);
    // Malformed JSON, wrong type, missing field, wrong content type.
    let raw = reqwest::Client::new();
    let resp = raw
        .post(format!("{}/v1/orgs", app.base))
        .bearer_auth(&ann.token)
        .header("content-type", "application/json")
        .body("{\"title\": ")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], 400);
    let resp = raw
        .post(format!("{}/v1/orgs", app.base))
        .bearer_auth(&ann.token)
        .header("content-type", "text/plain")
        .body("{\"title\": \"Acme\"}")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 415);
    let message = app
        .post(&ann, "/v1/orgs", json!({"title": 5}))
        .await
        .expect_error(400);
    assert!(message.contains("title"), "{message}");
    let message = app.post(&ann, "/v1/orgs", json!({})).await.expect_error(400);
    assert!(message.contains("title"), "{message}");
    // Nothing was created by the failed attempts.
    let list = app.get(&ann, "/v1/orgs").await.expect(200);
    assert_eq!(list["count"], 0);
}

#[tokio::test]
async fn oversized_bodies_get_413() {
    let app = TestApp::start_with(&["--max-body-bytes", "1024"]).await;
    let ann = app.user("Ann").await;
    let big = "x".repeat(4096);
    app.post(&ann, "/v1/orgs", json!({ "title": big }))
        .await
        .expect_error(413);
}

#[tokio::test]
async fn limits_and_cursors_are_validated() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    app.get(&ann, "/v1/orgs?limit=1001").await.expect_error(400);
    app.get(&ann, "/v1/orgs?limit=0").await.expect_error(400);
    app.get(&ann, "/v1/orgs?limit=ten").await.expect_error(400);
    app.get(&ann, "/v1/orgs?page=not-a-cursor")
        .await
        .expect_error(400);
    app.get(&ann, "/v1/orgs?limit=1000").await.expect(200);
}

#[tokio::test]
async fn a_list_walked_with_limit_1_returns_every_item_once() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(app.org(&ann, &format!("Org {i}")).await);
    }
    let items = app.walk(&ann, "/v1/orgs", 1).await;
    let mut seen: Vec<String> = items
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen.len(), 7);
    seen.sort();
    created.sort();
    assert_eq!(seen, created);
    let page = app.get(&ann, "/v1/orgs?limit=3").await.expect(200);
    assert_eq!(page["count"], 7);
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    let last = app.get(&ann, "/v1/orgs?limit=7").await.expect(200);
    assert!(last.get("next").is_none());
}

#[tokio::test]
async fn health_readiness_metrics_and_request_ids() {
    let app = TestApp::start().await;
    let client = reqwest::Client::new();
    let health = client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(health.headers().contains_key("x-request-id"));
    let ready = client.get(format!("{}/readyz", app.base)).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let echoed = client
        .get(format!("{}/healthz", app.base))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(echoed.headers()["x-request-id"], "abc-123");
    let metrics = client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("quire_http_requests_total{method=\"GET\",route=\"/healthz\",status=\"200\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("quire_http_request_duration_seconds_bucket"));
    // How full the caches are, each against its capacity.
    for cache in ["content_pages", "reader_answers", "lists", "spaces"] {
        let unit = if cache == "spaces" { "entries" } else { "bytes" };
        for gauge in ["items", "weight", "capacity"] {
            let line = format!("quire_cache_{gauge}{{cache=\"{cache}\",unit=\"{unit}\"}} ");
            assert!(metrics.contains(&line), "{line} in {metrics}");
        }
    }
    assert!(metrics.contains("quire_cache_capacity{cache=\"reader_answers\",unit=\"bytes\"} 33554432"));
}

#[tokio::test]
async fn users_read_themselves_and_others() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let me = app.get(&ann, "/v1/user").await.expect(200);
    assert_eq!(me["object"], "user");
    assert_eq!(me["id"], ann.id.as_str());
    assert_eq!(me["displayName"], "Ann");
    assert_eq!(me["email"], ann.email.as_str());
    assert!(
        me["urls"]["location"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/v1/users/{}", ann.id))
    );
    // A stranger's email stays private until the two share an organization.
    let other = app.get(&ann, &format!("/v1/users/{}", bob.id)).await.expect(200);
    assert_eq!(other["displayName"], "Bob");
    assert!(other.get("email").is_none());
    app.get(&ann, "/v1/users/nobody").await.expect_error(404);
}

#[tokio::test]
async fn scoped_tokens_are_limited_to_their_scopes() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let db = app.db.clone();
    let email = ann.email.clone();
    let token = tokio::task::spawn_blocking(move || {
        quire_store::admin::create_token(&db, &email, &["org:read".to_string()]).unwrap()
    })
    .await
    .unwrap();
    app.request("GET", Some(&token), "/v1/orgs", None)
        .await
        .expect(200);
    let message = app
        .request("POST", Some(&token), "/v1/orgs", Some(json!({"title": "Acme"})))
        .await
        .expect_error(403);
    assert!(message.contains("org:write"), "{message}");
    let db = app.db.clone();
    let email = ann.email.clone();
    let bad = tokio::task::spawn_blocking(move || {
        quire_store::admin::create_token(&db, &email, &["nope".to_string()])
    })
    .await
    .unwrap();
    assert!(bad.is_err());
}
