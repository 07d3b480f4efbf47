//! Revisions, pages and files as the API sends them (GitBook's `Revision`, `RevisionPage*`,
//! `RevisionFile`).

use quire_content::Document;
use quire_content::document::ContentRef;
use quire_content::evaluate::{Scope, evaluate_document};
use quire_content::page_markdown::{page_to_markdown, relative_path};
use quire_content::tree::{FileEntry, PageEntry, PageKind, ReusableEntry, Tree, TreeIndex};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::clock;
use crate::urls::Urls;
use quire_store::content::store::StoredTree;
use quire_store::reads::sorted_files;
use quire_store::spaces::Visibility;

/// Where rendered content lives, for its URLs.
pub struct Context<'a> {
    pub urls: &'a Urls,
    pub org_id: &'a str,
    pub space_id: &'a str,
    pub visibility: Visibility,
    pub signing_key: &'a [u8],
}

impl Context<'_> {
    /// `urls.app` of a page at `path` (`/guides/setup`).
    pub fn app_url(&self, path: &str) -> String {
        self.urls
            .app(&format!("/o/{}/s/{}{path}", self.org_id, self.space_id))
    }

    fn published_url(&self, path: &str) -> Option<String> {
        (self.visibility != Visibility::Private)
            .then(|| self.urls.app(&format!("/s/{}{path}", self.space_id)))
    }
}

/// Body format of page reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown { stable_refs: bool },
    Document,
}

/// How expressions are evaluated on page reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluated {
    No,
    Yes,
    DeterministicOnly,
}

/// Options of content reads, as [`ReadQuery`] gives them.
#[derive(Clone, Copy, Debug, serde::Deserialize)]
#[serde(from = "ReadQuery")]
pub struct ReadOptions {
    pub format: Option<Format>,
    pub evaluated: Evaluated,
    pub metadata: bool,
    pub computed: bool,
}

/// The query of content reads.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReadQuery {
    /// The body of pages: `markdown` or `document`; absent: none. Markdown takes
    /// `format.markdown.refs`: `relative` (the default) or `stable` links.
    #[param(value_type = Option<String>)]
    format: Option<FormatParam>,
    #[param(ignore)]
    #[serde(rename = "format.markdown.refs", default)]
    refs: RefsParam,
    /// Whether expressions are evaluated: `false` (the default), `true` or
    /// `deterministic-only`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    evaluated: EvaluatedParam,
    /// `metadata=false`: leave out mutable git metadata (quire records none).
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    metadata: Option<bool>,
    /// `computed=false`: skip computed pages.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    computed: Option<bool>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum FormatParam {
    Markdown,
    Document,
}

#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum RefsParam {
    #[default]
    Relative,
    Stable,
}

#[derive(Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
enum EvaluatedParam {
    #[default]
    False,
    True,
    DeterministicOnly,
}

