//! comrak inline nodes to document texts and inlines.
//!
//! Marks come from markdown emphasis (`*`, `**`, `~~`, code spans) and from the inline HTML tags
//! GitBook writes (`<strong>`, `<sup>`, `<kbd>`, `<mark style>`, ...). Other inline HTML is kept
//! as literal text rather than dropped.

use comrak::nodes::{AstNode, NodeValue};
use serde_json::Value;

use super::directives::Directives;
use super::html;
use super::marks::{canonical_marks, color_mark_from_style, mark_for_tag};
use crate::document::{ContentRef, JsonMap, Leaf, Mark, Node};

/// The inline content of a paragraph, heading or table cell.
pub(crate) struct InlineContent {
    /// Texts and inlines in canonical form (see [`normalize_inline_content`]).
    pub nodes: Vec<Node>,
    /// The id of a heading anchor (`<a href="#id" id="id"></a>`), when accepted and present.
    pub anchor: Option<String>,
}

/// Converts the inline children of `parent`. `accept_anchor` turns an `<a id>` anchor into
/// [`InlineContent::anchor`] (headings) instead of literal text.
pub(crate) fn convert_inlines<'a>(
    parent: &'a AstNode<'a>,
    directives: &Directives,
    accept_anchor: bool,
) -> InlineContent {
    let mut builder = Builder::new(directives, Vec::new(), accept_anchor);
    builder.children(parent);
    InlineContent {
        nodes: normalize_inline_content(builder.items),
        anchor: builder.anchor,
    }
}

/// The blocks of a GFM table cell. A cell holds only inline content, so GitBook writes a cell
/// of several paragraphs or a list as inline HTML (`<p>a</p><p>b</p>`, `<ul><li>x</li></ul>`):
/// those tags become paragraphs and lists here instead of literal text. A cell without them is
/// one paragraph, as before.
pub(crate) fn convert_cell_blocks<'a>(parent: &'a AstNode<'a>, directives: &Directives) -> Vec<Node> {
    let structural = |node: &'a AstNode<'a>| match &node.data.borrow().value {
        NodeValue::HtmlInline(raw) => html::parse_tag(raw.trim())
            .filter(|tag| matches!(tag.name.as_str(), "p" | "ul" | "ol" | "li"))
            .map(|tag| (tag.name.clone(), tag.closing)),
        _ => None,
    };
    if !parent.children().any(|child| structural(child).is_some()) {
        return vec![Node::paragraph(convert_inlines(parent, directives, false).nodes)];
    }
    let mut cell = CellBlocks {
        builder: Builder::new(directives, Vec::new(), false),
        root: Vec::new(),
        stack: Vec::new(),
    };
    for child in parent.children() {
        match structural(child) {
            Some((name, closing)) => {
                cell.flush();
                match (name.as_str(), closing) {
                    ("ul" | "ol", false) => cell.stack.push(CellFrame::List {
                        ordered: name == "ol",
                        items: Vec::new(),
                    }),
                    ("ul" | "ol", true) => cell.close_list(),
                    ("li", false) => {
                        cell.close_item();
                        cell.open_item();
                    }
                    ("li", true) => cell.close_item(),
                    _ => {}
                }
            }
            None => cell.builder.visit(child),
        }
    }
    cell.flush();
    while !cell.stack.is_empty() {
        cell.close_list();
    }
    cell.root
}

/// An open list or list item of a table cell (see [`convert_cell_blocks`]).
enum CellFrame {
    List { ordered: bool, items: Vec<Node> },
    Item { blocks: Vec<Node> },
}

struct CellBlocks<'d> {
    builder: Builder<'d>,
    root: Vec<Node>,
    stack: Vec<CellFrame>,
}

