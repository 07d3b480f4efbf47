//! Documents made of constructs markdown can express survive document → markdown → document
//! (ignoring keys), including randomly generated inline formatting.

#![cfg(test)]

use quire_content::{
    Document, Leaf, Mark, Node, document_to_markdown, fill_missing_keys, markdown_to_document, strip_keys,
};
use serde_json::{Value, json};

fn text(value: &str, marks: &[&str]) -> Value {
    let marks: Vec<Value> = marks
        .iter()
        .map(|mark| json!({"object": "mark", "type": mark}))
        .collect();
    json!({"object": "text", "leaves": [{"object": "leaf", "text": value, "marks": marks}]})
}

fn block(block_type: &str, data: Value, nodes: Value) -> Value {
    json!({"object": "block", "type": block_type, "isVoid": false, "data": data, "nodes": nodes})
}

fn paragraph(nodes: Value) -> Value {
    block("paragraph", json!({}), nodes)
}

fn through_markdown(document: &Document) -> (String, Document) {
    let markdown = document_to_markdown(document, &|_| None);
    let mut parsed = markdown_to_document(&markdown).unwrap();
    strip_keys(&mut parsed);
    (markdown, parsed)
}

fn assert_preserved(value: Value) {
    let mut document = Document::from_json(value).unwrap();
    let mut counter = 0;
    fill_missing_keys(&mut document, &mut || {
        counter += 1;
        format!("k{counter}")
    });
    let (markdown, parsed) = through_markdown(&document);
    strip_keys(&mut document);
    let (expected, actual) = (
        serde_json::to_string_pretty(&document).unwrap(),
        serde_json::to_string_pretty(&parsed).unwrap(),
    );
    if expected != actual {
        panic!(
            "document changed through markdown:\n{markdown}\n--- expected:\n{expected}\n--- actual:\n{actual}"
        );
    }
}

