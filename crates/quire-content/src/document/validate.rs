//! Structural validation of client-supplied documents.
//!
//! Validation works on the raw JSON so that every problem, including a wrong JSON type, is
//! reported with the JSON pointer of the offending value. It checks the general shape of the
//! tree (objects where expected, blocks at the top level, texts with leaves, homogeneous
//! children) and the content model of the node types whose children are known; it accepts
//! unknown node types, data keys and fields, which the document model preserves.

use std::fmt;

use serde_json::Value;

use super::{Document, JsonMap};

/// Deepest nesting of nodes accepted ([`crate::limits::MAX_NESTING`]), far above what an editor
/// produces; it bounds the recursion of every function that walks a document.
pub const MAX_DEPTH: usize = crate::limits::MAX_NESTING;

/// Why a document was rejected, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// JSON pointer of the offending value (`""` for the document itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        write!(f, "invalid document at {path}: {}", self.message)
    }
}

impl std::error::Error for ValidationError {}

impl Document {
    /// Validates client JSON and reads it into a document.
    pub fn from_json(value: Value) -> Result<Self, ValidationError> {
        validate_document(&value)?;
        let document: Document = serde_json::from_value(value).map_err(|error| ValidationError {
            path: String::new(),
            message: error.to_string(),
        })?;
        crate::limits::check_document(&document).map_err(|error| ValidationError {
            path: String::new(),
            message: error.to_string(),
        })?;
        Ok(document)
    }

    /// Checks a document built or modified in Rust against the same rules as client JSON.
    pub fn validate(&self) -> Result<(), ValidationError> {
        let value = serde_json::to_value(self).map_err(|error| ValidationError {
            path: String::new(),
            message: error.to_string(),
        })?;
        validate_document(&value)
    }
}

/// Blocks whose children are texts and inlines.
const TEXT_BLOCKS: &[&str] = &["paragraph", "heading-1", "heading-2", "heading-3", "code-line"];

/// Known blocks whose children are blocks.
const CONTAINER_BLOCKS: &[&str] = &[
    "blockquote",
    "code",
    "column",
    "columns",
    "hint",
    "if",
    "images",
    "list-item",
    "list-ordered",
    "list-tasks",
    "list-unordered",
    "stepper",
    "stepper-step",
    "tabs",
    "tabs-item",
    "update",
    "updates",
];

/// What a list of child nodes may hold.
#[derive(Clone, Copy, PartialEq)]
enum Content {
    Blocks,
    Inlines,
    /// Unknown parent: either kind, but not both.
    Either,
}

/// Validates the JSON of a document (the value of `document` in GitBook's request bodies).
pub fn validate_document(value: &Value) -> Result<(), ValidationError> {
    let map = expect_object(value, "")?;
    match map.get("object") {
        Some(Value::String(object)) if object == "document" => {}
        Some(_) => return Err(error("/object", "must be \"document\"")),
        None => return Err(error("", "missing \"object\": \"document\"")),
    }
    if let Some(data) = map.get("data") {
        expect_object(data, "/data")?;
    }
    let nodes = map.get("nodes").ok_or_else(|| error("", "missing \"nodes\""))?;
    check_children(nodes, "/nodes", Content::Blocks, 1)
}

fn check_children(value: &Value, path: &str, content: Content, depth: usize) -> Result<(), ValidationError> {
    if depth > MAX_DEPTH {
        return Err(error(
            path,
            &format!("nodes are nested more than {MAX_DEPTH} levels deep"),
        ));
    }
    let nodes = value.as_array().ok_or_else(|| error(path, "must be an array"))?;
    let mut content = content;
    for (index, node) in nodes.iter().enumerate() {
        let node_path = format!("{path}/{index}");
        let is_block = check_node(node, &node_path, depth)?;
        match (content, is_block) {
            (Content::Blocks, false) => return Err(error(&node_path, "expected a block")),
            (Content::Inlines, true) => {
                return Err(error(&node_path, "expected a text or an inline, found a block"));
            }
            (Content::Either, true) => content = Content::Blocks,
            (Content::Either, false) => content = Content::Inlines,
            _ => {}
        }
    }
    Ok(())
}

