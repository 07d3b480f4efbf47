//! Starting and stopping the HTTP server.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::ServeArgs;
use crate::db::Db;
use crate::state::{App, Settings};
use crate::urls::Urls;
use quire_store::Quota;
use quire_store::Store;
use quire_store::integrations::secrets::SecretsKey;
use quire_store::translations::Translator as _;
use std::sync::Arc;

/// A server started by [`start`].
pub struct Running {
    pub addr: SocketAddr,
    pub db: Db,
    pub public_url: String,
    app: App,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// Stops accepting connections, lets in-flight requests finish and background work release
    /// its leases, then returns.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }

    /// Stops at once, as a killed process would: its tasks are aborted wherever they are,
    /// leases and all left behind (tests of what survives a crash).
    pub fn abort(self) {
        for task in self.tasks {
            task.abort();
        }
    }

    /// The application state the server runs with (tests run its background work directly).
    pub fn app(&self) -> &App {
        &self.app
    }

    /// A receiver that turns true when shutdown starts.
    pub fn stopping(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }
}

/// Opens the database (running migrations), binds the listener and serves in the background.
pub async fn start(args: &ServeArgs) -> Result<Running, String> {
    // Before anything is opened, so that a wrong translator flag stops the start at once.
    let translator = crate::translator::HttpTranslator::from_args(args)?;
    let db_config = args.storage.db_config()?;
    let (db, signing_key) = tokio::task::spawn_blocking(move || {
        let db = Db::open(&db_config).map_err(|e| format!("cannot open the database: {e}"))?;
        let key = quire_store::instance::signing_key(&db)
            .map_err(|e| format!("cannot load the signing key: {e}"))?;
        Ok::<_, String>((db, key))
    })
    .await
    .map_err(|e| format!("database start failed: {e}"))??;
    let listener = TcpListener::bind(args.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let public_url = args
        .public_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let settings = Settings {
        max_body_bytes: args.max_body_bytes,
        rate_limit: args.rate_limit,
        trust_proxy: args.trust_proxy,
        request_timeout: args.request_timeout,
        pdf_wait: args.pdf_wait.min(args.request_timeout / 2),
        session_ttl_ms: i64::try_from(args.session_ttl.as_millis()).unwrap_or(i64::MAX),
        cors_origins: args.cors_origins.clone(),
    };
    let store_settings = quire_store::Settings {
        space_retention_ms: i64::try_from(args.space_retention.as_millis()).unwrap_or(i64::MAX),
        file_retention_ms: i64::try_from(args.file_retention.as_millis()).unwrap_or(i64::MAX),
        space_storage_quota: Quota::from_flag(args.space_storage_quota.as_ref()),
        org_storage_quota: Quota::from_flag(args.org_storage_quota.as_ref()),
        openapi_refresh_ms: i64::try_from(args.openapi_refresh.as_millis()).unwrap_or(i64::MAX),
        secrets_key: secrets_key(args)?,
        delivery: quire_store::integrations::delivery::DeliverySettings {
            attempts: args.delivery_attempts,
            backoff_ms: i64::try_from(args.delivery_backoff.as_millis()).unwrap_or(i64::MAX),
            timeout: args.delivery_timeout,
            disable_after_ms: i64::try_from(args.delivery_disable_after.as_millis()).unwrap_or(i64::MAX),
        },
        event_retention_ms: i64::try_from(args.event_retention.as_millis()).unwrap_or(i64::MAX),
    };
    let blobs = args.storage.blob_store()?;
    let outbound = Arc::new(crate::outbound::Outbound::new(
        args.outbound_allow.clone(),
        args.outbound_timeout,
    ));
    match &translator {
        Some(t) => tracing::info!(translator = %t.describe(), "machine translation through this translator"),
        None if args.translator_url.is_some() => {
            tracing::warn!("--translator-url is set but --translator is not: no machine translator is used")
        }
        None => tracing::info!("no machine translator configured (--translator)"),
    }
    let urls = Urls::new(&public_url);
    let scripts = crate::scripts::ScriptRunner::new(
        urls.clone(),
        outbound.clone(),
        blobs.clone(),
        args.script_settings(),
    );
    let store = Store::new(
        db.clone(),
        store_settings,
        Arc::new(blobs.clone()),
        outbound,
        Arc::new(scripts),
        Arc::new(crate::typeset::PdfTypesetter::new(
            urls.clone(),
            signing_key.clone(),
            blobs.clone(),
        )),
        translator.map(|t| Arc::new(t) as Arc<dyn quire_store::translations::Translator>),
    );
    let app = App::new(store, urls, settings, signing_key, blobs);
    // Spaces written before the search and link indexes existed are indexed before serving, so
    // that search never answers from a partial index.
    let indexing = app.clone();
    let indexed = tokio::task::spawn_blocking(move || {
        quire_store::main_revision::catch_up(&indexing.db, &indexing.content)
    })
    .await
    .map_err(|e| format!("indexing failed: {e}"))?
    .map_err(|e| format!("cannot index the spaces' content: {}", e.message))?;
    if indexed > 0 {
        tracing::info!(spaces = indexed, "indexed content for search and links");
    }
    let scheduling = app.clone();
    let first_collection = crate::clock::now_ms().saturating_add(quire_store::files::collect_interval_ms(
        scheduling.store.settings.file_retention_ms,
    ));
    scheduling
        .db
        .write(move |c| quire_store::files::schedule(c, first_collection))
        .await
        .map_err(|e| format!("cannot schedule file collection: {}", e.message))?;
    let event_retention = scheduling.store.settings.event_retention_ms;
    scheduling
        .db
        .write(move |c| quire_store::integrations::retention::schedule(c, event_retention))
        .await
        .map_err(|e| format!("cannot schedule the pruning of events: {}", e.message))?;
    scheduling
        .db
        .write(|c| quire_store::pdf::schedule_pruning(c, crate::clock::now_ms()))
        .await
        .map_err(|e| format!("cannot schedule the pruning of PDF exports: {}", e.message))?;
    let (stop, stopped) = watch::channel(false);
    let router = crate::router::router(app.clone());
    let limits = crate::connections::Limits::from_args(&args.connections);
    let http = tokio::spawn(crate::connections::serve(
        listener,
        router,
        app.clone(),
        limits,
        stopped.clone(),
    ));
    let mut tasks = vec![http];
    if !args.no_jobs {
        tasks.push(tokio::spawn(quire_store::worker::run(app.store.clone(), stopped)));
    }
    Ok(Running {
        addr,
        db,
        public_url,
        app,
        stop,
        tasks,
    })
}

/// The key integration secrets are sealed with: `QUIRE_SECRETS_KEY`, else the data directory's
/// `secrets.key` (made, readable by its owner only, on first start).
fn secrets_key(args: &ServeArgs) -> Result<SecretsKey, String> {
    if let Some(text) = &args.secrets_key {
        return SecretsKey::parse(text).map_err(|e| format!("QUIRE_SECRETS_KEY: {e}"));
    }
    let path = args.storage.data_dir.join("secrets.key");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&args.storage.data_dir)
                .map_err(|e| format!("cannot create {}: {e}", args.storage.data_dir.display()))?;
            let key = SecretsKey::generate();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(&path) {
                Ok(mut file) => {
                    std::io::Write::write_all(&mut file, key.as_bytes())
                        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                    key
                }
                // Another process made it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
                Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
            }
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    SecretsKey::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `quire serve`: starts, bootstraps an empty database, serves until SIGINT or SIGTERM.
pub async fn serve(args: ServeArgs, bootstrap_email: String) -> Result<(), String> {
    let running = start(&args).await?;
    if !args.no_bootstrap {
        let db = running.db.clone();
        let created =
            tokio::task::spawn_blocking(move || quire_store::admin::bootstrap(&db, &bootstrap_email))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| format!("first-start setup failed: {}", e.message))?;
        if let Some(b) = created {
            print_bootstrap(&b, &running.public_url);
        }
    }
    tracing::info!(addr = %running.addr, url = %running.public_url, "quire is listening");
    shutdown_signal().await;
    tracing::info!("shutting down");
    // In-flight requests get the grace period; whatever still runs a second after it (a
    // connection, a background job) is dropped with the process, so that a SIGTERM always ends
    // within the grace and a second or two.
    let bound = args.connections.shutdown_grace + Duration::from_millis(1500);
    if tokio::time::timeout(bound, running.shutdown()).await.is_err() {
        tracing::warn!("shutdown grace over: dropping what still runs");
    }
    Ok(())
}

fn print_bootstrap(b: &quire_store::admin::Bootstrap, url: &str) {
    println!(
        "\nquire: first start on an empty database. Created, and shown only this once:\n\
         \n  administrator  {} (user id {})\
         \n  organization   {} (id {})\
         \n  API token      {}\n\
         \nTry it:\n\
         \n  curl -H 'Authorization: Bearer {}' {}/v1/orgs\n",
        b.email, b.user_id, b.org_title, b.org_id, b.token, b.token, url
    );
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
