//! Moving spaces and collections to another organization.
//!
//! Access that names people or teams of the source organization does not carry over: team grants
//! are dropped (teams belong to their organization), user grants are kept only for users who are
//! members or guests of the target organization, and invite links to the moved content are
//! deleted. See docs/decisions/0009-spaces-and-collections.md.

use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::orgs;
use crate::permissions::OrgAction;

/// Transfers need the caller to administer both organizations.
pub fn require_admin_of_both(c: &mut dyn Conn, source: &str, target: &str, user_id: &str) -> StoreResult<()> {
    if source == target {
        return Err(StoreError::invalid(
            "`organization` is the organization the content is already in",
        ));
    }
    orgs::load_visible(c, source, user_id)?.require(OrgAction::Admin)?;
    let target_org = orgs::load_visible(c, target, user_id).map_err(|_| {
        StoreError::invalid(format!(
            "`organization` {target:?} is not an organization you belong to"
        ))
    })?;
    if !target_org.allows(OrgAction::Admin) {
        return Err(crate::permissions::role_forbidden(
            "transferring into an organization",
            crate::permissions::Role::Admin,
            &format!("in organization {target:?}"),
            target_org.standing.role(),
        ));
    }
    Ok(())
}

/// Rewrites the grants on moved `targets` for the target organization.
pub fn move_access(c: &mut dyn Conn, target: &str, targets: &[String]) -> StoreResult<()> {
    if targets.is_empty() {
        return Ok(());
    }
    let mut args = Args::default();
    let list = args.list(targets.iter().cloned());
    let target_arg = args.arg(target);
    c.execute(
        &format!("DELETE FROM grants WHERE target_id IN ({list}) AND team_id IS NOT NULL"),
        &args.values()[..targets.len()],
    )?;
    c.execute(
        &format!(
            "DELETE FROM grants WHERE target_id IN ({list}) AND user_id IS NOT NULL
               AND user_id NOT IN (SELECT user_id FROM members WHERE organization_id = {target_arg})"
        ),
        args.values(),
    )?;
    c.execute(
        &format!("UPDATE grants SET organization_id = {target_arg} WHERE target_id IN ({list})"),
        args.values(),
    )?;
    c.execute(
        &format!("DELETE FROM invite_links WHERE target_id IN ({list})"),
        &args.values()[..targets.len()],
    )?;
    Ok(())
}
