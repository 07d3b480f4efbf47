//! Spaces with their callers' roles, kept in memory while the database has not changed
//! (`stamped`): reading a space and the caller's access to it is the first thing every space
//! and content read does, and on PostgreSQL that statement cost as much server CPU as
//! everything else the request did (bench/ANALYSIS.md).

use super::model::{self, SpaceFor};
use crate::db::{Db, DbError};
use crate::error::StoreResult;
use crate::stamped::StampedCache;

pub struct SpaceCache {
    /// By (space id, user id).
    pub(crate) entries: StampedCache<(String, String), SpaceFor>,
}

impl Default for SpaceCache {
    fn default() -> Self {
        SpaceCache {
            entries: StampedCache::new(10_000),
        }
    }
}

impl SpaceCache {
    /// As [`model::load_for`].
    pub async fn load_for(
        &self,
        db: &Db,
        space_id: &str,
        user_id: &str,
    ) -> Result<Option<SpaceFor>, DbError> {
        let key = (space_id.to_string(), user_id.to_string());
        let (space_id, user_id) = key.clone();
        self.entries
            .get_or_read(db, key, move |c| model::load_for(c, &space_id, &user_id))
            .await
    }

    /// As [`model::load_visible`].
    pub async fn load_visible(&self, db: &Db, space_id: &str, user_id: &str) -> StoreResult<SpaceFor> {
        model::visible(space_id, self.load_for(db, space_id, user_id).await?)
    }

    /// As [`model::load_active`].
    pub async fn load_active(&self, db: &Db, space_id: &str, user_id: &str) -> StoreResult<SpaceFor> {
        model::active(self.load_visible(db, space_id, user_id).await?)
    }
}
