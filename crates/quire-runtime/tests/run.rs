//! Scripts in the shape GitBook's CLI builds (an ES module whose default export has
//! `fetch(request, env, ctx)`, called with a form holding `event` and `environment`), run
//! against a host that records their fetches.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use quire_runtime::{Answer, Call, Failure, Host, Limits, OutRequest, OutResponse, Outcome, run};

#[derive(Default)]
struct Recorder {
    requests: Mutex<Vec<OutRequest>>,
}

impl Host for Recorder {
    fn fetch(&self, request: OutRequest) -> Result<OutResponse, String> {
        let url = request.url.clone();
        let body = request.body.clone();
        self.requests.lock().map_err(|e| e.to_string())?.push(request);
        if url.starts_with("http://127.0.0.1") {
            return Err(format!(
                "{url}: refused by the outbound policy (a loopback address)"
            ));
        }
        Ok(OutResponse {
            status: 200,
            headers: vec![("content-type".into(), "application/json".into())],
            body: format!(
                "{{\"echo\":{}}}",
                serde_json::Value::String(String::from_utf8_lossy(&body).into())
            )
            .into_bytes(),
            url,
        })
    }
}

fn call(event: serde_json::Value) -> Call {
    Call {
        url: "https://quire.test/v1".into(),
        headers: vec![],
        fields: vec![
            ("event".into(), event.to_string()),
            (
                "environment".into(),
                serde_json::json!({"secrets": {"token": "s3cret"}, "integration": {"name": "demo"}})
                    .to_string(),
            ),
        ],
        fetch_body: None,
    }
}

fn run_with(script: &str, event: serde_json::Value, limits: &Limits) -> (Outcome, Arc<Recorder>) {
    let host = Arc::new(Recorder::default());
    let outcome = run(script, &call(event), host.clone(), limits);
    (outcome, host)
}

fn answer(outcome: &Outcome) -> &Answer {
    match &outcome.answer {
        Ok(a) => a,
        Err(e) => panic!("no answer: {e}; logs {:?}", outcome.logs),
    }
}

fn body_json(a: &Answer) -> serde_json::Value {
    serde_json::from_slice(&a.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&a.body)))
}

/// The dispatch `@gitbook/runtime` does, by hand: version check, form, event type.
const DISPATCH: &str = r#"
const handlers = {};
export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname !== "/v1") return new Response(JSON.stringify({ error: `Unsupported version ${url.pathname}` }), { status: 400 });
    const form = await request.formData();
    const event = JSON.parse(form.get("event"));
    const environment = JSON.parse(form.get("environment"));
    const handler = handlers[event.type];
    if (!handler) return new Response(JSON.stringify({ error: `No handler for ${event.type}` }), { status: 406 });
    return handler(event, environment, form, ctx);
  },
};
"#;

fn script(handlers: &str) -> String {
    format!("{DISPATCH}\n{handlers}")
}

#[test]
fn a_render_answers_its_element_and_cache_header() {
    let s = script(
        r#"handlers.ui_render = async (event) => Response.json(
            { type: "element", element: { type: "block", children: [{ type: "text", children: [event.props.text] }] }, state: {}, props: event.props },
            { headers: { "Cache-Control": "max-age=86400" } });"#,
    );
    let (outcome, _) = run_with(
        &s,
        serde_json::json!({"type": "ui_render", "componentId": "c", "props": {"text": "hé 漢字"}}),
        &Limits::default(),
    );
    let a = answer(&outcome);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("cache-control"), Some("max-age=86400"));
    assert_eq!(a.header("content-type"), Some("application/json"));
    assert_eq!(body_json(a)["element"]["children"][0]["children"][0], "hé 漢字");
}

#[test]
fn an_unhandled_event_and_a_wrong_version_answer_as_the_runtime_does() {
    let s = script("");
    let (outcome, _) = run_with(
        &s,
        serde_json::json!({"type": "space_content_updated"}),
        &Limits::default(),
    );
    assert_eq!(answer(&outcome).status, 406);
    let host = Arc::new(Recorder::default());
    let mut c = call(serde_json::json!({"type": "x"}));
    c.url = "https://quire.test/v2".into();
    let outcome = run(&s, &c, host, &Limits::default());
    assert_eq!(answer(&outcome).status, 400);
    assert_eq!(body_json(answer(&outcome))["error"], "Unsupported version /v2");
}

