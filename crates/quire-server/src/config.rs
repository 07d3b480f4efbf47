//! Configuration: command-line flags, each with a `QUIRE_*` environment variable.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::db::DbConfig;

/// Where quire keeps its data. Shared by `serve` and every `admin` command, so that both work
/// on the same database.
#[derive(clap::Args, Clone, Debug)]
pub struct StorageArgs {
    /// Directory for the embedded database and stored files.
    #[arg(long, global = true, env = "QUIRE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Database URL: postgres://user@host/db, or sqlite://PATH. Default: SQLite at
    /// DATA_DIR/quire.db.
    #[arg(long, global = true, env = "QUIRE_DATABASE_URL")]
    pub database_url: Option<String>,

    /// Object store for file bytes: s3://bucket/prefix (credentials and endpoint from the
    /// AWS_* variables; endpoint, region, allow_http, skip_signature and
    /// virtual_hosted_style_request may also be given as URL options, ?endpoint=http://...).
    /// Default: the directory DATA_DIR/files.
    #[arg(long, global = true, env = "QUIRE_OBJECT_STORE_URL")]
    pub object_store_url: Option<String>,

    /// The longest one call to the object store may take, retries included; past it the
    /// request is answered 503 and changes nothing (e.g. 10s, 500ms).
    #[arg(long, global = true, env = "QUIRE_OBJECT_STORE_TIMEOUT", default_value = "10s", value_parser = parse_positive_duration)]
    pub object_store_timeout: Duration,

    /// Maximum PostgreSQL connections this process opens.
    #[arg(
        long,
        global = true,
        env = "QUIRE_DATABASE_MAX_CONNECTIONS",
        default_value_t = 16
    )]
    pub database_max_connections: usize,
}

impl StorageArgs {
    /// The same storage with the data directory made absolute (from the current directory), so
    /// that what a command reports is what it uses. `./data` is relative to wherever the
    /// command runs: an `admin` command run from another directory would otherwise find (or
    /// make) another database without saying so.
    pub fn absolute(mut self) -> Result<StorageArgs, String> {
        self.data_dir = absolute(&self.data_dir)?;
        Ok(self)
    }

    pub fn db_config(&self) -> Result<DbConfig, String> {
        match self.database_url.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => match DbConfig::from_url(url, self.database_max_connections)? {
                DbConfig::Sqlite { path } => Ok(DbConfig::Sqlite {
                    path: absolute(&path)?,
                }),
                postgres => Ok(postgres),
            },
            None => Ok(DbConfig::Sqlite {
                path: self.data_dir.join("quire.db"),
            }),
        }
    }

    /// Where this storage is, in words: the database (a PostgreSQL URL without its password),
    /// the data directory and the file store.
    pub fn report(&self) -> Result<StorageReport, String> {
        let database = match self.db_config()? {
            DbConfig::Sqlite { path } => format!("{} (SQLite)", path.display()),
            DbConfig::Postgres { url, .. } => format!("{} (PostgreSQL)", redact_password(&url)),
        };
        let files = match self.object_store_url.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => url.to_string(),
            None => self.data_dir.join("files").display().to_string(),
        };
        Ok(StorageReport {
            database,
            data_dir: self.data_dir.display().to_string(),
            files,
        })
    }

    /// Where file bytes live.
    pub fn blob_store(&self) -> Result<crate::files::BlobStore, String> {
        match self.object_store_url.as_deref().filter(|u| !u.is_empty()) {
            Some(url) => crate::files::BlobStore::s3(url, self.object_store_timeout),
            None => crate::files::BlobStore::local(&self.data_dir.join("files")),
        }
    }
}

/// Where a command's data is, as it reports it at start (see [`StorageArgs::report`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageReport {
    pub database: String,
    pub data_dir: String,
    pub files: String,
}

impl std::fmt::Display for StorageReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "database {}, data directory {}, files {}",
            self.database, self.data_dir, self.files
        )
    }
}

fn absolute(path: &std::path::Path) -> Result<PathBuf, String> {
    std::path::absolute(path).map_err(|e| format!("cannot resolve {}: {e}", path.display()))
}

