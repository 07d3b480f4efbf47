//! Plain text of documents, for search indexing and excerpts.

use serde_json::Value;

use crate::document::{Document, Node, TableView};

/// The plain text of a document: one line per text block (paragraph, heading, list item, code
/// line, table row, ...), marks removed, fragments (captions, expandable title and body, table
/// cells) included where they appear.
pub fn plain_text(document: &Document) -> String {
    plain_text_of_nodes(&document.nodes)
}

/// The plain text of blocks (joined by newlines) or of inline content (concatenated).
pub fn plain_text_of_nodes(nodes: &[Node]) -> String {
    if nodes.first().is_some_and(Node::is_block) {
        return blocks_text(nodes);
    }
    let mut text = String::new();
    {
        for node in nodes {
            inline_text(node, &mut text);
        }
    }
    text
}

/// The plain text of blocks, one line per text block.
pub(crate) fn blocks_text<'a>(blocks: impl IntoIterator<Item = &'a Node>) -> String {
    let mut text = String::new();
    for node in blocks {
        push_line(&mut text, &block_text(node));
    }
    text
}

fn push_line(text: &mut String, line: &str) {
    if line.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

fn block_text(node: &Node) -> String {
    let mut text = plain_text_of_nodes(node.children());
    match node.node_type() {
        "math" => push_line(&mut text, node.data_str("formula").unwrap_or_default()),
        "image" => push_line(&mut text, node.data_str("alt").unwrap_or_default()),
        "table" => {
            push_line(&mut text, &table_text(node));
            return text;
        }
        _ => {}
    }
    for fragment in node.fragments() {
        push_line(&mut text, &plain_text_of_nodes(&fragment.nodes));
    }
    text
}

fn inline_text(node: &Node, text: &mut String) {
    if node.is_text() {
        for leaf in node.leaves() {
            text.push_str(&leaf.text);
        }
        return;
    }
    match node.node_type() {
        "inline-math" => text.push_str(node.data_str("formula").unwrap_or_default()),
        "emoji" => text.extend(
            node.data_str("code")
                .unwrap_or_default()
                .split('-')
                .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32)),
        ),
        "button" => text.push_str(node.data_str("label").unwrap_or_default()),
        _ => {
            for child in node.children() {
                inline_text(child, text);
            }
        }
    }
}

/// Header titles, then one line per record in order, cells separated by spaces.
fn table_text(table: &Node) -> String {
    let view = TableView::of(table);
    let mut text = String::new();
    let titles: Vec<&str> = view
        .columns
        .iter()
        .filter_map(|column| view.column_field(column, "title")?.as_str())
        .filter(|title| !title.is_empty())
        .collect();
    push_line(&mut text, &titles.join(" "));
    for record in &view.records {
        let cells: Vec<String> = view
            .columns
            .iter()
            .filter_map(|column| record.get("values")?.get(*column))
            .map(|value| match value {
                Value::String(name) => view.fragment(name).map_or_else(
                    || name.clone(),
                    |fragment| plain_text_of_nodes(&fragment.nodes).replace('\n', " "),
                ),
                Value::Number(number) => number.to_string(),
                _ => String::new(),
            })
            .filter(|cell| !cell.is_empty())
            .collect();
        push_line(&mut text, &cells.join(" "));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn extracts_text_of_blocks_inlines_and_fragments() {
        let document: Document = serde_json::from_value(json!({"object": "document", "data": {}, "nodes": [
            {"object": "block", "type": "heading-1", "data": {}, "nodes": [{"object": "text", "leaves": [
                {"object": "leaf", "text": "Intro ", "marks": []}, {"object": "leaf", "text": "bold", "marks": [{"object": "mark", "type": "bold"}]}]}]},
            {"object": "block", "type": "paragraph", "data": {}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "See ", "marks": []}]},
                {"object": "inline", "type": "link", "data": {"ref": {"kind": "url", "url": "x"}}, "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "docs", "marks": []}]}]},
                {"object": "inline", "type": "inline-math", "isVoid": true, "data": {"formula": " x^2"}},
                {"object": "inline", "type": "emoji", "isVoid": true, "data": {"code": "1f600"}}
            ]},
            {"object": "block", "type": "code", "data": {}, "nodes": [
                {"object": "block", "type": "code-line", "data": {}, "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "a()", "marks": []}]}]},
                {"object": "block", "type": "code-line", "data": {}, "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "b()", "marks": []}]}]}
            ]},
            {"object": "block", "type": "divider", "isVoid": true, "data": {}},
            {"object": "block", "type": "expandable", "isVoid": true, "data": {}, "fragments": [
                {"object": "fragment", "fragment": "expandable-title", "nodes": [{"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "More", "marks": []}]}]}]},
                {"object": "fragment", "fragment": "expandable-body", "nodes": [{"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "Hidden", "marks": []}]}]}]}
            ]},
            {"object": "block", "type": "table", "isVoid": true, "data": {
                "view": {"type": "grid", "columns": ["a", "b"], "hideHeader": false},
                "definition": {"a": {"id": "a", "title": "Name", "type": "text"}, "b": {"id": "b", "title": "Size", "type": "number"}},
                "records": {"r2": {"orderIndex": "a1", "values": {"a": "f2", "b": 2}}, "r1": {"orderIndex": "a0", "values": {"a": "f1", "b": 1}}}
            }, "fragments": [
                {"object": "fragment", "fragment": "f1", "nodes": [{"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "one", "marks": []}]}]}]},
                {"object": "fragment", "fragment": "f2", "nodes": [{"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "two", "marks": []}]}]}]}
            ]}
        ]}))
        .unwrap();
        assert_eq!(
            plain_text(&document),
            "Intro bold\nSee docs x^2😀\na()\nb()\nMore\nHidden\nName Size\none 1\ntwo 2"
        );
    }
}
