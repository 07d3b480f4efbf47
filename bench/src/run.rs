//! `quire-bench run`: the one command. For each engine (SQLite always; PostgreSQL when a
//! database URL is given) it starts `quire serve` on a fresh data directory (and a fresh
//! PostgreSQL schema), generates the dataset, measures the reference server, runs every load
//! phase while sampling the server's memory, and writes the markdown report.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::conversations::ConversationsResult;
use crate::dataset::{Dataset, Summary};
use crate::events::EventsResult;
use crate::generate::{Admin, GenArgs, Scale};
use crate::load::{Driver, Family, FamilyResult};
use crate::openapi::OpenApiResult;
use crate::pathological::PathologicalResult;
use crate::pdf::PdfResult;
use crate::report;
use crate::scripts::ScriptsResult;
use crate::sites::SitesResult;
use crate::writers::WritersResult;

pub struct RunArgs {
    pub quire_bin: PathBuf,
    pub self_bin: PathBuf,
    pub database_url: Option<String>,
    pub sqlite: bool,
    pub scale: Scale,
    pub mix: String,
    pub duration: Duration,
    pub warmup: Duration,
    pub latency_duration: Duration,
    pub connections: usize,
    pub write_connections: usize,
    pub server_log: String,
    pub report: PathBuf,
    pub json: Option<PathBuf>,
    pub keep: bool,
    /// GitBook's OpenAPI description, for the `openapi` phase.
    pub openapi_description: PathBuf,
}

/// Everything one run measured: the report is written from it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunReport {
    pub date: String,
    pub machine: Machine,
    pub settings: Settings,
    pub engines: Vec<EngineReport>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_mb: u64,
    pub kernel: String,
    pub load_average_before: String,
    pub commit: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Settings {
    pub scale: String,
    pub mix: String,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub latency_duration_s: f64,
    pub connections: usize,
    pub write_connections: usize,
    pub server_log: String,
    pub smoke: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EngineReport {
    pub engine: String,
    pub dataset: Summary,
    pub space_json_bytes: usize,
    /// The reference at `connections`, before and after quire's phases.
    pub reference_before: FamilyResult,
    pub reference_after: FamilyResult,
    /// The reference measured in alternating slices with get-space (see `load::alternate`):
    /// the get-space ratio is taken against it.
    #[serde(default)]
    pub reference_beside_get_space: Option<FamilyResult>,
    /// The reference on one connection (the unloaded pass's yardstick).
    pub reference_single: Option<FamilyResult>,
    /// Every phase at its concurrency.
    pub results: Vec<FamilyResult>,
    /// Reads again on one connection: latency without queueing.
    pub single: Vec<FamilyResult>,
    /// The `sites` phase, when it ran: the sites it made (its figures are in `results` and
    /// `single`, as `site-published` and `site-published-plain`).
    #[serde(default)]
    pub sites: Option<SitesResult>,
    /// The `writers` phase, when it ran.
    #[serde(default)]
    pub writers: Option<WritersResult>,
    /// The `openapi` phase, when it ran.
    #[serde(default)]
    pub openapi: Option<OpenApiResult>,
    /// The `events` phase, when it ran.
    #[serde(default)]
    pub events: Option<EventsResult>,
    /// The `scripts` phase, when it ran.
    #[serde(default)]
    pub scripts: Option<ScriptsResult>,
    /// The `pdf` phase, when it ran.
    #[serde(default)]
    pub pdf: Option<PdfResult>,
    /// The `conversations` phase, when it ran.
    #[serde(default)]
    pub conversations: Option<ConversationsResult>,
    /// The `pathological` phase, when it ran.
    #[serde(default)]
    pub pathological: Option<PathologicalResult>,
    pub memory: Memory,
    pub server_errors: Vec<String>,
}

impl EngineReport {
    /// The reference's requests per second: the mean of before and after.
    pub fn reference_rps(&self) -> f64 {
        (self.reference_before.rps + self.reference_after.rps) / 2.0
    }

    pub fn result(&self, family: Family) -> Option<&FamilyResult> {
        self.results.iter().find(|r| r.family == family.name())
    }

    pub fn single(&self, family: Family) -> Option<&FamilyResult> {
        self.single.iter().find(|r| r.family == family.name())
    }
}

/// Resident set sizes of the server, in MB.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Memory {
    pub idle_after_start_mb: f64,
    pub idle_after_gen_mb: f64,
    pub peak_under_load_mb: f64,
    /// Peak per phase, in phase order.
    pub per_phase_mb: Vec<(String, f64)>,
}

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 20s, 500ms, 2m"))?;
    let secs = match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        _ => return Err(format!("invalid duration unit in {text:?}: use ms, s or m")),
    };
    Duration::try_from_secs_f64(secs).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