/// Checks one node; returns whether it is a block.
fn check_node(value: &Value, path: &str, depth: usize) -> Result<bool, ValidationError> {
    let map = expect_object(value, path)?;
    let object = map
        .get("object")
        .ok_or_else(|| error(path, "missing \"object\""))?
        .as_str()
        .ok_or_else(|| error(&format!("{path}/object"), "must be a string"))?;
    optional_string(map, "key", path)?;
    if object == "text" {
        check_text(map, path)?;
        return Ok(false);
    }
    if object != "block" && object != "inline" {
        return Err(error(
            &format!("{path}/object"),
            &format!("must be \"block\", \"inline\" or \"text\", found {object:?}"),
        ));
    }
    let node_type = match map.get("type") {
        Some(Value::String(node_type)) if !node_type.is_empty() => node_type.as_str(),
        Some(_) => return Err(error(&format!("{path}/type"), "must be a non-empty string")),
        None => return Err(error(path, &format!("missing \"type\" on {object}"))),
    };
    if let Some(is_void) = map.get("isVoid")
        && !is_void.is_boolean()
    {
        return Err(error(&format!("{path}/isVoid"), "must be a boolean"));
    }
    if let Some(data) = map.get("data") {
        expect_object(data, &format!("{path}/data"))?;
    }
    if let Some(nodes) = map.get("nodes") {
        let content = if object == "inline" || TEXT_BLOCKS.contains(&node_type) {
            Content::Inlines
        } else if CONTAINER_BLOCKS.contains(&node_type) {
            Content::Blocks
        } else {
            Content::Either
        };
        check_children(nodes, &format!("{path}/nodes"), content, depth + 1)?;
    }
    if let Some(fragments) = map.get("fragments") {
        let fragments_path = format!("{path}/fragments");
        let fragments = fragments
            .as_array()
            .ok_or_else(|| error(&fragments_path, "must be an array"))?;
        for (index, fragment) in fragments.iter().enumerate() {
            check_fragment(fragment, &format!("{fragments_path}/{index}"), depth + 1)?;
        }
    }
    if map.contains_key("leaves") {
        return Err(error(
            &format!("{path}/leaves"),
            &format!("only texts have leaves, not a {object}"),
        ));
    }
    Ok(object == "block")
}

fn check_text(map: &JsonMap, path: &str) -> Result<(), ValidationError> {
    if map.contains_key("nodes") {
        return Err(error(&format!("{path}/nodes"), "a text has leaves, not nodes"));
    }
    let leaves_path = format!("{path}/leaves");
    let leaves = map
        .get("leaves")
        .ok_or_else(|| error(path, "missing \"leaves\" on text"))?
        .as_array()
        .ok_or_else(|| error(&leaves_path, "must be an array"))?;
    for (index, leaf) in leaves.iter().enumerate() {
        let leaf_path = format!("{leaves_path}/{index}");
        let leaf = expect_object(leaf, &leaf_path)?;
        expect_literal(leaf, "object", "leaf", &leaf_path)?;
        match leaf.get("text") {
            Some(Value::String(_)) => {}
            Some(_) => return Err(error(&format!("{leaf_path}/text"), "must be a string")),
            None => return Err(error(&leaf_path, "missing \"text\"")),
        }
        let Some(marks) = leaf.get("marks") else {
            continue;
        };
        let marks_path = format!("{leaf_path}/marks");
        let marks = marks
            .as_array()
            .ok_or_else(|| error(&marks_path, "must be an array"))?;
        for (index, mark) in marks.iter().enumerate() {
            let mark_path = format!("{marks_path}/{index}");
            let mark = expect_object(mark, &mark_path)?;
            expect_literal(mark, "object", "mark", &mark_path)?;
            match mark.get("type") {
                Some(Value::String(mark_type)) if !mark_type.is_empty() => {}
                Some(_) => return Err(error(&format!("{mark_path}/type"), "must be a non-empty string")),
                None => return Err(error(&mark_path, "missing \"type\" on mark")),
            }
            if let Some(data) = mark.get("data") {
                expect_object(data, &format!("{mark_path}/data"))?;
            }
        }
    }
    Ok(())
}

fn check_fragment(value: &Value, path: &str, depth: usize) -> Result<(), ValidationError> {
    let map = expect_object(value, path)?;
    expect_literal(map, "object", "fragment", path)?;
    for field in ["key", "fragment", "type"] {
        optional_string(map, field, path)?;
    }
    let nodes = map
        .get("nodes")
        .ok_or_else(|| error(path, "missing \"nodes\" on fragment"))?;
    check_children(nodes, &format!("{path}/nodes"), Content::Blocks, depth + 1)
}

fn expect_object<'a>(value: &'a Value, path: &str) -> Result<&'a JsonMap, ValidationError> {
    value.as_object().ok_or_else(|| error(path, "must be an object"))
}

fn expect_literal(map: &JsonMap, field: &str, literal: &str, path: &str) -> Result<(), ValidationError> {
    match map.get(field) {
        Some(Value::String(value)) if value == literal => Ok(()),
        Some(_) => Err(error(&format!("{path}/{field}"), &format!("must be {literal:?}"))),
        None => Err(error(path, &format!("missing \"{field}\": {literal:?}"))),
    }
}

fn optional_string(map: &JsonMap, field: &str, path: &str) -> Result<(), ValidationError> {
    match map.get(field) {
        None | Some(Value::String(_)) => Ok(()),
        Some(_) => Err(error(&format!("{path}/{field}"), "must be a string")),
    }
}

