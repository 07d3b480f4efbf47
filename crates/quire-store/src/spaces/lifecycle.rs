//! The space lifecycle: active → deleted (restorable during the retention) → purged for good by a
//! durable background job.

use serde_json::json;

use super::model::Space;
use crate::Store;
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::{jobs, params};

pub const PURGE_JOB: &str = "purge_space";

fn purge_key(space_id: &str) -> String {
    format!("{PURGE_JOB}:{space_id}")
}

/// Marks a space deleted and schedules its purge at the end of the retention.
pub fn soft_delete(
    c: &mut dyn Conn,
    space_id: &str,
    now: i64,
    retention_ms: i64,
    actor: &str,
) -> StoreResult<()> {
    let changed = c.execute(
        "UPDATE spaces SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1 AND deleted_at IS NULL",
        params![space_id, now],
    )?;
    if changed > 0 {
        let payload = json!({ "space": space_id, "deletedAt": now });
        jobs::enqueue(
            c,
            PURGE_JOB,
            &payload,
            now.saturating_add(retention_ms),
            Some(&purge_key(space_id)),
        )?;
        // Sites stop showing it (their defaults are picked again), in this transaction.
        crate::sites::detach::remove_spaces(c, &[space_id.to_string()])?;
        let org = events::organization_of_space(c, space_id)?;
        let payload = events::SpaceDeleted { space_id };
        events::record(c, Event::space(&org, space_id, Some(actor), payload))?;
    }
    Ok(())
}

/// Brings a deleted space back, unless its retention has passed (then it is as good as gone: 404).
pub fn restore(c: &mut dyn Conn, space: &Space, now: i64, retention_ms: i64, actor: &str) -> StoreResult<()> {
    let Some(deleted_at) = space.deleted_at else {
        return Ok(());
    };
    if deleted_at.saturating_add(retention_ms) <= now {
        purge(c, &space.id)?;
        return Err(super::model::not_found(&space.id));
    }
    // The parent collection may have been deleted meanwhile: the space returns at the top level.
    c.execute(
        "UPDATE spaces SET deleted_at = NULL, updated_at = ?2,
             parent_id = CASE WHEN parent_id IN (SELECT id FROM collections) THEN parent_id ELSE NULL END
         WHERE id = ?1",
        params![space.id.clone(), now],
    )?;
    let payload = events::SpaceRestored { space_id: &space.id };
    events::record(c, Event::space(&space.org_id, &space.id, Some(actor), payload))?;
    jobs::cancel(c, &purge_key(&space.id))
}

/// Removes a space and everything in it from the database, with its scheduled purge.
pub fn purge(c: &mut dyn Conn, space_id: &str) -> StoreResult<()> {
    remove_rows(c, space_id)?;
    jobs::cancel(c, &purge_key(space_id))
}

fn remove_rows(c: &mut dyn Conn, space_id: &str) -> StoreResult<()> {
    // Reactions point at comments and replies without a foreign key (they target either).
    c.execute(
        "DELETE FROM comment_reactions WHERE target_id IN (SELECT id FROM comments WHERE space_id = ?1)
            OR target_id IN (SELECT r.id FROM comment_replies r JOIN comments x ON x.id = r.comment_id
                             WHERE x.space_id = ?1)",
        params![space_id],
    )?;
    c.execute("DELETE FROM grants WHERE target_id = ?1", params![space_id])?;
    c.execute("DELETE FROM invite_links WHERE target_id = ?1", params![space_id])?;
    // Content rows reference the space with ON DELETE CASCADE.
    c.execute("DELETE FROM spaces WHERE id = ?1", params![space_id])?;
    // After the space: deleting its comments and change requests (cascaded) moved its counts.
    // They have no foreign key to the space (it would lock the space row on every write).
    c.execute("DELETE FROM space_counts WHERE space_id = ?1", params![space_id])?;
    Ok(())
}

/// The purge job: removes the space's file bytes, then its rows, if it is still the deletion
/// the job was scheduled for. Each step is idempotent, so a crash in between is finished by the
/// job's retry.
pub async fn run_purge(store: &Store, payload: &serde_json::Value) -> StoreResult<()> {
    let space_id = payload["space"].as_str().unwrap_or_default().to_string();
    let deleted_at = payload["deletedAt"].as_i64();
    if space_id.is_empty() {
        return Err(StoreError::internal("purge job without a space"));
    }
    let still_due = move |c: &mut dyn Conn, space_id: &str| -> StoreResult<bool> {
        let current: Option<Option<i64>> = c
            .query_opt("SELECT deleted_at FROM spaces WHERE id = ?1", params![space_id])?
            .map(|r| r.get(0))
            .transpose()?;
        Ok(matches!(current, Some(Some(at)) if Some(at) == deleted_at))
    };
    let id = space_id.clone();
    if !store.db.read_blocking(move |c| still_due(c, &id)).await? {
        return Ok(());
    }
    store.blobs.delete_space(&space_id).await?;
    store
        .db
        .write(move |c| {
            if still_due(c, &space_id)? {
                remove_rows(c, &space_id)?;
                tracing::info!(space = %space_id, "purged deleted space");
            }
            Ok::<_, StoreError>(())
        })
        .await
}

/// Deletes a collection and the collections below it; the spaces inside are soft-deleted (and
/// restorable at the top level of the organization until the retention ends).
pub fn delete_collection(
    c: &mut dyn Conn,
    col: &crate::permissions::Authorized<
        crate::collections::CollectionFor,
        crate::permissions::collection::Admin,
    >,
    retention_ms: i64,
    actor: &str,
) -> StoreResult<()> {
    let ids = crate::collections::subtree(c, &col.collection.id)?;
    let mut args = crate::db::Args::default();
    let list = args.list(ids.iter().cloned());
    let spaces: Vec<String> = c
        .query(
            &format!("SELECT id FROM spaces WHERE parent_id IN ({list}) AND deleted_at IS NULL"),
            args.values(),
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let now = crate::clock::now_ms();
    for space in &spaces {
        soft_delete(c, space, now, retention_ms, actor)?;
    }
    c.execute(
        &format!(
            "UPDATE spaces SET parent_id = NULL,
                 visibility = CASE WHEN visibility = 'in-collection' THEN 'private' ELSE visibility END
             WHERE parent_id IN ({list})"
        ),
        args.values(),
    )?;
    c.execute(
        &format!("DELETE FROM grants WHERE target_id IN ({list})"),
        args.values(),
    )?;
    c.execute(
        &format!("DELETE FROM invite_links WHERE target_id IN ({list})"),
        args.values(),
    )?;
    // Children first, so that no row points at a deleted parent.
    for id in ids.iter().rev() {
        c.execute("DELETE FROM collections WHERE id = ?1", params![id.clone()])?;
    }
    Ok(())
}
