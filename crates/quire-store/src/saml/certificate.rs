//! The identity provider's signing certificate, as an administrator pastes it: an X.509
//! certificate in PEM, or the bare base64 of its DER that many identity providers show.

use x509_parser::prelude::{FromDer, X509Certificate};

use crate::error::{StoreError, StoreResult};

/// GitBook's limit on the field.
pub const MAX_CERTIFICATE_CHARS: usize = 10_000;

/// A certificate that parsed and is valid now.
#[derive(Clone, Debug)]
pub struct Certificate {
    /// The certificate as stored: one PEM block, 64-character lines.
    pub pem: String,
    pub der: Vec<u8>,
    /// The end of its validity, in milliseconds since the epoch.
    pub not_after_ms: i64,
}

/// Parses `text` as the `certificate` field: 400 naming the problem when it is not one X.509
/// certificate, or when it is expired or not valid yet at `now_ms`.
pub fn parse(text: &str, now_ms: i64) -> StoreResult<Certificate> {
    let invalid = |why: String| StoreError::invalid(format!("`certificate` {why}"));
    crate::validate::max_len("certificate", text, MAX_CERTIFICATE_CHARS)?;
    let der = der_of(text).map_err(invalid)?;
    let (rest, cert) =
        X509Certificate::from_der(&der).map_err(|e| invalid(format!("is not an X.509 certificate: {e}")))?;
    if !rest.is_empty() {
        return Err(invalid(format!("has {} bytes after the certificate", rest.len())));
    }
    let validity = cert.validity();
    let not_before_ms = validity.not_before.timestamp().saturating_mul(1000);
    let not_after_ms = validity.not_after.timestamp().saturating_mul(1000);
    if now_ms > not_after_ms {
        return Err(invalid(format!(
            "expired on {}",
            crate::clock::format_ms(not_after_ms)
        )));
    }
    if now_ms < not_before_ms {
        return Err(invalid(format!(
            "is not valid before {}",
            crate::clock::format_ms(not_before_ms)
        )));
    }
    let pem = pem_of(&der);
    Ok(Certificate {
        pem,
        der,
        not_after_ms,
    })
}

/// The DER bytes of the one certificate `text` holds, PEM-armoured or not.
fn der_of(text: &str) -> Result<Vec<u8>, String> {
    const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
    const END: &str = "-----END CERTIFICATE-----";
    let text = text.trim();
    let armoured = text.starts_with(BEGIN);
    let body = if let Some(after) = text.strip_prefix(BEGIN) {
        let (body, rest) = after
            .split_once(END)
            .ok_or_else(|| format!("lacks its closing `{END}` line"))?;
        if !rest.trim().is_empty() {
            return Err("must hold one certificate, and nothing after it".into());
        }
        body
    } else if text.starts_with("-----BEGIN") {
        return Err(format!("must be a PEM `{BEGIN}` block"));
    } else {
        text
    };
    if body.chars().all(|c| c.is_ascii_whitespace()) {
        return Err("is empty".into());
    }
    super::base64_spaced(body).map_err(|e| {
        if armoured {
            format!("is not base64 inside its PEM armour: {e}")
        } else {
            format!("is neither a PEM certificate nor the base64 of one: {e}")
        }
    })
}

fn pem_of(der: &[u8]) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut pem = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(&String::from_utf8_lossy(line));
        pem.push('\n');
    }
    pem.push_str("-----END CERTIFICATE-----\n");
    pem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_named() {
        let e = parse("hello", 0).unwrap_err();
        assert!(
            e.message.contains("neither a PEM certificate nor"),
            "{}",
            e.message
        );
        let e = parse("-----BEGIN CERTIFICATE-----\nAAAA\n", 0).unwrap_err();
        assert!(e.message.contains("closing"), "{}", e.message);
        let e = parse("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", 0).unwrap_err();
        assert!(
            e.message.contains("PEM `-----BEGIN CERTIFICATE-----` block"),
            "{}",
            e.message
        );
        let e = parse("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", 0).unwrap_err();
        assert!(e.message.contains("not an X.509 certificate"), "{}", e.message);
    }
}
