//! Ranking: one statement finds the matching rows through the full-text index, groups them by
//! page, ranks pages whose own fields match (title, description) before pages that match only in
//! their text, then by relevance, and returns one page of pages with their matching sections.
//! Paging is a keyset over the ranking key, so the database sorts but never skips rows.

use serde::{Deserialize, Serialize};

use crate::access::AccessContext;
use crate::db::fulltext::{self, FtsQuery};
use crate::db::{Args, Conn, bytewise};
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
    space: String,
    page: String,
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

/// The `hits` CTE: the matching rows of the scope.
fn hits_cte(c: &dyn Conn, args: &mut Args, query: &FtsQuery, scope: &Scope<'_>) -> String {
    match scope {
        Scope::Space(space) => fulltext::hits_sql(c, args, query, Some(space)),
        Scope::Org { org_id, access } => {
            let hits = fulltext::hits_sql(c, args, query, None);
            let org = args.arg(*org_id);
            let visible = access.visible_spaces_sql(args);
            format!(
                "SELECT h.* FROM ({hits}) h
                 WHERE h.space_id IN (SELECT s.id FROM spaces s
                                      WHERE s.organization_id = {org} AND s.deleted_at IS NULL{visible})"
            )
        }
    }
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
    let hits = hits_cte(c, &mut args, query, scope);
    let space_key = bytewise(c, "space_id");
    let page_key = bytewise(c, "page_id");
    let mut keyset = String::new();
    if let Some(after) = after {
        keyset = format!(
            " WHERE (tier, k1, k2, {space_key}, {page_key}) > ({}, {}, {}, {}, {})",
            args.arg(after.tier),
            args.arg(after.k1),
            args.arg(after.k2),
            args.arg(after.space.as_str()),
            args.arg(after.page.as_str()),
        );
    }
    let order = format!("tier, k1, k2, {space_key}, {page_key}");
    let sql = format!(
        "WITH hits AS MATERIALIZED ({hits}),
         pages AS (
             SELECT space_id, page_id,
                    MAX(CASE WHEN position = 0 THEN score END) AS title_score,
                    MAX(CASE WHEN position > 0 THEN score END) AS text_score
             FROM hits GROUP BY space_id, page_id
         ),
         ranked AS (
             SELECT space_id, page_id,
                    CASE WHEN title_score IS NULL THEN 1 ELSE 0 END AS tier,
                    -COALESCE(title_score, 0) AS k1,
                    -COALESCE(text_score, 0) AS k2,
                    COUNT(*) OVER () AS total
             FROM pages
         ),
         top AS (
             SELECT space_id, page_id, tier, k1, k2, total FROM ranked{keyset}
             ORDER BY {order} LIMIT {limit}
         )
         SELECT t.space_id, t.page_id, t.tier, t.k1, t.k2, t.total, x.anchor, x.title, x.body, h.score
         FROM top t
         LEFT JOIN hits h ON h.space_id = t.space_id AND h.page_id = t.page_id AND h.position > 0
         LEFT JOIN search_sections x ON x.id = h.id
         ORDER BY t.tier, t.k1, t.k2, {t_space}, {t_page}, h.score DESC",
        limit = args.arg(fetch),
        t_space = bytewise(c, "t.space_id"),
        t_page = bytewise(c, "t.page_id"),
    );
    let rows = c.query(&sql, args.values())?;
    let mut total: u64 = 0;
    let mut rank = after.map_or(0, |a| a.rank);
    let mut pages: Vec<PageMatch> = Vec::new();
    for row in rows {
        let space_id: String = row.get(0)?;
        let page_id: String = row.get(1)?;
        let tier: i64 = row.get(2)?;
        let k1: f64 = row.get(3)?;
        let k2: f64 = row.get(4)?;
        total = row.get::<i64>(5)?.max(0).unsigned_abs();
        let same = pages
            .last()
            .is_some_and(|p| p.space_id == space_id && p.page_id == page_id);
        if !same {
            rank += 1;
            pages.push(PageMatch {
                key: After {
                    tier,
                    k1,
                    k2,
                    space: space_id.clone(),
                    page: page_id.clone(),
                    rank,
                },
                space_id,
                page_id,
                title_match: tier == 0,
                score: if tier == 0 { -k1 } else { -k2 },
                rank,
                sections: Vec::new(),
            });
        }
        let score: Option<f64> = row.get(9)?;
        if let (Some(score), Some(page)) = (score, pages.last_mut()) {
            page.sections.push(SectionMatch {
                anchor: row.get::<Option<String>>(6)?.unwrap_or_default(),
                title: row.get::<Option<String>>(7)?.unwrap_or_default(),
                body: row.get::<Option<String>>(8)?.unwrap_or_default(),
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
    let hits = hits_cte(c, &mut args, query, scope);
    let n: i64 = c
        .query_scalar(
            &format!("SELECT COUNT(*) FROM (SELECT DISTINCT space_id, page_id FROM ({hits}) h) d"),
            args.values(),
        )?
        .unwrap_or(0);
    Ok(n.max(0).unsigned_abs())
}
