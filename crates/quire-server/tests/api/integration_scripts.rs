//! Integration scripts run by quire: components rendered through `POST .../render` (and kept
//! while they ask to be cached), public endpoints answered by the script with the integration's
//! content security policy, events delivered to its handlers, and the limits: a script that
//! loops is stopped while the server serves others, and its fetches keep to the outbound
//! policy. The script is written by hand in the protocol `@gitbook/runtime` speaks (one POST of
//! a form with `event` and `environment`, path `/v1`).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::integrations::{all_settled, change_main, install_on, space};
use crate::support::{TestApp, TestUser};

const SCRIPT: &str = r#"
const handlers = {
  async ui_render(event, env) {
    if (event.componentId !== "card") return Response.json({ error: "unknown component" }, { status: 404 });
    if (event.props.loop) { for (;;) {} }
    const text = `${event.props.text} / secret ${env.secrets.API_KEY.length} chars / ${crypto.randomUUID()}`;
    return Response.json(
      { type: "element", element: { type: "block", children: [{ type: "markdown", content: text }] }, state: {}, props: event.props },
      { headers: event.props.cache ? { "Cache-Control": "max-age=60" } : {} },
    );
  },
  async fetch(event, env, form) {
    const url = new URL(event.request.url);
    if (url.pathname.endsWith("/probe")) {
      try { await fetch(url.searchParams.get("to")); return new Response("reached"); }
      catch (e) { return new Response(e.message, { status: 502 }); }
    }
    if (url.pathname.endsWith("/secret")) return new Response(env.secrets.API_KEY);
    const who = env.installation ? `installation ${env.installation.id}` : "integration";
    return new Response(`<html><body>frame ${url.pathname} for ${who}: ${form.get("fetch-body") || ""}</body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8", "x-frame": "yes" } });
  },
  async space_content_updated(event, env) {
    if (env.secrets.LOOP === "yes") { for (;;) {} }
    console.log("updated", event.spaceId, "secret", env.secrets.API_KEY ? "present" : "missing");
    const r = await fetch(`${env.apiEndpoint}/v1/spaces/${event.spaceId}`, { headers: { Authorization: `Bearer ${env.apiTokens.installation}` } });
    const space = await r.json();
    console.log("api", r.status, space.title);
    return new Response("OK");
  },
};
export default {
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname !== "/v1") return Response.json({ error: "Unsupported version" }, { status: 400 });
    const form = await request.formData();
    const event = JSON.parse(form.get("event"));
    const environment = JSON.parse(form.get("environment"));
    const handler = handlers[event.type];
    if (!handler) return Response.json({ error: `No handler for ${event.type}` }, { status: 406 });
    return handler(event, environment, form);
  },
};
"#;

async fn publish_script(app: &TestApp, user: &TestUser, name: &str, org: &str, secrets: Value) {
    app.post(
        user,
        &format!("/v1/integrations/{name}"),
        json!({
            "organization": org,
            "runtime": "v2",
            "title": "Cards",
            "description": "Renders cards.",
            "script": SCRIPT,
            "scopes": ["space:content:read", "space:metadata:read"],
            "blocks": [{"id": "card", "title": "A card"}],
            "secrets": secrets,
            "contentSecurityPolicy": {"script-src": "'self' https://cdn.example.com", "frame-ancestors": "*"},
        }),
    )
    .await
    .expect(200);
}

fn render_body(space: &str, props: Value) -> Value {
    json!({
        "componentId": "card",
        "props": props,
        "context": {"type": "document", "spaceId": space, "editable": false, "theme": "light"},
    })
}

fn rendered_text(body: &Value) -> String {
    body["element"]["children"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn components_render_through_the_script_and_cached_ones_are_kept() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let bob = app.user("bob").await;
    let org = app.org(&ann, "Acme").await;
    publish_script(&app, &ann, "cards", &org, json!({"API_KEY": "k-123456"})).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    let other = space(&app, &ann, &org, "Other").await;
    let installation = install_on(&app, &ann, "cards", &org, &docs).await;

    let path = "/v1/integrations/cards/render";
    let first = app
        .post(&ann, path, render_body(&docs, json!({"text": "Hello"})))
        .await
        .expect(200);
    assert_eq!(first["type"], "element");
    assert_eq!(first["props"], json!({"text": "Hello"}));
    assert!(
        rendered_text(&first).starts_with("Hello / secret 8 chars / "),
        "{first}"
    );
    let again = app
        .post(&ann, path, render_body(&docs, json!({"text": "Hello"})))
        .await
        .expect(200);
    assert_ne!(
        rendered_text(&first),
        rendered_text(&again),
        "not cached: rendered again"
    );

    let cached = app
        .post(
            &ann,
            path,
            render_body(&docs, json!({"text": "Hi", "cache": true})),
        )
        .await;
    assert_eq!(cached.headers["cache-control"], "max-age=60");
    let cached = cached.expect(200);
    let kept = app
        .post(
            &ann,
            path,
            render_body(&docs, json!({"text": "Hi", "cache": true})),
        )
        .await;
    assert_eq!(kept.headers["cache-control"], "max-age=60");
    assert_eq!(kept.expect(200), cached, "answered from the cache");
    // The caller's access is checked again on every render, a kept one too: once the
    // integration is no longer enabled on the space, the kept render is not answered.
    app.delete(
        &ann,
        &format!("/v1/integrations/cards/installations/{installation}/spaces/{docs}"),
    )
    .await
    .expect(204);
    app.post(
        &ann,
        path,
        render_body(&docs, json!({"text": "Hi", "cache": true})),
    )
    .await
    .expect(404);
    app.post(
        &ann,
        &format!("/v1/integrations/cards/installations/{installation}/spaces"),
        json!({"space": docs}),
    )
    .await
    .expect(201);

    // An unknown component, a space it is not enabled on, a caller who cannot see the space.
    let mut unknown = render_body(&docs, json!({}));
    unknown["componentId"] = json!("nope");
    app.post(&ann, path, unknown).await.expect(404);
    app.post(&ann, path, render_body(&other, json!({"text": "x"})))
        .await
        .expect(404);
    app.post(&bob, path, render_body(&docs, json!({"text": "x"})))
        .await
        .expect(404);
    app.post(
        &ann,
        "/v1/integrations/nothing/render",
        render_body(&docs, json!({})),
    )
    .await
    .expect(404);
    // Malformed requests change nothing and say why.
    let bad = app
        .post(
            &ann,
            path,
            json!({"componentId": "card", "props": [], "context": {"spaceId": docs}}),
        )
        .await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
    let bad = app
        .post(
            &ann,
            path,
            json!({"componentId": "card", "props": {}, "context": {}}),
        )
        .await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
}

#[tokio::test]
async fn public_endpoints_answer_as_the_script_does_with_the_integrations_csp() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish_script(&app, &ann, "cards", &org, json!({"API_KEY": "k-123456"})).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    let installation = install_on(&app, &ann, "cards", &org, &docs).await;
    let integration = app.get(&ann, "/v1/integrations/cards").await.expect(200);
    let endpoint = integration["urls"]["publicEndpoint"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        endpoint,
        format!("{}/v1/integrations/cards/integration", app.base)
    );
    assert_eq!(integration["urls"]["publicContentEndpoint"], endpoint.as_str());

    // No token needed: the endpoint is public, and the script answers it.
    let client = reqwest::Client::new();
    let page = client.get(format!("{endpoint}/frame?x=1")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(page.headers()["x-frame"], "yes");
    let policies: Vec<&str> = page
        .headers()
        .get_all("content-security-policy")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert_eq!(
        policies[0],
        "script-src 'self' https://cdn.example.com; frame-ancestors *"
    );
    assert!(
        policies[1].starts_with("sandbox allow-scripts") && !policies[1].contains("allow-same-origin"),
        "{policies:?}"
    );
    let text = page.text().await.unwrap();
    assert!(
        text.contains("frame /v1/integrations/cards/integration/frame for integration"),
        "{text}"
    );

    // The installation's endpoint gives the script its installation; a POST its body.
    let listed = app
        .get(
            &ann,
            &format!("/v1/integrations/cards/installations/{installation}"),
        )
        .await
        .expect(200);
    let own = listed["urls"]["publicEndpoint"].as_str().unwrap().to_string();
    let posted = client
        .post(format!("{own}/hook"))
        .body("ping=1")
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 200);
    let text = posted.text().await.unwrap();
    assert!(
        text.contains(&format!("for installation {installation}: ping=1")),
        "{text}"
    );

    // Secrets reach the script, never an answer of the API.
    let secret = client.get(format!("{endpoint}/secret")).send().await.unwrap();
    assert_eq!(secret.text().await.unwrap(), "k-123456");
    assert!(!integration.to_string().contains("k-123456"));
    assert!(!listed.to_string().contains("k-123456"));

    // An installation of another integration, or none, is not found.
    let missing = client
        .get(format!(
            "{}/v1/integrations/cards/installations/nope/endpoint",
            app.base
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    let missing = client
        .get(format!("{}/v1/integrations/nothing/integration", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_merge_reaches_the_scripts_event_handler_which_calls_the_api_back() {
    // No `--outbound-allow`: quire's own origin (a loopback address here) is the API the script
    // is given, and it may call it.
    let app = TestApp::start_with(&["--delivery-backoff", "50ms"]).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish_script(&app, &ann, "cards", &org, json!({"API_KEY": "k-123456"})).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "cards", &org, &docs).await;
    change_main(&app, &ann, &docs, "Guide").await;
    let events = all_settled(&app, &ann, "cards", "space_content_updated").await;
    let updated = events
        .iter()
        .find(|e| e["payload"]["type"] == "space_content_updated")
        .unwrap();
    assert_eq!(updated["status"], "success", "{updated}");
    let id = updated["id"].as_str().unwrap();
    let detail = app
        .get(&ann, &format!("/v1/integrations/cards/events/{id}"))
        .await
        .expect(200);
    let lines: Vec<&str> = detail["trace"]["logs"]
        .as_array()
        .unwrap_or_else(|| panic!("{detail}"))
        .iter()
        .filter_map(|l| l["message"].as_str())
        .collect();
    assert!(
        lines.contains(&format!("console: updated {docs} secret present").as_str()),
        "{lines:?}"
    );
    assert!(lines.contains(&"console: api 200 Docs"), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("attempt 1: the script answered 200")),
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_script_that_loops_is_stopped_while_the_server_answers_others() {
    let app = TestApp::start_with(&["--script-cpu", "300ms", "--delivery-attempts", "1"]).await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish_script(&app, &ann, "cards", &org, json!({"API_KEY": "k", "LOOP": "yes"})).await;
    let docs = space(&app, &ann, &org, "Docs").await;
    install_on(&app, &ann, "cards", &org, &docs).await;

    let looping = {
        let (base, token, body) = (
            app.base.clone(),
            ann.token.clone(),
            render_body(&docs, json!({"loop": true})),
        );
        tokio::spawn(async move {
            let started = Instant::now();
            let r = reqwest::Client::new()
                .post(format!("{base}/v1/integrations/cards/render"))
                .bearer_auth(token)
                .json(&body)
                .send()
                .await
                .unwrap();
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap(),
                started.elapsed(),
            )
        })
    };
    // Others are served while it loops.
    let mut served = 0;
    while !looping.is_finished() {
        app.get(&ann, "/v1/user").await.expect(200);
        served += 1;
    }
    let (status, body, took) = looping.await.unwrap();
    assert_eq!(status, 502, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("CPU limit of 300 ms"),
        "{body}"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(served > 0);

    // The same limit in an event handler ends in the trace.
    change_main(&app, &ann, &docs, "Guide").await;
    let events = all_settled(&app, &ann, "cards", "space_content_updated").await;
    let updated = events
        .iter()
        .find(|e| e["payload"]["type"] == "space_content_updated")
        .unwrap();
    assert_eq!(updated["status"], "failed");
    let id = updated["id"].as_str().unwrap();
    let detail = app
        .get(&ann, &format!("/v1/integrations/cards/events/{id}"))
        .await
        .expect(200);
    assert!(
        detail
            .to_string()
            .contains("stopped: the script ran longer than its CPU limit of 300 ms"),
        "{detail}"
    );
}

#[tokio::test]
async fn a_scripts_fetches_keep_to_the_outbound_policy() {
    let app = TestApp::start().await;
    let ann = app.user("ann").await;
    let org = app.org(&ann, "Acme").await;
    publish_script(&app, &ann, "cards", &org, json!({"API_KEY": "k"})).await;
    let client = reqwest::Client::new();
    for to in [
        "http://127.0.0.1/",
        "http://localhost:1/",
        "http://[::1]/",
        "http://169.254.169.254/latest",
    ] {
        let r = client
            .get(format!(
                "{}/v1/integrations/cards/integration/probe?to={}",
                app.base,
                url::form_urlencoded::byte_serialize(to.as_bytes()).collect::<String>()
            ))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 502, "{to}");
        let said = r.text().await.unwrap();
        assert!(said.contains("private or reserved address"), "{to}: {said}");
    }
}
