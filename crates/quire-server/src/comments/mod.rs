//! Comments and replies on spaces and on change requests: post, list with filters, read, edit,
//! resolve, react, delete; and the people who commented.

mod api;
pub mod model;

use axum::http::StatusCode;
use quire_content::changes::DocumentInput;
use quire_content::{Document, markdown_to_document};
use serde::Deserialize;
use serde_json::json;

use crate::api::members::MemberJson;
use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Query};
use crate::paths::RouteIds;
use crate::{change_requests, clock, ids, params};
use model::{
    BodyFormat, COMMENT_COLUMNS, Comment, CommentJson, CommentStatus, REPLY_COLUMNS, Reply, ReplyJson, Scope,
};
use quire_store::content::store;
use quire_store::events::{self, Event, Kind};
use quire_store::members;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{Role, SpaceAction};
use quire_store::spaces::{self, SpaceFor};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(api::list_space_comments, api::post_space_comment))
        .routes(routes!(
            api::get_space_comment,
            api::update_space_comment,
            api::delete_space_comment
        ))
        .routes(routes!(
            api::list_space_comment_replies,
            api::post_space_comment_reply
        ))
        .routes(routes!(
            api::get_space_comment_reply,
            api::update_space_comment_reply,
            api::delete_space_comment_reply
        ))
        .routes(routes!(api::list_space_commenters))
        .routes(routes!(
            api::list_change_request_comments,
            api::post_change_request_comment
        ))
        .routes(routes!(
            api::get_change_request_comment,
            api::update_change_request_comment,
            api::delete_change_request_comment
        ))
        .routes(routes!(
            api::list_change_request_comment_replies,
            api::post_change_request_comment_reply
        ))
        .routes(routes!(
            api::get_change_request_comment_reply,
            api::update_change_request_comment_reply,
            api::delete_change_request_comment_reply
        ))
        .routes(routes!(api::list_change_request_commenters))
}

use crate::extract::param;

/// The space and scope of a comment route; the revision comments there point into.
struct Opened {
    space: SpaceFor,
    scope: Scope,
    revision: String,
}

fn open(c: &mut dyn Conn, params: &RouteIds, caller: &str) -> ApiResult<Opened> {
    let space_id = param(params, "spaceId")?;
    let space = spaces::load_active(c, space_id, caller)?;
    match params.get("changeRequestId") {
        Some(cr_id) => {
            let cr = change_requests::model::load(c, space_id, cr_id)?;
            Ok(Opened {
                scope: Scope {
                    space_id: space_id.to_string(),
                    change_request: Some(cr.id.clone()),
                },
                revision: cr.revision,
                space,
            })
        }
        None => Ok(Opened {
            revision: space.space.revision.clone().unwrap_or_default(),
            scope: Scope {
                space_id: space_id.to_string(),
                change_request: None,
            },
            space,
        }),
    }
}

