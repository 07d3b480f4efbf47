//! A test identity provider: SAML responses signed with the fixture key
//! (`fixtures/saml/idp-key.pem`, whose certificate the tests configure).
//!
//! Each signed element is written in its exclusive-canonical form already (namespaces declared
//! where used, attributes sorted, no empty-element tags, no whitespace between elements), so
//! its digest is the SHA-256 of the text as written, with no canonicalizer of quire's involved;
//! the store's unit tests check quire's canonicalization against libxml2's separately.

use base64::Engine as _;
use sha2::Digest as _;

const KEY: &str = include_str!("../fixtures/saml/idp-key.pem");
const SAML: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
const SAMLP: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
const DS: &str = "http://www.w3.org/2000/09/xmldsig#";

/// What a response says, each field changeable to make a bad one.
#[derive(Clone, Debug)]
pub struct Answer {
    pub issuer: String,
    /// The ACS URL the response is sent to (`Destination`) and the assertion's `Recipient`.
    pub destination: String,
    pub recipient: String,
    pub audience: String,
    pub in_response_to: String,
    pub assertion_id: String,
    pub email: String,
    pub name: String,
    /// When it was issued, and its validity (`xs:dateTime`s fixed when the answer is made, so
    /// that a signed element is the same text each time it is written).
    pub issued: String,
    pub not_before: String,
    pub not_on_or_after: String,
    /// Sign the response instead of the assertion.
    pub sign_response: bool,
}

impl Answer {
    /// A valid answer to the sign-in `request_id` started with a provider whose quire entity id
    /// and ACS URL are given.
    pub fn to(request_id: &str, acs: &str, audience: &str, email: &str) -> Answer {
        Answer {
            issuer: "https://idp.example.com/metadata".into(),
            destination: acs.into(),
            recipient: acs.into(),
            audience: audience.into(),
            in_response_to: request_id.into(),
            assertion_id: format!("_a{}", request_id.trim_start_matches('_')),
            email: email.into(),
            name: "Ada Lovelace".into(),
            issued: instant(0),
            not_before: instant(-60),
            not_on_or_after: instant(300),
            sign_response: false,
        }
    }

    /// The same answer valid from `from_s` to `until_s` seconds from now.
    pub fn valid(mut self, from_s: i64, until_s: i64) -> Answer {
        self.not_before = instant(from_s);
        self.not_on_or_after = instant(until_s);
        self
    }
}

