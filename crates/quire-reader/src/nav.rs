//! The page tree of a site space as the reader walks it: URLs, reading order, ancestors, and
//! the part of the sidebar a page shows.
//!
//! A [`NavTree`] is built once per revision (it depends only on the revision's pages and the
//! site space's base path), so a server keeps it beside the revision and renders every page of
//! that revision from it.
//!
//! The sidebar of a page shows the top level, the pages of every group (groups are headings, not
//! folders), and the children of the current page and of each of its ancestors. Every other page
//! with children is collapsed: without JavaScript its link leads to its page, whose sidebar shows
//! the level; with JavaScript the level is fetched when opened
//! ([`crate::render_navigation_fragment`]). So a page of a 10,000-page space carries its branch,
//! not the whole tree.

use std::collections::HashMap;

use quire_content::ContentRef;
use quire_content::tree::{PageKind, Tree, TreeIndex};
use serde::Serialize;

/// What an entry of the tree is.
#[derive(Debug, Clone, PartialEq)]
pub enum NavKind {
    /// A page with content, at [`NavNode::url`].
    Page,
    /// A heading that groups the pages below it.
    Group,
    /// An entry that points elsewhere (resolved when rendered).
    Link(Option<ContentRef>),
}

/// One entry of the tree.
#[derive(Debug, Clone)]
pub struct NavNode {
    pub id: String,
    pub title: String,
    pub emoji: Option<String>,
    pub description: Option<String>,
    pub kind: NavKind,
    /// The page's URL (pages only): the site space's base path, then the page's path; the
    /// first page is the base path itself.
    pub url: Option<String>,
    /// Hidden from the navigation (the page or an ancestor is `hidden`); still served.
    pub hidden: bool,
    /// Left out of search (`noIndex`).
    pub no_index: bool,
    /// Asked not to be indexed by search engines (`noRobotsIndex`).
    pub no_robots_index: bool,
    /// Last change, Unix milliseconds.
    pub updated_at: i64,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    /// Position in the reading order (visible pages only).
    order: Option<usize>,
}

/// The page tree of one revision of a site space.
#[derive(Debug, Clone, Default)]
pub struct NavTree {
    nodes: Vec<NavNode>,
    roots: Vec<usize>,
    by_id: HashMap<String, usize>,
    by_url: HashMap<String, usize>,
    /// Visible pages in reading order (depth first).
    reading: Vec<usize>,
    /// The URL the first page would have by its path, had it not been the home: links from
    /// elsewhere (the space's own URL, an old bookmark) still name it.
    home_alias: Option<String>,
}

/// An entry of the sidebar, as the templates see it.
#[derive(Debug, Clone, Serialize)]
pub struct SidebarItem {
    pub id: String,
    pub title: String,
    pub emoji: Option<String>,
    /// `page`, `group` or `link`.
    pub kind: &'static str,
    pub url: Option<String>,
    /// Whether a link leaves the site.
    pub external: bool,
    pub current: bool,
    /// Has children (shown in `children`, or collapsed when `children` is empty).
    pub has_children: bool,
    /// Its children are shown.
    pub open: bool,
    pub children: Vec<SidebarItem>,
}

/// A link to a page with its title, for breadcrumbs and previous/next links.
#[derive(Debug, Clone, Serialize)]
pub struct PageLink {
    pub title: String,
    pub emoji: Option<String>,
    pub url: Option<String>,
}

