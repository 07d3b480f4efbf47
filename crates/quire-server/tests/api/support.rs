//! The test harness: a real quire server on an ephemeral port with a fresh database (SQLite in a
//! temporary directory, or a fresh schema of the PostgreSQL database named by
//! `QUIRE_TEST_DATABASE_URL`), fresh file storage (the data directory, or a fresh prefix of the
//! S3-compatible bucket named by `QUIRE_TEST_OBJECT_STORE_URL`, reached with the `AWS_*`
//! variables), and a small HTTP client.

// A shared harness: helpers arrive before every test that uses them.
#![allow(dead_code)]

pub mod gitbook;
pub mod idp;
pub mod site;
pub mod snapshot;
pub mod translator;

use std::time::Duration;

use clap::Parser;
use quire_server::config::ServeArgs;
use quire_server::db::Db;
use quire_server::server::Running;
use serde_json::Value;

pub struct TestApp {
    pub base: String,
    pub running: Option<Running>,
    pub db: Db,
    client: reqwest::Client,
    /// Removed with the test app (a server started [`TestApp::beside`] another has an empty one).
    _dir: tempfile::TempDir,
    pg: Option<PgSchema>,
    storage: quire_server::config::StorageArgs,
}

/// A user created for a test, with an API token.
#[derive(Clone, Debug)]
pub struct TestUser {
    pub id: String,
    pub email: String,
    pub token: String,
}

/// A response: status, headers and the JSON body (Null when empty).
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Resp {
    /// Asserts the status, printing the body when it differs.
    #[track_caller]
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.body);
        self.body
    }

    /// Asserts an error status with the JSON error envelope.
    #[track_caller]
    pub fn expect_error(self, status: u16) -> String {
        assert_eq!(self.status, status, "unexpected status; body: {}", self.body);
        assert_eq!(
            self.body["error"]["code"], status,
            "error envelope: {}",
            self.body
        );
        let message = self.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(!message.is_empty(), "error without a message: {}", self.body);
        message
    }
}

fn content_type_of(headers: &reqwest::header::HeaderMap) -> Option<&str> {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
}

/// Server logs go to the test output when RUST_LOG is set (e.g. RUST_LOG=error).
fn init_logs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("RUST_LOG").is_some() {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
                .with_test_writer()
                .try_init();
        }
    });
}

struct PgSchema {
    admin_url: String,
    schema: String,
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let url = self.admin_url.clone();
        let sql = format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema);
        // The synchronous client must not run on an async runtime thread.
        let _ = std::thread::spawn(move || {
            let _ = quire_server::db::postgres_execute_batch(&url, &sql);
        })
        .join();
    }
}

impl TestApp {
    pub async fn start() -> TestApp {
        TestApp::start_with(&[]).await
    }

