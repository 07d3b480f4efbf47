//! The storage layer: one small API over two real engines, SQLite (embedded default) and
//! PostgreSQL.
//!
//! Business code is plain synchronous functions that take `&mut dyn Conn` and run SQL written
//! once, in the portable subset both engines share (`?1`-style placeholders, integers for
//! booleans and timestamps, `ON CONFLICT`, `RETURNING`). [`Db::read`] and [`Db::write`] run such
//! a function on a connection of the configured engine; `write` wraps it in a transaction and
//! retries it when PostgreSQL reports a serialization failure or a deadlock.
//!
//! Why synchronous: a closure over `&mut dyn Conn` is the simplest thing that works the same on
//! both engines, keeps transactions explicit, and lets SQLite be queried inline on the calling
//! thread, measured as its fastest access path (docs/decisions/0001-storage-one-synchronous-api.md).

mod changes;
pub mod fulltext;
mod migrations;
mod postgres;
mod sqlite;
mod value;

use std::sync::Arc;

pub use changes::Stamp;
pub use postgres::execute_batch as postgres_execute_batch;
pub use value::{Col, FromValue, Row, Value};

/// Which SQL dialect a connection speaks, for the few statements that differ (full-text search).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// A database error, kept opaque except for the classes callers act on.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("unique constraint violated: {0}")]
    Unique(String),
    #[error("transaction conflict, retry: {0}")]
    Retry(String),
    #[error("database busy: {0}")]
    Busy(String),
    #[error("database error: {0}")]
    Other(String),
    #[error("unexpected value in column {column}: {message}")]
    Decode { column: usize, message: String },
    /// The request's deadline passed before the transaction committed: it was rolled back.
    #[error("the request's deadline passed before its transaction committed")]
    Deadline,
}

tokio::task_local! {
    /// When the request being served must be answered by (see [`with_deadline`]).
    static DEADLINE: std::time::Instant;
}

/// Runs a request's future with a deadline: a write transaction it starts is rolled back instead
/// of committed once the deadline has passed, so a request answered "timed out" never writes
/// afterwards (its transaction runs on a blocking thread that dropping the future cannot stop).
pub async fn with_deadline<F: std::future::Future>(deadline: std::time::Instant, f: F) -> F::Output {
    DEADLINE.scope(deadline, f).await
}

/// A connection, or a transaction on one: what business code queries through.
pub trait Conn {
    fn dialect(&self) -> Dialect;
    /// Runs a statement and returns every row.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError>;
    /// Runs a statement and returns the number of rows it changed.
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError>;
    /// Runs several statements without parameters (migrations).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
}

impl dyn Conn + '_ {
    /// The first row, if any.
    pub fn query_opt(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// A single value of the first row (`SELECT count(*) ...`); None when there is no row.
    pub fn query_scalar<T: FromValue>(&mut self, sql: &str, params: &[Value]) -> Result<Option<T>, DbError> {
        match self.query_opt(sql, params)? {
            Some(row) => Ok(Some(row.get(0)?)),
            None => Ok(None),
        }
    }

    /// Whether the statement yields at least one row.
    pub fn exists(&mut self, sql: &str, params: &[Value]) -> Result<bool, DbError> {
        Ok(self.query_opt(sql, params)?.is_some())
    }
}

/// Builds a parameter slice from expressions convertible into [`Value`].
#[macro_export]
macro_rules! params {
    () => { &[] as &[$crate::db::Value] };
    ($($v:expr),+ $(,)?) => { &[$($crate::db::Value::from($v)),+] as &[$crate::db::Value] };
}

/// How to reach the database.
#[derive(Clone, Debug)]
pub enum DbConfig {
    Sqlite { path: std::path::PathBuf },
    Postgres { url: String, max_connections: usize },
}

impl DbConfig {
    /// Chooses the engine from a URL's scheme: `sqlite://PATH` (or `sqlite:PATH`) or
    /// `postgres://...`/`postgresql://...`.
    pub fn from_url(url: &str, max_connections: usize) -> Result<DbConfig, String> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return Ok(DbConfig::Postgres {
                url: url.to_string(),
                max_connections,
            });
        }
        if let Some(rest) = url.strip_prefix("sqlite:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err("sqlite URL names no file: use sqlite://PATH".into());
            }
            return Ok(DbConfig::Sqlite { path: path.into() });
        }
        Err(format!(
            "unsupported database URL {url:?}: use postgres://... or sqlite://PATH"
        ))
    }
}

