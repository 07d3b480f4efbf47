//! The host functions `web.js` builds the Web platform on, as the `host` object it is given.
//! Bytes travel as Latin-1 strings: QuickJS strings convert to Rust without unsafe code, and
//! a char per byte keeps the conversion linear.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use hmac::{KeyInit, Mac};
use rquickjs::{Ctx, Exception, Function, Object, Result};
use sha2::Digest;

use crate::budget::Budget;
use crate::{Host, Limits, LogLine, OutRequest};

/// Lines and how many were dropped past the limit.
#[derive(Default)]
pub struct Logs {
    pub lines: Vec<LogLine>,
    pub dropped: usize,
}

/// The longest console line kept, in chars.
const LOG_LINE_MAX: usize = 1000;
/// The most random bytes one getRandomValues gives (the Web's own limit).
const RANDOM_MAX: usize = 65536;

pub fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| b as char).collect()
}

pub fn bytes(ctx: &Ctx<'_>, s: &str) -> Result<Vec<u8>> {
    s.chars()
        .map(|c| u8::try_from(u32::from(c)))
        .collect::<std::result::Result<Vec<u8>, _>>()
        .map_err(|_| Exception::throw_type(ctx, "bytes out of range"))
}

pub struct State {
    pub host: Arc<dyn Host>,
    pub budget: Arc<Budget>,
    pub limits: Limits,
    pub logs: Rc<RefCell<Logs>>,
    pub fetches: Rc<RefCell<usize>>,
}

/// The `host` object.
pub fn object<'js>(ctx: &Ctx<'js>, state: State) -> Result<Object<'js>> {
    let o = Object::new(ctx.clone())?;
    let started_ms = now_ms();
    o.set("started", started_ms)?;
    o.set("now", Function::new(ctx.clone(), now_ms)?)?;

    let logs = state.logs.clone();
    let max_lines = state.limits.log_lines;
    o.set(
        "log",
        Function::new(ctx.clone(), move |level: String, text: String| {
            let mut logs = logs.borrow_mut();
            if logs.lines.len() >= max_lines {
                logs.dropped += 1;
                return;
            }
            let text = match text.char_indices().nth(LOG_LINE_MAX) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            };
            logs.lines.push(LogLine { level, text });
        })?,
    )?;

    o.set(
        "url",
        Function::new(ctx.clone(), |input: String, base: Option<String>| {
            url_parts(&input, base.as_deref())
        })?,
    )?;
    o.set(
        "utf8Encode",
        Function::new(ctx.clone(), |s: String| latin1(s.as_bytes()))?,
    )?;
    o.set(
        "utf8Decode",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, s: String, fatal: bool| -> Result<String> {
                let raw = bytes(&ctx, &s)?;
                if fatal {
                    String::from_utf8(raw)
                        .map_err(|_| Exception::throw_type(&ctx, "The encoded data was not valid UTF-8"))
                } else {
                    Ok(String::from_utf8_lossy(&raw).into_owned())
                }
            },
        )?,
    )?;
    o.set(
        "random",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, n: usize| -> Result<String> {
            if n > RANDOM_MAX {
                return Err(Exception::throw_range(
                    &ctx,
                    "at most 65536 random bytes at a time",
                ));
            }
            let mut buf = vec![0u8; n];
            rand::fill(&mut buf[..]);
            Ok(latin1(&buf))
        })?,
    )?;
    o.set(
        "hmac",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, hash: String, key: String, data: String| -> Result<String> {
                let (key, data) = (bytes(&ctx, &key)?, bytes(&ctx, &data)?);
                hmac_of(&hash, &key, &data)
                    .map(|mac| latin1(&mac))
                    .ok_or_else(|| Exception::throw_type(&ctx, &format!("unsupported hash {hash}")))
            },
        )?,
    )?;
    o.set(
        "digest",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, hash: String, data: String| -> Result<String> {
                let data = bytes(&ctx, &data)?;
                digest_of(&hash, &data)
                    .map(|d| latin1(&d))
                    .ok_or_else(|| Exception::throw_type(&ctx, &format!("unsupported hash {hash}")))
            },
        )?,
    )?;
    o.set("fetch", fetch_function(ctx, state)?)?;
    Ok(o)
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// A URL's parts as `web.js`'s URL keeps them (JSON), or None when it does not parse.
fn url_parts(input: &str, base: Option<&str>) -> Option<String> {
    let parsed = match base {
        Some(base) => url::Url::parse(base).ok()?.join(input).ok()?,
        None => url::Url::parse(input).ok()?,
    };
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        (None, _) => String::new(),
    };
    let search = match parsed.query() {
        Some(q) if !q.is_empty() => format!("?{q}"),
        _ => String::new(),
    };
    let hash = match parsed.fragment() {
        Some(f) if !f.is_empty() => format!("#{f}"),
        _ => String::new(),
    };
    Some(
        serde_json::json!({
            "href": parsed.as_str(),
            "origin": parsed.origin().ascii_serialization(),
            "protocol": format!("{}:", parsed.scheme()),
            "username": parsed.username(),
            "password": parsed.password().unwrap_or(""),
            "host": host,
            "hostname": parsed.host_str().unwrap_or(""),
            "port": parsed.port().map(|p| p.to_string()).unwrap_or_default(),
            "pathname": parsed.path(),
            "search": search,
            "hash": hash,
        })
        .to_string(),
    )
}

