//! Each block, inline and mark of the document model, rendered alone: the HTML it becomes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use quire_content::{Document, markdown_to_document};
use quire_reader::{FileTarget, PageTarget, Resolver, render_document};
use serde_json::{Value, json};

struct TestResolver;

impl Resolver for TestResolver {
    fn page(&self, page: &str, space: Option<&str>) -> Option<PageTarget> {
        (page == "p1" && space.is_none()).then(|| PageTarget {
            url: "/guide".to_owned(),
            title: "The guide".to_owned(),
            emoji: Some("📘".to_owned()),
        })
    }

    fn file(&self, file: &str, _space: Option<&str>) -> Option<FileTarget> {
        match file {
            "f1" => Some(FileTarget {
                url: "/files/f1.png".to_owned(),
                name: "diagram.png".to_owned(),
                content_type: "image/png".to_owned(),
                size: 2_400,
                dimensions: Some((800, 400)),
            }),
            "f2" => Some(FileTarget {
                url: "/files/f2.pdf".to_owned(),
                name: "manual.pdf".to_owned(),
                content_type: "application/pdf".to_owned(),
                size: 1_260_000,
                dimensions: None,
            }),
            _ => None,
        }
    }

    fn reusable_content(&self, id: &str, _space: Option<&str>) -> Option<Document> {
        (id == "r1").then(|| markdown_to_document("Shared *text*.").unwrap())
    }

    fn condition(&self, expression: &str) -> bool {
        expression == "visitor.claims.pro"
    }

    fn user(&self, user: &str) -> Option<String> {
        (user == "u1").then(|| "Ann".to_owned())
    }
}

fn from_markdown(markdown: &str) -> String {
    render_document(&markdown_to_document(markdown).unwrap(), &TestResolver).html
}

fn from_json(nodes: Value) -> String {
    let document: Document =
        serde_json::from_value(json!({"object": "document", "data": {}, "nodes": nodes})).unwrap();
    render_document(&document, &TestResolver).html
}

fn text(text: &str) -> Value {
    json!({"object": "text", "leaves": [{"object": "leaf", "text": text, "marks": []}]})
}

fn paragraph(nodes: Value) -> Value {
    json!({"object": "block", "type": "paragraph", "nodes": nodes})
}

#[test]
fn paragraphs_and_every_mark() {
    assert_eq!(from_markdown("Hello *world*."), "<p>Hello <em>world</em>.</p>");
    assert_eq!(
        from_markdown("**b** *i* ~~s~~ `c` <kbd>K</kbd> x<sup>2</sup> H<sub>2</sub>O ***bi*** **b `bc`**"),
        "<p><strong>b</strong> <em>i</em> <s>s</s> <code>c</code> <kbd>K</kbd> x<sup>2</sup> H<sub>2</sub>O \
         <strong><em>bi</em></strong> <strong>b <code>bc</code></strong></p>"
    );
    assert_eq!(
        from_markdown(
            "<mark style=\"color:red;background-color:yellow;\">both</mark> <mark style=\"color:$primary;\">p</mark>"
        ),
        "<p><mark class=\"color-red bg-yellow\">both</mark> <span class=\"color-primary\">p</span></p>"
    );
    assert_eq!(from_markdown("a\\\nb"), "<p>a<br>b</p>");
    // Colors that are not GitBook tokens never reach a class or a style.
    let html = from_json(json!([paragraph(
        json!([{"object": "text", "leaves": [{"object": "leaf", "text": "x",
        "marks": [{"object": "mark", "type": "color", "data": {"text": "red;}</style><script>", "background": "default"}}]}]}])
    )]));
    assert_eq!(html, "<p><span class=\"\">x</span></p>");
    // Unknown marks render their text.
    let html = from_json(json!([paragraph(
        json!([{"object": "text", "leaves": [{"object": "leaf", "text": "x",
        "marks": [{"object": "mark", "type": "sparkle"}]}]}])
    )]));
    assert_eq!(html, "<p>x</p>");
}

