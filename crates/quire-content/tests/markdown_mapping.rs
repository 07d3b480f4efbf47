//! How each markdown construct maps to GitBook's document tree, and back.

#![cfg(test)]

use quire_content::{
    ContentRef, Document, document_to_markdown, markdown_to_document, parse_page, render_page,
};
use serde_json::{Value, json};

fn nodes(markdown: &str) -> Value {
    serde_json::to_value(markdown_to_document(markdown).unwrap()).unwrap()["nodes"].clone()
}

fn text(value: &str) -> Value {
    json!({"object": "text", "leaves": [{"object": "leaf", "text": value, "marks": []}]})
}

fn paragraph(value: &str) -> Value {
    json!({"object": "block", "type": "paragraph", "isVoid": false, "data": {}, "nodes": [text(value)]})
}

#[test]
fn headings_and_paragraphs() {
    assert_eq!(
        nodes("# A\n\n#### D\n\nText"),
        json!([
            {"object": "block", "type": "heading-1", "isVoid": false, "data": {}, "nodes": [text("A")]},
            {"object": "block", "type": "heading-3", "isVoid": false, "data": {}, "nodes": [text("D")]},
            paragraph("Text")
        ])
    );
}

#[test]
fn lists_map_to_gitbook_list_blocks() {
    let value = nodes("3. a\n4. b\n\n- [x] done\n- [ ] todo\n");
    assert_eq!(value[0]["type"], "list-ordered");
    assert_eq!(value[0]["data"], json!({"start": 3}));
    assert_eq!(
        value[0]["nodes"][1],
        json!({"object": "block", "type": "list-item", "isVoid": false, "data": {}, "nodes": [paragraph("b")]})
    );
    assert_eq!(value[1]["type"], "list-tasks");
    assert_eq!(value[1]["nodes"][0]["data"], json!({"checked": true}));
    assert_eq!(value[1]["nodes"][1]["data"], json!({"checked": false}));
}

#[test]
fn code_blocks_have_one_code_line_per_line() {
    let value =
        nodes("{% code title=\"a.rs\" lineNumbers=\"true\" %}\n```rust\nfn a() {}\n\n```\n{% endcode %}");
    assert_eq!(
        value,
        json!([{"object": "block", "type": "code", "isVoid": false,
        "data": {"syntax": "rust", "title": "a.rs", "lineNumbers": true},
        "nodes": [
            {"object": "block", "type": "code-line", "isVoid": false, "data": {}, "nodes": [text("fn a() {}")]},
            {"object": "block", "type": "code-line", "isVoid": false, "data": {}, "nodes": [text("")]}
        ]}])
    );
}

#[test]
fn gitbook_blocks() {
    let value = nodes(
        "{% hint style=\"warning\" %}\nCareful\n{% endhint %}\n\n{% tabs %}\n{% tab title=\"A\" %}\nin a\n{% endtab %}\n{% endtabs %}\n\n{% embed url=\"https://v.io/1\" %}\n\n{% file src=\"f.pdf\" %}\n\n{% content-ref url=\"p.md\" %}\n[p.md](p.md)\n{% endcontent-ref %}\n\n$$\nx^2\n$$\n\n***",
    );
    assert_eq!(
        value[0],
        json!({"object": "block", "type": "hint", "isVoid": false, "data": {"style": "warning"}, "nodes": [paragraph("Careful")]})
    );
    assert_eq!(
        value[1],
        json!({"object": "block", "type": "tabs", "isVoid": false, "data": {}, "nodes": [
            {"object": "block", "type": "tabs-item", "isVoid": false, "data": {"title": "A"}, "nodes": [paragraph("in a")]}
        ]})
    );
    assert_eq!(
        value[2],
        json!({"object": "block", "type": "embed", "isVoid": true, "data": {"url": "https://v.io/1"}})
    );
    assert_eq!(
        value[3],
        json!({"object": "block", "type": "file", "isVoid": true, "data": {"ref": {"kind": "url", "url": "f.pdf"}}})
    );
    assert_eq!(
        value[4],
        json!({"object": "block", "type": "content-ref", "isVoid": true, "data": {"ref": {"kind": "url", "url": "p.md"}}})
    );
    assert_eq!(
        value[5],
        json!({"object": "block", "type": "math", "isVoid": true, "data": {"formula": "x^2"}})
    );
    assert_eq!(
        value[6],
        json!({"object": "block", "type": "divider", "isVoid": true, "data": {}})
    );
}