fn error(path: &str, message: &str) -> ValidationError {
    ValidationError {
        path: path.to_owned(),
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: &str) -> Value {
        json!({"object": "text", "leaves": [{"object": "leaf", "text": value, "marks": []}]})
    }

    fn paragraph(nodes: Value) -> Value {
        json!({"object": "block", "type": "paragraph", "data": {}, "nodes": nodes})
    }

    fn document(nodes: Value) -> Value {
        json!({"object": "document", "data": {}, "nodes": nodes})
    }

    fn rejected(value: Value) -> String {
        validate_document(&value).unwrap_err().to_string()
    }

    #[test]
    fn accepts_well_formed_documents_with_unknown_types() {
        let value = document(json!([
            paragraph(json!([text("a"), {"object": "inline", "type": "sparkle", "isVoid": true, "data": {"x": 1}}])),
            {"object": "block", "type": "future", "nodes": [paragraph(json!([text("b")]))], "meta": {}},
            {"object": "block", "type": "expandable", "isVoid": true, "data": {}, "fragments": [
                {"object": "fragment", "fragment": "expandable-title", "type": "expandable-title", "nodes": [paragraph(json!([]))]}
            ]}
        ]));
        validate_document(&value).unwrap();
        let parsed = Document::from_json(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), value);
        parsed.validate().unwrap();
    }

    #[test]
    fn reports_the_path_of_each_problem() {
        let cases = [
            (json!([]), "invalid document at /: must be an object"),
            (
                json!({"object": "doc", "nodes": []}),
                "at /object: must be \"document\"",
            ),
            (json!({"object": "document"}), "at /: missing \"nodes\""),
            (document(json!({})), "at /nodes: must be an array"),
            (document(json!([text("a")])), "at /nodes/0: expected a block"),
            (
                document(json!([paragraph(json!([paragraph(json!([]))]))])),
                "at /nodes/0/nodes/0: expected a text or an inline, found a block",
            ),
            (
                document(json!([paragraph(json!([{"object": "text"}]))])),
                "at /nodes/0/nodes/0: missing \"leaves\" on text",
            ),
            (
                document(json!([paragraph(
                    json!([{"object": "text", "leaves": [{"object": "leaf", "text": 3}]}])
                )])),
                "at /nodes/0/nodes/0/leaves/0/text: must be a string",
            ),
            (
                document(json!([paragraph(
                    json!([{"object": "text", "leaves": [{"object": "leaf", "text": "", "marks": [{"object": "mark"}]}]}])
                )])),
                "at /nodes/0/nodes/0/leaves/0/marks/0: missing \"type\" on mark",
            ),
            (
                document(json!([{"object": "block", "nodes": []}])),
                "at /nodes/0: missing \"type\" on block",
            ),
            (
                document(json!([{"object": "block", "type": "x", "data": []}])),
                "at /nodes/0/data: must be an object",
            ),
            (
                document(json!([{"object": "block", "type": "x", "key": 1}])),
                "at /nodes/0/key: must be a string",
            ),
            (
                document(json!([{"object": "block", "type": "x", "isVoid": "yes"}])),
                "at /nodes/0/isVoid: must be a boolean",
            ),
            (
                document(
                    json!([{"object": "block", "type": "x", "nodes": [text("a"), paragraph(json!([]))]}]),
                ),
                "at /nodes/0/nodes/1: expected a text or an inline, found a block",
            ),
            (
                document(json!([{"object": "block", "type": "hint", "nodes": [text("a")]}])),
                "at /nodes/0/nodes/0: expected a block",
            ),
            (
                document(json!([{"object": "block", "type": "x", "fragments": [{"object": "fragment"}]}])),
                "at /nodes/0/fragments/0: missing \"nodes\" on fragment",
            ),
            (
                document(json!([{"object": "thing", "type": "x"}])),
                "at /nodes/0/object: must be \"block\", \"inline\" or \"text\"",
            ),
            (
                document(json!([paragraph(
                    json!([{"object": "inline", "type": "link", "nodes": [paragraph(json!([]))]}])
                )])),
                "at /nodes/0/nodes/0/nodes/0: expected a text or an inline",
            ),
        ];
        for (value, expected) in cases {
            let message = rejected(value);
            assert!(
                message.contains(expected),
                "{message} does not contain {expected}"
            );
        }
    }

    #[test]
    fn rejects_documents_nested_too_deeply() {
        let mut node = paragraph(json!([]));
        for _ in 0..MAX_DEPTH + 1 {
            node = json!({"object": "block", "type": "blockquote", "data": {}, "nodes": [node]});
        }
        assert!(rejected(document(json!([node]))).contains("nested more than"));
    }
}
