//! Crash safety of the real binary: `quire serve` killed with SIGKILL in the middle of a burst of
//! writes loses none of the writes it acknowledged, and a restarted process carries on with the
//! same database (SQLite in a temporary directory, or a fresh schema of the PostgreSQL database
//! named by `QUIRE_TEST_DATABASE_URL`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a process may take to start listening (it runs migrations and indexing first).
const START_DEADLINE: Duration = Duration::from_secs(30);
/// Concurrent writers per burst.
const WRITERS: usize = 8;
/// Acknowledged writes after which the process is killed.
const KILL_AFTER: usize = 300;

/// Where a test's processes keep their data: a temporary directory, and a fresh PostgreSQL
/// schema when `QUIRE_TEST_DATABASE_URL` is set (dropped at the end).
struct Storage {
    dir: tempfile::TempDir,
    database_url: Option<String>,
    pg: Option<(String, String)>,
}

impl Storage {
    fn new() -> Storage {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = std::env::var("QUIRE_TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.is_empty());
        let Some(url) = url else {
            return Storage {
                dir,
                database_url: None,
                pg: None,
            };
        };
        // The same per-test schema as the API harness (crates/quire-server/tests/api/support.rs).
        let schema = format!("t_{}", quire_server::ids::random_base62(16).to_lowercase());
        let mut client =
            postgres::Client::connect(&url, postgres::NoTls).expect("connect to test PostgreSQL");
        client
            .batch_execute(&format!("CREATE SCHEMA {schema}"))
            .expect("create test schema");
        let sep = if url.contains('?') { '&' } else { '?' };
        Storage {
            dir,
            database_url: Some(format!("{url}{sep}options=-csearch_path%3D{schema}")),
            pg: Some((url, schema)),
        }
    }

    /// The storage flags of `quire serve` and `quire admin`.
    fn flags(&self) -> Vec<String> {
        let mut flags = vec!["--data-dir".to_string(), self.dir.path().display().to_string()];
        if let Some(url) = &self.database_url {
            flags.push("--database-url".into());
            flags.push(url.clone());
            flags.push("--database-max-connections".into());
            flags.push("4".into());
        }
        flags
    }

    /// The database opened directly, as `quire admin` does.
    fn open_db(&self) -> quire_server::db::Db {
        let config = match &self.database_url {
            Some(url) => quire_server::db::DbConfig::from_url(url, 2).expect("database config"),
            None => quire_server::db::DbConfig::from_url(
                &format!("sqlite://{}", self.dir.path().join("quire.db").display()),
                2,
            )
            .expect("database config"),
        };
        quire_server::db::Db::open(&config).expect("open the database")
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Some((url, schema)) = &self.pg {
            if let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls) {
                let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
            }
        }
    }
}

/// What `quire serve` printed on its first start.
struct Bootstrap {
    org: String,
    token: String,
}

/// A running `quire serve` child process.
struct Server {
    child: Child,
    base: String,
    bootstrap: Option<Bootstrap>,
    /// The last lines of its log, for failure messages.
    log: Arc<Mutex<Vec<String>>>,
    /// What it printed on stdout.
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `quire serve` on an ephemeral port and waits (with a deadline) until it logs the
    /// address it listens on. On a fresh database it bootstraps and prints a token, which is
    /// read when `expect_bootstrap`.
    fn start(storage: &Storage, expect_bootstrap: bool, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quire"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--log-format", "json"])
            .args(storage.flags())
            .args(extra)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn quire serve");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = mpsc::channel::<String>();
        // Both pipes are drained for the life of the process, so it never blocks on a full pipe.
        let stderr = child.stderr.take().expect("stderr");
        let stderr_log = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if v["fields"]["message"] == "quire is listening" {
                        if let Some(addr) = v["fields"]["addr"].as_str() {
                            let _ = addr_tx.send(addr.to_string());
                        }
                    }
                }
                let mut log = stderr_log.lock().unwrap();
                if log.len() >= 200 {
                    log.remove(0);
                }
                log.push(line);
            }
        });
        let stdout_lines = Arc::new(Mutex::new(Vec::new()));
        let (out_tx, out_rx) = mpsc::channel::<String>();
        let stdout = child.stdout.take().expect("stdout");
        let lines = stdout_lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line.clone());
                let _ = out_tx.send(line);
            }
        });
        let addr = match addr_rx.recv_timeout(START_DEADLINE) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let status = child.wait().ok();
                panic!(
                    "quire serve did not report its address within {START_DEADLINE:?} (exit: {status:?}); log:\n{}",
                    log.lock().unwrap().join("\n")
                );
            }
        };
        // The bootstrap block is printed before the address is logged; the pipe reader may still
        // be behind, hence the deadline.
        let mut bootstrap = None;
        if expect_bootstrap {
            let (mut org, mut token) = (None, None);
            let deadline = Instant::now() + Duration::from_secs(10);
            while bootstrap.is_none() {
                let line = out_rx
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                    .expect("the first start prints the administrator's token");
                let line = line.trim();
                if let Some(rest) = line.strip_prefix("organization") {
                    // "organization   <title> (id <id>)"
                    org = rest
                        .rsplit_once("(id ")
                        .map(|(_, id)| id.trim_end_matches(')').to_string());
                } else if let Some(rest) = line.strip_prefix("API token") {
                    token = Some(rest.trim().to_string());
                }
                if let (Some(org), Some(token)) = (&org, &token) {
                    bootstrap = Some(Bootstrap {
                        org: org.clone(),
                        token: token.clone(),
                    });
                }
            }
        }
        Server {
            child,
            base: format!("http://{addr}"),
            bootstrap,
            log,
            stdout: stdout_lines,
        }
    }

    /// SIGKILL: no graceful shutdown, no flushing, no lease release.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

