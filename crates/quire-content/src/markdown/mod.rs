//! GitBook-flavoured markdown to and from the document tree.
//!
//! The dialect is CommonMark with GitHub's extensions (tables, strikethrough, task lists,
//! autolinks), `$$` math, YAML frontmatter for page metadata, and GitBook's block syntax
//! (`{% hint %}`, `{% tabs %}`, `{% code %}`, `{% embed %}`, `{% file %}`, `{% content-ref %}`,
//! `{% include %}`, `{% stepper %}`, `<details>`, `<figure>`). The `parse_blocks` module lists how
//! each block construct maps to the tree; inline marks come from `*`, `**`, `~~`, code spans and
//! the HTML tags GitBook writes (`<kbd>`, `<sup>`, `<sub>`, `<mark style>`, `<strong>`, ...).
//!
//! Conversion is a fixed point after one normalization: parsing the rendering of a parsed
//! document gives the same document, and rendering that gives the same markdown. Rendering a
//! document made only of what markdown expresses and parsing it back gives the same document.
//!
//! What markdown cannot carry, and so is normalized or lost on the way through markdown:
//! - heading levels 4 to 6 (they become `heading-3`); line breaks inside headings;
//! - soft line breaks (they become spaces), whitespace at the edges of a line or of a bold,
//!   italic or strikethrough span, empty paragraphs, unknown marks;
//! - table header formatting (GitBook column titles are plain text), number, checkbox, select
//!   and user columns (written as text); a table GFM cannot carry (card views, hidden headers and
//!   columns, widths, reference and image columns, blocks other than paragraphs and simple lists
//!   in a cell) is written as GitBook's HTML table, whose cells keep marks, links, images,
//!   lists, code and headings but not other blocks (written as their text);
//! - paragraph and heading alignment, the inline images' `original` size (the default);
//! - image captions' formatting (captions are plain text in `<figcaption>`), `images` options
//!   other than `align`;
//! - the words after the first in a code fence's info string, per-line code data;
//! - the body of `{% content-ref %}` (it is regenerated from the URL), a `{% code %}` wrapper
//!   around anything but a single fenced code block (the content is kept);
//! - blocks and inlines without a markdown form (OpenAPI, integrations without a URL, drawings,
//!   conditional blocks, annotations' bodies, mentions, buttons' actions): they render as their
//!   content or plain text.
//!
//! GitBook's HTML forms (tables, images, figures, anchors, `<details>`) are parsed with html5ever
//! into the blocks they stand for and written back in the same forms (the `html_dom` and
//! `html_table` modules). Nothing comrak yields is dropped silently: HTML blocks holding an
//! element outside that subset become `code` blocks with `syntax: "html"`, text-level tags
//! without a meaning (`<span>`, `<u>`) give their content, unknown inline HTML and unknown or
//! unbalanced liquid
//! tags stay literal text, link titles are kept in `data.title`, footnote syntax (not supported)
//! stays text. Liquid tags are recognised on their own line, optionally after a list marker, not
//! inside block quotes.

mod directives;
mod frontmatter;
mod html;
mod html_dom;
mod html_table;
mod link_target;
mod marks;
mod parse_blocks;
mod parse_inline;
mod render_blocks;
mod render_inline;
mod table;

use comrak::arena_tree::NodeEdge;
use comrak::{Arena, Options};

use crate::document::{ContentRef, Document};
use crate::limits::{self, LimitError};

pub use frontmatter::{FrontmatterError, LayoutVisibility, PageFrontmatter, PageLayout, split_frontmatter};
pub use link_target::{LinkTarget, is_unresolved_path, normalize_link_target, resolve_links};

/// A markdown file: page metadata and content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MarkdownPage {
    /// The YAML frontmatter.
    pub frontmatter: PageFrontmatter,
    /// The content.
    pub document: Document,
}

/// Why a markdown text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkdownError {
    #[error(transparent)]
    Frontmatter(#[from] FrontmatterError),
    #[error(transparent)]
    Limit(#[from] LimitError),
}

impl MarkdownError {
    /// The limit the text is over, if that is why it was refused.
    pub fn limit(&self) -> Option<&LimitError> {
        match self {
            MarkdownError::Limit(limit) => Some(limit),
            MarkdownError::Frontmatter(_) => None,
        }
    }
}

/// Parses a markdown file, frontmatter included.
pub fn parse_page(markdown: &str) -> Result<MarkdownPage, MarkdownError> {
    limits::check_markdown_size(markdown)?;
    let (yaml, body) = split_frontmatter(markdown);
    let yaml = yaml.unwrap_or_default();
    limits::check_frontmatter(yaml)?;
    let frontmatter = PageFrontmatter::from_yaml(yaml)?;
    frontmatter.check_limits()?;
    Ok(MarkdownPage {
        frontmatter,
        document: markdown_to_document(body)?,
    })
}

/// Writes a markdown file: frontmatter (when not empty), then content.
pub fn render_page(page: &MarkdownPage, resolve: &dyn Fn(&ContentRef) -> Option<String>) -> String {
    let yaml = page.frontmatter.to_yaml();
    let body = document_to_markdown(&page.document, resolve);
    if yaml.is_empty() {
        body
    } else {
        format!("---\n{yaml}---\n\n{body}")
    }
}

/// Parses markdown into a document. Frontmatter, if any, is skipped (see [`parse_page`]).
/// Link, image and file targets become `url` references holding the raw target; see
/// [`resolve_links`]. Nodes have no keys; see [`crate::document::fill_missing_keys`].
///
/// Refuses markdown over the limits of [`crate::limits`]: its size before parsing, its nesting
/// before the (recursive) conversion, and the document's limits after it.
pub fn markdown_to_document(markdown: &str) -> Result<Document, LimitError> {
    limits::check_markdown_size(markdown)?;
    let (_, body) = split_frontmatter(markdown);
    let (prepared, directives) = directives::extract(body);
    let arena = Arena::new();
    let root = comrak::parse_document(&arena, &prepared, &comrak_options());
    limits::markdown_nesting(ast_depth(root))?;
    let nodes = parse_blocks::convert_container(root, &directives);
    limits::markdown_nesting(directives.deepest_nesting())?;
    let document = Document::new(nodes);
    limits::check_document(&document)?;
    Ok(document)
}

/// The deepest nesting of comrak's tree (blocks and inline spans), walked without recursion.
fn ast_depth<'a>(root: &'a comrak::nodes::AstNode<'a>) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for edge in root.traverse() {
        match edge {
            NodeEdge::Start(_) => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            NodeEdge::End(_) => depth -= 1,
        }
    }
    // The document node itself is not a level of content.
    deepest.saturating_sub(1)
}

/// Renders a document as markdown. `resolve` gives the link target of a reference (a relative
/// path for a page or file id); references it leaves unresolved render as their best available
/// text target (the URL, `#anchor`, or the id). The output ends with a newline unless empty.
pub fn document_to_markdown(document: &Document, resolve: &dyn Fn(&ContentRef) -> Option<String>) -> String {
    let renderer = render_inline::Renderer::new(resolve);
    let mut markdown = render_blocks::blocks(&document.nodes, &renderer);
    if !markdown.is_empty() {
        markdown.push('\n');
    }
    markdown
}

/// The comrak dialect: GFM plus dollar math, without comrak's own frontmatter handling.
pub(crate) fn comrak_options() -> Options<'static> {
    let mut options = Options::default();
    options.extension.strikethrough = true;
    options.extension.table = true;
    options.extension.autolink = true;
    options.extension.tasklist = true;
    options.extension.math_dollars = true;
    options
}
