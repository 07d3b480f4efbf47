//! PDF exports of a space's content: a revision (main's or a change request's), from one page
//! or the whole space, typeset once by the `pdf_render` job and kept for every later request.
//!
//! A request makes (or finds) the export's row, keyed by revision, starting page, `only` and
//! [`TYPESETTING`], and schedules the job (dedupe key `pdf:{id}`) while the row is pending.
//! The job asks the [`Typesetter`] (the HTTP service's, which knows URLs and the typesetting
//! crate) for the bytes, stores them in the space's blobs under their hash, and marks the row
//! ready in one statement that only a pending row takes: a crash anywhere before leaves the
//! row pending and the job leased, the lease expires, the job runs again, and the same bytes
//! are stored under the same hash. Content that cannot be typeset at all (more pages than a PDF
//! may have) marks the row failed, with why; a failed export is tried again by a request after
//! [`RETRY_FAILED_MS`].
//!
//! Exports nobody asked for within [`RETENTION_MS`] are removed with their bytes by the
//! periodic `pdf_prune` job; a space's purge removes its blobs and rows with it.

use std::future::Future;
use std::pin::Pin;

use serde_json::json;

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Authorized, space};
use crate::spaces::SpaceFor;
use crate::{Store, clock, ids, jobs, params};

pub const RENDER_JOB: &str = "pdf_render";
pub const PRUNE_JOB: &str = "pdf_prune";
/// The version of the typesetting: PDFs typeset by an older one are not reused.
pub const TYPESETTING: i64 = 1;
/// How long an export nobody asks for is kept.
pub const RETENTION_MS: i64 = 7 * 24 * 3_600_000;
/// How often the pruning runs.
const PRUNE_INTERVAL_MS: i64 = 3_600_000;
/// How long a failed export stands before a request tries it again.
pub const RETRY_FAILED_MS: i64 = 10 * 60_000;
/// Exports removed per pruning round (one short transaction each).
const PRUNE_ROUND: i64 = 200;
/// Rounds per pruning run; what is left waits for the next run.
const MAX_PRUNE_ROUNDS: usize = 100;

/// Where an export stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportState {
    Pending,
    Ready,
    Failed,
}

impl ExportState {
    fn as_str(self) -> &'static str {
        match self {
            ExportState::Pending => "pending",
            ExportState::Ready => "ready",
            ExportState::Failed => "failed",
        }
    }

    fn parse(text: &str) -> Option<ExportState> {
        match text {
            "pending" => Some(ExportState::Pending),
            "ready" => Some(ExportState::Ready),
            "failed" => Some(ExportState::Failed),
            _ => None,
        }
    }
}

/// What a PDF is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub revision_id: String,
    /// The revision's change request, when it is one's.
    pub change_request_id: Option<String>,
    /// The page the PDF starts at (None: the whole space).
    pub page_id: Option<String>,
    /// Only that page, not its children.
    pub only: bool,
}

/// An export's row.
#[derive(Clone, Debug)]
pub struct Export {
    pub id: String,
    pub space_id: String,
    pub scope: Scope,
    pub state: ExportState,
    /// The PDF's blob in the space, its size and its pages (ready).
    pub hash: Option<String>,
    pub size: Option<i64>,
    pub pages: Option<i64>,
    /// Why it could not be typeset (failed).
    pub error: Option<String>,
    pub finished_at: Option<i64>,
}

crate::columns! {
    /// The columns [`Export::from_row`] reads.
    pub struct ExportCols of "pdf_exports" {
        id: "id",
        space_id: "space_id",
        revision_id: "revision_id",
        change_request_id: "change_request_id",
        page_id: "page_id",
        only_page: "only_page",
        state: "state",
        hash: "hash",
        size: "size",
        pages: "pages",
        error: "error",
        finished_at: "finished_at",
    }
}

