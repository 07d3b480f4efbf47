//! Share links of a site: each mints a key, which `published` accepts as `shareKey` for a
//! share-link site while the link exists and is active. Deleting or deactivating a link revokes
//! its key at once (the published view is read again once the database has changed).

use super::model::SiteFor;
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::paging::{self, List, Page, Paging};
use crate::permissions::{Authorized, site};
use crate::{clock, ids, params};

pub const NAME_MAX: usize = 50;
/// Characters of a share key (base62, about 190 bits).
const KEY_CHARS: usize = 32;

#[derive(Clone, Debug)]
pub struct ShareLink {
    pub id: String,
    pub site_id: String,
    pub key: String,
    pub name: String,
    pub active: bool,
    pub created_at: i64,
}

crate::columns! {
    /// The columns [`ShareLink::from_row`] reads.
    pub struct ShareLinkCols of "site_share_links" {
        id: "id",
        site_id: "site_id",
        key: "share_key",
        name: "name",
        active: "active",
        created_at: "created_at",
    }
}

impl ShareLink {
    fn from_row(row: &Row) -> Result<ShareLink, DbError> {
        const L: ShareLinkCols = ShareLinkCols::AT;
        Ok(ShareLink {
            id: row.col(L.id)?,
            site_id: row.col(L.site_id)?,
            key: row.col(L.key)?,
            name: row.col(L.name)?,
            active: row.col(L.active)?,
            created_at: row.col(L.created_at)?,
        })
    }
}

fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("share link {id:?} not found"))
}

fn load(c: &mut dyn Conn, site_id: &str, id: &str) -> StoreResult<ShareLink> {
    c.query_opt(
        &format!(
            "SELECT {} FROM site_share_links WHERE id = ?1 AND site_id = ?2",
            ShareLinkCols::SQL
        ),
        params![id, site_id],
    )?
    .map(|r| ShareLink::from_row(&r))
    .transpose()?
    .ok_or_else(|| not_found(id))
}

/// The share links of a site, oldest first.
pub fn list(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    search: Option<&str>,
    paging: &Paging,
) -> StoreResult<List<ShareLink>> {
    let search = search.filter(|s| !s.is_empty());
    let scope = format!("site-share-links:{}:{}", site.site.id, search.unwrap_or_default());
    let page = Page::new(paging, scope)?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE site_id = {}", args.arg(site.site.id.clone()));
    // GitBook's search: by name or key, case-insensitive.
    if let Some(search) = search {
        let pattern = args.arg(crate::db::like_contains(&search.to_lowercase()));
        filter += &format!(
            " AND (lower(name) LIKE {pattern} ESCAPE '\\' OR lower(share_key) LIKE {pattern} ESCAPE '\\')"
        );
    }
    paging::by_creation(
        c,
        &page,
        ("site_share_links", ShareLinkCols::SQL),
        (filter, args),
        ShareLink::from_row,
        |l| (l.created_at, l.id.clone()),
    )
}

pub fn create(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    name: &str,
) -> StoreResult<ShareLink> {
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_share_links (id, site_id, share_key, name, active, created_at)
         VALUES (?1, ?2, ?3, ?4, 1, ?5)",
        params![
            id.clone(),
            site.site.id.clone(),
            ids::random_base62(KEY_CHARS),
            name,
            clock::now_ms()
        ],
    )?;
    load(c, &site.site.id, &id)
}

/// Renames a link or (de)activates it.
pub fn update(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    id: &str,
    name: Option<&str>,
    active: Option<bool>,
) -> StoreResult<ShareLink> {
    let mut link = load(c, &site.site.id, id)?;
    if let Some(n) = name {
        link.name = n.to_string();
    }
    if let Some(a) = active {
        link.active = a;
    }
    c.execute(
        "UPDATE site_share_links SET name = ?2, active = ?3 WHERE id = ?1",
        params![id, link.name.clone(), link.active],
    )?;
    Ok(link)
}

/// Deletes a link (nothing when absent): its key no longer opens the site.
pub fn delete(c: &mut dyn Conn, site: &Authorized<SiteFor, site::Manage>, id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM site_share_links WHERE id = ?1 AND site_id = ?2",
        params![id, site.site.id.clone()],
    )?;
    Ok(())
}

/// The keys of a site's active links.
pub(crate) fn active_keys(c: &mut dyn Conn, site_id: &str) -> StoreResult<Vec<String>> {
    Ok(c.query(
        "SELECT share_key FROM site_share_links WHERE site_id = ?1 AND active = 1",
        params![site_id],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect::<Result<_, _>>()?)
}
