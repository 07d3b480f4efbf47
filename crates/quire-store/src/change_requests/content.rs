//! Writing a change request's content: a batch of 1 to 50 changes (`insert_page`,
//! `update_page`, `delete_page`, `revert_page`, `insert_files`) applied atomically as one new
//! revision of the change request. Files given by URL are fetched through [`Fetch`], which the
//! HTTP service implements (this crate has no HTTP client).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use base64::Engine as _;
use bytes::Bytes;
use quire_content::buckets::content_hash;
use quire_content::changes::{self, Affected, BatchContext, BatchOutcome, Change, FileInput};
use quire_content::tree::FileEntry;
use serde_json::Value;

use super::model::ChangeRequest;
use crate::Store;
use crate::content::attempts::Attempts;
use crate::content::store::{self, ContentCache, NewRevision};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::files as file_blobs;
use crate::outbound::Fetch;
use crate::permissions::{Authorized, SpaceAction, space};
use crate::spaces::{self, SpaceFor};
use crate::users::WithUsers;
use crate::{clock, ids, params};

/// Reads the `changes` of a batch, naming the failing change.
pub fn parse_changes(body: Value) -> StoreResult<Vec<Change>> {
    let Some(list) = body.get("changes").and_then(Value::as_array) else {
        return Err(StoreError::invalid("the body must be {\"changes\": [...]}"));
    };
    if list.is_empty() || list.len() > changes::MAX_CHANGES {
        return Err(StoreError::invalid(format!(
            "`changes` holds 1 to {} changes, not {}",
            changes::MAX_CHANGES,
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let change = Change::from_json(c.clone())
                .map_err(|e| StoreError::invalid(format!("changes[{i}]: {e}")))?;
            check_names(&change).map_err(|e| StoreError::invalid(format!("changes[{i}]: {}", e.message)))?;
            Ok(change)
        })
        .collect()
}

/// Page titles and file names of a change carry no control characters.
fn check_names(change: &Change) -> StoreResult<()> {
    let fields = match change {
        Change::InsertPage(c) => &c.fields,
        Change::UpdatePage(c) => &c.fields,
        Change::InsertFiles(c) => {
            for (j, file) in c.files.iter().enumerate() {
                crate::validate::no_control(&format!("files[{j}].name"), &file.name)?;
            }
            return Ok(());
        }
        Change::DeletePage(_) | Change::RevertPage(_) => return Ok(()),
    };
    for (field, value) in [("title", &fields.title), ("linkTitle", &fields.link_title)] {
        if let Some(value) = value {
            crate::validate::no_control(field, value)?;
        }
    }
    Ok(())
}

/// A file of an `insert_files` change, checked, with its bytes when they came as base64.
struct PendingFile {
    change: usize,
    /// Its position in the change's `files`.
    index: usize,
    at: String,
    name: String,
    content_type: Option<String>,
    source: Source,
}

enum Source {
    Bytes(Bytes),
    Url(String),
}

/// The files of a batch, stored before its transaction, and the blobs the transaction must
/// confirm (see [`file_blobs::confirm`]). Nothing is fetched or stored unless the caller may
/// edit the space, the change request is writable, the whole batch's files are valid and the
/// storage quotas allow them: a rejected batch leaves no bytes behind. A batch that fails later
/// leaves blobs no revision references, which the collection job removes after the file
/// retention.
async fn prepare_files(
    store: &Store,
    fetch: &dyn Fetch,
    user_id: &str,
    space_id: &str,
    cr_id: &str,
    changes: &[Change],
) -> StoreResult<(HashMap<usize, Vec<FileEntry>>, Vec<String>)> {
    if !changes.iter().any(|c| matches!(c, Change::InsertFiles(_))) {
        return Ok((HashMap::new(), Vec::new()));
    }
    let (user, space, cr) = (user_id.to_string(), space_id.to_string(), cr_id.to_string());
    let org_id = store
        .db
        .read(move |c| {
            let loaded = spaces::load_active(c, &space, &user)?;
            loaded.require(SpaceAction::Edit)?;
            super::writable(super::model::load(c, &space, &cr)?)?;
            Ok::<_, StoreError>(loaded.space.org_id)
        })
        .await?;
    let pending = check_files(changes)?;
    let mut stored = Stored::default();
    match store_files(store, fetch, space_id, &org_id, pending, &mut stored).await {
        Ok(()) => {
            // In the order of each change's `files` (those given by URL were stored last).
            let entries = stored
                .entries
                .into_iter()
                .map(|(change, mut files)| {
                    files.sort_by_key(|(index, _)| *index);
                    (change, files.into_iter().map(|(_, entry)| entry).collect())
                })
                .collect();
            Ok((entries, stored.hashes))
        }
        Err(e) => {
            file_blobs::release(store, space_id, stored.added).await;
            Err(e)
        }
    }
}

/// A file with its bytes and content type, ready to store.
struct ReadyFile {
    change: usize,
    index: usize,
    name: String,
    content_type: String,
    bytes: Bytes,
}

/// What a batch has stored so far.
#[derive(Default)]
struct Stored {
    entries: HashMap<usize, Vec<(usize, FileEntry)>>,
    hashes: Vec<String>,
    /// Blobs the space did not hold before, with the time they were recorded.
    added: Vec<(String, i64)>,
}

/// Stores the checked files: the base64 ones together (one quota check for all of them), then
/// those given by URL one at a time, so that a batch never holds more than one fetched file in
/// memory.
async fn store_files(
    store: &Store,
    fetch: &dyn Fetch,
    space_id: &str,
    org_id: &str,
    pending: Vec<PendingFile>,
    stored: &mut Stored,
) -> StoreResult<()> {
    let (inline, by_url): (Vec<PendingFile>, Vec<PendingFile>) = pending
        .into_iter()
        .partition(|f| matches!(f.source, Source::Bytes(_)));
    let mut ready = Vec::with_capacity(inline.len());
    for file in inline {
        if let Source::Bytes(bytes) = file.source {
            let content_type = file.content_type.unwrap_or_default();
            ready.push(ReadyFile {
                change: file.change,
                index: file.index,
                name: file.name,
                content_type,
                bytes,
            });
        }
    }
    store_ready(store, space_id, org_id, ready, stored).await?;
    for file in by_url {
        let Source::Url(url) = &file.source else { continue };
        let crate::outbound::Fetched {
            bytes,
            content_type: fetched_type,
            ..
        } = fetch
            .fetch(url, file_blobs::MAX_FETCH_BYTES)
            .await
            .map_err(|e| StoreError::invalid(format!("{}: {}", file.at, e.message)))?;
        let content_type = file
            .content_type
            .or(fetched_type)
            .unwrap_or_else(|| "application/octet-stream".into());
        check_content_type(&content_type).map_err(|e| StoreError::invalid(format!("{}: {e}", file.at)))?;
        let ready = vec![ReadyFile {
            change: file.change,
            index: file.index,
            name: file.name,
            content_type,
            bytes,
        }];
        store_ready(store, space_id, org_id, ready, stored).await?;
    }
    Ok(())
}

/// Records files (quotas checked) and stores their bytes.
async fn store_ready(
    store: &Store,
    space_id: &str,
    org_id: &str,
    ready: Vec<ReadyFile>,
    stored: &mut Stored,
) -> StoreResult<()> {
    if ready.is_empty() {
        return Ok(());
    }
    let hashes: Vec<String> = ready.iter().map(|f| content_hash(&f.bytes)).collect();
    let blobs: Vec<(String, u64)> = ready
        .iter()
        .zip(&hashes)
        .map(|(f, h)| (h.clone(), f.bytes.len() as u64))
        .collect();
    let quotas = file_blobs::Quotas::of(&store.settings);
    let (space, org) = (space_id.to_string(), org_id.to_string());
    let now = clock::now_ms();
    let added = store
        .db
        .write(move |c| file_blobs::reserve(c, &quotas, &space, &org, &blobs, now))
        .await?;
    stored.added.extend(added.into_iter().map(|h| (h, now)));
    for (file, hash) in ready.into_iter().zip(hashes) {
        let entry = file_blobs::file_entry(&file.name, &file.content_type, &file.bytes, hash.clone());
        store.blobs.put_hashed(space_id, &hash, file.bytes).await?;
        stored
            .entries
            .entry(file.change)
            .or_default()
            .push((file.index, entry));
        stored.hashes.push(hash);
    }
    Ok(())
}

/// Checks every file of the batch's `insert_files` changes (counts, names, content types,
/// base64 and its size, URLs) without fetching anything.
fn check_files(changes: &[Change]) -> StoreResult<Vec<PendingFile>> {
    let mut out = Vec::new();
    for (i, change) in changes.iter().enumerate() {
        let Change::InsertFiles(c) = change else { continue };
        if c.files.is_empty() || c.files.len() > changes::MAX_FILES {
            return Err(StoreError::invalid(format!(
                "changes[{i}]: `files` holds 1 to {} files",
                changes::MAX_FILES
            )));
        }
        for (j, file) in c.files.iter().enumerate() {
            let at = format!("changes[{i}].files[{j}]");
            let pending = check_file(i, j, file).map_err(|e| StoreError::invalid(format!("{at}: {e}")))?;
            out.push(PendingFile { at, ..pending });
        }
    }
    Ok(out)
}

fn check_file(change: usize, index: usize, file: &FileInput) -> Result<PendingFile, String> {
    let len = file.name.chars().count();
    if len == 0 || len > 256 || file.name.contains('/') {
        return Err("`name` must be 1 to 256 characters, without `/`".into());
    }
    let source = match (&file.base64, &file.url) {
        (Some(_), Some(_)) | (None, None) => return Err("give exactly one of `url` and `base64`".into()),
        (Some(data), None) => {
            let content_type = file
                .content_type
                .as_deref()
                .ok_or("`contentType` is required with `base64`")?;
            check_content_type(content_type)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| format!("`base64` is not valid base64: {e}"))?;
            if bytes.len() > file_blobs::MAX_BASE64_BYTES {
                return Err(format!(
                    "`base64` holds more than {} bytes: upload larger files by `url`",
                    file_blobs::MAX_BASE64_BYTES
                ));
            }
            Source::Bytes(Bytes::from(bytes))
        }
        (None, Some(url)) => {
            if url.len() > 2048 {
                return Err("`url` must be at most 2048 characters".into());
            }
            if let Some(content_type) = &file.content_type {
                check_content_type(content_type)?;
            }
            Source::Url(url.clone())
        }
    };
    Ok(PendingFile {
        change,
        index,
        at: String::new(),
        name: file.name.clone(),
        content_type: file.content_type.clone(),
        source,
    })
}

fn check_content_type(content_type: &str) -> Result<(), String> {
    if content_type.is_empty() || content_type.len() > 255 {
        return Err("`contentType` must be a MIME type".into());
    }
    Ok(())
}

/// What a batch wrote: the change request after it (with its users), what each change
/// affected, and the files it inserted, as stored in the new revision.
pub struct Written {
    pub change_request: WithUsers<ChangeRequest>,
    pub affected: Vec<Affected>,
    pub inserted_files: Vec<FileEntry>,
}

/// Writes a batch of changes (parsed already, [`parse_changes`]) to a change request of a
/// space the caller may edit. Files are stored first (nothing is stored unless the whole batch
/// may be written), then the batch is applied on a read connection and written in a
/// transaction if the change request has not moved meanwhile (see `Attempts`).
pub async fn write(
    store: &Store,
    fetch: &dyn Fetch,
    space: &Authorized<SpaceFor, space::Edit>,
    caller: &str,
    cr_id: &str,
    changes: Vec<Change>,
) -> StoreResult<Written> {
    let space_id = space.space.id.clone();
    let changes = Arc::new(changes);
    let (files, blobs) = prepare_files(store, fetch, caller, &space_id, cr_id, &changes).await?;
    let (files, blobs) = (Arc::new(files), Arc::new(blobs));
    let mut attempts = Attempts::default();
    while attempts.more() {
        let started = Instant::now();
        // Parsing markdown and building documents can take a while for large pages: it runs on
        // a read connection, and the transaction writes the outcome if the change request has
        // not moved meanwhile (see `Attempts` for when it is applied inside the transaction).
        let inline = attempts.inline();
        let applied = if inline {
            None
        } else {
            let (store2, space_id, cr_id) = (store.clone(), space_id.clone(), cr_id.to_string());
            let (user, changes, files) = (caller.to_string(), changes.clone(), files.clone());
            let applied = store
                .db
                .read_blocking(move |c| {
                    let space = spaces::load_active(c, &space_id, &user)?;
                    space.require(SpaceAction::Edit)?;
                    let cr = super::writable(super::model::load(c, &space_id, &cr_id)?)?;
                    let outcome = apply(c, &store2.content, &space_id, &cr, &changes, &files)?;
                    Ok::<_, StoreError>((cr.revision, outcome))
                })
                .await?;
            Some(Arc::new(applied))
        };
        let cost = started.elapsed();
        let (store2, space_id, cr_id) = (store.clone(), space_id.clone(), cr_id.to_string());
        let (user, changes, files, blobs) =
            (caller.to_string(), changes.clone(), files.clone(), blobs.clone());
        let written = store
            .db
            .write(move |c| {
                let space = spaces::load_active(c, &space_id, &user)?;
                space.require(SpaceAction::Edit)?;
                let cr = super::lock(c, &space_id, &cr_id)?;
                let computed;
                let outcome = match applied.as_deref() {
                    Some((revision, outcome)) if *revision == cr.revision => outcome,
                    _ if !inline => return Ok(None),
                    _ => {
                        computed = apply(c, &store2.content, &space_id, &cr, &changes, &files)?;
                        &computed
                    }
                };
                file_blobs::confirm(c, &space_id, &blobs, clock::now_ms())?;
                write_batch(c, &store2.content, &space_id, &cr, &user, outcome).map(Some)
            })
            .await?;
        if let Some(written) = written {
            return Ok(written);
        }
        attempts.stale(cost);
    }
    Err(StoreError::internal("the batch never settled"))
}

/// Applies a batch to a change request's revision: pure work over its trees and documents.
fn apply(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    cr: &ChangeRequest,
    changes: &[Change],
    files: &HashMap<usize, Vec<FileEntry>>,
) -> StoreResult<BatchOutcome> {
    let base = store::load_tree(c, cache, space_id, &cr.revision)?;
    let revert_base = store::load_tree(c, cache, space_id, cr.base_revision())?;
    let mut new_id = ids::new_id;
    let mut new_key = || ids::random_base62(12);
    let loader = store::Loader::new(c, cache, space_id);
    let mut ctx = BatchContext {
        now: clock::now_ms(),
        new_id: &mut new_id,
        new_key: &mut new_key,
        document: &|hash| loader.document(hash),
        base: &revert_base.tree,
        revision: &|rev| loader.tree(rev),
        files,
    };
    let outcome = changes::apply_batch(&base.tree, changes.to_vec(), &mut ctx);
    let outcome = loader.finish(outcome)?;
    outcome.map_err(|e| {
        if e.too_large {
            StoreError::too_large(e.to_string())
        } else {
            StoreError::invalid(e.to_string())
        }
    })
}

/// Writes an applied batch as the change request's new revision.
fn write_batch(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    cr: &ChangeRequest,
    user: &str,
    outcome: &BatchOutcome,
) -> StoreResult<Written> {
    let base = store::load_tree(c, cache, space_id, &cr.revision)?;
    let written = store::write_revision(
        c,
        cache,
        NewRevision {
            space_id,
            kind: "edits",
            parents: vec![cr.revision.clone()],
            change_request: Some(&cr.id),
            merged_from: None,
            created_by: Some(user),
        },
        Some(&base),
        outcome.tree.clone(),
        &outcome.documents,
    )?;
    let conflicts = remaining_conflicts(cr, &outcome.affected)?;
    c.execute(
        "UPDATE change_requests SET revision = ?2, updated_at = ?3, conflicts = ?4 WHERE id = ?1",
        params![cr.id.clone(), written.id(), clock::now_ms(), conflicts],
    )?;
    super::contributors::record(c, &cr.id, user)?;
    let cr = super::model::load(c, space_id, &cr.id)?;
    let inserted_files = outcome
        .inserted_files
        .iter()
        .filter_map(|id| written.tree.files.get(id).map(|f| f.as_ref().clone()))
        .collect();
    Ok(Written {
        change_request: super::one_with_users(c, cr)?,
        affected: outcome.affected.clone(),
        inserted_files,
    })
}

/// The conflicts left after a batch: writing a conflicting page's document resolves it.
fn remaining_conflicts(cr: &ChangeRequest, affected: &[Affected]) -> StoreResult<Option<String>> {
    let Some(list) = cr.stored_conflicts()? else {
        return Ok(None);
    };
    let touched: Vec<&str> = affected
        .iter()
        .map(|a| match a {
            Affected::Created { page, .. } | Affected::Updated { page } | Affected::Deleted { page } => {
                page.as_str()
            }
        })
        .collect();
    let left: Vec<Value> = list
        .into_iter()
        .filter(|c| {
            !c.get("page")
                .and_then(Value::as_str)
                .is_some_and(|p| touched.contains(&p))
        })
        .collect();
    Ok((!left.is_empty()).then(|| Value::Array(left).to_string()))
}
