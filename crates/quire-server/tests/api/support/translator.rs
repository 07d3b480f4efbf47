//! A fake machine translator on 127.0.0.1 speaking both protocols quire knows
//! (`POST /v1/chat/completions` as OpenAI, `POST /translate` as LibreTranslate), translating by
//! a rule a test can predict: upper-casing. The chat endpoint upper-cases the whole last user
//! message and answers it as the assistant's content (so the numbering and the tags come back,
//! upper-cased); LibreTranslate's upper-cases each `q`.
//!
//! It checks the key ([`KEY`]: 401 or 403 otherwise), records what it receives, can fail the
//! next requests with 503 (`Retry-After: 0`, so quire's retries do not wait) and hold requests
//! until released, for a test that stops quire while a run waits on its translator.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::watch;

/// The key [`FakeTranslator::flags`] configures and the fake requires.
pub const KEY: &str = "test-key";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    LibreTranslate,
}

impl Protocol {
    /// The `--translator` value.
    pub fn flag(self) -> &'static str {
        match self {
            Protocol::OpenAi => "openai",
            Protocol::LibreTranslate => "libretranslate",
        }
    }
}

/// The fake server; it stops when dropped.
pub struct FakeTranslator {
    /// The base URL for `--translator-url`: `http://127.0.0.1:PORT/v1` for OpenAI,
    /// `http://127.0.0.1:PORT` for LibreTranslate.
    pub url: String,
    pub protocol: Protocol,
    state: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

struct Shared {
    texts: Mutex<Vec<String>>,
    system_prompts: Mutex<Vec<String>>,
    /// Requests received, every one counted on arrival (failed and held ones included).
    arrived: watch::Sender<usize>,
    failing: AtomicUsize,
    held: watch::Sender<bool>,
}

impl FakeTranslator {
    pub async fn start(protocol: Protocol) -> FakeTranslator {
        let state = Arc::new(Shared {
            texts: Mutex::default(),
            system_prompts: Mutex::default(),
            arrived: watch::Sender::new(0),
            failing: AtomicUsize::new(0),
            held: watch::Sender::new(false),
        });
        let router = axum::Router::new()
            .route("/v1/chat/completions", axum::routing::post(chat))
            .route("/translate", axum::routing::post(translate))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fake translator");
        let addr = listener.local_addr().expect("the fake translator's address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let url = match protocol {
            Protocol::OpenAi => format!("http://{addr}/v1"),
            Protocol::LibreTranslate => format!("http://{addr}"),
        };
        FakeTranslator {
            url,
            protocol,
            state,
            task,
        }
    }

    /// The `quire serve` flags that use this translator: `--translator`, `--translator-url`,
    /// `--translator-key` and `--outbound-allow 127.0.0.1` (a test passing its own
    /// `--outbound-allow` must drop this one: the flag is given once).
    pub fn flags(&self) -> Vec<String> {
        [
            "--translator",
            self.protocol.flag(),
            "--translator-url",
            &self.url,
            "--translator-key",
            KEY,
            "--outbound-allow",
            "127.0.0.1",
        ]
        .map(String::from)
        .to_vec()
    }

    /// Every text received, in the order received, on arrival (a request that was failed or
    /// is held included, so a retried text appears again); for OpenAI the lines of the user
    /// message without their `[N] ` prefix.
    pub fn texts(&self) -> Vec<String> {
        self.state.texts.lock().expect("texts").clone()
    }

    /// Requests received so far, every one counted on arrival (rejected keys, failed and held
    /// requests included).
    pub fn requests(&self) -> usize {
        *self.state.arrived.borrow()
    }

    /// Waits until at least `n` requests have arrived (one may be held, not yet answered).
    pub async fn wait_for_requests(&self, n: usize) {
        let mut arrived = self.state.arrived.subscribe();
        let _ = arrived.wait_for(|count| *count >= n).await;
    }

    /// The system messages of the chat requests received.
    pub fn system_prompts(&self) -> Vec<String> {
        self.state.system_prompts.lock().expect("prompts").clone()
    }

    /// Answers the next `n` requests (with a valid key) 503, with `Retry-After: 0`.
    pub fn fail_next(&self, n: usize) {
        self.state.failing.store(n, Ordering::SeqCst);
    }

    /// Holds every request from now on (after recording it) until [`FakeTranslator::release`].
    pub fn hold(&self) {
        self.state.held.send_replace(true);
    }

    /// Lets the held requests, and later ones, be answered.
    pub fn release(&self) {
        self.state.held.send_replace(false);
    }
}

impl Drop for FakeTranslator {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Shared {
    fn arrive(&self) {
        self.arrived.send_modify(|count| *count += 1);
    }

    /// A 503 when a failure was asked for, after waiting while requests are held.
    async fn fail_or_wait(&self) -> Option<Response> {
        let fail = self
            .failing
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if fail {
            return Some(
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [("retry-after", "0")],
                    "the fake translator fails as asked",
                )
                    .into_response(),
            );
        }
        let mut held = self.held.subscribe();
        let _ = held.wait_for(|held| !*held).await;
        None
    }
}

async fn chat(State(state): State<Arc<Shared>>, headers: HeaderMap, body: String) -> Response {
    state.arrive();
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if bearer != format!("Bearer {KEY}") {
        let error =
            json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}});
        return (StatusCode::UNAUTHORIZED, axum::Json(error)).into_response();
    }
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let content = |role: &str| {
        messages
            .iter()
            .rev()
            .find(|m| m["role"] == role)
            .and_then(|m| m["content"].as_str())
            .map(String::from)
    };
    if let Some(system) = content("system") {
        state.system_prompts.lock().expect("prompts").push(system);
    }
    let user = content("user").unwrap_or_default();
    state
        .texts
        .lock()
        .expect("texts")
        .extend(user.lines().map(|line| unnumbered(line).to_string()));
    if let Some(failure) = state.fail_or_wait().await {
        return failure;
    }
    axum::Json(json!({
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": user.to_uppercase()},
            "finish_reason": "stop",
        }],
    }))
    .into_response()
}

async fn translate(State(state): State<Arc<Shared>>, body: String) -> Response {
    state.arrive();
    let Ok(body) = serde_json::from_str::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "not JSON"}))).into_response();
    };
    if body["api_key"] != KEY {
        return (
            StatusCode::FORBIDDEN,
            axum::Json(json!({"error": "Invalid API key"})),
        )
            .into_response();
    }
    let single = body["q"].as_str().map(String::from);
    let texts: Vec<String> = match &single {
        Some(text) => vec![text.clone()],
        None => body["q"]
            .as_array()
            .map(|q| q.iter().filter_map(|t| t.as_str().map(String::from)).collect())
            .unwrap_or_default(),
    };
    state.texts.lock().expect("texts").extend(texts.iter().cloned());
    if let Some(failure) = state.fail_or_wait().await {
        return failure;
    }
    let translated: Vec<String> = texts.iter().map(|t| t.to_uppercase()).collect();
    match single {
        Some(_) => axum::Json(json!({"translatedText": translated[0]})).into_response(),
        None => axum::Json(json!({"translatedText": translated})).into_response(),
    }
}

/// A line of the user message without its `[N] ` prefix.
fn unnumbered(line: &str) -> &str {
    let Some(rest) = line.strip_prefix('[') else {
        return line;
    };
    match rest.split_once(']') {
        Some((n, text)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            text.strip_prefix(' ').unwrap_or(text)
        }
        _ => line,
    }
}
