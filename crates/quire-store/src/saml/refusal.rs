//! Why an identity provider's response was not accepted: each reason has a stable name, logged
//! and shown, so that an administrator setting up a provider can tell what to fix.

use std::fmt;

/// A response refused, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a SAML response quire can read.
    Malformed(String),
    /// Neither the response nor its assertion is signed.
    Unsigned,
    /// The signed content changed after signing.
    Tampered(String),
    /// The signature does not verify with the provider's certificate.
    BadSignature(String),
    /// The signature covers something other than what would be read (signature wrapping).
    Wrapped(String),
    /// An algorithm or feature outside what quire accepts.
    Unsupported(String),
    /// The provider's own settings cannot check anything (its certificate).
    Configuration(String),
    /// The identity provider answered with a failure status.
    Status(String),
    /// Issued by another entity than the provider's `entityID`.
    Issuer(String),
    /// Sent to another place than this provider's ACS URL.
    Destination(String),
    /// Meant for another service provider.
    Audience(String),
    /// Outside the assertion's validity window.
    Expired(String),
    NotYetValid(String),
    /// Answers no sign-in started here, or one already finished or expired.
    UnknownRequest(String),
    /// An assertion already used once.
    Replay(String),
    /// No email to find or create the person by.
    NoEmail,
    /// The person may not sign in (a disabled membership).
    Refused(String),
}

impl Refusal {
    /// The reason's stable name.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "malformed",
            Refusal::Unsigned => "unsigned",
            Refusal::Tampered(_) => "tampered",
            Refusal::BadSignature(_) => "bad_signature",
            Refusal::Wrapped(_) => "signature_wrapping",
            Refusal::Unsupported(_) => "unsupported",
            Refusal::Configuration(_) => "provider_configuration",
            Refusal::Status(_) => "idp_status",
            Refusal::Issuer(_) => "wrong_issuer",
            Refusal::Destination(_) => "wrong_destination",
            Refusal::Audience(_) => "wrong_audience",
            Refusal::Expired(_) => "expired",
            Refusal::NotYetValid(_) => "not_yet_valid",
            Refusal::UnknownRequest(_) => "unknown_request",
            Refusal::Replay(_) => "replay",
            Refusal::NoEmail => "no_email",
            Refusal::Refused(_) => "membership_disabled",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Refusal::Unsigned => "neither the response nor its assertion is signed",
            Refusal::NoEmail => "the assertion names no email (a NameID or an `email` attribute holding one)",
            Refusal::Malformed(d)
            | Refusal::Tampered(d)
            | Refusal::BadSignature(d)
            | Refusal::Wrapped(d)
            | Refusal::Unsupported(d)
            | Refusal::Configuration(d)
            | Refusal::Status(d)
            | Refusal::Issuer(d)
            | Refusal::Destination(d)
            | Refusal::Audience(d)
            | Refusal::Expired(d)
            | Refusal::NotYetValid(d)
            | Refusal::UnknownRequest(d)
            | Refusal::Replay(d)
            | Refusal::Refused(d) => d,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the sign-in was refused ({}): {}",
            self.reason(),
            self.detail()
        )
    }
}
