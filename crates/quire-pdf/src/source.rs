//! A book written as Typst source: the body as one segment per page of the book, cut into
//! compiles by [`crate::chunks`], and the front matter (cover and contents), written last, when
//! the body's page numbers are known.
//!
//! Text from content never reaches Typst's markup: every string is a string literal (`#"..."`),
//! whose only escapes are `\\`, `\"` and control characters, so no markup rule (emphasis,
//! headings, smart quotes, automatic links, labels) applies to it. Structure is written as
//! function calls (`#strong[...]`, `#list(...)`, `#table(...)`), each embedded expression
//! followed by `#`, `]` or a line break, where Typst's parser ends it. Content blocks
//! (`[...]`) and blank lines between blocks are the only markup used.
//!
//! Each page's title carries the label `p-{page}` and its top-level headings `a-{page}-{anchor}`
//! ([`crate::links`]). Links inside the book lead to those labels through marker URLs, written
//! only for targets that exist, and made jumps inside the PDF when the compiles are joined.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use quire_content::document::TableView;
use quire_content::{ContentRef, Document, Mark, Node, plain_text_of_nodes};
use quire_reader::content::{color_token, length, scalar_text, select_labels};
use quire_reader::resolve::{FileTarget, MAX_INCLUDE_DEPTH, Resolver, safe_url};
use serde_json::Value;
use typst::foundations::Bytes;

use crate::images::Checked;
use crate::links::{Positions, Targets, anchor_label, is_marker, page_label};
use crate::world::image_path;
use crate::{Book, BookPage, MAX_CONTAINER_DEPTH, MAX_HIGHLIGHTED_LINES, PageDocument};

/// The body of a book and the images it shows, by index.
pub(crate) struct Written {
    /// One a page of the book with content (the last may hold only group titles), in order.
    pub segments: Vec<String>,
    pub images: Vec<Bytes>,
    /// What the marker URLs of the links written lead to.
    pub targets: Targets,
}

/// The settings and helpers every compile starts with.
const PREAMBLE: &str = r##"#set text(font: ("Noto Sans", "Noto Sans Arabic", "Droid Sans Fallback", "Noto Color Emoji", "DejaVu Sans Mono"), size: 10pt)
#set par(leading: 0.62em, spacing: 1.05em)
#show raw: set text(font: ("DejaVu Sans Mono", "Droid Sans Fallback", "Noto Color Emoji"), size: 8.5pt)
#show heading: set text(weight: "bold")
#show heading: set block(above: 1.4em, below: 0.7em)
#show heading.where(outlined: true): set text(size: 19pt)
#show heading.where(outlined: true): set block(above: 0pt, below: 1.1em)
#show link: set text(fill: rgb("#1d4ed8"))
#set page(paper: "a4", margin: (x: 2.2cm, top: 2.6cm, bottom: 2.4cm), footer: context align(center, text(size: 8pt, fill: luma(110), counter(page).display())))
#set table(stroke: 0.5pt + luma(200), inset: 6pt)
#set list(spacing: 0.7em)
#set enum(spacing: 0.7em)
#let pagetitle(title) = align(right, text(size: 8pt, fill: luma(110), title))
#let note(body) = block(fill: luma(240), inset: 6pt, radius: 2pt, width: 100%, text(size: 8.5pt, fill: luma(70), emph(body)))
#let hint(accent, tint, body) = block(fill: tint, stroke: (left: 3pt + accent), inset: (x: 10pt, y: 8pt), radius: 2pt, width: 100%, breakable: true, body)
#let codeblock(title, body) = block(fill: luma(246), stroke: 0.5pt + luma(225), inset: 8pt, radius: 3pt, width: 100%, breakable: true, { if title != none { text(size: 8.5pt, weight: "bold", title); v(0.2em) }; body })
#let panel(title, body) = block(stroke: 0.5pt + luma(205), inset: 9pt, radius: 3pt, width: 100%, breakable: true, { if title != none { strong(title); parbreak() }; body })
#let quoted(body) = block(stroke: (left: 2pt + luma(200)), inset: (left: 10pt, y: 2pt), breakable: true, body)
#let checkbox(done) = box(width: 0.75em, height: 0.75em, stroke: 0.6pt + luma(90), radius: 1pt, baseline: 0.1em, fill: if done { luma(90) } else { none })
#let caption(body) = align(center, text(size: 8.5pt, fill: luma(90), body))
"##;

/// What the front matter adds: links in the text's color, and an entry of the contents
/// (`target` a marker URL and `number` the body page, or both none when the page was not
/// typeset). The leader is one dotted line, not `repeat[.]`: a hundred glyphs an entry made
/// the contents of a long book cost more to lay out and to hold than a chunk of its pages.
const FRONT_MATTER: &str = r##"#show link: set text(fill: luma(0))
#let leader = box(width: 1fr, line(length: 100%, stroke: (paint: luma(90), thickness: 0.8pt, dash: (0pt, 3pt), cap: "round")))
#let entry(depth, target, title, number) = {
  let line = if number == none { title } else { title + [ ] + leader + [ ] + number }
  // One block in the link, one annotation (a link around the line would make one a piece).
  let line = block(width: 100%, text(weight: if depth == 0 { "bold" } else { "regular" }, line))
  let line = if target == none { line } else { link(target, line) }
  block(above: 0.62em, below: 0.62em, pad(left: depth * 1.4em, line))
}
"##;

