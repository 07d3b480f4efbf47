//! Reviews of a change request, the reviewers requested, and its contributors.

use std::collections::HashMap;

use quire_content::Document;

use super::model::{self, ChangeRequest};
use crate::comments::{self, Comment, Shown};
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, SpaceAction, space};
use crate::spaces::{self, SpaceFor};
use crate::users::WithUsers;
use crate::{clock, ids, params};

/// A reviewer requested on a change request.
#[derive(Clone, Debug)]
pub struct ReviewerRow {
    pub user: String,
    pub requested_by: String,
    pub revision: String,
    pub created_at: i64,
}

crate::columns! {
    /// A contributor to a change request.
    struct ContributorCols of "change_request_contributors" {
        user: "user_id",
        last_at: "last_at",
        edits: "edits",
    }
}

crate::columns! {
    /// The columns of a [`ReviewerRow`].
    struct ReviewerCols of "change_request_reviewers" {
        user: "user_id",
        requested_by: "requested_by",
        revision: "revision",
        created_at: "created_at",
    }
}

impl ReviewerRow {
    fn from_row(r: &Row) -> Result<ReviewerRow, DbError> {
        const C: ReviewerCols = ReviewerCols::AT;
        Ok(ReviewerRow {
            user: r.col(C.user)?,
            requested_by: r.col(C.requested_by)?,
            revision: r.col(C.revision)?,
            created_at: r.col(C.created_at)?,
        })
    }
}

fn with_users<T>(
    c: &mut dyn Conn,
    value: T,
    rows: impl Fn(&T) -> &[ReviewerRow],
) -> StoreResult<WithUsers<T>> {
    let ids: Vec<String> = rows(&value)
        .iter()
        .flat_map(|r| [r.user.clone(), r.requested_by.clone()])
        .collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    WithUsers::load(c, value, &ids)
}

/// The reviewers requested on a change request, in user id order.
pub fn requested_reviewers(
    c: &mut dyn Conn,
    space: &SpaceFor,
    cr_id: &str,
    paging: &Paging,
) -> StoreResult<WithUsers<List<ReviewerRow>>> {
    let page = Page::new(paging, format!("reviewers:{}:{cr_id}", space.space.id))?;
    let cr = model::load(c, &space.space.id, cr_id)?;
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM change_request_reviewers WHERE change_request_id = ?1",
            params![cr.id.clone()],
        )?
        .unwrap_or(0);
    let mut args = Args::default();
    let mut sql = format!(
        "SELECT {} FROM change_request_reviewers WHERE change_request_id = {}",
        ReviewerCols::SQL,
        args.arg(&cr.id)
    );
    if let Some(after) = page.after::<String>()? {
        sql += &format!(" AND user_id > {}", args.arg(after));
    }
    sql += &format!(" ORDER BY user_id LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(ReviewerRow::from_row)
        .collect::<Result<Vec<_>, DbError>>()?;
    let list = page.finish(rows, count as u64, |r| r.user.clone());
    with_users(c, list, |l| &l.items)
}

/// A request for reviews: the reviewers, and a subject and description (checked already) to
/// set on the change request.
#[derive(Clone, Debug)]
pub struct ReviewRequest {
    pub users: Vec<String>,
    pub subject: Option<String>,
    pub description: Option<serde_json::Value>,
}

