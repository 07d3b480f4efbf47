//! Properties of the content limits ([`quire_content::limits`]), on the real parser, renderer
//! and merge: whatever input is, converting it never panics nor overflows the stack, and whatever
//! is accepted (from markdown or from JSON) can be rendered as markdown that is accepted again,
//! stored as JSON that reads back, and merged three-way into a document that is readable.
//!
//! The generators aim at the limits' shapes: documents nested up to just under and just over
//! [`MAX_NESTING`] with every kind of container (quotes, lists and their items, hints, tabs,
//! steppers, expandables and table cells, whose fragments count two levels), and markdown built
//! from hostile pieces or nested up to past [`MAX_MARKDOWN_NESTING`]. Case counts are kept low
//! enough for the whole file to run in a few seconds in debug; `PROPTEST_CASES` raises them.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use quire_content::changes::encode_document;
use quire_content::limits::{self, MAX_MARKDOWN_NESTING, MAX_MARKS, MAX_NESTING};
use quire_content::merge::{self, MergeInput};
use quire_content::tree::{PageEntry, PageKind, Tree};
use quire_content::{
    Document, Fragment, JsonMap, Leaf, Mark, Node, document_to_markdown, fill_missing_keys,
    markdown_to_document,
};

// --- Documents built as JSON -------------------------------------------------------------

/// An inline of a generated paragraph.
#[derive(Debug, Clone)]
enum Inline {
    Text(String, Vec<&'static str>),
    Link(String, String, Vec<&'static str>),
    Code(String),
}

/// A block without nested blocks (the innermost block, and the siblings at each level).
#[derive(Debug, Clone)]
enum Flat {
    Paragraph(Vec<Inline>),
    Heading(u8, Vec<Inline>),
    Code(Option<String>, Vec<String>),
    Math(String),
    Divider,
    /// A table of rows x columns cells with these texts (cycled).
    Table(usize, usize, Vec<String>),
}

/// A container around the blocks of the level below.
#[derive(Debug, Clone, Copy)]
enum Wrap {
    Quote,
    Unordered,
    Ordered,
    Tasks,
    Hint,
    Tabs,
    Stepper,
    Expandable,
    TableCell,
}

impl Wrap {
    /// How many levels of nesting this container adds to its content.
    fn levels(self) -> usize {
        match self {
            Wrap::Quote | Wrap::Hint => 1,
            _ => 2,
        }
    }
}

/// One level of a generated document: a container, with sibling blocks around the deeper one.
#[derive(Debug, Clone)]
struct Level {
    wrap: Wrap,
    before: Vec<Flat>,
    after: Vec<Flat>,
}

/// Texts made of words and the characters markdown gives a meaning to.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => "[a-z]{1,8}( [a-z]{1,8}){0,3}",
        1 => "[a-z *_`#>|\\[\\]()<>{}%$~!\\\\-]{0,12}",
    ]
}

/// Marks of a leaf: a few of GitBook's types, sometimes one type repeated up to `MAX_MARKS`
/// times (JSON documents may repeat a type; the parser never does).
fn marks() -> impl Strategy<Value = Vec<&'static str>> {
    let mark = proptest::sample::select(vec![
        "bold",
        "italic",
        "strikethrough",
        "code",
        "keyboard",
        "superscript",
        "subscript",
    ]);
    prop_oneof![
        6 => proptest::collection::vec(mark.clone(), 0..=3),
        1 => (mark, 1..=MAX_MARKS).prop_map(|(mark, n)| vec![mark; n]),
    ]
}

fn inline() -> impl Strategy<Value = Inline> {
    prop_oneof![
        3 => (text(), marks()).prop_map(|(t, m)| Inline::Text(t, m)),
        1 => (text(), "[a-z]{1,6}(\\.md|/[a-z]{1,4}|#[a-z]{1,4})?", marks())
            .prop_map(|(t, u, m)| Inline::Link(t, u, m)),
        1 => "[a-z `*]{1,8}".prop_map(Inline::Code),
    ]
}

