//! A page's document to semantic HTML.
//!
//! Every block and inline type of GitBook's document model that quire stores has a rendering
//! (see `docs/reader.md` for the table); an unknown type renders its child blocks, its inline
//! content, or its plain text. Text is always escaped, attributes always quoted and escaped,
//! and URLs from content pass [`crate::resolve::safe_url`], so content cannot inject markup or
//! script. Content never sets a `style`: colors and alignments become classes.
//!
//! Headings sit below the page title: the highest level the document uses is `<h2>` (so a page
//! written with `##` sections, as markdown files often are, skips no level), with the anchors
//! that search gives their sections ([`quire_content::heading_anchors`]) and a self-link.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use quire_content::document::TableView;
use quire_content::{ContentRef, Document, Mark, Node, plain_text_of_nodes, slugify};
use serde::Serialize;
use serde_json::Value;

use crate::escape::Escaped;
use crate::highlight;
use crate::resolve::{FileTarget, MAX_INCLUDE_DEPTH, Resolver, safe_image_url, safe_url};

/// A heading of the page, for its outline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutlineEntry {
    pub anchor: String,
    pub title: String,
    /// 1 for the document's highest heading level, then 2 and 3.
    pub level: u8,
}

/// A document rendered as HTML, with the outline of its top-level headings.
#[derive(Debug, Clone, Default)]
pub struct RenderedDocument {
    pub html: String,
    pub outline: Vec<OutlineEntry>,
    /// Every id the body holds (and those of the page around it).
    pub ids: HashSet<String>,
}

/// Renders a document's blocks.
pub fn render_document(document: &Document, resolver: &dyn Resolver) -> RenderedDocument {
    let mut renderer = Renderer {
        resolver,
        out: String::with_capacity(4096),
        top_anchors: quire_content::heading_anchors(document).into_iter(),
        // The ids of the page around the document, which no heading may take.
        used_ids: crate::render::CHROME_IDS
            .iter()
            .map(|id| (*id).to_owned())
            .collect(),
        outline: Vec::new(),
        counter: 0,
        depth: 0,
        top_heading: document
            .nodes
            .iter()
            .filter_map(|node| heading_level(node.node_type()))
            .min()
            .unwrap_or(1),
        in_link: false,
        gitbook_seen: HashMap::new(),
    };
    renderer.blocks_top(&document.nodes);
    RenderedDocument {
        html: renderer.out,
        outline: renderer.outline,
        ids: renderer.used_ids,
    }
}

struct Renderer<'a> {
    resolver: &'a dyn Resolver,
    out: String,
    top_anchors: std::vec::IntoIter<String>,
    used_ids: HashSet<String>,
    outline: Vec<OutlineEntry>,
    /// Numbers the ids of tabs, unique in the page.
    counter: usize,
    depth: usize,
    /// The highest heading level of the document's top-level blocks, rendered as `<h2>`.
    top_heading: u8,
    /// Inside a link's text, where no other link may open (HTML forbids nested `<a>`).
    in_link: bool,
    /// How many headings of the page had each GitBook anchor so far.
    gitbook_seen: HashMap<String, usize>,
}

fn heading_level(node_type: &str) -> Option<u8> {
    match node_type {
        "heading-1" => Some(1),
        "heading-2" => Some(2),
        "heading-3" => Some(3),
        _ => None,
    }
}

fn esc(text: &str) -> Escaped<'_> {
    Escaped(text)
}

