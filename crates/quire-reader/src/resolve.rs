//! Where references in content lead: the [`Resolver`] a server gives the renderer, a ready-made
//! one over a revision ([`SpaceResolver`]), and the check that keeps unsafe URLs out of pages.

use std::collections::HashMap;

use quire_content::tree::{FileEntry, Tree};
use quire_content::{ContentRef, Document};

use crate::nav::NavTree;

/// A page a reference leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTarget {
    pub url: String,
    pub title: String,
    pub emoji: Option<String>,
}

/// A file a reference leads to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileTarget {
    /// Where the bytes are served (quire's object store, through the server).
    pub url: String,
    pub name: String,
    pub content_type: String,
    pub size: u64,
    /// Width and height of an image, so that the page does not move when it loads.
    pub dimensions: Option<(u32, u32)>,
}

/// What the renderer asks about the content it renders. Only [`Resolver::page`] and
/// [`Resolver::file`] are needed; the rest have defaults that render the content without them.
pub trait Resolver {
    /// A page of a space (`space` is `None` for the current one).
    fn page(&self, page: &str, space: Option<&str>) -> Option<PageTarget>;

    /// A file of a space (`space` is `None` for the current one).
    fn file(&self, file: &str, space: Option<&str>) -> Option<FileTarget>;

    /// The document of a reusable content, rendered in place of its `reusable-content` block.
    fn reusable_content(&self, _id: &str, _space: Option<&str>) -> Option<Document> {
        None
    }

    /// Whether the blocks of an `if` block are shown to this visitor. The server evaluates
    /// the expression against the visitor's claims (quire-adaptive); the default shows them.
    fn condition(&self, _expression: &str) -> bool {
        true
    }

    /// The name shown for a user mention.
    fn user(&self, _user: &str) -> Option<String> {
        None
    }

    /// Another space of the site (a `space` reference).
    fn space(&self, _space: &str) -> Option<PageTarget> {
        None
    }

    /// The URL of any reference, for links, buttons and menus; `None` when it leads nowhere
    /// a visitor can go (unknown pages, users, unsafe URLs).
    fn href(&self, target: &ContentRef) -> Option<String> {
        match target {
            ContentRef::Url { url } => safe_url(url).map(str::to_owned),
            ContentRef::Page { page, space } => self.page(page, space.as_deref()).map(|page| page.url),
            ContentRef::Anchor {
                anchor,
                page: None,
                space: None,
            } => Some(format!("#{anchor}")),
            ContentRef::Anchor { anchor, page, space } => {
                let page = self.page(page.as_deref()?, space.as_deref())?;
                Some(format!("{}#{anchor}", page.url))
            }
            ContentRef::File { file, space } => self.file(file, space.as_deref()).map(|file| file.url),
            ContentRef::Space { space } => self.space(space).map(|space| space.url),
            _ => None,
        }
    }
}

/// Gives the document of a reusable content by id.
pub type ReusableContents<'a> = &'a dyn Fn(&str) -> Option<Document>;

/// The reusable contents of the same space that `nodes` include (`reusable-content` blocks
/// without another `space`), in order, each once: what a server loads before rendering a
/// page, then again for what those include, up to [`MAX_INCLUDE_DEPTH`] levels.
pub fn reusable_contents_used(nodes: &[quire_content::Node]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack: Vec<&quire_content::Node> = nodes.iter().rev().collect();
    while let Some(node) = stack.pop() {
        if node.node_type() == "reusable-content"
            && let Some(quire_content::ContentRef::ReusableContent {
                reusable_content,
                space: None,
            }) = node
                .data_value("ref")
                .and_then(quire_content::ContentRef::from_value)
            && !found.contains(&reusable_content)
        {
            found.push(reusable_content);
        }
        stack.extend(node.children().iter().rev());
    }
    found
}

/// Reusable contents may include others; deeper than this they are left out (a cycle).
pub const MAX_INCLUDE_DEPTH: usize = 4;

/// Another site space of the same site, as a link into it sees it.
pub struct OtherSpace<'a> {
    pub title: String,
    /// Its URL: the site space's base.
    pub url: String,
    /// Its pages, when the server loaded them (links to pages of a space it did not load lead
    /// nowhere; links to the space itself still do).
    pub nav: Option<&'a NavTree>,
}

/// A [`Resolver`] over one revision of a site space: pages from its [`NavTree`], files from its
/// tree with URLs from `file_url`, reusable contents from `reusable` when given, pages of the
/// site's other site spaces from `others`.
pub struct SpaceResolver<'a> {
    nav: &'a NavTree,
    files: HashMap<&'a str, &'a FileEntry>,
    file_url: &'a dyn Fn(&FileEntry) -> String,
    /// The reusable contents' documents, by id.
    pub reusable: Option<ReusableContents<'a>>,
    /// Evaluates `if` conditions for the visitor.
    pub condition: Option<&'a dyn Fn(&str) -> bool>,
    /// The id of the space rendered: a reference naming it is a reference to the same space.
    pub space_id: Option<&'a str>,
    /// The site's other site spaces the visitor sees, by space id.
    pub others: HashMap<String, OtherSpace<'a>>,
}

