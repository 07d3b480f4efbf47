//! Answers of hot point reads kept in memory between requests, each with the database
//! [`Stamp`] taken before it was read, and reused only while [`Db::stamp`] still returns that
//! stamp: a write seen by this process (any write on SQLite; on PostgreSQL its own at once and
//! other processes' when their notification arrives, see `db::changes`) makes every entry
//! stale. Entries also expire after `MAX_AGE`, which bounds what a notification lost with a
//! connection that died silently could cost.
//!
//! A miss reads once however many requests want the key at that moment: every write makes every
//! entry stale at once, and a popular key would otherwise be read again by each request that
//! misses it before the first read ends. The first caller to miss a key at a stamp reads it;
//! callers that miss the same key at the same stamp meanwhile wait for that read
//! (asynchronously: SQLite reads run inline on the runtime's threads) and take its answer.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::db::{Conn, Db, DbError, Stamp};

const MAX_AGE: Duration = Duration::from_secs(5);

pub struct StampedCache<K, V, W = Unit> {
    entries: quick_cache::sync::Cache<K, Arc<Entry<V>>, W>,
    flights: Flights<K, V>,
}

/// The reads under way, by key and the stamp they were taken at, each with the channel its
/// waiters listen on. A read leaves it when it ends, however it ends (see [`Flight`]), so it
/// holds at most one entry per read running now.
type Flights<K, V> = Mutex<HashMap<(K, Stamp), watch::Sender<Option<Landing<V>>>>>;

/// How a read that others waited on ended (None in the channel while it runs).
#[derive(Clone)]
enum Landing<V> {
    /// What the read found, kept or not.
    Found(Option<V>),
    /// The read failed or panicked.
    Failed,
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
            flights: Mutex::default(),
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
            flights: Mutex::default(),
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
    /// finds, kept when it is Some. Concurrent misses of `key` share one read (see the module
    /// documentation).
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
        // Not polled unless this caller is the one that reads.
        self.get_or_load(stamp, key, db.read(read)).await
    }

    /// The value kept for `key` at `stamp`, else what `load` finds, which waiting callers share.
    async fn get_or_load<E>(
        &self,
        stamp: Option<Stamp>,
        key: K,
        load: impl Future<Output = Result<Option<V>, E>>,
    ) -> Result<Option<V>, E> {
        // Without a stamp nothing can be told current: an answer is neither kept nor shared.
        let Some(stamp) = stamp else {
            return load.await;
        };
        if let Some(value) = self.kept(&key, stamp) {
            return Ok(Some(value));
        }
        let flight = loop {
            let mut landing = match self.board(&key, stamp) {
                Boarding::Kept(value) => return Ok(Some(value)),
                Boarding::Lead(flight) => break Some(flight),
                Boarding::Wait(landing) => landing,
            };
            // Copied out at once: the borrow holds the channel's lock.
            let landed = landing
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|l| (*l).clone());
            match landed {
                Some(Landing::Found(found)) => return Ok(found),
                // The reader's error cannot be handed on (errors are not Clone), and need not be
                // this caller's (a pool timeout): read alone, as every caller did before reads
                // were shared. A retry through a new shared read instead would, for an error
                // that repeats (a refusal, a panic), fail the waiters one after another.
                Some(Landing::Failed) => break None,
                // The reader was cancelled before it ended (its request went away): board
                // again, and one of its waiters reads instead.
                None => continue,
            }
        };
        let found = load.await;
        if let Ok(Some(value)) = &found {
            // Kept before the read leaves `flights`: see `board`.
            self.keep(key, stamp, value.clone());
        }
        if let Some(flight) = flight {
            flight.land(&found);
        }
        found
    }

    /// The value kept for `key`, if it was read at `stamp` and is not too old.
    fn kept(&self, key: &K, stamp: Stamp) -> Option<V> {
        let entry = self.entries.get(key)?;
        (entry.stamp == stamp && entry.read_at.elapsed() < MAX_AGE).then(|| entry.value.clone())
    }

    fn keep(&self, key: K, stamp: Stamp, value: V) {
        let entry = Entry {
            stamp,
            read_at: Instant::now(),
            value,
        };
        self.entries.insert(key, Arc::new(entry));
    }

    /// Joins the read of `key` at `stamp` under way, or starts it. Only a read at the caller's
    /// own stamp is joined: one at an older stamp may have begun before a write the caller has
    /// seen (its own, just committed).
    fn board(&self, key: &K, stamp: Stamp) -> Boarding<'_, K, V> {
        let flight_key = (key.clone(), stamp);
        let mut flights = self.flights.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(sender) = flights.get(&flight_key) {
            return Boarding::Wait(sender.subscribe());
        }
        // Asked again under the lock: a read keeps its value before it leaves `flights`, so a
        // caller that missed just before that read ended finds the value here rather than
        // reading again.
        if let Some(value) = self.kept(key, stamp) {
            return Boarding::Kept(value);
        }
        flights.insert(flight_key.clone(), watch::Sender::new(None));
        Boarding::Lead(Flight {
            flights: &self.flights,
            key: Some(flight_key),
        })
    }

    /// How full the cache is, for the metrics (weights in `unit`).
    pub fn size(&self, name: &'static str, unit: &'static str) -> CacheSize {
        CacheSize::of(name, unit, &self.entries)
    }
}

