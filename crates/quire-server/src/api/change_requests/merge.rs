//! Merging a change request into main, and updating it with main (`quire_store::change_requests::merge`).

use axum::extract::State;
use quire_store::change_requests::merge::{self, MergeResultKind};
use quire_store::permissions::space;
use serde::Serialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::error::{ApiResult, ErrorEnvelope};
use crate::extract::Path;
use crate::paths::ChangeRequestPath;
use crate::state::App;

#[derive(Serialize, utoipa::ToSchema)]
pub struct MergeResult {
    revision: String,
    result: MergeResultKind,
    #[serde(skip_serializing_if = "Option::is_none")]
    conflicts: Option<Value>,
}

impl From<merge::MergeResult> for MergeResult {
    fn from(r: merge::MergeResult) -> MergeResult {
        MergeResult {
            revision: r.revision,
            result: r.result,
            conflicts: r.conflicts,
        }
    }
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/merge",
    tag = "Change requests",
    summary = "Merge a change request into main",
    params(ChangeRequestPath),
    responses(
        (status = 200, description = "The merge's result.", body = MergeResult),
        (status = 409, description = "The change request cannot merge as it is (conflicts, merge rules, status).", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn merge_change_request(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
) -> ApiResult<axum::Json<MergeResult>> {
    let space = app
        .spaces
        .load_active(&app.db, &space_id, &caller.user_id)
        .await?
        .authorize::<space::Merge>()?;
    let result = merge::merge(&app.store, &space, &caller.user_id, &cr_id).await?;
    Ok(axum::Json(result.into()))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/update",
    tag = "Change requests",
    operation_id = "update_change_request_from_main",
    summary = "Bring main's changes into a change request",
    params(ChangeRequestPath),
    responses(
        (status = 200, description = "The update's result.", body = MergeResult),
        (status = 409, description = "The change request cannot be updated as it is.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn update_change_request(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
) -> ApiResult<axum::Json<MergeResult>> {
    let space = app
        .spaces
        .load_active(&app.db, &space_id, &caller.user_id)
        .await?
        .authorize::<space::Edit>()?;
    let result = merge::update(&app.store, &space, &caller.user_id, &cr_id).await?;
    Ok(axum::Json(result.into()))
}
