//! The organization's instructions for documentation agents: a rich document.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use serde::{Deserialize, Serialize};

use super::model;
use crate::app::App;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path};
use crate::permissions::OrgAction;
use crate::{clock, params, richtext};

pub fn routes() -> Router<App> {
    Router::new().route(
        "/v1/orgs/{organizationId}/agent-instructions",
        get(get_instructions).put(put_instructions),
    )
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AgentInstructions {
    object: &'static str,
    instructions: serde_json::Value,
    #[serde(with = "clock::ts")]
    updated_at: i64,
    updated_by: String,
    urls: Location,
}

#[derive(Serialize)]
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

async fn get_instructions(
    caller: Caller,
    State(app): State<App>,
    Path(org_id): Path<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PutInstructions {
    instructions: serde_json::Value,
}

async fn put_instructions(
    caller: Caller,
    State(app): State<App>,
    Path(org_id): Path<String>,
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
