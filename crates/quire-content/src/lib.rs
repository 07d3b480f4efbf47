//! Pure content logic of quire: the document model, markdown conversion, link extraction and
//! search sections. Nothing here does I/O.
//!
//! - [`document`]: the JSON document tree of GitBook's API ([`Document`], [`Node`], [`Leaf`],
//!   [`Mark`], [`Fragment`], [`ContentRef`]), lossless for unknown types and fields, with
//!   validation ([`Document::from_json`]), keys ([`fill_missing_keys`]) and reference visitors
//!   ([`for_each_ref`], [`for_each_ref_mut`]).
//! - [`markdown`]: GitBook-flavoured markdown to and from documents
//!   ([`markdown_to_document`], [`document_to_markdown`], [`parse_page`], [`render_page`]),
//!   frontmatter ([`PageFrontmatter`]) and link targets ([`normalize_link_target`],
//!   [`resolve_links`]).
//! - [`limits`]: the limits on content input, checked where it is parsed.
//! - [`text`], [`sections`], [`search_text`], [`links`], [`slug`]: plain text, search sections,
//!   the folded text search indexes, outgoing references and slugs.

pub mod buckets;
pub mod changes;
pub mod computed;
pub mod conversations;
pub mod diff;
pub mod document;
pub mod evaluate;
pub mod import;
pub mod import_redirects;
pub mod limits;
pub mod links;
pub mod markdown;
pub mod merge;
pub mod order;
pub mod page_markdown;
pub mod parallel;
pub mod raw_document;
pub mod search_text;
pub mod sections;
pub mod slug;
pub mod text;
pub mod translate;
pub mod tree;

pub use document::{
    ContentRef, Document, Fragment, JsonMap, Leaf, Mark, Node, NodeObject, RefSite, ValidationError,
    fill_missing_keys, for_each_ref, for_each_ref_mut, strip_keys, validate_document,
};
pub use links::{DocumentLink, extract_links};
pub use markdown::{
    FrontmatterError, LayoutVisibility, LinkTarget, MarkdownError, MarkdownPage, PageFrontmatter, PageLayout,
    document_to_markdown, is_unresolved_path, markdown_to_document, normalize_link_target, parse_page,
    render_page, resolve_links, split_frontmatter,
};
pub use sections::{Section, heading_anchors, sections, with_heading_ids};
pub use slug::{gitbook_anchor, gitbook_legacy_anchor, slugify};
pub use text::{plain_text, plain_text_of_nodes};