/// A PostgreSQL URL fit to print: its password, in the user part or as a parameter, replaced.
fn redact_password(raw: &str) -> String {
    let Ok(mut url) = url::Url::parse(raw) else {
        return "(an unreadable PostgreSQL URL)".to_string();
    };
    if url.password().is_some() {
        let _ = url.set_password(Some("***"));
    }
    if url.query_pairs().any(|(k, _)| k == "password") {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "password" {
                    "***".into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// `quire serve`.
#[derive(clap::Args, Clone, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub storage: StorageArgs,

    /// Address to listen on (use port 0 for any free port).
    #[arg(long, env = "QUIRE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Public base URL of this instance, the base of every `urls` field. Default:
    /// http://LISTEN.
    #[arg(long, env = "QUIRE_PUBLIC_URL")]
    pub public_url: Option<String>,

    /// Largest request body accepted, in bytes (larger bodies get 413).
    #[arg(long, env = "QUIRE_MAX_BODY_BYTES", default_value_t = 10 * 1024 * 1024)]
    pub max_body_bytes: usize,

    /// How long a deleted space can be restored before it is removed for good (e.g. 7d, 12h,
    /// 30m, 2s).
    #[arg(long, env = "QUIRE_SPACE_RETENTION", default_value = "7d", value_parser = parse_duration)]
    pub space_retention: Duration,

    /// How long file bytes nothing references any more are kept before a background job
    /// removes them: bytes of failed batches, of change requests archived for that long, and
    /// uploads whose batch never committed (e.g. 3d, 12h).
    #[arg(long, env = "QUIRE_FILE_RETENTION", default_value = "3d", value_parser = parse_duration)]
    pub file_retention: Duration,

    /// Most file bytes one space may store (e.g. 500MB, 2GiB; 0: no quota).
    #[arg(long, env = "QUIRE_SPACE_STORAGE_QUOTA", value_parser = parse_quota)]
    pub space_storage_quota: Option<Quota>,

    /// Most file bytes the spaces of one organization may store together (e.g. 10GB; 0: no
    /// quota).
    #[arg(long, env = "QUIRE_ORG_STORAGE_QUOTA", value_parser = parse_quota)]
    pub org_storage_quota: Option<Quota>,

    /// Hosts and networks quire may fetch from although they are private or reserved
    /// (comma-separated host names and CIDRs, e.g. `localhost,10.0.0.0/8`). Everything else of
    /// that kind is refused: see docs/openapi-specs.md, "What quire fetches".
    #[arg(long, env = "QUIRE_OUTBOUND_ALLOW", default_value = "", value_parser = parse_allow)]
    pub outbound_allow: crate::outbound::Allow,

    /// How long one outbound request may take, body included (e.g. 30s).
    #[arg(long, env = "QUIRE_OUTBOUND_TIMEOUT", default_value = "30s", value_parser = parse_positive_duration)]
    pub outbound_timeout: Duration,

    /// The machine translator translation runs send text to: openai (an OpenAI-compatible
    /// chat-completions API) or libretranslate (a LibreTranslate server). Unset: none, and no
    /// text is machine-translated. Its requests go through the outbound policy like any
    /// other (OUTBOUND_ALLOW opens a translator on a private address).
    #[arg(long, env = "QUIRE_TRANSLATOR")]
    pub translator: Option<TranslatorKind>,

    /// The translator's base URL: the API base for openai (requests go to
    /// `{url}/chat/completions`; default https://api.openai.com/v1), the server for
    /// libretranslate (requests go to `{url}/translate`; required).
    #[arg(long, env = "QUIRE_TRANSLATOR_URL", value_parser = parse_http_url)]
    pub translator_url: Option<String>,

    /// The translator's API key: sent as `Authorization: Bearer` to openai, as `api_key` to
    /// libretranslate.
    #[arg(long, env = "QUIRE_TRANSLATOR_KEY", hide_env_values = true)]
    pub translator_key: Option<String>,

    /// The model asked for (openai only).
    #[arg(long, env = "QUIRE_TRANSLATOR_MODEL", default_value = "gpt-4o-mini")]
    pub translator_model: String,

    /// How long one request to the translator may take, answer included (e.g. 30s); a request
    /// that takes longer is tried again. A run gives one batch 45s in all, its tries included.
    #[arg(long, env = "QUIRE_TRANSLATOR_TIMEOUT", default_value = "30s", value_parser = parse_positive_duration)]
    pub translator_timeout: Duration,

    /// How often an OpenAPI specification given by URL is fetched again; a new version is made
    /// only when its text changed (e.g. 1h, 30m; 0: never).
    #[arg(long, env = "QUIRE_OPENAPI_REFRESH", default_value = "1h", value_parser = parse_duration)]
    pub openapi_refresh: Duration,

    /// The key integration secrets are sealed with: 64 hex digits or the base64 of 32 bytes.
    /// Unset: the data directory's `secrets.key`, made on first start. Several processes over
    /// one PostgreSQL database must share it: set it on each.
    #[arg(long, env = "QUIRE_SECRETS_KEY", hide_env_values = true)]
    pub secrets_key: Option<String>,

    /// How many times an integration event is sent before it is given up (the first included).
    #[arg(long, env = "QUIRE_DELIVERY_ATTEMPTS", default_value_t = 8, value_parser = clap::value_parser!(i64).range(1..=30))]
    pub delivery_attempts: i64,

    /// The wait before an event's second attempt; each later wait doubles, with ±20% jitter
    /// (e.g. 30s: 8 attempts span about an hour).
    #[arg(long, env = "QUIRE_DELIVERY_BACKOFF", default_value = "30s", value_parser = parse_positive_duration)]
    pub delivery_backoff: Duration,

    /// How long one delivery attempt may take.
    #[arg(long, env = "QUIRE_DELIVERY_TIMEOUT", default_value = "10s", value_parser = parse_positive_duration)]
    pub delivery_timeout: Duration,

    /// A delivery endpoint failing for this long is disabled until the integration is
    /// published again (webhook) or its dev tunnel set again.
    #[arg(long, env = "QUIRE_DELIVERY_DISABLE_AFTER", default_value = "24h", value_parser = parse_positive_duration)]
    pub delivery_disable_after: Duration,

    /// How long events are kept once they have done their work: outbox rows fanned out to
    /// integrations, and integration events delivered or given up, with their traces (e.g.
    /// 30d, 12h; 0: forever). Pending ones are kept whatever their age.
    #[arg(long, env = "QUIRE_EVENT_RETENTION", default_value = "30d", value_parser = parse_duration)]
    pub event_retention: Duration,

    /// How long an integration script may run its own code in one call (its fetches and
    /// timers' waits not counted); a script past it is stopped, and the trace says so.
    #[arg(long, env = "QUIRE_SCRIPT_CPU", default_value = "500ms", value_parser = parse_positive_duration)]
    pub script_cpu: Duration,

    /// How long one call of an integration script may take in all, waits included.
    #[arg(long, env = "QUIRE_SCRIPT_TIMEOUT", default_value = "30s", value_parser = parse_positive_duration)]
    pub script_timeout: Duration,

    /// The memory an integration script's JavaScript heap may hold in one call (e.g. 64MB).
    #[arg(long, env = "QUIRE_SCRIPT_MEMORY", default_value = "64MB", value_parser = parse_size)]
    pub script_memory: u64,

    /// Integration script calls running at once in this process; more wait for a slot.
    #[arg(long, env = "QUIRE_SCRIPT_CONCURRENCY", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub script_concurrency: u32,

    /// How long a request to a PDF link waits for a PDF being typeset before answering 202
    /// with `Retry-After` (0s: answer at once). Keep it well under the request timeout.
    #[arg(long, env = "QUIRE_PDF_WAIT", default_value = "8s", value_parser = parse_duration)]
    pub pdf_wait: Duration,

    /// How long a browser session opened by a single sign-on lasts (e.g. 12h, 30m).
    #[arg(long, env = "QUIRE_SESSION_TTL", default_value = "12h", value_parser = parse_positive_duration)]
    pub session_ttl: Duration,

    /// A request still running after this time is answered 503, and a write transaction it
    /// started is rolled back instead of committed (e.g. 30s, 2m).
    #[arg(long, env = "QUIRE_REQUEST_TIMEOUT", default_value = "30s", value_parser = parse_positive_duration)]
    pub request_timeout: Duration,

    /// Log format: text or json.
    #[arg(long, env = "QUIRE_LOG_FORMAT", default_value = "text")]
    pub log_format: LogFormat,

    /// Run no background jobs in this process (processing OpenAPI specifications, purging
    /// deleted spaces, collecting file bytes): another process on the same storage runs them.
    #[arg(long, env = "QUIRE_NO_JOBS")]
    pub no_jobs: bool,

    /// Do not create an administrator, organization and token on first start.
    #[arg(long, env = "QUIRE_NO_BOOTSTRAP")]
    pub no_bootstrap: bool,

    #[command(flatten)]
    pub connections: ConnectionArgs,

    /// Requests per minute allowed to each API token, and to each client address for requests
    /// without a valid token (0: no limit). Counted by each process on its own.
    #[arg(long, env = "QUIRE_RATE_LIMIT", default_value_t = 3000)]
    pub rate_limit: u32,

    /// Take the client address from the last entry of `X-Forwarded-For` (set this only behind
    /// a reverse proxy or load balancer that appends it; otherwise clients could pick their own
    /// address).
    #[arg(long, env = "QUIRE_TRUST_PROXY")]
    pub trust_proxy: bool,

    /// Web origins allowed to call the API from a browser (CORS), e.g.
    /// https://docs.example.com; repeatable or comma-separated, `*` for any origin. Default:
    /// none (no CORS headers; browsers keep other sites' scripts out).
    #[arg(
        long = "cors-origin",
        env = "QUIRE_CORS_ORIGIN",
        value_delimiter = ',',
        value_parser = crate::cors::parse_origin
    )]
    pub cors_origins: Vec<crate::cors::CorsOrigin>,
}

