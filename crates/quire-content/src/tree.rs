//! The content of one revision: its pages (a tree), files, reusable contents and variables.
//!
//! Entries are shared (`Arc`) between the revisions that have them unchanged, so deriving a
//! revision from another clones pointers, not pages, and storage can tell which entries changed
//! by pointer identity (see [`crate::buckets`]).
//!
//! Invariants kept by every operation here: a page's parent exists and is a document or group
//! page; groups live at the top level; document and group pages have a slug unique among their
//! siblings, so every path is unique in the revision; no page is its own ancestor.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::order;
use crate::slug::slugify;

/// Deepest page nesting accepted.
pub const MAX_DEPTH: usize = 32;

/// What a page is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PageKind {
    /// A page with a document; may hold child pages.
    Document,
    /// A section heading that groups pages, without a document of its own.
    Group,
    /// An entry of the table of contents that points elsewhere.
    Link,
    /// Pages generated from a source (such as an OpenAPI specification).
    Computed,
}

impl PageKind {
    /// Whether pages of this kind have a slug and a path.
    pub fn has_path(self) -> bool {
        matches!(self, PageKind::Document | PageKind::Group)
    }

    /// Whether pages of this kind may hold child pages. A computed page holds the pages its
    /// source generates, and no others (`changes` refuses to put a page there).
    pub fn has_children(self) -> bool {
        matches!(self, PageKind::Document | PageKind::Group | PageKind::Computed)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PageKind::Document => "document",
            PageKind::Group => "group",
            PageKind::Link => "link",
            PageKind::Computed => "computed",
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A page of a revision. Optional fields stay absent when unset, which keeps stored entries small.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageEntry {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: PageKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Fractional order key among its siblings.
    pub order: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub slug: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Content hash of the page's document (document pages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
    /// Layout options, as GitBook's `RevisionPageLayoutOptions` (unset: the defaults).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cover: Option<Value>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub hidden: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_index: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_robots_index: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    /// Where a link page points (a content reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    /// The source of a computed page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computed_seed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl PageEntry {
    /// A new page with defaults for everything but its identity.
    pub fn new(id: &str, kind: PageKind, title: &str, now: i64) -> PageEntry {
        PageEntry {
            id: id.to_string(),
            kind,
            parent: None,
            order: String::new(),
            title: title.to_string(),
            slug: String::new(),
            emoji: None,
            icon: None,
            description: None,
            document: None,
            layout: None,
            cover: None,
            hidden: false,
            no_index: false,
            no_robots_index: false,
            variables: None,
            target: None,
            href: None,
            computed: None,
            computed_seed: None,
            link_title: None,
            condition: None,
            created_at: now,
            updated_at: now,
        }
    }
}

/// Width and height of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dimensions {
    pub width: u32,
    pub height: u32,
}

/// A file of a revision. Its bytes live in the object store under `blob` (their SHA-256).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    pub id: String,
    pub name: String,
    pub content_type: String,
    pub size: u64,
    pub blob: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Dimensions>,
    pub created_at: i64,
}

/// A reusable content of a revision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReusableEntry {
    pub id: String,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

/// Why a change to a tree is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    #[error("page {0:?} does not exist in this revision")]
    NoSuchPage(String),
    #[error("page {0:?} cannot hold child pages")]
    NotAParent(String),
    #[error("page {page:?} cannot move into {target:?}, which is itself or one of its descendants")]
    Cycle { page: String, target: String },
    #[error("the slug {slug:?} is already used by another page under the same parent")]
    SlugTaken { slug: String },
    #[error("invalid slug {0:?}: use 1 to 100 lowercase letters, digits and hyphens")]
    BadSlug(String),
    #[error("group pages can only be at the top level")]
    NestedGroup,
    #[error("pages cannot be nested more than {MAX_DEPTH} levels deep")]
    TooDeep,
}

/// Entries of a tree by id. A persistent map: a revision derived from another shares every
/// entry and node it did not change, so copying a 10,000-page tree for a one-page batch costs a
/// pointer, not 10,000 keys (a copy and the drop of an evicted one took half of a batch).
pub type Entries<T> = imbl::OrdMap<String, Arc<T>>;

/// The content of a revision.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree {
    pub pages: Entries<PageEntry>,
    pub files: Entries<FileEntry>,
    pub reusable: Entries<ReusableEntry>,
    pub variables: Map<String, Value>,
}