/// Writes the body of `book` with the images `checked` found.
/// `documents` are the pages' documents, in the book's order, taken out of it: each is
/// dropped as soon as its page is written.
pub(crate) fn write(
    book: &Book<'_>,
    documents: Vec<Option<PageDocument<'_>>>,
    resolver: &dyn Resolver,
    checked: &HashMap<String, Checked>,
) -> Written {
    let mut anchors: HashMap<&str, HashSet<String>> = HashMap::new();
    for (page, document) in book.pages.iter().zip(&documents) {
        let found = document
            .as_ref()
            .map(|d| quire_content::heading_anchors(d.as_ref().borrow()))
            .unwrap_or_default();
        anchors.insert(page.id.as_str(), found.into_iter().collect());
    }
    let mut images = Vec::new();
    let mut image_index = HashMap::new();
    for (id, verdict) in checked {
        if let Checked::Ready { index, bytes } = verdict {
            image_index.insert(id.as_str(), *index);
            if images.len() <= *index {
                images.resize(*index + 1, Bytes::new(Vec::<u8>::new()));
            }
            images[*index] = bytes.clone();
        }
    }
    let mut writer = Writer {
        out: String::new(),
        segments: Vec::with_capacity(book.pages.len()),
        targets: Targets::default(),
        resolver,
        checked,
        image_index,
        anchors,
        page: "",
        level: 1,
        depth: 0,
        includes: 0,
        in_link: false,
    };
    writer.body(book, documents);
    Written {
        segments: writer.segments,
        images,
        targets: writer.targets,
    }
}

/// The source of one compile of the body: `segments`, the first numbered `first_page` (the
/// footers count the body's pages across compiles).
pub(crate) fn body_chunk(segments: &[String], first_page: usize) -> String {
    let length: usize = segments.iter().map(String::len).sum();
    let mut out = String::with_capacity(PREAMBLE.len() + 40 + length);
    out.push_str(PREAMBLE);
    let _ = writeln!(out, "#counter(page).update({first_page})");
    for segment in segments {
        out.push_str(segment);
    }
    out
}

/// The source of the front matter: the cover, then the contents, an entry a page of the book
/// with the body page where `positions` says its title landed.
pub(crate) fn front_matter(book: &Book<'_>, positions: &Positions, targets: &mut Targets) -> String {
    let mut out = String::with_capacity(PREAMBLE.len() + FRONT_MATTER.len() + 1024 + 160 * book.pages.len());
    out.push_str(PREAMBLE);
    out.push_str(FRONT_MATTER);
    out.push_str("#page(footer: none)[\n#v(28%)\n");
    if let Some(emoji) = &book.emoji {
        let _ = writeln!(out, "#align(center, text(size: 40pt, {}))\n", lit(emoji));
    }
    let _ = writeln!(
        out,
        "#align(center, text(size: 28pt, weight: \"bold\", {}))\n\n#v(1em)\n#align(center, text(size: 11pt, fill: luma(100), {}))\n]",
        lit(&book.title),
        lit(&book.date)
    );
    out.push_str("#set page(footer: context align(center, text(size: 8pt, fill: luma(110), counter(page).display(\"i\"))))\n");
    out.push_str("#block(below: 1.4em, text(size: 19pt, weight: \"bold\", \"Contents\"))\n");
    for page in &book.pages {
        let depth = page.depth.min(6);
        let label = page_label(&page.id);
        let title = lit(&titled(page));
        match positions.get(&label) {
            Some(position) => {
                let _ = writeln!(
                    out,
                    "#entry({depth}, {}, {title}, \"{}\")",
                    lit(&targets.marker(label)),
                    position.body_page + 1
                );
            }
            None => {
                let _ = writeln!(out, "#entry({depth}, none, {title}, none)");
            }
        }
    }
    out
}

/// A page's title as its heading, the contents and the bookmarks show it.
pub(crate) fn titled(page: &BookPage<'_>) -> String {
    match &page.emoji {
        Some(emoji) => format!("{emoji} {}", page.title),
        None => page.title.clone(),
    }
}

struct Writer<'a> {
    /// The segment being written.
    out: String,
    segments: Vec<String>,
    targets: Targets,
    resolver: &'a dyn Resolver,
    checked: &'a HashMap<String, Checked>,
    image_index: HashMap<&'a str, usize>,
    /// The top-level heading anchors of each page of the book.
    anchors: HashMap<&'a str, HashSet<String>>,
    /// The page being written.
    page: &'a str,
    /// Its title's heading level.
    level: usize,
    /// Containers open around what is written now.
    depth: usize,
    /// Reusable contents open around what is written now.
    includes: usize,
    /// Inside a link's text, where no other link may open.
    in_link: bool,
}