enum Boarding<'a, K: Eq + Hash, V> {
    Kept(V),
    /// This caller reads, and hands what it finds to the callers that join meanwhile.
    Lead(Flight<'a, K, V>),
    /// Another caller reads: its answer arrives on this channel.
    Wait(watch::Receiver<Option<Landing<V>>>),
}

/// A read under way, held by the caller that runs it. However that caller stops, the read
/// leaves `flights` and its waiters learn of it, so that none waits for a read nobody runs:
/// [`Flight::land`] hands on its answer; dropped unlanded (the caller's future was cancelled,
/// or its read panicked), it closes the channel.
struct Flight<'a, K: Eq + Hash, V> {
    flights: &'a Flights<K, V>,
    /// None once it has left.
    key: Option<(K, Stamp)>,
}

impl<K: Eq + Hash, V: Clone> Flight<'_, K, V> {
    /// Leaves `flights` and hands `found` to the waiters.
    fn land<E>(mut self, found: &Result<Option<V>, E>) {
        if let Some(sender) = self.leave()
            && sender.receiver_count() > 0
        {
            sender.send_replace(Some(match found {
                Ok(found) => Landing::Found(found.clone()),
                Err(_) => Landing::Failed,
            }));
        }
    }
}

impl<K: Eq + Hash, V> Flight<'_, K, V> {
    fn leave(&mut self) -> Option<watch::Sender<Option<Landing<V>>>> {
        let key = self.key.take()?;
        self.flights
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key)
    }
}