async fn call(
    client: &reqwest::Client,
    token: &str,
    method: &str,
    url: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = client
        .request(reqwest::Method::from_bytes(method.as_bytes()).unwrap(), url)
        .bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status().as_u16();
    let bytes = resp.bytes().await.expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, body)
}

/// Every item of a list, page by page.
async fn walk(client: &reqwest::Client, token: &str, url: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut next = format!("{url}?limit=1000");
    loop {
        let (status, body) = call(client, token, "GET", &next, None).await;
        assert_eq!(status, 200, "listing {next}: {body}");
        items.extend(body["items"].as_array().expect("items").iter().cloned());
        match body["next"]["page"].as_str() {
            Some(page) => next = format!("{url}?limit=1000&page={page}"),
            None => return items,
        }
    }
}

fn ids(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .map(|v| v["id"].as_str().expect("id").to_string())
        .collect()
}

/// Acknowledged writes of one burst.
#[derive(Default)]
struct Acked {
    comments: Vec<String>,
    spaces: Vec<String>,
}

/// Runs [`WRITERS`] clients that create comments on `space` (even writers) and spaces in `org`
/// (odd writers) as fast as they can, recording each id answered with 2xx, and SIGKILLs the
/// server once [`KILL_AFTER`] writes were acknowledged, while the writers are still sending.
async fn burst_then_kill(server: Server, token: &str, org: &str, space: &str, round: usize) -> Acked {
    let acked = Arc::new(Mutex::new(Acked::default()));
    let (count_tx, mut count_rx) = tokio::sync::watch::channel(0usize);
    let count_tx = Arc::new(count_tx);
    let killed = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (acked, count_tx, killed) = (acked.clone(), count_tx.clone(), killed.clone());
        let (base, token) = (server.base.clone(), token.to_string());
        let (org, space) = (org.to_string(), space.to_string());
        writers.push(tokio::spawn(async move {
            let client = client();
            for n in 0.. {
                let (url, body) = if w % 2 == 0 {
                    (
                        format!("{base}/v1/spaces/{space}/comments"),
                        json!({"body": {"markdown": format!("round {round} writer {w} comment {n}")}}),
                    )
                } else {
                    (
                        format!("{base}/v1/orgs/{org}/spaces"),
                        json!({"title": format!("r{round} w{w} n{n}")}),
                    )
                };
                let sent = client.post(&url).bearer_auth(&token).json(&body).send().await;
                let resp = match sent {
                    Ok(resp) => resp,
                    // The server is gone: the burst is over for this writer.
                    Err(_) if killed.load(Ordering::SeqCst) => return,
                    Err(e) => panic!("writer {w}: request failed before the kill: {e}"),
                };
                let status = resp.status().as_u16();
                let Ok(bytes) = resp.bytes().await else {
                    // Killed between the status line and the body: not acknowledged.
                    assert!(
                        killed.load(Ordering::SeqCst),
                        "writer {w}: body lost before the kill"
                    );
                    return;
                };
                assert!(
                    (200..300).contains(&status),
                    "writer {w}: {status} {}",
                    String::from_utf8_lossy(&bytes)
                );
                let created: Value = serde_json::from_slice(&bytes).expect("JSON body");
                let id = created["id"].as_str().expect("id").to_string();
                let mut acked = acked.lock().unwrap();
                if w % 2 == 0 {
                    acked.comments.push(id);
                } else {
                    acked.spaces.push(id);
                }
                let total = acked.comments.len() + acked.spaces.len();
                drop(acked);
                count_tx.send_replace(total);
            }
        }));
    }
    let deadline = Duration::from_secs(60);
    tokio::time::timeout(deadline, count_rx.wait_for(|n| *n >= KILL_AFTER))
        .await
        .unwrap_or_else(|_| {
            panic!(
                "fewer than {KILL_AFTER} writes acknowledged within {deadline:?}; log:\n{}",
                server.log.lock().unwrap().join("\n")
            )
        })
        .expect("writers alive");
    killed.store(true, Ordering::SeqCst);
    server.kill();
    for writer in writers {
        writer.await.expect("writer");
    }
    let acked = std::mem::take(&mut *acked.lock().unwrap());
    assert!(acked.comments.len() + acked.spaces.len() >= KILL_AFTER);
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

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime")
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
