//! What one quire instance keeps about itself in the `settings` table.

use crate::db::Db;
use crate::error::{StoreError, StoreResult};
use crate::params;

/// Loads the instance's signing key (the same in every process), creating it on the first
/// start. Blocking.
pub fn signing_key(db: &Db) -> StoreResult<Vec<u8>> {
    db.write_sync(|c| {
        c.execute(
            "INSERT INTO settings (key, value) VALUES ('signing_key', ?1) ON CONFLICT (key) DO NOTHING",
            params![crate::ids::random_base62(64)],
        )?;
        let key: Option<String> =
            c.query_scalar("SELECT value FROM settings WHERE key = 'signing_key'", params![])?;
        key.map(String::into_bytes)
            .ok_or_else(|| StoreError::internal("signing key missing"))
    })
}
