//! Durable background jobs: rows in the `jobs` table, leased with a timeout, retried with
//! backoff. Several processes share the table; on PostgreSQL they claim jobs with
//! `FOR UPDATE SKIP LOCKED`, on SQLite the single writer serializes claims.

use std::time::Duration;

use tokio::sync::watch;

use crate::app::App;
use crate::db::{Conn, DbError, Dialect};
use crate::error::ApiError;
use crate::{clock, ids, params};

/// How often an idle runner looks for due jobs.
const POLL: Duration = Duration::from_millis(500);
/// How long a claimed job is reserved for its runner.
const LEASE_MS: i64 = 60_000;
const MAX_ATTEMPTS: i64 = 10;

/// A job claimed for running.
#[derive(Debug)]
pub struct Job {
    pub id: String,
    pub kind: String,
    /// The payload, or why the stored one does not decode: the job is still claimed, so that
    /// it fails (and is retried, then dropped, with the error logged) instead of running on
    /// a default payload or jamming the queue.
    pub payload: Result<serde_json::Value, String>,
    pub attempts: i64,
}

/// Schedules a job to run at `run_at` (Unix ms). With a `dedupe_key`, an existing job with the
/// same key is rescheduled instead of duplicated.
pub fn enqueue(
    c: &mut dyn Conn,
    kind: &str,
    payload: &serde_json::Value,
    run_at: i64,
    dedupe_key: Option<&str>,
) -> Result<(), ApiError> {
    insert(
        c,
        kind,
        payload,
        run_at,
        dedupe_key,
        "DO UPDATE SET run_at = excluded.run_at, payload = excluded.payload,
             attempts = 0, lease_until = NULL, last_error = NULL",
    )
}

/// Schedules a job under `dedupe_key` unless one is scheduled already (then it is left as it is).
pub fn enqueue_once(
    c: &mut dyn Conn,
    kind: &str,
    payload: &serde_json::Value,
    run_at: i64,
    dedupe_key: &str,
) -> Result<(), ApiError> {
    insert(c, kind, payload, run_at, Some(dedupe_key), "DO NOTHING")
}

/// Inserts a job, doing `on_conflict` when a job with its dedupe key exists.
fn insert(
    c: &mut dyn Conn,
    kind: &str,
    payload: &serde_json::Value,
    run_at: i64,
    dedupe_key: Option<&str>,
    on_conflict: &str,
) -> Result<(), ApiError> {
    c.execute(
        &format!(
            "INSERT INTO jobs (id, kind, payload, dedupe_key, run_at, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (dedupe_key) {on_conflict}"
        ),
        params![
            ids::new_id(),
            kind,
            payload.to_string(),
            dedupe_key,
            run_at,
            clock::now_ms()
        ],
    )?;
    Ok(())
}

/// Removes a scheduled job by its dedupe key.
pub fn cancel(c: &mut dyn Conn, dedupe_key: &str) -> Result<(), ApiError> {
    c.execute("DELETE FROM jobs WHERE dedupe_key = ?1", params![dedupe_key])?;
    Ok(())
}

quire_store::columns! {
    /// The columns of a job that [`claim`] reads.
    struct JobCols of "jobs" {
        id: "id",
        kind: "kind",
        payload: "payload",
        attempts: "attempts",
    }
}

/// Claims the next due job, if any.
pub fn claim(c: &mut dyn Conn, now: i64) -> Result<Option<Job>, ApiError> {
    let lock = if c.dialect() == Dialect::Postgres {
        "FOR UPDATE SKIP LOCKED"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {} FROM jobs
         WHERE run_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1)
         ORDER BY run_at LIMIT 1 {lock}",
        JobCols::SQL
    );
    let Some(row) = c.query_opt(&sql, params![now])? else {
        return Ok(None);
    };
    const J: JobCols = JobCols::AT;
    let id: String = row.col(J.id)?;
    c.execute(
        "UPDATE jobs SET lease_until = ?2, attempts = attempts + 1 WHERE id = ?1",
        params![id.clone(), now + LEASE_MS],
    )?;
    let payload: String = row.col(J.payload)?;
    Ok(Some(Job {
        id,
        kind: row.col(J.kind)?,
        payload: serde_json::from_str(&payload).map_err(|e| e.to_string()),
        attempts: row.col::<i64>(J.attempts)? + 1,
    }))
}

/// Runs due jobs until `stop` turns true. A job that fails is retried with exponential backoff
/// and dropped after [`MAX_ATTEMPTS`], with its error logged.
pub async fn run(app: App, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        match run_one(&app).await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "job runner failed to claim work"),
        }
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            () = tokio::time::sleep(POLL) => {}
        }
    }
}

/// Claims and runs one due job; false when none was due.
pub async fn run_one(app: &App) -> Result<bool, ApiError> {
    let now = clock::now_ms();
    // A read first: most polls find nothing, and need not take the write lock to learn it.
    let due = app
        .db
        .read_blocking(move |c| {
            c.exists(
                "SELECT 1 FROM jobs WHERE run_at <= ?1 AND (lease_until IS NULL OR lease_until < ?1)",
                params![now],
            )
        })
        .await?;
    if !due {
        return Ok(false);
    }
    let Some(job) = app.db.write(move |c| claim(c, now)).await? else {
        return Ok(false);
    };
    let outcome = execute(app, &job).await;
    let id = job.id.clone();
    match outcome {
        Ok(Some(next)) => {
            // A periodic job: the same row runs again later.
            app.db
                .write(move |c| {
                    c.execute(
                        "UPDATE jobs SET run_at = ?2, lease_until = NULL, attempts = 0, last_error = NULL WHERE id = ?1",
                        params![id.clone(), next],
                    )
                    .map_err(ApiError::from)
                })
                .await?;
        }
        Ok(None) => {
            app.db
                .write(move |c| {
                    c.execute("DELETE FROM jobs WHERE id = ?1", params![id.clone()])
                        .map_err(ApiError::from)
                })
                .await?;
        }
        Err(e) if job.attempts >= MAX_ATTEMPTS => {
            tracing::error!(job = %job.id, kind = %job.kind, error = %e, "job failed for the last time");
            app.db
                .write(move |c| {
                    c.execute("DELETE FROM jobs WHERE id = ?1", params![id.clone()])
                        .map_err(ApiError::from)
                })
                .await?;
        }
        Err(e) => {
            tracing::warn!(job = %job.id, kind = %job.kind, error = %e, attempt = job.attempts, "job failed, will retry");
            let retry_at = clock::now_ms() + 1000 * (1i64 << job.attempts.min(12));
            let message = e.to_string();
            app.db
                .write(move |c| {
                    c.execute(
                        "UPDATE jobs SET run_at = ?2, lease_until = NULL, last_error = ?3 WHERE id = ?1",
                        params![id.clone(), retry_at, message.clone()],
                    )
                    .map_err(ApiError::from)
                })
                .await?;
        }
    }
    Ok(true)
}

/// Runs a job; Some(time) asks to run it again at that time (Unix ms).
async fn execute(app: &App, job: &Job) -> Result<Option<i64>, ApiError> {
    let payload = job
        .payload
        .as_ref()
        .map_err(|e| DbError::stored(format_args!("payload of job {:?} ({})", job.id, job.kind), e))?;
    match job.kind.as_str() {
        crate::spaces::lifecycle::PURGE_JOB => crate::spaces::lifecycle::run_purge(app, payload)
            .await
            .map(|()| None),
        crate::file_blobs::COLLECT_JOB => crate::file_blobs::run_collect_job(app).await.map(Some),
        other => Err(ApiError::internal(format!("unknown job kind {other:?}"))),
    }
}
