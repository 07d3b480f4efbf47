//! Checking an enveloped XML signature (XML-DSig) on one element against the identity
//! provider's certificate, in the narrow profile SAML identity providers use (decision 0087):
//! one `Reference` to the signed element's own `ID`, the enveloped-signature and exclusive
//! canonicalization transforms, SHA-2 digests, RSA PKCS#1 v1.5 or ECDSA signatures.
//!
//! Signature wrapping is refused by construction: the caller names the element it will read
//! (the response, or its one assertion), the signature must be that element's own child and
//! reference that element's `ID`, and the `ID` must be unique in the document. The key inside
//! the message (`KeyInfo`) is never used, only the certificate the administrator configured.

use ring::signature::{self as sig, UnparsedPublicKey, VerificationAlgorithm};
use roxmltree::Node;
use sha2::Digest as _;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::c14n::{EXC_C14N, canonicalize};
use super::refusal::Refusal;

pub const DSIG: &str = "http://www.w3.org/2000/09/xmldsig#";
const ENVELOPED: &str = "http://www.w3.org/2000/09/xmldsig#enveloped-signature";

/// The public key of the configured certificate, as ring verifies with it.
pub struct SigningKey {
    kind: KeyKind,
    /// RSA: the PKCS#1 `RSAPublicKey`; EC: the uncompressed point.
    bytes: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyKind {
    Rsa,
    EcP256,
    EcP384,
}

impl SigningKey {
    /// The key of the certificate `der` (as stored by `certificate::parse`).
    pub fn from_certificate(der: &[u8]) -> Result<SigningKey, Refusal> {
        let unusable = |why: &str| Refusal::Configuration(format!("the provider's certificate {why}"));
        let (_, cert) = X509Certificate::from_der(der).map_err(|_| unusable("does not parse"))?;
        let spki = cert.public_key();
        let oid = spki.algorithm.algorithm.to_id_string();
        let kind = match oid.as_str() {
            "1.2.840.113549.1.1.1" => KeyKind::Rsa,
            "1.2.840.10045.2.1" => {
                let curve = spki
                    .algorithm
                    .parameters
                    .as_ref()
                    .and_then(|p| p.as_oid().ok())
                    .map(|o| o.to_id_string());
                match curve.as_deref() {
                    Some("1.2.840.10045.3.1.7") => KeyKind::EcP256,
                    Some("1.3.132.0.34") => KeyKind::EcP384,
                    _ => return Err(unusable("has an elliptic curve other than P-256 or P-384")),
                }
            }
            _ => return Err(unusable("has a key that is neither RSA nor ECDSA")),
        };
        Ok(SigningKey {
            kind,
            bytes: spki.subject_public_key.data.to_vec(),
        })
    }

    fn algorithm(&self, uri: &str) -> Result<&'static dyn VerificationAlgorithm, Refusal> {
        let rsa = |alg: &'static dyn VerificationAlgorithm| {
            if self.kind == KeyKind::Rsa {
                Some(alg)
            } else {
                None
            }
        };
        let found: Option<&'static dyn VerificationAlgorithm> = match uri {
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256" => rsa(&sig::RSA_PKCS1_2048_8192_SHA256),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384" => rsa(&sig::RSA_PKCS1_2048_8192_SHA384),
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512" => rsa(&sig::RSA_PKCS1_2048_8192_SHA512),
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256" if self.kind == KeyKind::EcP256 => {
                Some(&sig::ECDSA_P256_SHA256_FIXED)
            }
            "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384" if self.kind == KeyKind::EcP384 => {
                Some(&sig::ECDSA_P384_SHA384_FIXED)
            }
            "http://www.w3.org/2000/09/xmldsig#rsa-sha1" => {
                return Err(Refusal::Unsupported(
                    "SHA-1 signatures are not accepted: set the identity provider to sign with SHA-256"
                        .into(),
                ));
            }
            _ => None,
        };
        found.ok_or_else(|| {
            Refusal::Unsupported(format!(
                "the signature method {uri:?} is not supported with the provider's certificate (RSA or ECDSA with SHA-256, -384 or -512 are)"
            ))
        })
    }
}

