//! The generic node types of the JSON document tree.
//!
//! GitBook has dozens of block and inline types, and adds more over time. Instead of one Rust
//! type per GitBook type, every block, inline and text is a [`Node`] that keeps whatever fields
//! the client sent: known fields are typed, anything else lands in `extra` and is serialized back
//! unchanged. This keeps the server wire-compatible with documents it does not fully understand.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A JSON object, as used for `data` and for unknown fields.
pub type JsonMap = Map<String, Value>;

/// The fixed `object` field of leaves, marks, fragments and documents (see [`object_literal`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Discriminator;

/// Generates a serde `with` module for a [`Discriminator`] field that is always the given `object` string.
///
/// Leaves, marks, fragments and documents have a fixed `object` discriminator: storing it as a
/// `String` would let Rust code build inconsistent values, so it is checked on input and written
/// on output instead.
macro_rules! object_literal {
    ($module:ident, $literal:literal) => {
        mod $module {
            use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

            pub(super) fn serialize<S: Serializer>(
                _: &super::Discriminator,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($literal)
            }

            pub(super) fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<super::Discriminator, D::Error> {
                let value = String::deserialize(deserializer)?;
                if value == $literal {
                    Ok(super::Discriminator)
                } else {
                    Err(D::Error::custom(format!(
                        "expected \"object\": \"{}\", found {value:?}",
                        $literal
                    )))
                }
            }
        }
    };
}

object_literal!(document_object, "document");
object_literal!(leaf_object, "leaf");
object_literal!(mark_object, "mark");
object_literal!(fragment_object, "fragment");

/// A page document: `{"object": "document", "data": {...}, "nodes": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Document {
    #[serde(rename = "object", with = "document_object")]
    object: Discriminator,
    /// Document-level data (GitBook's `schemaVersion` and anything else a client sets).
    #[serde(default)]
    pub data: JsonMap,
    /// Top-level blocks.
    pub nodes: Vec<Node>,
    /// Fields this crate does not know (e.g. `meta`), kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Document {
    /// A document holding the given top-level blocks and empty `data`.
    pub fn new(nodes: Vec<Node>) -> Self {
        Self {
            nodes,
            ..Self::default()
        }
    }
}

/// What a [`Node`] is: its `object` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeObject {
    /// `"block"`: paragraphs, headings, lists, code, hints, ...
    Block,
    /// `"inline"`: links, inline images, mentions, math, ...
    Inline,
    /// `"text"`: a run of leaves, each with its marks.
    Text,
}

