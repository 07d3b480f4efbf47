//! The `quire` command: `serve` runs the server; `admin` manages users, organizations and
//! tokens on the same database, also while the server runs.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use quire_server::config::{LogFormat, ServeArgs, StorageArgs};
use quire_server::db::Db;

mod backup;

// glibc's allocator spent a quarter of a loaded server's time in malloc and free, contended
// between threads; mimalloc (which, with `override`, also serves SQLite's allocations) keeps
// per-thread heaps.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Positions in mimalloc's `mi_option_e`, which the Rust bindings do not name.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// Returns freed memory to the system at once, in small pages. mimalloc 3 waits a second by
/// default, and a loaded server frees whole page trees (megabytes) many times a second: the
/// resident set held about 60 MB waiting to be returned (bench/: peak 211 MB, 150 MB with no
/// delay, at the same requests per second). And it asks for transparent huge pages, which the
/// kernel backs 2 MB at a time: a heap of long-lived cache entries among short-lived request
/// data kept about 40 MB more resident (bench/: 191 -> 161 MB after the same phases, and no
/// slower).
#[allow(unsafe_code)]
fn configure_allocator() {
    // SAFETY: mi_option_set stores an integer in mimalloc's option table; it may be called at
    // any time, from any thread, and these options are read when memory is purged or mapped.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0);
    }
    // mimalloc mapped (and marked for huge pages) its first arena before main; the option only
    // covers later ones, so the process opts out of huge pages as a whole, existing mappings
    // included (the kernel checks this flag at each fault).
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes an integer flag and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// The version and the commit the binary was built from (see build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("QUIRE_GIT_COMMIT"),
    ")"
);

#[derive(Parser)]
#[command(name = "quire", version = VERSION, about = "A self-hosted documentation platform")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once at start: the size of the serve variant's flags does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the HTTP server.
    Serve {
        #[command(flatten)]
        args: ServeArgs,
        /// Email of the administrator created on the first start with an empty database.
        #[arg(long, env = "QUIRE_BOOTSTRAP_EMAIL", default_value = "admin@example.com")]
        bootstrap_email: String,
    },
    /// Manage users, organizations and tokens directly in the database.
    Admin {
        #[command(flatten)]
        storage: StorageArgs,
        /// Set up a new, empty database when none is found. Without it, a command that finds
        /// no database (a mistyped --data-dir, another current directory) stops and says so.
        #[arg(long, global = true)]
        create: bool,
        #[command(subcommand)]
        command: AdminTask,
    },
}

/// `quire admin` commands: those on an open database, and `restore`, which must not open one.
#[derive(Subcommand)]
enum AdminTask {
    #[command(flatten)]
    OnDatabase(AdminCommand),
    /// Bring back a backup made by `quire admin backup` into the data directory. Stop the
    /// server first.
    Restore {
        /// The backup file.
        #[arg(long)]
        from: std::path::PathBuf,
        /// Replace the database and files of a data directory that is not empty.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Users.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Organizations.
    Org {
        #[command(subcommand)]
        command: OrgCommand,
    },
    /// API tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Import a folder of markdown in GitBook's layout (SUMMARY.md, README.md, .gitbook.yaml,
    /// assets) as one new revision of a space's content.
    Import {
        /// The space to import into; its current pages are replaced by the folder's.
        #[arg(long)]
        space: String,
        /// The folder.
        dir: std::path::PathBuf,
    },
    /// Copy the SQLite database and the local file store into one tar file, while the server
    /// runs (PostgreSQL and object stores have their own tools: see README.md, Backups).
    Backup {
        /// The file to write (`.tar`, or `.tar.gz` to compress); it must not exist.
        #[arg(long)]
        to: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user and print its id.
    Create {
        /// The user's email address (unique; the user can join organizations by its domain).
        #[arg(long)]
        email: String,
        /// The user's display name.
        #[arg(long)]
        name: String,
    },
}

#[derive(Subcommand)]
enum OrgCommand {
    /// Create an organization administered by an existing user and print its id.
    Create {
        /// The organization's name (2 to 255 characters).
        #[arg(long)]
        title: String,
        /// Email of the user who becomes the organization's admin.
        #[arg(long)]
        owner: String,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// Issue an API token for a user and print it (it is not stored and cannot be shown again).
    Create {
        /// Email of the user the token acts as.
        #[arg(long)]
        email: String,
        /// Restrict the token to a scope (repeatable), e.g. space:content:read. Without any, the
        /// token may do whatever its user may.
        #[arg(long = "scope")]
        scopes: Vec<String>,
        /// Make the token expire after this long (e.g. 30d, 12h); without it, it is valid until
        /// revoked.
        #[arg(long, value_parser = quire_server::config::parse_positive_duration)]
        expires: Option<std::time::Duration>,
    },
    /// List a user's tokens (ids, not secrets), oldest first.
    List {
        /// Email of the user whose tokens to list.
        #[arg(long)]
        email: String,
    },
    /// Revoke a token by id (see `token list`): every server refuses it within a second.
    Revoke {
        /// The token's id.
        id: String,
    },
}

fn main() -> ExitCode {
    configure_allocator();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            args,
            bootstrap_email,
        } => {
            init_logs(args.log_format, "info");
            let args = match args
                .absolute()
                .and_then(|args| report_serve_storage(&args).map(|()| args))
            {
                Ok(args) => args,
                Err(e) => return fail(&e),
            };
            // Blocking threads carry database work (at most the pool's size at once) and file
            // I/O. With tokio's default cap of 512, a job often came before the thread of the
            // last one was idle again, so new threads kept being started: 90 at 64 connections
            // on PostgreSQL, each holding its own allocator pages (about 80 MB in all). And
            // each thread kept costs about a megabyte of allocator pages under load, while
            // more than a few per processor only queue for the processors: on two, 12 threads
            // instead of 24 held 11 MB less through the bench's phases on SQLite and 20 MB
            // less on PostgreSQL.
            let processors = std::thread::available_parallelism().map_or(2, |n| n.get());
            let blocking = (args.storage.database_max_connections.max(8) + 8).min(4 * processors + 4);
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .max_blocking_threads(blocking)
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => return fail(&format!("cannot start the runtime: {e}")),
            };
            let served = runtime.block_on(quire_server::server::serve(args, bootstrap_email));
            // Dropping the runtime would wait for every blocking task (a long merge, say) to
            // return; past a short wait they are abandoned, and an uncommitted transaction dies
            // with the process, so SIGTERM ends within the shutdown grace and a few seconds.
            runtime.shutdown_timeout(std::time::Duration::from_millis(500));
            match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            }
        }
        Command::Admin {
            storage,
            create,
            command,
        } => {
            init_logs(LogFormat::Text, "warn");
            match admin(storage, create, command) {
                Ok(out) => {
                    println!("{out}");
                    ExitCode::SUCCESS
                }
                Err(e) => fail(&e),
            }
        }
    }
}

