//! The machine translator translation runs send their text to (`--translator`): an
//! OpenAI-compatible chat-completions endpoint or a LibreTranslate server, reached over HTTP
//! through the outbound policy like every other request quire makes (a translator on a private
//! address needs `--outbound-allow`).
//!
//! Each request is tried up to [`ATTEMPTS`] times, waiting [`FIRST_BACKOFF`] and doubling
//! between tries (or what a `Retry-After` in seconds asks, at most [`MAX_RETRY_AFTER`]), when
//! it times out, cannot connect, or is answered 429 or 5xx; such an error, still there after
//! the last try, is transient (the run may try again later). A refusal by the outbound policy,
//! another 4xx answer, or an answer larger than [`MAX_ANSWER_BYTES`] is not tried again and is
//! not transient. An answer that does not read (a model that dropped, merged or renumbered a
//! text) is tried again like a failure, since a model may well answer the next try properly,
//! but once the tries are spent it is not transient: the same text keeps confusing the model.
//! Error messages name the endpoint's URL, never the key.

use std::time::Duration;

use quire_store::outbound::FetchErrorKind;
use quire_store::translations::translator::{Request, TranslateError, TranslateFuture, Translator};
use serde_json::{Value, json};

use crate::config::{ServeArgs, TranslatorKind, parse_http_url};
use crate::outbound::{Exchange, Outbound};

pub use quire_store::translations::translator::language_name;

/// The largest answer read from a translator: far above what a batch of
/// [`quire_store::translations::translator::MAX_BATCH_CHARS`] translates to, so only a broken
/// or hostile server reaches it.
pub const MAX_ANSWER_BYTES: usize = 8 << 20;
/// How many times one request is tried, the first included.
pub const ATTEMPTS: u32 = 4;
/// The wait before the second try; each later wait doubles (500ms, 1s, 2s).
pub const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait a `Retry-After` header gets: a run is better failed and retried later than
/// stalled by a server asking for minutes.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// The API base `--translator openai` uses without `--translator-url`.
pub const DEFAULT_OPENAI_URL: &str = "https://api.openai.com/v1";
/// How much of an error answer's body an error message quotes.
const QUOTED_CHARS: usize = 200;

/// A translator reached over HTTP.
pub struct HttpTranslator {
    kind: TranslatorKind,
    /// The base URL as configured, without a trailing slash.
    base: String,
    /// Where requests go: `{base}/chat/completions` or `{base}/translate`, as the URL parser
    /// writes it (the outbound client's errors quote it that way).
    endpoint: String,
    key: Option<String>,
    model: String,
    /// Its timeout is the per-request timeout (`--translator-timeout`).
    outbound: Outbound,
    backoff: Duration,
}

impl std::fmt::Debug for HttpTranslator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not derived: the key must not reach a log.
        f.debug_struct("HttpTranslator")
            .field("kind", &self.kind)
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("key", &self.key.as_ref().map(|_| "***"))
            .finish_non_exhaustive()
    }
}

impl HttpTranslator {
    /// The translator `--translator` and its flags configure (None when it is unset), its
    /// requests through the outbound policy of `--outbound-allow` with `--translator-timeout`
    /// each. An error says which flag is wrong.
    pub fn from_args(args: &ServeArgs) -> Result<Option<HttpTranslator>, String> {
        let Some(kind) = args.translator else {
            return Ok(None);
        };
        let outbound = Outbound::new(args.outbound_allow.clone(), args.translator_timeout);
        HttpTranslator::new(
            kind,
            args.translator_url.as_deref(),
            args.translator_key.as_deref(),
            &args.translator_model,
            outbound,
        )
        .map(Some)
    }

