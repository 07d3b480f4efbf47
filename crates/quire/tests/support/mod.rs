//! What the tests of the `quire` binary share: temporary storage (SQLite, or a fresh schema of
//! the PostgreSQL database named by `QUIRE_TEST_DATABASE_URL`), `quire serve` as a child
//! process, `quire admin` runs, a small HTTP client, and bursts of concurrent writes.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a process may take to start listening (it runs migrations and indexing first).
pub const START_DEADLINE: Duration = Duration::from_secs(30);

/// Where a test's processes keep their data: a temporary directory, and a fresh PostgreSQL
/// schema when `QUIRE_TEST_DATABASE_URL` is set (dropped at the end).
pub struct Storage {
    pub dir: tempfile::TempDir,
    pub database_url: Option<String>,
    pg: Option<(String, String)>,
}

impl Storage {
    pub fn new() -> Storage {
        let url = std::env::var("QUIRE_TEST_DATABASE_URL")
            .ok()
            .filter(|u| !u.is_empty());
        let Some(url) = url else {
            return Storage::sqlite();
        };
        let dir = tempfile::tempdir().expect("temp dir");
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

    /// SQLite and files in a temporary directory, whichever engine the suite runs on.
    pub fn sqlite() -> Storage {
        Storage {
            dir: tempfile::tempdir().expect("temp dir"),
            database_url: None,
            pg: None,
        }
    }

    /// The storage flags of `quire serve` and `quire admin`.
    pub fn flags(&self) -> Vec<String> {
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
    pub fn open_db(&self) -> quire_server::db::Db {
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
        if let Some((url, schema)) = &self.pg
            && let Ok(mut c) = postgres::Client::connect(url, postgres::NoTls)
        {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

/// What `quire serve` printed on its first start.
pub struct Bootstrap {
    pub org: String,
    pub token: String,
}

/// A running `quire serve` child process.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub bootstrap: Option<Bootstrap>,
    /// The last lines of its log, for failure messages.
    pub log: Arc<Mutex<Vec<String>>>,
    /// What it printed on stdout.
    pub stdout: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `quire serve` on an ephemeral port and waits (with a deadline) until it logs the
    /// address it listens on. On a fresh database it bootstraps and prints a token, which is
    /// read when `expect_bootstrap`.
    pub fn start(storage: &Storage, expect_bootstrap: bool, extra: &[&str]) -> Server {
        Server::start_logging(storage, expect_bootstrap, extra, "json")
    }

    /// [`Server::start`] with logs in `log_format` (`text` or `json`).
    pub fn start_logging(
        storage: &Storage,
        expect_bootstrap: bool,
        extra: &[&str],
        log_format: &str,
    ) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_quire"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--log-format", log_format])
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
                if let Some(addr) = listening_address(&line) {
                    let _ = addr_tx.send(addr);
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
    pub fn kill(mut self) {
        self.child.kill().expect("SIGKILL the server");
        self.child.wait().expect("reap the server");
    }
}

/// The address in the log line that says the server listens, in either log format.
fn listening_address(line: &str) -> Option<String> {
    if let Ok(v) = serde_json::from_str::<Value>(line) {
        let listening = v["fields"]["message"] == "quire is listening";
        return listening.then(|| v["fields"]["addr"].as_str().map(str::to_string))?;
    }
    let (_, rest) = line.split_once("quire is listening addr=")?;
    rest.split_whitespace().next().map(str::to_string)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

pub async fn call(
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
pub async fn walk(client: &reqwest::Client, token: &str, url: &str) -> Vec<Value> {
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

pub fn ids(items: &[Value]) -> BTreeSet<String> {
    items
        .iter()
        .map(|v| v["id"].as_str().expect("id").to_string())
        .collect()
}

/// Runs `quire admin ARGS` in `cwd` with the storage flags given in `args` (none added) and
/// no `QUIRE_*` variable of the environment, and returns what it did.
pub fn admin(cwd: &Path, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_quire"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("QUIRE_") {
            command.env_remove(name);
        }
    }
    command
        .arg("admin")
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run quire admin")
}

/// `quire admin` arguments that set up a new database with the user ann@example.com.
pub const CREATE_ANN: &[&str] = &[
    "--create",
    "user",
    "create",
    "--email",
    "ann@example.com",
    "--name",
    "Ann",
];

/// What a command printed on stderr.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Acknowledged writes of a burst.
#[derive(Clone, Default)]
pub struct Acked {
    pub comments: Vec<String>,
    pub spaces: Vec<String>,
}

impl Acked {
    pub fn len(&self) -> usize {
        self.comments.len() + self.spaces.len()
    }
}

/// Concurrent clients that create comments on a space (even writers) and spaces in an
/// organization (odd writers) as fast as they can, recording each id answered with 2xx, until
/// [`Burst::stop`]. A request that fails after the stop (the server was killed) ends its writer;
/// one that fails before it fails the test.
pub struct Burst {
    acked: Arc<Mutex<Acked>>,
    count: tokio::sync::watch::Receiver<usize>,
    stopped: Arc<AtomicBool>,
    writers: Vec<tokio::task::JoinHandle<()>>,
}

impl Burst {
    pub fn start(base: &str, token: &str, org: &str, space: &str, round: usize, writers: usize) -> Burst {
        let acked = Arc::new(Mutex::new(Acked::default()));
        let (count_tx, count) = tokio::sync::watch::channel(0usize);
        let count_tx = Arc::new(count_tx);
        let stopped = Arc::new(AtomicBool::new(false));
        let writers = (0..writers)
            .map(|w| {
                let (acked, count_tx, stopped) = (acked.clone(), count_tx.clone(), stopped.clone());
                let (base, token) = (base.to_string(), token.to_string());
                let (org, space) = (org.to_string(), space.to_string());
                tokio::spawn(async move {
                    let client = client();
                    for n in 0.. {
                        if stopped.load(Ordering::SeqCst) {
                            return;
                        }
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
                            Err(_) if stopped.load(Ordering::SeqCst) => return,
                            Err(e) => panic!("writer {w}: request failed before the stop: {e}"),
                        };
                        let status = resp.status().as_u16();
                        let Ok(bytes) = resp.bytes().await else {
                            // Cut off between the status line and the body: not acknowledged.
                            assert!(stopped.load(Ordering::SeqCst), "writer {w}: body lost before the stop");
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
                        let total = acked.len();
                        drop(acked);
                        count_tx.send_replace(total);
                    }
                })
            })
            .collect();
        Burst {
            acked,
            count,
            stopped,
            writers,
        }
    }

    /// Waits (60 s at most) until `n` writes were acknowledged.
    pub async fn wait_for(&mut self, n: usize, server: &Server) {
        let deadline = Duration::from_secs(60);
        tokio::time::timeout(deadline, self.count.wait_for(|c| *c >= n))
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "fewer than {n} writes acknowledged within {deadline:?}; log:\n{}",
                    server.log.lock().unwrap().join("\n")
                )
            })
            .expect("writers alive");
    }

    /// The writes acknowledged so far.
    pub fn acked(&self) -> Acked {
        self.acked.lock().unwrap().clone()
    }

    /// Tells the writers to stop: from now on a failed request ends a writer quietly.
    pub fn halt(&self) {
        self.stopped.store(true, Ordering::SeqCst);
    }

    /// Stops the writers, waits for them, and returns every acknowledged write.
    pub async fn stop(self) -> Acked {
        self.halt();
        for writer in self.writers {
            writer.await.expect("writer");
        }
        std::mem::take(&mut *self.acked.lock().unwrap())
    }
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime")
}