impl ServeArgs {
    /// How integration scripts run (`QUIRE_SCRIPT_*`).
    pub fn script_settings(&self) -> crate::scripts::ScriptSettings {
        crate::scripts::ScriptSettings {
            limits: quire_runtime::Limits {
                cpu: self.script_cpu,
                wall: self.script_timeout,
                memory: usize::try_from(self.script_memory).unwrap_or(usize::MAX),
                ..quire_runtime::Limits::default()
            },
            concurrency: self.script_concurrency as usize,
        }
    }

    /// The same arguments with the data directory made absolute (see [`StorageArgs::absolute`]).
    pub fn absolute(mut self) -> Result<ServeArgs, String> {
        self.storage = self.storage.absolute()?;
        Ok(self)
    }
}

/// Limits on client connections, so that slow or idle clients cannot hold the server's
/// connections and file descriptors.
#[derive(clap::Args, Clone, Debug)]
pub struct ConnectionArgs {
    /// A client must send a request's headers within this time, counted from the connection's
    /// opening or from the first byte of a later request (e.g. 10s, 500ms).
    #[arg(long, env = "QUIRE_HEADER_TIMEOUT", default_value = "10s", value_parser = parse_positive_duration)]
    pub header_timeout: Duration,

    /// A keep-alive connection with no request in progress is closed after this time.
    #[arg(long, env = "QUIRE_IDLE_TIMEOUT", default_value = "75s", value_parser = parse_positive_duration)]
    pub idle_timeout: Duration,

