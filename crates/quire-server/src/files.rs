//! File bytes: stored once per content hash in an object store (a local directory by default,
//! an S3-compatible bucket by configuration), served at signed, expiring URLs, and fetched from
//! public URLs for `insert_files` without ever reaching private networks.

use std::net::IpAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures_util::StreamExt;
use serde::Deserialize;

use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::state::App;
use crate::urls::Urls;
use crate::{clock, signing};

/// How long a download URL works.
const URL_LIFETIME_SECS: i64 = 3600;

use crate::paths::BlobPath;
pub use quire_blobs::BlobStore;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default().routes(routes!(download))
}

/// What a link signs: the file and the expiry, or `permanent` for a link that never expires
/// (so neither kind of link can be made from the other).
fn download_message(
    space_id: &str,
    hash: &str,
    name: &str,
    content_type: &str,
    expires: Option<i64>,
) -> String {
    let expiry = expires.map_or_else(|| "permanent".to_owned(), |e| e.to_string());
    format!("{space_id}\n{hash}\n{name}\n{content_type}\n{expiry}")
}

/// A download URL valid for about an hour. The expiry is rounded so that the URL of a file stays
/// the same across reads within the hour (good for caches).
pub fn download_url(
    urls: &Urls,
    key: &[u8],
    space_id: &str,
    hash: &str,
    name: &str,
    content_type: &str,
) -> String {
    let now = clock::now_ms() / 1000;
    let expires = (now / URL_LIFETIME_SECS + 2) * URL_LIFETIME_SECS;
    signed_url(urls, key, space_id, hash, name, content_type, Some(expires))
}

/// A download URL that never expires, for the files of a site anyone may read: the same for a
/// file for as long as the signing key lasts, so browsers and CDNs cache it (`immutable`) and a
/// page read later, or its `.md`, never holds a dead link.
pub fn permanent_download_url(
    urls: &Urls,
    key: &[u8],
    space_id: &str,
    hash: &str,
    name: &str,
    content_type: &str,
) -> String {
    signed_url(urls, key, space_id, hash, name, content_type, None)
}

fn signed_url(
    urls: &Urls,
    key: &[u8],
    space_id: &str,
    hash: &str,
    name: &str,
    content_type: &str,
    expires: Option<i64>,
) -> String {
    let signature = signing::sign(
        key,
        &download_message(space_id, hash, name, content_type, expires),
    );
    let encode = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let expiry = expires.map_or_else(String::new, |e| format!("&e={e}"));
    format!(
        "{}/blobs/{space_id}/{hash}/{}?ct={}{expiry}&s={signature}",
        urls.base(),
        encode(name).replace('+', "%20"),
        encode(content_type)
    )
}

/// The query of a signed download URL, as [`download_url`] writes it. A missing or malformed
/// part is an invalid link (404), never a 400: the URL is opaque to its holder.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DownloadQuery {
    /// The content type the file is served with.
    #[param(required = true)]
    #[serde(rename = "ct", default, deserialize_with = "part")]
    content_type: String,
    /// When the link expires, in Unix seconds; absent from a link that never does (the files
    /// of public sites).
    #[serde(rename = "e", default, deserialize_with = "seconds_or_expired")]
    expires: Option<i64>,
    /// The signature of the link.
    #[param(required = true)]
    #[serde(rename = "s", default, deserialize_with = "part")]
    signature: String,
}

/// A part of the link as given, or nothing when it is not one value: the link is then
/// invalid, not the request.
fn part<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(value.as_str().unwrap_or_default().to_string())
}

/// An expiry that does not parse is one long past.
fn seconds_or_expired<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Ok(Some(part(d)?.parse().unwrap_or(0)))
}

#[utoipa::path(
    get,
    path = "/blobs/{spaceId}/{hash}/{name}",
    tag = "Files",
    summary = "Download a file by its signed URL",
    params(BlobPath, DownloadQuery),
    responses((status = 200, description = "The file's bytes, with its content type.", content_type = "application/octet-stream", body = Vec<u8>)),
    security(())
)]
async fn download(
    State(app): State<App>,
    Path(BlobPath { space_id, hash, name }): Path<BlobPath>,
    QueryOf(DownloadQuery {
        content_type,
        expires,
        signature,
    }): QueryOf<DownloadQuery>,
) -> ApiResult<Response> {
    let message = download_message(&space_id, &hash, &name, &content_type, expires);
    let live = expires.is_none_or(|expires| expires >= clock::now_ms() / 1000);
    if !live || !signing::verify(&app.signing_key, &message, &signature) {
        return Err(ApiError::not_found(
            "this download link is invalid or has expired",
        ));
    }
    let blob = app.blobs.get(&space_id, &hash).await?;
    let size = blob.meta.size;
    let stream = blob
        .into_stream()
        .map(|chunk| chunk.map_err(std::io::Error::other));
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&content_type) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if expires.is_none() {
            "public, max-age=31536000, immutable"
        } else {
            "private, max-age=3600, immutable"
        }),
    );
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    let disposition = format!(
        "inline; filename*=UTF-8''{}",
        url::form_urlencoded::byte_serialize(name.as_bytes()).collect::<String>()
    );
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}

