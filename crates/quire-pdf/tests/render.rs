//! Books typeset end to end: the PDF opens, has the pages it should, and (with poppler's
//! `pdftotext`, required when `QUIRE_TEST_PDF_TOOLS=required`, as in CI) holds each page's text
//! in reading order, non-Latin scripts included.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use quire_content::{Document, markdown_to_document};
use quire_pdf::{Book, BookPage, images_used, render};
use quire_reader::resolve::{FileTarget, PageTarget, Resolver};
use serde_json::json;

/// A 2×2 PNG, red and blue.
fn png() -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, 2, 2);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("a header");
    writer
        .write_image_data(&[255, 0, 0, 0, 0, 255, 0, 0, 255, 255, 0, 0])
        .expect("pixels");
    writer.finish().expect("a PNG");
    bytes
}

struct Links;

impl Resolver for Links {
    fn page(&self, page: &str, _space: Option<&str>) -> Option<PageTarget> {
        Some(PageTarget {
            url: format!("https://docs.example.com/{page}"),
            title: format!("Page {page}"),
            emoji: None,
        })
    }

    fn file(&self, file: &str, _space: Option<&str>) -> Option<FileTarget> {
        Some(FileTarget {
            url: format!("https://docs.example.com/files/{file}"),
            name: format!("{file}.pdf"),
            size: 12_345,
            ..FileTarget::default()
        })
    }
}

fn markdown(text: &str) -> Document {
    markdown_to_document(text).expect("markdown within the limits")
}

fn page<'a>(id: &str, title: &str, depth: usize, document: Option<&'a Document>) -> BookPage<'a> {
    BookPage {
        id: id.into(),
        title: title.into(),
        emoji: None,
        description: None,
        depth,
        document,
    }
}

fn image_block(file: &str) -> serde_json::Value {
    json!({"object": "block", "type": "images", "nodes": [
        {"object": "block", "type": "image", "data": {"ref": {"kind": "file", "file": file}}, "nodes": []}
    ]})
}