/// Derived facts about a tree's pages: children in order and paths. Built once per tree.
#[derive(Debug, Clone, Default)]
pub struct TreeIndex {
    roots: Vec<String>,
    children: HashMap<String, Vec<String>>,
    paths: HashMap<String, String>,
    by_path: HashMap<String, String>,
}

impl TreeIndex {
    /// The ids of the children of `parent` (None: the top level), in order.
    pub fn children(&self, parent: Option<&str>) -> &[String] {
        match parent {
            None => &self.roots,
            Some(id) => self.children.get(id).map_or(&[], Vec::as_slice),
        }
    }

    /// A page's path (`guides/setup`), for document and group pages.
    pub fn path(&self, id: &str) -> Option<&str> {
        self.paths.get(id).map(String::as_str)
    }

    /// The page at `path`.
    pub fn by_path(&self, path: &str) -> Option<&str> {
        self.by_path.get(path.trim_matches('/')).map(String::as_str)
    }

    /// Whether the page has child pages.
    pub fn has_children(&self, id: &str) -> bool {
        !self.children(Some(id)).is_empty()
    }

    /// The file a page would be in a Git repository: `guides/setup.md`, or
    /// `guides/README.md` for a page with children (`README.md` for a top-level one).
    pub fn file_path(&self, id: &str) -> Option<String> {
        let path = self.path(id)?;
        Some(if self.has_children(id) {
            if path.is_empty() {
                "README.md".to_string()
            } else {
                format!("{path}/README.md")
            }
        } else {
            format!("{path}.md")
        })
    }
}

