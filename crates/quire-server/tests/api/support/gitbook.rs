//! GitBook's own description of its API (npm `@gitbook/api`, unpacked by `bash .ci/gitbook-api`)
//! as the judge of every JSON answer the API tests receive: a client written for GitBook reads
//! quire's answers with GitBook's types, so an answer its schema refuses is a bug even when
//! quire's own document (generated from the same code) agrees with it.
//!
//! The answer of an operation GitBook describes is validated against GitBook's schema for that
//! operation and status; a failure names the operation, the JSON pointer and the rule. Where
//! quire deliberately differs, `docs/gitbook-deviations.md` lists the operation, where in its
//! answer, and why.
//!
//! Without the description the check is skipped with a message, unless
//! `QUIRE_TEST_GITBOOK=required` (`.ci/run` sets it; then it fails). `QUIRE_GITBOOK_REPORT=<file>` appends each
//! refusal to the file as a JSON line instead of failing: a survey of everything at once.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

/// The version `.ci/gitbook-api` unpacks.
const SPEC_PATH: &str = "target/gitbook-api/package/spec/openapi.json";
const DEVIATIONS_PATH: &str = "docs/gitbook-deviations.md";
/// Refusals shown per answer: the first few say what is wrong.
const SHOWN: usize = 8;

struct Spec {
    doc: Value,
    /// (method, path template split on `/`, path template) of every operation.
    operations: Vec<(String, Vec<String>, String)>,
    /// From the deviations file: `METHOD /path` of an operation, and the JSON pointer (`*` for
    /// any one segment) where its answers may differ from GitBook's schema.
    deviations: Vec<(String, String)>,
    validators: Mutex<HashMap<String, Option<Arc<jsonschema::Validator>>>>,
}

fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn required() -> bool {
    std::env::var("QUIRE_TEST_GITBOOK").is_ok_and(|v| v == "required")
}

fn spec() -> Option<&'static Spec> {
    static SPEC: OnceLock<Option<Spec>> = OnceLock::new();
    SPEC.get_or_init(|| {
        let path = std::env::var_os("QUIRE_GITBOOK_SPEC")
            .map(PathBuf::from)
            .unwrap_or_else(|| repo_file(SPEC_PATH));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if required() => panic!(
                "GitBook's API description is required here and {} cannot be read ({e}): \
                 run `bash .ci/gitbook-api`",
                path.display()
            ),
            Err(_) => {
                eprintln!(
                    "note: answers are not checked against GitBook's schemas: {} is absent \
                     (`bash .ci/gitbook-api` fetches it)",
                    path.display()
                );
                return None;
            }
        };
        let mut doc: Value = serde_json::from_str(&text).expect("GitBook's openapi.json is JSON");
        read_empty_branches_as_typescript(&mut doc);
        let mut operations = Vec::new();
        for (template, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                if method != "parameters" {
                    let segments = template.split('/').map(str::to_string).collect();
                    operations.push((method.to_uppercase(), segments, template.clone()));
                }
            }
        }
        let deviations = std::fs::read_to_string(repo_file(DEVIATIONS_PATH))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let mut cells = line.split('|').map(|c| c.trim().trim_matches('`'));
                let (_, operation, pointer) = (cells.next()?, cells.next()?, cells.next()?);
                (operation.contains(" /") && pointer.starts_with('/'))
                    .then(|| (operation.to_string(), pointer.to_string()))
            })
            .collect();
        Some(Spec {
            doc,
            operations,
            deviations,
            validators: Mutex::new(HashMap::new()),
        })
    })
    .as_ref()
}

/// GitBook's schemas are generated from TypeScript, where a union with `{}` (a `Document` is
/// `MarkdownDocument | {document} | {}`, a `CustomizationFavicon` `{icon} | {emoji} | {}`) lets
/// any object through. Its JSON form, a `oneOf` with `{"type": "object", "properties": {},
/// "additionalProperties": false}`, would refuse every page of a revision: allOf'd with a page's
/// fields, the empty branch cannot match and a page that carries no body matches no other. Such
/// a `oneOf` is read as the union TypeScript means: `anyOf`, with the empty branch any object.
fn read_empty_branches_as_typescript(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let empty = |b: &Value| {
                b["type"] == "object"
                    && b["additionalProperties"] == false
                    && b["properties"].as_object().is_none_or(|p| p.is_empty())
            };
            let has_empty = map
                .get("oneOf")
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(empty));
            if has_empty && let Some(Value::Array(mut branches)) = map.remove("oneOf") {
                for branch in &mut branches {
                    if empty(branch) {
                        *branch = json!({"type": "object"});
                    }
                }
                map.insert("anyOf".to_string(), Value::Array(branches));
            }
            // A TypeScript index signature (`PlainObject` is `{[key: string]: PlainObject |
            // string | ...}`) comes out with `additionalProperties` and no `type`: in JSON Schema
            // a string would then match it too, and every `oneOf` of it with `string` fail.
            if map.get("additionalProperties").is_some_and(Value::is_object)
                && !["type", "oneOf", "anyOf", "allOf", "$ref"]
                    .iter()
                    .any(|k| map.contains_key(*k))
            {
                map.insert("type".to_string(), json!("object"));
            }
            map.values_mut().for_each(read_empty_branches_as_typescript);
        }
        Value::Array(items) => items.iter_mut().for_each(read_empty_branches_as_typescript),
        _ => {}
    }
}