    /// A translator speaking `kind` at `url` (for openai, [`DEFAULT_OPENAI_URL`] when None),
    /// each request through `outbound` and limited by its timeout.
    pub fn new(
        kind: TranslatorKind,
        url: Option<&str>,
        key: Option<&str>,
        model: &str,
        outbound: Outbound,
    ) -> Result<HttpTranslator, String> {
        let base = match (kind, url.map(str::trim).filter(|u| !u.is_empty())) {
            (_, Some(url)) => parse_http_url(url).map_err(|e| format!("--translator-url: {e}"))?,
            (TranslatorKind::Openai, None) => DEFAULT_OPENAI_URL.to_string(),
            (TranslatorKind::Libretranslate, None) => {
                return Err("--translator libretranslate needs --translator-url \
                            (QUIRE_TRANSLATOR_URL): the LibreTranslate server's base URL, \
                            e.g. https://libretranslate.com"
                    .to_string());
            }
        };
        let path = match kind {
            TranslatorKind::Openai => "chat/completions",
            TranslatorKind::Libretranslate => "translate",
        };
        let endpoint = url::Url::parse(&format!("{base}/{path}"))
            .map_err(|e| format!("--translator-url: {base:?} is not a URL: {e}"))?
            .to_string();
        let key = key.map(str::trim).filter(|k| !k.is_empty()).map(String::from);
        // Checked here, since a header the client cannot send would fail every request alike.
        if key
            .as_deref()
            .is_some_and(|k| !k.bytes().all(|b| b.is_ascii_graphic() || b == b' '))
        {
            return Err("--translator-key holds characters an HTTP header cannot carry".to_string());
        }
        let model = model.trim().to_string();
        if kind == TranslatorKind::Openai && model.is_empty() {
            return Err("--translator-model must name a model".to_string());
        }
        Ok(HttpTranslator {
            kind,
            base,
            endpoint,
            key,
            model,
            outbound,
            backoff: FIRST_BACKOFF,
        })
    }