/// The WHERE condition selecting the comments of a scope (table aliased `c`).
fn scope_sql(scope: &Scope, args: &mut Args) -> String {
    match &scope.change_request {
        Some(cr) => format!("c.change_request_id = {}", args.arg(cr)),
        None => format!(
            "c.space_id = {} AND c.change_request_id IS NULL",
            args.arg(&scope.space_id)
        ),
    }
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
    #[param(inline, value_type = Option<crate::extract::Order>)]
    order: crate::extract::Order,
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

/// A comment body from the request: markdown or a JSON document, never empty.
fn body(input: DocumentInput) -> ApiResult<String> {
    let document = match input {
        DocumentInput::Markdown(md) => {
            if md.trim().is_empty() {
                return Err(ApiError::bad_request("`body` must not be empty"));
            }
            markdown_to_document(&md).map_err(|e| ApiError::over_limit("body.markdown", &e))?
        }
        DocumentInput::Json(value) => Document::from_json(value)
            .map_err(|e| ApiError::bad_request(format!("invalid `body.document`: {e}")))?,
        DocumentInput::Empty => {
            return Err(ApiError::bad_request("`body` must hold `markdown` or `document`"));
        }
    };
    if document.nodes.is_empty() {
        return Err(ApiError::bad_request("`body` must not be empty"));
    }
    serde_json::to_string(&document).map_err(|e| ApiError::internal(e.to_string()))
}

fn load_comment(c: &mut dyn Conn, scope: &Scope, id: &str) -> ApiResult<Comment> {
    let mut args = Args::default();
    let sql = format!(
        "SELECT {COMMENT_COLUMNS} FROM comments c WHERE {} AND c.id = {}",
        scope_sql(scope, &mut args),
        args.arg(id)
    );
    c.query_opt(&sql, args.values())?
        .map(|r| Comment::from_row(&r))
        .transpose()?
        .ok_or_else(|| ApiError::not_found(format!("comment {id:?} not found")))
}

fn load_reply(c: &mut dyn Conn, comment: &Comment, id: &str) -> ApiResult<Reply> {
    c.query_opt(
        &format!("SELECT {REPLY_COLUMNS} FROM comment_replies r WHERE r.comment_id = ?1 AND r.id = ?2"),
        params![comment.id.clone(), id],
    )?
    .map(|r| Reply::from_row(&r))
    .transpose()?
    .ok_or_else(|| ApiError::not_found(format!("reply {id:?} not found")))
}

fn render_one(
    c: &mut dyn Conn,
    app: &App,
    opened: &Opened,
    caller: &str,
    comment: &Comment,
    format: BodyFormat,
) -> ApiResult<CommentJson> {
    model::render_comments(
        c,
        app,
        &opened.space,
        caller,
        std::slice::from_ref(comment),
        format,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| ApiError::internal("nothing rendered"))
}

fn render_reply(
    c: &mut dyn Conn,
    app: &App,
    opened: &Opened,
    caller: &str,
    reply: &Reply,
    format: BodyFormat,
) -> ApiResult<ReplyJson> {
    model::render_replies(
        c,
        app,
        &opened.space,
        &opened.scope,
        caller,
        std::slice::from_ref(reply),
        format,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| ApiError::internal("nothing rendered"))
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
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let mut args = Args::default();
            let mut filter = scope_sql(&opened.scope, &mut args);
            let wanted = CommentStatus::parse(status);
            if let Some(wanted) = wanted {
                filter += &format!(" AND c.status = {}", args.arg(wanted));
            }
            if let Some(p) = &page_filter {
                filter += &format!(" AND c.page_id = {}", args.arg(p));
            }
            if !authors.is_empty() {
                filter += &format!(" AND c.posted_by IN ({})", args.list(authors.iter().cloned()));
            }
            // The whole list of a space's comments is counted by triggers on the space row;
            // counting it here would make every page cost as much as the space has comments.
            let counters = &opened.space.space.counters;
            let count: i64 = match (
                &opened.scope.change_request,
                &page_filter,
                authors.is_empty(),
                wanted,
            ) {
                (None, None, true, None) => counters.comments_total,
                (None, None, true, Some(CommentStatus::Open)) => counters.comments,
                (None, None, true, Some(CommentStatus::Resolved)) => {
                    counters.comments_total - counters.comments
                }
                _ => c
                    .query_scalar(
                        &format!("SELECT count(*) FROM comments c WHERE {filter}"),
                        args.values(),
                    )?
                    .unwrap_or(0),
            };
            let mut sql = format!("SELECT {COMMENT_COLUMNS} FROM comments c WHERE {filter}");
            if let Some((at, id)) = page.after::<(i64, String)>()? {
                sql += &format!(
                    " AND (c.posted_at, c.id) {} ({}, {})",
                    order.after_op(),
                    args.arg(at),
                    args.arg(id)
                );
            }
            sql += &format!(
                " ORDER BY c.posted_at {0}, c.id {0} LIMIT {1}",
                order.sql(),
                args.arg(page.fetch())
            );
            let rows = c
                .query(&sql, args.values())?
                .iter()
                .map(Comment::from_row)
                .collect::<Result<Vec<_>, _>>()?;
            let list = page.finish(rows, count as u64, |x| (x.posted_at, x.id.clone()));
            let items =
                model::render_comments(c, &app2, &opened.space, &caller.user_id, &list.items, format)?;
            Ok::<_, ApiError>(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
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

fn require(opened: &Opened, action: SpaceAction) -> ApiResult<()> {
    Ok(opened.space.require(action)?)
}

pub(crate) async fn post_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    body: PostComment,
) -> ApiResult<axum::Json<CommentJson>> {
    let text = self::body(body.body)?;
    if (body.node.is_some() || body.table_cell.is_some()) && body.page.is_none() {
        return Err(ApiError::bad_request(
            "a comment on a node or a table cell names its `page`",
        ));
    }
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            require(&opened, SpaceAction::Comment)?;
            check_target(c, &app2, &opened, body.page.as_deref(), body.node.as_deref())?;
            let id = ids::new_id();
            c.execute(
                "INSERT INTO comments (id, space_id, change_request_id, page_id, node_id, table_record, table_definition,
                                       revision_id, posted_by, posted_at, body)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    id.clone(),
                    opened.scope.space_id.clone(),
                    opened.scope.change_request.clone(),
                    body.page.clone(),
                    body.node.clone(),
                    body.table_cell.as_ref().map(|t| t.record.clone()),
                    body.table_cell.as_ref().map(|t| t.definition.clone()),
                    opened.revision.clone(),
                    caller.user_id.clone(),
                    clock::now_ms(),
                    text.clone()
                ],
            )?;
            let (scope, org, actor) = (&opened.scope, &opened.space.space.org_id, Some(caller.user_id.as_str()));
            let payload = json!({"spaceId": scope.space_id, "changeRequestId": scope.change_request,
                                 "commentId": id, "pageId": body.page, "revisionId": opened.revision});
            let event = Event::in_space(Kind::CommentPosted, org, &scope.space_id, &id, actor, payload);
            events::record(c, event)?;
            let comment = load_comment(c, &opened.scope, &id)?;
            render_one(c, &app2, &opened, &caller.user_id, &comment, BodyFormat::Markdown)
        })
        .await?;
    Ok(axum::Json(json))
}