fn flat() -> impl Strategy<Value = Flat> {
    let inlines = || proptest::collection::vec(inline(), 1..4);
    prop_oneof![
        6 => inlines().prop_map(Flat::Paragraph),
        1 => (1u8..=3, inlines()).prop_map(|(level, i)| Flat::Heading(level, i)),
        1 => (
            proptest::option::of("[a-z]{1,6}"),
            proptest::collection::vec("[a-z `{}%$]{0,10}", 1..4)
        )
            .prop_map(|(syntax, lines)| Flat::Code(syntax, lines)),
        1 => "[a-z^+ ]{1,8}".prop_map(Flat::Math),
        1 => Just(Flat::Divider),
        1 => (1usize..=3, 1usize..=3, proptest::collection::vec(text(), 1..4))
            .prop_map(|(rows, columns, texts)| Flat::Table(rows, columns, texts)),
    ]
}

fn wrap() -> impl Strategy<Value = Wrap> {
    prop_oneof![
        3 => Just(Wrap::Quote),
        2 => Just(Wrap::Unordered),
        1 => Just(Wrap::Ordered),
        1 => Just(Wrap::Tasks),
        2 => Just(Wrap::Hint),
        1 => Just(Wrap::Tabs),
        1 => Just(Wrap::Stepper),
        1 => Just(Wrap::Expandable),
        1 => Just(Wrap::TableCell),
    ]
}

fn level() -> impl Strategy<Value = Level> {
    (
        wrap(),
        proptest::collection::vec(flat(), 0..2),
        proptest::collection::vec(flat(), 0..2),
    )
        .prop_map(|(wrap, before, after)| Level { wrap, before, after })
}

/// A document shape: levels from the outside in, the innermost block, and top-level siblings.
#[derive(Debug, Clone)]
struct Shape {
    levels: Vec<Level>,
    innermost: Flat,
    siblings: Vec<Flat>,
}

/// Shapes whose nesting is at most a target drawn mostly around [`MAX_NESTING`] (just under,
/// at, and just over it), sometimes anywhere below: outer levels are dropped until the nesting
/// is at most the target.
fn shape() -> impl Strategy<Value = Shape> {
    let target = prop_oneof![
        3 => (MAX_NESTING - 3)..=(MAX_NESTING + 3),
        1 => 1..=(MAX_NESTING + 3),
    ];
    (
        target,
        proptest::collection::vec(level(), 0..=MAX_NESTING + 4),
        flat(),
        proptest::collection::vec(flat(), 0..3),
    )
        .prop_map(|(target, mut levels, innermost, siblings)| {
            let inner = flat_depth(&innermost);
            while !levels.is_empty() && inner + levels.iter().map(|l| l.wrap.levels()).sum::<usize>() > target
            {
                levels.remove(0);
            }
            Shape {
                levels,
                innermost,
                siblings,
            }
        })
}

/// The nesting of a flat block alone (a paragraph holds texts, a link holds texts, ...).
fn flat_depth(flat: &Flat) -> usize {
    match flat {
        Flat::Paragraph(inlines) | Flat::Heading(_, inlines) => {
            if inlines.iter().any(|i| matches!(i, Inline::Link(..))) {
                3
            } else {
                2
            }
        }
        Flat::Code(..) => 3,
        Flat::Math(_) | Flat::Divider => 1,
        // Cells are fragments (two levels) holding paragraphs of texts.
        Flat::Table(..) => 4,
    }
}

fn object(pairs: &[(&str, Value)]) -> JsonMap {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
}

fn leaf_marks(marks: &[&str]) -> Vec<Mark> {
    marks.iter().map(|m| Mark::new(m)).collect()
}

fn inline_node(inline: &Inline) -> Node {
    match inline {
        Inline::Text(text, marks) => Node::text(vec![Leaf::new(text, leaf_marks(marks))]),
        Inline::Link(text, url, marks) => Node::inline(
            "link",
            object(&[("ref", json!({"kind": "url", "url": url}))]),
            vec![Node::text(vec![Leaf::new(text, leaf_marks(marks))])],
        ),
        Inline::Code(code) => Node::text(vec![Leaf::new(code, vec![Mark::new("code")])]),
    }
}

