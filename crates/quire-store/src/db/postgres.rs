//! PostgreSQL engine: a bounded pool of synchronous connections, each with its own cache of
//! prepared statements. SQL arrives with SQLite's `?N` placeholders and is rewritten to `$N` once
//! per connection and statement.

use std::collections::HashMap;
use std::error::Error as _;
use std::sync::{Condvar, Mutex, Weak};
use std::time::Duration;

use bytes::BytesMut;
use postgres::fallible_iterator::FallibleIterator;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};

use super::changes::{Changes, PG_LISTEN, PG_NOTIFY};
use super::{Conn, DbError, Dialect, Row, Value};

pub struct PgDb {
    config: postgres::Config,
    max: usize,
    state: Mutex<PoolState>,
    available: Condvar,
    /// Boxed: a client is large, and `Engine` holds either engine.
    notifier: Box<Notifier>,
    /// Connections made so far, for their counts shards.
    connections: std::sync::atomic::AtomicUsize,
}

/// The shards of a space's counts (`space_counts`, migrations 13 and 14).
const COUNT_SHARDS: usize = 16;

/// Tells the other processes that this one wrote (see `changes`), once per burst of writes.
///
/// A `NOTIFY` inside each write transaction made every committing writer of the database take
/// PostgreSQL's one notification-queue lock in turn, so that writes of unrelated rows still
/// queued behind each other's commits. Instead, a write asks for a notification after its
/// commit: the first writer to ask sends `NOTIFY` on a connection kept for that, and keeps
/// sending while more writes asked meanwhile; the others return at once. Every write is
/// announced after it committed (so a process that hears it reads it), by the writer itself or
/// by the one sending, and a burst of writes costs one notification per round trip instead of
/// one lock per commit. A notification lost with this connection (or with the process, between
/// a commit and its notification) costs what a lost notification always did: other processes
/// may answer from their caches until entries expire (`stamped::MAX_AGE`, 5 s).
struct Notifier {
    state: Mutex<NotifyState>,
    /// The connection notifications go out on, made on first use and after a failure.
    client: Mutex<Option<Client>>,
}

#[derive(Default)]
struct NotifyState {
    /// Writes that asked for a notification so far.
    asked: u64,
    /// Whether a writer is sending one.
    sending: bool,
}

struct PoolState {
    idle: Vec<PgConn>,
    open: usize,
}

/// Returns its connection to the pool when dropped; a connection abandoned by a panic may be
/// inside a transaction, so it is closed instead.
struct Pooled<'a> {
    pool: &'a PgDb,
    conn: Option<PgConn>,
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        match self.conn.take() {
            Some(conn) if !std::thread::panicking() && !conn.client.is_closed() => {
                let mut state = self.pool.state.lock().unwrap_or_else(|p| p.into_inner());
                state.idle.push(conn);
                self.pool.available.notify_one();
            }
            _ => self.pool.forget(),
        }
    }
}

impl Drop for PgDb {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let idle = std::mem::take(&mut state.idle);
        let notifying = self
            .notifier
            .client
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        // A synchronous client closes its connection by blocking on a runtime of its own, which
        // panics on a thread that drives one already: the server drops its database at the end
        // of its async main, after a graceful shutdown.
        let _ = std::thread::spawn(move || drop((idle, notifying))).join();
    }
}

pub struct PgConn {
    client: Client,
    statements: HashMap<String, Statement>,
}

impl PgDb {
    pub fn open(url: &str, max: usize) -> Result<PgDb, DbError> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| DbError::Other(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        let db = PgDb {
            config,
            max: max.max(1),
            state: Mutex::new(PoolState {
                idle: Vec::new(),
                open: 0,
            }),
            available: Condvar::new(),
            notifier: Box::new(Notifier {
                state: Mutex::new(NotifyState::default()),
                client: Mutex::new(None),
            }),
            connections: std::sync::atomic::AtomicUsize::new(0),
        };
        // Fail at start, not at the first request, when the database is unreachable.
        db.with_conn(|_| Ok::<(), DbError>(()))?;
        Ok(db)
    }