impl CellBlocks<'_> {
    /// Where a finished block goes: the open item, else the cell (text directly inside a list
    /// gets an item of its own, as a browser would show it).
    fn push_block(&mut self, block: Node) {
        if matches!(self.stack.last(), Some(CellFrame::List { .. })) {
            self.open_item();
        }
        match self.stack.last_mut() {
            Some(CellFrame::Item { blocks }) => blocks.push(block),
            _ => self.root.push(block),
        }
    }

    /// Ends the paragraph being built, if it holds anything.
    fn flush(&mut self) {
        let items = std::mem::take(&mut self.builder.items);
        let blank = items
            .iter()
            .all(|node| node.is_text() && node.leaves().iter().all(|leaf| leaf.text.trim().is_empty()));
        if !blank {
            self.push_block(Node::paragraph(normalize_inline_content(items)));
        }
    }

    fn open_item(&mut self) {
        if !matches!(self.stack.last(), Some(CellFrame::List { .. })) {
            // An `<li>` outside any list: a bulleted list of its own.
            self.stack.push(CellFrame::List {
                ordered: false,
                items: Vec::new(),
            });
        }
        self.stack.push(CellFrame::Item { blocks: Vec::new() });
    }

    fn close_item(&mut self) {
        if let Some(CellFrame::Item { .. }) = self.stack.last() {
            let Some(CellFrame::Item { mut blocks }) = self.stack.pop() else {
                return;
            };
            if blocks.is_empty() {
                blocks.push(Node::paragraph(normalize_inline_content(Vec::new())));
            }
            if let Some(CellFrame::List { items, .. }) = self.stack.last_mut() {
                items.push(Node::block("list-item", JsonMap::new(), blocks));
            }
        }
    }

    fn close_list(&mut self) {
        self.close_item();
        if let Some(CellFrame::List { .. }) = self.stack.last() {
            let Some(CellFrame::List { ordered, items }) = self.stack.pop() else {
                return;
            };
            if !items.is_empty() {
                let list_type = if ordered { "list-ordered" } else { "list-unordered" };
                self.push_block(Node::block(list_type, JsonMap::new(), items));
            }
        }
    }
}

struct Builder<'d> {
    directives: &'d Directives,
    items: Vec<Node>,
    /// Marks of the enclosing markdown emphasis.
    marks: Vec<Mark>,
    /// Marks opened by inline HTML tags and not closed yet, with their tag's mark type.
    html_marks: Vec<Mark>,
    accept_anchor: bool,
    anchor: Option<String>,
    inside_anchor: bool,
    /// Building a link's text: a link in it (an autolink, most often) stays text.
    in_link: bool,
}

impl<'d> Builder<'d> {
    fn new(directives: &'d Directives, marks: Vec<Mark>, accept_anchor: bool) -> Self {
        Self {
            directives,
            items: Vec::new(),
            marks,
            html_marks: Vec::new(),
            accept_anchor,
            anchor: None,
            inside_anchor: false,
            in_link: false,
        }
    }

