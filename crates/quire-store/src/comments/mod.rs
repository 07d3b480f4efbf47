//! Comments and replies on spaces and on change requests: post, list with filters, read, edit,
//! resolve, react, delete; and the people who commented. Each function works on an [`Opened`]
//! place: a space's own comments, or a change request's (opened from the change request by the
//! caller, so that this module needs none of `change_requests`).

pub mod model;

use std::collections::HashMap;

use quire_content::changes::DocumentInput;
use quire_content::{Document, markdown_to_document};

pub use model::{
    COMMENT_COLUMNS, Comment, CommentStatus, Permissions, REPLY_COLUMNS, Reply, Scope, Shown, embed_comments,
    embed_replies, permissions,
};

use crate::content::store::{self, ContentCache};
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::members::{self, Member};
use crate::paging::{List, Order, Page, Paging};
use crate::permissions::{Role, SpaceAction};
use crate::spaces::SpaceFor;
use crate::users::User;
use crate::{clock, ids, params};

/// The place comments are read and written: the space (as the caller sees it), the scope, and
/// the revision new comments point into.
pub struct Opened {
    pub space: SpaceFor,
    pub scope: Scope,
    pub revision: String,
}

impl Opened {
    /// The space's own comments, pointing into its main revision.
    pub fn on_space(space: SpaceFor) -> Opened {
        Opened {
            revision: space.space.revision.clone().unwrap_or_default(),
            scope: Scope {
                space_id: space.space.id.clone(),
                change_request: None,
            },
            space,
        }
    }

    /// The comments of change request `cr_id` of the space, pointing into its revision.
    pub fn on_change_request(space: SpaceFor, cr_id: &str, revision: &str) -> Opened {
        Opened {
            scope: Scope {
                space_id: space.space.id.clone(),
                change_request: Some(cr_id.to_string()),
            },
            revision: revision.to_string(),
            space,
        }
    }

