//! comrak blocks (and directive placeholders) to document blocks.
//!
//! Mapping, markdown to document:
//! - `#` → `heading-1`, `##` → `heading-2`, `###`..`######` → `heading-3` (GitBook has three
//!   levels); a trailing `<a id="x"></a>` sets `data.id`.
//! - paragraphs → `paragraph`; a paragraph of images only → `images` of `image` blocks; a
//!   paragraph holding only `$$x$$` → `math`.
//! - lists → `list-unordered`, `list-ordered` (`data.start` when not 1), `list-tasks` (items get
//!   `data.checked`), items → `list-item`.
//! - block quotes → `blockquote`; thematic breaks → `divider`.
//! - fenced and indented code → `code` (`data.syntax` from the info string's first word) with one
//!   `code-line` per line; `{% code title=.. %}` around a fence adds its attributes to `data`.
//! - tables → `table` (see the `table` module).
//! - `{% hint %}`, `{% tabs %}`/`{% tab %}`, `{% stepper %}`/`{% step %}`, `{% columns %}`/
//!   `{% column %}`, `{% updates %}`/`{% update %}` → the blocks of the same name (`tabs-item`,
//!   `stepper-step`), tag attributes in `data`.
//! - `{% embed url %}`, `{% file src %}`, `{% content-ref url %}`, `{% include "x" %}` →
//!   `embed`, `file`, `content-ref`, `reusable-content`; text between an embed or file tag and
//!   its end tag becomes a `caption` fragment.
//! - `<details><summary>` → `expandable` with `expandable-title` and `expandable-body` fragments.
//! - `$$` blocks → `math`.
//! - HTML blocks in GitBook's forms (`<table>`, `<img>`, `<figure>`, `<div align>`, `<p>`, ...)
//!   → the blocks they stand for (see the `html_dom` module); an HTML block holding an element
//!   outside them is kept verbatim as a `code` block with `syntax: "html"`, so it is visible and
//!   editable instead of silently dropped.

use std::collections::HashMap;

use comrak::nodes::{AstNode, ListType, NodeValue};
use serde_json::Value;

use super::directives::{Directive, Directives};
use super::html_dom;
use super::parse_inline::{InlineContent, comrak_text, convert_inlines, image_data, ref_data};
use super::table;
use crate::document::{Fragment, JsonMap, Node};

/// Tag attributes stored as booleans in `data`.
const BOOLEAN_ATTRIBUTES: &[&str] = &["lineNumbers", "fullWidth", "expandable", "withFrame", "wrap"];
/// Tag attributes stored as numbers in `data`.
const NUMBER_ATTRIBUTES: &[&str] = &["collapsedLineCount"];

/// Liquid container tags and the block type each becomes.
pub(crate) const CONTAINER_TAGS: &[(&str, &str)] = &[
    ("hint", "hint"),
    ("tabs", "tabs"),
    ("tab", "tabs-item"),
    ("stepper", "stepper"),
    ("step", "stepper-step"),
    ("columns", "columns"),
    ("column", "column"),
    ("updates", "updates"),
    ("update", "update"),
];

/// Converts the children of a container node (document, list item, block quote).
pub(crate) fn convert_container<'a>(container: &'a AstNode<'a>, directives: &Directives) -> Vec<Node> {
    let items: Vec<Item<'a>> = container
        .children()
        .map(|child| match directive_index(child, directives) {
            Some(index) => Item::Directive(index),
            None => Item::Block(child),
        })
        .collect();
    let positions = Positions::of(&items, directives);
    let mut builder = BlockBuilder {
        items,
        position: 0,
        directives,
        positions,
    };
    builder.blocks(&mut Vec::new())
}

/// The directive behind a paragraph that holds only a placeholder.
fn directive_index<'a>(node: &'a AstNode<'a>, directives: &Directives) -> Option<usize> {
    if !matches!(node.data.borrow().value, NodeValue::Paragraph) {
        return None;
    }
    let child = node.first_child()?;
    if child.next_sibling().is_some() {
        return None;
    }
    match &child.data.borrow().value {
        NodeValue::Text(text) => directives.placeholder_index(text),
        _ => None,
    }
}

