//! The `redirects` of `.gitbook.yaml`: old URL paths of the space and the files whose pages
//! they now lead to.
//!
//! ```yaml
//! redirects:
//!   previous/page: new-folder/page.md
//!   old/path/: some/README.md
//! ```
//!
//! A source is a path below the place where a site shows the space (the site space's URL),
//! normalized by [`normalize_source`], which the reader applies to the paths it is asked too:
//! percent-decoded, without leading, trailing or doubled slashes and `.` segments. Case is kept
//! and matched exactly: URL paths are case-sensitive, as quire's page URLs and site redirects
//! are, and GitBook documents no folding. A destination is a file path relative to `root`, read
//! as a link target of a file at the root (a folder stands for its readme); the import turns it
//! into the id of the page imported from that file (`import::ImportOutcome::redirects`).

use serde_yaml_ng::Value;

use crate::import::{CONFIG_FILE, percent_decode};

/// Redirects taken from one `.gitbook.yaml`; the ones after are left out (warned). Each is a
/// row the reader looks up by its source, so the number bounds storage, not a request's cost.
pub const MAX_REDIRECTS: usize = 1_000;

/// The longest source, in bytes once normalized: the limit of a site redirect's source.
pub const SOURCE_MAX: usize = 512;

/// A redirect of the import: requests for `source` (see [`normalize_source`]) within the space
/// are sent to the page `page_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedRedirect {
    pub source: String,
    pub page_id: String,
}

/// A redirect as the configuration declares it: its normalized source, the destination as
/// written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Declared {
    pub source: String,
    pub destination: String,
}

/// Why a source is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadSource {
    Empty,
    QueryOrFragment,
    Url,
    ClimbsUp,
    ControlCharacter,
    TooLong,
}

impl BadSource {
    fn why(self) -> String {
        match self {
            BadSource::Empty => "names the space's first page, whose URL always serves it".to_string(),
            BadSource::QueryOrFragment => "has a query or a fragment; only paths are redirected".to_string(),
            BadSource::Url => "is a URL; a source is a path within the space".to_string(),
            BadSource::ClimbsUp => "climbs with `..`".to_string(),
            BadSource::ControlCharacter => "holds a control character".to_string(),
            BadSource::TooLong => format!("is longer than {SOURCE_MAX} bytes"),
        }
    }
}

/// A source, or a request path within a site space, as redirects are matched: percent-decoded,
/// segments joined by single slashes, without `.` segments or slashes at either end
/// (`/old/./path/` → `old/path`).
pub fn normalize_source(raw: &str) -> Result<String, BadSource> {
    let raw = raw.trim();
    if raw.contains(['?', '#']) {
        return Err(BadSource::QueryOrFragment);
    }
    if raw.contains("://") || raw.starts_with("//") {
        return Err(BadSource::Url);
    }
    let decoded = percent_decode(raw);
    if decoded.chars().any(char::is_control) {
        return Err(BadSource::ControlCharacter);
    }
    let mut segments = Vec::new();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err(BadSource::ClimbsUp),
            segment => segments.push(segment),
        }
    }
    let source = segments.join("/");
    if source.is_empty() {
        return Err(BadSource::Empty);
    }
    if source.len() > SOURCE_MAX {
        return Err(BadSource::TooLong);
    }
    Ok(source)
}