/// Whether an address is one a server-side fetch must never reach: loopback, private,
/// link-local, shared, documentation, multicast, unspecified and other reserved ranges. An IPv6
/// address that carries an IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, 6to4,
/// NAT64) is judged by that IPv4 address, since that is where packets to it end up; Teredo
/// and the local-use NAT64 prefix are refused whatever they carry.
pub fn is_forbidden_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => match embedded_v4(v6) {
            Embedded::V4(v4) => is_forbidden_v4(v4),
            Embedded::Refused => true,
            Embedded::None => {
                let s = v6.segments();
                v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || (s[0] & 0xfe00) == 0xfc00
                    || (s[0] & 0xffc0) == 0xfe80
                    || (s[0] & 0xffc0) == 0xfec0
                    || s[0] == 0x2001 && s[1] == 0x0db8
                    || s[0] == 0x0100 && s[1] == 0 && s[2] == 0 && s[3] == 0
            }
        },
    }
}

fn is_forbidden_v4(v4: std::net::Ipv4Addr) -> bool {
    let o = v4.octets();
    v4.is_private()
        || v4.is_loopback()
        || v4.is_link_local()
        || v4.is_broadcast()
        || v4.is_documentation()
        || v4.is_unspecified()
        || v4.is_multicast()
        || o[0] == 0
        || (o[0] == 100 && (64..128).contains(&o[1]))
        || (o[0] == 192 && o[1] == 0 && o[2] == 0)
        || (o[0] == 198 && (18..20).contains(&o[1]))
        || o[0] >= 240
}

/// What IPv4 address an IPv6 address leads to.
enum Embedded {
    V4(std::net::Ipv4Addr),
    /// A form whose IPv4 destination cannot be told from the address (Teredo, local-use NAT64).
    Refused,
    None,
}

fn embedded_v4(v6: std::net::Ipv6Addr) -> Embedded {
    let s = v6.segments();
    let low = || std::net::Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        // IPv4-mapped ::ffff:a.b.c.d
        [0, 0, 0, 0, 0, 0xffff, _, _] => Embedded::V4(low()),
        // IPv4-compatible ::a.b.c.d (deprecated; also covers :: and ::1, judged as 0.0.0.x)
        [0, 0, 0, 0, 0, 0, _, _] => Embedded::V4(low()),
        // IPv4-translated ::ffff:0:a.b.c.d
        [0, 0, 0, 0, 0xffff, 0, _, _] => Embedded::V4(low()),
        // NAT64 well-known prefix 64:ff9b::/96
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Embedded::V4(low()),
        // NAT64 local-use prefix 64:ff9b:1::/48: where the IPv4 address sits depends on the
        // operator's prefix length, and the translator is a private one.
        [0x64, 0xff9b, 1, ..] => Embedded::Refused,
        // 6to4 2002:aabb:ccdd::/48
        [0x2002, hi, lo, ..] => Embedded::V4(std::net::Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo))),
        // Teredo 2001::/32: the client address is obfuscated and reached through a relay.
        [0x2001, 0, ..] => Embedded::Refused,
        _ => Embedded::None,
    }
}

