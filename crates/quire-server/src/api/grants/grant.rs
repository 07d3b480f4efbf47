//! Giving users and teams a role on a space or a collection.

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::siblings::Kind;

use super::*;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path};
use crate::paths::{CollectionPath, SpacePath};
use crate::state::App;

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/permissions",
    tag = "Permissions",
    summary = "Give users and teams a role on a space",
    params(SpacePath),
    request_body = InviteBody,
    responses((status = 204, description = "The grants are made (users outside the organization join it as guests).")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn invite_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    Json(body): Json<InviteBody>,
) -> ApiResult<StatusCode> {
    invite(Kind::Space, caller, app, id, body).await
}

#[utoipa::path(
    post,
    path = "/v1/collections/{collectionId}/permissions",
    tag = "Permissions",
    summary = "Give users and teams a role on a collection",
    params(CollectionPath),
    request_body = InviteBody,
    responses((status = 204, description = "The grants are made (users outside the organization join it as guests).")),
    security(("token" = ["space:metadata:write"]))
)]
pub(super) async fn invite_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    Json(body): Json<InviteBody>,
) -> ApiResult<StatusCode> {
    invite(Kind::Collection, caller, app, id, body).await
}