/// Requests reviews of a writable change request's current revision from users who can see
/// the space.
pub fn request_reviewers(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Edit>,
    caller: &str,
    cr_id: &str,
    request: &ReviewRequest,
) -> StoreResult<WithUsers<Vec<ReviewerRow>>> {
    let space_id = &space.space.id;
    let cr = model::load(c, space_id, cr_id)?;
    if !cr.is_writable() {
        return Err(StoreError::conflict(format!(
            "change request #{} is {}",
            cr.number, cr.status
        )));
    }
    let now = clock::now_ms();
    let mut rows = Vec::new();
    for user in &request.users {
        // A reviewer must be able to see the space.
        let visible = spaces::load_for(c, space_id, user)?.is_some_and(|s| s.allows(SpaceAction::View));
        if !visible {
            return Err(StoreError::invalid(format!(
                "user {user:?} cannot see this space, so cannot review it"
            )));
        }
        c.execute(
            "INSERT INTO change_request_reviewers (change_request_id, user_id, requested_by, revision, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (change_request_id, user_id)
             DO UPDATE SET requested_by = excluded.requested_by, revision = excluded.revision, created_at = excluded.created_at",
            params![cr.id.clone(), user.clone(), caller, cr.revision.clone(), now],
        )?;
        rows.push(ReviewerRow {
            user: user.clone(),
            requested_by: caller.to_string(),
            revision: cr.revision.clone(),
            created_at: now,
        });
    }
    if let Some(s) = &request.subject {
        c.execute(
            "UPDATE change_requests SET subject = ?2 WHERE id = ?1",
            params![cr.id.clone(), s.clone()],
        )?;
    }
    if let Some(d) = &request.description {
        c.execute(
            "UPDATE change_requests SET description = ?2 WHERE id = ?1",
            params![cr.id.clone(), d.to_string()],
        )?;
    }
    c.execute(
        "UPDATE change_requests SET updated_at = ?2 WHERE id = ?1",
        params![cr.id.clone(), now],
    )?;
    with_users(c, rows, |rows| rows)
}

/// Withdraws a review request: reviewers may decline; removing someone else takes the right to
/// edit.
pub fn remove_reviewer(
    c: &mut dyn Conn,
    space: &SpaceFor,
    caller: &str,
    cr_id: &str,
    user_id: &str,
) -> StoreResult<()> {
    let cr = model::load(c, &space.space.id, cr_id)?;
    if user_id != caller {
        space.require(SpaceAction::Edit)?;
    }
    c.execute(
        "DELETE FROM change_request_reviewers WHERE change_request_id = ?1 AND user_id = ?2",
        params![cr.id, user_id],
    )?;
    Ok(())
}

