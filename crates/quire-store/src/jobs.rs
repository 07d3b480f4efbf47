//! Durable background jobs: rows in the `jobs` table, leased with a timeout, retried with
//! backoff. Several processes share the table; on PostgreSQL they claim jobs with
//! `FOR UPDATE SKIP LOCKED`, on SQLite the single writer serializes claims.

use crate::db::{Conn, Dialect};
use crate::error::StoreError;
use crate::{clock, ids, params};

/// How long a claimed job is reserved for its runner.
pub const LEASE_MS: i64 = 60_000;
/// How many times a failing job runs before it is dropped.
pub const MAX_ATTEMPTS: i64 = 10;

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
    /// The lease this claim holds: the runner's own updates of the row name it, so that a job
    /// enqueued again while it ran (its lease cleared) or claimed by another runner after the
    /// lease expired is not rescheduled or deleted by this one.
    pub lease_until: i64,
}

/// Schedules a job to run at `run_at` (Unix ms). With a `dedupe_key`, an existing job with the
/// same key is rescheduled instead of duplicated.
pub fn enqueue(
    c: &mut dyn Conn,
    kind: &str,
    payload: &serde_json::Value,
    run_at: i64,
    dedupe_key: Option<&str>,
) -> Result<(), StoreError> {
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
) -> Result<(), StoreError> {
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
) -> Result<(), StoreError> {
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
pub fn cancel(c: &mut dyn Conn, dedupe_key: &str) -> Result<(), StoreError> {
    c.execute("DELETE FROM jobs WHERE dedupe_key = ?1", params![dedupe_key])?;
    Ok(())
}

crate::columns! {
    /// The columns of a job that [`claim`] reads.
    struct JobCols of "jobs" {
        id: "id",
        kind: "kind",
        payload: "payload",
        attempts: "attempts",
    }
}

/// Claims the next due job, if any.
pub fn claim(c: &mut dyn Conn, now: i64) -> Result<Option<Job>, StoreError> {
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
    let lease_until = now + LEASE_MS;
    c.execute(
        "UPDATE jobs SET lease_until = ?2, attempts = attempts + 1 WHERE id = ?1",
        params![id.clone(), lease_until],
    )?;
    let payload: String = row.col(J.payload)?;
    Ok(Some(Job {
        id,
        kind: row.col(J.kind)?,
        payload: serde_json::from_str(&payload).map_err(|e| e.to_string()),
        attempts: row.col::<i64>(J.attempts)? + 1,
        lease_until,
    }))
}
