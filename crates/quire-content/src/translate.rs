//! Machine translation of documents: splitting a document into translatable segments, and
//! rebuilding it from the translations of those segments.
//!
//! Only human text is translated. Code blocks, inline code, math, URLs, page and file
//! references, ids, keys and the markup itself come back byte-identical, because a translator
//! never sees them: each text-bearing block becomes one line of *tagged text* in which the
//! markup is reduced to numbered placeholders, and the rebuild takes everything but the text
//! from the source document.
//!
//! # Segments
//!
//! [`segments`] walks the blocks in document order, fragments (captions, expandable title and
//! body, table cells) included. A block whose children are texts and inlines gives one tagged
//! segment; a few human strings kept in `data` give one plain segment each: `alt` (images),
//! `title` of a `tabs-item`, `label` of a `button` and the column titles of a `table`. The
//! blocks of [`SKIPPED_BLOCKS`] and the inlines of [`SKIPPED_INLINES`] are never looked into. A
//! segment whose human text has no letter at all (only digits, punctuation or placeholders) is
//! not a segment: there is nothing to translate, and skipping it saves a request.
//!
//! # Tagged text
//!
//! ```text
//! segment := (text | tag)*            one line: no raw line break
//! text    := characters, with & < > written &amp; &lt; &gt;, other control characters &#N;
//! tag     := <br/>                    a line break inside a leaf
//!          | <gN> segment </gN>       leaves with formatting (marks other than code)
//!          | <aN> segment </aN>       an inline with children (link, ...) around its content
//!          | <xN/>                    kept verbatim: inline code, images, mentions, math, ...
//! ```
//!
//! `N` numbers the tags of one segment from 1, all kinds together. Reading a translation back
//! accepts any case (`<G1>`, `&AMP;`, a translator may upper-case everything), spaces inside
//! tags (`< g1 >`, `<X3 />`), `<xN>` without the slash, `<br>`, and the entities `&quot;`,
//! `&apos;`, `&nbsp;`, `&#N;`, `&#xH;`. A `<` or `&` that does not start a tag or an entity is
//! text. The answer must hold every tag of the source exactly once, properly nested, each inside
//! the same `a` tag as in the source (moving a `g` around within its link is fine, moving an
//! image into a link is not); [`check_tagged`] says why an answer is refused.
//!
//! # Fallback
//!
//! When an answer does not validate, or a segment has more than [`MAX_TAGS`] tags, the caller
//! translates [`Segment::pieces`] instead (the trimmed texts of the leaves, without markup) and
//! passes [`Translated::Pieces`]: the rebuild then keeps every node and mark and replaces leaf
//! texts only, around the source's leading and trailing whitespace.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::document::{Document, Fragment, JsonMap, Leaf, MAX_DEPTH, Mark, Node};

/// Most tags in a tagged segment; a segment with more is translated by pieces. It bounds the
/// work of validating an answer and keeps segments a translator can realistically handle.
pub const MAX_TAGS: usize = 1_000;

/// Blocks never translated, nor anything inside them: code, formulas, and blocks whose text
/// comes from elsewhere (embeds, files, OpenAPI specifications, integrations, references to
/// other pages or to reusable content, drawings).
pub const SKIPPED_BLOCKS: &[&str] = &[
    "code",
    "code-line",
    "content-ref",
    "drawing",
    "embed",
    "file",
    "integration-block",
    "math",
    "openapi-operation",
    "openapi-schemas",
    "openapi-webhook",
    "reusable-content",
    "swagger",
];

/// Inlines kept verbatim even when they have children (quire writes math as `inline-math`;
/// `math` is accepted for documents written elsewhere).
pub const SKIPPED_INLINES: &[&str] = &["inline-math", "math"];

/// Human strings in `data`, by node type (`*`: any translated node), each a plain segment.
const DATA_TEXTS: &[(&str, &str)] = &[("*", "alt"), ("tabs-item", "title"), ("button", "label")];

/// Longest tag the reader recognizes: `<`, spaces, `/`, a name, 9 digits, `/`, `>` fit easily;
/// bounding it keeps reading linear whatever `<` the translator leaves around.
const MAX_TAG_BYTES: usize = 48;
/// Longest entity recognized, `&` to `;` included (`&#x10FFFF;` is 10).
const MAX_ENTITY_BYTES: usize = 12;

/// One translatable string of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The tagged text to translate (see the module documentation).
    pub text: String,
    pieces: Vec<String>,
    pieces_only: bool,
}

impl Segment {
    /// The trimmed texts of the segment's translatable leaves (those with a letter, inline code
    /// excluded), in order, without markup: what to translate when a tagged answer does not
    /// validate. Plain strings, not tagged text; other leaves are kept as they are.
    pub fn pieces(&self) -> &[String] {
        &self.pieces
    }

    /// Whether the segment has more than [`MAX_TAGS`] tags, so that only
    /// [`Translated::Pieces`] rebuilds it.
    pub fn pieces_only(&self) -> bool {
        self.pieces_only
    }
}

/// The translation of one segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translated {
    /// A translation of [`Segment::text`], tagged text.
    Tagged(String),
    /// One translation per [`Segment::pieces`], plain text.
    Pieces(Vec<String>),
}

/// Why [`rebuild`] refused its translations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RebuildError {
    /// Not one translation per segment.
    #[error("expected {expected} translations (one per segment), got {found}")]
    Count {
        /// Segments of the document.
        expected: usize,
        /// Translations given.
        found: usize,
    },
    /// The translation of segment `index` does not fit its source.
    #[error("segment {index}: {message}")]
    Segment {
        /// Index in [`segments`].
        index: usize,
        /// What is wrong.
        message: String,
    },
}

/// The translatable segments of a document, in document order (deterministic).
pub fn segments(document: &Document) -> Vec<Segment> {
    sites(document)
        .iter()
        .map(|site| match &site.kind {
            SiteKind::Content { encoded, depth } => {
                let mut pieces = Vec::new();
                collect_pieces(site.node.children(), *depth, &mut pieces);
                Segment {
                    text: encoded.text.clone(),
                    pieces,
                    pieces_only: encoded.tags.len() > MAX_TAGS,
                }
            }
            SiteKind::Data { value, .. } => Segment {
                text: plain_segment(value),
                pieces: vec![value.trim().to_owned()],
                pieces_only: false,
            },
        })
        .collect()
}

