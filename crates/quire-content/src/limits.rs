//! The limits on content that enters quire, in one place.
//!
//! Every way content enters (page markdown and JSON documents in change-request batches,
//! comments and replies, review bodies, imports) goes through [`crate::markdown_to_document`] or
//! [`crate::Document::from_json`], and both end with [`check_document`]. The limits are chosen
//! so that whatever is accepted can be read back in every format, diffed and merged, within a
//! bounded time and stack:
//!
//! - nesting is bounded before anything recursive runs: a document nested [`MAX_NESTING`]
//!   levels deep is at most about `2 * MAX_NESTING + 8` levels of JSON, well inside the 128 of
//!   the JSON parser that reads stored documents back, and markdown is measured
//!   ([`MAX_MARKDOWN_NESTING`]) before it is converted;
//! - sizes ([`MAX_MARKDOWN_BYTES`], [`MAX_NODES`], [`MAX_TEXT_BYTES`], the table limits) bound
//!   the memory and time of everything linear in the document, and every algorithm over a
//!   document (conversion, rendering, keys, diff, merge) is linear or near-linear in them; the
//!   bench's `pathological` phase merges a document at these limits.

use std::fmt;

use serde_json::Value;

use crate::document::{Document, Node};

/// Bytes of one markdown text (a page, a comment), frontmatter included. Larger is a 413.
pub const MAX_MARKDOWN_BYTES: usize = 2 * 1024 * 1024;
/// Bytes of a page's YAML frontmatter.
pub const MAX_FRONTMATTER_BYTES: usize = 16 * 1024;
/// Nesting of values inside the frontmatter (YAML maps and lists).
pub const MAX_FRONTMATTER_NESTING: usize = 8;
/// Nesting of markdown containers and inline spans (block quotes, list items, emphasis, links,
/// liquid tags), measured before conversion: it bounds the converter's recursion.
pub const MAX_MARKDOWN_NESTING: usize = 64;
/// Nesting of document nodes: a block inside a block is one level deeper, and the nodes of a
/// fragment (a table cell, a caption, an expandable's body) are two levels below its owner.
pub const MAX_NESTING: usize = 32;
/// Blocks, inlines and texts in one document, fragments included.
pub const MAX_NODES: usize = 250_000;
/// Bytes of one text leaf.
pub const MAX_TEXT_BYTES: usize = 256 * 1024;
/// Marks on one text leaf. GitBook has eight mark types and a leaf carries each at most once;
/// without a bound, the marks of a leaf (which are not nodes) were unbounded, and rendering a
/// leaf with 16,000 of them took 23 s.
pub const MAX_MARKS: usize = 32;
/// Columns of one table.
pub const MAX_TABLE_COLUMNS: usize = 1_000;
/// Rows of one table.
pub const MAX_TABLE_ROWS: usize = 10_000;
/// Cells (row values) of one table.
pub const MAX_TABLE_CELLS: usize = 100_000;

/// Content over one of the limits: which, its maximum and the value found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    /// The constant's name, as documented (`MAX_NESTING`).
    pub limit: &'static str,
    /// What was measured, in words (`nesting of blocks`).
    pub what: &'static str,
    pub max: usize,
    pub value: usize,
}

impl LimitError {
    fn new(limit: &'static str, what: &'static str, max: usize, value: usize) -> LimitError {
        LimitError {
            limit,
            what,
            max,
            value,
        }
    }

    /// Whether the limit is on the size of the input (a 413 rather than a 400).
    pub fn is_size(&self) -> bool {
        self.limit == "MAX_MARKDOWN_BYTES"
    }
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is {}, over the limit {} = {}",
            self.what, self.value, self.limit, self.max
        )
    }
}

impl std::error::Error for LimitError {}

/// Checks a markdown text's size before it is parsed.
pub fn check_markdown_size(markdown: &str) -> Result<(), LimitError> {
    if markdown.len() > MAX_MARKDOWN_BYTES {
        return Err(LimitError::new(
            "MAX_MARKDOWN_BYTES",
            "the markdown's size in bytes",
            MAX_MARKDOWN_BYTES,
            markdown.len(),
        ));
    }
    Ok(())
}

