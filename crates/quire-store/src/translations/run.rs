//! A translation run: the `translation_run` job (one row per translation, dedupe key
//! `translation:{id}`), acting on the spaces as the member who asked for the run.
//!
//! A run goes in steps, each inside the job's lease ([`STEP_BUDGET`]):
//! 1. `begin`: the translation turns `running`; the first run creates the target space, in the
//!    source's collection, titled with the language.
//! 2. `plan`: the source pages whose fingerprint (title, description, document) changed since
//!    the last run, their segments of human text (`quire_content::translate`), and those the
//!    translation memory (`translation_segments`) does not hold yet.
//! 3. The missing segments go to the translator in batches; each batch's translations are
//!    stored as it comes back, so a step cut short (the budget, a crash, a restart) goes on
//!    where it stopped: the next step plans again and finds them in the memory.
//! 4. Once the memory holds every segment: the file bytes the target lacks are copied, then one
//!    transaction builds the target tree (`target::assemble`), writes it to a new change
//!    request, merges it, and records the stats. A crash before its commit leaves nothing
//!    written and the job leased; the lease expires and the run finishes once.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use quire_content::Document;
use quire_content::translate;
use serde_json::json;

use super::model::{self, Status, Translation};
use super::target::{self, Prior, TranslatedPage, TranslatedReusable};
use super::translator::{self, Request};
use crate::content::store::{self as content, NewRevision, StoredTree};
use crate::db::{Conn, for_update};
use crate::error::{ErrorKind, StoreError, StoreResult};
use crate::events::{self, Event};
use crate::permissions::SpaceAction;
use crate::{Store, clock, jobs, params, spaces};

pub const RUN_JOB: &str = "translation_run";
/// How long one step may send batches, waits included, before it stores what it has and lets
/// the job run again: inside the job's lease (`jobs::LEASE_MS`, 60 s) with room for the step's
/// reads and writes, so that no other process takes the job while this one still works on it.
pub const STEP_BUDGET: Duration = Duration::from_secs(45);
/// A batch is started only with this much of the step's budget left; a batch cut short by the
/// budget is sent again by the next step (what it learned before is kept).
pub const MIN_BATCH_TIME: Duration = Duration::from_secs(15);
/// How many steps in a row may fail on a transient error before the run is `failed`.
pub const MAX_FAILED_STEPS: i64 = 5;
/// The most segments one run translates: a space at the content limits has far fewer.
pub const MAX_SEGMENTS: usize = 200_000;

/// The dedupe key of a translation's job.
pub fn job_key(id: &str) -> String {
    format!("translation:{id}")
}

/// Schedules a translation's run at `at` (Unix ms), unless its job is there already (queued,
/// or running: then it is left alone).
pub fn schedule_once(c: &mut dyn Conn, id: &str, at: i64) -> StoreResult<()> {
    jobs::enqueue_once(c, RUN_JOB, &json!({ "translation": id }), at, &job_key(id))
}

/// Schedules a translation's run at `at` (Unix ms), replacing a scheduled one.
pub fn schedule(c: &mut dyn Conn, id: &str, at: i64) -> StoreResult<()> {
    jobs::enqueue(c, RUN_JOB, &json!({ "translation": id }), at, Some(&job_key(id)))
}

/// What the translation memory holds for a segment: the tagged translation, or (when the
/// translator's answer broke the segment's tags) the translation of each piece of its text.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Memory {
    Tagged(String),
    Pieces(Vec<String>),
}

impl Memory {
    fn as_translated(&self) -> translate::Translated {
        match self {
            Memory::Tagged(t) => translate::Translated::Tagged(t.clone()),
            Memory::Pieces(p) => translate::Translated::Pieces(p.clone()),
        }
    }
}

/// A segment's plain pieces, for when its tagged translation breaks (or it has too many tags
/// to be sent tagged at all).
#[derive(Clone, Debug)]
struct Pieces {
    pieces: Vec<String>,
    only: bool,
}