impl<'a> SpaceResolver<'a> {
    pub fn new(nav: &'a NavTree, tree: &'a Tree, file_url: &'a dyn Fn(&FileEntry) -> String) -> Self {
        SpaceResolver {
            nav,
            files: tree
                .files
                .iter()
                .map(|(id, file)| (id.as_str(), file.as_ref()))
                .collect(),
            file_url,
            reusable: None,
            condition: None,
            space_id: None,
            others: HashMap::new(),
        }
    }

    /// `space` unless it names the space rendered.
    fn other<'s>(&self, space: Option<&'s str>) -> Option<&'s str> {
        space.filter(|space| Some(*space) != self.space_id)
    }
}

fn page_target(nav: &NavTree, page: &str) -> Option<PageTarget> {
    let node = nav.get(page)?;
    Some(PageTarget {
        url: node.url.clone()?,
        title: node.title.clone(),
        emoji: node.emoji.clone(),
    })
}

impl Resolver for SpaceResolver<'_> {
    fn page(&self, page: &str, space: Option<&str>) -> Option<PageTarget> {
        match self.other(space) {
            None => page_target(self.nav, page),
            Some(space) => page_target(self.others.get(space)?.nav?, page),
        }
    }

    fn space(&self, space: &str) -> Option<PageTarget> {
        let other = self.others.get(self.other(Some(space))?)?;
        Some(PageTarget {
            url: other.url.clone(),
            title: other.title.clone(),
            emoji: None,
        })
    }

    fn file(&self, file: &str, space: Option<&str>) -> Option<FileTarget> {
        if self.other(space).is_some() {
            return None;
        }
        let entry = self.files.get(file)?;
        Some(FileTarget {
            url: (self.file_url)(entry),
            name: entry.name.clone(),
            content_type: entry.content_type.clone(),
            size: entry.size,
            dimensions: entry
                .dimensions
                .map(|dimensions| (dimensions.width, dimensions.height)),
        })
    }

    fn reusable_content(&self, id: &str, space: Option<&str>) -> Option<Document> {
        if self.other(space).is_some() {
            return None;
        }
        (self.reusable?)(id)
    }

    fn condition(&self, expression: &str) -> bool {
        self.condition.is_none_or(|condition| condition(expression))
    }
}

/// Schemes a link in content may use. Anything else (`javascript:`, `data:`, `vbscript:`,
/// `file:`) is dropped, the link rendered as its text.
const SAFE_SCHEMES: &[&str] = &["http", "https", "mailto", "tel"];

/// `url` when a visitor may follow it: a relative URL, or an absolute one with a safe scheme.
/// Browsers ignore tabs, newlines and leading control characters in URLs (`java\tscript:`), so
/// the scheme is read the way they read it (the WHATWG parser of the `url` crate).
pub fn safe_url(url: &str) -> Option<&str> {
    match url::Url::parse(url) {
        Ok(parsed) => SAFE_SCHEMES.contains(&parsed.scheme()).then_some(url),
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            // A relative reference cannot have a colon before its first `/`, `?` or `#`
            // (RFC 3986, 4.2); one that does is something the parser did not understand.
            let cleaned: String = url.chars().filter(|c| !c.is_control()).collect();
            let first_segment = cleaned.split(['/', '?', '#']).next().unwrap_or_default();
            (!first_segment.contains(':')).then_some(url)
        }
        Err(_) => None,
    }
}

/// `url` for an image source: only `http`, `https` and relative URLs.
pub fn safe_image_url(url: &str) -> Option<&str> {
    let url = safe_url(url)?;
    match url::Url::parse(url) {
        Ok(parsed) if parsed.scheme() != "http" && parsed.scheme() != "https" => None,
        _ => Some(url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_urls_are_refused() {
        for good in [
            "https://example.com/a?b#c",
            "http://x",
            "mailto:a@b.c",
            "/guide/setup",
            "setup.md",
            "#install",
            "?q=1",
            "a/b:c",
        ] {
            assert_eq!(safe_url(good), Some(good), "{good}");
        }
        for bad in [
            "javascript:alert(1)",
            "JaVaScRiPt:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "\u{1}javascript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "vbscript:msgbox",
            "file:///etc/passwd",
        ] {
            assert_eq!(safe_url(bad), None, "{bad:?}");
        }
        assert_eq!(safe_image_url("mailto:a@b.c"), None);
        assert_eq!(safe_image_url("/files/x.png"), Some("/files/x.png"));
    }
}