    /// Where its requests go.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    async fn translate_texts(&self, request: &Request) -> Result<Vec<String>, TranslateError> {
        // Blank texts (a cell, a line left empty) translate to themselves: not sent, so that a
        // model has nothing to invent and LibreTranslate nothing to refuse.
        let sent: Vec<usize> = (0..request.texts.len())
            .filter(|&i| !request.texts[i].trim().is_empty())
            .collect();
        let mut out = request.texts.clone();
        if sent.is_empty() {
            return Ok(out);
        }
        let texts: Vec<&str> = sent.iter().map(|&i| request.texts[i].as_str()).collect();
        let translated = match self.kind {
            TranslatorKind::Openai => self.openai(request, &texts).await?,
            TranslatorKind::Libretranslate => self.libretranslate(request, &texts).await?,
        };
        for (i, text) in sent.into_iter().zip(translated) {
            out[i] = text;
        }
        Ok(out)
    }

    async fn openai(&self, request: &Request, texts: &[&str]) -> Result<Vec<String>, TranslateError> {
        let body = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system_prompt(request)},
                {"role": "user", "content": numbered(texts)},
            ],
        });
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = &self.key {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        let count = texts.len();
        self.send(headers, body.to_string(), |answer| {
            let content = answer
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .ok_or("it has no choices[0].message.content")?;
            parse_numbered(content, count)
        })
        .await
        .map_err(|f| f.error)
    }

    /// LibreTranslate takes neither instructions nor a glossary: the request's are not sent,
    /// and the run translates without them.
    async fn libretranslate(&self, request: &Request, texts: &[&str]) -> Result<Vec<String>, TranslateError> {
        let source = libretranslate_codes(&request.source);
        let target = libretranslate_codes(&request.target);
        let count = texts.len();
        let parse = |answer: &Value| match answer.get("translatedText") {
            Some(Value::Array(items)) if items.len() == count => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(String::from)
                        .ok_or_else(|| "translatedText holds something else than text".to_string())
                })
                .collect(),
            Some(Value::Array(items)) => Err(format!(
                "translatedText has {} texts for the {count} sent",
                items.len()
            )),
            Some(Value::String(text)) if count == 1 => Ok(vec![text.clone()]),
            _ => Err("it has no translatedText".to_string()),
        };
        let modern = (source.0, target.0);
        let legacy = (source.1, target.1);
        match self.libretranslate_as(texts, modern, &parse).await {
            // An older server knows a language by its older code: try that once.
            Err(failure) if failure.unsupported_language && legacy != modern => self
                .libretranslate_as(texts, legacy, &parse)
                .await
                .map_err(|f| f.error),
            other => other.map_err(|f| f.error),
        }
    }

    async fn libretranslate_as(
        &self,
        texts: &[&str],
        (source, target): (&str, &str),
        parse: &(impl Fn(&Value) -> Result<Vec<String>, String> + Sync),
    ) -> Result<Vec<String>, Failure> {
        let mut body = json!({"q": texts, "source": source, "target": target, "format": "html"});
        if let Some(key) = &self.key {
            body["api_key"] = json!(key);
        }
        let headers = vec![("content-type".to_string(), "application/json".to_string())];
        self.send(headers, body.to_string(), parse).await
    }

    /// POSTs `body` until an answer reads (`parse`), a failure is final, or the tries are
    /// spent.
    async fn send(
        &self,
        headers: Vec<(String, String)>,
        body: String,
        parse: impl Fn(&Value) -> Result<Vec<String>, String>,
    ) -> Result<Vec<String>, Failure> {
        let body = bytes::Bytes::from(body);
        let mut attempt = 1;
        loop {
            let exchange = Exchange {
                method: "POST".to_string(),
                url: self.endpoint.clone(),
                headers: headers.clone(),
                body: body.clone(),
                follow: false,
                max_bytes: MAX_ANSWER_BYTES,
            };
            let (error, wait) = match self.outbound.exchange(exchange).await {
                Err(e) => match e.kind {
                    FetchErrorKind::Timeout | FetchErrorKind::Failed => (self.error(&e.message, true), None),
                    FetchErrorKind::Refused | FetchErrorKind::TooLarge => {
                        return Err(Failure::from(self.error(&e.message, false)));
                    }
                },
                Ok(answer) if answer.status == 429 || answer.status >= 500 => {
                    let message = format!(
                        "{} answered {}: {}",
                        self.endpoint,
                        answer.status,
                        self.quote(&answer.body)
                    );
                    (self.error(&message, true), retry_after(&answer.headers))
                }
                Ok(answer) if !(200..300).contains(&answer.status) => {
                    let quoted = self.quote(&answer.body);
                    return Err(Failure {
                        unsupported_language: answer.status == 400 && quoted.contains("not supported"),
                        error: self.error(
                            &format!("{} answered {}: {quoted}", self.endpoint, answer.status),
                            false,
                        ),
                    });
                }
                Ok(answer) => {
                    let read = serde_json::from_slice::<Value>(&answer.body)
                        .map_err(|e| format!("it is not JSON ({e})"))
                        .and_then(|v| parse(&v));
                    match read {
                        Ok(texts) => return Ok(texts),
                        Err(why) => (
                            self.error(
                                &format!("{} gave an answer that does not read: {why}", self.endpoint),
                                false,
                            ),
                            None,
                        ),
                    }
                }
            };
            if attempt >= ATTEMPTS {
                return Err(Failure::from(error));
            }
            let wait = wait.unwrap_or(self.backoff * 2_u32.pow(attempt - 1));
            tracing::warn!(
                translator = %self.endpoint,
                attempt,
                error = %error.message,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                "translator request failed; trying again"
            );
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    /// An error naming the endpoint (the outbound client's own messages mostly do already).
    fn error(&self, message: &str, transient: bool) -> TranslateError {
        let message = if message.contains(&self.endpoint) {
            message.to_string()
        } else {
            format!("{}: {message}", self.endpoint)
        };
        TranslateError {
            message: self.redact(&message),
            transient,
        }
    }

    /// The start of an answer's body, on one line, for an error message.
    fn quote(&self, body: &[u8]) -> String {
        let text = String::from_utf8_lossy(body);
        let mut quoted: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some((cut, _)) = quoted.char_indices().nth(QUOTED_CHARS) {
            quoted.truncate(cut);
            quoted.push('…');
        }
        if quoted.is_empty() {
            quoted.push_str("(no body)");
        }
        self.redact(&quoted)
    }

    /// `text` without the key, which an error answer may echo.
    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) if text.contains(key.as_str()) => text.replace(key.as_str(), "***"),
            _ => text.to_string(),
        }
    }
}

/// A request's final failure, and whether it was a LibreTranslate server refusing a language
/// code (`"zh-Hans is not supported"`), which an older code may fix.
struct Failure {
    error: TranslateError,
    unsupported_language: bool,
}

impl From<TranslateError> for Failure {
    fn from(error: TranslateError) -> Failure {
        Failure {
            error,
            unsupported_language: false,
        }
    }
}

impl Translator for HttpTranslator {
    fn translate<'a>(&'a self, request: &'a Request) -> TranslateFuture<'a> {
        Box::pin(self.translate_texts(request))
    }

