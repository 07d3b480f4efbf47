//! The reader site: published docs sites served as HTML to visitors, rendered by
//! `quire-reader` (docs/reader.md, "Serving").
//!
//! Not API routes: no token, not under `/v1`, not in the OpenAPI document. A middleware
//! ([`dispatch`]) takes `/s/{basename or site id}/...`, and any request whose `Host` is a
//! published site's hostname (but for the API's own paths), before the router; everything else
//! goes on to the API.
//!
//! Who may read is the store's decision (`sites::published::admit`, the same as the API's
//! published view): a share key or a visitor token given in the query is checked, kept in an
//! HttpOnly cookie scoped to the site, and the visitor is sent to the clean URL. What a
//! visitor sees is `sites::published::shown`: site spaces and sections whose conditions fail
//! are absent (404, not in navigation, search or sitemap).
//!
//! Answers are cached by what they depend on: the published load they come from (its
//! `generation`, new after any write, so a merge shows at once), what the visitor sees, the
//! visitor token (for `if` blocks), the hour of the file URLs, and the path; each carries an
//! `ETag` of its bytes.

mod assets;
pub(crate) mod layout;
mod pool;
pub(crate) mod serve;
pub mod state;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use quire_store::reader::SiteKey;

use crate::state::App;

pub use state::ReaderState;

/// Paths that stay the API's on a site's hostname.
const API_PREFIXES: &[&str] = &["/v1/", "/v1", "/blobs/", "/healthz", "/readyz", "/metrics"];

/// Which site a request is for, and the part of its path within the site.
pub(crate) struct Target {
    pub key: SiteKey,
    /// The site's root URL path, with a trailing slash (`/s/handbook/`, or `/`).
    pub root: String,
    /// Whether the root was asked without its trailing slash (`/s/handbook`).
    pub bare_root: bool,
}

/// Sends reader requests to the reader, everything else on.
pub async fn dispatch(State(app): State<App>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let host = request_host(&req);
    let Some(target) = target(&app, &path, host).await else {
        return next.run(req).await;
    };
    serve::serve(app, req, target).await
}

/// The site a request's path and host name (a `/s/` path, or a site's hostname), if any.
pub(crate) async fn target(app: &App, path: &str, host: Option<String>) -> Option<Target> {
    if let Some(rest) = path.strip_prefix("/s/") {
        let name = rest.split('/').next().unwrap_or_default();
        if name.is_empty() {
            return None;
        }
        let root = format!("/s/{name}/");
        return Some(Target {
            key: SiteKey::Path(name.to_string()),
            bare_root: path.len() + 1 == root.len(),
            root,
        });
    }
    let host = host?;
    if app.reader.is_public_host(&host) || API_PREFIXES.iter().any(|p| path == *p || path.starts_with(p)) {
        return None;
    }
    let key = SiteKey::Host(host);
    match app.reader_sites.find(&app.db, key.clone()).await {
        Ok(Some(_)) => Some(Target {
            key,
            root: "/".to_string(),
            bare_root: false,
        }),
        _ => None,
    }
}

/// The request's host, lowercased, without its port.
fn request_host(req: &Request) -> Option<String> {
    let host = req
        .headers()
        .get(axum::http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().host().map(str::to_string))?;
    // Site hostnames are domain names: an IPv6 literal (`[::1]:8080`) is kept whole.
    let host = match host.rsplit_once(':') {
        Some((name, port)) if !host.starts_with('[') && port.bytes().all(|b| b.is_ascii_digit()) => {
            name.to_string()
        }
        _ => host,
    };
    Some(host.to_ascii_lowercase())
}
