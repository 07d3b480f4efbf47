//! GFM tables and GitBook's `table` block.
//!
//! GitBook stores a table as a void block whose `data` holds columns (`definition`, shown in
//! `view.columns` order) and rows (`records`, sorted by `orderIndex`); a text cell's value is the
//! name of a fragment of the block holding the cell's content. A GFM table maps to a `grid` view
//! of `text` columns: header cells become column titles (plain text: GitBook titles have no
//! formatting), the delimiter row gives `textAlignment`, and every non-empty body cell becomes
//! a fragment with one paragraph (or, when GitBook wrote it with `<p>`, `<ul>`, `<ol>` and `<li>`
//! tags, the paragraphs and lists they make). Ids are positional (`c0`, `r0`, `r0c0`) so the conversion is
//! deterministic. Rendering writes any table as GFM: non-text columns (numbers, checkboxes,
//! selects, references, files) render as their text, and hard breaks as `<br>`.

use comrak::nodes::{AstNode, NodeValue, TableAlignment};
use serde_json::{Value, json};

use super::directives::Directives;
use super::parse_inline::{convert_cell_blocks, convert_inlines};
use super::render_inline::{InlineMode, Renderer, escape_text};
use crate::document::{Fragment, JsonMap, Node, TableView};
use crate::text::plain_text_of_nodes;

/// Converts a comrak table node.
pub(crate) fn from_comrak<'a>(node: &'a AstNode<'a>, directives: &Directives) -> Node {
    let alignments = match &node.data.borrow().value {
        NodeValue::Table(table) => table.alignments.clone(),
        _ => Vec::new(),
    };
    let column_ids: Vec<String> = (0..alignments.len()).map(|index| format!("c{index}")).collect();
    let mut definition = JsonMap::new();
    let mut records = JsonMap::new();
    let mut fragments = Vec::new();
    let mut record_index = 0;
    for row in node.children() {
        let header = matches!(row.data.borrow().value, NodeValue::TableRow(true));
        let record_id = format!("r{record_index}");
        let mut values = JsonMap::new();
        for (column, cell) in row.children().enumerate() {
            let Some(column_id) = column_ids.get(column) else {
                break;
            };
            if !header {
                let blocks = convert_cell_blocks(cell, directives);
                if !blocks
                    .iter()
                    .all(|block| block.node_type() == "paragraph" && is_empty_content(block.children()))
                {
                    let name = format!("{record_id}{column_id}");
                    values.insert(column_id.clone(), Value::String(name.clone()));
                    fragments.push(Fragment::new(&name, None, blocks));
                }
                continue;
            }
            let content = convert_inlines(cell, directives, false).nodes;
            let alignment = match alignments.get(column) {
                Some(TableAlignment::Center) => "center",
                Some(TableAlignment::Right) => "right",
                _ => "left",
            };
            definition.insert(
                column_id.clone(),
                json!({"id": column_id, "title": plain_text_of_nodes(&content), "type": "text", "textAlignment": alignment}),
            );
        }
        if !header {
            records.insert(
                record_id,
                json!({"orderIndex": order_index(record_index), "values": values}),
            );
            record_index += 1;
        }
    }
    let mut data = JsonMap::new();
    data.insert(
        "view".into(),
        json!({"type": "grid", "columns": column_ids, "hideHeader": false}),
    );
    data.insert("records".into(), Value::Object(records));
    data.insert("definition".into(), Value::Object(definition));
    let mut table = Node::void_block("table", data);
    table.fragments = Some(fragments);
    table
}

fn is_empty_content(nodes: &[Node]) -> bool {
    nodes
        .iter()
        .all(|node| node.is_text() && node.leaves().iter().all(|leaf| leaf.text.is_empty()))
}

/// A fractional-index style key (`a0`..`az`, `b00`..) that sorts like `index`.
pub(crate) fn order_index(index: usize) -> String {
    const DIGITS: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut digits = Vec::new();
    let mut rest = index;
    let mut width = 1;
    let mut capacity = DIGITS.len();
    while rest >= capacity {
        rest -= capacity;
        width += 1;
        capacity = capacity.saturating_mul(DIGITS.len());
    }
    for _ in 0..width {
        digits.push(DIGITS[rest % DIGITS.len()]);
        rest /= DIGITS.len();
    }
    digits.reverse();
    let prefix = char::from(b'a' + u8::try_from(width - 1).unwrap_or(25).min(25));
    format!("{prefix}{}", String::from_utf8_lossy(&digits))
}

