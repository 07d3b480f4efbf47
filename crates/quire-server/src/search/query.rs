//! Ranking: one statement finds the matching rows through the full-text index, groups them by
//! page, ranks pages whose own fields match (title, description) before pages that match only in
//! their text, then by relevance, and returns one page of pages with their matching sections.
//! Paging is a keyset over the ranking key, so the database sorts but never skips rows.

use serde::{Deserialize, Serialize};

use crate::access::AccessContext;
use crate::db::fulltext::{self, FtsQuery, SECTIONS_PER_KEY};
use crate::db::{Args, Conn};
use crate::error::ApiResult;

/// Which rows a search reads.
pub enum Scope<'a> {
    /// The current content of one space (whose access the caller checked).
    Space(&'a str),
    /// The active spaces of an organization that the caller may view.
    Org {
        org_id: &'a str,
        access: &'a AccessContext,
    },
}

/// Where the previous page of results ended: the ranking key of its last page hit, and its rank.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct After {
    tier: i64,
    k1: f64,
    k2: f64,
    key: i64,
    rank: u64,
}

/// A page that matches, with its matching sections (best first).
#[derive(Debug)]
pub struct PageMatch {
    pub space_id: String,
    pub page_id: String,
    /// Whether the page's own fields match.
    pub title_match: bool,
    pub score: f64,
    /// One-based position in the whole ranking.
    pub rank: u64,
    pub sections: Vec<SectionMatch>,
    key: After,
}

impl PageMatch {
    /// The paging key of this hit.
    pub fn cursor(&self) -> After {
        self.key.clone()
    }
}

#[derive(Debug)]
pub struct SectionMatch {
    pub anchor: String,
    pub title: String,
    pub body: String,
    pub score: f64,
}

/// The CTEs `hits (id, pk, position, score)`, the matching rows, and `pages (pk, title_score,
/// text_score)`, the matching pages of the scope. Grouping uses the numbers of the rows only
/// (see search::index); the organization scope reads the space of each matching page.
fn matching_ctes(c: &dyn Conn, args: &mut Args, query: &FtsQuery, scope: &Scope<'_>) -> String {
    let space = match scope {
        Scope::Space(space) => Some(*space),
        Scope::Org { .. } => None,
    };
    let hits = fulltext::hits_sql(c, args, query, space);
    let mut pages_filter = String::new();
    if let Scope::Org { org_id, access } = scope {
        let org = args.arg(*org_id);
        let visible = access.visible_spaces_sql(args);
        pages_filter = format!(
            " WHERE pk IN (SELECT p.key FROM search_pages p JOIN spaces s ON s.id = p.space_id
                          WHERE s.organization_id = {org} AND s.deleted_at IS NULL{visible})"
        );
    }
    format!(
        "hits AS MATERIALIZED (
             SELECT id, id / {n} AS pk, id % {n} AS position, score FROM ({hits}) f
         ),
         pages AS (
             SELECT pk,
                    MAX(CASE WHEN position = 0 THEN score END) AS title_score,
                    MAX(CASE WHEN position > 0 THEN score END) AS text_score
             FROM hits{pages_filter} GROUP BY pk
         )",
        n = SECTIONS_PER_KEY
    )
}

/// One page of ranked pages (`limit + 1` at most, to tell whether more follow) and the number
/// of matching pages.
pub fn search(
    c: &mut dyn Conn,
    query: &FtsQuery,
    scope: &Scope<'_>,
    after: Option<&After>,
    fetch: i64,
) -> ApiResult<(Vec<PageMatch>, u64)> {
    let mut args = Args::default();
    let matching = matching_ctes(c, &mut args, query, scope);
    let mut keyset = String::new();
    if let Some(after) = after {
        keyset = format!(
            " WHERE (tier, k1, k2, pk) > ({}, {}, {}, {})",
            args.arg(after.tier),
            args.arg(after.k1),
            args.arg(after.k2),
            args.arg(after.key),
        );
    }
    // The full-text index tells the space by a lowercased token: the pages shown are checked
    // to be the space's own.
    let mut shown = String::new();
    if let Scope::Space(space) = scope {
        shown = format!(" WHERE p.space_id = {}", args.arg(*space));
    }
    let sql = format!(
        "WITH {matching},
         ranked AS (
             SELECT pk,
                    CASE WHEN title_score IS NULL THEN 1 ELSE 0 END AS tier,
                    -COALESCE(title_score, 0) AS k1,
                    -COALESCE(text_score, 0) AS k2,
                    COUNT(*) OVER () AS total
             FROM pages
         ),
         top AS (
             SELECT pk, tier, k1, k2, total FROM ranked{keyset}
             ORDER BY tier, k1, k2, pk LIMIT {limit}
         )
         SELECT t.pk, p.space_id, p.page_id, t.tier, t.k1, t.k2, t.total, x.anchor, x.title, x.body, h.score
         FROM top t
         JOIN search_pages p ON p.key = t.pk
         LEFT JOIN hits h ON h.pk = t.pk AND h.position > 0
         LEFT JOIN search_sections x ON x.id = h.id{shown}
         ORDER BY t.tier, t.k1, t.k2, t.pk, h.score DESC",
        limit = args.arg(fetch),
    );
    let rows = c.query(&sql, args.values())?;
    let mut total: u64 = 0;
    let mut rank = after.map_or(0, |a| a.rank);
    let mut pages: Vec<PageMatch> = Vec::new();
    for row in rows {
        let key: i64 = row.get(0)?;
        total = row.get::<i64>(6)?.max(0).unsigned_abs();
        if pages.last().is_none_or(|p| p.key.key != key) {
            let tier: i64 = row.get(3)?;
            let k1: f64 = row.get(4)?;
            let k2: f64 = row.get(5)?;
            rank += 1;
            pages.push(PageMatch {
                key: After {
                    tier,
                    k1,
                    k2,
                    key,
                    rank,
                },
                space_id: row.get(1)?,
                page_id: row.get(2)?,
                title_match: tier == 0,
                score: if tier == 0 { -k1 } else { -k2 },
                rank,
                sections: Vec::new(),
            });
        }
        let score: Option<f64> = row.get(10)?;
        if let (Some(score), Some(page)) = (score, pages.last_mut()) {
            page.sections.push(SectionMatch {
                anchor: row.get::<Option<String>>(7)?.unwrap_or_default(),
                title: row.get::<Option<String>>(8)?.unwrap_or_default(),
                body: row.get::<Option<String>>(9)?.unwrap_or_default(),
                score,
            });
        }
    }
    if pages.is_empty() && after.is_some() {
        // Past the last page the window has no row to report the total on.
        total = count(c, query, scope)?;
    }
    Ok((pages, total))
}

/// The number of matching pages.
fn count(c: &mut dyn Conn, query: &FtsQuery, scope: &Scope<'_>) -> ApiResult<u64> {
    let mut args = Args::default();
    let matching = matching_ctes(c, &mut args, query, scope);
    let n: i64 = c
        .query_scalar(
            &format!("WITH {matching} SELECT COUNT(*) FROM pages"),
            args.values(),
        )?
        .unwrap_or(0);
    Ok(n.max(0).unsigned_abs())
}