/// A scalar of the mapping as text (`2019: old.md` has a number for a key).
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The redirects `.gitbook.yaml` declares, in its order: sources normalized, the first of a
/// source kept, at most [`MAX_REDIRECTS`]; each entry left out is warned.
pub(crate) fn declared(value: Option<&Value>, warnings: &mut Vec<String>) -> Vec<Declared> {
    let mapping = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Mapping(mapping)) => mapping,
        Some(_) => {
            warnings.push(format!(
                "{CONFIG_FILE}: redirects is not a mapping of old paths to files; ignored"
            ));
            return Vec::new();
        }
    };
    if mapping.len() > MAX_REDIRECTS {
        warnings.push(format!(
            "{CONFIG_FILE}: {} redirects after the first {MAX_REDIRECTS} are not imported",
            mapping.len() - MAX_REDIRECTS
        ));
    }
    let mut out: Vec<Declared> = Vec::new();
    for (key, value) in mapping.iter().take(MAX_REDIRECTS) {
        let Some(raw) = scalar(key) else {
            warnings.push(format!("{CONFIG_FILE}: a redirect source is not a path; skipped"));
            continue;
        };
        let source = match normalize_source(&raw) {
            Ok(source) => source,
            Err(bad) => {
                let why = bad.why();
                warnings.push(format!(
                    "{CONFIG_FILE}: the redirect source {raw:?} {why}; skipped"
                ));
                continue;
            }
        };
        let Some(destination) = scalar(value).filter(|d| !d.trim().is_empty()) else {
            warnings.push(format!(
                "{CONFIG_FILE}: the redirect from {raw:?} names no file; skipped"
            ));
            continue;
        };
        if let Some(first) = out.iter().find(|d| d.source == source) {
            let kept = &first.destination;
            warnings.push(format!(
                "{CONFIG_FILE}: the redirect from {raw:?} repeats the source {source:?} (to {kept:?}); skipped"
            ));
            continue;
        }
        out.push(Declared {
            source,
            destination: destination.trim().to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_normalized_paths() {
        for (raw, want) in [
            ("previous/page", "previous/page"),
            ("/old/path/", "old/path"),
            ("  ./a//b/./c/ ", "a/b/c"),
            ("installation/docker.md", "installation/docker.md"),
            ("Getting-Started", "Getting-Started"),
            ("caf%C3%A9/menu", "café/menu"),
            ("with space", "with space"),
            ("100%", "100%"),
        ] {
            assert_eq!(normalize_source(raw).as_deref(), Ok(want), "{raw}");
        }
        for (raw, bad) in [
            ("", BadSource::Empty),
            ("/", BadSource::Empty),
            ("./", BadSource::Empty),
            ("old?page=2", BadSource::QueryOrFragment),
            ("old#part", BadSource::QueryOrFragment),
            ("https://example.com/old", BadSource::Url),
            ("//example.com/old", BadSource::Url),
            ("a/../b", BadSource::ClimbsUp),
            ("a%0Ab", BadSource::ControlCharacter),
        ] {
            assert_eq!(normalize_source(raw), Err(bad), "{raw}");
        }
        let long = "a/".repeat(SOURCE_MAX / 2) + "b";
        assert_eq!(normalize_source(&long), Err(BadSource::TooLong));
        assert!(normalize_source(&long[2..]).is_ok());
    }

    fn parse(yaml: &str) -> (Vec<(String, String)>, Vec<String>) {
        let config: Value = serde_yaml_ng::from_str(yaml).unwrap();
        let mut warnings = Vec::new();
        let declared = declared(config.get("redirects"), &mut warnings)
            .into_iter()
            .map(|d| (d.source, d.destination))
            .collect();
        (declared, warnings)
    }

    #[test]
    fn declared_redirects_keep_their_order_and_skip_what_cannot_be_a_redirect() {
        let (declared, warnings) = parse(
            "redirects:\n  b/old: ./b.md\n  /a/old/: a/\n  2019: 'news.md'\n  a/old: other.md\n  \
             '?x': x.md\n  empty:\n  ~: y.md\n",
        );
        let pairs: Vec<(&str, &str)> = declared.iter().map(|(s, d)| (s.as_str(), d.as_str())).collect();
        assert_eq!(pairs, [("b/old", "./b.md"), ("a/old", "a/"), ("2019", "news.md")]);
        assert_eq!(
            warnings,
            [
                ".gitbook.yaml: the redirect from \"a/old\" repeats the source \"a/old\" (to \"a/\"); skipped",
                ".gitbook.yaml: the redirect source \"?x\" has a query or a fragment; only paths are redirected; skipped",
                ".gitbook.yaml: the redirect from \"empty\" names no file; skipped",
                ".gitbook.yaml: a redirect source is not a path; skipped",
            ]
        );
        assert_eq!(parse("root: ./\n"), (Vec::new(), Vec::new()));
        assert_eq!(parse("redirects:\n"), (Vec::new(), Vec::new()));
        assert_eq!(
            parse("redirects:\n  - a.md\n").1,
            [".gitbook.yaml: redirects is not a mapping of old paths to files; ignored"]
        );
    }

    #[test]
    fn at_most_max_redirects_are_taken() {
        let mut yaml = String::from("redirects:\n");
        for i in 0..MAX_REDIRECTS + 3 {
            yaml += &format!("  old/{i}: new.md\n");
        }
        let (declared, warnings) = parse(&yaml);
        assert_eq!(declared.len(), MAX_REDIRECTS);
        assert_eq!(declared.last().map(|d| d.0.as_str()), Some("old/999"));
        assert_eq!(
            warnings,
            [".gitbook.yaml: 3 redirects after the first 1000 are not imported"]
        );
    }
}
