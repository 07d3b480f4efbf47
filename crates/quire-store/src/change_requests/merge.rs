//! Merging a change request into main, and updating it with main: three-way merges of the page
//! tree and page text (`quire_content::merge`), and the merge rules that gate a merge.

use std::sync::Arc;
use std::time::Instant;

use quire_content::Document;
use quire_content::merge::{MergeInput, MergeOutcome};
use serde_json::Value;

use super::model::{self, ChangeRequest, Status};
use super::reviews::ReviewStatus;
use crate::Store;
use crate::content::attempts::Attempts;
use crate::content::store::{self, ContentCache, NewRevision, StoredTree};
use crate::db::{Conn, DbError, for_update};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::main_revision as main;
use crate::merge_rules::{MergeRule, MergeRules};
use crate::permissions::{Authorized, SpaceAction, space};
use crate::spaces::{self, SpaceFor};
use crate::{clock, ids, params, users};

crate::wire_enum! {
    /// What a merge or an update did: `merge` (main moved), `update` (main was brought into
    /// the change request), `conflicts` (nothing merged, or an update left conflicts).
    pub enum MergeResultKind {
        Merge = "merge",
        Update = "update",
        Conflicts = "conflicts",
    }
}

/// What a merge or an update did.
#[derive(Clone, Debug)]
pub struct MergeResult {
    /// Main's revision after a merge (or as it is, with conflicts); the change request's after
    /// an update.
    pub revision: String,
    pub result: MergeResultKind,
    /// The conflicts, each with the revisions holding its three versions and the page's title
    /// and path (as recorded on the change request by an update).
    pub conflicts: Option<Value>,
}

/// Runs the three-way merge, reading documents through `c`. A document that cannot be read
/// fails the merge with that error (it must not pass for a conflict or an empty page).
fn three_way(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    base: &StoredTree,
    main: &StoredTree,
    change: &StoredTree,
) -> StoreResult<MergeOutcome> {
    let loader = store::Loader::new(c, cache, space_id);
    let mut new_key = || ids::random_base62(12);
    let outcome = quire_content::merge::merge(MergeInput {
        base: &base.tree,
        main: &main.tree,
        change: &change.tree,
        documents: &|hashes| loader.document_texts(hashes),
        outlines: &|hashes| loader.outlines(hashes),
        blocks: &|hashes| loader.blocks(hashes),
        new_key: &mut new_key,
        now: clock::now_ms(),
    });
    let outcome = loader.finish(outcome)?;
    // A stored version that does not read is corrupt data, not a conflict to resolve.
    if let Some((page, error)) = outcome.unreadable.first() {
        let what = format_args!("a document of page {page:?} in space {space_id:?}");
        return Err(DbError::stored(what, error).into());
    }
    Ok(outcome)
}

/// A three-way merge computed before the write transaction, on the revisions it names: the
/// transaction uses it only if main and the change request are still there.
struct Precomputed {
    main: String,
    change: String,
    outcome: MergeOutcome,
    base: Arc<StoredTree>,
    main_tree: Arc<StoredTree>,
    change_tree: Arc<StoredTree>,
}

/// Computes the three-way merge of a change request with main on a read connection, so that
/// merging large documents never holds the write transaction (SQLite has one writer for every
/// space). None when there is nothing to compute: main has not moved since the change request
/// started, or the transaction will refuse the change request anyway.
fn precompute(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    cr_id: &str,
    caller: &str,
    action: SpaceAction,
) -> StoreResult<Option<Precomputed>> {
    let space = spaces::load_active(c, space_id, caller)?;
    space.require(action)?;
    let cr = model::load(c, space_id, cr_id)?;
    let Some(main_rev) = space.space.revision.clone() else {
        return Ok(None);
    };
    let refused = !cr.status.is_writable() || (action == SpaceAction::Merge && cr.conflicts.is_some());
    if refused || main_rev == cr.base_revision() {
        return Ok(None);
    }
    let base = store::load_tree(c, &store.content, space_id, cr.base_revision())?;
    let main_tree = store::load_tree(c, &store.content, space_id, &main_rev)?;
    let change_tree = store::load_tree(c, &store.content, space_id, &cr.revision)?;
    let outcome = three_way(c, &store.content, space_id, &base, &main_tree, &change_tree)?;
    Ok(Some(Precomputed {
        main: main_rev,
        change: cr.revision.clone(),
        outcome,
        base,
        main_tree,
        change_tree,
    }))
}