impl Tree {
    /// Computes children lists and paths.
    pub fn index(&self) -> TreeIndex {
        // Indexing runs on every tree read and on merges of large spaces, so it borrows ids
        // while grouping and builds each path once from its parent's (no per-child copies).
        let mut groups: HashMap<Option<&str>, Vec<&PageEntry>> =
            HashMap::with_capacity(self.pages.len() / 4 + 1);
        for page in self.pages.values() {
            groups.entry(page.parent.as_deref()).or_default().push(page);
        }
        let mut index = TreeIndex {
            children: HashMap::with_capacity(groups.len()),
            paths: HashMap::with_capacity(self.pages.len()),
            by_path: HashMap::with_capacity(self.pages.len()),
            ..TreeIndex::default()
        };
        for (parent, list) in &mut groups {
            list.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.id.cmp(&b.id)));
            let ids = list.iter().map(|p| p.id.clone()).collect();
            match parent {
                None => index.roots = ids,
                Some(parent) => {
                    index.children.insert(parent.to_string(), ids);
                }
            }
        }
        // Paths, top-down from the roots. A page's slot in `built` holds its path, so a child
        // extends its parent's path without the stack carrying copies. Popping in LIFO order
        // decides which of two equal paths `by_path` keeps, as it always has.
        let mut built: Vec<(&str, String)> = Vec::with_capacity(self.pages.len());
        let mut stack: Vec<(&PageEntry, Option<usize>, usize)> = groups
            .get(&None)
            .map(|roots| roots.iter().map(|p| (*p, None, 0)).collect())
            .unwrap_or_default();
        while let Some((page, parent_slot, depth)) = stack.pop() {
            if depth > MAX_DEPTH {
                continue;
            }
            // A computed page stands for the pages it generates, in its place: it has no path
            // of its own, and theirs continue its parent's.
            if page.kind == PageKind::Computed {
                if let Some(children) = groups.get(&Some(page.id.as_str())) {
                    stack.extend(children.iter().map(|c| (*c, parent_slot, depth + 1)));
                }
                continue;
            }
            if !page.kind.has_path() {
                continue;
            }
            let path = match parent_slot {
                None => page.slug.clone(),
                Some(slot) => {
                    let prefix = &built[slot].1;
                    let mut path = String::with_capacity(prefix.len() + 1 + page.slug.len());
                    path.push_str(prefix);
                    path.push('/');
                    path.push_str(&page.slug);
                    path
                }
            };
            built.push((&page.id, path));
            let slot = built.len() - 1;
            if let Some(children) = groups.get(&Some(page.id.as_str())) {
                stack.extend(children.iter().map(|c| (*c, Some(slot), depth + 1)));
            }
        }
        for (id, path) in built {
            index
                .by_path
                .entry(path.clone())
                .or_insert_with(|| id.to_string());
            index.paths.insert(id.to_string(), path);
        }
        index
    }

    pub fn page(&self, id: &str) -> Result<&Arc<PageEntry>, TreeError> {
        self.pages
            .get(id)
            .ok_or_else(|| TreeError::NoSuchPage(id.to_string()))
    }

    /// The ids of `id` and every page below it.
    pub fn descendants(&self, id: &str) -> Vec<String> {
        let index = self.index();
        let mut out = vec![id.to_string()];
        let mut i = 0;
        while i < out.len() {
            let children = index.children(Some(&out[i])).to_vec();
            out.extend(children);
            i += 1;
        }
        out
    }

    fn depth_of(&self, id: Option<&str>) -> usize {
        let mut depth = 0;
        let mut next = id;
        while let Some(current) = next {
            depth += 1;
            if depth > MAX_DEPTH + 1 {
                break;
            }
            next = self.pages.get(current).and_then(|p| p.parent.as_deref());
        }
        depth
    }

    /// Siblings under `parent` in order, without `except`.
    fn siblings(&self, parent: Option<&str>, except: Option<&str>) -> Vec<&PageEntry> {
        let mut list: Vec<&PageEntry> = self
            .pages
            .values()
            .filter(|p| p.parent.as_deref() == parent && Some(p.id.as_str()) != except)
            .map(|p| p.as_ref())
            .collect();
        list.sort_by(|a, b| a.order.cmp(&b.order).then_with(|| a.id.cmp(&b.id)));
        list
    }

    /// An order key for position `at` (None: the end) among the siblings under `parent`.
    fn order_at(&self, parent: Option<&str>, except: Option<&str>, at: Option<usize>) -> String {
        let siblings = self.siblings(parent, except);
        let index = at.map_or(siblings.len(), |a| a.min(siblings.len()));
        let before = index.checked_sub(1).map(|i| siblings[i].order.as_str());
        let after = siblings.get(index).map(|p| p.order.as_str());
        match (before, after) {
            (Some(b), Some(a)) if b >= a => {
                // Equal keys leave no room: append after the last sibling instead of misordering.
                order::key_between(siblings.last().map(|p| p.order.as_str()), None)
            }
            _ => order::key_between(before, after),
        }
    }

    fn check_parent(&self, parent: Option<&str>, kind: PageKind) -> Result<(), TreeError> {
        if let Some(parent) = parent {
            if kind == PageKind::Group {
                return Err(TreeError::NestedGroup);
            }
            let p = self.page(parent)?;
            if !p.kind.has_children() {
                return Err(TreeError::NotAParent(parent.to_string()));
            }
            if self.depth_of(Some(parent)) >= MAX_DEPTH {
                return Err(TreeError::TooDeep);
            }
        }
        Ok(())
    }

    fn slug_taken(&self, parent: Option<&str>, slug: &str, except: &str) -> bool {
        self.pages
            .values()
            .any(|p| p.parent.as_deref() == parent && p.id != except && p.kind.has_path() && p.slug == slug)
    }

    /// A free slug under `parent` from `title`: the slugified title, then `-2`, `-3`...
    pub fn derive_slug(&self, parent: Option<&str>, title: &str, except: &str) -> String {
        let base = slugify(title);
        if !self.slug_taken(parent, &base, except) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|s| !self.slug_taken(parent, s, except))
            .unwrap_or(base)
    }

    /// Inserts a page under `parent` at position `at` (None: at the end). An empty slug is
    /// derived from the title; an explicit one must be free.
    pub fn insert_page(
        &mut self,
        mut page: PageEntry,
        parent: Option<&str>,
        at: Option<usize>,
    ) -> Result<(), TreeError> {
        self.check_parent(parent, page.kind)?;
        page.parent = parent.map(str::to_string);
        if page.kind.has_path() {
            if page.slug.is_empty() {
                page.slug = self.derive_slug(parent, &page.title, &page.id);
            } else {
                check_slug(&page.slug)?;
                if self.slug_taken(parent, &page.slug, &page.id) {
                    return Err(TreeError::SlugTaken { slug: page.slug });
                }
            }
        } else {
            page.slug.clear();
        }
        page.order = self.order_at(parent, Some(&page.id), at);
        self.pages.insert(page.id.clone(), Arc::new(page));
        Ok(())
    }

    /// Moves a page: `parent` None keeps its parent, `Some(None)` moves it to the top level;
    /// `at` places it among its new siblings (None: keep its place when the parent is kept,
    /// else at the end).
    pub fn move_page(
        &mut self,
        id: &str,
        parent: Option<Option<&str>>,
        at: Option<usize>,
    ) -> Result<(), TreeError> {
        let page = self.page(id)?.clone();
        let new_parent = match parent {
            None => page.parent.clone(),
            Some(p) => p.map(str::to_string),
        };
        if let Some(target) = &new_parent
            && self.descendants(id).contains(target)
        {
            return Err(TreeError::Cycle {
                page: id.to_string(),
                target: target.clone(),
            });
        }
        let parent_changed = new_parent != page.parent;
        if !parent_changed && at.is_none() {
            return Ok(());
        }
        self.check_parent(new_parent.as_deref(), page.kind)?;
        if parent_changed && self.depth_of(new_parent.as_deref()) + self.subtree_height(id) > MAX_DEPTH {
            return Err(TreeError::TooDeep);
        }
        let mut moved = (*page).clone();
        if parent_changed && moved.kind.has_path() && self.slug_taken(new_parent.as_deref(), &moved.slug, id)
        {
            return Err(TreeError::SlugTaken { slug: moved.slug });
        }
        moved.order = self.order_at(new_parent.as_deref(), Some(id), at);
        moved.parent = new_parent;
        self.pages.insert(id.to_string(), Arc::new(moved));
        Ok(())
    }

    fn subtree_height(&self, id: &str) -> usize {
        let index = self.index();
        fn height(index: &TreeIndex, id: &str, depth: usize) -> usize {
            if depth > MAX_DEPTH {
                return depth;
            }
            index
                .children(Some(id))
                .iter()
                .map(|c| height(index, c, depth + 1))
                .max()
                .unwrap_or(depth)
        }
        height(&index, id, 0)
    }

    /// Changes a page's slug, which must be valid and free among its siblings.
    pub fn set_slug(&mut self, id: &str, slug: &str) -> Result<(), TreeError> {
        let page = self.page(id)?.clone();
        if !page.kind.has_path() || page.slug == slug {
            return Ok(());
        }
        check_slug(slug)?;
        if self.slug_taken(page.parent.as_deref(), slug, id) {
            return Err(TreeError::SlugTaken {
                slug: slug.to_string(),
            });
        }
        let mut changed = (*page).clone();
        changed.slug = slug.to_string();
        self.pages.insert(id.to_string(), Arc::new(changed));
        Ok(())
    }

    /// Removes a page and every page below it; returns their ids.
    pub fn delete_page(&mut self, id: &str) -> Result<Vec<String>, TreeError> {
        self.page(id)?;
        let removed = self.descendants(id);
        for page in &removed {
            self.pages.remove(page);
        }
        Ok(removed)
    }

    /// Replaces a page entry in place (same id, parent and order), e.g. new metadata.
    pub fn replace_page(&mut self, page: PageEntry) {
        self.pages.insert(page.id.clone(), Arc::new(page));
    }

    /// Checks the invariants of the module documentation; used after merges and imports.
    pub fn check(&self) -> Result<(), TreeError> {
        let index = self.index();
        for page in self.pages.values() {
            if let Some(parent) = &page.parent {
                self.check_parent(Some(parent), page.kind)?;
            }
            if page.kind.has_path() && index.path(&page.id).is_none() {
                return Err(TreeError::Cycle {
                    page: page.id.clone(),
                    target: page.parent.clone().unwrap_or_default(),
                });
            }
        }
        let mut seen: HashMap<(Option<&str>, &str), &str> = HashMap::new();
        for page in self.pages.values().filter(|p| p.kind.has_path()) {
            if let Some(other) = seen.insert((page.parent.as_deref(), page.slug.as_str()), &page.id)
                && other != page.id
            {
                return Err(TreeError::SlugTaken {
                    slug: page.slug.clone(),
                });
            }
        }
        Ok(())
    }
}