/// Why a step stopped short of finishing the run.
enum Stop {
    /// Worth another step later (the translator did not answer, the database was busy).
    Transient(String),
    /// The run cannot finish as things are: it is `failed` with this message.
    Fatal(String),
}

impl From<StoreError> for Stop {
    fn from(e: StoreError) -> Stop {
        match e.kind {
            ErrorKind::Unavailable | ErrorKind::Internal => {
                if let Some(source) = &e.source {
                    tracing::warn!(error = %source, "translation run step failed");
                }
                Stop::Transient(e.message)
            }
            _ => Stop::Fatal(e.message),
        }
    }
}

/// The run as `begin` found it.
#[derive(Clone)]
struct Start {
    translation: Translation,
    run_by: String,
    target: String,
}

/// Runs one step of the job; Some(time) asks to run again then.
pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let id = payload
        .get("translation")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| StoreError::internal(format!("{RUN_JOB} payload without `translation`: {payload}")))?
        .to_string();
    let outcome = step(store, &id).await;
    let next = match outcome {
        Ok(next) => return Ok(next),
        Err(Stop::Transient(message)) => {
            let writing = id.clone();
            store
                .db
                .write(move |c| failed_step(c, &writing, &message))
                .await?
        }
        Err(Stop::Fatal(message)) => {
            let writing = id.clone();
            store.db.write(move |c| fail(c, &writing, &message)).await?
        }
    };
    Ok(next)
}

async fn step(store: &Store, id: &str) -> Result<Option<i64>, Stop> {
    let Some(translator) = store.translator.clone() else {
        return Err(Stop::Fatal(super::no_translator().message));
    };
    let (s, writing) = (store.clone(), id.to_string());
    let Some(start) = store.db.write(move |c| begin(c, &s, &writing)).await? else {
        return Ok(None);
    };
    let (s, starting) = (store.clone(), start.clone());
    let plan = Arc::new(store.db.read_blocking(move |c| plan(c, &s, &starting)).await?);
    let started = Instant::now();
    let missing = plan.missing();
    for (n, range) in translator::batches(&missing).into_iter().enumerate() {
        let left = STEP_BUDGET.saturating_sub(started.elapsed());
        if n > 0 && left < MIN_BATCH_TIME {
            return Ok(Some(clock::now_ms()));
        }
        let request = plan.request(missing[range].to_vec());
        let batch = translate_batch(translator.as_ref(), &request, &plan.pieces);
        let learned = match tokio::time::timeout(left, batch).await {
            Ok(learned) => learned?,
            // Later batches had less than the whole budget: the next step sends this one again.
            Err(_) if n > 0 => return Ok(Some(clock::now_ms())),
            Err(_) => {
                return Err(Stop::Transient(format!(
                    "{} did not translate a batch within {}s",
                    translator.describe(),
                    STEP_BUDGET.as_secs()
                )));
            }
        };
        let (writing, id) = (learned, id.to_string());
        store.db.write(move |c| remember(c, &id, &writing)).await?;
    }
    copy_files(store, &start, &plan).await?;
    // Rebuilding the documents is the run's CPU work: on a read connection, so that the final
    // transaction does not hold the writer for it.
    let (building, id) = (plan.clone(), id.to_string());
    let Some(built) = store.db.read_blocking(move |c| build(c, &id, &building)).await? else {
        // The memory lost a segment (a concurrent run pruned it): plan again.
        return Ok(Some(clock::now_ms()));
    };
    let (s, plan2) = (store.clone(), plan.clone());
    let next = store
        .db
        .write(move |c| finish(c, &s, &start, &plan2, &built))
        .await?;
    Ok(next)
}