    fn children<'a>(&mut self, node: &'a AstNode<'a>) {
        for child in node.children() {
            self.visit(child);
        }
    }

    fn visit<'a>(&mut self, node: &'a AstNode<'a>) {
        let ast = node.data.borrow();
        match &ast.value {
            NodeValue::Text(text) => {
                let text = self.directives.restore(text).into_owned();
                self.push_text(&text, None);
            }
            NodeValue::SoftBreak => self.push_text(" ", None),
            NodeValue::LineBreak => self.push_text("\n", None),
            NodeValue::Code(code) => self.push_text(&code.literal, Some(Mark::new("code"))),
            NodeValue::Emph => self.with_mark("italic", node),
            NodeValue::Strong => self.with_mark("bold", node),
            NodeValue::Strikethrough => self.with_mark("strikethrough", node),
            // Link text never holds a link: an autolink in it keeps its source form as text
            // (`[-H <name@host>](url)`), any other link its text.
            NodeValue::Link(link) if self.in_link => {
                let text = comrak_text(node);
                let auto = link.url == text || link.url.strip_prefix("mailto:") == Some(text.as_str());
                if auto {
                    self.push_text(&format!("<{text}>"), None);
                } else {
                    self.children(node);
                }
            }
            NodeValue::Link(link) => {
                let mut data = ref_data(&link.url);
                if !link.title.is_empty() {
                    data.insert("title".into(), Value::String(link.title.clone()));
                }
                let mut inner = Builder::new(self.directives, self.current_marks(), false);
                inner.in_link = true;
                inner.children(node);
                self.items
                    .push(Node::inline("link", data, normalize_inline_content(inner.items)));
            }
            NodeValue::Image(image) => {
                self.items.push(Node::void_inline(
                    "inline-image",
                    image_data(&image.url, &image.title, node),
                ));
            }
            NodeValue::Math(math) => {
                let mut data = JsonMap::new();
                data.insert("formula".into(), Value::String(math.literal.clone()));
                self.items.push(Node::void_inline("inline-math", data));
            }
            NodeValue::HtmlInline(raw) => self.html(raw),
            _ => self.children(node),
        }
    }

    fn with_mark<'a>(&mut self, mark_type: &str, node: &'a AstNode<'a>) {
        self.marks.push(Mark::new(mark_type));
        self.children(node);
        self.marks.pop();
    }

    fn current_marks(&self) -> Vec<Mark> {
        self.marks.iter().chain(&self.html_marks).cloned().collect()
    }

    fn push_text(&mut self, text: &str, extra: Option<Mark>) {
        if text.is_empty() {
            return;
        }
        let mut marks = self.current_marks();
        marks.extend(extra);
        let leaf = Leaf::new(text, canonical_marks(marks));
        match self.items.last_mut() {
            Some(last) if last.is_text() => last.leaves.get_or_insert_with(Vec::new).push(leaf),
            _ => self.items.push(Node::text(vec![leaf])),
        }
    }

    /// Inline HTML: mark tags, `<br>`, heading anchors; anything else stays literal text.
    fn html(&mut self, raw: &str) {
        let Some(tag) = html::parse_tag(raw.trim()) else {
            self.push_text(raw, None);
            return;
        };
        if tag.name == "br" && !tag.closing {
            self.push_text("\n", None);
            return;
        }
        if tag.name == "a" {
            if tag.closing && self.inside_anchor {
                self.inside_anchor = false;
                return;
            }
            // `<a name="x"></a>`, `<a id="x"></a>`, and a heading's `<a href="#x" id="x"></a>`:
            // a place on the page, not a link.
            let id = tag
                .attr("id")
                .or_else(|| tag.attr("name"))
                .map(str::trim)
                .filter(|id| !id.is_empty());
            if let Some(id) = id.filter(|id| {
                !tag.closing
                    && tag
                        .attr("href")
                        .is_none_or(|href| href.strip_prefix('#') == Some(*id))
            }) {
                if self.accept_anchor && self.anchor.is_none() {
                    self.anchor = Some(id.to_owned());
                } else {
                    self.items.push(super::html_dom::anchor_marker(id));
                }
                self.inside_anchor = true;
                return;
            }
        }
        if tag.name == "img"
            && !tag.closing
            && !self.in_link
            && let Some(mut data) = super::html_dom::image_data_of(|name| tag.attr(name))
        {
            if tag.attr("data-size") == Some("line") {
                data.insert("size".into(), Value::String("line".into()));
            }
            self.items.push(Node::void_inline("inline-image", data));
            return;
        }
        let Some(mark_type) = mark_for_tag(&tag.name) else {
            // Text-level tags without a meaning of their own (`<span>`, `<u>`, `<font>`, GitBook's
            // `<span data-gb-custom-inline>`) give their content; anything else (`List<String>`,
            // a stray tag) stays the text it was written as.
            if !super::html_dom::is_plain_inline_element(&tag.name) {
                self.push_text(raw, None);
            }
            return;
        };
        if !tag.closing {
            let mark = if mark_type == "color" {
                color_mark_from_style(tag.attr("style"))
            } else {
                Mark::new(mark_type)
            };
            self.html_marks.push(mark);
        } else if let Some(open) = self
            .html_marks
            .iter()
            .rposition(|mark| mark.mark_type == mark_type)
        {
            self.html_marks.remove(open);
        } else {
            self.push_text(raw, None);
        }
    }
}

