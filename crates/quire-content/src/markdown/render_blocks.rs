//! Document blocks to markdown.
//!
//! Blocks are separated by blank lines. Containers render their children and then indent
//! (list items) or prefix (block quotes) the lines. GitBook-only blocks use GitBook's syntax
//! (see `parse_blocks` for the mapping, which this inverts). Blocks markdown cannot express
//! (OpenAPI, integrations, drawings, ...) render as their plain text, if any, so the markdown
//! stays readable; their data is not representable in markdown.

use serde_json::Value;

use super::directives::liquid_tag;
use super::html;
use super::parse_blocks::CONTAINER_TAGS;
use super::render_inline::{InlineMode, Renderer, escape_text, link_destination};
use super::table;
use crate::document::{JsonMap, Node};
use crate::text::plain_text_of_nodes;

/// Renders a list of blocks.
pub(crate) fn blocks(nodes: &[Node], renderer: &Renderer<'_>) -> String {
    let mut rendered: Vec<String> = Vec::with_capacity(nodes.len());
    let mut previous: Option<(&Node, bool)> = None;
    for node in nodes {
        let alternate = previous.is_some_and(|(previous, alternate)| {
            list_family(previous).is_some() && list_family(previous) == list_family(node) && !alternate
        });
        let text = block(node, alternate, renderer);
        if !text.is_empty() {
            rendered.push(text);
            previous = Some((node, alternate));
        }
    }
    rendered.join("\n\n")
}

/// Lists written with the same markers: adjacent ones must alternate markers to stay apart.
fn list_family(node: &Node) -> Option<&'static str> {
    match node.node_type() {
        "list-unordered" | "list-tasks" => Some("bullet"),
        "list-ordered" => Some("ordered"),
        _ => None,
    }
}

/// Renders one block. `alternate` asks lists for their other marker, so that two adjacent
/// lists of the same kind do not merge into one.
fn block(node: &Node, alternate: bool, renderer: &Renderer<'_>) -> String {
    let node_type = node.node_type();
    match node_type {
        "paragraph" => renderer.inlines(node.children()),
        "heading-1" | "heading-2" | "heading-3" => {
            let level = &node_type["heading-".len()..];
            let hashes = "#".repeat(level.parse().unwrap_or(1));
            let text = renderer.with_mode(InlineMode::Heading).inlines(node.children());
            match node.data_str("id") {
                Some(id) => format!(
                    "{hashes} {text} <a href=\"#{0}\" id=\"{0}\"></a>",
                    html::escape(id)
                ),
                None => format!("{hashes} {text}").trim_end().to_owned(),
            }
        }
        "list-unordered" | "list-ordered" | "list-tasks" => list(node, alternate, renderer),
        "blockquote" => prefix_lines(&blocks(node.children(), renderer), "> ", ">"),
        "divider" => "***".to_owned(),
        "code" => code(node),
        "math" => format!("$$\n{}\n$$", node.data_str("formula").unwrap_or_default()),
        "images" => images(node, renderer),
        "expandable" => expandable(node, renderer),
        "embed" => captioned("embed", attributes(node, &[]), node, renderer),
        "file" => {
            let mut attrs = vec![("src".to_owned(), renderer.ref_target(node))];
            attrs.extend(attributes(node, &["ref"]));
            captioned("file", attrs, node, renderer)
        }
        "content-ref" => {
            let target = renderer.ref_target(node);
            format!(
                "{}\n[{}]({})\n{{% endcontent-ref %}}",
                liquid_tag("content-ref", &[("url".to_owned(), target.clone())]),
                escape_text(&target, InlineMode::Normal),
                link_destination(&target)
            )
        }
        "reusable-content" => liquid_tag("include", &[(String::new(), renderer.ref_target(node))]),
        "table" => table::render(node, renderer).unwrap_or_default(),
        "integration" if node.data_str("url").is_some() => liquid_tag(
            "embed",
            &[(
                "url".to_owned(),
                node.data_str("url").unwrap_or_default().to_owned(),
            )],
        ),
        _ => match CONTAINER_TAGS
            .iter()
            .find(|(_, block_type)| *block_type == node_type)
        {
            Some((tag, _)) => container(tag, node, renderer),
            None => fallback(node, renderer),
        },
    }
}

