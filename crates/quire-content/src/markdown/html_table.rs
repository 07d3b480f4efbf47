//! GitBook's HTML tables, read and written.
//!
//! GitBook writes a table as HTML when GFM cannot carry it: a card view
//! (`<table data-view="cards">`), a hidden header (`data-header-hidden`), column widths
//! (`<th width="134">`), hidden or typed columns (`<th data-hidden data-type="content-ref">`, a
//! card's cover `data-card-cover` and target `data-card-target`), or cells holding blocks (code,
//! headings, nested lists). Reading: the header row gives the columns (title, alignment, type,
//! width; hidden ones are defined but not in the view), each body row a record; a text cell's
//! content becomes a fragment of blocks, a `files`/`image` cell the image or file it links to
//! (an `image` column: GitBook's `files` column holds uploaded file ids, which an import cannot
//! name), a `content-ref` cell the page it links to, number and checkbox cells their value.
//! Writing: a table GFM cannot carry is written back in the same form, so import → export →
//! import gives the same table.

use scraper::ElementRef;
use serde_json::{Value, json};

use super::html;
use super::html_dom::{Unsupported, blocks, image_data, text_of};
use super::marks::{color_style, tag_for_mark};
use super::parse_inline::ref_data;
use super::render_inline::Renderer;
use crate::document::{ContentRef, Fragment, JsonMap, Node, TableView};
use crate::limits::{MAX_TABLE_CELLS, MAX_TABLE_COLUMNS, MAX_TABLE_ROWS};
use crate::text::plain_text_of_nodes;

/// Column types read from `data-type`; any other is read as text.
const TYPED_COLUMNS: &[&str] = &["number", "checkbox", "image", "content-ref"];

/// The rows of a table element, its own only (not those of a table nested in a cell).
fn rows(table: ElementRef<'_>) -> Vec<(ElementRef<'_>, bool)> {
    let mut rows = Vec::new();
    for child in table.child_elements() {
        match child.value().name() {
            "tr" => rows.push((child, false)),
            section @ ("thead" | "tbody" | "tfoot") => rows.extend(
                child
                    .child_elements()
                    .filter(|row| row.value().name() == "tr")
                    .map(|row| (row, section == "thead")),
            ),
            _ => {}
        }
    }
    rows
}

