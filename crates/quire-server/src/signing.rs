//! What the instance's signing key (`quire_store::instance::signing_key`) signs: visitor-claims
//! tokens and the API tokens of URL lookups (HS256 JWTs), expiring download URLs and sites'
//! preview tokens.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// HMAC-SHA256 of `message` under `key`.
pub fn mac(key: &[u8], message: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length, so the error arm is never taken.
    match <Hmac<Sha256> as KeyInit>::new_from_slice(key) {
        Ok(mut mac) => {
            mac.update(message);
            mac.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

/// A compact HS256 JSON Web Token over `claims`.
pub fn jwt(key: &[u8], claims: &serde_json::Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signing_input = format!("{header}.{payload}");
    let signature = URL_SAFE_NO_PAD.encode(mac(key, signing_input.as_bytes()));
    format!("{signing_input}.{signature}")
}

/// The claims of a JWT made by [`jwt`] under `key`, when its signature holds and its `exp`
/// (seconds since the epoch) is after `now_s`.
pub fn jwt_claims(key: &[u8], token: &str, now_s: i64) -> Option<serde_json::Value> {
    let (signing_input, signature) = token.rsplit_once('.')?;
    let (header, payload) = signing_input.split_once('.')?;
    if header != URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","typ":"JWT"}"#) {
        return None;
    }
    let expected = URL_SAFE_NO_PAD.encode(mac(key, signing_input.as_bytes()));
    if !same(&expected, signature) {
        return None;
    }
    let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()?;
    (claims["exp"].as_i64()? > now_s).then_some(claims)
}

/// Whether two strings are equal, in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A URL-safe signature of `message`, for links that must not be guessable.
pub fn sign(key: &[u8], message: &str) -> String {
    let digest: Vec<u8> = mac(key, message.as_bytes()).into_iter().take(20).collect();
    URL_SAFE_NO_PAD.encode(digest)
}

/// Checks a signature made by [`sign`] in constant time.
pub fn verify(key: &[u8], message: &str, signature: &str) -> bool {
    same(&sign(key, message), signature)
}

/// How long a preview URL (`GET .../publishing/preview`) lets its holder read the site.
pub const PREVIEW_TTL_MS: i64 = 3_600_000;

/// A preview token of a site, good until `expires` (ms since the epoch): `{expires}.{signature}`.
pub fn preview_token(key: &[u8], site_id: &str, expires: i64) -> String {
    format!(
        "{expires}.{}",
        sign(key, &format!("site-preview:{site_id}:{expires}"))
    )
}

/// Whether `token` is a preview token of the site, unexpired at `now`.
pub fn preview_holds(key: &[u8], site_id: &str, token: &str, now: i64) -> bool {
    let Some((expires, signature)) = token.split_once('.') else {
        return false;
    };
    let Ok(expires_ms) = expires.parse::<i64>() else {
        return false;
    };
    expires_ms > now && verify(key, &format!("site-preview:{site_id}:{expires_ms}"), signature)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jwt_matches_a_known_hs256_vector() {
        // RFC 7515-style check: the signature verifies over header.payload.
        let token = jwt(b"secret", &serde_json::json!({"sub": "u1"}));
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let expected =
            URL_SAFE_NO_PAD.encode(mac(b"secret", format!("{}.{}", parts[0], parts[1]).as_bytes()));
        assert_eq!(parts[2], expected);
        assert!(verify(b"k", "m", &sign(b"k", "m")));
        assert!(!verify(b"k", "m", &sign(b"k", "n")));
    }

    #[test]
    fn a_preview_token_holds_for_its_site_until_it_expires() {
        let token = preview_token(b"k", "site1", 1_000);
        assert!(preview_holds(b"k", "site1", &token, 999));
        assert!(!preview_holds(b"k", "site1", &token, 1_000), "expired");
        assert!(!preview_holds(b"k", "site2", &token, 0), "another site");
        assert!(!preview_holds(b"other", "site1", &token, 0), "another instance");
        let later = token.replacen("1000", "9000", 1);
        assert!(!preview_holds(b"k", "site1", &later, 0), "an expiry moved");
        for junk in ["", ".", "x.y", "1000", "1000."] {
            assert!(!preview_holds(b"k", "site1", junk, 0), "{junk:?}");
        }
    }

    #[test]
    fn a_jwt_reads_back_under_its_key_until_it_expires() {
        let token = jwt(b"k", &serde_json::json!({"site": "s1", "exp": 100}));
        assert_eq!(jwt_claims(b"k", &token, 99).unwrap()["site"], "s1");
        assert!(jwt_claims(b"k", &token, 100).is_none(), "expired");
        assert!(jwt_claims(b"other", &token, 0).is_none(), "another key");
        let no_exp = jwt(b"k", &serde_json::json!({"site": "s1"}));
        assert!(jwt_claims(b"k", &no_exp, 0).is_none(), "no expiry: refused");
        let (head, _) = token.rsplit_once('.').unwrap();
        let forged = format!("{head}.{}", URL_SAFE_NO_PAD.encode(b"forged"));
        assert!(jwt_claims(b"k", &forged, 0).is_none());
        for junk in ["", ".", "a.b", "a.b.c", "a.b.c.d"] {
            assert!(jwt_claims(b"k", junk, 0).is_none(), "{junk:?}");
        }
    }
}