fn is_dsig(node: &Node, name: &str) -> bool {
    node.is_element() && node.tag_name().namespace() == Some(DSIG) && node.tag_name().name() == name
}

/// The element children of `node`, for walking a signature's fixed structure.
fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(Node::is_element)
}

fn algorithm_of<'a>(node: Node<'a, '_>) -> Result<&'a str, Refusal> {
    node.attribute("Algorithm")
        .ok_or_else(|| Refusal::Malformed(format!("ds:{} has no Algorithm", node.tag_name().name())))
}

/// The `PrefixList` of an `InclusiveNamespaces` child of a canonicalization step.
fn inclusive_prefixes<'a>(method: Node<'a, '_>) -> Vec<&'a str> {
    method
        .children()
        .find(|n| {
            n.is_element()
                && n.tag_name().name() == "InclusiveNamespaces"
                && n.tag_name().namespace() == Some(EXC_C14N)
        })
        .and_then(|n| n.attribute("PrefixList"))
        .map(|list| list.split_whitespace().collect())
        .unwrap_or_default()
}

fn decode(what: &str, text: Option<&str>) -> Result<Vec<u8>, Refusal> {
    super::base64_spaced(text.unwrap_or(""))
        .map_err(|_| Refusal::Malformed(format!("ds:{what} is not base64")))
}