/// A Typst string literal of `text`.
fn lit(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

impl<'a> Writer<'a> {
    fn push(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// The pages, each closing a segment. The bookmarks and the contents are made elsewhere
    /// (the titles of other compiles are not known to one), so no heading is bookmarked.
    fn body(&mut self, book: &'a Book<'a>, documents: Vec<Option<PageDocument<'_>>>) {
        // A group has no content of its own: its title opens the next page's.
        let mut pending = String::new();
        for (page, document) in book.pages.iter().zip(documents) {
            let level = (page.depth + 1).min(6);
            let _ = write!(
                pending,
                "#heading(level: {level}, outlined: true, bookmarked: false, {})#label({})\n\n",
                lit(&titled(page)),
                lit(&page_label(&page.id))
            );
            let Some(document) = document else {
                continue;
            };
            self.page = &page.id;
            self.level = level;
            let _ = writeln!(self.out, "#page(header: pagetitle({}))[", lit(&page.title));
            self.push(&std::mem::take(&mut pending));
            if let Some(description) = page.description.as_deref().filter(|d| !d.trim().is_empty()) {
                let _ = write!(
                    self.out,
                    "#text(size: 11pt, fill: luma(90), {})\n\n",
                    lit(description)
                );
            }
            self.top_blocks(document.as_ref().borrow());
            // The parsed document goes now, before the next page's is written.
            drop(document);
            self.push("]\n");
            self.segments.push(std::mem::take(&mut self.out));
        }
        if !pending.is_empty() {
            self.push("#page[\n");
            self.push(&pending);
            self.push("]\n");
            self.segments.push(std::mem::take(&mut self.out));
        }
    }

    fn top_blocks(&mut self, document: &Document) {
        let mut anchors = quire_content::heading_anchors(document).into_iter();
        for node in &document.nodes {
            if matches!(node.node_type(), "heading-1" | "heading-2" | "heading-3") {
                let anchor = anchors.next();
                self.heading(node, anchor.as_deref());
            } else {
                self.block(node);
            }
        }
    }

    fn blocks(&mut self, nodes: &[Node]) {
        for node in nodes {
            self.block(node);
        }
    }

    /// Blocks where a lone paragraph is its inline content (list items, table cells).
    fn blocks_tight(&mut self, nodes: &[Node]) {
        match nodes {
            [only] if only.node_type() == "paragraph" => self.inlines(only.children()),
            _ => self.blocks(nodes),
        }
    }

    /// A container around `body`: `open` (a call taking content last, such as `hint(red,
    /// blue, `) then `body` in a content block. Past [`MAX_CONTAINER_DEPTH`], the body alone.
    fn container(&mut self, open: &str, body: impl FnOnce(&mut Self)) {
        if self.depth >= MAX_CONTAINER_DEPTH {
            body(self);
            return;
        }
        self.depth += 1;
        let _ = writeln!(self.out, "#{open}[");
        body(self);
        self.push("])\n\n");
        self.depth -= 1;
    }

    fn note(&mut self, text: &str) {
        let _ = write!(self.out, "#note({})\n\n", lit(text));
    }

    fn block(&mut self, node: &Node) {
        match node.node_type() {
            "paragraph" => {
                if plain_text_of_nodes(node.children()).trim().is_empty()
                    && !node.children().iter().any(Node::is_inline)
                {
                    return;
                }
                self.inlines(node.children());
                self.push("\n\n");
            }
            "heading-1" | "heading-2" | "heading-3" => self.heading(node, None),
            "list-unordered" => self.list("list(", node),
            "list-ordered" => {
                let start = node.data_value("start").and_then(Value::as_u64).unwrap_or(1);
                self.list(&format!("enum(start: {start}, "), node);
            }
            "list-tasks" => self.tasks(node),
            "blockquote" => self.container("quoted(", |w| w.blocks(node.children())),
            "divider" => self.push("#line(length: 100%, stroke: 0.5pt + luma(200))\n\n"),
            "code" => self.code(node, None),
            "prompt" => {
                let description = node.data_str("description");
                match node.children().iter().find(|child| child.node_type() == "code") {
                    Some(code) => self.code(code, description),
                    None => self.blocks(node.children()),
                }
            }
            "math" => {
                let formula = node.data_str("formula").unwrap_or_default();
                let _ = write!(
                    self.out,
                    "#align(center, raw(lang: \"latex\", {}))\n\n",
                    lit(formula)
                );
            }
            "images" => {
                for image in node.children() {
                    self.image_figure(image);
                }
            }
            "image" | "drawing" => self.image_figure(node),
            "file" => self.file(node),
            "embed" => {
                let url = node.data_str("url").unwrap_or_default();
                self.embed(url, node);
            }
            "integration" => {
                if let Some(url) = node.data_str("url") {
                    self.embed(url, node);
                }
            }
            "content-ref" => self.content_ref(node),
            "reusable-content" => self.reusable_content(node),
            "table" => self.table(node),
            "hint" => {
                let (accent, tint) = match node.data_str("style") {
                    Some("success") => ("#16a34a", "#f0fdf4"),
                    Some("warning") => ("#d97706", "#fffbeb"),
                    Some("danger") => ("#dc2626", "#fef2f2"),
                    _ => ("#2563eb", "#eff6ff"),
                };
                self.container(&format!("hint(rgb(\"{accent}\"), rgb(\"{tint}\"), "), |w| {
                    w.blocks(node.children())
                });
            }
            "tabs" => {
                for (index, item) in node.children().iter().enumerate() {
                    let title = item
                        .data_str("title")
                        .filter(|title| !title.trim().is_empty())
                        .map_or_else(|| format!("Tab {}", index + 1), str::to_owned);
                    self.container(&format!("panel({}, ", lit(&title)), |w| match item.node_type() {
                        "tabs-item" => w.blocks(item.children()),
                        _ => w.block(item),
                    });
                }
            }
            "expandable" => {
                let title = node
                    .fragment("expandable-title")
                    .map(|t| plain_text_of_nodes(&t.nodes))
                    .unwrap_or_default();
                let title = title.trim();
                let open = if title.is_empty() {
                    "panel(none, ".to_string()
                } else {
                    format!("panel({}, ", lit(title))
                };
                self.container(&open, |w| {
                    if let Some(body) = node.fragment("expandable-body") {
                        w.blocks(&body.nodes);
                    }
                });
            }
            "stepper" => {
                let steps = node.children();
                self.items("enum(", steps, |w, step| match step.node_type() {
                    "stepper-step" => w.blocks(step.children()),
                    _ => w.block(step),
                });
            }
            "columns" => {
                for column in node.children() {
                    match column.node_type() {
                        "column" => self.blocks(column.children()),
                        _ => self.block(column),
                    }
                }
            }
            "updates" => self.blocks(node.children()),
            "update" => {
                if let Some(date) = node.data_str("date") {
                    let _ = write!(
                        self.out,
                        "#text(weight: \"bold\", fill: luma(90), {})\n\n",
                        lit(&quire_reader::content::long_date(date))
                    );
                }
                self.blocks(node.children());
            }
            "if" => {
                let expression = node.data_str("expression").unwrap_or_default();
                if self.resolver.condition(expression) {
                    self.blocks(node.children());
                }
            }
            "swagger" | "openapi" | "openapi-operation" | "openapi-schemas" | "openapi-webhook" => {
                self.openapi(node)
            }
            other => self.fallback(node, other),
        }
    }

    /// A block without a rendering of its own: its child blocks, its inline content, its text,
    /// or a note that it was left out.
    fn fallback(&mut self, node: &Node, node_type: &str) {
        let children = node.children();
        if children.first().is_some_and(Node::is_block) {
            self.blocks(children);
        } else if !children.is_empty() {
            self.inlines(children);
            self.push("\n\n");
        } else {
            let text = plain_text_of_nodes(std::slice::from_ref(node));
            if text.trim().is_empty() {
                self.note(&format!("A block of type {node_type:?} is not shown in PDF."));
            } else {
                let _ = write!(self.out, "#{}\n\n", lit(&text));
            }
        }
    }

    fn heading(&mut self, node: &Node, anchor: Option<&str>) {
        // Below the page's title in the document's structure, with sizes of their own.
        let (below, size) = match node.node_type() {
            "heading-1" => (1, "14pt"),
            "heading-2" => (2, "12pt"),
            _ => (3, "10.5pt"),
        };
        let level = self.level + below;
        let _ = write!(
            self.out,
            "#heading(level: {level}, outlined: false, bookmarked: false, text(size: {size})["
        );
        self.inlines(node.children());
        self.push("])");
        if let Some(anchor) = anchor {
            let _ = write!(self.out, "#label({})", lit(&anchor_label(self.page, anchor)));
        }
        self.push("\n\n");
    }

    /// `open` (`list(`, `enum(start: 3, `) with one content block per item.
    fn items(&mut self, open: &str, items: &[Node], mut item: impl FnMut(&mut Self, &Node)) {
        if items.is_empty() {
            return;
        }
        if self.depth >= MAX_CONTAINER_DEPTH {
            for node in items {
                item(self, node);
                self.push("\n\n");
            }
            return;
        }
        self.depth += 1;
        let _ = write!(self.out, "#{open}");
        for (index, node) in items.iter().enumerate() {
            if index > 0 {
                self.push(", ");
            }
            self.push("[");
            item(self, node);
            self.push("]");
        }
        self.push(")\n\n");
        self.depth -= 1;
    }

    fn list(&mut self, open: &str, node: &Node) {
        self.items(open, node.children(), |w, item| match item.node_type() {
            "list-item" => w.blocks_tight(item.children()),
            _ => w.block(item),
        });
    }

    fn tasks(&mut self, node: &Node) {
        self.items("list(marker: [], ", node.children(), |w, item| {
            let done = item.data_bool("checked") == Some(true);
            let _ = write!(w.out, "#checkbox({done})#h(0.5em)");
            match item.node_type() {
                "list-item" => w.blocks_tight(item.children()),
                _ => w.block(item),
            }
        });
    }

    fn code(&mut self, node: &Node, description: Option<&str>) {
        let lines: Vec<String> = node
            .children()
            .iter()
            .map(|line| plain_text_of_nodes(line.children()))
            .collect();
        let title = node
            .data_str("title")
            .or(description)
            .filter(|title| !title.is_empty())
            .map_or_else(|| "none".to_string(), lit);
        let syntax = node.data_str("syntax").unwrap_or_default();
        // Typst names languages as GitBook does (`javascript`, `bash`); one it does not know
        // is set plain. Very long blocks are set plain too: highlighting is the costly part.
        let lang = if !syntax.is_empty()
            && lines.len() <= MAX_HIGHLIGHTED_LINES
            && syntax
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-#._".contains(c))
        {
            format!("lang: {}, ", lit(syntax))
        } else {
            String::new()
        };
        let _ = write!(
            self.out,
            "#codeblock({title}, raw(block: true, {lang}{}))\n\n",
            lit(&lines.join("\n"))
        );
    }

    fn image_figure(&mut self, image: &Node) {
        let width = image.data_value("width").and_then(length);
        let shown = self.image(
            image.data_value("ref").or(image.data_value("refDark")),
            width,
            false,
        );
        if !shown {
            self.caption_blocks(image);
            return;
        }
        if let Some(caption) = image.fragment("caption")
            && !plain_text_of_nodes(&caption.nodes).trim().is_empty()
        {
            self.push("#caption[");
            self.blocks_tight(&caption.nodes);
            self.push("]\n\n");
        }
    }

    /// An image, centred as a block or inline; a note in its place when it cannot be shown.
    /// False when there is nothing to show (an image with no file).
    fn image(&mut self, reference: Option<&Value>, width: Option<u32>, inline: bool) -> bool {
        let Some(reference) = reference.and_then(ContentRef::from_value) else {
            return false;
        };
        let file = match &reference {
            ContentRef::File { file, space: None } => file.clone(),
            ContentRef::Url { url } if quire_content::is_unresolved_path(url) => return false,
            ContentRef::Url { url } => {
                // An image on another server: the PDF fetches nothing, so it links there.
                if let Some(url) = safe_url(url).filter(|url| !is_marker(url)) {
                    let text = format!("Image: {url}");
                    if inline {
                        let _ = write!(self.out, "#link({}, {})", lit(url), lit(&text));
                    } else {
                        let _ = write!(self.out, "#note(link({}, {}))\n\n", lit(url), lit(&text));
                    }
                    return true;
                }
                return false;
            }
            _ => return false,
        };
        let refused = match self.checked.get(&file) {
            Some(Checked::Refused(why)) => Some(why.clone()),
            None => Some("image left out: its file could not be read".to_string()),
            Some(Checked::Ready { .. }) => None,
        };
        if let Some(why) = refused {
            if inline {
                let _ = write!(self.out, "#emph({})", lit(&format!("[{why}]")));
            } else {
                self.note(&why);
            }
            return true;
        }
        let Some(index) = self.image_index.get(file.as_str()) else {
            return false;
        };
        let path = lit(&image_path(*index));
        if inline {
            let _ = write!(self.out, "#box(image({path}, height: 1.1em), baseline: 0.15em)");
        } else {
            // Pixels as points (96 to 72), at most the text's width.
            let size = match width {
                Some(px) if px * 3 / 4 < 450 => format!(", width: {}pt", px * 3 / 4),
                Some(_) => ", width: 100%".to_string(),
                None => String::new(),
            };
            let _ = write!(self.out, "#align(center, image({path}{size}))\n\n");
        }
        true
    }

    fn caption_blocks(&mut self, node: &Node) {
        if let Some(caption) = node.fragment("caption") {
            self.blocks(&caption.nodes);
        }
    }

    fn file(&mut self, node: &Node) {
        let target = match node.data_value("ref").and_then(ContentRef::from_value) {
            Some(ContentRef::File { file, space }) => self.resolver.file(&file, space.as_deref()),
            Some(ContentRef::Url { url }) if quire_content::is_unresolved_path(&url) => None,
            Some(ContentRef::Url { url }) => safe_url(&url).map(|url| FileTarget {
                url: url.to_owned(),
                name: url.rsplit('/').next().unwrap_or(url).to_owned(),
                ..FileTarget::default()
            }),
            _ => None,
        };
        let Some(target) = target else {
            return self.caption_blocks(node);
        };
        let meta = if target.size > 0 {
            format!(" ({})", quire_reader::content::human_size(target.size))
        } else {
            String::new()
        };
        let title = format!("File: {}{meta}", target.name);
        match absolute(&target.url) {
            Some(url) => {
                let _ = write!(self.out, "#panel(none, link({}, {}))\n\n", lit(url), lit(&title));
            }
            None => {
                let _ = write!(self.out, "#panel(none, {})\n\n", lit(&title));
            }
        }
        if let Some(caption) = node.fragment("caption")
            && !plain_text_of_nodes(&caption.nodes).trim().is_empty()
        {
            self.push("#caption[");
            self.blocks_tight(&caption.nodes);
            self.push("]\n\n");
        }
    }

    fn embed(&mut self, url: &str, node: &Node) {
        let Some(url) = safe_url(url).and_then(absolute) else {
            return self.caption_blocks(node);
        };
        let _ = write!(self.out, "#panel(none, link({}))\n\n", lit(url));
        if let Some(caption) = node.fragment("caption")
            && !plain_text_of_nodes(&caption.nodes).trim().is_empty()
        {
            self.push("#caption[");
            self.blocks_tight(&caption.nodes);
            self.push("]\n\n");
        }
    }

    fn content_ref(&mut self, node: &Node) {
        let Some(target) = node.data_value("ref").and_then(ContentRef::from_value) else {
            return;
        };
        let title = match &target {
            ContentRef::Page { page, space } => {
                self.resolver.page(page, space.as_deref()).map(|p| match p.emoji {
                    Some(emoji) => format!("{emoji} {}", p.title),
                    None => p.title,
                })
            }
            ContentRef::File { file, space } => self.resolver.file(file, space.as_deref()).map(|f| f.name),
            _ => None,
        };
        let Some(link) = self.link_target(&target) else {
            if let Some(title) = title {
                let _ = write!(self.out, "#panel(none, {})\n\n", lit(&title));
            }
            return;
        };
        let title = title.unwrap_or_else(|| self.link_text(&target));
        let _ = write!(self.out, "#panel(none, link({link}, {}))\n\n", lit(&title));
    }

    fn reusable_content(&mut self, node: &Node) {
        let Some(ContentRef::ReusableContent {
            reusable_content,
            space,
        }) = node.data_value("ref").and_then(ContentRef::from_value)
        else {
            return;
        };
        if self.includes >= MAX_INCLUDE_DEPTH {
            return;
        }
        if let Some(document) = self
            .resolver
            .reusable_content(&reusable_content, space.as_deref())
        {
            self.includes += 1;
            self.blocks(&document.nodes);
            self.includes -= 1;
        }
    }

    fn table(&mut self, node: &Node) {
        let view = TableView::of(node);
        if view.columns.is_empty() {
            return;
        }
        if self.depth >= MAX_CONTAINER_DEPTH {
            self.note("A table nested this deep is not shown in PDF.");
            return;
        }
        self.depth += 1;
        let hide_header = node
            .data_value("view")
            .and_then(|view| view.get("hideHeader"))
            .and_then(Value::as_bool)
            == Some(true);
        let align: Vec<&str> = view
            .columns
            .iter()
            .map(
                |column| match view.column_field(column, "textAlignment").and_then(Value::as_str) {
                    Some("center") => "center",
                    Some("right" | "end") => "right",
                    _ => "left",
                },
            )
            .collect();
        let _ = write!(
            self.out,
            "#table(columns: {}, align: ({}), ",
            view.columns.len(),
            align.join(", ") + if align.len() == 1 { "," } else { "" }
        );
        if !hide_header {
            self.push("table.header(repeat: true");
            for column in &view.columns {
                let title = view
                    .column_field(column, "title")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let _ = write!(self.out, ", strong({})", lit(title));
            }
            self.push("), ");
        }
        for record in &view.records {
            for column in &view.columns {
                self.push("[");
                if let Some(value) = record.get("values").and_then(|values| values.get(*column)) {
                    self.cell(&view, column, value);
                }
                self.push("], ");
            }
        }
        self.push(")\n\n");
        self.depth -= 1;
    }

    fn cell(&mut self, view: &TableView<'_>, column: &str, value: &Value) {
        let column_type = view.column_field(column, "type").and_then(Value::as_str);
        match (column_type, value) {
            (Some("text") | None, Value::String(name)) => match view.fragment(name) {
                Some(fragment) => self.blocks_tight(&fragment.nodes),
                None => {
                    let _ = write!(self.out, "#{}", lit(name));
                }
            },
            (_, Value::Bool(checked)) => {
                let _ = write!(self.out, "#checkbox({checked})");
            }
            (Some("select"), Value::Array(values)) => {
                let _ = write!(
                    self.out,
                    "#{}",
                    lit(&select_labels(view, column, values).join(", "))
                );
            }
            (_, Value::Object(_)) => {
                let reference = value.get("ref").unwrap_or(value);
                if let Some(target) = ContentRef::from_value(reference) {
                    self.reference_link(&target);
                }
            }
            (_, Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.push("#\", \"");
                    }
                    match ContentRef::from_value(item.get("ref").unwrap_or(item)) {
                        Some(target) => self.reference_link(&target),
                        None => {
                            let _ = write!(self.out, "#{}", lit(&scalar_text(item)));
                        }
                    }
                }
            }
            (_, value) => {
                let _ = write!(self.out, "#{}", lit(&scalar_text(value)));
            }
        }
    }

    fn openapi(&mut self, node: &Node) {
        let method = node.data_str("method").unwrap_or_default().to_ascii_uppercase();
        let path = node.data_str("path").unwrap_or_default();
        let text = match (method.is_empty(), path.is_empty()) {
            (true, true) => "OpenAPI reference".to_string(),
            _ => format!("{method} {path}").trim().to_string(),
        };
        let spec = node
            .data_value("ref")
            .and_then(ContentRef::from_value)
            .and_then(|target| self.resolver.href(&target));
        match spec.as_deref().and_then(absolute) {
            Some(url) => {
                let _ = write!(
                    self.out,
                    "#panel(none, link({}, raw({})))\n\n",
                    lit(url),
                    lit(&text)
                );
            }
            None => {
                let _ = write!(self.out, "#panel(none, raw({}))\n\n", lit(&text));
            }
        }
    }

    /// Where a reference leads in the PDF, as a string literal: the marker URL of a label of
    /// the book, or an absolute URL; None when it leads nowhere a reader of the PDF can go.
    fn link_target(&mut self, target: &ContentRef) -> Option<String> {
        let label = match target {
            ContentRef::Page { page, space: None } if self.anchors.contains_key(page.as_str()) => {
                page_label(page)
            }
            ContentRef::Anchor {
                anchor,
                page,
                space: None,
            } if self.anchors.contains_key(page.as_deref().unwrap_or(self.page)) => {
                let page = page.as_deref().unwrap_or(self.page);
                let known = self
                    .anchors
                    .get(page)
                    .is_some_and(|anchors| anchors.contains(anchor));
                if known {
                    anchor_label(page, anchor)
                } else {
                    page_label(page)
                }
            }
            ContentRef::Url { url } if quire_content::is_unresolved_path(url) => return None,
            other => {
                let href = self.resolver.href(other)?;
                return absolute(&href).map(lit);
            }
        };
        Some(lit(&self.targets.marker(label)))
    }

    /// What a link without a title of its own reads: its URL, else what the reference names
    /// (`page#anchor`). Never the Typst code of the link.
    fn link_text(&self, target: &ContentRef) -> String {
        self.resolver
            .href(target)
            .filter(|href| absolute(href).is_some())
            .unwrap_or_else(|| target.fallback_target())
    }

    /// A link to a reference titled with what it leads to.
    fn reference_link(&mut self, target: &ContentRef) {
        let title = match target {
            ContentRef::Page { page, space } => self.resolver.page(page, space.as_deref()).map(|p| p.title),
            ContentRef::File { file, space } => self.resolver.file(file, space.as_deref()).map(|f| f.name),
            ContentRef::User { user } => self.resolver.user(user),
            _ => None,
        };
        match self.link_target(target) {
            Some(link) if !self.in_link => {
                let title = title.unwrap_or_else(|| self.link_text(target));
                let _ = write!(self.out, "#link({link}, {})", lit(&title));
            }
            _ => {
                if let Some(title) = title {
                    let _ = write!(self.out, "#{}", lit(&title));
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Inlines

    fn inlines(&mut self, nodes: &[Node]) {
        for node in nodes {
            if node.is_text() {
                for leaf in node.leaves() {
                    self.leaf(&leaf.text, &leaf.marks);
                }
            } else {
                self.inline(node);
            }
        }
    }

    /// A run of text with its marks, each a call around the text (`#strong(emph("..."))`).
    fn leaf(&mut self, text: &str, marks: &[Mark]) {
        if text.is_empty() {
            return;
        }
        let code = marks.iter().any(|mark| mark.mark_type == "code");
        let mut expression = if code {
            format!("raw({})", lit(&text.replace('\n', " ")))
        } else if text.contains('\n') {
            let parts: Vec<String> = text.split('\n').map(lit).collect();
            format!("[#{}]", parts.join("#linebreak()#"))
        } else {
            lit(text)
        };
        for mark in marks {
            expression = match mark.mark_type.as_str() {
                "bold" => format!("strong({expression})"),
                "italic" => format!("emph({expression})"),
                "strikethrough" => format!("strike({expression})"),
                "superscript" => format!("super({expression})"),
                "subscript" => format!("sub({expression})"),
                "keyboard" => format!(
                    "box(stroke: 0.5pt + luma(170), inset: (x: 2pt), outset: (y: 2pt), radius: 2pt, {expression})"
                ),
                "color" => match color(mark) {
                    Some((Some(text), _)) => format!("text(fill: rgb(\"{text}\"), {expression})"),
                    Some((None, Some(background))) => {
                        format!("highlight(fill: rgb(\"{background}\"), {expression})")
                    }
                    _ => expression,
                },
                _ => expression,
            };
        }
        let _ = write!(self.out, "#{expression}");
    }

    fn inline(&mut self, node: &Node) {
        match node.node_type() {
            "link" => {
                let target = node.data_value("ref").and_then(ContentRef::from_value);
                let link = target.as_ref().and_then(|target| self.link_target(target));
                match link {
                    Some(link) if !self.in_link && !plain_text_of_nodes(node.children()).is_empty() => {
                        let _ = write!(self.out, "#link({link})[");
                        self.in_link = true;
                        self.inlines(node.children());
                        self.in_link = false;
                        self.push("]");
                    }
                    _ => self.inlines(node.children()),
                }
            }
            "inline-image" => {
                let width = node.data_value("width").and_then(length);
                self.image(node.data_value("ref"), width, true);
            }
            "inline-math" => {
                let formula = node.data_str("formula").unwrap_or_default();
                let _ = write!(self.out, "#raw({})", lit(formula));
            }
            "emoji" => {
                let emoji: String = node
                    .data_str("code")
                    .unwrap_or_default()
                    .split('-')
                    .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32))
                    .collect();
                if !emoji.is_empty() {
                    let _ = write!(self.out, "#{}", lit(&emoji));
                }
            }
            "mention" => {
                let Some(target) = node.data_value("ref").and_then(ContentRef::from_value) else {
                    return;
                };
                match &target {
                    ContentRef::User { user } => {
                        let name = self.resolver.user(user).unwrap_or_else(|| "someone".to_owned());
                        let _ = write!(self.out, "#{}", lit(&format!("@{name}")));
                    }
                    other => self.reference_link(other),
                }
            }
            "button" => {
                let label = node.data_str("label").unwrap_or_default();
                let target = node.data_value("ref").and_then(ContentRef::from_value);
                match target.as_ref().and_then(|target| self.link_target(target)) {
                    Some(link) if !self.in_link => {
                        let _ = write!(self.out, "#link({link}, strong({}))", lit(label));
                    }
                    _ => {
                        let _ = write!(self.out, "#strong({})", lit(label));
                    }
                }
            }
            "annotation" => {
                self.inlines(node.children());
                let body: Vec<String> = node
                    .fragments()
                    .iter()
                    .map(|fragment| plain_text_of_nodes(&fragment.nodes))
                    .filter(|text| !text.trim().is_empty())
                    .collect();
                if !body.is_empty() {
                    let _ = write!(
                        self.out,
                        "#text(fill: luma(90), {})",
                        lit(&format!(" ({})", body.join(" ")))
                    );
                }
            }
            "icon" | "expression" => {}
            _ => {
                if node.children().is_empty() {
                    let text = plain_text_of_nodes(std::slice::from_ref(node));
                    if !text.is_empty() {
                        let _ = write!(self.out, "#{}", lit(&text));
                    }
                } else {
                    self.inlines(node.children());
                }
            }
        }
    }
}

/// `url` when a PDF reader can open it: absolute, with a scheme a link may use, and not taken
/// for a link inside the book.
fn absolute(url: &str) -> Option<&str> {
    if is_marker(url) {
        return None;
    }
    let parsed = url::Url::parse(safe_url(url)?).ok()?;
    matches!(parsed.scheme(), "http" | "https" | "mailto" | "tel").then_some(url)
}

/// GitBook's color tokens as colors: the text's, the background's.
fn color(mark: &Mark) -> Option<(Option<&'static str>, Option<&'static str>)> {
    let text = color_token(mark, "text").and_then(palette).map(|(text, _)| text);
    let background = color_token(mark, "background")
        .and_then(palette)
        .map(|(_, background)| background);
    (text.is_some() || background.is_some()).then_some((text, background))
}

/// A token's color as text and as a background (the reader's stylesheet has its own).
fn palette(token: &str) -> Option<(&'static str, &'static str)> {
    Some(match token {
        "green" | "success" => ("#15803d", "#dcfce7"),
        "blue" | "info" | "primary" => ("#1d4ed8", "#dbeafe"),
        "red" | "danger" => ("#b91c1c", "#fee2e2"),
        "orange" | "warning" => ("#c2410c", "#ffedd5"),
        "yellow" => ("#a16207", "#fef9c3"),
        "purple" | "violet" => ("#7e22ce", "#f3e8ff"),
        "pink" => ("#be185d", "#fce7f3"),
        "cyan" => ("#0e7490", "#cffafe"),
        _ => return None,
    })
}
