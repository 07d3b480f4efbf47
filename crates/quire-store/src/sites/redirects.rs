//! Redirects of a site: a source path (exact, or ending in `*` / `/*` to match what follows) to a
//! section, a site space, a page of a site space or an external URL. Resolving a path picks the exact source, else the
//! longest wildcard source that is a prefix of it.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::model::{self, SiteFor};
use crate::content::store::{ContentCache, StoredTree};
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::paging::{self, KeyOrder, List, Page, Paging};
use crate::permissions::{Authorized, site};
use crate::{clock, ids, params};

pub const SOURCE_MAX: usize = 512;

/// Where a redirect leads (GitBook's `SiteRedirectDestination`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", deny_unknown_fields)]
#[schema(as = SiteRedirectDestination)]
pub enum Destination {
    #[serde(rename = "site-section", rename_all = "camelCase")]
    SiteSection { site_section_id: String },
    #[serde(rename = "site-space", rename_all = "camelCase")]
    SiteSpace { site_space_id: String },
    /// A page of the space a site space shows.
    #[serde(rename = "site-page", rename_all = "camelCase")]
    SitePage { site_space_id: String, page_id: String },
    #[serde(rename = "external")]
    External { url: String },
}

/// A destination as a write takes it (GitBook's `SiteRedirectInputDestination`): one of
/// [`Destination`]'s, or a page named by its path in a space the site shows (`path`), which
/// the write stores as that page (`site-page`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(tag = "kind", deny_unknown_fields)]
#[schema(as = SiteRedirectInputDestination)]
pub enum DestinationInput {
    #[serde(rename = "site-section", rename_all = "camelCase")]
    SiteSection { site_section_id: String },
    #[serde(rename = "site-space", rename_all = "camelCase")]
    SiteSpace { site_space_id: String },
    #[serde(rename = "site-page", rename_all = "camelCase")]
    SitePage { site_space_id: String, page_id: String },
    #[serde(rename = "external")]
    External { url: String },
    #[serde(rename = "path", rename_all = "camelCase")]
    Path { space_id: String, path: String },
}

impl DestinationInput {
    /// The URL of an external destination, to check before a write.
    pub fn external_url(&self) -> Option<&str> {
        match self {
            DestinationInput::External { url } => Some(url),
            _ => None,
        }
    }
}

/// The head revision of a live space (None: no such space, or deleted).
fn head_tree(c: &mut dyn Conn, cache: &ContentCache, space_id: &str) -> StoreResult<Option<Arc<StoredTree>>> {
    let revision: Option<String> = c.query_scalar(
        "SELECT revision_id FROM spaces WHERE id = ?1 AND deleted_at IS NULL",
        params![space_id],
    )?;
    revision
        .map(|r| crate::content::store::load_tree(c, cache, space_id, &r))
        .transpose()
}

