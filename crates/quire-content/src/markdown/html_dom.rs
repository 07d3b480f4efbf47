//! GitBook's HTML forms inside markdown, parsed as a browser would (html5ever, through
//! `scraper`) into document blocks.
//!
//! GitBook writes what markdown cannot carry as HTML: tables with card views, hidden headers,
//! column types and block content in cells; images with a size, an alignment, a caption or a
//! dark variant (`<img>`, `<figure>`, `<picture>`, `<div align>`); anchors (`<a name>`,
//! `<a id>`); paragraphs and headings with an alignment. An HTML block made of these forms
//! becomes the blocks they stand for (tables: see the `html_table` module). Elements without a
//! meaning of their own (`<span>`, `<font>`, `<u>`, `<small>`, `<i class="fa-...">`) give their
//! content; an element outside the subset (`<script>`, `<form>`, `<svg>`, `<video>`...) makes the
//! whole block stay HTML source in a `code` block, visible and editable, never dropped.
//!
//! The tree is walked recursively only to [`MAX_HTML_NESTING`] levels of blocks; deeper content
//! is kept as its text (collected without recursion), so the result always fits the document
//! nesting limit.

use scraper::{ElementRef, Html, Node as DomNode};
use serde_json::Value;

use super::html_table;
use super::marks::{canonical_marks, color_mark_from_style, mark_for_tag};
use super::parse_inline::{normalize_inline_content, ref_data};
use crate::document::{Fragment, JsonMap, Leaf, Mark, Node};

/// Levels of HTML blocks (lists, quotes, cells, figures) converted as structure; deeper
/// content becomes plain text. Well inside [`crate::limits::MAX_NESTING`] once a table cell's
/// fragment and a list's items are counted.
pub(crate) const MAX_HTML_NESTING: usize = 8;

/// An element the subset does not take: the block stays HTML source.
#[derive(Debug)]
pub(crate) struct Unsupported;

type Converted<T> = Result<T, Unsupported>;

/// The blocks an HTML block of markdown stands for; `None` when it holds something outside
/// GitBook's subset (the caller keeps it as source).
pub(crate) fn html_blocks(literal: &str) -> Option<Vec<Node>> {
    let fragment = Html::parse_fragment(literal);
    let root = fragment.root_element();
    // Figures side by side are one `images` block, as GitBook writes one.
    let blocks = merge_images(blocks(root, 0).ok()?, None);
    // A block of nothing but comments stays visible as source rather than vanish.
    (!blocks.is_empty() || !literal.contains("<!--")).then_some(blocks)
}

/// Text-level elements without a meaning of their own: their content is what they show.
pub(crate) fn is_plain_inline_element(name: &str) -> bool {
    is_inline_element(name) && !matches!(name, "a" | "img" | "br" | "wbr") && mark_for_tag(name).is_none()
}

/// Elements shown as text-level content.
fn is_inline_element(name: &str) -> bool {
    matches!(
        name,
        "a" | "abbr"
            | "b"
            | "bdi"
            | "bdo"
            | "br"
            | "cite"
            | "code"
            | "data"
            | "del"
            | "dfn"
            | "em"
            | "font"
            | "i"
            | "img"
            | "ins"
            | "kbd"
            | "mark"
            | "q"
            | "s"
            | "samp"
            | "small"
            | "span"
            | "strike"
            | "strong"
            | "sub"
            | "sup"
            | "time"
            | "tt"
            | "u"
            | "var"
            | "wbr"
    )
}

/// The blocks of `parent`'s children: block elements become blocks, runs of text-level
/// content become paragraphs (images alone: an `images` block).
pub(crate) fn blocks(parent: ElementRef<'_>, depth: usize) -> Converted<Vec<Node>> {
    let mut out = Vec::new();
    let mut run = Inlines::default();
    for child in parent.children() {
        match child.value() {
            DomNode::Text(text) => run.text(text),
            DomNode::Comment(_) => {}
            DomNode::Element(_) => {
                let Some(element) = ElementRef::wrap(child) else {
                    continue;
                };
                let name = element.value().name();
                if is_inline_element(name) {
                    run.element(element, depth)?;
                    continue;
                }
                run.flush_into(&mut out);
                out.extend(block(element, depth)?);
            }
            _ => {}
        }
    }
    run.flush_into(&mut out);
    Ok(out)
}

