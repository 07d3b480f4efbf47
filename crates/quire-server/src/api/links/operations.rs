//! The links operations, one per route: main's and a change request's share their handlers in
//! `read`, each route with its own typed path.

use axum::extract::State;

use super::LinksQuery;
use super::wire::{LinkList, Location};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Path, QueryOf};
use crate::paths::{ChangeRequestFilePath, ChangeRequestPagePath, FilePath, PagePath, SpacePath};
use crate::state::App;
use quire_store::paging::{List, Paging};

/// List the links of a space's main content
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/links",
    tag = "Spaces",
    params(SpacePath, LinksQuery),
    responses((status = 200, description = "The links, one item per target, with the pages they stand on.", body = LinkList)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_space_links(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(query): QueryOf<LinksQuery>,
) -> ApiResult<axum::Json<LinkList>> {
    super::space_links(caller, app, path.into(), query).await
}

/// List the links of a page of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/page/{pageId}/links",
    tag = "Space content",
    params(PagePath, LinksQuery),
    responses((status = 200, description = "The links of the page, one item per target.", body = LinkList)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_content_page_links(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<PagePath>,
    QueryOf(query): QueryOf<LinksQuery>,
) -> ApiResult<axum::Json<LinkList>> {
    super::page_links(caller, app, path.into(), query).await
}

/// List the pages of main that link to a page
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/page/{pageId}/backlinks",
    tag = "Space content",
    params(PagePath, Paging),
    responses((status = 200, description = "The pages that link to it.", body = List<Location>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_content_page_backlinks(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<PagePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Location>>> {
    super::page_backlinks(caller, app, path.into(), paging).await
}

/// List the pages of main that embed or link to a file
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/files/{fileId}/backlinks",
    tag = "Space content",
    params(FilePath, Paging),
    responses((status = 200, description = "The pages that embed or link to it.", body = List<Location>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_content_file_backlinks(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<FilePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Location>>> {
    super::file_backlinks(caller, app, path.into(), paging).await
}

/// List the links of a page of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/links",
    tag = "Change request content",
    params(ChangeRequestPagePath, LinksQuery),
    responses((status = 200, description = "The links of the page, one item per target.", body = LinkList)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_page_links(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPagePath>,
    QueryOf(query): QueryOf<LinksQuery>,
) -> ApiResult<axum::Json<LinkList>> {
    super::page_links(caller, app, path.into(), query).await
}

/// List the pages of a change request that link to a page
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/backlinks",
    tag = "Change request content",
    params(ChangeRequestPagePath, Paging),
    responses((status = 200, description = "The pages that link to it.", body = List<Location>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_page_backlinks(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPagePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Location>>> {
    super::page_backlinks(caller, app, path.into(), paging).await
}

/// List the pages of a change request that embed or link to a file
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}/backlinks",
    tag = "Change request content",
    params(ChangeRequestFilePath, Paging),
    responses((status = 200, description = "The pages that embed or link to it.", body = List<Location>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_file_backlinks(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestFilePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Location>>> {
    super::file_backlinks(caller, app, path.into(), paging).await
}
