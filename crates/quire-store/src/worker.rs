//! The runner of the durable background jobs (`jobs`): claims due jobs, runs them (purging a
//! deleted space, collecting unreferenced file bytes, processing OpenAPI specifications,
//! delivering integration events, pruning old events, typesetting PDF exports and pruning
//! them, translating spaces), retries them with backoff. Before looking for jobs it fans
//! the outbox out to integrations (`integrations::fanout`), which makes delivery jobs. Every
//! process runs one; they share the job table. It wakes on writes (shortly after a burst of
//! them) as well as every [`POLL`], so that an event is delivered well within a second of its
//! commit.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::task::JoinSet;

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
///
/// Claimed jobs run on their own tasks, each holding one of [`CONCURRENCY`] slots until it is
/// recorded, while this loop goes on claiming into the free slots: a webhook that takes its
/// whole timeout, or a long OpenAPI job, holds one slot, not the runner.
pub async fn run(store: Store, mut stop: watch::Receiver<bool>) {
    let slots = Arc::new(Semaphore::new(CONCURRENCY));
    // Owned here: aborting the runner (a crash, in tests) aborts its jobs with it.
    let mut running = JoinSet::new();
    loop {
        while running.try_join_next().is_some() {}
        if *stop.borrow() {
            break;
        }
        let db = store.db.clone();
        let changed = db.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        if let Err(e) = crate::integrations::fanout::run(&store).await {
            tracing::warn!(error = %e, "fanning events out to integrations failed");
        }
        let free = slots.available_permits();
        if free > 0 {
            match claim_due(&store, free).await {
                Ok(jobs) if !jobs.is_empty() => {
                    // This loop is the only one taking slots, so the free ones are still free.
                    let claimed: Vec<Claimed> = jobs
                        .into_iter()
                        .map(|job| Claimed {
                            job,
                            _slot: slots.clone().try_acquire_owned().ok(),
                        })
                        .collect();
                    let store = store.clone();
                    running.spawn(async move {
                        if let Err(e) = run_claimed(&store, claimed).await {
                            tracing::warn!(error = %e, "recording jobs failed");
                        }
                    });
                    continue;
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "job runner failed to claim work"),
            }
        }
        let woken = tokio::select! {
            _ = stop.wait_for(|s| *s) => break,
            () = tokio::time::sleep(POLL) => false,
            () = &mut changed => true,
            // Every slot taken: look again as soon as one is free.
            _ = slots.acquire(), if free == 0 => false,
        };
        if woken {
            tokio::select! {
                _ = stop.wait_for(|s| *s) => break,
                () = tokio::time::sleep(SETTLE) => {}
            }
        }
    }
    // Stopping: the jobs under way finish and are recorded, so their leases are released
    // rather than left to expire (and a delivery made is not made again).
    while running.join_next().await.is_some() {}
}

/// How many jobs one runner runs at once: deliveries are mostly waiting on another server,
/// and one at a time could not keep up with a burst of events.
pub const CONCURRENCY: usize = 16;

/// A claimed job, and the runner's slot it holds until it is recorded (none under
/// [`run_one`]).
struct Claimed {
    job: Job,
    _slot: Option<OwnedSemaphorePermit>,
}

/// Claims up to [`CONCURRENCY`] due jobs in one transaction and runs them to the end; false
/// when none was due. Tests call it to run the jobs a request left.
pub async fn run_one(store: &Store) -> Result<bool, StoreError> {
    let jobs = claim_due(store, CONCURRENCY).await?;
    if jobs.is_empty() {
        return Ok(false);
    }
    let claimed = jobs.into_iter().map(|job| Claimed { job, _slot: None }).collect();
    run_claimed(store, claimed).await?;
    Ok(true)
}

/// Claims up to `n` due jobs in one transaction.
async fn claim_due(store: &Store, n: usize) -> Result<Vec<Job>, StoreError> {
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
        return Ok(Vec::new());
    }
    store
        .db
        .write(move |c| {
            let mut jobs = Vec::new();
            // A claimed row is leased, so the next claim in the transaction passes it over.
            while jobs.len() < n {
                match claim(c, now)? {
                    Some(job) => jobs.push(job),
                    None => break,
                }
            }
            Ok::<_, StoreError>(jobs)
        })
        .await
}