#[test]
fn fetches_go_to_the_host_and_a_refusal_is_a_rejected_fetch() {
    let s = script(
        r#"handlers.task = async () => {
            const ok = await fetch("https://example.com/api?q=1", { method: "POST", headers: { "X-A": "b" }, body: JSON.stringify({ n: 1 }) });
            const echoed = await ok.json();
            let refused = null;
            try { await fetch("http://127.0.0.1/"); } catch (e) { refused = `${e.name}: ${e.message}`; }
            return Response.json({ status: ok.status, echoed, refused });
        };"#,
    );
    let (outcome, host) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    let body = body_json(answer(&outcome));
    assert_eq!(body["status"], 200);
    assert_eq!(body["echoed"]["echo"], "{\"n\":1}");
    let refused = body["refused"].as_str().unwrap_or_default();
    assert!(
        refused.starts_with("TypeError: fetch failed") && refused.contains("outbound policy"),
        "{refused}"
    );
    let requests = host.requests.lock().map(|r| r.clone()).unwrap_or_default();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].method, "POST");
    assert!(
        requests[0].headers.contains(&("x-a".into(), "b".into())),
        "{:?}",
        requests[0].headers
    );
    assert!(
        requests[0]
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/plain"))
    );
}

#[test]
fn a_script_that_loops_is_stopped_at_its_cpu_limit() {
    let limits = Limits {
        cpu: Duration::from_millis(100),
        ..Limits::default()
    };
    for body in ["while (true) {}", "await Promise.resolve(); for (;;) {}"] {
        let s = script(&format!("handlers.task = async () => {{ {body} }};"));
        let started = Instant::now();
        let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &limits);
        assert_eq!(outcome.answer, Err(Failure::Cpu(limits.cpu)), "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{body}: {:?}",
            started.elapsed()
        );
        assert!(outcome.cpu >= limits.cpu);
    }
    // A loop at load time, before any call, too.
    let started = Instant::now();
    let (outcome, _) = run_with("while (true) {}", serde_json::json!({}), &limits);
    assert_eq!(outcome.answer, Err(Failure::Cpu(limits.cpu)));
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_script_that_grows_is_stopped_at_its_memory_limit() {
    let limits = Limits {
        memory: 16 * 1024 * 1024,
        ..Limits::default()
    };
    let s = script(
        r#"handlers.task = async () => { const a = []; for (;;) a.push("x".repeat(1024) + a.length); };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &limits);
    assert_eq!(outcome.answer, Err(Failure::Memory(limits.memory)));
}

#[test]
fn deep_recursion_is_an_error_not_a_crash() {
    let s = script(
        r#"handlers.task = async () => { const f = (n) => f(n + 1) + 1; try { f(0); } catch (e) { return new Response(e.name); } };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    assert_eq!(answer(&outcome).body, b"RangeError");
}

#[test]
fn errors_name_what_failed() {
    let (outcome, _) = run_with("export default {", serde_json::json!({}), &Limits::default());
    assert!(
        matches!(&outcome.answer, Err(Failure::Script(m)) if m.contains("SyntaxError")),
        "{:?}",
        outcome.answer
    );
    let (outcome, _) = run_with("export default {}", serde_json::json!({}), &Limits::default());
    assert!(
        matches!(&outcome.answer, Err(Failure::Script(m)) if m.contains("no fetch")),
        "{:?}",
        outcome.answer
    );
    let s = script(r#"handlers.task = async () => { throw new Error("boom"); };"#);
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    assert!(
        matches!(&outcome.answer, Err(Failure::Script(m)) if m.starts_with("Error: boom")),
        "{:?}",
        outcome.answer
    );
    let s = script(r#"handlers.task = () => new Promise(() => {});"#);
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    assert!(
        matches!(&outcome.answer, Err(Failure::Script(m)) if m.contains("never settled")),
        "{:?}",
        outcome.answer
    );
}

#[test]
fn timers_wait_and_the_wall_limit_ends_a_long_wait() {
    let s = script(
        r#"handlers.task = async () => {
            const order = [];
            const t0 = Date.now();
            setTimeout(() => order.push("b"), 20);
            setTimeout(() => order.push("a"), 5);
            const cancelled = setTimeout(() => order.push("never"), 10);
            clearTimeout(cancelled);
            await new Promise((r) => setTimeout(r, 30));
            return Response.json({ order, waited: Date.now() - t0 >= 30 });
        };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    let body = body_json(answer(&outcome));
    assert_eq!(body["order"], serde_json::json!(["a", "b"]));
    assert_eq!(body["waited"], true);
    assert!(
        outcome.cpu < Duration::from_millis(30),
        "waiting is not running: {:?}",
        outcome.cpu
    );

    let limits = Limits {
        wall: Duration::from_millis(200),
        ..Limits::default()
    };
    let s = script(r#"handlers.task = () => new Promise((r) => setTimeout(r, 60000));"#);
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &limits);
    assert_eq!(outcome.answer, Err(Failure::Wall(limits.wall)));
}

#[test]
fn console_lines_and_wait_until_are_kept() {
    let s = script(
        r#"handlers.task = async (event, environment, form, ctx) => {
            console.log("secret is", environment.secrets.token, { n: 1 });
            ctx.waitUntil(new Promise((r) => setTimeout(() => { console.warn("later"); r(); }, 1)));
            console.error(new TypeError("bad"));
            return new Response("OK");
        };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    assert_eq!(answer(&outcome).body, b"OK");
    let lines: Vec<(String, String)> = outcome
        .logs
        .iter()
        .map(|l| (l.level.clone(), l.text.clone()))
        .collect();
    assert_eq!(
        lines,
        vec![
            ("info".into(), "secret is s3cret {\"n\":1}".into()),
            ("error".into(), "TypeError: bad".into()),
            ("warn".into(), "later".into()),
        ]
    );
    let limits = Limits {
        log_lines: 2,
        ..Limits::default()
    };
    let s = script(
        r#"handlers.task = async () => { for (let i = 0; i < 5; i++) console.log(i); return new Response(""); };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &limits);
    assert_eq!(outcome.logs.len(), 2);
    assert_eq!(outcome.logs_dropped, 3);
}

#[test]
fn the_web_platform_computes_what_browsers_do() {
    let s = script(
        r#"handlers.task = async () => {
            const key = await crypto.subtle.importKey("raw", new TextEncoder().encode("key"), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
            const data = new TextEncoder().encode("The quick brown fox jumps over the lazy dog");
            const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, data));
            const hex = [...mac].map((b) => b.toString(16).padStart(2, "0")).join("");
            const verified = await crypto.subtle.verify("HMAC", key, mac, data);
            const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode("abc")));
            const random = crypto.getRandomValues(new Uint8Array(32));
            const u = new URL("/a/b?x=1&y=two+words#frag", "https://user:pw@example.com:8443/base");
            u.searchParams.append("z", "é");
            const form = new URLSearchParams({ a: "1 2", b: "&" });
            return Response.json({
                hex, verified,
                digest: [...digest].map((b) => b.toString(16).padStart(2, "0")).join(""),
                randomNonZero: random.some((b) => b !== 0),
                uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
                href: u.href, host: u.host, port: u.port, origin: u.origin, y: u.searchParams.get("y"),
                form: form.toString(),
                text: new TextDecoder().decode(new TextEncoder().encode("漢字 ✓")),
                b64: btoa("hello"), unb64: atob("aGVsbG8="),
                invalid: URL.canParse("not a url"),
            });
        };"#,
    );
    let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
    let b = body_json(answer(&outcome));
    assert_eq!(
        b["hex"],
        "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"
    );
    assert_eq!(b["verified"], true);
    assert_eq!(b["digest"], "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_eq!(b["randomNonZero"], true);
    assert_eq!(b["uuid"], true);
    assert_eq!(
        b["href"],
        "https://user:pw@example.com:8443/a/b?x=1&y=two+words&z=%C3%A9#frag"
    );
    assert_eq!(b["host"], "example.com:8443");
    assert_eq!(b["port"], "8443");
    assert_eq!(b["origin"], "https://example.com:8443");
    assert_eq!(b["y"], "two words");
    assert_eq!(b["form"], "a=1+2&b=%26");
    assert_eq!(b["text"], "漢字 ✓");
    assert_eq!(b["b64"], "aGVsbG8=");
    assert_eq!(b["unb64"], "hello");
    assert_eq!(b["invalid"], false);
}

#[test]
fn a_proxied_request_body_reaches_the_script() {
    let s = script(
        r#"handlers.fetch = async (event, environment, form) =>
            new Response(`${event.request.method} ${form.get("fetch-body")}`, { status: 201, headers: { "X-Frame": "1" } });"#,
    );
    let host = Arc::new(Recorder::default());
    let mut c = call(
        serde_json::json!({"type": "fetch", "request": {"method": "PUT", "url": "https://quire.test/x", "headers": {}}}),
    );
    c.fetch_body = Some("ünïcode body".as_bytes().to_vec());
    let outcome = run(&s, &c, host, &Limits::default());
    let a = answer(&outcome);
    assert_eq!(a.status, 201);
    assert_eq!(a.header("x-frame"), Some("1"));
    assert_eq!(String::from_utf8_lossy(&a.body), "PUT ünïcode body");
}

#[test]
fn calls_share_nothing() {
    let s = script(
        r#"globalThis.count = (globalThis.count || 0) + 1; handlers.task = async () => new Response(String(globalThis.count));"#,
    );
    for _ in 0..2 {
        let (outcome, _) = run_with(&s, serde_json::json!({"type": "task"}), &Limits::default());
        assert_eq!(answer(&outcome).body, b"1");
    }
}
