//! The file bytes each space stores, in the database beside the object store: one row per blob
//! (`file_blobs`: size, last upload) for storage quotas, and one row per revision that introduced
//! a reference to a blob (`file_refs`), so that a background job can remove the bytes nothing
//! reachable references any more without reading every revision.
//!
//! A blob is collected when it is not pinned, no reference keeps it (a revision of main, or of a
//! change request that is not archived, or was archived — last changed — within the file
//! retention) and it was neither uploaded nor committed into a batch within the retention.
//! Collection and uploads never race: a collector marks the row (`collecting_at`) in a
//! transaction before deleting the bytes and removes the row only after; uploads refuse a marked
//! row, touch an unmarked one (which a collector's conditional mark then skips), and the write
//! transaction of the batch touches it again, failing if it was marked meanwhile.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::Quota;
use crate::content::file_refs::record_refs;
use crate::content::store::{self, ContentCache};
use crate::db::{Args, Conn, Dialect};
use crate::error::{StoreError, StoreResult};
use crate::{Settings, Store, clock, jobs, params};

pub const COLLECT_JOB: &str = "collect_files";
/// A mark older than this belongs to a collector that stopped midway: another takes over.
const STALE_MARK_MS: i64 = 10 * 60_000;
/// Blobs examined per round of a collection.
const ROUND: i64 = 200;
const COMPLETE_KEY: &str = "file_refs_complete";

/// How often collection runs: as often as the retention, between once a minute and once an
/// hour.
pub fn collect_interval_ms(retention_ms: i64) -> i64 {
    retention_ms.clamp(60_000, 3_600_000)
}

/// Schedules the periodic collection unless it is scheduled already (every process calls this
/// at start; one job row serves them all).
pub fn schedule(c: &mut dyn Conn, run_at: i64) -> StoreResult<()> {
    jobs::enqueue_once(c, COLLECT_JOB, &serde_json::json!({}), run_at, COLLECT_JOB)
}

crate::columns! {
    /// A stored blob that the collection may remove.
    struct BlobCols of "file_blobs" {
        space_id: "space_id",
        hash: "hash",
        size: "size",
    }
}

fn busy(hash: &str) -> StoreError {
    StoreError::unavailable(format!(
        "the stored bytes of file {hash} are being removed as unreferenced: send the batch again in a minute"
    ))
}

