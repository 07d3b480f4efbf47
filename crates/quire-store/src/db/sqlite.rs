//! SQLite engine: one writer connection (SQLite allows one writer at a time anyway) and a small
//! pool of read-only connections that read concurrently under WAL.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};

use super::changes::Changes;
use super::{Conn, DbError, Dialect, Row, Value};

/// Readers kept open when idle; more are opened under load and closed when returned.
const IDLE_READERS: usize = 16;

/// How often, at most, `PRAGMA data_version` is asked. This process's own writes move the
/// generation as they commit (`Db::write_until`); the pragma only tells of other processes'
/// (`quire admin` beside a server), which are then seen within this interval, as PostgreSQL's
/// are when their notification arrives. Asked on every request it took a mutex, SQLite's
/// shared lock and `fcntl` calls per cached answer: the largest part of a cached reader page
/// after the kernel's (bench/ANALYSIS.md).
const OBSERVE_EVERY: Duration = Duration::from_millis(1);

pub struct SqliteDb {
    path: std::path::PathBuf,
    writer: Mutex<SqliteConn>,
    readers: Mutex<Vec<SqliteConn>>,
    /// A connection of its own for `PRAGMA data_version`, which tells of commits made by every
    /// other connection since its previous call, with the version it last returned.
    watch: Mutex<(SqliteConn, Option<i64>)>,
    /// When `data_version` was last asked, in microseconds since `opened`.
    observed_at: AtomicU64,
    opened: Instant,
}

pub struct SqliteConn(Connection);

impl SqliteDb {
    pub fn open(path: &Path) -> Result<SqliteDb, DbError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| DbError::Other(format!("cannot create {}: {e}", dir.display())))?;
        }
        let writer = open_conn(path, false)?;
        let watch = open_conn(path, true)?;
        Ok(SqliteDb {
            path: path.to_path_buf(),
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
            watch: Mutex::new((watch, None)),
            observed_at: AtomicU64::new(0),
            opened: Instant::now(),
        })
    }

    /// Moves `changes` on when any other connection, of this process or another, has committed
    /// since the previous call, asking at most once per [`OBSERVE_EVERY`]. The lock is held
    /// until `changes` has moved, so that a caller that finds nothing new behind another that
    /// found something sees its bump.
    pub fn observe(&self, changes: &Changes) -> Result<(), DbError> {
        let now = self.opened.elapsed().as_micros() as u64;
        let last = self.observed_at.load(Ordering::Relaxed);
        // The first call (last = 0) always asks; afterwards one caller per interval does.
        if last != 0 && now.saturating_sub(last) < OBSERVE_EVERY.as_micros() as u64 {
            return Ok(());
        }
        if self
            .observed_at
            .compare_exchange(last, now.max(1), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return Ok(());
        }
        let mut watch = self.watch.lock().unwrap_or_else(|p| p.into_inner());
        let version: i64 = watch
            .0
            .0
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut stmt| stmt.query_row([], |row| row.get(0)))
            .map_err(map_err)?;
        if watch.1 != Some(version) {
            changes.bump();
            watch.1 = Some(version);
        }
        Ok(())
    }

    pub fn with_writer<T, E: From<DbError>>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        // A panic while holding the writer leaves SQLite consistent (the open transaction is
        // rolled back below), so a poisoned lock is safe to take over.
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if !guard.0.is_autocommit() {
            let _ = guard.0.execute_batch("ROLLBACK");
        }
        f(&mut *guard)
    }

    pub fn with_reader<T, E: From<DbError>>(
        &self,
        f: impl FnOnce(&mut dyn Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let pooled = self.readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match pooled {
            Some(conn) => conn,
            None => open_conn(&self.path, true)?,
        };
        let result = f(&mut conn);
        if conn.0.is_autocommit() {
            let mut readers = self.readers.lock().unwrap_or_else(|p| p.into_inner());
            if readers.len() < IDLE_READERS {
                readers.push(conn);
            }
        }
        result
    }
}