pub async fn run(args: RunArgs) -> Result<(), String> {
    if !args.quire_bin.is_file() {
        return Err(format!(
            "{} not found: build it first (cargo build --release -p quire -p quire-bench) or pass --quire-bin",
            args.quire_bin.display()
        ));
    }
    let smoke = args.scale == Scale::Small || args.duration < Duration::from_secs(10);
    let mut report = RunReport {
        date: now_utc(),
        machine: machine(),
        settings: Settings {
            scale: match args.scale {
                Scale::Full => "full".into(),
                Scale::Small => "small".into(),
            },
            mix: args.mix.clone(),
            duration_s: args.duration.as_secs_f64(),
            warmup_s: args.warmup.as_secs_f64(),
            latency_duration_s: args.latency_duration.as_secs_f64(),
            connections: args.connections,
            write_connections: args.write_connections,
            server_log: args.server_log.clone(),
            smoke,
        },
        engines: Vec::new(),
    };
    let mut engines: Vec<(String, Option<String>)> = Vec::new();
    if args.sqlite {
        engines.push(("SQLite".into(), None));
    }
    if let Some(url) = args.database_url.clone().filter(|u| !u.is_empty()) {
        engines.push(("PostgreSQL".into(), Some(url)));
    }
    if engines.is_empty() {
        return Err("nothing to run: --no-sqlite and no --database-url".into());
    }
    for (name, url) in engines {
        eprintln!("\n=== {name}");
        let engine = run_engine(&args, &name, url.as_deref()).await?;
        report.engines.push(engine);
        // Written after each engine, so a failure later keeps what was measured.
        write_outputs(&args, &report)?;
    }
    eprintln!("\nreport written to {}", args.report.display());
    Ok(())
}

fn write_outputs(args: &RunArgs, report: &RunReport) -> Result<(), String> {
    let text = report::markdown(report);
    if let Some(dir) = args.report.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(&args.report, text).map_err(|e| format!("cannot write {}: {e}", args.report.display()))?;
    if let Some(json) = &args.json {
        if let Some(dir) = json.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(report).map_err(|e| e.to_string())?;
        std::fs::write(json, text).map_err(|e| format!("cannot write {}: {e}", json.display()))?;
    }
    Ok(())
}

/// A child process killed when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh PostgreSQL schema, dropped when done.
struct PgSchema {
    admin_url: String,
    schema: String,
    keep: bool,
}

impl PgSchema {
    fn create(url: &str, keep: bool) -> Result<(PgSchema, String), String> {
        let schema = format!("bench_{}", std::process::id());
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .map_err(|e| format!("cannot connect to {url}: {e}"))?;
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
            ))
            .map_err(|e| format!("cannot create schema {schema}: {e}"))?;
        let sep = if url.contains('?') { '&' } else { '?' };
        let server_url = format!("{url}{sep}options=-csearch_path%3D{schema}");
        Ok((
            PgSchema {
                admin_url: url.to_string(),
                schema,
                keep,
            },
            server_url,
        ))
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("kept PostgreSQL schema {}", self.schema);
            return;
        }
        if let Ok(mut c) = postgres::Client::connect(&self.admin_url, postgres::NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", self.schema));
        }
    }
}

