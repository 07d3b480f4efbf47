//! What machines read: `sitemap.xml`, `robots.txt`, `llms.txt`, an Atom feed of recently
//! changed pages, and each page as markdown (`{page url}.md`).

use minijinja::{Value, context};
use quire_content::Document;
use quire_content::tree::PageEntry;
use serde::Serialize;

use crate::nav::{NavKind, NavNode, NavTree};
use crate::render::{Context, dates, render_template};
use crate::site::Site;

/// A URL of the sitemap.
#[derive(Debug, Clone, Serialize)]
pub struct SitemapEntry {
    /// Absolute URL.
    pub url: String,
    /// Last change, Unix milliseconds.
    pub updated_at: i64,
}

#[derive(Serialize)]
struct SitemapView {
    url: String,
    lastmod: Option<String>,
}

/// Whether search engines should find a page: shown in the navigation, not `noIndex` or
/// `noRobotsIndex`.
fn indexable(node: &NavNode) -> bool {
    !node.hidden && !node.no_index && !node.no_robots_index
}

/// The sitemap entries of a site space's pages (none when the site is not indexable). A site
/// with several site spaces concatenates theirs.
pub fn sitemap_entries(site: &Site, tree: &NavTree) -> Vec<SitemapEntry> {
    if !site.indexable {
        return Vec::new();
    }
    tree.reading_order()
        .filter(|node| indexable(node))
        .filter_map(|node| {
            Some(SitemapEntry {
                url: site.absolute(node.url.as_deref()?),
                updated_at: node.updated_at,
            })
        })
        .collect()
}

/// `sitemap.xml`.
pub fn sitemap_xml(entries: &[SitemapEntry]) -> String {
    let urls: Vec<SitemapView> = entries
        .iter()
        .map(|entry| SitemapView {
            url: entry.url.clone(),
            lastmod: dates(entry.updated_at).map(|(_, iso)| iso),
        })
        .collect();
    render_template("sitemap.xml", context! { urls => Value::from_serialize(&urls) })
}

/// `robots.txt`: everything allowed with the sitemap's URL, or everything disallowed for a
/// site that is not indexable (unlisted, or asking robots to stay away).
pub fn robots_txt(site: &Site, sitemap_url: Option<&str>) -> String {
    render_template(
        "robots.txt",
        context! {
            indexable => site.indexable,
            sitemap => sitemap_url.map(|url| site.absolute(url)),
        },
    )
}

/// The URL of a page as markdown: `{page url}.md`, `{base}index.md` for a site space's home.
pub fn markdown_url(page_url: &str) -> String {
    if page_url.ends_with('/') {
        format!("{page_url}index.md")
    } else {
        format!("{page_url}.md")
    }
}

/// The page whose markdown is served at `url` (see [`markdown_url`]).
pub fn page_for_markdown_url<'t>(tree: &'t NavTree, url: &str) -> Option<&'t NavNode> {
    let page_url = url.strip_suffix(".md")?;
    match page_url.strip_suffix("index") {
        Some(base) if base.ends_with('/') => tree.page_at(base),
        _ => tree.page_at(page_url),
    }
}

#[derive(Serialize)]
struct LlmsSection {
    /// `##`, or `###` for a group inside a site space of a site with several.
    heading: &'static str,
    title: String,
    pages: Vec<LlmsPage>,
}

#[derive(Serialize)]
struct LlmsPage {
    title: String,
    url: String,
    description: Option<String>,
}

/// `llms.txt` (llmstxt.org) of one site space: the site's title and description, then its
/// pages as links to their markdown, by group.
pub fn llms_txt(context: &Context<'_>) -> String {
    llms_txt_of_spaces(context.site, &[("", context.tree)])
}