/// The conflicts as sent: each with the revisions holding its three versions, and the page's
/// title and path, so a client can read and compare them.
fn describe_conflicts(
    outcome: &MergeOutcome,
    base: &StoredTree,
    main: &StoredTree,
    change: &StoredTree,
) -> Value {
    let list: Vec<Value> = outcome
        .conflicts
        .iter()
        .map(|conflict| {
            let mut v = serde_json::to_value(conflict).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                let versions = [change, main, base];
                let page = versions
                    .iter()
                    .find_map(|t| t.tree.pages.get(&conflict.page).map(|p| (t, p)));
                if let Some((t, p)) = page {
                    map.insert("title".into(), Value::String(p.title.clone()));
                    if let Some(path) = t.index().path(&p.id) {
                        map.insert("path".into(), Value::String(path.to_string()));
                    }
                }
                map.insert(
                    "revisions".into(),
                    serde_json::json!({"base": base.id(), "main": main.id(), "changeRequest": change.id()}),
                );
            }
            v
        })
        .collect();
    Value::Array(list)
}

/// Merges a change request into main: a three-way merge of the page tree and page text with
/// main as it is (computed before the write transaction, and again inside it when main moved
/// meanwhile), once the merge rules are met. Conflicts merge nothing and are answered.
pub async fn merge(
    store: &Store,
    space: &Authorized<SpaceFor, space::Merge>,
    caller: &str,
    cr_id: &str,
) -> StoreResult<MergeResult> {
    let (space_id, cr_id) = (space.space.id.clone(), cr_id.to_string());
    let mut attempts = Attempts::default();
    while attempts.more() {
        let started = Instant::now();
        // See `Attempts` for when the merge is computed inside the transaction instead.
        let inline = attempts.inline();
        let (precomputed, pinned) = if inline {
            (None, None)
        } else {
            let (store2, space_id, cr_id, user) =
                (store.clone(), space_id.clone(), cr_id.clone(), caller.to_string());
            store
                .db
                .read_blocking(move |c| {
                    let mut precomputed =
                        precompute(c, &store2, &space_id, &cr_id, &user, SpaceAction::Merge)?;
                    let parsed = precomputed
                        .as_mut()
                        .map(|p| std::mem::take(&mut p.outcome.parsed))
                        .unwrap_or_default();
                    let pinned = pin_for_merge(c, &store2, &space_id, &cr_id, precomputed.as_ref(), parsed)?;
                    Ok::<_, StoreError>((precomputed.map(Arc::new), pinned))
                })
                .await?
        };
        let cost = started.elapsed();
        let (store2, space_id, cr_id, user) =
            (store.clone(), space_id.clone(), cr_id.clone(), caller.to_string());
        let result = store
            .db
            .write(move |c| {
                // Held until the transaction is over: its index updates read these documents.
                let _pinned = &pinned;
                merge_in(
                    c,
                    &store2,
                    &space_id,
                    &cr_id,
                    &user,
                    precomputed.as_deref(),
                    inline,
                )
            })
            .await?;
        if let Some(result) = result {
            return Ok(result);
        }
        attempts.stale(cost);
    }
    Err(StoreError::internal("the merge never settled"))
}

/// Merges a change request inside the transaction `c` is in, computing any three-way merge
/// there: for a change request a background job made in the same transaction, where main
/// cannot have moved (`translations::run`). Refused as [`merge`] refuses.
pub(crate) fn merge_in_transaction(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    cr_id: &str,
    user: &str,
) -> StoreResult<MergeResult> {
    merge_in(c, store, space_id, cr_id, user, None, true)?
        .ok_or_else(|| StoreError::internal("an inline merge did not settle"))
}

/// Documents held in the content cache while a merge runs (see `ContentCache::pin`).
struct Pinned {
    store: Store,
    keys: Vec<(String, String)>,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // Freeing a document at the content limits takes a tenth of a second: not on the
        // request's time.
        quire_content::parallel::drop_later(self.store.content.unpin(&self.keys));
    }
}

