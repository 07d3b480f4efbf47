//! Comments and replies as stored, with what an answer embeds (reactions, repliers, users),
//! all loaded in a fixed number of queries per list (no query per comment).

use std::collections::HashMap;

use crate::db::{Args, Conn, DbError, Row};
use crate::error::StoreResult;
use crate::permissions::{Role, SpaceAction};
use crate::spaces::SpaceFor;
use crate::users::{self, User};

/// Where comments are: a space's own, or a change request's.
#[derive(Clone, Debug)]
pub struct Scope {
    pub space_id: String,
    pub change_request: Option<String>,
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

crate::wire_enum! {
    /// Whether a comment's thread is still open.
    pub enum CommentStatus {
        Open = "open",
        Resolved = "resolved",
    }
}

crate::columns! {
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

crate::columns! {
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
#[derive(Debug, Clone, Copy)]
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

/// A reaction as stored: (emoji, user id, when).
pub type ReactionRow = (String, String, i64);

crate::columns! {
    /// A reaction to a comment or reply.
    struct ReactionCols of "comment_reactions" {
        target: "target_id",
        emoji: "emoji",
        user: "user_id",
        reacted_at: "reacted_at",
    }
}

crate::columns! {
    /// The replies of one replier to one comment, aggregated.
    struct ReplierCols of "comment_replies" {
        comment: "comment_id",
        user: "posted_by",
        count: "count(*)",
        last_at: "max(posted_at)",
    }
}

/// Reactions of many comments or replies, by target id, in reaction order.
pub fn load_reactions(c: &mut dyn Conn, targets: &[&str]) -> StoreResult<HashMap<String, Vec<ReactionRow>>> {
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

/// A value (a comment, a reply, a page of them) with what their answer embeds: the repliers
/// of each comment (user, replies, last reply), the reactions of each comment or reply (emoji,
/// user, when), and every user they name.
#[derive(Debug)]
pub struct Shown<T> {
    pub value: T,
    pub repliers: HashMap<String, Vec<(String, i64, i64)>>,
    pub reactions: HashMap<String, Vec<ReactionRow>>,
    pub users: HashMap<String, User>,
}

/// `value` with what `comments` embed.
pub fn embed_comments<T>(
    c: &mut dyn Conn,
    value: T,
    comments: impl Fn(&T) -> &[Comment],
) -> StoreResult<Shown<T>> {
    let comments = comments(&value);
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
    Ok(Shown {
        value,
        repliers,
        reactions,
        users,
    })
}

/// `value` with what `replies` embed.
pub fn embed_replies<T>(
    c: &mut dyn Conn,
    value: T,
    replies: impl Fn(&T) -> &[Reply],
) -> StoreResult<Shown<T>> {
    let replies = replies(&value);
    let ids: Vec<&str> = replies.iter().map(|r| r.id.as_str()).collect();
    let reactions = load_reactions(c, &ids)?;
    let mut user_ids: Vec<&str> = replies.iter().map(|r| r.posted_by.as_str()).collect();
    user_ids.extend(reactions.values().flatten().map(|(_, u, _)| u.as_str()));
    let users = users::load_many(c, &user_ids)?;
    Ok(Shown {
        value,
        repliers: HashMap::new(),
        reactions,
        users,
    })
}
