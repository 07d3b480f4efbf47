//! The runner of the durable background jobs (`quire_store::jobs`): claims due jobs, runs them,
//! retries them with backoff.

use std::time::Duration;

use quire_store::jobs::{Job, MAX_ATTEMPTS, claim};
use tokio::sync::watch;

use crate::app::App;
use crate::clock;
use crate::db::DbError;
use crate::error::ApiError;
use crate::params;

/// How often an idle runner looks for due jobs.
const POLL: Duration = Duration::from_millis(500);

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
        quire_store::spaces::lifecycle::PURGE_JOB => {
            Ok(quire_store::spaces::lifecycle::run_purge(app, payload)
                .await
                .map(|()| None)?)
        }
        quire_store::files::COLLECT_JOB => Ok(quire_store::files::run_collect_job(app).await.map(Some)?),
        other => Err(ApiError::internal(format!("unknown job kind {other:?}"))),
    }
}