/// Rebuilds `document` with `translations[i]` in place of `segments(document)[i]`; everything
/// but the translated text is kept. A translation equal to its source keeps the source nodes
/// unchanged.
///
/// The result is not checked against [`crate::limits`]: a translation can be longer than its
/// source, so store it through the usual checks.
pub fn rebuild(document: &Document, translations: &[Translated]) -> Result<Document, RebuildError> {
    let sites = sites(document);
    if sites.len() != translations.len() {
        return Err(RebuildError::Count {
            expected: sites.len(),
            found: translations.len(),
        });
    }
    let mut edits: HashMap<*const Node, Edits<'_>> = HashMap::new();
    for (index, (site, translated)) in sites.iter().zip(translations).enumerate() {
        let entry = edits.entry(std::ptr::from_ref(site.node)).or_default();
        match &site.kind {
            SiteKind::Content { encoded, depth } => {
                entry.content = Some(ContentEdit {
                    index,
                    encoded,
                    depth: *depth,
                    translated,
                });
            }
            SiteKind::Data { path, value } => {
                let text = match translated {
                    Translated::Tagged(text) => {
                        plain_from_tagged(text).map_err(|message| RebuildError::Segment { index, message })?
                    }
                    Translated::Pieces(pieces) => match pieces.as_slice() {
                        [piece] => with_whitespace_of(value, piece),
                        _ => {
                            return Err(RebuildError::Segment {
                                index,
                                message: format!("expected 1 piece, got {}", pieces.len()),
                            });
                        }
                    },
                };
                entry.data.push((*path, text));
            }
        }
    }
    let rebuilder = Rebuilder { edits };
    let nodes = document
        .nodes
        .iter()
        .map(|node| rebuilder.node(node, 0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut rebuilt = Document::new(nodes);
    rebuilt.data = document.data.clone();
    rebuilt.extra = document.extra.clone();
    Ok(rebuilt)
}

/// Whether `translated` is an acceptable answer for the tagged segment `source`; the error says
/// why not.
pub fn check_tagged(source: &str, translated: &str) -> Result<(), String> {
    let specs = tag_specs(&tokenize(source)).map_err(|error| format!("source segment: {error}"))?;
    check_events(&tokenize(translated), &specs)
}

/// Words of the human text of a tagged string: tags and placeholders excluded, a token counts
/// when it holds a letter or a digit. Scripts written without spaces count one word per run.
pub fn word_count(tagged: &str) -> u64 {
    let mut text = String::new();
    for event in tokenize(tagged) {
        match event {
            Event::Text(part) => text.push_str(&part),
            Event::Br | Event::Void(..) | Event::Open(Kind::X, _) => text.push(' '),
            Event::Open(..) | Event::Close(..) => {}
        }
    }
    let words = text
        .split_whitespace()
        .filter(|word| word.chars().any(char::is_alphanumeric))
        .count();
    u64::try_from(words).unwrap_or(u64::MAX)
}

/// The human text of a tagged string: entities decoded, `<br/>` as a newline, tags and
/// placeholders dropped. Lossy; for previews and indexing, never for rebuilding.
pub fn human_text(tagged: &str) -> String {
    let mut text = String::new();
    for event in tokenize(tagged) {
        match event {
            Event::Text(part) => text.push_str(&part),
            Event::Br => text.push('\n'),
            _ => {}
        }
    }
    text
}

/// SHA-256 of a tagged text, lowercase hex: the key of a segment in a translation memory.
pub fn segment_hash(tagged: &str) -> String {
    let mut hex = String::with_capacity(64);
    for byte in Sha256::digest(tagged.as_bytes()) {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// A plain string (page title, description) as tagged text without tags.
pub fn plain_segment(text: &str) -> String {
    let mut tagged = String::with_capacity(text.len());
    escape_into(&mut tagged, text);
    tagged
}

/// The plain string of a translated [`plain_segment`]; refuses any tag but `<br/>`.
pub fn plain_from_tagged(tagged: &str) -> Result<String, String> {
    let mut text = String::with_capacity(tagged.len());
    for event in tokenize(tagged) {
        match event {
            Event::Text(part) => text.push_str(&part),
            Event::Br => text.push('\n'),
            Event::Open(kind, id) | Event::Void(kind, id) | Event::Close(kind, id) => {
                return Err(format!("unexpected tag {} in a plain text", tag_name(kind, id)));
            }
        }
    }
    Ok(text)
}

// ---------------------------------------------------------------------------------------------
// Sites: where the segments are.

/// A segment's place in the source document.
struct Site<'a> {
    node: &'a Node,
    kind: SiteKind<'a>,
}

enum SiteKind<'a> {
    /// The children of a text-bearing block, at nesting `depth`.
    Content { encoded: Encoded<'a>, depth: usize },
    /// A human string in `data`.
    Data { path: DataPath<'a>, value: &'a str },
}

#[derive(Clone, Copy)]
enum DataPath<'a> {
    /// `data[key]`.
    Key(&'static str),
    /// `data.definition[column].title` of a table.
    ColumnTitle(&'a str),
}

/// The sites of a document in document order: the single definition of that order, shared by
/// [`segments`] and [`rebuild`].
fn sites(document: &Document) -> Vec<Site<'_>> {
    let mut sites = Vec::new();
    collect_blocks(&document.nodes, 0, &mut sites);
    sites
}

/// Recursion is bounded by [`MAX_DEPTH`], which validation enforces on every stored document;
/// deeper nodes of a document built in Rust are left untranslated.
fn collect_blocks<'a>(nodes: &'a [Node], depth: usize, sites: &mut Vec<Site<'a>>) {
    if depth > MAX_DEPTH {
        return;
    }
    for node in nodes {
        if !node.is_block() || SKIPPED_BLOCKS.contains(&node.node_type()) {
            continue;
        }
        collect_data(node, sites);
        if node.children().first().is_some_and(|child| !child.is_block()) {
            let encoded = encode(node.children(), depth + 1);
            if encoded.has_letters {
                sites.push(Site {
                    node,
                    kind: SiteKind::Content {
                        encoded,
                        depth: depth + 1,
                    },
                });
            }
            collect_inline_data(node.children(), depth + 1, sites);
        } else {
            collect_blocks(node.children(), depth + 1, sites);
        }
        for fragment in node.fragments() {
            collect_blocks(&fragment.nodes, depth + 1, sites);
        }
    }
}

/// Data strings of inlines (`alt` of inline images): bounded like [`collect_blocks`].
fn collect_inline_data<'a>(nodes: &'a [Node], depth: usize, sites: &mut Vec<Site<'a>>) {
    if depth > MAX_DEPTH {
        return;
    }
    for node in nodes {
        if node.is_text() || SKIPPED_INLINES.contains(&node.node_type()) {
            continue;
        }
        collect_data(node, sites);
        collect_inline_data(node.children(), depth + 1, sites);
    }
}

fn collect_data<'a>(node: &'a Node, sites: &mut Vec<Site<'a>>) {
    for &(node_type, key) in DATA_TEXTS {
        if (node_type == "*" || node_type == node.node_type())
            && let Some(value) = node.data_str(key)
            && has_letters(value)
        {
            sites.push(Site {
                node,
                kind: SiteKind::Data {
                    path: DataPath::Key(key),
                    value,
                },
            });
        }
    }
    if node.node_type() == "table"
        && let Some(definition) = node.data_value("definition").and_then(Value::as_object)
    {
        for (column, definition) in definition {
            if let Some(title) = definition.get("title").and_then(Value::as_str)
                && has_letters(title)
            {
                sites.push(Site {
                    node,
                    kind: SiteKind::Data {
                        path: DataPath::ColumnTitle(column),
                        value: title,
                    },
                });
            }
        }
    }
}

