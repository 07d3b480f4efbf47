//! The text of a description parsed (JSON or YAML) and checked against the OpenAPI version it
//! declares: 3.0 with `openapiv3`'s types, 3.1 with `oas3`'s, Swagger 2.0 by its required
//! fields (no maintained crate reads 2.0). Every problem carries the JSON pointer of where it is.

use serde::Serialize;
use serde_json::Value;

use crate::limits::{MAX_ERRORS, MAX_FILE_BYTES, MAX_NESTING};

/// How the text of a file was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Yaml => "yaml",
        }
    }

    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "json" => Some(Format::Json),
            "yaml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// The OpenAPI version a description declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// What is wrong with a file, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// A code for the kind of problem: `TOO_LARGE`, `SYNTAX`, `TOO_DEEP`, `INVALID_SPEC`,
    /// `UNSUPPORTED_VERSION`.
    pub code: &'static str,
    pub message: String,
    /// The JSON pointer of the value the problem is at (`""` for the whole file).
    pub pointer: String,
}

impl Problem {
    fn new(code: &'static str, pointer: String, message: String) -> Problem {
        Problem {
            code,
            message,
            pointer,
        }
    }
}

/// Parses the text of one file: JSON when it starts with `{` or `[`, YAML otherwise.
pub fn parse_text(text: &str) -> Result<(Value, Format), Problem> {
    if text.len() > MAX_FILE_BYTES {
        return Err(Problem::new(
            "TOO_LARGE",
            String::new(),
            format!(
                "the file is {} bytes, more than the {MAX_FILE_BYTES} allowed",
                text.len()
            ),
        ));
    }
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let (value, format) = if trimmed.starts_with(['{', '[']) {
        let mut de = serde_json::Deserializer::from_str(trimmed);
        let value = serde_path_to_error::deserialize::<_, Value>(&mut de)
            .map_err(|e| syntax(pointer_of(e.path()), e.inner().to_string()))?;
        de.end().map_err(|e| syntax(String::new(), e.to_string()))?;
        (value, Format::Json)
    } else {
        let de = serde_yaml_ng::Deserializer::from_str(trimmed);
        let value = serde_path_to_error::deserialize::<_, Value>(de)
            .map_err(|e| syntax(pointer_of(e.path()), e.inner().to_string()))?;
        (value, Format::Yaml)
    };
    if let Some(pointer) = too_deep(&value) {
        return Err(Problem::new(
            "TOO_DEEP",
            pointer,
            format!("values nest more than {MAX_NESTING} deep"),
        ));
    }
    Ok((value, format))
}

fn syntax(pointer: String, message: String) -> Problem {
    Problem::new(
        "SYNTAX",
        pointer,
        format!("the file is not valid JSON or YAML: {message}"),
    )
}