fn cells(row: ElementRef<'_>) -> impl Iterator<Item = ElementRef<'_>> {
    row.child_elements()
        .filter(|cell| matches!(cell.value().name(), "td" | "th"))
}

/// A `<table>` element as GitBook's `table` block.
pub(crate) fn from_html(table: ElementRef<'_>, depth: usize) -> Result<Node, Unsupported> {
    let mut rows = rows(table);
    if rows.len() > MAX_TABLE_ROWS + 1 {
        return Err(Unsupported);
    }
    let header_row = match rows.first() {
        Some((_, true)) => Some(rows.remove(0).0),
        Some((row, false)) if cells(*row).all(|cell| cell.value().name() == "th") => Some(rows.remove(0).0),
        _ => None,
    };
    let column_count = header_row
        .into_iter()
        .chain(rows.iter().map(|(row, _)| *row))
        .map(|row| cells(row).count())
        .max()
        .unwrap_or(0);
    if column_count == 0
        || column_count > MAX_TABLE_COLUMNS
        || column_count.saturating_mul(rows.len()) > MAX_TABLE_CELLS
    {
        return Err(Unsupported);
    }
    let header_cells: Vec<ElementRef<'_>> = header_row.map(|row| cells(row).collect()).unwrap_or_default();
    let cards = table.attr("data-view") == Some("cards");
    let mut definition = JsonMap::new();
    let mut shown = Vec::new();
    let mut widths = JsonMap::new();
    let mut types = Vec::with_capacity(column_count);
    let mut view = JsonMap::new();
    for index in 0..column_count {
        let id = format!("c{index}");
        let th = header_cells.get(index).copied();
        let attr = |name: &str| th.and_then(|th| th.attr(name));
        let stated = attr("data-type").unwrap_or("text");
        let column_type = match stated {
            "files" => "image",
            known if TYPED_COLUMNS.contains(&known) => known,
            _ => "text",
        };
        let title = th.map(|th| text_of(th).split_whitespace().collect::<Vec<_>>().join(" "));
        let mut column = json!({"id": id, "title": title.unwrap_or_default(), "type": column_type});
        if column_type == "text" {
            column["textAlignment"] = json!(alignment(th).unwrap_or("left"));
        }
        definition.insert(id.clone(), column);
        if attr("data-hidden").is_none() {
            shown.push(Value::String(id.clone()));
        }
        if attr("data-card-cover").is_some() {
            view.insert("coverDefinition".into(), Value::String(id.clone()));
        }
        if attr("data-card-target").is_some() {
            view.insert("targetDefinition".into(), Value::String(id.clone()));
        }
        if let Some(width) = attr("width").and_then(|w| w.trim_end_matches("px").parse::<f64>().ok())
            && width.is_finite()
            && width > 0.0
        {
            widths.insert(id.clone(), json!(width));
        }
        types.push(column_type);
    }
    let mut records = JsonMap::new();
    let mut fragments = Vec::new();
    for (row_index, (row, _)) in rows.iter().enumerate() {
        let record_id = format!("r{row_index}");
        let mut values = JsonMap::new();
        for (column, cell) in cells(*row).enumerate().take(column_count) {
            let column_id = format!("c{column}");
            let value = match types[column] {
                "number" => {
                    let text = text_of(cell);
                    text.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|n| n.is_finite())
                        .map(|n| json!(n))
                }
                "checkbox" => {
                    let text = text_of(cell).trim().to_lowercase();
                    Some(Value::Bool(matches!(
                        text.as_str(),
                        "true" | "yes" | "x" | "✓" | "✔" | "1"
                    )))
                }
                "image" | "content-ref" => {
                    linked(cell).map(|target| ref_data(&target).remove("ref").unwrap_or(Value::Null))
                }
                _ => {
                    let content = blocks(cell, depth + 1)?;
                    (!content.is_empty()).then(|| {
                        let name = format!("{record_id}{column_id}");
                        fragments.push(Fragment::new(&name, None, content));
                        Value::String(name)
                    })
                }
            };
            if let Some(value) = value {
                values.insert(column_id, value);
            }
        }
        records.insert(
            record_id,
            json!({"orderIndex": super::table::order_index(row_index), "values": values}),
        );
    }
    view.insert("type".into(), json!(if cards { "cards" } else { "grid" }));
    view.insert("columns".into(), Value::Array(shown));
    if cards {
        let large = table.attr("data-card-size") == Some("large");
        view.insert("cardSize".into(), json!(if large { "large" } else { "medium" }));
    } else {
        let hidden = table.attr("data-header-hidden").is_some() || header_row.is_none();
        view.insert("hideHeader".into(), Value::Bool(hidden));
        if !widths.is_empty() {
            view.insert("columnWidths".into(), Value::Object(widths));
            view.insert("useNewSizing".into(), Value::Bool(true));
        }
    }
    let mut data = JsonMap::new();
    data.insert("view".into(), Value::Object(view));
    data.insert("records".into(), Value::Object(records));
    data.insert("definition".into(), Value::Object(definition));
    if table.attr("data-full-width") == Some("true") {
        data.insert("fullWidth".into(), Value::Bool(true));
    }
    let mut node = Node::void_block("table", data);
    node.fragments = Some(fragments);
    Ok(node)
}

/// The file or page a typed cell links to: its first link, else its first image.
fn linked(cell: ElementRef<'_>) -> Option<String> {
    cell.descendent_elements()
        .find_map(|element| match element.value().name() {
            "a" => element
                .attr("href")
                .map(str::trim)
                .filter(|href| !href.is_empty())
                .map(str::to_owned),
            "img" => image_data(element).and_then(|data| {
                ContentRef::from_value(data.get("ref")?).map(|content_ref| content_ref.fallback_target())
            }),
            _ => None,
        })
}