impl Renderer<'_> {
    fn blocks_top(&mut self, nodes: &[Node]) {
        for node in nodes {
            self.block(node, true);
        }
    }

    fn blocks(&mut self, nodes: &[Node]) {
        for node in nodes {
            self.block(node, false);
        }
    }

    /// Blocks where a single paragraph is written as its inline content (list items, table
    /// cells, captions): a tight rendering, like markdown's tight lists.
    fn blocks_tight(&mut self, nodes: &[Node]) {
        match nodes {
            [only] if only.node_type() == "paragraph" => self.inlines(only.children()),
            _ => self.blocks(nodes),
        }
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
    }

    fn block(&mut self, node: &Node, top_level: bool) {
        let node_type = node.node_type();
        match node_type {
            "paragraph" => {
                if plain_text_of_nodes(node.children()).trim().is_empty()
                    && !node.children().iter().any(|child| child.is_inline())
                {
                    return;
                }
                self.push("<p>");
                self.inlines(node.children());
                self.push("</p>");
            }
            "heading-1" | "heading-2" | "heading-3" => self.heading(node, top_level),
            "list-unordered" => self.list("ul", "", node),
            "list-ordered" => {
                let start = node
                    .data_value("start")
                    .and_then(Value::as_u64)
                    .filter(|start| *start != 1);
                let open = start.map_or_else(String::new, |start| format!(" start=\"{start}\""));
                self.list("ol", &open, node);
            }
            "list-tasks" => self.list("ul", " class=\"tasks\"", node),
            "blockquote" => {
                self.push("<blockquote>");
                self.blocks(node.children());
                self.push("</blockquote>");
            }
            "divider" => self.push("<hr>"),
            "code" => self.code(node, None),
            "prompt" => {
                let description = node.data_str("description").map(str::to_owned);
                match node.children().iter().find(|child| child.node_type() == "code") {
                    Some(code) => self.code(code, description.as_deref()),
                    None => self.blocks(node.children()),
                }
            }
            "math" => {
                let formula = node.data_str("formula").unwrap_or_default();
                self.push("<div class=\"math\">");
                self.math(formula, true);
                self.push("</div>");
            }
            "images" => {
                let align = node
                    .data_str("align")
                    .filter(|align| matches!(*align, "left" | "right" | "center"))
                    .unwrap_or("center");
                let _ = write!(self.out, "<div class=\"images align-{align}\">");
                for image in node.children() {
                    self.image_figure(image);
                }
                self.push("</div>");
            }
            "image" | "drawing" => {
                self.push("<div class=\"images align-center\">");
                self.image_figure(node);
                self.push("</div>");
            }
            "file" => self.file(node),
            "embed" => {
                let url = node.data_str("url").unwrap_or_default();
                self.embed(url, node);
            }
            "integration" => {
                if let Some(url) = node.data_str("url") {
                    self.embed(url, node);
                }
            }
            "content-ref" => self.content_ref(node),
            "reusable-content" => self.reusable_content(node),
            "table" => self.table(node),
            "hint" => {
                let style = node
                    .data_str("style")
                    .filter(|style| matches!(*style, "info" | "success" | "warning" | "danger"))
                    .unwrap_or("info");
                let label = match style {
                    "success" => "Success",
                    "warning" => "Warning",
                    "danger" => "Danger",
                    _ => "Info",
                };
                let _ = write!(
                    self.out,
                    "<div class=\"hint hint-{style}\" role=\"note\" aria-label=\"{label}\"><div class=\"hint-body\">"
                );
                self.blocks(node.children());
                self.push("</div></div>");
            }
            "tabs" => self.tabs(node),
            "expandable" => self.expandable(node),
            "stepper" => {
                self.push("<ol class=\"stepper\">");
                for step in node.children() {
                    self.push("<li class=\"step\">");
                    match step.node_type() {
                        "stepper-step" => self.blocks(step.children()),
                        _ => self.block(step, false),
                    }
                    self.push("</li>");
                }
                self.push("</ol>");
            }
            "columns" => {
                self.push("<div class=\"columns\">");
                for column in node.children() {
                    self.push("<div class=\"column\">");
                    match column.node_type() {
                        "column" => self.blocks(column.children()),
                        _ => self.block(column, false),
                    }
                    self.push("</div>");
                }
                self.push("</div>");
            }
            "updates" => {
                self.push("<div class=\"updates\">");
                self.blocks(node.children());
                self.push("</div>");
            }
            "update" => {
                self.push("<section class=\"update\">");
                if let Some(date) = node.data_str("date") {
                    let _ = write!(
                        self.out,
                        "<time datetime=\"{}\">{}</time>",
                        esc(date),
                        esc(&long_date(date))
                    );
                }
                self.push("<div class=\"update-body\">");
                self.blocks(node.children());
                self.push("</div></section>");
            }
            "if" => {
                let expression = node.data_str("expression").unwrap_or_default();
                if self.resolver.condition(expression) {
                    self.blocks(node.children());
                }
            }
            "swagger" | "openapi" | "openapi-operation" | "openapi-schemas" | "openapi-webhook" => {
                self.openapi(node)
            }
            _ => self.fallback(node),
        }
    }

    /// Blocks without a rendering of their own: their child blocks, their inline content, or
    /// their text.
    fn fallback(&mut self, node: &Node) {
        let children = node.children();
        if children.first().is_some_and(Node::is_block) {
            self.blocks(children);
        } else if !children.is_empty() {
            self.push("<p>");
            self.inlines(children);
            self.push("</p>");
        } else {
            let text = plain_text_of_nodes(std::slice::from_ref(node));
            if !text.trim().is_empty() {
                let _ = write!(self.out, "<p>{}</p>", esc(&text));
            }
        }
    }

    /// Where a reference in content leads. A `url` reference holding a path (`../nope.md`) is
    /// a link that matched no page or file when it was written (quire lists it as broken): it
    /// renders as its text rather than as a link to nowhere.
    fn href(&self, target: &ContentRef) -> Option<String> {
        match target {
            ContentRef::Url { url } if quire_content::is_unresolved_path(url) => None,
            _ => self.resolver.href(target),
        }
    }

    fn unique_id(&mut self, base: &str) -> String {
        let mut id = base.to_owned();
        let mut suffix = 0;
        while self.used_ids.contains(&id) {
            suffix += 1;
            id = format!("{base}-{suffix}");
        }
        self.used_ids.insert(id.clone());
        id
    }

    /// GitBook's own anchor of a title, as an empty element, where it differs from every id of
    /// the page so far (the title's own anchor included), so that links written for a site
    /// published by GitBook (imported content, links from elsewhere) still land here.
    /// Both of GitBook's rules are aliased (today's, with `-1`, `-2`... for a page's repeats as
    /// GitBook numbers them, and the earlier one), so links written against either land.
    fn gitbook_anchor_alias(&mut self, title: &str) {
        if title.trim().is_empty() {
            return;
        }
        let base = quire_content::gitbook_anchor(title);
        let seen = self.gitbook_seen.entry(base.clone()).or_insert(0);
        let current = if *seen == 0 {
            base
        } else {
            format!("{base}-{seen}")
        };
        *seen += 1;
        let legacy = quire_content::gitbook_legacy_anchor(title);
        for alias in [current, legacy] {
            if !alias.is_empty() && self.used_ids.insert(alias.clone()) {
                let _ = write!(
                    self.out,
                    "<span class=\"anchor-alias\" id=\"{}\"></span>",
                    esc(&alias)
                );
            }
        }
    }

    fn heading(&mut self, node: &Node, top_level: bool) {
        let level = heading_level(node.node_type())
            .unwrap_or(3)
            .saturating_sub(self.top_heading.saturating_sub(1))
            .max(1);
        let title = plain_text_of_nodes(node.children()).trim().to_owned();
        let wanted = if top_level { self.top_anchors.next() } else { None };
        let wanted = wanted.unwrap_or_else(|| {
            node.data_str("id")
                .filter(|id| !id.is_empty())
                .map_or_else(|| slugify(&title), str::to_owned)
        });
        let anchor = self.unique_id(&wanted);
        let tag = level + 1;
        let _ = write!(self.out, "<h{tag} id=\"{}\">", esc(&anchor));
        if node.data_str("id").is_none_or(str::is_empty) {
            self.gitbook_anchor_alias(&title);
        }
        self.inlines(node.children());
        let _ = write!(
            self.out,
            "<a class=\"anchor\" href=\"#{}\" aria-label=\"Link to this section\"></a></h{tag}>",
            esc(&anchor)
        );
        if top_level {
            self.outline.push(OutlineEntry { anchor, title, level });
        }
    }

    fn list(&mut self, tag: &str, attributes: &str, node: &Node) {
        let tasks = node.node_type() == "list-tasks";
        let _ = write!(self.out, "<{tag}{attributes}>");
        for item in node.children() {
            self.push("<li>");
            if tasks {
                let checked = item.data_bool("checked") == Some(true);
                self.push(if checked {
                    "<input type=\"checkbox\" disabled checked aria-label=\"Done\"> "
                } else {
                    "<input type=\"checkbox\" disabled aria-label=\"To do\"> "
                });
            }
            match item.node_type() {
                "list-item" => self.blocks_tight(item.children()),
                _ => self.block(item, false),
            }
            self.push("</li>");
        }
        let _ = write!(self.out, "</{tag}>");
    }

    fn code(&mut self, node: &Node, description: Option<&str>) {
        let lines: Vec<String> = node
            .children()
            .iter()
            .map(|line| plain_text_of_nodes(line.children()))
            .collect();
        let syntax = node.data_str("syntax").unwrap_or_default();
        let title = node
            .data_str("title")
            .or(description)
            .filter(|title| !title.is_empty());
        let line_numbers = node.data_bool("lineNumbers") == Some(true);
        let wrap = node.data_str("overflow") == Some("wrap") || node.data_bool("wrap") == Some(true);
        let mut classes = String::from("code");
        if line_numbers {
            classes.push_str(" line-numbers");
        }
        if wrap {
            classes.push_str(" wrap");
        }
        let _ = write!(self.out, "<figure class=\"{classes}\">");
        if let Some(title) = title {
            let _ = write!(self.out, "<figcaption>{}</figcaption>", esc(title));
        }
        let language = highlight::language_name(syntax);
        let label = match language {
            Some(name) => format!(" data-lang=\"{}\"", esc(name)),
            None => String::new(),
        };
        // The copy button works with JavaScript only, which shows it.
        let _ = write!(
            self.out,
            "<div class=\"code-body\"><button type=\"button\" class=\"copy\" hidden>Copy</button><pre{label}><code>{}</code></pre></div></figure>",
            highlight::highlight(&lines, syntax, line_numbers)
        );
    }

    /// A TeX formula as MathML ([`crate::math`]), or its source when it does not parse.
    fn math(&mut self, formula: &str, display: bool) {
        match crate::math::to_mathml(formula, display) {
            Some(mathml) => self.push(&mathml),
            None => {
                let _ = write!(self.out, "<code class=\"tex\">{}</code>", esc(formula));
            }
        }
    }

    fn image_figure(&mut self, image: &Node) {
        let Some(light) = self.image_source(image.data_value("ref")) else {
            // An image that cannot be shown (its file was missing from an import, say) still
            // has its caption, which often says what it showed.
            return self.caption_only(image);
        };
        let dark = self.image_source(image.data_value("refDark"));
        let alt = image.data_str("alt").unwrap_or_default();
        let width = image.data_value("width").and_then(length);
        self.push("<figure>");
        let class = if dark.is_some() {
            " class=\"only-light\""
        } else {
            ""
        };
        self.img(&light, alt, width, class);
        if let Some(dark) = dark {
            self.img(&dark, alt, width, " class=\"only-dark\"");
        }
        if let Some(caption) = image.fragment("caption")
            && !plain_text_of_nodes(&caption.nodes).trim().is_empty()
        {
            self.push("<figcaption>");
            self.blocks_tight(&caption.nodes);
            self.push("</figcaption>");
        }
        self.push("</figure>");
    }

    /// The URL and dimensions of an image reference (a file of the space, or a URL). A `url`
    /// holding a path is a file that matched nothing when it was written (an import's missing
    /// image): relative to the page's URL it would load nothing, so there is no image to show.
    fn image_source(&self, reference: Option<&Value>) -> Option<FileTarget> {
        match ContentRef::from_value(reference?)? {
            ContentRef::Url { url } if quire_content::is_unresolved_path(&url) => None,
            ContentRef::Url { url } => safe_image_url(&url).map(|url| FileTarget {
                url: url.to_owned(),
                ..FileTarget::default()
            }),
            ContentRef::File { file, space } => {
                let target = self.resolver.file(&file, space.as_deref())?;
                safe_image_url(&target.url)?;
                Some(target)
            }
            _ => None,
        }
    }

    fn img(&mut self, source: &FileTarget, alt: &str, width: Option<u32>, class: &str) {
        let _ = write!(
            self.out,
            "<img src=\"{}\" alt=\"{}\"{class} loading=\"lazy\" decoding=\"async\"",
            esc(&source.url),
            esc(alt)
        );
        // Width and height reserve the image's place before it loads.
        let size = match (width, source.dimensions) {
            (Some(width), Some((w, h))) if w > 0 => {
                Some((width, (u64::from(width) * u64::from(h) / u64::from(w)) as u32))
            }
            (Some(width), _) => Some((width, 0)),
            (None, Some((w, h))) => Some((w, h)),
            (None, None) => None,
        };
        if let Some((width, height)) = size {
            let _ = write!(self.out, " width=\"{width}\"");
            if height > 0 {
                let _ = write!(self.out, " height=\"{height}\"");
            }
        }
        self.push(">");
    }

    fn caption(&mut self, node: &Node) {
        if let Some(caption) = node.fragment("caption")
            && !plain_text_of_nodes(&caption.nodes).trim().is_empty()
        {
            self.push("<figcaption>");
            self.blocks_tight(&caption.nodes);
            self.push("</figcaption>");
        }
    }

    fn file(&mut self, node: &Node) {
        let target = match node.data_value("ref").and_then(ContentRef::from_value) {
            Some(ContentRef::File { file, space }) => self.resolver.file(&file, space.as_deref()),
            Some(ContentRef::Url { url }) if quire_content::is_unresolved_path(&url) => None,
            Some(ContentRef::Url { url }) => safe_url(&url).map(|url| FileTarget {
                url: url.to_owned(),
                name: url.rsplit('/').next().unwrap_or(url).to_owned(),
                ..FileTarget::default()
            }),
            _ => None,
        };
        let Some(target) = target else {
            return self.caption_only(node);
        };
        self.push("<figure class=\"file\">");
        let _ = write!(
            self.out,
            "<a class=\"card\" href=\"{}\" download><span class=\"card-title\">{}</span>",
            esc(&target.url),
            esc(&target.name)
        );
        // The kind of file (its extension) and its size.
        let kind = target
            .name
            .rsplit_once('.')
            .map(|(_, extension)| extension.to_ascii_uppercase())
            .filter(|extension| extension.len() <= 5);
        let meta: Vec<String> = kind
            .into_iter()
            .chain((target.size > 0).then(|| human_size(target.size)))
            .collect();
        if !meta.is_empty() {
            let _ = write!(
                self.out,
                "<span class=\"card-meta\">{}</span>",
                esc(&meta.join(" · "))
            );
        }
        self.push("</a>");
        self.caption(node);
        self.push("</figure>");
    }

    fn caption_only(&mut self, node: &Node) {
        if let Some(caption) = node.fragment("caption") {
            self.blocks(&caption.nodes);
        }
    }

    fn embed(&mut self, url: &str, node: &Node) {
        let Some(url) = safe_url(url) else {
            return self.caption_only(node);
        };
        let host = url::Url::parse(url)
            .ok()
            .and_then(|parsed| parsed.host_str().map(str::to_owned))
            .unwrap_or_default();
        self.push("<figure class=\"embed\">");
        let _ = write!(
            self.out,
            "<a class=\"card\" href=\"{}\" rel=\"noopener\"><span class=\"card-title\">{}</span><span class=\"card-meta\">{}</span></a>",
            esc(url),
            esc(if host.is_empty() { url } else { &host }),
            esc(url)
        );
        self.caption(node);
        self.push("</figure>");
    }

    fn content_ref(&mut self, node: &Node) {
        let Some(target) = node.data_value("ref").and_then(ContentRef::from_value) else {
            return;
        };
        let (url, title) = match &target {
            ContentRef::Page { page, space } => match self.resolver.page(page, space.as_deref()) {
                Some(page) => {
                    let title = match page.emoji {
                        Some(emoji) => format!("{emoji} {}", page.title),
                        None => page.title,
                    };
                    (page.url, title)
                }
                None => return,
            },
            ContentRef::File { file, space } => match self.resolver.file(file, space.as_deref()) {
                Some(file) => (file.url, file.name),
                None => return,
            },
            other => match self.href(other) {
                Some(url) => (url.clone(), url),
                None => return,
            },
        };
        let _ = write!(
            self.out,
            "<a class=\"card content-ref\" href=\"{}\"><span class=\"card-title\">{}</span></a>",
            esc(&url),
            esc(&title)
        );
    }

    fn reusable_content(&mut self, node: &Node) {
        let Some(ContentRef::ReusableContent {
            reusable_content,
            space,
        }) = node.data_value("ref").and_then(ContentRef::from_value)
        else {
            return;
        };
        if self.depth >= MAX_INCLUDE_DEPTH {
            return;
        }
        if let Some(document) = self
            .resolver
            .reusable_content(&reusable_content, space.as_deref())
        {
            self.depth += 1;
            self.blocks(&document.nodes);
            self.depth -= 1;
        }
    }

    fn table(&mut self, node: &Node) {
        let view = TableView::of(node);
        if view.columns.is_empty() {
            return;
        }
        let view_data = node.data_value("view");
        if view_data
            .and_then(|view| view.get("type"))
            .and_then(Value::as_str)
            == Some("cards")
        {
            self.cards(&view, view_data);
            return;
        }
        let hide_header = node
            .data_value("view")
            .and_then(|view| view.get("hideHeader"))
            .and_then(Value::as_bool)
            == Some(true);
        self.push("<div class=\"table-wrap\"><table>");
        let align = |column: &str| match view.column_field(column, "textAlignment").and_then(Value::as_str) {
            Some("center") => " class=\"center\"",
            Some("right" | "end") => " class=\"right\"",
            _ => "",
        };
        if !hide_header {
            self.push("<thead><tr>");
            for column in &view.columns {
                let title = view
                    .column_field(column, "title")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let _ = write!(self.out, "<th scope=\"col\"{}>{}</th>", align(column), esc(title));
            }
            self.push("</tr></thead>");
        }
        self.push("<tbody>");
        for record in &view.records {
            self.push("<tr>");
            for column in &view.columns {
                let _ = write!(self.out, "<td{}>", align(column));
                if let Some(value) = record.get("values").and_then(|values| values.get(*column)) {
                    self.cell(&view, column, value);
                }
                self.push("</td>");
            }
            self.push("</tr>");
        }
        self.push("</tbody></table></div>");
    }

    /// A table in GitBook's card view: one card per record, its cover image on top, the
    /// whole card a link when the view names a target column.
    fn cards(&mut self, view: &TableView<'_>, view_data: Option<&Value>) {
        let field = |key: &str| view_data.and_then(|view| view.get(key)).and_then(Value::as_str);
        let (cover, target) = (field("coverDefinition"), field("targetDefinition"));
        let large = field("cardSize") == Some("large");
        self.push(if large {
            "<div class=\"cards large\">"
        } else {
            "<div class=\"cards\">"
        });
        for record in &view.records {
            let values = record.get("values");
            let value = |column: Option<&str>| values.and_then(|values| values.get(column?));
            let href = value(target)
                .and_then(|value| ContentRef::from_value(value.get("ref").unwrap_or(value)))
                .and_then(|target| self.href(&target));
            match &href {
                Some(url) if !self.in_link => {
                    let _ = write!(self.out, "<a class=\"card table-card\" href=\"{}\">", esc(url));
                }
                _ => self.push("<div class=\"card table-card\">"),
            }
            let outer_link = self.in_link;
            self.in_link = outer_link || href.is_some();
            if let Some(source) =
                value(cover).and_then(|value| self.image_source(Some(value.get("ref").unwrap_or(value))))
            {
                self.img(&source, "", None, " class=\"card-cover\"");
            }
            for column in &view.columns {
                if Some(*column) == cover || Some(*column) == target {
                    continue;
                }
                if let Some(value) = value(Some(column)) {
                    self.push("<div class=\"card-field\">");
                    self.cell(view, column, value);
                    self.push("</div>");
                }
            }
            self.in_link = outer_link;
            self.push(if href.is_some() && !outer_link {
                "</a>"
            } else {
                "</div>"
            });
        }
        self.push("</div>");
    }

    fn cell(&mut self, view: &TableView<'_>, column: &str, value: &Value) {
        let column_type = view.column_field(column, "type").and_then(Value::as_str);
        match (column_type, value) {
            (Some("text") | None, Value::String(name)) => match view.fragment(name) {
                Some(fragment) => self.blocks_tight(&fragment.nodes),
                None => {
                    let _ = write!(self.out, "{}", esc(name));
                }
            },
            (_, Value::Bool(checked)) => {
                self.push(if *checked {
                    "<span class=\"check\" aria-label=\"Yes\">✓</span>"
                } else {
                    "<span class=\"check\" aria-label=\"No\">✗</span>"
                });
            }
            (Some("select"), Value::Array(values)) => {
                let _ = write!(
                    self.out,
                    "{}",
                    esc(&select_labels(view, column, values).join(", "))
                );
            }
            (_, Value::Object(_)) => {
                let reference = value.get("ref").unwrap_or(value);
                if let Some(target) = ContentRef::from_value(reference) {
                    self.reference_link(&target);
                }
            }
            (_, Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        self.push(", ");
                    }
                    match ContentRef::from_value(item.get("ref").unwrap_or(item)) {
                        Some(target) => self.reference_link(&target),
                        None => {
                            let _ = write!(self.out, "{}", esc(&scalar_text(item)));
                        }
                    }
                }
            }
            (_, value) => {
                let _ = write!(self.out, "{}", esc(&scalar_text(value)));
            }
        }
    }

    /// A link to a reference titled with what it leads to.
    fn reference_link(&mut self, target: &ContentRef) {
        let title = match target {
            ContentRef::Page { page, space } => {
                self.resolver.page(page, space.as_deref()).map(|page| page.title)
            }
            ContentRef::File { file, space } => {
                self.resolver.file(file, space.as_deref()).map(|file| file.name)
            }
            ContentRef::User { user } => self.resolver.user(user),
            _ => None,
        };
        match self.href(target) {
            Some(url) if !self.in_link => {
                let title = title.unwrap_or_else(|| url.clone());
                let _ = write!(self.out, "<a href=\"{}\">{}</a>", esc(&url), esc(&title));
            }
            Some(url) => {
                let _ = write!(self.out, "{}", esc(&title.unwrap_or(url)));
            }
            None => {
                if let Some(title) = title {
                    let _ = write!(self.out, "{}", esc(&title));
                }
            }
        }
    }

    fn tabs(&mut self, node: &Node) {
        self.counter += 1;
        let group = self.unique_id(&format!("tabs-{}", self.counter));
        // Radio buttons and labels: the tabs switch without JavaScript, by keyboard (arrow keys
        // move between the radios of a group) and by pointer.
        self.push("<div class=\"tabs\">");
        for (index, item) in node.children().iter().enumerate() {
            let id = format!("{group}-{index}");
            self.used_ids.insert(id.clone());
            let title = item.data_str("title").filter(|title| !title.trim().is_empty());
            let title = title.map_or_else(|| format!("Tab {}", index + 1), str::to_owned);
            let checked = if index == 0 { " checked" } else { "" };
            let _ = write!(
                self.out,
                "<input type=\"radio\" name=\"{group}\" id=\"{id}\"{checked}><label for=\"{id}\">{}</label><div class=\"tab-panel\">",
                esc(&title)
            );
            match item.node_type() {
                "tabs-item" => self.blocks(item.children()),
                _ => self.block(item, false),
            }
            self.push("</div>");
        }
        self.push("</div>");
    }

    fn expandable(&mut self, node: &Node) {
        let open = if node.data_bool("defaultExpanded") == Some(true) {
            " open"
        } else {
            ""
        };
        let title = node.fragment("expandable-title");
        // Linkable by its title, as GitBook's are: imported content links to them.
        let text = title.map(|t| plain_text_of_nodes(&t.nodes)).unwrap_or_default();
        let text = text.trim();
        let _ = write!(self.out, "<details class=\"expandable\"{open}");
        if !text.is_empty() {
            let anchor = self.unique_id(&slugify(text));
            let _ = write!(self.out, " id=\"{}\"", esc(&anchor));
        }
        self.push("><summary>");
        self.gitbook_anchor_alias(text);
        if let Some(title) = title {
            for paragraph in &title.nodes {
                self.inlines(paragraph.children());
            }
        }
        self.push("</summary><div class=\"expandable-body\">");
        if let Some(body) = node.fragment("expandable-body") {
            self.blocks(&body.nodes);
        }
        self.push("</div></details>");
    }

    fn openapi(&mut self, node: &Node) {
        let method = node.data_str("method").unwrap_or_default().to_ascii_uppercase();
        let path = node.data_str("path").unwrap_or_default();
        let spec = node
            .data_value("ref")
            .and_then(ContentRef::from_value)
            .and_then(|target| self.href(&target));
        self.push("<div class=\"openapi\">");
        if !method.is_empty() {
            let class: String = method
                .chars()
                .filter(char::is_ascii_alphabetic)
                .collect::<String>()
                .to_ascii_lowercase();
            let _ = write!(
                self.out,
                "<span class=\"method method-{class}\">{}</span> ",
                esc(&method)
            );
        }
        if !path.is_empty() {
            let _ = write!(self.out, "<code>{}</code> ", esc(path));
        }
        match spec {
            Some(url) => {
                let _ = write!(self.out, "<a href=\"{}\">OpenAPI specification</a>", esc(&url));
            }
            None if method.is_empty() && path.is_empty() => self.push("OpenAPI reference"),
            None => {}
        }
        self.push("</div>");
    }

    // -----------------------------------------------------------------------------------------
    // Inlines

    fn inlines(&mut self, nodes: &[Node]) {
        let mut open: Vec<&Mark> = Vec::new();
        for node in nodes {
            if node.is_text() {
                for leaf in node.leaves() {
                    let marks = leaf_marks(&leaf.marks);
                    let common = open
                        .iter()
                        .zip(&marks)
                        .take_while(|(a, b)| same_mark(a, b))
                        .count();
                    while open.len() > common {
                        if let Some(mark) = open.pop() {
                            self.close_mark(mark);
                        }
                    }
                    for mark in &marks[common..] {
                        self.open_mark(mark);
                        open.push(mark);
                    }
                    self.text(&leaf.text, open.iter().any(|mark| mark.mark_type == "code"));
                }
            } else {
                while let Some(mark) = open.pop() {
                    self.close_mark(mark);
                }
                self.inline(node);
            }
        }
        while let Some(mark) = open.pop() {
            self.close_mark(mark);
        }
    }

    fn text(&mut self, text: &str, code: bool) {
        for (index, line) in text.split('\n').enumerate() {
            if index > 0 {
                self.push(if code { " " } else { "<br>" });
            }
            let _ = write!(self.out, "{}", esc(line));
        }
    }

    fn open_mark(&mut self, mark: &Mark) {
        match mark.mark_type.as_str() {
            "color" => {
                let text = color_token(mark, "text");
                let background = color_token(mark, "background");
                let mut classes = Vec::new();
                if let Some(text) = text {
                    classes.push(format!("color-{text}"));
                }
                if let Some(background) = background {
                    classes.push(format!("bg-{background}"));
                }
                let tag = if background.is_some() { "mark" } else { "span" };
                let _ = write!(self.out, "<{tag} class=\"{}\">", classes.join(" "));
            }
            other => {
                if let Some(tag) = mark_tag(other) {
                    let _ = write!(self.out, "<{tag}>");
                }
            }
        }
    }

    fn close_mark(&mut self, mark: &Mark) {
        let tag = match mark.mark_type.as_str() {
            "color" if color_token(mark, "background").is_some() => "mark",
            "color" => "span",
            other => mark_tag(other).unwrap_or("span"),
        };
        let _ = write!(self.out, "</{tag}>");
    }

    fn inline(&mut self, node: &Node) {
        match node.node_type() {
            "link" => {
                let target = node.data_value("ref").and_then(ContentRef::from_value);
                // An empty link to an anchor marks that place (`<a name="x"></a>` imported).
                if let Some(ContentRef::Anchor { anchor, .. }) = &target
                    && plain_text_of_nodes(node.children()).is_empty()
                {
                    if self.used_ids.insert(anchor.clone()) {
                        let _ = write!(
                            self.out,
                            "<span class=\"anchor-alias\" id=\"{}\"></span>",
                            esc(anchor)
                        );
                    }
                    return;
                }
                match target.as_ref().and_then(|target| self.href(target)) {
                    Some(url) if !self.in_link => {
                        let _ = write!(self.out, "<a href=\"{}\"", esc(&url));
                        if let Some(title) = node.data_str("title").filter(|title| !title.is_empty()) {
                            let _ = write!(self.out, " title=\"{}\"", esc(title));
                        }
                        self.push(">");
                        self.in_link = true;
                        self.inlines(node.children());
                        self.in_link = false;
                        self.push("</a>");
                    }
                    _ => self.inlines(node.children()),
                }
            }
            "inline-image" => {
                if let Some(source) = self.image_source(node.data_value("ref")) {
                    let alt = node.data_str("alt").unwrap_or_default().to_owned();
                    let width = node.data_value("width").and_then(length);
                    // GitBook's sizes: `line` fits the line of text; `original`, the default,
                    // is the image's own size, at most 300 px wide.
                    // A width the author set is the size they meant.
                    let class = match (node.data_str("size"), width) {
                        (Some("line"), _) => " class=\"inline line\"",
                        (_, Some(_)) => " class=\"inline sized\"",
                        _ => " class=\"inline\"",
                    };
                    self.img(&source, &alt, width, class);
                }
            }
            "inline-math" => {
                let formula = node.data_str("formula").unwrap_or_default();
                self.math(formula, false);
            }
            "emoji" => {
                let emoji: String = node
                    .data_str("code")
                    .unwrap_or_default()
                    .split('-')
                    .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32))
                    .collect();
                let _ = write!(self.out, "{}", esc(&emoji));
            }
            "mention" => {
                let Some(target) = node.data_value("ref").and_then(ContentRef::from_value) else {
                    return;
                };
                match &target {
                    ContentRef::User { user } => {
                        let name = self.resolver.user(user).unwrap_or_else(|| "someone".to_owned());
                        let _ = write!(self.out, "<span class=\"mention\">@{}</span>", esc(&name));
                    }
                    other => self.reference_link(other),
                }
            }
            "button" => {
                let label = node.data_str("label").unwrap_or_default();
                let kind = match node.data_str("kind") {
                    Some("secondary") => "secondary",
                    _ => "primary",
                };
                let target = node.data_value("ref").and_then(ContentRef::from_value);
                match target.as_ref().and_then(|target| self.href(target)) {
                    Some(url) => {
                        let _ = write!(
                            self.out,
                            "<a class=\"button button-{kind}\" href=\"{}\">{}</a>",
                            esc(&url),
                            esc(label)
                        );
                    }
                    None => {
                        let _ = write!(self.out, "{}", esc(label));
                    }
                }
            }
            "annotation" => {
                // The annotated text, then the note; the note shows on hover and focus, and
                // reads inline for screen readers.
                self.push("<span class=\"annotation\" tabindex=\"0\">");
                self.inlines(node.children());
                let body: Vec<String> = node
                    .fragments()
                    .iter()
                    .map(|fragment| plain_text_of_nodes(&fragment.nodes))
                    .filter(|text| !text.trim().is_empty())
                    .collect();
                if !body.is_empty() {
                    let _ = write!(
                        self.out,
                        "<span class=\"annotation-body\"> ({})</span>",
                        esc(&body.join(" "))
                    );
                }
                self.push("</span>");
            }
            // Icons are names in an icon font quire does not ship; expressions are evaluated
            // by the server before rendering (quire_content::evaluate), else left out.
            "icon" | "expression" => {}
            _ => {
                if node.children().is_empty() {
                    let text = plain_text_of_nodes(std::slice::from_ref(node));
                    let _ = write!(self.out, "{}", esc(&text));
                } else {
                    self.inlines(node.children());
                }
            }
        }
    }
}