/// A comment's page must exist in the revision it points into, and its node in that page.
fn check_target(
    c: &mut dyn Conn,
    app: &App,
    opened: &Opened,
    page: Option<&str>,
    node: Option<&str>,
) -> ApiResult<()> {
    let Some(page_id) = page else { return Ok(()) };
    let tree = store::load_tree(c, &app.content, &opened.scope.space_id, &opened.revision)?;
    let entry = tree.tree.pages.get(page_id).ok_or_else(|| {
        ApiError::bad_request(format!("`page`: {page_id:?} is not a page of this revision"))
    })?;
    if let Some(node) = node {
        let document = match &entry.document {
            Some(hash) => store::load_document(c, &app.content, &opened.scope.space_id, hash)?
                .document
                .clone(),
            None => Document::default(),
        };
        if !has_node(&document.nodes, node) {
            return Err(ApiError::bad_request(format!(
                "`node`: {node:?} is not a node of page {page_id:?}"
            )));
        }
    }
    Ok(())
}

fn has_node(nodes: &[quire_content::Node], key: &str) -> bool {
    nodes.iter().any(|n| {
        n.key.as_deref() == Some(key)
            || has_node(n.children(), key)
            || n.fragments()
                .iter()
                .any(|f| f.key.as_deref() == Some(key) || has_node(&f.nodes, key))
    })
}

pub(crate) async fn get_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    CommentFormat { format }: CommentFormat,
) -> ApiResult<axum::Json<CommentJson>> {
    let app2 = app.clone();
    let json = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            render_one(c, &app2, &opened, &caller.user_id, &comment, format)
        })
        .await?;
    Ok(axum::Json(json))
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

fn check_emojis(list: &[String]) -> ApiResult<()> {
    for e in list {
        let n = e.chars().count();
        if n == 0 || n > 50 || e.trim().is_empty() {
            return Err(ApiError::bad_request(format!(
                "{e:?} is not an emoji (1 to 50 characters)"
            )));
        }
    }
    Ok(())
}

/// Applies reaction changes of `user` to a comment or reply.
fn react(c: &mut dyn Conn, target: &str, user: &str, added: &[String], removed: &[String]) -> ApiResult<()> {
    let now = clock::now_ms();
    for emoji in added {
        c.execute(
            "INSERT INTO comment_reactions (target_id, emoji, user_id, reacted_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (target_id, emoji, user_id) DO NOTHING",
            params![target, emoji.clone(), user, now],
        )?;
    }
    for emoji in removed {
        c.execute(
            "DELETE FROM comment_reactions WHERE target_id = ?1 AND emoji = ?2 AND user_id = ?3",
            params![target, emoji.clone(), user],
        )?;
    }
    Ok(())
}

/// The edits comments and replies share: a new body, by its author only, and the caller's
/// reactions, by anyone who may comment.
struct Edit {
    text: Option<String>,
    added_reactions: Vec<String>,
    removed_reactions: Vec<String>,
}

impl Edit {
    fn parse(
        body: Option<DocumentInput>,
        added_reactions: Vec<String>,
        removed_reactions: Vec<String>,
    ) -> ApiResult<Edit> {
        check_emojis(&added_reactions)?;
        check_emojis(&removed_reactions)?;
        Ok(Edit {
            text: body.map(self::body).transpose()?,
            added_reactions,
            removed_reactions,
        })
    }