#[test]
fn headings_have_anchors_self_links_and_an_outline() {
    let document =
        markdown_to_document("# Intro\n\n## Setup\n\n## Setup\n\n### Deep <a href=\"#own\" id=\"own\"></a>")
            .unwrap();
    let rendered = render_document(&document, &TestResolver);
    assert_eq!(
        rendered.html,
        "<h2 id=\"intro\">Intro<a class=\"anchor\" href=\"#intro\" aria-label=\"Link to this section\"></a></h2>\
         <h3 id=\"setup\">Setup<a class=\"anchor\" href=\"#setup\" aria-label=\"Link to this section\"></a></h3>\
         <h3 id=\"setup-1\">Setup<a class=\"anchor\" href=\"#setup-1\" aria-label=\"Link to this section\"></a></h3>\
         <h4 id=\"own\">Deep<a class=\"anchor\" href=\"#own\" aria-label=\"Link to this section\"></a></h4>"
    );
    let outline: Vec<(String, u8)> = rendered
        .outline
        .iter()
        .map(|entry| (entry.anchor.clone(), entry.level))
        .collect();
    assert_eq!(
        outline,
        [
            ("intro".into(), 1),
            ("setup".into(), 2),
            ("setup-1".into(), 2),
            ("own".into(), 3)
        ]
    );
    // The anchors are search's section anchors.
    let anchors: Vec<String> = quire_content::sections(&document)
        .into_iter()
        .map(|section| section.anchor)
        .collect();
    assert_eq!(anchors, ["intro", "setup", "setup-1", "own"]);
    // A page whose highest heading is `##` starts at <h2>.
    assert!(from_markdown("## Only\n\n### Below").starts_with("<h2 id=\"only\">"));
    // The page's own ids are not taken by headings.
    assert!(from_markdown("# Q content").starts_with("<h2 id=\"q-content-1\">"));
}

#[test]
fn lists_and_task_lists() {
    assert_eq!(from_markdown("- a\n- b"), "<ul><li>a</li><li>b</li></ul>");
    assert_eq!(
        from_markdown("3. a\n4. b"),
        "<ol start=\"3\"><li>a</li><li>b</li></ol>"
    );
    assert_eq!(
        from_markdown("- a\n  - b"),
        "<ul><li><p>a</p><ul><li>b</li></ul></li></ul>"
    );
    assert_eq!(
        from_markdown("- [x] done\n- [ ] todo"),
        "<ul class=\"tasks\"><li><input type=\"checkbox\" disabled checked aria-label=\"Done\"> done</li>\
         <li><input type=\"checkbox\" disabled aria-label=\"To do\"> todo</li></ul>"
    );
}

#[test]
fn quotes_dividers_and_math() {
    assert_eq!(
        from_markdown("> quoted"),
        "<blockquote><p>quoted</p></blockquote>"
    );
    assert_eq!(from_markdown("***"), "<hr>");
    let block = from_markdown("$$\nx < y^2\n$$");
    assert!(
        block.starts_with("<div class=\"math\"><math display=\"block\">"),
        "{block}"
    );
    assert!(
        block.contains("<mo>&lt;</mo>") && block.contains("<msup>"),
        "{block}"
    );
    let inline = from_markdown("Area $$\\pi r^2$$.");
    assert!(
        inline.starts_with("<p>Area <math display=\"inline\"><mi>π</mi>") && inline.ends_with("</math>.</p>"),
        "{inline}"
    );
    // What does not parse shows as its source.
    assert_eq!(
        from_markdown("$$\n\\frac{<script>\n$$"),
        "<div class=\"math\"><code class=\"tex\">\\frac{&lt;script&gt;</code></div>"
    );
}

#[test]
fn code_blocks_are_highlighted_with_title_and_copy_button() {
    let html = from_markdown(
        "{% code title=\"main.rs\" lineNumbers=\"true\" %}\n```rust\nfn main() {}\n```\n{% endcode %}",
    );
    assert_eq!(
        html,
        "<figure class=\"code line-numbers\"><figcaption>main.rs</figcaption><div class=\"code-body\">\
         <button type=\"button\" class=\"copy\" hidden>Copy</button><pre data-lang=\"Rust\"><code>\
         <span class=\"line\"><span class=\"hk\">fn </span><span class=\"hf\">main</span>() {}</span></code></pre></div></figure>"
    );
    let plain = from_markdown("```\n<b>x</b>\n```");
    assert!(
        plain.contains("<pre><code>&lt;b&gt;x&lt;/b&gt;</code></pre>"),
        "{plain}"
    );
}