/// Parses, before the write transaction, the documents that the indexes of main (search,
/// links) read when main moves to the merged tree, and pins them, so that the transaction does
/// not parse them while it holds the writer: a page at the content limits is 20 MB of JSON.
/// None when the merge will not write. `parsed` are the merged documents the merge made (its
/// outcome's `parsed`, taken out of it).
fn pin_for_merge(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    cr_id: &str,
    precomputed: Option<&Precomputed>,
    parsed: Vec<(String, Document)>,
) -> StoreResult<Option<Pinned>> {
    match precomputed {
        Some(p) if p.outcome.is_clean() => {
            pin_changed(c, store, space_id, &p.main_tree.tree, &p.outcome.tree, parsed).map(Some)
        }
        Some(_) => Ok(None),
        None => {
            // Main has not moved since the change request started (or the merge is refused,
            // which the transaction reports): main becomes the change request's tree.
            let cr = model::load(c, space_id, cr_id)?;
            let main: Option<Option<String>> = c
                .query_opt("SELECT revision_id FROM spaces WHERE id = ?1", params![space_id])?
                .map(|r| r.get(0))
                .transpose()?;
            if main.flatten().as_deref() != Some(cr.base_revision()) || !cr.is_writable() {
                return Ok(None);
            }
            let main_tree = store::load_tree(c, &store.content, space_id, cr.base_revision())?;
            let change = store::load_tree(c, &store.content, space_id, &cr.revision)?;
            pin_changed(c, store, space_id, &main_tree.tree, &change.tree, Vec::new()).map(Some)
        }
    }
}

/// Most stored JSON of documents read to be pinned for one merge. Past it the write
/// transaction parses the rest itself, a chunk at a time, as a full index does (see
/// `search::index`). Pinning every document of a 10,000-page merge held 460 MB of parsed
/// documents at once (605 MB resident at the peak; 180 MB with this bound).
const PINNED_JSON_BYTES: usize = 8 << 20;

/// A document at least this large is pinned whatever the budget: parsing it would hold the
/// writer for ten milliseconds or more (a page at the content limits: a quarter of a second).
const ALWAYS_PINNED_JSON_BYTES: usize = 1 << 20;

/// Stored documents read at once while choosing which to pin.
const READ_AT_ONCE: usize = 200;

/// Pins the documents of the pages whose document differs between `old` and `new`: `fresh`
/// ones (parsed by the merge, not stored yet, by hash), and of the stored ones those cached,
/// the large ones, and the rest while they fit in [`PINNED_JSON_BYTES`].
fn pin_changed(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    old: &quire_content::tree::Tree,
    new: &quire_content::tree::Tree,
    mut fresh: Vec<(String, Document)>,
) -> StoreResult<Pinned> {
    let changes = crate::content::diff::Changes::between(Some(old), new);
    let mut hashes: Vec<&str> = changes
        .documents
        .iter()
        .filter_map(|id| new.pages.get(id))
        .chain(changes.search_add.iter())
        .filter_map(|p| p.document.as_deref())
        .collect();
    hashes.sort_unstable();
    hashes.dedup();
    let mut documents = Vec::with_capacity(hashes.len());
    let mut stored = Vec::new();
    for hash in hashes {
        match fresh.iter().position(|(h, _)| h == hash) {
            Some(i) => {
                let document = Arc::new(store::CachedDocument::from(fresh.swap_remove(i).1));
                documents.push((hash.to_string(), document));
            }
            None => stored.push(hash),
        }
    }
    quire_content::parallel::drop_later(fresh);
    let mut budget = PINNED_JSON_BYTES;
    for chunk in stored.chunks(READ_AT_ONCE) {
        let chosen = store::load_documents_if(c, &store.content, space_id, chunk, |len| {
            let pin = len >= ALWAYS_PINNED_JSON_BYTES || len <= budget;
            if pin {
                budget = budget.saturating_sub(len);
            }
            pin
        })?;
        documents.extend(chosen);
    }
    Ok(Pinned {
        keys: store.content.pin(space_id, documents),
        store: store.clone(),
    })
}