    fn describe(&self) -> String {
        match self.kind {
            TranslatorKind::Openai => format!("openai ({}) at {}", self.model, self.base),
            TranslatorKind::Libretranslate => format!("libretranslate at {}", self.base),
        }
    }
}

/// The codes LibreTranslate knows a quire language by: the current one, then the one older
/// servers (argos-translate's own codes) use, the same when they agree. Languages LibreTranslate
/// does not translate keep their code, and the server's refusal names it.
fn libretranslate_codes(code: &str) -> (&str, &str) {
    match code {
        "pt-br" => ("pt-BR", "pb"),
        "zh" => ("zh-Hans", "zh"),
        "zh-tw" => ("zh-Hant", "zt"),
        "no" => ("nb", "nb"),
        other => (other, other),
    }
}

/// What the model is told: the languages, how the texts and their tags come and must go back,
/// then the translation's instructions and glossary.
fn system_prompt(request: &Request) -> String {
    let source = language_name(&request.source);
    let target = language_name(&request.target);
    let mut prompt = format!(
        "You translate technical documentation from {source} ({}) to {target} ({}).\n\n\
         The user message holds numbered texts, one per line: \"[1] first text\", \"[2] second \
         text\", and so on. Answer with the translation of every text, each on its own line \
         starting with the same number in brackets, in the same order, and nothing else: no \
         notes, no code fences. Never merge, split or skip a text, and keep the numbering.\n\n\
         The texts hold markup tags that must come back exactly as they are:\n\
         - <g1>...</g1> marks formatted text and <a2>...</a2> a link: keep both tags and \
         translate only the text between them, placing the pair where the {target} sentence \
         needs it.\n\
         - <x3/> is a placeholder for content that is not translated (code, an image, a \
         mention): keep it unchanged.\n\
         - <br/> is a line break: keep it.\n\
         - &amp; &lt; &gt; are escaped characters: keep them escaped.\n\
         Keep every tag's name and number, never add, drop or translate a tag, and translate \
         only the text: leave code, commands, URLs and product names as they are.",
        request.source, request.target
    );
    let instructions = request.instructions.trim();
    if !instructions.is_empty() {
        prompt.push_str("\n\nInstructions for this translation:\n");
        prompt.push_str(instructions);
    }
    if !request.glossary.is_empty() {
        prompt.push_str("\n\nUse these translations for these terms:");
        for (term, translation) in &request.glossary {
            prompt.push_str(&format!("\n- {term} → {translation}"));
        }
    }
    prompt
}