/// One block-level element.
fn block(element: ElementRef<'_>, depth: usize) -> Converted<Vec<Node>> {
    let name = element.value().name();
    if depth >= MAX_HTML_NESTING {
        let text = text_of(element);
        return Ok(if text.trim().is_empty() {
            Vec::new()
        } else {
            vec![Node::paragraph(vec![Node::plain_text(text.trim())])]
        });
    }
    let node = match name {
        "p" => {
            let mut run = Inlines::default();
            run.children(element, depth)?;
            let mut paragraphs = Vec::new();
            run.flush_into(&mut paragraphs);
            return Ok(merge_images(
                paragraphs,
                element.attr("align").and_then(image_alignment),
            ));
        }
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
            let mut run = Inlines {
                heading: true,
                ..Inlines::default()
            };
            run.children(element, depth)?;
            let level = match name {
                "h1" => 1,
                "h2" => 2,
                _ => 3,
            };
            let mut data = JsonMap::new();
            let id = element.attr("id").map(str::to_owned).or(run.anchor.take());
            if let Some(id) = id.filter(|id| is_heading_id(id)) {
                data.insert("id".into(), Value::String(id));
            }
            Node::block(&format!("heading-{level}"), data, run.finish())
        }
        "ul" | "ol" => {
            let mut items = Vec::new();
            for item in element.child_elements() {
                let content = if item.value().name() == "li" {
                    blocks(item, depth + 1)?
                } else {
                    block(item, depth + 1)?
                };
                items.push(Node::block("list-item", JsonMap::new(), non_empty(content)));
            }
            if items.is_empty() {
                return Ok(Vec::new());
            }
            let mut data = JsonMap::new();
            let list_type = if name == "ol" {
                if let Some(start) = element.attr("start").and_then(|s| s.parse::<u64>().ok())
                    && start != 1
                {
                    data.insert("start".into(), Value::from(start));
                }
                "list-ordered"
            } else {
                "list-unordered"
            };
            Node::block(list_type, data, items)
        }
        "li" => Node::block(
            "list-item",
            JsonMap::new(),
            non_empty(blocks(element, depth + 1)?),
        ),
        "blockquote" => Node::block(
            "blockquote",
            JsonMap::new(),
            non_empty(blocks(element, depth + 1)?),
        ),
        "pre" => code(element),
        "hr" => Node::void_block("divider", JsonMap::new()),
        "table" => html_table::from_html(element, depth + 1)?,
        "figure" | "picture" => images(vec![figure(element)?], None),
        "div" | "center" | "section" | "article" | "header" | "footer" | "main" | "aside" | "nav" => {
            let inner = blocks(element, depth + 1)?;
            let align = element.attr("align").and_then(image_alignment);
            return Ok(merge_images(inner, align));
        }
        "details" => details(element, depth)?,
        "iframe" => {
            let url = element
                .attr("src")
                .filter(|src| !src.is_empty())
                .ok_or(Unsupported)?;
            let mut data = JsonMap::new();
            data.insert("url".into(), Value::String(url.to_owned()));
            Node::void_block("embed", data)
        }
        "summary" | "figcaption" | "source" | "thead" | "tbody" | "tfoot" | "tr" | "td" | "th" | "dl"
        | "dt" | "dd" | "address" | "hgroup" | "caption" => {
            return blocks(element, depth + 1);
        }
        _ => return Err(Unsupported),
    };
    Ok(vec![node])
}

/// `<details><summary>title</summary>body</details>` as an `expandable`.
fn details(element: ElementRef<'_>, depth: usize) -> Converted<Node> {
    let summary = element
        .child_elements()
        .find(|child| child.value().name() == "summary");
    let mut title = Inlines::default();
    if let Some(summary) = summary {
        title.children(summary, depth)?;
    }
    let mut body = Vec::new();
    let mut run = Inlines::default();
    for child in element.children() {
        if summary.is_some_and(|summary| summary.id() == child.id()) {
            continue;
        }
        match child.value() {
            DomNode::Text(text) => run.text(text),
            DomNode::Element(_) => {
                let Some(child) = ElementRef::wrap(child) else {
                    continue;
                };
                if is_inline_element(child.value().name()) {
                    run.element(child, depth)?;
                } else {
                    run.flush_into(&mut body);
                    body.extend(block(child, depth + 1)?);
                }
            }
            _ => {}
        }
    }
    run.flush_into(&mut body);
    let mut data = JsonMap::new();
    if element.attr("open").is_some() {
        data.insert("defaultExpanded".into(), Value::Bool(true));
    }
    let mut expandable = Node::void_block("expandable", data);
    expandable.fragments = Some(vec![
        Fragment::new(
            "expandable-title",
            Some("expandable-title"),
            vec![Node::paragraph(title.finish())],
        ),
        Fragment::new("expandable-body", Some("expandable-body"), non_empty(body)),
    ]);
    Ok(expandable)
}