fn i64_of(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The quotas an upload is checked against.
#[derive(Clone, Debug, Default)]
pub struct Quotas {
    pub space: Option<Quota>,
    pub org: Option<Quota>,
}

impl Quotas {
    pub fn of(settings: &Settings) -> Quotas {
        Quotas {
            space: settings.space_storage_quota.clone(),
            org: settings.org_storage_quota.clone(),
        }
    }
}

/// Before an upload: records the blobs (hash, size) about to be stored for the space, checking
/// the storage quotas against the bytes the space does not hold yet (413 above one), and
/// refuses blobs a collection is removing (503). Run in a write transaction; the bytes are
/// stored after it commits. Returns the blobs the space did not hold before.
pub fn reserve(
    c: &mut dyn Conn,
    quotas: &Quotas,
    space_id: &str,
    org_id: &str,
    blobs: &[(String, u64)],
    now: i64,
) -> StoreResult<Vec<String>> {
    let blobs: BTreeMap<&str, u64> = blobs.iter().map(|(h, s)| (h.as_str(), *s)).collect();
    if blobs.is_empty() {
        return Ok(Vec::new());
    }
    if (quotas.space.is_some() || quotas.org.is_some()) && c.dialect() == Dialect::Postgres {
        // Uploads of one organization check and record in turn, so that two of them never
        // both fit in the room left for one. (SQLite has a single writer anyway.)
        c.query(
            "SELECT pg_advisory_xact_lock(?1)",
            params![crate::db::advisory_key(&format!("quire-storage:{org_id}"))],
        )?;
    }
    let mut args = Args::default();
    let space = args.arg(space_id);
    let list = args.list(blobs.keys().copied());
    let stored: HashSet<String> = c
        .query(
            &format!("SELECT hash FROM file_blobs WHERE space_id = {space} AND hash IN ({list})"),
            args.values(),
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let new: Vec<String> = blobs
        .keys()
        .filter(|h| !stored.contains(**h))
        .map(|h| h.to_string())
        .collect();
    let added: u64 = new.iter().filter_map(|h| blobs.get(h.as_str())).sum();
    check_room(c, quotas, space_id, org_id, added)?;
    for (hash, size) in &blobs {
        let changed = c.execute(
            "INSERT INTO file_blobs (space_id, hash, size, touched_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (space_id, hash) DO UPDATE SET touched_at = excluded.touched_at
             WHERE file_blobs.collecting_at IS NULL",
            params![space_id, *hash, i64_of(*size), now],
        )?;
        if changed == 0 {
            return Err(busy(hash));
        }
    }
    Ok(new)
}

/// Whether `added` more bytes fit in the storage quotas of the space and of its organization
/// (413 naming the quota when not).
pub fn check_room(
    c: &mut dyn Conn,
    quotas: &Quotas,
    space_id: &str,
    org_id: &str,
    added: u64,
) -> StoreResult<()> {
    if added == 0 {
        return Ok(());
    }
    if let Some(quota) = &quotas.space {
        let used = space_bytes(c, space_id)?;
        check(quota, "space", space_id, used, added)?;
    }
    if let Some(quota) = &quotas.org {
        let used = org_bytes(c, org_id)?;
        check(quota, "organization", org_id, used, added)?;
    }
    Ok(())
}

/// After a batch failed before its transaction (a later file could not be fetched or did not
/// fit in a quota): removes the blobs it added to the space, unless another upload touched them
/// since (`touched` is the time it recorded them) or a revision references them. Best effort:
/// what is left is collected after the retention.
pub async fn release(store: &Store, space_id: &str, added: Vec<(String, i64)>) {
    for (hash, touched) in added {
        let now = clock::now_ms();
        let (s, h) = (space_id.to_string(), hash.clone());
        let claimed = store
            .db
            .write(move |c| {
                c.execute(
                    "UPDATE file_blobs SET collecting_at = ?4 WHERE space_id = ?1 AND hash = ?2 AND touched_at = ?3
                         AND collecting_at IS NULL AND pinned = 0
                         AND NOT EXISTS (SELECT 1 FROM file_refs r
                                         WHERE r.space_id = file_blobs.space_id AND r.hash = file_blobs.hash)",
                    params![s.clone(), h.clone(), touched, now],
                )
                .map_err(StoreError::from)
            })
            .await;
        let outcome = match claimed {
            Ok(0) => Ok(()),
            Ok(_) => match remove_claimed(store, space_id, &hash, now).await {
                // The batch failed because the bucket did: the bytes may not be removable
                // either. The mark would refuse the same file (503) until a collector takes
                // the mark over as stale; without it the row is an ordinary unreferenced blob
                // that collection removes after the retention, and the file can be sent again
                // as soon as the bucket is back.
                Err(e) => {
                    unmark(store, space_id, &hash, now).await;
                    Err(e)
                }
                done => done,
            },
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            tracing::warn!(space = %space_id, blob = %hash, error = %e, "cannot release the bytes of a failed batch");
        }
    }
}

/// Gives up a claim made with the mark `mark` (best effort: a mark left behind goes stale).
async fn unmark(store: &Store, space_id: &str, hash: &str, mark: i64) {
    let (s, h) = (space_id.to_string(), hash.to_string());
    let unmarked = store
        .db
        .write(move |c| {
            c.execute(
                "UPDATE file_blobs SET collecting_at = NULL WHERE space_id = ?1 AND hash = ?2 AND collecting_at = ?3",
                params![s.clone(), h.clone(), mark],
            )
            .map_err(StoreError::from)
        })
        .await;
    if let Err(e) = unmarked {
        tracing::warn!(space = %space_id, blob = %hash, error = %e, "cannot give up the claim on a blob");
    }
}

/// Deletes the bytes of a blob claimed with the mark `mark`, then its row.
async fn remove_claimed(store: &Store, space_id: &str, hash: &str, mark: i64) -> StoreResult<()> {
    store.blobs.delete(space_id, hash).await?;
    let (s, h) = (space_id.to_string(), hash.to_string());
    store
        .db
        .write(move |c| {
            c.execute(
                "DELETE FROM file_blobs WHERE space_id = ?1 AND hash = ?2 AND collecting_at = ?3",
                params![s.clone(), h.clone(), mark],
            )
            .map_err(StoreError::from)
        })
        .await?;
    Ok(())
}

fn check(quota: &Quota, what: &str, id: &str, used: u64, added: u64) -> StoreResult<()> {
    if used.saturating_add(added) <= quota.bytes {
        return Ok(());
    }
    Err(StoreError::too_large(format!(
        "these files would exceed the {what} storage quota of {} ({} bytes): {what} {id:?} stores {used} bytes of files and the upload adds {added}",
        quota.text, quota.bytes
    )))
}

/// The bytes of files a space stores (each blob once).
pub fn space_bytes(c: &mut dyn Conn, space_id: &str) -> StoreResult<u64> {
    Ok(c.query_scalar::<u64>(
        "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM file_blobs WHERE space_id = ?1",
        params![space_id],
    )?
    .unwrap_or(0))
}

/// The bytes of files the spaces of an organization store together.
pub fn org_bytes(c: &mut dyn Conn, org_id: &str) -> StoreResult<u64> {
    Ok(c.query_scalar::<u64>(
        "SELECT CAST(COALESCE(SUM(b.size), 0) AS BIGINT) FROM file_blobs b
         JOIN spaces s ON s.id = b.space_id WHERE s.organization_id = ?1",
        params![org_id],
    )?
    .unwrap_or(0))
}

/// In the write transaction of a batch: touches the blobs it references, so that no collection
/// takes them before the references are seen, and fails (503) if one was taken meanwhile.
pub fn confirm(c: &mut dyn Conn, space_id: &str, hashes: &[String], now: i64) -> StoreResult<()> {
    let distinct: BTreeSet<&str> = hashes.iter().map(String::as_str).collect();
    for hash in distinct {
        let changed = c.execute(
            "UPDATE file_blobs SET touched_at = ?3 WHERE space_id = ?1 AND hash = ?2 AND collecting_at IS NULL",
            params![space_id, hash, now],
        )?;
        if changed == 0 {
            return Err(busy(hash));
        }
    }
    Ok(())
}

/// Records blobs stored outside an upload batch (an operator's import), without quota checks.
pub fn record_stored(c: &mut dyn Conn, space_id: &str, blobs: &[(String, u64)], now: i64) -> StoreResult<()> {
    reserve(c, &Quotas::default(), space_id, "", blobs, now).map(drop)
}

/// What a collection did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Collected {
    pub blobs: u64,
    pub bytes: u64,
}

/// A reference that keeps a blob of `file_blobs` (the row in scope): from main, or from a
/// change request that is not archived or was last changed at `cutoff` or later.
fn kept(cutoff: &str) -> String {
    format!(
        "EXISTS (SELECT 1 FROM file_refs r LEFT JOIN change_requests cr ON cr.id = r.change_request_id
                 WHERE r.space_id = file_blobs.space_id AND r.hash = file_blobs.hash
                   AND (r.change_request_id IS NULL OR cr.status <> 'archived' OR cr.updated_at >= {cutoff}))"
    )
}

