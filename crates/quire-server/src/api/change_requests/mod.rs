//! Change requests (`quire_store::change_requests`): create, list (`list`), read, update; merge
//! and update with main (`merge`); reviews (`reviews`), requested reviewers (`reviewers`) and
//! contributors (`contributors`); their changes (`changes`).
//! Writing their content is `api::content::write`.

mod changes;
mod contributors;
mod list;
mod merge;
mod reviewers;
mod reviews;
pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::change_requests::{self, NewChangeRequest, SUBJECT_MAX, Status};
use quire_store::permissions::space;
use quire_store::spaces;
use quire_store::templates::TemplateRequest;
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{OptionalJson, Path};
use crate::paths::{ChangeRequestPath, SpacePath};
use crate::state::App;
pub use wire::{ChangeRequestJson, cr_json};

/// A user named by an answer, or a "Deleted user".
fn user_json(
    urls: &crate::urls::Urls,
    users: &std::collections::HashMap<String, quire_store::users::User>,
    id: &str,
) -> crate::api::users::UserJson {
    crate::api::users::wire::user_or_deleted(urls, users, id)
}

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list::list_space_change_requests, create_change_request))
        .routes(routes!(list::list_org_change_requests))
        .routes(routes!(get_change_request, update_change_request))
        .routes(routes!(merge::merge_change_request))
        .routes(routes!(merge::update_change_request))
        .routes(routes!(changes::list_changes))
        .routes(routes!(contributors::list_contributors))
        .routes(routes!(
            reviewers::list_requested_reviewers,
            reviewers::request_reviewers
        ))
        .routes(routes!(reviewers::remove_requested_reviewer))
        .routes(routes!(reviews::list_reviews, reviews::submit_review))
        .routes(routes!(reviews::get_review))
        .routes(routes!(changes::list_revision_changes))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CreateChangeRequest {
    subject: Option<String>,
    agent_task_id: Option<String>,
    /// quire: start as `open` rather than `draft`.
    status: Option<String>,
    /// The conversations issues cluster the change request addresses (one of the space's
    /// organization); merging the change request resolves it.
    conversations_issues_cluster: Option<String>,
    template: Option<serde_json::Value>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests",
    tag = "Change requests",
    summary = "Create a change request",
    params(SpacePath),
    request_body(content = Option<CreateChangeRequest>, description = "Optional.", content_type = "application/json"),
    responses((status = 201, description = "The new change request.", body = ChangeRequestJson, headers(("Location" = String, description = "The change request's URL.")))),
    security(("token" = ["space:content:write"]))
)]
async fn create_change_request(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    OptionalJson(body): OptionalJson<CreateChangeRequest>,
) -> ApiResult<impl IntoResponse> {
    let body = body.unwrap_or_default();
    let subject = body.subject.unwrap_or_default();
    validate::name("subject", &subject, SUBJECT_MAX)?;
    let status = match body.status.as_deref() {
        None => Status::Draft,
        Some(text) => Status::parse(text).filter(|s| s.is_writable()).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`status` of a new change request is draft or open, not {text:?}"
            ))
        })?,
    };
    let template = body
        .template
        .map(|t| TemplateRequest::parse(t, "template"))
        .transpose()?;
    let new = NewChangeRequest {
        subject,
        status: Some(status),
        agent_task_id: body.agent_task_id,
        conversations_issues_cluster: body.conversations_issues_cluster,
        template,
    };
    let store = app.store.clone();
    let cr = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?.authorize::<space::Edit>()?;
            change_requests::create(c, &store.content, &space, &caller.user_id, &new)
        })
        .await?;
    let json = cr_json(&app.urls, &cr)?;
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateChangeRequest {
    subject: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<serde_json::Value>)]
    description: crate::extract::Patch<serde_json::Value>,
    status: Option<String>,
    /// The conversations issues cluster the change request addresses (null: none); merging
    /// the change request resolves it.
    #[serde(default, rename = "conversationsIssuesCluster")]
    #[schema(value_type = Option<String>)]
    conversations_issues_cluster: crate::extract::Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}",
    tag = "Change requests",
    summary = "Update a change request",
    params(ChangeRequestPath),
    responses(
        (status = 200, description = "The change request as updated.", body = ChangeRequestJson),
        (status = 204, description = "Updated; sent for `Prefer: return=minimal`."),
        (status = 409, description = "The change request is merged and can no longer change.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
async fn update_change_request(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    prefer: crate::extract::PreferMinimal,
    crate::extract::Json(body): crate::extract::Json<UpdateChangeRequest>,
) -> ApiResult<axum::response::Response> {
    if let Some(s) = &body.subject {
        validate::name("subject", s, SUBJECT_MAX)?;
    }
    let new_status = body
        .status
        .as_deref()
        .map(|text| {
            Status::parse(text)
                .filter(|s| *s != Status::Merged)
                .ok_or_else(|| {
                    ApiError::bad_request(format!("`status` must be draft, open or archived, not {text:?}"))
                })
        })
        .transpose()?;
    let description = match body.description {
        crate::extract::Patch::Value(d) => Some(Some(
            quire_store::richtext::validate("description", d)?.to_string(),
        )),
        crate::extract::Patch::Null => Some(None),
        crate::extract::Patch::Absent => None,
    };
    let changes = change_requests::Changes {
        subject: body.subject,
        status: new_status,
        description,
        issues_cluster: match body.conversations_issues_cluster {
            crate::extract::Patch::Value(id) => Some(Some(id)),
            crate::extract::Patch::Null => Some(None),
            crate::extract::Patch::Absent => None,
        },
    };
    let cr = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            change_requests::update(c, &space, &caller.user_id, &cr_id, &changes)
        })
        .await?;
    Ok(prefer.answer(cr_json(&app.urls, &cr)?))
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}",
    tag = "Change requests",
    summary = "Get a change request",
    params(ChangeRequestPath),
    responses((status = 200, description = "The change request.", body = ChangeRequestJson)),
    security(("token" = ["space:content:read"]))
)]
async fn get_change_request(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
) -> ApiResult<axum::Json<ChangeRequestJson>> {
    let cr = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            change_requests::get(c, &space, &cr_id)
        })
        .await?;
    Ok(axum::Json(cr_json(&app.urls, &cr)?))
}
