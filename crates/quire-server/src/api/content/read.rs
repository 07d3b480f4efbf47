//! Reads of content: a revision, its pages, files, reusable contents and documents.

use axum::extract::State;
use quire_content::Document;
use serde::Serialize;

use super::render::{self, FileJson, PageJson, ReadOptions, ReusableJson, RevisionJson};
use crate::auth::{Caller, Reader};
use crate::error::{ApiError, ApiResult};
use crate::extract::Path;
use crate::state::App;
use quire_store::content::store;
use quire_store::paging::List;
use quire_store::reads::{self, Opened, Source, open_space};
use quire_store::spaces::SpaceFor;

use crate::extract::param;
use crate::paths::{DocumentPath, RouteIds};
use quire_store::paging::Paging;

/// The space a content route names, if the reader may read its content (from the space cache).
/// A published site's visitor reads only what the site publishes: main, or the revision main is
/// at.
async fn active_space(app: &App, reader: &Reader, params: &RouteIds) -> ApiResult<SpaceFor> {
    let space_id = param(params, "spaceId")?;
    let space = reader.active_space(app, space_id).await?;
    if let Reader::Visitor(_) = reader {
        match super::source(params) {
            Source::Main => {}
            Source::Revision(r) if space.space.revision.as_deref() == Some(r.as_str()) => {}
            Source::Revision(r) => {
                return Err(ApiError::not_found(format!("revision {r:?} not found")));
            }
            Source::ChangeRequest(cr) => {
                return Err(ApiError::not_found(format!("change request {cr:?} not found")));
            }
        }
    }
    Ok(space)
}

/// Runs a read of one item of the revision a content route names, inline on SQLite.
async fn read_opened<T: Send + 'static>(
    app: &App,
    reader: Reader,
    params: RouteIds,
    read: impl FnOnce(&mut dyn crate::db::Conn, &App, &Opened, &RouteIds) -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    let space = active_space(app, &reader, &params).await?;
    read_in_space(app, space, params, read).await
}

/// As [`read_opened`], with the space already loaded.
async fn read_in_space<T: Send + 'static>(
    app: &App,
    space: SpaceFor,
    params: RouteIds,
    read: impl FnOnce(&mut dyn crate::db::Conn, &App, &Opened, &RouteIds) -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    let app2 = app.clone();
    app.db
        .read(move |c| {
            let opened = open_space(c, &app2.content, space, &super::source(&params))?;
            read(c, &app2, &opened, &params)
        })
        .await
}

/// The page of a revision, or a 404 naming it.
fn page_in<'a>(opened: &'a Opened, page_id: &str) -> ApiResult<&'a quire_content::tree::PageEntry> {
    opened
        .stored
        .tree
        .pages
        .get(page_id)
        .map(|p| p.as_ref())
        .ok_or_else(|| ApiError::not_found(format!("page {page_id:?} not found in this revision")))
}

/// The reusable content of a revision, or a 404 naming it.
fn reusable_in<'a>(opened: &'a Opened, id: &str) -> ApiResult<&'a quire_content::tree::ReusableEntry> {
    opened
        .stored
        .tree
        .reusable
        .get(id)
        .map(|r| r.as_ref())
        .ok_or_else(|| ApiError::not_found(format!("reusable content {id:?} not found in this revision")))
}

/// Runs a read that renders a whole revision on the blocking pool.
async fn with_revision<T: Send + 'static>(
    app: &App,
    reader: Reader,
    params: RouteIds,
    render: impl FnOnce(&App, &Opened) -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    let space = active_space(app, &reader, &params).await?;
    let app2 = app.clone();
    app.db
        .read_blocking(move |c| {
            let opened = open_space(c, &app2.content, space, &super::source(&params))?;
            render(&app2, &opened)
        })
        .await
}