impl DbConfig {
    /// Whether the database exists and quire has set it up. False for a SQLite file not yet
    /// created and for a PostgreSQL database (or schema) quire never migrated. Blocking.
    pub fn holds_quire(&self) -> Result<bool, DbError> {
        match self {
            DbConfig::Sqlite { path } => sqlite::holds_quire(path),
            DbConfig::Postgres { url, .. } => postgres::holds_quire(url),
        }
    }
}

/// Whether some connection, of any process, has the SQLite database at `path` open. Blocking.
pub fn sqlite_in_use(path: &std::path::Path) -> Result<bool, DbError> {
    sqlite::in_use(path)
}

/// The database: a handle cheap to clone and share between tasks.
#[derive(Clone)]
pub struct Db {
    engine: Arc<Engine>,
    /// Bounds the database work running on the blocking pool at once: beyond the engine's useful
    /// parallelism more threads only add connections and memory.
    blocking: Arc<tokio::sync::Semaphore>,
    changes: Arc<changes::Changes>,
    /// Starts PostgreSQL's listening thread on the first stamp: processes that never ask (`quire
    /// admin`) never listen.
    listening: Arc<std::sync::Once>,
}

enum Engine {
    Sqlite(sqlite::SqliteDb),
    Postgres(postgres::PgDb),
}

impl Db {
    /// Opens the database and brings its schema up to date. Blocking: call it before the runtime
    /// serves requests, or from `spawn_blocking`.
    pub fn open(config: &DbConfig) -> Result<Db, DbError> {
        let (engine, permits) = match config {
            DbConfig::Sqlite { path } => (Engine::Sqlite(sqlite::SqliteDb::open(path)?), 8),
            DbConfig::Postgres { url, max_connections } => (
                Engine::Postgres(postgres::PgDb::open(url, *max_connections)?),
                (*max_connections).max(1),
            ),
        };
        // PostgreSQL trusts nothing kept until its listening connection is up.
        let changes = Arc::new(changes::Changes::new(matches!(engine, Engine::Sqlite(_))));
        let db = Db {
            engine: Arc::new(engine),
            blocking: Arc::new(tokio::sync::Semaphore::new(permits)),
            changes,
            listening: Arc::new(std::sync::Once::new()),
        };
        db.migrate()?;
        Ok(db)
    }