fn has_letters(text: &str) -> bool {
    text.chars().any(char::is_alphabetic)
}

fn is_code_leaf(leaf: &Leaf) -> bool {
    leaf.marks.iter().any(|mark| mark.mark_type == "code")
}

/// Whether an inline of a text block becomes an `a` tag (its children translated) rather than
/// an `x` placeholder (kept whole). Past [`MAX_DEPTH`] everything is kept whole, which bounds
/// the recursion of the encoder and of the pieces walk.
fn is_container_inline(node: &Node, depth: usize) -> bool {
    node.is_inline()
        && node.nodes.is_some()
        && node.is_void != Some(true)
        && !SKIPPED_INLINES.contains(&node.node_type())
        && depth < MAX_DEPTH
}

/// Whether a leaf is one of [`Segment::pieces`].
fn is_piece(leaf: &Leaf) -> bool {
    !is_code_leaf(leaf) && has_letters(&leaf.text)
}

fn collect_pieces(nodes: &[Node], depth: usize, pieces: &mut Vec<String>) {
    for node in nodes {
        if node.is_text() {
            pieces.extend(
                node.leaves()
                    .iter()
                    .filter(|leaf| is_piece(leaf))
                    .map(|leaf| leaf.text.trim().to_owned()),
            );
        } else if is_container_inline(node, depth) {
            collect_pieces(node.children(), depth + 1, pieces);
        }
    }
}

/// `translation` trimmed, between the leading and trailing whitespace of `source`: translators
/// drop or add spaces at the ends, which would glue or split words at formatting boundaries.
fn with_whitespace_of(source: &str, translation: &str) -> String {
    let start = source.trim_start();
    let lead = &source[..source.len() - start.len()];
    let trail = &start[start.trim_end().len()..];
    format!("{lead}{}{trail}", translation.trim())
}

// ---------------------------------------------------------------------------------------------
// Encoding a block's content as tagged text.

/// The tagged text of a block's content, and what each tag stands for.
struct Encoded<'a> {
    text: String,
    /// Tag `N` is `tags[N - 1]`.
    tags: Vec<Tag<'a>>,
    /// Level 0 is the block's children; every `a` tag has its own level.
    levels: Vec<Level<'a>>,
    has_letters: bool,
}

enum Tag<'a> {
    /// `g`: a run of leaves with these marks; its first leaf gives marks and `extra`.
    Span(&'a Leaf),
    /// `a`: an inline whose children are the content of level `children`.
    Inline { node: &'a Node, children: usize },
    /// `x`: a leaf kept verbatim (inline code).
    VerbatimLeaf(&'a Leaf),
    /// `x`: an inline kept verbatim.
    VerbatimNode(&'a Node),
}

/// One list of inline content in the source, for what the rebuild cannot read from tags.
struct Level<'a> {
    /// Text nodes in order: their keys and fields go to the rebuilt text nodes in order.
    texts: Vec<&'a Node>,
    /// First leaf of each run of unmarked leaves: its `extra` goes to the rebuilt runs in order.
    plain_runs: Vec<&'a Leaf>,
    /// Whether every inline sits between two texts, as Slate-based editors normalize content;
    /// the rebuild then inserts empty texts to keep it so.
    padded: bool,
}

enum Run<'a> {
    None,
    Plain,
    Span(&'a [Mark], usize),
}

fn encode(nodes: &[Node], depth: usize) -> Encoded<'_> {
    let mut encoded = Encoded {
        text: String::new(),
        tags: Vec::new(),
        levels: Vec::new(),
        has_letters: false,
    };
    encoded.level(nodes, depth);
    encoded
}

impl<'a> Encoded<'a> {
    /// Recursion through `a` tags stops at [`MAX_DEPTH`] ([`is_container_inline`]).
    fn level(&mut self, nodes: &'a [Node], depth: usize) {
        let level = self.levels.len();
        self.levels.push(Level {
            texts: Vec::new(),
            plain_runs: Vec::new(),
            padded: is_padded(nodes),
        });
        let mut run = Run::None;
        for node in nodes {
            if node.is_text() {
                if let Some(level) = self.levels.get_mut(level) {
                    level.texts.push(node);
                }
                for leaf in node.leaves() {
                    self.leaf(leaf, level, &mut run);
                }
            } else if is_container_inline(node, depth) {
                self.close(&mut run);
                let id = self.tag(Tag::Inline {
                    node,
                    children: self.levels.len(),
                });
                let _ = write!(self.text, "<a{id}>");
                self.level(node.children(), depth + 1);
                let _ = write!(self.text, "</a{id}>");
            } else {
                self.close(&mut run);
                let id = self.tag(Tag::VerbatimNode(node));
                let _ = write!(self.text, "<x{id}/>");
            }
        }
        self.close(&mut run);
    }

    fn leaf(&mut self, leaf: &'a Leaf, level: usize, run: &mut Run<'a>) {
        // Empty leaves (Slate keeps them around inlines) carry no text and split no run.
        if leaf.text.is_empty() {
            return;
        }
        if is_code_leaf(leaf) {
            self.close(run);
            let id = self.tag(Tag::VerbatimLeaf(leaf));
            let _ = write!(self.text, "<x{id}/>");
            return;
        }
        if leaf.marks.is_empty() {
            if !matches!(run, Run::Plain) {
                self.close(run);
                if let Some(level) = self.levels.get_mut(level) {
                    level.plain_runs.push(leaf);
                }
                *run = Run::Plain;
            }
        } else if !matches!(run, Run::Span(marks, _) if *marks == leaf.marks.as_slice()) {
            self.close(run);
            let id = self.tag(Tag::Span(leaf));
            let _ = write!(self.text, "<g{id}>");
            *run = Run::Span(&leaf.marks, id);
        }
        self.has_letters |= has_letters(&leaf.text);
        escape_into(&mut self.text, &leaf.text);
    }

    fn close(&mut self, run: &mut Run<'a>) {
        if let Run::Span(_, id) = run {
            let _ = write!(self.text, "</g{id}>");
        }
        *run = Run::None;
    }

    fn tag(&mut self, tag: Tag<'a>) -> usize {
        self.tags.push(tag);
        self.tags.len()
    }

    fn tag_at(&self, id: u32) -> Option<&Tag<'a>> {
        self.tags.get(usize::try_from(id).ok()?.checked_sub(1)?)
    }
}

fn is_padded(nodes: &[Node]) -> bool {
    nodes.first().is_some_and(Node::is_text)
        && nodes.last().is_some_and(Node::is_text)
        && nodes
            .windows(2)
            .all(|pair| pair[0].is_text() || pair[1].is_text())
}

fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' => out.push_str("<br/>"),
            '\t' => out.push(c),
            // One line whatever the leaf holds: \r, U+2028 and the like are line breaks too.
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Reading tagged text.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    G,
    A,
    X,
}

#[derive(Debug, PartialEq, Eq)]
enum Event {
    Text(String),
    Br,
    Open(Kind, u32),
    Close(Kind, u32),
    /// `<gN/>`-style self-closed tag.
    Void(Kind, u32),
}

