//! The adaptive schema of a site: which claims its visitors carry, and of which types.
//!
//! The schema is a JSON Schema (draft-07) that GitBook restricts to one shape, and quire to a
//! subset of that shape (`docs/adaptive-content.md`, "The schema"):
//!
//! ```json
//! {
//!   "$schema": "http://json-schema.org/draft-07/schema#",
//!   "type": "object",
//!   "properties": {
//!     "isBetaUser": { "type": "boolean", "description": "In the beta program" },
//!     "plan": { "type": "string", "enum": ["free", "pro", "enterprise"] },
//!     "seats": { "type": "number" },
//!     "unsigned": {
//!       "type": "object",
//!       "description": "Unsigned claims of the site visitor.",
//!       "properties": { "persona": { "type": "string" } },
//!       "additionalProperties": false
//!     }
//!   },
//!   "additionalProperties": false
//! }
//! ```
//!
//! Every keyword is either understood or refused: a schema quire accepts means exactly what
//! its [`AdaptiveSchema`] says, nothing in it is silently ignored.

use std::fmt;

use serde_json::{Map, Value, json};

use crate::condition::ast::{Scope, is_identifier};
use crate::condition::lexer::shorten;
use crate::limits::{
    MAX_CLAIM_NAME_CHARS, MAX_CLAIMS, MAX_DESCRIPTION_CHARS, MAX_ENUM_VALUE_CHARS, MAX_ENUM_VALUES,
    MAX_SCHEMA_BYTES,
};

/// The draft-07 meta-schema's id, as GitBook writes it (its only accepted `$schema`); the same
/// URI without the empty fragment is accepted too.
pub const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";

/// GitBook's fixed description of the `unsigned` object, written when a schema gives none.
pub const UNSIGNED_DESCRIPTION: &str = "Unsigned claims of the site visitor.";

/// A validated adaptive schema: the signed claims and the unsigned claims, in schema order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AdaptiveSchema {
    claims: Vec<Claim>,
    unsigned: Vec<Claim>,
    has_unsigned: bool,
    unsigned_description: Option<String>,
    draft: Option<String>,
}

/// One claim of the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub name: String,
    pub kind: ClaimKind,
    pub description: Option<String>,
}

/// The type of a claim.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimKind {
    Boolean,
    String,
    Number,
    /// JSON Schema's `integer`: a number without a fraction.
    Integer,
    /// A string that is one of these values (`{"type": "string", "enum": [...]}`).
    Enum(Vec<String>),
}

impl ClaimKind {
    /// In words, with an article, for messages.
    pub fn describe(&self) -> &'static str {
        match self {
            ClaimKind::Boolean => "a boolean",
            ClaimKind::String => "a string",
            ClaimKind::Number => "a number",
            ClaimKind::Integer => "an integer",
            ClaimKind::Enum(_) => "an enum",
        }
    }
}

/// An adaptive schema refused: where (a JSON path from `jsonSchema`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// `jsonSchema.properties.plan.enum[2]`.
    pub path: String,
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for SchemaError {}

const KINDS: &str = "claims are boolean, string, number or enum";

fn error(path: &str, message: impl Into<String>) -> SchemaError {
    SchemaError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// `parent.name`, or `parent["name"]` when the name is not an identifier.
fn child(parent: &str, name: &str) -> String {
    if is_identifier(name) && name.len() <= MAX_CLAIM_NAME_CHARS {
        format!("{parent}.{name}")
    } else {
        format!("{parent}[{}]", Value::String(shorten(name)))
    }
}

/// Refuses any key outside `allowed`.
fn only_keys(map: &Map<String, Value>, path: &str, allowed: &[&str], what: &str) -> Result<(), SchemaError> {
    match map.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(error(&child(path, key), format!("unsupported keyword; {what}"))),
        None => Ok(()),
    }
}

fn chars_at_most(text: &str, max: usize) -> bool {
    text.len() <= max || text.chars().count() <= max
}

