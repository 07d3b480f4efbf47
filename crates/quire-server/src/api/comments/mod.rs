//! Comments and replies on spaces and on change requests (`quire_store::comments`): post, list
//! with filters, read, edit, resolve, react, delete; and the people who commented. Each
//! operation exists for a space (`space.rs`) and for a change request (`change_request.rs`);
//! the two share one handler here.

mod change_request;
mod space;
pub mod wire;

use axum::http::StatusCode;
use quire_content::changes::DocumentInput;
use quire_store::comments::{self, Edit, NewComment, Opened};
use quire_store::paging::{List, Order, Page, Paging};
use quire_store::{change_requests, spaces};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::members::{MemberJson, member_json};
use crate::app::App;
use crate::auth::Caller;
use crate::db::Conn;
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Query, param};
use crate::paths::RouteIds;
use change_request::*;
use space::*;
use wire::{BodyFormat, CommentJson, ReplyJson, comment_json, render_comments, render_replies, reply_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_space_comments, post_space_comment))
        .routes(routes!(
            get_space_comment,
            update_space_comment,
            delete_space_comment
        ))
        .routes(routes!(list_space_comment_replies, post_space_comment_reply))
        .routes(routes!(
            get_space_comment_reply,
            update_space_comment_reply,
            delete_space_comment_reply
        ))
        .routes(routes!(list_space_commenters))
        .routes(routes!(list_change_request_comments, post_change_request_comment))
        .routes(routes!(
            get_change_request_comment,
            update_change_request_comment,
            delete_change_request_comment
        ))
        .routes(routes!(
            list_change_request_comment_replies,
            post_change_request_comment_reply
        ))
        .routes(routes!(
            get_change_request_comment_reply,
            update_change_request_comment_reply,
            delete_change_request_comment_reply
        ))
        .routes(routes!(list_change_request_commenters))
}

/// The place a comment route names: the space's own comments, or a change request's.
fn open(c: &mut dyn Conn, params: &RouteIds, caller: &str) -> ApiResult<Opened> {
    let space_id = param(params, "spaceId")?;
    let space = spaces::load_active(c, space_id, caller)?;
    Ok(match params.get("changeRequestId") {
        Some(cr_id) => {
            let cr = change_requests::load(c, space_id, cr_id)?;
            Opened::on_change_request(space, &cr.id, &cr.revision)
        }
        None => Opened::on_space(space),
    })
}

fn format(q: &Query) -> ApiResult<BodyFormat> {
    Ok(match q.one_of("format", &["markdown", "document"], "markdown")? {
        "document" => BodyFormat::Document,
        _ => BodyFormat::Markdown,
    })
}

/// `format` of the comment bodies in an answer.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommentFormat {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
}

impl FromQuery for CommentFormat {
    fn from_query(q: &Query) -> ApiResult<CommentFormat> {
        Ok(CommentFormat { format: format(q)? })
    }
}

/// The query of the comments lists.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListCommentsQuery {
    /// The direction of the order by time.
    #[param(inline, value_type = Option<Order>)]
    order: Order,
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
    /// `all` (the default), `open` or `resolved`.
    #[param(value_type = Option<String>)]
    status: &'static str,
    /// Only the comments on this page (an id).
    #[param(rename = "targetPage")]
    page_filter: Option<String>,
    /// Only the comments of these users (ids, repeated or comma-separated).
    #[param(value_type = Option<Vec<String>>, style = Form, explode = true)]
    authors: Vec<String>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListCommentsQuery {
    fn from_query(q: &Query) -> ApiResult<ListCommentsQuery> {
        Ok(ListCommentsQuery {
            order: q.order()?,
            format: format(q)?,
            status: q.one_of("status", &["all", "open", "resolved"], "all")?,
            page_filter: q.str("targetPage").filter(|s| !s.is_empty()).map(str::to_string),
            authors: q.all("authors"),
            paging: Paging::from_query(q)?,
        })
    }
}

/// The query of the replies lists.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RepliesQuery {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for RepliesQuery {
    fn from_query(q: &Query) -> ApiResult<RepliesQuery> {
        Ok(RepliesQuery {
            format: format(q)?,
            paging: Paging::from_query(q)?,
        })
    }
}

pub(crate) async fn list_comments(
    caller: Caller,
    app: App,
    params: RouteIds,
    ListCommentsQuery {
        order,
        format,
        status,
        page_filter,
        mut authors,
        paging,
    }: ListCommentsQuery,
) -> ApiResult<axum::Json<List<CommentJson>>> {
    authors.sort();
    let scope = format!(
        "comments:{params:?}:{}:{status}:{page_filter:?}:{authors:?}",
        order.name()
    );
    let page = Page::new(&paging, scope)?;
    let user = caller.user_id.clone();
    let filter = comments::Filter {
        order,
        status,
        page: page_filter,
        authors,
    };
    let (opened, shown) = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::list(c, &opened, &filter, &page)?;
            Ok::<_, ApiError>((opened, shown))
        })
        .await?;
    let list = &shown.value;
    let items = render_comments(
        &app.urls,
        &opened.space,
        &caller.user_id,
        &list.items,
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
    let (store, user) = (app.store.clone(), caller.user_id.clone());
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::post(c, &store.content, &opened, &user, &new)?;
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

pub(crate) async fn list_replies(
    caller: Caller,
    app: App,
    params: RouteIds,
    RepliesQuery { format, paging }: RepliesQuery,
) -> ApiResult<axum::Json<List<ReplyJson>>> {
    let page = Page::new(&paging, format!("replies:{params:?}"))?;
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::replies(c, &opened, param(&params, "commentId")?, &page)?;
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
    let user = caller.user_id.clone();
    let (opened, shown) = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &user)?;
            let shown = comments::reply(c, &opened, &user, param(&params, "commentId")?, &text)?;
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

pub(crate) async fn list_commenters(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    let page = Page::new(&paging, format!("commenters:{params:?}"))?;
    let list = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            Ok::<_, ApiError>(comments::commenters(c, &opened, &page)?)
        })
        .await?;
    Ok(axum::Json(list.map(|m| member_json(&app.urls, &m))))
}
