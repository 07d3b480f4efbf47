//! Joining an organization through its email domains, and finding organizations by domain.

use super::model::{self, OrgFor};
use crate::auth::Caller;
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::permissions::Role;
use crate::{clock, params};

/// The domain of the caller's email, when it is verified.
fn verified_domain(c: &mut dyn Conn, caller: &Caller) -> StoreResult<Option<String>> {
    let verified: bool = c
        .query_scalar(
            "SELECT email_verified FROM users WHERE id = ?1",
            params![caller.user_id.clone()],
        )?
        .unwrap_or(false);
    Ok(verified
        .then(|| caller.email.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase()))
        .flatten())
}

/// Makes the caller a member of `org_id`, with its default role, if the organization lists the
/// caller's verified email domain (nothing when they are a member already).
pub fn join(c: &mut dyn Conn, caller: &Caller, org_id: &str) -> StoreResult<()> {
    let org = model::load_for(c, org_id, &caller.user_id)?
        .ok_or_else(|| StoreError::not_found(format!("organization {org_id:?} not found")))?;
    if org.standing.is_member() {
        return Ok(());
    }
    // An organization is visible to a stranger only through a verified email domain it
    // lists (as in `for_domain`); to anyone else it does not exist, whatever the reason, so
    // that a known id does not tell whether the organization exists.
    let not_found = || StoreError::not_found(format!("organization {org_id:?} not found"));
    let domain = verified_domain(c, caller)?.ok_or_else(not_found)?;
    if !org.org.email_domains.contains(&domain) {
        return Err(not_found());
    }
    let joined = c.execute(
        "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (organization_id, user_id) DO NOTHING",
        params![
            org_id,
            caller.user_id.clone(),
            org.org.default_role.map(Role::as_str),
            clock::now_ms()
        ],
    )?;
    if joined > 0 {
        crate::members::added(c, org_id, &caller.user_id, org.org.default_role, &caller.user_id)?;
    }
    Ok(())
}

/// Organizations that list `domain` (checked already) and that the caller belongs to or may
/// join (its own verified domain): other callers cannot enumerate a domain's organizations.
pub fn for_domain(c: &mut dyn Conn, caller: &Caller, domain: &str) -> StoreResult<Vec<OrgFor>> {
    let own = verified_domain(c, caller)?;
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
