//! Sections holding any of some terms, each as a prefix: what the analysis of conversations
//! looks for (`conversations::analyse`), whose questions' key terms are stems. The same index
//! as every search, read by one statement that joins the matches by primary key only (see
//! [`super::query::search`]).

use crate::db::fulltext::{self, SECTIONS_PER_KEY};
use crate::db::{Args, Conn};
use crate::error::StoreResult;

/// A section found, with its text (heading and body).
#[derive(Debug)]
pub struct Section {
    pub space: String,
    pub page: String,
    pub text: String,
}

/// Most spaces named in the full-text condition; an organization with more is filtered by the
/// join alone.
pub const MAX_SPACES_NAMED: usize = 500;

/// The active spaces of an organization, which [`sections`] reads (at most
/// [`MAX_SPACES_NAMED`] + 1, enough to tell whether there are more).
pub fn spaces_of(c: &mut dyn Conn, org_id: &str) -> StoreResult<Vec<String>> {
    let mut ids = Vec::new();
    for row in c.query(
        &format!(
            "SELECT id FROM spaces WHERE organization_id = ?1 AND deleted_at IS NULL ORDER BY id LIMIT {}",
            MAX_SPACES_NAMED + 1
        ),
        crate::params![org_id],
    )? {
        ids.push(row.get(0)?);
    }
    Ok(ids)
}

/// The `limit` sections of the organization's active spaces (`spaces`, from [`spaces_of`]), best
/// first by the engine's relevance, that hold any of `terms`.
pub fn sections(
    c: &mut dyn Conn,
    org_id: &str,
    spaces: &[String],
    terms: &[String],
    limit: i64,
) -> StoreResult<Vec<Section>> {
    if terms.is_empty() || spaces.is_empty() {
        return Ok(Vec::new());
    }
    let named = (spaces.len() <= MAX_SPACES_NAMED).then_some(spaces);
    let mut args = Args::default();
    let hits = fulltext::any_hits_sql(c, &mut args, terms, named);
    let org = args.arg(org_id);
    let limit = args.arg(limit);
    let sql = format!(
        "SELECT p.space_id, p.page_id, s.title, s.body FROM ({hits}) f
         JOIN search_sections s ON s.id = f.id
         JOIN search_pages p ON p.key = f.id / {SECTIONS_PER_KEY}
         JOIN spaces sp ON sp.id = p.space_id
         WHERE sp.organization_id = {org} AND sp.deleted_at IS NULL
         ORDER BY f.score DESC, f.id
         LIMIT {limit}"
    );
    let mut found = Vec::new();
    for row in c.query(&sql, args.values())? {
        let (title, body): (String, String) = (row.get(2)?, row.get(3)?);
        found.push(Section {
            space: row.get(0)?,
            page: row.get(1)?,
            text: format!("{title} {body}"),
        });
    }
    Ok(found)
}