/// `llms.txt` of a site with several site spaces, each `(title, pages)`: one section per site
/// space, its groups below it. With one site space, as [`llms_txt`].
pub fn llms_txt_of_spaces(site: &Site, spaces: &[(&str, &NavTree)]) -> String {
    let several = spaces.len() > 1;
    let mut sections: Vec<LlmsSection> = Vec::new();
    for (title, tree) in spaces {
        let (loose, groups) = llms_pages(site, tree);
        let group_heading = if several { "###" } else { "##" };
        if several {
            sections.push(LlmsSection {
                heading: "##",
                title: (*title).to_owned(),
                pages: loose,
            });
        } else if !loose.is_empty() {
            sections.push(LlmsSection {
                heading: "##",
                title: "Pages".to_owned(),
                pages: loose,
            });
        }
        sections.extend(groups.into_iter().map(|(title, pages)| LlmsSection {
            heading: group_heading,
            title,
            pages,
        }));
    }
    render_template(
        "llms.txt",
        context! {
            title => site.display_title(),
            description => site.description.clone(),
            sections => Value::from_serialize(&sections),
        },
    )
}

/// A site space's indexable pages: those outside any group, and each group's, in reading order.
fn llms_pages(site: &Site, tree: &NavTree) -> (Vec<LlmsPage>, Vec<(String, Vec<LlmsPage>)>) {
    let page = |node: &NavNode| -> Option<LlmsPage> {
        Some(LlmsPage {
            title: node.title.clone(),
            url: site.absolute(&markdown_url(node.url.as_deref()?)),
            description: node.description.clone().filter(|text| !text.trim().is_empty()),
        })
    };
    let mut loose = Vec::new();
    let mut groups: Vec<(String, Vec<LlmsPage>)> = Vec::new();
    for node in tree.reading_order().filter(|node| indexable(node)) {
        // The group a page is under, if any: the top-level ancestor.
        let mut top = node;
        while let Some(parent) = top.parent {
            top = &tree.nodes()[parent];
        }
        let Some(entry) = page(node) else { continue };
        if top.kind == NavKind::Group {
            match groups.last_mut() {
                Some((title, pages)) if *title == top.title => pages.push(entry),
                _ => groups.push((top.title.clone(), vec![entry])),
            }
        } else {
            loose.push(entry);
        }
    }
    (loose, groups)
}

#[derive(Serialize)]
struct FeedEntry {
    title: String,
    url: String,
    updated: String,
    summary: Option<String>,
}

/// An Atom feed of the `limit` most recently changed pages of the site space.
pub fn atom_feed(context: &Context<'_>, feed_url: &str, limit: usize) -> String {
    let site = context.site;
    let mut pages: Vec<&NavNode> = context
        .tree
        .reading_order()
        .filter(|node| !node.no_index)
        .collect();
    pages.sort_by(|a, b| {
        b.updated_at
            .cmp(&a.updated_at)
            .then_with(|| a.title.cmp(&b.title))
    });
    pages.truncate(limit);
    let updated = pages
        .iter()
        .map(|node| node.updated_at)
        .max()
        .and_then(dates)
        .map_or_else(|| "1970-01-01T00:00:00Z".to_owned(), |(_, iso)| iso);
    let entries: Vec<FeedEntry> = pages
        .iter()
        .filter_map(|node| {
            Some(FeedEntry {
                title: node.title.clone(),
                url: site.absolute(node.url.as_deref()?),
                updated: dates(node.updated_at)?.1,
                summary: node.description.clone(),
            })
        })
        .collect();
    render_template(
        "atom.xml",
        context! {
            title => site.display_title(),
            site_url => site.url.clone(),
            feed_url => site.absolute(feed_url),
            updated => updated,
            entries => Value::from_serialize(&entries),
        },
    )
}

/// A page as markdown: its title, description, then its content in GitBook's markdown, with
/// links to pages and files as absolute URLs of the site.
pub fn page_markdown(context: &Context<'_>, page: &PageEntry, document: &Document) -> String {
    let body = quire_content::document_to_markdown(document, &|target| {
        context
            .resolver
            .href(target)
            .map(|href| context.site.absolute(&href))
    });
    let mut markdown = format!("# {}\n\n", page.title.trim());
    if let Some(description) = page.description.as_deref().filter(|text| !text.trim().is_empty()) {
        markdown.push_str(description.trim());
        markdown.push_str("\n\n");
    }
    markdown.push_str(&body);
    markdown
}