/// Logs where `serve` keeps its data, and whether it starts a new database there.
fn report_serve_storage(args: &ServeArgs) -> Result<(), String> {
    let report = args.storage.report()?;
    let new = !args
        .storage
        .db_config()?
        .holds_quire()
        .map_err(|e| format!("cannot open the database: {e}"))?;
    tracing::info!(
        database = %report.database,
        data_dir = %report.data_dir,
        files = %report.files,
        new,
        "storage"
    );
    Ok(())
}

fn admin(storage: StorageArgs, create: bool, task: AdminTask) -> Result<String, String> {
    let storage = storage.absolute()?;
    let report = storage.report()?;
    eprintln!("quire: {report}");
    let config = storage.db_config()?;
    let command = match task {
        AdminTask::Restore { from, force } => return backup::restore(&storage, &config, &from, force),
        AdminTask::OnDatabase(command) => command,
    };
    let exists = config
        .holds_quire()
        .map_err(|e| format!("cannot open the database: {e}"))?;
    if !exists && !create {
        let cwd = std::env::current_dir()
            .map(|d| d.display().to_string())
            .unwrap_or_default();
        return Err(format!(
            "no quire database at {}: this command would set up a new, empty one. Point it at the \
             server's database (--data-dir or --database-url, or the server's QUIRE_* variables; a \
             relative path is taken from the current directory, {cwd}), or pass --create to set up \
             a new one",
            report.database
        ));
    }
    if !exists {
        eprintln!("quire: --create: setting up a new, empty database");
    }
    let db = Db::open(&config).map_err(|e| format!("cannot open the database: {e}"))?;
    let result = match command {
        AdminCommand::User {
            command: UserCommand::Create { email, name },
        } => quire_store::admin::create_user(&db, &email, &name),
        AdminCommand::Org {
            command: OrgCommand::Create { title, owner },
        } => quire_store::admin::create_org(&db, &title, &owner),
        AdminCommand::Token { command } => token_command(&db, command),
        AdminCommand::Backup { to } => return backup::backup(&db, &storage, &to),
        AdminCommand::Import { space, dir } => {
            let blobs = storage.blob_store()?;
            let imported = quire_store::import::import_space(&db, &blobs, &space, &dir)?;
            for warning in &imported.warnings {
                eprintln!("warning: {warning}");
            }
            eprintln!(
                "imported {} pages, {} files and {} redirects",
                imported.pages, imported.files, imported.redirects
            );
            return Ok(imported.revision);
        }
    };
    result.map_err(|e| e.message)
}

fn token_command(db: &Db, command: TokenCommand) -> Result<String, quire_store::StoreError> {
    use quire_store::admin;
    match command {
        TokenCommand::Create {
            email,
            scopes,
            expires,
        } => admin::create_expiring_token(db, &email, &scopes, expires),
        TokenCommand::List { email } => {
            let tokens = admin::list_tokens(db, &email)?;
            Ok(token_table(&tokens, quire_server::clock::now_ms()))
        }
        TokenCommand::Revoke { id } => {
            admin::revoke_token(db, &id)?;
            Ok(format!("revoked token {id}"))
        }
    }
}

/// One line per token: id, creation, expiry (or `never`, or `expired ...`), scopes, label.
fn token_table(tokens: &[quire_store::tokens::Token], now: i64) -> String {
    use quire_server::clock::format_ms;
    let mut out = String::from("ID\tCREATED\tEXPIRES\tSCOPES\tLABEL");
    for t in tokens {
        let expires = match t.expires_at {
            None => "never".to_string(),
            Some(at) if t.is_expired(now) => format!("expired {}", format_ms(at)),
            Some(at) => format_ms(at),
        };
        let scopes = if t.scopes.is_empty() {
            "(all)".to_string()
        } else {
            t.scopes.join(",")
        };
        out += &format!(
            "\n{}\t{}\t{expires}\t{scopes}\t{}",
            t.id,
            format_ms(t.created_at),
            t.label.as_deref().unwrap_or("")
        );
    }
    out
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn init_logs(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal: escape codes in a file or a log collector are
    // noise (and NO_COLOR asks for none at all).
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}
