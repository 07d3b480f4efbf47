//! CORS (`--cors-origin`): which web origins may call the API from a browser. Off by default:
//! without origins no CORS header is sent and browsers keep other sites' pages from reading
//! answers. Tokens travel in the `Authorization` header, never in cookies, so credentials are
//! not allowed and `*` is safe to offer.

use std::time::Duration;

use axum::http::{HeaderName, HeaderValue, Method, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// One `--cors-origin` value: `*` or an origin (`https://docs.example.com`, with a port when
/// it is not the scheme's default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigin {
    Any,
    Exact(String),
}

/// Parses a `--cors-origin` value; a URL with a path, query or credentials is refused, since a
/// browser's `Origin` never carries them and such a value would silently match nothing.
pub fn parse_origin(text: &str) -> Result<CorsOrigin, String> {
    let text = text.trim();
    if text == "*" {
        return Ok(CorsOrigin::Any);
    }
    let invalid = || {
        format!(
            "invalid CORS origin {text:?}: expected `*` or scheme://host[:port], e.g. https://docs.example.com"
        )
    };
    let url = url::Url::parse(text).map_err(|_| invalid())?;
    let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
    if !matches!(url.scheme(), "http" | "https")
        || url.host_str().is_none()
        || !url.username().is_empty()
        || url.password().is_some()
        || !bare
    {
        return Err(invalid());
    }
    // `Url` lowercases the host and drops the scheme's default port, as browsers do in `Origin`.
    Ok(CorsOrigin::Exact(url.origin().ascii_serialization()))
}

/// Response headers a browser script may read: the request id, where a created resource is,
/// and the rate limit.
const EXPOSED: [&str; 6] = [
    "x-request-id",
    "location",
    "retry-after",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
];

/// The layer for `origins`; None when there are none (CORS off).
pub fn layer(origins: &[CorsOrigin]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.contains(&CorsOrigin::Any) {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| match o {
            CorsOrigin::Exact(origin) => HeaderValue::from_str(origin).ok(),
            CorsOrigin::Any => None,
        }))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([
                Method::GET,
                Method::HEAD,
                Method::POST,
                Method::PUT,
                Method::PATCH,
                Method::DELETE,
            ])
            .allow_headers([
                header::AUTHORIZATION,
                header::CONTENT_TYPE,
                header::ACCEPT,
                header::ACCEPT_ENCODING,
                HeaderName::from_static("prefer"),
                HeaderName::from_static("x-request-id"),
            ])
            .expose_headers(EXPOSED.map(HeaderName::from_static))
            .max_age(Duration::from_secs(3600)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_parse_to_what_browsers_send() {
        assert_eq!(parse_origin("*"), Ok(CorsOrigin::Any));
        assert_eq!(
            parse_origin("https://Docs.Example.com"),
            Ok(CorsOrigin::Exact("https://docs.example.com".into()))
        );
        assert_eq!(
            parse_origin("https://docs.example.com:443/"),
            Ok(CorsOrigin::Exact("https://docs.example.com".into()))
        );
        assert_eq!(
            parse_origin("http://localhost:3000"),
            Ok(CorsOrigin::Exact("http://localhost:3000".into()))
        );
        for bad in [
            "docs.example.com",
            "https://docs.example.com/app",
            "https://docs.example.com?x=1",
            "ftp://docs.example.com",
            "https://user@docs.example.com",
            "https://docs.example.com//",
            "",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        assert!(layer(&[]).is_none());
    }
}