impl NavTree {
    /// Builds the tree of `tree`'s pages. `base_path` is where the site space is served, with
    /// a trailing slash (`/`, `/s/handbook/`, `/v2/`); a page's URL is `base_path` followed by
    /// its path, and the first page's is `base_path`.
    pub fn build(tree: &Tree, index: &TreeIndex, base_path: &str) -> NavTree {
        let mut base = base_path.to_owned();
        if !base.ends_with('/') {
            base.push('/');
        }
        let mut nav = NavTree::default();
        let mut stack: Vec<(&String, Option<usize>, bool)> = index
            .children(None)
            .iter()
            .rev()
            .map(|id| (id, None, false))
            .collect();
        while let Some((id, parent, hidden_above)) = stack.pop() {
            let Some(entry) = tree.pages.get(id.as_str()) else {
                continue;
            };
            let hidden = hidden_above || entry.hidden;
            // A computed page's generated pages stand in its place.
            if entry.kind == PageKind::Computed {
                stack.extend(
                    index
                        .children(Some(id))
                        .iter()
                        .rev()
                        .map(|child| (child, parent, hidden)),
                );
                continue;
            }
            let kind = match entry.kind {
                PageKind::Document | PageKind::Computed => NavKind::Page,
                PageKind::Group => NavKind::Group,
                PageKind::Link => NavKind::Link(entry.target.as_ref().and_then(ContentRef::from_value)),
            };
            let url = match (&kind, index.path(id)) {
                (NavKind::Page, Some(path)) => Some(format!("{base}{path}")),
                _ => None,
            };
            let at = nav.nodes.len();
            nav.nodes.push(NavNode {
                id: entry.id.clone(),
                title: entry.link_title.clone().unwrap_or_else(|| entry.title.clone()),
                emoji: entry.emoji.as_deref().and_then(crate::site::emoji_text),
                description: entry.description.clone(),
                kind,
                url,
                hidden,
                no_index: entry.no_index,
                no_robots_index: entry.no_robots_index,
                updated_at: entry.updated_at,
                parent,
                children: Vec::new(),
                order: None,
            });
            nav.by_id.insert(entry.id.clone(), at);
            match parent {
                Some(parent) => nav.nodes[parent].children.push(at),
                None => nav.roots.push(at),
            }
            stack.extend(
                index
                    .children(Some(id))
                    .iter()
                    .rev()
                    .map(|child| (child, Some(at), hidden)),
            );
        }
        // Depth first, parents before children: the order in which nodes were pushed.
        for at in 0..nav.nodes.len() {
            let node = &nav.nodes[at];
            if node.kind == NavKind::Page && !node.hidden && node.url.is_some() {
                nav.nodes[at].order = Some(nav.reading.len());
                nav.reading.push(at);
            }
        }
        // The first page is the site space's home, served at the base path.
        if let Some(&first) = nav.reading.first() {
            nav.home_alias = nav.nodes[first].url.replace(base);
        }
        for (at, node) in nav.nodes.iter().enumerate() {
            if let Some(url) = &node.url {
                nav.by_url.entry(url.clone()).or_insert(at);
            }
        }
        nav
    }

    /// Every entry, parents before children.
    pub fn nodes(&self) -> &[NavNode] {
        &self.nodes
    }

    /// The entry of a page id.
    pub fn get(&self, id: &str) -> Option<&NavNode> {
        self.by_id.get(id).map(|&at| &self.nodes[at])
    }

    /// The page served at `url` (a path from the site's host, as [`NavNode::url`]).
    pub fn page_at(&self, url: &str) -> Option<&NavNode> {
        self.by_url.get(url).map(|&at| &self.nodes[at])
    }

    /// Whether `url` is the URL the home page has by its path (see [`NavNode::url`]: the home
    /// is served at the site space's base instead).
    pub fn is_home_alias(&self, url: &str) -> bool {
        self.home_alias.as_deref() == Some(url)
    }

    /// The first visible page: the site space's home.
    pub fn first_page(&self) -> Option<&NavNode> {
        self.reading.first().map(|&at| &self.nodes[at])
    }

    /// Visible pages in reading order.
    pub fn reading_order(&self) -> impl Iterator<Item = &NavNode> {
        self.reading.iter().map(|&at| &self.nodes[at])
    }

    /// Every page with a URL (hidden ones included), in tree order.
    pub fn pages(&self) -> impl Iterator<Item = &NavNode> {
        self.nodes.iter().filter(|node| node.url.is_some())
    }

    /// The pages before and after `id` in reading order.
    pub fn previous_next(&self, id: &str) -> (Option<PageLink>, Option<PageLink>) {
        let Some(order) = self.get(id).and_then(|node| node.order) else {
            return (None, None);
        };
        let link = |at: usize| self.page_link(&self.nodes[self.reading[at]]);
        let previous = order.checked_sub(1).map(link);
        let next = (order + 1 < self.reading.len()).then(|| link(order + 1));
        (previous, next)
    }

    /// The ancestors of `id`, outermost first.
    pub fn ancestors(&self, id: &str) -> Vec<PageLink> {
        let mut ancestors = Vec::new();
        let mut next = self.by_id.get(id).and_then(|&at| self.nodes[at].parent);
        while let Some(at) = next {
            ancestors.push(self.page_link(&self.nodes[at]));
            next = self.nodes[at].parent;
        }
        ancestors.reverse();
        ancestors
    }

    fn page_link(&self, node: &NavNode) -> PageLink {
        PageLink {
            title: node.title.clone(),
            emoji: node.emoji.clone(),
            url: node.url.clone(),
        }
    }

    /// The sidebar of the page `current` (none: the top level and groups only).
    /// `resolve_link` gives the URL of a link entry.
    pub fn sidebar(
        &self,
        current: Option<&str>,
        resolve_link: &dyn Fn(&ContentRef) -> Option<String>,
    ) -> Vec<SidebarItem> {
        let mut path: Vec<usize> = Vec::new();
        let mut next = current.and_then(|id| self.by_id.get(id).copied());
        while let Some(at) = next {
            path.push(at);
            next = self.nodes[at].parent;
        }
        let current_at = current.and_then(|id| self.by_id.get(id).copied());
        self.items(&self.roots, &path, current_at, resolve_link)
    }

