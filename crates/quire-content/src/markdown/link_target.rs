//! Markdown link targets and their resolution into content references.
//!
//! Parsing keeps every target as a `url` reference holding the raw text, because only the
//! server knows the page tree. It then calls [`resolve_links`] with a resolver that uses
//! [`normalize_link_target`] to turn `../guide/setup.md#install` into a page or anchor
//! reference, and `images/a.png` into a file reference.

use crate::document::{ContentRef, Document, for_each_ref_mut};

/// A markdown link target, normalized against the file that contains it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkTarget {
    /// A URL with a scheme (`https:`, `mailto:`) or a protocol-relative one (`//host/x`).
    External(String),
    /// `#anchor` on the current page.
    Anchor(String),
    /// A path from the root of the space's files.
    Path {
        /// For pages, the page path: no `.md`, `README.md` meaning its folder (`""` is the root
        /// page). For other files, the file path.
        path: String,
        /// The `#anchor` part, if any.
        anchor: Option<String>,
        /// Whether the target is a page (a `.md` file or a folder) rather than a file.
        is_page: bool,
    },
}

/// Normalizes `target` found in the markdown file at `current_file` (a path from the root of
/// the space's files, like `guide/setup.md` or `guide/README.md`): joins relative paths to the
/// file's folder (a leading `/` means the root), resolves `.` and `..`, percent-decodes, drops
/// a `?query`, strips `.md`, maps `README.md` to its folder's page and splits off `#anchor`.
/// `None` for an empty target or one that climbs above the root.
pub fn normalize_link_target(current_file: &str, target: &str) -> Option<LinkTarget> {
    let target = target.trim();
    if target.is_empty() {
        return None;
    }
    if target.starts_with("//") || has_scheme(target) {
        return Some(LinkTarget::External(target.to_owned()));
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (
            path,
            Some(percent_decode(anchor)).filter(|anchor| !anchor.is_empty()),
        ),
        None => (target, None),
    };
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    if path.is_empty() {
        return anchor.map(LinkTarget::Anchor);
    }
    let mut segments: Vec<String> = Vec::new();
    if !path.starts_with('/') {
        let folder = current_file.rsplit_once('/').map_or("", |(folder, _)| folder);
        segments.extend(
            folder
                .split('/')
                .filter(|segment| !segment.is_empty())
                .map(str::to_owned),
        );
    }
    for segment in percent_decode(path).split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            segment => segments.push(segment.to_owned()),
        }
    }
    let mut is_page = path.ends_with('/');
    if let Some(last) = segments.last_mut()
        && let Some(stem) = strip_suffix_ignore_case(last, ".md")
    {
        is_page = true;
        if stem.eq_ignore_ascii_case("readme") {
            segments.pop();
        } else {
            *last = stem.to_owned();
        }
    }
    Some(LinkTarget::Path {
        path: segments.join("/"),
        anchor,
        is_page: is_page || segments.is_empty(),
    })
}

/// Whether a `url` reference holds a path into the space's own files (`../nope.md`, `guide/`,
/// `/setup.md`) rather than a URL (with a scheme, or protocol-relative) or an `#anchor`. Imports
/// and markdown writes turn the paths they resolve into page and file references and keep the
/// others as written, so such a URL matched nothing: it is a broken link.
pub fn is_unresolved_path(url: &str) -> bool {
    let url = url.trim();
    !url.is_empty()
        && !url.starts_with('#')
        && !matches!(normalize_link_target("", url), Some(LinkTarget::External(_)))
}

fn strip_suffix_ignore_case<'s>(text: &'s str, suffix: &str) -> Option<&'s str> {
    let split = text.len().checked_sub(suffix.len())?;
    (text.is_char_boundary(split) && text[split..].eq_ignore_ascii_case(suffix)).then(|| &text[..split])
}

fn has_scheme(target: &str) -> bool {
    let Some((scheme, _)) = target.split_once(':') else {
        return false;
    };
    scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[index], hex) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                index += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8(decoded).unwrap_or_else(|_| text.to_owned())
}

/// Replaces every `url` reference of `document` for which `resolve` returns a reference (a
/// page, file or anchor found from the raw target); other references are left alone.
pub fn resolve_links(document: &mut Document, resolve: &dyn Fn(&str) -> Option<ContentRef>) {
    for_each_ref_mut(document, &mut |content_ref| {
        if let ContentRef::Url { url } = content_ref
            && let Some(resolved) = resolve(url)
        {
            *content_ref = resolved;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::markdown_to_document;

    fn path(path: &str, anchor: Option<&str>, is_page: bool) -> Option<LinkTarget> {
        Some(LinkTarget::Path {
            path: path.to_owned(),
            anchor: anchor.map(str::to_owned),
            is_page,
        })
    }

    #[test]
    fn normalizes_relative_targets() {
        let from = "guide/install/linux.md";
        assert_eq!(
            normalize_link_target(from, "../setup.md#install"),
            path("guide/setup", Some("install"), true)
        );
        assert_eq!(
            normalize_link_target(from, "./windows.md"),
            path("guide/install/windows", None, true)
        );
        assert_eq!(
            normalize_link_target(from, "README.md"),
            path("guide/install", None, true)
        );
        assert_eq!(
            normalize_link_target(from, "../../README.md"),
            path("", None, true)
        );
        assert_eq!(normalize_link_target(from, "/faq/"), path("faq", None, true));
        assert_eq!(
            normalize_link_target(from, "images/a%20b.png?raw=1"),
            path("guide/install/images/a b.png", None, false)
        );
        assert_eq!(
            normalize_link_target("README.md", "Getting-Started.MD"),
            path("Getting-Started", None, true)
        );
        assert_eq!(
            normalize_link_target(from, "#usage"),
            Some(LinkTarget::Anchor("usage".into()))
        );
        assert_eq!(
            normalize_link_target(from, "https://x.io/a.md"),
            Some(LinkTarget::External("https://x.io/a.md".into()))
        );
        assert_eq!(
            normalize_link_target(from, "mailto:a@b.c"),
            Some(LinkTarget::External("mailto:a@b.c".into()))
        );
        assert_eq!(
            normalize_link_target(from, "//cdn/x.js"),
            Some(LinkTarget::External("//cdn/x.js".into()))
        );
        assert_eq!(normalize_link_target(from, "../../../up.md"), None);
        assert_eq!(normalize_link_target(from, "  "), None);
    }

    #[test]
    fn resolve_links_replaces_url_references() {
        let mut document = markdown_to_document(
            "[a](setup.md) [b](https://x.io) ![c](img.png)\n\n{% content-ref url=\"setup.md\" %}\n[setup.md](setup.md)\n{% endcontent-ref %}\n",
        )
        .unwrap();
        resolve_links(
            &mut document,
            &|target| match normalize_link_target("guide/README.md", target)? {
                LinkTarget::Path {
                    path, is_page: true, ..
                } => Some(ContentRef::page(&format!("page:{path}"))),
                LinkTarget::Path { path, .. } => Some(ContentRef::file(&format!("file:{path}"))),
                _ => None,
            },
        );
        let mut targets = Vec::new();
        crate::document::for_each_ref(&document, &mut |content_ref, _| targets.push(content_ref.clone()));
        assert_eq!(
            targets,
            [
                ContentRef::page("page:guide/setup"),
                ContentRef::url("https://x.io"),
                ContentRef::file("file:guide/img.png"),
                ContentRef::page("page:guide/setup"),
            ]
        );
    }
}
