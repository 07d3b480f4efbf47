//! File bytes: stored once per content hash in an object store (a local directory by default,
//! an S3-compatible bucket by configuration), served at signed, expiring URLs, and fetched from
//! public URLs for `insert_files` without ever reaching private networks.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
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
    let expiry = expires.map_or_else(String::new, |e| format!("&e={e}"));
    format!(
        "{}/blobs/{space_id}/{hash}/{}?ct={}{expiry}&s={signature}",
        urls.base(),
        path_segment(name),
        url::form_urlencoded::byte_serialize(content_type.as_bytes()).collect::<String>()
    )
}

/// A file name as one segment of a URL's path.
pub fn path_segment(name: &str) -> String {
    url::form_urlencoded::byte_serialize(name.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

/// `Content-Disposition: inline` with the file's name, which a browser saves it as.
pub fn inline_disposition(name: &str) -> Option<HeaderValue> {
    HeaderValue::from_str(&format!("inline; filename*=UTF-8''{}", path_segment(name))).ok()
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
    if let Some(v) = inline_disposition(&name) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(response)
}