fn instant(offset_s: i64) -> String {
    let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(offset_s);
    at.replace_nanosecond(0)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The assertion, canonical, with `signature` after its issuer. It declares the `saml`
/// namespace itself, as its canonical form does whether it is the apex or inside the response
/// (whose own element uses only `samlp`).
pub fn assertion(a: &Answer, signature: &str) -> String {
    format!(
        concat!(
            "<saml:Assertion xmlns:saml=\"{saml}\" ID=\"{id}\" IssueInstant=\"{now}\" Version=\"2.0\">",
            "<saml:Issuer>{issuer}</saml:Issuer>{signature}",
            "<saml:Subject><saml:NameID Format=\"urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress\">{email}</saml:NameID>",
            "<saml:SubjectConfirmation Method=\"urn:oasis:names:tc:SAML:2.0:cm:bearer\">",
            "<saml:SubjectConfirmationData InResponseTo=\"{irt}\" NotOnOrAfter=\"{until}\" Recipient=\"{recipient}\"></saml:SubjectConfirmationData>",
            "</saml:SubjectConfirmation></saml:Subject>",
            "<saml:Conditions NotBefore=\"{from}\" NotOnOrAfter=\"{until}\">",
            "<saml:AudienceRestriction><saml:Audience>{audience}</saml:Audience></saml:AudienceRestriction></saml:Conditions>",
            "<saml:AttributeStatement><saml:Attribute Name=\"displayName\"><saml:AttributeValue>{name}</saml:AttributeValue></saml:Attribute>",
            "<saml:Attribute Name=\"department\"><saml:AttributeValue>engineering</saml:AttributeValue></saml:Attribute></saml:AttributeStatement>",
            "</saml:Assertion>"
        ),
        saml = SAML,
        id = a.assertion_id,
        now = a.issued,
        issuer = escape(&a.issuer),
        signature = signature,
        email = escape(&a.email),
        irt = a.in_response_to,
        until = a.not_on_or_after,
        from = a.not_before,
        recipient = escape(&a.recipient),
        audience = escape(&a.audience),
        name = escape(&a.name),
    )
}

/// The response around `assertion`, canonical, with `signature` after its issuer.
pub fn response(a: &Answer, assertion: &str, signature: &str) -> String {
    format!(
        concat!(
            "<samlp:Response xmlns:samlp=\"{samlp}\" Destination=\"{dest}\" ID=\"_r{id}\" InResponseTo=\"{irt}\" IssueInstant=\"{now}\" Version=\"2.0\">",
            "<saml:Issuer xmlns:saml=\"{saml}\">{issuer}</saml:Issuer>{signature}",
            "<samlp:Status><samlp:StatusCode Value=\"urn:oasis:names:tc:SAML:2.0:status:Success\"></samlp:StatusCode></samlp:Status>",
            "{assertion}</samlp:Response>"
        ),
        saml = SAML,
        samlp = SAMLP,
        dest = escape(&a.destination),
        id = a.assertion_id,
        irt = a.in_response_to,
        now = a.issued,
        issuer = escape(&a.issuer),
        signature = signature,
        assertion = assertion,
    )
}

/// An enveloped signature over `canonical`, the element whose `ID` is `id`.
pub fn signature(id: &str, canonical: &str) -> String {
    let digest = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(canonical.as_bytes()));
    let signed_info = format!(
        concat!(
            "<ds:SignedInfo xmlns:ds=\"{ds}\">",
            "<ds:CanonicalizationMethod Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"></ds:CanonicalizationMethod>",
            "<ds:SignatureMethod Algorithm=\"http://www.w3.org/2001/04/xmldsig-more#rsa-sha256\"></ds:SignatureMethod>",
            "<ds:Reference URI=\"#{id}\"><ds:Transforms>",
            "<ds:Transform Algorithm=\"http://www.w3.org/2000/09/xmldsig#enveloped-signature\"></ds:Transform>",
            "<ds:Transform Algorithm=\"http://www.w3.org/2001/10/xml-exc-c14n#\"></ds:Transform></ds:Transforms>",
            "<ds:DigestMethod Algorithm=\"http://www.w3.org/2001/04/xmlenc#sha256\"></ds:DigestMethod>",
            "<ds:DigestValue>{digest}</ds:DigestValue></ds:Reference></ds:SignedInfo>"
        ),
        ds = DS,
        id = id,
        digest = digest,
    );
    let value = base64::engine::general_purpose::STANDARD.encode(rsa_sign(signed_info.as_bytes()));
    // In the document the SignedInfo inherits `ds` from the Signature; its canonical form
    // declares it itself, as written above.
    let inner = signed_info.replacen(&format!(" xmlns:ds=\"{DS}\""), "", 1);
    format!(
        "<ds:Signature xmlns:ds=\"{DS}\">{inner}<ds:SignatureValue>{value}</ds:SignatureValue><ds:KeyInfo><ds:X509Data><ds:X509Certificate>ignored</ds:X509Certificate></ds:X509Data></ds:KeyInfo></ds:Signature>"
    )
}

fn rsa_sign(message: &[u8]) -> Vec<u8> {
    let body: String = KEY.lines().filter(|l| !l.starts_with("-----")).collect();
    let der = base64::engine::general_purpose::STANDARD.decode(body).unwrap();
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        message,
        &mut signature,
    )
    .unwrap();
    signature
}

/// The response for `a`, signed as it says, as the XML text.
pub fn signed_xml(a: &Answer) -> String {
    if a.sign_response {
        let plain = assertion(a, "");
        let unsigned = response(a, &plain, "");
        let id = format!("_r{}", a.assertion_id);
        response(a, &plain, &signature(&id, &unsigned))
    } else {
        let unsigned = assertion(a, "");
        let signed = assertion(a, &signature(&a.assertion_id, &unsigned));
        response(a, &signed, "")
    }
}

/// The `SAMLResponse` form field for `xml`.
pub fn form_field(xml: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(xml.as_bytes())
}