/// Sends one batch, and again piece by piece each segment whose answer broke its tags; the
/// memory entries (with the words they cost) to store.
async fn translate_batch(
    translator: &dyn translator::Translator,
    request: &Request,
    pieces_of: &HashMap<String, Pieces>,
) -> Result<Vec<(String, Memory, u64)>, Stop> {
    let call = |r: Request| async move {
        match translator.translate(&r).await {
            Ok(answers) if answers.len() == r.texts.len() => Ok(answers),
            Ok(answers) => Err(Stop::Transient(format!(
                "{} answered {} translations for {} texts",
                translator.describe(),
                answers.len(),
                r.texts.len()
            ))),
            Err(e) if e.transient => Err(Stop::Transient(e.message)),
            Err(e) => Err(Stop::Fatal(format!(
                "the translator refused the run: {}",
                e.message
            ))),
        }
    };
    let (whole, mut broken): (Vec<String>, Vec<String>) = request
        .texts
        .iter()
        .cloned()
        .partition(|t| !pieces_of.get(t).is_some_and(|p| p.only));
    let mut learned = Vec::new();
    if !whole.is_empty() {
        let answers = call(Request {
            texts: whole.clone(),
            ..request.clone()
        })
        .await?;
        for (text, answer) in whole.iter().zip(answers) {
            if translate::check_tagged(text, &answer).is_ok() {
                let words = translate::word_count(text);
                learned.push((translate::segment_hash(text), Memory::Tagged(answer), words));
            } else {
                broken.push(text.clone());
            }
        }
    }
    if !broken.is_empty() {
        let pieces: Vec<Vec<String>> = broken
            .iter()
            // A title or description is one piece: its text.
            .map(|t| {
                pieces_of
                    .get(t)
                    .map_or_else(|| vec![translate::human_text(t)], |p| p.pieces.clone())
            })
            .collect();
        let flat: Vec<String> = pieces
            .iter()
            .flatten()
            .map(|p| translate::plain_segment(p))
            .collect();
        let mut answers = Vec::new();
        for range in translator::batches(&flat) {
            let mut piece_request = request.clone();
            piece_request.texts = flat[range].to_vec();
            answers.extend(call(piece_request).await?);
        }
        let mut answers = answers.into_iter();
        for (text, pieces) in broken.iter().zip(pieces) {
            let translated: Vec<String> = pieces
                .iter()
                .map(|piece| {
                    let answer = answers.next().unwrap_or_default();
                    // A piece whose answer still has markup keeps its source text.
                    translate::plain_from_tagged(&answer).unwrap_or_else(|_| piece.clone())
                })
                .collect();
            learned.push((
                translate::segment_hash(text),
                Memory::Pieces(translated),
                translate::word_count(text),
            ));
        }
    }
    Ok(learned)
}

/// Stores a batch's translations in the memory, and the words they cost in the run's count.
fn remember(c: &mut dyn Conn, id: &str, learned: &[(String, Memory, u64)]) -> StoreResult<()> {
    let mut words = 0i64;
    for (hash, memory, w) in learned {
        let text = serde_json::to_string(memory).map_err(|e| StoreError::internal(e.to_string()))?;
        let added = c.execute(
            "INSERT INTO translation_segments (translation_id, hash, translated) VALUES (?1, ?2, ?3)
             ON CONFLICT (translation_id, hash) DO NOTHING",
            params![id, hash.clone(), text],
        )?;
        if added > 0 {
            words += i64::try_from(*w).unwrap_or(i64::MAX);
        }
    }
    c.execute(
        "UPDATE translations SET run_words = run_words + ?2, failures = 0 WHERE id = ?1",
        params![id, words],
    )?;
    Ok(())
}

