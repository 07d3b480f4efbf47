//! Node keys: filling in the ones a client or the markdown parser left out, and removing them
//! to compare documents by content.

use super::{Document, Fragment, Node};

/// Gives every block, inline, text and fragment without a `key` one from `next_key`.
///
/// The crate has no source of randomness, so the caller decides what keys look like (random ids
/// in the server, counters in tests). Existing keys are kept; visiting order is document order,
/// so a deterministic generator gives deterministic keys.
pub fn fill_missing_keys(document: &mut Document, next_key: &mut dyn FnMut() -> String) {
    fill_nodes(&mut document.nodes, next_key);
}

fn fill_nodes(nodes: &mut [Node], next_key: &mut dyn FnMut() -> String) {
    for node in nodes {
        if node.key.is_none() {
            node.key = Some(next_key());
        }
        if let Some(children) = node.nodes.as_mut() {
            fill_nodes(children, next_key);
        }
        for fragment in node.fragments.iter_mut().flatten() {
            fill_fragment(fragment, next_key);
        }
    }
}

fn fill_fragment(fragment: &mut Fragment, next_key: &mut dyn FnMut() -> String) {
    if fragment.key.is_none() {
        fragment.key = Some(next_key());
    }
    fill_nodes(&mut fragment.nodes, next_key);
}

/// Removes every node and fragment key, to compare two documents by content alone.
pub fn strip_keys(document: &mut Document) {
    strip_nodes(&mut document.nodes);
}

fn strip_nodes(nodes: &mut [Node]) {
    for node in nodes {
        node.key = None;
        if let Some(children) = node.nodes.as_mut() {
            strip_nodes(children);
        }
        for fragment in node.fragments.iter_mut().flatten() {
            fragment.key = None;
            strip_nodes(&mut fragment.nodes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::JsonMap;

    fn sample() -> Document {
        let mut image = Node::void_block("image", JsonMap::new());
        image.fragments = Some(vec![Fragment::new(
            "caption",
            None,
            vec![Node::paragraph(vec![])],
        )]);
        let mut paragraph = Node::paragraph(vec![Node::plain_text("a")]);
        paragraph.key = Some("kept".into());
        Document::new(vec![paragraph, image])
    }

    #[test]
    fn fills_only_missing_keys_in_document_order() {
        let mut document = sample();
        let mut counter = 0;
        fill_missing_keys(&mut document, &mut || {
            counter += 1;
            format!("k{counter}")
        });
        assert_eq!(document.nodes[0].key.as_deref(), Some("kept"));
        assert_eq!(document.nodes[0].children()[0].key.as_deref(), Some("k1"));
        assert_eq!(document.nodes[1].key.as_deref(), Some("k2"));
        let fragment = &document.nodes[1].fragments()[0];
        assert_eq!(fragment.key.as_deref(), Some("k3"));
        assert_eq!(fragment.nodes[0].key.as_deref(), Some("k4"));
    }

    #[test]
    fn strip_removes_every_key() {
        let mut document = sample();
        fill_missing_keys(&mut document, &mut || "k".to_owned());
        strip_keys(&mut document);
        let json = serde_json::to_string(&document).unwrap();
        assert!(!json.contains("\"key\""), "{json}");
    }
}
