//! `POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/content`: a batch of 1 to 50
//! changes applied atomically as one new revision of the change request
//! (`quire_store::change_requests::content`).

use axum::extract::State;
use quire_content::changes::Affected;
use quire_store::change_requests::content::{self, Written};
use quire_store::permissions::space;
use quire_store::spaces::SpaceFor;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::render::{self, FileJson};
use crate::api::change_requests::wire::{ChangeRequestJson, cr_json};
use crate::auth::Caller;
use crate::error::{ApiResult, ErrorEnvelope};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::ChangeRequestPath;
use crate::state::App;

#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum UpdateResponse {
    Compat(ChangeRequestJson),
    Detailed(Detailed),
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Detailed {
    change_request: ChangeRequestJson,
    changes: Vec<AffectedJson>,
    inserted_files: Vec<FileJson>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AffectedJson {
    object: &'static str,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    reference: Option<String>,
    page: Value,
}

/// The body of a batch, as documented (it is parsed by [`parse_changes`], which names the
/// failing change).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct UpdateContentBody {
    /// The changes, applied in order: `insert_page`, `update_page`, `move_page`,
    /// `delete_page`, `insert_file`, `update_file`, `delete_file`, `update_variables`, ...
    changes: Vec<Value>,
}

/// The query of a batch.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UpdateContentQuery {
    /// `true` (the default): answer the change request only; `false`: also what each change
    /// affected and the files inserted.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    compat: Option<bool>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
    tag = "Change request content",
    summary = "Write a batch of changes to a change request's content",
    params(ChangeRequestPath, UpdateContentQuery),
    request_body = UpdateContentBody,
    responses(
        (status = 200, description = "The change request after the batch; with `compat=false`, also what each change affected and the files inserted.", body = UpdateResponse),
        (status = 409, description = "The change request is merged or archived: its content can no longer change.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn update_content(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(UpdateContentQuery { compat }): QueryOf<UpdateContentQuery>,
    Json(body): Json<Value>,
) -> ApiResult<axum::Json<UpdateResponse>> {
    let changes = content::parse_changes(body)?;
    let space = app
        .spaces
        .load_active(&app.db, &space_id, &caller.user_id)
        .await?
        .authorize::<space::Edit>()?;
    let written = content::write(
        &app.store,
        app.store.fetch.as_ref(),
        &space,
        &caller.user_id,
        &cr_id,
        changes,
    )
    .await?;
    Ok(axum::Json(respond(
        &app,
        &space,
        &written,
        compat.unwrap_or(true),
    )?))
}

/// The answer of a batch: GitBook's (the change request), or with `compat=false` what each
/// change affected and the files inserted.
fn respond(app: &App, space: &SpaceFor, written: &Written, compat: bool) -> ApiResult<UpdateResponse> {
    let json = cr_json(&app.urls, &written.change_request)?;
    if compat {
        return Ok(UpdateResponse::Compat(json));
    }
    let (space_id, cr) = (space.space.id.as_str(), &written.change_request.value);
    let ctx = render::Context {
        urls: &app.urls,
        org_id: &space.space.org_id,
        space_id,
        visibility: space.space.visibility,
        signing_key: &app.signing_key,
    };
    let page_ref = |id: &str| {
        serde_json::json!({
            "object": "page",
            "id": id,
            "urls": {"location": app.urls.api(&format!("/spaces/{space_id}/change-requests/{}/content/page/{id}", cr.id))}
        })
    };
    let changes = written
        .affected
        .iter()
        .map(|a| match a {
            Affected::Created { page, reference } => AffectedJson {
                object: "created_page",
                reference: reference.clone(),
                page: page_ref(page),
            },
            Affected::Updated { page } => AffectedJson {
                object: "updated_page",
                reference: None,
                page: page_ref(page),
            },
            Affected::Deleted { page } => AffectedJson {
                object: "deleted_page",
                reference: None,
                page: Value::String(page.clone()),
            },
        })
        .collect();
    let inserted_files = written
        .inserted_files
        .iter()
        .map(|f| render::file(&ctx, f))
        .collect();
    Ok(UpdateResponse::Detailed(Detailed {
        change_request: json,
        changes,
        inserted_files,
    }))
}
