//! The whole fixture site: valid HTML everywhere, no broken internal link or anchor, the
//! machine files, and the weight of pages, a 10,000-page space's included.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use html5ever::tendril::TendrilSink;
use html5ever::tree_builder::TreeBuilderOpts;
use html5ever::{ParseOpts, parse_document};
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use quire_content::markdown_to_document;
use quire_content::tree::{PageEntry, PageKind, Tree};
use quire_reader::{Context, NavTree, Navigation, Site, SpaceResolver};

/// What a page holds that the checks need.
#[derive(Default)]
struct Parsed {
    errors: Vec<String>,
    ids: Vec<String>,
    /// `href` and `src` values.
    links: Vec<String>,
    /// Whether an `<img>` has no `alt`.
    missing_alt: usize,
    landmarks: HashSet<String>,
    h1: usize,
}

fn parse(html: &str) -> Parsed {
    let options = ParseOpts {
        tree_builder: TreeBuilderOpts {
            exact_errors: true,
            scripting_enabled: true,
            ..TreeBuilderOpts::default()
        },
        ..ParseOpts::default()
    };
    let dom = parse_document(RcDom::default(), options).one(html);
    let mut parsed = Parsed {
        errors: dom
            .errors
            .borrow()
            .iter()
            .map(|error| error.to_string())
            .collect(),
        ..Parsed::default()
    };
    walk(&dom.document, &mut parsed);
    parsed
}

fn walk(node: &Handle, parsed: &mut Parsed) {
    if let NodeData::Element { name, attrs, .. } = &node.data {
        let tag = name.local.to_string();
        let attrs = attrs.borrow();
        let attr = |wanted: &str| {
            attrs
                .iter()
                .find(|attribute| &*attribute.name.local == wanted)
                .map(|attribute| attribute.value.to_string())
        };
        if let Some(id) = attr("id") {
            parsed.ids.push(id);
        }
        for key in ["href", "src"] {
            if let Some(link) = attr(key) {
                parsed.links.push(link);
            }
        }
        if tag == "img" && attr("alt").is_none() {
            parsed.missing_alt += 1;
        }
        if ["header", "nav", "main", "aside", "footer"].contains(&tag.as_str()) {
            parsed.landmarks.insert(tag.clone());
        }
        if tag == "h1" {
            parsed.h1 += 1;
        }
    }
    for child in node.children.borrow().iter() {
        walk(child, parsed);
    }
}

fn html_pages(site: &BTreeMap<String, Vec<u8>>) -> impl Iterator<Item = (&String, String)> {
    site.iter()
        .filter(|(url, bytes)| {
            !url.contains('.') && !url.contains("/_quire/") && bytes.starts_with(b"<!DOCTYPE html>")
                || url.ends_with(".html")
        })
        .map(|(url, bytes)| (url, String::from_utf8(bytes.clone()).unwrap()))
}

#[test]
fn every_page_is_valid_accessible_html() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let mut pages = 0;
    for (url, html) in html_pages(&site) {
        pages += 1;
        let parsed = parse(&html);
        assert!(
            parsed.errors.is_empty(),
            "{url}: parse errors {:?}",
            parsed.errors
        );
        let mut seen = HashSet::new();
        for id in &parsed.ids {
            assert!(seen.insert(id), "{url}: duplicate id {id:?}");
        }
        assert_eq!(parsed.missing_alt, 0, "{url}: an image without alt");
        assert_eq!(parsed.h1, 1, "{url}: one h1");
        for landmark in ["header", "main", "footer"] {
            assert!(parsed.landmarks.contains(landmark), "{url}: no <{landmark}>");
        }
        assert!(html.contains("<html lang=\"en\""), "{url}");
        assert!(
            !html.contains("template ") || !html.contains("failed:"),
            "{url}: a template failed"
        );
        // No request to another host: every stylesheet, script and image is quire's.
        for link in &parsed.links {
            let request = html.contains(&format!("src=\"{link}\""))
                || html.contains(&format!("stylesheet\" href=\"{link}\""));
            assert!(
                !(request && link.starts_with("http")),
                "{url}: loads {link} from another host"
            );
        }
    }
    // 9 pages in each of 2 site spaces, 404, 401, search.
    assert_eq!(pages, 2 * 9 + 3, "pages checked");
    // The fragments of collapsed sidebar levels parse too.
    for (url, bytes) in site.iter().filter(|(url, _)| url.contains("/_quire/nav/")) {
        let html = format!(
            "<!DOCTYPE html><html lang=\"en\"><title>x</title>{}",
            String::from_utf8_lossy(bytes)
        );
        assert!(parse(&html).errors.is_empty(), "{url}");
    }
}

