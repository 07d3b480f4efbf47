//! Markdown text (before a NUL byte) to a document, cut into translatable segments, rebuilt from
//! translations: the segments unchanged rebuild the very document; upper-cased (tags and escapes
//! too, as a translator may answer) they rebuild a valid one; any other answer (the text after
//! the NUL byte, for every segment) is refused or rebuilds a valid one. A panic is a crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use quire_content::translate::{Translated, rebuild, segments};
use quire_content::{markdown_to_document, validate_document};

fn valid(document: &quire_content::Document) {
    let json = serde_json::to_value(document).unwrap();
    if let Err(e) = validate_document(&json) {
        panic!("a rebuilt document does not validate: {e}\n{json}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (markdown, answer) = text.split_once('\0').unwrap_or((text, ""));
    let Ok(document) = markdown_to_document(markdown) else {
        return;
    };
    let segments = segments(&document);
    let as_is: Vec<Translated> = segments
        .iter()
        .map(|s| {
            if s.pieces_only() {
                Translated::Pieces(s.pieces().to_vec())
            } else {
                Translated::Tagged(s.text.clone())
            }
        })
        .collect();
    let same = rebuild(&document, &as_is).expect("the segments as they are rebuild");
    assert_eq!(
        same, document,
        "the segments as they are rebuild another document"
    );
    let upper: Vec<Translated> = segments
        .iter()
        .map(|s| {
            if s.pieces_only() {
                Translated::Pieces(s.pieces().iter().map(|p| p.to_uppercase()).collect())
            } else {
                Translated::Tagged(s.text.to_uppercase())
            }
        })
        .collect();
    valid(&rebuild(&document, &upper).expect("upper-cased segments rebuild"));
    let any: Vec<Translated> = segments
        .iter()
        .map(|_| Translated::Tagged(answer.to_string()))
        .collect();
    if let Ok(rebuilt) = rebuild(&document, &any) {
        valid(&rebuilt);
    }
});