/// The pointer of a value nested deeper than [`MAX_NESTING`], if any (walked without recursion).
fn too_deep(value: &Value) -> Option<String> {
    let mut stack: Vec<(&Value, usize, String)> = vec![(value, 0, String::new())];
    while let Some((value, depth, pointer)) = stack.pop() {
        if depth > MAX_NESTING {
            return Some(pointer);
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if v.is_object() || v.is_array() {
                        stack.push((v, depth + 1, format!("{pointer}/{}", escape(k))));
                    }
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    if v.is_object() || v.is_array() {
                        stack.push((v, depth + 1, format!("{pointer}/{i}")));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Checks a parsed entry file against the version it declares.
pub fn check(value: &Value) -> Result<Version, Vec<Problem>> {
    let Some(root) = value.as_object() else {
        return Err(vec![Problem::new(
            "INVALID_SPEC",
            String::new(),
            "an OpenAPI description is an object".into(),
        )]);
    };
    let declared = |key: &str| root.get(key).and_then(Value::as_str);
    let version = match (declared("openapi"), declared("swagger")) {
        (Some(v), _) if v.starts_with("3.0.") || v == "3.0" => Version::OpenApi30,
        (Some(v), _) if v.starts_with("3.1.") || v == "3.1" => Version::OpenApi31,
        (None, Some("2.0")) => Version::Swagger2,
        (Some(v), _) | (None, Some(v)) => {
            return Err(vec![Problem::new(
                "UNSUPPORTED_VERSION",
                if root.contains_key("openapi") {
                    "/openapi"
                } else {
                    "/swagger"
                }
                .into(),
                format!("OpenAPI version {v:?} is not one quire reads (2.0, 3.0.x, 3.1.x)"),
            )]);
        }
        (None, None) => {
            return Err(vec![Problem::new(
                "INVALID_SPEC",
                String::new(),
                "the file declares no version: neither `openapi` nor `swagger` is set".into(),
            )]);
        }
    };
    let typed = match version {
        Version::OpenApi30 => typed::<openapiv3::OpenAPI>(value)
            .map_err(|p| narrowed::<openapiv3::PathItem, openapiv3::ReferenceOr<openapiv3::Schema>>(root, p)),
        Version::OpenApi31 => typed::<oas3::Spec>(value).map_err(|p| {
            narrowed::<oas3::spec::PathItem, oas3::spec::ObjectOrReference<oas3::spec::ObjectSchema>>(root, p)
        }),
        Version::Swagger2 => swagger2(root).map_err(|mut problems| {
            problems.truncate(MAX_ERRORS);
            problems
        }),
    };
    typed.map(|()| version)
}

/// The crates read `paths` and some maps through `#[serde(flatten)]`, which loses the path of
/// a problem inside them: a problem reported at `/paths` or `/components` is looked for again
/// in each path item and each schema, read on their own, so that it is reported where it is.
fn narrowed<Item: serde::de::DeserializeOwned, Schema: serde::de::DeserializeOwned>(
    root: &serde_json::Map<String, Value>,
    problem: Problem,
) -> Vec<Problem> {
    let within = |map: Option<&Value>, at: String, check: fn(&Value) -> Result<(), Problem>| {
        map.and_then(Value::as_object)?.iter().find_map(|(key, v)| {
            check(v).err().map(|p| Problem {
                pointer: format!("{at}/{}{}", escape(key), p.pointer),
                ..p
            })
        })
    };
    let found = if problem.pointer.starts_with("/paths") || problem.pointer.is_empty() {
        within(root.get("paths"), "/paths".into(), typed::<Item>)
    } else {
        None
    };
    let found = found.or_else(|| {
        if problem.pointer.starts_with("/components") || problem.pointer.is_empty() {
            let schemas = root.get("components").and_then(|c| c.get("schemas"));
            within(schemas, "/components/schemas".into(), typed::<Schema>)
        } else {
            None
        }
    });
    vec![found.unwrap_or(problem)]
}

/// Reads a value into a crate's type, which checks every field's shape; the first mismatch is
/// reported where serde saw it.
fn typed<T: serde::de::DeserializeOwned>(value: &Value) -> Result<(), Problem> {
    serde_path_to_error::deserialize::<_, T>(value)
        .map(drop)
        .map_err(|e| Problem::new("INVALID_SPEC", pointer_of(e.path()), e.inner().to_string()))
}

/// Swagger 2.0's required fields and their types.
fn swagger2(root: &serde_json::Map<String, Value>) -> Result<(), Vec<Problem>> {
    let mut problems = Vec::new();
    let mut need = |pointer: &str, ok: bool, what: &str| {
        if !ok && problems.len() < MAX_ERRORS {
            problems.push(Problem::new("INVALID_SPEC", pointer.into(), what.into()));
        }
    };
    let info = root.get("info");
    need(
        "/info",
        info.is_some_and(Value::is_object),
        "`info` must be an object",
    );
    if let Some(info) = info.and_then(Value::as_object) {
        need(
            "/info/title",
            info.get("title").is_some_and(Value::is_string),
            "`info.title` must be a string",
        );
        need(
            "/info/version",
            info.get("version").is_some_and(Value::is_string),
            "`info.version` must be a string",
        );
    }
    let paths = root.get("paths");
    need(
        "/paths",
        paths.is_some_and(Value::is_object),
        "`paths` must be an object",
    );
    for (path, item) in paths.and_then(Value::as_object).into_iter().flatten() {
        let at = format!("/paths/{}", escape(path));
        need(
            &at,
            path.starts_with('/') || path.starts_with("x-"),
            "a path starts with `/`",
        );
        need(&at, item.is_object(), "a path item is an object");
        for (method, operation) in item.as_object().into_iter().flatten() {
            if matches!(
                method.as_str(),
                "get" | "put" | "post" | "delete" | "options" | "head" | "patch"
            ) {
                let op_at = format!("{at}/{method}");
                need(&op_at, operation.is_object(), "an operation is an object");
                if let Some(responses) = operation.get("responses") {
                    need(
                        &format!("{op_at}/responses"),
                        responses.is_object(),
                        "`responses` must be an object",
                    );
                } else {
                    need(&op_at, false, "an operation needs `responses`");
                }
            }
        }
    }
    for key in ["definitions", "parameters", "responses", "securityDefinitions"] {
        if let Some(v) = root.get(key) {
            need(
                &format!("/{key}"),
                v.is_object(),
                &format!("`{key}` must be an object"),
            );
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// A JSON pointer segment: `~` and `/` escaped.
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The JSON pointer of a path serde tracked.
fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&escape(key));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_and_yaml_are_told_apart() {
        let (v, f) = parse_text("{\"openapi\": \"3.0.3\"}").unwrap();
        assert_eq!((v["openapi"].as_str(), f), (Some("3.0.3"), Format::Json));
        let (v, f) = parse_text("openapi: 3.1.0\ninfo:\n  title: x\n").unwrap();
        assert_eq!((v["info"]["title"].as_str(), f), (Some("x"), Format::Yaml));
    }

    #[test]
    fn a_syntax_error_says_where() {
        let e = parse_text("{\"paths\": {\"/a\": {\"get\": [1, }}}").unwrap_err();
        assert_eq!(e.code, "SYNTAX");
        assert_eq!(e.pointer, "/paths/~1a/get/1", "{e:?}");
        let e = parse_text("openapi: 3.0.0\npaths:\n  /a: [unclosed\n").unwrap_err();
        assert_eq!(e.code, "SYNTAX");
        assert!(e.message.contains("line"), "{e:?}");
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}{}", "[".repeat(MAX_NESTING + 5), "]".repeat(MAX_NESTING + 5));
        // serde_json stops at its own recursion limit (128) first; either way it is refused.
        assert!(parse_text(&deep).is_err());
        let yaml = format!(
            "a: {}1{}",
            "[".repeat(MAX_NESTING + 5),
            "]".repeat(MAX_NESTING + 5)
        );
        assert!(parse_text(&yaml).is_err());
    }

    #[test]
    fn each_version_is_checked_with_its_rules() {
        let ok30 = json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
            "/pets": {"get": {"responses": {"200": {"description": "ok"}}}}}});
        assert_eq!(check(&ok30), Ok(Version::OpenApi30));
        let ok31 = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}});
        assert_eq!(check(&ok31), Ok(Version::OpenApi31));
        let ok2 = json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {
            "/pets": {"get": {"responses": {"200": {"description": "ok"}}}}}});
        assert_eq!(check(&ok2), Ok(Version::Swagger2));

        let bad30 = json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
            "/pets": {"get": {"responses": {"200": {"description": 7}}}}}});
        let problems = check(&bad30).unwrap_err();
        assert_eq!(problems[0].code, "INVALID_SPEC");
        assert!(
            problems[0].pointer.starts_with("/paths/~1pets/get/responses"),
            "{problems:?}"
        );

        let bad2 = json!({"swagger": "2.0", "info": {"version": "1"}, "paths": {"/a": {"get": {}}}});
        let pointers: Vec<_> = check(&bad2).unwrap_err().into_iter().map(|p| p.pointer).collect();
        assert_eq!(pointers, ["/info/title", "/paths/~1a/get"]);

        let problems = check(&json!({"openapi": "4.0.0"})).unwrap_err();
        assert_eq!(
            (problems[0].code, problems[0].pointer.as_str()),
            ("UNSUPPORTED_VERSION", "/openapi")
        );
        assert_eq!(check(&json!({"info": {}})).unwrap_err()[0].code, "INVALID_SPEC");
        assert_eq!(check(&json!([1])).unwrap_err()[0].code, "INVALID_SPEC");
    }

    #[test]
    fn gitbooks_own_description_is_read() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/gitbook-api/package/spec/openapi.json"
        );
        let Ok(text) = std::fs::read_to_string(path) else {
            eprintln!("skipped: {path} is absent (bash .ci/gitbook-api)");
            return;
        };
        let (value, format) = parse_text(&text).unwrap();
        assert_eq!(format, Format::Json);
        assert_eq!(check(&value), Ok(Version::OpenApi31));
    }
}