#[test]
fn expandables_have_title_and_body_fragments() {
    let value = nodes("<details>\n<summary>More</summary>\nBody\n</details>");
    assert_eq!(
        value,
        json!([{"object": "block", "type": "expandable", "isVoid": true, "data": {}, "fragments": [
            {"object": "fragment", "fragment": "expandable-title", "type": "expandable-title", "nodes": [paragraph("More")]},
            {"object": "fragment", "fragment": "expandable-body", "type": "expandable-body", "nodes": [paragraph("Body")]}
        ]}])
    );
}

#[test]
fn images_become_image_blocks_with_caption_fragments() {
    let value = nodes(
        "![a](a.png)\n\n<figure><img src=\"b.png\" alt=\"b\"><figcaption><p>Cap</p></figcaption></figure>",
    );
    assert_eq!(
        value[0],
        json!({"object": "block", "type": "images", "isVoid": false, "data": {}, "nodes": [
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "a.png"}, "alt": "a"}, "fragments": []}
        ]})
    );
    assert_eq!(
        value[1]["nodes"][0]["fragments"],
        json!([{"object": "fragment", "fragment": "caption", "nodes": [paragraph("Cap")]}])
    );
}

#[test]
fn tables_map_to_grid_tables_with_cell_fragments() {
    let value = nodes("| Name | Size |\n| --- | --: |\n| **a** | 1 |\n| b |  |");
    let table = &value[0];
    assert_eq!(table["type"], "table");
    assert_eq!(table["isVoid"], true);
    assert_eq!(
        table["data"]["view"],
        json!({"type": "grid", "columns": ["c0", "c1"], "hideHeader": false})
    );
    assert_eq!(
        table["data"]["definition"]["c1"],
        json!({"id": "c1", "title": "Size", "type": "text", "textAlignment": "right"})
    );
    assert_eq!(
        table["data"]["records"],
        json!({
            "r0": {"orderIndex": "a0", "values": {"c0": "r0c0", "c1": "r0c1"}},
            "r1": {"orderIndex": "a1", "values": {"c0": "r1c0"}}
        })
    );
    assert_eq!(table["fragments"][0]["fragment"], "r0c0");
    assert_eq!(
        table["fragments"][0]["nodes"][0]["nodes"][0]["leaves"][0]["marks"][0]["type"],
        "bold"
    );
    assert_eq!(table["fragments"].as_array().unwrap().len(), 3);
}

/// GitBook writes a cell of several paragraphs or a list as inline HTML (the Beefree SDK docs
/// do, in many tables): those tags make blocks of the cell, not literal `<p>` text on the page.
#[test]
fn html_paragraphs_and_lists_in_table_cells_become_blocks() {
    let value = nodes(
        "| A | B |\n| - | - |\n| x | <p>Some actions:</p><ul><li>Preview</li><li><code>/send</code> test</li></ul> |\n| y | <p>one</p><p><strong>Note:</strong> two</p> |",
    );
    let fragments = value[0]["fragments"].as_array().unwrap();
    let cell = |name: &str| {
        fragments
            .iter()
            .find(|fragment| fragment["fragment"] == name)
            .map(|fragment| fragment["nodes"].clone())
            .unwrap()
    };
    let list_cell = cell("r0c1");
    assert_eq!(list_cell[0], paragraph("Some actions:"));
    assert_eq!(list_cell[1]["type"], "list-unordered");
    let items = list_cell[1]["nodes"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["type"], "list-item");
    assert_eq!(items[0]["nodes"][0], paragraph("Preview"));
    assert_eq!(
        items[1]["nodes"][0]["nodes"][0]["leaves"][0]["marks"][0]["type"],
        "code"
    );
    assert_eq!(items[1]["nodes"][0]["nodes"][0]["leaves"][1]["text"], " test");
    let paragraphs = cell("r1c1");
    assert_eq!(paragraphs.as_array().unwrap().len(), 2);
    assert_eq!(paragraphs[0], paragraph("one"));
    assert_eq!(paragraphs[1]["nodes"][0]["leaves"][0]["marks"][0]["type"], "bold");
    let rendered = serde_json::to_string(&value).unwrap();
    assert!(
        !rendered.contains("<p>") && !rendered.contains("<li>"),
        "{rendered}"
    );
    // Read back as markdown and parsed again, the cells keep their lists and paragraphs.
    let document = markdown_to_document(
        "| A | B |\n| - | - |\n| x | <p>Some actions:</p><ul><li>Preview</li><li><code>/send</code> test</li></ul> |",
    )
    .unwrap();
    let markdown = document_to_markdown(&document, &|_| None);
    assert_eq!(
        serde_json::to_value(markdown_to_document(&markdown).unwrap()).unwrap(),
        serde_json::to_value(&document).unwrap(),
        "{markdown}"
    );
}

