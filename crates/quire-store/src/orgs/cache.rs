//! Organizations with the caller's standing and the inputs of their access to its spaces and
//! collections, kept in memory while the database has not changed (`stamped`): a page of an
//! organization's spaces read both before anything else, three of its five statements on
//! PostgreSQL.

use super::model::{self, OrgFor};
use crate::access::AccessContext;
use crate::db::{Db, DbError};
use crate::error::StoreResult;
use crate::permissions::OrgAction;
use crate::stamped::StampedCache;

/// An organization as the caller stands in it.
#[derive(Clone, Debug)]
pub struct OrgAccess {
    pub org: OrgFor,
    pub access: AccessContext,
}

pub struct OrgCache {
    /// By (organization id, user id).
    pub(crate) entries: StampedCache<(String, String), OrgAccess>,
}

impl Default for OrgCache {
    fn default() -> Self {
        OrgCache {
            // An entry holds every collection of its organization.
            entries: StampedCache::new(1_000),
        }
    }
}

impl OrgCache {
    /// As [`model::load_visible`], with [`AccessContext::for_org`].
    pub async fn load_visible(&self, db: &Db, org_id: &str, user_id: &str) -> StoreResult<OrgAccess> {
        let key = (org_id.to_string(), user_id.to_string());
        let (org, user) = key.clone();
        let found = self
            .entries
            .get_or_read(db, key, move |c| {
                let Some(loaded) = model::load_for(c, &org, &user)? else {
                    return Ok(None);
                };
                let access = AccessContext::for_org(c, &org, &user, loaded.standing)?;
                Ok::<_, DbError>(Some(OrgAccess { org: loaded, access }))
            })
            .await?;
        match found {
            Some(found) if found.org.allows(OrgAction::View) => Ok(found),
            _ => Err(model::not_found(org_id)),
        }
    }
}
