//! Splitting a document into search sections at its headings.

use std::collections::HashSet;

use crate::document::{Document, Node};
use crate::slug::slugify;
use crate::text::{blocks_text, plain_text_of_nodes};

/// A part of a page: a heading and the blocks up to the next heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading's anchor: its `data.id` when set, else the slug of its text, made unique in
    /// the page with `-1`, `-2`, ... suffixes. Empty for the part before the first heading.
    pub anchor: String,
    /// The heading's text; empty for the part before the first heading.
    pub title: String,
    /// Plain text of the section's blocks, heading excluded.
    pub body: String,
}

/// Splits a document at its top-level headings (`heading-1` to `heading-3`; headings nested in
/// hints or tabs stay part of their section's text). The part before the first heading is
/// returned only when it has text.
pub fn sections(document: &Document) -> Vec<Section> {
    let mut sections = Vec::new();
    let mut used = HashSet::new();
    let mut current = Section {
        anchor: String::new(),
        title: String::new(),
        body: String::new(),
    };
    let mut body: Vec<&Node> = Vec::new();
    for node in &document.nodes {
        if !is_heading(node) {
            body.push(node);
            continue;
        }
        current.body = body_text(&body);
        if !current.title.is_empty() || !current.anchor.is_empty() || !current.body.is_empty() {
            sections.push(current);
        }
        body.clear();
        let title = plain_text_of_nodes(node.children()).trim().to_owned();
        let anchor = match node.data_str("id").filter(|id| !id.is_empty()) {
            Some(id) => {
                used.insert(id.to_owned());
                id.to_owned()
            }
            None => unique_anchor(&slugify(&title), &mut used),
        };
        current = Section {
            anchor,
            title,
            body: String::new(),
        };
    }
    current.body = body_text(&body);
    if !current.title.is_empty() || !current.anchor.is_empty() || !current.body.is_empty() {
        sections.push(current);
    }
    sections
}

/// The anchors of the document's top-level headings, in order: the same anchors as
/// [`sections`] gives them, so that a search hit's section and the reader's heading agree.
pub fn heading_anchors(document: &Document) -> Vec<String> {
    let mut used = HashSet::new();
    document
        .nodes
        .iter()
        .filter(|node| is_heading(node))
        .map(|node| match node.data_str("id").filter(|id| !id.is_empty()) {
            Some(id) => {
                used.insert(id.to_owned());
                id.to_owned()
            }
            None => unique_anchor(&slugify(plain_text_of_nodes(node.children()).trim()), &mut used),
        })
        .collect()
}

/// Sets GitBook's `meta.id` on each top-level heading that has none, to its anchor
/// ([`heading_anchors`]): GitBook's documents carry it, and its renderer outlines a page and
/// links its headings by it.
pub fn with_heading_ids(document: &mut Document) {
    let anchors = heading_anchors(document);
    let headings = document.nodes.iter_mut().filter(|node| is_heading(node));
    for (node, anchor) in headings.zip(anchors) {
        let meta = node
            .extra
            .entry("meta")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(meta) = meta {
            meta.entry("id").or_insert(serde_json::Value::String(anchor));
        }
    }
}

fn is_heading(node: &Node) -> bool {
    matches!(node.node_type(), "heading-1" | "heading-2" | "heading-3")
}

fn body_text(blocks: &[&Node]) -> String {
    blocks_text(blocks.iter().copied())
}

fn unique_anchor(base: &str, used: &mut HashSet<String>) -> String {
    let mut anchor = base.to_owned();
    let mut suffix = 0;
    while used.contains(&anchor) {
        suffix += 1;
        anchor = format!("{base}-{suffix}");
    }
    used.insert(anchor.clone());
    anchor
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::markdown_to_document;

    #[test]
    fn headings_get_their_anchor_as_meta_id_unless_they_have_one() {
        let mut document = markdown_to_document("# Setup\n\nText.\n\n## Setup\n\n### Last\n").unwrap();
        document.nodes[2]
            .extra
            .insert("meta".into(), serde_json::json!({"id": "mine", "other": 1}));
        with_heading_ids(&mut document);
        let ids: Vec<serde_json::Value> = document
            .nodes
            .iter()
            .map(|n| n.extra.get("meta").cloned().unwrap_or_default())
            .collect();
        assert_eq!(
            ids,
            [
                serde_json::json!({"id": "setup"}),
                serde_json::Value::Null,
                serde_json::json!({"id": "mine", "other": 1}),
                serde_json::json!({"id": "last"}),
            ]
        );
    }

    #[test]
    fn splits_at_headings_with_unique_anchors() {
        let document = markdown_to_document(
            "Intro text.\n\n# Setup\n\nInstall it.\n\nThen run.\n\n## Setup\n\nAgain.\n\n### Setup\n\n## Custom <a href=\"#own\" id=\"own\"></a>\n\nMine.\n\n# Ünïcode title!\n",
        )
        .unwrap();
        let expected = [
            ("", "", "Intro text."),
            ("setup", "Setup", "Install it.\nThen run."),
            ("setup-1", "Setup", "Again."),
            ("setup-2", "Setup", ""),
            ("own", "Custom", "Mine."),
            ("unicode-title", "Ünïcode title!", ""),
        ];
        let owned: Vec<(String, String, String)> = sections(&document)
            .into_iter()
            .map(|section| (section.anchor, section.title, section.body))
            .collect();
        assert_eq!(owned.len(), expected.len());
        for (got, want) in owned.iter().zip(expected) {
            assert_eq!((got.0.as_str(), got.1.as_str(), got.2.as_str()), want);
        }
    }

    #[test]
    fn heading_anchors_are_the_anchors_of_sections() {
        let document = markdown_to_document(
            "Intro.\n\n# A\n\n## A\n\n## Own <a href=\"#a-1\" id=\"a-1\"></a>\n\n### A\n\n# !!!\n",
        )
        .unwrap();
        let from_sections: Vec<String> = sections(&document)
            .into_iter()
            .map(|section| section.anchor)
            .filter(|anchor| !anchor.is_empty())
            .collect();
        assert_eq!(heading_anchors(&document), from_sections);
        assert_eq!(heading_anchors(&document), ["a", "a-1", "a-1", "a-2", "untitled"]);
    }

    #[test]
    fn a_document_starting_with_a_heading_has_no_empty_first_section() {
        let document = markdown_to_document("# Only\n").unwrap();
        assert_eq!(
            sections(&document),
            [Section {
                anchor: "only".into(),
                title: "Only".into(),
                body: String::new()
            }]
        );
        assert!(sections(&markdown_to_document("").unwrap()).is_empty());
    }
}
