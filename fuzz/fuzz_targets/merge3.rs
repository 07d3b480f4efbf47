//! Three markdown texts separated by NUL bytes (base, main, change; a missing one is the base)
//! become the three versions of one page's document, keys carried from the base as the server
//! does, and are merged three-way. Every merged document must read back from its stored JSON,
//! be within the limits, and render to markdown that is accepted again.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use quire_content::changes::{carry_keys, encode_document};
use quire_content::merge::{MergeInput, merge};
use quire_content::tree::{PageEntry, PageKind, Tree};
use quire_content::{Document, document_to_markdown, fill_missing_keys, limits, markdown_to_document};

fn parse(bytes: &[u8]) -> Option<Document> {
    markdown_to_document(std::str::from_utf8(bytes).ok()?).ok()
}

fn page_tree(hash: String) -> Tree {
    let mut page = PageEntry::new("p", PageKind::Document, "Page", 0);
    page.document = Some(hash);
    let mut tree = Tree::default();
    tree.insert_page(page, None, None).unwrap();
    tree
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |byte| *byte == 0);
    let base_bytes = parts.next().unwrap_or_default();
    let main_bytes = parts.next().unwrap_or(base_bytes);
    let change_bytes = parts.next().unwrap_or(base_bytes);
    let (Some(mut base), Some(mut main), Some(mut change)) =
        (parse(base_bytes), parse(main_bytes), parse(change_bytes))
    else {
        return;
    };
    let mut counter = 0usize;
    let mut key = |prefix: &str| {
        counter += 1;
        format!("{prefix}{counter}")
    };
    fill_missing_keys(&mut base, &mut || key("b"));
    carry_keys(&base, &mut main);
    fill_missing_keys(&mut main, &mut || key("m"));
    carry_keys(&base, &mut change);
    fill_missing_keys(&mut change, &mut || key("c"));

    let mut store = HashMap::new();
    let mut trees = Vec::new();
    for document in [&base, &main, &change] {
        let (hash, bytes) = encode_document(document);
        store.insert(hash.clone(), String::from_utf8(bytes).expect("JSON is UTF-8"));
        trees.push(page_tree(hash));
    }
    let lookup = |hashes: &[&str]| hashes.iter().map(|h| store.get(*h).cloned()).collect::<Vec<Option<String>>>();
    let mut fresh = 0usize;
    let mut new_key = || {
        fresh += 1;
        format!("fresh{fresh}")
    };
    let outcome = merge(MergeInput {
        base: &trees[0],
        main: &trees[1],
        change: &trees[2],
        documents: &lookup,
        outlines: &|hashes| quire_content::raw_document::outlines_of(lookup(hashes)),
        blocks: &|hashes| vec![None; hashes.len()],
        new_key: &mut new_key,
        now: 1,
    });
    outcome.tree.check().unwrap();
    for (hash, bytes) in &outcome.documents {
        let merged: Document = serde_json::from_slice(bytes).unwrap();
        assert_eq!(&encode_document(&merged).0, hash, "the hash of the stored bytes");
        limits::check_document(&merged).unwrap();
        let rendered = document_to_markdown(&merged, &|_| None);
        if let Err(error) = markdown_to_document(&rendered) {
            panic!("the rendering of a merged document is refused: {error}\n{rendered}");
        }
    }
});