/// A destination as stored: a `path` becomes the page at that path in the first site space
/// showing the space; every kind is checked against the site (its sections, site spaces and
/// their spaces' pages).
fn destination(
    c: &mut dyn Conn,
    cache: &ContentCache,
    site_id: &str,
    input: &DestinationInput,
) -> StoreResult<Destination> {
    let tree = model::load_structure(c, site_id)?;
    let invalid = |m: String| Err(StoreError::invalid(m));
    match input {
        DestinationInput::External { url } => Ok(Destination::External { url: url.clone() }),
        DestinationInput::SiteSection { site_section_id } => match tree.section(site_section_id) {
            Some(_) => Ok(Destination::SiteSection {
                site_section_id: site_section_id.clone(),
            }),
            None => invalid(format!(
                "`destination.siteSectionId` {site_section_id:?} is not a section of this site"
            )),
        },
        DestinationInput::SiteSpace { site_space_id } => match tree.site_space(site_space_id) {
            Some(_) => Ok(Destination::SiteSpace {
                site_space_id: site_space_id.clone(),
            }),
            None => invalid(format!(
                "`destination.siteSpaceId` {site_space_id:?} is not a site space of this site"
            )),
        },
        DestinationInput::SitePage {
            site_space_id,
            page_id,
        } => {
            let Some(ss) = tree.site_space(site_space_id) else {
                return invalid(format!(
                    "`destination.siteSpaceId` {site_space_id:?} is not a site space of this site"
                ));
            };
            let known = head_tree(c, cache, &ss.space_id)?.is_some_and(|t| t.index().path(page_id).is_some());
            if !known {
                return invalid(format!(
                    "`destination.pageId` {page_id:?} is not a page of that site space's space"
                ));
            }
            Ok(Destination::SitePage {
                site_space_id: site_space_id.clone(),
                page_id: page_id.clone(),
            })
        }
        DestinationInput::Path { space_id, path } => {
            let Some(ss) = tree.site_spaces.iter().find(|ss| &ss.space_id == space_id) else {
                return invalid(format!(
                    "`destination.spaceId` {space_id:?} is not a space this site shows"
                ));
            };
            let page =
                head_tree(c, cache, space_id)?.and_then(|t| t.index().by_path(path).map(str::to_string));
            match page {
                Some(page_id) => Ok(Destination::SitePage {
                    site_space_id: ss.id.clone(),
                    page_id,
                }),
                None => invalid(format!("`destination.path` {path:?} is not a page of that space")),
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Redirect {
    pub id: String,
    pub source: String,
    pub destination: Destination,
    pub permanent: bool,
    pub capture_wildcard: bool,
    pub created_at: i64,
    pub updated_at: Option<i64>,
}

crate::columns! {
    /// The columns [`Redirect::from_row`] reads.
    pub struct RedirectCols of "site_redirects" {
        id: "id",
        source: "source",
        destination: "destination",
        permanent: "permanent",
        capture_wildcard: "capture_wildcard",
        created_at: "created_at",
        updated_at: "updated_at",
    }
}

impl Redirect {
    fn from_row(row: &Row) -> Result<Redirect, DbError> {
        const R: RedirectCols = RedirectCols::AT;
        let id: String = row.col(R.id)?;
        let text: String = row.col(R.destination)?;
        let destination = serde_json::from_str(&text)
            .map_err(|e| DbError::stored(format_args!("destination of redirect {id:?}"), e))?;
        Ok(Redirect {
            id,
            source: row.col(R.source)?,
            destination,
            permanent: row.col(R.permanent)?,
            capture_wildcard: row.col(R.capture_wildcard)?,
            created_at: row.col(R.created_at)?,
            updated_at: row.col(R.updated_at)?,
        })
    }
}

/// A source path: GitBook's pattern (`/` then segments of unreserved characters or `%XX`
/// escapes, a `*` only at the very end, as `/*` or `*`), at most 512 characters. `wildcard`
/// allows the trailing `*` (sources of redirects; not paths being resolved).
pub fn check_source(field: &str, value: &str, wildcard: bool) -> StoreResult<()> {
    let refused = || {
        StoreError::invalid(format!(
            "`{field}` must be a path such as /docs/old or /docs/* (letters, digits, -._~+ and %XX escapes; `*` only at the end), not {value:?}"
        ))
    };
    if value.len() > SOURCE_MAX {
        return Err(refused());
    }
    let Some(rest) = value.strip_prefix('/') else {
        return Err(refused());
    };
    let rest = match rest.strip_suffix("/*") {
        Some(r) if wildcard => r,
        _ => match rest.strip_suffix('*') {
            Some(r) if wildcard => r,
            _ => rest,
        },
    };
    let segment_ok = |s: &str| {
        let bytes = s.as_bytes();
        let mut i = 0;
        if bytes.is_empty() {
            return false;
        }
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_alphanumeric() || b"-._~+".contains(&b) {
                i += 1;
            } else if b == b'%'
                && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            {
                i += 3;
            } else {
                return false;
            }
        }
        true
    };
    if !rest.split('/').all(segment_ok) {
        return Err(refused());
    }
    Ok(())
}

fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("redirect {id:?} not found"))
}

fn load(c: &mut dyn Conn, site_id: &str, id: &str) -> StoreResult<Redirect> {
    c.query_opt(
        &format!(
            "SELECT {} FROM site_redirects WHERE id = ?1 AND site_id = ?2",
            RedirectCols::SQL
        ),
        params![id, site_id],
    )?
    .map(|r| Redirect::from_row(&r))
    .transpose()?
    .ok_or_else(|| not_found(id))
}

/// A redirect of the site.
pub fn get(c: &mut dyn Conn, site: &SiteFor, id: &str) -> StoreResult<Redirect> {
    load(c, &site.site.id, id)
}

/// The redirects of a site, oldest first.
/// How a list of redirects is ordered (GitBook's `orderBy`); None: oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OrderBy {
    /// The most recently created first.
    CreatedAt,
    /// The most recently updated first (created, for one never updated).
    UpdatedAt,
    /// By source path, alphabetically (in the database's collation).
    Source,
}

