//! Space content: revisions, pages, files and documents, read from main, from a revision or
//! from a change request; written through change request batches and templates.

pub mod attempts;
pub mod derived;
pub mod init;
pub mod main;
pub mod objects;
mod read;
pub mod render;
pub mod store;
pub mod template;
pub mod write;

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};

use crate::app::App;
use crate::change_requests::{self, ChangeRequest};
use crate::db::Conn;
use crate::error::{ApiError, ApiResult};
use crate::spaces::{self, SpaceFor};
use render::Context;
use store::StoredTree;

pub fn routes() -> Router<App> {
    let reads = |prefix: &str| {
        Router::new()
            .route(prefix, get(read::get_revision))
            .route(&format!("{prefix}/pages"), get(read::list_pages))
            .route(&format!("{prefix}/files"), get(read::list_files))
            .route(&format!("{prefix}/files/{{fileId}}"), get(read::get_file))
            .route(&format!("{prefix}/page/{{pageId}}"), get(read::get_page))
            .route(
                &format!("{prefix}/path/{{*pagePath}}"),
                get(read::get_page_by_path),
            )
            .route(
                &format!("{prefix}/reusable-contents/{{reusableContentId}}"),
                get(read::get_reusable),
            )
    };
    Router::new()
        .merge(reads("/v1/spaces/{spaceId}/content"))
        .merge(reads("/v1/spaces/{spaceId}/revisions/{revisionId}"))
        .merge(reads(
            "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
        ))
        .route(
            "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/document",
            get(read::get_page_document),
        )
        .route(
            "/v1/spaces/{spaceId}/documents/{documentId}",
            get(read::get_document),
        )
        .route(
            "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
            post(write::update_content),
        )
        .route(
            "/v1/spaces/{spaceId}/content/template",
            post(template::apply_template),
        )
}

/// Which revision a read is about, from the names of the path parameters.
#[derive(Debug, Clone)]
pub enum Source {
    Main,
    Revision(String),
    ChangeRequest(String),
}

impl Source {
    pub fn from_params(params: &HashMap<String, String>) -> Source {
        if let Some(r) = params.get("revisionId") {
            Source::Revision(r.clone())
        } else if let Some(cr) = params.get("changeRequestId") {
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
    params: &HashMap<String, String>,
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
    let space = spaces::model::load_active(c, space_id, user_id)?;
    open_space(c, app, space, source)
}

/// Opens the revision `source` of a space already loaded with [`spaces::model::load_active`].
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
    let stored = store::load_tree(c, &app.content, space_id, &revision)?;
    Ok(Opened {
        space,
        stored,
        change_request,
    })
}
