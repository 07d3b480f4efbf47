//! The outbox's consumer: each event recorded in `events` (`crate::events`) becomes one
//! integration event per active installation it concerns (installed in its organization,
//! covering its space or site, with a scope that lets the integration see it), then is marked
//! dispatched. A batch is one transaction: its events and the outbox rows' marks commit
//! together, so an outbox row is fanned out exactly once (and `UNIQUE (source_id,
//! installation_id)` would refuse a second time anyway). On PostgreSQL the rows are claimed
//! with `SKIP LOCKED`, so processes fan out disjoint batches; rows that commit late (their
//! `seq` was drawn before an earlier one committed) are simply found by a later pass.

use serde_json::{Map, Value as Json, json};

use super::events::{self, NewEvent};
use crate::Store;
use crate::db::{Conn, DbError, Dialect};
use crate::error::StoreError;
use crate::{clock, params};

/// Outbox rows fanned out per transaction.
pub const BATCH: i64 = 200;

/// What an outbox event becomes for integrations: its type, the scope an integration needs to
/// hear it, whether it is about a space (else a site), and its payload's fields.
struct Mapped {
    kind: &'static str,
    scope: &'static str,
    fields: Map<String, Json>,
}

fn str_of<'a>(payload: &'a Json, key: &str) -> Option<&'a str> {
    payload.get(key).and_then(Json::as_str)
}

/// The integration event an outbox event makes, if any. Types follow GitBook's where GitBook
/// has one (`space_content_updated`); the others are named in its style
/// (`docs/integrations.md`, "Events").
fn map(kind: &str, payload: &Json, updated_by: Option<Json>) -> Option<Mapped> {
    let mut fields = Map::new();
    let copy = |key: &str, fields: &mut Map<String, Json>| {
        if let Some(value) = payload.get(key) {
            fields.insert(key.to_string(), value.clone());
        }
    };
    let (kind, scope) = match kind {
        "space_content_updated" => {
            copy("spaceId", &mut fields);
            copy("revisionId", &mut fields);
            copy("previousRevisionId", &mut fields);
            fields.insert("updatedBy".into(), Json::Array(updated_by.into_iter().collect()));
            ("space_content_updated", "space:content:read")
        }
        "change_request_created" | "change_request_status_updated" | "change_request_merged" => {
            for key in [
                "spaceId",
                "changeRequestId",
                "number",
                "status",
                "previousStatus",
                "revisionId",
            ] {
                copy(key, &mut fields);
            }
            let event = match (kind, str_of(payload, "status")) {
                ("change_request_merged", _) => {
                    fields.insert("status".into(), json!("merged"));
                    "change_request_merged"
                }
                ("change_request_created", Some("open")) => "change_request_opened",
                ("change_request_created", _) => "change_request_created",
                (_, Some("open")) => "change_request_opened",
                (_, Some("archived")) => "change_request_closed",
                _ => "change_request_updated",
            };
            (event, "space:content:read")
        }
        "comment_posted" | "comment_reply_posted" => {
            for key in ["spaceId", "changeRequestId", "commentId", "replyId", "pageId"] {
                copy(key, &mut fields);
            }
            (
                if kind == "comment_posted" {
                    "comment_created"
                } else {
                    "comment_reply_created"
                },
                "space:content:read",
            )
        }
        "site_published" | "site_unpublished" => {
            copy("siteId", &mut fields);
            (
                if kind == "site_published" {
                    "site_published"
                } else {
                    "site_unpublished"
                },
                "site:metadata:read",
            )
        }
        _ => return None,
    };
    Some(Mapped { kind, scope, fields })
}

/// An outbox row.
struct Outboxed {
    seq: i64,
    id: String,
    organization_id: String,
    space_id: Option<String>,
    kind: String,
    subject_id: String,
    actor_id: Option<String>,
    payload: Json,
    created_at: i64,
}

/// An installation an event may go to: active, and installed (and enabled on the space or
/// site) when the event happened, so that a change made before an installation is not
/// delivered to it when the fan-out runs after.
struct Candidate {
    installation_id: String,
    integration_id: String,
    scopes: String,
}

fn candidates(c: &mut dyn Conn, event: &Outboxed) -> Result<Vec<Candidate>, DbError> {
    let (selection, table, column, target) = match &event.space_id {
        Some(space) => (
            "space_selection",
            "integration_space_installations",
            "space_id",
            space.clone(),
        ),
        None => (
            "site_selection",
            "integration_site_installations",
            "site_id",
            event.subject_id.clone(),
        ),
    };
    c.query(
        &format!(
            "SELECT i.id, i.integration_id, t.scopes FROM integration_installations i
             JOIN integrations t ON t.id = i.integration_id
             WHERE i.organization_id = ?1 AND i.status = 'active' AND i.created_at <= ?3
               AND (i.{selection} = 'all' OR EXISTS (SELECT 1 FROM {table} b
                    WHERE b.installation_id = i.id AND b.{column} = ?2 AND b.status = 'active'
                      AND b.created_at <= ?3))
             ORDER BY i.id"
        ),
        params![event.organization_id.clone(), target, event.created_at],
    )?
    .iter()
    .map(|r| {
        Ok(Candidate {
            installation_id: r.get(0)?,
            integration_id: r.get(1)?,
            scopes: r.get(2)?,
        })
    })
    .collect()
}

