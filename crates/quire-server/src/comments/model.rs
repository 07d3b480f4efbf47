//! Comments and replies as stored, and as sent with their reactions, repliers and permissions,
//! all loaded in a fixed number of queries per list (no query per comment).

use std::collections::HashMap;

use quire_content::{Document, document_to_markdown};
use serde::Serialize;

use crate::api::users::UserJson;
use crate::app::App;
use crate::clock;
use crate::db::{Args, Conn, DbError, Row};
use crate::error::ApiResult;
use quire_store::permissions::{Role, SpaceAction};
use quire_store::spaces::SpaceFor;
use quire_store::users::{self, User};

/// Where comments live: a space, or a change request of it.
#[derive(Clone, Debug)]
pub struct Scope {
    pub space_id: String,
    pub change_request: Option<String>,
}

impl Scope {
    pub fn location(&self, urls: &crate::urls::Urls, path: &str) -> String {
        match &self.change_request {
            Some(cr) => urls.api(&format!(
                "/spaces/{}/change-requests/{cr}/comments{path}",
                self.space_id
            )),
            None => urls.api(&format!("/spaces/{}/comments{path}", self.space_id)),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Comment {
    pub id: String,
    pub space_id: String,
    pub change_request: Option<String>,
    pub review: Option<String>,
    pub page: Option<String>,
    pub node: Option<String>,
    pub table_record: Option<String>,
    pub table_definition: Option<String>,
    pub revision: String,
    pub posted_by: String,
    pub posted_at: i64,
    pub edited_at: Option<i64>,
    pub body: String,
    pub status: CommentStatus,
    pub resolved_at: Option<i64>,
    pub resolved_by: Option<String>,
}

quire_store::wire_enum! {
    /// Whether a comment's thread is still open.
    pub enum CommentStatus {
        Open = "open",
        Resolved = "resolved",
    }
}

quire_store::columns! {
    /// The columns [`Comment::from_row`] reads, with the table aliased `c`.
    pub struct CommentCols of "comments" {
        id: "c.id",
        space_id: "c.space_id",
        change_request: "c.change_request_id",
        review: "c.review_id",
        page: "c.page_id",
        node: "c.node_id",
        table_record: "c.table_record",
        table_definition: "c.table_definition",
        revision: "c.revision_id",
        posted_by: "c.posted_by",
        posted_at: "c.posted_at",
        edited_at: "c.edited_at",
        body: "c.body",
        status: "c.status",
        resolved_at: "c.resolved_at",
        resolved_by: "c.resolved_by",
    }
}

pub const COMMENT_COLUMNS: &str = CommentCols::SQL;
const COMMENT: CommentCols = CommentCols::AT;

impl Comment {
    pub fn from_row(r: &Row) -> Result<Comment, DbError> {
        Ok(Comment {
            id: r.col(COMMENT.id)?,
            space_id: r.col(COMMENT.space_id)?,
            change_request: r.col(COMMENT.change_request)?,
            review: r.col(COMMENT.review)?,
            page: r.col(COMMENT.page)?,
            node: r.col(COMMENT.node)?,
            table_record: r.col(COMMENT.table_record)?,
            table_definition: r.col(COMMENT.table_definition)?,
            revision: r.col(COMMENT.revision)?,
            posted_by: r.col(COMMENT.posted_by)?,
            posted_at: r.col(COMMENT.posted_at)?,
            edited_at: r.col(COMMENT.edited_at)?,
            body: r.col(COMMENT.body)?,
            status: r.col(COMMENT.status)?,
            resolved_at: r.col(COMMENT.resolved_at)?,
            resolved_by: r.col(COMMENT.resolved_by)?,
        })
    }
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub id: String,
    pub comment_id: String,
    pub posted_by: String,
    pub posted_at: i64,
    pub edited_at: Option<i64>,
    pub body: String,
}

quire_store::columns! {
    /// The columns [`Reply::from_row`] reads, with the table aliased `r`.
    pub struct ReplyCols of "comment_replies" {
        id: "r.id",
        comment_id: "r.comment_id",
        posted_by: "r.posted_by",
        posted_at: "r.posted_at",
        edited_at: "r.edited_at",
        body: "r.body",
    }
}

pub const REPLY_COLUMNS: &str = ReplyCols::SQL;
const REPLY: ReplyCols = ReplyCols::AT;

impl Reply {
    pub fn from_row(r: &Row) -> Result<Reply, DbError> {
        Ok(Reply {
            id: r.col(REPLY.id)?,
            comment_id: r.col(REPLY.comment_id)?,
            posted_by: r.col(REPLY.posted_by)?,
            posted_at: r.col(REPLY.posted_at)?,
            edited_at: r.col(REPLY.edited_at)?,
            body: r.col(REPLY.body)?,
        })
    }
}

/// What a caller may do with a comment or reply written by `author`.
#[derive(Serialize, Debug, Clone, Copy, utoipa::ToSchema)]
#[schema(as = CommentPermissions)]
pub struct Permissions {
    pub view: bool,
    pub edit: bool,
    pub reply: bool,
    pub delete: bool,
}

/// The one decision for comments and replies: whoever may comment on the space posts, replies,
/// reacts and resolves; authors edit their own; authors and space admins delete.
pub fn permissions(space: &SpaceFor, caller: &str, author: &str) -> Permissions {
    let view = space.allows(SpaceAction::View);
    let comment = space.allows(SpaceAction::Comment);
    Permissions {
        view,
        edit: comment && caller == author,
        reply: comment,
        delete: view && (caller == author || space.role >= Some(Role::Admin)),
    }
}

/// How bodies are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyFormat {
    Markdown,
    Document,
}

/// A body as sent: `{"markdown": ...}` or `{"document": ...}`.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(untagged)]
#[schema(as = CommentBody)]
pub enum Body {
    Markdown {
        markdown: String,
    },
    Document {
        #[schema(value_type = Object)]
        document: Document,
    },
}

/// The body of the comment or reply `what` ("comment \"x\""), as sent; an error when the
/// stored document does not decode, never an empty body.
fn body_json(what: std::fmt::Arguments<'_>, body: &str, format: BodyFormat) -> Result<Body, DbError> {
    let document: Document =
        serde_json::from_str(body).map_err(|e| DbError::stored(format_args!("body of {what}"), e))?;
    Ok(match format {
        BodyFormat::Markdown => Body::Markdown {
            markdown: document_to_markdown(&document, &|_| None),
        },
        BodyFormat::Document => Body::Document { document },
    })
}

/// What a comment is about.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = CommentTarget)]
struct Target {
    space: String,
    revision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<IdOf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<IdOf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table_cell: Option<TableCellOf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    change_request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<String>,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
struct IdOf {
    id: String,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
struct TableCellOf {
    record: String,
    definition: String,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Reaction {
    emoji: String,
    count: usize,
    users: Vec<ReactionUser>,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct ReactionUser {
    user: UserJson,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    reacted_at: i64,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Replier {
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    updated_at: i64,
    count: i64,
    user: UserJson,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommentJson {
    object: &'static str,
    pub id: String,
    posted_by: UserJson,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    posted_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    edited_at: Option<i64>,
    reactions: Vec<Reaction>,
    replies: i64,
    repliers: Vec<Replier>,
    body: Body,
    target: Target,
    status: CommentStatus,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    resolved_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved_by: Option<UserJson>,
    urls: Location,
    permissions: Permissions,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyJson {
    object: &'static str,
    pub id: String,
    posted_by: UserJson,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    posted_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    edited_at: Option<i64>,
    reactions: Vec<Reaction>,
    body: Body,
    urls: Location,
    permissions: Permissions,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[schema(as = CommentUrls)]
struct Location {
    location: String,
}

/// A reaction as stored: (emoji, user id, when).
type ReactionRow = (String, String, i64);

quire_store::columns! {
    /// A reaction to a comment or reply.
    struct ReactionCols of "comment_reactions" {
        target: "target_id",
        emoji: "emoji",
        user: "user_id",
        reacted_at: "reacted_at",
    }
}

quire_store::columns! {
    /// The replies of one replier to one comment, aggregated.
    struct ReplierCols of "comment_replies" {
        comment: "comment_id",
        user: "posted_by",
        count: "count(*)",
        last_at: "max(posted_at)",
    }
}

/// Reactions of many comments or replies, by target id, in reaction order.
fn load_reactions(c: &mut dyn Conn, targets: &[&str]) -> ApiResult<HashMap<String, Vec<ReactionRow>>> {
    let mut out: HashMap<String, Vec<ReactionRow>> = HashMap::new();
    for chunk in targets.chunks(500) {
        let mut args = Args::default();
        let list = args.list(chunk.iter().copied());
        let sql = format!(
            "SELECT {} FROM comment_reactions WHERE target_id IN ({list})
             ORDER BY reacted_at, emoji, user_id",
            ReactionCols::SQL
        );
        const R: ReactionCols = ReactionCols::AT;
        for r in c.query(&sql, args.values())? {
            out.entry(r.col(R.target)?).or_default().push((
                r.col(R.emoji)?,
                r.col(R.user)?,
                r.col(R.reacted_at)?,
            ));
        }
    }
    Ok(out)
}

fn group_reactions(
    rows: &[(String, String, i64)],
    users: &HashMap<String, User>,
    app: &App,
) -> Vec<Reaction> {
    let mut out: Vec<Reaction> = Vec::new();
    for (emoji, user, at) in rows {
        let entry = match out.iter_mut().position(|r| &r.emoji == emoji) {
            Some(i) => &mut out[i],
            None => {
                out.push(Reaction {
                    emoji: emoji.clone(),
                    count: 0,
                    users: Vec::new(),
                });
                let last = out.len() - 1;
                &mut out[last]
            }
        };
        entry.count += 1;
        entry.users.push(ReactionUser {
            user: user_json(app, users, user),
            reacted_at: *at,
        });
    }
    out
}

fn user_json(app: &App, users: &HashMap<String, User>, id: &str) -> UserJson {
    crate::api::users::wire::user_or_deleted(&app.urls, users, id)
}

/// Renders comments with everything they embed.
pub fn render_comments(
    c: &mut dyn Conn,
    app: &App,
    space: &SpaceFor,
    caller: &str,
    comments: &[Comment],
    format: BodyFormat,
) -> ApiResult<Vec<CommentJson>> {
    let ids: Vec<&str> = comments.iter().map(|x| x.id.as_str()).collect();
    // Repliers: one aggregate query for the whole list.
    let mut repliers: HashMap<String, Vec<(String, i64, i64)>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let mut args = Args::default();
        let list = args.list(chunk.iter().copied());
        let sql = format!(
            "SELECT {} FROM comment_replies WHERE comment_id IN ({list})
             GROUP BY comment_id, posted_by ORDER BY max(posted_at)",
            ReplierCols::SQL
        );
        const R: ReplierCols = ReplierCols::AT;
        for r in c.query(&sql, args.values())? {
            repliers.entry(r.col(R.comment)?).or_default().push((
                r.col(R.user)?,
                r.col(R.count)?,
                r.col(R.last_at)?,
            ));
        }
    }
    let reactions = load_reactions(c, &ids)?;
    let mut user_ids: Vec<&str> = comments.iter().map(|x| x.posted_by.as_str()).collect();
    user_ids.extend(comments.iter().filter_map(|x| x.resolved_by.as_deref()));
    user_ids.extend(repliers.values().flatten().map(|(u, _, _)| u.as_str()));
    user_ids.extend(reactions.values().flatten().map(|(_, u, _)| u.as_str()));
    let users = users::load_many(c, &user_ids)?;
    let json = comments
        .iter()
        .map(|x| {
            let list = repliers.get(&x.id).map(Vec::as_slice).unwrap_or(&[]);
            let target = Target {
                space: x.space_id.clone(),
                revision: x.revision.clone(),
                page: x.page.clone().map(|id| IdOf { id }),
                node: x.node.clone().map(|id| IdOf { id }),
                table_cell: match (&x.table_record, &x.table_definition) {
                    (Some(record), Some(definition)) => Some(TableCellOf {
                        record: record.clone(),
                        definition: definition.clone(),
                    }),
                    _ => None,
                },
                change_request: x.change_request.clone(),
                review: x.review.clone(),
            };
            let scope = Scope {
                space_id: x.space_id.clone(),
                change_request: x.change_request.clone(),
            };
            Ok(CommentJson {
                object: "comment",
                id: x.id.clone(),
                posted_by: user_json(app, &users, &x.posted_by),
                posted_at: x.posted_at,
                edited_at: x.edited_at,
                reactions: group_reactions(
                    reactions.get(&x.id).map(Vec::as_slice).unwrap_or(&[]),
                    &users,
                    app,
                ),
                replies: list.iter().map(|(_, n, _)| n).sum(),
                repliers: list
                    .iter()
                    .map(|(u, n, at)| Replier {
                        updated_at: *at,
                        count: *n,
                        user: user_json(app, &users, u),
                    })
                    .collect(),
                body: body_json(format_args!("comment {:?}", x.id), &x.body, format)?,
                target,
                status: x.status,
                resolved_at: x.resolved_at,
                resolved_by: x.resolved_by.as_deref().map(|u| user_json(app, &users, u)),
                urls: Location {
                    location: scope.location(&app.urls, &format!("/{}", x.id)),
                },
                permissions: permissions(space, caller, &x.posted_by),
            })
        })
        .collect::<Result<_, DbError>>()?;
    Ok(json)
}

/// Renders replies of one comment.
pub fn render_replies(
    c: &mut dyn Conn,
    app: &App,
    space: &SpaceFor,
    scope: &Scope,
    caller: &str,
    replies: &[Reply],
    format: BodyFormat,
) -> ApiResult<Vec<ReplyJson>> {
    let ids: Vec<&str> = replies.iter().map(|r| r.id.as_str()).collect();
    let reactions = load_reactions(c, &ids)?;
    let mut user_ids: Vec<&str> = replies.iter().map(|r| r.posted_by.as_str()).collect();
    user_ids.extend(reactions.values().flatten().map(|(_, u, _)| u.as_str()));
    let users = users::load_many(c, &user_ids)?;
    let json = replies
        .iter()
        .map(|r| {
            Ok(ReplyJson {
                object: "comment-reply",
                id: r.id.clone(),
                posted_by: user_json(app, &users, &r.posted_by),
                posted_at: r.posted_at,
                edited_at: r.edited_at,
                reactions: group_reactions(
                    reactions.get(&r.id).map(Vec::as_slice).unwrap_or(&[]),
                    &users,
                    app,
                ),
                body: body_json(format_args!("reply {:?}", r.id), &r.body, format)?,
                urls: Location {
                    location: scope.location(&app.urls, &format!("/{}/replies/{}", r.comment_id, r.id)),
                },
                permissions: permissions(space, caller, &r.posted_by),
            })
        })
        .collect::<Result<_, DbError>>()?;
    Ok(json)
}