fn description(map: &Map<String, Value>, path: &str) -> Result<Option<String>, SchemaError> {
    let path = format!("{path}.description");
    match map.get("description") {
        // An empty description is none: that is how one without is written back (`to_json`).
        None => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Ok(None),
        Some(Value::String(text)) if chars_at_most(text, MAX_DESCRIPTION_CHARS) => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(error(
            &path,
            format!("longer than {MAX_DESCRIPTION_CHARS} characters (MAX_DESCRIPTION_CHARS)"),
        )),
        Some(_) => Err(error(&path, "a description is a string")),
    }
}

/// `additionalProperties`, which GitBook requires and allows only as `false`: a visitor's
/// claims not in the schema are not claims.
fn no_additional_properties(map: &Map<String, Value>, path: &str) -> Result<(), SchemaError> {
    match map.get("additionalProperties") {
        Some(Value::Bool(false)) => Ok(()),
        None => Err(error(
            path,
            "additionalProperties is required, and false (claims outside the schema are not allowed)",
        )),
        Some(_) => Err(error(
            &format!("{path}.additionalProperties"),
            "must be false: claims outside the schema are not allowed",
        )),
    }
}

fn object_type(map: &Map<String, Value>, path: &str) -> Result<(), SchemaError> {
    match map.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        None => Err(error(path, "type is required, and \"object\"")),
        Some(_) => Err(error(&format!("{path}.type"), "must be \"object\"")),
    }
}

impl AdaptiveSchema {
    /// Validates the `jsonSchema` of a site's adaptive schema.
    pub fn parse(json: &Value) -> Result<AdaptiveSchema, SchemaError> {
        let root = "jsonSchema";
        let Value::Object(map) = json else {
            return Err(error(root, "an adaptive schema is a JSON object"));
        };
        only_keys(
            map,
            root,
            &["$schema", "type", "properties", "additionalProperties"],
            "an adaptive schema has $schema, type, properties and additionalProperties",
        )?;
        let draft = match map.get("$schema") {
            None => None,
            Some(Value::String(uri))
                if uri == DRAFT_07 || Some(uri.as_str()) == DRAFT_07.strip_suffix('#') =>
            {
                Some(uri.clone())
            }
            Some(_) => {
                return Err(error(
                    &format!("{root}.$schema"),
                    format!("an adaptive schema is JSON Schema draft-07: \"{DRAFT_07}\""),
                ));
            }
        };
        object_type(map, root)?;
        let properties_path = format!("{root}.properties");
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            None => return Err(error(root, "properties is required (an object of claims)")),
            Some(_) => return Err(error(&properties_path, "an object of claims")),
        };
        let mut schema = AdaptiveSchema {
            draft,
            ..AdaptiveSchema::default()
        };
        // Counted before anything is read, so a huge object costs nothing more.
        let unsigned_count = match properties.get("unsigned") {
            Some(Value::Object(unsigned)) => unsigned
                .get("properties")
                .and_then(Value::as_object)
                .map_or(0, Map::len),
            _ => 0,
        };
        let count = properties.len() - usize::from(properties.contains_key("unsigned")) + unsigned_count;
        if count > MAX_CLAIMS {
            return Err(error(
                &properties_path,
                format!("{count} claims, over the limit MAX_CLAIMS = {MAX_CLAIMS} (signed and unsigned)"),
            ));
        }
        for (name, value) in properties {
            let path = child(&properties_path, name);
            if name == "unsigned" {
                schema.read_unsigned(value, &path)?;
            } else {
                schema.claims.push(claim(name, value, &path)?);
            }
        }
        // After the claims, so that a schema with both problems is refused for its claims.
        no_additional_properties(map, root)?;
        // Measured once the shape is known to be shallow and bounded by the counts above.
        let bytes = json.to_string().len();
        if bytes > MAX_SCHEMA_BYTES {
            return Err(error(
                root,
                format!("{bytes} bytes of JSON, over the limit MAX_SCHEMA_BYTES = {MAX_SCHEMA_BYTES}"),
            ));
        }
        Ok(schema)
    }

    fn read_unsigned(&mut self, value: &Value, path: &str) -> Result<(), SchemaError> {
        let Value::Object(map) = value else {
            return Err(error(
                path,
                "the unsigned claims are an object schema; \"unsigned\" is not a claim name",
            ));
        };
        if map.get("type").is_some_and(|t| t != "object") {
            return Err(error(
                &format!("{path}.type"),
                "the unsigned claims are an object schema (type \"object\"); \"unsigned\" is not a claim name",
            ));
        }
        only_keys(
            map,
            path,
            &["type", "description", "properties", "additionalProperties"],
            "the unsigned object has type, description, properties and additionalProperties",
        )?;
        object_type(map, path)?;
        self.unsigned_description = description(map, path)?;
        let properties_path = format!("{path}.properties");
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            None => {
                return Err(error(
                    path,
                    "properties is required (an object of unsigned claims)",
                ));
            }
            Some(_) => return Err(error(&properties_path, "an object of unsigned claims")),
        };
        self.has_unsigned = true;
        for (name, value) in properties {
            self.unsigned
                .push(claim(name, value, &child(&properties_path, name))?);
        }
        no_additional_properties(map, path)
    }

    /// The signed claims, in schema order.
    pub fn claims(&self) -> &[Claim] {
        &self.claims
    }

    /// The unsigned claims, in schema order.
    pub fn unsigned_claims(&self) -> &[Claim] {
        &self.unsigned
    }

    /// The claims of one scope.
    pub fn scope(&self, scope: Scope) -> &[Claim] {
        match scope {
            Scope::Signed => &self.claims,
            Scope::Unsigned => &self.unsigned,
        }
    }

    /// The claim `name` of `scope`, if the schema has it.
    pub fn claim(&self, scope: Scope, name: &str) -> Option<&Claim> {
        self.scope(scope).iter().find(|claim| claim.name == name)
    }

    /// The schema as JSON, in the shape GitBook answers: `additionalProperties: false`
    /// written, the unsigned object's description GitBook's when none was given, a claim's
    /// empty when it has none.
    pub fn to_json(&self) -> Value {
        let claims = |claims: &[Claim]| -> Map<String, Value> {
            claims
                .iter()
                .map(|claim| (claim.name.clone(), claim.to_json()))
                .collect()
        };
        let mut properties = claims(&self.claims);
        if self.has_unsigned {
            properties.insert(
                "unsigned".to_owned(),
                json!({
                    "type": "object",
                    "description": self.unsigned_description.as_deref().unwrap_or(UNSIGNED_DESCRIPTION),
                    "properties": claims(&self.unsigned),
                    "additionalProperties": false,
                }),
            );
        }
        let mut map = Map::new();
        if let Some(draft) = &self.draft {
            map.insert("$schema".to_owned(), Value::String(draft.clone()));
        }
        map.insert("type".to_owned(), Value::String("object".to_owned()));
        map.insert("properties".to_owned(), Value::Object(properties));
        map.insert("additionalProperties".to_owned(), Value::Bool(false));
        Value::Object(map)
    }
}

