//! Reviews of a change request (`quire_store::change_requests::reviews`).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_content::changes::DocumentInput;
use quire_content::{Document, markdown_to_document};
use quire_store::change_requests::reviews::{self, ReviewStatus, ReviewView, Reviews};
use quire_store::clock;
use quire_store::paging::{List, Paging};
use quire_store::permissions::space;
use quire_store::spaces::{self, SpaceFor};
use serde::{Deserialize, Serialize};

use super::user_json;
use crate::api::comments::wire::{BodyFormat, render_comments};
use crate::api::users::UserJson;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{ChangeRequestPath, ReviewPath};
use crate::state::App;
use crate::urls::Urls;

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

/// `format` of the comments in reviews.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The format of comment bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    format: BodyFormat,
}

/// The query of `GET .../change-requests/{changeRequestId}/reviews`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListReviewsQuery {
    /// The format of comment bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    format: BodyFormat,
    /// Only the reviews that are outdated (`true`) or current (`false`); absent: all.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    outdated: Option<bool>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
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
        format,
        outdated,
        paging,
    }): QueryOf<ListReviewsQuery>,
) -> ApiResult<axum::Json<List<ReviewJson>>> {
    let user = caller.user_id.clone();
    let (space, shown) = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &user)?;
            let shown = reviews::list(c, &space, &cr_id, outdated, &paging)?;
            Ok::<_, ApiError>((space, shown))
        })
        .await?;
    let items = render_reviews(
        &app.urls,
        &space,
        &caller.user_id,
        &shown.value.items,
        &shown,
        format == BodyFormat::Markdown,
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
    QueryOf(FormatQuery { format }): QueryOf<FormatQuery>,
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
        format == BodyFormat::Markdown,
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