/// The text of `pdf` in reading order, when poppler is here.
fn pdftotext(pdf: &[u8]) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("quire-pdf-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("book.pdf");
    std::fs::write(&path, pdf).ok()?;
    let output = Command::new("pdftotext")
        .arg("-layout")
        .arg(&path)
        .arg("-")
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    match output {
        Ok(output) if output.status.success() => Some(String::from_utf8_lossy(&output.stdout).into_owned()),
        _ => {
            assert_ne!(
                std::env::var("QUIRE_TEST_PDF_TOOLS").as_deref(),
                Ok("required"),
                "pdftotext (poppler-utils) is required here"
            );
            None
        }
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

#[test]
fn a_book_is_typeset_with_its_pages_in_order_and_every_script_readable() {
    let intro = markdown(
        "Welcome to **Acme**. This guide is _short_.\n\n## Install\n\n```bash\ncurl -sSf https://acme.example | sh\n```\n\n- one\n- two\n  - nested\n\n1. first\n2. second\n\n- [x] done\n- [ ] open\n\n> A quote.\n\n| Name | Value |\n|---|---|\n| alpha | 1 |\n| beta | 2 |\n\n{% hint style=\"warning\" %}\nMind the gap.\n{% endhint %}\n",
    );
    let scripts = markdown(
        "中文段落：快速的棕色狐狸跳过了懒狗。\n\nКириллица: съешь же ещё этих мягких французских булок.\n\nالعربية: نص قصير للتجربة.\n\nEmoji 🎉 and $$E = mc^2$$ inline.\n",
    );
    let links = Document::from_json(json!({"object": "document", "nodes": [
        {"object": "block", "type": "paragraph", "nodes": [
            {"object": "text", "leaves": [
                {"object": "leaf", "text": "Red ", "marks": [{"object": "mark", "type": "color", "data": {"text": "red"}}]},
                {"object": "leaf", "text": "on yellow. ", "marks": [{"object": "mark", "type": "color", "data": {"background": "$yellow"}}, {"object": "mark", "type": "bold"}]},
                {"object": "leaf", "text": "Go to ", "marks": []}
            ]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "intro"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "the introduction", "marks": []}]}
            ]},
            {"object": "text", "leaves": [{"object": "leaf", "text": ", its ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "anchor", "anchor": "install", "page": "intro"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "install section", "marks": []}]}
            ]},
            {"object": "text", "leaves": [{"object": "leaf", "text": ", ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "anchor", "anchor": "setup", "page": "elsewhere"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "a section outside it", "marks": []}]}
            ]},
            {"object": "text", "leaves": [{"object": "leaf", "text": ", or ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "elsewhere"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "a page outside the book", "marks": []}]}
            ]},
        ]},
        {"object": "block", "type": "content-ref", "data": {"ref": {"kind": "anchor", "anchor": "install", "page": "intro"}}, "nodes": []},
        image_block("logo"),
        image_block("broken"),
        {"object": "block", "type": "mystery-widget", "nodes": []},
    ]}))
    .expect("a valid document");

    let book = Book {
        title: "Acme \"Handbook\"".into(),
        emoji: Some("📘".into()),
        date: "November 29, 2026".into(),
        pages: vec![
            page("intro", "Introduction", 0, Some(&intro)),
            page("group", "Reference", 0, None),
            page("scripts", "Scripts of the world", 1, Some(&scripts)),
            page("links", "Links and images", 1, Some(&links)),
        ],
    };
    let used = images_used([&intro, &scripts, &links]);
    assert_eq!(used, ["logo", "broken"]);
    let images = vec![
        ("logo".to_string(), png()),
        ("broken".to_string(), b"\x89PNG\r\n\x1a\nnot really".to_vec()),
    ];
    let pdf = render(&book, &Links, &images).expect("typeset");
    assert!(pdf.bytes.starts_with(b"%PDF-"), "a PDF");
    // To look at it: QUIRE_PDF_KEEP=/tmp/book.pdf cargo test -p quire-pdf --test render
    if let Ok(path) = std::env::var("QUIRE_PDF_KEEP") {
        std::fs::write(path, &pdf.bytes).expect("the PDF written where asked");
    }
    // Cover, contents, and one page each for the three pages with content.
    assert!(pdf.pages >= 5, "{} pages", pdf.pages);

    let Some(text) = pdftotext(&pdf.bytes) else {
        return;
    };
    let order = [
        "Acme \"Handbook\"",
        "November 29, 2026",
        "Contents",
        "Introduction",
        "Welcome to Acme",
        "curl -sSf https://acme.example | sh",
        "alpha",
        "Mind the gap.",
        "Reference",
        "Scripts of the world",
        "中文段落：快速的棕色狐狸跳过了懒狗。",
        "съешь же ещё этих мягких французских булок",
        "Links and images",
        "Red on yellow. Go to the introduction",
        "intro#install",
        "image left out: it does not decode",
        "A block of type \"mystery-widget\" is not shown in PDF.",
    ];
    let mut from = 0;
    for wanted in order {
        let found = text[from..]
            .find(wanted)
            .unwrap_or_else(|| panic!("{wanted:?} after byte {from} of:\n{text}"));
        from += found + wanted.len();
    }
    assert!(!text.contains("label("), "Typst code as text:\n{text}");
    // Arabic is extracted in logical or visual order depending on poppler: its words are there.
    assert!(text.contains("العربية") || text.contains("ﺔﻴﺑﺮﻌﻟا"), "{text}");
}

#[test]
fn text_that_looks_like_typst_is_set_as_written() {
    let tricky = markdown(
        "Not markup: #let x = 1; $math$ *stars* _under_ <label> @ref \\ back\\\\slash \"quotes\" 'single' -- --- ... ~ // comment /* block */ `code \" with quote`\n\n= not a heading\n\n#set page(paper: \"a0\")\n",
    );
    let book = Book {
        title: "#strong[x] \\ \" ]".into(),
        emoji: None,
        date: "today".into(),
        pages: vec![page("p", "Title ]) #x", 0, Some(&tricky))],
    };
    let pdf = render(&book, &Links, &[]).expect("typeset");
    assert!(pdf.pages >= 3);
    let Some(text) = pdftotext(&pdf.bytes) else {
        return;
    };
    for wanted in [
        "#let x = 1;",
        "<label> @ref",
        "\"quotes\" 'single' -- --- ...",
        "= not a heading",
        "#set page(paper: \"a0\")",
        "Title ]) #x",
    ] {
        assert!(text.contains(wanted), "{wanted:?} in:\n{text}");
    }
}

#[test]
fn deep_nesting_and_big_tables_stay_within_typsts_limits() {
    let mut markdown_text = String::new();
    for depth in 0..14 {
        markdown_text.push_str(&"  ".repeat(depth));
        markdown_text.push_str(&format!("- level {depth}\n"));
    }
    markdown_text.push_str("\n| a | b | c |\n|---|---|---|\n");
    for row in 0..400 {
        markdown_text.push_str(&format!("| {row} | cell {row} | `x` |\n"));
    }
    let document = markdown(&markdown_text);
    let book = Book {
        title: "Deep".into(),
        emoji: None,
        date: "today".into(),
        pages: vec![page("deep", "Deep", 0, Some(&document))],
    };
    let pdf = render(&book, &Links, &[]).expect("typeset");
    // The table breaks across pages.
    assert!(pdf.pages >= 6, "{} pages", pdf.pages);
    if let Some(text) = pdftotext(&pdf.bytes) {
        assert!(text.contains("level 13"), "{text}");
        assert!(text.contains("cell 399"), "{text}");
    }
}