/// `<pre><code class="lang-x">` as a `code` block.
fn code(element: ElementRef<'_>) -> Node {
    let code = element
        .child_elements()
        .find(|child| child.value().name() == "code");
    let syntax = code
        .into_iter()
        .chain([element])
        .flat_map(|e| e.value().classes())
        .find_map(|class| {
            class
                .strip_prefix("lang-")
                .or_else(|| class.strip_prefix("language-"))
        })
        .unwrap_or_default()
        .to_owned();
    super::parse_blocks::code_block(&text_of(element), &syntax)
}

/// An `image` block from a `<figure>` (an `<img>`, maybe in `<picture>` with a dark
/// `<source>`, and a `<figcaption>`), a `<picture>` or an `<img>`.
fn figure(element: ElementRef<'_>) -> Converted<Node> {
    let mut data = JsonMap::new();
    let mut caption = String::new();
    let own = std::iter::once(element);
    for part in own.chain(element.descendent_elements()) {
        match part.value().name() {
            "img" if !data.contains_key("ref") => data.extend(image_data(part).ok_or(Unsupported)?),
            "source" if part.attr("media").is_some_and(|media| media.contains("dark")) => {
                if let Some(srcset) = part.attr("srcset").and_then(|set| set.split_whitespace().next())
                    && let Some(dark) = ref_data(srcset).remove("ref")
                {
                    data.insert("refDark".into(), dark);
                }
            }
            "figcaption" => caption = text_of(part).trim().to_owned(),
            _ => {}
        }
    }
    if !data.contains_key("ref") {
        return Err(Unsupported);
    }
    let mut image = Node::void_block("image", data);
    let fragments = (!caption.is_empty()).then(|| {
        Fragment::new(
            "caption",
            None,
            vec![Node::paragraph(vec![Node::plain_text(&caption)])],
        )
    });
    image.fragments = Some(fragments.into_iter().collect());
    Ok(image)
}

/// The `data` of an image from an `<img>`: `ref`, `alt`, `width`, `height`.
pub(crate) fn image_data(img: ElementRef<'_>) -> Option<JsonMap> {
    image_data_of(|name| img.attr(name))
}

/// The `data` of an image from the attributes of an `<img>`, however it was parsed (a whole
/// HTML block, or one inline tag): `ref`, `alt`, `width`, `height`; `None` without a `src`.
pub(crate) fn image_data_of<'a>(attr: impl Fn(&str) -> Option<&'a str>) -> Option<JsonMap> {
    let src = attr("src").filter(|src| !src.trim().is_empty())?;
    let mut data = ref_data(src.trim());
    for attribute in ["alt", "width", "height"] {
        if let Some(value) = attr(attribute).filter(|value| !value.is_empty()) {
            let value = value
                .parse::<u64>()
                .map_or_else(|_| Value::String(value.to_owned()), Value::from);
            data.insert(attribute.into(), value);
        }
    }
    Some(data)
}

fn images(images: Vec<Node>, align: Option<&str>) -> Node {
    let mut data = JsonMap::new();
    if let Some(align) = align {
        data.insert("align".into(), Value::String(align.to_owned()));
    }
    Node::block("images", data, images)
}

/// Adjacent `images` blocks of a `<div align>` become one, aligned as it says.
fn merge_images(blocks: Vec<Node>, align: Option<&str>) -> Vec<Node> {
    let mut out: Vec<Node> = Vec::with_capacity(blocks.len());
    for block in blocks {
        if block.node_type() != "images" {
            out.push(block);
            continue;
        }
        match out.last_mut() {
            Some(last) if last.node_type() == "images" => {
                last.nodes
                    .get_or_insert_with(Vec::new)
                    .extend(block.nodes.into_iter().flatten());
            }
            _ => out.push(block),
        }
    }
    if let Some(align) = align {
        for block in out.iter_mut().filter(|block| block.node_type() == "images") {
            block
                .data
                .get_or_insert_with(JsonMap::new)
                .insert("align".into(), Value::String(align.to_owned()));
        }
    }
    out
}

fn image_alignment(align: &str) -> Option<&'static str> {
    match align.trim().to_ascii_lowercase().as_str() {
        "left" => Some("left"),
        "center" | "middle" => Some("center"),
        "right" => Some("right"),
        _ => None,
    }
}