/// A GitBook table (as the markdown parser builds it) whose cells hold `cell(row, column)`.
fn table(rows: usize, columns: usize, cell: &mut dyn FnMut(usize, usize) -> Vec<Node>) -> Node {
    let ids: Vec<String> = (0..columns).map(|c| format!("c{c}")).collect();
    let definition: JsonMap = ids
        .iter()
        .map(|id| {
            (
                id.clone(),
                json!({"id": id, "title": format!("T{id}"), "type": "text", "textAlignment": "left"}),
            )
        })
        .collect();
    let mut records = JsonMap::new();
    let mut fragments = Vec::new();
    for r in 0..rows {
        let mut values = JsonMap::new();
        for (c, id) in ids.iter().enumerate() {
            let name = format!("r{r}c{c}");
            values.insert(id.clone(), Value::String(name.clone()));
            fragments.push(Fragment::new(&name, None, cell(r, c)));
        }
        records.insert(
            format!("r{r}"),
            json!({"orderIndex": format!("a{r}"), "values": values}),
        );
    }
    let mut node = Node::void_block(
        "table",
        object(&[
            (
                "view",
                json!({"type": "grid", "columns": ids, "hideHeader": false}),
            ),
            ("records", Value::Object(records)),
            ("definition", Value::Object(definition)),
        ]),
    );
    node.fragments = Some(fragments);
    node
}

fn flat_node(flat: &Flat) -> Node {
    match flat {
        Flat::Paragraph(inlines) => Node::paragraph(inlines.iter().map(inline_node).collect()),
        Flat::Heading(level, inlines) => Node::block(
            &format!("heading-{level}"),
            JsonMap::new(),
            inlines.iter().map(inline_node).collect(),
        ),
        Flat::Code(syntax, lines) => {
            let data = match syntax {
                Some(syntax) => object(&[("syntax", json!(syntax))]),
                None => JsonMap::new(),
            };
            let lines = lines
                .iter()
                .map(|line| Node::block("code-line", JsonMap::new(), vec![Node::plain_text(line)]))
                .collect();
            Node::block("code", data, lines)
        }
        Flat::Math(formula) => Node::void_block("math", object(&[("formula", json!(formula))])),
        Flat::Divider => Node::void_block("divider", JsonMap::new()),
        Flat::Table(rows, columns, texts) => {
            let mut next = 0;
            table(*rows, *columns, &mut |_, _| {
                next += 1;
                vec![Node::paragraph(vec![Node::plain_text(
                    &texts[next % texts.len()],
                )])]
            })
        }
    }
}

fn paragraph(text: &str) -> Node {
    Node::paragraph(vec![Node::plain_text(text)])
}

/// Wraps `content` (the blocks of the level below) in a container.
fn wrap_node(wrap: Wrap, content: Vec<Node>) -> Node {
    let item = |data: JsonMap, content| Node::block("list-item", data, content);
    match wrap {
        Wrap::Quote => Node::block("blockquote", JsonMap::new(), content),
        Wrap::Unordered => Node::block(
            "list-unordered",
            JsonMap::new(),
            vec![
                item(JsonMap::new(), content),
                item(JsonMap::new(), vec![paragraph("next")]),
            ],
        ),
        Wrap::Ordered => Node::block(
            "list-ordered",
            JsonMap::new(),
            vec![item(JsonMap::new(), content)],
        ),
        Wrap::Tasks => Node::block(
            "list-tasks",
            JsonMap::new(),
            vec![
                item(object(&[("checked", json!(true))]), content),
                item(object(&[("checked", json!(false))]), vec![paragraph("todo")]),
            ],
        ),
        Wrap::Hint => Node::block("hint", object(&[("style", json!("info"))]), content),
        Wrap::Tabs => Node::block(
            "tabs",
            JsonMap::new(),
            vec![Node::block(
                "tabs-item",
                object(&[("title", json!("Tab"))]),
                content,
            )],
        ),
        Wrap::Stepper => Node::block(
            "stepper",
            JsonMap::new(),
            vec![Node::block("stepper-step", JsonMap::new(), content)],
        ),
        Wrap::Expandable => {
            let mut node = Node::void_block("expandable", JsonMap::new());
            node.fragments = Some(vec![
                Fragment::new(
                    "expandable-title",
                    Some("expandable-title"),
                    vec![paragraph("Title")],
                ),
                Fragment::new("expandable-body", Some("expandable-body"), content),
            ]);
            node
        }
        Wrap::TableCell => {
            let mut content = Some(content);
            table(2, 2, &mut |r, c| match (r, c, content.take()) {
                (1, 1, Some(content)) => content,
                (_, _, unused) => {
                    content = unused;
                    vec![paragraph("cell")]
                }
            })
        }
    }
}

