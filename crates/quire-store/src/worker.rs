//! The runner of the durable background jobs (`jobs`): claims due jobs, runs them (purging a
//! deleted space, collecting unreferenced file bytes, processing OpenAPI specifications),
//! retries them with backoff. Every process
//! runs one; they share the job table.

use std::time::Duration;

use tokio::sync::watch;

use crate::db::DbError;
use crate::error::StoreError;
use crate::jobs::{Job, MAX_ATTEMPTS, claim};
use crate::{Store, clock, params};

/// How often an idle runner looks for due jobs.
const POLL: Duration = Duration::from_millis(500);

/// Runs due jobs until `stop` turns true. A job that fails is retried with exponential backoff
/// and dropped after [`MAX_ATTEMPTS`], with its error logged.
pub async fn run(store: Store, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        match run_one(&store).await {
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
pub async fn run_one(store: &Store) -> Result<bool, StoreError> {
    let now = clock::now_ms();
    // A read first: most polls find nothing, and need not take the write lock to learn it.
    let due = store
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
    let Some(job) = store.db.write(move |c| claim(c, now)).await? else {
        return Ok(false);
    };
    let outcome = execute(store, &job).await;
    let id = job.id.clone();
    let lease = job.lease_until;
    match outcome {
        Ok(Some(next)) => {
            // A periodic job: the same row runs again later.
            store
                .db
                .write(move |c| {
                    c.execute(
                        "UPDATE jobs SET run_at = ?2, lease_until = NULL, attempts = 0, last_error = NULL
                         WHERE id = ?1 AND lease_until = ?3",
                        params![id.clone(), next, lease],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
        Ok(None) => {
            store
                .db
                .write(move |c| {
                    c.execute(
                        "DELETE FROM jobs WHERE id = ?1 AND lease_until = ?2",
                        params![id.clone(), lease],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
        Err(e) if job.attempts >= MAX_ATTEMPTS => {
            tracing::error!(job = %job.id, kind = %job.kind, error = %e, "job failed for the last time");
            store
                .db
                .write(move |c| {
                    c.execute(
                        "DELETE FROM jobs WHERE id = ?1 AND lease_until = ?2",
                        params![id.clone(), lease],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
        Err(e) => {
            tracing::warn!(job = %job.id, kind = %job.kind, error = %e, attempt = job.attempts, "job failed, will retry");
            let retry_at = clock::now_ms() + 1000 * (1i64 << job.attempts.min(12));
            let message = e.to_string();
            store
                .db
                .write(move |c| {
                    c.execute(
                        "UPDATE jobs SET run_at = ?2, lease_until = NULL, last_error = ?3 WHERE id = ?1 AND lease_until = ?4",
                        params![id.clone(), retry_at, message.clone(), lease],
                    )
                    .map_err(StoreError::from)
                })
                .await?;
        }
    }
    Ok(true)
}

/// Runs a job; Some(time) asks to run it again at that time (Unix ms).
async fn execute(store: &Store, job: &Job) -> Result<Option<i64>, StoreError> {
    let payload = job
        .payload
        .as_ref()
        .map_err(|e| DbError::stored(format_args!("payload of job {:?} ({})", job.id, job.kind), e))?;
    match job.kind.as_str() {
        crate::spaces::lifecycle::PURGE_JOB => crate::spaces::lifecycle::run_purge(store, payload)
            .await
            .map(|()| None),
        crate::files::COLLECT_JOB => crate::files::run_collect_job(store).await.map(Some),
        crate::openapi::process::PROCESS_JOB => crate::openapi::process::run(store, payload).await,
        crate::openapi::pages::PAGES_JOB => crate::openapi::pages::run(store, payload).await,
        other => Err(StoreError::internal(format!("unknown job kind {other:?}"))),
    }
}
