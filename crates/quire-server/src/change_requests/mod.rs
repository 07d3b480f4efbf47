//! Change requests: branches of a space's content that merge back.

mod changes;
pub mod contributors;
mod list;
mod merge;
pub mod model;
mod reviews;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;
use serde_json::json;

use crate::app::App;
use crate::auth::Caller;
use crate::db::Conn;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{OptionalJson, Path};
use crate::paths::{ChangeRequestPath, SpacePath};
use crate::{clock, ids, params};
pub use model::{ChangeRequest, ChangeRequestJson, Status};
use quire_store::events::{self, Event, Kind};
use quire_store::permissions::SpaceAction;
use quire_store::spaces;
use quire_store::users;
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list::list_space_change_requests, create_change_request))
        .routes(routes!(list::list_org_change_requests))
        .routes(routes!(get_change_request, update_change_request))
        .routes(routes!(merge::merge_change_request))
        .routes(routes!(merge::update_change_request))
        .routes(routes!(changes::list_changes))
        .routes(routes!(reviews::list_contributors))
        .routes(routes!(
            reviews::list_requested_reviewers,
            reviews::request_reviewers
        ))
        .routes(routes!(reviews::remove_requested_reviewer))
        .routes(routes!(reviews::list_reviews, reviews::submit_review))
        .routes(routes!(reviews::get_review))
        .routes(routes!(changes::list_revision_changes))
}

pub const SUBJECT_MAX: usize = 100;

/// Renders change requests with their users loaded in one query.
pub fn render(c: &mut dyn Conn, app: &App, crs: &[ChangeRequest]) -> ApiResult<Vec<ChangeRequestJson>> {
    let ids: Vec<&str> = crs
        .iter()
        .flat_map(|cr| std::iter::once(cr.created_by.as_str()).chain(cr.merged_by.as_deref()))
        .collect();
    let users = users::load_many(c, &ids)?;
    Ok(crs
        .iter()
        .map(|cr| cr.to_json(&app.urls, &users))
        .collect::<Result<_, _>>()?)
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CreateChangeRequest {
    subject: Option<String>,
    agent_task_id: Option<String>,
    /// quire: start as `open` rather than `draft`.
    status: Option<String>,
    /// The conversations issues cluster the change request addresses.
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
        .map(|t| crate::content::template::TemplateRequest::parse(t, "template"))
        .transpose()?;
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            space.require(SpaceAction::Edit)?;
            let base = space
                .space
                .revision
                .clone()
                .ok_or_else(|| ApiError::internal("the space has no content revision"))?;
            let number: i64 = c
                .query_scalar(
                    "UPDATE spaces SET change_request_seq = change_request_seq + 1 WHERE id = ?1 RETURNING change_request_seq",
                    params![space_id.clone()],
                )?
                .ok_or_else(|| spaces::not_found(&space_id))?;
            let id = ids::new_id();
            let now = clock::now_ms();
            c.execute(
                "INSERT INTO change_requests (id, space_id, number, status, subject, created_by, created_at, updated_at,
                                              revision_initial, revision, agent_task_id, conversations_issues_cluster)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?8, ?9, ?10)",
                params![
                    id.clone(),
                    space_id.clone(),
                    number,
                    status,
                    subject.clone(),
                    caller.user_id.clone(),
                    now,
                    base,
                    body.agent_task_id.clone(),
                    body.conversations_issues_cluster.clone()
                ],
            )?;
            if let Some(template) = &template {
                let cr = model::load(c, &space_id, &id)?;
                crate::content::template::apply_to_change_request(c, &app2, &space, &cr, template, &caller.user_id)?;
            }
            let payload = json!({"spaceId": space_id, "changeRequestId": id, "number": number, "status": status,
                                 "revisionInitial": space.space.revision});
            let org = &space.space.org_id;
            let event = Event::in_space(Kind::ChangeRequestCreated, org, &space_id, &id, Some(&caller.user_id), payload);
            events::record(c, event)?;
            let cr = model::load(c, &space_id, &id)?;
            render_one(c, &app2, &cr)
        })
        .await?;
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
    headers: axum::http::HeaderMap,
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
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            // Changing a change request's subject or status is not a content change, so it is
            // allowed on locked spaces too.
            if space.role < Some(quire_store::permissions::Role::Edit) {
                return Err(quire_store::permissions::role_forbidden(
                    "changing a change request",
                    quire_store::permissions::Role::Edit,
                    &format!("on space {space_id:?}"),
                    space.role,
                ).into());
            }
            let cr = model::load(c, &space_id, &cr_id)?;
            if cr.status == Status::Merged {
                return Err(ApiError::conflict(format!("change request #{} is merged and can no longer change", cr.number)));
            }
            let subject = body.subject.clone().unwrap_or(cr.subject.clone());
            let status = new_status.unwrap_or(cr.status);
            let description = description.clone().unwrap_or(cr.description.clone());
            c.execute(
                "UPDATE change_requests SET subject = ?2, status = ?3, description = ?4, updated_at = ?5 WHERE id = ?1",
                params![cr.id.clone(), subject, status, description, clock::now_ms()],
            )?;
            if status != cr.status {
                let payload = json!({"spaceId": space_id, "changeRequestId": cr.id, "number": cr.number,
                                     "status": status, "previousStatus": cr.status});
                let (org, actor) = (&space.space.org_id, Some(caller.user_id.as_str()));
                let event = Event::in_space(Kind::ChangeRequestStatusUpdated, org, &space_id, &cr.id, actor, payload);
                events::record(c, event)?;
            }
            let cr = model::load(c, &space_id, &cr.id)?;
            render_one(c, &app2, &cr)
        })
        .await?;
    let minimal = headers
        .get("prefer")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("return=minimal"));
    if minimal {
        return Ok((StatusCode::NO_CONTENT, [("preference-applied", "return=minimal")]).into_response());
    }
    Ok(axum::Json(json).into_response())
}

/// Renders one change request.
pub fn render_one(c: &mut dyn Conn, app: &App, cr: &ChangeRequest) -> ApiResult<ChangeRequestJson> {
    render(c, app, std::slice::from_ref(cr))?
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::internal("nothing rendered"))
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
    let app2 = app.clone();
    let json = app
        .db
        .read(move |c| {
            spaces::load_active(c, &space_id, &caller.user_id)?;
            let cr = model::load(c, &space_id, &cr_id)?;
            render_one(c, &app2, &cr)
        })
        .await?;
    Ok(axum::Json(json))
}
