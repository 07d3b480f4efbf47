//! Search of a space's current content and of an organization's spaces (`quire_store::search`,
//! which keeps the index and answers the queries). What a hit shows (paths, URLs, ancestors)
//! comes from the revision's page tree, which each process caches.

use std::collections::HashMap;

use axum::extract::State;
use quire_content::search_text::{find_word, query_words};
use quire_store::content::store::RenderedKey;
use quire_store::db::fulltext::FtsQuery;
use quire_store::paging::{List, Paging};
use quire_store::permissions::org;
use quire_store::search::query::PageMatch;
use quire_store::search::{self, Shown};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::content::render::Context;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::paths::{OrgPath, SpacePath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(search_space))
        .routes(routes!(search_org))
}

/// Longest query accepted (GitBook's limit).
const MAX_QUERY_CHARS: usize = 512;

/// The query of both searches.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// What to look for: words, all required, the last one also as a prefix; at most 512
    /// characters.
    #[param(value_type = String, required = true)]
    #[serde(default)]
    query: String,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

/// A last word shorter than this is matched whole: as a prefix it would match most of the index.
const MIN_PREFIX_CHARS: usize = 2;

/// Characters of a section's text shown around the first matching word.
const EXCERPT_CHARS: usize = 240;

/// The `query` parameter: required, at most 512 characters.
fn search_words(raw: &str) -> ApiResult<FtsQuery> {
    if raw.trim().is_empty() {
        return Err(ApiError::bad_request("query parameter `query` is required"));
    }
    if raw.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "query parameter `query` is longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let words = query_words(raw);
    let prefix_last = words
        .last()
        .is_some_and(|w| w.chars().count() >= MIN_PREFIX_CHARS);
    Ok(FtsQuery { words, prefix_last })
}

/// GitBook's `SearchPageResult`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageHit {
    id: String,
    title: String,
    description: String,
    path: String,
    score: f64,
    rank: u64,
    result_type: &'static str,
    sections: Vec<SectionHit>,
    ancestors: Vec<Ancestor>,
    urls: HitUrls,
}

/// GitBook's `SearchSectionResult`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SectionHit {
    id: String,
    title: String,
    path: String,
    score: f64,
    result_type: &'static str,
    body: String,
    urls: HitUrls,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Ancestor {
    title: String,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = SearchHitUrls)]
pub struct HitUrls {
    app: String,
}

/// GitBook's `SearchSpaceResult`: the hits of one space.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SpaceHit {
    #[serde(rename = "type")]
    kind: &'static str,
    id: String,
    title: String,
    score: f64,
    pages: Vec<PageHit>,
}

/// A space's search. The answer depends only on the revision the index describes, the query
/// and the page asked for, so it is cached per revision like the page tree: a popular query costs
/// one full-text search per revision and process.
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/search",
    tag = "Space content",
    summary = "Search a space's content",
    params(SpacePath, SearchQuery, Paging),
    responses((status = 200, description = "The pages that match, best first, with their matching sections.", body = List<PageHit>)),
    security(("token" = ["space:content:read"]))
)]
async fn search_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    QueryOf(SearchQuery { query: raw, paging }): QueryOf<SearchQuery>,
) -> ApiResult<axum::response::Response> {
    let fts = search_words(&raw)?;
    let options = format!(
        "{}\u{0}{}\u{0}{raw}",
        paging.limit,
        paging.page.as_deref().unwrap_or("")
    );
    // Access and the current revision first, from the stamped cache: on a cached answer that
    // is all the work, and it reads no row a writer of the space touches (a comment burst
    // leaves its counter rows full of dead versions until they are vacuumed).
    let space = app
        .spaces
        .load_active(&app.db, &space_id, &caller.user_id)
        .await?
        .space;
    let key = space.revision.clone().map(|revision| RenderedKey {
        what: "search",
        revision,
        org_id: space.org_id.clone(),
        options,
    });
    let app2 = app.clone();
    let compute = app.db.read_blocking(move |c| {
        let results = search::in_space(c, &app2.content, space, &fts, &paging)?;
        let items: Vec<PageHit> = render_hits(&app2, &fts, results.matches, &results.shown)
            .into_iter()
            .map(|(_, hit)| hit)
            .collect();
        let list = List {
            next: results.next,
            count: results.total,
            items,
        };
        Ok::<_, ApiError>((to_bytes(&list)?, results.exact))
    });
    let body = match key {
        Some(key) => app.content.rendered_async(&key, compute).await?,
        None => compute.await?.0,
    };
    Ok(crate::encoding::json_bytes(body))
}

