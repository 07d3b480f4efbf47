//! A processed description: its entry file and every file it refers to by a relative `$ref`,
//! in the shape GitBook's published-docs renderer reads (`@gitbook/openapi-parser`'s
//! `Filesystem`: an array of entries).

use serde::{Deserialize, Serialize};

/// One file of a description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileEntry {
    /// The directory of the file, relative to the entry file's (`.` for the entry's own).
    pub dir: String,
    /// The path of the file relative to the entry file's directory (`openapi.yaml`,
    /// `schemas/pet.yaml`), as other files' `$ref`s name it.
    pub filename: String,
    pub is_entrypoint: bool,
    /// The files this one refers to, as `filename`s of the same filesystem.
    pub references: Vec<String>,
    /// The parsed file.
    pub specification: serde_json::Value,
}

/// The files of one description, the entry file first.
pub type Filesystem = Vec<FileEntry>;

/// The files a parsed file refers to through `$ref`s that name another file by a relative
/// path (`schemas/pet.yaml#/Pet`, `./common.json`), as paths relative to the entry file's
/// directory, in the order first met. `dir` is the referring file's own directory. References
/// within the file (`#/...`) and to absolute URLs are not files of the description.
pub fn relative_refs(value: &serde_json::Value, dir: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    // Walked with a stack: the parsed value's nesting is bounded, but no recursion is needed.
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(reference)) = map.get("$ref")
                    && let Some(path) = file_of(reference, dir)
                    && !found.contains(&path)
                {
                    found.push(path);
                }
                stack.extend(map.values().rev());
            }
            serde_json::Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    found
}

/// The file a `$ref` names, relative to the entry file's directory; None for a reference within
/// the same file or to an absolute URL.
pub fn file_of(reference: &str, dir: &str) -> Option<String> {
    let file = reference.split('#').next().unwrap_or_default();
    if file.is_empty() || file.contains("://") || file.starts_with('/') || file.starts_with("//") {
        return None;
    }
    Some(join(dir, file))
}

/// `dir` joined with a relative path, `.` and `..` segments folded; a path that climbs above the
/// entry file's directory keeps its leading `..`s.
pub fn join(dir: &str, relative: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in dir.split('/').chain(relative.split('/')) {
        match segment {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// The directory of a file's path (`.` for a file at the top).
pub fn dir_of(path: &str) -> String {
    match path.rsplit_once('/') {
        Some((dir, _)) if !dir.is_empty() => dir.to_string(),
        _ => ".".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn relative_refs_are_found_once_and_joined_to_the_files_dir() {
        let spec = json!({
            "paths": {"/a": {"$ref": "paths/a.yaml"}},
            "components": {"schemas": {
                "Pet": {"$ref": "./schemas/pet.yaml#/Pet"},
                "Pets": {"items": {"$ref": "schemas/pet.yaml#/Pet"}},
                "Local": {"$ref": "#/components/schemas/Pet"},
                "Remote": {"$ref": "https://example.com/x.yaml"},
                "Up": {"$ref": "../common.json#/Error"}
            }}
        });
        assert_eq!(
            relative_refs(&spec, "."),
            ["paths/a.yaml", "schemas/pet.yaml", "../common.json"]
        );
        assert_eq!(
            relative_refs(&json!({"$ref": "../tag.yaml"}), "schemas"),
            ["tag.yaml"]
        );
    }

    #[test]
    fn paths_fold_dots() {
        assert_eq!(join(".", "./a/./b/../c.yaml"), "a/c.yaml");
        assert_eq!(join("a", "../../b.yaml"), "../b.yaml");
        assert_eq!(dir_of("schemas/pet.yaml"), "schemas");
        assert_eq!(dir_of("openapi.yaml"), ".");
    }
}