fn tag_name(kind: Kind, id: u32) -> String {
    let letter = match kind {
        Kind::G => 'g',
        Kind::A => 'a',
        Kind::X => 'x',
    };
    format!("<{letter}{id}>")
}

/// Splits tagged text into events in one pass; each `<` and `&` looks ahead a bounded number of
/// bytes, so reading is linear. Never fails: what is not a tag or an entity is text.
fn tokenize(input: &str) -> Vec<Event> {
    let bytes = input.as_bytes();
    let mut events = Vec::new();
    let mut text = String::new();
    let mut start = 0;
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        // `<` and `&` are ASCII, so `index` is a char boundary whenever they match.
        let parsed = match byte {
            b'<' => parse_tag(&input[index..]).map(|(event, length)| (Some(event), None, length)),
            b'&' => parse_entity(&input[index..]).map(|(c, length)| (None, Some(c), length)),
            _ => None,
        };
        let Some((event, entity, length)) = parsed else {
            index += 1;
            continue;
        };
        text.push_str(&input[start..index]);
        if let Some(c) = entity {
            text.push(c);
        }
        if let Some(event) = event {
            if !text.is_empty() {
                events.push(Event::Text(std::mem::take(&mut text)));
            }
            events.push(event);
        }
        index += length;
        start = index;
    }
    text.push_str(&input[start..]);
    if !text.is_empty() {
        events.push(Event::Text(text));
    }
    events
}

/// A tag at the start of `input` (which starts with `<`) and its length in bytes.
fn parse_tag(input: &str) -> Option<(Event, usize)> {
    let bytes = input.as_bytes();
    let bytes = &bytes[..bytes.len().min(MAX_TAG_BYTES)];
    let mut index = 1;
    let skip_spaces = |index: &mut usize| {
        while bytes.get(*index).is_some_and(u8::is_ascii_whitespace) {
            *index += 1;
        }
    };
    let eat = |index: &mut usize, expected: u8| {
        let found = bytes.get(*index) == Some(&expected);
        if found {
            *index += 1;
        }
        found
    };
    skip_spaces(&mut index);
    let closing = eat(&mut index, b'/');
    skip_spaces(&mut index);
    let name_start = index;
    while bytes.get(index).is_some_and(u8::is_ascii_alphabetic) {
        index += 1;
    }
    let name = &bytes[name_start..index];
    let digits_start = index;
    while bytes.get(index).is_some_and(u8::is_ascii_digit) {
        index += 1;
    }
    let digits = &bytes[digits_start..index];
    skip_spaces(&mut index);
    let self_closing = eat(&mut index, b'/');
    skip_spaces(&mut index);
    if !eat(&mut index, b'>') {
        return None;
    }
    if name.eq_ignore_ascii_case(b"br") && digits.is_empty() {
        return Some((Event::Br, index));
    }
    let kind = match name {
        [b'g' | b'G'] => Kind::G,
        [b'a' | b'A'] => Kind::A,
        [b'x' | b'X'] => Kind::X,
        _ => return None,
    };
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let id = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let event = match (closing, self_closing) {
        (false, false) => Event::Open(kind, id),
        (true, false) => Event::Close(kind, id),
        (false, true) => Event::Void(kind, id),
        (true, true) => return None,
    };
    Some((event, index))
}

/// An entity at the start of `input` (which starts with `&`) and its length in bytes.
fn parse_entity(input: &str) -> Option<(char, usize)> {
    let window = &input.as_bytes()[..input.len().min(MAX_ENTITY_BYTES)];
    let end = window.iter().position(|&byte| byte == b';')?;
    // `;` is ASCII: `end` is a char boundary.
    let name = input.get(1..end)?;
    let c = if let Some(number) = name.strip_prefix('#') {
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        char::from_u32(code)?
    } else {
        match name.to_ascii_lowercase().as_str() {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => '\u{a0}',
            _ => return None,
        }
    };
    Some((c, end + 1))
}

/// What a source segment says of one tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct TagSpec {
    kind: Kind,
    /// The `a` tag it sits in.
    parent: Option<u32>,
}

/// Walks the tags of `events`, checking they nest properly, and calls `visit` on each tag
/// with the `a` tag it sits in. `<xN>` counts as `<xN/>`.
fn walk_tags(
    events: &[Event],
    mut visit: impl FnMut(Kind, u32, Option<u32>) -> Result<(), String>,
) -> Result<(), String> {
    let mut open: Vec<(Kind, u32)> = Vec::new();
    let mut links: Vec<u32> = Vec::new();
    let mut count = 0;
    for event in events {
        let (kind, id, opens) = match *event {
            Event::Text(_) | Event::Br => continue,
            Event::Open(Kind::X, id) | Event::Void(Kind::X, id) => (Kind::X, id, false),
            Event::Open(kind, id) => (kind, id, true),
            Event::Void(kind, id) => return Err(format!("{} must not be self-closed", tag_name(kind, id))),
            Event::Close(kind, id) => {
                match open.pop() {
                    Some(top) if top == (kind, id) => {}
                    Some((top_kind, top_id)) => {
                        return Err(format!(
                            "closing {} while {} is open",
                            tag_name(kind, id),
                            tag_name(top_kind, top_id)
                        ));
                    }
                    None => return Err(format!("closing {} that is not open", tag_name(kind, id))),
                }
                if kind == Kind::A {
                    links.pop();
                }
                continue;
            }
        };
        count += 1;
        if count > MAX_TAGS {
            return Err(format!("more than {MAX_TAGS} tags"));
        }
        visit(kind, id, links.last().copied())?;
        if opens {
            open.push((kind, id));
            if kind == Kind::A {
                links.push(id);
            }
        }
    }
    match open.last() {
        Some(&(kind, id)) => Err(format!("{} is not closed", tag_name(kind, id))),
        None => Ok(()),
    }
}

/// The tags of a source segment.
fn tag_specs(events: &[Event]) -> Result<HashMap<u32, TagSpec>, String> {
    let mut specs = HashMap::new();
    walk_tags(events, |kind, id, parent| {
        match specs.insert(id, TagSpec { kind, parent }) {
            Some(_) => Err(format!("tag number {id} is used twice")),
            None => Ok(()),
        }
    })?;
    Ok(specs)
}

/// Checks a translation's events against the tags of its source.
fn check_events(events: &[Event], specs: &HashMap<u32, TagSpec>) -> Result<(), String> {
    let mut seen = HashSet::new();
    walk_tags(events, |kind, id, parent| {
        let spec = specs
            .get(&id)
            .filter(|spec| spec.kind == kind)
            .ok_or_else(|| format!("unknown tag {}", tag_name(kind, id)))?;
        if !seen.insert(id) {
            return Err(format!("{} appears twice", tag_name(kind, id)));
        }
        if spec.parent != parent {
            return Err(format!(
                "{} moved {}",
                tag_name(kind, id),
                match spec.parent {
                    Some(link) => format!("out of {}", tag_name(Kind::A, link)),
                    None => "into a link".to_owned(),
                }
            ));
        }
        Ok(())
    })?;
    let mut missing: Vec<(u32, Kind)> = specs
        .iter()
        .filter(|(id, _)| !seen.contains(*id))
        .map(|(id, spec)| (*id, spec.kind))
        .collect();
    missing.sort_unstable_by_key(|(id, _)| *id);
    match missing.first() {
        Some(&(id, kind)) => Err(format!(
            "{} is missing ({} tags missing)",
            tag_name(kind, id),
            missing.len()
        )),
        None => Ok(()),
    }
}

