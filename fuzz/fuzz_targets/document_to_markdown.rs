//! JSON bytes to a document (as a client sends it), to markdown; an accepted document must
//! render to markdown that is accepted again, and store as JSON that reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_content::{Document, document_to_markdown, markdown_to_document};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // Like a request body: serde_json's own recursion limit (128) applies.
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Ok(document) = Document::from_json(value) else {
        return;
    };
    let rendered = document_to_markdown(&document, &|_| None);
    let reparsed = match markdown_to_document(&rendered) {
        Ok(reparsed) => reparsed,
        Err(error) => panic!("the rendering of an accepted document is refused: {error}\n{rendered}"),
    };
    document_to_markdown(&reparsed, &|_| None);
    let bytes = serde_json::to_vec(&document).unwrap();
    let stored: Document = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(stored, document, "the stored JSON reads back as another document");
});