    fn require(&self, action: SpaceAction) -> StoreResult<()> {
        self.space.require(action)
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

/// A comment body from the request: markdown or a JSON document, never empty.
pub fn body(input: DocumentInput) -> StoreResult<String> {
    let document = match input {
        DocumentInput::Markdown(md) => {
            if md.trim().is_empty() {
                return Err(StoreError::invalid("`body` must not be empty"));
            }
            markdown_to_document(&md).map_err(|e| StoreError::over_limit("body.markdown", &e))?
        }
        DocumentInput::Json(value) => Document::from_json(value)
            .map_err(|e| StoreError::invalid(format!("invalid `body.document`: {e}")))?,
        DocumentInput::Empty => {
            return Err(StoreError::invalid("`body` must hold `markdown` or `document`"));
        }
    };
    if document.nodes.is_empty() {
        return Err(StoreError::invalid("`body` must not be empty"));
    }
    serde_json::to_string(&document).map_err(|e| StoreError::internal(e.to_string()))
}

fn load_comment(c: &mut dyn Conn, scope: &Scope, id: &str) -> StoreResult<Comment> {
    let mut args = Args::default();
    let sql = format!(
        "SELECT {COMMENT_COLUMNS} FROM comments c WHERE {} AND c.id = {}",
        scope_sql(scope, &mut args),
        args.arg(id)
    );
    c.query_opt(&sql, args.values())?
        .map(|r| Comment::from_row(&r))
        .transpose()?
        .ok_or_else(|| StoreError::not_found(format!("comment {id:?} not found")))
}

fn load_reply(c: &mut dyn Conn, comment: &Comment, id: &str) -> StoreResult<Reply> {
    c.query_opt(
        &format!("SELECT {REPLY_COLUMNS} FROM comment_replies r WHERE r.comment_id = ?1 AND r.id = ?2"),
        params![comment.id.clone(), id],
    )?
    .map(|r| Reply::from_row(&r))
    .transpose()?
    .ok_or_else(|| StoreError::not_found(format!("reply {id:?} not found")))
}

/// Which comments a list shows.
#[derive(Clone, Debug)]
pub struct Filter {
    pub order: Order,
    /// `all`, `open` or `resolved`.
    pub status: &'static str,
    /// Only the comments on this page.
    pub page: Option<String>,
    /// Only the comments of these users (sorted).
    pub authors: Vec<String>,
}

/// A place in the scope of a list's cursors. Debug-quoted: ids come from request paths, and a
/// list kept by this scope (see [`list_scope`]) must not be taken for another's.
fn place(scope: &Scope) -> String {
    format!("{:?}:{:?}", scope.space_id, scope.change_request)
}

/// The scope of the cursors of the comments of `place` that `filter` shows. Public because
/// an answer kept by what it lists is keyed by it before the list is read.
pub fn list_scope(scope: &Scope, filter: &Filter) -> String {
    format!(
        "comments:{}:{}:{}:{:?}:{:?}",
        place(scope),
        filter.order.name(),
        filter.status,
        filter.page,
        filter.authors
    )
}

/// The comments of a place, one page of them.
pub fn list(
    c: &mut dyn Conn,
    opened: &Opened,
    filter: &Filter,
    paging: &Paging,
) -> StoreResult<Shown<List<Comment>>> {
    let page = Page::new(paging, list_scope(&opened.scope, filter))?;
    let Filter {
        order,
        status,
        page: page_filter,
        authors,
    } = filter;
    let (order, status) = (*order, *status);
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
        (None, None, true, Some(CommentStatus::Resolved)) => counters.comments_total - counters.comments,
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
    embed_comments(c, list, |l| &l.items)
}

/// A new comment: its body as stored (see [`body`]) and what it is about.
#[derive(Clone, Debug)]
pub struct NewComment {
    pub text: String,
    pub page: Option<String>,
    pub node: Option<String>,
    /// (record, definition) of a table cell.
    pub table_cell: Option<(String, String)>,
}

/// Posts a comment; its page must be in the revision it points into, and its node in the page.
pub fn post(
    c: &mut dyn Conn,
    cache: &ContentCache,
    opened: &Opened,
    author: &User,
    new: &NewComment,
) -> StoreResult<Shown<Comment>> {
    opened.require(SpaceAction::Comment)?;
    let caller = author.id.as_str();
    check_target(c, cache, opened, new.page.as_deref(), new.node.as_deref())?;
    let id = ids::new_id();
    let posted_at = clock::now_ms();
    c.execute(
        "INSERT INTO comments (id, space_id, change_request_id, page_id, node_id, table_record, table_definition,
                               revision_id, posted_by, posted_at, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            id.clone(),
            opened.scope.space_id.clone(),
            opened.scope.change_request.clone(),
            new.page.clone(),
            new.node.clone(),
            new.table_cell.as_ref().map(|t| t.0.clone()),
            new.table_cell.as_ref().map(|t| t.1.clone()),
            opened.revision.clone(),
            caller,
            posted_at,
            new.text.clone()
        ],
    )?;
    let (scope, org) = (&opened.scope, &opened.space.space.org_id);
    let payload = events::CommentPosted {
        space_id: &scope.space_id,
        change_request_id: scope.change_request.as_deref(),
        comment_id: &id,
        on: events::CommentOn::Page {
            page_id: new.page.as_deref(),
        },
        revision_id: &opened.revision,
    };
    let event = Event::in_space(org, &scope.space_id, &id, Some(caller), payload);
    events::record(c, event)?;
    // What was just written, without reading it back: every round trip inside a write holds
    // the writer (SQLite) or a connection (PostgreSQL), and a comment burst is all writes.
    let comment = Comment {
        id,
        space_id: scope.space_id.clone(),
        change_request: scope.change_request.clone(),
        review: None,
        page: new.page.clone(),
        node: new.node.clone(),
        table_record: new.table_cell.as_ref().map(|t| t.0.clone()),
        table_definition: new.table_cell.as_ref().map(|t| t.1.clone()),
        revision: opened.revision.clone(),
        posted_by: caller.to_string(),
        posted_at,
        edited_at: None,
        body: new.text.clone(),
        status: CommentStatus::Open,
        resolved_at: None,
        resolved_by: None,
    };
    Ok(shown_new(comment, author))
}

/// A comment or reply just posted, with what it embeds: no repliers and no reactions yet, and
/// its author, as authenticated (not read again: every round trip inside a write holds the
/// writer or a connection).
fn shown_new<T>(value: T, author: &User) -> Shown<T> {
    Shown {
        value,
        repliers: HashMap::new(),
        reactions: HashMap::new(),
        users: HashMap::from([(author.id.clone(), author.clone())]),
    }
}

fn one(c: &mut dyn Conn, comment: Comment) -> StoreResult<Shown<Comment>> {
    embed_comments(c, comment, std::slice::from_ref)
}

fn one_reply(c: &mut dyn Conn, reply: Reply) -> StoreResult<Shown<Reply>> {
    embed_replies(c, reply, std::slice::from_ref)
}

/// A comment's page must exist in the revision it points into, and its node in that page.
fn check_target(
    c: &mut dyn Conn,
    cache: &ContentCache,
    opened: &Opened,
    page: Option<&str>,
    node: Option<&str>,
) -> StoreResult<()> {
    let Some(page_id) = page else { return Ok(()) };
    let tree = store::load_tree(c, cache, &opened.scope.space_id, &opened.revision)?;
    let entry =
        tree.tree.pages.get(page_id).ok_or_else(|| {
            StoreError::invalid(format!("`page`: {page_id:?} is not a page of this revision"))
        })?;
    if let Some(node) = node {
        let document = match &entry.document {
            Some(hash) => store::load_document(c, cache, &opened.scope.space_id, hash)?
                .document
                .clone(),
            None => Document::default(),
        };
        if !has_node(&document.nodes, node) {
            return Err(StoreError::invalid(format!(
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

/// A comment of the place.
pub fn get(c: &mut dyn Conn, opened: &Opened, comment_id: &str) -> StoreResult<Shown<Comment>> {
    let comment = load_comment(c, &opened.scope, comment_id)?;
    one(c, comment)
}

pub fn check_emojis(list: &[String]) -> StoreResult<()> {
    for e in list {
        let n = e.chars().count();
        if n == 0 || n > 50 || e.trim().is_empty() {
            return Err(StoreError::invalid(format!(
                "{e:?} is not an emoji (1 to 50 characters)"
            )));
        }
    }
    Ok(())
}

/// Applies reaction changes of `user` to a comment or reply.
fn react(
    c: &mut dyn Conn,
    target: &str,
    user: &str,
    added: &[String],
    removed: &[String],
) -> StoreResult<()> {
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
/// An edit of a comment or reply: its new body, reactions added and removed (checked).
pub struct Edit {
    text: Option<String>,
    added_reactions: Vec<String>,
    removed_reactions: Vec<String>,
}

impl Edit {
    pub fn parse(
        body: Option<DocumentInput>,
        added_reactions: Vec<String>,
        removed_reactions: Vec<String>,
    ) -> StoreResult<Edit> {
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
    ) -> StoreResult<()> {
        if let Some(text) = &self.text {
            if !model::permissions(&opened.space, caller, author).edit {
                let what = if table == "comments" { "comment" } else { "reply" };
                return Err(StoreError::forbidden(format!(
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
            opened.require(SpaceAction::Comment)?;
            react(c, id, caller, &self.added_reactions, &self.removed_reactions)?;
        }
        Ok(())
    }
}

/// Deletes are idempotent: a comment, reply or space that is not there is already deleted.
fn unless_gone<T>(found: StoreResult<T>) -> StoreResult<Option<T>> {
    match found {
        Err(e) if e.kind == crate::ErrorKind::NotFound => Ok(None),
        other => other.map(Some),
    }
}

/// Edits a comment (its author only), reacts to it, or resolves or reopens it.
pub fn update(
    c: &mut dyn Conn,
    opened: &Opened,
    caller: &str,
    comment_id: &str,
    edit: &Edit,
    resolved: Option<bool>,
) -> StoreResult<Shown<Comment>> {
    let comment = load_comment(c, &opened.scope, comment_id)?;
    edit.apply(c, opened, caller, "comments", &comment.id, &comment.posted_by)?;
    if resolved.is_some() {
        opened.require(SpaceAction::Comment)?;
    }
    match resolved {
        Some(true) if comment.status != CommentStatus::Resolved => {
            c.execute(
                "UPDATE comments SET status = 'resolved', resolved_at = ?2, resolved_by = ?3 WHERE id = ?1",
                params![comment.id.clone(), clock::now_ms(), caller],
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
    one(c, comment)
}

/// Deletes a comment with its replies and reactions (its author or a space admin); nothing when
/// it is gone already.
pub fn delete(c: &mut dyn Conn, opened: &Opened, caller: &str, comment_id: &str) -> StoreResult<()> {
    let Some(comment) = unless_gone(load_comment(c, &opened.scope, comment_id))? else {
        return Ok(());
    };
    if !model::permissions(&opened.space, caller, &comment.posted_by).delete {
        return Err(crate::permissions::role_forbidden(
            "deleting another member's comment",
            Role::Admin,
            &format!("on space {:?}", opened.space.space.id),
            opened.space.role,
        ));
    }
    c.execute(
        "DELETE FROM comment_reactions WHERE target_id = ?1 OR target_id IN (SELECT id FROM comment_replies WHERE comment_id = ?1)",
        params![comment.id.clone()],
    )?;
    c.execute("DELETE FROM comments WHERE id = ?1", params![comment.id])?;
    Ok(())
}

/// The replies of a comment, oldest first, one page of them.
pub fn replies(
    c: &mut dyn Conn,
    opened: &Opened,
    comment_id: &str,
    paging: &Paging,
) -> StoreResult<Shown<List<Reply>>> {
    let page = Page::new(paging, format!("replies:{}:{comment_id:?}", place(&opened.scope)))?;
    let comment = load_comment(c, &opened.scope, comment_id)?;
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
    embed_replies(c, list, |l| &l.items)
}

/// Replies to a comment with `text` (see [`body`]).
pub fn reply(
    c: &mut dyn Conn,
    opened: &Opened,
    author: &User,
    comment_id: &str,
    text: &str,
) -> StoreResult<Shown<Reply>> {
    opened.require(SpaceAction::Comment)?;
    let caller = author.id.as_str();
    let comment = load_comment(c, &opened.scope, comment_id)?;
    let id = ids::new_id();
    let posted_at = clock::now_ms();
    c.execute(
        "INSERT INTO comment_replies (id, comment_id, posted_by, posted_at, body) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id.clone(), comment.id.clone(), caller, posted_at, text],
    )?;
    let (scope, org) = (&opened.scope, &opened.space.space.org_id);
    let payload = events::CommentReplyPosted {
        space_id: &scope.space_id,
        change_request_id: scope.change_request.as_deref(),
        comment_id: &comment.id,
        reply_id: &id,
    };
    let event = Event::in_space(org, &scope.space_id, &id, Some(caller), payload);
    events::record(c, event)?;
    let reply = Reply {
        id,
        comment_id: comment.id,
        posted_by: caller.to_string(),
        posted_at,
        edited_at: None,
        body: text.to_string(),
    };
    Ok(shown_new(reply, author))
}

/// A reply of a comment of the place.
pub fn get_reply(
    c: &mut dyn Conn,
    opened: &Opened,
    comment_id: &str,
    reply_id: &str,
) -> StoreResult<Shown<Reply>> {
    let comment = load_comment(c, &opened.scope, comment_id)?;
    let reply = load_reply(c, &comment, reply_id)?;
    one_reply(c, reply)
}

/// Edits a reply (its author only) or reacts to it.
pub fn update_reply(
    c: &mut dyn Conn,
    opened: &Opened,
    caller: &str,
    comment_id: &str,
    reply_id: &str,
    edit: &Edit,
) -> StoreResult<Shown<Reply>> {
    let comment = load_comment(c, &opened.scope, comment_id)?;
    let reply = load_reply(c, &comment, reply_id)?;
    edit.apply(c, opened, caller, "comment_replies", &reply.id, &reply.posted_by)?;
    let reply = load_reply(c, &comment, &reply.id)?;
    one_reply(c, reply)
}

/// Deletes a reply with its reactions (its author or a space admin); nothing when it is gone
/// already.
pub fn delete_reply(
    c: &mut dyn Conn,
    opened: &Opened,
    caller: &str,
    comment_id: &str,
    reply_id: &str,
) -> StoreResult<()> {
    let found =
        load_comment(c, &opened.scope, comment_id).and_then(|comment| load_reply(c, &comment, reply_id));
    let Some(reply) = unless_gone(found)? else {
        return Ok(());
    };
    if !model::permissions(&opened.space, caller, &reply.posted_by).delete {
        return Err(crate::permissions::role_forbidden(
            "deleting another member's reply",
            Role::Admin,
            &format!("on space {:?}", opened.space.space.id),
            opened.space.role,
        ));
    }
    c.execute(
        "DELETE FROM comment_reactions WHERE target_id = ?1",
        params![reply.id.clone()],
    )?;
    c.execute("DELETE FROM comment_replies WHERE id = ?1", params![reply.id])?;
    Ok(())
}

/// The members who commented or replied in the place, in id order.
pub fn commenters(c: &mut dyn Conn, opened: &Opened, paging: &Paging) -> StoreResult<List<Member>> {
    let page = Page::new(paging, format!("commenters:{}", place(&opened.scope)))?;
    let mut args = Args::default();
    let scope = scope_sql(&opened.scope, &mut args);
    let org = args.arg(&opened.space.space.org_id);
    let authors = format!(
        "m.user_id IN (SELECT c.posted_by FROM comments c WHERE {scope}
                       UNION SELECT r.posted_by FROM comment_replies r JOIN comments c ON c.id = r.comment_id WHERE {scope})"
    );
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM members m WHERE m.organization_id = {org} AND {authors}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!("{} AND {authors}", members::select(&org));
    if let Some(after) = page.after::<String>()? {
        sql += &format!(" AND m.user_id > {}", args.arg(after));
    }
    sql += &format!(" ORDER BY m.user_id LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(Member::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(page.finish(rows, count as u64, |m| m.user.id.clone()))
}

/// The comments left with the reviews of a change request.
pub fn of_reviews(c: &mut dyn Conn, cr_id: &str) -> StoreResult<Shown<Vec<Comment>>> {
    let mut args = Args::default();
    let sql = format!(
        "SELECT {} FROM comments c WHERE c.change_request_id = {} AND c.review_id IS NOT NULL",
        COMMENT_COLUMNS,
        args.arg(cr_id)
    );
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(Comment::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    embed_comments(c, rows, |rows| rows)
}