/// Marks in nesting order, outermost first; unknown marks render their text unmarked.
const MARK_ORDER: &[(&str, &str)] = &[
    ("bold", "strong"),
    ("italic", "em"),
    ("strikethrough", "s"),
    ("color", "span"),
    ("superscript", "sup"),
    ("subscript", "sub"),
    ("keyboard", "kbd"),
    ("code", "code"),
];

fn mark_tag(mark_type: &str) -> Option<&'static str> {
    MARK_ORDER
        .iter()
        .find(|(known, _)| *known == mark_type)
        .map(|(_, tag)| *tag)
}

/// The known marks of a leaf, once each, in nesting order.
fn leaf_marks(marks: &[Mark]) -> Vec<&Mark> {
    let mut known: Vec<(usize, &Mark)> = marks
        .iter()
        .filter_map(|mark| {
            let rank = MARK_ORDER
                .iter()
                .position(|(known, _)| *known == mark.mark_type)?;
            Some((rank, mark))
        })
        .collect();
    known.sort_by_key(|(rank, _)| *rank);
    known.dedup_by_key(|(rank, _)| *rank);
    known.into_iter().map(|(_, mark)| mark).collect()
}

fn same_mark(a: &Mark, b: &Mark) -> bool {
    a.mark_type == b.mark_type && (a.mark_type != "color" || a.data == b.data)
}