/// The user message: the texts alone, one per line, numbered from 1.
fn numbered(texts: &[&str]) -> String {
    texts
        .iter()
        .enumerate()
        // A line break inside a text would read as the end of its line (tagged text writes
        // breaks as <br/>, so this only guards against a stray one).
        .map(|(i, text)| format!("[{}] {}", i + 1, text.replace(['\r', '\n'], " ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The texts of an answer to [`numbered`]: every line `[N] text` (leading spaces and one space
/// after the bracket allowed), each N of 1..=count exactly once; other lines (a code fence, a
/// remark) are ignored.
fn parse_numbered(content: &str, count: usize) -> Result<Vec<String>, String> {
    let mut texts: Vec<Option<String>> = vec![None; count];
    for line in content.lines() {
        let Some((n, text)) = numbered_line(line) else {
            continue;
        };
        let slot = n
            .checked_sub(1)
            .and_then(|i| texts.get_mut(i))
            .ok_or_else(|| format!("it has a text [{n}], but {count} were sent"))?;
        if slot.is_some() {
            return Err(format!("it has text [{n}] twice"));
        }
        *slot = Some(text.to_string());
    }
    let missing: Vec<String> = texts
        .iter()
        .enumerate()
        .filter(|(_, t)| t.is_none())
        .map(|(i, _)| format!("[{}]", i + 1))
        .collect();
    if !missing.is_empty() {
        return Err(format!("it lacks {} of the {count} texts", missing.join(" ")));
    }
    Ok(texts.into_iter().flatten().collect())
}

fn numbered_line(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start().strip_prefix('[')?;
    let (digits, text) = rest.split_once(']')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = digits.parse().ok()?;
    Some((n, text.strip_prefix(char::is_whitespace).unwrap_or(text)))
}

/// A `Retry-After` in seconds, at most [`MAX_RETRY_AFTER`] (an HTTP date is ignored: the
/// backoff applies).
fn retry_after(headers: &[(String, String)]) -> Option<Duration> {
    let (_, value) = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("retry-after"))?;
    let seconds: u64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;

    use super::*;
    use crate::outbound::Allow;

    type Script = Box<dyn Fn(usize, &Value) -> (StatusCode, Value) + Send + Sync>;

    /// A translator server whose answer to call N (from 0) is `script(N, body)`.
    struct Server {
        calls: AtomicUsize,
        seen: Mutex<Vec<(HeaderMap, Value)>>,
        script: Script,
    }

    async fn server(
        script: impl Fn(usize, &Value) -> (StatusCode, Value) + Send + Sync + 'static,
    ) -> (String, Arc<Server>) {
        let state = Arc::new(Server {
            calls: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
            script: Box::new(script),
        });
        let router = axum::Router::new()
            .fallback(
                |axum::extract::State(s): axum::extract::State<Arc<Server>>,
                 headers: HeaderMap,
                 body: bytes::Bytes| async move {
                    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let call = s.calls.fetch_add(1, Ordering::SeqCst);
                    let (status, answer) = (s.script)(call, &body);
                    s.seen.lock().unwrap().push((headers, body));
                    if status == StatusCode::OK {
                        (status, axum::Json(answer)).into_response()
                    } else {
                        (status, answer.as_str().unwrap_or_default().to_string()).into_response()
                    }
                },
            )
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        (format!("http://{addr}"), state)
    }

    fn translator(kind: TranslatorKind, base: &str, allow: &str) -> HttpTranslator {
        let outbound = Outbound::new(Allow::parse(allow).unwrap(), Duration::from_secs(5));
        let mut t =
            HttpTranslator::new(kind, Some(base), Some("sekrit-key"), "test-model", outbound).unwrap();
        t.backoff = Duration::from_millis(1);
        t
    }

    fn request(texts: &[&str]) -> Request {
        Request {
            source: "en".into(),
            target: "pt-br".into(),
            instructions: "Use the informal you.".into(),
            glossary: vec![("space".into(), "espaço".into())],
            texts: texts.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// The chat answer of a model that upper-cases the user message.
    fn upper_chat(body: &Value) -> Value {
        let content = body["messages"][1]["content"].as_str().unwrap().to_uppercase();
        json!({"choices": [{"message": {"role": "assistant", "content": content}}]})
    }

    fn upper_libre(body: &Value) -> Value {
        let q: Vec<String> = body["q"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_uppercase())
            .collect();
        json!({"translatedText": q})
    }

    const TEXTS: [&str; 3] = [
        "Run <g1>quire serve</g1> then open <a2>the guide</a2> <x3/> now.",
        "Tom &amp; Jerry<br/>again",
        "third",
    ];

    #[tokio::test]
    async fn openai_translates_a_batch_in_order_with_the_key() {
        let (base, server) = server(|_, body| (StatusCode::OK, upper_chat(body))).await;
        let t = translator(TranslatorKind::Openai, &format!("{base}/v1"), "127.0.0.1");
        let got = t.translate(&request(&TEXTS)).await.unwrap();
        let want: Vec<String> = TEXTS.iter().map(|t| t.to_uppercase()).collect();
        assert_eq!(got, want);
        assert_eq!(
            got[0],
            "RUN <G1>QUIRE SERVE</G1> THEN OPEN <A2>THE GUIDE</A2> <X3/> NOW."
        );

        let seen = server.seen.lock().unwrap();
        let (headers, body) = &seen[0];
        assert_eq!(headers["authorization"], "Bearer sekrit-key");
        assert_eq!(body["model"], "test-model");
        assert_eq!(body["temperature"], 0);
        assert_eq!(
            body["messages"][1]["content"],
            format!("[1] {}\n[2] {}\n[3] {}", TEXTS[0], TEXTS[1], TEXTS[2])
        );
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.contains("from English (en) to Brazilian Portuguese (pt-br)"),
            "{system}"
        );
        assert!(system.contains("Use the informal you."), "{system}");
        assert!(system.contains("- space → espaço"), "{system}");
        assert_eq!(t.describe(), format!("openai (test-model) at {base}/v1"));
    }

    #[tokio::test]
    async fn libretranslate_translates_a_batch_in_order_with_the_key() {
        let (base, server) = server(|_, body| (StatusCode::OK, upper_libre(body))).await;
        let t = translator(TranslatorKind::Libretranslate, &base, "127.0.0.1");
        let got = t.translate(&request(&TEXTS)).await.unwrap();
        assert_eq!(got, TEXTS.iter().map(|t| t.to_uppercase()).collect::<Vec<_>>());
        let seen = server.seen.lock().unwrap();
        let (_, body) = &seen[0];
        assert_eq!(body["api_key"], "sekrit-key");
        assert_eq!(body["source"], "en");
        assert_eq!(body["target"], "pt-BR");
        assert_eq!(body["format"], "html");
        assert_eq!(body["q"], json!(TEXTS));
        assert_eq!(t.describe(), format!("libretranslate at {base}"));
    }

    #[tokio::test]
    async fn libretranslate_answers_one_text_as_a_string_and_blank_texts_are_not_sent() {
        let (base, server) = server(|_, body| {
            (
                StatusCode::OK,
                json!({"translatedText": body["q"][0].as_str().unwrap().to_uppercase()}),
            )
        })
        .await;
        let t = translator(TranslatorKind::Libretranslate, &base, "127.0.0.1");
        let got = t.translate(&request(&["", "hello", "  "])).await.unwrap();
        assert_eq!(got, ["", "HELLO", "  "]);
        assert_eq!(server.seen.lock().unwrap()[0].1["q"], json!(["hello"]));
        assert!(t.translate(&request(&[""])).await.unwrap() == [""]);
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn libretranslate_falls_back_to_an_older_language_code() {
        let (base, server) = server(|_, body| {
            if body["target"] == "zh-Hant" {
                (
                    StatusCode::BAD_REQUEST,
                    json!(r#"{"error":"zh-Hant is not supported"}"#),
                )
            } else {
                (StatusCode::OK, upper_libre(body))
            }
        })
        .await;
        let t = translator(TranslatorKind::Libretranslate, &base, "127.0.0.1");
        let mut req = request(&["hi"]);
        req.target = "zh-tw".into();
        assert_eq!(t.translate(&req).await.unwrap(), ["HI"]);
        let seen = server.seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1].1["target"], "zt");
    }

    #[tokio::test]
    async fn a_503_is_tried_again() {
        let (base, server) = server(|call, body| {
            if call == 0 {
                (StatusCode::SERVICE_UNAVAILABLE, json!("busy"))
            } else {
                (StatusCode::OK, upper_chat(body))
            }
        })
        .await;
        let t = translator(TranslatorKind::Openai, &base, "127.0.0.1");
        assert_eq!(t.translate(&request(&["a", "b"])).await.unwrap(), ["A", "B"]);
        assert_eq!(server.calls.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn failures_that_last_are_transient_after_every_try() {
        let (base, server) = server(|_, _| (StatusCode::BAD_GATEWAY, json!("down"))).await;
        let t = translator(TranslatorKind::Libretranslate, &base, "127.0.0.1");
        let error = t.translate(&request(&["a"])).await.unwrap_err();
        assert!(error.transient);
        assert!(
            error.message.contains(&format!("{base}/translate")),
            "{}",
            error.message
        );
        assert!(error.message.contains("502"), "{}", error.message);
        assert_eq!(server.calls.load(Ordering::SeqCst), ATTEMPTS as usize);
    }

    #[tokio::test]
    async fn a_400_is_final_and_does_not_show_the_key() {
        let (base, server) =
            server(|_, _| (StatusCode::BAD_REQUEST, json!("invalid model for key sekrit-key"))).await;
        let t = translator(TranslatorKind::Openai, &base, "127.0.0.1");
        let error = t.translate(&request(&["a"])).await.unwrap_err();
        assert!(!error.transient);
        assert_eq!(server.calls.load(Ordering::SeqCst), 1);
        assert!(
            error.message.contains(&format!(
                "{base}/chat/completions answered 400: invalid model for key ***"
            )),
            "{}",
            error.message
        );
        assert!(!error.message.contains("sekrit"), "{}", error.message);
    }

    #[tokio::test]
    async fn an_answer_missing_a_text_is_tried_again_then_final() {
        let (base, server) = server(|_, _| {
            (
                StatusCode::OK,
                json!({"choices": [{"message": {"content": "[1] A\n[3] C"}}]}),
            )
        })
        .await;
        let t = translator(TranslatorKind::Openai, &base, "127.0.0.1");
        let error = t.translate(&request(&["a", "b", "c"])).await.unwrap_err();
        assert!(!error.transient);
        assert!(error.message.contains("lacks [2]"), "{}", error.message);
        assert_eq!(server.calls.load(Ordering::SeqCst), ATTEMPTS as usize);
    }

    #[tokio::test]
    async fn a_timeout_is_transient() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        // Accepts and never answers.
        let hold = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                open.push(socket);
            }
        });
        let outbound = Outbound::new(Allow::parse("127.0.0.1").unwrap(), Duration::from_millis(100));
        let mut t = HttpTranslator::new(
            TranslatorKind::Openai,
            Some(&format!("http://{addr}")),
            None,
            "m",
            outbound,
        )
        .unwrap();
        t.backoff = Duration::from_millis(1);
        let error = t.translate(&request(&["a"])).await.unwrap_err();
        assert!(error.transient, "{}", error.message);
        hold.abort();
    }

    #[tokio::test]
    async fn the_outbound_policy_refuses_a_private_translator_unless_allowed() {
        let (base, server) = server(|_, body| (StatusCode::OK, upper_chat(body))).await;
        let t = translator(TranslatorKind::Openai, &base, "");
        let error = t.translate(&request(&["a"])).await.unwrap_err();
        assert!(!error.transient);
        assert!(
            error.message.contains("QUIRE_OUTBOUND_ALLOW"),
            "{}",
            error.message
        );
        assert_eq!(server.calls.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn numbered_answers_parse_upper_cased_fenced_or_loose() {
        let sent = numbered(&["Hello <g1>world</g1>", "two\nlines"]);
        assert_eq!(sent, "[1] Hello <g1>world</g1>\n[2] two lines");
        assert_eq!(
            parse_numbered(&sent.to_uppercase(), 2).unwrap(),
            ["HELLO <G1>WORLD</G1>", "TWO LINES"]
        );
        let fenced = "Here you go:\n```text\n  [2] deux\n[1]un\n[3] \n```\n";
        assert_eq!(parse_numbered(fenced, 3).unwrap(), ["un", "deux", ""]);
        assert!(parse_numbered("[1] a\n[1] b", 1).unwrap_err().contains("twice"));
        assert!(parse_numbered("[1] a\n[2] b", 1).unwrap_err().contains("[2]"));
        assert!(parse_numbered("[0] a", 1).is_err());
        assert!(parse_numbered("1. a", 1).unwrap_err().contains("lacks [1]"));
        assert_eq!(parse_numbered("[1] [2] a", 1).unwrap(), ["[2] a"]);
    }

    #[test]
    fn retry_after_is_read_in_seconds_and_capped() {
        let h = |v: &str| vec![("retry-after".to_string(), v.to_string())];
        assert_eq!(retry_after(&h("3")), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&h("600")), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after(&h("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(&[]), None);
    }

    #[test]
    fn configuration_errors_name_the_flag() {
        let outbound = || Outbound::new(Allow::default(), Duration::from_secs(1));
        let e = HttpTranslator::new(TranslatorKind::Libretranslate, None, None, "m", outbound()).unwrap_err();
        assert!(e.contains("--translator-url"), "{e}");
        let e =
            HttpTranslator::new(TranslatorKind::Openai, Some("ftp://x"), None, "m", outbound()).unwrap_err();
        assert!(e.contains("--translator-url"), "{e}");
        let openai =
            HttpTranslator::new(TranslatorKind::Openai, None, Some("k"), "gpt-4o-mini", outbound()).unwrap();
        assert_eq!(openai.endpoint(), "https://api.openai.com/v1/chat/completions");
        assert_eq!(
            openai.describe(),
            "openai (gpt-4o-mini) at https://api.openai.com/v1"
        );
        assert!(!format!("{openai:?}").contains("\"k\""));
        let e = HttpTranslator::new(TranslatorKind::Openai, None, Some("a\nb"), "m", outbound()).unwrap_err();
        assert!(e.contains("--translator-key"), "{e}");
    }
}