/// Merges inside the write transaction: checks everything again under the locks, then writes
/// the precomputed merge when main and the change request are still the revisions it merged,
/// or computes it here when `inline`. None (nothing written) when it is stale and not `inline`.
fn merge_in(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    cr_id: &str,
    user: &str,
    precomputed: Option<&Precomputed>,
    inline: bool,
) -> StoreResult<Option<MergeResult>> {
    let space = spaces::load_active(c, space_id, user)?;
    space.require(SpaceAction::Merge)?;
    let cr = lock_for_merge(c, space_id, cr_id)?;
    if let Some(conflicts) = cr.stored_conflicts()? {
        let pages: Vec<String> = conflicts
            .iter()
            .filter_map(|c| c.get("page").and_then(Value::as_str).map(str::to_string))
            .collect();
        return Err(StoreError::conflict(format!(
            "change request #{} has unresolved conflicts from its last update: write the pages {} first",
            cr.number,
            pages.join(", ")
        )));
    }
    check_merge_rules(c, &space, &cr, user)?;
    let main_rev = main::lock_main(c, space_id)?;
    let change = store::load_tree(c, &store.content, space_id, &cr.revision)?;
    let main_tree = store::load_tree(c, &store.content, space_id, &main_rev)?;
    let no_documents = Vec::new();
    let computed;
    let (tree, documents) = if main_rev == cr.base_revision() {
        (change.tree.clone(), &no_documents)
    } else {
        let (outcome, base) = match precomputed {
            Some(p) if p.main == main_rev && p.change == cr.revision => (&p.outcome, &p.base),
            _ if !inline => return Ok(None),
            _ => {
                let base = store::load_tree(c, &store.content, space_id, cr.base_revision())?;
                computed = (
                    three_way(c, &store.content, space_id, &base, &main_tree, &change)?,
                    base,
                );
                (&computed.0, &computed.1)
            }
        };
        if !outcome.is_clean() {
            // Nothing is written: main stays as it is.
            return Ok(Some(MergeResult {
                revision: main_rev.clone(),
                result: MergeResultKind::Conflicts,
                conflicts: Some(describe_conflicts(outcome, base, &main_tree, &change)),
            }));
        }
        (outcome.tree.clone(), &outcome.documents)
    };
    let written = store::write_revision(
        c,
        &store.content,
        NewRevision {
            space_id,
            kind: "merge",
            parents: vec![main_rev.clone(), cr.revision.clone()],
            change_request: None,
            merged_from: Some(&cr.id),
            created_by: Some(user),
        },
        Some(&main_tree),
        tree,
        documents,
    )?;
    main::advance(c, &store.content, space_id, &main_rev, written.id(), user)?;
    let now = clock::now_ms();
    c.execute(
        "UPDATE change_requests SET status = 'merged', merged_by = ?2, merged_at = ?3, revision_merged = ?4,
             updated_at = ?3, conflicts = NULL
         WHERE id = ?1",
        params![cr.id.clone(), user, now, written.id()],
    )?;
    let payload = events::ChangeRequestMerged {
        space_id,
        change_request_id: &cr.id,
        number: cr.number,
        revision_id: written.id(),
        change_request_revision_id: &cr.revision,
    };
    let event = Event::in_space(&space.space.org_id, space_id, &cr.id, Some(user), payload);
    events::record(c, event)?;
    if let Some(cluster) = &cr.issues_cluster {
        crate::conversations::resolved_by_merge(c, &space.space.org_id, cluster, &cr.id, user)?;
    }
    Ok(Some(MergeResult {
        revision: written.id().to_string(),
        result: MergeResultKind::Merge,
        conflicts: None,
    }))
}

/// Locks a change request for merging. A merged one answers 409, so that of two merges of one
/// change request racing, the second learns the first won.
fn lock_for_merge(c: &mut dyn Conn, space_id: &str, cr_id: &str) -> StoreResult<ChangeRequest> {
    let cr = model::load(c, space_id, cr_id)?;
    let lock = format!("SELECT id FROM change_requests WHERE id = ?1{}", for_update(c));
    c.query(&lock, params![cr.id.clone()])?;
    let cr = model::load(c, space_id, &cr.id)?;
    match cr.status {
        Status::Merged => Err(StoreError::conflict(format!(
            "change request #{} is already merged (revision {})",
            cr.number,
            cr.revision_merged.clone().unwrap_or_default()
        ))),
        Status::Archived => Err(StoreError::conflict(format!(
            "change request #{} is archived: reopen it to merge",
            cr.number
        ))),
        Status::Draft | Status::Open => Ok(cr),
    }
}

