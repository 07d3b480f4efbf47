//! The runner of the durable background jobs (`jobs`): claims due jobs, runs them (purging a
//! deleted space, collecting unreferenced file bytes, processing OpenAPI specifications,
//! delivering integration events), retries them with backoff. Before looking for jobs it fans
//! the outbox out to integrations (`integrations::fanout`), which makes delivery jobs. Every
//! process runs one; they share the job table. It wakes on writes (shortly after a burst of
//! them) as well as every [`POLL`], so that an event is delivered well within a second of its
//! commit.

use std::time::Duration;

use tokio::sync::watch;

use crate::db::DbError;
use crate::error::StoreError;
use crate::integrations::delivery;
use crate::jobs::{Job, MAX_ATTEMPTS, claim};
use crate::{Store, clock, params};

/// How often an idle runner looks for due jobs.
const POLL: Duration = Duration::from_millis(500);
/// How long the runner lets a burst of writes go on after the first wakes it, so that a
/// burst costs one look, not one per write.
const SETTLE: Duration = Duration::from_millis(20);

/// Runs due jobs until `stop` turns true. A job that fails is retried with exponential backoff
/// and dropped after [`MAX_ATTEMPTS`], with its error logged.
pub async fn run(store: Store, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            return;
        }
        let db = store.db.clone();
        let changed = db.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if let Err(e) = crate::integrations::fanout::run(&store).await {
            tracing::warn!(error = %e, "fanning events out to integrations failed");
        }
        match run_one(&store).await {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => tracing::warn!(error = %e, "job runner failed to claim work"),
        }
        let woken = tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            () = tokio::time::sleep(POLL) => false,
            () = &mut changed => true,
        };
        if woken {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => return,
                () = tokio::time::sleep(SETTLE) => {}
            }
        }
    }
}

/// How many due jobs one runner claims and runs at once: deliveries are mostly waiting on
/// another server, and one at a time could not keep up with a burst of events.
pub const CONCURRENCY: usize = 16;

/// Claims up to [`CONCURRENCY`] due jobs in one transaction and runs them together; false when
/// none was due.
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
    let jobs = store
        .db
        .write(move |c| {
            let mut jobs = Vec::new();
            // A claimed row is leased, so the next claim in the transaction passes it over.
            while jobs.len() < CONCURRENCY {
                match claim(c, now)? {
                    Some(job) => jobs.push(job),
                    None => break,
                }
            }
            Ok::<_, StoreError>(jobs)
        })
        .await?;
    if jobs.is_empty() {
        return Ok(false);
    }
    let (deliveries, others): (Vec<Job>, Vec<Job>) = jobs
        .into_iter()
        .partition(|job| job.kind == delivery::DELIVER_JOB && job.payload.is_ok());
    let run_others = async {
        let outcomes = futures_util::future::join_all(others.iter().map(|job| execute(store, job))).await;
        for (job, outcome) in others.iter().zip(outcomes) {
            let (id, lease, attempts) = (job.id.clone(), job.lease_until, job.attempts);
            let kind = job.kind.clone();
            let outcome = outcome.map_err(|e| e.to_string());
            store
                .db
                .write(move |c| finish(c, (&id, &kind, lease, attempts), outcome.clone()))
                .await?;
        }
        Ok::<_, StoreError>(())
    };
    let (delivered, others_done) = tokio::join!(deliver(store, deliveries), run_others);
    delivered?;
    others_done?;
    Ok(true)
}

/// Makes the attempts of a batch of deliveries together, then records them all, and ends or
/// reschedules their jobs, in one transaction: a burst of events costs a few writes, not
/// several per event.
async fn deliver(store: &Store, jobs: Vec<Job>) -> Result<(), StoreError> {
    if jobs.is_empty() {
        return Ok(());
    }
    let attempted = futures_util::future::join_all(jobs.iter().map(|job| async move {
        match &job.payload {
            Ok(payload) => delivery::attempt(store, payload).await,
            Err(e) => Err(StoreError::internal(e.clone())),
        }
    }))
    .await;
    let settings = store.settings.delivery;
    store
        .db
        .write(move |c| {
            for (job, attempt) in jobs.iter().zip(&attempted) {
                let outcome = match attempt {
                    Ok(attempt) => delivery::record(c, attempt, &settings).map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                finish(c, (&job.id, &job.kind, job.lease_until, job.attempts), outcome)?;
            }
            Ok::<_, StoreError>(())
        })
        .await
}

/// Records how a job ended, in the transaction `c` is in: rescheduled, done, retried later, or
/// dropped. Each update names the job's lease, so a job enqueued again while it ran, or taken
/// by another runner after its lease expired, is left alone.
fn finish(
    c: &mut dyn crate::db::Conn,
    (id, kind, lease, attempts): (&str, &str, i64, i64),
    outcome: Result<Option<i64>, String>,
) -> Result<(), StoreError> {
    match outcome {
        Ok(Some(next)) => {
            // A periodic job, or another attempt: the same row runs again later.
            c.execute(
                "UPDATE jobs SET run_at = ?2, lease_until = NULL, attempts = 0, last_error = NULL
                 WHERE id = ?1 AND lease_until = ?3",
                params![id, next, lease],
            )?;
        }
        Ok(None) => {
            c.execute(
                "DELETE FROM jobs WHERE id = ?1 AND lease_until = ?2",
                params![id, lease],
            )?;
        }
        Err(e) if attempts >= MAX_ATTEMPTS => {
            tracing::error!(job = %id, kind = %kind, error = %e, "job failed for the last time");
            c.execute(
                "DELETE FROM jobs WHERE id = ?1 AND lease_until = ?2",
                params![id, lease],
            )?;
        }
        Err(e) => {
            tracing::warn!(job = %id, kind = %kind, error = %e, attempt = attempts, "job failed, will retry");
            let retry_at = clock::now_ms() + 1000 * (1i64 << attempts.min(12));
            c.execute(
                "UPDATE jobs SET run_at = ?2, lease_until = NULL, last_error = ?3 WHERE id = ?1 AND lease_until = ?4",
                params![id, retry_at, e, lease],
            )?;
        }
    }
    Ok(())
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
        crate::integrations::delivery::DELIVER_JOB => {
            crate::integrations::delivery::run(store, payload).await
        }
        other => Err(StoreError::internal(format!("unknown job kind {other:?}"))),
    }
}