impl From<ReadQuery> for ReadOptions {
    fn from(q: ReadQuery) -> ReadOptions {
        ReadOptions {
            format: q.format.map(|f| match f {
                FormatParam::Markdown => Format::Markdown {
                    stable_refs: matches!(q.refs, RefsParam::Stable),
                },
                FormatParam::Document => Format::Document,
            }),
            evaluated: match q.evaluated {
                EvaluatedParam::False => Evaluated::No,
                EvaluatedParam::True => Evaluated::Yes,
                EvaluatedParam::DeterministicOnly => Evaluated::DeterministicOnly,
            },
            metadata: q.metadata.unwrap_or(true),
            computed: q.computed.unwrap_or(true),
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A page of a revision.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageJson {
    pub id: String,
    pub title: String,
    pub kind: &'static str,
    #[serde(rename = "type")]
    pub page_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emoji: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub urls: Option<PageUrls>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slug: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[schema(no_recursion)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<Vec<PageJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cover: Option<Value>,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "is_false")]
    pub hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_index: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_robots_index: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub href: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub computed_seed: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(rename = "documentId", skip_serializing_if = "Option::is_none")]
    pub document_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<Document>,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct PageUrls {
    pub app: String,
}

/// A page's layout options: GitBook's defaults, under the options the page set. Typed, so that
/// rendering a 10,000-page tree does not build 10,000 JSON maps.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Layout {
    width: Value,
    cover: Value,
    cover_size: Value,
    cover_mask: Value,
    title: Value,
    description: Value,
    table_of_contents: Value,
    outline: Value,
    pagination: Value,
    metadata: Value,
    tags: Value,
    actions: Value,
    anchors: Value,
    /// Options quire does not know, kept as set.
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn layout(page: &PageEntry) -> Layout {
    let text = |s: &str| Value::String(s.to_string());
    let mut out = Layout {
        width: text("default"),
        cover: Value::Bool(true),
        cover_size: text("hero"),
        cover_mask: text("none"),
        title: Value::Bool(true),
        description: Value::Bool(true),
        table_of_contents: Value::Bool(true),
        outline: Value::Bool(true),
        pagination: Value::Bool(true),
        metadata: Value::Bool(true),
        tags: Value::Bool(true),
        actions: Value::Bool(true),
        anchors: Value::Bool(true),
        extra: Map::new(),
    };
    if let Some(Value::Object(set)) = &page.layout {
        for (k, v) in set {
            let slot = match k.as_str() {
                "width" => &mut out.width,
                "cover" => &mut out.cover,
                "coverSize" => &mut out.cover_size,
                "coverMask" => &mut out.cover_mask,
                "title" => &mut out.title,
                "description" => &mut out.description,
                "tableOfContents" => &mut out.table_of_contents,
                "outline" => &mut out.outline,
                "pagination" => &mut out.pagination,
                "metadata" => &mut out.metadata,
                "tags" => &mut out.tags,
                "actions" => &mut out.actions,
                "anchors" => &mut out.anchors,
                _ => {
                    out.extra.insert(k.clone(), v.clone());
                    continue;
                }
            };
            *slot = v.clone();
        }
    }
    out
}

/// A page without its body; `children` are its rendered child pages (tree reads).
pub fn page(
    ctx: &Context<'_>,
    index: &TreeIndex,
    p: &PageEntry,
    children: Option<Vec<PageJson>>,
) -> PageJson {
    let path = index.path(&p.id).map(str::to_string);
    let document_page = p.kind == PageKind::Document;
    PageJson {
        id: p.id.clone(),
        title: p.title.clone(),
        kind: match p.kind {
            PageKind::Document => "sheet",
            PageKind::Group => "group",
            PageKind::Link => "link",
            PageKind::Computed => "computed",
        },
        page_type: p.kind.as_str(),
        emoji: p.emoji.clone(),
        icon: p.icon.clone(),
        created_at: p.created_at,
        updated_at: p.updated_at,
        urls: path.as_ref().map(|path| PageUrls {
            app: ctx.app_url(&format!("/{path}")),
        }),
        slug: p.kind.has_path().then(|| p.slug.clone()),
        path,
        description: p.description.clone(),
        // A computed page is answered as its source; its generated pages stand in its place.
        pages: (p.kind.has_children() && p.kind != PageKind::Computed).then(|| children.unwrap_or_default()),
        layout: document_page.then(|| layout(p)),
        cover: p.cover.clone(),
        variables: p.variables.clone(),
        hidden: p.hidden,
        no_index: p.kind.has_path().then_some(p.no_index),
        no_robots_index: p.kind.has_path().then_some(p.no_robots_index),
        tags: document_page.then(Vec::new),
        target: p.target.clone(),
        href: p.href.clone(),
        computed: p.computed.clone(),
        computed_seed: p.computed_seed.clone(),
        link_title: p.link_title.clone(),
        condition: p.condition.clone(),
        document_id: if document_page { p.document.clone() } else { None },
        markdown: None,
        document: None,
    }
}

/// The page tree under `parent`, recursively. Computed (GitBook's default, `computed=true`),
/// a computed page gives way to the pages it generated; not computed, it is answered as its
/// source (`type: computed`) and its pages are not shown.
pub fn pages(
    ctx: &Context<'_>,
    tree: &Tree,
    index: &TreeIndex,
    parent: Option<&str>,
    opts: &ReadOptions,
) -> Vec<PageJson> {
    let mut out = Vec::new();
    for p in index.children(parent).iter().filter_map(|id| tree.pages.get(id)) {
        if p.kind == PageKind::Computed {
            if opts.computed {
                out.extend(pages(ctx, tree, index, Some(&p.id), opts));
            } else {
                out.push(page(ctx, index, p, None));
            }
            continue;
        }
        let children = p
            .kind
            .has_children()
            .then(|| pages(ctx, tree, index, Some(&p.id), opts));
        out.push(page(ctx, index, p, children));
    }
    out
}

/// Adds the body to a single page read, in the requested format.
pub fn with_body(
    stored: &StoredTree,
    p: &PageEntry,
    mut json: PageJson,
    document: Option<Document>,
    opts: &ReadOptions,
) -> PageJson {
    let Some(format) = opts.format else { return json };
    if p.kind != PageKind::Document {
        return json;
    }
    let mut document = document.unwrap_or_default();
    if opts.evaluated != Evaluated::No {
        let empty = Map::new();
        let scope = Scope {
            space: &stored.tree.variables,
            page: p.variables.as_ref().unwrap_or(&empty),
        };
        evaluate_document(&mut document, &scope);
    }
    match format {
        Format::Document => {
            quire_content::with_heading_ids(&mut document);
            json.document = Some(document);
        }
        Format::Markdown { stable_refs } => {
            let index = stored.index();
            let current = index.file_path(&p.id).unwrap_or_else(|| "README.md".to_string());
            let resolve = |r: &ContentRef| ref_target(&stored.tree, index, &current, r, stable_refs);
            json.markdown = Some(page_to_markdown(p, &document, &resolve));
        }
    }
    json
}

/// How a reference is written in markdown: relative page files (`../guide/setup.md#x`), or with
/// stable refs `/pages/<id>`; files as `/files/<id>`.
fn ref_target(tree: &Tree, index: &TreeIndex, current: &str, r: &ContentRef, stable: bool) -> Option<String> {
    let page_link = |page: &str, anchor: Option<&str>| -> Option<String> {
        let base = if stable || !tree.pages.contains_key(page) {
            format!("/pages/{page}")
        } else {
            relative_path(current, &index.file_path(page)?)
        };
        Some(match anchor {
            Some(a) => format!("{base}#{a}"),
            None => base,
        })
    };
    match r {
        ContentRef::Page { page, space: None } => page_link(page, None),
        ContentRef::Anchor {
            anchor,
            page: Some(page),
            space: None,
        } => page_link(page, Some(anchor)),
        ContentRef::Anchor {
            anchor,
            page: None,
            space: None,
        } => Some(format!("#{anchor}")),
        ContentRef::File { file, space: None } => Some(format!("/files/{file}")),
        _ => None,
    }
}

/// A file of a revision, with a signed download URL.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileJson {
    pub id: String,
    pub name: String,
    pub content_type: String,
    #[serde(rename = "downloadURL")]
    pub download_url: String,
    pub size: u64,
    /// Width and height of an image.
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<quire_content::tree::Dimensions>,
}

pub fn file(ctx: &Context<'_>, f: &FileEntry) -> FileJson {
    FileJson {
        id: f.id.clone(),
        name: f.name.clone(),
        content_type: f.content_type.clone(),
        download_url: crate::files::download_url(
            ctx.urls,
            ctx.signing_key,
            ctx.space_id,
            &f.blob,
            &f.name,
            &f.content_type,
        ),
        size: f.size,
        dimensions: f.dimensions,
    }
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct ReusableJson {
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<String>,
}

pub fn reusable(r: &ReusableEntry) -> ReusableJson {
    ReusableJson {
        id: r.id.clone(),
        title: r.title.clone(),
        document: r.document.clone(),
    }
}

/// A revision.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RevisionJson {
    pub object: &'static str,
    pub id: String,
    pub parents: Vec<String>,
    pub pages: Vec<PageJson>,
    pub files: Vec<FileJson>,
    pub reusable_contents: Vec<ReusableJson>,
    pub tags: Vec<Value>,
    #[schema(value_type = Object)]
    pub variables: Map<String, Value>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub urls: RevisionUrls,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Value>,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct RevisionUrls {
    pub app: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<String>,
}

pub fn revision(
    ctx: &Context<'_>,
    stored: &StoredTree,
    opts: &ReadOptions,
    merged_from: Option<Value>,
) -> RevisionJson {
    let tree = &stored.tree;
    RevisionJson {
        object: "revision",
        id: stored.meta.id.clone(),
        parents: stored.meta.parents.clone(),
        pages: pages(ctx, tree, stored.index(), None, opts),
        files: sorted_files(tree).iter().map(|f| file(ctx, f)).collect(),
        reusable_contents: tree.reusable.values().map(|r| reusable(r)).collect(),
        tags: Vec::new(),
        variables: tree.variables.clone(),
        created_at: stored.meta.created_at,
        kind: stored.meta.kind.clone(),
        urls: RevisionUrls {
            app: ctx.app_url(&format!("/revisions/{}", stored.meta.id)),
            published: ctx.published_url(""),
            public: (ctx.visibility == Visibility::Public)
                .then(|| ctx.published_url(""))
                .flatten(),
        },
        merged_from,
    }
}