    /// Applies the edit to the comment or reply `id` of `table`, written by `author`.
    fn apply(
        &self,
        c: &mut dyn Conn,
        opened: &Opened,
        caller: &str,
        table: &str,
        id: &str,
        author: &str,
    ) -> ApiResult<()> {
        if let Some(text) = &self.text {
            if !model::permissions(&opened.space, caller, author).edit {
                let what = if table == "comments" { "comment" } else { "reply" };
                return Err(ApiError::forbidden(format!(
                    "only the author of a {what} may edit it, whatever their role (yours on space {:?} is `{}`)",
                    opened.space.space.id,
                    opened.space.role.map_or("none", Role::as_str)
                )));
            }
            c.execute(
                &format!("UPDATE {table} SET body = ?2, edited_at = ?3 WHERE id = ?1"),
                params![id, text.clone(), clock::now_ms()],
            )?;
        }
        if !self.added_reactions.is_empty() || !self.removed_reactions.is_empty() {
            require(opened, SpaceAction::Comment)?;
            react(c, id, caller, &self.added_reactions, &self.removed_reactions)?;
        }
        Ok(())
    }
}

/// Deletes are idempotent: a comment, reply or space that is not there is already deleted.
fn unless_gone<T>(found: ApiResult<T>) -> ApiResult<Option<T>> {
    match found {
        Err(e) if e.status == StatusCode::NOT_FOUND => Ok(None),
        other => other.map(Some),
    }
}

pub(crate) async fn update_comment(
    caller: Caller,
    app: App,
    params: RouteIds,
    update: UpdateComment,
) -> ApiResult<axum::Json<CommentJson>> {
    let edit = Edit::parse(update.body, update.added_reactions, update.removed_reactions)?;
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            edit.apply(c, &opened, &caller.user_id, "comments", &comment.id, &comment.posted_by)?;
            if update.resolved.is_some() {
                require(&opened, SpaceAction::Comment)?;
            }
            match update.resolved {
                Some(true) if comment.status != CommentStatus::Resolved => {
                    c.execute(
                        "UPDATE comments SET status = 'resolved', resolved_at = ?2, resolved_by = ?3 WHERE id = ?1",
                        params![comment.id.clone(), clock::now_ms(), caller.user_id.clone()],
                    )?;
                }
                Some(false) => {
                    c.execute(
                        "UPDATE comments SET status = 'open', resolved_at = NULL, resolved_by = NULL WHERE id = ?1",
                        params![comment.id.clone()],
                    )?;
                }
                _ => {}
            }
            let comment = load_comment(c, &opened.scope, &comment.id)?;
            render_one(c, &app2, &opened, &caller.user_id, &comment, BodyFormat::Markdown)
        })
        .await?;
    Ok(axum::Json(json))
}

pub(crate) async fn delete_comment(caller: Caller, app: App, params: RouteIds) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            // The space (and change request) must be visible: 404 otherwise. A comment that is
            // not there is deleted already.
            let opened = open(c, &params, &caller.user_id)?;
            let Some(comment) = unless_gone(load_comment(c, &opened.scope, param(&params, "commentId")?))? else {
                return Ok(());
            };
            if !model::permissions(&opened.space, &caller.user_id, &comment.posted_by).delete {
                return Err(quire_store::permissions::role_forbidden(
                    "deleting another member's comment",
                    Role::Admin,
                    &format!("on space {:?}", opened.space.space.id),
                    opened.space.role,
                ).into());
            }
            c.execute(
                "DELETE FROM comment_reactions WHERE target_id = ?1 OR target_id IN (SELECT id FROM comment_replies WHERE comment_id = ?1)",
                params![comment.id.clone()],
            )?;
            c.execute("DELETE FROM comments WHERE id = ?1", params![comment.id])?;
            Ok::<_, ApiError>(())
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
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            let count: i64 = c
                .query_scalar(
                    "SELECT count(*) FROM comment_replies WHERE comment_id = ?1",
                    params![comment.id.clone()],
                )?
                .unwrap_or(0);
            let mut args = Args::default();
            let mut sql = format!(
                "SELECT {REPLY_COLUMNS} FROM comment_replies r WHERE r.comment_id = {}",
                args.arg(&comment.id)
            );
            if let Some((at, id)) = page.after::<(i64, String)>()? {
                sql += &format!(" AND (r.posted_at, r.id) > ({}, {})", args.arg(at), args.arg(id));
            }
            sql += &format!(" ORDER BY r.posted_at, r.id LIMIT {}", args.arg(page.fetch()));
            let rows = c
                .query(&sql, args.values())?
                .iter()
                .map(Reply::from_row)
                .collect::<Result<Vec<_>, _>>()?;
            let list = page.finish(rows, count as u64, |r| (r.posted_at, r.id.clone()));
            let items = model::render_replies(
                c,
                &app2,
                &opened.space,
                &opened.scope,
                &caller.user_id,
                &list.items,
                format,
            )?;
            Ok::<_, ApiError>(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
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
    let text = body(input.body)?;
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            require(&opened, SpaceAction::Comment)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            let id = ids::new_id();
            c.execute(
                "INSERT INTO comment_replies (id, comment_id, posted_by, posted_at, body) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id.clone(), comment.id.clone(), caller.user_id.clone(), clock::now_ms(), text.clone()],
            )?;
            let (scope, org, actor) = (&opened.scope, &opened.space.space.org_id, Some(caller.user_id.as_str()));
            let payload = json!({"spaceId": scope.space_id, "changeRequestId": scope.change_request,
                                 "commentId": comment.id, "replyId": id});
            let event = Event::in_space(Kind::CommentReplyPosted, org, &scope.space_id, &id, actor, payload);
            events::record(c, event)?;
            let reply = load_reply(c, &comment, &id)?;
            render_reply(c, &app2, &opened, &caller.user_id, &reply, format)
        })
        .await?;
    Ok(axum::Json(json))
}

