//! The layout the crates keep (docs/decisions/0056-layout-store-and-http-crates.md): SQL lives in `quire-store`, never
//! here. `.ci/layout` also checks that `quire-store` depends on no HTTP crate.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The string literals of Rust source (plain and raw), roughly: enough to find SQL in them.
fn string_literals(source: &str) -> Vec<String> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            // Comments: skipped, so that prose about SQL does not count.
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'\'' => {
                // A char literal ('"') or a lifetime: skip the quote and what a char holds.
                i += if bytes.get(i + 1) == Some(&b'\\') { 4 } else { 3 };
                continue;
            }
            b'r' if matches!(bytes.get(i + 1), Some(b'#' | b'"'))
                && !is_ident(bytes.get(i.wrapping_sub(1))) =>
            {
                let hashes = bytes[i + 1..].iter().take_while(|b| **b == b'#').count();
                let start = i + 1 + hashes;
                if bytes.get(start) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close = format!("\"{}", "#".repeat(hashes));
                let end = source[start + 1..]
                    .find(&close)
                    .map_or(bytes.len(), |e| start + 1 + e);
                out.push(source[start + 1..end].to_string());
                i = end + close.len();
                continue;
            }
            b'"' => {
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                out.push(source[i + 1..j.min(bytes.len())].to_string());
                i = j + 1;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn is_ident(byte: Option<&u8>) -> bool {
    byte.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// Whether a string literal is (part of) an SQL statement.
fn is_sql(text: &str) -> bool {
    let words: Vec<&str> = text.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    (has("SELECT") && (has("FROM") || words.len() <= 3))
        || text.contains("INSERT INTO")
        || text.contains("DELETE FROM")
        || (has("UPDATE") && has("SET"))
        || text.contains("WITH RECURSIVE")
}

/// The modules that hold handlers or route them; the application state must not import them,
/// so that handlers depend on the state and never the other way round.
const HANDLER_MODULES: &[&str] = &[
    "api",
    "router",
    "middleware",
    "service",
    "home",
    "files",
    "auth",
    "reader::serve",
];

#[test]
fn the_state_imports_no_handler() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/state.rs");
    let source = std::fs::read_to_string(&path).expect("read src/state.rs");
    let mut used: Vec<&str> = source.split("crate::").skip(1).collect();
    used.retain(|rest| {
        HANDLER_MODULES.iter().any(|m| {
            rest.starts_with(m) && !rest[m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        })
    });
    assert!(used.is_empty(), "src/state.rs imports handler modules: {used:?}");
    // `reader` is both: its `state` holds caches, the rest serves pages.
    for rest in source.split("crate::reader::").skip(1) {
        assert!(
            rest.starts_with("state::"),
            "src/state.rs uses crate::reader::{rest:.40}"
        );
    }
}

#[test]
fn no_sql_outside_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    assert!(files.len() > 20, "no sources found under {}", src.display());
    let mut found = Vec::new();
    // This file names SQL keywords to look for them.
    for file in files.into_iter().filter(|f| !f.ends_with("layout.rs")) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for literal in string_literals(&text) {
            if is_sql(&literal) {
                found.push(format!("{}: {literal:?}", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "SQL belongs in quire-store (a domain function there), not in quire-server:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_sql_check_sees_sql() {
    let source = r##"
        // SELECT a FROM b in a comment does not count
        let q = "SELECT id FROM spaces WHERE id = ?1";
        let r = r#"UPDATE spaces SET title = ?2"#;
        let c = '"';
        let m = "select the spaces you want";
    "##;
    let sql: Vec<String> = string_literals(source)
        .into_iter()
        .filter(|l| is_sql(l))
        .collect();
    assert_eq!(
        sql,
        [
            "SELECT id FROM spaces WHERE id = ?1",
            "UPDATE spaces SET title = ?2"
        ]
    );
}