impl<K: Eq + Hash, V> Drop for Flight<'_, K, V> {
    fn drop(&mut self) {
        let Some(sender) = self.leave() else {
            return;
        };
        // A read that panicked would most likely panic again: its waiters read alone, as after
        // an error, rather than boarding again to panic one after another. A cancelled read
        // just closes the channel, and its waiters board again.
        if std::thread::panicking() {
            sender.send_replace(Some(Landing::Failed));
        }
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    type Cache = StampedCache<&'static str, u32>;
    type Answer = Result<Option<u32>, &'static str>;

    /// A read that counts itself and, given a gate, waits until it opens before answering.
    fn read(
        loads: &Arc<AtomicUsize>,
        gate: Option<watch::Receiver<bool>>,
        answer: Answer,
    ) -> impl Future<Output = Answer> + Send + 'static {
        let loads = loads.clone();
        async move {
            loads.fetch_add(1, Ordering::SeqCst);
            if let Some(mut gate) = gate {
                gate.wait_for(|open| *open).await.ok();
            }
            answer
        }
    }

    async fn panicking(read: impl Future<Output = Answer>) -> Answer {
        let found = read.await;
        panic!("a read that panics after finding {found:?}")
    }

    fn waiting(cache: &Cache, key: &'static str, stamp: Stamp) -> usize {
        let flights = cache.flights.lock().unwrap();
        flights
            .get(&(key, stamp))
            .map_or(0, |sender| sender.receiver_count())
    }

    /// `load` as a task of its own, for the key "space" at `stamp`.
    fn spawn_load(
        cache: &Arc<Cache>,
        stamp: Stamp,
        load: impl Future<Output = Answer> + Send + 'static,
    ) -> tokio::task::JoinHandle<Answer> {
        let cache = cache.clone();
        tokio::spawn(async move { cache.get_or_load(Some(stamp), "space", load).await })
    }

    /// Counted with the waiting ones, so that a regression fails the test rather than hang it.
    fn finished<T>(tasks: &[tokio::task::JoinHandle<T>]) -> usize {
        tasks.iter().filter(|task| task.is_finished()).count()
    }

    fn flying(cache: &Cache) -> usize {
        cache.flights.lock().unwrap().len()
    }

    /// Lets the spawned tasks run (the test runtime has one thread) until `done` holds. Each
    /// round polls every task that can move, so this ends once they all have reached the read
    /// or the wait this test is after, whatever the implementation does.
    async fn until(mut done: impl FnMut() -> bool) {
        while !done() {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn concurrent_readers_of_a_stale_key_share_one_load() {
        let cache = Arc::new(Cache::new(10));
        let loads = Arc::new(AtomicUsize::new(0));
        let found = cache.get_or_load(Some(Stamp::after(0)), "space", read(&loads, None, Ok(Some(1))));
        assert_eq!(found.await, Ok(Some(1)));

        // A write: the kept entry is stale.
        let stale = Stamp::after(1);
        let (open, gate) = watch::channel(false);
        let readers: Vec<_> = (0..32)
            .map(|_| spawn_load(&cache, stale, read(&loads, Some(gate.clone()), Ok(Some(2)))))
            .collect();
        until(|| loads.load(Ordering::SeqCst) - 1 + waiting(&cache, "space", stale) == 32).await;
        open.send_replace(true);
        for reader in readers {
            assert_eq!(reader.await.unwrap(), Ok(Some(2)));
        }
        assert_eq!(
            loads.load(Ordering::SeqCst),
            2,
            "one load before the write, one after"
        );
        assert_eq!(flying(&cache), 0);
        let kept = cache.get_or_load(Some(stale), "space", read(&loads, None, Err("not read")));
        assert_eq!(kept.await, Ok(Some(2)));
    }

    #[tokio::test]
    async fn a_failed_load_is_not_kept_and_the_next_call_loads_again() {
        let cache = Cache::new(10);
        let loads = Arc::new(AtomicUsize::new(0));
        let stamp = Some(Stamp::after(0));
        let failed = cache.get_or_load(stamp, "space", read(&loads, None, Err("down")));
        assert_eq!(failed.await, Err("down"));
        assert_eq!(flying(&cache), 0);
        let found = cache.get_or_load(stamp, "space", read(&loads, None, Ok(Some(3))));
        assert_eq!(found.await, Ok(Some(3)));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        let kept = cache.get_or_load(stamp, "space", read(&loads, None, Err("not read")));
        assert_eq!(kept.await, Ok(Some(3)));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn waiters_of_a_failed_load_read_for_themselves() {
        let cache = Arc::new(Cache::new(10));
        let loads = Arc::new(AtomicUsize::new(0));
        let stamp = Stamp::after(0);
        let (open, gate) = watch::channel(false);
        let load = read(&loads, Some(gate), Err("down"));
        let leader = spawn_load(&cache, stamp, load);
        until(|| loads.load(Ordering::SeqCst) == 1).await;
        let waiters: Vec<_> = (0..3)
            .map(|_| spawn_load(&cache, stamp, read(&loads, None, Ok(Some(4)))))
            .collect();
        until(|| waiting(&cache, "space", stamp) + finished(&waiters) == 3).await;
        open.send_replace(true);
        assert_eq!(leader.await.unwrap(), Err("down"));
        for waiter in waiters {
            assert_eq!(waiter.await.unwrap(), Ok(Some(4)));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 4);
        assert_eq!(flying(&cache), 0);
    }

    #[tokio::test]
    async fn waiters_of_a_cancelled_load_share_a_new_one() {
        let cache = Arc::new(Cache::new(10));
        let loads = Arc::new(AtomicUsize::new(0));
        let stamp = Stamp::after(0);
        // Never opened: the leader is cancelled while it reads.
        let (_never, gate) = watch::channel(false);
        let load = read(&loads, Some(gate), Ok(Some(1)));
        let leader = spawn_load(&cache, stamp, load);
        until(|| loads.load(Ordering::SeqCst) == 1).await;
        let (open, gate) = watch::channel(false);
        let waiters: Vec<_> = (0..3)
            .map(|_| spawn_load(&cache, stamp, read(&loads, Some(gate.clone()), Ok(Some(5)))))
            .collect();
        // Each waiter is reading, waiting or done (the leader's read is left out of the count).
        let others =
            || loads.load(Ordering::SeqCst) - 1 + waiting(&cache, "space", stamp) + finished(&waiters);
        until(|| others() == 3).await;
        leader.abort();
        assert!(leader.await.unwrap_err().is_cancelled());
        // Its read has left the map, which now counts the waiters of the next one: they board
        // again, and one reads while the others wait for it.
        until(|| others() == 3).await;
        open.send_replace(true);
        for waiter in waiters {
            assert_eq!(waiter.await.unwrap(), Ok(Some(5)));
        }
        assert_eq!(
            loads.load(Ordering::SeqCst),
            2,
            "the cancelled load and one of a waiter"
        );
        assert_eq!(flying(&cache), 0);
    }

    #[tokio::test]
    async fn waiters_of_a_panicked_load_read_for_themselves() {
        let cache = Arc::new(Cache::new(10));
        let loads = Arc::new(AtomicUsize::new(0));
        let stamp = Stamp::after(0);
        let (open, gate) = watch::channel(false);
        let load = panicking(read(&loads, Some(gate), Ok(Some(1))));
        let leader = spawn_load(&cache, stamp, load);
        until(|| loads.load(Ordering::SeqCst) == 1).await;
        let waiters: Vec<_> = (0..3)
            .map(|_| spawn_load(&cache, stamp, read(&loads, None, Ok(Some(6)))))
            .collect();
        until(|| waiting(&cache, "space", stamp) + finished(&waiters) == 3).await;
        open.send_replace(true);
        assert!(leader.await.unwrap_err().is_panic());
        for waiter in waiters {
            assert_eq!(waiter.await.unwrap(), Ok(Some(6)));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 4);
        assert_eq!(flying(&cache), 0);
    }

    #[tokio::test]
    async fn a_read_at_an_older_stamp_is_not_shared_with_a_newer_one() {
        let cache = Arc::new(Cache::new(10));
        let loads = Arc::new(AtomicUsize::new(0));
        let (open, gate) = watch::channel(false);
        let load = read(&loads, Some(gate), Ok(Some(1)));
        let before = tokio::spawn({
            let cache = cache.clone();
            async move { cache.get_or_load(Some(Stamp::after(0)), "space", load).await }
        });
        until(|| loads.load(Ordering::SeqCst) == 1).await;
        // A caller that has seen a write reads on its own, while the older read still waits.
        let after = cache.get_or_load(Some(Stamp::after(1)), "space", read(&loads, None, Ok(Some(2))));
        assert_eq!(after.await, Ok(Some(2)));
        open.send_replace(true);
        assert_eq!(before.await.unwrap(), Ok(Some(1)));
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        assert_eq!(flying(&cache), 0);
    }

    #[tokio::test]
    async fn without_a_stamp_every_caller_reads() {
        let cache = Cache::new(10);
        let loads = Arc::new(AtomicUsize::new(0));
        for _ in 0..2 {
            let found = cache.get_or_load(None, "space", read(&loads, None, Ok(Some(7))));
            assert_eq!(found.await, Ok(Some(7)));
        }
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        assert_eq!(flying(&cache), 0);
    }
}