/// GitBook's `TextAlignment` of a paragraph or heading from `align` or `style="text-align"`.
pub(crate) fn text_alignment(element: ElementRef<'_>) -> Option<&'static str> {
    let stated = element.attr("align").map(str::to_owned).or_else(|| {
        element.attr("style").and_then(|style| {
            style.split(';').find_map(|declaration| {
                let (property, value) = declaration.split_once(':')?;
                (property.trim() == "text-align").then(|| value.trim().to_owned())
            })
        })
    })?;
    match stated.to_ascii_lowercase().as_str() {
        "center" => Some("center"),
        "right" | "end" => Some("end"),
        "left" | "start" => Some("start"),
        _ => None,
    }
}

/// GitBook's pattern for a heading's `data.id`.
fn is_heading_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'+' | b'_'))
}

/// The text below an element, without recursion.
pub(crate) fn text_of(element: ElementRef<'_>) -> String {
    let mut out = String::new();
    for node in element.descendants() {
        match node.value() {
            DomNode::Text(text) => out.push_str(text),
            DomNode::Element(e) if e.name() == "br" => out.push('\n'),
            _ => {}
        }
    }
    out
}

fn non_empty(blocks: Vec<Node>) -> Vec<Node> {
    if blocks.is_empty() {
        vec![Node::paragraph(Vec::new())]
    } else {
        blocks
    }
}

/// Text-level content being gathered into a paragraph.
#[derive(Default)]
pub(crate) struct Inlines {
    items: Vec<Node>,
    marks: Vec<Mark>,
    /// Images met while only whitespace was around them: alone, they make an `images` block.
    images: Vec<Node>,
    other: bool,
    in_link: bool,
    /// A heading's content: its anchor is the heading's id, not a marker in its text.
    heading: bool,
    /// The id of a heading's `<a href="#x" id="x"></a>`.
    anchor: Option<String>,
}

