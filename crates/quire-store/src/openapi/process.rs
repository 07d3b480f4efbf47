//! Processing a specification: the `openapi_process` job fetches the description (through the
//! outbound policy, `Store::fetch`), parses and checks it (`quire-openapi`), fetches every file
//! it refers to by a relative `$ref`, and stores a new version when the files' text changed.
//!
//! One job row per specification (dedupe key `openapi:{id}`): a new source reschedules it, a
//! delete cancels it, a URL source runs it again every `Settings::openapi_refresh_ms`. The
//! result is written in one transaction that first takes the specification's row, and only if
//! the source it was computed from is still the specification's (`generation`): a crash at any
//! point leaves the job leased, the lease expires, the job runs again, and the version is
//! stored once (same text, same hash, nothing new).

use std::time::Duration;

use quire_openapi::filesystem::{FileEntry, dir_of, relative_refs};
use quire_openapi::limits::{MAX_ERRORS, MAX_FILE_BYTES, MAX_FILES};
use quire_openapi::parse::{self, Format, Problem};
use serde_json::json;
use sha2::Digest as _;

use super::model::{self, ErrorCode, ProcessError, ProcessingState, Spec};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::outbound::FetchErrorKind;
use crate::{Store, clock, ids, jobs, params};

pub const PROCESS_JOB: &str = "openapi_process";
/// The most bytes of all the files of one description together.
pub const MAX_TOTAL_BYTES: usize = 32 * 1024 * 1024;
/// How long one processing may take, fetches included: well inside the job's lease, so that no
/// other process takes the job while this one still works on it.
pub const PROCESS_DEADLINE: Duration = Duration::from_secs(45);

/// The dedupe key of a specification's job.
pub fn job_key(spec_id: &str) -> String {
    format!("openapi:{spec_id}")
}

/// Schedules the processing of a specification at `at` (Unix ms), replacing a scheduled run.
pub fn schedule(c: &mut dyn Conn, spec_id: &str, at: i64) -> StoreResult<()> {
    jobs::enqueue(
        c,
        PROCESS_JOB,
        &json!({ "spec": spec_id }),
        at,
        Some(&job_key(spec_id)),
    )
}

/// What a run starts from: the specification's source at one generation.
struct Start {
    spec_id: String,
    slug: String,
    org_id: String,
    generation: i64,
    url: Option<String>,
    text: Option<String>,
}

/// The files of a processed description.
struct Gathered {
    files: Vec<FileEntry>,
    raw_text: String,
    raw_format: Format,
    hash: String,
    url: Option<String>,
}

/// Why a processing failed.
struct Failure {
    code: ErrorCode,
    errors: Vec<ProcessError>,
    count: usize,
}

impl Failure {
    fn one(code: ErrorCode, detail: &str, message: String) -> Failure {
        Failure {
            code,
            errors: vec![ProcessError {
                message,
                code: detail.to_string(),
            }],
            count: 1,
        }
    }

    fn fetch(url: &str, e: crate::outbound::FetchError) -> Failure {
        let (code, detail) = match e.kind {
            FetchErrorKind::Timeout => (ErrorCode::FetchTimeout, "FETCH_TIMEOUT"),
            FetchErrorKind::TooLarge => (ErrorCode::FetchError, "TOO_LARGE"),
            FetchErrorKind::Refused => (ErrorCode::FetchError, "REFUSED"),
            FetchErrorKind::Failed => (ErrorCode::FetchError, "FETCH_FAILED"),
        };
        let message = if e.message.contains(url) {
            e.message
        } else {
            format!("{url}: {}", e.message)
        };
        Failure::one(code, detail, message)
    }

    fn parse(file: &str, problems: Vec<Problem>) -> Failure {
        let count = problems.len();
        Failure {
            code: ErrorCode::ParseError,
            errors: problems
                .into_iter()
                .take(MAX_ERRORS)
                .map(|p| ProcessError {
                    message: format!("{file}: {} (at {})", p.message, display_pointer(&p.pointer)),
                    code: p.code.to_string(),
                })
                .collect(),
            count,
        }
    }
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

/// Runs the job; Some(time) asks to run again then (a refresh, or a source that changed while
/// this run worked).
pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let spec_id = payload
        .get("spec")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| StoreError::internal(format!("{PROCESS_JOB} payload without `spec`: {payload}")))?
        .to_string();
    let id = spec_id.clone();
    let Some(start) = store.db.write(move |c| begin(c, &id)).await? else {
        return Ok(None);
    };
    let outcome = match tokio::time::timeout(PROCESS_DEADLINE, gather(store, &start)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(Failure::one(
            ErrorCode::FetchTimeout,
            "FETCH_TIMEOUT",
            format!(
                "processing took longer than {} s (fetching the description and the files it refers to)",
                PROCESS_DEADLINE.as_secs()
            ),
        )),
    };
    let refresh = store.settings.openapi_refresh_ms;
    let start = std::sync::Arc::new(start);
    let outcome = std::sync::Arc::new(outcome);
    let done = store
        .db
        .write({
            let start = start.clone();
            let outcome = outcome.clone();
            move |c| finish(c, &start, &outcome)
        })
        .await?;
    let now = clock::now_ms();
    Ok(match done {
        // The source changed meanwhile: the new one is processed at once.
        Finished::Stale => Some(now),
        Finished::Gone => None,
        Finished::Written if start.url.is_some() && refresh > 0 => Some(now.saturating_add(refresh)),
        Finished::Written => None,
    })
}