fn hmac_of(hash: &str, key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
    fn mac<M: Mac + KeyInit>(key: &[u8], data: &[u8]) -> Option<Vec<u8>> {
        let mut m = <M as KeyInit>::new_from_slice(key).ok()?;
        m.update(data);
        Some(m.finalize().into_bytes().to_vec())
    }
    match hash {
        "SHA-1" => mac::<hmac::Hmac<sha1::Sha1>>(key, data),
        "SHA-256" => mac::<hmac::Hmac<sha2::Sha256>>(key, data),
        "SHA-384" => mac::<hmac::Hmac<sha2::Sha384>>(key, data),
        "SHA-512" => mac::<hmac::Hmac<sha2::Sha512>>(key, data),
        _ => None,
    }
}

fn digest_of(hash: &str, data: &[u8]) -> Option<Vec<u8>> {
    Some(match hash {
        "SHA-1" => sha1::Sha1::digest(data).to_vec(),
        "SHA-256" => sha2::Sha256::digest(data).to_vec(),
        "SHA-384" => sha2::Sha384::digest(data).to_vec(),
        "SHA-512" => sha2::Sha512::digest(data).to_vec(),
        _ => return None,
    })
}

/// `host.fetch(method, url, headersJson, bodyLatin1, redirect)`: `[status, headersJson,
/// bodyLatin1, finalUrl]`, or a TypeError naming why there is no answer. The wait counts as
/// the host's time, not the script's.
fn fetch_function<'js>(ctx: &Ctx<'js>, state: State) -> Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              method: String,
              url: String,
              headers: String,
              body: String,
              redirect: Option<String>|
              -> Result<rquickjs::Array<'js>> {
            {
                let mut count = state.fetches.borrow_mut();
                if *count >= state.limits.fetches {
                    return Err(Exception::throw_type(
                        &ctx,
                        &format!(
                            "fetch refused: a call may make at most {} fetches",
                            state.limits.fetches
                        ),
                    ));
                }
                *count += 1;
            }
            let headers: Vec<(String, String)> = serde_json::from_str(&headers)
                .map_err(|_| Exception::throw_type(&ctx, "fetch: bad headers"))?;
            let request = OutRequest {
                method,
                url,
                headers,
                body: bytes(&ctx, &body)?,
                follow: redirect.as_deref() != Some("manual"),
                max_bytes: state.limits.body_bytes,
            };
            let started = Instant::now();
            let answer = state.host.fetch(request);
            state.budget.add_wait(started.elapsed());
            let answer = answer.map_err(|e| Exception::throw_type(&ctx, &format!("fetch failed: {e}")))?;
            let headers = serde_json::to_string(&answer.headers)
                .map_err(|_| Exception::throw_type(&ctx, "fetch: bad answer headers"))?;
            let out = rquickjs::Array::new(ctx.clone())?;
            out.set(0, answer.status)?;
            out.set(1, headers)?;
            out.set(2, latin1(&answer.body))?;
            out.set(3, answer.url)?;
            Ok(out)
        },
    )
}
