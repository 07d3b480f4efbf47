//! The reviewers requested on a change request (`quire_store::change_requests::reviews`).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::change_requests::SUBJECT_MAX;
use quire_store::change_requests::reviews::{self, ReviewRequest, ReviewerRow};
use quire_store::clock;
use quire_store::paging::{List, Paging};
use quire_store::permissions::space;
use quire_store::spaces;
use quire_store::users::User;
use quire_store::validate;
use serde::{Deserialize, Serialize};

use super::user_json;
use crate::api::users::UserJson;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{ChangeRequestPath, ChangeRequestUserPath};
use crate::state::App;
use crate::urls::Urls;

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
    let shown = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            reviews::requested_reviewers(c, &space, &cr_id, &paging)
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