pub(crate) async fn get_reply(
    caller: Caller,
    app: App,
    params: RouteIds,
    CommentFormat { format }: CommentFormat,
) -> ApiResult<axum::Json<ReplyJson>> {
    let app2 = app.clone();
    let json = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            let reply = load_reply(c, &comment, param(&params, "commentReplyId")?)?;
            render_reply(c, &app2, &opened, &caller.user_id, &reply, format)
        })
        .await?;
    Ok(axum::Json(json))
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
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
            let reply = load_reply(c, &comment, param(&params, "commentReplyId")?)?;
            edit.apply(
                c,
                &opened,
                &caller.user_id,
                "comment_replies",
                &reply.id,
                &reply.posted_by,
            )?;
            let reply = load_reply(c, &comment, &reply.id)?;
            render_reply(c, &app2, &opened, &caller.user_id, &reply, BodyFormat::Markdown)
        })
        .await?;
    Ok(axum::Json(json))
}

pub(crate) async fn delete_reply(caller: Caller, app: App, params: RouteIds) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let found = Ok(opened).and_then(|opened: Opened| {
                let comment = load_comment(c, &opened.scope, param(&params, "commentId")?)?;
                let reply = load_reply(c, &comment, param(&params, "commentReplyId")?)?;
                Ok((opened, reply))
            });
            let Some((opened, reply)) = unless_gone(found)? else {
                return Ok(());
            };
            if !model::permissions(&opened.space, &caller.user_id, &reply.posted_by).delete {
                return Err(quire_store::permissions::role_forbidden(
                    "deleting another member's reply",
                    Role::Admin,
                    &format!("on space {:?}", opened.space.space.id),
                    opened.space.role,
                )
                .into());
            }
            c.execute(
                "DELETE FROM comment_reactions WHERE target_id = ?1",
                params![reply.id.clone()],
            )?;
            c.execute("DELETE FROM comment_replies WHERE id = ?1", params![reply.id])?;
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The members who posted comments or replies in a space or a change request.
pub(crate) async fn list_commenters(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    let page = Page::new(&paging, format!("commenters:{params:?}"))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let opened = open(c, &params, &caller.user_id)?;
            let mut args = Args::default();
            let scope = scope_sql(&opened.scope, &mut args);
            let org = args.arg(&opened.space.space.org_id);
            let authors = format!(
                "m.user_id IN (SELECT c.posted_by FROM comments c WHERE {scope}
                               UNION SELECT r.posted_by FROM comment_replies r JOIN comments c ON c.id = r.comment_id WHERE {scope})"
            );
            let count: i64 = c
                .query_scalar(&format!("SELECT count(*) FROM members m WHERE m.organization_id = {org} AND {authors}"), args.values())?
                .unwrap_or(0);
            let mut sql = format!("{} AND {authors}", members::select(&org));
            if let Some(after) = page.after::<String>()? {
                sql += &format!(" AND m.user_id > {}", args.arg(after));
            }
            sql += &format!(" ORDER BY m.user_id LIMIT {}", args.arg(page.fetch()));
            let rows = c.query(&sql, args.values())?.iter().map(members::Member::from_row).collect::<Result<Vec<_>, _>>()?;
            let list = page.finish(rows, count as u64, |m| m.user.id.clone());
            Ok::<_, ApiError>(list.map(|m| crate::api::members::member_json(&app2.urls, &m)))
        })
        .await?;
    Ok(axum::Json(list))
}
