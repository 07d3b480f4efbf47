//! The operations that read content, one per route: main's content, a past revision's and a
//! change request's share their handlers in `read`, each route with its own typed path.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use quire_content::Document;

use super::read;
use super::render::{FileJson, PageJson, ReadOptions, ReadQuery, ReusableJson, RevisionJson};
use crate::auth::{Caller, Reader};
use crate::error::ApiResult;
use crate::extract::{Path, QueryOf};
use crate::paths::{
    ChangeRequestFilePath, ChangeRequestPageByPathPath, ChangeRequestPagePath, ChangeRequestPath,
    ChangeRequestReusableContentPath, FilePath, PageByPathPath, PagePath, ReusableContentPath,
    RevisionFilePath, RevisionPageByPathPath, RevisionPagePath, RevisionPath, RevisionReusableContentPath,
    SpacePath,
};
use crate::state::App;
use quire_store::paging::{List, Paging};

/// Get the revision of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content",
    tag = "Space content",
    params(SpacePath, ReadQuery),
    responses((status = 200, description = "The revision with its pages, files and reusable contents.", body = RevisionJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_content(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<RevisionJson>> {
    read::get_revision(reader, app, path.into(), opts).await
}

/// List the pages of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/pages",
    tag = "Space content",
    params(SpacePath, ReadQuery),
    responses((status = 200, description = "The page tree (gzip-compressed for clients that accept it).", body = read::Pages)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_content_pages(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::list_pages(reader, app, path.into(), opts, headers).await
}

/// List the files of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/files",
    tag = "Space content",
    params(SpacePath, ReadQuery, Paging),
    responses((status = 200, description = "The files, oldest first.", body = List<FileJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_content_files(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(_): QueryOf<ReadOptions>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<FileJson>>> {
    read::list_files(reader, app, path.into(), paging).await
}

/// Get a file of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/files/{fileId}",
    tag = "Space content",
    params(FilePath, ReadQuery),
    responses((status = 200, description = "The file.", body = FileJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_content_file(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<FilePath>,
    QueryOf(_): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<FileJson>> {
    read::get_file(reader, app, path.into()).await
}

/// Get a page of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/page/{pageId}",
    tag = "Space content",
    params(PagePath, ReadQuery),
    responses((status = 200, description = "The page with its body (gzip-compressed for clients that accept it).", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_content_page(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<PagePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::get_page(reader, app, path.into(), opts, headers).await
}

/// Get a page of main by its path
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/path/{*pagePath}",
    tag = "Space content",
    params(PageByPathPath, ReadQuery),
    responses((status = 200, description = "The page with its body.", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_content_page_by_path(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<PageByPathPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<PageJson>> {
    read::get_page_by_path(reader, app, path.into(), opts).await
}

/// Get a reusable content of main
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/content/reusable-contents/{reusableContentId}",
    tag = "Space content",
    params(ReusableContentPath),
    responses((status = 200, description = "The reusable content.", body = ReusableJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_content_reusable_content(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<ReusableContentPath>,
) -> ApiResult<axum::Json<ReusableJson>> {
    read::get_reusable(reader, app, path.into()).await
}

/// Get the revision of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}",
    tag = "Revisions",
    params(RevisionPath, ReadQuery),
    responses((status = 200, description = "The revision with its pages, files and reusable contents.", body = RevisionJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<RevisionJson>> {
    read::get_revision(reader, app, path.into(), opts).await
}

/// List the pages of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/pages",
    tag = "Revisions",
    params(RevisionPath, ReadQuery),
    responses((status = 200, description = "The page tree (gzip-compressed for clients that accept it).", body = read::Pages)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_revision_pages(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::list_pages(reader, app, path.into(), opts, headers).await
}

/// List the files of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/files",
    tag = "Revisions",
    params(RevisionPath, ReadQuery, Paging),
    responses((status = 200, description = "The files, oldest first.", body = List<FileJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_revision_files(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPath>,
    QueryOf(_): QueryOf<ReadOptions>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<FileJson>>> {
    read::list_files(reader, app, path.into(), paging).await
}

/// Get a file of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/files/{fileId}",
    tag = "Revisions",
    params(RevisionFilePath, ReadQuery),
    responses((status = 200, description = "The file.", body = FileJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_file(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionFilePath>,
    QueryOf(_): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<FileJson>> {
    read::get_file(reader, app, path.into()).await
}

/// Get a page of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}",
    tag = "Revisions",
    params(RevisionPagePath, ReadQuery),
    responses((status = 200, description = "The page with its body (gzip-compressed for clients that accept it).", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_page(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPagePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::get_page(reader, app, path.into(), opts, headers).await
}

/// Get a page of a revision by its path
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/path/{*pagePath}",
    tag = "Revisions",
    params(RevisionPageByPathPath, ReadQuery),
    responses((status = 200, description = "The page with its body.", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_page_by_path(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPageByPathPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<PageJson>> {
    read::get_page_by_path(reader, app, path.into(), opts).await
}

/// Get a reusable content of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}",
    tag = "Revisions",
    params(RevisionReusableContentPath),
    responses((status = 200, description = "The reusable content.", body = ReusableJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_reusable_content(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionReusableContentPath>,
) -> ApiResult<axum::Json<ReusableJson>> {
    read::get_reusable(reader, app, path.into()).await
}

/// Get the document of a reusable content of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}/document",
    tag = "Revisions",
    params(RevisionReusableContentPath),
    responses((status = 200, description = "The reusable content's document (empty when it has none).", body = Object)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_reusable_content_document(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionReusableContentPath>,
) -> ApiResult<axum::Json<Document>> {
    read::get_reusable_document(reader, app, path.into()).await
}

/// Get the revision of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
    tag = "Change request content",
    params(ChangeRequestPath, ReadQuery),
    responses((status = 200, description = "The revision with its pages, files and reusable contents.", body = RevisionJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_content(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<RevisionJson>> {
    read::get_revision(caller.into(), app, path.into(), opts).await
}

/// List the pages of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/pages",
    tag = "Change request content",
    params(ChangeRequestPath, ReadQuery),
    responses((status = 200, description = "The page tree (gzip-compressed for clients that accept it).", body = read::Pages)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_pages(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::list_pages(caller.into(), app, path.into(), opts, headers).await
}

/// List the files of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files",
    tag = "Change request content",
    params(ChangeRequestPath, ReadQuery, Paging),
    responses((status = 200, description = "The files, oldest first.", body = List<FileJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_files(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    QueryOf(_): QueryOf<ReadOptions>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<FileJson>>> {
    read::list_files(caller.into(), app, path.into(), paging).await
}

/// Get a file of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}",
    tag = "Change request content",
    params(ChangeRequestFilePath, ReadQuery),
    responses((status = 200, description = "The file.", body = FileJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_file(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestFilePath>,
    QueryOf(_): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<FileJson>> {
    read::get_file(caller.into(), app, path.into()).await
}

/// Get a page of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}",
    tag = "Change request content",
    params(ChangeRequestPagePath, ReadQuery),
    responses((status = 200, description = "The page with its body (gzip-compressed for clients that accept it).", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_page(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPagePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    read::get_page(caller.into(), app, path.into(), opts, headers).await
}

/// Get a page of a change request by its path
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/path/{*pagePath}",
    tag = "Change request content",
    params(ChangeRequestPageByPathPath, ReadQuery),
    responses((status = 200, description = "The page with its body.", body = PageJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_page_by_path(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPageByPathPath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<PageJson>> {
    read::get_page_by_path(caller.into(), app, path.into(), opts).await
}

/// Get a reusable content of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/reusable-contents/{reusableContentId}",
    tag = "Change request content",
    params(ChangeRequestReusableContentPath),
    responses((status = 200, description = "The reusable content.", body = ReusableJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_reusable_content(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestReusableContentPath>,
) -> ApiResult<axum::Json<ReusableJson>> {
    read::get_reusable(caller.into(), app, path.into()).await
}

/// Get the document of a page of a revision
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/document",
    tag = "Revisions",
    params(RevisionPagePath, ReadQuery),
    responses((status = 200, description = "The page's document.", body = Object)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_revision_page_document(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<RevisionPagePath>,
    QueryOf(opts): QueryOf<ReadOptions>,
) -> ApiResult<axum::Json<Document>> {
    read::get_page_document(reader, app, path.into(), opts).await
}