/// Takes the translation for a step: `running` from `pending` (a new run) or still `running`
/// (the next step of one). None when there is nothing to run (deleted, or no run asked for).
/// The first run creates the target space.
fn begin(c: &mut dyn Conn, store: &Store, id: &str) -> StoreResult<Option<Start>> {
    let lock = format!("SELECT id FROM translations WHERE id = ?1{}", for_update(c));
    if c.query_opt(&lock, params![id])?.is_none() {
        return Ok(None);
    }
    let Some(t) = model::load_by_id(c, id)? else {
        return Ok(None);
    };
    let now = clock::now_ms();
    match t.status {
        Status::Pending => {
            c.execute(
                "UPDATE translations SET status = ?2, run_started_at = ?3, run_words = 0, rerun = 0,
                     error = NULL, updated_at = ?3
                 WHERE id = ?1",
                params![id, Status::Running, now],
            )?;
        }
        Status::Running => {}
        Status::Completed | Status::Failed => return Ok(None),
    }
    let run_by: Option<String> =
        c.query_scalar("SELECT run_by FROM translations WHERE id = ?1", params![id])?;
    let run_by = run_by.ok_or_else(|| StoreError::invalid("the run has no member to act as"))?;
    let source = spaces::load_for(c, &t.source_space_id, &run_by)?
        .filter(|s| s.allows(SpaceAction::View) && s.space.deleted_at.is_none())
        .ok_or_else(|| {
            StoreError::invalid(format!(
                "the source space {:?} is deleted, or its member who asked for the run cannot read it",
                t.source_space_id
            ))
        })?;
    let target = match &t.target_space_id {
        Some(target) => target.clone(),
        None => {
            let title = format!(
                "{} ({})",
                source.space.title,
                translator::language_name(&t.language)
            );
            let new = crate::new_spaces::NewSpace {
                title: title.chars().take(spaces::TITLE_MAX).collect(),
                emoji: source.space.emoji.clone(),
                icon: source.space.icon_url.clone(),
                parent: source.space.parent.clone(),
                language: Some(t.language.clone()),
                edit_mode: source.space.edit_mode,
                visibility: source.space.visibility,
                empty: true,
                template: None,
            };
            let created = crate::new_spaces::create(c, &store.content, &run_by, &t.org_id, &new)?;
            c.execute(
                "UPDATE translations SET target_space_id = ?2 WHERE id = ?1",
                params![id, created.space.id.clone()],
            )?;
            // A new target (the first, or one after the last was purged) has none of the pages
            // runs wrote before: each is translated again (the memory still saves the requests).
            c.execute(
                "DELETE FROM translation_pages WHERE translation_id = ?1",
                params![id],
            )?;
            created.space.id
        }
    };
    let t = model::load_by_id(c, id)?.ok_or_else(|| model::not_found(id))?;
    Ok(Some(Start {
        translation: t,
        run_by,
        target,
    }))
}

/// A source page to translate: its fingerprint and its segments.
struct PagePlan {
    id: String,
    fingerprint: String,
    title: String,
    description: Option<String>,
    document: Option<Document>,
    /// The tagged segments of the document, in `translate::segments` order.
    segments: Vec<String>,
}

/// What a run does, planned on a read connection.
struct Plan {
    source: Arc<StoredTree>,
    pages: Vec<PagePlan>,
    /// Reusable contents, translated afresh each run (their unchanged segments come from the
    /// memory): id, title segment, document and its segments.
    reusable: Vec<(String, String, Option<Document>, Vec<String>)>,
    prior: HashMap<String, Prior>,
    /// Every segment the run needs, and what the memory holds of them.
    needed: Vec<String>,
    /// The pieces of the segments that have them.
    pieces: HashMap<String, Pieces>,
    memory: HashMap<String, Memory>,
    request: Request,
}

impl Plan {
    /// The needed segments the memory does not hold, each once.
    fn missing(&self) -> Vec<String> {
        let mut seen = HashSet::new();
        self.needed
            .iter()
            .filter(|t| !self.memory.contains_key(&translate::segment_hash(t)) && seen.insert(t.as_str()))
            .cloned()
            .collect()
    }

    fn request(&self, texts: Vec<String>) -> Request {
        Request {
            texts,
            ..self.request.clone()
        }
    }
}