#[test]
fn no_internal_link_is_broken() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let ids: BTreeMap<&String, HashSet<String>> = html_pages(&site)
        .map(|(url, html)| (url, parse(&html).ids.into_iter().collect()))
        .collect();
    let mut checked = 0;
    for (url, html) in html_pages(&site) {
        for link in parse(&html).links {
            if link.starts_with("https://") || link.starts_with("http://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (link.as_str(), None),
            };
            let path = path.split('?').next().unwrap_or_default();
            let target = if path.is_empty() { url.as_str() } else { path };
            assert!(
                site.contains_key(target),
                "{url}: broken link {link:?} (no {target:?} in the site)"
            );
            if let Some(anchor) = anchor {
                let target_ids = ids
                    .get(&target.to_owned())
                    .unwrap_or_else(|| panic!("{url}: anchor into non-page {link:?}"));
                assert!(target_ids.contains(anchor), "{url}: broken anchor {link:?}");
            }
            checked += 1;
        }
    }
    assert!(checked > 500, "links checked: {checked}");
}

#[test]
fn the_fixture_shows_every_block_kind() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let all: String = html_pages(&site).map(|(_, html)| html).collect();
    for needle in [
        "<div class=\"hint hint-info\"",
        "<div class=\"hint hint-success\"",
        "<div class=\"hint hint-warning\"",
        "<div class=\"hint hint-danger\"",
        "<div class=\"tabs\">",
        "<details class=\"expandable\" id=\"",
        "<figure class=\"code line-numbers\"><figcaption>src/main.rs</figcaption>",
        "<pre data-lang=\"TypeScript\">",
        "<span class=\"hk\">",
        "<div class=\"table-wrap\"><table>",
        "<figcaption>Three boxes, scaled to half their width</figcaption>",
        "width=\"320\" height=\"160\"",
        "<figure class=\"file\"><a class=\"card\" href=\"/_files/",
        "<figure class=\"embed\">",
        "<a class=\"card content-ref\" href=\"/quickstart\">",
        "<ol class=\"stepper\">",
        "<ul class=\"tasks\">",
        "<div class=\"columns\">",
        "<section class=\"update\">",
        "<div class=\"math\"><math display=\"block\">",
        "<math display=\"inline\">",
        "<blockquote>",
        "<hr>",
        "<kbd>Ctrl</kbd>",
        "<mark class=\"bg-yellow\">",
        "<div class=\"cover\">",
        "&lt;script&gt;alert(&quot;no&quot;)&lt;/script&gt;",
    ] {
        assert!(all.contains(needle), "no {needle:?} in the fixture site");
    }
    assert!(!all.contains("javascript:"));
}

#[test]
fn hidden_pages_are_served_but_not_listed() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let hidden = String::from_utf8(site["/reference/config/internal"].clone()).unwrap();
    assert!(hidden.contains("<h1 id=\"internal-notes\">Internal notes</h1>"));
    assert!(
        !hidden.contains("aria-current=\"page\""),
        "a hidden page is not in the sidebar"
    );
    let config = String::from_utf8(site["/reference/config"].clone()).unwrap();
    assert!(!config.contains(">Internal notes</a></li>"), "not in the sidebar");
    assert!(
        config.contains("href=\"/reference/config/internal\">internal notes</a>"),
        "linked from content"
    );
    let sitemap = String::from_utf8(site["/sitemap.xml"].clone()).unwrap();
    assert!(!sitemap.contains("internal"));
    assert!(sitemap.contains("<loc>https://docs.example.com/quickstart</loc><lastmod>"));
    assert!(sitemap.contains("<loc>https://docs.example.com/v1/guides/writing/code</loc>"));
}

