//! `quire-bench`: quire's reproducible load scenario (see `bench/README.md`).
//!
//! - `gen`: fills a running server through its API and writes the dataset file;
//! - `load`: the closed-loop load driver, per endpoint family;
//! - `reference`: the bare server every figure is compared with;
//! - `run`: the one command: server, dataset, reference, every phase, memory, report.

mod conn;
mod conversations;
mod dataset;
mod events;
mod generate;
mod load;
mod openapi;
mod pathological;
mod pdf;
mod reference;
mod report;
mod run;
mod scripts;
mod sites;
mod text;
mod writers;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::generate::Scale;

#[derive(Parser)]
#[command(name = "quire-bench", about = "quire's load scenario and benchmark report")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fill a running quire server through its API; write the ids made to a dataset file.
    Gen {
        /// Base URL of the server, e.g. http://127.0.0.1:8080.
        #[arg(long)]
        url: String,
        /// An administrator's API token (printed by the first `quire serve`, or `quire admin
        /// token create`).
        #[arg(long)]
        token: String,
        #[arg(long, value_enum, default_value = "full")]
        scale: Scale,
        #[arg(long, default_value = "bench/out/dataset.json")]
        out: PathBuf,
        /// Requests in flight at once.
        #[arg(long, default_value_t = 16)]
        concurrency: usize,
        /// The quire binary, to make members with `quire admin` (needs --data-dir or
        /// --database-url of the server).
        #[arg(long)]
        quire_bin: Option<PathBuf>,
        /// The server's data directory (SQLite).
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// The server's database URL (PostgreSQL).
        #[arg(long)]
        database_url: Option<String>,
    },
    /// Run load phases against a running server with a dataset made by `gen`.
    Load {
        #[arg(long)]
        url: String,
        #[arg(long, default_value = "bench/out/dataset.json")]
        dataset: PathBuf,
        /// Measured time of each phase.
        #[arg(long, default_value = "20s", value_parser = run::parse_duration)]
        duration: Duration,
        /// Unmeasured time at the start of each phase.
        #[arg(long, default_value = "1s", value_parser = run::parse_duration)]
        warmup: Duration,
        /// Connections of the read phases.
        #[arg(long, default_value_t = 64)]
        connections: usize,
        /// Connections of the write phases (create-comment, content-batch, merge).
        #[arg(long, default_value_t = 4)]
        write_connections: usize,
        /// `default` (every family: reads, writes, then `sites`, `writers`, `openapi`, `events`,
        /// `scripts`, `pdf`, `conversations` and `pathological`), `reads`, `writes`, or families
        /// separated by commas (`sites`, `writers`, `openapi`, `events`, `scripts`, `pdf`,
        /// `conversations` or `pathological` alone runs only that phase).
        #[arg(long, default_value = "default")]
        mix: String,
        /// Also write the results as JSON here (they are always printed on stdout).
        #[arg(long)]
        out: Option<PathBuf>,
        /// GitBook's OpenAPI description for the `openapi` phase (`bash .ci/gitbook-api` fetches
        /// it); the server must be allowed to fetch from 127.0.0.1 (`--outbound-allow`), as for
        /// the `events` phase, whose receiver is there too.
        #[arg(long, default_value = openapi::DEFAULT_DESCRIPTION)]
        openapi_description: PathBuf,
        /// The server's process id (on this machine), for the `scripts` and `pdf` phases' memory
        /// figures: without it, they measure only latencies.
        #[arg(long)]
        server_pid: Option<u32>,
    },
    /// A bare axum server answering any GET with a precomputed JSON body.
    Reference {
        #[arg(long, default_value = "127.0.0.1:8090")]
        listen: SocketAddr,
        /// Size of the body (the runner uses the size of a real space's JSON).
        #[arg(long, default_value_t = 1500)]
        body_bytes: usize,
    },
    /// The one command: start quire on a fresh database, generate, measure, write the report.
    Run {
        /// Also measure on PostgreSQL (a fresh schema in this database), after SQLite.
        #[arg(long, env = "QUIRE_DATABASE_URL")]
        database_url: Option<String>,
        /// Skip SQLite (PostgreSQL only).
        #[arg(long)]
        no_sqlite: bool,
        #[arg(long, value_enum, default_value = "full")]
        scale: Scale,
        /// Phases to run, as `load --mix`: `default` (all), `reads`, `writes`, or families
        /// separated by commas, e.g. `sites`, `writers`, `openapi`, `events`, `scripts`, `pdf`,
        /// `conversations` or `pathological` for that phase alone.
        #[arg(long, default_value = "default")]
        mix: String,
        #[arg(long, default_value = "20s", value_parser = run::parse_duration)]
        duration: Duration,
        #[arg(long, default_value = "2s", value_parser = run::parse_duration)]
        warmup: Duration,
        /// Measured time of each read family again on one connection (0 to skip).
        #[arg(long, default_value = "5s", value_parser = run::parse_duration)]
        latency_duration: Duration,
        #[arg(long, default_value_t = 64)]
        connections: usize,
        #[arg(long, default_value_t = 4)]
        write_connections: usize,
        /// The quire binary. Default: `quire` beside this binary (target/release/quire).
        #[arg(long)]
        quire_bin: Option<PathBuf>,
        /// RUST_LOG of the server (its logs go to a file in the run's directory).
        #[arg(long, default_value = "info")]
        server_log: String,
        #[arg(long, default_value = "bench/REPORT.md")]
        report: PathBuf,
        /// Every figure as JSON.
        #[arg(long, default_value = "bench/out/results.json")]
        json: PathBuf,
        /// Keep the data directory and PostgreSQL schema.
        #[arg(long)]
        keep: bool,
        /// GitBook's OpenAPI description for the `openapi` phase (`bash .ci/gitbook-api`
        /// fetches it; `bench/run.sh` runs that first). Missing, the phase reports it so.
        #[arg(long, default_value = openapi::DEFAULT_DESCRIPTION)]
        openapi_description: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn dispatch(command: Command) -> Result<(), String> {
    match command {
        Command::Gen {
            url,
            token,
            scale,
            out,
            concurrency,
            quire_bin,
            data_dir,
            database_url,
        } => {
            let admin = if data_dir.is_some() || database_url.is_some() {
                Some(generate::Admin {
                    quire_bin: quire_bin.map_or_else(sibling_quire, Ok)?,
                    data_dir,
                    database_url,
                })
            } else {
                None
            };
            let data = generate::generate(generate::GenArgs {
                url,
                token,
                scale,
                admin,
                concurrency,
            })
            .await?;
            data.write(&out)?;
            println!(
                "{}",
                serde_json::to_string_pretty(&data.summary).map_err(|e| e.to_string())?
            );
            eprintln!("dataset written to {}", out.display());
            Ok(())
        }
        Command::Load {
            url,
            dataset,
            duration,
            warmup,
            connections,
            write_connections,
            mix,
            out,
            openapi_description,
            server_pid,
        } => {
            let data = dataset::Dataset::read(&dataset)?;
            let plan = load::plan(&mix, connections, write_connections)?;
            let addr = conn::addr_of(&url)?;
            let mut results = Vec::new();
            let mut pathological = None;
            let mut openapi = None;
            let mut events = None;
            let mut scripts = None;
            let mut pdf = None;
            let mut conversations = None;
            let mut writers = None;
            let mut sites = None;
            if plan.iter().any(|(f, _)| *f != load::Family::Reference) {
                let measure_list = !writers::list_measured(&plan, &data);
                let driver = load::Driver::new(addr, data).await?;
                for (families, conns) in load::phases(&plan) {
                    if families == [load::Family::Sites] {
                        eprintln!("phase: sites");
                        let (r, loaded, _) =
                            sites::run(&driver, None, conns, warmup, duration, Duration::ZERO).await;
                        eprint!("{}", sites::table(&r));
                        results.extend(loaded);
                        sites = Some(r);
                        continue;
                    }
                    if families == [load::Family::Writers] {
                        eprintln!("phase: writers");
                        let r = writers::run(&driver, warmup, duration, measure_list).await;
                        eprint!("{}", writers::table(&r));
                        writers = Some(r);
                        continue;
                    }
                    if families == [load::Family::OpenApi] {
                        eprintln!("phase: openapi");
                        let r = openapi::run(addr, driver.dataset(), &openapi_description, &|| 0.0).await;
                        eprint!("{}", openapi::table(&r));
                        openapi = Some(r);
                        continue;
                    }
                    if families == [load::Family::Events] {
                        eprintln!("phase: events");
                        let r = events::run(&driver, warmup, duration).await;
                        eprint!("{}", events::table(&r));
                        events = Some(r);
                        continue;
                    }
                    if families == [load::Family::Scripts] {
                        eprintln!("phase: scripts");
                        let r =
                            scripts::run(&driver, server_pid, conns, warmup, duration, Duration::ZERO).await;
                        eprint!("{}", scripts::table(&r));
                        scripts = Some(r);
                        continue;
                    }
                    if families == [load::Family::Pdf] {
                        eprintln!("phase: pdf");
                        let r = pdf::run(&driver, server_pid, warmup, duration).await;
                        eprint!("{}", pdf::table(&r));
                        pdf = Some(r);
                        continue;
                    }
                    if families == [load::Family::Conversations] {
                        eprintln!("phase: conversations");
                        let r = conversations::run(addr, driver.dataset()).await;
                        eprint!("{}", conversations::table(&r));
                        conversations = Some(r);
                        continue;
                    }
                    if families == [load::Family::Pathological] {
                        eprintln!("phase: pathological");
                        let r = pathological::run(addr, driver.dataset(), warmup, duration).await;
                        eprint!("{}", pathological::table(&r));
                        pathological = Some(r);
                        continue;
                    }
                    eprintln!("phase: {} at {conns} connections", load::phase_name(&families));
                    let rs = driver.run_phase(&families, conns, warmup, duration).await?;
                    eprint!("{}", load::table(&rs));
                    results.extend(rs);
                }
            } else {
                let driver = load::Driver::reference(addr);
                for (family, conns) in plan {
                    results.push(driver.run(family, conns, warmup, duration).await?);
                }
            }
            eprintln!("\n{}", load::table(&results));
            // With the sites, writers, openapi, events, scripts, pdf, conversations or
            // pathological phase, their figures go beside the families'.
            let json = if pathological.is_none()
                && writers.is_none()
                && sites.is_none()
                && openapi.is_none()
                && events.is_none()
                && scripts.is_none()
                && pdf.is_none()
                && conversations.is_none()
            {
                serde_json::to_string_pretty(&results)
            } else {
                serde_json::to_string_pretty(&serde_json::json!({
                    "results": results,
                    "sites": sites,
                    "writers": writers,
                    "openapi": openapi,
                    "events": events,
                    "scripts": scripts,
                    "pdf": pdf,
                    "conversations": conversations,
                    "pathological": pathological
                }))
            }
            .map_err(|e| e.to_string())?;
            if let Some(path) = out {
                std::fs::write(&path, &json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            println!("{json}");
            Ok(())
        }
        Command::Reference { listen, body_bytes } => reference::serve(listen, body_bytes).await,
        Command::Run {
            database_url,
            no_sqlite,
            scale,
            mix,
            duration,
            warmup,
            latency_duration,
            connections,
            write_connections,
            quire_bin,
            server_log,
            report,
            json,
            keep,
            openapi_description,
        } => {
            let self_bin = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
            run::run(run::RunArgs {
                quire_bin: quire_bin.map_or_else(sibling_quire, Ok)?,
                self_bin,
                database_url,
                sqlite: !no_sqlite,
                scale,
                mix,
                duration,
                warmup,
                latency_duration,
                connections,
                write_connections,
                server_log,
                report,
                json: Some(json),
                keep,
                openapi_description,
            })
            .await
        }
    }
}

/// `quire` in the directory of this binary: both are built into target/release.
fn sibling_quire() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let dir = exe.parent().ok_or("this binary has no directory")?;
    Ok(dir.join("quire"))
}
