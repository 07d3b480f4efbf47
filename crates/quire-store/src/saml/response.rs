//! The identity provider's answer to a sign-in (a SAML `Response` posted to the ACS URL),
//! checked before anything is believed: its signature (`signature`), who issued it, where it
//! was sent, who it is for, when it is valid, and which started sign-in it answers. What it
//! says about the person is read only from the element the signature covers.

use std::collections::BTreeMap;

use roxmltree::Node;

use super::Provider;
use super::metadata::ServiceProvider;
use super::refusal::Refusal;
use super::signature::{SigningKey, verify_enveloped};

pub const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
pub const ASSERTION: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
const SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";
const BEARER: &str = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/// The largest `SAMLResponse` form field accepted (base64); real responses are a few KB.
pub const MAX_RESPONSE_BASE64: usize = 256 * 1024;
/// The most XML nodes a response may have.
pub const MAX_NODES: u32 = 10_000;
/// How far the identity provider's clock may be from ours.
pub const CLOCK_SKEW_MS: i64 = 2 * 60 * 1000;
/// At most this many attributes, of this many values each, are kept.
pub const MAX_ATTRIBUTES: usize = 100;
pub const MAX_VALUES: usize = 50;

/// What a checked response says.
#[derive(Clone, Debug)]
pub struct Verified {
    pub assertion_id: String,
    /// The started sign-in it answers.
    pub in_response_to: String,
    pub email: String,
    pub name: Option<String>,
    /// The assertion's attributes, by name.
    pub attributes: BTreeMap<String, Vec<String>>,
    /// Until when the assertion may be presented: kept to refuse a replay until then.
    pub valid_until: i64,
}

/// Decodes the `SAMLResponse` form field (base64 of the XML).
pub fn decode(field: &str) -> Result<String, Refusal> {
    if field.len() > MAX_RESPONSE_BASE64 {
        return Err(Refusal::Malformed(format!(
            "the response is larger than {MAX_RESPONSE_BASE64} bytes"
        )));
    }
    let bytes =
        super::base64_spaced(field).map_err(|_| Refusal::Malformed("SAMLResponse is not base64".into()))?;
    String::from_utf8(bytes).map_err(|_| Refusal::Malformed("the response is not UTF-8".into()))
}

fn child<'a, 'i>(node: Node<'a, 'i>, namespace: &str, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| {
        n.is_element() && n.tag_name().namespace() == Some(namespace) && n.tag_name().name() == name
    })
}

fn children<'a, 'i>(
    node: Node<'a, 'i>,
    namespace: &'static str,
    name: &'static str,
) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(move |n| {
        n.is_element() && n.tag_name().namespace() == Some(namespace) && n.tag_name().name() == name
    })
}

fn text<'a>(node: Node<'a, '_>) -> String {
    node.descendants()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect::<String>()
        .trim()
        .to_string()
}

/// An `xs:dateTime` in milliseconds since the epoch.
fn instant(what: &str, value: &str) -> Result<i64, Refusal> {
    let parsed = time::OffsetDateTime::parse(value.trim(), &time::format_description::well_known::Rfc3339)
        .map_err(|_| Refusal::Malformed(format!("{what} {value:?} is not a date and time")))?;
    Ok(i64::try_from(parsed.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX))
}