impl Claim {
    fn to_json(&self) -> Value {
        let mut map = Map::new();
        let kind = match &self.kind {
            ClaimKind::Boolean => "boolean",
            ClaimKind::String | ClaimKind::Enum(_) => "string",
            ClaimKind::Number => "number",
            ClaimKind::Integer => "integer",
        };
        map.insert("type".to_owned(), Value::String(kind.to_owned()));
        if let ClaimKind::Enum(values) = &self.kind {
            map.insert(
                "enum".to_owned(),
                values.iter().cloned().map(Value::String).collect(),
            );
        }
        // GitBook's shape requires a description of every claim; one given none has an empty one.
        let description = self.description.clone().unwrap_or_default();
        map.insert("description".to_owned(), Value::String(description));
        Value::Object(map)
    }
}

/// One claim's schema.
fn claim(name: &str, value: &Value, path: &str) -> Result<Claim, SchemaError> {
    if !is_identifier(name) || name.len() > MAX_CLAIM_NAME_CHARS {
        return Err(error(
            path,
            format!(
                "a claim name is letters, digits and underscores, not starting with a digit, \
                 at most {MAX_CLAIM_NAME_CHARS} characters (MAX_CLAIM_NAME_CHARS)"
            ),
        ));
    }
    let Value::Object(map) = value else {
        return Err(error(
            path,
            "a claim is a schema object such as {\"type\": \"boolean\"}",
        ));
    };
    let type_path = format!("{path}.type");
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        None if map.contains_key("enum") => {
            return Err(error(path, "an enum claim has type \"string\""));
        }
        None => return Err(error(path, format!("type is required; {KINDS}"))),
        Some(Value::Array(_)) => {
            return Err(error(
                &type_path,
                format!(
                    "one type, as a string (lists such as [\"string\", \"null\"] are not supported); {KINDS}"
                ),
            ));
        }
        Some(_) => return Err(error(&type_path, format!("a type is a string; {KINDS}"))),
    };
    let kind = match kind {
        "boolean" => ClaimKind::Boolean,
        "string" => ClaimKind::String,
        "number" => ClaimKind::Number,
        "integer" => ClaimKind::Integer,
        "object" => return Err(error(path, format!("an object claim is not supported; {KINDS}"))),
        "array" => return Err(error(path, format!("an array claim is not supported; {KINDS}"))),
        "null" => return Err(error(path, format!("a null claim is not supported; {KINDS}"))),
        other => {
            return Err(error(
                &type_path,
                format!("\"{}\" is not a JSON Schema type; {KINDS}", shorten(other)),
            ));
        }
    };
    only_keys(
        map,
        path,
        &["type", "description", "enum"],
        "a claim has type, description and (for a string) enum",
    )?;
    let kind = match map.get("enum") {
        None => kind,
        Some(values) if kind == ClaimKind::String => {
            ClaimKind::Enum(enum_values(values, &format!("{path}.enum"))?)
        }
        Some(_) => {
            return Err(error(
                &format!("{path}.enum"),
                "only a string claim has an enum (enums of numbers or booleans are not supported)",
            ));
        }
    };
    Ok(Claim {
        name: name.to_owned(),
        kind,
        description: description(map, path)?,
    })
}