    /// Starts a server with extra `quire serve` flags.
    pub async fn start_with(flags: &[&str]) -> TestApp {
        init_logs();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut argv: Vec<String> = vec![
            "serve".into(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--data-dir".into(),
            dir.path().display().to_string(),
            "--no-bootstrap".into(),
        ];
        let mut pg = None;
        if let Ok(url) = std::env::var("QUIRE_TEST_DATABASE_URL")
            && !url.is_empty()
        {
            let schema = format!("t_{}", quire_server::ids::random_base62(16).to_lowercase());
            let admin_url = url.clone();
            let create = format!("CREATE SCHEMA {schema}");
            std::thread::spawn(move || {
                quire_server::db::postgres_execute_batch(&admin_url, &create)
                    .expect("create a test schema in PostgreSQL");
            })
            .join()
            .expect("schema thread");
            let sep = if url.contains('?') { '&' } else { '?' };
            argv.push("--database-url".into());
            argv.push(format!("{url}{sep}options=-csearch_path%3D{schema}"));
            argv.push("--database-max-connections".into());
            argv.push("4".into());
            pg = Some(PgSchema {
                admin_url: url,
                schema,
            });
        }
        let own_store = flags.contains(&"--object-store-url");
        if let Some(bucket) = std::env::var("QUIRE_TEST_OBJECT_STORE_URL")
            .ok()
            .filter(|u| !u.is_empty() && !own_store)
        {
            let prefix = format!("t_{}", quire_server::ids::random_base62(16).to_lowercase());
            argv.push("--object-store-url".into());
            argv.push(format!("{}/{prefix}", bucket.trim_end_matches('/')));
        }
        argv.extend(flags.iter().map(|f| f.to_string()));
        TestApp::serve(argv, dir, pg).await
    }

    /// A second server on this one's storage (the same database and files), as another
    /// process behind the same load balancer would be.
    pub async fn beside(&self) -> TestApp {
        self.beside_with(&[]).await
    }

    /// [`TestApp::beside`] with more flags.
    pub async fn beside_with(&self, flags: &[&str]) -> TestApp {
        let mut argv: Vec<String> = vec![
            "serve".into(),
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--data-dir".into(),
            self.data_dir().display().to_string(),
            "--no-bootstrap".into(),
        ];
        if let Some(url) = &self.storage.database_url {
            argv.extend(["--database-url".into(), url.clone()]);
            argv.extend(["--database-max-connections".into(), "4".into()]);
        }
        if let Some(url) = &self.storage.object_store_url {
            argv.extend(["--object-store-url".into(), url.clone()]);
        }
        argv.extend(flags.iter().map(|f| f.to_string()));
        // The first server keeps the data directory and the PostgreSQL schema.
        TestApp::serve(argv, tempfile::tempdir().expect("temp dir"), None).await
    }

    async fn serve(argv: Vec<String>, dir: tempfile::TempDir, pg: Option<PgSchema>) -> TestApp {
        let args = ServeCli::parse_from(std::iter::once("test".to_string()).chain(argv)).args();
        let storage = args.storage.clone();
        let running = quire_server::server::start(&args).await.expect("server starts");
        let base = format!("http://{}", running.addr);
        let db = running.db.clone();
        TestApp {
            base,
            db,
            running: Some(running),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .expect("client"),
            _dir: dir,
            pg,
            storage,
        }
    }

    /// The server's database opened again, as another process on the same storage would (a
    /// second server, or `quire admin` beside this one).
    pub async fn another_process(&self) -> Db {
        let config = self.storage.db_config().expect("database config");
        tokio::task::spawn_blocking(move || Db::open(&config).expect("open the database again"))
            .await
            .expect("open thread")
    }

    /// The server's data directory.
    pub fn data_dir(&self) -> &std::path::Path {
        &self.storage.data_dir
    }

    /// The running server's application state, to run its background work directly.
    pub fn server(&self) -> &quire_server::state::App {
        self.running.as_ref().expect("server running").app()
    }

    /// How many files the server's object store holds and their total size in bytes.
    pub async fn stored_files(&self) -> (u64, u64) {
        let objects = self.server().blobs.list("").await.expect("list stored files");
        (objects.len() as u64, objects.iter().map(|(_, size)| size).sum())
    }

    /// The hashes of the blobs a space stores.
    pub async fn stored_blobs(&self, space_id: &str) -> std::collections::BTreeSet<String> {
        let prefix = format!("spaces/{space_id}/blobs");
        let objects = self
            .server()
            .blobs
            .list(&prefix)
            .await
            .expect("list stored blobs");
        objects
            .into_iter()
            .filter_map(|(path, _)| path.rsplit('/').next().map(str::to_owned))
            .collect()
    }

    /// The server's file storage, for work done beside it (an import).
    pub fn blobs(&self) -> quire_server::files::BlobStore {
        self.server().blobs.clone()
    }

    pub fn is_postgres(&self) -> bool {
        self.pg.is_some()
    }

    /// Creates a user with a token through the admin functions.
    pub async fn user(&self, name: &str) -> TestUser {
        let email = format!(
            "{}@{}.example.com",
            name.to_lowercase(),
            quire_server::ids::random_base62(8).to_lowercase()
        );
        self.user_with_email(name, &email).await
    }

    pub async fn user_with_email(&self, name: &str, email: &str) -> TestUser {
        let db = self.db.clone();
        let (name, email) = (name.to_string(), email.to_string());
        tokio::task::spawn_blocking(move || {
            let id = quire_store::admin::create_user(&db, &email, &name).expect("create user");
            let token = quire_store::admin::create_token(&db, &email, &[]).expect("create token");
            TestUser { id, email, token }
        })
        .await
        .expect("user thread")
    }

    pub async fn request(&self, method: &str, token: Option<&str>, path: &str, body: Option<Value>) -> Resp {
        self.request_with(method, token, path, body, &[]).await
    }

    /// A request with extra headers.
    pub async fn request_with(
        &self,
        method: &str,
        token: Option<&str>,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let url = format!("{}{path}", self.base);
        let method_name = method;
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self.client.request(method, url);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        };
        gitbook::check(method_name, path, status, content_type_of(&headers), &body);
        Resp {
            status,
            headers,
            body,
        }
    }