fn plan(c: &mut dyn Conn, store: &Store, start: &Start) -> StoreResult<Plan> {
    let t = &start.translation;
    let source = spaces::load_active(c, &t.source_space_id, &start.run_by)?;
    let revision = source
        .space
        .revision
        .clone()
        .ok_or_else(|| StoreError::internal("the source space has no revision"))?;
    let tree = content::load_tree(c, &store.content, &t.source_space_id, &revision)?;
    let prior = target::prior(c, &t.id)?;
    let mut pieces = HashMap::new();
    let mut pages = Vec::new();
    let mut needed = Vec::new();
    for page in tree.tree.pages.values() {
        let fingerprint = target::fingerprint(page);
        if prior.get(&page.id).is_some_and(|p| p.source == fingerprint) {
            continue;
        }
        let document = match &page.document {
            Some(hash) => Some(content::owned_document(
                c,
                &store.content,
                &t.source_space_id,
                hash,
            )?),
            None => None,
        };
        let segments = split(document.as_ref(), &mut pieces);
        let title = translate::plain_segment(&page.title);
        let description = page.description.as_deref().map(translate::plain_segment);
        needed.push(title.clone());
        needed.extend(description.clone());
        needed.extend(segments.iter().cloned());
        pages.push(PagePlan {
            id: page.id.clone(),
            fingerprint,
            title,
            description,
            document,
            segments,
        });
    }
    let mut reusable = Vec::new();
    for entry in tree.tree.reusable.values() {
        let document = match &entry.document {
            Some(hash) => Some(content::owned_document(
                c,
                &store.content,
                &t.source_space_id,
                hash,
            )?),
            None => None,
        };
        let segments = split(document.as_ref(), &mut pieces);
        let title = translate::plain_segment(&entry.title);
        needed.push(title.clone());
        needed.extend(segments.iter().cloned());
        reusable.push((entry.id.clone(), title, document, segments));
    }
    needed.retain(|s| !s.trim().is_empty());
    if needed.len() > MAX_SEGMENTS {
        return Err(StoreError::invalid(format!(
            "the source space has {} segments of text to translate, more than the {MAX_SEGMENTS} one run takes",
            needed.len()
        )));
    }
    let memory = recall(c, &t.id, &needed)?;
    let instructions = serde_json::from_value::<Document>(t.instructions.clone())
        .map(|d| quire_content::text::plain_text(&d))
        .unwrap_or_default();
    let glossary = super::glossary::pairs(c, &t.org_id, &t.source_language, &t.language)?;
    Ok(Plan {
        source: tree,
        pages,
        reusable,
        prior,
        needed,
        pieces,
        memory,
        request: Request {
            source: t.source_language.clone(),
            target: t.language.clone(),
            instructions: instructions.trim().to_string(),
            glossary,
            texts: Vec::new(),
        },
    })
}

/// A document's segments as tagged texts, keeping their pieces in `pieces`.
fn split(document: Option<&Document>, pieces: &mut HashMap<String, Pieces>) -> Vec<String> {
    let Some(document) = document else {
        return Vec::new();
    };
    translate::segments(document)
        .into_iter()
        .map(|s| {
            pieces.entry(s.text.clone()).or_insert_with(|| Pieces {
                pieces: s.pieces().to_vec(),
                only: s.pieces_only(),
            });
            s.text
        })
        .collect()
}

/// What the memory holds of `segments`.
fn recall(c: &mut dyn Conn, id: &str, segments: &[String]) -> StoreResult<HashMap<String, Memory>> {
    let hashes: BTreeSet<String> = segments.iter().map(|s| translate::segment_hash(s)).collect();
    let hashes: Vec<String> = hashes.into_iter().collect();
    let mut out = HashMap::new();
    for chunk in hashes.chunks(500) {
        let mut args = crate::db::Args::default();
        let owner = args.arg(id);
        let list = args.list(chunk.iter().map(String::as_str));
        let rows = c.query(
            &format!("SELECT hash, translated FROM translation_segments WHERE translation_id = {owner} AND hash IN ({list})"),
            args.values(),
        )?;
        for row in rows {
            let hash: String = row.get(0)?;
            let text: String = row.get(1)?;
            let memory: Memory = serde_json::from_str(&text)
                .map_err(|e| crate::db::DbError::stored(format_args!("translation memory {hash:?}"), e))?;
            out.insert(hash, memory);
        }
    }
    Ok(out)
}

