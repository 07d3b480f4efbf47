//! Whole HTML documents: pages, the 404 and 401 pages, search results and sidebar fragments.
//!
//! Rust prepares plain data (the chrome of the site, the page, the sidebar) and the templates
//! of `templates/` lay it out; the document's body is the one piece of HTML made in Rust
//! ([`crate::content`]). Templates are parsed once per process.

use std::fmt::Write as _;
use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, Value, context};
use quire_content::Document;
use quire_content::tree::PageEntry;
use serde::Serialize;

use crate::assets;
use crate::content::{self, OutlineEntry};
use crate::nav::{NavTree, PageLink, SidebarItem};
use crate::resolve::{Resolver, safe_image_url, safe_url};
use crate::site::{Navigation, SectionItem, Site, ThemedColor, ThemedUrl};

/// Everything a page of a site space is rendered from, besides the page itself. A server
/// builds the [`NavTree`] once per revision and the rest per request (they are cheap).
pub struct Context<'a> {
    pub site: &'a Site,
    pub navigation: &'a Navigation,
    pub tree: &'a NavTree,
    pub resolver: &'a dyn Resolver,
}

/// The ids the templates give elements around the content (all `q-`, which few headings slug
/// to; the document renderer keeps its ids off these).
pub(crate) const CHROME_IDS: &[&str] = &[
    "q-content",
    "q-sidebar",
    "q-search",
    "q-search-results",
    "q-outline-title",
    "q-not-found-search",
    "q-search-page",
];

const TEMPLATES: &[(&str, &str)] = &[
    ("base.html", include_str!("../templates/base.html")),
    ("sidebar.html", include_str!("../templates/sidebar.html")),
    ("page.html", include_str!("../templates/page.html")),
    ("not_found.html", include_str!("../templates/not_found.html")),
    (
        "login_required.html",
        include_str!("../templates/login_required.html"),
    ),
    ("search.html", include_str!("../templates/search.html")),
    (
        "nav_fragment.html",
        include_str!("../templates/nav_fragment.html"),
    ),
    ("sitemap.xml", include_str!("../templates/sitemap.xml")),
    ("atom.xml", include_str!("../templates/atom.xml")),
    ("robots.txt", include_str!("../templates/robots.txt")),
    ("llms.txt", include_str!("../templates/llms.txt")),
];

pub(crate) fn environment() -> &'static Environment<'static> {
    static ENVIRONMENT: OnceLock<Environment<'static>> = OnceLock::new();
    ENVIRONMENT.get_or_init(|| {
        let mut environment = Environment::new();
        environment.set_trim_blocks(true);
        environment.set_lstrip_blocks(true);
        environment.set_formatter(crate::escape::formatter);
        environment.set_auto_escape_callback(|name| {
            if name.ends_with(".html") || name.ends_with(".xml") {
                AutoEscape::Html
            } else {
                AutoEscape::None
            }
        });
        for (name, source) in TEMPLATES {
            // The templates ship with the crate and a test renders each: a template that does
            // not parse is a build defect, reported when it is rendered.
            let _ = environment.add_template(name, source);
        }
        environment
    })
}

/// Renders a template of `templates/`. Rendering fails only on a defect of the templates
/// themselves, which the tests render; the error text then stands in for the page.
pub(crate) fn render_template(name: &str, context: Value) -> String {
    match environment()
        .get_template(name)
        .and_then(|template| template.render(context))
    {
        Ok(output) => output,
        Err(error) => format!("template {name} failed: {error:#}"),
    }
}

/// What every HTML page of the site shows around its content.
#[derive(Debug, Serialize)]
struct Chrome {
    lang: String,
    title: String,
    home: String,
    css: String,
    js: String,
    favicon: String,
    feed_url: Option<String>,
    corners: Option<&'static str>,
    links: Option<&'static str>,
    theme: Option<&'static str>,
    theme_toggle: bool,
    colors: Option<Colors>,
    /// The CSS families of the fonts the customization names (`styling.font`, `monospaceFont`).
    font: Option<&'static str>,
    mono_font: Option<&'static str>,
    logo: Option<ThemedUrl>,
    header_links: Vec<LinkView>,
    footer_groups: Vec<FooterGroupView>,
    copyright: Option<String>,
    announcement: Option<AnnouncementView>,
    sections: Vec<SectionItem>,
    /// External links of the structure open in a new tab (`externalLinks.target: blank`).
    external_blank: bool,
    variants: Vec<crate::site::NavLink>,
    current_variant: Option<String>,
    search_url: Option<String>,
    search_action: Option<String>,
    nav_url: Option<String>,
    sidebar: Vec<SidebarItem>,
}

