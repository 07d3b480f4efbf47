//! Retention of events: the outbox rows already fanned out to integrations, and the
//! integration events already settled (delivered or given up) with their traces, are removed
//! once older than `Settings::event_retention_ms`, by a periodic job. An outbox row not yet
//! fanned out and an event still pending are kept whatever their age: nothing is removed
//! before it has done its work.

use crate::db::{Args, Conn};
use crate::error::StoreResult;
use crate::{Store, clock, jobs, params};

pub const PRUNE_JOB: &str = "prune_events";

/// Rows removed per statement: a round is one short transaction, so pruning a large backlog
/// never holds the write lock long.
const ROUND: i64 = 1000;
/// Rounds per run; what is left waits for the next run.
const MAX_ROUNDS: usize = 100;

/// How often pruning runs: as often as the retention, between once a minute and once an hour.
pub fn prune_interval_ms(retention_ms: i64) -> i64 {
    retention_ms.clamp(60_000, 3_600_000)
}

/// Schedules the periodic pruning unless it is scheduled already (every process calls this at
/// start; one job row serves them all). A retention of 0 keeps events forever: no job.
pub fn schedule(c: &mut dyn Conn, retention_ms: i64) -> StoreResult<()> {
    if retention_ms <= 0 {
        return Ok(());
    }
    let run_at = clock::now_ms().saturating_add(prune_interval_ms(retention_ms));
    jobs::enqueue_once(c, PRUNE_JOB, &serde_json::json!({}), run_at, PRUNE_JOB)
}

/// What one pruning removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pruned {
    pub outbox: u64,
    pub events: u64,
}

/// Removes what settled before `cutoff` (Unix ms), oldest first, in rounds of [`ROUND`].
pub async fn prune(store: &Store, cutoff: i64) -> StoreResult<Pruned> {
    let mut pruned = Pruned::default();
    for _ in 0..MAX_ROUNDS {
        let round = store.db.write(move |c| prune_round(c, cutoff)).await?;
        pruned.outbox += round.outbox;
        pruned.events += round.events;
        if round.outbox < ROUND as u64 && round.events < ROUND as u64 {
            break;
        }
    }
    Ok(pruned)
}

fn prune_round(c: &mut dyn Conn, cutoff: i64) -> StoreResult<Pruned> {
    let outbox = c.execute(
        "DELETE FROM events WHERE seq IN (
             SELECT seq FROM events WHERE dispatched_at IS NOT NULL AND created_at < ?1
             ORDER BY created_at LIMIT ?2)",
        params![cutoff, ROUND],
    )?;
    let settled = c.query(
        "SELECT id FROM integration_events
         WHERE completed_at IS NOT NULL AND completed_at < ?1 AND status <> 'pending'
         ORDER BY completed_at, id LIMIT ?2",
        params![cutoff, ROUND],
    )?;
    let ids = settled
        .iter()
        .map(|row| row.get::<String>(0))
        .collect::<Result<Vec<_>, _>>()?;
    let mut args = Args::default();
    let list = args.list(ids);
    // The events read once, then their traces and themselves by id: one set, whatever
    // settles meanwhile.
    c.execute(
        &format!("DELETE FROM integration_event_logs WHERE event_id IN ({list})"),
        args.values(),
    )?;
    let events = c.execute(
        &format!("DELETE FROM integration_events WHERE id IN ({list})"),
        args.values(),
    )?;
    Ok(Pruned { outbox, events })
}

/// The periodic job: prunes, then asks to run again after the interval.
pub async fn run(store: &Store) -> StoreResult<Option<i64>> {
    let retention = store.settings.event_retention_ms;
    if retention <= 0 {
        return Ok(None);
    }
    let now = clock::now_ms();
    let pruned = prune(store, now.saturating_sub(retention)).await?;
    if pruned != Pruned::default() {
        tracing::info!(
            outbox = pruned.outbox,
            events = pruned.events,
            "removed events older than the retention"
        );
    }
    Ok(Some(now.saturating_add(prune_interval_ms(retention))))
}
