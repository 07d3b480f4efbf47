//! Arbitrary text as an OpenAPI description, and as a second file it may refer to: parsing must
//! answer a value or a problem whose pointer names a place, checking must answer a version or
//! problems, and the reference pages of whatever parsed must be written within their limits,
//! whatever `$ref`s, cycles and nesting the text holds. Any panic or stack overflow is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_openapi::filesystem::{FileEntry, relative_refs};
use quire_openapi::parse::{check, parse_text};
use quire_openapi::reference::{MAX_PAGE_BYTES, pages};

fn entry(name: &str, is_entrypoint: bool, specification: serde_json::Value) -> FileEntry {
    FileEntry {
        dir: ".".into(),
        filename: name.into(),
        is_entrypoint,
        references: Vec::new(),
        specification,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // A NUL splits the input into the entry file and `other.yaml`, which it may name.
    let (main, other) = text.split_once('\0').unwrap_or((text, ""));
    let Ok((value, _)) = parse_text(main) else { return };
    let _ = check(&value);
    let _ = relative_refs(&value, ".");
    let mut files = vec![entry("openapi.yaml", true, value)];
    if let Ok((second, _)) = parse_text(other) {
        files.push(entry("other.yaml", false, second));
    }
    for page in pages(&files) {
        assert!(page.markdown.len() <= MAX_PAGE_BYTES, "{} bytes", page.markdown.len());
        assert!(!page.slug.is_empty());
    }
});
