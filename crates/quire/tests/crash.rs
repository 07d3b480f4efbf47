//! Crash safety of the real binary: `quire serve` killed with SIGKILL in the middle of a burst of
//! writes loses none of the writes it acknowledged, and a restarted process carries on with the
//! same database (SQLite in a temporary directory, or a fresh schema of the PostgreSQL database
//! named by `QUIRE_TEST_DATABASE_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::{Acked, Burst, Server, Storage, call, client, ids, runtime, walk};

/// Concurrent writers per burst.
const WRITERS: usize = 8;
/// Acknowledged writes after which the process is killed.
const KILL_AFTER: usize = 300;

/// Runs a [`Burst`] of [`WRITERS`] clients and SIGKILLs the server once [`KILL_AFTER`] writes
/// were acknowledged, while the writers are still sending.
async fn burst_then_kill(server: Server, token: &str, org: &str, space: &str, round: usize) -> Acked {
    let mut burst = Burst::start(&server.base, token, org, space, round, WRITERS);
    burst.wait_for(KILL_AFTER, &server).await;
    burst.halt();
    server.kill();
    let acked = burst.stop().await;
    assert!(acked.len() >= KILL_AFTER);
    acked
}

/// Every acknowledged comment and space is there, each readable by id and in its list.
async fn assert_all_present(base: &str, token: &str, org: &str, space: &str, acked: &Acked) {
    let client = client();
    let comments = ids(&walk(&client, token, &format!("{base}/v1/spaces/{space}/comments")).await);
    let lost: Vec<_> = acked
        .comments
        .iter()
        .filter(|id| !comments.contains(*id))
        .collect();
    assert!(lost.is_empty(), "acknowledged comments lost: {lost:?}");
    let spaces = ids(&walk(&client, token, &format!("{base}/v1/orgs/{org}/spaces")).await);
    let lost: Vec<_> = acked.spaces.iter().filter(|id| !spaces.contains(*id)).collect();
    assert!(lost.is_empty(), "acknowledged spaces lost: {lost:?}");
    for id in &acked.comments {
        let (status, body) = call(
            &client,
            token,
            "GET",
            &format!("{base}/v1/spaces/{space}/comments/{id}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "comment {id}: {body}");
    }
    for id in &acked.spaces {
        let (status, body) = call(&client, token, "GET", &format!("{base}/v1/spaces/{id}"), None).await;
        assert_eq!(status, 200, "space {id}: {body}");
    }
}

// Synchronous tests with their own runtime: the PostgreSQL schema is made and dropped with the
// blocking client, which must not run on a runtime thread.
#[test]
fn no_acknowledged_write_is_lost_when_the_server_is_killed_mid_burst() {
    let storage = Storage::new();
    runtime().block_on(async {
        let first = Server::start(&storage, true, &[]);
        let boot = first
            .bootstrap
            .as_ref()
            .expect("first start prints the bootstrap token");
        let (org, token) = (boot.org.clone(), boot.token.clone());
        let (status, space) = call(
            &client(),
            &token,
            "POST",
            &format!("{}/v1/orgs/{org}/spaces", first.base),
            Some(json!({"title": "Comments"})),
        )
        .await;
        assert_eq!(status, 201, "{space}");
        let space = space["id"].as_str().unwrap().to_string();

        let mut all = Acked::default();
        let mut server = first;
        for round in 1..=2 {
            let acked = burst_then_kill(server, &token, &org, &space, round).await;
            all.comments.extend(acked.comments);
            all.spaces.extend(acked.spaces);
            server = Server::start(&storage, false, &[]);
            assert_all_present(&server.base, &token, &org, &space, &all).await;
            // Printed (if at all) before the address was logged, so read by now.
            let printed = server.stdout.lock().unwrap().join("\n");
            assert!(
                !printed.contains("API token"),
                "a restart bootstrapped again:\n{printed}"
            );
        }
        // The restarted process also takes new writes.
        let (status, body) = call(
            &client(),
            &token,
            "POST",
            &format!("{}/v1/spaces/{space}/comments", server.base),
            Some(json!({"body": {"markdown": "after the crashes"}})),
        )
        .await;
        assert!((200..300).contains(&status), "{status} {body}");
    });
}

/// A background job scheduled before the kill (the purge of a deleted space) is still in the
/// job table afterwards and is run by the next process.
///
/// A job *leased* by the killed process is not covered here: its lease (`LEASE_MS` in
/// crates/quire-server/src/jobs.rs) is 60 s and not configurable, so a test would wait a minute.
#[test]
fn a_job_scheduled_before_the_kill_is_run_after_the_restart() {
    use quire_server::db::Value as DbValue;
    use quire_server::error::ApiError;

    let storage = Storage::new();
    // A long retention: the purge cannot become due before the kill.
    let first = Server::start(&storage, true, &["--space-retention", "1h"]);
    let boot = first.bootstrap.as_ref().expect("bootstrap");
    let (org, token) = (boot.org.clone(), boot.token.clone());
    let space = runtime().block_on(async {
        let client = client();
        let (status, space) = call(
            &client,
            &token,
            "POST",
            &format!("{}/v1/orgs/{org}/spaces", first.base),
            Some(json!({"title": "Doomed"})),
        )
        .await;
        assert_eq!(status, 201, "{space}");
        let space = space["id"].as_str().unwrap().to_string();
        let (status, body) = call(
            &client,
            &token,
            "DELETE",
            &format!("{}/v1/spaces/{space}", first.base),
            None,
        )
        .await;
        assert_eq!(status, 204, "{body}");
        space
    });
    first.kill();

    // The purge job was acknowledged with the delete; bring its due time forward to now, as if
    // the retention had passed while no process ran.
    let db = storage.open_db();
    let key = format!("purge_space:{space}");
    let rescheduled = db
        .write_sync(|c| {
            Ok::<_, ApiError>(c.execute(
                "UPDATE jobs SET run_at = 0 WHERE dedupe_key = ?1",
                &[DbValue::from(key.as_str())],
            )?)
        })
        .expect("reschedule the purge");
    assert_eq!(
        rescheduled, 1,
        "the purge job of the deleted space survived the kill"
    );
    let space_row = || {
        db.read_sync(|c| {
            Ok::<_, ApiError>(c.exists(
                "SELECT 1 FROM spaces WHERE id = ?1",
                &[DbValue::from(space.as_str())],
            )?)
        })
        .expect("read spaces")
    };
    assert!(space_row(), "the deleted space waits for its purge");

    let second = Server::start(&storage, false, &["--space-retention", "1h"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while space_row() {
        assert!(
            Instant::now() < deadline,
            "the restarted server did not purge the space; log:\n{}",
            second.log.lock().unwrap().join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The job's row goes after its work is done, in a transaction of its own.
    let purge_jobs = || -> i64 {
        db.read_sync(|c| {
            // The periodic file collection job stays scheduled; the purge is what is counted.
            Ok::<_, ApiError>(c.query_scalar("SELECT COUNT(*) FROM jobs WHERE kind = 'purge_space'", &[])?)
        })
        .expect("count jobs")
        .unwrap_or(0)
    };
    while purge_jobs() > 0 {
        assert!(
            Instant::now() < deadline,
            "the purge job is done and removed; log:\n{}",
            second.log.lock().unwrap().join("\n")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(second);
}