/// Marks the specification in progress and reads its source; None when it is gone.
fn begin(c: &mut dyn Conn, spec_id: &str) -> StoreResult<Option<Start>> {
    let Some(spec) = model::load_by_id(c, spec_id)? else {
        return Ok(None);
    };
    c.execute(
        "UPDATE openapi_specs SET processing_state = ?2 WHERE id = ?1",
        params![spec_id, ProcessingState::Progress],
    )?;
    let text: Option<String> = match c.query_opt(
        "SELECT source_text FROM openapi_specs WHERE id = ?1",
        params![spec_id],
    )? {
        Some(row) => row.get(0)?,
        None => None,
    };
    Ok(Some(Start {
        spec_id: spec.id,
        slug: spec.slug,
        org_id: spec.org_id,
        generation: spec.generation,
        url: spec.source_url,
        text,
    }))
}

/// Fetches and parses the entry file and every file it refers to.
async fn gather(store: &Store, start: &Start) -> Result<Gathered, Failure> {
    let (entry_text, base) = match (&start.url, &start.text) {
        (Some(url), _) => {
            let fetched = store
                .fetch
                .fetch(url, MAX_FILE_BYTES)
                .await
                .map_err(|e| Failure::fetch(url, e))?;
            (
                decode(url, fetched.bytes)?,
                url::Url::parse(&fetched.final_url).ok(),
            )
        }
        (None, Some(text)) => (text.clone(), None),
        (None, None) => {
            return Err(Failure::one(
                ErrorCode::FetchError,
                "NO_SOURCE",
                "the specification has neither a URL nor a text".into(),
            ));
        }
    };
    let entry_name = base
        .as_ref()
        .and_then(|u| u.path_segments()?.next_back().map(str::to_string))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "openapi.json".to_string());
    let (entry, raw_text) = parse_blocking(entry_name.clone(), entry_text, true).await?;
    let raw_format = entry.1;
    let mut files = vec![file_entry(&entry_name, ".", true, entry.0)];
    let mut texts = vec![raw_text.clone()];
    let mut total = raw_text.len();
    // Breadth first over the files the description refers to, each fetched once. A
    // description given as text has no place to find them: its references stay as written.
    let mut next = 0;
    while let Some(base) = base.as_ref()
        && next < files.len()
    {
        let wanted = relative_refs(&files[next].specification, &files[next].dir);
        files[next].references = wanted.clone();
        next += 1;
        for name in wanted {
            if files.iter().any(|f| f.filename == name) {
                continue;
            }
            if files.len() >= MAX_FILES {
                return Err(Failure::one(
                    ErrorCode::ParseError,
                    "TOO_MANY_FILES",
                    format!("the description refers to more than {MAX_FILES} files"),
                ));
            }
            let url = base.join(&name).map_err(|e| {
                Failure::one(
                    ErrorCode::ParseError,
                    "INVALID_REF",
                    format!("$ref {name:?}: {e}"),
                )
            })?;
            let fetched = store
                .fetch
                .fetch(url.as_str(), MAX_FILE_BYTES)
                .await
                .map_err(|e| Failure::fetch(url.as_str(), e))?;
            let text = decode(url.as_str(), fetched.bytes)?;
            total += text.len();
            if total > MAX_TOTAL_BYTES {
                return Err(Failure::one(
                    ErrorCode::FetchError,
                    "TOO_LARGE",
                    format!("the description's files are more than {MAX_TOTAL_BYTES} bytes together"),
                ));
            }
            let ((value, _), text) = parse_blocking(name.clone(), text, false).await?;
            files.push(file_entry(&name, &dir_of(&name), false, value));
            texts.push(text);
        }
    }
    let mut hasher = sha2::Sha256::new();
    for (file, text) in files.iter().zip(&texts) {
        hasher.update(file.filename.as_bytes());
        hasher.update([0]);
        hasher.update(text.as_bytes());
        hasher.update([0]);
    }
    let hash = hasher.finalize().iter().map(|b| format!("{b:02x}")).collect();
    Ok(Gathered {
        files,
        raw_text,
        raw_format,
        hash,
        url: start.url.clone(),
    })
}

fn file_entry(name: &str, dir: &str, is_entrypoint: bool, specification: serde_json::Value) -> FileEntry {
    FileEntry {
        dir: dir.to_string(),
        filename: name.to_string(),
        is_entrypoint,
        references: Vec::new(),
        specification,
    }
}

fn decode(url: &str, bytes: bytes::Bytes) -> Result<String, Failure> {
    String::from_utf8(bytes.to_vec()).map_err(|_| {
        Failure::one(
            ErrorCode::ParseError,
            "SYNTAX",
            format!("{url}: the file is not UTF-8 text"),
        )
    })
}