/// GitBook's color tokens (`red`, `$primary`); anything else is ignored, so content never
/// writes CSS.
pub fn color_token(mark: &Mark, key: &str) -> Option<&'static str> {
    const TOKENS: &[&str] = &[
        "green", "blue", "red", "orange", "yellow", "purple", "pink", "violet", "cyan", "primary", "info",
        "success", "warning", "danger", "tint",
    ];
    let value = mark.data.as_ref()?.get(key)?.as_str()?;
    let value = value.strip_prefix('$').unwrap_or(value);
    TOKENS.iter().find(|token| **token == value).copied()
}

/// A length in pixels (`300`, `"300"`, `"300px"`); percentages and other units give none.
pub fn length(value: &Value) -> Option<u32> {
    match value {
        Value::Number(number) => number.as_f64().map(|n| n.round() as u32),
        Value::String(text) => text
            .trim()
            .trim_end_matches("px")
            .parse::<f64>()
            .ok()
            .map(|n| n.round() as u32),
        _ => None,
    }
    .filter(|width| *width > 0 && *width < 10_000)
}

/// The labels of the options a `select` cell holds (a value without an option as itself).
pub fn select_labels(view: &TableView<'_>, column: &str, values: &[Value]) -> Vec<String> {
    let options = view.column_field(column, "options").and_then(Value::as_array);
    values
        .iter()
        .map(|value| {
            options
                .and_then(|options| {
                    options
                        .iter()
                        .find(|option| option.get("value") == Some(value) || option.get("id") == Some(value))
                })
                .and_then(|option| option.get("label"))
                .and_then(Value::as_str)
                .map_or_else(|| scalar_text(value), str::to_owned)
        })
        .collect()
}

/// A table value as text.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// `March 1, 2025` for a date or timestamp starting `2025-03-01`; anything else as it is.
pub fn long_date(date: &str) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    date.get(..10)
        .and_then(|day| time::Date::parse(day, format).ok())
        .and_then(|day| {
            day.format(time::macros::format_description!(
                "[month repr:long] [day padding:none], [year]"
            ))
            .ok()
        })
        .unwrap_or_else(|| date.to_owned())
}

/// `1.2 MB`, `340 KB`, `12 bytes`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: &[&str] = &["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} bytes");
    }
    let mut size = bytes as f64 / 1000.0;
    let mut unit = 0;
    while size >= 1000.0 && unit + 1 < UNITS.len() {
        size /= 1000.0;
        unit += 1;
    }
    if size < 10.0 {
        format!("{size:.1} {}", UNITS[unit])
    } else {
        format!("{size:.0} {}", UNITS[unit])
    }
}
