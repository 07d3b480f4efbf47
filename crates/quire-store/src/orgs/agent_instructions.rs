//! The organization's instructions for documentation agents: a rich document.

use super::model::OrgFor;
use crate::db::{Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Authorized, org};
use crate::{clock, params, richtext};

/// The instructions with who changed them last, and when.
#[derive(Clone, Debug)]
pub struct Instructions {
    pub document: serde_json::Value,
    pub updated_at: i64,
    pub updated_by: String,
}

fn load(c: &mut dyn Conn, org_id: &str) -> StoreResult<Instructions> {
    let row = c
        .query_opt(
            "SELECT agent_instructions, agent_instructions_updated_at, agent_instructions_updated_by
             FROM organizations WHERE id = ?1",
            params![org_id],
        )?
        .ok_or_else(|| StoreError::not_found(format!("organization {org_id:?} not found")))?;
    let text: Option<String> = row.get(0)?;
    let document = match text {
        Some(t) => serde_json::from_str(&t)
            .map_err(|e| DbError::stored(format_args!("agent instructions of organization {org_id:?}"), e))?,
        None => richtext::empty_document(),
    };
    Ok(Instructions {
        document,
        updated_at: row.get::<Option<i64>>(1)?.unwrap_or(0),
        updated_by: row.get::<Option<String>>(2)?.unwrap_or_default(),
    })
}

/// The organization's instructions.
pub fn get(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::ReadAgentInstructions>,
) -> StoreResult<Instructions> {
    load(c, &org.org.id)
}

/// Replaces the instructions with `document` (checked already, [`richtext::validate`]).
pub fn put(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    user_id: &str,
    document: &serde_json::Value,
) -> StoreResult<Instructions> {
    c.execute(
        "UPDATE organizations SET agent_instructions = ?2, agent_instructions_updated_at = ?3,
             agent_instructions_updated_by = ?4
         WHERE id = ?1",
        params![org.org.id.clone(), document.to_string(), clock::now_ms(), user_id],
    )?;
    load(c, &org.org.id)
}
