//! Outgoing references of a document, for the link and backlink indexes of a revision.

use serde_json::Value;

use crate::document::{ContentRef, Document, node_refs, walk_nodes};

/// One outgoing reference and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLink {
    /// What is referenced.
    pub target: ContentRef,
    /// Key of the node holding the reference (absent when the node has none).
    pub node_key: Option<String>,
    /// Type of that node (`link`, `image`, `file`, `content-ref`, `table`, ...).
    pub node_type: String,
    /// Path of the reference in the node's `data` (`ref`, `refDark`, `records/r1/values/c2`).
    pub field: String,
}

/// Every outgoing reference of `document`, in document order: links, mentions, buttons, images
/// (and their dark variants), files, drawings, content-ref, reusable-content and OpenAPI
/// blocks, update tags, references in table records, and the files of table `files` columns
/// (as `file` references). Embeds are included as `url` references to their URL.
pub fn extract_links(document: &Document) -> Vec<DocumentLink> {
    let mut links = Vec::new();
    walk_nodes(&document.nodes, &mut |node| {
        let link = |target: ContentRef, field: String| DocumentLink {
            target,
            node_key: node.key.clone(),
            node_type: node.node_type().to_owned(),
            field,
        };
        node_refs(node, &mut |target, field| {
            links.push(link(target.clone(), field.to_owned()))
        });
        match node.node_type() {
            "embed" => {
                if let Some(url) = node.data_str("url") {
                    links.push(link(ContentRef::url(url), "url".to_owned()));
                }
            }
            "table" => {
                let definition = node.data_value("definition").and_then(Value::as_object);
                let records = node.data_value("records").and_then(Value::as_object);
                for (record_id, record) in records.into_iter().flatten() {
                    let values = record.get("values").and_then(Value::as_object);
                    for (column, value) in values.into_iter().flatten() {
                        let column_type = definition
                            .and_then(|definition| definition.get(column))
                            .and_then(|column| column.get("type"))
                            .and_then(Value::as_str);
                        if column_type != Some("files") {
                            continue;
                        }
                        for (index, file) in value.as_array().into_iter().flatten().enumerate() {
                            if let Some(file) = file.as_str() {
                                links.push(link(
                                    ContentRef::file(file),
                                    format!("records/{record_id}/values/{column}/{index}"),
                                ));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    });
    links
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::markdown_to_document;
    use serde_json::json;

    #[test]
    fn extracts_links_images_files_and_embeds() {
        let document = markdown_to_document(
            "See [guide](guide.md) and ![logo](logo.png).\n\n{% file src=\"a.pdf\" %}\n\n{% embed url=\"https://youtu.be/x\" %}\n\n{% content-ref url=\"next.md\" %}\n[next.md](next.md)\n{% endcontent-ref %}\n",
        )
        .unwrap();
        let found: Vec<(String, String, String)> = extract_links(&document)
            .into_iter()
            .map(|link| (link.node_type, link.field, link.target.fallback_target()))
            .collect();
        let expected = [
            ("link", "ref", "guide.md"),
            ("inline-image", "ref", "logo.png"),
            ("file", "ref", "a.pdf"),
            ("embed", "url", "https://youtu.be/x"),
            ("content-ref", "ref", "next.md"),
        ];
        let expected: Vec<(String, String, String)> = expected
            .iter()
            .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn table_file_columns_are_file_links() {
        let document: Document = serde_json::from_value(json!({"object": "document", "data": {}, "nodes": [
            {"object": "block", "type": "table", "key": "t", "isVoid": true, "data": {
                "view": {"type": "grid", "columns": ["f"], "hideHeader": false},
                "definition": {"f": {"id": "f", "title": "Files", "type": "files"}},
                "records": {"r": {"orderIndex": "a0", "values": {"f": ["file1", "file2"]}}}
            }, "fragments": []}
        ]}))
        .unwrap();
        let links = extract_links(&document);
        assert_eq!(links.len(), 2);
        assert_eq!(links[1].target, ContentRef::file("file2"));
        assert_eq!(links[1].node_key.as_deref(), Some("t"));
        assert_eq!(links[1].field, "records/r/values/f/1");
    }
}