/// `{"ref": {"kind": "url", "url": target}}`: parsing keeps raw targets, see `resolve_links`.
pub(crate) fn ref_data(target: &str) -> JsonMap {
    let mut data = JsonMap::new();
    data.insert("ref".into(), ContentRef::url(target).to_value());
    data
}

/// Data of an image (inline or block) from its source, title and alt-text children.
pub(crate) fn image_data<'a>(url: &str, title: &str, node: &'a AstNode<'a>) -> JsonMap {
    let mut data = ref_data(url);
    let alt = comrak_text(node);
    if !alt.is_empty() {
        data.insert("alt".into(), Value::String(alt));
    }
    if !title.is_empty() {
        data.insert("title".into(), Value::String(title.to_owned()));
    }
    data
}

/// The plain text below a comrak node.
pub(crate) fn comrak_text<'a>(node: &'a AstNode<'a>) -> String {
    let mut text = String::new();
    collect_text(node, &mut text);
    text
}

fn collect_text<'a>(node: &'a AstNode<'a>, text: &mut String) {
    for child in node.children() {
        match &child.data.borrow().value {
            NodeValue::Text(value) => text.push_str(value),
            NodeValue::Code(code) => text.push_str(&code.literal),
            NodeValue::Math(math) => text.push_str(&math.literal),
            NodeValue::CodeBlock(code) => text.push_str(&code.literal),
            NodeValue::HtmlBlock(block) => text.push_str(&block.literal),
            NodeValue::HtmlInline(raw) => text.push_str(raw),
            NodeValue::SoftBreak | NodeValue::LineBreak => text.push(' '),
            _ => collect_text(child, text),
        }
    }
}

