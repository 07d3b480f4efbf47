//! Reviews of a change request, the reviewers requested, and its contributors
//! (`quire_store::change_requests::reviews`).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_content::changes::DocumentInput;
use quire_content::{Document, markdown_to_document};
use quire_store::change_requests::SUBJECT_MAX;
use quire_store::change_requests::reviews::{
    self, ReviewRequest, ReviewStatus, ReviewView, ReviewerRow, Reviews,
};
use quire_store::clock;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::space;
use quire_store::spaces::{self, SpaceFor};
use quire_store::users::User;
use quire_store::validate;
use serde::{Deserialize, Serialize};

use crate::api::comments::wire::{BodyFormat, render_comments};
use crate::api::users::UserJson;
use crate::app::App;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{FromQuery, Json, Path, Query, QueryOf};
use crate::paths::{ChangeRequestPath, ChangeRequestUserPath, ReviewPath};
use crate::urls::Urls;

fn user_json(urls: &Urls, users: &HashMap<String, User>, id: &str) -> UserJson {
    crate::api::users::wire::user_or_deleted(urls, users, id)
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

fn render_reviewers(
    urls: &Urls,
    rows: &[ReviewerRow],
    users: &HashMap<String, User>,
) -> Vec<RequestedReviewer> {
    rows.iter()
        .map(|r| RequestedReviewer {
            object: "change-request-requested-reviewer",
            revision: r.revision.clone(),
            requested_by: user_json(urls, users, &r.requested_by),
            created_at: r.created_at,
            kind: "user",
            user: user_json(urls, users, &r.user),
        })
        .collect()
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
    let shown = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            reviews::requested_reviewers(c, &space, &cr_id, &page)
        })
        .await?;
    let list = shown.value;
    Ok(axum::Json(List {
        items: render_reviewers(&app.urls, &list.items, &shown.users),
        next: list.next,
        count: list.count,
    }))
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
        validate::name("subject", s, SUBJECT_MAX)?;
    }
    let description = body
        .description
        .map(|d| quire_store::richtext::validate("description", d))
        .transpose()?;
    let request = ReviewRequest {
        users: body.users,
        subject: body.subject,
        description,
    };
    let shown = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?.authorize::<space::Edit>()?;
            reviews::request_reviewers(c, &space, &caller.user_id, &cr_id, &request)
        })
        .await?;
    Ok(axum::Json(RequestedReviewers {
        users: render_reviewers(&app.urls, &shown.value, &shown.users),
    }))
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
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            reviews::remove_reviewer(c, &space, &caller.user_id, &cr_id, &user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
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
    comment: Option<crate::api::comments::wire::CommentJson>,
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

/// Renders reviews, with the comments left with them in `format` (markdown or document).
fn render_reviews<T>(
    urls: &Urls,
    space: &SpaceFor,
    caller: &str,
    reviews: &[ReviewView],
    shown: &Reviews<T>,
    markdown: bool,
) -> ApiResult<Vec<ReviewJson>> {
    let format = if markdown {
        BodyFormat::Markdown
    } else {
        BodyFormat::Document
    };
    let comments = &shown.comments;
    let rendered = render_comments(urls, space, caller, &comments.value, comments, format)?;
    let mut review_comments: HashMap<String, crate::api::comments::wire::CommentJson> = HashMap::new();
    for (row, json) in comments.value.iter().zip(rendered) {
        if let Some(review) = &row.review {
            review_comments.insert(review.clone(), json);
        }
    }
    let space_id = space.space.id.as_str();
    Ok(reviews
        .iter()
        .map(|v| {
            let r = &v.review;
            ReviewJson {
                object: "change-request-review",
                id: r.id.clone(),
                revision: r.revision.clone(),
                reviewer: user_json(urls, &shown.users, &r.reviewer),
                requested_by: r
                    .requested_by
                    .as_deref()
                    .map(|u| user_json(urls, &shown.users, u)),
                status: r.status,
                outdated: v.outdated,
                comment: review_comments.remove(&r.id),
                created_at: r.created_at,
                updated_at: r.updated_at,
                urls: ReviewUrls {
                    location: urls.api(&format!(
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
    let user = caller.user_id.clone();
    let (space, shown) = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &user)?;
            let shown = reviews::list(c, &space, &cr_id, outdated, &page)?;
            Ok::<_, ApiError>((space, shown))
        })
        .await?;
    let items = render_reviews(
        &app.urls,
        &space,
        &caller.user_id,
        &shown.value.items,
        &shown,
        markdown,
    )?;
    Ok(axum::Json(List {
        next: shown.value.next,
        count: shown.value.count,
        items,
    }))
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
    let user = caller.user_id.clone();
    let (space, shown) = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &user)?;
            let shown = reviews::get(c, &space, &cr_id, &review_id)?;
            Ok::<_, ApiError>((space, shown))
        })
        .await?;
    let json = render_reviews(
        &app.urls,
        &space,
        &caller.user_id,
        std::slice::from_ref(&shown.value),
        &shown,
        markdown,
    )?;
    Ok(axum::Json(
        json.into_iter()
            .next()
            .ok_or_else(|| ApiError::internal("nothing rendered"))?,
    ))
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
    let user = caller.user_id.clone();
    let (space, shown) = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &user)?.authorize::<space::Review>()?;
            let shown = reviews::submit(c, &space, &user, &cr_id, status, comment.as_ref())?;
            Ok::<_, ApiError>((space.into_inner(), shown))
        })
        .await?;
    let json = render_reviews(
        &app.urls,
        &space,
        &caller.user_id,
        std::slice::from_ref(&shown.value),
        &shown,
        true,
    )?
    .into_iter()
    .next()
    .ok_or_else(|| ApiError::internal("review vanished"))?;
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
    let shown = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            reviews::contributors(c, &space, &cr_id, &page)
        })
        .await?;
    let users = shown.users;
    Ok(axum::Json(shown.value.map(|(user, updated_at, count)| {
        Contributor {
            updated_at,
            count,
            user: user_json(&app.urls, &users, &user),
            action_type: "edit",
        }
    })))
}