    pub fn dialect(&self) -> Dialect {
        match &*self.engine {
            Engine::Sqlite(_) => Dialect::Sqlite,
            Engine::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Where this process stands in the database's history: take it before a read, and the
    /// read's answer may be reused for as long as a later stamp is equal to it (see
    /// `changes`). None when writes may go unnoticed (PostgreSQL's listener is down, or SQLite
    /// could not be asked), and then nothing may be reused. Microseconds: SQLite asks its
    /// watching connection; PostgreSQL reads a counter (the first call starts listening).
    pub fn stamp(&self) -> Option<Stamp> {
        match &*self.engine {
            Engine::Sqlite(db) => db.observe(&self.changes).ok()?,
            Engine::Postgres(db) => self.listening.call_once(|| {
                if let Err(e) = db.listen(Arc::downgrade(&self.changes)) {
                    tracing::error!(error = %e, "not caching reads");
                }
            }),
        }
        self.changes.stamp()
    }

    /// Resolves at the next write this process sees (its own, or on PostgreSQL another
    /// process's, through the notification): the job runner waits on it with a poll beside it.
    /// Create it before looking for work, so that a write in between is not missed.
    pub fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.changes.bumped.notified()
    }

    /// Writes a consistent copy of a SQLite database to `target` (a file that must not exist)
    /// while the database stays in use. PostgreSQL has its own tools (`pg_dump`), and this
    /// answers an error naming them. Blocking.
    pub fn backup_into(&self, target: &std::path::Path) -> Result<(), DbError> {
        match &*self.engine {
            Engine::Sqlite(db) => db.vacuum_into(target),
            Engine::Postgres(_) => Err(DbError::Other(
                "the database is PostgreSQL: back it up with pg_dump (see README.md, Operations, Backups)"
                    .into(),
            )),
        }
    }

    /// Whether the database answers (`SELECT 1` on a read connection), for readiness checks.
    pub async fn ping(&self) -> Result<(), DbError> {
        self.read_blocking(|c| c.query("SELECT 1", &[]).map(drop)).await
    }

    fn migrate(&self) -> Result<(), DbError> {
        match &*self.engine {
            Engine::Sqlite(db) => db.with_writer(|conn| migrations::run(conn)),
            Engine::Postgres(db) => db.with_conn(|conn| migrations::run(conn)),
        }
    }

    /// Runs `f` on a connection outside any explicit transaction. Blocking.
    pub fn read_sync<T, E>(&self, f: impl FnOnce(&mut dyn Conn) -> Result<T, E>) -> Result<T, E>
    where
        E: From<DbError>,
    {
        match &*self.engine {
            Engine::Sqlite(db) => db.with_reader(f),
            Engine::Postgres(db) => db.with_conn(f),
        }
    }

    /// Runs `f` in a transaction, committing when it returns Ok and rolling back otherwise.
    /// `f` may run more than once when the database asks for a retry. Blocking.
    pub fn write_sync<T, E>(&self, f: impl FnMut(&mut dyn Conn) -> Result<T, E>) -> Result<T, E>
    where
        E: From<DbError> + RetryHint,
    {
        self.write_until(None, f)
    }

    /// [`Db::write_sync`], rolled back (with [`DbError::Deadline`]) when `deadline` passes
    /// before the commit.
    fn write_until<T, E>(
        &self,
        deadline: Option<std::time::Instant>,
        mut f: impl FnMut(&mut dyn Conn) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<DbError> + RetryHint,
    {
        const ATTEMPTS: usize = 8;
        let mut attempt = 0;
        loop {
            attempt += 1;
            // Whether COMMIT was sent: then the transaction may have committed, even when the
            // answer was lost.
            let mut committing = false;
            let outcome = match &*self.engine {
                Engine::Sqlite(db) => db.with_writer(|conn| {
                    transaction(conn, "BEGIN IMMEDIATE", deadline, &mut committing, &mut f)
                }),
                Engine::Postgres(db) => {
                    db.with_conn(|conn| transaction(conn, "BEGIN", deadline, &mut committing, &mut f))
                }
            };
            // Moved whatever the outcome: cheap, and an unknown commit outcome is covered.
            self.changes.bump();
            if let Engine::Postgres(db) = &*self.engine
                && committing
            {
                db.notify_writes();
            }
            match outcome {
                Err(e)
                    if e.is_retryable()
                        && attempt < ATTEMPTS
                        && deadline.is_none_or(|d| std::time::Instant::now() < d) =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(2 << attempt));
                }
                other => return other,
            }
        }
    }

    /// Runs a read. On SQLite it runs inline on the calling thread: point reads take
    /// microseconds and a hop to another thread costs more than the query. On PostgreSQL it
    /// runs on the blocking pool. Use [`Db::read_blocking`] for reads that may take milliseconds.
    pub async fn read<T, E>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        match &*self.engine {
            Engine::Sqlite(db) => db.with_reader(f),
            Engine::Postgres(_) => self.read_blocking(f).await,
        }
    }

    /// Runs a read on the blocking thread pool, for reads that do real work (page trees,
    /// search, exports).
    pub async fn read_blocking<T, E>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + Send + 'static,
    {
        let _permit = self.permit().await?;
        let db = self.clone();
        match tokio::task::spawn_blocking(move || db.read_sync(f)).await {
            Ok(result) => result,
            Err(join) => std::panic::resume_unwind(join.into_panic()),
        }
    }

    /// Runs a write transaction on the blocking thread pool. See [`Db::write_sync`].
    pub async fn write<T, E>(
        &self,
        f: impl FnMut(&mut dyn Conn) -> Result<T, E> + Send + 'static,
    ) -> Result<T, E>
    where
        T: Send + 'static,
        E: From<DbError> + RetryHint + Send + 'static,
    {
        let deadline = DEADLINE.try_with(|d| *d).ok();
        let _permit = self.permit().await?;
        let db = self.clone();
        match tokio::task::spawn_blocking(move || db.write_until(deadline, f)).await {
            Ok(result) => result,
            Err(join) => std::panic::resume_unwind(join.into_panic()),
        }
    }
}

