//! Reviewed snapshots of answers (insta, in `tests/api/snapshots/`): the whole shape of an
//! answer, with what changes from run to run and from engine to engine named or redacted.
//!
//! A new or changed snapshot fails the test; `INSTA_UPDATE=always cargo test ...` writes it,
//! to be read and committed. CI (`CI=true`) never writes one.

use serde_json::{Map, Value};

use super::{TestApp, TestUser};

/// Stable names for the values of a test that change from run to run (ids, keys, the server's
/// address): each stands for its value wherever that appears in an answer, whole or inside a
/// string (ids stand inside URLs) or an object's key (maps keyed by id).
pub struct Stable {
    names: Vec<(String, String)>,
}

impl Stable {
    /// The server's address is `[server]`.
    pub fn new(app: &TestApp) -> Stable {
        let mut stable = Stable { names: Vec::new() };
        stable.name(&app.base, "[server]");
        stable
    }

    /// `placeholder` stands for `value` from now on.
    #[track_caller]
    pub fn name(&mut self, value: &str, placeholder: &str) -> &mut Stable {
        assert!(!value.is_empty(), "an empty value for {placeholder}");
        if let Some((_, known)) = self.names.iter().find(|(v, _)| v == value) {
            assert_eq!(known, placeholder, "{value} is named twice");
        } else {
            self.names.push((value.to_string(), placeholder.to_string()));
            // The longest first, so that no value is replaced inside a longer one.
            self.names
                .sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
        }
        self
    }

    /// A user's id and email, as `[{name}]` and `[{name}-email]`.
    pub fn user(&mut self, user: &TestUser, name: &str) -> &mut Stable {
        self.name(&user.id, &format!("[{name}]"));
        self.name(&user.email, &format!("[{name}-email]"))
    }

    /// `v` with every named value replaced by its placeholder.
    pub fn apply(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.apply(i)).collect()),
            Value::Object(map) => {
                let mut entries: Vec<(String, Value)> =
                    map.iter().map(|(k, v)| (self.text(k), self.apply(v))).collect();
                // An object keyed by ids (`customizations.siteSpaces`) has no order of its own:
                // the ids are random, so it is kept in the order of their placeholders.
                if map.keys().any(|k| self.text(k) != *k) {
                    entries.sort_by(|a, b| a.0.cmp(&b.0));
                }
                Value::Object(entries.into_iter().collect::<Map<String, Value>>())
            }
            other => other.clone(),
        }
    }

    fn text(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (value, placeholder) in &self.names {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), placeholder);
            }
        }
        out
    }
}

/// A redaction of a timestamp: it must be RFC 3339 (as every timestamp the API answers).
pub fn timestamp(value: insta::internals::Content, path: insta::internals::ContentPath<'_>) -> String {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{path}: not a string: {value:?}"));
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("{path}: {text:?} is not RFC 3339: {e}"));
    "[timestamp]".into()
}

/// A redaction of a space's revision: a non-empty string.
pub fn revision(value: insta::internals::Content, path: insta::internals::ContentPath<'_>) -> String {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("{path}: not a string: {value:?}"));
    assert!(!text.is_empty(), "{path}: an empty revision");
    "[revision]".into()
}

/// Asserts an answer against the reviewed snapshot `$name` of the calling test file's
/// `snapshots/` folder, after `$stable` ([`Stable`]) named its ids; its timestamps
/// (`createdAt`, `updatedAt`, `deletedAt`, at any depth) must be RFC 3339 and its spaces'
/// `revision`s non-empty strings, and both are redacted.
macro_rules! assert_shape {
    ($name:literal, $stable:expr, $value:expr $(,)?) => {
        insta::assert_json_snapshot!($name, $stable.apply(&$value), {
            ".**.createdAt" => insta::dynamic_redaction($crate::support::snapshot::timestamp),
            ".**.updatedAt" => insta::dynamic_redaction($crate::support::snapshot::timestamp),
            ".**.deletedAt" => insta::dynamic_redaction($crate::support::snapshot::timestamp),
            ".**.revision" => insta::dynamic_redaction($crate::support::snapshot::revision),
        })
    };
}
pub(crate) use assert_shape;
