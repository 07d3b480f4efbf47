//! Markdown text to a document; an accepted document must render to markdown that is accepted
//! again, and store as JSON that reads back. Any panic or stack overflow is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_content::{Document, document_to_markdown, limits, markdown_to_document};

fuzz_target!(|data: &[u8]| {
    let Ok(markdown) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(document) = markdown_to_document(markdown) else {
        return;
    };
    let rendered = document_to_markdown(&document, &|_| None);
    let reparsed = match markdown_to_document(&rendered) {
        Ok(reparsed) => reparsed,
        Err(error) => panic!("the rendering of an accepted document is refused: {error}\n{rendered}"),
    };
    limits::check_document(&reparsed).unwrap();
    document_to_markdown(&reparsed, &|_| None);
    let bytes = serde_json::to_vec(&document).unwrap();
    let stored: Document = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(stored, document, "the stored JSON reads back as another document");
});
