//! The organization's instructions for documentation agents: a rich document.

use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::model;
use crate::app::App;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path};
use crate::paths::OrgPath;
use crate::{clock, params};
use quire_store::permissions::OrgAction;
use quire_store::richtext;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default().routes(routes!(get_instructions, put_instructions))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct AgentInstructions {
    object: &'static str,
    instructions: serde_json::Value,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    updated_at: i64,
    updated_by: String,
    urls: Location,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AgentInstructionsUrls)]
struct Location {
    location: String,
}

fn load(c: &mut dyn crate::db::Conn, org_id: &str) -> Result<(serde_json::Value, i64, String), ApiError> {
    let row = c
        .query_opt(
            "SELECT agent_instructions, agent_instructions_updated_at, agent_instructions_updated_by
             FROM organizations WHERE id = ?1",
            params![org_id],
        )?
        .ok_or_else(|| ApiError::not_found(format!("organization {org_id:?} not found")))?;
    let text: Option<String> = row.get(0)?;
    let doc = match text {
        Some(t) => serde_json::from_str(&t).map_err(|e| {
            crate::db::DbError::stored(format_args!("agent instructions of organization {org_id:?}"), e)
        })?,
        None => richtext::empty_document(),
    };
    Ok((
        doc,
        row.get::<Option<i64>>(1)?.unwrap_or(0),
        row.get::<Option<String>>(2)?.unwrap_or_default(),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/agent-instructions",
    tag = "Organizations",
    summary = "Get the organization's instructions for documentation agents",
    params(OrgPath),
    responses((status = 200, description = "The instructions.", body = AgentInstructions)),
    security(("token" = ["org:read"]))
)]
async fn get_instructions(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
) -> ApiResult<axum::Json<AgentInstructions>> {
    let location = app.urls.api(&format!("/orgs/{org_id}/agent-instructions"));
    let (instructions, updated_at, updated_by) = app
        .db
        .read(move |c| {
            model::load_visible(c, &org_id, &caller.user_id)?.require(OrgAction::ReadAgentInstructions)?;
            load(c, &org_id)
        })
        .await?;
    Ok(axum::Json(AgentInstructions {
        object: "agent-instructions",
        instructions,
        updated_at,
        updated_by,
        urls: Location { location },
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PutInstructions {
    instructions: serde_json::Value,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/agent-instructions",
    tag = "Organizations",
    summary = "Replace the organization's instructions for documentation agents",
    params(OrgPath),
    request_body = PutInstructions,
    responses((status = 200, description = "The instructions as stored.", body = AgentInstructions)),
    security(("token" = ["org:write"]))
)]
async fn put_instructions(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<PutInstructions>,
) -> ApiResult<axum::Json<AgentInstructions>> {
    let document = richtext::validate("instructions", body.instructions)?;
    let location = app.urls.api(&format!("/orgs/{org_id}/agent-instructions"));
    let (instructions, updated_at, updated_by) = app
        .db
        .write(move |c| {
            model::load_visible(c, &org_id, &caller.user_id)?.require(OrgAction::Admin)?;
            c.execute(
                "UPDATE organizations SET agent_instructions = ?2, agent_instructions_updated_at = ?3,
                     agent_instructions_updated_by = ?4
                 WHERE id = ?1",
                params![
                    org_id.clone(),
                    document.to_string(),
                    clock::now_ms(),
                    caller.user_id.clone()
                ],
            )?;
            load(c, &org_id)
        })
        .await?;
    Ok(axum::Json(AgentInstructions {
        object: "agent-instructions",
        instructions,
        updated_at,
        updated_by,
        urls: Location { location },
    }))
}