/// Renders a `table` block as a GFM table; `None` when it has no column.
pub(crate) fn render(table: &Node, renderer: &Renderer<'_>) -> Option<String> {
    let view = TableView::of(table);
    if view.columns.is_empty() {
        return None;
    }
    if super::html_table::needs_html(table) {
        return Some(super::html_table::to_html(table, renderer));
    }
    let mut lines = Vec::with_capacity(view.records.len() + 2);
    let header: Vec<String> = view
        .columns
        .iter()
        .map(|column| {
            let title = view.column_field(column, "title").and_then(Value::as_str);
            escape_text(
                &title.unwrap_or_default().replace('\n', " "),
                InlineMode::TableCell,
            )
        })
        .collect();
    lines.push(row(&header));
    let delimiters: Vec<String> = view
        .columns
        .iter()
        .map(|column| {
            match view.column_field(column, "textAlignment").and_then(Value::as_str) {
                Some("center") => ":-:",
                Some("right") => "--:",
                _ => "---",
            }
            .to_owned()
        })
        .collect();
    lines.push(row(&delimiters));
    for record in &view.records {
        let cells: Vec<String> = view
            .columns
            .iter()
            .map(|column| {
                let value = record.get("values").and_then(|values| values.get(*column));
                let column_type = view.column_field(column, "type").and_then(Value::as_str);
                value.map_or_else(String::new, |value| cell(&view, column_type, value, renderer))
            })
            .collect();
        lines.push(row(&cells));
    }
    Some(lines.join("\n"))
}

fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

fn cell(table: &TableView<'_>, column_type: Option<&str>, value: &Value, renderer: &Renderer<'_>) -> String {
    let cell_renderer = renderer.with_mode(InlineMode::TableCell);
    match (column_type, value) {
        (Some("text") | None, Value::String(name)) => match table.fragment(name) {
            Some(fragment) if html_cell(&fragment.nodes) => fragment
                .nodes
                .iter()
                .map(|block| match block.node_type() {
                    "paragraph" => format!("<p>{}</p>", cell_renderer.inlines(block.children())),
                    list => {
                        let tag = if list == "list-ordered" { "ol" } else { "ul" };
                        let items: String = block
                            .children()
                            .iter()
                            .flat_map(|item| item.children())
                            .map(|paragraph| {
                                format!("<li>{}</li>", cell_renderer.inlines(paragraph.children()))
                            })
                            .collect();
                        format!("<{tag}>{items}</{tag}>")
                    }
                })
                .collect(),
            Some(fragment) => fragment
                .nodes
                .iter()
                .map(|block| {
                    if block.node_type() == "paragraph" || block.node_type().starts_with("heading-") {
                        cell_renderer.inlines(block.children())
                    } else {
                        escape_text(
                            &plain_text_of_nodes(std::slice::from_ref(block)).replace('\n', " "),
                            InlineMode::TableCell,
                        )
                    }
                })
                .filter(|text| !text.is_empty())
                .collect::<Vec<_>>()
                .join("<br>"),
            None => escape_text(name, InlineMode::TableCell),
        },
        (_, Value::Object(_)) => {
            match crate::document::ContentRef::from_value(value.get("ref").unwrap_or(value)) {
                Some(content_ref) => {
                    let target = renderer.target(&content_ref);
                    format!(
                        "[{}]({})",
                        escape_text(&target, InlineMode::TableCell),
                        super::render_inline::link_destination(&target)
                    )
                }
                None => String::new(),
            }
        }
        (_, Value::Array(items)) => {
            let items: Vec<String> = items.iter().map(scalar_text).collect();
            escape_text(&items.join(", "), InlineMode::TableCell)
        }
        (_, value) => escape_text(&scalar_text(value), InlineMode::TableCell),
    }
}

/// Whether a cell is written with the HTML tags GitBook uses for cells of several blocks
/// (`<p>`, `<ul>`, `<ol>`, `<li>`), which parse back to the same blocks: it holds a list, or
/// several paragraphs, and every list item is one paragraph. Other cells are written inline.
fn html_cell(blocks: &[Node]) -> bool {
    let simple_list = |block: &Node| {
        matches!(block.node_type(), "list-unordered" | "list-ordered")
            && block.data.as_ref().is_none_or(JsonMap::is_empty)
            && block.children().iter().all(|item| {
                item.node_type() == "list-item"
                    && item.data.as_ref().is_none_or(JsonMap::is_empty)
                    && matches!(item.children(), [paragraph] if paragraph.node_type() == "paragraph")
            })
    };
    let has_list = blocks.iter().any(simple_list);
    (has_list || blocks.len() > 1)
        && blocks
            .iter()
            .all(|block| block.node_type() == "paragraph" || simple_list(block))
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_indexes_sort_like_numbers() {
        let keys: Vec<String> = (0..5000).map(order_index).collect();
        assert_eq!(keys[0], "a0");
        assert_eq!(keys[61], "az");
        assert_eq!(keys[62], "b00");
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(sorted, keys);
    }
}