#[test]
fn raw_html_is_kept_as_an_html_code_block() {
    let value = nodes("<form>\n<input name=\"q\">\n</form>");
    assert_eq!(value[0]["type"], "code");
    assert_eq!(value[0]["data"], json!({"syntax": "html"}));
    assert_eq!(value[0]["nodes"].as_array().unwrap().len(), 3);
    // A `<div>` without a meaning of its own gives its content.
    let value = nodes("<div>\n<b>x</b>\n</div>");
    assert_eq!(value[0]["type"], "paragraph");
    assert_eq!(value[0]["nodes"][0]["leaves"][0]["marks"][0]["type"], "bold");
}

/// GitBook's own export writes these tables (a card view with a cover and a target, a hidden
/// header with widths and block cells).
#[test]
fn gitbook_html_tables_become_table_blocks() {
    let cards = nodes(concat!(
        "<table data-view=\"cards\"><thead><tr><th></th><th></th>",
        "<th data-hidden data-card-cover data-type=\"files\"></th>",
        "<th data-hidden data-card-target data-type=\"content-ref\"></th></tr></thead><tbody>\n",
        "<tr><td><strong>Start</strong></td><td>First steps &#x26; more</td>",
        "<td><a href=\".gitbook/assets/cover.png\">cover.png</a></td><td><a href=\"start.md\">start.md</a></td></tr>\n",
        "</tbody></table>"
    ));
    let table = &cards[0];
    assert_eq!(table["type"], "table");
    assert_eq!(
        table["data"]["view"],
        json!({"type": "cards", "columns": ["c0", "c1"], "cardSize": "medium",
               "coverDefinition": "c2", "targetDefinition": "c3"})
    );
    assert_eq!(table["data"]["definition"]["c2"]["type"], "image");
    assert_eq!(table["data"]["definition"]["c3"]["type"], "content-ref");
    let values = &table["data"]["records"]["r0"]["values"];
    assert_eq!(
        values["c2"],
        json!({"kind": "url", "url": ".gitbook/assets/cover.png"})
    );
    assert_eq!(values["c3"], json!({"kind": "url", "url": "start.md"}));
    let fragments = table["fragments"].as_array().unwrap();
    assert_eq!(fragments.len(), 2);
    assert_eq!(fragments[0]["fragment"], "r0c0");
    assert_eq!(
        fragments[0]["nodes"][0]["nodes"][0]["leaves"][0]["marks"][0]["type"],
        "bold"
    );
    assert_eq!(
        fragments[1]["nodes"][0]["nodes"][0]["leaves"][0]["text"],
        "First steps & more"
    );

    let grid = nodes(concat!(
        "<table data-header-hidden><thead><tr><th width=\"134\">Name</th><th align=\"center\">Value</th></tr></thead>",
        "<tbody><tr><td><code>floor</code></td><td><pre class=\"language-go\"><code class=\"lang-go\">Floor(x)\n</code></pre>",
        "<ul><li>one</li><li><p>two</p><ul><li>nested</li></ul></li></ul></td></tr></tbody></table>"
    ));
    let table = &grid[0];
    assert_eq!(
        table["data"]["view"],
        json!({"type": "grid", "columns": ["c0", "c1"], "hideHeader": true,
               "columnWidths": {"c0": 134.0}, "useNewSizing": true})
    );
    assert_eq!(table["data"]["definition"]["c0"]["title"], "Name");
    assert_eq!(table["data"]["definition"]["c1"]["textAlignment"], "center");
    let cell = &table["fragments"][1]["nodes"];
    assert_eq!(cell[0]["type"], "code");
    assert_eq!(cell[0]["data"], json!({"syntax": "go"}));
    assert_eq!(cell[1]["type"], "list-unordered");
    assert_eq!(cell[1]["nodes"][1]["nodes"][1]["type"], "list-unordered");
}