// ---------------------------------------------------------------------------------------------
// Rebuilding.

#[derive(Default)]
struct Edits<'a> {
    content: Option<ContentEdit<'a>>,
    data: Vec<(DataPath<'a>, String)>,
}

#[derive(Clone, Copy)]
struct ContentEdit<'a> {
    index: usize,
    encoded: &'a Encoded<'a>,
    depth: usize,
    translated: &'a Translated,
}

/// Rebuilds nodes, applying the edits found by source node address: the address of a node of
/// the borrowed source is stable, and it is what both the tagged and the pieces rebuilds can
/// look up when they meet a source inline again.
struct Rebuilder<'a> {
    edits: HashMap<*const Node, Edits<'a>>,
}

/// Inline content being rebuilt from a tagged answer.
enum Item {
    Text { text: String, span: Option<u32> },
    Leaf(Leaf),
    Node(Node),
}

struct Frame {
    level: usize,
    link: Option<u32>,
    items: Vec<Item>,
    spans: Vec<u32>,
}

impl Frame {
    fn new(level: usize, link: Option<u32>) -> Self {
        Self {
            level,
            link,
            items: Vec::new(),
            spans: Vec::new(),
        }
    }

    fn push_text(&mut self, text: &str) {
        let span = self.spans.last().copied();
        if let Some(Item::Text {
            text: last,
            span: last_span,
        }) = self.items.last_mut()
            && *last_span == span
        {
            last.push_str(text);
            return;
        }
        self.items.push(Item::Text {
            text: text.to_owned(),
            span,
        });
    }
}

impl Rebuilder<'_> {
    /// Recursion is bounded by [`MAX_DEPTH`], like [`collect_blocks`]; deeper nodes are cloned.
    fn node(&self, source: &Node, depth: usize) -> Result<Node, RebuildError> {
        if depth > MAX_DEPTH {
            return Ok(source.clone());
        }
        let mut node = self.shallow(source, depth)?;
        let content = self
            .edits
            .get(&std::ptr::from_ref(source))
            .and_then(|edits| edits.content);
        node.nodes = match content {
            Some(edit) => Some(self.content(source, edit)?),
            None => self.children(source, depth)?,
        };
        Ok(node)
    }

    fn children(&self, source: &Node, depth: usize) -> Result<Option<Vec<Node>>, RebuildError> {
        source
            .nodes
            .as_ref()
            .map(|children| children.iter().map(|child| self.node(child, depth + 1)).collect())
            .transpose()
    }

    /// A copy of `source` without children, its data edits applied and its fragments rebuilt.
    fn shallow(&self, source: &Node, depth: usize) -> Result<Node, RebuildError> {
        let mut data = source.data.clone();
        if let (Some(edits), Some(data)) = (self.edits.get(&std::ptr::from_ref(source)), data.as_mut()) {
            for (path, value) in &edits.data {
                set_data(data, *path, value);
            }
        }
        let fragments = match &source.fragments {
            Some(fragments) => Some(
                fragments
                    .iter()
                    .map(|fragment| self.fragment(fragment, depth))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        Ok(Node {
            object: source.object,
            node_type: source.node_type.clone(),
            key: source.key.clone(),
            is_void: source.is_void,
            data,
            nodes: None,
            leaves: source.leaves.clone(),
            fragments,
            extra: source.extra.clone(),
        })
    }

    fn fragment(&self, source: &Fragment, depth: usize) -> Result<Fragment, RebuildError> {
        let mut fragment = Fragment::default();
        fragment.key.clone_from(&source.key);
        fragment.fragment.clone_from(&source.fragment);
        fragment.fragment_type.clone_from(&source.fragment_type);
        fragment.extra.clone_from(&source.extra);
        fragment.nodes = source
            .nodes
            .iter()
            .map(|node| self.node(node, depth + 1))
            .collect::<Result<_, _>>()?;
        Ok(fragment)
    }

    /// The new children of a text-bearing block.
    fn content(&self, source: &Node, edit: ContentEdit<'_>) -> Result<Vec<Node>, RebuildError> {
        let fail = |message: String| RebuildError::Segment {
            index: edit.index,
            message,
        };
        match edit.translated {
            Translated::Tagged(text) if *text == edit.encoded.text => Ok(self
                .children(source, edit.depth.saturating_sub(1))?
                .unwrap_or_default()),
            Translated::Tagged(text) => {
                if edit.encoded.tags.len() > MAX_TAGS {
                    return Err(fail(format!("more than {MAX_TAGS} tags: translate it by pieces")));
                }
                let specs = tag_specs(&tokenize(&edit.encoded.text)).map_err(&fail)?;
                let events = tokenize(text);
                check_events(&events, &specs).map_err(&fail)?;
                self.build(edit, events)
            }
            Translated::Pieces(pieces) => {
                let mut pieces = pieces.iter();
                let children = self.pieces_level(source.children(), &mut pieces, edit.depth, edit.index)?;
                let extra = pieces.count();
                if extra > 0 {
                    return Err(fail(format!("{extra} more pieces than the segment has")));
                }
                Ok(children)
            }
        }
    }

    /// Inline content from a validated tagged answer, with an explicit stack: its depth is the
    /// nesting of `a` tags, which the answer decides.
    fn build(&self, edit: ContentEdit<'_>, events: Vec<Event>) -> Result<Vec<Node>, RebuildError> {
        let encoded = edit.encoded;
        let fail = |message: &str| RebuildError::Segment {
            index: edit.index,
            message: message.to_owned(),
        };
        let mut stack = vec![Frame::new(0, None)];
        for event in events {
            let frame = stack.last_mut().ok_or_else(|| fail("unbalanced tags"))?;
            match event {
                Event::Text(text) => frame.push_text(&text),
                Event::Br => frame.push_text("\n"),
                Event::Open(Kind::G, id) => frame.spans.push(id),
                Event::Close(Kind::G, _) => {
                    frame.spans.pop();
                }
                Event::Open(Kind::A, id) => match encoded.tag_at(id) {
                    Some(Tag::Inline { children, .. }) => stack.push(Frame::new(*children, Some(id))),
                    _ => return Err(fail("tag table out of step")),
                },
                Event::Close(Kind::A, _) => {
                    let done = stack.pop().ok_or_else(|| fail("unbalanced tags"))?;
                    let Some(Tag::Inline { node: source, .. }) = done.link.and_then(|id| encoded.tag_at(id))
                    else {
                        return Err(fail("tag table out of step"));
                    };
                    let mut inline = self.shallow(source, edit.depth)?;
                    inline.nodes = Some(finish(encoded, done));
                    stack
                        .last_mut()
                        .ok_or_else(|| fail("unbalanced tags"))?
                        .items
                        .push(Item::Node(inline));
                }
                Event::Open(Kind::X, id) | Event::Void(Kind::X, id) => {
                    let item = match encoded.tag_at(id) {
                        Some(Tag::VerbatimLeaf(leaf)) => Item::Leaf((*leaf).clone()),
                        Some(Tag::VerbatimNode(node)) => Item::Node(self.node(node, edit.depth)?),
                        _ => return Err(fail("tag table out of step")),
                    };
                    frame.items.push(item);
                }
                Event::Close(Kind::X, _) | Event::Void(..) => return Err(fail("unbalanced tags")),
            }
        }
        match (stack.pop(), stack.is_empty()) {
            (Some(root), true) => Ok(finish(encoded, root)),
            _ => Err(fail("unbalanced tags")),
        }
    }

    /// Inline content with leaf texts replaced by pieces; recursion bounded like
    /// [`collect_pieces`].
    fn pieces_level<'p>(
        &self,
        nodes: &[Node],
        pieces: &mut impl Iterator<Item = &'p String>,
        depth: usize,
        index: usize,
    ) -> Result<Vec<Node>, RebuildError> {
        let mut rebuilt = Vec::with_capacity(nodes.len());
        for node in nodes {
            if node.is_text() {
                let mut text = node.clone();
                for leaf in text.leaves.iter_mut().flatten() {
                    if is_piece(leaf) {
                        let piece = pieces.next().ok_or_else(|| RebuildError::Segment {
                            index,
                            message: "fewer pieces than the segment has".to_owned(),
                        })?;
                        leaf.text = with_whitespace_of(&leaf.text, piece);
                    }
                }
                rebuilt.push(text);
            } else if is_container_inline(node, depth) {
                let mut inline = self.shallow(node, depth)?;
                inline.nodes = Some(self.pieces_level(node.children(), pieces, depth + 1, index)?);
                rebuilt.push(inline);
            } else {
                rebuilt.push(self.node(node, depth)?);
            }
        }
        Ok(rebuilt)
    }
}