#[test]
fn hints_of_each_style() {
    for style in ["info", "success", "warning", "danger"] {
        let html = from_markdown(&format!("{{% hint style=\"{style}\" %}}\nText\n{{% endhint %}}"));
        assert!(
            html.starts_with(&format!(
                "<div class=\"hint hint-{style}\" role=\"note\" aria-label=\""
            )),
            "{html}"
        );
        assert!(
            html.ends_with("<div class=\"hint-body\"><p>Text</p></div></div>"),
            "{html}"
        );
    }
}

#[test]
fn tabs_switch_without_script() {
    let html = from_markdown(
        "{% tabs %}\n{% tab title=\"One\" %}\nFirst\n{% endtab %}\n{% tab title=\"Two\" %}\nSecond\n{% endtab %}\n{% endtabs %}",
    );
    assert_eq!(
        html,
        "<div class=\"tabs\"><input type=\"radio\" name=\"tabs-1\" id=\"tabs-1-0\" checked><label for=\"tabs-1-0\">One</label>\
         <div class=\"tab-panel\"><p>First</p></div><input type=\"radio\" name=\"tabs-1\" id=\"tabs-1-1\"><label for=\"tabs-1-1\">Two</label>\
         <div class=\"tab-panel\"><p>Second</p></div></div>"
    );
}

#[test]
fn expandables_are_details() {
    assert_eq!(
        from_markdown("<details>\n<summary>More *info*</summary>\n\nBody\n\n</details>"),
        "<details class=\"expandable\" id=\"more-info\"><summary>More <em>info</em></summary><div class=\"expandable-body\"><p>Body</p></div></details>"
    );
    assert!(
        from_markdown("<details open>\n<summary>S</summary>\n\nB\n\n</details>")
            .starts_with("<details class=\"expandable\" open id=\"s\">")
    );
}

/// Links point at expandable blocks by their title, as on GitBook (imported content does): the
/// block has the title's anchor, unique in the page, and GitBook's where it differs.
#[test]
fn expandables_answer_to_their_titles_anchors() {
    let html = from_markdown(
        "## Delete row\n\n<details>\n<summary>Delete row</summary>\n\nA.\n\n</details>\n\n\
         <details>\n<summary>Vue.js hooks</summary>\n\nB.\n\n</details>\n\n\
         <details>\n<summary></summary>\n\nC.\n\n</details>\n",
    );
    assert!(html.contains("<h2 id=\"delete-row\">"), "{html}");
    assert!(
        html.contains("<details class=\"expandable\" id=\"delete-row-1\"><summary>Delete row</summary>"),
        "{html}"
    );
    assert!(
        html.contains(
            "<summary><span class=\"anchor-alias\" id=\"vue.js-hooks\"></span>Vue.js hooks</summary>"
        ),
        "{html}"
    );
    assert!(
        html.contains("<details class=\"expandable\"><summary></summary>"),
        "{html}"
    );
}

#[test]
fn tables_with_alignment_and_formatting() {
    assert_eq!(
        from_markdown("| A | B |\n| :-: | --: |\n| **x** | [y](https://y.example) |"),
        "<div class=\"table-wrap\"><table><thead><tr><th scope=\"col\" class=\"center\">A</th><th scope=\"col\" class=\"right\">B</th></tr></thead>\
         <tbody><tr><td class=\"center\"><strong>x</strong></td><td class=\"right\"><a href=\"https://y.example\">y</a></td></tr></tbody></table></div>"
    );
    // Columns of other types: numbers, checkboxes, references.
    let html = from_json(
        json!([{"object": "block", "type": "table", "isVoid": true, "data": {
        "view": {"type": "grid", "columns": ["n", "c", "r"], "hideHeader": true},
        "definition": {"n": {"id": "n", "title": "N", "type": "number"}, "c": {"id": "c", "title": "C", "type": "checkbox"},
                       "r": {"id": "r", "title": "R", "type": "content-ref"}},
        "records": {"x": {"orderIndex": "a0", "values": {"n": 42, "c": true, "r": {"kind": "page", "page": "p1"}}}}}}]),
    );
    assert_eq!(
        html,
        "<div class=\"table-wrap\"><table><tbody><tr><td>42</td><td><span class=\"check\" aria-label=\"Yes\">✓</span></td>\
         <td><a href=\"/guide\">The guide</a></td></tr></tbody></table></div>"
    );
}