/// `data` entries that can be tag attributes (strings, booleans, numbers), except `skip`. A key
/// the tag's reader could not read back as a key (with `=`, quotes, `%`, braces or spaces) is
/// left out of the markdown: written, it would end the tag or turn it into text (the JSON keeps
/// it).
fn attributes(node: &Node, skip: &[&str]) -> Vec<(String, String)> {
    let empty = JsonMap::new();
    let readable = |key: &str| {
        !key.is_empty()
            && !key.contains(|c: char| c.is_whitespace() || matches!(c, '=' | '"' | '\'' | '%' | '{' | '}'))
    };
    node.data
        .as_ref()
        .unwrap_or(&empty)
        .iter()
        .filter(|(key, _)| !skip.contains(&key.as_str()) && readable(key))
        .filter_map(|(key, value)| {
            let value = match value {
                Value::String(text) => text.clone(),
                Value::Bool(flag) => flag.to_string(),
                Value::Number(number) => number.to_string(),
                _ => return None,
            };
            Some((key.clone(), value))
        })
        .collect()
}

fn container(tag: &str, node: &Node, renderer: &Renderer<'_>) -> String {
    let separator = if tag == "tabs" || tag == "stepper" || tag == "columns" || tag == "updates" {
        "\n\n"
    } else {
        "\n"
    };
    let body = if separator == "\n\n" {
        node.children()
            .iter()
            .map(|child| block(child, false, renderer))
            .filter(|text| !text.is_empty())
            .collect::<Vec<_>>()
            .join(separator)
    } else {
        blocks(node.children(), renderer)
    };
    wrap(
        &liquid_tag(tag, &attributes(node, &[])),
        &body,
        &format!("{{% end{tag} %}}"),
    )
}

fn wrap(open: &str, body: &str, close: &str) -> String {
    if body.is_empty() {
        format!("{open}\n{close}")
    } else {
        format!("{open}\n{body}\n{close}")
    }
}

fn captioned(tag: &str, attrs: Vec<(String, String)>, node: &Node, renderer: &Renderer<'_>) -> String {
    let open = liquid_tag(tag, &attrs);
    let caption = node
        .fragment("caption")
        .map(|caption| blocks(&caption.nodes, renderer))
        .unwrap_or_default();
    if caption.is_empty() {
        open
    } else {
        format!("{open}\n{caption}\n{{% end{tag} %}}")
    }
}

fn list(node: &Node, alternate: bool, renderer: &Renderer<'_>) -> String {
    let ordered = node.node_type() == "list-ordered";
    let start = node.data_value("start").and_then(Value::as_u64).unwrap_or(1);
    let mut items = Vec::with_capacity(node.children().len());
    for (index, item) in node.children().iter().enumerate() {
        let mut marker = match (ordered, alternate) {
            (true, false) => format!("{}.", start + index as u64),
            (true, true) => format!("{})", start + index as u64),
            (false, false) => "-".to_owned(),
            (false, true) => "+".to_owned(),
        };
        let indent = " ".repeat(marker.chars().count() + 1);
        if node.node_type() == "list-tasks" {
            marker.push_str(if item.data_bool("checked") == Some(true) {
                " [x]"
            } else {
                " [ ]"
            });
        }
        let body = blocks(item.children(), renderer);
        // A task's checkbox must be followed by a paragraph; anything else starts on the next line.
        let body_on_next_line = node.node_type() == "list-tasks"
            && item
                .children()
                .first()
                .is_some_and(|first| first.node_type() != "paragraph");
        let mut lines = body.split('\n');
        let mut text = match lines.next() {
            Some(first) if body_on_next_line && !first.is_empty() => format!("{marker}\n{indent}{first}"),
            Some(first) if !first.is_empty() => format!("{marker} {first}"),
            _ => marker.clone(),
        };
        for line in lines {
            text.push('\n');
            if !line.is_empty() {
                text.push_str(&indent);
                text.push_str(line);
            }
        }
        items.push(text);
    }
    items.join("\n")
}

