//! Finding every [`ContentRef`] of a document, wherever GitBook's schema puts one.
//!
//! References live in `data.ref` (links, mentions, buttons, images, files, drawings, content-ref,
//! reusable-content and OpenAPI blocks), `data.refDark` (images), `data.tags` (update blocks) and
//! in the records of table blocks (content-ref and image columns). `ref` and `refDark` are read
//! on every node, known or not, so future node types that follow the convention are covered.

use serde_json::Value;

use super::{ContentRef, Document, JsonMap, Node, walk_nodes, walk_nodes_mut};

/// Where a reference was found.
#[derive(Debug, Clone, Copy)]
pub struct RefSite<'a> {
    /// The node whose `data` holds the reference.
    pub node: &'a Node,
    /// Path of the reference inside `data`, e.g. `ref`, `tags/0`, `records/r1/values/c2`.
    pub field: &'a str,
}

/// Calls `visit` for every content reference of `document`, in document order.
pub fn for_each_ref(document: &Document, visit: &mut dyn FnMut(&ContentRef, RefSite<'_>)) {
    walk_nodes(&document.nodes, &mut |node| {
        node_refs(node, &mut |content_ref, field| {
            visit(content_ref, RefSite { node, field })
        });
    });
}

/// Calls `visit` with every content reference held by `node` itself (not its descendants) and
/// its path in `data`.
pub(crate) fn node_refs(node: &Node, visit: &mut dyn FnMut(&ContentRef, &str)) {
    let Some(data) = node.data.as_ref() else {
        return;
    };
    for_each_slot(node.node_type(), data, &mut |field, value| {
        if let Some(content_ref) = ContentRef::from_value(value) {
            visit(&content_ref, field);
        }
    });
}

/// Calls `visit` for every content reference of `document` and stores back the ones it changed.
pub fn for_each_ref_mut(document: &mut Document, visit: &mut dyn FnMut(&mut ContentRef)) {
    walk_nodes_mut(&mut document.nodes, &mut |node| {
        let node_type = node.node_type.clone().unwrap_or_default();
        let Some(data) = node.data.as_mut() else {
            return;
        };
        for_each_slot_mut(&node_type, data, &mut |value| {
            if let Some(original) = ContentRef::from_value(value) {
                let mut updated = original.clone();
                visit(&mut updated);
                if updated != original {
                    *value = updated.to_value();
                }
            }
        });
    });
}

fn for_each_slot(node_type: &str, data: &JsonMap, visit: &mut dyn FnMut(&str, &Value)) {
    for (key, value) in data {
        match key.as_str() {
            "ref" | "refDark" => visit(key, value),
            "tags" if node_type == "update" => {
                for (index, tag) in value.as_array().into_iter().flatten().enumerate() {
                    visit(&format!("tags/{index}"), tag);
                }
            }
            "records" if node_type == "table" => {
                for (record_id, record) in value.as_object().into_iter().flatten() {
                    let values = record.get("values").and_then(Value::as_object);
                    for (column, cell) in values.into_iter().flatten() {
                        let path = format!("records/{record_id}/values/{column}");
                        match cell.get("ref") {
                            Some(inner) if cell.get("kind").is_none() => visit(&format!("{path}/ref"), inner),
                            _ => visit(&path, cell),
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

fn for_each_slot_mut(node_type: &str, data: &mut JsonMap, visit: &mut dyn FnMut(&mut Value)) {
    for (key, value) in data.iter_mut() {
        match key.as_str() {
            "ref" | "refDark" => visit(value),
            "tags" if node_type == "update" => {
                value.as_array_mut().into_iter().flatten().for_each(&mut *visit);
            }
            "records" if node_type == "table" => {
                for record in value
                    .as_object_mut()
                    .into_iter()
                    .flat_map(|records| records.values_mut())
                {
                    let values = record.get_mut("values").and_then(Value::as_object_mut);
                    for cell in values.into_iter().flat_map(|values| values.values_mut()) {
                        if cell.get("kind").is_none() && cell.get("ref").is_some() {
                            if let Some(inner) = cell.get_mut("ref") {
                                visit(inner);
                            }
                        } else {
                            visit(cell);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> Document {
        serde_json::from_value(json!({
            "object": "document", "data": {}, "nodes": [
                {"object": "block", "type": "paragraph", "data": {}, "nodes": [
                    {"object": "inline", "type": "link", "key": "l1", "data": {"ref": {"kind": "url", "url": "a.md"}},
                     "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "a", "marks": []}]}]},
                    {"object": "inline", "type": "mention", "isVoid": true, "data": {"ref": {"kind": "user", "user": "u1"}}}
                ]},
                {"object": "block", "type": "images", "data": {}, "nodes": [
                    {"object": "block", "type": "image", "isVoid": true,
                     "data": {"ref": {"kind": "url", "url": "x.png"}, "refDark": {"kind": "file", "file": "f2"}},
                     "fragments": [{"object": "fragment", "fragment": "caption", "nodes": [
                        {"object": "block", "type": "paragraph", "data": {}, "nodes": [
                            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "p9"}}, "nodes": []}
                        ]}
                     ]}]}
                ]},
                {"object": "block", "type": "update", "data": {"date": "2024-01-01", "tags": [{"kind": "tag", "tag": "new"}]}, "nodes": []},
                {"object": "block", "type": "table", "isVoid": true, "data": {
                    "view": {"type": "grid", "columns": ["c1", "c2"], "hideHeader": false},
                    "definition": {},
                    "records": {"r1": {"orderIndex": "a0", "values": {
                        "c1": {"kind": "page", "page": "p3"},
                        "c2": {"ref": {"kind": "file", "file": "f3"}, "alt": "x"},
                        "c3": "fragment-name"
                    }}}
                }, "fragments": []}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn visits_every_reference_with_its_site() {
        let document = document();
        let mut seen = Vec::new();
        for_each_ref(&document, &mut |content_ref, site| {
            seen.push(format!(
                "{}:{}:{}",
                site.node.node_type(),
                site.field,
                content_ref.fallback_target()
            ));
        });
        assert_eq!(
            seen,
            [
                "link:ref:a.md",
                "mention:ref:u1",
                "image:ref:x.png",
                "image:refDark:f2",
                "link:ref:p9",
                "update:tags/0:new",
                "table:records/r1/values/c1:p3",
                "table:records/r1/values/c2/ref:f3",
            ]
        );
    }

    #[test]
    fn mutable_visit_rewrites_only_changed_references() {
        let mut document = document();
        for_each_ref_mut(&mut document, &mut |content_ref| {
            if let ContentRef::Url { url } = content_ref
                && url == "a.md"
            {
                *content_ref = ContentRef::page("pa");
            }
            if let ContentRef::File { file, .. } = content_ref {
                file.push('!');
            }
        });
        let json = serde_json::to_value(&document).unwrap();
        assert_eq!(
            json["nodes"][0]["nodes"][0]["data"]["ref"],
            json!({"kind": "page", "page": "pa"})
        );
        assert_eq!(
            json["nodes"][1]["nodes"][0]["data"]["ref"],
            json!({"kind": "url", "url": "x.png"})
        );
        assert_eq!(
            json["nodes"][1]["nodes"][0]["data"]["refDark"],
            json!({"kind": "file", "file": "f2!"})
        );
        let cell = &json["nodes"][3]["data"]["records"]["r1"]["values"]["c2"];
        assert_eq!(cell, &json!({"ref": {"kind": "file", "file": "f3!"}, "alt": "x"}));
    }
}
