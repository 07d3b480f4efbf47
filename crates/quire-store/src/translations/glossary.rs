//! The organization's glossary (GitBook's `GlossaryEntry`): terms in several languages that
//! every translation of the organization uses. A run gives the translator the entries that have
//! both its source and its target language.

use std::collections::BTreeMap;

use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, TranslationAction, role_forbidden, translation_allows};
use crate::{clock, ids, params};

/// How many entries one organization's glossary holds.
pub const MAX_ENTRIES: i64 = 5_000;
/// How many operations one batch carries.
pub const MAX_OPERATIONS: usize = 500;
/// The longest term (GitBook's `GlossaryTranslations`).
pub const TERM_MAX: usize = 255;

/// A term in each of its languages.
pub type Terms = BTreeMap<String, String>;

#[derive(Clone, Debug)]
pub struct Entry {
    pub id: String,
    pub org_id: String,
    pub translations: Terms,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::columns! {
    struct EntryCols of "translation_glossary" {
        id: "g.id",
        org_id: "g.organization_id",
        translations: "g.translations",
        created_at: "g.created_at",
        updated_at: "g.updated_at",
    }
}

impl Entry {
    fn from_row(row: &Row) -> Result<Entry, DbError> {
        const G: EntryCols = EntryCols::AT;
        let id: String = row.col(G.id)?;
        let text: String = row.col(G.translations)?;
        let translations = serde_json::from_str(&text)
            .map_err(|e| DbError::stored(format_args!("terms of glossary entry {id:?}"), e))?;
        Ok(Entry {
            org_id: row.col(G.org_id)?,
            translations,
            created_at: row.col(G.created_at)?,
            updated_at: row.col(G.updated_at)?,
            id,
        })
    }
}

/// One operation of a batch, checked already ([`check_terms`]).
#[derive(Clone, Debug)]
pub enum Operation {
    Insert(Terms),
    Update(String, Terms),
    Delete(String),
}

/// Terms keyed by languages of `TranslationLanguage`, each 1 to 255 characters on one line.
pub fn check_terms(terms: &Terms) -> StoreResult<()> {
    if terms.is_empty() {
        return Err(StoreError::invalid(
            "`translations` must give the term in at least one language",
        ));
    }
    for (language, term) in terms {
        super::check_language("translations", language)?;
        let chars = term.chars().count();
        if chars == 0 || chars > TERM_MAX || term.contains(['\n', '\r']) {
            return Err(StoreError::invalid(format!(
                "`translations.{language}` must be 1 to {TERM_MAX} characters on one line"
            )));
        }
    }
    Ok(())
}

/// The caller's organization role allows `action` (`what` names it in a refusal), or 403.
pub(super) fn require(org: &OrgFor, action: TranslationAction, what: &str) -> StoreResult<()> {
    crate::permissions::require_org(org.standing, crate::permissions::OrgAction::View, &org.org.id)?;
    if translation_allows(org.standing, action) {
        return Ok(());
    }
    Err(role_forbidden(
        what,
        action.needed(),
        &format!("in organization {:?}", org.org.id),
        org.standing.role(),
    ))
}

/// The glossary, oldest entry first, or ordered by the term in `order_by`'s language (entries
/// without one last).
pub fn list(
    c: &mut dyn Conn,
    org: &OrgFor,
    paging: &Paging,
    order_by: Option<&str>,
) -> StoreResult<List<Entry>> {
    require(org, TranslationAction::View, "seeing the glossary")?;
    let Some(language) = order_by else {
        return list_by_creation(c, org, paging);
    };
    // Ordering by a term is done here: the terms are JSON, and a glossary is small
    // ([`MAX_ENTRIES`]). The cursor is the position in that order.
    let page = Page::new(paging, format!("glossary:{}:{language}", org.org.id))?;
    let mut all = all_entries(c, &org.org.id)?;
    all.sort_by(|a, b| {
        let (ta, tb) = (a.translations.get(language), b.translations.get(language));
        (ta.is_none(), ta.map(|t| t.to_lowercase()), &a.id).cmp(&(
            tb.is_none(),
            tb.map(|t| t.to_lowercase()),
            &b.id,
        ))
    });
    let count = all.len();
    let start = page
        .after::<u64>()?
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let fetch = usize::try_from(page.fetch()).unwrap_or(usize::MAX);
    let items: Vec<Entry> = all.into_iter().skip(start).take(fetch).collect();
    // The cursor is the position after the page's last entry (the limit is one less than fetched).
    let end = start.saturating_add(fetch.saturating_sub(1)) as u64;
    Ok(page.finish(items, count as u64, move |_| end))
}

fn list_by_creation(c: &mut dyn Conn, org: &OrgFor, paging: &Paging) -> StoreResult<List<Entry>> {
    let page = Page::new(paging, format!("glossary:{}", org.org.id))?;
    let mut args = Args::default();
    let filter = format!(" WHERE g.organization_id = {}", args.arg(org.org.id.clone()));
    crate::paging::by_creation(
        c,
        &page,
        ("translation_glossary g", EntryCols::SQL),
        (filter, args),
        Entry::from_row,
        |e| (e.created_at, e.id.clone()),
    )
}

fn all_entries(c: &mut dyn Conn, org_id: &str) -> StoreResult<Vec<Entry>> {
    let sql = format!(
        "SELECT {} FROM translation_glossary g WHERE g.organization_id = ?1 ORDER BY g.created_at, g.id",
        EntryCols::SQL
    );
    Ok(c.query(&sql, params![org_id])?
        .iter()
        .map(Entry::from_row)
        .collect::<Result<Vec<_>, DbError>>()?)
}

pub fn entry_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("glossary entry {id:?} not found"))
}