fn shape_document(shape: &Shape) -> Document {
    let mut blocks = vec![flat_node(&shape.innermost)];
    for level in shape.levels.iter().rev() {
        let content = level
            .before
            .iter()
            .map(flat_node)
            .chain(blocks)
            .chain(level.after.iter().map(flat_node))
            .collect();
        blocks = vec![wrap_node(level.wrap, content)];
    }
    blocks.extend(shape.siblings.iter().map(flat_node));
    Document::new(blocks)
}

/// The nesting of a document as documented in `limits`: top-level blocks are at 1, children
/// one level below their parent, fragments' nodes two levels below their owner.
fn nesting(nodes: &[Node], depth: usize) -> usize {
    nodes
        .iter()
        .map(|node| {
            let children = nesting(node.children(), depth + 1);
            let fragments = node
                .fragments()
                .iter()
                .map(|f| nesting(&f.nodes, depth + 2))
                .max()
                .unwrap_or(0);
            depth.max(children).max(fragments)
        })
        .max()
        .unwrap_or(0)
}

// --- Markdown ----------------------------------------------------------------------------

/// Pieces of markdown that open, close or confuse containers and spans.
const HOSTILE: &[&str] = &[
    ">",
    "> ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "- [ ] ",
    "- [x] ",
    "  ",
    "    ",
    "\t",
    "*",
    "**",
    "_",
    "~~",
    "[",
    "]",
    "](x)",
    "](<a b>)",
    "![",
    "{% hint %}",
    "{% hint style=\"info\" %}",
    "{% endhint %}",
    "{% tabs %}",
    "{% tab title=\"t\" %}",
    "{% endtab %}",
    "{% endtabs %}",
    "{% code %}",
    "{% endcode %}",
    "{% stepper %}",
    "{% step %}",
    "{% endstep %}",
    "{% endstepper %}",
    "<details>",
    "<summary>s</summary>",
    "</details>",
    "$$",
    "$",
    "|",
    "| --- |",
    "|-|",
    "`",
    "```",
    "\n",
    "\n",
    "\n\n",
    "x",
    "word ",
    "# ",
    "<br>",
    "<kbd>",
    "</kbd>",
    "\\",
    "&amp;",
    "<figure>",
    "<img src=\"a.png\">",
    "---",
    "***",
];

/// Hostile pieces, each repeated once or in runs of up to 80 (`>>>>`, `- - - -`, `[[[[`).
fn hostile_markdown() -> impl Strategy<Value = String> {
    let run = prop_oneof![4 => Just(1usize), 1 => 2..=80usize];
    proptest::collection::vec((proptest::sample::select(HOSTILE), run), 0..200)
        .prop_map(|pieces| pieces.iter().map(|(piece, n)| piece.repeat(*n)).collect())
}

/// A markdown container level, rendered around the markdown of the level below.
#[derive(Debug, Clone, Copy)]
enum MdWrap {
    Quote,
    Bullet,
    Ordered,
    Task,
    Hint,
    Tabs,
    Details,
    /// The content's first line after a list marker on the same line (`- - - x`).
    Emphasis,
    Link,
}

fn md_wrap() -> impl Strategy<Value = MdWrap> {
    prop_oneof![
        3 => Just(MdWrap::Quote),
        3 => Just(MdWrap::Bullet),
        1 => Just(MdWrap::Ordered),
        1 => Just(MdWrap::Task),
        2 => Just(MdWrap::Hint),
        1 => Just(MdWrap::Tabs),
        1 => Just(MdWrap::Details),
        1 => Just(MdWrap::Emphasis),
        1 => Just(MdWrap::Link),
    ]
}

fn indent(markdown: &str, first: &str, rest: &str) -> String {
    let mut out = String::new();
    for (i, line) in markdown.lines().enumerate() {
        out.push_str(if i == 0 { first } else { rest });
        out.push_str(line);
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str(first);
        out.push('\n');
    }
    out
}

fn render_md_wrap(wrap: MdWrap, inner: &str) -> String {
    match wrap {
        MdWrap::Quote => indent(inner, "> ", "> "),
        MdWrap::Bullet => indent(inner, "- ", "  "),
        MdWrap::Ordered => indent(inner, "1. ", "   "),
        MdWrap::Task => indent(inner, "- [ ] ", "  "),
        MdWrap::Hint => format!("{{% hint style=\"info\" %}}\n{inner}\n{{% endhint %}}\n"),
        MdWrap::Tabs => {
            format!("{{% tabs %}}\n{{% tab title=\"t\" %}}\n{inner}\n{{% endtab %}}\n{{% endtabs %}}\n")
        }
        MdWrap::Details => format!("<details>\n\n<summary>s</summary>\n\n{inner}\n\n</details>\n"),
        MdWrap::Emphasis => format!("*a {} b*", inner.trim_end()),
        MdWrap::Link => format!("[a {} b](x.md)", inner.trim_end()),
    }
}