/// The user who made a change, as GitBook's events carry users (`updatedBy`).
fn user(c: &mut dyn Conn, id: &str) -> Result<Option<Json>, DbError> {
    c.query_opt(
        "SELECT id, display_name, email, photo_url FROM users WHERE id = ?1",
        params![id],
    )?
    .map(|r| -> Result<Json, DbError> {
        let mut user = json!({
            "object": "user",
            "id": r.get::<String>(0)?,
            "displayName": r.get::<String>(1)?,
            "email": r.get::<String>(2)?,
        });
        if let Some(photo) = r.get::<Option<String>>(3)? {
            user["photoURL"] = Json::String(photo);
        }
        Ok(user)
    })
    .transpose()
}

/// Fans out one batch; how many outbox rows it took.
pub fn pass(c: &mut dyn Conn) -> Result<usize, StoreError> {
    let lock = if c.dialect() == Dialect::Postgres {
        "FOR UPDATE SKIP LOCKED"
    } else {
        ""
    };
    let rows = c.query(
        &format!(
            "SELECT seq, id, organization_id, space_id, kind, subject_id, actor_id, payload, created_at FROM events
             WHERE dispatched_at IS NULL ORDER BY seq LIMIT ?1 {lock}"
        ),
        params![BATCH],
    )?;
    let mut taken = Vec::with_capacity(rows.len());
    for r in &rows {
        let payload: String = r.get(7)?;
        taken.push(Outboxed {
            seq: r.get(0)?,
            id: r.get(1)?,
            organization_id: r.get(2)?,
            space_id: r.get(3)?,
            kind: r.get(4)?,
            subject_id: r.get(5)?,
            actor_id: r.get(6)?,
            payload: serde_json::from_str(&payload).unwrap_or(Json::Null),
            created_at: r.get(8)?,
        });
    }
    // One query tells whether any organization of the batch has an installation: most
    // batches of most instances have none, and cost just this.
    let orgs: Vec<String> = {
        let mut orgs: Vec<String> = taken.iter().map(|e| e.organization_id.clone()).collect();
        orgs.sort_unstable();
        orgs.dedup();
        orgs
    };
    let mut installed = std::collections::HashSet::new();
    for org in &orgs {
        if c.exists(
            "SELECT 1 FROM integration_installations WHERE organization_id = ?1",
            params![org.clone()],
        )? {
            installed.insert(org.clone());
        }
    }
    for event in &taken {
        if !installed.contains(&event.organization_id) {
            continue;
        }
        let updated_by = match (&event.actor_id, event.kind.as_str()) {
            (Some(actor), "space_content_updated") => user(c, actor)?,
            _ => None,
        };
        let Some(mapped) = map(&event.kind, &event.payload, updated_by) else {
            continue;
        };
        for candidate in candidates(c, event)? {
            if !candidate.scopes.split_whitespace().any(|s| s == mapped.scope) {
                continue;
            }
            events::create(
                c,
                NewEvent {
                    integration_id: &candidate.integration_id,
                    installation_id: Some(&candidate.installation_id),
                    organization_id: &event.organization_id,
                    source_id: Some(&event.id),
                    kind: mapped.kind,
                    fields: mapped.fields.clone(),
                },
            )?;
        }
    }
    if let (Some(first), Some(last)) = (taken.first(), taken.last()) {
        // The batch's rows, by their seq range: rows in the range that were not taken (still
        // uncommitted on PostgreSQL when read) have `dispatched_at` NULL and are not in it.
        let seqs: Vec<String> = taken.iter().map(|e| e.seq.to_string()).collect();
        c.execute(
            &format!(
                "UPDATE events SET dispatched_at = ?1 WHERE seq BETWEEN ?2 AND ?3 AND seq IN ({})",
                seqs.join(", ")
            ),
            params![clock::now_ms(), first.seq, last.seq],
        )?;
    }
    Ok(taken.len())
}

/// Fans out what is waiting, batch by batch; how many outbox rows it took.
pub async fn run(store: &Store) -> Result<usize, StoreError> {
    let waiting = store
        .db
        .read(|c| c.exists("SELECT 1 FROM events WHERE dispatched_at IS NULL", &[]))
        .await?;
    if !waiting {
        return Ok(0);
    }
    let mut total = 0;
    loop {
        let taken = store.db.write(|c| pass(c)).await?;
        total += taken;
        if taken < BATCH as usize {
            return Ok(total);
        }
    }
}
