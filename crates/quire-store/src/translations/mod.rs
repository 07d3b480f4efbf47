//! Translations: a translated copy of a source space, kept in sync by runs of a durable job
//! (`run`). A run translates the pages whose source changed since the last run (only their
//! human text: `quire_content::translate`), reusing what it translated before (the translation
//! memory), leaves target pages a person edited alone, and writes the result to the target space
//! through a change request it merges. `docs/translations.md` describes the rules;
//! `docs/permissions.md` ("Translations") who may do what.

pub mod glossary;
pub mod model;
pub mod run;
mod target;
pub mod translator;

pub use model::{Stats, Status, Translation, TranslationFor, TranslationKey, load_visible, not_found};
pub use translator::{Request, TranslateError, TranslateFuture, Translator};

use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, SpaceAction, TranslationAction, translation};
use crate::{Store, clock, ids, jobs, params, spaces};

/// How many translations one organization may have.
pub const MAX_TRANSLATIONS: i64 = 500;
/// The largest instructions document, as JSON.
pub const INSTRUCTIONS_MAX_BYTES: usize = 64 * 1024;

/// What a new translation is, its fields checked already ([`check_language`],
/// [`check_instructions`]).
#[derive(Clone, Debug)]
pub struct NewTranslation {
    pub source_space: String,
    pub source_language: String,
    pub language: String,
    pub instructions: serde_json::Value,
}

/// A language of GitBook's `TranslationLanguage`, or 400 naming `field`.
pub fn check_language(field: &str, value: &str) -> StoreResult<()> {
    if spaces::LANGUAGES.contains(&value) {
        Ok(())
    } else {
        Err(StoreError::invalid(format!(
            "`{field}` must be one of {}, not {value:?}",
            spaces::LANGUAGES.join(", ")
        )))
    }
}

/// Instructions: a rich document of at most [`INSTRUCTIONS_MAX_BYTES`]; absent, an empty one.
pub fn check_instructions(value: Option<serde_json::Value>) -> StoreResult<serde_json::Value> {
    let Some(value) = value else {
        return Ok(crate::richtext::empty_document());
    };
    let value = crate::richtext::validate("instructions", value)?;
    let size = value.to_string().len();
    if size > INSTRUCTIONS_MAX_BYTES {
        return Err(StoreError::invalid(format!(
            "`instructions` is {size} bytes of JSON, more than the {INSTRUCTIONS_MAX_BYTES} allowed"
        )));
    }
    Ok(value)
}

/// The translations of an organization the caller sees, oldest first.
pub fn list(c: &mut dyn Conn, org: &OrgFor, paging: &Paging) -> StoreResult<List<TranslationFor>> {
    let page = Page::new(paging, format!("translations:{}", org.org.id))?;
    glossary::require(org, TranslationAction::View, TranslationAction::View.describe())?;
    let mut args = Args::default();
    let filter = format!(" WHERE t.organization_id = {}", args.arg(org.org.id.clone()));
    let standing = org.standing;
    crate::paging::by_creation(
        c,
        &page,
        ("translations t", model::TranslationCols::SQL),
        (filter, args),
        |r| Ok(TranslationFor::listed(Translation::from_row(r)?, standing)),
        |t| (t.translation.created_at, t.translation.id.clone()),
    )
}

/// Creates a translation of a space the caller can read, into another language. It is
/// `pending` until it is run; the first run makes the target space.
pub fn create(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, crate::permissions::org::View>,
    caller: &str,
    new: &NewTranslation,
) -> StoreResult<TranslationFor> {
    let org_id = &org.org.id;
    glossary::require(org, TranslationAction::Edit, "creating translations")?;
    if new.language == new.source_language {
        return Err(StoreError::invalid(format!(
            "`language` is {:?}, the source's own language: a translation goes into another one",
            new.language
        )));
    }
    let readable = spaces::load_for(c, &new.source_space, caller)?
        .filter(|s| s.allows(SpaceAction::View) && s.space.org_id == *org_id && s.space.deleted_at.is_none());
    let Some(source) = readable else {
        return Err(StoreError::invalid(format!(
            "`source.space` {:?} is not a space of this organization that you can read",
            new.source_space
        )));
    };
    crate::collections::require_create_in(c, org_id, source.space.parent.as_deref(), caller)?;
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM translations WHERE organization_id = ?1",
            params![org_id.clone()],
        )?
        .unwrap_or(0);
    if count >= MAX_TRANSLATIONS {
        return Err(StoreError::invalid(format!(
            "an organization has at most {MAX_TRANSLATIONS} translations"
        )));
    }
    let existing: Option<String> = c.query_scalar(
        "SELECT id FROM translations WHERE source_space_id = ?1 AND language = ?2",
        params![new.source_space.clone(), new.language.clone()],
    )?;
    if let Some(existing) = existing {
        return Err(StoreError::invalid(format!(
            "space {:?} already has a translation into {:?}: {existing:?}",
            new.source_space, new.language
        )));
    }
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO translations (id, organization_id, source_space_id, source_language, language, instructions,
                                   status, created_by, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        params![
            id.clone(),
            org_id.clone(),
            new.source_space.clone(),
            new.source_language.clone(),
            new.language.clone(),
            new.instructions.to_string(),
            Status::Pending,
            caller,
            now
        ],
    )?;
    let payload = events::TranslationCreated {
        translation_id: &id,
        source_space_id: &new.source_space,
        language: &new.language,
    };
    events::record(c, Event::in_org(org_id, &id, Some(caller), payload))?;
    let key = TranslationKey {
        org_id: org_id.clone(),
        translation_id: id,
    };
    load_visible(c, &key, caller)
}