/// A block, inline or text node.
///
/// Optional fields stay absent when the client left them out, so a document read from JSON
/// serializes back to the same JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Block, inline or text.
    pub object: NodeObject,
    /// The GitBook type (`paragraph`, `link`, ...); absent on texts.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Stable identifier of the node inside its document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Whether the node has no editable children (images, dividers, ...).
    #[serde(rename = "isVoid", default, skip_serializing_if = "Option::is_none")]
    pub is_void: Option<bool>,
    /// Type-specific attributes, kept as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonMap>,
    /// Child nodes of blocks and inlines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<Node>>,
    /// Leaves of a text node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<Vec<Leaf>>,
    /// Named sub-documents (captions, expandable title and body, table cells).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragments: Option<Vec<Fragment>>,
    /// Fields this crate does not know (e.g. `meta`), kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Node {
    fn element(object: NodeObject, node_type: &str, data: JsonMap, nodes: Option<Vec<Node>>) -> Self {
        Self {
            object,
            node_type: Some(node_type.to_owned()),
            key: None,
            is_void: Some(nodes.is_none()),
            data: Some(data),
            nodes,
            leaves: None,
            fragments: None,
            extra: JsonMap::new(),
        }
    }

    /// A block with children.
    pub fn block(node_type: &str, data: JsonMap, nodes: Vec<Node>) -> Self {
        Self::element(NodeObject::Block, node_type, data, Some(nodes))
    }

    /// A void block (`isVoid: true`, no children).
    pub fn void_block(node_type: &str, data: JsonMap) -> Self {
        Self::element(NodeObject::Block, node_type, data, None)
    }

    /// An inline with children.
    pub fn inline(node_type: &str, data: JsonMap, nodes: Vec<Node>) -> Self {
        Self::element(NodeObject::Inline, node_type, data, Some(nodes))
    }

    /// A void inline (`isVoid: true`, no children).
    pub fn void_inline(node_type: &str, data: JsonMap) -> Self {
        Self::element(NodeObject::Inline, node_type, data, None)
    }

    /// A text node made of the given leaves.
    pub fn text(leaves: Vec<Leaf>) -> Self {
        Self {
            object: NodeObject::Text,
            node_type: None,
            key: None,
            is_void: None,
            data: None,
            nodes: None,
            leaves: Some(leaves),
            fragments: None,
            extra: JsonMap::new(),
        }
    }

    /// A text node with a single unmarked leaf.
    pub fn plain_text(text: &str) -> Self {
        Self::text(vec![Leaf::new(text, Vec::new())])
    }

    /// A paragraph block holding the given inline content.
    pub fn paragraph(nodes: Vec<Node>) -> Self {
        Self::block("paragraph", JsonMap::new(), nodes)
    }

    /// The node's `type`, or `""` for texts.
    pub fn node_type(&self) -> &str {
        self.node_type.as_deref().unwrap_or("")
    }

    /// Whether this is a block.
    pub fn is_block(&self) -> bool {
        self.object == NodeObject::Block
    }

    /// Whether this is an inline.
    pub fn is_inline(&self) -> bool {
        self.object == NodeObject::Inline
    }

    /// Whether this is a text.
    pub fn is_text(&self) -> bool {
        self.object == NodeObject::Text
    }

    /// The child nodes (empty when absent).
    pub fn children(&self) -> &[Node] {
        self.nodes.as_deref().unwrap_or_default()
    }

    /// The leaves of a text node (empty for other nodes).
    pub fn leaves(&self) -> &[Leaf] {
        self.leaves.as_deref().unwrap_or_default()
    }

    /// The fragments (empty when absent).
    pub fn fragments(&self) -> &[Fragment] {
        self.fragments.as_deref().unwrap_or_default()
    }

    /// The fragment whose `fragment` name is `name`.
    pub fn fragment(&self, name: &str) -> Option<&Fragment> {
        self.fragments()
            .iter()
            .find(|fragment| fragment.fragment.as_deref() == Some(name))
    }

    /// A `data` value.
    pub fn data_value(&self, key: &str) -> Option<&Value> {
        self.data.as_ref()?.get(key)
    }

    /// A string `data` value.
    pub fn data_str(&self, key: &str) -> Option<&str> {
        self.data_value(key)?.as_str()
    }

    /// A boolean `data` value.
    pub fn data_bool(&self, key: &str) -> Option<bool> {
        self.data_value(key)?.as_bool()
    }
}

/// A run of text sharing one set of marks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Leaf {
    #[serde(rename = "object", with = "leaf_object")]
    object: Discriminator,
    /// The text; `\n` is a hard line break.
    pub text: String,
    /// Formatting applied to the whole leaf.
    #[serde(default)]
    pub marks: Vec<Mark>,
    /// Fields this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Leaf {
    /// A leaf with the given text and marks.
    pub fn new(text: &str, marks: Vec<Mark>) -> Self {
        Self {
            text: text.to_owned(),
            marks,
            ..Self::default()
        }
    }
}

/// Formatting of a leaf: `bold`, `italic`, `code`, `strikethrough`, `color`, ...
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mark {
    #[serde(rename = "object", with = "mark_object")]
    object: Discriminator,
    /// The mark type.
    #[serde(rename = "type")]
    pub mark_type: String,
    /// Mark attributes (only `color` has some in GitBook's schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<JsonMap>,
    /// Fields this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Mark {
    /// A mark without data.
    pub fn new(mark_type: &str) -> Self {
        Self {
            mark_type: mark_type.to_owned(),
            ..Self::default()
        }
    }

    /// A mark with data (e.g. `color` with `text` and `background`).
    pub fn with_data(mark_type: &str, data: JsonMap) -> Self {
        Self {
            mark_type: mark_type.to_owned(),
            data: Some(data),
            ..Self::default()
        }
    }
}

/// A named list of blocks attached to a node (image caption, expandable parts, table cells).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fragment {
    #[serde(rename = "object", with = "fragment_object")]
    object: Discriminator,
    /// Stable identifier of the fragment inside its document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The fragment's name, unique within its node (`caption`, a table cell id, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragment: Option<String>,
    /// The fragment's type (`expandable-title`, ...), when GitBook gives one.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub fragment_type: Option<String>,
    /// The fragment's blocks.
    pub nodes: Vec<Node>,
    /// Fields this crate does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: JsonMap,
}