/// Parses (and, for the entry file, checks) a file off the async runtime: a description can
/// be megabytes.
async fn parse_blocking(
    name: String,
    text: String,
    entry: bool,
) -> Result<((serde_json::Value, Format), String), Failure> {
    tokio::task::spawn_blocking(move || {
        let parsed = parse::parse_text(&text).map_err(|p| Failure::parse(&name, vec![p]))?;
        if entry {
            parse::check(&parsed.0).map_err(|problems| Failure::parse(&name, problems))?;
        }
        Ok((parsed, text))
    })
    .await
    .unwrap_or_else(|e| {
        Err(Failure::one(
            ErrorCode::ParseError,
            "INTERNAL",
            format!("parsing stopped: {e}"),
        ))
    })
}

enum Finished {
    Written,
    /// The specification has a newer source than the one processed: nothing written.
    Stale,
    Gone,
}

/// Writes the outcome of a run, if the specification still has the source it was computed from.
fn finish(c: &mut dyn Conn, start: &Start, outcome: &Result<Gathered, Failure>) -> StoreResult<Finished> {
    // Taking the row first serializes two runs that finish together (a lease that expired
    // under a slow run): the second sees the first's version and stores nothing.
    let now = clock::now_ms();
    let touched = c.execute(
        "UPDATE openapi_specs SET last_processed_at = ?2 WHERE id = ?1",
        params![start.spec_id.clone(), now],
    )?;
    if touched == 0 {
        return Ok(Finished::Gone);
    }
    let Some(spec) = model::load_by_id(c, &start.spec_id)? else {
        return Ok(Finished::Gone);
    };
    if spec.generation != start.generation {
        c.execute(
            "UPDATE openapi_specs SET processing_state = ?2 WHERE id = ?1",
            params![spec.id.clone(), ProcessingState::Pending],
        )?;
        return Ok(Finished::Stale);
    }
    match outcome {
        Ok(gathered) => {
            let last_version = store_version(c, &spec, start, gathered, now)?;
            c.execute(
                "UPDATE openapi_specs SET processing_state = ?2, last_version_id = ?3, last_error_code = NULL,
                     last_errors = NULL, last_error_count = 0 WHERE id = ?1",
                params![spec.id.clone(), ProcessingState::Complete, last_version],
            )?;
        }
        Err(failure) => {
            let errors = serde_json::to_string(&failure.errors)
                .map_err(|e| StoreError::internal(format!("cannot write processing errors: {e}")))?;
            c.execute(
                "UPDATE openapi_specs SET processing_state = ?2, last_error_code = ?3, last_errors = ?4,
                     last_error_count = ?5 WHERE id = ?1",
                params![
                    spec.id.clone(),
                    ProcessingState::Complete,
                    failure.code,
                    errors,
                    i64::try_from(failure.count).unwrap_or(i64::MAX)
                ],
            )?;
        }
    }
    Ok(Finished::Written)
}

/// Stores the gathered files as a new version unless the latest has the same text; answers the
/// id of the latest version.
fn store_version(
    c: &mut dyn Conn,
    spec: &Spec,
    start: &Start,
    gathered: &Gathered,
    now: i64,
) -> StoreResult<String> {
    if let Some(latest) = &spec.last_version {
        let hash: Option<String> = c.query_scalar(
            "SELECT content_hash FROM openapi_spec_versions WHERE id = ?1",
            params![latest.clone()],
        )?;
        if hash.as_deref() == Some(gathered.hash.as_str()) {
            return Ok(latest.clone());
        }
    }
    let filesystem = serde_json::to_string(&gathered.files)
        .map_err(|e| StoreError::internal(format!("cannot write the filesystem of {:?}: {e}", spec.slug)))?;
    let id = ids::new_id();
    // Versions made in the same millisecond still list in the order they were made.
    let last: i64 = c
        .query_scalar(
            "SELECT coalesce(max(created_at), 0) FROM openapi_spec_versions WHERE spec_id = ?1",
            params![spec.id.clone()],
        )?
        .unwrap_or(0);
    let created_at = now.max(last + 1);
    c.execute(
        "INSERT INTO openapi_spec_versions (id, spec_id, url, content_hash, raw_text, raw_format, filesystem, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            id.clone(),
            spec.id.clone(),
            gathered.url.clone(),
            gathered.hash.clone(),
            gathered.raw_text.clone(),
            gathered.raw_format.as_str(),
            filesystem,
            created_at
        ],
    )?;
    c.execute(
        "DELETE FROM openapi_spec_versions WHERE spec_id = ?1 AND id NOT IN (
             SELECT id FROM openapi_spec_versions WHERE spec_id = ?1
             ORDER BY created_at DESC, id DESC LIMIT ?2)",
        params![spec.id.clone(), super::VERSIONS_KEPT],
    )?;
    super::pages::spec_changed(c, &start.org_id, &start.slug)?;
    let payload = events::OpenApiSpecVersionCreated {
        spec_id: &spec.id,
        slug: &start.slug,
        version_id: &id,
    };
    events::record(c, Event::in_org(&start.org_id, &spec.id, None, payload))?;
    Ok(id)
}