/// Copies the bytes of the source's files that the target does not hold, recording them for
/// the target first (with its storage quotas), as a duplicate does.
async fn copy_files(store: &Store, start: &Start, plan: &Plan) -> Result<(), Stop> {
    let blobs: Vec<(String, u64)> = plan
        .source
        .tree
        .files
        .values()
        .map(|f| (f.blob.clone(), f.size))
        .collect();
    if blobs.is_empty() {
        return Ok(());
    }
    let quotas = crate::files::Quotas::of(&store.settings);
    let (target, org, wanted) = (start.target.clone(), start.translation.org_id.clone(), blobs);
    let added = store
        .db
        .write(move |c| crate::files::reserve(c, &quotas, &target, &org, &wanted, clock::now_ms()))
        .await?;
    for blob in added {
        store
            .blobs
            .copy(&start.translation.source_space_id, &start.target, &blob)
            .await?;
    }
    Ok(())
}

/// The translated pages and reusable contents of a run, built from the memory.
struct Built {
    pages: HashMap<String, TranslatedPage>,
    reusable: Vec<TranslatedReusable>,
}

/// Builds the run's translated pages and reusable contents from the memory; None when the
/// memory lacks one of their segments.
fn build(c: &mut dyn Conn, id: &str, plan: &Plan) -> StoreResult<Option<Built>> {
    let memory = recall(c, id, &plan.needed)?;
    let lookup = |text: &str| -> Option<translate::Translated> {
        if text.trim().is_empty() {
            return Some(translate::Translated::Tagged(text.to_string()));
        }
        memory
            .get(&translate::segment_hash(text))
            .map(Memory::as_translated)
    };
    let plain = |text: &str| -> Option<String> {
        match lookup(text)? {
            // An answer with markup in a title is read for its text, rather than planned again
            // forever: the memory keeps it as it is.
            translate::Translated::Tagged(t) => {
                Some(translate::plain_from_tagged(&t).unwrap_or_else(|_| translate::human_text(&t)))
            }
            translate::Translated::Pieces(p) => Some(p.concat()),
        }
    };
    // A document rebuilt from its segments' translations: Ok(None) when one is missing.
    let rebuilt = |doc: &Option<Document>, segments: &[String], what: &str| {
        let Some(doc) = doc else {
            return Ok(Some(None));
        };
        let Some(answers) = segments.iter().map(|s| lookup(s)).collect::<Option<Vec<_>>>() else {
            return Ok(None);
        };
        let rebuilt = translate::rebuild(doc, &answers)
            .map_err(|e| StoreError::internal(format!("rebuilding {what} failed: {e}")))?;
        Ok::<_, StoreError>(Some(Some(quire_content::changes::encode_document(&rebuilt))))
    };
    let mut pages = HashMap::new();
    for page in &plan.pages {
        let Some(document) = rebuilt(&page.document, &page.segments, &format!("page {:?}", page.id))? else {
            return Ok(None);
        };
        let Some(title) = plain(&page.title) else {
            return Ok(None);
        };
        let description = match page.description.as_deref().map(plain) {
            Some(None) => return Ok(None),
            Some(Some(d)) => Some(d),
            None => None,
        };
        pages.insert(
            page.id.clone(),
            TranslatedPage {
                fingerprint: page.fingerprint.clone(),
                title,
                description,
                document,
            },
        );
    }
    let mut reusable = Vec::new();
    for (id, title, doc, segments) in &plan.reusable {
        let what = format!("reusable content {id:?}");
        let (Some(title), Some(document)) = (plain(title), rebuilt(doc, segments, &what)?) else {
            return Ok(None);
        };
        reusable.push(TranslatedReusable {
            id: id.clone(),
            title,
            document,
        });
    }
    Ok(Some(Built { pages, reusable }))
}

