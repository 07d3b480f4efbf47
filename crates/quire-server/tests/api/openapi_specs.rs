//! OpenAPI specifications: created from a URL served by a local test server (opened to quire
//! by `--outbound-allow`) or from a text, processed by the durable job into versions, failing
//! with GitBook's codes, read back, and public content readable with no token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A file the test server answers: its text, or no answer at all.
#[derive(Clone)]
enum Served {
    Text(String),
    Hang,
}

/// A local HTTP server of description files whose content a test changes.
#[derive(Clone)]
struct SpecServer {
    base: String,
    files: Arc<Mutex<HashMap<String, Served>>>,
}

impl SpecServer {
    async fn start() -> SpecServer {
        let files: Arc<Mutex<HashMap<String, Served>>> = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let router = axum::Router::new().fallback(serve_file).with_state(files.clone());
        tokio::spawn(async move { axum::serve(listener, router).await });
        SpecServer { base, files }
    }

    fn set(&self, path: &str, text: &str) {
        self.files
            .lock()
            .unwrap()
            .insert(path.to_string(), Served::Text(text.to_string()));
    }

    fn hang(&self, path: &str) {
        self.files.lock().unwrap().insert(path.to_string(), Served::Hang);
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }
}

async fn serve_file(
    State(files): State<Arc<Mutex<HashMap<String, Served>>>>,
    uri: axum::http::Uri,
) -> axum::response::Response {
    let served = files
        .lock()
        .unwrap()
        .get(uri.path().trim_start_matches('/'))
        .cloned();
    match served {
        Some(Served::Text(text)) => text.into_response(),
        // Never answers: the fetch must give up on its own.
        Some(Served::Hang) => std::future::pending().await,
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

const PETSTORE: &str = "openapi: 3.0.3
info:
  title: Pets
  version: '1'
tags:
  - name: pets
paths:
  /pets:
    get:
      tags: [pets]
      summary: List pets
      responses:
        '200':
          description: The pets
          content:
            application/json:
              schema:
                type: array
                items:
                  $ref: 'schemas/pet.yaml#/Pet'
";

const PET: &str = "Pet:
  type: object
  properties:
    name:
      type: string
    error:
      $ref: '../common.yaml#/Error'
";

const COMMON: &str = "Error:
  type: object
  properties:
    message:
      type: string
";

/// A server that may fetch from the local test server, running no jobs of its own: tests run
/// the job queue themselves (`drain`), so nothing else claims a job under them.
async fn app() -> TestApp {
    TestApp::start_with(&[
        "--outbound-allow",
        "127.0.0.1",
        "--outbound-timeout",
        "1s",
        "--no-jobs",
    ])
    .await
}

/// Runs due jobs until none is left.
async fn drain(app: &TestApp) {
    while quire_store::worker::run_one(app.server()).await.unwrap() {}
}

/// The specification once its processing has run.
async fn processed(app: &TestApp, user: &TestUser, org: &str, slug: &str) -> Value {
    drain(app).await;
    let spec = app
        .get(user, &format!("/v1/orgs/{org}/openapi/{slug}"))
        .await
        .expect(200);
    assert_eq!(spec["processingState"], "complete", "{spec}");
    spec
}

async fn setup(app: &TestApp) -> (TestUser, String) {
    let admin = app.user("ada").await;
    let org = app.org(&admin, "APIs").await;
    (admin, org)
}

#[tokio::test]
async fn specs_are_processed_into_versions_only_when_their_text_changes() {
    let app = app().await;
    let files = SpecServer::start().await;
    files.set("api/openapi.yaml", PETSTORE);
    files.set("api/schemas/pet.yaml", PET);
    files.set("api/common.yaml", COMMON);
    let (admin, org) = setup(&app).await;
    let url = files.url("api/openapi.yaml");

    let created = app
        .request_with(
            "POST",
            Some(&admin.token),
            &format!("/v1/orgs/{org}/openapi"),
            Some(json!({"slug": "pets", "source": {"url": url}})),
            &[],
        )
        .await;
    assert_eq!(
        created.headers["location"].to_str().unwrap(),
        format!("{}/v1/orgs/{org}/openapi/pets", app.base)
    );
    let spec = created.expect(201);
    assert_eq!(spec["object"], "openapi-spec");
    assert_eq!(spec["processingState"], "pending");
    assert_eq!(spec["sourceURL"], url);
    assert_eq!(spec["visibility"], "private");
    assert_eq!(spec["permissions"], json!({"view": true, "edit": true}));
    assert!(spec.get("lastVersion").is_none());
    app.get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions/latest"))
        .await
        .expect_error(404);

    let spec = processed(&app, &admin, &org, "pets").await;
    assert!(spec.get("lastProcessErrorCode").is_none(), "{spec}");
    assert_eq!(spec["lastProcessedErrors"], json!([]));
    let first = spec["lastVersion"].as_str().unwrap().to_string();

    // The entry file and both files reached through relative `$ref`s, each from its own dir.
    let content = app
        .get(
            &admin,
            &format!("/v1/orgs/{org}/openapi/pets/versions/latest/content"),
        )
        .await
        .expect(200);
    let fs = content["filesystem"].as_array().unwrap();
    let names: Vec<&str> = fs.iter().map(|f| f["filename"].as_str().unwrap()).collect();
    assert_eq!(names, ["openapi.yaml", "schemas/pet.yaml", "common.yaml"]);
    assert_eq!(fs[0]["isEntrypoint"], true);
    assert_eq!(fs[0]["references"], json!(["schemas/pet.yaml"]));
    assert_eq!(fs[1]["dir"], "schemas");
    assert_eq!(fs[1]["references"], json!(["common.yaml"]));
    assert_eq!(fs[2]["specification"]["Error"]["type"], "object");
    assert_eq!(fs[0]["specification"]["info"]["title"], "Pets");
    assert_eq!(content["urls"]["source"], url);
    assert_eq!(content["urls"]["public"], Value::Null);
    let raw = app
        .get(
            &admin,
            &format!("/v1/orgs/{org}/openapi/pets/versions/latest/content/raw"),
        )
        .await
        .expect(200);
    assert_eq!(raw, json!({"text": PETSTORE, "format": "yaml"}));

    // The same text again: processed, no new version.
    app.put(
        &admin,
        &format!("/v1/orgs/{org}/openapi/pets"),
        json!({"source": {"url": url}}),
    )
    .await
    .expect(200);
    let spec = processed(&app, &admin, &org, "pets").await;
    assert_eq!(spec["lastVersion"], first.as_str());
    let versions = app
        .get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions"))
        .await
        .expect(200);
    assert_eq!(versions["count"], 1);

    // A referenced file changes: a new version, the newest first in the list.
    files.set("api/common.yaml", &COMMON.replace("message", "detail"));
    app.put(
        &admin,
        &format!("/v1/orgs/{org}/openapi/pets"),
        json!({"source": {"url": url}}),
    )
    .await
    .expect(200);
    let spec = processed(&app, &admin, &org, "pets").await;
    let second = spec["lastVersion"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    let versions = app
        .get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions"))
        .await
        .expect(200);
    let ids: Vec<&str> = versions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [second.as_str(), first.as_str()]);
    let v = app
        .get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions/{first}"))
        .await
        .expect(200);
    assert_eq!(v["object"], "openapi-spec-version");
    assert_eq!(v["url"], url);
    assert_eq!(
        v["urls"]["location"],
        format!("{}/v1/orgs/{org}/openapi/pets/versions/{first}", app.base)
    );
    let old = app
        .get(
            &admin,
            &format!("/v1/orgs/{org}/openapi/pets/versions/{first}/content"),
        )
        .await
        .expect(200);
    assert_eq!(
        old["filesystem"][2]["specification"]["Error"]["properties"]["message"]["type"],
        "string"
    );
    app.get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions/nope"))
        .await
        .expect_error(404);

    // A failure keeps the version that was good.
    files.set("api/openapi.yaml", "openapi: 3.0.3\npaths: [unclosed\n");
    app.put(
        &admin,
        &format!("/v1/orgs/{org}/openapi/pets"),
        json!({"source": {"url": url}}),
    )
    .await
    .expect(200);
    let spec = processed(&app, &admin, &org, "pets").await;
    assert_eq!(spec["lastProcessErrorCode"], "PARSE_ERROR");
    assert_eq!(spec["lastVersion"], second.as_str());

    app.delete(&admin, &format!("/v1/orgs/{org}/openapi/pets"))
        .await
        .expect(204);
    app.get(&admin, &format!("/v1/orgs/{org}/openapi/pets"))
        .await
        .expect_error(404);
    app.delete(&admin, &format!("/v1/orgs/{org}/openapi/pets"))
        .await
        .expect(204);
    // Its job went with it.
    let n = app
        .scalar("SELECT count(*) FROM jobs WHERE kind = ?1", "openapi_process")
        .await;
    assert_eq!(n, 0);
}

#[tokio::test]
async fn broken_slow_and_missing_files_fail_with_gitbooks_codes_and_where() {
    let app = app().await;
    let files = SpecServer::start().await;
    let (admin, org) = setup(&app).await;
    let create = |slug: &'static str, url: String| {
        let app = &app;
        let admin = &admin;
        let org = org.clone();
        async move {
            app.post(
                admin,
                &format!("/v1/orgs/{org}/openapi"),
                json!({"slug": slug, "source": {"url": url}}),
            )
            .await
            .expect(201);
            processed(app, admin, &org, slug).await
        }
    };

    files.set(
        "syntax.json",
        "{\"openapi\": \"3.0.3\", \"paths\": {\"/a\": {\"get\": [1, }}}",
    );
    let spec = create("syntax", files.url("syntax.json")).await;
    assert_eq!(spec["lastProcessErrorCode"], "PARSE_ERROR");
    let error = &spec["lastProcessedErrors"][0];
    assert_eq!(error["code"], "SYNTAX");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("(at /paths/~1a/get/1)"),
        "{error}"
    );
    assert_eq!(spec["lastProcessedErrorCount"], 1);
    assert!(spec.get("lastVersion").is_none());

    files.set(
        "invalid.yaml",
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    get:\n      responses:\n        '200': {description: 7}\n",
    );
    let spec = create("invalid", files.url("invalid.yaml")).await;
    assert_eq!(spec["lastProcessErrorCode"], "PARSE_ERROR");
    let error = &spec["lastProcessedErrors"][0];
    assert_eq!(error["code"], "INVALID_SPEC");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("(at /paths/~1pets/get/responses"),
        "{error}"
    );

    files.set(
        "dangling.yaml",
        &PETSTORE.replace("schemas/pet.yaml", "missing.yaml"),
    );
    let spec = create("dangling", files.url("dangling.yaml")).await;
    assert_eq!(spec["lastProcessErrorCode"], "FETCH_ERROR");
    let message = spec["lastProcessedErrors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("missing.yaml") && message.contains("404"),
        "{message}"
    );

    files.hang("slow.yaml");
    let spec = create("slow", files.url("slow.yaml")).await;
    assert_eq!(spec["lastProcessErrorCode"], "FETCH_TIMEOUT");

    let spec = create("gone", files.url("absent.yaml")).await;
    assert_eq!(spec["lastProcessErrorCode"], "FETCH_ERROR");
    assert_eq!(spec["lastProcessedErrors"][0]["code"], "FETCH_FAILED");

    files.set(
        "big.json",
        &format!("{{\"x\": \"{}\"}}", "a".repeat(quire_store::openapi::TEXT_MAX)),
    );
    let spec = create("big", files.url("big.json")).await;
    assert_eq!(spec["lastProcessErrorCode"], "FETCH_ERROR");
    assert_eq!(spec["lastProcessedErrors"][0]["code"], "TOO_LARGE");
}

