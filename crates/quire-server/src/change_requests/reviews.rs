//! Reviews of a change request, the reviewers requested, and its contributors.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_content::changes::DocumentInput;
use quire_content::{Document, markdown_to_document};
use serde::{Deserialize, Serialize};

use super::model::{self, ChangeRequest};
use crate::api::users::UserJson;
use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn, Row};
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{FromQuery, Json, Path, Query, QueryOf};
use crate::paths::{ChangeRequestPath, ChangeRequestUserPath, ReviewPath};
use crate::{clock, ids, params};
use quire_store::events::{self, Event, Kind};
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::SpaceAction;
use quire_store::spaces::{self, SpaceFor};
use quire_store::users::{self, User};
use quire_store::validate;

fn user_json(app: &App, users: &HashMap<String, User>, id: &str) -> UserJson {
    crate::api::users::wire::user_or_deleted(&app.urls, users, id)
}

/// Opens a change request of a space the caller can view.
fn open(
    c: &mut dyn Conn,
    space_id: &str,
    cr_id: &str,
    user_id: &str,
) -> ApiResult<(SpaceFor, ChangeRequest)> {
    let space = spaces::load_active(c, space_id, user_id)?;
    let cr = model::load(c, space_id, cr_id)?;
    Ok((space, cr))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestedReviewer {
    object: &'static str,
    revision: String,
    requested_by: UserJson,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    created_at: i64,
    kind: &'static str,
    user: UserJson,
}

struct ReviewerRow {
    user: String,
    requested_by: String,
    revision: String,
    created_at: i64,
}

quire_store::columns! {
    /// A contributor to a change request.
    struct ContributorCols of "change_request_contributors" {
        user: "user_id",
        last_at: "last_at",
        edits: "edits",
    }
}

quire_store::columns! {
    /// The columns of a [`ReviewerRow`].
    struct ReviewerCols of "change_request_reviewers" {
        user: "user_id",
        requested_by: "requested_by",
        revision: "revision",
        created_at: "created_at",
    }
}

impl ReviewerRow {
    fn from_row(r: &Row) -> Result<ReviewerRow, crate::db::DbError> {
        const C: ReviewerCols = ReviewerCols::AT;
        Ok(ReviewerRow {
            user: r.col(C.user)?,
            requested_by: r.col(C.requested_by)?,
            revision: r.col(C.revision)?,
            created_at: r.col(C.created_at)?,
        })
    }
}

fn render_reviewers(c: &mut dyn Conn, app: &App, rows: &[ReviewerRow]) -> ApiResult<Vec<RequestedReviewer>> {
    let ids: Vec<&str> = rows
        .iter()
        .flat_map(|r| [r.user.as_str(), r.requested_by.as_str()])
        .collect();
    let users = users::load_many(c, &ids)?;
    Ok(rows
        .iter()
        .map(|r| RequestedReviewer {
            object: "change-request-requested-reviewer",
            revision: r.revision.clone(),
            requested_by: user_json(app, &users, &r.requested_by),
            created_at: r.created_at,
            kind: "user",
            user: user_json(app, &users, &r.user),
        })
        .collect())
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers",
    tag = "Change requests",
    summary = "List the reviewers requested on a change request",
    params(ChangeRequestPath, Paging),
    responses((status = 200, description = "The requested reviewers.", body = List<RequestedReviewer>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_requested_reviewers(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<RequestedReviewer>>> {
    let page = Page::new(&paging, format!("reviewers:{space_id}:{cr_id}"))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let (_, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
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
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            let list = page.finish(rows, count as u64, |r| r.user.clone());
            let items = render_reviewers(c, &app2, &list.items)?;
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
pub struct RequestReviewers {
    users: Vec<String>,
    subject: Option<String>,
    description: Option<serde_json::Value>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct RequestedReviewers {
    users: Vec<RequestedReviewer>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers",
    tag = "Change requests",
    summary = "Request reviewers on a change request",
    params(ChangeRequestPath),
    request_body = RequestReviewers,
    responses(
        (status = 200, description = "The reviewers requested.", body = RequestedReviewers),
        (status = 409, description = "The change request is merged or archived.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn request_reviewers(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    Json(body): Json<RequestReviewers>,
) -> ApiResult<axum::Json<RequestedReviewers>> {
    if body.users.is_empty() {
        return Err(ApiError::bad_request("`users` must name at least one user"));
    }
    if let Some(s) = &body.subject {
        validate::name("subject", s, super::SUBJECT_MAX)?;
    }
    let description = body
        .description
        .map(|d| quire_store::richtext::validate("description", d))
        .transpose()?;
    let app2 = app.clone();
    let users = app
        .db
        .write(move |c| {
            let (space, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
            space.require(SpaceAction::Edit)?;
            if !cr.is_writable() {
                return Err(ApiError::conflict(format!("change request #{} is {}", cr.number, cr.status)));
            }
            let now = clock::now_ms();
            let mut rows = Vec::new();
            for user in &body.users {
                // A reviewer must be able to see the space.
                let visible = spaces::load_for(c, &space_id, user)?.is_some_and(|s| s.allows(SpaceAction::View));
                if !visible {
                    return Err(ApiError::bad_request(format!("user {user:?} cannot see this space, so cannot review it")));
                }
                c.execute(
                    "INSERT INTO change_request_reviewers (change_request_id, user_id, requested_by, revision, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (change_request_id, user_id)
                     DO UPDATE SET requested_by = excluded.requested_by, revision = excluded.revision, created_at = excluded.created_at",
                    params![cr.id.clone(), user.clone(), caller.user_id.clone(), cr.revision.clone(), now],
                )?;
                rows.push(ReviewerRow { user: user.clone(), requested_by: caller.user_id.clone(), revision: cr.revision.clone(), created_at: now });
            }
            if let Some(s) = &body.subject {
                c.execute("UPDATE change_requests SET subject = ?2 WHERE id = ?1", params![cr.id.clone(), s.clone()])?;
            }
            if let Some(d) = &description {
                c.execute("UPDATE change_requests SET description = ?2 WHERE id = ?1", params![cr.id.clone(), d.to_string()])?;
            }
            c.execute("UPDATE change_requests SET updated_at = ?2 WHERE id = ?1", params![cr.id.clone(), now])?;
            render_reviewers(c, &app2, &rows)
        })
        .await?;
    Ok(axum::Json(RequestedReviewers { users }))
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers/{userId}",
    tag = "Change requests",
    summary = "Withdraw a review request",
    params(ChangeRequestUserPath),
    responses((status = 204, description = "The user is no longer a requested reviewer.")),
    security(("token" = ["space:content:write"]))
)]
pub async fn remove_requested_reviewer(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestUserPath {
        space_id,
        change_request_id: cr_id,
        user_id,
    }): Path<ChangeRequestUserPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let (space, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
            // Reviewers may decline; removing someone else takes the right to edit.
            if user_id != caller.user_id {
                space.require(SpaceAction::Edit)?;
            }
            c.execute(
                "DELETE FROM change_request_reviewers WHERE change_request_id = ?1 AND user_id = ?2",
                params![cr.id, user_id.clone()],
            )?;
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A review as stored.
struct Review {
    id: String,
    cr_id: String,
    reviewer: String,
    requested_by: Option<String>,
    status: ReviewStatus,
    revision: String,
    created_at: i64,
    updated_at: i64,
}

quire_store::wire_enum! {
    /// What a review says of the revision it reviewed.
    pub enum ReviewStatus {
        Approved = "approved",
        ChangesRequested = "changes-requested",
    }
}

quire_store::columns! {
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
    fn from_row(r: &Row) -> Result<Review, crate::db::DbError> {
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

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewJson {
    object: &'static str,
    id: String,
    revision: String,
    reviewer: UserJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    requested_by: Option<UserJson>,
    status: ReviewStatus,
    outdated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    comment: Option<crate::comments::model::CommentJson>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    updated_at: i64,
    urls: ReviewUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ReviewUrls)]
struct ReviewUrls {
    location: String,
}

fn render_reviews(
    c: &mut dyn Conn,
    app: &App,
    space: &SpaceFor,
    caller: &str,
    cr: &ChangeRequest,
    reviews: &[Review],
    markdown: bool,
) -> ApiResult<Vec<ReviewJson>> {
    use crate::comments::model::{self as comments, BodyFormat};
    let space_id = space.space.id.as_str();
    // The comment left with a review is a comment of the change request targeting the review.
    let mut review_comments: HashMap<String, comments::CommentJson> = HashMap::new();
    if !reviews.is_empty() {
        let mut args = Args::default();
        let sql = format!(
            "SELECT {} FROM comments c WHERE c.change_request_id = {} AND c.review_id IS NOT NULL",
            comments::COMMENT_COLUMNS,
            args.arg(&cr.id)
        );
        let rows = c
            .query(&sql, args.values())?
            .iter()
            .map(comments::Comment::from_row)
            .collect::<Result<Vec<_>, _>>()?;
        let format = if markdown {
            BodyFormat::Markdown
        } else {
            BodyFormat::Document
        };
        let rendered = comments::render_comments(c, app, space, caller, &rows, format)?;
        for (row, json) in rows.iter().zip(rendered) {
            if let Some(review) = &row.review {
                review_comments.insert(review.clone(), json);
            }
        }
    }
    let ids: Vec<&str> = reviews
        .iter()
        .flat_map(|r| std::iter::once(r.reviewer.as_str()).chain(r.requested_by.as_deref()))
        .collect();
    let users = users::load_many(c, &ids)?;
    // A reviewer's older reviews are outdated by their newer one; any review is outdated once
    // the change request has a newer revision.
    let mut latest: HashMap<&str, (i64, &str)> = HashMap::new();
    for r in reviews {
        let entry = latest
            .entry(r.reviewer.as_str())
            .or_insert((r.created_at, r.id.as_str()));
        if (r.created_at, r.id.as_str()) > *entry {
            *entry = (r.created_at, r.id.as_str());
        }
    }
    let mut review_comments = review_comments;
    Ok(reviews
        .iter()
        .map(|r| {
            let comment = review_comments.remove(&r.id);
            let superseded = latest.get(r.reviewer.as_str()).is_some_and(|(_, id)| *id != r.id);
            ReviewJson {
                object: "change-request-review",
                id: r.id.clone(),
                revision: r.revision.clone(),
                reviewer: user_json(app, &users, &r.reviewer),
                requested_by: r.requested_by.as_deref().map(|u| user_json(app, &users, u)),
                status: r.status,
                outdated: superseded || r.revision != cr.revision,
                comment,
                created_at: r.created_at,
                updated_at: r.updated_at,
                urls: ReviewUrls {
                    location: app.urls.api(&format!(
                        "/spaces/{space_id}/change-requests/{}/reviews/{}",
                        r.cr_id, r.id
                    )),
                },
            }
        })
        .collect())
}

fn markdown_format(q: &Query) -> ApiResult<bool> {
    Ok(q.one_of("format", &["markdown", "document"], "markdown")? == "markdown")
}

/// `format` of the comments in reviews.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The format of comment bodies: `markdown` (the default) or `document`.
    #[param(rename = "format", value_type = Option<String>)]
    markdown: bool,
}

impl FromQuery for FormatQuery {
    fn from_query(query: &Query) -> ApiResult<FormatQuery> {
        Ok(FormatQuery {
            markdown: markdown_format(query)?,
        })
    }
}

/// The query of `GET .../change-requests/{changeRequestId}/reviews`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListReviewsQuery {
    /// The format of comment bodies: `markdown` (the default) or `document`.
    #[param(rename = "format", value_type = Option<String>)]
    markdown: bool,
    /// Only the reviews that are outdated (`true`) or current (`false`); absent: all.
    #[param(value_type = Option<bool>)]
    outdated: Option<bool>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListReviewsQuery {
    fn from_query(q: &Query) -> ApiResult<ListReviewsQuery> {
        let markdown = markdown_format(q)?;
        let outdated = match q.str("outdated") {
            None | Some("") => None,
            Some(_) => Some(q.bool("outdated", false)?),
        };
        Ok(ListReviewsQuery {
            markdown,
            outdated,
            paging: Paging::from_query(q)?,
        })
    }
}

/// Every review of a change request, oldest first (small: read whole, then paged in memory).
fn all_reviews(c: &mut dyn Conn, cr_id: &str) -> ApiResult<Vec<Review>> {
    c.query(
        &format!("SELECT {REVIEW_COLUMNS} FROM change_request_reviews WHERE change_request_id = ?1 ORDER BY created_at, id"),
        params![cr_id],
    )?
    .iter()
    .map(|r| Review::from_row(r).map_err(ApiError::from))
    .collect()
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews",
    tag = "Change requests",
    summary = "List the reviews of a change request",
    params(ChangeRequestPath, ListReviewsQuery, Paging),
    responses((status = 200, description = "The reviews, oldest first.", body = List<ReviewJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_reviews(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(ListReviewsQuery {
        markdown,
        outdated,
        paging,
    }): QueryOf<ListReviewsQuery>,
) -> ApiResult<axum::Json<List<ReviewJson>>> {
    let page = Page::new(&paging, format!("reviews:{space_id}:{cr_id}:{outdated:?}"))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let (space, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
            let reviews = all_reviews(c, &cr.id)?;
            let rendered = render_reviews(c, &app2, &space, &caller.user_id, &cr, &reviews, markdown)?;
            let mut items: Vec<(i64, ReviewJson)> = reviews
                .iter()
                .zip(rendered)
                .filter(|(_, j)| outdated.is_none_or(|o| j.outdated == o))
                .map(|(r, j)| (r.created_at, j))
                .collect();
            let count = items.len() as u64;
            if let Some((at, id)) = page.after::<(i64, String)>()? {
                items.retain(|(t, j)| (*t, j.id.as_str()) > (at, id.as_str()));
            }
            items.truncate(page.limit + 1);
            let list = page.finish(items, count, |(t, j)| (*t, j.id.clone()));
            Ok::<_, ApiError>(list.map(|(_, j)| j))
        })
        .await?;
    Ok(axum::Json(list))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews/{reviewId}",
    tag = "Change requests",
    summary = "Get a review of a change request",
    params(ReviewPath, FormatQuery),
    responses((status = 200, description = "The review.", body = ReviewJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn get_review(
    caller: Caller,
    State(app): State<App>,
    Path(ReviewPath {
        space_id,
        change_request_id: cr_id,
        review_id,
    }): Path<ReviewPath>,
    QueryOf(FormatQuery { markdown }): QueryOf<FormatQuery>,
) -> ApiResult<axum::Json<ReviewJson>> {
    let app2 = app.clone();
    let json = app
        .db
        .read(move |c| {
            let (space, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
            let reviews = all_reviews(c, &cr.id)?;
            let rendered = render_reviews(c, &app2, &space, &caller.user_id, &cr, &reviews, markdown)?;
            rendered
                .into_iter()
                .find(|r| r.id == review_id)
                .ok_or_else(|| ApiError::not_found(format!("review {review_id:?} not found")))
        })
        .await?;
    Ok(axum::Json(json))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitReview {
    status: String,
    #[schema(value_type = Option<crate::openapi::DocumentInputSchema>)]
    comment: Option<DocumentInput>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews",
    tag = "Change requests",
    summary = "Review a change request",
    params(ChangeRequestPath),
    request_body = SubmitReview,
    responses(
        (status = 201, description = "The review.", body = ReviewJson),
        (status = 409, description = "The change request is merged or archived: it can no longer be reviewed.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn submit_review(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    Json(body): Json<SubmitReview>,
) -> ApiResult<impl IntoResponse> {
    let status = ReviewStatus::parse(&body.status).ok_or_else(|| {
        ApiError::bad_request(format!(
            "`status` must be approved or changes-requested, not {:?}",
            body.status
        ))
    })?;
    let comment = match body.comment {
        None | Some(DocumentInput::Empty) => None,
        Some(DocumentInput::Markdown(md)) => {
            Some(markdown_to_document(&md).map_err(|e| ApiError::over_limit("comment.markdown", &e))?)
        }
        Some(DocumentInput::Json(v)) => Some(
            Document::from_json(v).map_err(|e| ApiError::bad_request(format!("invalid `comment`: {e}")))?,
        ),
    };
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let (space, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
            space.require(SpaceAction::Review)?;
            if !cr.is_writable() {
                return Err(ApiError::conflict(format!("change request #{} is {}: it can no longer be reviewed", cr.number, cr.status)));
            }
            let requested_by: Option<String> = c.query_scalar(
                "SELECT requested_by FROM change_request_reviewers WHERE change_request_id = ?1 AND user_id = ?2",
                params![cr.id.clone(), caller.user_id.clone()],
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
                &format!("INSERT INTO change_request_reviews ({REVIEW_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)"),
                params![id.clone(), cr.id.clone(), caller.user_id.clone(), requested_by, status, cr.revision.clone(), now],
            )?;
            if let Some(document) = &comment {
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
                        caller.user_id.clone(),
                        now,
                        serde_json::to_string(document).unwrap_or_default()
                    ],
                )?;
                let payload = serde_json::json!({"spaceId": space_id, "changeRequestId": cr.id,
                    "commentId": comment_id, "reviewId": id, "revisionId": cr.revision});
                let (org, actor) = (&space.space.org_id, Some(caller.user_id.as_str()));
                let event = Event::in_space(Kind::CommentPosted, org, &space_id, &comment_id, actor, payload);
                events::record(c, event)?;
            }
            c.execute("UPDATE change_requests SET updated_at = ?2 WHERE id = ?1", params![cr.id.clone(), now])?;
            let reviews = all_reviews(c, &cr.id)?;
            let rendered = render_reviews(c, &app2, &space, &caller.user_id, &cr, &reviews, true)?;
            rendered.into_iter().find(|r| r.id == id).ok_or_else(|| ApiError::internal("review vanished"))
        })
        .await?;
    let location = json.urls.location.clone();
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json),
    ))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contributor {
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    updated_at: i64,
    count: i64,
    user: UserJson,
    action_type: &'static str,
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/contributors",
    tag = "Change requests",
    summary = "List the contributors of a change request",
    params(ChangeRequestPath, Paging),
    responses((status = 200, description = "The contributors.", body = List<Contributor>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_contributors(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Contributor>>> {
    let page = Page::new(&paging, format!("contributors:{space_id}:{cr_id}"))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let (_, cr) = open(c, &space_id, &cr_id, &caller.user_id)?;
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
                .collect::<Result<_, crate::db::DbError>>()?;
            let ids: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
            let users = users::load_many(c, &ids)?;
            let list = page.finish(rows, count as u64, |r| r.0.clone());
            Ok::<_, ApiError>(list.map(|(user, updated_at, count)| Contributor {
                updated_at,
                count,
                user: user_json(&app2, &users, &user),
                action_type: "edit",
            }))
        })
        .await?;
    Ok(axum::Json(list))
}

/// Latest review status of each reviewer on the change request's current revision.
pub fn current_approvals(c: &mut dyn Conn, cr: &ChangeRequest) -> ApiResult<HashMap<String, ReviewStatus>> {
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
