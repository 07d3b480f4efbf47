//! Spaces with their callers' roles, kept in memory between requests: reading a space and the
//! caller's access to it is the first thing every space and content read does, and on
//! PostgreSQL that statement cost as much server CPU as everything else the request did
//! (bench/ANALYSIS.md). An entry is reused only while the database's [`Stamp`] has not moved
//! since it was read, so a write seen by this process (any write on SQLite; on PostgreSQL its
//! own at once and other processes' when their notification arrives) makes it stale. Entries
//! also expire after `MAX_AGE`, which bounds how long a notification lost with a connection
//! that died silently could matter.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::model::{self, SpaceFor};
use crate::db::{Db, DbError, Stamp};
use crate::error::ApiResult;

const MAX_AGE: Duration = Duration::from_secs(5);
const CAPACITY: usize = 10_000;

pub struct SpaceCache {
    /// By (space id, user id).
    entries: quick_cache::sync::Cache<(String, String), Arc<Entry>>,
}

struct Entry {
    stamp: Stamp,
    read_at: Instant,
    space: SpaceFor,
}

impl Default for SpaceCache {
    fn default() -> Self {
        SpaceCache {
            entries: quick_cache::sync::Cache::new(CAPACITY),
        }
    }
}

impl SpaceCache {
    /// As [`model::load_for`], from memory when nothing has changed since it was last read.
    pub async fn load_for(
        &self,
        db: &Db,
        space_id: &str,
        user_id: &str,
    ) -> Result<Option<SpaceFor>, DbError> {
        let key = (space_id.to_string(), user_id.to_string());
        let stamp = db.stamp();
        if let Some(stamp) = stamp
            && let Some(entry) = self.entries.get(&key)
            && entry.stamp == stamp
            && entry.read_at.elapsed() < MAX_AGE
        {
            return Ok(Some(entry.space.clone()));
        }
        let (space_id, user_id) = key.clone();
        let found = db.read(move |c| model::load_for(c, &space_id, &user_id)).await?;
        if let (Some(stamp), Some(space)) = (stamp, &found) {
            let entry = Entry {
                stamp,
                read_at: Instant::now(),
                space: space.clone(),
            };
            self.entries.insert(key, Arc::new(entry));
        }
        Ok(found)
    }

    /// As [`model::load_visible`].
    pub async fn load_visible(&self, db: &Db, space_id: &str, user_id: &str) -> ApiResult<SpaceFor> {
        model::visible(space_id, self.load_for(db, space_id, user_id).await?)
    }

    /// As [`model::load_active`].
    pub async fn load_active(&self, db: &Db, space_id: &str, user_id: &str) -> ApiResult<SpaceFor> {
        model::active(self.load_visible(db, space_id, user_id).await?)
    }
}
