//! The replies to a comment: list, post, read, edit, react, delete.

use axum::http::StatusCode;
use quire_content::changes::DocumentInput;
use quire_store::comments::{self, Edit};
use quire_store::paging::List;
use quire_store::users::User;
use serde::Deserialize;

use super::wire::{BodyFormat, ReplyJson, render_replies, reply_json};
use super::{CommentFormat, RepliesQuery, open};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::param;
use crate::paths::RouteIds;
use crate::state::App;

pub(crate) async fn list_replies(
    caller: Caller,
    app: App,
    params: RouteIds,
    RepliesQuery { format, paging }: RepliesQuery,
) -> ApiResult<axum::Json<List<ReplyJson>>> {
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::replies(c, &opened, param(&params, "commentId")?, &paging)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    let items = render_replies(
        &app.urls,
        &opened.space,
        &opened.scope,
        &caller.user_id,
        &shown.value.items,
        &shown,
        format,
    )?;
    Ok(axum::Json(List {
        next: shown.value.next,
        count: shown.value.count,
        items,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PostReply {
    #[schema(value_type = crate::openapi::DocumentInputSchema)]
    body: DocumentInput,
}

pub(crate) async fn post_reply(
    caller: Caller,
    app: App,
    params: RouteIds,
    CommentFormat { format }: CommentFormat,
    input: PostReply,
) -> ApiResult<axum::Json<ReplyJson>> {
    let text = comments::body(input.body)?;
    let author = User::from(&caller);
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &author.id)?;
            let shown = comments::reply(c, &opened, &author, param(&params, "commentId")?, &text)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(reply_json(
        &app.urls,
        &opened.space,
        &opened.scope,
        &caller.user_id,
        &shown,
        format,
    )?))
}

pub(crate) async fn get_reply(
    caller: Caller,
    app: App,
    params: RouteIds,
    CommentFormat { format }: CommentFormat,
) -> ApiResult<axum::Json<ReplyJson>> {
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &user)?;
            let (comment, reply) = (param(&params, "commentId")?, param(&params, "commentReplyId")?);
            let shown = comments::get_reply(c, &opened, comment, reply)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(reply_json(
        &app.urls,
        &opened.space,
        &opened.scope,
        &caller.user_id,
        &shown,
        format,
    )?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateReply {
    #[schema(value_type = Option<crate::openapi::DocumentInputSchema>)]
    body: Option<DocumentInput>,
    #[serde(default)]
    added_reactions: Vec<String>,
    #[serde(default)]
    removed_reactions: Vec<String>,
}

pub(crate) async fn update_reply(
    caller: Caller,
    app: App,
    params: RouteIds,
    update: UpdateReply,
) -> ApiResult<axum::Json<ReplyJson>> {
    let edit = Edit::parse(update.body, update.added_reactions, update.removed_reactions)?;
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &user)?;
            let (comment, reply) = (param(&params, "commentId")?, param(&params, "commentReplyId")?);
            let shown = comments::update_reply(c, &opened, &user, comment, reply, &edit)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(reply_json(
        &app.urls,
        &opened.space,
        &opened.scope,
        &caller.user_id,
        &shown,
        BodyFormat::Markdown,
    )?))
}

pub(crate) async fn delete_reply(caller: Caller, app: App, params: RouteIds) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let (comment, reply) = (param(&params, "commentId")?, param(&params, "commentReplyId")?);
            Ok::<_, ApiError>(comments::delete_reply(
                c,
                &opened,
                &caller.user_id,
                comment,
                reply,
            )?)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
