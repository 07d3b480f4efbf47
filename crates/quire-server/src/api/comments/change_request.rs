//! The comments operations of a change request (each shares its handler with the space's).

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
use crate::paths::{ChangeRequestCommentPath, ChangeRequestPath, ChangeRequestReplyPath};
use crate::state::App;

/// List the comments of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments",
    tag = "Change request comments",
    params(ChangeRequestPath, ListCommentsQuery, Paging),
    responses((status = 200, description = "The comments, by time.", body = List<CommentJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_comments(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    QueryOf(query): QueryOf<ListCommentsQuery>,
    headers: axum::http::HeaderMap,
) -> ApiResult<axum::response::Response> {
    super::list_comments(caller, app, path.into(), headers, query).await
}

/// Comment on a change request
#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments",
    tag = "Change request comments",
    params(ChangeRequestPath),
    request_body = PostComment,
    responses((status = 200, description = "The new comment.", body = CommentJson)),
    security(("token" = ["space:content:write"]))
)]
pub async fn post_change_request_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    Json(body): Json<PostComment>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::post_comment(caller, app, path.into(), body).await
}

/// Get a comment of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
    tag = "Change request comments",
    params(ChangeRequestCommentPath, CommentFormat),
    responses((status = 200, description = "The comment.", body = CommentJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestCommentPath>,
    QueryOf(format): QueryOf<CommentFormat>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::get_comment(caller, app, path.into(), format).await
}

/// Edit, resolve or react to a comment of a change request
#[utoipa::path(
    put,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
    tag = "Change request comments",
    params(ChangeRequestCommentPath),
    request_body = UpdateComment,
    responses((status = 200, description = "The comment as updated.", body = CommentJson)),
    security(("token" = ["space:content:write"]))
)]
pub async fn update_change_request_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestCommentPath>,
    Json(update): Json<UpdateComment>,
) -> ApiResult<axum::Json<CommentJson>> {
    super::update_comment(caller, app, path.into(), update).await
}

/// Delete a comment of a change request
#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
    tag = "Change request comments",
    params(ChangeRequestCommentPath),
    responses((status = 204, description = "The comment is deleted.")),
    security(("token" = ["space:content:write"]))
)]
pub async fn delete_change_request_comment(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestCommentPath>,
) -> ApiResult<StatusCode> {
    super::delete_comment(caller, app, path.into()).await
}

/// List the replies to a comment of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies",
    tag = "Change request comments",
    params(ChangeRequestCommentPath, RepliesQuery, Paging),
    responses((status = 200, description = "The replies, oldest first.", body = List<ReplyJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_comment_replies(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestCommentPath>,
    QueryOf(query): QueryOf<RepliesQuery>,
) -> ApiResult<axum::Json<List<ReplyJson>>> {
    super::list_replies(caller, app, path.into(), query).await
}

/// Reply to a comment of a change request
#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies",
    tag = "Change request comments",
    params(ChangeRequestCommentPath, CommentFormat),
    request_body = PostReply,
    responses((status = 200, description = "The new reply.", body = ReplyJson)),
    security(("token" = ["space:content:write"]))
)]
pub async fn post_change_request_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestCommentPath>,
    QueryOf(format): QueryOf<CommentFormat>,
    Json(input): Json<PostReply>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::post_reply(caller, app, path.into(), format, input).await
}

/// Get a reply to a comment of a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Change request comments",
    params(ChangeRequestReplyPath, CommentFormat),
    responses((status = 200, description = "The reply.", body = ReplyJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_change_request_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestReplyPath>,
    QueryOf(format): QueryOf<CommentFormat>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::get_reply(caller, app, path.into(), format).await
}

/// Edit or react to a reply of a change request
#[utoipa::path(
    put,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Change request comments",
    params(ChangeRequestReplyPath),
    request_body = UpdateReply,
    responses((status = 200, description = "The reply as updated.", body = ReplyJson)),
    security(("token" = ["space:content:write"]))
)]
pub async fn update_change_request_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestReplyPath>,
    Json(update): Json<UpdateReply>,
) -> ApiResult<axum::Json<ReplyJson>> {
    super::update_reply(caller, app, path.into(), update).await
}

/// Delete a reply to a comment of a change request
#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
    tag = "Change request comments",
    params(ChangeRequestReplyPath),
    responses((status = 204, description = "The reply is deleted.")),
    security(("token" = ["space:content:write"]))
)]
pub async fn delete_change_request_comment_reply(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestReplyPath>,
) -> ApiResult<StatusCode> {
    super::delete_reply(caller, app, path.into()).await
}

/// List the people who commented on a change request
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/commenters",
    tag = "Change request comments",
    params(ChangeRequestPath, Paging),
    responses((status = 200, description = "The members who commented.", body = List<MemberJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_change_request_commenters(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ChangeRequestPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    super::list_commenters(caller, app, path.into(), paging).await
}
