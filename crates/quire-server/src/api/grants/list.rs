//! The users and teams with a role on a space or a collection.

use axum::extract::State;
use quire_store::paging::{List, Paging};
use quire_store::siblings::Kind;

use super::*;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Path, QueryOf};
use crate::paths::{CollectionPath, SpacePath};
use crate::state::App;

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/permissions/users",
    tag = "Permissions",
    summary = "List the users with a role on a space",
    params(SpacePath, Paging),
    responses((status = 200, description = "The users and their roles.", body = List<UserPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
pub(super) async fn list_users_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    list_users(Kind::Space, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}/permissions/users",
    tag = "Permissions",
    summary = "List the users with a role on a collection",
    params(CollectionPath, Paging),
    responses((status = 200, description = "The users and their roles.", body = List<UserPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
pub(super) async fn list_users_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    list_users(Kind::Collection, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/permissions/teams",
    tag = "Permissions",
    summary = "List the teams with a role on a space",
    params(SpacePath, Paging),
    responses((status = 200, description = "The teams and their roles.", body = List<TeamPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
pub(super) async fn list_teams_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    list_teams(Kind::Space, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}/permissions/teams",
    tag = "Permissions",
    summary = "List the teams with a role on a collection",
    params(CollectionPath, Paging),
    responses((status = 200, description = "The teams and their roles.", body = List<TeamPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
pub(super) async fn list_teams_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    list_teams(Kind::Collection, caller, app, id, paging).await
}