#[derive(Debug, Serialize)]
struct Colors {
    light: Vec<(&'static str, String)>,
    dark: Vec<(&'static str, String)>,
}

#[derive(Debug, Serialize)]
struct LinkView {
    title: String,
    url: Option<String>,
    style: &'static str,
    children: Vec<LinkView>,
}

#[derive(Debug, Serialize)]
struct FooterGroupView {
    title: String,
    links: Vec<LinkView>,
}

#[derive(Debug, Serialize)]
struct AnnouncementView {
    message: String,
    url: Option<String>,
    link_title: Option<String>,
    style: &'static str,
}

/// A `#rgb` or `#rrggbb` color, the only form GitBook accepts; anything else is ignored, so a
/// customization cannot write CSS.
fn hex_color(color: &str) -> Option<String> {
    let digits = color.strip_prefix('#')?;
    ((digits.len() == 3 || digits.len() == 6) && digits.chars().all(|c| c.is_ascii_hexdigit()))
        .then(|| color.to_ascii_lowercase())
}

fn colors(site: &Site) -> Option<Colors> {
    let styling = &site.customization.styling;
    let named: [(&'static str, Option<&ThemedColor>); 6] = [
        ("primary", styling.primary_color.as_ref()),
        ("tint", styling.tint.as_ref().map(|tint| &tint.color)),
        ("info", styling.info_color.as_ref()),
        ("success", styling.success_color.as_ref()),
        ("warning", styling.warning_color.as_ref()),
        ("danger", styling.danger_color.as_ref()),
    ];
    let mut colors = Colors {
        light: Vec::new(),
        dark: Vec::new(),
    };
    for (name, color) in named {
        let Some(color) = color else { continue };
        if let Some(light) = hex_color(&color.light) {
            colors.light.push((name, light));
        }
        if let Some(dark) = hex_color(&color.dark) {
            colors.dark.push((name, dark));
        }
    }
    (!colors.light.is_empty() || !colors.dark.is_empty()).then_some(colors)
}

/// The CSS family of one of GitBook's fonts, by its name in the settings; None for any other
/// name, so a customization cannot write CSS.
fn font_family(name: &str) -> Option<&'static str> {
    const FAMILIES: &[(&str, &str)] = &[
        ("ABCFavorit", "ABC Favorit"),
        ("Inter", "Inter"),
        ("Roboto", "Roboto"),
        ("RobotoSlab", "Roboto Slab"),
        ("OpenSans", "Open Sans"),
        ("SourceSansPro", "Source Sans Pro"),
        ("Lato", "Lato"),
        ("Ubuntu", "Ubuntu"),
        ("Raleway", "Raleway"),
        ("Merriweather", "Merriweather"),
        ("Overpass", "Overpass"),
        ("NotoSans", "Noto Sans"),
        ("IBMPlexSerif", "IBM Plex Serif"),
        ("Poppins", "Poppins"),
        ("FiraSans", "Fira Sans"),
        ("FiraCode", "Fira Code"),
        ("IBMPlexMono", "IBM Plex Mono"),
        ("JetBrainsMono", "JetBrains Mono"),
        ("SourceCodePro", "Source Code Pro"),
        ("RobotoMono", "Roboto Mono"),
        ("SpaceMono", "Space Mono"),
        ("DMMono", "DM Mono"),
        ("Inconsolata", "Inconsolata"),
    ];
    FAMILIES
        .iter()
        .find(|(key, _)| *key == name)
        .map(|(_, family)| *family)
}

fn themed_image(url: Option<&ThemedUrl>) -> Option<ThemedUrl> {
    let url = url?;
    let light = safe_image_url(&url.light).map(str::to_owned);
    let dark = safe_image_url(&url.dark).map(str::to_owned);
    match (light, dark) {
        (Some(light), Some(dark)) => Some(ThemedUrl { light, dark }),
        (Some(one), None) | (None, Some(one)) => Some(ThemedUrl {
            light: one.clone(),
            dark: one,
        }),
        (None, None) => None,
    }
}

fn chrome(
    site: &Site,
    navigation: &Navigation,
    resolver: Option<&dyn Resolver>,
    sidebar: Vec<SidebarItem>,
) -> Chrome {
    let customization = &site.customization;
    let href = |target: &quire_content::ContentRef| resolver.and_then(|resolver| resolver.href(target));
    let header_links = customization
        .header
        .links
        .iter()
        .map(|link| LinkView {
            title: link.title.clone(),
            url: link.to.as_ref().and_then(href),
            style: match link.style.as_deref() {
                Some("button-primary") => "button-primary",
                Some("button-secondary") => "button-secondary",
                _ => "link",
            },
            children: link
                .links
                .iter()
                .map(|child| LinkView {
                    title: child.title.clone(),
                    url: href(&child.to),
                    style: "link",
                    children: Vec::new(),
                })
                .collect(),
        })
        .collect();
    let footer_groups = customization
        .footer
        .groups
        .iter()
        .map(|group| FooterGroupView {
            title: group.title.clone(),
            links: group
                .links
                .iter()
                .map(|link| LinkView {
                    title: link.title.clone(),
                    url: href(&link.to),
                    style: "link",
                    children: Vec::new(),
                })
                .collect(),
        })
        .collect();
    let announcement = customization
        .announcement
        .as_ref()
        .filter(|announcement| announcement.enabled && !announcement.message.trim().is_empty())
        .map(|announcement| AnnouncementView {
            message: announcement.message.clone(),
            url: announcement.link.as_ref().and_then(|link| href(&link.to)),
            link_title: announcement
                .link
                .as_ref()
                .map(|link| link.title.clone())
                .filter(|title| !title.is_empty()),
            style: match announcement.style.as_deref() {
                Some("warning") => "warning",
                Some("danger") => "danger",
                Some("success") => "success",
                _ => "info",
            },
        });
    let emoji_icon = customization.favicon.emoji.as_deref().and_then(crate::site::emoji_text).map(|emoji| {
        // An emoji drawn by the browser in an inline SVG: no request at all.
        format!(
            "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 100 100'%3E%3Ctext y='.9em' font-size='90'%3E{emoji}%3C/text%3E%3C/svg%3E"
        )
    });
    let favicon = customization
        .favicon
        .icon
        .as_ref()
        .and_then(|icon| safe_image_url(&icon.light))
        .map(str::to_owned)
        .or(emoji_icon)
        .unwrap_or_else(|| format!("{}{}", site.assets_url, assets::path_of("favicon.svg")));
    let home = url::Url::parse(&site.url).map_or_else(|_| "/".to_owned(), |url| url.path().to_owned());
    Chrome {
        lang: site.language.clone(),
        title: site.display_title().to_owned(),
        home,
        css: format!("{}{}", site.assets_url, assets::path_of("reader.css")),
        js: format!("{}{}", site.assets_url, assets::path_of("reader.js")),
        favicon,
        feed_url: site.feed_url.clone(),
        corners: match customization.styling.corners.as_deref() {
            Some("straight") => Some("straight"),
            Some("circular") => Some("circular"),
            _ => None,
        },
        links: (customization.styling.links.as_deref() == Some("accent")).then_some("accent"),
        theme: match customization.themes.default.as_str() {
            "light" => Some("light"),
            "dark" => Some("dark"),
            _ => None,
        },
        theme_toggle: customization.themes.toggeable,
        colors: colors(site),
        font: customization.styling.font.as_deref().and_then(font_family),
        mono_font: customization
            .styling
            .monospace_font
            .as_deref()
            .and_then(font_family),
        logo: themed_image(customization.header.logo.as_ref()),
        header_links,
        footer_groups,
        copyright: customization
            .footer
            .copyright
            .clone()
            .filter(|text| !text.trim().is_empty()),
        announcement,
        sections: navigation.sections.clone(),
        external_blank: customization.external_links.target.as_deref() == Some("blank"),
        current_variant: navigation
            .variants
            .iter()
            .find(|variant| variant.current)
            .map(|variant| variant.title.clone()),
        variants: navigation.variants.clone(),
        search_url: site.search_url.clone(),
        search_action: site.search_page_url.clone().or_else(|| site.search_url.clone()),
        nav_url: site.nav_url.clone(),
        sidebar,
    }
}

fn sidebar(context: &Context<'_>, current: Option<&str>) -> Vec<SidebarItem> {
    context
        .tree
        .sidebar(current, &|target| context.resolver.href(target))
}

/// A cover image.
#[derive(Debug, Serialize)]
struct CoverView {
    url: String,
    dark_url: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
}

/// The page itself, as the template sees it.
#[derive(Debug, Serialize)]
struct PageView {
    id: String,
    title: String,
    /// GitBook's anchor of the title (`page#page-title` lands on it), unless the body holds it.
    title_id: Option<String>,
    emoji: Option<String>,
    description: Option<String>,
    url: String,
    canonical: String,
    markdown_url: String,
    cover: Option<CoverView>,
    social_image: Option<String>,
    breadcrumbs: Vec<PageLink>,
    previous: Option<PageLink>,
    next: Option<PageLink>,
    outline: Vec<OutlineEntry>,
    updated: Option<String>,
    updated_iso: Option<String>,
    noindex: bool,
    show_title: bool,
    show_description: bool,
    show_sidebar: bool,
    show_outline: bool,
    wide: bool,
}

fn layout_flag(layout: Option<&serde_json::Value>, key: &str) -> bool {
    layout
        .and_then(|layout| layout.get(key))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(true)
}

fn cover(context: &Context<'_>, page: &PageEntry) -> Option<CoverView> {
    let cover = page.cover.as_ref()?;
    let source = |key: &str| -> Option<(String, Option<(u32, u32)>)> {
        match quire_content::ContentRef::from_value(cover.get(key)?)? {
            quire_content::ContentRef::Url { url } => safe_image_url(&url).map(|url| (url.to_owned(), None)),
            quire_content::ContentRef::File { file, space } => {
                let target = context.resolver.file(&file, space.as_deref())?;
                safe_image_url(&target.url)?;
                Some((target.url, target.dimensions))
            }
            _ => None,
        }
    };
    let (url, dimensions) = source("ref")?;
    Some(CoverView {
        url,
        dark_url: source("refDark").map(|(url, _)| url),
        width: dimensions.map(|(width, _)| width),
        height: dimensions.map(|(_, height)| height),
    })
}

/// A date for readers (`March 5, 2025`) and for machines (RFC 3339), from Unix milliseconds.
pub(crate) fn dates(millis: i64) -> Option<(String, String)> {
    let time = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000).ok()?;
    let shown = time
        .format(time::macros::format_description!(
            "[month repr:long] [day padding:none], [year]"
        ))
        .ok()?;
    let iso = time.format(&time::format_description::well_known::Rfc3339).ok()?;
    Some((shown, iso))
}

/// Renders a page of the site space: the whole HTML document.
pub fn render_page(context: &Context<'_>, page: &PageEntry, document: &Document) -> String {
    let mut rendered = content::render_document(document, context.resolver);
    let node = context.tree.get(&page.id);
    if rendered.html.replace("<p></p>", "").trim().is_empty() {
        // A page without content (a SUMMARY entry without a link, a folder without a readme)
        // lists its children, as GitBook shows such a page.
        rendered.html = children_cards(context.tree, node);
    }
    let url = node
        .and_then(|node| node.url.clone())
        .unwrap_or_else(|| context.site.url.clone());
    let layout = page.layout.as_ref();
    let (previous, next) =
        if context.site.customization.pagination.enabled && layout_flag(layout, "pagination") {
            context.tree.previous_next(&page.id)
        } else {
            (None, None)
        };
    let updated = dates(page.updated_at);
    let cover = cover(context, page).filter(|_| layout_flag(layout, "cover"));
    let social_image = context
        .site
        .customization
        .social_preview
        .url
        .as_deref()
        .and_then(safe_image_url)
        .map(str::to_owned)
        .or_else(|| cover.as_ref().map(|cover| cover.url.clone()))
        .map(|url| context.site.absolute(&url));
    let markdown_url = crate::machine::markdown_url(&url);
    let title_id = Some(quire_content::gitbook_anchor(&page.title)).filter(|id| !rendered.ids.contains(id));
    let view = PageView {
        id: page.id.clone(),
        title: page.title.clone(),
        title_id,
        emoji: page.emoji.as_deref().and_then(crate::site::emoji_text),
        description: page.description.clone().filter(|text| !text.trim().is_empty()),
        canonical: context.site.absolute(&url),
        markdown_url,
        url,
        cover,
        social_image,
        breadcrumbs: context.tree.ancestors(&page.id),
        previous,
        next,
        outline: rendered.outline,
        updated_iso: updated.as_ref().map(|(_, iso)| iso.clone()),
        updated: updated.map(|(shown, _)| shown),
        noindex: !context.site.indexable
            || page.no_robots_index
            || node.is_some_and(|node| node.no_robots_index),
        show_title: layout_flag(layout, "title"),
        show_description: layout_flag(layout, "description"),
        show_sidebar: layout_flag(layout, "tableOfContents"),
        show_outline: layout_flag(layout, "outline"),
        wide: layout
            .and_then(|layout| layout.get("width"))
            .and_then(serde_json::Value::as_str)
            == Some("wide"),
    };
    let chrome = chrome(
        context.site,
        context.navigation,
        Some(context.resolver),
        sidebar(context, Some(&page.id)),
    );
    render_template(
        "page.html",
        context! {
            chrome => Value::from_serialize(&chrome),
            page => Value::from_serialize(&view),
            body => Value::from_safe_string(rendered.html),
        },
    )
}

/// Cards linking to the visible children of a page.
fn children_cards(tree: &NavTree, node: Option<&crate::nav::NavNode>) -> String {
    let mut out = String::new();
    for child in node
        .into_iter()
        .flat_map(|node| &node.children)
        .filter_map(|&index| tree.nodes().get(index))
        .filter(|child| !child.hidden)
    {
        let Some(url) = child.url.as_deref() else { continue };
        let _ = write!(
            out,
            "<a class=\"card content-ref\" href=\"{}\"><span class=\"card-title\">{}</span>",
            crate::escape::Escaped(url),
            crate::escape::Escaped(&child.title)
        );
        if let Some(description) = child.description.as_deref().filter(|d| !d.trim().is_empty()) {
            let _ = write!(
                out,
                "<span class=\"card-meta\">{}</span>",
                crate::escape::Escaped(description)
            );
        }
        out.push_str("</a>");
    }
    out
}

/// The page for a URL that names nothing: the site's chrome, a message, a search box and a
/// link home. Serve it with status 404.
pub fn render_not_found(context: &Context<'_>) -> String {
    let chrome = chrome(
        context.site,
        context.navigation,
        Some(context.resolver),
        sidebar(context, None),
    );
    render_template(
        "not_found.html",
        context! {
            chrome => Value::from_serialize(&chrome),
            noindex => true,
        },
    )
}

/// The page for a visitor who must sign in first: the site's title and a link to its login
/// URL (when the site has one). Serve it with status 401. Nothing of the content shows.
pub fn render_login_required(site: &Site, login_url: Option<&str>) -> String {
    let mut chrome = chrome(site, &Navigation::default(), None, Vec::new());
    // Nothing of the site's content, its search included, before the visitor signs in.
    chrome.search_url = None;
    chrome.search_action = None;
    render_template(
        "login_required.html",
        context! {
            chrome => Value::from_serialize(&chrome),
            login_url => login_url.and_then(safe_url),
            noindex => true,
        },
    )
}

/// One level of the sidebar, below the page `page_id`, for a collapsed entry the reader opens:
/// an HTML fragment (`<ul>...</ul>`) the script inserts. `None` for an unknown or hidden page.
pub fn render_navigation_fragment(context: &Context<'_>, page_id: &str) -> Option<String> {
    let items = context
        .tree
        .children_items(page_id, &|target| context.resolver.href(target))?;
    Some(render_template(
        "nav_fragment.html",
        context! {
            items => Value::from_serialize(&items),
            nav_url => context.site.nav_url.clone(),
        },
    ))
}

/// Results of a search, as the search box's script reads them (JSON) and as the search page
/// shows them. The server fills it from quire's search, limited to what the visitor may see
/// and without `noIndex` pages.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchResults {
    pub query: String,
    pub items: Vec<SearchHit>,
}

/// A page that matches, with its matching sections.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub sections: Vec<SearchSection>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchSection {
    pub title: String,
    pub url: String,
    pub body: String,
}

impl SearchResults {
    /// The JSON the search box reads.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{\"items\":[]}".to_owned())
    }
}

/// The search results page, for visitors without JavaScript (the search form's target).
pub fn render_search_page(context: &Context<'_>, results: &SearchResults) -> String {
    let chrome = chrome(
        context.site,
        context.navigation,
        Some(context.resolver),
        sidebar(context, None),
    );
    render_template(
        "search.html",
        context! {
            chrome => Value::from_serialize(&chrome),
            results => Value::from_serialize(results),
            noindex => true,
        },
    )
}
