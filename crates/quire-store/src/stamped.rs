//! Answers of hot point reads kept in memory between requests, each with the database
//! [`Stamp`] taken before it was read, and reused only while [`Db::stamp`] still returns that
//! stamp: a write seen by this process (any write on SQLite; on PostgreSQL its own at once and
//! other processes' when their notification arrives, see `db::changes`) makes every entry
//! stale. Entries also expire after `MAX_AGE`, which bounds what a notification lost with a
//! connection that died silently could cost.

use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::db::{Conn, Db, DbError, Stamp};

const MAX_AGE: Duration = Duration::from_secs(5);

pub struct StampedCache<K, V, W = Unit> {
    entries: quick_cache::sync::Cache<K, Arc<Entry<V>>, W>,
}

/// Every entry weighs one: the capacity is a number of entries.
#[derive(Clone, Copy, Default)]
pub struct Unit;

impl<K, V> quick_cache::Weighter<K, Arc<Entry<V>>> for Unit {
    fn weight(&self, _: &K, _: &Arc<Entry<V>>) -> u64 {
        1
    }
}

/// An entry weighs its bytes: the capacity is a number of bytes, for answers whose size the
/// caller does not bound (a page of up to 1,000 comments).
#[derive(Clone, Copy, Default)]
pub struct ByLength;

impl<K> quick_cache::Weighter<K, Arc<Entry<bytes::Bytes>>> for ByLength {
    fn weight(&self, _: &K, entry: &Arc<Entry<bytes::Bytes>>) -> u64 {
        entry.value.len() as u64 + 64
    }
}

pub struct Entry<V> {
    stamp: Stamp,
    read_at: Instant,
    value: V,
}

impl<K, V> StampedCache<K, V>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    pub fn new(capacity: usize) -> Self {
        StampedCache {
            entries: quick_cache::sync::Cache::with_weighter(capacity, capacity as u64, Unit),
        }
    }
}

impl<K> StampedCache<K, bytes::Bytes, ByLength>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
{
    /// Kept answers of at most `bytes` in all (about `items` of them).
    pub fn with_bytes(items: usize, bytes: u64) -> Self {
        StampedCache {
            entries: quick_cache::sync::Cache::with_weighter(items, bytes, ByLength),
        }
    }
}

impl<K, V, W> StampedCache<K, V, W>
where
    K: Eq + Hash + Clone + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
    W: quick_cache::Weighter<K, Arc<Entry<V>>> + Clone + Send + Sync + 'static,
{
    /// The value kept for `key` if nothing has changed since it was read; otherwise what `read`
    /// finds, kept when it is Some.
    pub async fn get_or_read<E>(
        &self,
        db: &Db,
        key: K,
        read: impl FnOnce(&mut dyn Conn) -> Result<Option<V>, E> + Send + 'static,
    ) -> Result<Option<V>, E>
    where
        E: From<DbError> + Send + 'static,
    {
        // Taken before reading, so that a write committed while the read runs outdates it.
        self.get_or_read_at(db, db.stamp(), key, read).await
    }

    /// [`StampedCache::get_or_read`] with a stamp the caller took before (a request that reads
    /// several caches takes one: on SQLite each stamp is a query). An older stamp only makes
    /// an entry stale sooner.
    pub async fn get_or_read_at<E>(
        &self,
        db: &Db,
        stamp: Option<Stamp>,
        key: K,
        read: impl FnOnce(&mut dyn Conn) -> Result<Option<V>, E> + Send + 'static,
    ) -> Result<Option<V>, E>
    where
        E: From<DbError> + Send + 'static,
    {
        if let Some(stamp) = stamp
            && let Some(entry) = self.entries.get(&key)
            && entry.stamp == stamp
            && entry.read_at.elapsed() < MAX_AGE
        {
            return Ok(Some(entry.value.clone()));
        }
        let found = db.read(read).await?;
        if let (Some(stamp), Some(value)) = (stamp, &found) {
            let entry = Entry {
                stamp,
                read_at: Instant::now(),
                value: value.clone(),
            };
            self.entries.insert(key, Arc::new(entry));
        }
        Ok(found)
    }

    /// How full the cache is, for the metrics (weights in `unit`).
    pub fn size(&self, name: &'static str, unit: &'static str) -> CacheSize {
        CacheSize::of(name, unit, &self.entries)
    }
}

/// How full one of the process's caches is: `/metrics` shows it, so that an operator can see
/// where the server's memory goes.
#[derive(Clone, Debug)]
pub struct CacheSize {
    pub name: &'static str,
    /// What `weight` and `capacity` count: `bytes`, or `entries` (page entries of trees).
    pub unit: &'static str,
    pub items: usize,
    pub weight: u64,
    pub capacity: u64,
}

impl CacheSize {
    /// The size of a quick_cache cache.
    pub fn of<K, V, W, B, L>(
        name: &'static str,
        unit: &'static str,
        cache: &quick_cache::sync::Cache<K, V, W, B, L>,
    ) -> CacheSize
    where
        K: Eq + Hash,
        V: Clone,
        W: quick_cache::Weighter<K, V> + Clone,
        B: std::hash::BuildHasher + Clone,
        L: quick_cache::Lifecycle<K, V> + Clone,
    {
        CacheSize {
            name,
            unit,
            items: cache.len(),
            weight: cache.weight(),
            capacity: cache.capacity(),
        }
    }
}
