//! The organization's instructions for documentation agents: a rich document.

use axum::extract::State;
use quire_store::clock;
use quire_store::orgs::agent_instructions;
use quire_store::permissions::org;
use quire_store::richtext;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path};
use crate::paths::OrgPath;
use crate::state::App;

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

impl AgentInstructions {
    fn new(found: agent_instructions::Instructions, location: String) -> AgentInstructions {
        AgentInstructions {
            object: "agent-instructions",
            instructions: found.document,
            updated_at: found.updated_at,
            updated_by: found.updated_by,
            urls: Location { location },
        }
    }
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
    let found = app
        .db
        .read_as::<org::ReadAgentInstructions, _>(caller.user_id.clone(), org_id, move |c, org| {
            agent_instructions::get(c, &org)
        })
        .await?;
    Ok(axum::Json(AgentInstructions::new(found, location)))
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
    let found = app
        .db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            agent_instructions::put(c, &org, &caller.user_id, &document)
        })
        .await?;
    Ok(axum::Json(AgentInstructions::new(found, location)))
}