    /// A request body must arrive within this time plus one second per BODY_MIN_RATE bytes
    /// received; a slower body is cut off with 408 (0: no limit).
    #[arg(long, env = "QUIRE_BODY_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub body_timeout: Duration,

    /// The slowest request body accepted after BODY_TIMEOUT, in bytes per second.
    #[arg(long, env = "QUIRE_BODY_MIN_RATE", default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub body_min_rate: u64,

    /// Most client connections open at once; beyond it, new connections are answered 503 and
    /// closed at once. Keep it below the process's open-file limit (`ulimit -n`).
    #[arg(long, env = "QUIRE_MAX_CONNECTIONS", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,

    /// On SIGTERM or SIGINT, how long in-flight requests may take to finish before their
    /// connections are dropped.
    #[arg(long, env = "QUIRE_SHUTDOWN_GRACE", default_value = "8s", value_parser = parse_duration)]
    pub shutdown_grace: Duration,
}

fn parse_allow(text: &str) -> Result<crate::outbound::Allow, String> {
    crate::outbound::Allow::parse(text)
}

/// A duration above zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("{text:?} must be more than zero"));
    }
    Ok(d)
}

/// The protocol a machine translator speaks (`--translator`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TranslatorKind {
    /// `POST {url}/chat/completions`, as OpenAI's API and the many servers compatible with it
    /// (vLLM, Ollama, LiteLLM...) answer it.
    Openai,
    /// `POST {url}/translate`, as a LibreTranslate server answers it.
    Libretranslate,
}