#[test]
fn images_with_dimensions_alt_and_captions() {
    let html = from_json(
        json!([{"object": "block", "type": "images", "data": {"align": "left"}, "nodes": [
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "file", "file": "f1"}, "alt": "A \"diagram\"", "width": 400},
             "fragments": [{"object": "fragment", "fragment": "caption", "nodes": [paragraph(json!([text("The caption")]))]}]},
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "file", "file": "f1"}, "refDark": {"kind": "url", "url": "https://x.example/dark.png"}}}
        ]}]),
    );
    assert_eq!(
        html,
        "<div class=\"images align-left\"><figure><img src=\"/files/f1.png\" alt=\"A &quot;diagram&quot;\" loading=\"lazy\" decoding=\"async\" width=\"400\" height=\"200\">\
         <figcaption>The caption</figcaption></figure><figure><img src=\"/files/f1.png\" alt=\"\" class=\"only-light\" loading=\"lazy\" decoding=\"async\" width=\"800\" height=\"400\">\
         <img src=\"https://x.example/dark.png\" alt=\"\" class=\"only-dark\" loading=\"lazy\" decoding=\"async\"></figure></div>"
    );
    // Drawings are images of their file; inline images too.
    assert!(from_json(json!([{"object": "block", "type": "drawing", "isVoid": true, "data": {"ref": {"kind": "file", "file": "f1"}}}]))
        .contains("<img src=\"/files/f1.png\""));
    let inline = from_json(json!([paragraph(
        json!([text("See "), {"object": "inline", "type": "inline-image", "isVoid": true,
        "data": {"ref": {"kind": "file", "file": "f1"}, "alt": "icon"}}])
    )]));
    assert!(
        inline.contains("<img src=\"/files/f1.png\" alt=\"icon\" class=\"inline\""),
        "{inline}"
    );
    // GitBook's `size: line` fits the text's line; the default (`original`) is the image's own
    // size (reader.css caps it at 300 px wide).
    let line = from_json(json!([paragraph(
        json!([text("See "), {"object": "inline", "type": "inline-image", "isVoid": true,
        "data": {"ref": {"kind": "file", "file": "f1"}, "alt": "icon", "size": "line"}}])
    )]));
    assert!(
        line.contains("<img src=\"/files/f1.png\" alt=\"icon\" class=\"inline line\""),
        "{line}"
    );
}