/// Which redirects a list shows: those whose source contains `search` (case-insensitive); the
/// draft ones (`draft`: true), of which quire keeps none (every redirect is live), or the live
/// ones.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub search: Option<String>,
    pub order: Option<OrderBy>,
    pub draft: Option<bool>,
}

pub fn list(
    c: &mut dyn Conn,
    site: &SiteFor,
    filters: &Filters,
    paging: &Paging,
) -> StoreResult<List<Redirect>> {
    let scope = format!(
        "site-redirects:{}:{:?}:{:?}:{}",
        site.site.id,
        filters.order,
        filters.draft,
        filters.search.as_deref().unwrap_or_default()
    );
    let page = Page::new(paging, scope)?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE site_id = {}", args.arg(site.site.id.clone()));
    if let Some(search) = filters.search.as_deref().filter(|s| !s.is_empty()) {
        let pattern = args.arg(crate::db::like_contains(&search.to_lowercase()));
        filter += &format!(" AND lower(source) LIKE {pattern} ESCAPE '\\'");
    }
    if filters.draft == Some(true) {
        filter += " AND 1 = 0";
    }
    let table = ("site_redirects", RedirectCols::SQL);
    let filter = (filter, args);
    match filters.order {
        None => paging::by_creation(c, &page, table, filter, Redirect::from_row, |r| {
            (r.created_at, r.id.clone())
        }),
        Some(OrderBy::CreatedAt) => {
            let order = KeyOrder::descending("created_at");
            paging::by_key(c, &page, table, filter, &order, Redirect::from_row, |r| {
                (r.created_at, r.id.clone())
            })
        }
        Some(OrderBy::UpdatedAt) => {
            let order = KeyOrder::descending("COALESCE(updated_at, created_at)");
            paging::by_key(c, &page, table, filter, &order, Redirect::from_row, |r| {
                (r.updated_at.unwrap_or(r.created_at), r.id.clone())
            })
        }
        Some(OrderBy::Source) => {
            let order = KeyOrder::ascending("source");
            paging::by_key(c, &page, table, filter, &order, Redirect::from_row, |r| {
                (r.source.clone(), r.id.clone())
            })
        }
    }
}

fn taken(source: &str) -> StoreError {
    StoreError::conflict(format!("the site has a redirect from {source:?} already"))
}

/// A new redirect, checked already.
#[derive(Clone, Debug)]
pub struct NewRedirect {
    pub source: String,
    pub destination: DestinationInput,
    pub permanent: bool,
    pub capture_wildcard: bool,
}

pub fn create(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    cache: &ContentCache,
    new: &NewRedirect,
) -> StoreResult<Redirect> {
    let site_id = site.site.id.clone();
    let destination = destination(c, cache, &site_id, &new.destination)?;
    let id = ids::new_id();
    let destination = serde_json::to_string(&destination)
        .map_err(|e| StoreError::internal(format!("cannot store a destination: {e}")))?;
    let inserted = c.execute(
        "INSERT INTO site_redirects (id, site_id, source, destination, permanent, capture_wildcard, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (site_id, source) DO NOTHING",
        params![
            id.clone(),
            site_id.clone(),
            new.source.clone(),
            destination,
            new.permanent,
            new.capture_wildcard,
            clock::now_ms()
        ],
    )?;
    if inserted == 0 {
        return Err(taken(&new.source));
    }
    load(c, &site_id, &id)
}