/// GitBook's operation for a request path (after `/v1`, without its query): the template that
/// matches with the most literal segments (`/orgs/{id}/sites` before `/orgs/{id}/{x}`).
fn operation<'a>(spec: &'a Spec, method: &str, path: &str) -> Option<&'a str> {
    let segments: Vec<&str> = path.split('/').collect();
    spec.operations
        .iter()
        .filter(|(m, template, _)| {
            m == method
                && template.len() == segments.len()
                && template
                    .iter()
                    .zip(&segments)
                    .all(|(t, s)| (t.starts_with('{') && !s.is_empty()) || t == s)
        })
        .max_by_key(|(_, template, _)| template.iter().filter(|t| !t.starts_with('{')).count())
        .map(|(_, _, template)| template.as_str())
}

/// The JSON schema of an operation's answer of `status`, with the components it refers to.
fn answer_schema(doc: &Value, template: &str, method: &str, status: u16) -> Option<Value> {
    let mut response = &doc["paths"][template][method.to_lowercase()]["responses"][status.to_string()];
    if let Some(name) = response["$ref"].as_str() {
        let name = name.strip_prefix("#/components/responses/")?;
        response = &doc["components"]["responses"][name];
    }
    let schema = response["content"]["application/json"]["schema"].clone();
    if schema.is_null() {
        return None;
    }
    Some(json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"],
        "allOf": [schema],
    }))
}

fn validator(spec: &Spec, template: &str, method: &str, status: u16) -> Option<Arc<jsonschema::Validator>> {
    let key = format!("{method} {template} {status}");
    let mut validators = spec.validators.lock().expect("validators");
    validators
        .entry(key)
        .or_insert_with(|| {
            let schema = answer_schema(&spec.doc, template, method, status)?;
            let built = jsonschema::validator_for(&schema)
                .unwrap_or_else(|e| panic!("GitBook's schema of {method} {template} ({status}): {e}"));
            Some(Arc::new(built))
        })
        .clone()
}

/// Whether a JSON pointer of the deviations file (`*` for any one segment) names `path`.
fn pointer_matches(pattern: &str, path: &str) -> bool {
    let (pattern, path): (Vec<&str>, Vec<&str>) = (pattern.split('/').collect(), path.split('/').collect());
    pattern.len() == path.len() && pattern.iter().zip(&path).all(|(p, s)| *p == "*" || p == s)
}

/// Checks an answer of quire's against GitBook's schema of the operation, when GitBook
/// describes it: panics naming the operation, the JSON pointer and the rule.
pub fn check(method: &str, path: &str, status: u16, content_type: Option<&str>, body: &Value) {
    if !content_type.is_some_and(|ct| ct.starts_with("application/json")) {
        return;
    }
    let Some(spec) = spec() else {
        return;
    };
    let path = path.split('?').next().unwrap_or_default();
    let Some(path) = path.strip_prefix("/v1") else {
        return;
    };
    let Some(template) = operation(spec, method, path) else {
        return;
    };
    let operation = format!("{method} {template}");
    let Some(validator) = validator(spec, template, method, status) else {
        return;
    };
    let excused: Vec<&str> = spec
        .deviations
        .iter()
        .filter(|(op, _)| *op == operation)
        .map(|(_, pointer)| pointer.as_str())
        .collect();
    let refusals: Vec<String> = validator
        .iter_errors(body)
        .filter(|e| {
            !excused
                .iter()
                .any(|p| pointer_matches(p, &e.instance_path().to_string()))
        })
        .take(SHOWN)
        .map(|e| format!("at `{}` ({}): {e}", e.instance_path(), e.schema_path()))
        .collect();
    if refusals.is_empty() {
        return;
    }
    if let Ok(report) = std::env::var("QUIRE_GITBOOK_REPORT") {
        use std::io::Write;
        let line = json!({"operation": operation, "status": status, "refusals": refusals, "answer": body});
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(report)
            .expect("report file");
        // One write per line: tests run in parallel and append to the same file.
        file.write_all(format!("{line}\n").as_bytes())
            .expect("report written");
        return;
    }
    panic!(
        "GitBook's schema of {operation} ({status}) refuses quire's answer:\n  {}\nanswer: {body}",
        refusals.join("\n  ")
    );
}