/// An absolute http or https URL, kept as written (without a trailing slash, since paths are
/// appended to it).
pub fn parse_http_url(text: &str) -> Result<String, String> {
    let text = text.trim();
    let url = url::Url::parse(text).map_err(|e| format!("{text:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{text:?} is not an http or https URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!(
            "{text:?} has a query or fragment: give the base URL that request paths are appended to"
        ));
    }
    Ok(text.trim_end_matches('/').to_string())
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

/// Parses `7d`, `12h`, `30m`, `45s`, `500ms` or a plain number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 7d, 12h, 30m, 2s"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => return Ok(Duration::from_millis(n)),
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("invalid duration unit in {text:?}: use ms, s, m, h or d")),
    };
    Ok(Duration::from_secs(secs))
}

pub use quire_store::Quota;

/// Parses a size: a number of bytes, optionally with a unit: `B`, `KB`, `MB`, `GB`, `TB`
/// (powers of 1000) or `KiB`, `MiB`, `GiB`, `TiB` (powers of 1024), case-insensitive.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("invalid size {text:?}: expected e.g. 500MB, 2GiB or a number of bytes"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000_u64.pow(2),
        "gb" => 1000_u64.pow(3),
        "tb" => 1000_u64.pow(4),
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "invalid size unit in {text:?}: use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB"
            ));
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("size {text:?} is too large"))
}

fn parse_quota(text: &str) -> Result<Quota, String> {
    Ok(Quota {
        bytes: parse_size(text)?,
        text: text.trim().to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printed_database_urls_hide_passwords() {
        assert_eq!(
            redact_password("postgres://quire:s3cret@db.internal:5432/quire"),
            "postgres://quire:***@db.internal:5432/quire"
        );
        let redacted = redact_password("postgres://quire@db/quire?sslmode=disable&password=s3cret");
        assert!(!redacted.contains("s3cret"), "{redacted}");
        assert!(redacted.contains("sslmode=disable"), "{redacted}");
        assert_eq!(
            redact_password("postgres://postgres@127.0.0.1:5432/test"),
            "postgres://postgres@127.0.0.1:5432/test"
        );
    }

    #[test]
    fn the_data_directory_is_reported_as_an_absolute_path() {
        let storage = StorageArgs {
            data_dir: "./data".into(),
            database_url: None,
            object_store_url: None,
            object_store_timeout: quire_blobs::BlobStore::CALL_BUDGET,
            database_max_connections: 1,
        }
        .absolute()
        .unwrap();
        let report = storage.report().unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(report.data_dir, cwd.join("data").display().to_string());
        assert_eq!(
            report.database,
            format!("{} (SQLite)", cwd.join("data").join("quire.db").display())
        );
        assert_eq!(report.files, cwd.join("data").join("files").display().to_string());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("7 days").is_err());
        assert!(parse_duration("d").is_err());
    }

    #[test]
    fn translator_urls() {
        assert_eq!(
            parse_http_url("https://api.openai.com/v1/"),
            Ok("https://api.openai.com/v1".to_string())
        );
        assert_eq!(
            parse_http_url("http://127.0.0.1:5000"),
            Ok("http://127.0.0.1:5000".to_string())
        );
        assert!(parse_http_url("ftp://example.com").is_err());
        assert!(parse_http_url("example.com/v1").is_err());
        assert!(parse_http_url("https://example.com/v1?key=x").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("1234"), Ok(1234));
        assert_eq!(parse_size("500MB"), Ok(500_000_000));
        assert_eq!(parse_size("3kb"), Ok(3000));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size(" 10 KiB "), Ok(10 * 1024));
        assert!(parse_size("MB").is_err());
        assert!(parse_size("5 parsecs").is_err());
        assert!(parse_size("99999999999TB").is_err());
    }
}