/// Replaces a translation's instructions; the next run uses them.
pub fn update(
    c: &mut dyn Conn,
    t: &Authorized<TranslationFor, translation::Edit>,
    caller: &str,
    instructions: &serde_json::Value,
) -> StoreResult<TranslationFor> {
    let tr = &t.translation;
    c.execute(
        "UPDATE translations SET instructions = ?2, updated_at = ?3 WHERE id = ?1",
        params![tr.id.clone(), instructions.to_string(), clock::now_ms()],
    )?;
    let payload = events::TranslationUpdated {
        translation_id: &tr.id,
    };
    events::record(c, Event::in_org(&tr.org_id, &tr.id, Some(caller), payload))?;
    let key = TranslationKey {
        org_id: tr.org_id.clone(),
        translation_id: tr.id.clone(),
    };
    load_visible(c, &key, caller)
}

/// Deletes a translation with its memory and its scheduled run. The target space stays, and is
/// no longer updated; a run under way finds the translation gone and writes nothing.
pub fn delete(
    c: &mut dyn Conn,
    t: &Authorized<TranslationFor, translation::Edit>,
    caller: &str,
) -> StoreResult<()> {
    let tr = &t.translation;
    c.execute(
        "DELETE FROM translation_segments WHERE translation_id = ?1",
        params![tr.id.clone()],
    )?;
    c.execute(
        "DELETE FROM translation_pages WHERE translation_id = ?1",
        params![tr.id.clone()],
    )?;
    c.execute("DELETE FROM translations WHERE id = ?1", params![tr.id.clone()])?;
    jobs::cancel(c, &run::job_key(&tr.id))?;
    let payload = events::TranslationDeleted {
        translation_id: &tr.id,
    };
    events::record(c, Event::in_org(&tr.org_id, &tr.id, Some(caller), payload))?;
    Ok(())
}

/// The error of a run asked for while no translator is configured: it says how to configure one.
pub fn no_translator() -> StoreError {
    StoreError::invalid(
        "no translator is configured: start quire with QUIRE_TRANSLATOR=openai (an OpenAI-compatible \
         chat-completions endpoint: QUIRE_TRANSLATOR_URL, QUIRE_TRANSLATOR_KEY, QUIRE_TRANSLATOR_MODEL) \
         or QUIRE_TRANSLATOR=libretranslate (QUIRE_TRANSLATOR_URL, QUIRE_TRANSLATOR_KEY); see \
         docs/translations.md",
    )
}

/// Asks for a run as the caller: queued now, or, while one is running, right after it. The run
/// acts on the spaces as the caller.
pub fn request_run(
    store: &Store,
    c: &mut dyn Conn,
    t: &Authorized<TranslationFor, translation::Edit>,
    caller: &str,
) -> StoreResult<()> {
    if store.translator.is_none() {
        return Err(no_translator());
    }
    let tr = &t.translation;
    let now = clock::now_ms();
    // The row as it is now (the caller's copy was read before this transaction took it).
    let status: Option<Status> = c.query_scalar(
        "UPDATE translations SET updated_at = ?2 WHERE id = ?1 RETURNING status",
        params![tr.id.clone(), now],
    )?;
    match status {
        None => return Err(not_found(&tr.id)),
        Some(Status::Running) => {
            c.execute(
                "UPDATE translations SET rerun = 1, run_by = ?2 WHERE id = ?1",
                params![tr.id.clone(), caller],
            )?;
        }
        // Never run, or queued already: queued (once), acting as the latest member who asked.
        Some(Status::Pending) => {
            c.execute(
                "UPDATE translations SET run_by = ?2 WHERE id = ?1",
                params![tr.id.clone(), caller],
            )?;
            run::schedule_once(c, &tr.id, now)?;
        }
        Some(Status::Completed | Status::Failed) => {
            c.execute(
                "UPDATE translations SET status = ?2, error = NULL, run_by = ?3, failures = 0 WHERE id = ?1",
                params![tr.id.clone(), Status::Pending, caller],
            )?;
            // Scheduled again even when the job of the run before is still being recorded, so
            // that its end does not take this run's row with it.
            run::schedule(c, &tr.id, now)?;
        }
    }
    Ok(())
}
