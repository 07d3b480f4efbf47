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

/// Fetches a URL with GET, at most `max_bytes` of its body.
pub trait Fetch: Send + Sync {
    fn fetch<'a>(&'a self, url: &'a str, max_bytes: usize) -> FetchFuture<'a>;
}
