//! Customization of a site and of its site spaces: a validated subset of GitBook's
//! `SiteCustomizationSettings` (title, styling, header and footer links with logos, an
//! announcement, the theme), stored as given (JSON) and answered back with `updatedAt`.
//! The shape is checked by the API's types; what types cannot say is checked here.

use super::model::SiteFor;
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Authorized, site};
use crate::{clock, params};

/// A customization as stored: the JSON and when it was set (None: never set).
#[derive(Clone, Debug, Default)]
pub struct Stored {
    pub json: Option<serde_json::Value>,
    pub updated_at: Option<i64>,
}

fn parse(site_id: &str, text: Option<&str>) -> StoreResult<Option<serde_json::Value>> {
    text.map(|t| {
        serde_json::from_str(t)
            .map_err(|e| StoreError::internal(format!("stored customization of site {site_id:?}: {e}")))
    })
    .transpose()
}

/// The site's customization.
pub fn of_site(site: &SiteFor) -> StoreResult<Stored> {
    Ok(Stored {
        json: parse(&site.site.id, site.site.customization.as_deref())?,
        updated_at: site.site.customization_updated_at,
    })
}

/// Replaces the site's customization.
pub fn set_site(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    json: &serde_json::Value,
) -> StoreResult<Stored> {
    let now = clock::now_ms();
    c.execute(
        "UPDATE sites SET customization = ?2, customization_updated_at = ?3, updated_at = ?3 WHERE id = ?1",
        params![site.site.id.clone(), json.to_string(), now],
    )?;
    Ok(Stored {
        json: Some(json.clone()),
        updated_at: Some(now),
    })
}

fn site_space_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("site space {id:?} not found"))
}

/// A site space's own customization (over the site's).
pub fn of_site_space(c: &mut dyn Conn, site: &SiteFor, site_space: &str) -> StoreResult<Stored> {
    let row = c
        .query_opt(
            "SELECT customization, customization_updated_at FROM site_spaces WHERE id = ?1 AND site_id = ?2",
            params![site_space, site.site.id.clone()],
        )?
        .ok_or_else(|| site_space_not_found(site_space))?;
    let text: Option<String> = row.get(0)?;
    Ok(Stored {
        json: parse(&site.site.id, text.as_deref())?,
        updated_at: row.get(1)?,
    })
}

/// Replaces a site space's customization.
pub fn set_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    site_space: &str,
    json: &serde_json::Value,
) -> StoreResult<Stored> {
    let now = clock::now_ms();
    let changed = c.execute(
        "UPDATE site_spaces SET customization = ?3, customization_updated_at = ?4 WHERE id = ?1 AND site_id = ?2",
        params![site_space, site.site.id.clone(), json.to_string(), now],
    )?;
    if changed == 0 {
        return Err(site_space_not_found(site_space));
    }
    Ok(Stored {
        json: Some(json.clone()),
        updated_at: Some(now),
    })
}
