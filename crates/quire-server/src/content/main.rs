//! Moving a space's main revision. Every writer of main (merges, templates applied to main,
//! imports) first locks the space row, so writers of one space take turns on PostgreSQL as they
//! do on SQLite's single writer, and then moves the pointer with a compare-and-swap as a last
//! guard. Whatever is derived from main (search index, links) changes in the same transaction.

use serde_json::json;

use crate::app::App;
use crate::db::{Conn, for_update};
use crate::error::{ApiError, ApiResult};
use crate::{clock, params};
use quire_store::events::{self, Event, Kind};

/// Locks a space's main revision for change and returns it.
pub fn lock_main(c: &mut dyn Conn, space_id: &str) -> ApiResult<String> {
    let sql = format!("SELECT revision_id FROM spaces WHERE id = ?1{}", for_update(c));
    let revision: Option<Option<String>> = c
        .query_opt(&sql, params![space_id])?
        .map(|r| r.get(0))
        .transpose()?;
    Ok(revision
        .flatten()
        .ok_or_else(|| quire_store::spaces::not_found(space_id))?)
}

/// Moves main from `from` to `to`, for `actor`.
pub fn advance(
    c: &mut dyn Conn,
    app: &App,
    space_id: &str,
    from: &str,
    to: &str,
    actor: &str,
) -> ApiResult<()> {
    let changed = c.execute(
        "UPDATE spaces SET revision_id = ?3, updated_at = ?4 WHERE id = ?1 AND revision_id = ?2",
        params![space_id, from, to, clock::now_ms()],
    )?;
    if changed == 0 {
        return Err(ApiError::conflict("the space's content changed meanwhile: retry"));
    }
    updated(c, space_id, from, to, Some(actor))?;
    let tree = super::store::load_tree(c, &app.content, space_id, to)?;
    super::derived::main_changed(c, &app.content, space_id, &tree)
}

/// Records that main moved from `from` to `to` (`space_content_updated`, GitBook's event).
pub fn updated(c: &mut dyn Conn, space_id: &str, from: &str, to: &str, actor: Option<&str>) -> ApiResult<()> {
    let org = events::organization_of_space(c, space_id)?;
    let payload = json!({"spaceId": space_id, "revisionId": to, "previousRevisionId": from});
    events::record(
        c,
        Event::space(Kind::SpaceContentUpdated, &org, space_id, actor, payload),
    )?;
    Ok(())
}