#[test]
fn expressible_documents_survive_markdown() {
    let link = json!({"object": "inline", "type": "link", "isVoid": false, "data": {"ref": {"kind": "url", "url": "../a b.md#x"}},
    "nodes": [{"object": "text", "leaves": [
        {"object": "leaf", "text": "bold", "marks": [{"object": "mark", "type": "bold"}]},
        {"object": "leaf", "text": " ", "marks": []},
        {"object": "leaf", "text": "code`", "marks": [{"object": "mark", "type": "code"}]}
    ]}]});
    let empty = text("", &[]);
    let code_line = |line: &str| block("code-line", json!({}), json!([text(line, &[])]));
    let caption = json!([{"object": "fragment", "fragment": "caption", "nodes": [paragraph(json!([text("A caption", &[])]))]}]);
    assert_preserved(json!({"object": "document", "data": {}, "nodes": [
        block("heading-1", json!({}), json!([text("Title *not bold* #1", &[])])),
        block("heading-2", json!({"id": "custom"}), json!([text("Custom", &["italic"])])),
        paragraph(json!([
            {"object": "text", "leaves": [
                {"object": "leaf", "text": "1. Plain ", "marks": []},
                {"object": "leaf", "text": "bold", "marks": [{"object": "mark", "type": "bold"}]},
                {"object": "leaf", "text": " | pipes _ [x] ", "marks": []},
                {"object": "leaf", "text": "sup", "marks": [{"object": "mark", "type": "superscript"}]},
                {"object": "leaf", "text": "\nsecond line ", "marks": []}
            ]},
            link,
            empty.clone(),
            {"object": "inline", "type": "inline-math", "isVoid": true, "data": {"formula": "a+b"}},
            text(" end", &[])
        ])),
        block("list-unordered", json!({}), json!([
            block("list-item", json!({}), json!([paragraph(json!([text("one", &[])])),
                block("list-ordered", json!({"start": 5}), json!([block("list-item", json!({}), json!([paragraph(json!([text("five", &[])]))]))]))])),
            block("list-item", json!({}), json!([paragraph(json!([text("two", &["strikethrough"])]))]))
        ])),
        block("list-unordered", json!({}), json!([block("list-item", json!({}), json!([paragraph(json!([text("separate list", &[])]))]))])),
        block("list-tasks", json!({}), json!([block("list-item", json!({"checked": true}), json!([paragraph(json!([text("done", &[])]))]))])),
        block("blockquote", json!({}), json!([paragraph(json!([text("quoted", &[])]))])),
        block("code", json!({"syntax": "js", "title": "a.js", "overflow": "wrap"}), json!([code_line("let a = `x`;"), code_line(""), code_line("```")])),
        block("hint", json!({"style": "success"}), json!([paragraph(json!([text("Yes", &[])])), block("list-unordered", json!({}), json!([block("list-item", json!({}), json!([paragraph(json!([text("a", &[])]))]))]))])),
        block("tabs", json!({}), json!([
            block("tabs-item", json!({"title": "One"}), json!([paragraph(json!([text("first", &[])]))])),
            block("tabs-item", json!({"title": "Two & \"three\""}), json!([block("code", json!({}), json!([code_line("x")]))]))
        ])),
        {"object": "block", "type": "divider", "isVoid": true, "data": {}},
        {"object": "block", "type": "math", "isVoid": true, "data": {"formula": "\\sum_{i=1}^n i"}},
        block("images", json!({}), json!([
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "a.png"}, "alt": "An image"}, "fragments": []}
        ])),
        block("images", json!({}), json!([
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "b.png"}, "alt": "B"}, "fragments": caption},
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "c.png"}, "width": 200}, "fragments": []}
        ])),
        {"object": "block", "type": "embed", "isVoid": true, "data": {"url": "https://example.com/v"}},
        {"object": "block", "type": "file", "isVoid": true, "data": {"ref": {"kind": "url", "url": "f.pdf"}}, "fragments": [
            {"object": "fragment", "fragment": "caption", "nodes": [paragraph(json!([text("The file", &[])]))]}
        ]},
        {"object": "block", "type": "content-ref", "isVoid": true, "data": {"ref": {"kind": "url", "url": "other.md"}}},
        {"object": "block", "type": "reusable-content", "isVoid": true, "data": {"ref": {"kind": "url", "url": "inc.md"}}},
        {"object": "block", "type": "expandable", "isVoid": true, "data": {"defaultExpanded": true}, "fragments": [
            {"object": "fragment", "fragment": "expandable-title", "type": "expandable-title", "nodes": [paragraph(json!([text("Open me", &["bold"])]))]},
            {"object": "fragment", "fragment": "expandable-body", "type": "expandable-body", "nodes": [paragraph(json!([text("Inside", &[])]))]}
        ]},
        {"object": "block", "type": "table", "isVoid": true, "data": {
            "view": {"type": "grid", "columns": ["c0", "c1"], "hideHeader": false},
            "records": {
                "r0": {"orderIndex": "a0", "values": {"c0": "r0c0", "c1": "r0c1"}},
                "r1": {"orderIndex": "a1", "values": {"c1": "r1c1"}}
            },
            "definition": {
                "c0": {"id": "c0", "title": "Key | name", "type": "text", "textAlignment": "left"},
                "c1": {"id": "c1", "title": "Value", "type": "text", "textAlignment": "center"}
            }
        }, "fragments": [
            {"object": "fragment", "fragment": "r0c0", "nodes": [paragraph(json!([text("a|b", &["code"])]))]},
            {"object": "fragment", "fragment": "r0c1", "nodes": [paragraph(json!([{"object": "text", "leaves": [
                {"object": "leaf", "text": "x", "marks": [{"object": "mark", "type": "italic"}]},
                {"object": "leaf", "text": "\ny", "marks": []}
            ]}]))]},
            {"object": "fragment", "fragment": "r1c1", "nodes": [paragraph(json!([text("only", &[])]))]}
        ]}
    ]}));
}

