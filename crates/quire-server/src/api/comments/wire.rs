//! Comments and replies as answered, with their reactions, repliers, the users they name and
//! the caller's `permissions`.

use std::collections::HashMap;

use quire_content::{Document, document_to_markdown};
use quire_store::clock;
use quire_store::comments::{Comment, CommentStatus, Reply, Scope, Shown};
use quire_store::db::DbError;
use quire_store::spaces::SpaceFor;
use quire_store::users::User;
use serde::Serialize;

use crate::api::users::UserJson;
use crate::error::ApiResult;
use crate::urls::Urls;

/// The API URL of a comment or reply of `scope` (`path` after `/comments`).
pub fn location(urls: &Urls, scope: &Scope, path: &str) -> String {
    match &scope.change_request {
        Some(cr) => urls.api(&format!(
            "/spaces/{}/change-requests/{cr}/comments{path}",
            scope.space_id
        )),
        None => urls.api(&format!("/spaces/{}/comments{path}", scope.space_id)),
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

impl From<quire_store::comments::Permissions> for Permissions {
    fn from(p: quire_store::comments::Permissions) -> Permissions {
        Permissions {
            view: p.view,
            edit: p.edit,
            reply: p.reply,
            delete: p.delete,
        }
    }
}

fn permissions(space: &SpaceFor, caller: &str, author: &str) -> Permissions {
    quire_store::comments::permissions(space, caller, author).into()
}

/// How bodies are sent (the `format` parameter): `markdown` (the default) or `document`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BodyFormat {
    #[default]
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

fn group_reactions(
    rows: &[(String, String, i64)],
    users: &HashMap<String, User>,
    urls: &Urls,
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
            user: user_json(urls, users, user),
            reacted_at: *at,
        });
    }
    out
}

fn user_json(urls: &Urls, users: &HashMap<String, User>, id: &str) -> UserJson {
    crate::api::users::wire::user_or_deleted(urls, users, id)
}

/// Renders comments with everything they embed.
pub fn render_comments<T>(
    urls: &Urls,
    space: &SpaceFor,
    caller: &str,
    comments: &[Comment],
    shown: &Shown<T>,
    format: BodyFormat,
) -> ApiResult<Vec<CommentJson>> {
    let (repliers, reactions, users) = (&shown.repliers, &shown.reactions, &shown.users);
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
                posted_by: user_json(urls, users, &x.posted_by),
                posted_at: x.posted_at,
                edited_at: x.edited_at,
                reactions: group_reactions(
                    reactions.get(&x.id).map(Vec::as_slice).unwrap_or(&[]),
                    users,
                    urls,
                ),
                replies: list.iter().map(|(_, n, _)| n).sum(),
                repliers: list
                    .iter()
                    .map(|(u, n, at)| Replier {
                        updated_at: *at,
                        count: *n,
                        user: user_json(urls, users, u),
                    })
                    .collect(),
                body: body_json(format_args!("comment {:?}", x.id), &x.body, format)?,
                target,
                status: x.status,
                resolved_at: x.resolved_at,
                resolved_by: x.resolved_by.as_deref().map(|u| user_json(urls, users, u)),
                urls: Location {
                    location: location(urls, &scope, &format!("/{}", x.id)),
                },
                permissions: permissions(space, caller, &x.posted_by),
            })
        })
        .collect::<Result<_, DbError>>()?;
    Ok(json)
}

/// Renders replies of one comment.
pub fn render_replies<T>(
    urls: &Urls,
    space: &SpaceFor,
    scope: &Scope,
    caller: &str,
    replies: &[Reply],
    shown: &Shown<T>,
    format: BodyFormat,
) -> ApiResult<Vec<ReplyJson>> {
    let (reactions, users) = (&shown.reactions, &shown.users);
    let json = replies
        .iter()
        .map(|r| {
            Ok(ReplyJson {
                object: "comment-reply",
                id: r.id.clone(),
                posted_by: user_json(urls, users, &r.posted_by),
                posted_at: r.posted_at,
                edited_at: r.edited_at,
                reactions: group_reactions(
                    reactions.get(&r.id).map(Vec::as_slice).unwrap_or(&[]),
                    users,
                    urls,
                ),
                body: body_json(format_args!("reply {:?}", r.id), &r.body, format)?,
                urls: Location {
                    location: location(urls, scope, &format!("/{}/replies/{}", r.comment_id, r.id)),
                },
                permissions: permissions(space, caller, &r.posted_by),
            })
        })
        .collect::<Result<_, DbError>>()?;
    Ok(json)
}

/// One comment as answered.
pub fn comment_json(
    urls: &Urls,
    space: &SpaceFor,
    caller: &str,
    shown: &Shown<Comment>,
    format: BodyFormat,
) -> ApiResult<CommentJson> {
    render_comments(
        urls,
        space,
        caller,
        std::slice::from_ref(&shown.value),
        shown,
        format,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| crate::error::ApiError::internal("nothing rendered"))
}

/// One reply as answered.
pub fn reply_json(
    urls: &Urls,
    space: &SpaceFor,
    scope: &Scope,
    caller: &str,
    shown: &Shown<Reply>,
    format: BodyFormat,
) -> ApiResult<ReplyJson> {
    render_replies(
        urls,
        space,
        scope,
        caller,
        std::slice::from_ref(&shown.value),
        shown,
        format,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| crate::error::ApiError::internal("nothing rendered"))
}