fn enum_values(values: &Value, path: &str) -> Result<Vec<String>, SchemaError> {
    let Value::Array(values) = values else {
        return Err(error(path, "an enum is a list of strings"));
    };
    if values.is_empty() {
        return Err(error(path, "an enum has at least one value"));
    }
    if values.len() > MAX_ENUM_VALUES {
        return Err(error(
            path,
            format!(
                "{} values, over the limit MAX_ENUM_VALUES = {MAX_ENUM_VALUES}",
                values.len()
            ),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(values.len());
    for (i, value) in values.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let Value::String(value) = value else {
            return Err(error(&path, "an enum value is a string"));
        };
        if !chars_at_most(value, MAX_ENUM_VALUE_CHARS) {
            return Err(error(
                &path,
                format!("longer than {MAX_ENUM_VALUE_CHARS} characters (MAX_ENUM_VALUE_CHARS)"),
            ));
        }
        // At most MAX_ENUM_VALUES squared comparisons of short strings.
        if out.contains(value) {
            return Err(error(
                &path,
                format!("{} is already a value of the enum", Value::String(shorten(value))),
            ));
        }
        out.push(value.clone());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn wrap(properties: Value) -> Value {
        json!({"type": "object", "properties": properties, "additionalProperties": false})
    }

    #[track_caller]
    fn refused(json: Value) -> String {
        AdaptiveSchema::parse(&json).unwrap_err().to_string()
    }

    #[test]
    fn every_kind_of_claim_in_schema_order() {
        let schema = AdaptiveSchema::parse(&json!({
            "$schema": DRAFT_07,
            "type": "object",
            "properties": {
                "isBetaUser": {"type": "boolean", "description": "In the beta program"},
                "plan": {"type": "string", "enum": ["free", "pro"]},
                "unsigned": {
                    "type": "object",
                    "description": "Unsigned claims of the site visitor.",
                    "properties": {"persona": {"type": "string"}, "unsigned": {"type": "boolean"}},
                    "additionalProperties": false
                },
                "seats": {"type": "integer"},
                "score": {"type": "number"},
                "name": {"type": "string"}
            },
            "additionalProperties": false
        }))
        .unwrap();
        let names: Vec<&str> = schema.claims().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["isBetaUser", "plan", "seats", "score", "name"]);
        assert_eq!(
            schema.claims()[0].description.as_deref(),
            Some("In the beta program")
        );
        assert_eq!(
            schema.claims()[1].kind,
            ClaimKind::Enum(vec!["free".into(), "pro".into()])
        );
        assert_eq!(schema.claims()[2].kind, ClaimKind::Integer);
        assert_eq!(schema.claims()[3].kind, ClaimKind::Number);
        assert_eq!(schema.claims()[4].kind, ClaimKind::String);
        let unsigned: Vec<&str> = schema.unsigned_claims().iter().map(|c| c.name.as_str()).collect();
        assert_eq!(unsigned, ["persona", "unsigned"]);
        assert!(schema.claim(Scope::Unsigned, "persona").is_some());
        assert!(schema.claim(Scope::Signed, "persona").is_none());
    }

    #[test]
    fn the_canonical_json_reads_back_as_the_same_schema() {
        let given = json!({
            "type": "object",
            "properties": {
                "plan": {"enum": ["a"], "type": "string"},
                "unsigned": {"type": "object", "properties": {"b": {"type": "boolean"}}, "additionalProperties": false}
            },
            "additionalProperties": false
        });
        let schema = AdaptiveSchema::parse(&given).unwrap();
        let canonical = schema.to_json();
        assert_eq!(
            canonical,
            json!({
                "type": "object",
                "properties": {
                    "plan": {"type": "string", "enum": ["a"], "description": ""},
                    "unsigned": {
                        "type": "object",
                        "description": UNSIGNED_DESCRIPTION,
                        "properties": {"b": {"type": "boolean", "description": ""}},
                        "additionalProperties": false
                    }
                },
                "additionalProperties": false
            })
        );
        assert_eq!(AdaptiveSchema::parse(&canonical).unwrap().to_json(), canonical);
        assert_eq!(
            AdaptiveSchema::parse(&wrap(json!({}))).unwrap(),
            AdaptiveSchema::default()
        );
    }

    #[test]
    fn object_and_array_claims_are_refused() {
        assert_eq!(
            refused(wrap(json!({"plan": {"type": "object", "properties": {}}}))),
            "jsonSchema.properties.plan: an object claim is not supported; claims are boolean, string, number or enum"
        );
        assert_eq!(
            refused(wrap(
                json!({"tags": {"type": "array", "items": {"type": "string"}}})
            )),
            "jsonSchema.properties.tags: an array claim is not supported; claims are boolean, string, number or enum"
        );
        assert_eq!(
            refused(wrap(json!({"unsigned": {"type": "object", "properties": {
                "bucket": {"type": "object", "properties": {}, "additionalProperties": false}
            }, "additionalProperties": false}}))),
            "jsonSchema.properties.unsigned.properties.bucket: an object claim is not supported; claims are boolean, string, number or enum"
        );
        // Refused for its claim even when additionalProperties is missing too.
        assert_eq!(
            refused(json!({"type": "object", "properties": {"plan": {"type": "object"}}})),
            "jsonSchema.properties.plan: an object claim is not supported; claims are boolean, string, number or enum"
        );
    }

    #[test]
    fn the_root_has_its_four_keywords() {
        assert_eq!(
            refused(json!([])),
            "jsonSchema: an adaptive schema is a JSON object"
        );
        assert_eq!(
            refused(
                json!({"type": "object", "properties": {}, "additionalProperties": false, "required": ["a"]})
            ),
            "jsonSchema.required: unsupported keyword; an adaptive schema has $schema, type, properties and additionalProperties"
        );
        assert_eq!(
            refused(json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"})),
            "jsonSchema.$schema: an adaptive schema is JSON Schema draft-07: \"http://json-schema.org/draft-07/schema#\""
        );
        let mut without_fragment = wrap(json!({}));
        without_fragment["$schema"] = json!("http://json-schema.org/draft-07/schema");
        assert!(AdaptiveSchema::parse(&without_fragment).is_ok());
        assert_eq!(
            refused(json!({"properties": {}})),
            "jsonSchema: type is required, and \"object\""
        );
        assert_eq!(
            refused(json!({"type": "string"})),
            "jsonSchema.type: must be \"object\""
        );
        assert_eq!(
            refused(json!({"type": "object"})),
            "jsonSchema: properties is required (an object of claims)"
        );
        assert_eq!(
            refused(json!({"type": "object", "properties": []})),
            "jsonSchema.properties: an object of claims"
        );
        assert_eq!(
            refused(json!({"type": "object", "properties": {}})),
            "jsonSchema: additionalProperties is required, and false (claims outside the schema are not allowed)"
        );
        assert_eq!(
            refused(json!({"type": "object", "properties": {}, "additionalProperties": true})),
            "jsonSchema.additionalProperties: must be false: claims outside the schema are not allowed"
        );
    }

    #[test]
    fn claims_have_a_type_a_description_and_maybe_an_enum() {
        for (claim, message) in [
            (
                json!(true),
                "jsonSchema.properties.c: a claim is a schema object such as {\"type\": \"boolean\"}",
            ),
            (
                json!({}),
                "jsonSchema.properties.c: type is required; claims are boolean, string, number or enum",
            ),
            (
                json!({"enum": ["a"]}),
                "jsonSchema.properties.c: an enum claim has type \"string\"",
            ),
            (
                json!({"type": ["string", "null"]}),
                "jsonSchema.properties.c.type: one type, as a string (lists such as [\"string\", \"null\"] are not supported); claims are boolean, string, number or enum",
            ),
            (
                json!({"type": 1}),
                "jsonSchema.properties.c.type: a type is a string; claims are boolean, string, number or enum",
            ),
            (
                json!({"type": "date"}),
                "jsonSchema.properties.c.type: \"date\" is not a JSON Schema type; claims are boolean, string, number or enum",
            ),
            (
                json!({"type": "null"}),
                "jsonSchema.properties.c: a null claim is not supported; claims are boolean, string, number or enum",
            ),
            (
                json!({"type": "number", "minimum": 0}),
                "jsonSchema.properties.c.minimum: unsupported keyword; a claim has type, description and (for a string) enum",
            ),
            (
                json!({"type": "number", "enum": [1, 2]}),
                "jsonSchema.properties.c.enum: only a string claim has an enum (enums of numbers or booleans are not supported)",
            ),
            (
                json!({"type": "string", "enum": "a"}),
                "jsonSchema.properties.c.enum: an enum is a list of strings",
            ),
            (
                json!({"type": "string", "enum": []}),
                "jsonSchema.properties.c.enum: an enum has at least one value",
            ),
            (
                json!({"type": "string", "enum": ["a", 2]}),
                "jsonSchema.properties.c.enum[1]: an enum value is a string",
            ),
            (
                json!({"type": "string", "enum": ["a", "b", "a"]}),
                "jsonSchema.properties.c.enum[2]: \"a\" is already a value of the enum",
            ),
            (
                json!({"type": "boolean", "description": 3}),
                "jsonSchema.properties.c.description: a description is a string",
            ),
        ] {
            assert_eq!(refused(wrap(json!({"c": claim}))), message);
        }
    }

    #[test]
    fn claim_names_are_identifiers() {
        for name in ["1st", "with space", "dash-ed", "", "é"] {
            let message = refused(wrap(json!({name: {"type": "boolean"}})));
            assert!(
                message.contains("a claim name is letters, digits and underscores"),
                "{message}"
            );
        }
        assert_eq!(
            refused(wrap(json!({"a b": {"type": "boolean"}}))),
            format!(
                "jsonSchema.properties[\"a b\"]: a claim name is letters, digits and underscores, not \
                 starting with a digit, at most {MAX_CLAIM_NAME_CHARS} characters (MAX_CLAIM_NAME_CHARS)"
            )
        );
        let long = "a".repeat(MAX_CLAIM_NAME_CHARS + 1);
        assert!(refused(wrap(json!({long: {"type": "boolean"}}))).contains("MAX_CLAIM_NAME_CHARS"));
        let at_limit = "a".repeat(MAX_CLAIM_NAME_CHARS);
        assert!(AdaptiveSchema::parse(&wrap(json!({at_limit: {"type": "boolean"}}))).is_ok());
    }

    #[test]
    fn the_unsigned_object() {
        for (unsigned, message) in [
            (
                json!({"type": "boolean"}),
                "jsonSchema.properties.unsigned.type: the unsigned claims are an object schema (type \"object\"); \"unsigned\" is not a claim name",
            ),
            (
                json!("x"),
                "jsonSchema.properties.unsigned: the unsigned claims are an object schema; \"unsigned\" is not a claim name",
            ),
            (
                json!({"type": "object", "properties": {}, "additionalProperties": false, "title": "x"}),
                "jsonSchema.properties.unsigned.title: unsupported keyword; the unsigned object has type, description, properties and additionalProperties",
            ),
            (
                json!({"type": "object", "additionalProperties": false}),
                "jsonSchema.properties.unsigned: properties is required (an object of unsigned claims)",
            ),
            (
                json!({"type": "object", "properties": {}}),
                "jsonSchema.properties.unsigned: additionalProperties is required, and false (claims outside the schema are not allowed)",
            ),
            (
                json!({"properties": {}, "additionalProperties": false}),
                "jsonSchema.properties.unsigned: type is required, and \"object\"",
            ),
            (
                json!({"type": "object", "properties": {"x": {"type": "integer", "format": "int32"}}, "additionalProperties": false}),
                "jsonSchema.properties.unsigned.properties.x.format: unsupported keyword; a claim has type, description and (for a string) enum",
            ),
        ] {
            assert_eq!(refused(wrap(json!({"unsigned": unsigned}))), message);
        }
    }

    #[test]
    fn limits_are_named() {
        let many: Map<String, Value> = (0..=MAX_CLAIMS)
            .map(|i| (format!("c{i}"), json!({"type": "boolean"})))
            .collect();
        assert_eq!(
            refused(wrap(Value::Object(many))),
            format!(
                "jsonSchema.properties: {} claims, over the limit MAX_CLAIMS = {MAX_CLAIMS} (signed and unsigned)",
                MAX_CLAIMS + 1
            )
        );
        // Signed and unsigned together.
        let half: Map<String, Value> = (0..MAX_CLAIMS / 2 + 1)
            .map(|i| (format!("c{i}"), json!({"type": "boolean"})))
            .collect();
        let mut properties = half.clone();
        properties.insert(
            "unsigned".into(),
            json!({"type": "object", "properties": half, "additionalProperties": false}),
        );
        assert!(refused(wrap(Value::Object(properties))).contains("MAX_CLAIMS"));
        let values: Vec<String> = (0..=MAX_ENUM_VALUES).map(|i| format!("v{i}")).collect();
        assert!(refused(wrap(json!({"c": {"type": "string", "enum": values}}))).contains("MAX_ENUM_VALUES"));
        let long = "é".repeat(MAX_ENUM_VALUE_CHARS + 1);
        assert_eq!(
            refused(wrap(json!({"c": {"type": "string", "enum": ["a", long]}}))),
            format!(
                "jsonSchema.properties.c.enum[1]: longer than {MAX_ENUM_VALUE_CHARS} characters (MAX_ENUM_VALUE_CHARS)"
            )
        );
        let at_limit = "é".repeat(MAX_ENUM_VALUE_CHARS);
        assert!(AdaptiveSchema::parse(&wrap(json!({"c": {"type": "string", "enum": [at_limit]}}))).is_ok());
        let long = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
        assert!(
            refused(wrap(json!({"c": {"type": "boolean", "description": long}})))
                .contains("MAX_DESCRIPTION_CHARS")
        );
        // 100 claims of 100 values of 100 characters is far over the size.
        let values: Vec<String> = (0..MAX_ENUM_VALUES).map(|i| format!("{i:0>100}")).collect();
        let big: Map<String, Value> = (0..10)
            .map(|i| (format!("c{i}"), json!({"type": "string", "enum": values})))
            .collect();
        let message = refused(wrap(Value::Object(big)));
        assert!(
            message.starts_with("jsonSchema: ") && message.contains("MAX_SCHEMA_BYTES"),
            "{message}"
        );
    }
}
