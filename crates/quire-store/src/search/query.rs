//! Ranking: one statement finds the matching rows through the full-text index, groups them by
//! page, ranks pages whose own fields match (title, description) before pages that match only in
//! their text, then by relevance, and returns one page of pages with the ids of their matching
//! sections, which a second statement reads. Paging is a keyset over the ranking key, so the
//! database sorts but never skips rows.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::access::AccessContext;
use crate::db::fulltext::{self, FtsQuery, SECTIONS_PER_KEY};
use crate::db::{Args, Conn};
use crate::error::StoreResult;

/// Matching sections read per page hit, best first.
pub const SECTIONS_PER_PAGE: i64 = 5;

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

/// The CTE `hits (id, pk, position, score)`: the matching rows of the scope, with the key of
/// their page and their position in it, told by their numbers (see search::index). The
/// organization scope reads the space of each matching page. Materialized: SQLite computes
/// bm25 only in the statement that matches, not in the aggregate it would be merged into.
fn hits_cte(c: &dyn Conn, args: &mut Args, query: &FtsQuery, scope: &Scope<'_>) -> String {
    let n = SECTIONS_PER_KEY;
    match scope {
        Scope::Space(space) => {
            let hits = fulltext::hits_sql(c, args, query, Some(space));
            format!(
                "hits AS MATERIALIZED (SELECT id, id / {n} AS pk, id % {n} AS position, score FROM ({hits}) f)"
            )
        }
        Scope::Org { org_id, access } => {
            let hits = fulltext::hits_sql(c, args, query, None);
            let org = args.arg(*org_id);
            let visible = access.visible_spaces_sql(args);
            format!(
                "hits AS MATERIALIZED (
                     SELECT f.id, f.id / {n} AS pk, f.id % {n} AS position, f.score FROM ({hits}) f
                     JOIN search_pages p ON p.key = f.id / {n}
                     WHERE p.space_id IN (SELECT s.id FROM spaces s
                                          WHERE s.organization_id = {org} AND s.deleted_at IS NULL{visible})
                 )"
            )
        }
    }
}

crate::columns! {
    /// A page a search matched, ranked (see [`search`]).
    struct MatchCols of "search_pages" {
        key: "t.pk",
        space_id: "p.space_id",
        page_id: "p.page_id",
        tier: "t.tier",
        k1: "t.k1",
        k2: "t.k2",
        total: "t.total",
        sections: "t.sections",
    }
}

/// One page of ranked pages (`limit + 1` at most, to tell whether more follow) and the number
/// of matching pages.
///
/// Two statements: the first groups the matching rows by page (from their numbers), ranks the
/// pages and lists, per page, its matching sections with their scores; the second reads those
/// sections by primary key. Nothing joins the matches with anything but by primary key:
/// PostgreSQL cannot estimate how many rows a full-text condition matches, and a join planned
/// on its guess compared every pair.
pub fn search(
    c: &mut dyn Conn,
    query: &FtsQuery,
    scope: &Scope<'_>,
    after: Option<&After>,
    fetch: i64,
) -> StoreResult<(Vec<PageMatch>, u64)> {
    let mut args = Args::default();
    let hits = hits_cte(c, &mut args, query, scope);
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
        "WITH {hits},
         pages AS (
             SELECT pk,
                    MAX(CASE WHEN position = 0 THEN score END) AS title_score,
                    MAX(CASE WHEN position > 0 THEN score END) AS text_score,
                    string_agg(CAST(id AS TEXT) || ':' || CAST(score AS TEXT), ',' ORDER BY score DESC, id)
                        FILTER (WHERE position > 0) AS sections
             FROM hits GROUP BY pk
         ),
         ranked AS (
             SELECT pk, sections,
                    CASE WHEN title_score IS NULL THEN 1 ELSE 0 END AS tier,
                    -COALESCE(title_score, 0) AS k1,
                    -COALESCE(text_score, 0) AS k2,
                    COUNT(*) OVER () AS total
             FROM pages
         ),
         top AS (
             SELECT pk, tier, k1, k2, total, sections FROM ranked{keyset}
             ORDER BY tier, k1, k2, pk LIMIT {limit}
         )
         SELECT {columns}
         FROM top t JOIN search_pages p ON p.key = t.pk{shown}
         ORDER BY t.tier, t.k1, t.k2, t.pk",
        columns = MatchCols::SQL,
        limit = args.arg(fetch),
    );
    let rows = c.query(&sql, args.values())?;
    let mut total: u64 = 0;
    let mut pages: Vec<PageMatch> = Vec::with_capacity(rows.len());
    let mut wanted: Vec<(usize, i64, f64)> = Vec::new();
    // Ranks go on from the previous page of results.
    for (rank, row) in (after.map_or(0, |a| a.rank) + 1..).zip(rows) {
        const M: MatchCols = MatchCols::AT;
        let key: i64 = row.col(M.key)?;
        let tier: i64 = row.col(M.tier)?;
        let k1: f64 = row.col(M.k1)?;
        let k2: f64 = row.col(M.k2)?;
        total = row.col::<i64>(M.total)?.max(0).unsigned_abs();
        let sections: Option<String> = row.col(M.sections)?;
        for (id, score) in sections
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter_map(|pair| {
                let (id, score) = pair.split_once(':')?;
                Some((id.parse::<i64>().ok()?, score.parse::<f64>().ok()?))
            })
            .take(usize::try_from(SECTIONS_PER_PAGE).unwrap_or(usize::MAX))
        {
            wanted.push((pages.len(), id, score));
        }
        pages.push(PageMatch {
            key: After {
                tier,
                k1,
                k2,
                key,
                rank,
            },
            space_id: row.col(M.space_id)?,
            page_id: row.col(M.page_id)?,
            title_match: tier == 0,
            score: if tier == 0 { -k1 } else { -k2 },
            rank,
            sections: Vec::new(),
        });
    }
    let mut texts = read_sections(c, wanted.iter().map(|(_, id, _)| *id))?;
    for (page, id, score) in wanted {
        if let (Some((anchor, title, body)), Some(page)) = (texts.remove(&id), pages.get_mut(page)) {
            page.sections.push(SectionMatch {
                anchor,
                title,
                body,
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

crate::columns! {
    /// A section found by a search.
    struct SectionCols of "search_sections" {
        id: "id",
        anchor: "anchor",
        title: "title",
        body: "body",
    }
}

/// Anchor, title and text of sections, by id.
fn read_sections(
    c: &mut dyn Conn,
    ids: impl Iterator<Item = i64>,
) -> StoreResult<HashMap<i64, (String, String, String)>> {
    let ids: Vec<i64> = ids.collect();
    let mut out = HashMap::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let mut args = Args::default();
        let list = args.list(chunk.iter().copied());
        for row in c.query(
            &format!(
                "SELECT {} FROM search_sections WHERE id IN ({list})",
                SectionCols::SQL
            ),
            args.values(),
        )? {
            const S: SectionCols = SectionCols::AT;
            out.insert(
                row.col(S.id)?,
                (row.col(S.anchor)?, row.col(S.title)?, row.col(S.body)?),
            );
        }
    }
    Ok(out)
}

/// The number of matching pages.
fn count(c: &mut dyn Conn, query: &FtsQuery, scope: &Scope<'_>) -> StoreResult<u64> {
    let mut args = Args::default();
    let hits = hits_cte(c, &mut args, query, scope);
    let n: i64 = c
        .query_scalar(
            &format!("WITH {hits} SELECT COUNT(DISTINCT pk) FROM hits"),
            args.values(),
        )?
        .unwrap_or(0);
    Ok(n.max(0).unsigned_abs())
}
