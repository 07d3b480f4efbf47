//! Rich documents in fields such as change request descriptions and agent instructions.

use crate::error::StoreError;

/// `{object: "document", data: {}, nodes: []}`.
pub fn empty_document() -> serde_json::Value {
    serde_json::json!({ "object": "document", "data": {}, "nodes": [] })
}

/// Checks that a client-supplied value is a rich document and returns it.
pub fn validate(field: &str, value: serde_json::Value) -> Result<serde_json::Value, StoreError> {
    let ok = value.get("object").and_then(|o| o.as_str()) == Some("document")
        && value.get("nodes").is_some_and(serde_json::Value::is_array)
        && value.get("data").is_none_or(serde_json::Value::is_object);
    if !ok {
        return Err(StoreError::invalid(format!(
            "`{field}` must be a document: {{\"object\": \"document\", \"data\": {{}}, \"nodes\": [...]}}"
        )));
    }
    Ok(value)
}