/// An import keeps the path of an image whose file was missing (`../.gitbook/assets/x.gif`):
/// taken relative to the page's URL it would load nothing (a 404 for every reader), so the
/// image is left out and its caption kept; a file card likewise.
#[test]
fn images_and_files_whose_path_matched_nothing_are_left_out() {
    let caption = json!([{"object": "fragment", "fragment": "caption", "nodes": [paragraph(json!([text("Line height")]))]}]);
    let html = from_json(json!([
        {"object": "block", "type": "images", "nodes": [
            {"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "../.gitbook/assets/line height.gif"}, "alt": "demo"}, "fragments": caption}
        ]},
        paragraph(json!([text("See "), {"object": "inline", "type": "inline-image", "isVoid": true,
            "data": {"ref": {"kind": "url", "url": "../../.gitbook/assets/missing.png"}, "alt": "icon"}}, text(".")])),
        {"object": "block", "type": "file", "isVoid": true, "data": {"ref": {"kind": "url", "url": "assets/missing.pdf"}}}
    ]));
    assert!(
        !html.contains("<img") && !html.contains("gitbook") && !html.contains("href"),
        "{html}"
    );
    assert!(html.contains("Line height"), "{html}");
    // Absolute URLs are still images.
    let html = from_json(
        json!([{"object": "block", "type": "image", "isVoid": true, "data": {"ref": {"kind": "url", "url": "https://x.example/a.png"}}}]),
    );
    assert!(html.contains("<img src=\"https://x.example/a.png\""), "{html}");
}

#[test]
fn files_embeds_and_content_refs_are_links() {
    assert_eq!(
        from_json(
            json!([{"object": "block", "type": "file", "isVoid": true, "data": {"ref": {"kind": "file", "file": "f2"}},
            "fragments": [{"object": "fragment", "fragment": "caption", "nodes": [paragraph(json!([text("The manual")]))]}]}])
        ),
        "<figure class=\"file\"><a class=\"card\" href=\"/files/f2.pdf\" download><span class=\"card-title\">manual.pdf</span>\
         <span class=\"card-meta\">PDF · 1.3 MB</span></a><figcaption>The manual</figcaption></figure>"
    );
    assert_eq!(
        from_markdown("{% embed url=\"https://www.youtube.com/watch?v=x\" %}"),
        "<figure class=\"embed\"><a class=\"card\" href=\"https://www.youtube.com/watch?v=x\" rel=\"noopener\"><span class=\"card-title\">www.youtube.com</span>\
         <span class=\"card-meta\">https://www.youtube.com/watch?v=x</span></a></figure>"
    );
    assert_eq!(
        from_json(
            json!([{"object": "block", "type": "content-ref", "isVoid": true, "data": {"ref": {"kind": "page", "page": "p1"}}}])
        ),
        "<a class=\"card content-ref\" href=\"/guide\"><span class=\"card-title\">📘 The guide</span></a>"
    );
    // A reference to nothing renders nothing, not a broken link.
    assert_eq!(
        from_json(
            json!([{"object": "block", "type": "content-ref", "isVoid": true, "data": {"ref": {"kind": "page", "page": "gone"}}}])
        ),
        ""
    );
    assert!(
        from_json(json!([{"object": "block", "type": "integration", "isVoid": true,
        "data": {"integration": "x", "block": "y", "props": {}, "url": "https://figma.com/file/1"}}]))
        .contains("href=\"https://figma.com/file/1\"")
    );
}

#[test]
fn links_resolve_to_site_urls() {
    let html = from_json(json!([paragraph(json!([
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "p1"}}, "nodes": [text("page")]},
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "anchor", "anchor": "setup", "page": "p1"}}, "nodes": [text("anchor")]},
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "anchor", "anchor": "here"}}, "nodes": [text("local")]},
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "file", "file": "f2"}}, "nodes": [text("file")]},
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "gone"}}, "nodes": [text("broken")]},
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "url", "url": "../missing.md"}}, "nodes": [text(" unresolved")]}
    ]))]));
    assert_eq!(
        html,
        "<p><a href=\"/guide\">page</a><a href=\"/guide#setup\">anchor</a><a href=\"#here\">local</a>\
         <a href=\"/files/f2.pdf\">file</a>broken unresolved</p>"
    );
}

/// A document may hold a link inside a link (the API takes any document); HTML has no nested
/// `<a>`, so the inner one is its text.
#[test]
fn a_link_inside_a_link_is_text() {
    let html = from_json(json!([paragraph(json!([
        {"object": "inline", "type": "link", "data": {"ref": {"kind": "url", "url": "https://x.example/"}}, "nodes": [
            text("see "),
            {"object": "inline", "type": "link", "data": {"ref": {"kind": "page", "page": "p1"}}, "nodes": [text("the guide")]},
            text(" and "),
            {"object": "inline", "type": "mention", "isVoid": true, "data": {"ref": {"kind": "page", "page": "p1"}}}
        ]}
    ]))]));
    assert_eq!(
        html,
        "<p><a href=\"https://x.example/\">see the guide and The guide</a></p>"
    );
}

