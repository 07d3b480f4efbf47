//! A page as one markdown file, the way GitBook's Git Sync writes it: frontmatter for the page
//! metadata, a first-level heading for the title, then the document.

use serde_json::{Map, Value, json};

use crate::document::{ContentRef, Document};
use crate::markdown::{
    LayoutVisibility, MarkdownError, MarkdownPage, PageFrontmatter, PageLayout, document_to_markdown,
    parse_page,
};
use crate::text::plain_text_of_nodes;
use crate::tree::PageEntry;

/// Page metadata read from a markdown file; `None` means the file does not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PageMeta {
    pub title: Option<String>,
    pub description: Option<String>,
    pub emoji: Option<String>,
    pub icon: Option<String>,
    pub cover: Option<Value>,
    pub layout: Option<Value>,
    pub hidden: Option<bool>,
    pub no_index: Option<bool>,
    pub no_robots_index: Option<bool>,
}

/// A parsed page file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedPage {
    pub meta: PageMeta,
    pub document: Document,
}

/// Whether an icon value is an emoji rather than an icon name.
fn is_emoji(icon: &str) -> bool {
    !icon.is_ascii()
}

/// Parses a page file: frontmatter into metadata, and a leading first-level heading into the
/// title (removed from the document, as the title is not part of the content).
pub fn parse_page_markdown(markdown: &str) -> Result<ParsedPage, MarkdownError> {
    let MarkdownPage {
        frontmatter,
        mut document,
    } = parse_page(markdown)?;
    let mut meta = PageMeta::default();
    if document
        .nodes
        .first()
        .is_some_and(|n| n.node_type() == "heading-1")
    {
        let heading = document.nodes.remove(0);
        let title = plain_text_of_nodes(heading.children()).trim().to_string();
        if !title.is_empty() {
            meta.title = Some(title);
        }
    }
    meta.description = frontmatter.description.clone();
    match frontmatter.icon.as_deref() {
        Some(icon) if is_emoji(icon) => meta.emoji = Some(icon.to_string()),
        Some(icon) => meta.icon = Some(icon.to_string()),
        None => {}
    }
    if let Some(cover) = &frontmatter.cover {
        let mut c = Map::new();
        c.insert("ref".into(), ContentRef::url(cover).to_value());
        c.insert("yPos".into(), json!(frontmatter.cover_y.unwrap_or(0.0)));
        meta.cover = Some(Value::Object(c));
    }
    meta.layout = frontmatter.layout.as_ref().map(layout_to_json);
    meta.hidden = frontmatter.hidden;
    meta.no_index = frontmatter.no_index;
    meta.no_robots_index = frontmatter.no_robots_index;
    Ok(ParsedPage { meta, document })
}

/// Writes a page as a markdown file. `resolve` renders references (page ids to relative paths).
pub fn page_to_markdown(
    page: &PageEntry,
    document: &Document,
    resolve: &dyn Fn(&ContentRef) -> Option<String>,
) -> String {
    let mut frontmatter = PageFrontmatter {
        description: page.description.clone().filter(|d| !d.is_empty()),
        icon: page.emoji.clone().or_else(|| page.icon.clone()),
        hidden: page.hidden.then_some(true),
        no_index: page.no_index.then_some(true),
        no_robots_index: page.no_robots_index.then_some(true),
        layout: page.layout.as_ref().and_then(layout_from_json),
        ..PageFrontmatter::default()
    };
    if let Some(cover) = &page.cover {
        let target = cover
            .get("ref")
            .and_then(ContentRef::from_value)
            .and_then(|r| match &r {
                ContentRef::Url { url } => Some(url.clone()),
                other => resolve(other),
            });
        frontmatter.cover = target;
        frontmatter.cover_y = cover.get("yPos").and_then(Value::as_f64).filter(|y| *y != 0.0);
    }
    // The title heading goes between the frontmatter and the body.
    let yaml = frontmatter.to_yaml();
    let body = document_to_markdown(document, resolve);
    let title = format!("# {}\n", escape_heading(&page.title));
    let gap = if body.is_empty() { "" } else { "\n" };
    if yaml.is_empty() {
        format!("{title}{gap}{body}")
    } else {
        format!("---\n{yaml}---\n\n{title}{gap}{body}")
    }
}