impl Export {
    fn from_row(row: &Row) -> Result<Export, DbError> {
        const E: ExportCols = ExportCols::AT;
        let id: String = row.col(E.id)?;
        let state: String = row.col(E.state)?;
        let state = ExportState::parse(&state)
            .ok_or_else(|| DbError::stored(format_args!("state of PDF export {id:?}"), &state))?;
        let page_id: String = row.col(E.page_id)?;
        let only: i64 = row.col(E.only_page)?;
        Ok(Export {
            space_id: row.col(E.space_id)?,
            scope: Scope {
                revision_id: row.col(E.revision_id)?,
                change_request_id: row.col(E.change_request_id)?,
                page_id: (!page_id.is_empty()).then_some(page_id),
                only: only != 0,
            },
            state,
            hash: row.col(E.hash)?,
            size: row.col(E.size)?,
            pages: row.col(E.pages)?,
            error: row.col(E.error)?,
            finished_at: row.col(E.finished_at)?,
            id,
        })
    }
}

/// A typeset PDF.
pub struct Typeset {
    pub bytes: Vec<u8>,
    pub pages: usize,
}

/// What a [`Typesetter`] made of an export.
pub enum Outcome {
    Typeset(Typeset),
    /// The content cannot be typeset: the export fails, with why.
    Refused(String),
    /// The process typesets another PDF (one at a time bounds the memory it takes): the job
    /// runs again shortly, without holding its lease meanwhile.
    Busy,
}

/// What a [`Typesetter`] answers: Err when it could not work (the database or the blobs
/// failed), and the job is retried with backoff.
pub type TypesetFuture<'a> = Pin<Box<dyn Future<Output = StoreResult<Outcome>> + Send + 'a>>;

/// How soon a job put off by a busy typesetter runs again.
const BUSY_RETRY_MS: i64 = 500;

/// Typesets exports (the HTTP service's, which knows the URLs a PDF links to).
pub trait Typesetter: Send + Sync {
    fn typeset<'a>(&'a self, store: &'a Store, export: &'a Export) -> TypesetFuture<'a>;
}

/// For a store that typesets nothing (tools and tests of this crate).
pub struct NoTypesetter;

impl Typesetter for NoTypesetter {
    fn typeset<'a>(&'a self, _: &'a Store, _: &'a Export) -> TypesetFuture<'a> {
        Box::pin(async { Ok(Outcome::Refused("this quire typesets no PDFs".to_string())) })
    }
}

fn job_key(export_id: &str) -> String {
    format!("pdf:{export_id}")
}

fn schedule_render(c: &mut dyn Conn, export_id: &str, now: i64) -> StoreResult<()> {
    jobs::enqueue_once(
        c,
        RENDER_JOB,
        &json!({ "export": export_id }),
        now,
        &job_key(export_id),
    )
}

fn select(c: &mut dyn Conn, filter: &str, args: &[crate::db::Value]) -> StoreResult<Option<Export>> {
    let sql = format!("SELECT {} FROM pdf_exports WHERE {filter}", ExportCols::SQL);
    c.query_opt(&sql, args)?
        .map(|row| Export::from_row(&row))
        .transpose()
        .map_err(StoreError::from)
}

/// The export of `scope` for a caller who may read the space: the one made before, or a new
/// one with its typesetting scheduled. A pending export whose job is gone (dropped after its
/// attempts) is scheduled again, and so is one that failed more than [`RETRY_FAILED_MS`] ago.
pub fn request(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::View>,
    scope: &Scope,
    now: i64,
) -> StoreResult<Export> {
    let space_id = space.space.id.as_str();
    let page = scope.page_id.as_deref().unwrap_or("");
    let only = i64::from(scope.only);
    c.execute(
        "INSERT INTO pdf_exports (id, space_id, revision_id, page_id, only_page, typesetting,
             change_request_id, state, created_at, requested_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8)
         ON CONFLICT (space_id, revision_id, page_id, only_page, typesetting)
         DO UPDATE SET requested_at = excluded.requested_at",
        params![
            ids::new_id(),
            space_id,
            scope.revision_id.as_str(),
            page,
            only,
            TYPESETTING,
            scope.change_request_id.as_deref(),
            now
        ],
    )?;
    let found = select(
        c,
        "space_id = ?1 AND revision_id = ?2 AND page_id = ?3 AND only_page = ?4 AND typesetting = ?5",
        params![space_id, scope.revision_id.as_str(), page, only, TYPESETTING],
    )?;
    let mut export = found.ok_or_else(|| StoreError::internal("a PDF export written is not there"))?;
    let stale_failure = export.state == ExportState::Failed
        && export
            .finished_at
            .is_none_or(|at| at < now.saturating_sub(RETRY_FAILED_MS));
    if stale_failure {
        c.execute(
            "UPDATE pdf_exports SET state = 'pending', error = NULL, finished_at = NULL WHERE id = ?1",
            params![export.id.as_str()],
        )?;
        export.state = ExportState::Pending;
        export.error = None;
        export.finished_at = None;
    }
    if export.state == ExportState::Pending {
        schedule_render(c, &export.id, now)?;
    }
    Ok(export)
}

