//! Space content: revisions, pages, files and documents, read from main, from a revision or
//! from a change request; written through change request batches and templates.

mod api;
mod read;
pub mod render;
pub mod template;
pub mod write;

use std::sync::Arc;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::App;
use crate::change_requests::{self, ChangeRequest};
use crate::db::Conn;
use crate::error::{ApiError, ApiResult};
use crate::paths::RouteIds;
use quire_store::content::store::StoredTree;
use quire_store::spaces::{self, SpaceFor};
use render::Context;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(api::get_content))
        .routes(routes!(api::list_content_pages))
        .routes(routes!(api::list_content_files))
        .routes(routes!(api::get_content_file))
        .routes(routes!(api::get_content_page))
        .routes(routes!(api::get_content_page_by_path))
        .routes(routes!(api::get_content_reusable_content))
        .routes(routes!(template::apply_template))
        .routes(routes!(api::get_revision))
        .routes(routes!(api::list_revision_pages))
        .routes(routes!(api::list_revision_files))
        .routes(routes!(api::get_revision_file))
        .routes(routes!(api::get_revision_page))
        .routes(routes!(api::get_revision_page_by_path))
        .routes(routes!(api::get_revision_reusable_content))
        .routes(routes!(api::get_revision_page_document))
        .routes(routes!(api::get_change_request_content, write::update_content))
        .routes(routes!(api::list_change_request_pages))
        .routes(routes!(api::list_change_request_files))
        .routes(routes!(api::get_change_request_file))
        .routes(routes!(api::get_change_request_page))
        .routes(routes!(api::get_change_request_page_by_path))
        .routes(routes!(api::get_change_request_reusable_content))
        .routes(routes!(read::get_document))
}

/// Which revision a read is about, from the names of the path parameters.
#[derive(Debug, Clone)]
pub enum Source {
    Main,
    Revision(String),
    ChangeRequest(String),
}

impl Source {
    pub fn from_params(params: &RouteIds) -> Source {
        if let Some(r) = &params.revision_id {
            Source::Revision(r.clone())
        } else if let Some(cr) = &params.change_request_id {
            Source::ChangeRequest(cr.clone())
        } else {
            Source::Main
        }
    }
}

/// A revision opened for reading, with the space it belongs to.
pub struct Opened {
    pub space: SpaceFor,
    pub stored: Arc<StoredTree>,
    pub change_request: Option<ChangeRequest>,
}

impl Opened {
    pub fn context<'a>(&'a self, app: &'a App) -> Context<'a> {
        Context {
            urls: &app.urls,
            org_id: &self.space.space.org_id,
            space_id: &self.space.space.id,
            visibility: self.space.space.visibility,
            signing_key: &app.signing_key,
        }
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
    open(
        c,
        app,
        &caller.user_id,
        crate::extract::param(params, "spaceId")?,
        &Source::from_params(params),
    )
}

/// Opens the revision `source` of a space the caller can view.
pub fn open(
    c: &mut dyn Conn,
    app: &App,
    user_id: &str,
    space_id: &str,
    source: &Source,
) -> ApiResult<Opened> {
    let space = spaces::load_active(c, space_id, user_id)?;
    open_space(c, app, space, source)
}

/// Opens the revision `source` of a space already loaded with [`spaces::load_active`].
pub fn open_space(c: &mut dyn Conn, app: &App, space: SpaceFor, source: &Source) -> ApiResult<Opened> {
    let space_id = space.space.id.as_str();
    let (revision, change_request) = match source {
        Source::Main => (
            space
                .space
                .revision
                .clone()
                .ok_or_else(|| ApiError::internal("space without revision"))?,
            None,
        ),
        Source::Revision(r) => (r.clone(), None),
        Source::ChangeRequest(id) => {
            let cr = change_requests::model::load(c, space_id, id)?;
            (cr.revision.clone(), Some(cr))
        }
    };
    let stored = quire_store::content::store::load_tree(c, &app.content, space_id, &revision)?;
    Ok(Opened {
        space,
        stored,
        change_request,
    })
}