/// A review as stored.
#[derive(Clone, Debug)]
pub struct Review {
    pub id: String,
    pub cr_id: String,
    pub reviewer: String,
    pub requested_by: Option<String>,
    pub status: ReviewStatus,
    pub revision: String,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::wire_enum! {
    /// What a review says of the revision it reviewed.
    pub enum ReviewStatus {
        Approved = "approved",
        ChangesRequested = "changes-requested",
    }
}

crate::columns! {
    /// The columns of a review, as [`Review::from_row`] reads them and as they are inserted.
    struct ReviewCols of "change_request_reviews" {
        id: "id",
        cr_id: "change_request_id",
        reviewer: "reviewer",
        requested_by: "requested_by",
        status: "status",
        revision: "revision",
        created_at: "created_at",
        updated_at: "updated_at",
    }
}

const REVIEW_COLUMNS: &str = ReviewCols::SQL;
const REVIEW: ReviewCols = ReviewCols::AT;

impl Review {
    fn from_row(r: &Row) -> Result<Review, DbError> {
        Ok(Review {
            id: r.col(REVIEW.id)?,
            cr_id: r.col(REVIEW.cr_id)?,
            reviewer: r.col(REVIEW.reviewer)?,
            requested_by: r.col(REVIEW.requested_by)?,
            status: r.col(REVIEW.status)?,
            revision: r.col(REVIEW.revision)?,
            created_at: r.col(REVIEW.created_at)?,
            updated_at: r.col(REVIEW.updated_at)?,
        })
    }
}

/// Every review of a change request, oldest first (small: read whole, then paged in memory).
fn all_reviews(c: &mut dyn Conn, cr_id: &str) -> StoreResult<Vec<Review>> {
    c.query(
        &format!("SELECT {REVIEW_COLUMNS} FROM change_request_reviews WHERE change_request_id = ?1 ORDER BY created_at, id"),
        params![cr_id],
    )?
    .iter()
    .map(|r| Review::from_row(r).map_err(StoreError::from))
    .collect()
}

/// A review with whether it is outdated: a reviewer's older reviews are outdated by their newer
/// one, and any review once the change request has a newer revision.
#[derive(Clone, Debug)]
pub struct ReviewView {
    pub review: Review,
    pub outdated: bool,
}

/// Reviews with what their answer embeds: the users they name, and the comments left with them
/// (`comment_of` maps a review to its comment's place in `comments`).
#[derive(Debug)]
pub struct Reviews<T> {
    pub value: T,
    pub users: HashMap<String, crate::users::User>,
    pub comments: Shown<Vec<Comment>>,
}

impl<T> Reviews<T> {
    /// The comment left with review `id`, if any.
    pub fn comment_of(&self, id: &str) -> Option<&Comment> {
        self.comments
            .value
            .iter()
            .find(|c| c.review.as_deref() == Some(id))
    }
}

/// Every review of a change request, with whether each is outdated, and what they embed.
fn viewed(c: &mut dyn Conn, cr: &ChangeRequest) -> StoreResult<Reviews<Vec<ReviewView>>> {
    let reviews = all_reviews(c, &cr.id)?;
    let comments = if reviews.is_empty() {
        comments::embed_comments(c, Vec::new(), |rows| rows)?
    } else {
        comments::of_reviews(c, &cr.id)?
    };
    let ids: Vec<&str> = reviews
        .iter()
        .flat_map(|r| std::iter::once(r.reviewer.as_str()).chain(r.requested_by.as_deref()))
        .collect();
    let users = crate::users::load_many(c, &ids)?;
    let mut latest: HashMap<&str, (i64, &str)> = HashMap::new();
    for r in &reviews {
        let entry = latest
            .entry(r.reviewer.as_str())
            .or_insert((r.created_at, r.id.as_str()));
        if (r.created_at, r.id.as_str()) > *entry {
            *entry = (r.created_at, r.id.as_str());
        }
    }
    let value = reviews
        .iter()
        .map(|r| {
            let superseded = latest.get(r.reviewer.as_str()).is_some_and(|(_, id)| *id != r.id);
            ReviewView {
                review: r.clone(),
                outdated: superseded || r.revision != cr.revision,
            }
        })
        .collect();
    Ok(Reviews {
        value,
        users,
        comments,
    })
}

/// The reviews of a change request, oldest first, only the outdated or current ones when asked.
pub fn list(
    c: &mut dyn Conn,
    space: &SpaceFor,
    cr_id: &str,
    outdated: Option<bool>,
    paging: &Paging,
) -> StoreResult<Reviews<List<ReviewView>>> {
    let page = Page::new(paging, format!("reviews:{}:{cr_id}:{outdated:?}", space.space.id))?;
    let cr = model::load(c, &space.space.id, cr_id)?;
    let all = viewed(c, &cr)?;
    let mut items: Vec<ReviewView> = all
        .value
        .into_iter()
        .filter(|r| outdated.is_none_or(|o| r.outdated == o))
        .collect();
    let count = items.len() as u64;
    if let Some((at, id)) = page.after::<(i64, String)>()? {
        items.retain(|r| (r.review.created_at, r.review.id.as_str()) > (at, id.as_str()));
    }
    items.truncate(page.limit + 1);
    let list = page.finish(items, count, |r| (r.review.created_at, r.review.id.clone()));
    Ok(Reviews {
        value: list,
        users: all.users,
        comments: all.comments,
    })
}

/// One review of a change request.
pub fn get(
    c: &mut dyn Conn,
    space: &SpaceFor,
    cr_id: &str,
    review_id: &str,
) -> StoreResult<Reviews<ReviewView>> {
    let cr = model::load(c, &space.space.id, cr_id)?;
    one(c, &cr, review_id, || {
        StoreError::not_found(format!("review {review_id:?} not found"))
    })
}

fn one(
    c: &mut dyn Conn,
    cr: &ChangeRequest,
    review_id: &str,
    missing: impl FnOnce() -> StoreError,
) -> StoreResult<Reviews<ReviewView>> {
    let all = viewed(c, cr)?;
    let found = all
        .value
        .into_iter()
        .find(|r| r.review.id == review_id)
        .ok_or_else(missing)?;
    Ok(Reviews {
        value: found,
        users: all.users,
        comments: all.comments,
    })
}

/// Reviews a writable change request's current revision, with a comment when given.
pub fn submit(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Review>,
    caller: &str,
    cr_id: &str,
    status: ReviewStatus,
    comment: Option<&Document>,
) -> StoreResult<Reviews<ReviewView>> {
    let space_id = &space.space.id;
    let cr = model::load(c, space_id, cr_id)?;
    if !cr.is_writable() {
        return Err(StoreError::conflict(format!(
            "change request #{} is {}: it can no longer be reviewed",
            cr.number, cr.status
        )));
    }
    let requested_by: Option<String> = c.query_scalar(
        "SELECT requested_by FROM change_request_reviewers WHERE change_request_id = ?1 AND user_id = ?2",
        params![cr.id.clone(), caller],
    )?;
    let id = ids::new_id();
    // Reviews of one change request are ordered by time: a review never gets the same
    // millisecond as an earlier one, so "the latest review" is always well defined.
    let last: Option<i64> = c
        .query_scalar::<Option<i64>>(
            "SELECT max(created_at) FROM change_request_reviews WHERE change_request_id = ?1",
            params![cr.id.clone()],
        )?
        .flatten();
    let now = clock::now_ms().max(last.map_or(0, |t| t + 1));
    c.execute(
        &format!(
            "INSERT INTO change_request_reviews ({REVIEW_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"
        ),
        params![
            id.clone(),
            cr.id.clone(),
            caller,
            requested_by,
            status,
            cr.revision.clone(),
            now
        ],
    )?;
    if let Some(document) = comment {
        let comment_id = ids::new_id();
        c.execute(
            "INSERT INTO comments (id, space_id, change_request_id, review_id, revision_id, posted_by, posted_at, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                comment_id.clone(),
                space_id.clone(),
                cr.id.clone(),
                id.clone(),
                cr.revision.clone(),
                caller,
                now,
                serde_json::to_string(document).unwrap_or_default()
            ],
        )?;
        let payload = events::CommentPosted {
            space_id,
            change_request_id: Some(&cr.id),
            comment_id: &comment_id,
            on: events::CommentOn::Review { review_id: &id },
            revision_id: &cr.revision,
        };
        let org = &space.space.org_id;
        let event = Event::in_space(org, space_id, &comment_id, Some(caller), payload);
        events::record(c, event)?;
    }
    c.execute(
        "UPDATE change_requests SET updated_at = ?2 WHERE id = ?1",
        params![cr.id.clone(), now],
    )?;
    one(c, &cr, &id, || StoreError::internal("review vanished"))
}

