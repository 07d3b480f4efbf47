//! Moving a space's main revision. Every writer of main (merges, templates applied to main,
//! imports) first locks the space row, so writers of one space take turns on PostgreSQL as they
//! do on SQLite's single writer, and then moves the pointer with a compare-and-swap as a last
//! guard. Whatever is derived from main (search index, links) changes in the same transaction.

use crate::app::App;
use crate::db::{Conn, for_update};
use crate::error::{ApiError, ApiResult};
use crate::{clock, params};

/// Locks a space's main revision for change and returns it.
pub fn lock_main(c: &mut dyn Conn, space_id: &str) -> ApiResult<String> {
    let sql = format!("SELECT revision_id FROM spaces WHERE id = ?1{}", for_update(c));
    let revision: Option<Option<String>> = c
        .query_opt(&sql, params![space_id])?
        .map(|r| r.get(0))
        .transpose()?;
    revision
        .flatten()
        .ok_or_else(|| crate::spaces::model::not_found(space_id))
}

/// Moves main from `from` to `to`.
pub fn advance(c: &mut dyn Conn, app: &App, space_id: &str, from: &str, to: &str) -> ApiResult<()> {
    let changed = c.execute(
        "UPDATE spaces SET revision_id = ?3, updated_at = ?4 WHERE id = ?1 AND revision_id = ?2",
        params![space_id, from, to, clock::now_ms()],
    )?;
    if changed == 0 {
        return Err(ApiError::conflict("the space's content changed meanwhile: retry"));
    }
    let tree = super::store::load_tree(c, &app.content, space_id, to)?;
    super::derived::main_changed(c, &app.content, space_id, &tree)
}
