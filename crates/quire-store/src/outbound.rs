//! What quire fetches from other servers (files given by URL in content batches, OpenAPI
//! descriptions, later event deliveries) goes through one [`Fetch`], which the HTTP service
//! implements with its outbound policy (`quire_server::outbound`: no private or reserved
//! address, in any spelling, on any redirect hop). This crate has no HTTP client.

use std::future::Future;
use std::pin::Pin;

/// A fetched body.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub bytes: bytes::Bytes,
    /// The content type the server sent, without its parameters.
    pub content_type: Option<String>,
    /// The URL the body came from, after redirects.
    pub final_url: String,
}

/// Why a fetch gave nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchErrorKind {
    /// The server did not answer in time.
    Timeout,
    /// The body is larger than the caller allows.
    TooLarge,
    /// The outbound policy refused the address (private, reserved, not allowed).
    Refused,
    /// Anything else: no such host, a refused connection, an error status, a bad URL.
    Failed,
}

#[derive(Debug, Clone)]
pub struct FetchError {
    pub kind: FetchErrorKind,
    /// What went wrong, naming the URL.
    pub message: String,
}

impl FetchError {
    pub fn new(kind: FetchErrorKind, message: impl Into<String>) -> FetchError {
        FetchError {
            kind,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type FetchFuture<'a> = Pin<Box<dyn Future<Output = Result<Fetched, FetchError>> + Send + 'a>>;

/// What a server answered a POST (event deliveries).
#[derive(Debug, Clone)]
pub struct Posted {
    pub status: u16,
    /// The start of the answer's body, for the trace.
    pub body: String,
}

pub type PostFuture<'a> = Pin<Box<dyn Future<Output = Result<Posted, FetchError>> + Send + 'a>>;

/// How much of an answer's body a POST keeps.
pub const POSTED_BODY_MAX: usize = 512;

/// Fetches a URL with GET, at most `max_bytes` of its body; POSTs to one.
pub trait Fetch: Send + Sync {
    fn fetch<'a>(&'a self, url: &'a str, max_bytes: usize) -> FetchFuture<'a>;

    /// POSTs `body` with `headers` to `url` within `timeout`, following no redirect (a
    /// redirect is an answer like any other: the receiver must answer 2xx itself).
    fn post<'a>(
        &'a self,
        url: &'a str,
        headers: &'a [(String, String)],
        body: bytes::Bytes,
        timeout: std::time::Duration,
    ) -> PostFuture<'a>;
}
