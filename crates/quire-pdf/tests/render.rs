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
        document: document.map(|d| Box::new(d) as quire_pdf::PageDocument<'a>),
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
    let pdf = render(book, &Links, &images).expect("typeset");
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
    let pdf = render(book, &Links, &[]).expect("typeset");
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
    let pdf = render(book, &Links, &[]).expect("typeset");
    // The table breaks across pages.
    assert!(pdf.pages >= 6, "{} pages", pdf.pages);
    if let Some(text) = pdftotext(&pdf.bytes) {
        assert!(text.contains("level 13"), "{text}");
        assert!(text.contains("cell 399"), "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// A book typeset in several chunks and joined.

/// The output of `program` run on `pdf` (written to a file) with `args` before the file, when
/// the program is here.
fn run_tool(program: &str, args: &[&str], pdf: &[u8]) -> Option<std::process::Output> {
    let dir = std::env::temp_dir().join(format!("quire-pdf-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).ok()?;
    let path = dir.join("book.pdf");
    std::fs::write(&path, pdf).ok()?;
    let output = Command::new(program).args(args).arg(&path).output();
    let _ = std::fs::remove_dir_all(&dir);
    match output {
        Ok(output) => Some(output),
        Err(_) => {
            assert_ne!(
                std::env::var("QUIRE_TEST_PDF_TOOLS").as_deref(),
                Ok("required"),
                "{program} (poppler-utils, qpdf) is required here"
            );
            None
        }
    }
}

/// The text of each page of `pdf`, when poppler is here.
fn pages_text(pdf: &[u8]) -> Option<Vec<String>> {
    let text = pdftotext(pdf)?;
    // pdftotext ends each page with a form feed.
    let mut pages: Vec<String> = text.split('\u{c}').map(str::to_owned).collect();
    pages.pop();
    Some(pages)
}

/// A PDF object, references followed.
fn deref<'a>(document: &'a lopdf::Document, object: &'a lopdf::Object) -> &'a lopdf::Object {
    document
        .dereference(object)
        .map(|(_, object)| object)
        .expect("a reference that resolves")
}

fn text_of(document: &lopdf::Document, object: &lopdf::Object) -> String {
    lopdf::decode_text_string(deref(document, object)).expect("a text string")
}

/// Where an explicit destination leads: the page's index, and the top.
fn dest_page(document: &lopdf::Document, pages: &[lopdf::ObjectId], dest: &lopdf::Object) -> (usize, f32) {
    let dest = deref(document, dest).as_array().expect("an explicit destination");
    assert_eq!(dest[1].as_name().unwrap(), b"XYZ", "{dest:?}");
    let page = dest[0].as_reference().expect("a page");
    let index = pages
        .iter()
        .position(|id| *id == page)
        .expect("a page of the PDF");
    (index, dest[3].as_float().unwrap())
}

/// The bookmarks of `document`, depth first: depth, title and where each leads.
fn bookmarks(document: &lopdf::Document, pages: &[lopdf::ObjectId]) -> Vec<(usize, String, usize)> {
    fn walk(
        document: &lopdf::Document,
        pages: &[lopdf::ObjectId],
        first: Option<&lopdf::Object>,
        depth: usize,
        out: &mut Vec<(usize, String, usize)>,
    ) {
        let mut next = first.map(|object| object.as_reference().unwrap());
        while let Some(id) = next {
            let entry = document.get_dictionary(id).unwrap();
            let (page, _) = dest_page(document, pages, entry.get(b"Dest").unwrap());
            out.push((depth, text_of(document, entry.get(b"Title").unwrap()), page));
            walk(document, pages, entry.get(b"First").ok(), depth + 1, out);
            next = entry
                .get(b"Next")
                .ok()
                .map(|object| object.as_reference().unwrap());
        }
    }
    let outlines = document
        .catalog()
        .unwrap()
        .get(b"Outlines")
        .and_then(|object| object.as_reference())
        .and_then(|id| document.get_dictionary(id))
        .expect("bookmarks");
    let mut out = Vec::new();
    walk(document, pages, outlines.get(b"First").ok(), 0, &mut out);
    out
}

/// Where a link leads: a page of the PDF (its index) and a top, or a URI.
type Leads = Result<(usize, f32), String>;

/// The link annotations of page `index`, top to bottom, and where each leads.
fn links_of(document: &lopdf::Document, pages: &[lopdf::ObjectId], index: usize) -> Vec<Leads> {
    let page = document.get_dictionary(pages[index]).unwrap();
    let Ok(annotations) = page.get(b"Annots") else {
        return Vec::new();
    };
    let mut found: Vec<(f32, Leads)> = deref(document, annotations)
        .as_array()
        .unwrap()
        .iter()
        .map(|annotation| {
            let annotation = deref(document, annotation).as_dict().unwrap();
            let rect = annotation.get(b"Rect").unwrap().as_array().unwrap();
            let top = rect[3].as_float().unwrap().max(rect[1].as_float().unwrap());
            let target = match annotation.get(b"Dest") {
                Ok(dest) => Ok(dest_page(document, pages, dest)),
                Err(_) => {
                    let action = deref(document, annotation.get(b"A").unwrap()).as_dict().unwrap();
                    Err(String::from_utf8_lossy(
                        deref(document, action.get(b"URI").unwrap()).as_str().unwrap(),
                    )
                    .into_owned())
                }
            };
            (top, target)
        })
        .collect();
    found.sort_by(|a, b| b.0.total_cmp(&a.0));
    found.into_iter().map(|(_, target)| target).collect()
}

fn link(page: &str, anchor: Option<&str>, text: &str) -> serde_json::Value {
    let reference = match anchor {
        Some(anchor) => json!({"kind": "anchor", "page": page, "anchor": anchor}),
        None => json!({"kind": "page", "page": page}),
    };
    json!({"object": "block", "type": "paragraph", "nodes": [
        {"object": "inline", "type": "link", "data": {"ref": reference}, "nodes": [
            {"object": "text", "leaves": [{"object": "leaf", "text": text, "marks": []}]}
        ]}
    ]})
}

#[test]
fn a_book_in_many_chunks_is_one_pdf_whose_links_numbers_and_bookmarks_follow_the_book() {
    let start = Document::from_json(json!({"object": "document", "nodes": [
        {"object": "block", "type": "paragraph", "nodes": [
            {"object": "text", "leaves": [{"object": "leaf", "text": "The first page.", "marks": []}]}
        ]},
        link("far", None, "Jump to the far page"),
        link("far", Some("deep-section"), "Jump to the deep section"),
        link("far", Some("no-such-section"), "Jump to a section that is not there"),
        {"object": "block", "type": "paragraph", "nodes": [
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "url", "url": "https://example.com/out"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "Leave the book", "marks": []}]}
            ]}
        ]},
        // An author's link that looks like a marker is no link: it would jump inside the book.
        {"object": "block", "type": "paragraph", "nodes": [
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "url", "url": "https://quire-pdf.invalid/#0"}}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": "A forged marker", "marks": []}]}
            ]}
        ]},
    ]}))
    .expect("a valid document");
    let setup = markdown("Setting up.\n");
    let deploy = markdown("Deploying.\n");
    let mut far_text = String::new();
    for line in 0..90 {
        far_text.push_str(&format!(
            "Filler paragraph {line} that pushes the next section down.\n\n"
        ));
    }
    far_text.push_str("## Deep section\n\nAt the bottom.\n");
    let far = markdown(&far_text);
    let appendix = markdown("The end.\n");
    let book = Book {
        title: "Chunked".into(),
        emoji: None,
        date: "today".into(),
        pages: vec![
            page("start", "Start here", 0, Some(&start)),
            page("guide", "Guide", 0, None),
            page("setup", "Setup", 1, Some(&setup)),
            page("deploy", "Deploy", 2, Some(&deploy)),
            page("far", "Far away", 1, Some(&far)),
            page("appendix", "Appendix", 0, Some(&appendix)),
        ],
    };
    // A chunk a page: start | guide + setup | deploy | far | appendix.
    let pdf = quire_pdf::render_in_chunks(book, &Links, &[], 1).expect("typeset");
    if let Ok(path) = std::env::var("QUIRE_PDF_KEEP_CHUNKED") {
        std::fs::write(path, &pdf.bytes).expect("the PDF written where asked");
    }
    let document = lopdf::Document::load_mem(&pdf.bytes).expect("a PDF lopdf reads");
    let pages: Vec<lopdf::ObjectId> = document.page_iter().collect();
    assert_eq!(pages.len(), pdf.pages);

    // Front matter in roman, the body from 1.
    let labels = document.catalog().unwrap().get(b"PageLabels").unwrap();
    let numbers = deref(&document, labels)
        .as_dict()
        .unwrap()
        .get(b"Nums")
        .unwrap()
        .as_array()
        .unwrap();
    assert_eq!(numbers.len(), 4, "{numbers:?}");
    assert_eq!(numbers[0].as_i64().unwrap(), 0);
    assert_eq!(
        deref(&document, &numbers[1])
            .as_dict()
            .unwrap()
            .get(b"S")
            .unwrap()
            .as_name()
            .unwrap(),
        b"r"
    );
    let front = usize::try_from(numbers[2].as_i64().unwrap()).unwrap();
    assert_eq!(
        deref(&document, &numbers[3])
            .as_dict()
            .unwrap()
            .get(b"S")
            .unwrap()
            .as_name()
            .unwrap(),
        b"D"
    );
    assert!(front >= 2, "a cover and contents");
    let info = document.trailer.get(b"Info").unwrap();
    assert_eq!(
        text_of(
            &document,
            deref(&document, info).as_dict().unwrap().get(b"Title").unwrap()
        ),
        "Chunked"
    );

    // The bookmarks follow the book's tree; a group opens where its first child starts.
    let marks = bookmarks(&document, &pages);
    let tree: Vec<(usize, &str)> = marks
        .iter()
        .map(|(depth, title, _)| (*depth, title.as_str()))
        .collect();
    assert_eq!(
        tree,
        [
            (0, "Start here"),
            (0, "Guide"),
            (1, "Setup"),
            (2, "Deploy"),
            (1, "Far away"),
            (0, "Appendix")
        ]
    );
    let page_of = |title: &str| marks.iter().find(|(_, t, _)| t == title).unwrap().2;
    assert_eq!(page_of("Start here"), front);
    assert_eq!(page_of("Guide"), page_of("Setup"));
    assert!(page_of("Deploy") > page_of("Setup"));
    assert!(page_of("Far away") > page_of("Deploy"));
    assert!(
        page_of("Appendix") > page_of("Far away") + 1,
        "the far page takes more than a page"
    );

    // The first chunk's links lead into the fourth chunk: the page, the section (pages later,
    // lower on its page than the top), the page again for a section not there; the way out
    // stays a URI.
    let links = links_of(&document, &pages, front);
    assert_eq!(links.len(), 4, "{links:?}");
    let (far_page, far_top) = *links[0].as_ref().unwrap();
    assert_eq!(far_page, page_of("Far away"));
    let (deep_page, _) = *links[1].as_ref().unwrap();
    assert!(
        deep_page > far_page && deep_page < page_of("Appendix"),
        "{links:?}"
    );
    assert_eq!(links[2].as_ref().unwrap(), &(far_page, far_top));
    assert_eq!(links[3].as_ref().unwrap_err(), "https://example.com/out");

    // The contents: each entry links to its page and reads that page's body number.
    let contents_links: Vec<usize> = (1..front)
        .flat_map(|index| links_of(&document, &pages, index))
        .map(|target| target.unwrap().0)
        .collect();
    let bookmarked: Vec<usize> = marks.iter().map(|(_, _, page)| *page).collect();
    assert_eq!(contents_links, bookmarked);

    if let Some(output) = run_tool("qpdf", &["--check"], &pdf.bytes) {
        let report =
            String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{report}");
        assert!(!report.to_lowercase().contains("warning"), "{report}");
    }

    let Some(text) = pages_text(&pdf.bytes) else {
        return;
    };
    assert_eq!(text.len(), pages.len());
    assert!(text[deep_page].contains("Deep section"), "{}", text[deep_page]);
    assert!(!text[deep_page - 1].contains("Deep section"));
    // Every title in the contents, in the book's order, with the body page it is on.
    let contents = text[1..front].join("\n");
    let mut from = 0;
    for (_, title, page) in &marks {
        let found = contents[from..]
            .find(title.as_str())
            .unwrap_or_else(|| panic!("{title:?} in:\n{contents}"));
        from += found + title.len();
        let line = contents[from..].lines().next().unwrap();
        let number: usize = line
            .trim_end()
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{line:?}"));
        assert_eq!(number, page - front + 1, "{title}: {line:?}");
        assert!(
            text[*page].contains(title.as_str()),
            "{title:?} on page {page}:\n{}",
            text[*page]
        );
    }
    // The footers: roman in the contents, the body numbered on from chunk to chunk.
    let footer = |page: &str| {
        page.lines()
            .rev()
            .find(|line| !line.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    assert_eq!(footer(&text[1]), "ii");
    for (index, page) in text.iter().enumerate().skip(front) {
        assert_eq!(
            footer(page),
            (index - front + 1).to_string(),
            "page {index}:\n{page}"
        );
    }
}

#[test]
fn a_book_without_pages_is_a_cover_and_empty_contents() {
    let book = Book {
        title: "Empty".into(),
        emoji: Some("📭".into()),
        date: "today".into(),
        pages: Vec::new(),
    };
    let pdf = render(book, &Links, &[]).expect("typeset");
    assert_eq!(pdf.pages, 2);
    let document = lopdf::Document::load_mem(&pdf.bytes).expect("a PDF lopdf reads");
    assert_eq!(document.page_iter().count(), 2);
    assert!(
        document.catalog().unwrap().get(b"Outlines").is_err(),
        "no bookmarks"
    );
    if let Some(output) = run_tool("qpdf", &["--check"], &pdf.bytes) {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}