/// The relative link from the file `from` to the file `to` (both paths from the root of the
/// space's files): `guide/a.md` to `guide/b.md` is `b.md`, to `api.md` is `../api.md`.
pub fn relative_path(from: &str, to: &str) -> String {
    let from_dir: Vec<&str> = from
        .split('/')
        .collect::<Vec<_>>()
        .split_last()
        .map_or(Vec::new(), |(_, d)| d.to_vec());
    let to_parts: Vec<&str> = to.split('/').collect();
    let common = from_dir.iter().zip(&to_parts).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = std::iter::repeat_n("..", from_dir.len() - common).collect();
    parts.extend(&to_parts[common..]);
    parts.join("/")
}

/// A title as heading text: characters that would start other markdown are escaped.
fn escape_heading(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if matches!(
            c,
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '>' | '#' | '~' | '|' | '$'
        ) {
            out.push('\\');
        }
        out.push(if c == '\n' { ' ' } else { c });
    }
    out
}

fn visible(v: &Option<LayoutVisibility>) -> Option<bool> {
    v.as_ref().and_then(|v| v.visible)
}

/// Frontmatter layout (`title: {visible: false}`) to GitBook's layout options (`title: false`).
fn layout_to_json(layout: &PageLayout) -> Value {
    let mut out = Map::new();
    if let Some(w) = &layout.width {
        out.insert("width".into(), json!(w));
    }
    for (key, value) in [
        ("title", visible(&layout.title)),
        ("description", visible(&layout.description)),
        ("tableOfContents", visible(&layout.table_of_contents)),
        ("outline", visible(&layout.outline)),
        ("pagination", visible(&layout.pagination)),
    ] {
        if let Some(v) = value {
            out.insert(key.into(), json!(v));
        }
    }
    Value::Object(out)
}

fn layout_from_json(layout: &Value) -> Option<PageLayout> {
    let vis = |key: &str| {
        layout
            .get(key)
            .and_then(Value::as_bool)
            .map(|v| LayoutVisibility {
                visible: Some(v),
                ..LayoutVisibility::default()
            })
    };
    let out = PageLayout {
        width: layout.get("width").and_then(Value::as_str).map(str::to_string),
        title: vis("title"),
        description: vis("description"),
        table_of_contents: vis("tableOfContents"),
        outline: vis("outline"),
        pagination: vis("pagination"),
        ..PageLayout::default()
    };
    (out != PageLayout::default()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::PageKind;

    #[test]
    fn title_and_metadata_round_trip_through_a_page_file() {
        let md = "---\ndescription: How to start\nicon: 🚀\nhidden: true\n---\n\n# Getting *started*\n\nSome text.\n";
        let parsed = parse_page_markdown(md).unwrap();
        assert_eq!(parsed.meta.title.as_deref(), Some("Getting started"));
        assert_eq!(parsed.meta.description.as_deref(), Some("How to start"));
        assert_eq!(parsed.meta.emoji.as_deref(), Some("🚀"));
        assert_eq!(parsed.meta.hidden, Some(true));
        assert_eq!(parsed.document.nodes.len(), 1);
        let mut page = PageEntry::new("p", PageKind::Document, "Getting started", 0);
        page.description = parsed.meta.description.clone();
        page.emoji = parsed.meta.emoji.clone();
        page.hidden = true;
        let out = page_to_markdown(&page, &parsed.document, &|_| None);
        let again = parse_page_markdown(&out).unwrap();
        assert_eq!(
            again,
            ParsedPage {
                meta: PageMeta {
                    title: Some("Getting started".into()),
                    ..parsed.meta.clone()
                },
                ..parsed.clone()
            }
        );
        assert_eq!(page_to_markdown(&page, &again.document, &|_| None), out);
    }

    #[test]
    fn relative_paths_between_page_files() {
        assert_eq!(relative_path("guide/a.md", "guide/b.md"), "b.md");
        assert_eq!(relative_path("guide/a.md", "api.md"), "../api.md");
        assert_eq!(relative_path("README.md", "guide/README.md"), "guide/README.md");
        assert_eq!(relative_path("a/b/c.md", "a/x/y.md"), "../x/y.md");
        assert_eq!(relative_path("a.md", "a.md"), "a.md");
    }

    #[test]
    fn pages_without_metadata_are_a_heading_and_a_body() {
        let page = PageEntry::new("p", PageKind::Document, "A # title", 0);
        let doc = crate::markdown::markdown_to_document("Hello.\n").unwrap();
        let out = page_to_markdown(&page, &doc, &|_| None);
        assert_eq!(out, "# A \\# title\n\nHello.\n");
        assert_eq!(
            parse_page_markdown(&out).unwrap().meta.title.as_deref(),
            Some("A # title")
        );
        let empty = page_to_markdown(&page, &Document::default(), &|_| None);
        assert_eq!(empty, "# A \\# title\n");
    }
}
