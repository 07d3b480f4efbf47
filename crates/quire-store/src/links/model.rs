//! What a link points at and whether it is broken. The API sends links and their locations as
//! GitBook's `ContentReferenceUsage` and `ContentLocation`, with ids where GitBook embeds whole
//! objects: see docs/decisions/0020-links.md.

use std::collections::BTreeMap;

use quire_content::document::ContentRef;
use quire_content::tree::Tree;
use quire_content::{Document, DocumentLink, extract_links};

/// The kinds of references links and backlinks are about; mentions of users, spaces and
/// collections, reusable contents and OpenAPI specifications are not links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Page,
    Anchor,
    File,
    Url,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Page => "page",
            Kind::Anchor => "anchor",
            Kind::File => "file",
            Kind::Url => "url",
        }
    }

    pub fn parse(text: &str) -> Option<Kind> {
        Some(match text {
            "page" => Kind::Page,
            "anchor" => Kind::Anchor,
            "file" => Kind::File,
            "url" => Kind::Url,
            _ => return None,
        })
    }
}

/// The target of a link, resolved against the page it stands on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Target {
    pub kind: Kind,
    /// Another space, when the reference names one.
    pub space: Option<String>,
    /// The page (page and anchor links) or the file.
    pub id: Option<String>,
    pub anchor: Option<String>,
    pub url: Option<String>,
}

impl Target {
    /// The target of `reference` found on `page` of `space_id`; None for references that are not
    /// links.
    pub fn of(reference: &ContentRef, page: &str, space_id: &str) -> Option<Target> {
        // A reference that names this space is a reference within it.
        let other = |space: &Option<String>| space.clone().filter(|s| s != space_id);
        let target = match reference {
            ContentRef::Page { page, space } => Target {
                kind: Kind::Page,
                space: other(space),
                id: Some(page.clone()),
                anchor: None,
                url: None,
            },
            ContentRef::Anchor {
                anchor,
                page: target_page,
                space,
            } => Target {
                kind: Kind::Anchor,
                space: other(space),
                id: Some(target_page.clone().unwrap_or_else(|| page.to_string())),
                anchor: Some(anchor.clone()),
                url: None,
            },
            ContentRef::File { file, space } => Target {
                kind: Kind::File,
                space: other(space),
                id: Some(file.clone()),
                anchor: None,
                url: None,
            },
            ContentRef::Url { url } if !url.is_empty() => Target {
                kind: Kind::Url,
                space: None,
                id: None,
                anchor: None,
                url: Some(url.clone()),
            },
            _ => return None,
        };
        Some(target)
    }

    /// The sort and grouping key of link lists (`link_refs.target_key`).
    pub fn key(&self) -> String {
        let mut key = match self.kind {
            Kind::Url => format!("url:{}", self.url.as_deref().unwrap_or("")),
            Kind::Anchor => format!(
                "anchor:{}#{}",
                self.id.as_deref().unwrap_or(""),
                self.anchor.as_deref().unwrap_or("")
            ),
            kind => format!("{}:{}", kind.as_str(), self.id.as_deref().unwrap_or("")),
        };
        if let Some(space) = &self.space {
            key.push('@');
            key.push_str(space);
        }
        key
    }

    /// Whether the target is absent from `tree`. Anchors are as broken as their page (headings
    /// are not checked); references to other spaces are never broken, as quire does not follow
    /// them. A URL is broken when it is a relative path (`../nope.md`): one that an import or a
    /// markdown write could not resolve to a page or file and kept as written.
    pub fn is_broken(&self, tree: &Tree) -> bool {
        if self.space.is_some() {
            return false;
        }
        match (self.kind, self.id.as_deref()) {
            (Kind::Page | Kind::Anchor, Some(id)) => !tree.pages.contains_key(id),
            (Kind::File, Some(id)) => !tree.files.contains_key(id),
            (Kind::Url, _) => self.url.as_deref().is_some_and(quire_content::is_unresolved_path),
            _ => false,
        }
    }