/// Checks `xml`, the response to a sign-in with `provider`, at `now_ms`.
pub fn verify(
    xml: &str,
    provider: &Provider,
    sp: &ServiceProvider,
    now_ms: i64,
) -> Result<Verified, Refusal> {
    let cert = super::certificate::parse(&provider.certificate, now_ms)
        .map_err(|e| Refusal::Configuration(e.message))?;
    let key = SigningKey::from_certificate(&cert.der)?;
    let options = roxmltree::ParsingOptions {
        allow_dtd: false,
        nodes_limit: MAX_NODES,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, options)
        .map_err(|e| Refusal::Malformed(format!("the response is not well-formed XML: {e}")))?;
    let response = doc.root_element();
    if response.tag_name().namespace() != Some(PROTOCOL) || response.tag_name().name() != "Response" {
        return Err(Refusal::Malformed("the document is not a samlp:Response".into()));
    }
    if child(response, ASSERTION, "EncryptedAssertion").is_some() {
        return Err(Refusal::Unsupported(
            "encrypted assertions are not supported: turn assertion encryption off at the identity provider"
                .into(),
        ));
    }
    let assertions: Vec<Node> = children(response, ASSERTION, "Assertion").collect();
    let [assertion] = assertions.as_slice() else {
        return Err(Refusal::Malformed(format!(
            "the response holds {} assertions; exactly one is accepted",
            assertions.len()
        )));
    };
    let assertion = *assertion;

    // The status first: a failed sign-in is often unsigned, and says more than "unsigned".
    let status = child(response, PROTOCOL, "Status")
        .and_then(|s| child(s, PROTOCOL, "StatusCode"))
        .and_then(|c| c.attribute("Value"))
        .unwrap_or("");
    if status != SUCCESS {
        let message = child(response, PROTOCOL, "Status")
            .and_then(|s| child(s, PROTOCOL, "StatusMessage"))
            .map(text)
            .unwrap_or_default();
        return Err(Refusal::Status(
            format!("the identity provider answered {status:?} {message}")
                .trim_end()
                .to_string(),
        ));
    }

    let response_signed = verify_enveloped(response, &key)?;
    let assertion_signed = verify_enveloped(assertion, &key)?;
    if !response_signed && !assertion_signed {
        return Err(Refusal::Unsigned);
    }

    if let Some(destination) = response.attribute("Destination")
        && destination != sp.acs_url
    {
        return Err(Refusal::Destination(format!(
            "the response was sent to {destination:?}, not this provider's ACS URL {:?}",
            sp.acs_url
        )));
    }
    for issuer in [
        child(response, ASSERTION, "Issuer"),
        child(assertion, ASSERTION, "Issuer"),
    ]
    .into_iter()
    .flatten()
    {
        let issuer = text(issuer);
        if issuer != provider.entity_id {
            return Err(Refusal::Issuer(format!(
                "issued by {issuer:?}, not the provider's entityID {:?}",
                provider.entity_id
            )));
        }
    }
    if child(assertion, ASSERTION, "Issuer").is_none() {
        return Err(Refusal::Malformed("the assertion has no Issuer".into()));
    }

    let subject = child(assertion, ASSERTION, "Subject")
        .ok_or_else(|| Refusal::Malformed("the assertion has no Subject".into()))?;
    let confirmation = children(subject, ASSERTION, "SubjectConfirmation")
        .find(|c| c.attribute("Method") == Some(BEARER))
        .and_then(|c| child(c, ASSERTION, "SubjectConfirmationData"))
        .ok_or_else(|| Refusal::Malformed("the subject has no bearer SubjectConfirmationData".into()))?;
    let recipient = confirmation.attribute("Recipient").unwrap_or("");
    if recipient != sp.acs_url {
        return Err(Refusal::Destination(format!(
            "the assertion's Recipient is {recipient:?}, not this provider's ACS URL {:?}",
            sp.acs_url
        )));
    }

    let conditions = child(assertion, ASSERTION, "Conditions")
        .ok_or_else(|| Refusal::Malformed("the assertion has no Conditions".into()))?;
    let restrictions: Vec<Node> = children(conditions, ASSERTION, "AudienceRestriction").collect();
    if restrictions.is_empty() {
        return Err(Refusal::Audience("the assertion names no audience".into()));
    }
    for restriction in restrictions {
        let audiences: Vec<String> = children(restriction, ASSERTION, "Audience").map(text).collect();
        if !audiences.contains(&sp.entity_id) {
            return Err(Refusal::Audience(format!(
                "the assertion is for {audiences:?}, not this provider's entity id {:?}",
                sp.entity_id
            )));
        }
    }

    let mut valid_until = i64::MAX;
    let mut window = |what: &str, node: Node| -> Result<(), Refusal> {
        if let Some(value) = node.attribute("NotBefore") {
            let at = instant(&format!("{what} NotBefore"), value)?;
            if now_ms + CLOCK_SKEW_MS < at {
                return Err(Refusal::NotYetValid(format!("{what} is valid from {value}")));
            }
        }
        if let Some(value) = node.attribute("NotOnOrAfter") {
            let at = instant(&format!("{what} NotOnOrAfter"), value)?;
            if now_ms - CLOCK_SKEW_MS >= at {
                return Err(Refusal::Expired(format!("{what} expired at {value}")));
            }
            valid_until = valid_until.min(at + CLOCK_SKEW_MS);
        }
        Ok(())
    };
    window("the assertion's Conditions", conditions)?;
    window("the subject confirmation", confirmation)?;
    if valid_until == i64::MAX {
        return Err(Refusal::Malformed("the assertion sets no NotOnOrAfter".into()));
    }
    if let Some(issued) = assertion.attribute("IssueInstant") {
        let at = instant("the assertion's IssueInstant", issued)?;
        if now_ms + CLOCK_SKEW_MS < at {
            return Err(Refusal::NotYetValid(format!(
                "the assertion was issued in the future ({issued})"
            )));
        }
    }

    let in_response_to = confirmation.attribute("InResponseTo").unwrap_or("");
    if in_response_to.is_empty() {
        return Err(Refusal::UnknownRequest(
            "the assertion answers no request: sign-ins must start at quire (the provider's startURL), not at the identity provider".into(),
        ));
    }
    if let Some(answered) = response.attribute("InResponseTo")
        && answered != in_response_to
    {
        return Err(Refusal::UnknownRequest(format!(
            "the response answers {answered:?} but its assertion {in_response_to:?}"
        )));
    }
    let assertion_id = assertion
        .attribute("ID")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Refusal::Malformed("the assertion has no ID".into()))?;

    let mut attributes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for statement in children(assertion, ASSERTION, "AttributeStatement") {
        for attribute in children(statement, ASSERTION, "Attribute").take(MAX_ATTRIBUTES) {
            let Some(name) = attribute.attribute("Name") else {
                continue;
            };
            let values: Vec<String> = children(attribute, ASSERTION, "AttributeValue")
                .take(MAX_VALUES)
                .map(text)
                .collect();
            if attributes.len() < MAX_ATTRIBUTES || attributes.contains_key(name) {
                attributes.entry(name.to_string()).or_default().extend(values);
            }
        }
    }
    let name_id = child(subject, ASSERTION, "NameID").map(text).unwrap_or_default();
    let email = [name_id.as_str()]
        .into_iter()
        .chain(
            EMAIL_ATTRIBUTES
                .iter()
                .filter_map(|a| attributes.get(*a).and_then(|v| v.first()).map(String::as_str)),
        )
        .find_map(|candidate| crate::validate::email("email", candidate).ok())
        .ok_or(Refusal::NoEmail)?;
    let name = NAME_ATTRIBUTES
        .iter()
        .find_map(|a| {
            attributes
                .get(*a)
                .and_then(|v| v.first())
                .filter(|v| !v.is_empty())
                .cloned()
        })
        .or_else(|| {
            let given = GIVEN_NAME
                .iter()
                .find_map(|a| attributes.get(*a).and_then(|v| v.first()))?;
            let surname = SURNAME
                .iter()
                .find_map(|a| attributes.get(*a).and_then(|v| v.first()));
            Some(match surname {
                Some(s) => format!("{given} {s}"),
                None => given.clone(),
            })
        });
    Ok(Verified {
        assertion_id: assertion_id.to_string(),
        in_response_to: in_response_to.to_string(),
        email,
        name,
        attributes,
        valid_until,
    })
}