/// Brings main's changes into a change request: a three-way merge like [`merge`], written as
/// the change request's new revision; conflicting pages keep the change request's version and
/// the conflicts are recorded on it.
pub async fn update(
    store: &Store,
    space: &Authorized<SpaceFor, space::Edit>,
    caller: &str,
    cr_id: &str,
) -> StoreResult<MergeResult> {
    let (space_id, cr_id) = (space.space.id.clone(), cr_id.to_string());
    let mut attempts = Attempts::default();
    while attempts.more() {
        let started = Instant::now();
        let inline = attempts.inline();
        let precomputed = if inline {
            None
        } else {
            let (store2, space_id, cr_id, user) =
                (store.clone(), space_id.clone(), cr_id.clone(), caller.to_string());
            store
                .db
                .read_blocking(move |c| precompute(c, &store2, &space_id, &cr_id, &user, SpaceAction::Edit))
                .await?
                .map(|mut p| {
                    // An update indexes nothing: its parsed documents would only be freed
                    // inside the write transaction, which holds SQLite's writer.
                    quire_content::parallel::drop_later(std::mem::take(&mut p.outcome.parsed));
                    Arc::new(p)
                })
        };
        let cost = started.elapsed();
        let (store2, space_id, cr_id, user) =
            (store.clone(), space_id.clone(), cr_id.clone(), caller.to_string());
        let result = store
            .db
            .write(move |c| {
                update_in(
                    c,
                    &store2,
                    &space_id,
                    &cr_id,
                    &user,
                    precomputed.as_deref(),
                    inline,
                )
            })
            .await?;
        if let Some(result) = result {
            return Ok(result);
        }
        attempts.stale(cost);
    }
    Err(StoreError::internal("the update never settled"))
}

/// Brings main into a change request inside the write transaction, as [`merge_in`] merges.
fn update_in(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    cr_id: &str,
    user: &str,
    precomputed: Option<&Precomputed>,
    inline: bool,
) -> StoreResult<Option<MergeResult>> {
    let space = spaces::load_active(c, space_id, user)?;
    space.require(SpaceAction::Edit)?;
    let cr = super::lock(c, space_id, cr_id)?;
    let main_rev = space
        .space
        .revision
        .clone()
        .ok_or_else(|| StoreError::internal("space without revision"))?;
    if main_rev == cr.base_revision() {
        let conflicts = cr.stored_conflicts()?.map(Value::Array);
        return Ok(Some(MergeResult {
            revision: cr.revision.clone(),
            result: if conflicts.is_some() {
                MergeResultKind::Conflicts
            } else {
                MergeResultKind::Update
            },
            conflicts,
        }));
    }
    let computed;
    let p = match precomputed {
        Some(p) if p.main == main_rev && p.change == cr.revision => p,
        _ if !inline => return Ok(None),
        _ => {
            let base = store::load_tree(c, &store.content, space_id, cr.base_revision())?;
            let main_tree = store::load_tree(c, &store.content, space_id, &main_rev)?;
            let change_tree = store::load_tree(c, &store.content, space_id, &cr.revision)?;
            computed = Precomputed {
                outcome: three_way(c, &store.content, space_id, &base, &main_tree, &change_tree)?,
                main: main_rev.clone(),
                change: cr.revision.clone(),
                base,
                main_tree,
                change_tree,
            };
            &computed
        }
    };
    let outcome = &p.outcome;
    let conflicts =
        (!outcome.is_clean()).then(|| describe_conflicts(outcome, &p.base, &p.main_tree, &p.change_tree));
    let written = store::write_revision(
        c,
        &store.content,
        NewRevision {
            space_id,
            kind: "update",
            parents: vec![cr.revision.clone(), main_rev.clone()],
            change_request: Some(&cr.id),
            merged_from: None,
            created_by: Some(user),
        },
        Some(&p.change_tree),
        outcome.tree.clone(),
        &outcome.documents,
    )?;
    c.execute(
        "UPDATE change_requests SET revision = ?2, revision_merged_ancestor = ?3, conflicts = ?4, updated_at = ?5
         WHERE id = ?1",
        params![
            cr.id.clone(),
            written.id(),
            main_rev.clone(),
            conflicts.as_ref().map(Value::to_string),
            clock::now_ms()
        ],
    )?;
    Ok(Some(MergeResult {
        revision: written.id().to_string(),
        result: if conflicts.is_some() {
            MergeResultKind::Conflicts
        } else {
            MergeResultKind::Update
        },
        conflicts,
    }))
}