    /// The page a page or anchor link of this space leads to.
    pub fn local_page(&self) -> Option<&str> {
        match self.kind {
            Kind::Page | Kind::Anchor if self.space.is_none() => self.id.as_deref(),
            _ => None,
        }
    }

    /// The file a file link of this space embeds.
    pub fn local_file(&self) -> Option<&str> {
        match self.kind {
            Kind::File if self.space.is_none() => self.id.as_deref(),
            _ => None,
        }
    }
}

/// `status` of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
#[schema(as = LinkStatus, rename_all = "kebab-case")]
pub enum Status {
    Ok,
    Broken,
    InApp,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Broken => "broken",
            Status::InApp => "in-app",
        }
    }

    /// The status of a link to `target`: broken targets first, then URLs into this quire
    /// (`base` is its public base URL), then the rest.
    pub fn of(target: &Target, broken: bool, base: &str) -> Status {
        if broken {
            Status::Broken
        } else if target.kind == Kind::Url && target.url.as_deref().is_some_and(|u| is_in_app(u, base)) {
            Status::InApp
        } else {
            Status::Ok
        }
    }
}

/// Whether `url` points inside the quire instance whose public base URL is `base`.
pub fn is_in_app(url: &str, base: &str) -> bool {
    url.strip_prefix(base).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with('/') || rest.starts_with('?') || rest.starts_with('#')
    })
}

/// Node types that embed their target (images, files, drawings) rather than refer to it.
fn embeds(node_type: &str) -> bool {
    matches!(
        node_type,
        "images" | "image" | "inline-image" | "file" | "drawing"
    )
}

/// A page's links: each distinct target once, with whether the page embeds it.
pub fn links_of_document(
    document: &Document,
    page_id: &str,
    space_id: &str,
) -> BTreeMap<String, (Target, bool)> {
    let mut out: BTreeMap<String, (Target, bool)> = BTreeMap::new();
    for DocumentLink {
        target, node_type, ..
    } in extract_links(document)
    {
        let Some(target) = Target::of(&target, page_id, space_id) else {
            continue;
        };
        let depends = embeds(&node_type);
        out.entry(target.key())
            .and_modify(|(_, d)| *d |= depends)
            .or_insert((target, depends));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_statuses_and_in_app_urls() {
        let anchor = Target::of(&ContentRef::anchor("setup", None), "p1", "s1").unwrap();
        assert_eq!(anchor.key(), "anchor:p1#setup");
        let other = Target::of(
            &ContentRef::Page {
                page: "p2".into(),
                space: Some("s2".into()),
            },
            "p1",
            "s1",
        )
        .unwrap();
        assert_eq!(other.key(), "page:p2@s2");
        assert!(!other.is_broken(&Tree::default()));
        assert!(
            Target::of(&ContentRef::page("p9"), "p1", "s1")
                .unwrap()
                .is_broken(&Tree::default())
        );
        let url = Target::of(&ContentRef::url("https://docs.test/o/x"), "p1", "s1").unwrap();
        assert_eq!(Status::of(&url, false, "https://docs.test"), Status::InApp);
        assert_eq!(Status::of(&url, false, "https://docs.te"), Status::Ok);
        assert!(Target::of(&ContentRef::Space { space: "s".into() }, "p1", "s1").is_none());
    }

    #[test]
    fn relative_paths_kept_as_urls_are_broken() {
        let tree = Tree::default();
        let url = |u: &str| Target::of(&ContentRef::url(u), "p1", "s1").unwrap();
        for broken in ["../nope.md", "nope.md", "/guide/setup.md", "guide/", "img/a.png"] {
            assert!(url(broken).is_broken(&tree), "{broken}");
        }
        for fine in [
            "https://example.com/x.md",
            "mailto:x@y.z",
            "//cdn.test/a.png",
            "#top",
        ] {
            assert!(!url(fine).is_broken(&tree), "{fine}");
        }
        assert_eq!(
            Status::of(&url("../nope.md"), true, "https://docs.test"),
            Status::Broken
        );
    }
}