enum Item<'a> {
    Block(&'a AstNode<'a>),
    Directive(usize),
}

/// What ends the blocks of an open directive.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Closer {
    Liquid(String),
    Details,
}

struct BlockBuilder<'a, 'd> {
    items: Vec<Item<'a>>,
    position: usize,
    directives: &'d Directives,
    positions: Positions,
}

/// Where the directive items of a container are, by kind, in ascending order.
#[derive(Default)]
struct Positions {
    closes: HashMap<Closer, Vec<usize>>,
    /// Liquid opening tags by name.
    opens: HashMap<String, Vec<usize>>,
}

impl Positions {
    fn of(items: &[Item<'_>], directives: &Directives) -> Positions {
        let mut positions = Positions::default();
        for (at, item) in items.iter().enumerate() {
            let Item::Directive(index) = item else { continue };
            match directives.get(*index) {
                Some(Directive::Close { name }) => {
                    positions
                        .closes
                        .entry(Closer::Liquid(name.clone()))
                        .or_default()
                        .push(at);
                }
                Some(Directive::DetailsClose) => {
                    positions.closes.entry(Closer::Details).or_default().push(at)
                }
                Some(Directive::Open { name, .. }) => {
                    positions.opens.entry(name.clone()).or_default().push(at)
                }
                _ => {}
            }
        }
        positions
    }
}

impl<'a> BlockBuilder<'a, '_> {
    /// Blocks up to the end of the container or to a closer of an open directive (left for
    /// that directive to consume).
    fn blocks(&mut self, open: &mut Vec<Closer>) -> Vec<Node> {
        let mut blocks = Vec::new();
        while let Some(item) = self.items.get(self.position) {
            match item {
                Item::Block(node) => {
                    let node = *node;
                    self.position += 1;
                    blocks.extend(convert_block(node, self.directives));
                }
                Item::Directive(index) => {
                    let index = *index;
                    if self.closer(index).is_some_and(|closer| open.contains(&closer)) {
                        return blocks;
                    }
                    self.position += 1;
                    blocks.extend(self.directive(index, open));
                }
            }
        }
        blocks
    }

    fn closer(&self, index: usize) -> Option<Closer> {
        match self.directives.get(index)? {
            Directive::Close { name } => Some(Closer::Liquid(name.clone())),
            Directive::DetailsClose => Some(Closer::Details),
            _ => None,
        }
    }

    /// The blocks of a directive until its closer, which is consumed when present.
    fn nested(&mut self, closer: Closer, open: &mut Vec<Closer>) -> Vec<Node> {
        if !self.directives.enter(open.len() + 1) {
            // Too deep: the caller refuses the text (see `markdown_to_document`).
            return Vec::new();
        }
        open.push(closer.clone());
        let blocks = self.blocks(open);
        open.pop();
        if let Some(Item::Directive(index)) = self.items.get(self.position)
            && self.closer(*index).as_ref() == Some(&closer)
        {
            self.position += 1;
        }
        blocks
    }

    /// Whether a `{% name %}` just read has its own `{% endname %}` ahead, before another
    /// `{% name %}` or the closer of an enclosing directive. Answered from the positions of
    /// closers, not by scanning ahead: many end-less tags would make that quadratic.
    fn has_end_tag(&self, name: &str, open: &[Closer]) -> bool {
        let next = |positions: Option<&Vec<usize>>| {
            positions.and_then(|p| p.get(p.partition_point(|&at| at < self.position)).copied())
        };
        let Some(end) = next(self.positions.closes.get(&Closer::Liquid(name.to_owned()))) else {
            return false;
        };
        if next(self.positions.opens.get(name)).is_some_and(|at| at < end) {
            return false;
        }
        !open
            .iter()
            .any(|closer| next(self.positions.closes.get(closer)).is_some_and(|at| at < end))
    }