/// Puts inline content in the canonical form of GitBook's (Slate) documents: every inline is
/// surrounded by text nodes (empty ones where needed), adjacent texts are merged into one,
/// adjacent leaves with the same marks are merged, empty leaves are dropped, and every text
/// keeps at least one leaf.
pub(crate) fn normalize_inline_content(items: Vec<Node>) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::with_capacity(items.len() + 1);
    for item in items {
        match nodes.last_mut() {
            Some(last) if item.is_text() && last.is_text() => {
                last.leaves
                    .get_or_insert_with(Vec::new)
                    .extend(item.leaves.into_iter().flatten());
            }
            _ => {
                if !item.is_text() && !nodes.last().is_some_and(Node::is_text) {
                    nodes.push(Node::text(Vec::new()));
                }
                nodes.push(item);
            }
        }
    }
    if !nodes.last().is_some_and(Node::is_text) {
        nodes.push(Node::text(Vec::new()));
    }
    for node in nodes.iter_mut().filter(|node| node.is_text()) {
        let mut merged: Vec<Leaf> = Vec::new();
        for leaf in node.leaves.take().into_iter().flatten() {
            match merged.last_mut() {
                _ if leaf.text.is_empty() => {}
                Some(last) if last.marks == leaf.marks && last.extra == leaf.extra => {
                    last.text.push_str(&leaf.text)
                }
                _ => merged.push(leaf),
            }
        }
        if merged.is_empty() {
            merged.push(Leaf::new("", Vec::new()));
        }
        node.leaves = Some(merged);
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Document;
    use comrak::{Arena, parse_document};
    use serde_json::json;

    fn inlines(markdown: &str) -> Value {
        let arena = Arena::new();
        let root = parse_document(&arena, markdown, &super::super::comrak_options());
        let paragraph = root.first_child().unwrap();
        let content = convert_inlines(paragraph, &Directives::default(), true);
        let mut value = serde_json::to_value(Document::new(vec![Node::paragraph(content.nodes)])).unwrap();
        if let Some(anchor) = content.anchor {
            value["anchor"] = json!(anchor);
        }
        value
    }

    fn leaf(text: &str, marks: &[&str]) -> Value {
        let marks: Vec<Value> = marks
            .iter()
            .map(|mark| json!({"object": "mark", "type": mark}))
            .collect();
        json!({"object": "leaf", "text": text, "marks": marks})
    }

    #[test]
    fn emphasis_and_html_marks_become_leaf_marks() {
        let value = inlines("a **b *c*** ~~d~~ `e` <sup>f</sup><kbd>g</kbd> <strong>h</strong>");
        assert_eq!(
            value["nodes"][0]["nodes"],
            json!([{"object": "text", "leaves": [
                leaf("a ", &[]), leaf("b ", &["bold"]), leaf("c", &["bold", "italic"]), leaf(" ", &[]),
                leaf("d", &["strikethrough"]), leaf(" ", &[]), leaf("e", &["code"]), leaf(" ", &[]),
                leaf("f", &["superscript"]), leaf("g", &["keyboard"]), leaf(" ", &[]), leaf("h", &["bold"])
            ]}])
        );
    }

    #[test]
    fn links_and_images_are_surrounded_by_texts() {
        let value = inlines("[**x**](a.md \"T\")![alt](i.png)");
        assert_eq!(
            value["nodes"][0]["nodes"],
            json!([
                {"object": "text", "leaves": [leaf("", &[])]},
                {"object": "inline", "type": "link", "isVoid": false,
                 "data": {"ref": {"kind": "url", "url": "a.md"}, "title": "T"},
                 "nodes": [{"object": "text", "leaves": [leaf("x", &["bold"])]}]},
                {"object": "text", "leaves": [leaf("", &[])]},
                {"object": "inline", "type": "inline-image", "isVoid": true,
                 "data": {"ref": {"kind": "url", "url": "i.png"}, "alt": "alt"}},
                {"object": "text", "leaves": [leaf("", &[])]}
            ])
        );
    }

    #[test]
    fn link_text_holds_no_link() {
        // An autolink in link text keeps its source form; GitBook's CLI docs write options so.
        for (markdown, text) in [
            (
                "[-H, --header <header/@file>](https://x.example/h)",
                "-H, --header <header/@file>",
            ),
            (
                "[see <https://a.example>](https://x.example/h)",
                "see <https://a.example>",
            ),
        ] {
            let value = inlines(markdown);
            let link = &value["nodes"][0]["nodes"][1];
            assert_eq!(link["type"], "link", "{markdown}");
            assert_eq!(
                link["nodes"],
                json!([{"object": "text", "leaves": [leaf(text, &[])]}]),
                "{markdown}"
            );
        }
    }

    #[test]
    fn breaks_math_colors_and_unknown_html() {
        let value =
            inlines("a\nb  \nc<br>d $$x^2$$ <mark style=\"color:red;\">e</mark> <span>f</span> </sup>");
        let nodes = &value["nodes"][0]["nodes"];
        assert_eq!(nodes[0]["leaves"][0]["text"], "a b\nc\nd ");
        assert_eq!(nodes[1]["type"], "inline-math");
        assert_eq!(nodes[1]["data"]["formula"], "x^2");
        assert_eq!(
            nodes[2]["leaves"][1],
            json!({"object": "leaf", "text": "e", "marks": [{"object": "mark", "type": "color", "data": {"text": "red", "background": "default"}}]})
        );
        // A tag without a meaning gives its content; a stray closing tag stays text.
        assert_eq!(nodes[2]["leaves"][2]["text"], " f </sup>");
    }

    #[test]
    fn heading_anchors_are_extracted_only_when_accepted() {
        let value = inlines("Title <a href=\"#custom\" id=\"custom\"></a>");
        assert_eq!(value["anchor"], "custom");
        assert_eq!(value["nodes"][0]["nodes"][0]["leaves"][0]["text"], "Title ");
    }
}
