//! Compressed answers for the few heavy bodies that are cached per revision (the page tree of a
//! big space is 8 MB of JSON). They are compressed once, when first asked for, and kept beside
//! the plain body; every other answer is small and goes out as it is, because compressing it on
//! each request would cost more than sending it.

use std::io::Write as _;

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;

/// Whether the client takes gzip (RFC 9110 §12.5.3): a `gzip`, `x-gzip` or `*` coding whose
/// weight is not zero. A coding named twice counts by its first mention.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    let mut star = None;
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let weighted = parts
                .filter_map(|p| {
                    p.trim()
                        .strip_prefix("q=")
                        .or_else(|| p.trim().strip_prefix("Q="))
                })
                .next()
                .is_none_or(|q| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0));
            if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                return weighted;
            }
            if coding == "*" && star.is_none() {
                star = Some(weighted);
            }
        }
    }
    star.unwrap_or(false)
}

/// How hard to compress.
#[derive(Clone, Copy, Debug)]
pub enum Effort {
    /// zlib's default level: for large answers compressed once and sent many times (a page
    /// tree: 8 MB to 0.5 MB).
    Thorough,
    /// The fastest level, for small answers compressed once per page: level 6 took a fifth of
    /// the CPU while a cold cache filled, level 1 compresses a 3 KB page almost as well.
    Fast,
}

/// The gzip stream of `body`.
pub fn gzip(body: &[u8], effort: Effort) -> std::io::Result<Bytes> {
    let level = match effort {
        Effort::Thorough => Compression::new(6),
        Effort::Fast => Compression::fast(),
    };
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4 + 64), level);
    encoder.write_all(body)?;
    encoder.finish().map(kept)
}

/// Bytes to keep (in a cache), in an allocation of their length. A `Vec` grown while writing
/// has up to twice the room it uses, and `Bytes::from` keeps the whole allocation: the caches
/// of gzip-compressed answers held about 1.5 times what they weighed (a reader page: 6 KB of
/// gzip in a 9 KB block), which the allocator cannot give back. Shrinking in place does not
/// help either, as mimalloc keeps a block that shrinks by less than half. One copy, when
/// the room is worth it.
pub fn kept(bytes: Vec<u8>) -> Bytes {
    if bytes.capacity() - bytes.len() > bytes.len() / 16 {
        Bytes::copy_from_slice(&bytes)
    } else {
        Bytes::from(bytes)
    }
}

/// An answer's bytes to keep as they are sent: gzip-compressed (quickly, see [`Effort::Fast`])
/// for a client that takes it, otherwise as they are; either way at their size ([`kept`]).
pub fn as_sent(body: Vec<u8>, gzipped: bool) -> std::io::Result<Bytes> {
    if gzipped {
        gzip(&body, Effort::Fast)
    } else {
        Ok(kept(body))
    }
}

/// An answer whose JSON was serialized (and cached) beforehand.
pub fn json_bytes(body: Bytes) -> Response {
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A JSON answer that is sent compressed to clients that take it: gzip-encoded when `gzipped`
/// (the body is then already compressed). It varies with `Accept-Encoding` either way, so that
/// caches keep the two apart.
pub fn json(body: Bytes, gzipped: bool) -> Response {
    let mut response = json_bytes(body);
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if gzipped {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(value: &str) -> bool {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        accepts_gzip(&headers)
    }

    #[test]
    fn reads_accept_encoding() {
        assert!(accepts("gzip"));
        assert!(accepts("br, GZIP;q=0.5"));
        assert!(accepts("deflate, x-gzip"));
        assert!(accepts("*"));
        assert!(accepts("gzip;q=1.0, *;q=0"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("gzip; q=0.000"));
        assert!(!accepts("*;q=0, br"));
        assert!(!accepts("br, deflate"));
        assert!(!accepts("identity"));
        assert!(!accepts(""));
        assert!(!accepts("*, gzip;q=0"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read as _;
        let body = br#"{"pages":[{"id":"a","title":"A"}]}"#.repeat(100);
        for effort in [Effort::Thorough, Effort::Fast] {
            let packed = gzip(&body, effort).unwrap();
            assert!(packed.len() < body.len() / 4, "{effort:?}");
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&packed[..])
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, body, "{effort:?}");
        }
    }

    #[test]
    fn kept_bytes_take_no_more_room_than_they_need() {
        let mut roomy = Vec::with_capacity(4096);
        roomy.extend_from_slice(b"six kilobytes of gzip");
        let copied = kept(roomy);
        assert_eq!(&copied[..], b"six kilobytes of gzip");
        // A Bytes made from a Vec gives that Vec back, with the room it had.
        assert_eq!(Vec::from(copied).capacity(), 21);
        let mut snug = Vec::with_capacity(1000);
        snug.extend_from_slice(&[7u8; 990]);
        assert_eq!(Vec::from(kept(snug)).capacity(), 1000, "little room: not copied");
        let packed = gzip(&b"a reader page ".repeat(1000), Effort::Fast).unwrap();
        let len = packed.len();
        assert!(Vec::from(packed).capacity() - len <= len / 16);
    }
}
