//! Who contributed content to a change request.

use crate::db::Conn;
use crate::error::StoreResult;
use crate::{clock, params};

/// Records that `user_id` wrote content in the change request.
pub fn record(c: &mut dyn Conn, cr_id: &str, user_id: &str) -> StoreResult<()> {
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO change_request_contributors (change_request_id, user_id, first_at, last_at, edits)
         VALUES (?1, ?2, ?3, ?3, 1)
         ON CONFLICT (change_request_id, user_id)
         DO UPDATE SET last_at = excluded.last_at, edits = change_request_contributors.edits + 1",
        params![cr_id, user_id, now],
    )?;
    Ok(())
}
