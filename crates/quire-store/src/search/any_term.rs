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

/// The `limit` sections of the organization's active spaces, best first by the engine's
/// relevance, that hold any of `terms`.
pub fn sections(c: &mut dyn Conn, org_id: &str, terms: &[String], limit: i64) -> StoreResult<Vec<Section>> {
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = Args::default();
    let hits = fulltext::any_hits_sql(c, &mut args, terms);
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