/// The changes of an update (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub source: Option<String>,
    pub destination: Option<DestinationInput>,
    pub permanent: Option<bool>,
    pub capture_wildcard: Option<bool>,
}

pub fn update(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    cache: &ContentCache,
    id: &str,
    changes: &Changes,
) -> StoreResult<Redirect> {
    let site_id = site.site.id.clone();
    let mut next = load(c, &site_id, id)?;
    if let Some(s) = &changes.source {
        if s != &next.source
            && c.exists(
                "SELECT 1 FROM site_redirects WHERE site_id = ?1 AND source = ?2",
                params![site_id.clone(), s.clone()],
            )?
        {
            return Err(taken(s));
        }
        next.source = s.clone();
    }
    if let Some(d) = &changes.destination {
        next.destination = destination(c, cache, &site_id, d)?;
    }
    if let Some(p) = changes.permanent {
        next.permanent = p;
    }
    if let Some(w) = changes.capture_wildcard {
        next.capture_wildcard = w;
    }
    let destination = serde_json::to_string(&next.destination)
        .map_err(|e| StoreError::internal(format!("cannot store a destination: {e}")))?;
    c.execute(
        "UPDATE site_redirects SET source = ?2, destination = ?3, permanent = ?4, capture_wildcard = ?5,
             updated_at = ?6
         WHERE id = ?1",
        params![
            id,
            next.source.clone(),
            destination,
            next.permanent,
            next.capture_wildcard,
            clock::now_ms()
        ],
    )?;
    load(c, &site_id, id)
}

/// Deletes a redirect (nothing when absent).
/// What a bulk write did to one source.
#[derive(Clone, Debug)]
pub enum Upserted {
    Created(Redirect),
    Updated(Redirect),
    Deleted,
}

/// Sets the redirect from `source` (made when the site has none from it), or removes it when
/// `destination` is None (404 when there is none to remove). GitBook's bulk write, one source.
pub fn upsert(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    cache: &ContentCache,
    source: &str,
    destination: Option<&DestinationInput>,
    permanent: Option<bool>,
    capture_wildcard: bool,
) -> StoreResult<Upserted> {
    let site_id = site.site.id.clone();
    let existing: Option<String> = c.query_scalar(
        "SELECT id FROM site_redirects WHERE site_id = ?1 AND source = ?2",
        params![site_id.clone(), source],
    )?;
    match (existing, destination) {
        (Some(id), None) => {
            delete(c, site, &id)?;
            Ok(Upserted::Deleted)
        }
        (None, None) => Err(StoreError::not_found(format!(
            "the site has no redirect from {source:?}"
        ))),
        (Some(id), Some(d)) => {
            let changes = Changes {
                source: None,
                destination: Some(d.clone()),
                permanent,
                capture_wildcard: Some(capture_wildcard),
            };
            update(c, site, cache, &id, &changes).map(Upserted::Updated)
        }
        (None, Some(d)) => {
            let new = NewRedirect {
                source: source.to_string(),
                destination: d.clone(),
                permanent: permanent.unwrap_or(false),
                capture_wildcard,
            };
            create(c, site, cache, &new).map(Upserted::Created)
        }
    }
}

pub fn delete(c: &mut dyn Conn, site: &Authorized<SiteFor, site::Manage>, id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM site_redirects WHERE id = ?1 AND site_id = ?2",
        params![id, site.site.id.clone()],
    )?;
    Ok(())
}

/// Where a resolved redirect leads: a path under the site's published URL, or a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    SitePath(String),
    Url(String),
}