/// The last step: builds the target's new tree, writes it through a change request that is
/// merged, and records the run. Some(now) when a run was asked for meanwhile.
fn finish(
    c: &mut dyn Conn,
    store: &Store,
    start: &Start,
    plan: &Plan,
    built: &Built,
) -> StoreResult<Option<i64>> {
    let t = &start.translation;
    let lock = format!(
        "SELECT status, rerun, run_started_at, run_words FROM translations WHERE id = ?1{}",
        for_update(c)
    );
    let Some(row) = c.query_opt(&lock, params![t.id.clone()])? else {
        return Ok(None);
    };
    let (status, rerun, started, words): (Status, i64, Option<i64>, i64) =
        (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
    if status != Status::Running {
        return Ok(None);
    }
    let target_space = spaces::load_active(c, &start.target, &start.run_by)?;
    target_space.require(SpaceAction::Merge)?;
    let edit = target_space.authorize::<crate::permissions::space::Edit>()?;
    let main_revision = crate::main_revision::lock_main(c, &start.target)?;
    let main = content::load_tree(c, &store.content, &start.target, &main_revision)?;
    let assembled = target::assemble(
        &plan.source.tree,
        &main.tree,
        &plan.prior,
        &built.pages,
        &built.reusable,
    );
    assembled.tree.check().map_err(|e| {
        StoreError::invalid(format!(
            "the translated pages do not fit in the target space: {e}"
        ))
    })?;
    let hashes: Vec<String> = plan.source.tree.files.values().map(|f| f.blob.clone()).collect();
    crate::files::confirm(c, &start.target, &hashes, clock::now_ms())?;
    let revision = if assembled.tree == main.tree {
        main_revision.clone()
    } else {
        write_through_change_request(
            c,
            store,
            start,
            &edit,
            &main,
            assembled.tree.clone(),
            &assembled.documents,
        )?
    };
    target::record(c, &t.id, &assembled)?;
    forget_unused(c, &t.id, &plan.needed)?;
    let now = clock::now_ms();
    let duration = now - started.unwrap_or(now);
    let (pages, skipped) = (assembled.translated, assembled.skipped);
    let next_status = if rerun != 0 {
        Status::Pending
    } else {
        Status::Completed
    };
    c.execute(
        "UPDATE translations SET status = ?2, error = NULL, result_revision = ?3, runs = runs + 1,
             total_words = total_words + ?4, total_pages = total_pages + ?5, total_duration_ms = total_duration_ms + ?6,
             latest_duration_ms = ?6, latest_pages = ?7, latest_words = ?4, latest_skipped = ?8, latest_review = ?9,
             run_words = 0, rerun = 0, failures = 0, run_started_at = NULL, updated_at = ?10
         WHERE id = ?1",
        params![
            t.id.clone(),
            next_status,
            revision.clone(),
            words,
            assembled.first_translated,
            duration,
            pages,
            skipped,
            serde_json::to_string(&assembled.review).unwrap_or_else(|_| "[]".into()),
            now
        ],
    )?;
    let payload = events::TranslationRunFinished {
        translation_id: &t.id,
        status: Status::Completed.as_str(),
        target_space_id: Some(&start.target),
        revision: Some(&revision),
    };
    events::record(c, Event::in_org(&t.org_id, &t.id, Some(&start.run_by), payload))?;
    Ok((rerun != 0).then(clock::now_ms))
}

/// Writes `tree` as a new change request of the target and merges it; main's new revision.
fn write_through_change_request(
    c: &mut dyn Conn,
    store: &Store,
    start: &Start,
    edit: &crate::permissions::Authorized<crate::spaces::SpaceFor, crate::permissions::space::Edit>,
    main: &Arc<StoredTree>,
    tree: quire_content::tree::Tree,
    documents: &[(String, Vec<u8>)],
) -> StoreResult<String> {
    let t = &start.translation;
    let subject = format!(
        "Translate from {} into {}",
        translator::language_name(&t.source_language),
        translator::language_name(&t.language)
    );
    let new = crate::change_requests::NewChangeRequest {
        subject,
        status: Some(crate::change_requests::Status::Open),
        ..Default::default()
    };
    let cr = crate::change_requests::create(c, &store.content, edit, &start.run_by, &new)?;
    let cr = cr.value;
    let written = content::write_revision(
        c,
        &store.content,
        NewRevision {
            space_id: &start.target,
            kind: "edits",
            parents: vec![cr.revision.clone()],
            change_request: Some(&cr.id),
            merged_from: None,
            created_by: Some(&start.run_by),
        },
        Some(main),
        tree,
        documents,
    )?;
    c.execute(
        "UPDATE change_requests SET revision = ?2, updated_at = ?3 WHERE id = ?1",
        params![cr.id.clone(), written.id(), clock::now_ms()],
    )?;
    crate::change_requests::contributors::record(c, &cr.id, &start.run_by)?;
    let merged =
        crate::change_requests::merge::merge_in_transaction(c, store, &start.target, &cr.id, &start.run_by)?;
    if merged.conflicts.is_some() {
        return Err(StoreError::conflict(format!(
            "change request #{} of the target space conflicts with its main content",
            cr.number
        )));
    }
    Ok(merged.revision)
}

/// Keeps the memory to the segments the latest run used.
fn forget_unused(c: &mut dyn Conn, id: &str, needed: &[String]) -> StoreResult<()> {
    let used: HashSet<String> = needed.iter().map(|s| translate::segment_hash(s)).collect();
    let stored: Vec<String> = c
        .query(
            "SELECT hash FROM translation_segments WHERE translation_id = ?1",
            params![id],
        )?
        .iter()
        .map(|r| r.get::<String>(0))
        .collect::<Result<_, _>>()?;
    let unused: Vec<&str> = stored
        .iter()
        .filter(|h| !used.contains(*h))
        .map(String::as_str)
        .collect();
    for chunk in unused.chunks(500) {
        let mut args = crate::db::Args::default();
        let owner = args.arg(id);
        let list = args.list(chunk.iter().copied());
        c.execute(
            &format!("DELETE FROM translation_segments WHERE translation_id = {owner} AND hash IN ({list})"),
            args.values(),
        )?;
    }
    Ok(())
}

/// Records a step that failed on a transient error: the job runs again with backoff, until
/// [`MAX_FAILED_STEPS`] in a row fail the run.
fn failed_step(c: &mut dyn Conn, id: &str, message: &str) -> StoreResult<Option<i64>> {
    let failures: Option<i64> = c.query_scalar(
        "UPDATE translations SET failures = failures + 1, error = ?2 WHERE id = ?1 AND status = ?3 RETURNING failures",
        params![id, message, Status::Running],
    )?;
    let Some(failures) = failures else {
        return Ok(None);
    };
    if failures >= MAX_FAILED_STEPS {
        return fail(c, id, &format!("{message} ({failures} tries)"));
    }
    tracing::warn!(translation = %id, error = %message, failures, "translation run step failed, will retry");
    Ok(Some(clock::now_ms() + 1000 * (1i64 << failures.min(8))))
}

/// Fails the run with `message`; Some(now) when a run was asked for meanwhile (it starts
/// afresh: this job runs again).
fn fail(c: &mut dyn Conn, id: &str, message: &str) -> StoreResult<Option<i64>> {
    let Some(t) = model::load_by_id(c, id)? else {
        return Ok(None);
    };
    if !matches!(t.status, Status::Running | Status::Pending) {
        return Ok(None);
    }
    tracing::warn!(translation = %id, error = %message, "translation run failed");
    let now = clock::now_ms();
    let rerun: i64 = c
        .query_scalar("SELECT rerun FROM translations WHERE id = ?1", params![id])?
        .unwrap_or(0);
    if rerun != 0 {
        c.execute(
            "UPDATE translations SET status = ?2, error = ?3, rerun = 0, failures = 0, run_started_at = NULL,
                 run_words = 0, updated_at = ?4 WHERE id = ?1",
            params![id, Status::Pending, message, now],
        )?;
        return Ok(Some(now));
    }
    c.execute(
        "UPDATE translations SET status = ?2, error = ?3, failures = 0, run_started_at = NULL, run_words = 0,
             updated_at = ?4 WHERE id = ?1",
        params![id, Status::Failed, message, now],
    )?;
    let payload = events::TranslationRunFinished {
        translation_id: id,
        status: Status::Failed.as_str(),
        target_space_id: t.target_space_id.as_deref(),
        revision: None,
    };
    events::record(c, Event::in_org(&t.org_id, id, None, payload))?;
    Ok(None)
}