#[test]
fn machine_files() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let text = |url: &str| String::from_utf8(site[url].clone()).unwrap();
    assert_eq!(
        text("/robots.txt"),
        "User-agent: *\nAllow: /\n\nSitemap: https://docs.example.com/sitemap.xml\n"
    );
    let llms = text("/llms.txt");
    assert!(
        llms.starts_with("# Quire Handbook\n\n> Publishing documentation with Quire.\n\n## Pages\n\n"),
        "{llms}"
    );
    assert!(
        llms.contains("- [Quick start](https://docs.example.com/quickstart.md): Install Quire and publish a first site in five minutes.\n"),
        "{llms}"
    );
    assert!(
        llms.contains("\n## Guides\n\n- [Writing content](https://docs.example.com/guides/writing.md)"),
        "{llms}"
    );
    assert!(!llms.contains("Internal notes"));
    let feed = text("/feed.xml");
    assert!(feed.contains("<feed xmlns=\"http://www.w3.org/2005/Atom\">"));
    assert!(feed.contains("<link rel=\"self\" href=\"https://docs.example.com/feed.xml\"/>"));
    assert!(
        feed.contains("<entry>\n<title>Changelog</title>"),
        "most recent first: {feed}"
    );
    let markdown = text("/guides/writing.md");
    assert!(
        markdown.starts_with("# Writing content\n\nHeadings, text formatting, lists, quotes and more.\n\n")
    );
    assert!(
        markdown.contains("[other pages](https://docs.example.com/quickstart)"),
        "{markdown}"
    );
    assert_eq!(text("/index.md").lines().next(), Some("# Welcome"));

    let mut unlisted = common::site(&fixture);
    unlisted.indexable = false;
    assert_eq!(
        quire_reader::robots_txt(&unlisted, Some("/sitemap.xml")),
        "User-agent: *\nDisallow: /\n"
    );
    let nav = NavTree::build(&fixture.tree, &fixture.tree.index(), "/");
    assert!(quire_reader::sitemap_entries(&unlisted, &nav).is_empty());
    let found = quire_reader::page_for_markdown_url(&nav, "/index.md").unwrap();
    assert_eq!(found.title, "Welcome");
    assert_eq!(
        quire_reader::page_for_markdown_url(&nav, "/guides/writing.md")
            .unwrap()
            .title,
        "Writing content"
    );
}

#[test]
fn login_and_not_found_pages() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let login = String::from_utf8(site["/401.html"].clone()).unwrap();
    assert!(login.contains("<a class=\"button button-primary\" href=\"/\">Sign in</a>"));
    assert!(!login.contains("Quick start"), "nothing of the content");
    assert!(!login.contains("role=\"search\""), "no search before signing in");
    assert!(login.contains("<meta name=\"robots\" content=\"noindex\">"));
    let none = quire_reader::render_login_required(&common::site(&fixture), Some("javascript:alert(1)"));
    assert!(!none.contains("javascript:") && none.contains("ask its owner"));
    let not_found = String::from_utf8(site["/404.html"].clone()).unwrap();
    assert!(not_found.contains("<h1>Page not found</h1>"));
    assert!(not_found.contains("<form class=\"search-page-form\" role=\"search\""));
}

#[test]
fn customization_colors_are_checked_css() {
    let fixture = common::fixture();
    let mut site = common::site(&fixture);
    site.customization.styling.primary_color = Some(quire_reader::ThemedColor {
        light: "#FF6600".to_owned(),
        dark: "red;}</style><script>alert(1)</script>".to_owned(),
    });
    site.customization.themes.default = "dark".to_owned();
    site.customization.themes.toggeable = false;
    site.customization.styling.corners = Some("straight".to_owned());
    site.customization.favicon.emoji = Some("1f4d8".to_owned());
    let nav = NavTree::build(&fixture.tree, &fixture.tree.index(), "/");
    let resolver = SpaceResolver::new(&nav, &fixture.tree, &common::file_url);
    let context = Context {
        site: &site,
        navigation: &Navigation::default(),
        tree: &nav,
        resolver: &resolver,
    };
    let html = quire_reader::render_not_found(&context);
    assert!(html.contains(":root{--primary:#ff6600;}"), "{html}");
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(
        html.contains("<html lang=\"en\" data-corners=\"straight\" data-theme=\"dark\" data-theme-fixed>")
    );
    assert!(
        html.contains("<link rel=\"icon\" href=\"data:image/svg+xml,%3Csvg"),
        "{html}"
    );
    assert!(html.contains("📘%3C/text%3E"), "{html}");
    assert!(!html.contains("theme-toggle"));
}