/// Checks the signature that `signed` carries as its own child, if any: Ok(false) when it has
/// none, Ok(true) when it has one and it holds; a refusal otherwise.
pub fn verify_enveloped(signed: Node, key: &SigningKey) -> Result<bool, Refusal> {
    let mut signatures = elements(signed).filter(|n| is_dsig(n, "Signature"));
    let Some(signature) = signatures.next() else {
        return Ok(false);
    };
    if signatures.next().is_some() {
        return Err(Refusal::Wrapped(format!(
            "{} carries more than one signature",
            signed.tag_name().name()
        )));
    }
    let id = signed
        .attribute("ID")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| Refusal::Malformed(format!("the signed {} has no ID", signed.tag_name().name())))?;
    let holders = signed
        .document()
        .descendants()
        .filter(|n| {
            n.is_element()
                && n.attributes()
                    .any(|a| a.name().eq_ignore_ascii_case("id") && a.value() == id)
        })
        .count();
    if holders != 1 {
        return Err(Refusal::Wrapped(format!(
            "the ID {id:?} is on {holders} elements"
        )));
    }

    let mut parts = elements(signature);
    let signed_info = parts
        .next()
        .filter(|n| is_dsig(n, "SignedInfo"))
        .ok_or_else(|| Refusal::Malformed("ds:Signature does not start with ds:SignedInfo".into()))?;
    let signature_value = parts
        .next()
        .filter(|n| is_dsig(n, "SignatureValue"))
        .ok_or_else(|| Refusal::Malformed("ds:SignedInfo is not followed by ds:SignatureValue".into()))?;

    let mut info = elements(signed_info);
    let canonicalization = info
        .next()
        .filter(|n| is_dsig(n, "CanonicalizationMethod"))
        .ok_or_else(|| Refusal::Malformed("ds:SignedInfo has no ds:CanonicalizationMethod".into()))?;
    let method = info
        .next()
        .filter(|n| is_dsig(n, "SignatureMethod"))
        .ok_or_else(|| Refusal::Malformed("ds:SignedInfo has no ds:SignatureMethod".into()))?;
    let references: Vec<Node> = info.collect();
    let [reference] = references.as_slice() else {
        return Err(Refusal::Wrapped(format!(
            "ds:SignedInfo has {} references; exactly one, to the signed element, is accepted",
            references.len()
        )));
    };
    if !is_dsig(reference, "Reference") {
        return Err(Refusal::Malformed(
            "ds:SignedInfo holds something other than a ds:Reference".into(),
        ));
    }
    if reference.attribute("URI") != Some(&format!("#{id}")) {
        return Err(Refusal::Wrapped(format!(
            "the signature references {:?}, not the {} it is in ({id:?})",
            reference.attribute("URI").unwrap_or(""),
            signed.tag_name().name()
        )));
    }
    let canonical_method = algorithm_of(canonicalization)?;
    if canonical_method != EXC_C14N {
        return Err(Refusal::Unsupported(format!(
            "the canonicalization {canonical_method:?} is not supported (exclusive canonicalization is)"
        )));
    }
    let verifier = key.algorithm(algorithm_of(method)?)?;

    // The reference: [enveloped-signature, exc-c14n] in that order, a digest, its value.
    let mut steps = elements(*reference);
    let mut next = steps.next();
    let mut transforms = Vec::new();
    if let Some(list) = next.filter(|n| is_dsig(n, "Transforms")) {
        transforms = elements(list).collect();
        next = steps.next();
    }
    let digest_method = next
        .filter(|n| is_dsig(n, "DigestMethod"))
        .ok_or_else(|| Refusal::Malformed("ds:Reference has no ds:DigestMethod".into()))?;
    let digest_value = steps
        .next()
        .filter(|n| is_dsig(n, "DigestValue"))
        .ok_or_else(|| Refusal::Malformed("ds:Reference has no ds:DigestValue".into()))?;
    let algorithms = transforms
        .iter()
        .map(|t| algorithm_of(*t))
        .collect::<Result<Vec<_>, _>>()?;
    let (enveloped, exclusive) = match transforms.as_slice() {
        [e, x]
            if algorithms == [ENVELOPED, EXC_C14N] && is_dsig(e, "Transform") && is_dsig(x, "Transform") =>
        {
            (e, x)
        }
        _ => {
            return Err(Refusal::Unsupported(format!(
                "the reference's transforms {algorithms:?} are not supported (the enveloped-signature transform, then exclusive canonicalization, are)"
            )));
        }
    };
    let _ = enveloped;

    let canonical = canonicalize(signed, Some(signature.id()), &inclusive_prefixes(*exclusive));
    let digest = match algorithm_of(digest_method)? {
        "http://www.w3.org/2001/04/xmlenc#sha256" => sha2::Sha256::digest(canonical.as_bytes()).to_vec(),
        "http://www.w3.org/2001/04/xmldsig-more#sha384" => {
            sha2::Sha384::digest(canonical.as_bytes()).to_vec()
        }
        "http://www.w3.org/2001/04/xmlenc#sha512" => sha2::Sha512::digest(canonical.as_bytes()).to_vec(),
        "http://www.w3.org/2000/09/xmldsig#sha1" => {
            return Err(Refusal::Unsupported(
                "SHA-1 digests are not accepted: set the identity provider to SHA-256".into(),
            ));
        }
        other => {
            return Err(Refusal::Unsupported(format!(
                "the digest {other:?} is not supported"
            )));
        }
    };
    if digest != decode("DigestValue", digest_value.text())? {
        return Err(Refusal::Tampered(format!(
            "the {} changed after it was signed (its digest differs)",
            signed.tag_name().name()
        )));
    }

    let signed_bytes = canonicalize(signed_info, None, &inclusive_prefixes(canonicalization));
    let value = decode("SignatureValue", signature_value.text())?;
    UnparsedPublicKey::new(verifier, &key.bytes)
        .verify(signed_bytes.as_bytes(), &value)
        .map_err(|_| {
            Refusal::BadSignature("the signature does not verify with the provider's certificate".into())
        })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Signed by signxml (libxml2's canonicalization), not by quire: see `testdata/sign.py`.
    const SIGNED: &str = include_str!("testdata/signxml-response.xml");

    fn key() -> SigningKey {
        let cert = super::super::certificate::parse(include_str!("testdata/idp-cert.pem"), 1_800_000_000_000)
            .unwrap();
        SigningKey::from_certificate(&cert.der).unwrap()
    }

    fn check(xml: &str) -> Result<bool, Refusal> {
        let doc = roxmltree::Document::parse(xml).unwrap();
        let assertion = doc
            .root_element()
            .children()
            .find(|n| n.has_tag_name((super::super::response::ASSERTION, "Assertion")))
            .unwrap();
        verify_enveloped(assertion, &key())
    }

    #[test]
    fn a_signature_made_by_another_implementation_verifies() {
        assert_eq!(check(SIGNED), Ok(true));
    }

    #[test]
    fn a_changed_assertion_is_tampered() {
        let changed = SIGNED.replace("ada@example.com", "eve@example.com");
        assert!(
            matches!(check(&changed), Err(Refusal::Tampered(_))),
            "{:?}",
            check(&changed)
        );
        // Whitespace is content too.
        let spaced = SIGNED.replace("<saml:Subject>", "<saml:Subject> ");
        assert!(matches!(check(&spaced), Err(Refusal::Tampered(_))));
    }

    #[test]
    fn a_changed_signed_info_does_not_verify() {
        let changed = SIGNED.replace("<ds:SignedInfo><ds:Canon", "<ds:SignedInfo> <ds:Canon");
        assert!(
            matches!(check(&changed), Err(Refusal::BadSignature(_))),
            "{:?}",
            check(&changed)
        );
    }

    #[test]
    fn a_reference_to_another_element_is_wrapping() {
        let moved = SIGNED.replace("ID=\"_assert1\"", "ID=\"_evil\"");
        assert!(
            matches!(check(&moved), Err(Refusal::Wrapped(_))),
            "{:?}",
            check(&moved)
        );
        let twice = SIGNED.replace("ID=\"_resp1\"", "ID=\"_assert1\"");
        assert!(
            matches!(check(&twice), Err(Refusal::Wrapped(_))),
            "{:?}",
            check(&twice)
        );
    }

    /// Whatever verifies says exactly what was signed: of many one-byte changes anywhere in the
    /// document (a fixed seed, so CI replays the same ones), none panics, and each one that
    /// still verifies leaves the canonical forms of the assertion and of its SignedInfo as they
    /// were (it changed whitespace inside a tag, or the unsigned KeyInfo).
    #[test]
    fn no_change_that_verifies_changes_what_was_signed() {
        let canonical = |xml: &str| -> Option<(String, String)> {
            let doc = roxmltree::Document::parse(xml).ok()?;
            let assertion = doc
                .root_element()
                .children()
                .find(|n| n.has_tag_name((super::super::response::ASSERTION, "Assertion")))?;
            let signature = elements(assertion).find(|n| is_dsig(n, "Signature"))?;
            let info = elements(signature).next()?;
            Some((
                canonicalize(assertion, Some(signature.id()), &[]),
                canonicalize(info, None, &[]),
            ))
        };
        let original = canonical(SIGNED).unwrap();
        let key = key();
        let mut state: u64 = 0x5eed_5a31;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let replacements = b"<>/=\"' \n\tazAZ09:#_-&;";
        let mut verified = 0;
        for _ in 0..3000 {
            let mut bytes = SIGNED.as_bytes().to_vec();
            let at = (next() % bytes.len() as u64) as usize;
            bytes[at] = replacements[(next() % replacements.len() as u64) as usize];
            let Ok(xml) = String::from_utf8(bytes) else {
                continue;
            };
            let Ok(doc) = roxmltree::Document::parse(&xml) else {
                continue;
            };
            let Some(assertion) = doc
                .root_element()
                .children()
                .find(|n| n.has_tag_name((super::super::response::ASSERTION, "Assertion")))
            else {
                continue;
            };
            if verify_enveloped(assertion, &key) == Ok(true) {
                verified += 1;
                assert_eq!(
                    canonical(&xml).as_ref(),
                    Some(&original),
                    "a change at byte {at} verified"
                );
            }
        }
        assert!(
            verified > 0,
            "some changes are insignificant (the unsigned KeyInfo)"
        );
    }

    #[test]
    fn sha1_is_refused_by_name() {
        let old = SIGNED.replace(
            "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
            "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
        );
        let err = check(&old).unwrap_err();
        assert!(
            matches!(&err, Refusal::Unsupported(m) if m.contains("SHA-1")),
            "{err:?}"
        );
    }
}