    /// The children of `id`, one level, for a collapsed entry opened by the reader; `None` for
    /// an unknown or hidden page.
    pub fn children_items(
        &self,
        id: &str,
        resolve_link: &dyn Fn(&ContentRef) -> Option<String>,
    ) -> Option<Vec<SidebarItem>> {
        let &at = self.by_id.get(id)?;
        if self.nodes[at].hidden {
            return None;
        }
        Some(self.items(&self.nodes[at].children, &[], None, resolve_link))
    }

    fn items(
        &self,
        ids: &[usize],
        open_path: &[usize],
        current: Option<usize>,
        resolve_link: &dyn Fn(&ContentRef) -> Option<String>,
    ) -> Vec<SidebarItem> {
        ids.iter()
            .filter(|&&at| !self.nodes[at].hidden)
            .map(|&at| {
                let node = &self.nodes[at];
                let visible_children = node.children.iter().any(|&child| !self.nodes[child].hidden);
                let open = visible_children && (node.kind == NavKind::Group || open_path.contains(&at));
                let (kind, url, external) = match &node.kind {
                    NavKind::Page => ("page", node.url.clone(), false),
                    NavKind::Group => ("group", None, false),
                    NavKind::Link(target) => {
                        let url = target.as_ref().and_then(resolve_link);
                        let external = matches!(target, Some(ContentRef::Url { .. }));
                        ("link", url, external)
                    }
                };
                SidebarItem {
                    id: node.id.clone(),
                    title: node.title.clone(),
                    emoji: node.emoji.clone(),
                    kind,
                    url,
                    external,
                    current: Some(at) == current,
                    has_children: visible_children,
                    open,
                    children: if open {
                        self.items(&node.children, open_path, current, resolve_link)
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quire_content::tree::PageEntry;
    use std::sync::Arc;

    fn tree_of(pages: &[(&str, PageKind, Option<&str>, &str, bool)]) -> Tree {
        let mut tree = Tree::default();
        for (order, (id, kind, parent, title, hidden)) in pages.iter().enumerate() {
            let mut page = PageEntry::new(id, *kind, title, 0);
            page.parent = parent.map(str::to_owned);
            page.order = format!("a{order:04}");
            page.slug = quire_content::slugify(title);
            page.hidden = *hidden;
            tree.pages.insert((*id).to_owned(), Arc::new(page));
        }
        tree
    }

    #[test]
    fn urls_reading_order_and_sidebar() {
        use PageKind::*;
        let tree = tree_of(&[
            ("home", Document, None, "Home", false),
            ("g", Group, None, "Guides", false),
            ("a", Document, Some("g"), "Alpha", false),
            ("a1", Document, Some("a"), "Alpha one", false),
            ("a11", Document, Some("a1"), "Deep", false),
            ("b", Document, Some("g"), "Beta", false),
            ("b1", Document, Some("b"), "Beta one", false),
            ("h", Document, Some("g"), "Secret", true),
            ("h1", Document, Some("h"), "Below secret", false),
        ]);
        let nav = NavTree::build(&tree, &tree.index(), "/docs/");
        assert_eq!(nav.get("home").unwrap().url.as_deref(), Some("/docs/"));
        assert_eq!(
            nav.get("a1").unwrap().url.as_deref(),
            Some("/docs/guides/alpha/alpha-one")
        );
        assert!(nav.get("h1").unwrap().hidden);
        assert_eq!(nav.page_at("/docs/guides/beta").unwrap().id, "b");
        let order: Vec<&str> = nav.reading_order().map(|node| node.id.as_str()).collect();
        assert_eq!(order, ["home", "a", "a1", "a11", "b", "b1"]);
        let (previous, next) = nav.previous_next("a11");
        assert_eq!(previous.unwrap().title, "Alpha one");
        assert_eq!(next.unwrap().title, "Beta");
        assert!(matches!(nav.previous_next("h"), (None, None)));
        let crumbs: Vec<String> = nav.ancestors("a11").into_iter().map(|link| link.title).collect();
        assert_eq!(crumbs, ["Guides", "Alpha", "Alpha one"]);

        let sidebar = nav.sidebar(Some("a1"), &|_| None);
        assert_eq!(sidebar.len(), 2);
        let guides = &sidebar[1];
        assert!(guides.open);
        // The hidden page is left out; Beta is collapsed; Alpha and Alpha one are open.
        let titles: Vec<&str> = guides.children.iter().map(|item| item.title.as_str()).collect();
        assert_eq!(titles, ["Alpha", "Beta"]);
        assert!(guides.children[0].open && !guides.children[1].open);
        assert!(guides.children[1].has_children && guides.children[1].children.is_empty());
        let alpha_one = &guides.children[0].children[0];
        assert!(alpha_one.current && alpha_one.open);
        assert_eq!(alpha_one.children[0].title, "Deep");
        let level = nav.children_items("b", &|_| None).unwrap();
        assert_eq!(level[0].title, "Beta one");
        assert!(nav.children_items("h", &|_| None).is_none());
    }
}
