//! The comments operations of a space (each shares its handler with the change request's).

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::paging::{List, Paging};

use super::wire::{CommentJson, ReplyJson};
use super::{
    CommentFormat, ListCommentsQuery, PostComment, PostReply, RepliesQuery, UpdateComment, UpdateReply,
};
use crate::api::members::MemberJson;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{CommentPath, ReplyPath, SpacePath};
use crate::state::App;

/// List the comments of a space
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/comments",
    tag = "Space comments",
    params(SpacePath, ListCommentsQuery, Paging),
    responses((status = 200, description = "The comments, by time.", body = List<CommentJson>)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn list_space_comments(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(query): QueryOf<ListCommentsQuery>,
    headers: axum::http::HeaderMap,
) -> ApiResult<axum::response::Response> {
    super::list_comments(caller, app, path.into(), headers, query).await
}

/// Comment on a space
#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/comments",
    tag = "Space comments",
    params(SpacePath),
    request_body = PostComment,
    responses((status = 200, description = "The new comment.", body = CommentJson)),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn post_space_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    Json(body): Json<PostComment>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::post_comment(caller, app, path.into(), body).await
}

/// Get a comment of a space
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/comments/{commentId}",
    tag = "Space comments",
    params(CommentPath, CommentFormat),
    responses((status = 200, description = "The comment.", body = CommentJson)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn get_space_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<CommentPath>,
    QueryOf(format): QueryOf<CommentFormat>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::get_comment(caller, app, path.into(), format).await
}

/// Edit, resolve or react to a comment of a space
#[utoipa::path(
    put,
    path = "/v1/spaces/{spaceId}/comments/{commentId}",
    tag = "Space comments",
    params(CommentPath),
    request_body = UpdateComment,
    responses((status = 200, description = "The comment as updated.", body = CommentJson)),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn update_space_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<CommentPath>,
    Json(update): Json<UpdateComment>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::update_comment(caller, app, path.into(), update).await
}

/// Delete a comment of a space
#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/comments/{commentId}",
    tag = "Space comments",
    params(CommentPath),
    responses((status = 204, description = "The comment is deleted.")),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn delete_space_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<CommentPath>,
) -> ApiResult<StatusCode> {
    super::delete_comment(caller, app, path.into()).await
}

/// List the replies to a comment of a space
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/comments/{commentId}/replies",
    tag = "Space comments",
    params(CommentPath, RepliesQuery, Paging),
    responses((status = 200, description = "The replies, oldest first.", body = List<ReplyJson>)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn list_space_comment_replies(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<CommentPath>,
    QueryOf(query): QueryOf<RepliesQuery>,
) -> ApiResult<axum::Json<List<ReplyJson>>> {
    super::list_replies(caller, app, path.into(), query).await
}

/// Reply to a comment of a space
#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/comments/{commentId}/replies",
    tag = "Space comments",
    params(CommentPath, CommentFormat),
    request_body = PostReply,
    responses((status = 200, description = "The new reply.", body = ReplyJson)),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn post_space_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<CommentPath>,
    QueryOf(format): QueryOf<CommentFormat>,
    Json(input): Json<PostReply>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::post_reply(caller, app, path.into(), format, input).await
}

/// Get a reply to a comment of a space
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Space comments",
    params(ReplyPath, CommentFormat),
    responses((status = 200, description = "The reply.", body = ReplyJson)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn get_space_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ReplyPath>,
    QueryOf(format): QueryOf<CommentFormat>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::get_reply(caller, app, path.into(), format).await
}

/// Edit or react to a reply of a space
#[utoipa::path(
    put,
    path = "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Space comments",
    params(ReplyPath),
    request_body = UpdateReply,
    responses((status = 200, description = "The reply as updated.", body = ReplyJson)),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn update_space_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ReplyPath>,
    Json(update): Json<UpdateReply>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::update_reply(caller, app, path.into(), update).await
}

/// Delete a reply to a comment of a space
#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Space comments",
    params(ReplyPath),
    responses((status = 204, description = "The reply is deleted.")),
    security(("token" = ["space:metadata:write"]))
)]
pub async fn delete_space_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ReplyPath>,
) -> ApiResult<StatusCode> {
    super::delete_reply(caller, app, path.into()).await
}

/// List the people who commented on a space
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/commenters",
    tag = "Space comments",
    params(SpacePath, Paging),
    responses((status = 200, description = "The members who commented.", body = List<MemberJson>)),
    security(("token" = ["space:metadata:read"]))
)]
pub async fn list_space_commenters(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SpacePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    super::list_commenters(caller, app, path.into(), paging).await
}