/// Without `--outbound-allow`, every spelling of a private or reserved address is refused after
/// it is parsed and resolved, and the specification says so.
#[tokio::test]
async fn private_and_reserved_addresses_are_refused_in_every_spelling() {
    let app = TestApp::start_with(&["--no-jobs"]).await;
    let files = SpecServer::start().await;
    files.set("openapi.yaml", PETSTORE);
    let port = files.base.rsplit(':').next().unwrap().to_string();
    let (admin, org) = setup(&app).await;
    for (i, host) in [
        "127.0.0.1",
        "2130706433",
        "0x7f000001",
        "0177.0.0.1",
        "127.1",
        "[::ffff:127.0.0.1]",
        "[::1]",
        "localhost",
        "0.0.0.0",
        "169.254.169.254",
        "10.0.0.1",
        "[fe80::1]",
    ]
    .into_iter()
    .enumerate()
    {
        let slug = format!("s{i}");
        let url = format!("http://{host}:{port}/openapi.yaml");
        app.post(
            &admin,
            &format!("/v1/orgs/{org}/openapi"),
            json!({"slug": slug, "source": {"url": url}}),
        )
        .await
        .expect(201);
        let spec = processed(&app, &admin, &org, &slug).await;
        assert_eq!(spec["lastProcessErrorCode"], "FETCH_ERROR", "{host}: {spec}");
        let error = &spec["lastProcessedErrors"][0];
        assert_eq!(error["code"], "REFUSED", "{host}: {error}");
        assert!(spec.get("lastVersion").is_none(), "{host}");
    }
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_stored() {
    let app = app().await;
    let (admin, org) = setup(&app).await;
    let specs = format!("/v1/orgs/{org}/openapi");
    for body in [
        json!({"slug": "Pets", "source": {"url": "https://example.com/a.yaml"}}),
        json!({"slug": "pets--v2", "source": {"url": "https://example.com/a.yaml"}}),
        json!({"slug": "-pets", "source": {"url": "https://example.com/a.yaml"}}),
        json!({"slug": "a".repeat(101), "source": {"url": "https://example.com/a.yaml"}}),
        json!({"slug": "pets", "source": {"url": format!("https://example.com/{}", "a".repeat(2048))}}),
        json!({"slug": "pets", "source": {"url": "ftp://example.com/a.yaml"}}),
        json!({"slug": "pets", "source": {"url": "not a url"}}),
        json!({"slug": "pets", "source": {"url": "https://example.com/a", "text": "openapi: 3.0.0"}}),
        json!({"slug": "pets", "source": {}}),
        json!({"slug": "pets", "source": {"text": "  "}}),
        json!({"slug": "pets"}),
        json!({"slug": "pets", "source": {"url": "https://example.com/a"}, "extra": 1}),
    ] {
        app.post(&admin, &specs, body.clone()).await.expect_error(400);
    }
    assert_eq!(app.get(&admin, &specs).await.expect(200)["count"], 0);
    assert_eq!(
        app.scalar("SELECT count(*) FROM jobs WHERE kind = ?1", "openapi_process")
            .await,
        0
    );

    app.post(
        &admin,
        &specs,
        json!({"slug": "pets", "source": {"text": PETSTORE}}),
    )
    .await
    .expect(201);
    let taken = app
        .post(
            &admin,
            &specs,
            json!({"slug": "pets", "source": {"text": PETSTORE}}),
        )
        .await
        .expect_error(400);
    assert!(taken.contains("exists"), "{taken}");
    app.patch(
        &admin,
        &format!("{specs}/pets"),
        json!({"visibility": "everyone"}),
    )
    .await
    .expect_error(400);
    app.patch(
        &admin,
        &format!("{specs}/absent"),
        json!({"visibility": "public"}),
    )
    .await
    .expect_error(404);
    app.put(
        &admin,
        &format!("{specs}/Bad_Slug"),
        json!({"source": {"text": PETSTORE}}),
    )
    .await
    .expect_error(400);
}

#[tokio::test]
async fn text_specs_and_public_content_with_no_token() {
    let app = app().await;
    let (admin, org) = setup(&app).await;
    let reader = app.user("rex").await;
    app.add_member(&admin, &org, &reader, Some("read")).await;
    let outsider = app.user("otto").await;
    let text = serde_json::to_string_pretty(&json!({
        "openapi": "3.1.0",
        "info": {"title": "Text", "version": "1"},
        "paths": {"/ping": {"get": {"responses": {"200": {"description": "pong"}}}}}
    }))
    .unwrap();
    // PUT creates what is absent.
    let created = app
        .put(
            &admin,
            &format!("/v1/orgs/{org}/openapi/text"),
            json!({"source": {"text": text}}),
        )
        .await
        .expect(201);
    assert!(created.get("sourceURL").is_none());
    let spec = processed(&app, &admin, &org, "text").await;
    let version = spec["lastVersion"].as_str().unwrap();
    let latest = format!("/v1/orgs/{org}/openapi/text/versions/latest");
    let raw = app
        .get(&admin, &format!("{latest}/content/raw"))
        .await
        .expect(200);
    assert_eq!(raw, json!({"text": text, "format": "json"}));
    let v = app.get(&admin, &latest).await.expect(200);
    assert_eq!(v["id"], version);
    assert_eq!(
        v["url"],
        format!(
            "{}/v1/orgs/{org}/openapi/text/versions/{version}/content",
            app.base
        )
    );

    // A reader sees it and may not change it; an outsider and no token see nothing.
    let seen = app
        .get(&reader, &format!("/v1/orgs/{org}/openapi/text"))
        .await
        .expect(200);
    assert_eq!(seen["permissions"], json!({"view": true, "edit": false}));
    let refused = app
        .patch(
            &reader,
            &format!("/v1/orgs/{org}/openapi/text"),
            json!({"visibility": "public"}),
        )
        .await
        .expect_error(403);
    crate::support::assert_role_refusal(&refused, "read");
    app.put(
        &reader,
        &format!("/v1/orgs/{org}/openapi/text"),
        json!({"source": {"text": text}}),
    )
    .await
    .expect_error(403);
    app.get(&outsider, &format!("/v1/orgs/{org}/openapi/text"))
        .await
        .expect_error(404);
    app.get(&outsider, &format!("{latest}/content"))
        .await
        .expect_error(404);
    app.request("GET", None, &format!("{latest}/content"), None)
        .await
        .expect_error(404);
    app.request("GET", Some("gb_api_bogus"), &format!("{latest}/content"), None)
        .await
        .expect_error(401);

    // Public: the latest content for anyone, with or without a token; nothing else.
    let public = app
        .patch(
            &admin,
            &format!("/v1/orgs/{org}/openapi/text"),
            json!({"visibility": "public"}),
        )
        .await
        .expect(200);
    assert_eq!(public["visibility"], "public");
    assert_eq!(
        public["urls"]["published"],
        format!("{}{latest}/content", app.base)
    );
    let open = app
        .request("GET", None, &format!("{latest}/content"), None)
        .await
        .expect(200);
    assert_eq!(open["filesystem"][0]["specification"]["info"]["title"], "Text");
    assert_eq!(
        open["urls"]["public"],
        format!("{}{latest}/content/raw", app.base)
    );
    app.get(&outsider, &format!("{latest}/content/raw"))
        .await
        .expect(200);
    app.get(&outsider, &latest).await.expect_error(404);
    app.get(
        &outsider,
        &format!("/v1/orgs/{org}/openapi/text/versions/{version}/content"),
    )
    .await
    .expect_error(404);
}

/// A process that claimed the job and died leaves it leased; once the lease has run out another
/// process takes it and stores the version; the first, should it come back and finish, stores
/// nothing more.
#[tokio::test]
async fn a_run_that_died_mid_processing_is_taken_again_and_stores_one_version() {
    let app = app().await;
    let files = SpecServer::start().await;
    files.set("openapi.yaml", PETSTORE);
    files.set("schemas/pet.yaml", PET);
    files.set("common.yaml", COMMON);
    let (admin, org) = setup(&app).await;
    app.post(
        &admin,
        &format!("/v1/orgs/{org}/openapi"),
        json!({"slug": "pets", "source": {"url": files.url("openapi.yaml")}}),
    )
    .await
    .expect(201);
    let store = app.server().store.clone();
    let now = quire_store::clock::now_ms();
    let dead = store
        .db
        .write(move |c| quire_store::jobs::claim(c, now))
        .await
        .unwrap()
        .expect("the job is due");
    // Leased: no other runner takes it now.
    assert!(!quire_store::worker::run_one(&store).await.unwrap());
    let later = now + quire_store::jobs::LEASE_MS + 1;
    let retaken = store
        .db
        .write(move |c| quire_store::jobs::claim(c, later))
        .await
        .unwrap()
        .expect("the lease ran out");
    assert_eq!(retaken.id, dead.id);
    assert_eq!(retaken.attempts, 2);
    let payload = retaken.payload.clone().unwrap();
    quire_store::openapi::process::run(&store, &payload)
        .await
        .unwrap();
    quire_store::openapi::process::run(&store, &dead.payload.clone().unwrap())
        .await
        .unwrap();
    let spec = app
        .get(&admin, &format!("/v1/orgs/{org}/openapi/pets"))
        .await
        .expect(200);
    assert_eq!(spec["processingState"], "complete");
    let versions = app
        .get(&admin, &format!("/v1/orgs/{org}/openapi/pets/versions"))
        .await
        .expect(200);
    assert_eq!(versions["count"], 1);
}

/// A URL specification is fetched again on the refresh interval; an unchanged text makes no
/// version, a changed one does.
#[tokio::test]
async fn url_specs_are_refreshed_and_change_only_with_their_text() {
    let app = TestApp::start_with(&["--outbound-allow", "127.0.0.1", "--openapi-refresh", "50ms"]).await;
    let files = SpecServer::start().await;
    files.set("openapi.yaml", PETSTORE);
    files.set("schemas/pet.yaml", PET);
    files.set("common.yaml", COMMON);
    let (admin, org) = setup(&app).await;
    app.post(
        &admin,
        &format!("/v1/orgs/{org}/openapi"),
        json!({"slug": "pets", "source": {"url": files.url("openapi.yaml")}}),
    )
    .await
    .expect(201);
    let spec_path = format!("/v1/orgs/{org}/openapi/pets");
    let deadline = Instant::now() + Duration::from_secs(30);
    let first = loop {
        let spec = app.get(&admin, &spec_path).await.expect(200);
        if let Some(v) = spec["lastVersion"].as_str() {
            break (
                v.to_string(),
                spec["lastProcessedAt"].as_str().unwrap().to_string(),
            );
        }
        assert!(Instant::now() < deadline, "never processed: {spec}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Processed again with the same text: a later `lastProcessedAt`, the same version.
    loop {
        let spec = app.get(&admin, &spec_path).await.expect(200);
        if spec["lastProcessedAt"].as_str().unwrap() != first.1 {
            assert_eq!(spec["lastVersion"], first.0.as_str());
            break;
        }
        assert!(Instant::now() < deadline, "never refreshed: {spec}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    files.set("openapi.yaml", &PETSTORE.replace("List pets", "List all pets"));
    loop {
        let spec = app.get(&admin, &spec_path).await.expect(200);
        if spec["lastVersion"].as_str() != Some(first.0.as_str()) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the change never made a version: {spec}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let versions = app
        .get(&admin, &format!("{spec_path}/versions"))
        .await
        .expect(200);
    assert_eq!(versions["count"], 2);
}

const TWO_TAGS: &str = "openapi: 3.0.3
info:
  title: Shop
  version: '1'
servers:
  - url: https://shop.example.com/v1
tags:
  - name: pets
    description: Everything about pets
  - name: store
paths:
  /pets:
    get:
      tags: [pets]
      summary: List pets
      parameters:
        - name: limit
          in: query
          schema: {type: integer}
      responses:
        '200':
          description: The pets
  /orders:
    post:
      tags: [store]
      summary: Place an order
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [quantity]
              properties:
                quantity: {type: integer}
      responses:
        '201':
          description: Placed
";

fn titles(pages: &Value) -> Vec<&str> {
    pages
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect()
}

/// A computed page of a space's main becomes one page per tag of the specification's latest
/// version, in its place: in the API's content (and as its source with `computed=false`), in
/// search, on the reader; a new version writes them again, under the same ids.
#[tokio::test]
async fn computed_pages_follow_the_latest_version_in_the_api_search_and_reader() {
    let app = app().await;
    let files = SpecServer::start().await;
    files.set("shop.yaml", TWO_TAGS);
    let (admin, org) = setup(&app).await;
    let url = files.url("shop.yaml");
    app.post(
        &admin,
        &format!("/v1/orgs/{org}/openapi"),
        json!({"slug": "shop", "source": {"url": url}}),
    )
    .await
    .expect(201);
    let spec = processed(&app, &admin, &org, "shop").await;
    let first = spec["lastVersion"].as_str().unwrap().to_string();
    let source = json!({"type": "builtin:openapi", "dependencies": {"spec": {"ref": {"kind": "openapi", "spec": "shop"}}}, "props": {"models": true}});
    let built = crate::support::site::SiteBuilder::new(&app, &admin)
        .in_org(&org)
        .space(
            "Reference",
            json!([
                {"operation": "insert_page", "title": "Welcome", "document": {"markdown": "# Welcome\n\nHello.\n"}},
                {"operation": "insert_page", "type": "computed", "title": "API reference", "computed": source}
            ]),
        )
        .basename("shop")
        .build()
        .await;
    let space = &built.spaces[0];
    drain(&app).await;

    let content = app
        .get(&admin, &format!("/v1/spaces/{space}/content"))
        .await
        .expect(200);
    assert_eq!(
        titles(&content["pages"]),
        ["Welcome", "pets", "store"],
        "{content}"
    );
    let pets = &content["pages"][1];
    assert_eq!(pets["path"], "pets");
    assert_eq!(pets["type"], "document");
    assert_eq!(pets["description"], "Everything about pets");
    let pets_id = pets["id"].as_str().unwrap().to_string();
    let source_view = app
        .get(&admin, &format!("/v1/spaces/{space}/content?computed=false"))
        .await
        .expect(200);
    assert_eq!(titles(&source_view["pages"]), ["Welcome", "API reference"]);
    let computed = &source_view["pages"][1];
    assert_eq!(computed["type"], "computed");
    assert_eq!(computed["computed"], source);
    assert_eq!(computed["computedSeed"], first.as_str());
    assert!(computed.get("pages").is_none(), "{computed}");

    let markdown = app
        .get(
            &admin,
            &format!("/v1/spaces/{space}/content/page/{pets_id}?format=markdown"),
        )
        .await
        .expect(200);
    let text = markdown["markdown"].as_str().unwrap();
    assert!(text.contains("List pets"), "{text}");
    assert!(text.contains("curl"), "{text}");
    assert!(text.contains("https://shop.example.com/v1/pets"), "{text}");
    let store_page = &content["pages"][2];
    let store_id = store_page["id"].as_str().unwrap();
    let order = app
        .get(
            &admin,
            &format!("/v1/spaces/{space}/content/page/{store_id}?format=markdown"),
        )
        .await
        .expect(200);
    assert!(
        order["markdown"].as_str().unwrap().contains("quantity"),
        "{order}"
    );

    let found = app
        .get(&admin, &format!("/v1/spaces/{space}/search?query=order"))
        .await
        .expect(200);
    assert!(
        found["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["id"] == store_id),
        "{found}"
    );

    let browser = crate::reader::Browser::new(&app);
    let page = browser.get("/s/shop/pets").await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("List pets"));
    let home = browser.get("/s/shop/").await;
    assert!(
        home.body.contains("href=\"/s/shop/store\""),
        "the navigation lists the generated pages"
    );

    // Pages cannot be put into a computed page, nor generated ones changed, by a batch.
    let cr = app
        .post(&admin, &format!("/v1/spaces/{space}/change-requests"), json!({}))
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap();
    let batch = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let computed_id = computed["id"].as_str().unwrap();
    for change in [
        json!({"operation": "insert_page", "title": "Mine", "into": computed_id, "document": {}}),
        json!({"operation": "update_page", "page": pets_id, "title": "Renamed"}),
        json!({"operation": "delete_page", "page": pets_id}),
        json!({"operation": "insert_page", "type": "computed", "title": "No source"}),
        json!({"operation": "insert_page", "type": "computed", "title": "Bad", "computed": {"type": "builtin:translation"}}),
        json!({"operation": "update_page", "page": "NOPE", "computed": source}),
    ] {
        app.post(&admin, &batch, json!({"changes": [change]}))
            .await
            .expect_error(400);
    }

    // A new version: the pages are written again, with their ids.
    files.set("shop.yaml", &TWO_TAGS.replace("List pets", "List every pet"));
    app.put(
        &admin,
        &format!("/v1/orgs/{org}/openapi/shop"),
        json!({"source": {"url": url}}),
    )
    .await
    .expect(200);
    let spec = processed(&app, &admin, &org, "shop").await;
    assert_ne!(spec["lastVersion"], first.as_str());
    let markdown = app
        .get(
            &admin,
            &format!("/v1/spaces/{space}/content/page/{pets_id}?format=markdown"),
        )
        .await
        .expect(200);
    assert!(
        markdown["markdown"].as_str().unwrap().contains("List every pet"),
        "{markdown}"
    );
    assert!(browser.get("/s/shop/pets").await.body.contains("List every pet"));

    // The specification deleted: its pages go, the computed page stays.
    app.delete(&admin, &format!("/v1/orgs/{org}/openapi/shop"))
        .await
        .expect(204);
    drain(&app).await;
    let content = app
        .get(&admin, &format!("/v1/spaces/{space}/content"))
        .await
        .expect(200);
    assert_eq!(titles(&content["pages"]), ["Welcome"]);
}