#[test]
fn steppers_columns_updates_and_conditions() {
    assert_eq!(
        from_markdown(
            "{% stepper %}\n{% step %}\nOne\n{% endstep %}\n{% step %}\nTwo\n{% endstep %}\n{% endstepper %}"
        ),
        "<ol class=\"stepper\"><li class=\"step\"><p>One</p></li><li class=\"step\"><p>Two</p></li></ol>"
    );
    assert_eq!(
        from_markdown(
            "{% columns %}\n{% column %}\nL\n{% endcolumn %}\n{% column %}\nR\n{% endcolumn %}\n{% endcolumns %}"
        ),
        "<div class=\"columns\"><div class=\"column\"><p>L</p></div><div class=\"column\"><p>R</p></div></div>"
    );
    assert_eq!(
        from_markdown(
            "{% updates %}\n{% update date=\"2025-03-01\" %}\nNew\n{% endupdate %}\n{% endupdates %}"
        ),
        "<div class=\"updates\"><section class=\"update\"><time datetime=\"2025-03-01\">March 1, 2025</time><div class=\"update-body\"><p>New</p></div></section></div>"
    );
    let conditional = |expression: &str| {
        from_json(
            json!([{"object": "block", "type": "if", "data": {"expression": expression}, "nodes": [paragraph(json!([text("pro")]))]}]),
        )
    };
    assert_eq!(conditional("visitor.claims.pro"), "<p>pro</p>");
    assert_eq!(conditional("visitor.claims.free"), "");
}

#[test]
fn reusable_content_openapi_and_prompts() {
    assert_eq!(
        from_json(
            json!([{"object": "block", "type": "reusable-content", "isVoid": true,
            "data": {"ref": {"kind": "reusable-content", "reusableContent": "r1"}}}])
        ),
        "<p>Shared <em>text</em>.</p>"
    );
    assert_eq!(
        from_json(json!([{"object": "block", "type": "swagger", "isVoid": true,
            "data": {"ref": {"kind": "file", "file": "f2"}, "method": "get", "path": "/pets/{id}"}}])),
        "<div class=\"openapi\"><span class=\"method method-get\">GET</span> <code>/pets/{id}</code> <a href=\"/files/f2.pdf\">OpenAPI specification</a></div>"
    );
    let prompt = from_json(
        json!([{"object": "block", "type": "prompt", "data": {"description": "Ask the assistant"}, "nodes": [
        {"object": "block", "type": "code", "data": {}, "nodes": [{"object": "block", "type": "code-line", "nodes": [text("Summarize")]}]}]}]),
    );
    assert!(
        prompt.contains("<figcaption>Ask the assistant</figcaption>") && prompt.contains("Summarize"),
        "{prompt}"
    );
}

#[test]
fn a_server_finds_the_reusable_contents_a_page_includes() {
    let include = |id: &str, space: Option<&str>| {
        let mut reference = json!({"kind": "reusable-content", "reusableContent": id});
        if let Some(space) = space {
            reference["space"] = json!(space);
        }
        json!({"object": "block", "type": "reusable-content", "isVoid": true, "data": {"ref": reference}})
    };
    let document: Document = serde_json::from_value(json!({"object": "document", "data": {}, "nodes": [
        include("r1", None),
        {"object": "block", "type": "hint", "data": {"style": "info"}, "nodes": [include("r2", None)]},
        include("r1", None),
        include("r3", Some("another-space"))
    ]}))
    .unwrap();
    assert_eq!(
        quire_reader::reusable_contents_used(&document.nodes),
        vec!["r1".to_string(), "r2".to_string()],
        "in order, each once, nested ones too, none of another space"
    );
}