fn to_bytes<T: Serialize>(value: &T) -> ApiResult<bytes::Bytes> {
    serde_json::to_vec(value)
        .map(crate::encoding::kept)
        .map_err(|e| ApiError::internal(format!("cannot render search results: {e}")))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/search",
    tag = "Organizations",
    summary = "Search the spaces of an organization",
    params(OrgPath, SearchQuery, Paging),
    responses((status = 200, description = "The spaces with pages that match, each with its hits.", body = List<SpaceHit>)),
    security(("token" = ["space:content:read"]))
)]
async fn search_org(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(SearchQuery { query: raw, paging }): QueryOf<SearchQuery>,
) -> ApiResult<axum::Json<List<SpaceHit>>> {
    let fts = search_words(&raw)?;
    let app2 = app.clone();
    let list = app
        .db
        .read_blocking_as::<org::View, _>(caller.user_id.clone(), org_id, move |c, org| {
            let results = search::in_org(c, &app2.content, &org, &caller.user_id, &fts, &paging)?;
            let shown = &results.shown;
            let hits = render_hits(&app2, &fts, results.matches, shown);
            let mut groups: Vec<SpaceHit> = Vec::new();
            for (space_id, hit) in hits {
                match groups.iter_mut().find(|g| g.id == space_id) {
                    Some(group) => group.pages.push(hit),
                    None => groups.push(SpaceHit {
                        kind: "space",
                        title: shown
                            .get(&space_id)
                            .map(|s| s.space.title.clone())
                            .unwrap_or_default(),
                        id: space_id,
                        score: hit.score,
                        pages: vec![hit],
                    }),
                }
            }
            Ok(List {
                next: results.next,
                count: results.total,
                items: groups,
            })
        })
        .await?;
    Ok(axum::Json(list))
}

/// Renders page hits. A hit on a page that is not in the shown revision (a write that landed
/// between the two reads) is left out.
fn render_hits(
    app: &App,
    fts: &FtsQuery,
    matches: Vec<PageMatch>,
    shown: &HashMap<String, Shown>,
) -> Vec<(String, PageHit)> {
    matches
        .into_iter()
        .filter_map(|m| Some((m.space_id.clone(), render_hit(app, fts, m, shown)?)))
        .collect()
}

fn render_hit(app: &App, fts: &FtsQuery, m: PageMatch, shown: &HashMap<String, Shown>) -> Option<PageHit> {
    {
        let space = shown.get(&m.space_id)?;
        let tree = &space.tree;
        let entry = tree.tree.pages.get(&m.page_id)?;
        let path = tree.index().path(&m.page_id)?;
        let ctx = Context {
            urls: &app.urls,
            org_id: &space.space.org_id,
            space_id: &space.space.id,
            visibility: space.space.visibility,
            signing_key: &app.signing_key,
        };
        let page_url = ctx.app_url(&format!("/{path}"));
        let mut ancestors = Vec::new();
        let mut parent = entry.parent.as_deref();
        while let Some(id) = parent {
            let Some(p) = tree.tree.pages.get(id) else { break };
            if ancestors.len() > quire_content::tree::MAX_DEPTH {
                break;
            }
            ancestors.push(Ancestor {
                title: p.title.clone(),
            });
            parent = p.parent.as_deref();
        }
        ancestors.reverse();
        let sections = m
            .sections
            .iter()
            .map(|s| {
                let (id, path, url) = if s.anchor.is_empty() {
                    (m.page_id.clone(), path.to_string(), page_url.clone())
                } else {
                    (
                        format!("{}#{}", m.page_id, s.anchor),
                        format!("{path}#{}", s.anchor),
                        format!("{page_url}#{}", s.anchor),
                    )
                };
                SectionHit {
                    id,
                    title: if s.title.is_empty() {
                        entry.title.clone()
                    } else {
                        s.title.clone()
                    },
                    path,
                    score: s.score,
                    result_type: "section",
                    body: excerpt(&s.body, &fts.words),
                    urls: HitUrls { app: url },
                }
            })
            .collect();
        Some(PageHit {
            id: m.page_id.clone(),
            title: entry.title.clone(),
            description: entry.description.clone().unwrap_or_default(),
            path: path.to_string(),
            score: m.score,
            rank: m.rank,
            result_type: if m.title_match { "page" } else { "section" },
            sections,
            ancestors,
            urls: HitUrls { app: page_url },
        })
    }
}

/// About [`EXCERPT_CHARS`] characters of `body` starting a little before the first word that
/// matches the query, with `…` where text was cut.
pub(crate) fn excerpt(body: &str, words: &[String]) -> String {
    let start = words.iter().find_map(|w| find_word(body, w)).unwrap_or(0);
    // Back up about a fifth of the excerpt, to the start of a word.
    let lead = EXCERPT_CHARS / 5;
    let mut from = body[..start]
        .char_indices()
        .rev()
        .nth(lead.saturating_sub(1))
        .map_or(0, |(i, _)| i);
    if from > 0
        && let Some(space) = body[from..start].find(char::is_whitespace)
    {
        from += space + 1;
    }
    let rest = &body[from..];
    let end = rest
        .char_indices()
        .nth(EXCERPT_CHARS)
        .map_or(rest.len(), |(i, _)| i);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.push_str(rest[..end].trim());
    if end < rest.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpts_start_near_the_match() {
        let body = format!("{} needle and more", "word ".repeat(200));
        let e = excerpt(&body, &["needle".to_string()]);
        assert!(e.starts_with('…'), "{e}");
        assert!(e.contains("needle and more"), "{e}");
        assert_eq!(excerpt("short text", &["zzz".to_string()]), "short text");
    }
}
