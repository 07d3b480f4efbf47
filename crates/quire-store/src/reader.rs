//! What the reader site (`quire-server`'s `reader`, rendered by `quire-reader`) reads besides a
//! site's published view (`sites::published`): which published site a request is about, by its
//! id, its `basename` or its custom `hostname`; the revisions and documents of its site spaces;
//! and search limited to the site spaces a visitor sees.

use std::sync::Arc;

use crate::content::store::{self, CachedDocument, ContentCache, StoredTree};
use crate::db::fulltext::FtsQuery;
use crate::db::{Conn, Db, Stamp};
use crate::error::StoreResult;
use crate::search::query::{self, PageMatch, Scope};
use crate::stamped::StampedCache;

/// How a request names a site.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SiteKey {
    /// `/s/{id or basename}/...`.
    Path(String),
    /// A request whose `Host` is the site's custom hostname.
    Host(String),
    /// `/s/{space id}/...`, the API's `urls.published` of a space and its pages: the oldest
    /// published site showing that space.
    Space(String),
    /// `/s/{site id}/...` with a valid preview token (`urls.preview`): the site published or
    /// not.
    Preview(String),
}

/// (organization id, site id).
pub type SiteRef = (String, String);

/// Which site a key names, kept while the database has not changed (absent answers too, so a
/// request on an unknown host costs no read).
pub struct ReaderCache {
    pub(crate) sites: StampedCache<SiteKey, Option<SiteRef>>,
}

impl Default for ReaderCache {
    fn default() -> Self {
        ReaderCache {
            sites: StampedCache::new(10_000),
        }
    }
}

impl ReaderCache {
    /// The published site a request names; None when none is published under that name.
    pub async fn find(&self, db: &Db, key: SiteKey) -> StoreResult<Option<SiteRef>> {
        self.find_at(db, db.stamp(), key).await
    }

    /// [`ReaderCache::find`] with a stamp taken before (see `StampedCache::get_or_read_at`).
    pub async fn find_at(&self, db: &Db, stamp: Option<Stamp>, key: SiteKey) -> StoreResult<Option<SiteRef>> {
        let lookup = key.clone();
        let found = self
            .sites
            .get_or_read_at(db, stamp, key, move |c| find(c, &lookup).map(Some))
            .await?;
        Ok(found.flatten())
    }
}

/// The published site a key names: by id first, else the site with that `basename` (the
/// oldest published one when several organizations use the same basename); by hostname, the
/// published site with that hostname (hostnames are unique); by space, the oldest published
/// site with a site space of it; for a preview, the site with that id, published or not.
pub fn find(c: &mut dyn Conn, key: &SiteKey) -> StoreResult<Option<SiteRef>> {
    let row = match key {
        SiteKey::Path(name) => {
            let by_id = c.query_opt(
                "SELECT organization_id, id FROM sites WHERE id = ?1 AND published = 1",
                crate::params![name.as_str()],
            )?;
            match by_id {
                Some(row) => Some(row),
                None => c.query_opt(
                    "SELECT organization_id, id FROM sites WHERE basename = ?1 AND published = 1
                     ORDER BY created_at, id LIMIT 1",
                    crate::params![name.as_str()],
                )?,
            }
        }
        SiteKey::Host(host) => c.query_opt(
            "SELECT organization_id, id FROM sites WHERE hostname = ?1 AND published = 1
             ORDER BY created_at, id LIMIT 1",
            crate::params![host.as_str()],
        )?,
        SiteKey::Preview(id) => c.query_opt(
            "SELECT organization_id, id FROM sites WHERE id = ?1",
            crate::params![id.as_str()],
        )?,
        SiteKey::Space(space) => c.query_opt(
            "SELECT s.organization_id, s.id FROM site_spaces ss JOIN sites s ON s.id = ss.site_id
             WHERE ss.space_id = ?1 AND s.published = 1
             ORDER BY s.created_at, s.id LIMIT 1",
            crate::params![space.as_str()],
        )?,
    };
    match row {
        Some(row) => Ok(Some((row.get(0)?, row.get(1)?))),
        None => Ok(None),
    }
}

/// A revision of a space a published site shows (revisions are immutable: cached forever).
pub fn load_tree(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    revision: &str,
) -> StoreResult<Arc<StoredTree>> {
    store::load_tree(c, cache, space_id, revision)
}

/// A page's document by its content hash.
pub fn load_document(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hash: &str,
) -> StoreResult<Arc<CachedDocument>> {
    store::shared_document(c, cache, space_id, hash)
}

/// The pages of `spaces` (the spaces of the site spaces a visitor sees) that match, at most
/// `limit` per space: pages whose own fields match first, then by rank within their space.
pub fn search(
    c: &mut dyn Conn,
    fts: &FtsQuery,
    spaces: &[String],
    limit: i64,
) -> StoreResult<Vec<PageMatch>> {
    let mut all = Vec::new();
    if fts.words.is_empty() {
        return Ok(all);
    }
    for space in spaces {
        let (matches, _) = query::search(c, fts, &Scope::Space(space), None, limit)?;
        all.extend(matches);
    }
    all.sort_by(|a, b| b.title_match.cmp(&a.title_match).then(a.rank.cmp(&b.rank)));
    Ok(all)
}

/// Where a path that names no page is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redirected {
    /// By a redirect of the site: its target, and whether permanently.
    Site(crate::sites::redirects::Target, bool),
    /// By a redirect the space's import declared: the page of the site space's space (the
    /// caller checks the revision it serves still has it).
    ImportedPage(String),
}

/// Where a path that names no page is sent: the site's redirects first (they are the site's
/// managers' word), else the imported redirects of the space of the site space the path is in
/// (`within`: its space id and the rest of the path below the site space's URL). None when
/// neither has one.
pub fn redirect_or_imported(
    c: &mut dyn Conn,
    cache: &ContentCache,
    site: &crate::sites::Site,
    from_root: &str,
    within: Option<(&str, &str)>,
) -> StoreResult<Option<Redirected>> {
    if let Some((target, permanent)) = redirect(c, cache, site, from_root)? {
        return Ok(Some(Redirected::Site(target, permanent)));
    }
    let Some((space_id, path)) = within else {
        return Ok(None);
    };
    Ok(crate::import::redirects::page_for(c, space_id, path)?.map(Redirected::ImportedPage))
}

/// Where a site's redirects send `path` (a path from the site's root, `/docs/old`), and
/// whether permanently; None when no redirect matches (or its destination is gone).
pub fn redirect(
    c: &mut dyn Conn,
    cache: &ContentCache,
    site: &crate::sites::Site,
    path: &str,
) -> StoreResult<Option<(crate::sites::redirects::Target, bool)>> {
    let site = crate::sites::model::SiteFor::listed(site.clone(), crate::permissions::Standing::Outsider);
    match crate::sites::redirects::resolve(c, cache, &site, path) {
        Ok((redirect, target)) => Ok(Some((target, redirect.permanent))),
        Err(e) if e.kind == crate::error::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}