/// Markdown nested `levels` deep, around a paragraph with marks and a link.
fn nested_markdown() -> impl Strategy<Value = (usize, String)> {
    let depth = prop_oneof![
        2 => 0..=12usize,
        2 => (MAX_NESTING - 4)..=(MAX_NESTING + 4),
        1 => (MAX_MARKDOWN_NESTING - 4)..=(MAX_MARKDOWN_NESTING + 8),
    ];
    depth
        .prop_flat_map(|depth| proptest::collection::vec(md_wrap(), depth))
        .prop_map(|wraps| {
            let mut markdown = "Some **bold [link](a.md) `code`** text".to_owned();
            // Spans only make sense inline: once a block wraps the text, spans stop.
            let mut inline = true;
            for wrap in wraps.iter().copied() {
                let is_span = matches!(wrap, MdWrap::Emphasis | MdWrap::Link);
                if is_span && !inline {
                    markdown = render_md_wrap(MdWrap::Quote, &markdown);
                } else {
                    inline &= is_span;
                    markdown = render_md_wrap(wrap, &markdown);
                }
            }
            (wraps.len(), markdown)
        })
}

// --- The properties ----------------------------------------------------------------------

/// The number of cases: `default`, or `PROPTEST_CASES` when set (for longer runs by hand).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default)
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

/// Everything an accepted document must allow: markdown that is accepted again (and renders
/// again), JSON that reads back, and a three-way merge with two edited versions of it.
fn check_accepted(document: &Document, edit_at: usize) -> Result<(), TestCaseError> {
    let markdown = document_to_markdown(document, &|_| None);
    let reparsed = markdown_to_document(&markdown).map_err(|error| {
        fail(format!(
            "the rendered markdown is refused: {error}\n--- markdown:\n{markdown}"
        ))
    })?;
    let again = document_to_markdown(&reparsed, &|_| None);
    markdown_to_document(&again)
        .map_err(|error| fail(format!("the re-rendered markdown is refused: {error}")))?;
    for document in [document, &reparsed] {
        let bytes = serde_json::to_vec(document).map_err(|e| fail(e.to_string()))?;
        let stored: Document = serde_json::from_slice(&bytes)
            .map_err(|error| fail(format!("the stored JSON does not read back: {error}")))?;
        prop_assert_eq!(&stored, document);
    }
    check_merge(document, edit_at)
}

/// The first text leaf of a block, depth first.
fn first_leaf(node: &mut Node) -> Option<&mut Leaf> {
    if node.leaves.as_ref().is_some_and(|l| !l.is_empty()) {
        return node.leaves.as_mut()?.first_mut();
    }
    if let Some(children) = node.nodes.as_mut() {
        for child in children {
            if let Some(leaf) = first_leaf(child) {
                return Some(leaf);
            }
        }
    }
    for fragment in node.fragments.iter_mut().flatten() {
        for child in &mut fragment.nodes {
            if let Some(leaf) = first_leaf(child) {
                return Some(leaf);
            }
        }
    }
    None
}

