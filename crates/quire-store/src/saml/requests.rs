//! Sign-ins started with a provider: the AuthnRequest quire sends the identity provider (by
//! HTTP-Redirect), and the row that remembers it until the response comes back. The row's id
//! is the request's `ID`, which the response must name in `InResponseTo`, and the relay state
//! the identity provider hands back; it says where the person started.

use std::io::Write as _;

use base64::Engine as _;

use super::metadata::ServiceProvider;
use super::{Provider, load};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::{clock, ids, params};

/// How long a started sign-in waits for the identity provider's response.
pub const REQUEST_TTL_MS: i64 = 10 * 60 * 1000;

/// A sign-in just started.
#[derive(Clone, Debug)]
pub struct Started {
    pub provider: Provider,
    /// The AuthnRequest's `ID`, also the relay state.
    pub request_id: String,
    pub issued_at: i64,
}

/// Starts a sign-in with the active provider `provider_id`, which sends the person back to
/// `return_to` (checked by the caller) once signed in. Anyone may start one: the row expires
/// after [`REQUEST_TTL_MS`], and expired rows go as new sign-ins start.
pub fn start(c: &mut dyn Conn, org_id: &str, provider_id: &str, return_to: &str) -> StoreResult<Started> {
    let provider = load(c, org_id, provider_id)?;
    if !provider.is_active() {
        return Err(StoreError::invalid(format!(
            "SAML provider {provider_id:?} is pending: an administrator must set its `entityID`, `ssoURL` and `certificate` first"
        )));
    }
    let now = clock::now_ms();
    c.execute("DELETE FROM saml_requests WHERE expires_at < ?1", params![now])?;
    // An xs:ID may not start with a digit.
    let request_id = format!("_{}", ids::random_base62(32));
    c.execute(
        "INSERT INTO saml_requests (id, provider_id, return_to, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            request_id.clone(),
            provider.id.clone(),
            return_to,
            now,
            now + REQUEST_TTL_MS
        ],
    )?;
    Ok(Started {
        provider,
        request_id,
        issued_at: now,
    })
}

/// The AuthnRequest of `started` for the service provider `sp`: asks for an email NameID and a
/// response posted to the ACS URL.
pub fn authn_request_xml(started: &Started, sp: &ServiceProvider) -> String {
    let issued = clock::format_ms(started.issued_at);
    format!(
        concat!(
            r#"<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion""#,
            r#" ID="{id}" Version="2.0" IssueInstant="{issued}" Destination="{destination}""#,
            r#" AssertionConsumerServiceURL="{acs}" ProtocolBinding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST">"#,
            "<saml:Issuer>{issuer}</saml:Issuer>",
            r#"<samlp:NameIDPolicy Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress" AllowCreate="true"/>"#,
            "</samlp:AuthnRequest>"
        ),
        id = started.request_id,
        issued = issued,
        destination = super::metadata::escape(&started.provider.sso_url),
        acs = super::metadata::escape(&sp.acs_url),
        issuer = super::metadata::escape(&sp.entity_id),
    )
}

/// The `SAMLRequest` parameter of the HTTP-Redirect binding: the request DEFLATE-compressed
/// (raw, no zlib header) and base64-encoded.
pub fn redirect_parameter(xml: &str) -> String {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let deflated = encoder
        .write_all(xml.as_bytes())
        .and_then(|()| encoder.finish())
        .unwrap_or_default();
    base64::engine::general_purpose::STANDARD.encode(deflated)
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    #[test]
    fn the_redirect_parameter_inflates_to_the_request() {
        let xml = "<samlp:AuthnRequest ID=\"_x\"/>".repeat(20);
        let packed = redirect_parameter(&xml);
        let raw = base64::engine::general_purpose::STANDARD.decode(packed).unwrap();
        let mut inflated = String::new();
        flate2::read::DeflateDecoder::new(&raw[..])
            .read_to_string(&mut inflated)
            .unwrap();
        assert_eq!(inflated, xml);
    }
}
