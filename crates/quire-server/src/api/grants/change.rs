//! Changing or removing a user's or a team's role on a space or a collection.

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::grants::Holder;
use quire_store::siblings::Kind;

use super::*;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path};
use crate::paths::{CollectionTeamPath, CollectionUserPath, SpaceTeamPath, SpaceUserPath};
use crate::state::App;

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Change or remove a user's role on a space",
    params(SpaceUserPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn update_user_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceUserPath {
        space_id: id,
        user_id: user,
    }): Path<SpaceUserPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Space, caller, app, id, Holder::User(user), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/collections/{collectionId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Change or remove a user's role on a collection",
    params(CollectionUserPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn update_user_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionUserPath {
        collection_id: id,
        user_id: user,
    }): Path<CollectionUserPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Collection, caller, app, id, Holder::User(user), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Change or remove a team's role on a space",
    params(SpaceTeamPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn update_team_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceTeamPath {
        space_id: id,
        team_id: team,
    }): Path<SpaceTeamPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Space, caller, app, id, Holder::Team(team), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/collections/{collectionId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Change or remove a team's role on a collection",
    params(CollectionTeamPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn update_team_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionTeamPath {
        collection_id: id,
        team_id: team,
    }): Path<CollectionTeamPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Collection, caller, app, id, Holder::Team(team), body).await
}
