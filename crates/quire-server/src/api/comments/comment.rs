//! The comments of a space or of a change request: list, post, read, edit, resolve, react,
//! delete; and who commented.

use axum::http::StatusCode;
use quire_content::changes::DocumentInput;
use quire_store::comments::{self, Edit, NewComment};
use quire_store::paging::{List, Paging};
use quire_store::users::User;
use serde::Deserialize;

use super::wire::{BodyFormat, CommentJson, comment_json, render_comments};
use super::{CommentFormat, ListCommentsQuery, open};
use crate::api::members::{MemberJson, member_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::param;
use crate::paths::RouteIds;
use crate::state::App;

/// A page of comments. The answer is kept (`App::lists`) by what it lists and for whom while
/// the database has not changed: a page of 100 comments costs four statements and rendering
/// 100 bodies, and clients poll the same pages. It is kept as sent, gzip-compressed for
/// clients that take it (a page of comments compresses about five times): uncompressed, the
/// pages of the 1,000 commented pages of the bench's big space filled the 16 MB and were
/// evicted before they were asked for again.
pub(crate) async fn list_comments(
    caller: Caller,
    app: App,
    params: RouteIds,
    headers: axum::http::HeaderMap,
    ListCommentsQuery {
        order,
        format,
        status,
        page_filter,
        mut authors,
        paging,
    }: ListCommentsQuery,
) -> ApiResult<axum::response::Response> {
    authors.sort();
    let filter = comments::Filter {
        order,
        status: status.as_str(),
        page: page_filter,
        authors,
    };
    // The place as the route names it: the key is needed before the read opens it.
    let place = comments::Scope {
        space_id: params.space_id.clone(),
        change_request: params.change_request_id.clone(),
    };
    let gzip = crate::encoding::accepts_gzip(&headers);
    let key = format!(
        "{}\u{0}{}\u{0}{format:?}\u{0}{}\u{0}{}\u{0}{gzip}",
        comments::list_scope(&place, &filter),
        caller.user_id,
        paging.limit,
        paging.page.as_deref().unwrap_or("")
    );
    let app2 = app.clone();
    let body = app
        .lists
        .get_or_read(&app.db, key, move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let shown = comments::list(c, &opened, &filter, &paging)?;
            let list = &shown.value;
            let items = render_comments(
                &app2.urls,
                &opened.space,
                &caller.user_id,
                &list.items,
                &shown,
                format,
            )?;
            let answer: List<CommentJson> = List {
                next: shown.value.next,
                count: shown.value.count,
                items,
            };
            let bytes = serde_json::to_vec(&answer)
                .map_err(|e| ApiError::internal(format!("cannot render comments: {e}")))?;
            let body = crate::encoding::as_sent(bytes, gzip)
                .map_err(|e| ApiError::internal(format!("cannot compress comments: {e}")))?;
            Ok::<_, ApiError>(Some(body))
        })
        .await?
        .ok_or_else(|| ApiError::internal("a comments page was not rendered"))?;
    Ok(crate::encoding::json(body, gzip))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct PostComment {
    #[schema(value_type = crate::openapi::DocumentInputSchema)]
    body: DocumentInput,
    page: Option<String>,
    node: Option<String>,
    table_cell: Option<TableCell>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = CommentTableCell)]
struct TableCell {
    record: String,
    definition: String,
}

pub(crate) async fn post_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    body: PostComment,
) -> ApiResult<axum::Json<CommentJson>> {
    let text = comments::body(body.body)?;
    if (body.node.is_some() || body.table_cell.is_some()) && body.page.is_none() {
        return Err(ApiError::bad_request(
            "a comment on a node or a table cell names its `page`",
        ));
    }
    let new = NewComment {
        text,
        page: body.page,
        node: body.node,
        table_cell: body.table_cell.map(|t| (t.record, t.definition)),
    };
    let (store, author) = (app.store.clone(), User::from(&caller));
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &author.id)?;
            let shown = comments::post(c, &store.content, &opened, &author, &new)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(comment_json(
        &app.urls,
        &opened.space,
        &caller.user_id,
        &shown,
        BodyFormat::Markdown,
    )?))
}

pub(crate) async fn get_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    CommentFormat { format }: CommentFormat,
) -> ApiResult<axum::Json<CommentJson>> {
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::get(c, &opened, param(&params, "commentId")?)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(comment_json(
        &app.urls,
        &opened.space,
        &caller.user_id,
        &shown,
        format,
    )?))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct UpdateComment {
    resolved: Option<bool>,
    #[schema(value_type = Option<crate::openapi::DocumentInputSchema>)]
    body: Option<DocumentInput>,
    #[serde(default)]
    added_reactions: Vec<String>,
    #[serde(default)]
    removed_reactions: Vec<String>,
}

pub(crate) async fn update_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    update: UpdateComment,
) -> ApiResult<axum::Json<CommentJson>> {
    let edit = Edit::parse(update.body, update.added_reactions, update.removed_reactions)?;
    let (resolved, user) = (update.resolved, caller.user_id.clone());
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::update(c, &opened, &user, param(&params, "commentId")?, &edit, resolved)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    Ok(axum::Json(comment_json(
        &app.urls,
        &opened.space,
        &caller.user_id,
        &shown,
        BodyFormat::Markdown,
    )?))
}

pub(crate) async fn delete_comment(caller: Caller, app: App, params: RouteIds) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            Ok::<_, ApiError>(comments::delete(
                c,
                &opened,
                &caller.user_id,
                param(&params, "commentId")?,
            )?)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

pub(crate) async fn list_commenters(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    let list = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            Ok::<_, ApiError>(comments::commenters(c, &opened, &paging)?)
        })
        .await?;
    Ok(axum::Json(list.map(|m| member_json(&app.urls, &m))))
}