#[test]
fn html_images_anchors_and_inline_tags_become_content() {
    let value = nodes("<img src=\"shot.png\" alt=\"Shot\" width=\"600\">");
    assert_eq!(value[0]["type"], "images");
    assert_eq!(
        value[0]["nodes"][0]["data"],
        json!({"ref": {"kind": "url", "url": "shot.png"}, "alt": "Shot", "width": 600})
    );
    let value = nodes("<div align=\"left\"><img src=\"a.png\" alt=\"\"></div>");
    assert_eq!(value[0]["type"], "images");
    assert_eq!(value[0]["data"], json!({"align": "left"}));
    let value = nodes("<figure><img src=\"b.png\" alt=\"\"></figure>");
    assert_eq!(value[0]["type"], "images");
    // `<a name>` in a paragraph marks a place: an empty link to it.
    let value = nodes("Before <a name=\"here\"></a>after <span data-gb-custom-inline>📂</span> <u>u</u>");
    let paragraph = &value[0]["nodes"];
    assert_eq!(paragraph[1]["type"], "link");
    assert_eq!(
        paragraph[1]["data"]["ref"],
        json!({"kind": "url", "url": "#here"})
    );
    assert_eq!(paragraph[2]["leaves"][0]["text"], "after 📂 u");
    // An inline `<img>` keeps its size.
    let value = nodes("Click <img src=\"i.png\" alt=\"\" data-size=\"line\"> then");
    assert_eq!(value[0]["nodes"][1]["type"], "inline-image");
    assert_eq!(value[0]["nodes"][1]["data"]["size"], "line");
    // `List<String>` is not a tag to drop.
    let value = nodes("A List<String> here");
    assert_eq!(value[0]["nodes"][0]["leaves"][0]["text"], "A List<String> here");
}

#[test]
fn references_render_through_the_resolver() {
    let document = Document::from_json(json!({"object": "document", "data": {}, "nodes": [
        {"object": "block", "type": "paragraph", "data": {}, "nodes": [
            {"object": "text", "leaves": [{"object": "leaf", "text": "See ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "p1"}}, "nodes": [text("setup")]},
            {"object": "text", "leaves": [{"object": "leaf", "text": ", ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "anchor", "anchor": "usage"}}, "nodes": [text("usage")]},
            {"object": "text", "leaves": [{"object": "leaf", "text": " and ", "marks": []}]},
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "unknown"}}, "nodes": [text("gone")]},
            text(".")
        ]},
        {"object": "block", "type": "file", "isVoid": true, "data": {"ref": {"kind": "file", "file": "f1"}}}
    ]}))
    .unwrap();
    let resolve = |content_ref: &ContentRef| match content_ref {
        ContentRef::Page { page, .. } if page == "p1" => Some("guide/setup.md".to_owned()),
        ContentRef::File { file, .. } if file == "f1" => Some(".gitbook/assets/manual.pdf".to_owned()),
        _ => None,
    };
    assert_eq!(
        document_to_markdown(&document, &resolve),
        "See [setup](guide/setup.md), [usage](#usage) and [gone](unknown).\n\n{% file src=\".gitbook/assets/manual.pdf\" %}\n"
    );
}

#[test]
fn pages_carry_frontmatter() {
    let markdown = "---\ndescription: Install it\nlayout:\n  width: wide\n---\n\n# Install\n";
    let page = parse_page(markdown).unwrap();
    assert_eq!(page.frontmatter.description.as_deref(), Some("Install it"));
    assert_eq!(page.document.nodes.len(), 1);
    assert_eq!(render_page(&page, &|_| None), markdown);
    assert!(parse_page("---\n: [\n---\n").is_err());
    assert_eq!(markdown_to_document(markdown).unwrap().nodes.len(), 1);
}

/// HTML nested far past `MAX_HTML_NESTING` (blocks, text-level tags, tables in cells) converts
/// without deep recursion, keeps its text, and gives a document within the limits.
#[test]
fn deeply_nested_html_keeps_its_text_within_the_limits() {
    for (open, close) in [
        ("<div>", "</div>"),
        ("<span>", "</span>"),
        ("<ul><li>", "</li></ul>"),
        ("<table><tr><td>", "</td></tr></table>"),
        ("<blockquote><b>", "</b></blockquote>"),
    ] {
        let markdown = format!(
            "<div>{}deep text{}</div>",
            open.repeat(5_000),
            close.repeat(5_000)
        );
        let document = markdown_to_document(&markdown).unwrap_or_else(|e| panic!("{open}: {e}"));
        document.validate().unwrap();
        let json = serde_json::to_string(&document).unwrap();
        assert!(json.contains("deep text"), "{open}");
    }
}