/// Fails with 409 naming what is missing unless the merge rules of the space (or, when it
/// inherits, of its organization) let `actor` merge now.
fn check_merge_rules(c: &mut dyn Conn, space: &SpaceFor, cr: &ChangeRequest, actor: &str) -> StoreResult<()> {
    let rules = match &space.space.merge_rules {
        MergeRules::Inherit => {
            let org = &space.space.org_id;
            let text: String = c
                .query_scalar(
                    "SELECT merge_rules FROM organizations WHERE id = ?1",
                    params![org],
                )?
                .ok_or_else(|| {
                    DbError::Other(format!(
                        "organization {org:?} of space {:?} not found",
                        space.space.id
                    ))
                })?;
            MergeRules::from_json_text(&text)
                .map_err(|e| DbError::stored(format_args!("merge rules of organization {org:?}"), e))?
        }
        other => other.clone(),
    };
    let MergeRules::Rules { rules } = rules else {
        return Ok(());
    };
    if rules
        .iter()
        .any(|r| matches!(r, MergeRule::AllowBypass { users } if users.iter().any(|u| u == actor)))
    {
        return Ok(());
    }
    let approvals = super::reviews::current_approvals(c, cr)?;
    let approved = |u: &str| approvals.get(u) == Some(&ReviewStatus::Approved);
    let mut failures: Vec<String> = Vec::new();
    for rule in &rules {
        match rule {
            MergeRule::RequireSpecificReviewers { users } => {
                let missing: Vec<&str> = users
                    .iter()
                    .map(String::as_str)
                    .filter(|u| !approved(u))
                    .collect();
                if !missing.is_empty() {
                    failures.push(format!(
                        "approval of the current revision by {}",
                        names(c, &missing)?
                    ));
                }
            }
            MergeRule::RequireOneOfSpecificReviewers { users } => {
                if !users.iter().any(|u| approved(u)) {
                    let all: Vec<&str> = users.iter().map(String::as_str).collect();
                    failures.push(format!(
                        "approval of the current revision by one of {}",
                        names(c, &all)?
                    ));
                }
            }
            MergeRule::RequireAtLeastOneReview => {
                if approvals.is_empty() {
                    failures.push("at least one review of the current revision".into());
                }
            }
            MergeRule::RequireAtLeastOneApprovedReview => {
                if !approvals.values().any(|s| *s == ReviewStatus::Approved) {
                    failures.push("at least one approving review of the current revision".into());
                }
            }
            MergeRule::RequireAllReviewsApproved => {
                let blocking: Vec<&str> = approvals
                    .iter()
                    .filter(|(_, s)| **s != ReviewStatus::Approved)
                    .map(|(u, _)| u.as_str())
                    .collect();
                if !blocking.is_empty() {
                    failures.push(format!(
                        "every review approving, but changes were requested by {}",
                        names(c, &blocking)?
                    ));
                }
            }
            MergeRule::RequireUpToDateChangeRequest => {
                if cr.outdated() {
                    failures.push("the change request up to date with main (update it first)".into());
                }
            }
            MergeRule::RequireChangeRequestSubject => {
                if cr.subject.trim().is_empty() {
                    failures.push("a subject".into());
                }
            }
            MergeRule::RequireChangeRequestDescription => {
                // A description that is JSON but not a document quire reads (the API accepts
                // any `nodes`) has no text quire can see, as before; one that is not JSON is
                // corrupt, and an error.
                let empty = cr
                    .stored_description()?
                    .and_then(|d| serde_json::from_value::<Document>(d).ok())
                    .is_none_or(|d| quire_content::plain_text(&d).trim().is_empty());
                if empty {
                    failures.push("a description".into());
                }
            }
            MergeRule::RequireAuthorToMerge => {
                if cr.created_by != actor {
                    failures.push("its author to merge it".into());
                }
            }
            MergeRule::AllowBypass { .. } => {}
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(StoreError::conflict(format!(
            "the merge rules of this space are not met: change request #{} needs {}",
            cr.number,
            failures.join("; ")
        )))
    }
}

/// "Ann (id a1), Bob (id b2)".
fn names(c: &mut dyn Conn, ids: &[&str]) -> StoreResult<String> {
    let users = users::load_many(c, ids)?;
    Ok(ids
        .iter()
        .map(|id| match users.get(*id) {
            Some(u) => format!("{} (id {id})", u.display_name),
            None => format!("user {id}"),
        })
        .collect::<Vec<_>>()
        .join(", "))
}