#[test]
fn inlines_emoji_mentions_buttons_annotations() {
    let html = from_json(json!([paragraph(json!([
        {"object": "inline", "type": "emoji", "isVoid": true, "data": {"code": "1f600"}},
        text(" "),
        {"object": "inline", "type": "mention", "isVoid": true, "data": {"ref": {"kind": "user", "user": "u1"}}},
        text(" "),
        {"object": "inline", "type": "mention", "isVoid": true, "data": {"ref": {"kind": "page", "page": "p1"}}},
        text(" "),
        {"object": "inline", "type": "button", "isVoid": true, "data": {"label": "Start", "kind": "primary", "ref": {"kind": "page", "page": "p1"}}},
        text(" "),
        {"object": "inline", "type": "annotation", "nodes": [text("term")],
         "fragments": [{"object": "fragment", "fragment": "annotation-body", "nodes": [paragraph(json!([text("A definition")]))]}]},
        {"object": "inline", "type": "expression", "isVoid": true, "data": {"expression": "space.vars.x"}},
        {"object": "inline", "type": "future-inline", "nodes": [text(" kept")]}
    ]))]));
    assert_eq!(
        html,
        "<p>😀 <span class=\"mention\">@Ann</span> <a href=\"/guide\">The guide</a> <a class=\"button button-primary\" href=\"/guide\">Start</a> \
         <span class=\"annotation\" tabindex=\"0\">term<span class=\"annotation-body\"> (A definition)</span></span> kept</p>"
    );
}

#[test]
fn unknown_blocks_render_their_content() {
    assert_eq!(
        from_json(
            json!([{"object": "block", "type": "future-block", "nodes": [paragraph(json!([text("inside")]))]}])
        ),
        "<p>inside</p>"
    );
    assert_eq!(
        from_json(json!([{"object": "block", "type": "future-inline-block", "nodes": [text("inline")]}])),
        "<p>inline</p>"
    );
}

#[test]
fn content_cannot_inject_markup_or_script() {
    let html = from_markdown(
        "<script>alert(1)</script>\n\nText <img src=x onerror=alert(1)> and [link](javascript:alert(1)) \
         and [data](data:text/html,x) and ![img](javascript:alert(1)) and [ok](https://ok.example \"t\\\" onmouseover=\\\"x\").",
    );
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.contains("<img src=x"), "{html}");
    assert!(!html.contains("javascript:"), "{html}");
    assert!(!html.contains("data:"), "{html}");
    assert!(html.contains("<pre data-lang=\"HTML\">"), "{html}");
    assert!(html.contains("title=\"t&quot; onmouseover=&quot;x\""), "{html}");
    // Every URL-bearing field, fed a script URL through JSON.
    let evil = json!({"kind": "url", "url": "  JaVa\tScRiPt:alert(1)"});
    let html = from_json(json!([
        paragraph(json!([{"object": "inline", "type": "link", "data": {"ref": evil}, "nodes": [text("a")]},
                         {"object": "inline", "type": "button", "isVoid": true, "data": {"label": "b", "ref": evil}}])),
        {"object": "block", "type": "embed", "isVoid": true, "data": {"url": "javascript:alert(1)"}},
        {"object": "block", "type": "images", "nodes": [{"object": "block", "type": "image", "isVoid": true, "data": {"ref": evil}}]},
        {"object": "block", "type": "code", "data": {"syntax": "\"><script>", "title": "<script>"}, "nodes": [
            {"object": "block", "type": "code-line", "nodes": [text("</code><script>alert(1)</script>")]}]},
        {"object": "block", "type": "heading-1", "data": {"id": "\"><script>"}, "nodes": [text("<b>")]},
        {"object": "block", "type": "tabs", "nodes": [{"object": "block", "type": "tabs-item", "data": {"title": "<i>t</i>"}, "nodes": [paragraph(json!([text("x")]))]}]}
    ]));
    assert!(!html.contains("<script"), "{html}");
    assert!(!html.to_ascii_lowercase().contains("javascript"), "{html}");
    assert!(!html.contains("<i>") && !html.contains("<b>"), "{html}");
}

#[test]
fn headings_also_answer_to_gitbooks_anchors() {
    let html = from_markdown(
        "## 1. Create a Vue 3 App\n\nText.\n\n## Set Up the Proxy Server (V2 Auth)\n\n## Vue.js guide\n",
    );
    assert!(
        html.contains("<h2 id=\"1-create-a-vue-3-app\"><span class=\"anchor-alias\" id=\"id-1.-create-a-vue-3-app\"></span>"),
        "{html}"
    );
    assert!(html.contains("id=\"vue.js-guide\""), "{html}");
    assert_eq!(
        html.matches("anchor-alias").count(),
        2,
        "none where GitBook's anchor is ours: {html}"
    );
}