impl Db {
    async fn permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, DbError> {
        self.blocking
            .acquire()
            .await
            .map_err(|_| DbError::Other("the database is shutting down".into()))
    }
}

/// Lets [`Db::write_sync`] see through an application error to the database error it wraps.
pub trait RetryHint {
    fn is_retryable(&self) -> bool;
}

impl RetryHint for DbError {
    fn is_retryable(&self) -> bool {
        matches!(self, DbError::Retry(_) | DbError::Busy(_))
    }
}

fn transaction<T, E: From<DbError>>(
    conn: &mut dyn Conn,
    begin: &str,
    deadline: Option<std::time::Instant>,
    committing: &mut bool,
    f: &mut impl FnMut(&mut dyn Conn) -> Result<T, E>,
) -> Result<T, E> {
    conn.batch(begin)?;
    match f(conn) {
        Ok(_) if deadline.is_some_and(|d| std::time::Instant::now() >= d) => {
            let _ = conn.batch("ROLLBACK");
            Err(DbError::Deadline.into())
        }
        Ok(value) => {
            *committing = true;
            match conn.batch("COMMIT") {
                Ok(()) => Ok(value),
                Err(e) => {
                    let _ = conn.batch("ROLLBACK");
                    Err(e.into())
                }
            }
        }
        Err(e) => {
            // A failed rollback leaves nothing to undo: the connection is discarded by its pool
            // when the engine reports it broken.
            let _ = conn.batch("ROLLBACK");
            Err(e)
        }
    }
}

/// Collects the parameters of a statement built at run time and hands out their placeholders,
/// so optional filters never leave unused or misnumbered parameters:
///
/// ```ignore
/// let mut args = Args::default();
/// let sql = format!("SELECT id FROM spaces WHERE organization_id = {}", args.arg(org_id));
/// c.query(&sql, args.values())
/// ```
#[derive(Default, Debug)]
pub struct Args(Vec<Value>);

impl Args {
    /// Adds a parameter and returns its placeholder (`?N`).
    pub fn arg(&mut self, value: impl Into<Value>) -> String {
        self.0.push(value.into());
        format!("?{}", self.0.len())
    }

    /// Placeholders for a list of values (`?3,?4,?5`), for `IN (...)`.
    pub fn list<V: Into<Value>>(&mut self, values: impl IntoIterator<Item = V>) -> String {
        let placeholders: Vec<String> = values.into_iter().map(|v| self.arg(v)).collect();
        if placeholders.is_empty() {
            "NULL".to_string()
        } else {
            placeholders.join(",")
        }
    }

    pub fn values(&self) -> &[Value] {
        &self.0
    }
}

/// A `LIKE` pattern matching `needle` anywhere, with `%`, `_` and `\` escaped; use it with
/// `LIKE ?n ESCAPE '\'`.
pub fn like_contains(needle: &str) -> String {
    let mut out = String::with_capacity(needle.len() + 2);
    out.push('%');
    for c in needle.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// A `LIKE` pattern matching text that starts with `prefix`, with `%`, `_` and `\` escaped; use
/// it with `LIKE ?n ESCAPE '\'`.
pub fn like_prefix(prefix: &str) -> String {
    let mut out = like_contains(prefix);
    out.remove(0);
    out
}

/// A PostgreSQL advisory lock key for what `name` says (`quire-storage:<org>`, ...): the first
/// eight bytes of its SHA-256, so that names never need a registry of numbers.
pub fn advisory_key(name: &str) -> i64 {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    i64::from_be_bytes(bytes)
}

/// `FOR UPDATE` on PostgreSQL, where concurrent writers must lock the rows they read before
/// changing them; nothing on SQLite, whose single writer is already serialized.
pub fn for_update(c: &dyn Conn) -> &'static str {
    match c.dialect() {
        Dialect::Postgres => " FOR UPDATE",
        Dialect::Sqlite => "",
    }
}

/// `expr` compared byte by byte: PostgreSQL otherwise compares text by its collation, under
/// which `B` may sort after `a`; SQLite's default is already bytewise.
pub fn bytewise(c: &dyn Conn, expr: &str) -> String {
    match c.dialect() {
        Dialect::Postgres => format!("{expr} COLLATE \"C\""),
        Dialect::Sqlite => expr.to_string(),
    }
}