/// An export by id (for its signed download link, which is its authorization).
pub fn load(c: &mut dyn Conn, export_id: &str) -> StoreResult<Option<Export>> {
    select(c, "id = ?1", params![export_id])
}

/// Makes a ready export whose bytes are gone pending again, with its job scheduled.
pub fn retypeset(c: &mut dyn Conn, export_id: &str, now: i64) -> StoreResult<()> {
    let changed = c.execute(
        "UPDATE pdf_exports SET state = 'pending', hash = NULL, size = NULL, pages = NULL, finished_at = NULL
         WHERE id = ?1 AND state = 'ready'",
        params![export_id],
    )?;
    if changed > 0 {
        schedule_render(c, export_id, now)?;
    }
    Ok(())
}

/// The render job: typesets a pending export and records the result.
pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let export_id = payload
        .get("export")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| StoreError::internal(format!("{RENDER_JOB} payload without `export`: {payload}")))?
        .to_string();
    let id = export_id.clone();
    let Some(export) = store.db.read(move |c| load(c, &id)).await? else {
        return Ok(None);
    };
    if export.state != ExportState::Pending {
        return Ok(None);
    }
    let started = clock::now_ms();
    match store.typesetter.typeset(store, &export).await? {
        Outcome::Busy => return Ok(Some(clock::now_ms().saturating_add(BUSY_RETRY_MS))),
        Outcome::Typeset(typeset) => {
            let hash = quire_content::buckets::content_hash(&typeset.bytes);
            let size = i64::try_from(typeset.bytes.len()).unwrap_or(i64::MAX);
            let pages = i64::try_from(typeset.pages).unwrap_or(i64::MAX);
            store
                .blobs
                .put_hashed(&export.space_id, &hash, typeset.bytes.into())
                .await?;
            tracing::info!(
                export = %export.id,
                space = %export.space_id,
                pages,
                bytes = size,
                ms = clock::now_ms() - started,
                "typeset a PDF"
            );
            store
                .db
                .write(move |c| {
                    c.execute(
                        "UPDATE pdf_exports SET state = ?2, hash = ?3, size = ?4, pages = ?5, finished_at = ?6
                         WHERE id = ?1 AND state = 'pending'",
                        params![
                            export_id.as_str(),
                            ExportState::Ready.as_str(),
                            hash.as_str(),
                            size,
                            pages,
                            clock::now_ms()
                        ],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
        Outcome::Refused(why) => {
            tracing::warn!(export = %export.id, space = %export.space_id, error = %why, "a PDF could not be typeset");
            store
                .db
                .write(move |c| {
                    c.execute(
                        "UPDATE pdf_exports SET state = ?2, error = ?3, finished_at = ?4
                         WHERE id = ?1 AND state = 'pending'",
                        params![
                            export_id.as_str(),
                            ExportState::Failed.as_str(),
                            why.as_str(),
                            clock::now_ms()
                        ],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
    }
    Ok(None)
}

/// Schedules the periodic pruning unless it is scheduled already (every process calls this at
/// start; one job row serves them all).
pub fn schedule_pruning(c: &mut dyn Conn, now: i64) -> StoreResult<()> {
    jobs::enqueue_once(
        c,
        PRUNE_JOB,
        &json!({}),
        now.saturating_add(PRUNE_INTERVAL_MS),
        PRUNE_JOB,
    )
}

/// Removes the exports nobody asked for since `cutoff` (Unix ms), with their bytes unless a
/// file of the space or another export has the same; answers how many.
pub async fn prune(store: &Store, cutoff: i64) -> StoreResult<u64> {
    let mut removed = 0;
    for _ in 0..MAX_PRUNE_ROUNDS {
        let round = store
            .db
            .read(move |c| {
                c.query(
                    "SELECT id, space_id, hash FROM pdf_exports WHERE requested_at < ?1
                     ORDER BY requested_at LIMIT ?2",
                    params![cutoff, PRUNE_ROUND],
                )?
                .iter()
                .map(|r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<Option<String>>(2)?,
                    ))
                })
                .collect::<Result<Vec<_>, DbError>>()
                .map_err(StoreError::from)
            })
            .await?;
        let full = round.len() as i64 == PRUNE_ROUND;
        for (id, space_id, hash) in round {
            let (s, h) = (space_id.clone(), hash.clone());
            // The row goes first: a request racing the pruning then makes a new export rather
            // than finding one whose bytes are being deleted.
            let bytes_unshared = store
                .db
                .write(move |c| {
                    let gone = c.execute(
                        "DELETE FROM pdf_exports WHERE id = ?1 AND requested_at < ?2",
                        params![id.as_str(), cutoff],
                    )?;
                    let Some(hash) = h.as_deref().filter(|_| gone > 0) else {
                        return Ok::<_, StoreError>(false);
                    };
                    let shared = c.exists(
                        "SELECT 1 FROM pdf_exports WHERE space_id = ?1 AND hash = ?2",
                        params![s.as_str(), hash],
                    )? || c.exists(
                        "SELECT 1 FROM file_blobs WHERE space_id = ?1 AND hash = ?2",
                        params![s.as_str(), hash],
                    )?;
                    Ok(!shared)
                })
                .await?;
            if let (true, Some(hash)) = (bytes_unshared, hash) {
                store.blobs.delete(&space_id, &hash).await?;
            }
            removed += 1;
        }
        if !full {
            break;
        }
    }
    Ok(removed)
}

/// The periodic pruning job.
pub async fn run_pruning(store: &Store) -> StoreResult<Option<i64>> {
    let now = clock::now_ms();
    let removed = prune(store, now.saturating_sub(RETENTION_MS)).await?;
    if removed > 0 {
        tracing::info!(exports = removed, "removed PDF exports nobody asked for");
    }
    Ok(Some(now.saturating_add(PRUNE_INTERVAL_MS)))
}

/// What an export is typeset from.
pub struct Subject {
    pub space: crate::spaces::Space,
    pub stored: std::sync::Arc<crate::content::store::StoredTree>,
    /// The number of the change request the revision is of.
    pub change_request_number: Option<i64>,
}

/// The space and revision of an export; None when the space was deleted since.
pub fn subject(
    c: &mut dyn Conn,
    cache: &crate::content::store::ContentCache,
    export: &Export,
) -> StoreResult<Option<Subject>> {
    let sql = format!(
        "SELECT {} FROM spaces s WHERE s.id = ?1 AND s.deleted_at IS NULL",
        crate::spaces::model::columns()
    );
    let Some(row) = c.query_opt(&sql, params![export.space_id.as_str()])? else {
        return Ok(None);
    };
    let space = crate::spaces::Space::from_row(&row)?;
    let change_request_number = match &export.scope.change_request_id {
        Some(cr) => c.query_scalar::<i64>(
            "SELECT number FROM change_requests WHERE space_id = ?1 AND id = ?2",
            params![export.space_id.as_str(), cr.as_str()],
        )?,
        None => None,
    };
    let stored = crate::content::store::load_tree(c, cache, &export.space_id, &export.scope.revision_id)?;
    Ok(Some(Subject {
        space,
        stored,
        change_request_number,
    }))
}