fn prefix_lines(body: &str, prefix: &str, blank_prefix: &str) -> String {
    body.split('\n')
        .map(|line| {
            if line.is_empty() {
                blank_prefix.to_owned()
            } else {
                format!("{prefix}{line}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn code(node: &Node) -> String {
    let lines: Vec<String> = node
        .children()
        .iter()
        .map(|line| plain_text_of_nodes(line.children()))
        .collect();
    let body = lines.join("\n");
    // The info string of a backtick fence cannot hold a backtick (the line would not open a
    // fence at all, and the code would be read as markdown): a tilde fence can. Nor can any
    // info string hold a line break.
    let syntax = node
        .data_str("syntax")
        .unwrap_or_default()
        .replace(['\n', '\r'], " ");
    let mark = if syntax.contains('`') { '~' } else { '`' };
    let mut longest = 0;
    let mut current = 0;
    for character in body.chars() {
        current = if character == mark { current + 1 } else { 0 };
        longest = longest.max(current);
    }
    let fence = mark.to_string().repeat((longest + 1).max(3));
    let fenced = format!("{fence}{syntax}\n{body}\n{fence}");
    let attrs = attributes(node, &["syntax"]);
    if attrs.is_empty() {
        fenced
    } else {
        format!("{}\n{fenced}\n{{% endcode %}}", liquid_tag("code", &attrs))
    }
}

fn images(node: &Node, renderer: &Renderer<'_>) -> String {
    let images: Vec<&Node> = node
        .children()
        .iter()
        .filter(|image| image.node_type() == "image")
        .collect();
    let needs_html = !node.data.as_ref().is_none_or(JsonMap::is_empty)
        || images.iter().any(|image| {
            image.data_value("width").is_some()
                || image.data_value("height").is_some()
                || image.data_value("refDark").is_some()
                || image
                    .fragment("caption")
                    .is_some_and(|caption| !plain_text_of_nodes(&caption.nodes).is_empty())
        });
    if !needs_html {
        return images
            .iter()
            .map(|image| {
                let title = image
                    .data_str("title")
                    .map(|title| format!(" \"{}\"", title.replace('\\', "\\\\").replace('"', "\\\"")));
                format!(
                    "![{}]({}{})",
                    escape_text(image.data_str("alt").unwrap_or_default(), InlineMode::Normal),
                    link_destination(&renderer.ref_target(image)),
                    title.unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join(" ");
    }
    let figures: String = images.iter().map(|image| figure(image, renderer)).collect();
    match node.data_str("align") {
        Some(align) => format!("<div align=\"{}\">{figures}</div>", html::escape(align)),
        None => figures,
    }
}

fn figure(image: &Node, renderer: &Renderer<'_>) -> String {
    let mut img = html::img_tag(image, &renderer.ref_target(image));
    if let Some(dark) = image
        .data_value("refDark")
        .and_then(crate::document::ContentRef::from_value)
    {
        img = format!(
            "<picture><source srcset=\"{}\" media=\"(prefers-color-scheme: dark)\">{img}</picture>",
            html::escape(&renderer.target(&dark))
        );
    }
    let caption = image
        .fragment("caption")
        .map(|caption| plain_text_of_nodes(&caption.nodes).replace('\n', " "))
        .unwrap_or_default();
    if caption.is_empty() {
        format!("<figure>{img}</figure>")
    } else {
        format!(
            "<figure>{img}<figcaption><p>{}</p></figcaption></figure>",
            html::escape(&caption)
        )
    }
}

fn expandable(node: &Node, renderer: &Renderer<'_>) -> String {
    let title = node
        .fragment("expandable-title")
        .and_then(|title| title.nodes.first())
        .map(|paragraph| {
            renderer
                .with_mode(InlineMode::SingleLine)
                .inlines(paragraph.children())
        })
        .unwrap_or_default();
    let body = node
        .fragment("expandable-body")
        .map(|body| blocks(&body.nodes, renderer))
        .unwrap_or_default();
    let open = if node.data_bool("defaultExpanded") == Some(true) {
        "<details open>"
    } else {
        "<details>"
    };
    let mut text = format!("{open}\n\n<summary>{title}</summary>\n\n");
    if !body.is_empty() {
        text.push_str(&body);
        text.push_str("\n\n");
    }
    text.push_str("</details>");
    text
}

/// Blocks without a markdown form: their children, or their text.
fn fallback(node: &Node, renderer: &Renderer<'_>) -> String {
    let children = node.children();
    if children.first().is_some_and(Node::is_block) {
        return blocks(children, renderer);
    }
    if !children.is_empty() {
        return renderer.inlines(children);
    }
    let text = plain_text_of_nodes(std::slice::from_ref(node));
    if text.trim().is_empty() {
        String::new()
    } else {
        escape_text(&text, InlineMode::Normal)
    }
}