    fn directive(&mut self, index: usize, open: &mut Vec<Closer>) -> Vec<Node> {
        let Some(directive) = self.directives.get(index).cloned() else {
            return Vec::new();
        };
        match directive {
            Directive::Open { name, attrs } => self.liquid(&name, &attrs, open),
            Directive::DetailsOpen {
                open: expanded,
                summary,
            } => {
                let summary = match (summary, self.items.get(self.position)) {
                    (Some(summary), _) => Some(summary),
                    (None, Some(Item::Directive(next))) => match self.directives.get(*next) {
                        Some(Directive::Summary(summary)) => {
                            let summary = summary.clone();
                            self.position += 1;
                            Some(summary)
                        }
                        _ => None,
                    },
                    _ => None,
                };
                let body = self.nested(Closer::Details, open);
                vec![expandable(
                    summary.as_deref().unwrap_or_default(),
                    expanded,
                    body,
                    self.directives,
                )]
            }
            Directive::Math(formula) => vec![math_block(&formula)],
            Directive::Close { .. } | Directive::DetailsClose | Directive::Summary(_) => {
                vec![Node::paragraph(vec![Node::plain_text(
                    self.directives.source(index),
                )])]
            }
        }
    }

    fn liquid(&mut self, name: &str, attrs: &[(String, String)], open: &mut Vec<Closer>) -> Vec<Node> {
        let closer = Closer::Liquid(name.to_owned());
        if let Some((_, block_type)) = CONTAINER_TAGS.iter().find(|(tag, _)| *tag == name) {
            let children = self.nested(closer, open);
            let mut data = attributes_data(attrs);
            if name == "hint" && !data.contains_key("style") {
                data.insert("style".into(), Value::String("info".into()));
            }
            let children = if name == "tabs" {
                tab_items(children)
            } else {
                children
            };
            return vec![Node::block(block_type, data, non_empty(children))];
        }
        match name {
            "code" => {
                let mut children = self.nested(closer, open);
                if let [code] = children.as_mut_slice()
                    && code.node_type() == "code"
                {
                    code.data
                        .get_or_insert_with(JsonMap::new)
                        .extend(attributes_data(attrs));
                }
                children
            }
            "embed" | "file" => {
                let caption = if self.has_end_tag(name, open) {
                    self.nested(closer, open)
                } else {
                    Vec::new()
                };
                // `{% file src %}` holds a reference; other attributes are plain data.
                let mut data = attributes_data(attrs);
                if name == "file"
                    && let Some(Value::String(src)) = data.shift_remove("src")
                {
                    let mut with_ref = ref_data(&src);
                    with_ref.extend(data);
                    data = with_ref;
                }
                let mut block = Node::void_block(name, data);
                if !caption.is_empty() {
                    block.fragments = Some(vec![Fragment::new("caption", None, caption)]);
                }
                vec![block]
            }
            "content-ref" => {
                if self.has_end_tag(name, open) {
                    // The body repeats the target as a link; the tag's `url` is the reference.
                    self.nested(closer, open);
                }
                let url = attribute(attrs, "url").unwrap_or_default();
                vec![Node::void_block("content-ref", ref_data(url))]
            }
            _ => {
                let target = attribute(attrs, "").unwrap_or_default();
                vec![Node::void_block("reusable-content", ref_data(target))]
            }
        }
    }
}

fn attribute<'v>(attrs: &'v [(String, String)], key: &str) -> Option<&'v str> {
    attrs
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// Tag attributes as block data: known booleans and numbers typed, the rest strings.
fn attributes_data(attrs: &[(String, String)]) -> JsonMap {
    let mut data = JsonMap::new();
    for (key, value) in attrs {
        let typed = if BOOLEAN_ATTRIBUTES.contains(&key.as_str()) {
            value.parse::<bool>().ok().map(Value::Bool)
        } else if NUMBER_ATTRIBUTES.contains(&key.as_str()) {
            value.parse::<u64>().ok().map(Value::from)
        } else {
            None
        };
        data.insert(key.clone(), typed.unwrap_or_else(|| Value::String(value.clone())));
    }
    data
}