impl Fragment {
    /// A fragment with a name, an optional type and its blocks.
    pub fn new(name: &str, fragment_type: Option<&str>, nodes: Vec<Node>) -> Self {
        Self {
            fragment: Some(name.to_owned()),
            fragment_type: fragment_type.map(str::to_owned),
            nodes,
            ..Self::default()
        }
    }
}

/// Calls `visit` on every node of `nodes` and of their descendants, fragments included, parents
/// before children.
pub(crate) fn walk_nodes<'a>(nodes: &'a [Node], visit: &mut dyn FnMut(&'a Node)) {
    for node in nodes {
        visit(node);
        walk_nodes(node.children(), visit);
        for fragment in node.fragments() {
            walk_nodes(&fragment.nodes, visit);
        }
    }
}

/// Mutable counterpart of [`walk_nodes`].
pub(crate) fn walk_nodes_mut(nodes: &mut [Node], visit: &mut dyn FnMut(&mut Node)) {
    for node in nodes {
        visit(node);
        if let Some(children) = node.nodes.as_mut() {
            walk_nodes_mut(children, visit);
        }
        for fragment in node.fragments.iter_mut().flatten() {
            walk_nodes_mut(&mut fragment.nodes, visit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_fields_types_and_data_survive_a_round_trip() {
        let input = json!({
            "object": "document",
            "data": {"schemaVersion": 3, "custom": [1, 2]},
            "meta": {"token": "t"},
            "nodes": [{
                "object": "block",
                "type": "future-block",
                "key": "k1",
                "data": {"anything": {"deep": true}},
                "meta": {"id": "x"},
                "nodes": [{
                    "object": "text",
                    "key": "t1",
                    "leaves": [{
                        "object": "leaf",
                        "text": "hi",
                        "marks": [{"object": "mark", "type": "sparkle", "data": {"level": 9}, "x": 1}],
                        "selection": null
                    }]
                }],
                "fragments": [{"object": "fragment", "fragment": "f", "type": "t", "nodes": [], "z": 0}]
            }]
        });
        let document: Document = serde_json::from_value(input.clone()).unwrap();
        assert_eq!(serde_json::to_value(&document).unwrap(), input);
    }

    #[test]
    fn stored_numbers_read_back_unchanged() {
        // Found by the document_to_markdown fuzz target: without serde_json's correctly rounded
        // float parsing, this number read as 8088888888888890.0, was stored as such, and read
        // back as 8088888888888889.0, another document (and another content hash).
        let input = r#"{"object":"document","data":{"n":8088888888888888.8888888888888888},"nodes":[]}"#;
        let document = Document::from_json(serde_json::from_str(input).unwrap()).unwrap();
        let stored = serde_json::to_vec(&document).unwrap();
        let read_back: Document = serde_json::from_slice(&stored).unwrap();
        assert_eq!(read_back, document);
        assert_eq!(serde_json::to_vec(&read_back).unwrap(), stored);
    }

    #[test]
    fn constructors_build_canonical_shapes() {
        let paragraph = Node::paragraph(vec![Node::plain_text("a")]);
        assert_eq!(
            serde_json::to_value(Document::new(vec![paragraph])).unwrap(),
            json!({"object": "document", "data": {}, "nodes": [{
                "object": "block", "type": "paragraph", "isVoid": false, "data": {},
                "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "a", "marks": []}]}]
            }]})
        );
        let divider = Node::void_block("divider", JsonMap::new());
        assert_eq!(
            serde_json::to_value(divider).unwrap(),
            json!({"object": "block", "type": "divider", "isVoid": true, "data": {}})
        );
    }

    #[test]
    fn wrong_object_literal_is_rejected() {
        let error = serde_json::from_value::<Leaf>(json!({"object": "text", "text": "", "marks": []}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("expected \"object\": \"leaf\""), "{error}");
    }

    #[test]
    fn walk_visits_fragments_and_children_in_order() {
        let mut image = Node::void_block("image", JsonMap::new());
        image.fragments = Some(vec![Fragment::new(
            "caption",
            None,
            vec![Node::paragraph(vec![Node::plain_text("c")])],
        )]);
        let document = Document::new(vec![Node::block("images", JsonMap::new(), vec![image])]);
        let mut types = Vec::new();
        walk_nodes(&document.nodes, &mut |node| {
            types.push(node.node_type().to_owned())
        });
        assert_eq!(types, ["images", "image", "paragraph", ""]);
    }
}
