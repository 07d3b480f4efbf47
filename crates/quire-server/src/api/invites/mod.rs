//! Invite links (`quire_store::invites`): list, create, read, update, delete, follow.

pub mod wire;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use quire_store::invites::{self, NewInvite, role_field};
use quire_store::paging::{List, Paging};
use quire_store::permissions::org;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::{InvitePath, OrgPath};
use crate::state::App;
use wire::{InviteJson, invite_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_invites, create_invite))
        .routes(routes!(get_invite, update_invite, delete_invite))
        .routes(routes!(join_with_invite))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/link-invites",
    tag = "Organizations",
    summary = "List the invite links of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The invite links.", body = List<InviteJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_invites(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<InviteJson>>> {
    let list = app
        .db
        .read_as::<org::Admin, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            invites::list(c, &org, &caller.user_id, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|v| invite_json(&app.urls, &v))))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateInvite {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    level: Patch<String>,
    space: Option<String>,
    collection: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/link-invites",
    tag = "Organizations",
    summary = "Create an invite link",
    params(OrgPath),
    request_body = CreateInvite,
    responses((status = 201, description = "The new invite link; its id is the link's secret.", body = InviteJson)),
    security(("token" = ["org:write"]))
)]
async fn create_invite(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<CreateInvite>,
) -> ApiResult<impl IntoResponse> {
    let (kind, target, role) = match (&body.space, &body.collection) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "an invite opens a `space` or a `collection`, not both",
            ));
        }
        (Some(s), None) => ("space", Some(s.clone()), role_field("level", &body.level)?),
        (None, Some(col)) => ("collection", Some(col.clone()), role_field("level", &body.level)?),
        (None, None) => ("organization", None, role_field("role", &body.role)?),
    };
    if kind != "organization" && role.is_none() {
        return Err(ApiError::bad_request(
            "`level` of a space or collection invite must be a role",
        ));
    }
    let new = NewInvite { kind, target, role };
    let view = app
        .db
        .write(move |c| invites::create(c, &caller.user_id, &org_id, &new))
        .await?;
    Ok((StatusCode::CREATED, axum::Json(invite_json(&app.urls, &view))))
}

/// Anyone holding an invite's id may read it: the id is the secret the link carries.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Get an invite link",
    params(InvitePath),
    responses((status = 200, description = "The invite link.", body = InviteJson)),
    security(("token" = ["org:read"]))
)]
async fn get_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<axum::Json<InviteJson>> {
    let view = app
        .db
        .read(move |c| invites::get(c, &caller.user_id, &org_id, &invite_id))
        .await?;
    Ok(axum::Json(invite_json(&app.urls, &view)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateInvite {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    level: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Update an invite link",
    params(InvitePath),
    request_body = UpdateInvite,
    responses((status = 200, description = "The invite link as updated.", body = InviteJson)),
    security(("token" = ["org:write"]))
)]
async fn update_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
    Json(body): Json<UpdateInvite>,
) -> ApiResult<axum::Json<InviteJson>> {
    let view = app
        .db
        .write(move |c| invites::update(c, &caller.user_id, &org_id, &invite_id, &body.role, &body.level))
        .await?;
    Ok(axum::Json(invite_json(&app.urls, &view)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Delete an invite link",
    params(InvitePath),
    responses((status = 204, description = "The invite link is gone.")),
    security(("token" = ["org:write"]))
)]
async fn delete_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| invites::delete(c, &caller.user_id, &org_id, &invite_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
struct Joined {}

/// Follows an invite: joins the organization with the invite's role (never lowering a role the
/// caller already has), or as a guest with the invite's level on its space or collection.
#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/invites/{inviteId}",
    tag = "Organizations",
    summary = "Join an organization through an invite link",
    params(InvitePath),
    responses((status = 200, description = "The caller joined.", body = Joined)),
    security(("token" = ["org:write"]))
)]
async fn join_with_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<axum::Json<Joined>> {
    app.db
        .write(move |c| invites::join(c, &caller.user_id, &org_id, &invite_id))
        .await?;
    Ok(axum::Json(Joined {}))
}