/// Whether `path` is a database quire has set up (its migrations table exists), opened read-only
/// so that asking never creates the file.
pub fn holds_quire(path: &Path) -> Result<bool, DbError> {
    if !path.exists() {
        return Ok(false);
    }
    let conn = open_conn(path, true)?;
    conn.0
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(map_err)
}

/// Whether another connection (a running server, an admin command) has the database at `path`
/// open: asks for an exclusive lock, which SQLite grants only while no other connection holds
/// even a shared one, and gives it back at once.
pub fn in_use(path: &Path) -> Result<bool, DbError> {
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(map_err)?;
    let taken = conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;");
    match taken.map_err(map_err) {
        Ok(()) => Ok(false),
        Err(DbError::Busy(_)) => Ok(true),
        Err(e) => Err(e),
    }
}

impl SqliteDb {
    /// Writes a consistent copy of the whole database to `target` (a new file) while other
    /// connections, of this process or others, go on reading and writing: `VACUUM INTO` reads
    /// one snapshot, as a read transaction would, and under WAL holds up no writer.
    pub fn vacuum_into(&self, target: &Path) -> Result<(), DbError> {
        let target = target
            .to_str()
            .ok_or_else(|| DbError::Other(format!("{} is not a UTF-8 path", target.display())))?;
        // A connection of its own, outside any transaction (VACUUM runs in none), so that the
        // writer stays free for the process's transactions while the copy is written.
        let conn = open_conn(&self.path, false)?;
        conn.0.execute("VACUUM INTO ?1", [target]).map_err(map_err)?;
        Ok(())
    }
}

fn open_conn(path: &Path, read_only: bool) -> Result<SqliteConn, DbError> {
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI
    };
    let conn = Connection::open_with_flags(path, flags).map_err(map_err)?;
    conn.busy_timeout(Duration::from_secs(10)).map_err(map_err)?;
    conn.set_prepared_statement_cache_capacity(256);
    // Without the query planner stability guarantee, SQLite (built with STAT4) marks statements
    // whose plan could depend on a bound value and prepares them again on every run: a third of
    // the time of a space read went to parsing SQL.
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(map_err)?;
    // Page caches per connection: 2 MB for each reader (up to ten are busy at once, each with
    // its own copy of hot pages; the rest come from the OS's cache of the file), 8 MB for the
    // writer, so that a full pool stays well within the server's memory budget.
    let pragmas = if read_only {
        "PRAGMA foreign_keys = ON; PRAGMA cache_size = -2000; PRAGMA temp_store = MEMORY;"
    } else {
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
         PRAGMA cache_size = -8000; PRAGMA temp_store = MEMORY;"
    };
    conn.execute_batch(pragmas).map_err(map_err)?;
    Ok(SqliteConn(conn))
}

fn map_err(e: rusqlite::Error) -> DbError {
    use rusqlite::ErrorCode;
    match &e {
        rusqlite::Error::SqliteFailure(err, _) => match err.code {
            ErrorCode::ConstraintViolation
                if err.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                    || err.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
            {
                DbError::Unique(e.to_string())
            }
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => DbError::Busy(e.to_string()),
            _ => DbError::Other(e.to_string()),
        },
        _ => DbError::Other(e.to_string()),
    }
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
            Value::Blob(v) => ValueRef::Blob(v),
        }))
    }
}

fn column_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Real(f),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, DbError> {
        let mut stmt = self.0.prepare_cached(sql).map_err(map_err)?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(rusqlite::params_from_iter(params)).map_err(map_err)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(map_err)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(column_value(row.get_ref(i).map_err(map_err)?));
            }
            out.push(Row(values));
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        let mut stmt = self.0.prepare_cached(sql).map_err(map_err)?;
        let changed = stmt
            .execute(rusqlite::params_from_iter(params))
            .map_err(map_err)?;
        Ok(changed as u64)
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.0.execute_batch(sql).map_err(map_err)
    }
}