/// Fetches a public http(s) URL: the host is resolved once, every address checked, and the
/// connection pinned to a checked address (no rebinding between check and use). Redirects are
/// followed by hand, each hop checked the same way. Returns the bytes and the content type.
pub async fn fetch_public(raw: &str, max_bytes: usize) -> Result<(Bytes, Option<String>), String> {
    let mut url = url::Url::parse(raw).map_err(|e| format!("invalid URL {raw:?}: {e}"))?;
    for _ in 0..5 {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "only http and https URLs can be fetched, not {}",
                url.scheme()
            ));
        }
        let host = url.host_str().ok_or("the URL has no host")?.to_string();
        let port = url.port_or_known_default().ok_or("the URL has no port")?;
        let addresses: Vec<std::net::SocketAddr> = match host.trim_matches(['[', ']']).parse::<IpAddr>() {
            Ok(ip) => vec![std::net::SocketAddr::new(ip, port)],
            Err(_) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| format!("cannot resolve {host}: {e}"))?
                .collect(),
        };
        let Some(address) = addresses.first().copied() else {
            return Err(format!("{host} resolves to no address"));
        };
        if let Some(bad) = addresses.iter().find(|a| is_forbidden_address(a.ip())) {
            return Err(format!(
                "{host} resolves to {}, a private or reserved address that quire does not fetch",
                bad.ip()
            ));
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .resolve(&host, address)
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| e.to_string())?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| format!("cannot fetch {url}: {e}"))?;
        if response.status().is_redirection() {
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .ok_or("a redirect without a Location")?;
            url = url.join(location).map_err(|e| format!("invalid redirect: {e}"))?;
            continue;
        }
        if !response.status().is_success() {
            return Err(format!("fetching {url} answered {}", response.status()));
        }
        if response.content_length().is_some_and(|n| n as usize > max_bytes) {
            return Err(format!("the file at {url} is larger than {max_bytes} bytes"));
        }
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| format!("cannot read {url}: {e}"))?;
            if body.len() + chunk.len() > max_bytes {
                return Err(format!("the file at {url} is larger than {max_bytes} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok((Bytes::from(body), content_type));
    }
    Err("too many redirects".to_string())
}

/// Fetches files given by URL in content batches (`quire_store::files::Fetch`), never from
/// private networks (see [`fetch_public`]).
pub struct PublicFetch;

impl quire_store::files::Fetch for PublicFetch {
    fn fetch<'a>(&'a self, url: &'a str, max_bytes: usize) -> quire_store::files::FetchFuture<'a> {
        Box::pin(fetch_public(url, max_bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_refused() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(is_forbidden_address(bad.parse().unwrap()), "{bad}");
        }
        for good in ["93.184.216.34", "8.8.8.8", "2606:4700::1111"] {
            assert!(!is_forbidden_address(good.parse().unwrap()), "{good}");
        }
    }

    /// Every IPv6 form that carries an IPv4 address, with a private (127.0.0.1, 10.0.0.1) and a
    /// public (93.184.216.34 = 5db8:d822) embedded address: the IPv4 rules decide, except for
    /// the forms whose destination cannot be told, refused either way.
    #[test]
    fn ipv6_forms_that_embed_an_ipv4_address_are_judged_by_it() {
        let table: &[(&str, &str, bool)] = &[
            // (form, address, forbidden)
            ("IPv4-mapped", "::ffff:127.0.0.1", true),
            ("IPv4-mapped", "::ffff:10.0.0.1", true),
            ("IPv4-mapped", "::ffff:93.184.216.34", false),
            ("IPv4-compatible", "::127.0.0.1", true),
            ("IPv4-compatible", "::10.0.0.1", true),
            ("IPv4-compatible", "::93.184.216.34", false),
            ("IPv4-translated", "::ffff:0:127.0.0.1", true),
            ("IPv4-translated", "::ffff:0:10.0.0.1", true),
            ("IPv4-translated", "::ffff:0:93.184.216.34", false),
            ("6to4", "2002:7f00:1::", true),
            ("6to4", "2002:a00:1::1", true),
            ("6to4", "2002:5db8:d822::1", false),
            ("NAT64", "64:ff9b::127.0.0.1", true),
            ("NAT64", "64:ff9b::10.0.0.1", true),
            ("NAT64", "64:ff9b::93.184.216.34", false),
            ("NAT64 local-use", "64:ff9b:1::127.0.0.1", true),
            ("NAT64 local-use", "64:ff9b:1::93.184.216.34", true),
            ("Teredo", "2001:0:4136:e378:8000:63bf:80ff:fffe", true),
            ("Teredo", "2001:0:5db8:d822:8000:63bf:a247:2ddd", true),
        ];
        for (form, address, forbidden) in table {
            let ip: IpAddr = address.parse().unwrap();
            assert_eq!(is_forbidden_address(ip), *forbidden, "{form} {address}");
        }
    }

    #[tokio::test]
    async fn fetching_loopback_is_refused_before_connecting() {
        let error = fetch_public("http://127.0.0.1:9/x.png", 10).await.unwrap_err();
        assert!(error.contains("private or reserved"), "{error}");
        let error = fetch_public("http://localhost:9/x.png", 10).await.unwrap_err();
        assert!(error.contains("private or reserved"), "{error}");
        assert!(fetch_public("ftp://example.com/x", 10).await.is_err());
    }
}