/// Removes the bytes of blobs that nothing reachable references and that were not touched
/// within the retention before `now`. Idempotent, and safe with several collectors and
/// concurrent uploads (see the module documentation).
pub async fn collect(store: &Store, now: i64) -> StoreResult<Collected> {
    backfill(store, now).await?;
    let cutoff = now.saturating_sub(store.settings.file_retention_ms);
    let stale = now.saturating_sub(STALE_MARK_MS);
    // Bytes main or a merged change request references stay for good: never look at them again.
    store
        .db
        .write(move |c| {
            c.execute(
                "UPDATE file_blobs SET pinned = 1 WHERE pinned = 0 AND EXISTS (
                     SELECT 1 FROM file_refs r LEFT JOIN change_requests cr ON cr.id = r.change_request_id
                     WHERE r.space_id = file_blobs.space_id AND r.hash = file_blobs.hash
                       AND (r.change_request_id IS NULL OR cr.status = 'merged'))",
                params![],
            )
            .map_err(StoreError::from)
        })
        .await?;
    let collectable = format!(
        "pinned = 0 AND ((collecting_at IS NULL AND touched_at < ?1 AND NOT {}) OR collecting_at < ?2)",
        kept("?1")
    );
    let mut done = Collected::default();
    for _ in 0..10_000 {
        let sql = format!(
            "SELECT {} FROM file_blobs WHERE {collectable} LIMIT {ROUND}",
            BlobCols::SQL
        );
        let candidates: Vec<(String, String, u64)> = store
            .db
            .read_blocking(move |c| {
                c.query(&sql, params![cutoff, stale])?
                    .iter()
                    .map(|r| {
                        const B: BlobCols = BlobCols::AT;
                        Ok((r.col(B.space_id)?, r.col(B.hash)?, r.col(B.size)?))
                    })
                    .collect::<Result<Vec<_>, crate::db::DbError>>()
            })
            .await?;
        if candidates.is_empty() {
            break;
        }
        let mut progressed = false;
        for (space_id, hash, size) in candidates {
            let claim = format!(
                "UPDATE file_blobs SET collecting_at = ?3 WHERE space_id = ?4 AND hash = ?5 AND {collectable}"
            );
            let (s, h) = (space_id.clone(), hash.clone());
            let claimed = store
                .db
                .write(move |c| {
                    c.execute(&claim, params![cutoff, stale, now, s.clone(), h.clone()])
                        .map_err(StoreError::from)
                })
                .await?;
            if claimed == 0 {
                // Touched or referenced meanwhile, or taken by another collector.
                continue;
            }
            remove_claimed(store, &space_id, &hash, now).await?;
            tracing::info!(space = %space_id, blob = %hash, size, "removed unreferenced file bytes");
            done.blobs += 1;
            done.bytes += size;
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    Ok(done)
}

/// The collection job: collects, then runs again after the interval.
pub async fn run_collect_job(store: &Store) -> StoreResult<i64> {
    let now = clock::now_ms();
    let done = collect(store, now).await?;
    if done.blobs > 0 {
        tracing::info!(
            blobs = done.blobs,
            bytes = done.bytes,
            "collected unreferenced file bytes"
        );
    }
    Ok(clock::now_ms().saturating_add(collect_interval_ms(store.settings.file_retention_ms)))
}

/// Indexes the blobs of revisions written before `file_refs` existed, once per database, so
/// that collection never takes bytes an old revision references and quotas count them.
async fn backfill(store: &Store, now: i64) -> StoreResult<()> {
    let complete = store
        .db
        .read_blocking(|c| {
            c.exists("SELECT 1 FROM settings WHERE key = ?1", params![COMPLETE_KEY])
                .map_err(StoreError::from)
        })
        .await?;
    if complete {
        return Ok(());
    }
    let spaces: Vec<String> = store
        .db
        .read_blocking(|c| {
            c.query("SELECT id FROM spaces ORDER BY id", params![])?
                .iter()
                .map(|r| r.get(0))
                .collect::<Result<Vec<String>, _>>()
                .map_err(StoreError::from)
        })
        .await?;
    tracing::info!(spaces = spaces.len(), "indexing the files of existing revisions");
    // A cache of its own: these trees are read once and would evict the ones being served.
    let cache = std::sync::Arc::new(ContentCache::default());
    for space_id in spaces {
        let cache = cache.clone();
        store
            .db
            .write(move |c| backfill_space(c, &cache, &space_id, now))
            .await?;
    }
    store
        .db
        .write(|c| {
            c.execute(
                "INSERT INTO settings (key, value) VALUES (?1, '1') ON CONFLICT (key) DO NOTHING",
                params![COMPLETE_KEY],
            )
            .map_err(StoreError::from)
        })
        .await?;
    Ok(())
}

fn backfill_space(c: &mut dyn Conn, cache: &ContentCache, space_id: &str, now: i64) -> StoreResult<()> {
    let revisions: Vec<String> = c
        .query("SELECT id FROM revisions WHERE space_id = ?1", params![space_id])?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
    for id in revisions {
        let tree = store::load_tree(c, cache, space_id, &id)?;
        let base = match tree.meta.parents.first() {
            // A parent in another space (the one this space was duplicated from) is not found
            // here, and then every file counts as introduced; any other failure is an error.
            Some(parent) => match store::load_tree(c, cache, space_id, parent) {
                Ok(base) => Some(base),
                Err(e) if e.kind == crate::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            },
            None => None,
        };
        record_refs(
            c,
            space_id,
            &id,
            tree.meta.change_request.as_deref(),
            base.as_ref().map(|b| &b.tree),
            &tree.tree,
        )?;
        for f in tree.tree.files.values() {
            sizes.insert(f.blob.clone(), f.size);
        }
    }
    for (hash, size) in sizes {
        c.execute(
            "INSERT INTO file_blobs (space_id, hash, size, touched_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (space_id, hash) DO NOTHING",
            params![space_id, hash, i64_of(size), now],
        )?;
    }
    Ok(())
}

/// Largest file accepted as base64 in a content batch.
pub const MAX_BASE64_BYTES: usize = 1024 * 1024;
/// Largest file fetched from a URL.
pub const MAX_FETCH_BYTES: usize = 25 * 1024 * 1024;

/// Describes and stores a file's bytes: its entry for a revision.
pub async fn store_file(
    blobs: &dyn crate::blobs::Blobs,
    space_id: &str,
    name: &str,
    content_type: &str,
    bytes: bytes::Bytes,
) -> StoreResult<quire_content::tree::FileEntry> {
    let hash = quire_content::buckets::content_hash(&bytes);
    let entry = file_entry(name, content_type, &bytes, hash);
    blobs.put_hashed(space_id, &entry.blob, bytes).await?;
    Ok(entry)
}

/// Describes a file (its revision entry) whose bytes hash to `hash`.
pub fn file_entry(
    name: &str,
    content_type: &str,
    bytes: &[u8],
    hash: String,
) -> quire_content::tree::FileEntry {
    let size = bytes.len() as u64;
    let dimensions = content_type
        .starts_with("image/")
        .then(|| imagesize::blob_size(bytes).ok())
        .flatten()
        .and_then(|d| {
            Some(quire_content::tree::Dimensions {
                width: u32::try_from(d.width).ok()?,
                height: u32::try_from(d.height).ok()?,
            })
        });
    quire_content::tree::FileEntry {
        id: crate::ids::new_id(),
        name: name.to_string(),
        content_type: content_type.to_string(),
        size,
        blob: hash,
        dimensions,
        created_at: clock::now_ms(),
    }
}
