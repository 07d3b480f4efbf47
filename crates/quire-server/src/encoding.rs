//! Compressed answers for the few heavy bodies that are cached per revision (the page tree of a
//! big space is 8 MB of JSON). They are compressed once, when first asked for, and kept beside
//! the plain body; every other answer is small and goes out as it is, because compressing it on
//! each request would cost more than sending it.

use std::cell::RefCell;
use std::io::Write as _;

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::{Compress, Compression, Crc, FlushCompress, Status};

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
    match effort {
        Effort::Thorough => {
            let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 4 + 64), Compression::new(6));
            encoder.write_all(body)?;
            encoder.finish().map(Bytes::from)
        }
        Effort::Fast => FAST.with(|cell| gzip_with(&mut cell.borrow_mut(), body)),
    }
}

thread_local! {
    /// A deflate state of about 250 KB per thread, reset for each small answer: allocating and
    /// zeroing a new one for every 3 KB page took a quarter of the server's CPU while a cold
    /// page cache filled.
    static FAST: RefCell<Compress> = RefCell::new(Compress::new(Compression::fast(), false));
}

/// A gzip member (RFC 1952) around the raw deflate stream of `body` made with `compress`.
fn gzip_with(compress: &mut Compress, body: &[u8]) -> std::io::Result<Bytes> {
    // ID1 ID2, CM = deflate, no flags, no time, no extra flags, OS unknown.
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    compress.reset();
    let mut out = Vec::with_capacity(HEADER.len() + body.len() / 2 + 64);
    out.extend_from_slice(&HEADER);
    loop {
        let consumed = usize::try_from(compress.total_in())
            .unwrap_or(body.len())
            .min(body.len());
        let status = compress
            .compress_vec(&body[consumed..], &mut out, FlushCompress::Finish)
            .map_err(std::io::Error::other)?;
        if status == Status::StreamEnd {
            break;
        }
        // Out of room: compress_vec writes only into spare capacity.
        out.reserve(out.capacity().max(1024));
    }
    let mut crc = Crc::new();
    crc.update(body);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    // ISIZE is the length modulo 2^32 by definition.
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    Ok(Bytes::from(out))
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

    fn gunzip(packed: &[u8]) -> Vec<u8> {
        use std::io::Read as _;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(packed)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn gzip_round_trips() {
        let body = br#"{"pages":[{"id":"a","title":"A"}]}"#.repeat(100);
        for effort in [Effort::Thorough, Effort::Fast] {
            let packed = gzip(&body, effort).unwrap();
            assert!(packed.len() < body.len() / 4, "{effort:?}");
            assert_eq!(gunzip(&packed), body, "{effort:?}");
        }
    }

    /// The fast compressor is reused by a thread: each answer must still be a whole stream of
    /// its own, whatever came before it, empty or larger than any buffer.
    #[test]
    fn reused_compressor_makes_independent_streams() {
        let mut noise = Vec::new();
        let mut x: u32 = 1;
        for _ in 0..300_000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            noise.push((x >> 16) as u8);
        }
        let bodies: [&[u8]; 4] = [b"{\"a\":1}", b"", &noise, b"{\"a\":1}"];
        let mut first = None;
        for body in bodies {
            let packed = gzip(body, Effort::Fast).unwrap();
            assert_eq!(gunzip(&packed), body);
            if body == b"{\"a\":1}" {
                // The same input gives the same bytes: nothing of an earlier answer leaks in.
                assert_eq!(*first.get_or_insert_with(|| packed.clone()), packed);
            }
        }
    }
}