impl Inlines {
    /// Text as a browser shows it: runs of whitespace are one space.
    fn text(&mut self, text: &str) {
        if !text.trim().is_empty() {
            self.other = true;
        }
        let mut collapsed = String::with_capacity(text.len());
        for (index, word) in text.split_ascii_whitespace().enumerate() {
            if index > 0 {
                collapsed.push(' ');
            }
            collapsed.push_str(word);
        }
        if text.starts_with(|c: char| c.is_ascii_whitespace()) {
            collapsed.insert(0, ' ');
        }
        if text.ends_with(|c: char| c.is_ascii_whitespace()) && collapsed.trim() != "" {
            collapsed.push(' ');
        }
        self.push_text(&collapsed);
    }

    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let leaf = Leaf::new(text, canonical_marks(self.marks.clone()));
        match self.items.last_mut() {
            Some(last) if last.is_text() => last.leaves.get_or_insert_with(Vec::new).push(leaf),
            _ => self.items.push(Node::text(vec![leaf])),
        }
    }

    pub(crate) fn children(&mut self, element: ElementRef<'_>, depth: usize) -> Converted<()> {
        for child in element.children() {
            match child.value() {
                DomNode::Text(text) => self.text(text),
                DomNode::Element(_) => {
                    if let Some(child) = ElementRef::wrap(child) {
                        self.element(child, depth)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A text-level element; a block element met inside text gives its text.
    pub(crate) fn element(&mut self, element: ElementRef<'_>, depth: usize) -> Converted<()> {
        let name = element.value().name();
        if depth >= MAX_HTML_NESTING || self.marks.len() >= MAX_HTML_NESTING {
            self.text(&text_of(element));
            return Ok(());
        }
        match name {
            "br" => {
                self.other = true;
                self.push_text("\n");
            }
            "wbr" => {}
            "img" if self.in_link => self.push_text(element.attr("alt").unwrap_or_default()),
            "img" => {
                let Some(mut data) = image_data(element) else {
                    return Ok(());
                };
                if element.attr("data-size") == Some("line") {
                    data.insert("size".into(), Value::String("line".into()));
                    self.other = true;
                }
                let inline = Node::void_inline("inline-image", data.clone());
                if !self.other {
                    data.remove("size");
                    let mut image = Node::void_block("image", data);
                    image.fragments = Some(Vec::new());
                    self.images.push(image);
                }
                self.items.push(inline);
            }
            "a" => self.link(element, depth)?,
            "script" | "style" | "template" | "svg" | "math" | "iframe" | "object" | "embed" | "input"
            | "button" | "select" | "textarea" | "form" | "video" | "audio" | "canvas" => {
                return Err(Unsupported);
            }
            _ => {
                self.other = self.other || name != "span";
                let mark = match mark_for_tag(name) {
                    Some("color") => Some(color_mark_from_style(element.attr("style"))),
                    Some(mark) => Some(Mark::new(mark)),
                    None => None,
                };
                let pushed = mark.is_some();
                self.marks.extend(mark);
                let result = self.children(element, depth + 1);
                if pushed {
                    self.marks.pop();
                }
                result?;
            }
        }
        Ok(())
    }

    fn link(&mut self, element: ElementRef<'_>, depth: usize) -> Converted<()> {
        let href = element
            .attr("href")
            .map(str::trim)
            .filter(|href| !href.is_empty());
        let id = element
            .attr("id")
            .or_else(|| element.attr("name"))
            .map(str::trim)
            .filter(|id| !id.is_empty());
        let no_text = text_of(element).trim().is_empty();
        let empty = no_text && element.child_elements().next().is_none();
        if let Some(id) = id.filter(|_| empty) {
            // `<a name="x"></a>`, `<a id="x"></a>` and a heading's `<a href="#x" id="x"></a>`
            // mark a place, they link nowhere.
            if href.is_none_or(|href| href.strip_prefix('#') == Some(id)) {
                if self.heading && self.anchor.is_none() {
                    self.anchor = Some(id.to_owned());
                } else {
                    self.items.push(anchor_marker(id));
                }
                return Ok(());
            }
        }
        // Link text never holds a link, and a link around nothing but an image is the image
        // (GitBook's links hold text).
        let Some(href) = href.filter(|_| !self.in_link && !no_text) else {
            return self.children(element, depth + 1);
        };
        self.other = true;
        let mut inner = Inlines {
            marks: self.marks.clone(),
            in_link: true,
            other: true,
            ..Inlines::default()
        };
        inner.children(element, depth + 1)?;
        let mut data = ref_data(href);
        if let Some(title) = element.attr("title").filter(|title| !title.is_empty()) {
            data.insert("title".into(), Value::String(title.to_owned()));
        }
        self.items
            .push(Node::inline("link", data, normalize_inline_content(inner.items)));
        Ok(())
    }

    /// The paragraph (or `images` block) gathered so far, appended to `out`.
    pub(crate) fn flush_into(&mut self, out: &mut Vec<Node>) {
        let items = std::mem::take(&mut self.items);
        let images = std::mem::take(&mut self.images);
        let other = std::mem::replace(&mut self.other, false);
        if !other && !images.is_empty() {
            out.push(images_block(images));
            return;
        }
        let nothing = items
            .iter()
            .all(|item| item.is_text() && item.leaves().iter().all(|leaf| leaf.text.trim().is_empty()));
        if nothing {
            return;
        }
        out.push(Node::paragraph(trimmed(items)));
    }

    /// The inline content gathered (for a heading or a title), in canonical form.
    pub(crate) fn finish(self) -> Vec<Node> {
        trimmed(self.items)
    }
}

fn images_block(images: Vec<Node>) -> Node {
    Node::block("images", JsonMap::new(), images)
}

/// An anchor: an empty link to a place of its own page (`#id`). GitBook's documents have no
/// node for a bare anchor; an empty link shows nothing and so can carry one (decision 0079).
pub(crate) fn anchor_marker(id: &str) -> Node {
    Node::inline("link", ref_data(&format!("#{id}")), vec![Node::text(Vec::new())])
}

/// Inline content in canonical form without the whitespace at its edges, which in HTML is not
/// content.
fn trimmed(mut items: Vec<Node>) -> Vec<Node> {
    trim_edges(&mut items);
    normalize_inline_content(items)
}

fn trim_edges(nodes: &mut [Node]) {
    if let Some(leaf) = nodes
        .first_mut()
        .filter(|node| node.is_text())
        .and_then(|node| node.leaves.as_mut())
        .and_then(|leaves| leaves.first_mut())
    {
        let trimmed = leaf.text.trim_start().len();
        leaf.text.drain(..leaf.text.len() - trimmed);
    }
    if let Some(leaf) = nodes
        .last_mut()
        .filter(|node| node.is_text())
        .and_then(|node| node.leaves.as_mut())
        .and_then(|leaves| leaves.last_mut())
    {
        leaf.text.truncate(leaf.text.trim_end().len());
    }
}
