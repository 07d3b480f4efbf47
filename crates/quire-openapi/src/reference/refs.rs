//! `$ref` resolution across the files of a description.

use std::collections::HashMap;

use serde_json::Value;

use super::MAX_REF_HOPS;
use crate::filesystem::FileEntry;

/// A value and the file it is in: `$ref`s inside it resolve against that file.
#[derive(Clone, Copy, Debug)]
pub(super) struct At<'a> {
    pub(super) file: usize,
    pub(super) value: &'a Value,
}

impl<'a> At<'a> {
    /// Another value of the same file.
    pub(super) fn with(self, value: &'a Value) -> Self {
        Self {
            file: self.file,
            value,
        }
    }

    /// The member `key` of this value, in the same file.
    pub(super) fn get(self, key: &str) -> Option<Self> {
        self.value.get(key).map(|v| self.with(v))
    }

    /// The identity of the value, for telling a cycle from a repeated use of one schema.
    pub(super) fn id(self) -> *const Value {
        std::ptr::from_ref(self.value)
    }
}

/// A value with its `$ref`s followed.
#[derive(Clone, Debug)]
pub(super) struct Resolved<'a> {
    pub(super) at: At<'a>,
    /// The name the last `$ref` gave it (`Pet` for `#/components/schemas/Pet`, `pet` for
    /// `pet.yaml`), if it was reached through one.
    pub(super) name: Option<String>,
}

/// The files of a description, for following `$ref`s.
pub(super) struct Refs<'a> {
    files: &'a [FileEntry],
    by_path: HashMap<String, usize>,
}

impl<'a> Refs<'a> {
    pub(super) fn new(files: &'a [FileEntry]) -> Self {
        let by_path = files
            .iter()
            .enumerate()
            .map(|(index, file)| (normalize(&file.filename), index))
            .collect();
        Self { files, by_path }
    }

    /// The entry file's root value.
    pub(super) fn entry(&self) -> Option<At<'a>> {
        self.files.first().map(|file| At {
            file: 0,
            value: &file.specification,
        })
    }

    /// `at` with its `$ref`s followed, or the text of the `$ref` that could not be (a missing
    /// target, a target outside the description, or a chain of refs that loops).
    pub(super) fn resolve(&self, at: At<'a>) -> Result<Resolved<'a>, String> {
        let mut current = Resolved { at, name: None };
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = current.at.value.get("$ref").and_then(Value::as_str) else {
                return Ok(current);
            };
            match self.follow(current.at.file, reference) {
                Some(next) => current = next,
                None => return Err(reference.to_owned()),
            }
        }
        Err(current
            .at
            .value
            .get("$ref")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned())
    }

    /// The target of `reference` written in file `file`.
    fn follow(&self, file: usize, reference: &str) -> Option<Resolved<'a>> {
        let (path, fragment) = match reference.split_once('#') {
            Some((path, fragment)) => (path, Some(fragment)),
            None => (reference, None),
        };
        let target_file = if path.is_empty() {
            file
        } else {
            self.file_of(file, path)?
        };
        let root = &self.files.get(target_file)?.specification;
        let pointer = percent_decode(fragment.unwrap_or_default());
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return None;
        }
        let value = root.pointer(&pointer)?;
        let name = match pointer.rsplit('/').next().filter(|s| !s.is_empty()) {
            Some(last) => Some(last.replace("~1", "/").replace("~0", "~")),
            None => file_stem(path),
        };
        Some(Resolved {
            at: At {
                file: target_file,
                value,
            },
            name,
        })
    }

    /// The index of the file `path` names, relative to the directory of file `from`.
    fn file_of(&self, from: usize, path: &str) -> Option<usize> {
        // A URL (`https://…`, `file:…`) names nothing of the filesystem.
        if path.contains(':') {
            return None;
        }
        let path = path.split('?').next().unwrap_or_default();
        let dir = self.files.get(from).map_or(".", |f| f.dir.as_str());
        let joined = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("{dir}/{path}")
        };
        self.by_path
            .get(&normalize(&joined))
            .or_else(|| self.by_path.get(&normalize(&percent_decode(&joined))))
            .copied()
    }
}

/// A relative path with its `.` and empty segments dropped and its `..` applied.
fn normalize(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split(['/', '\\']) {
        match segment {
            "" | "." => {}
            ".." if segments.last().is_some_and(|s| *s != "..") => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    segments.join("/")
}

fn file_stem(path: &str) -> Option<String> {
    let file = path.rsplit('/').next()?;
    let stem = file.split('.').next().unwrap_or(file);
    (!stem.is_empty()).then(|| stem.to_owned())
}

/// `text` with its `%XX` escapes decoded; an escape that is not one, or bytes that are not
/// UTF-8, stay as written.
fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if byte == b'%'
            && let Some(decoded) = bytes
                .get(index + 1..index + 3)
                .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
                .and_then(|hex| std::str::from_utf8(hex).ok())
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(decoded);
            index += 3;
            continue;
        }
        out.push(byte);
        index += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_refs_paths_normalize() {
        assert_eq!(normalize("./schemas/../common.json"), "common.json");
        assert_eq!(normalize("schemas/./pet.yaml"), "schemas/pet.yaml");
        assert_eq!(normalize("../x.yaml"), "../x.yaml");
        assert_eq!(percent_decode("/paths/~1pets%7Bid%7D"), "/paths/~1pets{id}");
        assert_eq!(percent_decode("100%"), "100%");
    }
}