fn alignment(th: Option<ElementRef<'_>>) -> Option<&'static str> {
    match super::html_dom::text_alignment(th?)? {
        "center" => Some("center"),
        "end" => Some("right"),
        _ => Some("left"),
    }
}

/// Whether a table needs GitBook's HTML form: GFM has no card view, hidden header or column,
/// width, typed reference column, nor blocks other than paragraphs and simple lists in a cell.
pub(crate) fn needs_html(table: &Node) -> bool {
    let view = TableView::of(table);
    let view_data = table.data_value("view");
    let flag = |key: &str| view_data.and_then(|v| v.get(key)).and_then(Value::as_bool) == Some(true);
    if view_data.and_then(|v| v.get("type")).and_then(Value::as_str) == Some("cards")
        || flag("hideHeader")
        || view_data
            .and_then(|v| v.get("columnWidths"))
            .and_then(Value::as_object)
            .is_some_and(|widths| !widths.is_empty())
        || table.data_bool("fullWidth") == Some(true)
    {
        return true;
    }
    let defined = view.definition.map_or(0, JsonMap::len);
    if defined > view.columns.len() {
        return true;
    }
    let typed = view.columns.iter().any(|column| {
        matches!(
            view.column_field(column, "type").and_then(Value::as_str),
            Some("image" | "content-ref" | "files")
        )
    });
    typed
        || table
            .fragments()
            .iter()
            .any(|fragment| !fragment.nodes.iter().all(gfm_cell_block))
}

/// A block a GFM cell carries: a paragraph, or a list of one-paragraph items.
fn gfm_cell_block(block: &Node) -> bool {
    match block.node_type() {
        "paragraph" => block.data.as_ref().is_none_or(JsonMap::is_empty),
        "list-unordered" | "list-ordered" => {
            block.data.as_ref().is_none_or(JsonMap::is_empty)
                && block.children().iter().all(|item| {
                    item.data.as_ref().is_none_or(JsonMap::is_empty)
                        && matches!(item.children(), [paragraph] if paragraph.node_type() == "paragraph")
                })
        }
        _ => false,
    }
}

/// A table in GitBook's HTML form, on one line (a blank line would end the HTML block).
pub(crate) fn to_html(table: &Node, renderer: &Renderer<'_>) -> String {
    let view = TableView::of(table);
    let view_data = table.data_value("view");
    let view_field = |key: &str| view_data.and_then(|v| v.get(key));
    let cards = view_field("type").and_then(Value::as_str) == Some("cards");
    let mut columns: Vec<&str> = view.columns.clone();
    let hidden: Vec<&str> = view
        .definition
        .map(|definition| {
            definition
                .keys()
                .map(String::as_str)
                .filter(|id| !view.columns.contains(id))
                .collect()
        })
        .unwrap_or_default();
    columns.extend(&hidden);
    let mut out = String::from("<table");
    if cards {
        out.push_str(" data-view=\"cards\"");
        if view_field("cardSize").and_then(Value::as_str) == Some("large") {
            out.push_str(" data-card-size=\"large\"");
        }
    } else if view_field("hideHeader").and_then(Value::as_bool) == Some(true) {
        out.push_str(" data-header-hidden");
    }
    if table.data_bool("fullWidth") == Some(true) {
        out.push_str(" data-full-width=\"true\"");
    }
    out.push_str("><thead><tr>");
    let widths = view_field("columnWidths").and_then(Value::as_object);
    for column in &columns {
        out.push_str("<th");
        if let Some(width) = widths.and_then(|w| w.get(*column)).and_then(Value::as_f64) {
            out.push_str(&format!(" width=\"{width}\""));
        }
        match view.column_field(column, "textAlignment").and_then(Value::as_str) {
            Some("center") => out.push_str(" align=\"center\""),
            Some("right") => out.push_str(" align=\"right\""),
            _ => {}
        }
        if hidden.contains(column) {
            out.push_str(" data-hidden");
        }
        if view_field("coverDefinition").and_then(Value::as_str) == Some(column) {
            out.push_str(" data-card-cover");
        }
        if view_field("targetDefinition").and_then(Value::as_str) == Some(column) {
            out.push_str(" data-card-target");
        }
        match view.column_field(column, "type").and_then(Value::as_str) {
            Some("image" | "files") => out.push_str(" data-type=\"files\""),
            Some(typed @ ("number" | "checkbox" | "content-ref")) => {
                out.push_str(&format!(" data-type=\"{typed}\""))
            }
            _ => {}
        }
        let title = view
            .column_field(column, "title")
            .and_then(Value::as_str)
            .unwrap_or_default();
        out.push('>');
        out.push_str(&html::escape(title));
        out.push_str("</th>");
    }
    out.push_str("</tr></thead><tbody>");
    for record in &view.records {
        out.push_str("<tr>");
        for column in &columns {
            out.push_str("<td>");
            if let Some(value) = record.get("values").and_then(|values| values.get(*column)) {
                cell(&mut out, &view, value, renderer);
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table>");
    out
}

fn cell(out: &mut String, view: &TableView<'_>, value: &Value, renderer: &Renderer<'_>) {
    match value {
        Value::String(name) => match view.fragment(name) {
            Some(fragment) => cell_blocks(out, &fragment.nodes, renderer),
            None => out.push_str(&html::escape(name)),
        },
        Value::Object(_) => {
            if let Some(target) = ContentRef::from_value(value.get("ref").unwrap_or(value)) {
                let target = renderer.target(&target);
                let name = target.rsplit('/').next().unwrap_or(&target);
                out.push_str(&format!(
                    "<a href=\"{}\">{}</a>",
                    html::escape(&target),
                    html::escape(name)
                ));
            }
        }
        Value::Array(items) => {
            let texts: Vec<String> = items.iter().map(scalar).collect();
            out.push_str(&html::escape(&texts.join(", ")));
        }
        other => out.push_str(&html::escape(&scalar(other))),
    }
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A cell's blocks: one paragraph is written as its inline content, more as HTML blocks.
fn cell_blocks(out: &mut String, blocks: &[Node], renderer: &Renderer<'_>) {
    if let [paragraph] = blocks
        && paragraph.node_type() == "paragraph"
        && paragraph.data.as_ref().is_none_or(JsonMap::is_empty)
    {
        inlines(out, paragraph.children(), renderer);
        return;
    }
    for block in blocks {
        html_block(out, block, renderer);
    }
}

fn html_block(out: &mut String, block: &Node, renderer: &Renderer<'_>) {
    match block.node_type() {
        "paragraph" => {
            out.push_str("<p>");
            inlines(out, block.children(), renderer);
            out.push_str("</p>");
        }
        level @ ("heading-1" | "heading-2" | "heading-3") => {
            let tag = &level[level.len() - 1..];
            out.push_str(&format!("<h{tag}>"));
            inlines(out, block.children(), renderer);
            out.push_str(&format!("</h{tag}>"));
        }
        list @ ("list-unordered" | "list-ordered" | "list-tasks") => {
            let tag = if list == "list-ordered" { "ol" } else { "ul" };
            out.push_str(&format!("<{tag}>"));
            for item in block.children() {
                out.push_str("<li>");
                cell_blocks(out, item.children(), renderer);
                out.push_str("</li>");
            }
            out.push_str(&format!("</{tag}>"));
        }
        "code" => {
            let syntax = block.data_str("syntax").unwrap_or_default();
            let lines: Vec<String> = block
                .children()
                .iter()
                .map(|line| plain_text_of_nodes(line.children()))
                .collect();
            if syntax.is_empty() {
                out.push_str("<pre><code>");
            } else {
                let syntax = html::escape(syntax);
                out.push_str(&format!(
                    "<pre class=\"language-{syntax}\"><code class=\"lang-{syntax}\">"
                ));
            }
            out.push_str(&html::escape(&lines.join("\n")));
            out.push_str("\n</code></pre>");
        }
        "blockquote" => {
            out.push_str("<blockquote>");
            for child in block.children() {
                html_block(out, child, renderer);
            }
            out.push_str("</blockquote>");
        }
        "divider" => out.push_str("<hr>"),
        "images" => {
            for image in block.children() {
                out.push_str("<figure>");
                out.push_str(&html::img_tag(image, &renderer.ref_target(image)));
                out.push_str("</figure>");
            }
        }
        _ => {
            let text = plain_text_of_nodes(std::slice::from_ref(block));
            if !text.trim().is_empty() {
                out.push_str("<p>");
                out.push_str(&html::escape(&text).replace('\n', "<br>"));
                out.push_str("</p>");
            }
        }
    }
}

/// Texts and inlines as HTML: marks as their tags, links as `<a href>`, an anchor as `<a id>`.
fn inlines(out: &mut String, nodes: &[Node], renderer: &Renderer<'_>) {
    for node in nodes {
        if node.is_text() {
            for leaf in node.leaves() {
                let mut closes = Vec::new();
                for mark in &leaf.marks {
                    let tag = if mark.mark_type == "code" {
                        Some("code")
                    } else {
                        tag_for_mark(&mark.mark_type)
                    };
                    let Some(tag) = tag.filter(|tag| !closes.contains(tag)) else {
                        continue;
                    };
                    if tag == "mark" {
                        out.push_str(&format!("<mark style=\"{}\">", html::escape(&color_style(mark))));
                    } else {
                        out.push_str(&format!("<{tag}>"));
                    }
                    closes.push(tag);
                }
                out.push_str(&html::escape(&leaf.text).replace('\n', "<br>"));
                for tag in closes.iter().rev() {
                    out.push_str(&format!("</{tag}>"));
                }
            }
            continue;
        }
        match node.node_type() {
            "link" => {
                let target = renderer.ref_target(node);
                match super::render_inline::anchor_marker_id(node) {
                    Some(id) => out.push_str(&format!("<a id=\"{}\"></a>", html::escape(&id))),
                    None => {
                        out.push_str(&format!("<a href=\"{}\">", html::escape(&target)));
                        inlines(out, node.children(), renderer);
                        out.push_str("</a>");
                    }
                }
            }
            "inline-image" => out.push_str(&html::img_tag(node, &renderer.ref_target(node))),
            "emoji" => out.push_str(
                &node
                    .data_str("code")
                    .unwrap_or_default()
                    .split('-')
                    .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32))
                    .collect::<String>(),
            ),
            _ => out.push_str(&html::escape(&plain_text_of_nodes(std::slice::from_ref(node)))),
        }
    }
}
