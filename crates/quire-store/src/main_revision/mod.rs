//! A space's main revision: the content its readers see. Every writer of main (space creation,
//! merges, templates applied to main, imports) first locks the space row ([`lock_main`]), so
//! writers of one space take turns on PostgreSQL as they do on SQLite's single writer, and then
//! moves the pointer with a compare-and-swap as a last guard ([`advance`]). Whatever is derived
//! from main (the search index, the link index) changes in the same transaction
//! ([`main_changed`]), and the move is recorded as an event.

pub mod init;

use crate::content::diff::Changes;
use crate::content::store::{self, ContentCache, StoredTree};
use crate::db::{Conn, Db, DbError, for_update};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::{clock, links, params, search};

/// Locks a space's main revision for change and returns it.
pub fn lock_main(c: &mut dyn Conn, space_id: &str) -> StoreResult<String> {
    let sql = format!("SELECT revision_id FROM spaces WHERE id = ?1{}", for_update(c));
    let revision: Option<Option<String>> = c
        .query_opt(&sql, params![space_id])?
        .map(|r| r.get(0))
        .transpose()?;
    revision
        .flatten()
        .ok_or_else(|| crate::spaces::not_found(space_id))
}

/// Moves main from `from` to `to`, for `actor`.
pub fn advance(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    from: &str,
    to: &str,
    actor: &str,
) -> StoreResult<()> {
    let changed = c.execute(
        "UPDATE spaces SET revision_id = ?3, updated_at = ?4 WHERE id = ?1 AND revision_id = ?2",
        params![space_id, from, to, clock::now_ms()],
    )?;
    if changed == 0 {
        return Err(StoreError::conflict(
            "the space's content changed meanwhile: retry",
        ));
    }
    updated(c, space_id, from, to, Some(actor))?;
    let tree = store::load_tree(c, cache, space_id, to)?;
    main_changed(c, cache, space_id, &tree)
}

/// Records that main moved from `from` to `to` (`space_content_updated`, GitBook's event).
pub fn updated(
    c: &mut dyn Conn,
    space_id: &str,
    from: &str,
    to: &str,
    actor: Option<&str>,
) -> StoreResult<()> {
    let org = events::organization_of_space(c, space_id)?;
    let payload = events::SpaceContentUpdated {
        space_id,
        revision_id: to,
        previous_revision_id: from,
    };
    events::record(c, Event::space(&org, space_id, actor, payload))?;
    Ok(())
}

/// Brings the indexes of `space_id` to `new`, which is becoming its main revision. Call it in
/// the transaction that moves main.
pub fn main_changed(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    new: &StoredTree,
) -> StoreResult<()> {
    let indexed: Option<String> = c.query_scalar(
        "SELECT revision_id FROM content_indexes WHERE space_id = ?1",
        params![space_id],
    )?;
    if indexed.as_deref() == Some(new.id()) {
        return Ok(());
    }
    let old = match &indexed {
        Some(revision) => Some(store::load_tree(c, cache, space_id, revision)?),
        None => {
            // Nothing describes the space yet (a new space, or one written before the indexes
            // existed): start from empty.
            search::index::clear(c, space_id)?;
            links::index::clear(c, space_id)?;
            None
        }
    };
    let changes = Changes::between(old.as_ref().map(|o| &o.tree), &new.tree);
    search::index::apply(c, cache, space_id, &changes)?;
    links::index::apply(c, cache, space_id, &new.tree, &changes)?;
    crate::openapi::pages::main_changed(c, space_id, old.as_ref().map(|o| &o.tree), &new.tree)?;
    c.execute(
        "INSERT INTO content_indexes (space_id, revision_id) VALUES (?1, ?2)
         ON CONFLICT (space_id) DO UPDATE SET revision_id = excluded.revision_id",
        params![space_id, new.id()],
    )?;
    Ok(())
}

/// Indexes the spaces whose indexes do not describe their main revision (spaces written before
/// migration 0007), one transaction each. Run at start.
pub fn catch_up(db: &Db, cache: &ContentCache) -> StoreResult<usize> {
    let stale: Vec<(String, String)> = db.read_sync(|c| {
        let rows = c.query(
            "SELECT s.id, s.revision_id FROM spaces s LEFT JOIN content_indexes i ON i.space_id = s.id
             WHERE s.revision_id IS NOT NULL AND (i.revision_id IS NULL OR i.revision_id <> s.revision_id)",
            params![],
        )?;
        rows.iter()
            .map(|r| Ok((r.get(0)?, r.get(1)?)))
            .collect::<Result<Vec<_>, DbError>>()
    })?;
    for (space_id, _) in &stale {
        db.write_sync(|c| {
            // Locked as writers of main lock it: processes starting together index each space
            // once, the later finding the work done.
            let revision = match lock_main(c, space_id) {
                Ok(revision) => revision,
                // Purged meanwhile: nothing to index.
                Err(e) if e.kind == crate::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            let tree = store::load_tree(c, cache, space_id, &revision)?;
            main_changed(c, cache, space_id, &tree)
        })?;
    }
    Ok(stale.len())
}