/// Turns a frame's items into inline content: leaves grouped in text nodes, which take the keys
/// and fields of the level's source text nodes in order (never a key twice).
fn finish(encoded: &Encoded<'_>, frame: Frame) -> Vec<Node> {
    let level = encoded.levels.get(frame.level);
    let mut nodes = Vec::new();
    let mut leaves = Vec::new();
    let mut plain_runs = level.map(|level| level.plain_runs.iter()).into_iter().flatten();
    for item in frame.items {
        match item {
            Item::Text { text, span } => {
                if text.is_empty() {
                    continue;
                }
                let source = match span.and_then(|id| encoded.tag_at(id)) {
                    Some(Tag::Span(leaf)) => Some(*leaf),
                    _ => None,
                };
                let leaf = match source {
                    Some(source) => {
                        let mut leaf = Leaf::new(&text, source.marks.clone());
                        leaf.extra.clone_from(&source.extra);
                        leaf
                    }
                    None => {
                        let mut leaf = Leaf::new(&text, Vec::new());
                        if let Some(source) = plain_runs.next() {
                            leaf.extra.clone_from(&source.extra);
                        }
                        leaf
                    }
                };
                leaves.push(leaf);
            }
            Item::Leaf(leaf) => leaves.push(leaf),
            Item::Node(node) => {
                if !leaves.is_empty() {
                    nodes.push(Node::text(std::mem::take(&mut leaves)));
                }
                nodes.push(node);
            }
        }
    }
    if !leaves.is_empty() {
        nodes.push(Node::text(leaves));
    }
    if level.is_some_and(|level| level.padded) {
        nodes = pad(nodes);
    }
    let mut texts = level.map(|level| level.texts.iter()).into_iter().flatten();
    for node in nodes.iter_mut().filter(|node| node.is_text()) {
        if let Some(source) = texts.next() {
            node.key.clone_from(&source.key);
            node.extra.clone_from(&source.extra);
        }
    }
    nodes
}

/// Puts an empty text before, between and after inlines where there is none.
fn pad(nodes: Vec<Node>) -> Vec<Node> {
    let mut padded = Vec::with_capacity(nodes.len() + 2);
    let mut after_text = false;
    for node in nodes {
        if !node.is_text() && !after_text {
            padded.push(Node::plain_text(""));
        }
        after_text = node.is_text();
        padded.push(node);
    }
    if !after_text {
        padded.push(Node::plain_text(""));
    }
    padded
}