    /// A request with a body of any content type (None: no Content-Type header).
    pub async fn send_bytes(
        &self,
        method: &str,
        user: &TestUser,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Resp {
        let method_name = method;
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&user.token)
            .body(body.to_vec());
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.expect("body");
        let body = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        gitbook::check(method_name, path, status, content_type_of(&headers), &body);
        Resp {
            status,
            headers,
            body,
        }
    }

    /// The address the server listens on.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.running.as_ref().expect("running").addr
    }

    /// A GET with extra request headers, answering status, headers and the body's bytes as sent.
    pub async fn get_raw(
        &self,
        user: &TestUser,
        path: &str,
        headers: &[(&str, &str)],
    ) -> (u16, reqwest::header::HeaderMap, bytes::Bytes) {
        let mut req = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&user.token);
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        (status, headers, resp.bytes().await.expect("body"))
    }

    /// One number read from the database: `sql` with `?1` bound to `arg`.
    pub async fn scalar(&self, sql: &'static str, arg: impl Into<quire_store::db::Value>) -> i64 {
        let db = self.db.clone();
        let arg = arg.into();
        tokio::task::spawn_blocking(move || {
            db.read_sync(|c| c.query_scalar::<i64>(sql, std::slice::from_ref(&arg)))
                .unwrap()
                .unwrap()
        })
        .await
        .unwrap()
    }

    /// `path` answers `expected` gzip-compressed (with `Vary`) to a client sending
    /// `gzip_accept`, and plain to one sending `plain_accept` (no Accept-Encoding when empty).
    pub async fn assert_same_json_gzip_or_plain(
        &self,
        user: &TestUser,
        path: &str,
        gzip_accept: &str,
        plain_accept: &str,
        expected: &Value,
    ) {
        let (status, headers, packed) = self
            .get_raw(user, path, &[("accept-encoding", gzip_accept)])
            .await;
        assert_eq!(status, 200);
        assert_eq!(headers["content-encoding"], "gzip");
        assert_eq!(headers["vary"], "accept-encoding");
        assert_eq!(
            &serde_json::from_slice::<Value>(&gunzip(&packed)).unwrap(),
            expected
        );
        let plain_headers: &[(&str, &str)] = if plain_accept.is_empty() {
            &[]
        } else {
            &[("accept-encoding", plain_accept)]
        };
        let (status, headers, plain) = self.get_raw(user, path, plain_headers).await;
        assert_eq!(status, 200);
        assert!(headers.get("content-encoding").is_none());
        assert_eq!(&serde_json::from_slice::<Value>(&plain).unwrap(), expected);
    }

    pub async fn get(&self, user: &TestUser, path: &str) -> Resp {
        self.request("GET", Some(&user.token), path, None).await
    }

    pub async fn post(&self, user: &TestUser, path: &str, body: Value) -> Resp {
        self.request("POST", Some(&user.token), path, Some(body)).await
    }

    pub async fn patch(&self, user: &TestUser, path: &str, body: Value) -> Resp {
        self.request("PATCH", Some(&user.token), path, Some(body)).await
    }

    pub async fn put(&self, user: &TestUser, path: &str, body: Value) -> Resp {
        self.request("PUT", Some(&user.token), path, Some(body)).await
    }

    pub async fn delete(&self, user: &TestUser, path: &str) -> Resp {
        self.request("DELETE", Some(&user.token), path, None).await
    }

    /// Walks a list page by page with `limit` and returns every item.
    pub async fn walk(&self, user: &TestUser, path: &str, limit: usize) -> Vec<Value> {
        let mut items = Vec::new();
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut url = format!("{path}{sep}limit={limit}");
        for _ in 0..100_000 {
            let body = self.get(user, &url).await.expect(200);
            let page = body["items"].as_array().expect("items").clone();
            assert!(page.len() <= limit, "page larger than limit");
            items.extend(page);
            match body["next"]["page"].as_str() {
                Some(next) => url = format!("{path}{sep}limit={limit}&page={next}"),
                None => {
                    assert!(body.get("next").is_none(), "next present without page: {body}");
                    return items;
                }
            }
        }
        panic!("list did not end");
    }

    /// Creates an organization through the API; returns its id.
    pub async fn org(&self, admin: &TestUser, title: &str) -> String {
        let body = self
            .post(admin, "/v1/orgs", serde_json::json!({ "title": title }))
            .await
            .expect(201);
        body["id"].as_str().expect("org id").to_string()
    }
}