/// One entry.
pub fn get(c: &mut dyn Conn, org: &OrgFor, id: &str) -> StoreResult<Entry> {
    require(org, TranslationAction::View, "seeing the glossary")?;
    let sql = format!(
        "SELECT {} FROM translation_glossary g WHERE g.organization_id = ?1 AND g.id = ?2",
        EntryCols::SQL
    );
    c.query_opt(&sql, params![org.org.id.clone(), id])?
        .map(|row| Entry::from_row(&row))
        .transpose()?
        .ok_or_else(|| entry_not_found(id))
}

/// Applies a batch of operations, all or none: an update or delete of an entry that is not the
/// organization's refuses the whole batch.
pub fn apply(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, crate::permissions::org::View>,
    operations: &[Operation],
) -> StoreResult<()> {
    require(org, TranslationAction::Edit, "editing the glossary")?;
    if operations.len() > MAX_OPERATIONS {
        return Err(StoreError::invalid(format!(
            "`operations` has {} operations, more than the {MAX_OPERATIONS} one batch takes",
            operations.len()
        )));
    }
    let org_id = org.org.id.clone();
    let now = clock::now_ms();
    for (i, op) in operations.iter().enumerate() {
        match op {
            Operation::Insert(terms) => {
                c.execute(
                    "INSERT INTO translation_glossary (id, organization_id, translations, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?4)",
                    params![ids::new_id(), org_id.clone(), to_json(terms), now],
                )?;
            }
            Operation::Update(id, terms) => {
                let n = c.execute(
                    "UPDATE translation_glossary SET translations = ?3, updated_at = ?4
                     WHERE organization_id = ?1 AND id = ?2",
                    params![org_id.clone(), id.clone(), to_json(terms), now],
                )?;
                if n == 0 {
                    return Err(StoreError::invalid(format!(
                        "`operations[{i}]`: glossary entry {id:?} not found"
                    )));
                }
            }
            Operation::Delete(id) => {
                let n = c.execute(
                    "DELETE FROM translation_glossary WHERE organization_id = ?1 AND id = ?2",
                    params![org_id.clone(), id.clone()],
                )?;
                if n == 0 {
                    return Err(StoreError::invalid(format!(
                        "`operations[{i}]`: glossary entry {id:?} not found"
                    )));
                }
            }
        }
    }
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM translation_glossary WHERE organization_id = ?1",
            params![org_id],
        )?
        .unwrap_or(0);
    if count > MAX_ENTRIES {
        return Err(StoreError::invalid(format!(
            "a glossary holds at most {MAX_ENTRIES} entries; this batch would make {count}"
        )));
    }
    Ok(())
}

fn to_json(terms: &Terms) -> String {
    serde_json::to_string(terms).unwrap_or_else(|_| "{}".into())
}

/// The (source term, target term) pairs of the organization's glossary, for a run.
pub fn pairs(
    c: &mut dyn Conn,
    org_id: &str,
    source: &str,
    target: &str,
) -> StoreResult<Vec<(String, String)>> {
    Ok(all_entries(c, org_id)?
        .into_iter()
        .filter_map(|e| {
            Some((
                e.translations.get(source)?.clone(),
                e.translations.get(target)?.clone(),
            ))
        })
        .collect())
}