    pub fn with_conn<T, E: From<DbError>>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut pooled = Pooled {
            pool: self,
            conn: Some(self.acquire()?),
        };
        match pooled.conn.as_mut() {
            Some(conn) => f(conn),
            None => Err(DbError::Other("connection lost".into()).into()),
        }
    }

    fn acquire(&self) -> Result<PgConn, DbError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(conn) = state.idle.pop() {
                if conn.client.is_closed() {
                    state.open -= 1;
                    continue;
                }
                return Ok(conn);
            }
            if state.open < self.max {
                state.open += 1;
                drop(state);
                return self.connect().inspect_err(|_| self.forget());
            }
            let (next, timeout) = self
                .available
                .wait_timeout(state, Duration::from_secs(30))
                .unwrap_or_else(|p| p.into_inner());
            state = next;
            if timeout.timed_out() && state.idle.is_empty() && state.open >= self.max {
                return Err(DbError::Busy("no database connection free after 30 s".into()));
            }
        }
    }

    /// Gives a slot back after its connection was lost or never made.
    fn forget(&self) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.open -= 1;
        self.available.notify_one();
    }

    /// Listens, on a thread and a connection of its own, for the writes of every process (see
    /// `changes`), and moves `changes` on each. The thread ends once `changes` is dropped.
    pub fn listen(&self, changes: Weak<Changes>) -> Result<(), DbError> {
        let mut config = self.config.clone();
        // A connection that died without closing would leave writes unheard; keepalives notice
        // it within about half a minute, and cached answers expire sooner anyway.
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(10))
            .keepalives_interval(Duration::from_secs(5))
            .keepalives_retries(3);
        std::thread::Builder::new()
            .name("quire-listen".into())
            .spawn(move || listen(&config, &changes))
            .map(|_| ())
            .map_err(|e| DbError::Other(format!("cannot start the listening thread: {e}")))
    }

    /// Announces a write this process has committed to every listening process (see
    /// [`Notifier`]). Blocking for the writer that sends: one round trip.
    pub fn notify_writes(&self) {
        let notifier = &self.notifier;
        let mut state = notifier.state.lock().unwrap_or_else(|p| p.into_inner());
        state.asked += 1;
        if state.sending {
            return;
        }
        state.sending = true;
        loop {
            let covered = state.asked;
            drop(state);
            self.send_notification();
            state = notifier.state.lock().unwrap_or_else(|p| p.into_inner());
            if state.asked == covered {
                state.sending = false;
                return;
            }
        }
    }

    fn send_notification(&self) {
        let mut client = self.notifier.client.lock().unwrap_or_else(|p| p.into_inner());
        if client.as_ref().is_none_or(Client::is_closed) {
            match self.config.connect(NoTls) {
                Ok(made) => *client = Some(made),
                Err(e) => {
                    tracing::warn!(error = %e, "cannot tell other processes of a write: their cached reads expire in 5 s");
                    return;
                }
            }
        }
        if let Some(c) = client.as_mut()
            && let Err(e) = c.batch_execute(PG_NOTIFY)
        {
            tracing::warn!(error = %e, "cannot tell other processes of a write: their cached reads expire in 5 s");
            *client = None;
        }
    }

    fn connect(&self) -> Result<PgConn, DbError> {
        let mut client = self.config.connect(NoTls).map_err(map_err)?;
        // The counts shard of this connection's writes (migration 14): connections made one
        // after another take the shards in turn, so the pool's writers of one space do not wait
        // on each other's counts row.
        let shard = self
            .connections
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            % COUNT_SHARDS;
        client
            .batch_execute(&format!("SET quire.shard = '{shard}'"))
            .map_err(map_err)?;
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }
}

/// Whether the database at `url` holds quire's schema (its migrations table is on the search
/// path), asked on a connection of its own that changes nothing.
pub fn holds_quire(url: &str) -> Result<bool, DbError> {
    let mut client = connect_alone(url)?;
    let row = client
        .query_one("SELECT to_regclass('schema_migrations') IS NOT NULL", &[])
        .map_err(map_err)?;
    Ok(row.get::<_, bool>(0))
}

/// Runs `sql` (statements without parameters) on a connection of its own to `url`: how test
/// and bench harnesses make and drop the schema each of their servers runs in, without a
/// database driver of their own.
pub fn execute_batch(url: &str, sql: &str) -> Result<(), DbError> {
    let mut client = connect_alone(url)?;
    client.batch_execute(sql).map_err(map_err)
}

fn connect_alone(url: &str) -> Result<postgres::Client, DbError> {
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e| DbError::Other(format!("invalid PostgreSQL URL: {e}")))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(10));
    }
    config.connect(NoTls).map_err(map_err)
}

/// How often the listening thread looks up from waiting to see whether it should stop.
const LISTEN_WAKE: Duration = Duration::from_secs(1);