/// Merges `document` (base) with a version that appends a paragraph (main) and one that
/// edits the deepest-first text of a block, or removes the block (change).
fn check_merge(document: &Document, edit_at: usize) -> Result<(), TestCaseError> {
    let mut keys = 0usize;
    let mut base_doc = document.clone();
    fill_missing_keys(&mut base_doc, &mut || {
        keys += 1;
        format!("k{keys}")
    });
    let mut main_doc = base_doc.clone();
    let mut appended = paragraph("Appended by main.");
    appended.key = Some("main-1".into());
    main_doc.nodes.push(appended);
    let mut change_doc = base_doc.clone();
    let blocks = change_doc.nodes.len();
    let mut expected = blocks + 1;
    if blocks == 0 {
        let mut inserted = paragraph("Inserted by change.");
        inserted.key = Some("change-1".into());
        change_doc.nodes.push(inserted);
    } else {
        let index = (edit_at / 2) % blocks;
        let edited = first_leaf(&mut change_doc.nodes[index]);
        match edited {
            Some(leaf) if edit_at.is_multiple_of(2) => leaf.text.push_str(" (edited)"),
            _ => {
                change_doc.nodes.remove(index);
                expected -= 1;
            }
        }
    }

    let mut store = std::collections::HashMap::new();
    let mut page_tree = |document: &Document| {
        let (hash, bytes) = encode_document(document);
        let json = String::from_utf8(bytes).map_err(|e| fail(e.to_string()))?;
        store.insert(hash.clone(), json);
        let mut page = PageEntry::new("p", PageKind::Document, "Page", 0);
        page.document = Some(hash);
        let mut tree = Tree::default();
        tree.insert_page(page, None, None)
            .map_err(|e| fail(e.to_string()))?;
        Ok::<Tree, TestCaseError>(tree)
    };
    let base = page_tree(&base_doc)?;
    let main = page_tree(&main_doc)?;
    let change = page_tree(&change_doc)?;
    let lookup = |hashes: &[&str]| {
        hashes
            .iter()
            .map(|h| store.get(*h).cloned())
            .collect::<Vec<Option<String>>>()
    };
    let mut fresh = 0usize;
    let mut new_key = || {
        fresh += 1;
        format!("fresh{fresh}")
    };
    let outcome = merge::merge(MergeInput {
        base: &base,
        main: &main,
        change: &change,
        documents: &lookup,
        outlines: &|hashes| quire_content::raw_document::outlines_of(lookup(hashes)),
        blocks: &|hashes| vec![None; hashes.len()],
        new_key: &mut new_key,
        now: 1,
    });
    // Edits that do not touch the appended end merge cleanly.
    if blocks >= 2 && (edit_at / 2) % blocks < blocks - 1 {
        prop_assert!(outcome.is_clean(), "conflicts: {:?}", outcome.conflicts);
    }
    for (_, bytes) in &outcome.documents {
        let merged: Document = serde_json::from_slice(bytes)
            .map_err(|error| fail(format!("the merged JSON does not read back: {error}")))?;
        limits::check_document(&merged)
            .map_err(|error| fail(format!("the merged document is over a limit: {error}")))?;
        let markdown = document_to_markdown(&merged, &|_| None);
        markdown_to_document(&markdown)
            .map_err(|error| fail(format!("the merged document's markdown is refused: {error}")))?;
        if outcome.is_clean() {
            prop_assert_eq!(merged.nodes.len(), expected);
        }
    }
    if outcome.is_clean() {
        prop_assert_eq!(outcome.documents.len(), 1, "a document changed on both sides");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(96), ..ProptestConfig::default() })]

    /// A JSON document is accepted exactly when it is nested at most `MAX_NESTING` deep (the
    /// other limits are far), and every accepted one renders, re-reads, stores and merges.
    #[test]
    fn json_documents_up_to_the_nesting_limit(shape in shape(), edit_at in 0usize..64) {
        let document = shape_document(&shape);
        let depth = nesting(&document.nodes, 1);
        let value = serde_json::to_value(&document).map_err(|e| fail(e.to_string()))?;
        match Document::from_json(value) {
            Ok(accepted) => {
                prop_assert!(depth <= MAX_NESTING, "accepted at nesting {depth}");
                prop_assert_eq!(&accepted, &document);
                check_accepted(&accepted, edit_at)?;
            }
            Err(error) => {
                prop_assert!(depth > MAX_NESTING, "refused at nesting {depth}: {error}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(160), ..ProptestConfig::default() })]

    /// Markdown made of hostile pieces never panics; what is accepted passes `check_accepted`.
    #[test]
    fn hostile_markdown_is_accepted_or_refused(markdown in hostile_markdown(), edit_at in 0usize..64) {
        if let Ok(document) = markdown_to_document(&markdown) {
            check_accepted(&document, edit_at)?;
        }
    }

    /// Markdown nested up to past both nesting limits: shallow nesting is always accepted, deep
    /// nesting is refused with a nesting limit (never a crash), and what is accepted passes
    /// `check_accepted`.
    #[test]
    fn nested_markdown_is_accepted_or_refused(
        (levels, markdown) in nested_markdown(),
        edit_at in 0usize..64,
    ) {
        match markdown_to_document(&markdown) {
            Ok(document) => check_accepted(&document, edit_at)?,
            Err(error) => {
                prop_assert!(levels > 8, "refused at {levels} levels: {error}\n{markdown}");
                prop_assert!(
                    error.limit == "MAX_NESTING" || error.limit == "MAX_MARKDOWN_NESTING",
                    "{error}"
                );
            }
        }
    }
}

/// A known gap, not fixed here: markdown just under `MAX_MARKDOWN_BYTES` is accepted, but its
/// rendering escapes the characters markdown gives a meaning to (`*` becomes `\*`), so it can
/// be larger than the limit and is then refused when read back (2,097,102 bytes of
/// `a * b _ c | ` paragraphs render as 2,589,278 bytes). JSON documents have no bound on their
/// total text at all (a 10 MiB request can hold 9 MiB of text), so their markdown can be far
/// over the limit. Run with `--ignored` to see it.
#[test]
#[ignore = "known gap: the rendering of accepted content can exceed MAX_MARKDOWN_BYTES"]
fn markdown_at_the_size_limit_reads_back() {
    let paragraph = format!("{}\n\n", "a * b _ c | ".repeat(8));
    let markdown = paragraph.repeat(limits::MAX_MARKDOWN_BYTES / paragraph.len());
    let document = markdown_to_document(&markdown).unwrap();
    let rendered = document_to_markdown(&document, &|_| None);
    markdown_to_document(&rendered).unwrap();
}

/// A three-way merge of two documents within the limits never writes one over them. The base
/// has one paragraph, main inserts 63,000 before it and change 63,000 after it (126,001 nodes
/// each): merged, 252,002 nodes, over `MAX_NODES`, so the page is a conflict.
#[test]
fn merges_of_documents_within_the_limits_are_within_them() {
    let paragraphs = |prefix: &'static str| (0..63_000).map(move |i| paragraph(&format!("{prefix}{i}")));
    let base = Document::new(vec![paragraph("x")]);
    let mut main = Document::new(paragraphs("m").collect());
    main.nodes.push(paragraph("x"));
    let mut change = base.clone();
    change.nodes.extend(paragraphs("c"));
    let mut store = std::collections::HashMap::new();
    let trees: Vec<Tree> = [&base, &main, &change]
        .into_iter()
        .map(|document| {
            limits::check_document(document).unwrap();
            let (hash, bytes) = encode_document(document);
            store.insert(hash.clone(), String::from_utf8(bytes).unwrap());
            let mut page = PageEntry::new("p", PageKind::Document, "Page", 0);
            page.document = Some(hash);
            let mut tree = Tree::default();
            tree.insert_page(page, None, None).unwrap();
            tree
        })
        .collect();
    let lookup = |hashes: &[&str]| {
        hashes
            .iter()
            .map(|h| store.get(*h).cloned())
            .collect::<Vec<Option<String>>>()
    };
    let mut fresh = 0usize;
    let outcome = merge::merge(MergeInput {
        base: &trees[0],
        main: &trees[1],
        change: &trees[2],
        documents: &lookup,
        outlines: &|hashes| quire_content::raw_document::outlines_of(lookup(hashes)),
        blocks: &|hashes| vec![None; hashes.len()],
        new_key: &mut || {
            fresh += 1;
            format!("fresh{fresh}")
        },
        now: 1,
    });
    for (_, bytes) in &outcome.documents {
        let merged: Document = serde_json::from_slice(bytes).unwrap();
        limits::check_document(&merged).unwrap();
    }
    assert!(!outcome.is_clean(), "the merged page is over MAX_NODES");
    assert_eq!(outcome.conflicts.len(), 1);
    assert_eq!(outcome.conflicts[0].page, "p");
}

/// Found by `hostile_markdown_is_accepted_or_refused` in CI: a code span holding a run of 81
/// backticks was written back with an 82-backtick fence, which comrak never reads as a fence
/// (its limit is 80), so the span's text was parsed as 62 nested images, over the nesting limit.
#[test]
fn a_code_span_holding_81_backticks_reads_back() {
    let markdown = format!(">`{}{}{}`>", "![".repeat(62), "`".repeat(81), "](x)".repeat(62));
    let document = markdown_to_document(&markdown).expect("accepted");
    check_accepted(&document, 0).expect("reads back, merges");
}