/// Children of a `tabs` block: content outside any `{% tab %}` joins the previous tab (or a new
/// untitled one) rather than being lost.
fn tab_items(children: Vec<Node>) -> Vec<Node> {
    let mut items: Vec<Node> = Vec::new();
    for child in children {
        if child.node_type() == "tabs-item" {
            items.push(child);
            continue;
        }
        if items.last().is_none_or(|item| item.node_type() != "tabs-item") {
            let mut data = JsonMap::new();
            data.insert("title".into(), Value::String(String::new()));
            items.push(Node::block("tabs-item", data, Vec::new()));
        }
        if let Some(nodes) = items.last_mut().and_then(|item| item.nodes.as_mut()) {
            nodes.push(child);
        }
    }
    items
}

/// Containers keep at least one (empty) paragraph, as GitBook's editor requires.
fn non_empty(children: Vec<Node>) -> Vec<Node> {
    if children.is_empty() {
        vec![Node::paragraph(super::parse_inline::normalize_inline_content(
            Vec::new(),
        ))]
    } else {
        children
    }
}

fn math_block(formula: &str) -> Node {
    let mut data = JsonMap::new();
    data.insert("formula".into(), Value::String(formula.trim().to_owned()));
    Node::void_block("math", data)
}

fn expandable(summary: &str, expanded: bool, body: Vec<Node>, directives: &Directives) -> Node {
    let title = summary_inlines(summary, directives);
    let mut data = JsonMap::new();
    if expanded {
        data.insert("defaultExpanded".into(), Value::Bool(true));
    }
    let mut block = Node::void_block("expandable", data);
    block.fragments = Some(vec![
        Fragment::new(
            "expandable-title",
            Some("expandable-title"),
            vec![Node::paragraph(title)],
        ),
        Fragment::new("expandable-body", Some("expandable-body"), non_empty(body)),
    ]);
    block
}

/// The inline content of a `<summary>`, which GitBook writes as inline markdown.
fn summary_inlines(summary: &str, directives: &Directives) -> Vec<Node> {
    let arena = comrak::Arena::new();
    let root = comrak::parse_document(&arena, summary, &super::comrak_options());
    let nodes = root
        .first_child()
        .map(|first| convert_inlines(first, directives, false).nodes);
    super::parse_inline::normalize_inline_content(nodes.unwrap_or_default())
}

/// Converts one comrak block.
fn convert_block<'a>(node: &'a AstNode<'a>, directives: &Directives) -> Vec<Node> {
    let ast = node.data.borrow();
    let block = match &ast.value {
        NodeValue::Paragraph => paragraph(node, directives),
        NodeValue::Heading(heading) => {
            let InlineContent { mut nodes, anchor } = convert_inlines(node, directives, true);
            // A heading is one line: a setext heading's line breaks become spaces.
            crate::document::walk_nodes_mut(&mut nodes, &mut |node| {
                for leaf in node.leaves.iter_mut().flatten() {
                    if leaf.text.contains('\n') {
                        leaf.text = leaf.text.replace('\n', " ");
                    }
                }
            });
            let mut data = JsonMap::new();
            if let Some(anchor) = anchor {
                trim_trailing_whitespace(&mut nodes);
                data.insert("id".into(), Value::String(anchor));
            }
            let level = heading.level.clamp(1, 3);
            Node::block(&format!("heading-{level}"), data, nodes)
        }
        NodeValue::ThematicBreak => Node::void_block("divider", JsonMap::new()),
        NodeValue::BlockQuote => Node::block(
            "blockquote",
            JsonMap::new(),
            non_empty(convert_container(node, directives)),
        ),
        NodeValue::List(list) => {
            return lists(node, list.list_type == ListType::Ordered, list.start, directives);
        }
        NodeValue::Item(_) | NodeValue::TaskItem(_) => list_item(node, false, directives),
        NodeValue::CodeBlock(code) => {
            let syntax = code.info.split_whitespace().next().unwrap_or_default();
            code_block(&directives.restore(&code.literal), syntax)
        }
        NodeValue::HtmlBlock(block) => {
            let literal = directives.restore(&block.literal);
            return html_dom::html_blocks(&literal).unwrap_or_else(|| vec![code_block(&literal, "html")]);
        }
        NodeValue::Table(_) => table::from_comrak(node, directives),
        _ => {
            let text = comrak_text(node);
            if text.trim().is_empty() {
                return Vec::new();
            }
            Node::paragraph(vec![Node::plain_text(&text)])
        }
    };
    vec![block]
}