/// A small deterministic generator (xorshift), so that failures reproduce.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const MARKS: &[&str] = &[
    "bold",
    "italic",
    "strikethrough",
    "code",
    "keyboard",
    "superscript",
    "subscript",
];
const WORDS: &[&str] = &[
    "a", "word", "x1", "\"q\"", "(p)", "*", "_", "__init__", "`", "``", "#", "1.", "-", "+", ">", "[", "]",
    "!", "<", "&amp;", "$", "|", "~", "\\", "é", "日本", "www.x.io", "a@b.io", "http://h", "{%", "=",
];

/// Inline content of random leaves: marked leaves never start or end with whitespace (markdown
/// cannot express that), plain leaves may be spaces or line breaks between words.
fn random_inlines(random: &mut Random) -> Vec<Node> {
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut nodes = Vec::new();
    for _ in 0..1 + random.below(8) {
        if random.below(8) == 0 {
            nodes.push(Node::text(std::mem::take(&mut leaves)));
            let mut data = quire_content::JsonMap::new();
            data.insert(
                "ref".into(),
                json!({"kind": "url", "url": random.pick(&["a.md", "https://x.io/y", "#z"])}),
            );
            let label = Leaf::new(
                random.pick(&["link", "a b", "*"]),
                vec![Mark::new(random.pick(&["bold", "italic", "code"]))],
            );
            nodes.push(Node::inline("link", data, vec![Node::text(vec![label])]));
            continue;
        }
        let mut marks: Vec<Mark> = MARKS
            .iter()
            .filter(|_| random.below(4) == 0)
            .map(|mark| Mark::new(mark))
            .collect();
        if marks.iter().any(|mark| mark.mark_type == "code") {
            marks.retain(|mark| {
                matches!(
                    mark.mark_type.as_str(),
                    "code" | "bold" | "italic" | "strikethrough"
                )
            });
        }
        let word_count = 1 + random.below(3);
        let words: Vec<&str> = (0..word_count).map(|_| random.pick(WORDS)).collect();
        leaves.push(Leaf::new(&words.join(" "), marks));
        if random.below(3) > 0 {
            leaves.push(Leaf::new(random.pick(&[" ", " ", "\n", ", "]), Vec::new()));
        }
    }
    nodes.push(Node::text(leaves));
    nodes
}

#[test]
fn random_inline_formatting_survives_markdown() {
    let mut random = Random(0x5eed_1234_abcd_9876);
    for case in 0..2000 {
        let document = Document::new(vec![Node::paragraph(random_inlines(&mut random))]);
        // What the parser produces for this content: canonical texts, merged leaves, no
        // whitespace at line edges.
        let (markdown, once) = through_markdown(&document);
        let (again_markdown, twice) = through_markdown(&once);
        assert_eq!(
            again_markdown, markdown,
            "case {case}: markdown is not a fixed point"
        );
        assert_eq!(
            twice, once,
            "case {case}: document is not a fixed point\n{markdown}"
        );
        let expected = quire_content::plain_text(&document);
        let expected: Vec<&str> = expected.split_whitespace().collect();
        let actual = quire_content::plain_text(&once);
        let actual: Vec<&str> = actual.split_whitespace().collect();
        assert_eq!(actual, expected, "case {case}: text changed\n{markdown}");
        assert_same_marks(&document, &once, case, &markdown);
    }
}

/// Every non-whitespace character keeps its marks.
fn assert_same_marks(expected: &Document, actual: &Document, case: usize, markdown: &str) {
    fn characters(document: &Document) -> Vec<(char, Vec<String>)> {
        let mut characters = Vec::new();
        fn walk(nodes: &[Node], characters: &mut Vec<(char, Vec<String>)>) {
            for node in nodes {
                for leaf in node.leaves() {
                    let mut marks: Vec<String> =
                        leaf.marks.iter().map(|mark| mark.mark_type.clone()).collect();
                    marks.sort();
                    characters.extend(
                        leaf.text
                            .chars()
                            .filter(|c| !c.is_whitespace())
                            .map(|c| (c, marks.clone())),
                    );
                }
                walk(node.children(), characters);
            }
        }
        walk(&document.nodes, &mut characters);
        characters
    }
    assert_eq!(
        characters(actual),
        characters(expected),
        "case {case}: marks changed\n{markdown}"
    );
}