pub async fn get_revision(
    reader: Reader,
    app: App,
    params: RouteIds,
    opts: ReadOptions,
) -> ApiResult<axum::Json<RevisionJson>> {
    let space = active_space(&app, &reader, &params).await?;
    let app2 = app.clone();
    let json = app
        .db
        .read_blocking(move |c| {
            let space_id = param(&params, "spaceId")?;
            let opened = open_space(c, &app2.content, space, &super::source(&params))?;
            let merged_from = match &opened.stored.meta.merged_from {
                Some(cr) => {
                    let cr = quire_store::change_requests::load(c, space_id, cr)?;
                    let cr = quire_store::change_requests::one_with_users(c, cr)?;
                    serde_json::to_value(crate::api::change_requests::cr_json(&app2.urls, &cr)?).ok()
                }
                None => None,
            };
            Ok::<_, ApiError>(render::revision(
                &super::context(&app2, &opened),
                &opened.stored,
                &opts,
                merged_from,
            ))
        })
        .await?;
    Ok(axum::Json(json))
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct Pages {
    pages: Vec<PageJson>,
}

/// The page tree. It is the same for every caller who may read the revision, so its JSON is
/// rendered once per revision and served from the content cache, gzip-compressed (once, too)
/// for clients that take it: the tree of a 10,000-page space is 8 MB, about 0.5 MB compressed.
pub async fn list_pages(
    reader: Reader,
    app: App,
    params: RouteIds,
    opts: ReadOptions,
    headers: axum::http::HeaderMap,
) -> ApiResult<axum::response::Response> {
    let gzip = crate::encoding::accepts_gzip(&headers);
    let body = with_revision(&app, reader, params, move |app, opened| {
        let key = store::RenderedKey {
            what: "pages",
            revision: opened.stored.id().to_string(),
            org_id: opened.space.space.org_id.clone(),
            // Published URLs depend on the space's visibility, which changes without a new
            // revision.
            options: format!("computed={} {}", opts.computed, opened.space.space.visibility),
        };
        let render = || {
            let ctx = super::context(app, opened);
            let pages = Pages {
                pages: render::pages(&ctx, &opened.stored.tree, opened.stored.index(), None, &opts),
            };
            // About 800 bytes per page: one allocation instead of a dozen regrowths.
            let mut out = Vec::with_capacity(opened.stored.tree.pages.len() * 900 + 64);
            serde_json::to_writer(&mut out, &pages)
                .map_err(|e| ApiError::internal(format!("cannot render the page tree: {e}")))?;
            Ok::<_, ApiError>(crate::encoding::kept(out))
        };
        if !gzip {
            return app.content.rendered(key, render);
        }
        // Only the compressed body is kept: the plain one is rendered again if a client that
        // does not take gzip asks.
        let gzip_key = store::RenderedKey {
            what: "pages.gz",
            ..key
        };
        app.content.rendered(gzip_key, || {
            crate::encoding::gzip(&render()?, crate::encoding::Effort::Thorough)
                .map_err(|e| ApiError::internal(format!("cannot compress the page tree: {e}")))
        })
    })
    .await?;
    Ok(crate::encoding::json(body, gzip))
}

pub async fn list_files(
    reader: Reader,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<FileJson>>> {
    let list = with_revision(&app, reader, params, move |app, opened| {
        let files = reads::files(opened, &paging)?;
        let ctx = super::context(app, opened);
        Ok(files.map(|f| render::file(&ctx, f)))
    })
    .await?;
    Ok(axum::Json(list))
}

pub async fn get_file(reader: Reader, app: App, params: RouteIds) -> ApiResult<axum::Json<FileJson>> {
    let json =
        read_opened(&app, reader, params, move |_, app, opened, params| {
            let file_id = param(params, "fileId")?;
            let file =
                opened.stored.tree.files.get(file_id).ok_or_else(|| {
                    ApiError::not_found(format!("file {file_id:?} not found in this revision"))
                })?;
            Ok::<_, ApiError>(render::file(&super::context(app, opened), file))
        })
        .await?;
    Ok(axum::Json(json))
}

/// Renders one page with its body.
fn page_json(
    c: &mut dyn crate::db::Conn,
    app: &App,
    opened: &Opened,
    page_id: &str,
    opts: &ReadOptions,
) -> ApiResult<PageJson> {
    let stored = &opened.stored;
    let page = page_in(opened, page_id)?;
    let ctx = super::context(app, opened);
    let children = page
        .kind
        .has_children()
        .then(|| render::pages(&ctx, &stored.tree, stored.index(), Some(page_id), opts));
    let json = render::page(&ctx, stored.index(), page, children);
    let document = match (&opts.format, &page.document) {
        (Some(_), Some(hash)) => Some(store::owned_document(
            c,
            &app.content,
            &stored.meta.space_id,
            hash,
        )?),
        _ => None,
    };
    Ok(render::with_body(stored, page, json, document, opts))
}

/// A page of a revision is the same for every caller who may read the revision (evaluation
/// depends only on the revision's variables), so its answer is cached per revision, page and
/// options.
/// One page. Its answer is cached per revision as sent, gzip-compressed for clients that take
/// it: a page answer is about 3 KB of JSON, a third of that compressed, so the cache holds every
/// page of a 10,000-page space and a read rarely parses and renders a document again.
pub async fn get_page(
    reader: Reader,
    app: App,
    params: RouteIds,
    opts: ReadOptions,
    headers: axum::http::HeaderMap,
) -> ApiResult<axum::response::Response> {
    let gzip = crate::encoding::accepts_gzip(&headers);
    let space = active_space(&app, &reader, &params).await?;
    // The main revision's pages are the hottest reads there are: answered from memory when
    // both the space and the page's answer are, without a database connection.
    let page_id = param(&params, "pageId")?.to_string();
    if let (Source::Main, Some(revision)) = (super::source(&params), &space.space.revision) {
        let key = page_key(revision, &space, &page_id, &opts, gzip);
        if let Some(body) = app.content.cached_page(&key) {
            return Ok(crate::encoding::json(body, gzip));
        }
    }
    let body = read_in_space(&app, space, params, move |c, app, opened, _| {
        let key = page_key(opened.stored.id(), &opened.space, &page_id, &opts, gzip);
        app.content.page(key, || {
            let json = page_json(c, app, opened, &page_id, &opts)?;
            let body = serde_json::to_vec(&json)
                .map_err(|e| ApiError::internal(format!("cannot render the page: {e}")))?;
            crate::encoding::as_sent(body, gzip)
                .map_err(|e| ApiError::internal(format!("cannot compress the page: {e}")))
        })
    })
    .await?;
    Ok(crate::encoding::json(body, gzip))
}

/// What a page's answer is cached under: everything it depends on (published URLs depend on the
/// space's visibility).
fn page_key(
    revision: &str,
    space: &SpaceFor,
    page_id: &str,
    opts: &ReadOptions,
    gzip: bool,
) -> store::RenderedKey {
    store::RenderedKey {
        what: if gzip { "page.gz" } else { "page" },
        revision: revision.to_string(),
        org_id: space.space.org_id.clone(),
        options: format!("{page_id}\u{0}{opts:?}\u{0}{}", space.space.visibility),
    }
}

pub async fn get_page_by_path(
    reader: Reader,
    app: App,
    params: RouteIds,
    opts: ReadOptions,
) -> ApiResult<axum::Json<PageJson>> {
    let json = read_opened(&app, reader, params, move |c, app, opened, params| {
        let path = param(params, "pagePath")?;
        let id = opened
            .stored
            .index()
            .by_path(path)
            .ok_or_else(|| ApiError::not_found(format!("no page at path {path:?} in this revision")))?
            .to_string();
        page_json(c, app, opened, &id, &opts)
    })
    .await?;
    Ok(axum::Json(json))
}

pub async fn get_reusable(reader: Reader, app: App, params: RouteIds) -> ApiResult<axum::Json<ReusableJson>> {
    let json = read_opened(&app, reader, params, move |_, _, opened, params| {
        let r = reusable_in(opened, param(params, "reusableContentId")?)?;
        Ok::<_, ApiError>(render::reusable(r))
    })
    .await?;
    Ok(axum::Json(json))
}

/// `GET /v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}/document`.
pub async fn get_reusable_document(
    reader: Reader,
    app: App,
    params: RouteIds,
) -> ApiResult<axum::Json<Document>> {
    let document = read_opened(&app, reader, params, move |c, app, opened, params| {
        let r = reusable_in(opened, param(params, "reusableContentId")?)?;
        Ok::<_, ApiError>(match &r.document {
            Some(hash) => store::load_document(c, &app.content, &opened.stored.meta.space_id, hash)?
                .document
                .clone(),
            None => Document::default(),
        })
    })
    .await?;
    Ok(axum::Json(document))
}

/// `GET /v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/document`.
pub async fn get_page_document(
    reader: Reader,
    app: App,
    params: RouteIds,
    opts: ReadOptions,
) -> ApiResult<axum::Json<Document>> {
    let document = read_opened(&app, reader, params, move |c, app, opened, params| {
        let page = page_in(opened, param(params, "pageId")?)?;
        let opts = ReadOptions {
            format: Some(render::Format::Document),
            ..opts
        };
        let document = match &page.document {
            Some(hash) => Some(
                store::load_document(c, &app.content, &opened.stored.meta.space_id, hash)?
                    .document
                    .clone(),
            ),
            None => None,
        };
        let ctx = super::context(app, opened);
        let json = render::with_body(
            &opened.stored,
            page,
            render::page(&ctx, opened.stored.index(), page, None),
            document,
            &opts,
        );
        Ok::<_, ApiError>(json.document.unwrap_or_default())
    })
    .await?;
    Ok(axum::Json(document))
}

/// `GET /v1/spaces/{spaceId}/documents/{documentId}`: a stored document of the space.
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/documents/{documentId}",
    tag = "Space content",
    summary = "Get a stored document of a space",
    params(DocumentPath),
    responses((status = 200, description = "The document.", body = Object)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn get_document(
    caller: Caller,
    State(app): State<App>,
    Path(DocumentPath {
        space_id,
        document_id,
    }): Path<DocumentPath>,
) -> ApiResult<axum::Json<Document>> {
    let app2 = app.clone();
    let document = app
        .db
        .read(move |c| {
            quire_store::spaces::load_active(c, &space_id, &caller.user_id)?;
            let is_document = quire_store::content::objects::is_document(c, &space_id, &document_id)?;
            if !is_document {
                return Err(ApiError::not_found(format!(
                    "document {document_id:?} not found in this space"
                )));
            }
            Ok(store::load_document(c, &app2.content, &space_id, &document_id)?
                .document
                .clone())
        })
        .await?;
    Ok(axum::Json(document))
}
