//! Space content (`quire_store::reads`, `quire_store::content`): revisions, pages, files and
//! documents, read from main, from a revision or from a change request; templates applied.
//! Writing a change request's content is `write`.

mod operations;
pub(crate) mod read;
pub mod render;
mod template;
pub mod write;

use quire_store::db::Conn;
use quire_store::reads::{self, Opened, Source};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::param;
use crate::paths::RouteIds;
use crate::state::App;
use render::Context;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(operations::get_content))
        .routes(routes!(operations::list_content_pages))
        .routes(routes!(operations::list_content_files))
        .routes(routes!(operations::get_content_file))
        .routes(routes!(operations::get_content_page))
        .routes(routes!(operations::get_content_page_by_path))
        .routes(routes!(operations::get_content_reusable_content))
        .routes(routes!(template::apply_template))
        .routes(routes!(operations::get_revision))
        .routes(routes!(operations::list_revision_pages))
        .routes(routes!(operations::list_revision_files))
        .routes(routes!(operations::get_revision_file))
        .routes(routes!(operations::get_revision_page))
        .routes(routes!(operations::get_revision_page_by_path))
        .routes(routes!(operations::get_revision_reusable_content))
        .routes(routes!(operations::get_revision_reusable_content_document))
        .routes(routes!(operations::get_revision_page_document))
        .routes(routes!(
            operations::get_change_request_content,
            write::update_content
        ))
        .routes(routes!(operations::list_change_request_pages))
        .routes(routes!(operations::list_change_request_files))
        .routes(routes!(operations::get_change_request_file))
        .routes(routes!(operations::get_change_request_page))
        .routes(routes!(operations::get_change_request_page_by_path))
        .routes(routes!(operations::get_change_request_reusable_content))
        .routes(routes!(read::get_document))
}

/// Which revision a route names, from the names of its path parameters.
pub fn source(params: &RouteIds) -> Source {
    if let Some(r) = &params.revision_id {
        Source::Revision(r.clone())
    } else if let Some(cr) = &params.change_request_id {
        Source::ChangeRequest(cr.clone())
    } else {
        Source::Main
    }
}

/// How URLs of an opened revision are built.
pub fn context<'a>(app: &'a App, opened: &'a Opened) -> Context<'a> {
    Context {
        urls: &app.urls,
        org_id: &opened.space.space.org_id,
        space_id: &opened.space.space.id,
        visibility: opened.space.space.visibility,
        signing_key: &app.signing_key,
    }
}

/// Opens the revision a route names (the space's main content, a change request's or a past
/// revision's) for a caller who may read it.
pub fn open_path(
    c: &mut dyn Conn,
    app: &App,
    caller: &crate::auth::Caller,
    params: &RouteIds,
) -> ApiResult<Opened> {
    Ok(reads::open(
        c,
        &app.content,
        &caller.user_id,
        param(params, "spaceId")?,
        &source(params),
    )?)
}