fn paragraph<'a>(node: &'a AstNode<'a>, directives: &Directives) -> Node {
    let mut images = Vec::new();
    let mut only_images = true;
    let mut display_math = None;
    for child in node.children() {
        match &child.data.borrow().value {
            NodeValue::Image(image) => {
                images.push(image_block(image_data(&image.url, &image.title, child), None))
            }
            NodeValue::Text(text) if text.trim().is_empty() => {}
            NodeValue::SoftBreak | NodeValue::LineBreak => {}
            NodeValue::Math(math) if math.display_math && node.children().count() == 1 => {
                display_math = Some(math.literal.clone());
            }
            _ => only_images = false,
        }
    }
    if let Some(formula) = display_math {
        return math_block(&formula);
    }
    if only_images && !images.is_empty() {
        return Node::block("images", JsonMap::new(), images);
    }
    Node::paragraph(convert_inlines(node, directives, false).nodes)
}

/// The lists of a comrak list: GitBook lists are all tasks or all plain items, so a markdown
/// list mixing both becomes one list per run of items of the same kind.
fn lists<'a>(node: &'a AstNode<'a>, ordered: bool, start: usize, directives: &Directives) -> Vec<Node> {
    let mut lists: Vec<Node> = Vec::new();
    let mut previous_task = None;
    for item in node.children() {
        let task = matches!(item.data.borrow().value, NodeValue::TaskItem(_));
        let converted = list_item(item, task, directives);
        match lists.last_mut().and_then(|list| list.nodes.as_mut()) {
            Some(items) if previous_task == Some(task) => items.push(converted),
            _ => {
                let mut data = JsonMap::new();
                let list_type = if task {
                    "list-tasks"
                } else if ordered {
                    if lists.is_empty() && start != 1 {
                        data.insert("start".into(), Value::from(start));
                    }
                    "list-ordered"
                } else {
                    "list-unordered"
                };
                lists.push(Node::block(list_type, data, vec![converted]));
            }
        }
        previous_task = Some(task);
    }
    lists
}

fn list_item<'a>(node: &'a AstNode<'a>, tasks: bool, directives: &Directives) -> Node {
    let mut data = JsonMap::new();
    if tasks {
        let checked = matches!(&node.data.borrow().value, NodeValue::TaskItem(task) if task.symbol.is_some());
        data.insert("checked".into(), Value::Bool(checked));
    }
    Node::block("list-item", data, non_empty(convert_container(node, directives)))
}

/// A `code` block with one `code-line` per line of `literal`.
pub(crate) fn code_block(literal: &str, syntax: &str) -> Node {
    let mut data = JsonMap::new();
    if !syntax.is_empty() {
        data.insert("syntax".into(), Value::String(syntax.to_owned()));
    }
    let body = literal.strip_suffix('\n').unwrap_or(literal);
    let lines = body
        .split('\n')
        .map(|line| Node::block("code-line", JsonMap::new(), vec![Node::plain_text(line)]))
        .collect();
    Node::block("code", data, lines)
}

fn image_block(data: JsonMap, caption: Option<String>) -> Node {
    let mut image = Node::void_block("image", data);
    let fragments = caption.filter(|caption| !caption.is_empty()).map(|caption| {
        Fragment::new(
            "caption",
            None,
            vec![Node::paragraph(vec![Node::plain_text(&caption)])],
        )
    });
    image.fragments = Some(fragments.into_iter().collect());
    image
}

fn trim_trailing_whitespace(nodes: &mut [Node]) {
    let Some(leaves) = nodes.last_mut().and_then(|node| node.leaves.as_mut()) else {
        return;
    };
    while let Some(leaf) = leaves.last_mut() {
        leaf.text.truncate(leaf.text.trim_end().len());
        if !leaf.text.is_empty() || leaves.len() == 1 {
            break;
        }
        leaves.pop();
    }
}