impl TestApp {
    /// Adds `user` to the organization with `role` (None: guest) through an invite link.
    pub async fn add_member(&self, admin: &TestUser, org: &str, user: &TestUser, role: Option<&str>) {
        let invite = self
            .post(
                admin,
                &format!("/v1/orgs/{org}/link-invites"),
                serde_json::json!({ "role": role }),
            )
            .await
            .expect(201);
        let id = invite["id"].as_str().expect("invite id");
        self.post(
            user,
            &format!("/v1/orgs/{org}/invites/{id}"),
            serde_json::json!({}),
        )
        .await
        .expect(200);
        if let Some(role) = role {
            // Joining never lowers a role; set it exactly for tests that need a weaker one.
            self.patch(
                admin,
                &format!("/v1/orgs/{org}/members/{}", user.id),
                serde_json::json!({ "role": role }),
            )
            .await
            .expect(200);
        }
    }
}

/// Asserts that items are sorted by (`time` field, `id`), descending or ascending: the keyset
/// order of every list. Timestamps have millisecond precision, so items made in the same
/// millisecond are ordered by id.
#[track_caller]
pub fn assert_sorted_by(items: &[Value], time: &str, id: &str, descending: bool) {
    let key = |v: &Value| {
        let t = v
            .pointer(time)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let i = v
            .pointer(id)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        (t, i)
    };
    for w in items.windows(2) {
        let (a, b) = (key(&w[0]), key(&w[1]));
        if descending {
            assert!(a >= b, "not in descending order: {a:?} before {b:?}");
        } else {
            assert!(a <= b, "not in ascending order: {a:?} before {b:?}");
        }
    }
}

impl TestApp {
    /// Stops this server abruptly, as a killed process, keeping its storage for a server
    /// started [`TestApp::beside`] it.
    pub fn kill(&mut self) {
        if let Some(running) = self.running.take() {
            running.abort();
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        // Dropping the runtime stops the server tasks; the PostgreSQL schema goes with `pg`.
        self.running.take();
    }
}

#[derive(clap::Parser)]
struct ServeCli {
    #[command(subcommand)]
    command: ServeCommand,
}

#[derive(clap::Subcommand)]
enum ServeCommand {
    Serve {
        #[command(flatten)]
        args: ServeArgs,
    },
}

impl ServeCli {
    fn args(self) -> ServeArgs {
        match self.command {
            ServeCommand::Serve { args } => args,
        }
    }
}

/// Asserts that a 403's message names the role needed and the caller's role (`role` in the
/// API's words, or `guest`), not an internal name.
#[track_caller]
pub fn assert_role_refusal(message: &str, role: &str) {
    let has = if role == "guest" {
        "you have no role there".to_string()
    } else {
        format!("your role there is `{role}`")
    };
    assert!(
        message.contains("needs the `") && message.contains(&has),
        "a 403 should name the role needed and `{role}`: {message}"
    );
}

/// The bytes a gzip stream holds.
pub fn gunzip(packed: &[u8]) -> Vec<u8> {
    let mut unpacked = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(packed), &mut unpacked)
        .expect("a gzip stream");
    unpacked
}