fn set_data(data: &mut JsonMap, path: DataPath<'_>, value: &str) {
    match path {
        DataPath::Key(key) => {
            data.insert(key.to_owned(), Value::String(value.to_owned()));
        }
        DataPath::ColumnTitle(column) => {
            if let Some(definition) = data
                .get_mut("definition")
                .and_then(|definition| definition.get_mut(column))
                .and_then(Value::as_object_mut)
            {
                definition.insert("title".to_owned(), Value::String(value.to_owned()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown_to_document;

    const SAMPLE: &str = r#"# Getting started

Welcome to **quire**, the *best* tool & more <here>. Use `cargo run` to start.\
Second line.

See [the docs](https://example.com/x) and [**bold link** here](https://example.com/y).

Read [another page](other.md) next.

```rust
fn main() { println!("hello"); }
```

{% hint style="info" %}
This is a **hint** body.
{% endhint %}

| Name | Description |
| --- | --- |
| Alpha | First *letter* |
| Beta | Second |

- First item
- Second item with `code`

![alt text](https://example.com/a.png)

<details>

<summary>Click to expand</summary>

Hidden content here.

</details>

{% content-ref url="other.md" %}
[other.md](other.md)
{% endcontent-ref %}

$$
x^2
$$

12345
"#;

    fn sample() -> Document {
        markdown_to_document(SAMPLE).unwrap()
    }

    fn tagged(segments: &[Segment]) -> Vec<Translated> {
        segments
            .iter()
            .map(|segment| Translated::Tagged(segment.text.clone()))
            .collect()
    }

    /// Every node of the given types, as JSON, in document order.
    fn nodes_of(document: &Document, types: &[&str]) -> Vec<Value> {
        let mut found = Vec::new();
        crate::document::walk_nodes(&document.nodes, &mut |node| {
            if types.contains(&node.node_type()) {
                found.push(serde_json::to_value(node).unwrap());
            }
        });
        found
    }

    /// Every leaf with `code`, and the concatenated other leaves, of each paragraph.
    fn paragraph_texts(document: &Document) -> Vec<(String, Vec<Leaf>)> {
        let mut found = Vec::new();
        crate::document::walk_nodes(&document.nodes, &mut |node| {
            if node.node_type() == "paragraph" {
                let mut text = String::new();
                let mut code = Vec::new();
                crate::document::walk_nodes(node.children(), &mut |child| {
                    for leaf in child.leaves() {
                        if is_code_leaf(leaf) {
                            code.push(leaf.clone());
                        } else {
                            text.push_str(&leaf.text);
                        }
                    }
                });
                found.push((text, code));
            }
        });
        found
    }

    #[test]
    fn segments_cover_human_text_only() {
        let segments = segments(&sample());
        let texts: Vec<&str> = segments.iter().map(|segment| segment.text.as_str()).collect();
        assert!(texts.contains(&"Getting started"), "{texts:#?}");
        assert!(
            texts.contains(
                &"Welcome to <g1>quire</g1>, the <g2>best</g2> tool &amp; more &lt;here&gt;. \
                  Use <x3/> to start.<br/>Second line."
            ),
            "{texts:#?}"
        );
        assert!(
            texts.contains(&"See <a1>the docs</a1> and <a2><g3>bold link</g3> here</a2>."),
            "{texts:#?}"
        );
        for expected in [
            "This is a <g1>hint</g1> body.",
            "Name",
            "Description",
            "First <g1>letter</g1>",
            "Second item with <x1/>",
            "alt text",
            "Click to expand",
            "Hidden content here.",
        ] {
            assert!(texts.contains(&expected), "{expected} not in {texts:#?}");
        }
        for text in &texts {
            assert!(!text.contains("println"), "code block in {text}");
            assert!(!text.contains("x^2"), "math in {text}");
            assert!(!text.contains("12345"), "digits only in {text}");
            assert!(!text.contains("other.md"), "content-ref in {text}");
        }
        assert_eq!(segments, super::segments(&sample()), "deterministic");
    }

    #[test]
    fn tagged_text_is_one_line() {
        let mut document = sample();
        document.nodes.push(Node::paragraph(vec![Node::plain_text(
            "a\nb\r\nc\u{2028}d\u{85}e",
        )]));
        let segments = segments(&document);
        for segment in &segments {
            assert!(
                !segment.text.contains(['\n', '\r', '\u{2028}', '\u{85}']),
                "{:?}",
                segment.text
            );
        }
        let last = segments.last().unwrap();
        assert_eq!(human_text(&last.text), "a\nb\r\nc\u{2028}d\u{85}e");
        let rebuilt = rebuild(&document, &tagged(&segments)).unwrap();
        assert_eq!(rebuilt, document);
    }

    #[test]
    fn identity_rebuild_gives_the_source_back() {
        let document = sample();
        let segments = segments(&document);
        assert_eq!(rebuild(&document, &tagged(&segments)).unwrap(), document);
        let pieces: Vec<Translated> = segments
            .iter()
            .map(|segment| Translated::Pieces(segment.pieces().to_vec()))
            .collect();
        assert_eq!(rebuild(&document, &pieces).unwrap(), document);
    }

    #[test]
    fn reading_back_an_unchanged_answer_builds_the_same_content() {
        // The rebuild keeps an unchanged answer's source nodes without reading it: read every
        // segment back here to check the reader and builder on their own.
        let document = sample();
        let rebuilder = Rebuilder {
            edits: HashMap::new(),
        };
        for site in sites(&document) {
            let SiteKind::Content { encoded, depth } = &site.kind else {
                continue;
            };
            let edit = ContentEdit {
                index: 0,
                encoded,
                depth: *depth,
                translated: &Translated::Pieces(Vec::new()),
            };
            let built = rebuilder.build(edit, tokenize(&encoded.text)).unwrap();
            assert_eq!(built, site.node.children(), "{}", encoded.text);
        }
    }

    #[test]
    fn upper_casing_translator_keeps_code_urls_and_structure() {
        let document = sample();
        let segments = segments(&document);
        let translations: Vec<Translated> = segments
            .iter()
            .map(|segment| Translated::Tagged(segment.text.to_uppercase()))
            .collect();
        let rebuilt = rebuild(&document, &translations).unwrap();
        rebuilt.validate().unwrap();
        assert_eq!(
            nodes_of(&rebuilt, &["code", "math", "content-ref"]),
            nodes_of(&document, &["code", "math", "content-ref"])
        );
        let links = nodes_of(&document, &["link"]);
        let rebuilt_links = nodes_of(&rebuilt, &["link"]);
        assert_eq!(links.len(), rebuilt_links.len());
        for (before, after) in links.iter().zip(&rebuilt_links) {
            assert_eq!(before["data"], after["data"]);
            assert_eq!(before["key"], after["key"]);
        }
        let images = nodes_of(&rebuilt, &["image"]);
        assert_eq!(images[0]["data"]["alt"], "ALT TEXT");
        assert_eq!(
            images[0]["data"]["ref"],
            nodes_of(&document, &["image"])[0]["data"]["ref"]
        );
        for ((before, before_code), (after, after_code)) in paragraph_texts(&document)
            .into_iter()
            .zip(paragraph_texts(&rebuilt))
        {
            assert_eq!(after, before.to_uppercase());
            assert_eq!(after_code, before_code, "inline code kept verbatim");
        }
        let table = &nodes_of(&rebuilt, &["table"])[0];
        assert_eq!(table["data"]["definition"]["c0"]["title"], "NAME");
        assert_eq!(
            serde_json::to_string(&table["data"]["records"]).unwrap(),
            serde_json::to_string(&nodes_of(&document, &["table"])[0]["data"]["records"]).unwrap()
        );
    }

    #[test]
    fn a_dropped_tag_is_refused_and_pieces_rebuild() {
        let document = sample();
        let segments = segments(&document);
        let index = segments
            .iter()
            .position(|segment| segment.text.starts_with("See <a1>"))
            .unwrap();
        let source = &segments[index].text;
        let answer = "Voir la doc et <a2><g3>lien gras</g3> ici</a2>.";
        let error = check_tagged(source, answer).unwrap_err();
        assert!(error.contains("<a1> is missing"), "{error}");
        let mut translations = tagged(&segments);
        translations[index] = Translated::Tagged(answer.to_owned());
        let error = rebuild(&document, &translations).unwrap_err();
        assert!(
            matches!(&error, RebuildError::Segment { index: found, .. } if *found == index),
            "{error}"
        );

        assert_eq!(
            segments[index].pieces(),
            ["See", "the docs", "and", "bold link", "here"].map(str::to_owned)
        );
        translations[index] = Translated::Pieces(
            ["Voir", "la doc", "et", "lien gras", "ici"]
                .map(str::to_owned)
                .to_vec(),
        );
        let rebuilt = rebuild(&document, &translations).unwrap();
        rebuilt.validate().unwrap();
        let texts = paragraph_texts(&rebuilt);
        assert!(
            texts
                .iter()
                .any(|(text, _)| text == "Voir la doc et lien gras ici."),
            "{texts:?}"
        );
        assert_eq!(
            nodes_of(&rebuilt, &["link"]).len(),
            nodes_of(&document, &["link"]).len()
        );

        translations[index] = Translated::Pieces(vec!["too few".to_owned()]);
        assert!(rebuild(&document, &translations).is_err());
    }

    #[test]
    fn answers_are_read_leniently_and_checked_strictly() {
        let source = "A <g1>b</g1> <a2>c <g3>d</g3></a2> <x4/> &amp;";
        for good in [
            "A <G1>B</G1> <A2>C <G3>D</G3></A2> <X4/> &AMP;",
            "<x4> a < g1 >b</ g1 > <a2><g3>d</g3> c</a2> &amp;",
            "<a2><g3>d</g3></a2><g1></g1><X4 />",
        ] {
            check_tagged(source, good).unwrap();
        }
        for (bad, why) in [
            ("A <g1>b</g1> <a2>c <g3>d</g3></a2>", "<x4> is missing"),
            ("A <g1>b</g1> <a2>c <g3>d</g3></a2> <x4/><x4/>", "appears twice"),
            (
                "A <g1>b <a2>c <g3>d</a2></g3> <x4/>",
                "closing <a2> while <g3> is open",
            ),
            (
                "A <g1>b</g1> <a2>c <g3>d</g3> <x4/></a2>",
                "<x4> moved into a link",
            ),
            (
                "A <g1>b</g1> <a2>c</a2> <g3>d</g3> <x4/>",
                "<g3> moved out of <a2>",
            ),
            (
                "A <g1>b</g1> <a2>c <g3>d</g3></a2> <x4/> <g5>e</g5>",
                "unknown tag <g5>",
            ),
            ("A <a1>b</a1> <a2>c <g3>d</g3></a2> <x4/>", "unknown tag <a1>"),
            (
                "A <g1>b</g1> <a2>c <g3>d</g3></a2> <x4/> <g1/>",
                "must not be self-closed",
            ),
            ("A <g1>b <a2>c <g3>d</g3></a2> <x4/>", "<g1> is not closed"),
        ] {
            let error = check_tagged(source, bad).unwrap_err();
            assert!(error.contains(why), "{bad}: {error} (expected {why})");
        }
        assert_eq!(
            human_text("a &lt;b&GT; &#X41;&#66; &quot;&apos; & <x1/> <y> &bogus;"),
            "a <b> AB \"' &  <y> &bogus;"
        );
    }

    #[test]
    fn plain_segments_round_trip() {
        let text = "Tom & Jerry <3\nsecond line";
        let tagged = plain_segment(text);
        assert_eq!(tagged, "Tom &amp; Jerry &lt;3<br/>second line");
        assert_eq!(plain_from_tagged(&tagged).unwrap(), text);
        assert_eq!(
            plain_from_tagged("TOM &AMP; JERRY<BR />X").unwrap(),
            "TOM & JERRY\nX"
        );
        assert!(plain_from_tagged("a <g1>b</g1>").is_err());
    }

    #[test]
    fn word_count_counts_human_words() {
        assert_eq!(
            word_count("Welcome to <g1>quire</g1>, the <g2>best</g2> tool &amp; more."),
            7
        );
        assert_eq!(word_count("Use <x1/> to <a2>start</a2> it<br/>now"), 5);
        assert_eq!(word_count("un<g1>believ</g1>able"), 1);
        assert_eq!(word_count("a<x1/>b"), 2);
        assert_eq!(word_count(""), 0);
        assert_eq!(word_count("- * 42"), 1);
    }

    #[test]
    fn segment_hash_is_sha256_hex() {
        assert_eq!(
            segment_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn tag_limit_forces_pieces() {
        let leaves: Vec<Leaf> = (0..=MAX_TAGS)
            .map(|index| {
                let marks = if index % 2 == 0 {
                    vec![Mark::new("bold")]
                } else {
                    vec![Mark::new("italic")]
                };
                Leaf::new("word ", marks)
            })
            .collect();
        let document = Document::new(vec![Node::paragraph(vec![Node::text(leaves)])]);
        let segments = segments(&document);
        assert!(segments[0].pieces_only());
        let answer = Translated::Tagged(segments[0].text.replace("word", "mot"));
        assert!(rebuild(&document, &[answer]).is_err());
        let pieces = segments[0].pieces().iter().map(|_| "mot".to_owned()).collect();
        let rebuilt = rebuild(&document, &[Translated::Pieces(pieces)]).unwrap();
        assert_eq!(rebuilt.nodes[0].children()[0].leaves()[1].text, "mot ");
    }

    #[test]
    fn keys_are_kept_and_never_duplicated() {
        let mut document = sample();
        let mut counter = 0;
        crate::fill_missing_keys(&mut document, &mut || {
            counter += 1;
            format!("k{counter}")
        });
        let segments = segments(&document);
        let translations: Vec<Translated> = segments
            .iter()
            .map(|segment| {
                // Reorders text around tags, which changes how many text nodes there are.
                Translated::Tagged(format!("Z {} Z", segment.text.to_uppercase()))
            })
            .collect();
        let rebuilt = rebuild(&document, &translations).unwrap();
        rebuilt.validate().unwrap();
        let mut keys = HashSet::new();
        crate::document::walk_nodes(&rebuilt.nodes, &mut |node| {
            if let Some(key) = &node.key {
                assert!(keys.insert(key.clone()), "duplicate key {key}");
            }
        });
        let mut source_blocks = Vec::new();
        crate::document::walk_nodes(&document.nodes, &mut |node| {
            if !node.is_text() {
                source_blocks.push(node.key.clone());
            }
        });
        let mut rebuilt_blocks = Vec::new();
        crate::document::walk_nodes(&rebuilt.nodes, &mut |node| {
            if !node.is_text() {
                rebuilt_blocks.push(node.key.clone());
            }
        });
        assert_eq!(source_blocks, rebuilt_blocks);
    }

    #[test]
    fn garbage_answers_never_panic() {
        let document = sample();
        let segments = segments(&document);
        // A small deterministic generator: no dependency, reproducible failures.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = [
            "<", ">", "/", "&", ";", "#", "x", "X", "g", "a", "1", "2", "3", "b", "r", " ", "é", "amp", "&#",
            "<g1>", "</g1>", "<a1>", "</a1>", "<x1/>", "<a2>", "</a2>", "<g3>", "</g3>", "<br/>", "\n",
        ];
        for round in 0..400 {
            let translations: Vec<Translated> = segments
                .iter()
                .map(|segment| {
                    let length = usize::try_from(next() % 24).unwrap();
                    let mut answer = String::new();
                    if round % 3 == 0 {
                        answer.push_str(&segment.text);
                    }
                    for _ in 0..length {
                        answer.push_str(alphabet[usize::try_from(next()).unwrap() % alphabet.len()]);
                    }
                    if round % 5 == 0 {
                        Translated::Pieces(segment.pieces().iter().map(|_| answer.clone()).collect())
                    } else {
                        Translated::Tagged(answer)
                    }
                })
                .collect();
            if let Ok(rebuilt) = rebuild(&document, &translations) {
                rebuilt.validate().unwrap();
            }
            for translation in &translations {
                if let Translated::Tagged(answer) = translation {
                    let _ = word_count(answer);
                    let _ = plain_from_tagged(answer);
                }
            }
        }
    }
}