/// Where identity providers put the email when the NameID is not one (Okta and Keycloak's
/// names, Entra ID's claim URI).
const EMAIL_ATTRIBUTES: &[&str] = &[
    "email",
    "mail",
    "emailAddress",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
];
const NAME_ATTRIBUTES: &[&str] = &[
    "displayName",
    "name",
    "http://schemas.microsoft.com/identity/claims/displayname",
];
const GIVEN_NAME: &[&str] = &[
    "givenName",
    "firstName",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname",
];
const SURNAME: &[&str] = &[
    "sn",
    "surname",
    "lastName",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn provider() -> Provider {
        Provider {
            id: "p".into(),
            org_id: "o".into(),
            label: "IdP".into(),
            entity_id: "https://idp.test/metadata".into(),
            sso_url: "https://idp.test/sso".into(),
            certificate: include_str!("testdata/idp-cert.pem").into(),
            default_team_id: None,
            default_team: None,
            default_role: None,
            created_at: 0,
            updated_at: 0,
        }
    }

    fn sp() -> ServiceProvider {
        ServiceProvider {
            entity_id: "https://quire.test/metadata".into(),
            acs_url: "https://quire.test/acs".into(),
        }
    }

    /// 2026-11-29T12:01:00Z, inside the fixture's validity.
    const DURING: i64 = 1_795_953_660_000;

    #[test]
    fn a_response_signed_elsewhere_is_read_from_its_signed_assertion() {
        let verified = verify(
            include_str!("testdata/signxml-response.xml"),
            &provider(),
            &sp(),
            DURING,
        )
        .unwrap();
        assert_eq!(verified.email, "ada@example.com");
        assert_eq!(verified.in_response_to, "_req1");
        assert_eq!(verified.assertion_id, "_assert1");
        assert_eq!(verified.attributes["groups"], ["engineering", "café"]);
        assert_eq!(
            verified.name.as_deref(),
            Some("Ada & Lovelace <ada> \"quoted\"\tTab")
        );
        // Expired two minutes of skew after its NotOnOrAfter of 12:05.
        let late = verify(
            include_str!("testdata/signxml-response.xml"),
            &provider(),
            &sp(),
            DURING + 6 * 60_000,
        );
        assert!(matches!(late, Err(Refusal::Expired(_))), "{late:?}");
    }

    #[test]
    fn documents_with_a_dtd_or_too_large_are_refused_before_anything_else() {
        let dtd = r#"<!DOCTYPE r [<!ENTITY a "aaaa">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&a;</samlp:Response>"#;
        assert!(matches!(
            verify(dtd, &provider(), &sp(), DURING),
            Err(Refusal::Malformed(_))
        ));
        let wide = format!("<r>{}</r>", "<a/>".repeat(MAX_NODES as usize));
        assert!(matches!(
            verify(&wide, &provider(), &sp(), DURING),
            Err(Refusal::Malformed(_))
        ));
        assert!(matches!(
            decode(&"A".repeat(MAX_RESPONSE_BASE64 + 4)),
            Err(Refusal::Malformed(_))
        ));
    }
}
