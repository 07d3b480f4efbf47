//! Removing a user's or a team's role on a space or a collection.

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::grants::Holder;
use quire_store::siblings::Kind;

use super::*;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::Path;
use crate::paths::{CollectionTeamPath, CollectionUserPath, SpaceTeamPath, SpaceUserPath};
use crate::state::App;

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Remove a user's role on a space",
    params(SpaceUserPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn remove_user_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceUserPath {
        space_id: id,
        user_id: user,
    }): Path<SpaceUserPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Space, caller, app, id, Holder::User(user)).await
}

#[utoipa::path(
    delete,
    path = "/v1/collections/{collectionId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Remove a user's role on a collection",
    params(CollectionUserPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn remove_user_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionUserPath {
        collection_id: id,
        user_id: user,
    }): Path<CollectionUserPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Collection, caller, app, id, Holder::User(user)).await
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Remove a team's role on a space",
    params(SpaceTeamPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn remove_team_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceTeamPath {
        space_id: id,
        team_id: team,
    }): Path<SpaceTeamPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Space, caller, app, id, Holder::Team(team)).await
}

#[utoipa::path(
    delete,
    path = "/v1/collections/{collectionId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Remove a team's role on a collection",
    params(CollectionTeamPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn remove_team_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionTeamPath {
        collection_id: id,
        team_id: team,
    }): Path<CollectionTeamPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Collection, caller, app, id, Holder::Team(team)).await
}