/// Gathers the planner's statistics on the freshly loaded schema, as autovacuum does a minute
/// after a load: the PostgreSQL of a test machine may run without it (this one does), and a
/// planner without statistics filtered 12,000 comments for one page's.
async fn analyze(url: String) -> Result<(), String> {
    tokio::task::spawn_blocking(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .map_err(|e| format!("cannot connect to analyze: {e}"))?;
        client
            .batch_execute("ANALYZE")
            .map_err(|e| format!("ANALYZE: {e}"))
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Samples a process's resident set every 100 ms; keeps the peak since the last reset.
struct RssSampler {
    peak_kb: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let peak_kb = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (p, s) = (peak_kb.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if let Some(kb) = rss_kb(pid) {
                    p.fetch_max(kb, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        RssSampler {
            peak_kb,
            stop,
            thread: Some(thread),
        }
    }

    /// The peak since the last call, in MB.
    fn take_peak_mb(&self) -> f64 {
        self.peak_kb.swap(0, Ordering::Relaxed) as f64 / 1024.0
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A process's resident set, kB (`VmRSS` of /proc/{pid}/status).
pub fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn clean_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("QUIRE_") {
            cmd.env_remove(key);
        }
    }
}

/// Waits until `addr` accepts connections and `path` answers 200.
async fn wait_ready(addr: SocketAddr, path: &str, child: &mut Child, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("{what} exited early ({status})"));
        }
        if let Ok(mut c) = crate::conn::Conn::new(addr)
            && let Ok(a) = c.get(path, "-").await
            && a.status == 200
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("{what} did not answer on {addr} within 120 s"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn run_engine(
    args: &RunArgs,
    engine: &str,
    database_url: Option<&str>,
) -> Result<EngineReport, String> {
    let dir = std::env::temp_dir().join(format!(
        "quire-bench-{}-{}",
        std::process::id(),
        engine.to_lowercase()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let pg = match database_url {
        Some(url) => {
            let (url, keep) = (url.to_string(), args.keep);
            Some(
                tokio::task::spawn_blocking(move || PgSchema::create(&url, keep))
                    .await
                    .map_err(|e| e.to_string())??,
            )
        }
        None => None,
    };
    let server_db_url = pg.as_ref().map(|(_, u)| u.clone());
    let result = measure_engine(args, engine, &dir, server_db_url).await;
    if let Some((schema, _)) = pg {
        let _ = tokio::task::spawn_blocking(move || drop(schema)).await;
    }
    if args.keep {
        eprintln!("kept {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result
}

async fn measure_engine(
    args: &RunArgs,
    engine: &str,
    dir: &Path,
    database_url: Option<String>,
) -> Result<EngineReport, String> {
    let mut report = EngineReport {
        engine: engine.to_string(),
        ..EngineReport::default()
    };
    // The server.
    let port = free_port()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().map_err(|e| format!("{e}"))?;
    let log_path = dir.join("server.log");
    let log = std::fs::File::create(&log_path).map_err(|e| format!("cannot create the server log: {e}"))?;
    let mut cmd = Command::new(&args.quire_bin);
    clean_env(&mut cmd);
    cmd.arg("serve")
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--data-dir")
        .arg(dir.join("data"))
        .env("RUST_LOG", &args.server_log)
        // The load phases send tens of thousands of requests a second with one token: far past
        // any rate limit meant for people.
        .env("QUIRE_RATE_LIMIT", "0")
        // The `openapi` phase serves GitBook's description from the bench process, on
        // 127.0.0.1, and the `events` phase's receiver is there too: quire refuses to fetch
        // from, or deliver to, loopback addresses unless allowed.
        .env("QUIRE_OUTBOUND_ALLOW", "127.0.0.1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log));
    if let Some(url) = &database_url {
        cmd.arg("--database-url").arg(url);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", args.quire_bin.display()))?;
    let pid = child.id();
    let stdout = child.stdout.take().ok_or("no server stdout")?;
    let (token_tx, token_rx) = std::sync::mpsc::channel();
    // Reads the first-start token, then keeps draining stdout.
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent && let Some(t) = line.trim().strip_prefix("API token") {
                let _ = token_tx.send(t.trim().to_string());
                sent = true;
            }
        }
    });
    let mut server = Guard(child);
    eprintln!("quire serve (pid {pid}) on {addr}, data in {}", dir.display());
    wait_ready(addr, "/healthz", &mut server.0, "quire serve").await?;
    let token = tokio::task::spawn_blocking(move || token_rx.recv_timeout(Duration::from_secs(30)))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|_| "quire serve printed no first-start token".to_string())?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    report.memory.idle_after_start_mb = rss_kb(pid).unwrap_or(0) as f64 / 1024.0;
    eprintln!("idle after start: {:.1} MB", report.memory.idle_after_start_mb);

    // The dataset.
    let url = format!("http://{addr}");
    let data = crate::generate::generate(GenArgs {
        url: url.clone(),
        token,
        scale: args.scale,
        admin: Some(Admin {
            quire_bin: args.quire_bin.clone(),
            data_dir: Some(dir.join("data")),
            database_url: database_url.clone(),
        }),
        concurrency: 16,
    })
    .await?;
    data.write(&dir.join("dataset.json"))?;
    report.dataset = data.summary.clone();
    if let Some(url) = database_url.clone() {
        analyze(url).await?;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    report.memory.idle_after_gen_mb = rss_kb(pid).unwrap_or(0) as f64 / 1024.0;
    eprintln!("idle after gen: {:.1} MB", report.memory.idle_after_gen_mb);

    // The reference, with a body the size of a space.
    report.space_json_bytes = space_json_bytes(addr, &data).await?;
    let ref_port = free_port()?;
    let ref_addr: SocketAddr = format!("127.0.0.1:{ref_port}")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let mut ref_cmd = Command::new(&args.self_bin);
    ref_cmd
        .arg("reference")
        .arg("--listen")
        .arg(ref_addr.to_string())
        .arg("--body-bytes")
        .arg(report.space_json_bytes.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut reference = Guard(
        ref_cmd
            .spawn()
            .map_err(|e| format!("cannot start the reference server: {e}"))?,
    );
    wait_ready(ref_addr, "/", &mut reference.0, "the reference server").await?;
    let ref_driver = Driver::reference(ref_addr);
    let single = args.latency_duration > Duration::ZERO;
    eprintln!("\nphase: reference at {} connections", args.connections);
    report.reference_before = ref_driver
        .run(Family::Reference, args.connections, args.warmup, args.duration)
        .await?;
    print_one(&report.reference_before);
    if single {
        eprintln!("phase: reference at 1 connection");
        let r = ref_driver
            .run(Family::Reference, 1, args.warmup, args.latency_duration)
            .await?;
        print_one(&r);
        report.reference_single = Some(r);
    }

    // quire's phases.
    let sampler = RssSampler::start(pid);
    let driver = Driver::new(addr, data.clone()).await?;
    let mut plan = crate::load::plan(&args.mix, args.connections, args.write_connections)?;
    let pathological = plan.iter().any(|(f, _)| *f == Family::Pathological);
    let writers = plan.iter().any(|(f, _)| *f == Family::Writers);
    let openapi = plan.iter().any(|(f, _)| *f == Family::OpenApi);
    let events = plan.iter().any(|(f, _)| *f == Family::Events);
    let scripts = plan.iter().find(|(f, _)| *f == Family::Scripts).map(|(_, c)| *c);
    let pdf = plan.iter().any(|(f, _)| *f == Family::Pdf);
    let conversations = plan.iter().any(|(f, _)| *f == Family::Conversations);
    let sites = plan.iter().find(|(f, _)| *f == Family::Sites).map(|(_, c)| *c);
    plan.retain(|(f, _)| !Family::SPECIAL.contains(f));
    let (reads, writes): (Vec<_>, Vec<_>) = plan.into_iter().partition(|(f, _)| !f.is_write());
    let mut peak: f64 = 0.0;
    for (families, conns) in crate::load::phases(&reads) {
        eprintln!(
            "phase: {} at {conns} connections",
            crate::load::phase_name(&families)
        );
        sampler.take_peak_mb();
        let results = if families == [Family::GetSpace] {
            // Its budget is a ratio to the reference: both are measured in the same moments.
            let sides = [(&driver, Family::GetSpace), (&ref_driver, Family::Reference)];
            let [quire, reference] = crate::load::alternate(
                sides,
                conns,
                args.warmup,
                args.duration,
                crate::load::ALTERNATING_ROUNDS,
            )
            .await?;
            print_one(&reference);
            report.reference_beside_get_space = Some(reference);
            vec![quire]
        } else {
            driver
                .run_phase(&families, conns, args.warmup, args.duration)
                .await?
        };
        let p = sampler.take_peak_mb();
        peak = peak.max(p);
        for r in results {
            if !r.missing {
                report.memory.per_phase_mb.push((r.family.clone(), p));
            }
            print_one(&r);
            report.results.push(r);
        }
    }
    if single {
        let one: Vec<_> = reads.iter().map(|(f, _)| (*f, 1)).collect();
        for (families, _) in crate::load::phases(&one) {
            eprintln!("phase: {} at 1 connection", crate::load::phase_name(&families));
            let results = driver
                .run_phase(&families, 1, args.warmup, args.latency_duration)
                .await?;
            peak = peak.max(sampler.take_peak_mb());
            for r in results {
                print_one(&r);
                report.single.push(r);
            }
        }
    }
    for (family, conns) in &writes {
        eprintln!("phase: {} at {conns} connections", family.name());
        sampler.take_peak_mb();
        let r = driver.run(*family, *conns, args.warmup, args.duration).await?;
        let p = sampler.take_peak_mb();
        peak = peak.max(p);
        if !r.missing {
            report.memory.per_phase_mb.push((family.name().to_string(), p));
        }
        print_one(&r);
        report.results.push(r);
    }
    if let Some(conns) = sites {
        eprintln!(
            "phase: sites (published views of two docs sites, then reader pages, at {conns} connections)"
        );
        sampler.take_peak_mb();
        let (mut r, loaded, one) = crate::sites::run(
            &driver,
            Some(&ref_driver),
            conns,
            args.warmup,
            args.duration,
            args.latency_duration,
        )
        .await;
        r.peak_rss_mb = sampler.take_peak_mb();
        peak = peak.max(r.peak_rss_mb);
        if !r.sites_missing {
            report
                .memory
                .per_phase_mb
                .push(("sites".to_string(), r.peak_rss_mb));
        }
        eprint!("{}", crate::sites::table(&r));
        report.results.extend(loaded);
        report.single.extend(one);
        report.sites = Some(r);
        let mut budgets = vec![report::sites_budget(&report)];
        budgets.extend(report::reader_budgets(&report));
        eprint!("{}", report::budget_lines(&budgets));
    }
    if writers {
        eprintln!(
            "phase: writers (comment bursts on one space and on {} spaces)",
            crate::writers::WRITERS
        );
        sampler.take_peak_mb();
        let measure_list = !crate::writers::list_measured(&reads, &data);
        let mut r = crate::writers::run(&driver, args.warmup, args.duration, measure_list).await;
        r.peak_rss_mb = sampler.take_peak_mb();
        peak = peak.max(r.peak_rss_mb);
        if !r.comments_missing {
            report
                .memory
                .per_phase_mb
                .push(("writers".to_string(), r.peak_rss_mb));
        }
        eprint!("{}", crate::writers::table(&r));
        report.writers = Some(r);
        let mut budgets = vec![report::list_comments_budget(&report)];
        budgets.extend(report::writers_budgets(&report));
        eprint!("{}", report::budget_lines(&budgets));
    }
    if openapi {
        // Its memory peaks (processing a 1.7 MB description, generating and reading pages of
        // up to a megabyte of markdown) are reported with it, not in the memory budget of the
        // ordinary load.
        eprintln!("phase: openapi (GitBook's description processed, its reference pages read)");
        sampler.take_peak_mb();
        let peak = || sampler.take_peak_mb();
        let mut r =
            crate::openapi::run(driver.addr(), driver.dataset(), &args.openapi_description, &peak).await;
        r.peak_rss_mb = r.peak_rss_mb.max(sampler.take_peak_mb());
        eprint!("{}", crate::openapi::table(&r));
        report.openapi = Some(r);
        eprint!("{}", report::budget_lines(&report::openapi_budgets(&report)));
    }
    if events {
        // Merges, as the `merge` phase's: its peak counts in the memory budget of the ordinary
        // load.
        eprintln!(
            "phase: events (merges at {} writers without, then with, an installed integration)",
            crate::events::WRITERS
        );
        sampler.take_peak_mb();
        let mut r = crate::events::run(&driver, args.warmup, args.duration).await;
        r.peak_rss_mb = sampler.take_peak_mb();
        peak = peak.max(r.peak_rss_mb);
        if !r.endpoint_missing {
            report
                .memory
                .per_phase_mb
                .push(("events".to_string(), r.peak_rss_mb));
        }
        eprint!("{}", crate::events::table(&r));
        report.events = Some(r);
        eprint!("{}", report::budget_lines(&report::events_budgets(&report)));
    }
    if let Some(conns) = scripts {
        // Renders, as readers of a page with an integration's block make them: its peak (the
        // 100 renders at once included) counts in the memory budget of the ordinary load.
        eprintln!(
            "phase: scripts (an integration's component rendered: cached at {conns} connections, \
             uncached at {}, {} at once)",
            crate::scripts::UNCACHED_CONNECTIONS,
            crate::scripts::MEMORY_CONNECTIONS
        );
        sampler.take_peak_mb();
        let mut r = crate::scripts::run(
            &driver,
            Some(pid),
            conns,
            args.warmup,
            args.duration,
            args.latency_duration,
        )
        .await;
        // The phase's own reads (every 5 ms while 100 renders run) may catch a higher peak.
        r.peak_rss_mb = sampler.take_peak_mb().max(r.rss_peak_mb.unwrap_or(0.0));
        peak = peak.max(r.peak_rss_mb);
        if !r.endpoint_missing {
            report
                .memory
                .per_phase_mb
                .push(("scripts".to_string(), r.peak_rss_mb));
        }
        eprint!("{}", crate::scripts::table(&r));
        report.scripts = Some(r);
        eprint!("{}", report::budget_lines(&report::scripts_budgets(&report)));
    }
    if pdf {
        // Typesetting is a background job with a memory budget of its own (300 MB during a
        // 500-page render): its peak is reported with it, not in the memory budget of the
        // ordinary load.
        eprintln!(
            "phase: pdf ({} pages exported {} times, {} one-page PDFs, cached PDFs against file downloads)",
            crate::pdf::PAGES,
            crate::pdf::FULL_RENDERS,
            crate::pdf::ONE_PAGE_EXPORTS
        );
        sampler.take_peak_mb();
        let mut r = crate::pdf::run(&driver, Some(pid), args.warmup, args.duration).await;
        // The phase's own reads (every 20 ms during the renders) may catch a higher peak.
        r.peak_rss_mb = sampler.take_peak_mb().max(r.worst_rss_mb().unwrap_or(0.0));
        eprint!("{}", crate::pdf::table(&r));
        report.pdf = Some(r);
        eprint!("{}", report::budget_lines(&report::pdf_budgets(&report)));
    }
    if conversations {
        // The analyses and clusterings are background jobs: their memory peak is reported with
        // the phase, not in the memory budget of the ordinary load.
        eprintln!(
            "phase: conversations ({} conversations ingested at {} connections, analysed and \
             clustered, then one more)",
            crate::conversations::conversations_for(&data.scale),
            crate::conversations::INGEST_CONNECTIONS
        );
        sampler.take_peak_mb();
        let mut r = crate::conversations::run(driver.addr(), driver.dataset()).await;
        r.peak_rss_mb = sampler.take_peak_mb();
        eprint!("{}", crate::conversations::table(&r));
        report.conversations = Some(r);
        eprint!(
            "{}",
            report::budget_lines(&report::conversations_budgets(&report))
        );
    }
    if pathological {
        // Last: it adds a page of about 20 MB of JSON to the big space. Its memory peak is
        // reported with it, not in the memory budget of the ordinary load.
        eprintln!("phase: pathological (merges of a page at the content limits)");
        sampler.take_peak_mb();
        let mut r =
            crate::pathological::run(driver.addr(), driver.dataset(), args.warmup, args.duration).await;
        r.peak_rss_mb = sampler.take_peak_mb();
        eprint!("{}", crate::pathological::table(&r));
        report.pathological = Some(r);
    }
    drop(sampler);
    report.memory.peak_under_load_mb = peak;
    eprintln!("phase: reference again at {} connections", args.connections);
    report.reference_after = ref_driver
        .run(Family::Reference, args.connections, args.warmup, args.duration)
        .await?;
    print_one(&report.reference_after);
    drop(reference);
    drop(server);
    report.server_errors = server_errors(&log_path);
    Ok(report)
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

/// Size of a typical space's JSON (not the big one): the reference answers that many bytes.
async fn space_json_bytes(addr: SocketAddr, data: &Dataset) -> Result<usize, String> {
    let space = data.spaces.get(1).or(data.spaces.first()).ok_or("no space")?;
    let mut conn = crate::conn::Conn::new(addr)?;
    let a = conn
        .get(&format!("/v1/spaces/{space}"), &data.admin_token)
        .await?;
    if !a.ok() {
        return Err(format!("GET /v1/spaces/{space}: {}", a.describe()));
    }
    Ok(a.body.len())
}

/// The server's ERROR lines (a few), to show beside the figures.
fn server_errors(log: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    text.lines()
        .filter(|l| l.contains("ERROR"))
        .take(5)
        .map(|l| l.chars().take(300).collect())
        .collect()
}

fn now_utc() -> String {
    let now = time::OffsetDateTime::now_utc();
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    now.format(&format).unwrap_or_else(|_| "unknown".into())
}

fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|v| v.trim_start_matches([' ', '\t', ':']).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_mb = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb / 1024)
        .unwrap_or(0);
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=10"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    Machine {
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        cpu_model,
        memory_mb,
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .unwrap_or_default()
            .trim()
            .to_string(),
        load_average_before: std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" "),
        commit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
    }
}