/// The redirect `path` follows, with its target (the wildcard's suffix appended when the
/// redirect captures it); 404 when none matches or its destination is gone.
pub fn resolve(
    c: &mut dyn Conn,
    cache: &ContentCache,
    site: &SiteFor,
    path: &str,
) -> StoreResult<(Redirect, Target)> {
    resolve_in(c, cache, &site.site, path)
}

/// [`resolve`] for a visitor of the published site (GitBook's renderer follows its redirects).
pub fn resolve_published(
    c: &mut dyn Conn,
    cache: &ContentCache,
    published: &super::published::Published,
    path: &str,
) -> StoreResult<(Redirect, Target)> {
    resolve_in(c, cache, &published.site, path)
}

fn resolve_in(
    c: &mut dyn Conn,
    cache: &ContentCache,
    site: &super::Site,
    path: &str,
) -> StoreResult<(Redirect, Target)> {
    let none = || StoreError::not_found(format!("no redirect of site {:?} matches {path:?}", site.id));
    let all: Vec<Redirect> = c
        .query(
            &format!(
                "SELECT {} FROM site_redirects WHERE site_id = ?1",
                RedirectCols::SQL
            ),
            params![site.id.clone()],
        )?
        .iter()
        .map(Redirect::from_row)
        .collect::<Result<_, _>>()?;
    let exact = all.iter().find(|r| r.source == path).map(|r| (r, ""));
    let found = exact.or_else(|| {
        all.iter()
            .filter_map(|r| {
                let prefix = r.source.strip_suffix('*')?;
                let suffix = path.strip_prefix(prefix)?;
                Some((r, prefix.len(), suffix))
            })
            .max_by_key(|(_, len, _)| *len)
            .map(|(r, _, suffix)| (r, suffix))
    });
    let (redirect, suffix) = found.ok_or_else(none)?;
    let suffix = if redirect.capture_wildcard { suffix } else { "" };
    let join = |base: String| {
        if suffix.is_empty() {
            base
        } else {
            format!(
                "{}/{}",
                base.trim_end_matches('/'),
                suffix.trim_start_matches('/')
            )
        }
    };
    let tree = model::load_structure(c, &site.id)?;
    let target = match &redirect.destination {
        Destination::External { url } => Target::Url(join(url.clone())),
        Destination::SiteSection { site_section_id } => {
            let section = tree.section(site_section_id).ok_or_else(none)?;
            Target::SitePath(join(section.path.clone()))
        }
        Destination::SiteSpace { site_space_id } => {
            let ss = tree.site_space(site_space_id).ok_or_else(none)?;
            Target::SitePath(join(site_space_path(&tree, ss)))
        }
        // A page gone since (or whose space went) leads nowhere.
        Destination::SitePage {
            site_space_id,
            page_id,
        } => {
            let ss = tree.site_space(site_space_id).ok_or_else(none)?;
            let pages = head_tree(c, cache, &ss.space_id)?.ok_or_else(none)?;
            let page = pages.index().path(page_id).ok_or_else(none)?;
            Target::SitePath(join(format!("{}/{page}", site_space_path(&tree, ss))))
        }
    };
    Ok((redirect.clone(), target))
}

/// Where a site space is under the site's root: `{section path}/{path}`, or `{path}`.
fn site_space_path(tree: &model::Structure, ss: &model::SiteSpace) -> String {
    match ss.section.as_deref().and_then(|s| tree.section(s)) {
        Some(section) => format!("{}/{}", section.path, ss.path),
        None => ss.path.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::check_source;

    #[test]
    fn sources_follow_the_pattern() {
        for ok in ["/a", "/docs/old", "/docs/*", "/docs*", "/a%20b/c.d~e+f"] {
            assert!(check_source("source", ok, true).is_ok(), "{ok}");
        }
        for bad in ["a", "/", "/*", "/a//b", "/a*b", "/a/*/b", "/a b", "/a%2"] {
            assert!(check_source("source", bad, true).is_err(), "{bad}");
        }
        assert!(check_source("source", "/docs/*", false).is_err());
    }
}