/// Runs claimed jobs together, each recorded (and its slot freed) as soon as it ends.
async fn run_claimed(store: &Store, claimed: Vec<Claimed>) -> Result<(), StoreError> {
    let (deliveries, others): (Vec<Claimed>, Vec<Claimed>) = claimed
        .into_iter()
        .partition(|c| c.job.kind == delivery::DELIVER_JOB);
    let run_others = futures_util::future::join_all(others.into_iter().map(|claimed| async move {
        let outcome = execute(store, &claimed.job).await.map_err(|e| e.to_string());
        // `claimed` (with its slot) is dropped once the transaction is done.
        store
            .db
            .write(move |c| finish(c, &claimed.job, outcome.clone()))
            .await
    }));
    let (delivered, others_done) = tokio::join!(deliver(store, deliveries), run_others);
    delivered?;
    others_done.into_iter().collect()
}

/// Makes the attempts of a batch of deliveries together and records them as they end: those
/// that ended together in one transaction (a burst of events costs a few writes, not several
/// per event), and none waits for a slower endpoint than its own.
///
/// Each attempt is a task of its own: an attempt holds one of the database's permits while it
/// reads, and one left unpolled while this function awaits its write would keep it. With every
/// permit kept that way the write waited for a permit forever, and so did every request
/// (PostgreSQL with 4 connections, the retention test, 2026-11-29).
async fn deliver(store: &Store, jobs: Vec<Claimed>) -> Result<(), StoreError> {
    let mut attempts = JoinSet::new();
    for claimed in jobs {
        let store = store.clone();
        attempts.spawn(async move {
            let attempted = match &claimed.job.payload {
                Ok(payload) => delivery::attempt(&store, payload).await,
                Err(e) => Err(StoreError::internal(e.clone())),
            };
            (claimed, attempted)
        });
    }
    let settings = store.settings.delivery;
    while let Some(first) = attempts.join_next().await {
        let mut ended = Vec::new();
        let mut joined = Some(first);
        while let Some(next) = joined {
            match next {
                Ok(attempt) => ended.push(attempt),
                // Its job keeps its lease and runs again when the lease ends.
                Err(e) => tracing::error!(error = %e, "a delivery attempt's task failed"),
            }
            joined = attempts.try_join_next();
        }
        if ended.is_empty() {
            continue;
        }
        // `ended` (with its slots) is dropped once the transaction is done.
        store
            .db
            .write(move |c| {
                for (claimed, attempt) in &ended {
                    let outcome = match attempt {
                        Ok(attempt) => delivery::record(c, attempt, &settings).map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    finish(c, &claimed.job, outcome)?;
                }
                Ok::<_, StoreError>(())
            })
            .await?;
    }
    Ok(())
}

/// Records how a job ended, in the transaction `c` is in: rescheduled, done, retried later, or
/// dropped. Each update names the job's lease, so a job enqueued again while it ran, or taken
/// by another runner after its lease expired, is left alone.
fn finish(
    c: &mut dyn crate::db::Conn,
    job: &Job,
    outcome: Result<Option<i64>, String>,
) -> Result<(), StoreError> {
    let (id, kind, lease, attempts) = (&job.id, &job.kind, job.lease_until, job.attempts);
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

/// Runs a job other than a delivery (those are [`deliver`]'s); Some(time) asks to run it
/// again at that time (Unix ms).
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
        crate::integrations::retention::PRUNE_JOB => crate::integrations::retention::run(store).await,
        crate::pdf::RENDER_JOB => crate::pdf::run(store, payload).await,
        crate::pdf::PRUNE_JOB => crate::pdf::run_pruning(store).await,
        crate::translations::run::RUN_JOB => crate::translations::run::run(store, payload).await,
        crate::conversations::analyse::ANALYSE_JOB => {
            crate::conversations::analyse::run(store, payload).await
        }
        crate::conversations::clusters::CLUSTER_JOB => {
            crate::conversations::clusters::run(store, payload).await
        }
        other => Err(StoreError::internal(format!("unknown job kind {other:?}"))),
    }
}
