//! The organizations of an email domain (joining one by its domain is `members::join_by_domain`).

use super::model::{self, OrgFor};
use crate::auth::Caller;
use crate::db::{Args, Conn};
use crate::error::StoreResult;

/// Organizations that list `domain` (checked already) and that the caller belongs to or may
/// join (its own verified domain): other callers cannot enumerate a domain's organizations.
pub fn for_domain(c: &mut dyn Conn, caller: &Caller, domain: &str) -> StoreResult<Vec<OrgFor>> {
    let own = crate::users::verified_domain(c, &caller.user_id, &caller.email)?;
    let mut args = Args::default();
    let me = args.arg(&caller.user_id);
    let sql = format!(
        "{} JOIN organization_email_domains d ON d.organization_id = o.id
         WHERE d.domain = {} AND (m.user_id IS NOT NULL OR {} = 1)
         ORDER BY o.created_at, o.id LIMIT 1000",
        model::select_for(&me),
        args.arg(domain),
        args.arg(own.as_deref() == Some(domain)),
    );
    let rows = c.query(&sql, args.values())?;
    Ok(rows.iter().map(OrgFor::from_row).collect::<Result<Vec<_>, _>>()?)
}