/// A space of 10 groups of 20 pages of 50 pages: 10,210 entries.
fn large_tree() -> Tree {
    let mut tree = Tree::default();
    let mut add = |id: String, kind: PageKind, parent: Option<String>, title: String, order: usize| {
        let mut page = PageEntry::new(&id, kind, &title, 0);
        page.slug = quire_content::slugify(&title);
        page.parent = parent;
        page.order = format!("a{order:05}");
        page.document = Some("doc".to_owned());
        tree.pages.insert(id, Arc::new(page));
    };
    for group in 0..10 {
        let group_id = format!("g{group}");
        add(
            group_id.clone(),
            PageKind::Group,
            None,
            format!("Group number {group}"),
            group,
        );
        for page in 0..20 {
            let page_id = format!("g{group}p{page}");
            add(
                page_id.clone(),
                PageKind::Document,
                Some(group_id.clone()),
                format!("Chapter {page} of group {group}"),
                page,
            );
            for leaf in 0..50 {
                add(
                    format!("g{group}p{page}l{leaf}"),
                    PageKind::Document,
                    Some(page_id.clone()),
                    format!("Section {leaf} of chapter {page}"),
                    leaf,
                );
            }
        }
    }
    tree
}

fn weight(html: &str) -> usize {
    let assets: usize = quire_reader::assets()
        .iter()
        .filter(|asset| asset.name != "favicon.svg")
        .map(|asset| asset.bytes.len())
        .sum();
    html.len() + assets
}

#[test]
fn pages_stay_light() {
    let fixture = common::fixture();
    let site = common::render_site(&fixture);
    let typical = String::from_utf8(site["/guides/writing/code"].clone()).unwrap();
    let typical_weight = weight(&typical);
    println!(
        "typical page: {} bytes of HTML, {typical_weight} with its stylesheet and script",
        typical.len()
    );
    assert!(
        typical_weight < 100_000,
        "typical page weighs {typical_weight} bytes"
    );

    let tree = large_tree();
    let nav = NavTree::build(&tree, &tree.index(), "/docs/");
    assert_eq!(nav.nodes().len(), 10_210);
    let mut large_site = Site::new("Large", "https://docs.example.com/docs/");
    large_site.nav_url = Some("/docs/_quire/nav/".to_owned());
    large_site.search_url = Some("/docs/_quire/search".to_owned());
    let resolver = SpaceResolver::new(&nav, &tree, &common::file_url);
    let context = Context {
        site: &large_site,
        navigation: &Navigation::default(),
        tree: &nav,
        resolver: &resolver,
    };
    let document = markdown_to_document(
        "Some text about this section.\n\n## Details\n\nMore text, a [link](https://example.com).\n",
    )
    .unwrap();
    let page = &tree.pages["g9p19l49"];
    let html = quire_reader::render_page(&context, page, &document);
    let large_weight = weight(&html);
    println!(
        "a page deep in a 10,210-page space: {} bytes of HTML, {large_weight} with its stylesheet and script",
        html.len()
    );
    assert!(
        large_weight < 100_000,
        "a page of the large space weighs {large_weight} bytes"
    );
    assert!(html.contains("aria-current=\"page\">Section 49 of chapter 19</a>"));
    assert!(parse(&html).errors.is_empty());
    // Its chapter's siblings are collapsed, loaded on demand.
    assert!(html.contains("<li data-id=\"g9p18\"><a href=\"/docs/group-number-9/chapter-18-of-group-9\">"));
    assert!(!html.contains("Section 0 of chapter 18"));
    let fragment = quire_reader::render_navigation_fragment(&context, "g9p18").unwrap();
    assert_eq!(fragment.matches("<li>").count(), 50);
    println!("a collapsed level: {} bytes", fragment.len());
}