fn listen(config: &postgres::Config, changes: &Weak<Changes>) {
    let mut failures = 0u32;
    loop {
        let Some(live) = changes.upgrade() else { return };
        live.distrust();
        drop(live);
        let mut client = match config.connect(NoTls).and_then(|mut client| {
            client.batch_execute(PG_LISTEN)?;
            Ok(client)
        }) {
            Ok(client) => client,
            Err(e) => {
                failures += 1;
                if failures == 1 || failures.is_power_of_two() {
                    tracing::warn!(error = %e, failures, "cannot listen for other processes' writes; not caching reads");
                }
                // Waits in steps of LISTEN_WAKE so a dropped database stops the thread promptly.
                for _ in 0..failures.min(10) {
                    std::thread::sleep(LISTEN_WAKE);
                    if changes.strong_count() == 0 {
                        return;
                    }
                }
                continue;
            }
        };
        if failures > 0 {
            tracing::info!("listening for other processes' writes again");
        }
        failures = 0;
        match changes.upgrade() {
            Some(live) => live.trust(),
            None => return,
        }
        loop {
            let heard = client.notifications().timeout_iter(LISTEN_WAKE).next();
            let Some(live) = changes.upgrade() else { return };
            match heard {
                Ok(Some(_)) => live.bump(),
                Ok(None) if !client.is_closed() => {}
                Ok(None) | Err(_) => {
                    tracing::warn!("lost the connection listening for other processes' writes");
                    break;
                }
            }
        }
    }
}

impl PgConn {
    fn statement(&mut self, sql: &str) -> Result<Statement, DbError> {
        if let Some(stmt) = self.statements.get(sql) {
            return Ok(stmt.clone());
        }
        let stmt = self.client.prepare(&dollar_placeholders(sql)).map_err(map_err)?;
        if self.statements.len() > 1024 {
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), stmt.clone());
        Ok(stmt)
    }
}

/// Rewrites `?N` placeholders to `$N`, leaving string literals and quoted identifiers alone.
fn dollar_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => out.push('$'),
            None => out.push(c),
        }
    }
    out
}

fn map_err(e: postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        return match code {
            "23505" => DbError::Unique(db.message().to_string()),
            "40001" | "40P01" => DbError::Retry(db.message().to_string()),
            _ => DbError::Other(format!("{} ({code})", db.message())),
        };
    }
    let detail = e.source().map(|s| format!(": {s}")).unwrap_or_default();
    DbError::Other(format!("{e}{detail}"))
}

/// Binds a [`Value`] to whatever type PostgreSQL inferred for the parameter, so that portable SQL
/// need not cast: integers bind to any integer, boolean or float column; text to text.
impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::BOOL => (*v != 0).to_sql(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*v)?.to_sql(ty, out),
                Type::FLOAT8 => (*v as f64).to_sql(ty, out),
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR => v.to_string().to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Real(v) => match *ty {
                Type::FLOAT4 => (*v as f32).to_sql(ty, out),
                _ => v.to_sql(ty, out),
            },
            Value::Text(v) => v.to_sql(ty, out),
            Value::Blob(v) => v.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn column_value(row: &postgres::Row, i: usize) -> Result<Value, DbError> {
    let ty = row.columns()[i].type_();
    let decode = |e: postgres::Error| DbError::Decode {
        column: i,
        message: e.to_string(),
    };
    Ok(match *ty {
        Type::INT8 => row
            .try_get::<_, Option<i64>>(i)
            .map_err(decode)?
            .map_or(Value::Null, Value::Int),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)
            .map_err(decode)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)
            .map_err(decode)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)
            .map_err(decode)?
            .map_or(Value::Null, |v| Value::Int(v.into())),
        Type::FLOAT8 => row
            .try_get::<_, Option<f64>>(i)
            .map_err(decode)?
            .map_or(Value::Null, Value::Real),
        Type::FLOAT4 => row
            .try_get::<_, Option<f32>>(i)
            .map_err(decode)?
            .map_or(Value::Null, |v| Value::Real(v.into())),
        Type::VOID => Value::Null,
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)
            .map_err(decode)?
            .map_or(Value::Null, Value::Blob),
        _ => row
            .try_get::<_, Option<String>>(i)
            .map_err(decode)?
            .map_or(Value::Null, Value::Text),
    })
}

impl Conn for PgConn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let rows = self.client.query(&stmt, &refs).map_err(map_err)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| column_value(row, i))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Row)
            })
            .collect()
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let stmt = self.statement(sql)?;
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        self.client.execute(&stmt, &refs).map_err(map_err)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.client.batch_execute(sql).map_err(map_err)
    }
}

#[cfg(test)]
mod tests {
    use super::dollar_placeholders;

    #[test]
    fn placeholders_are_rewritten_outside_literals() {
        assert_eq!(
            dollar_placeholders("SELECT '?1', ?1 FROM t WHERE a = ?12 AND b = \"?3\""),
            "SELECT '?1', $1 FROM t WHERE a = $12 AND b = \"?3\""
        );
    }
}