/// A valid slug: 1 to 100 characters of lowercase letters, digits, `-`, `_` and `.`.
pub fn check_slug(slug: &str) -> Result<(), TreeError> {
    let ok = !slug.is_empty()
        && slug.len() <= 100
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.'))
        && slug != "."
        && slug != "..";
    if ok {
        Ok(())
    } else {
        Err(TreeError::BadSlug(slug.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: &str, title: &str) -> PageEntry {
        PageEntry::new(id, PageKind::Document, title, 0)
    }

    fn titles(tree: &Tree, parent: Option<&str>) -> Vec<String> {
        let index = tree.index();
        index
            .children(parent)
            .iter()
            .map(|id| tree.pages[id].title.clone())
            .collect()
    }

    #[test]
    fn inserts_in_order_with_unique_paths() {
        let mut t = Tree::default();
        t.insert_page(page("a", "Getting started"), None, None).unwrap();
        t.insert_page(page("b", "Getting started"), None, None).unwrap();
        t.insert_page(page("c", "First"), None, Some(0)).unwrap();
        t.insert_page(page("d", "Child"), Some("a"), None).unwrap();
        assert_eq!(titles(&t, None), ["First", "Getting started", "Getting started"]);
        let index = t.index();
        assert_eq!(index.path("a"), Some("getting-started"));
        assert_eq!(index.path("b"), Some("getting-started-2"));
        assert_eq!(index.path("d"), Some("getting-started/child"));
        assert_eq!(index.by_path("/getting-started/child/"), Some("d"));
        assert_eq!(index.file_path("a").as_deref(), Some("getting-started/README.md"));
        assert_eq!(index.file_path("d").as_deref(), Some("getting-started/child.md"));
        let mut explicit = page("e", "Other");
        explicit.slug = "first".into();
        assert_eq!(
            t.insert_page(explicit, None, None),
            Err(TreeError::SlugTaken { slug: "first".into() })
        );
        t.check().unwrap();
    }

    #[test]
    fn moves_reject_cycles_and_keep_order() {
        let mut t = Tree::default();
        for (id, title) in [("a", "A"), ("b", "B"), ("c", "C")] {
            t.insert_page(page(id, title), None, None).unwrap();
        }
        t.insert_page(page("a1", "A1"), Some("a"), None).unwrap();
        t.move_page("c", None, Some(0)).unwrap();
        assert_eq!(titles(&t, None), ["C", "A", "B"]);
        t.move_page("b", Some(Some("a")), Some(0)).unwrap();
        assert_eq!(titles(&t, Some("a")), ["B", "A1"]);
        assert!(matches!(
            t.move_page("a", Some(Some("a1")), None),
            Err(TreeError::Cycle { .. })
        ));
        assert!(matches!(
            t.move_page("a", Some(Some("a")), None),
            Err(TreeError::Cycle { .. })
        ));
        t.move_page("b", Some(None), None).unwrap();
        assert_eq!(titles(&t, None), ["C", "A", "B"]);
        let removed = t.delete_page("a").unwrap();
        assert_eq!(removed, ["a", "a1"]);
        assert_eq!(titles(&t, None), ["C", "B"]);
        assert!(t.move_page("zz", None, None).is_err());
    }

    #[test]
    fn groups_stay_at_the_top_and_links_have_no_path() {
        let mut t = Tree::default();
        t.insert_page(PageEntry::new("g", PageKind::Group, "Guides", 0), None, None)
            .unwrap();
        t.insert_page(page("p", "Page"), Some("g"), None).unwrap();
        let mut link = PageEntry::new("l", PageKind::Link, "Elsewhere", 0);
        link.target = Some(serde_json::json!({"kind": "url", "url": "https://example.com"}));
        t.insert_page(link, Some("g"), None).unwrap();
        assert_eq!(
            t.insert_page(PageEntry::new("g2", PageKind::Group, "G2", 0), Some("p"), None),
            Err(TreeError::NestedGroup)
        );
        assert_eq!(
            t.insert_page(page("x", "X"), Some("l"), None),
            Err(TreeError::NotAParent("l".into()))
        );
        let index = t.index();
        assert_eq!(index.path("p"), Some("guides/page"));
        assert_eq!(index.path("l"), None);
    }

    #[test]
    fn slugs_are_validated() {
        assert!(check_slug("getting-started").is_ok());
        assert!(check_slug("").is_err());
        assert!(check_slug("Has Space").is_err());
        assert!(check_slug("..").is_err());
        let mut t = Tree::default();
        t.insert_page(page("a", "A"), None, None).unwrap();
        t.insert_page(page("b", "B"), None, None).unwrap();
        assert!(matches!(t.set_slug("b", "a"), Err(TreeError::SlugTaken { .. })));
        t.set_slug("b", "bee").unwrap();
        assert_eq!(t.index().path("b"), Some("bee"));
    }
}
