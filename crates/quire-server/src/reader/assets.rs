//! The reader's embedded stylesheet, script and icon as they are sent: named by their hash (so
//! cached for a year), gzip-compressed for a client that takes it. The stylesheet is 28 KB
//! and 7 KB compressed; every first visit to any site loads it.

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use bytes::Bytes;
use quire_reader::Asset;

use crate::encoding::{Effort, gzip};

/// The answer for the asset served as `name`, or `None` when no asset has that name.
pub(super) fn response(name: &str, accepts_gzip: bool) -> Option<Response> {
    let asset = quire_reader::asset(name)?;
    let packed = if accepts_gzip { gzipped(asset) } else { None };
    let gzipped = packed.is_some();
    let mut response = Response::new(Body::from(
        packed.unwrap_or_else(|| Bytes::from_static(asset.bytes)),
    ));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzipped {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    Some(response)
}

/// The asset's gzip stream, compressed once for the life of the process; `None` for an asset
/// that compression would not make smaller (or that failed to compress: it goes out plain).
fn gzipped(asset: &Asset) -> Option<Bytes> {
    static PACKED: OnceLock<Vec<(&'static str, Option<Bytes>)>> = OnceLock::new();
    let packed = PACKED.get_or_init(|| {
        quire_reader::assets()
            .iter()
            .map(|a| {
                let packed = gzip(a.bytes, Effort::Thorough)
                    .ok()
                    .filter(|packed| packed.len() < a.bytes.len());
                (a.name, packed)
            })
            .collect()
    });
    packed
        .iter()
        .find(|(name, _)| *name == asset.name)
        .and_then(|(_, packed)| packed.clone())
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn assets_go_out_gzipped_to_clients_that_take_it_and_inflate_to_their_bytes() {
        for asset in quire_reader::assets() {
            let plain = response(&asset.path, false).expect("a plain answer");
            assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
            let Some(packed) = gzipped(asset) else {
                continue;
            };
            assert!(packed.len() < asset.bytes.len(), "{}", asset.name);
            let mut inflated = Vec::new();
            flate2::read::GzDecoder::new(&packed[..])
                .read_to_end(&mut inflated)
                .expect("a gzip stream");
            assert_eq!(inflated, asset.bytes, "{}", asset.name);
            let answer = response(&asset.path, true).expect("a gzip answer");
            assert_eq!(answer.headers()[header::CONTENT_ENCODING], "gzip");
            assert_eq!(answer.headers()[header::VARY], "accept-encoding");
        }
        let css = quire_reader::assets()
            .iter()
            .find(|a| a.name == "reader.css")
            .expect("the stylesheet");
        assert!(gzipped(css).is_some_and(|p| p.len() * 2 < css.bytes.len()));
        assert!(response("reader.0000000000.css", true).is_none());
    }
}