pub(crate) fn markdown_nesting(depth: usize) -> Result<(), LimitError> {
    if depth > MAX_MARKDOWN_NESTING {
        return Err(LimitError::new(
            "MAX_MARKDOWN_NESTING",
            "the markdown's nesting of blocks and spans",
            MAX_MARKDOWN_NESTING,
            depth,
        ));
    }
    Ok(())
}

/// Checks a frontmatter's size, before it is parsed (its values: [`check_frontmatter_value`]).
pub(crate) fn check_frontmatter(yaml: &str) -> Result<(), LimitError> {
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(LimitError::new(
            "MAX_FRONTMATTER_BYTES",
            "the frontmatter's size in bytes",
            MAX_FRONTMATTER_BYTES,
            yaml.len(),
        ));
    }
    Ok(())
}

/// Checks the nesting of a frontmatter value (once parsed).
pub(crate) fn check_frontmatter_value(value: &Value) -> Result<(), LimitError> {
    let depth = json_depth(value);
    if depth > MAX_FRONTMATTER_NESTING {
        return Err(LimitError::new(
            "MAX_FRONTMATTER_NESTING",
            "the frontmatter's nesting of values",
            MAX_FRONTMATTER_NESTING,
            depth,
        ));
    }
    Ok(())
}

/// The nesting of a JSON value (a scalar is 0, `[]` is 1, `[[1]]` is 2), without recursion.
pub fn json_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|v| (v, depth + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(depth + 1);
                stack.extend(map.values().map(|v| (v, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Checks a document against every limit, without recursion (it also runs on documents that
/// are not yet known to be shallow).
pub fn check_document(document: &Document) -> Result<(), LimitError> {
    let mut nodes = 0usize;
    let mut stack: Vec<(&Node, usize)> = document.nodes.iter().map(|n| (n, 1)).collect();
    while let Some((node, depth)) = stack.pop() {
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(LimitError::new(
                "MAX_NODES",
                "the document's number of nodes",
                MAX_NODES,
                measure(document).0,
            ));
        }
        if depth > MAX_NESTING {
            return Err(LimitError::new(
                "MAX_NESTING",
                "the document's nesting of nodes",
                MAX_NESTING,
                measure(document).1,
            ));
        }
        for leaf in node.leaves.iter().flatten() {
            if leaf.text.len() > MAX_TEXT_BYTES {
                return Err(LimitError::new(
                    "MAX_TEXT_BYTES",
                    "the size in bytes of one text",
                    MAX_TEXT_BYTES,
                    leaf.text.len(),
                ));
            }
            if leaf.marks.len() > MAX_MARKS {
                return Err(LimitError::new(
                    "MAX_MARKS",
                    "the number of marks on one text",
                    MAX_MARKS,
                    leaf.marks.len(),
                ));
            }
        }
        if node.node_type.as_deref() == Some("table") {
            check_table(node)?;
        }
        stack.extend(node.nodes.iter().flatten().map(|n| (n, depth + 1)));
        for fragment in node.fragments.iter().flatten() {
            stack.extend(fragment.nodes.iter().map(|n| (n, depth + 2)));
        }
    }
    Ok(())
}

/// A document's number of nodes and deepest nesting, for the message of a limit it is over.
fn measure(document: &Document) -> (usize, usize) {
    let (mut count, mut deepest) = (0, 0);
    let mut stack: Vec<(&Node, usize)> = document.nodes.iter().map(|n| (n, 1)).collect();
    while let Some((node, depth)) = stack.pop() {
        count += 1;
        deepest = deepest.max(depth);
        stack.extend(node.nodes.iter().flatten().map(|n| (n, depth + 1)));
        for fragment in node.fragments.iter().flatten() {
            stack.extend(fragment.nodes.iter().map(|n| (n, depth + 2)));
        }
    }
    (count, deepest)
}

fn check_table(table: &Node) -> Result<(), LimitError> {
    let columns = table
        .data_value("definition")
        .and_then(Value::as_object)
        .map_or(0, serde_json::Map::len)
        .max(
            table
                .data_value("view")
                .and_then(|view| view.get("columns"))
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
        );
    if columns > MAX_TABLE_COLUMNS {
        return Err(LimitError::new(
            "MAX_TABLE_COLUMNS",
            "a table's number of columns",
            MAX_TABLE_COLUMNS,
            columns,
        ));
    }
    let records = table.data_value("records").and_then(Value::as_object);
    let rows = records.map_or(0, serde_json::Map::len);
    if rows > MAX_TABLE_ROWS {
        return Err(LimitError::new(
            "MAX_TABLE_ROWS",
            "a table's number of rows",
            MAX_TABLE_ROWS,
            rows,
        ));
    }
    let cells: usize = records
        .into_iter()
        .flat_map(|records| records.values())
        .map(|record| {
            record
                .get("values")
                .and_then(Value::as_object)
                .map_or(0, serde_json::Map::len)
        })
        .sum();
    if cells > MAX_TABLE_CELLS {
        return Err(LimitError::new(
            "MAX_TABLE_CELLS",
            "a table's number of cells",
            MAX_TABLE_CELLS,
            cells,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::document::Fragment;

    fn nested_quotes(depth: usize) -> Document {
        let mut node = Node::paragraph(vec![Node::plain_text("x")]);
        for _ in 1..depth {
            node = Node::block("blockquote", Default::default(), vec![node]);
        }
        Document::new(vec![node])
    }

    #[test]
    fn nesting_is_counted_to_the_deepest_node() {
        // depth quotes hold a paragraph holding a text: depth + 1 levels.
        assert!(check_document(&nested_quotes(MAX_NESTING - 1)).is_ok());
        let error = check_document(&nested_quotes(MAX_NESTING)).unwrap_err();
        assert_eq!(error.limit, "MAX_NESTING");
        assert_eq!(error.value, MAX_NESTING + 1);
        let error = check_document(&nested_quotes(60)).unwrap_err();
        assert_eq!(error.value, 61, "the deepest nesting is reported");
        assert!(error.to_string().contains("MAX_NESTING = 32"), "{error}");
    }

    #[test]
    fn fragments_count_two_levels() {
        let mut expandable = Node::void_block("expandable", Default::default());
        expandable.fragments = Some(vec![Fragment::new(
            "body",
            None,
            nested_quotes(MAX_NESTING - 2).nodes,
        )]);
        let error = check_document(&Document::new(vec![expandable])).unwrap_err();
        assert_eq!((error.limit, error.value), ("MAX_NESTING", MAX_NESTING + 1));
    }

    #[test]
    fn long_texts_and_large_tables_are_refused() {
        let long = Document::new(vec![Node::paragraph(vec![Node::plain_text(
            &"x".repeat(MAX_TEXT_BYTES + 1),
        )])]);
        assert_eq!(check_document(&long).unwrap_err().limit, "MAX_TEXT_BYTES");
        let columns: serde_json::Map<String, Value> = (0..=MAX_TABLE_COLUMNS)
            .map(|i| (format!("c{i}"), json!({"type": "text"})))
            .collect();
        let mut data = serde_json::Map::new();
        data.insert("definition".into(), Value::Object(columns));
        let table = Node::void_block("table", data);
        let error = check_document(&Document::new(vec![table])).unwrap_err();
        assert_eq!(
            (error.limit, error.value),
            ("MAX_TABLE_COLUMNS", MAX_TABLE_COLUMNS + 1)
        );
    }

    #[test]
    fn marks_on_a_leaf_are_bounded() {
        let leaf = |marks: usize| {
            let marks = (0..marks).map(|_| crate::document::Mark::new("bold")).collect();
            let text = Node::text(vec![crate::document::Leaf::new("x", marks)]);
            Document::new(vec![Node::paragraph(vec![text])])
        };
        assert!(check_document(&leaf(MAX_MARKS)).is_ok());
        let error = check_document(&leaf(MAX_MARKS + 1)).unwrap_err();
        assert_eq!((error.limit, error.value), ("MAX_MARKS", MAX_MARKS + 1));
    }

    #[test]
    fn node_count_is_bounded_and_reported() {
        let paragraphs = (0..MAX_NODES / 2 + 1)
            .map(|_| Node::paragraph(vec![Node::plain_text("x")]))
            .collect();
        let error = check_document(&Document::new(paragraphs)).unwrap_err();
        assert_eq!((error.limit, error.value), ("MAX_NODES", MAX_NODES + 2));
    }

    #[test]
    fn json_depth_counts_containers() {
        assert_eq!(json_depth(&json!(1)), 0);
        assert_eq!(json_depth(&json!({"a": [1, {"b": []}]})), 4);
    }
}