/// Who contributed content to a change request: (user, last contribution, edits), in user id
/// order.
pub fn contributors(
    c: &mut dyn Conn,
    space: &SpaceFor,
    cr_id: &str,
    paging: &Paging,
) -> StoreResult<WithUsers<List<(String, i64, i64)>>> {
    let page = Page::new(paging, format!("contributors:{}:{cr_id}", space.space.id))?;
    let cr = model::load(c, &space.space.id, cr_id)?;
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM change_request_contributors WHERE change_request_id = ?1",
            params![cr.id.clone()],
        )?
        .unwrap_or(0);
    let mut args = Args::default();
    let mut sql = format!(
        "SELECT {} FROM change_request_contributors WHERE change_request_id = {}",
        ContributorCols::SQL,
        args.arg(&cr.id)
    );
    if let Some(after) = page.after::<String>()? {
        sql += &format!(" AND user_id > {}", args.arg(after));
    }
    sql += &format!(" ORDER BY user_id LIMIT {}", args.arg(page.fetch()));
    let rows: Vec<(String, i64, i64)> = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            const C: ContributorCols = ContributorCols::AT;
            Ok((r.col(C.user)?, r.col(C.last_at)?, r.col(C.edits)?))
        })
        .collect::<Result<_, DbError>>()?;
    let ids: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let users = crate::users::load_many(c, &ids)?;
    let list = page.finish(rows, count as u64, |r| r.0.clone());
    Ok(WithUsers { value: list, users })
}

/// Latest review status of each reviewer on the change request's current revision.
pub fn current_approvals(c: &mut dyn Conn, cr: &ChangeRequest) -> StoreResult<HashMap<String, ReviewStatus>> {
    let mut out = HashMap::new();
    for r in all_reviews(c, &cr.id)? {
        if r.revision == cr.revision {
            out.insert(r.reviewer, r.status);
        } else {
            out.remove(&r.reviewer);
        }
    }
    Ok(out)
}
