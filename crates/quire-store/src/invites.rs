//! Invite links: a secret link that lets whoever follows it join an organization with a role, or
//! get a level of access to one space or collection (joining the organization as a guest).

use crate::collections::{self, Collection};
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::members;
use crate::orgs::{self, OrgFor};
use crate::paging::{List, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, CollectionAction, OrgAction, Role, SpaceAction, Standing, org};
use crate::spaces::{self, Space};
use crate::{clock, ids, params};

/// Invite ids are the secret of the link: longer than other ids.
fn new_invite_id() -> String {
    ids::random_base62(32)
}

#[derive(Clone, Debug)]
pub struct Invite {
    pub id: String,
    pub org_id: String,
    /// `organization`, `space` or `collection`.
    pub target_kind: String,
    pub target_id: Option<String>,
    pub role: Option<Role>,
}

crate::columns! {
    /// The columns [`Invite::from_row`] reads.
    struct InviteCols of "invite_links" {
        id: "id",
        org_id: "organization_id",
        target_kind: "target_kind",
        target_id: "target_id",
        role: "role",
        created_at: "created_at",
    }
}

const COLUMNS: &str = InviteCols::SQL;
const C: InviteCols = InviteCols::AT;

impl Invite {
    fn from_row(row: &Row) -> Result<Invite, DbError> {
        Ok(Invite {
            id: row.col(C.id)?,
            org_id: row.col(C.org_id)?,
            target_kind: row.col(C.target_kind)?,
            target_id: row.col(C.target_id)?,
            role: row.col(C.role)?,
        })
    }
}

fn load(c: &mut dyn Conn, org_id: &str, invite_id: &str) -> StoreResult<Invite> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM invite_links WHERE id = ?1 AND organization_id = ?2"),
        params![invite_id, org_id],
    )?
    .map(|r| Invite::from_row(&r))
    .transpose()?
    .ok_or_else(|| StoreError::not_found(format!("invite {invite_id:?} not found")))
}

/// An invite as its caller sees it: whether it gives them nothing they lack (`redundant`), and
/// what it opens, shown with the role it gives.
#[derive(Clone, Debug)]
pub struct InviteView {
    pub invite: Invite,
    pub redundant: bool,
    pub opens: Opens,
}

/// What an invite opens.
#[derive(Clone, Debug)]
pub enum Opens {
    Organization,
    /// A space, with the role the caller will have on it once they follow the link.
    Space(Space, Option<Role>),
    /// A collection, likewise.
    Collection(Collection, Option<Role>),
}

/// An invite as `caller` sees it.
fn view(c: &mut dyn Conn, invite: &Invite, caller: &str) -> StoreResult<InviteView> {
    let standing = orgs::load_for(c, &invite.org_id, caller)?.map_or(Standing::Outsider, |o| o.standing);
    let (redundant, opens) = match (invite.target_kind.as_str(), &invite.target_id) {
        ("space", Some(id)) => {
            let space = spaces::load_for(c, id, caller)?.ok_or_else(|| spaces::not_found(id))?;
            // The invitee may not see the space yet: it is shown as the link will make it.
            let role = space.role.max(invite.role);
            (space.role >= invite.role, Opens::Space(space.space, role))
        }
        ("collection", Some(id)) => {
            let col = collections::load_for(c, id, caller)?.ok_or_else(|| collections::not_found(id))?;
            let role = col.role.max(invite.role);
            (col.role >= invite.role, Opens::Collection(col.collection, role))
        }
        _ => {
            let redundant = match standing {
                Standing::Outsider => false,
                Standing::Guest => invite.role.is_none(),
                Standing::Member(r) => invite.role.is_none_or(|want| r >= want),
            };
            (redundant, Opens::Organization)
        }
    };
    Ok(InviteView {
        invite: invite.clone(),
        redundant,
        opens,
    })
}

/// Who may manage an invite: organization admins, and admins of the space or collection it
/// opens.
fn require_manage(c: &mut dyn Conn, org: &OrgFor, invite: &Invite, caller: &str) -> StoreResult<()> {
    let (allowed, role, place) = match (invite.target_kind.as_str(), &invite.target_id) {
        ("space", Some(id)) => {
            let space = spaces::load_for(c, id, caller)?;
            let allowed = space.as_ref().is_some_and(|s| s.allows(SpaceAction::Admin));
            (allowed, space.and_then(|s| s.role), format!("on space {id:?}"))
        }
        ("collection", Some(id)) => {
            let col = collections::load_for(c, id, caller)?;
            let allowed = col
                .as_ref()
                .is_some_and(|col| col.allows(CollectionAction::Admin));
            (
                allowed,
                col.and_then(|col| col.role),
                format!("on collection {id:?}"),
            )
        }
        _ => (
            org.allows(OrgAction::Admin),
            org.standing.role(),
            format!("in organization {:?}", org.org.id),
        ),
    };
    if !allowed {
        return Err(crate::permissions::role_forbidden(
            "managing an invite link",
            Role::Admin,
            &place,
            role,
        ));
    }
    Ok(())
}

/// The organization invites of an organization, oldest first.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    paging: &Paging,
) -> StoreResult<List<InviteView>> {
    let page = Page::new(paging, format!("invites:{}", org.org.id))?;
    let mut args = Args::default();
    let filter = format!(
        " WHERE organization_id = {} AND target_kind = 'organization'",
        args.arg(&org.org.id)
    );
    let list = crate::paging::by_creation(
        c,
        &page,
        ("invite_links", COLUMNS),
        (filter, args),
        |r| Ok((Invite::from_row(r)?, r.col::<i64>(C.created_at)?)),
        |(i, created)| (*created, i.id.clone()),
    )?;
    let mut items = Vec::with_capacity(list.items.len());
    for (invite, _) in &list.items {
        items.push(view(c, invite, caller)?);
    }
    Ok(List {
        next: list.next,
        count: list.count,
        items,
    })
}

/// A `role` or `level` of an invite body: required, a role or null.
pub fn role_field(field: &str, value: &Patch<String>) -> StoreResult<Option<Role>> {
    match value {
        Patch::Absent => Err(StoreError::invalid(format!("`{field}` is required"))),
        Patch::Null => Ok(None),
        Patch::Value(r) => Ok(Some(Role::parse_field(field, r)?)),
    }
}

/// A new invite: what it opens (`organization`, `space` or `collection`, with the target's id)
/// and the role it gives.
#[derive(Clone, Debug)]
pub struct NewInvite {
    pub kind: &'static str,
    pub target: Option<String>,
    pub role: Option<Role>,
}

/// Creates an invite link of `org_id`, which the caller may manage.
pub fn create(c: &mut dyn Conn, caller: &str, org_id: &str, new: &NewInvite) -> StoreResult<InviteView> {
    let NewInvite { kind, target, role } = new;
    let org = orgs::load_visible(c, org_id, caller)?;
    if !org.org.invite_links {
        return Err(StoreError::invalid(
            "invite links are turned off for this organization (`inviteLinks`)",
        ));
    }
    if let Some(t) = target {
        let in_org: Option<String> = c.query_scalar(
            &format!("SELECT organization_id FROM {}s WHERE id = ?1", kind),
            params![t.clone()],
        )?;
        if in_org.as_deref() != Some(org_id) {
            return Err(StoreError::invalid(format!(
                "`{kind}` {t:?} is not in this organization"
            )));
        }
    }
    let invite = Invite {
        id: new_invite_id(),
        org_id: org_id.to_string(),
        target_kind: kind.to_string(),
        target_id: target.clone(),
        role: *role,
    };
    require_manage(c, &org, &invite, caller)?;
    c.execute(
        "INSERT INTO invite_links (id, organization_id, target_kind, target_id, role, created_by, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            invite.id.clone(),
            org_id,
            *kind,
            target.clone(),
            role.map(Role::as_str),
            caller,
            clock::now_ms()
        ],
    )?;
    view(c, &invite, caller)
}

/// An invite: anyone holding its id may read it, the id being the secret the link carries.
pub fn get(c: &mut dyn Conn, caller: &str, org_id: &str, invite_id: &str) -> StoreResult<InviteView> {
    let invite = load(c, org_id, invite_id)?;
    view(c, &invite, caller)
}

/// Changes the role (`role` of an organization invite, `level` of a space or collection one)
/// an invite gives; the caller may manage it.
pub fn update(
    c: &mut dyn Conn,
    caller: &str,
    org_id: &str,
    invite_id: &str,
    role: &Patch<String>,
    level: &Patch<String>,
) -> StoreResult<InviteView> {
    let org = orgs::load_visible(c, org_id, caller)?;
    let mut invite = load(c, org_id, invite_id)?;
    require_manage(c, &org, &invite, caller)?;
    invite.role =
        if invite.target_kind == "organization" {
            if !level.is_absent() {
                return Err(StoreError::invalid(
                    "an organization invite has a `role`, not a `level`",
                ));
            }
            role_field("role", role)?
        } else {
            if !role.is_absent() {
                return Err(StoreError::invalid(
                    "a space or collection invite has a `level`, not a `role`",
                ));
            }
            Some(role_field("level", level)?.ok_or_else(|| {
                StoreError::invalid("`level` of a space or collection invite must be a role")
            })?)
        };
    c.execute(
        "UPDATE invite_links SET role = ?2 WHERE id = ?1",
        params![invite.id.clone(), invite.role.map(Role::as_str)],
    )?;
    view(c, &invite, caller)
}

/// Deletes an invite the caller may manage (nothing when there is no such invite).
pub fn delete(c: &mut dyn Conn, caller: &str, org_id: &str, invite_id: &str) -> StoreResult<()> {
    let org = orgs::load_visible(c, org_id, caller)?;
    let invite = match load(c, org_id, invite_id) {
        Ok(invite) => invite,
        Err(e) if e.kind == crate::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    require_manage(c, &org, &invite, caller)?;
    c.execute("DELETE FROM invite_links WHERE id = ?1", params![invite.id])?;
    Ok(())
}

/// Follows an invite: joins the organization with the invite's role (never lowering a role the
/// caller already has), or as a guest with the invite's level on its space or collection.
pub fn join(c: &mut dyn Conn, caller: &str, org_id: &str, invite_id: &str) -> StoreResult<()> {
    let invite = load(c, org_id, invite_id)?;
    let enabled: bool = c
        .query_scalar(
            "SELECT invite_links FROM organizations WHERE id = ?1",
            params![org_id],
        )?
        .unwrap_or(false);
    if !enabled {
        return Err(StoreError::forbidden(
            "invite links are turned off for this organization",
        ));
    }
    match &invite.target_id {
        None => members::join(c, org_id, caller, invite.role, caller),
        Some(target) => {
            members::join(c, org_id, caller, None, caller)?;
            let role = invite.role.unwrap_or(Role::Read);
            let current: Option<Role> = c.query_scalar(
                "SELECT role FROM grants WHERE target_id = ?1 AND user_id = ?2",
                params![target.clone(), caller],
            )?;
            if current < Some(role) {
                c.execute(
                    "INSERT INTO grants (organization_id, target_kind, target_id, user_id, role, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (target_id, user_id) DO UPDATE SET role = excluded.role",
                    params![
                        org_id,
                        invite.target_kind.clone(),
                        target.clone(),
                        caller,
                        role.as_str(),
                        clock::now_ms()
                    ],
                )?;
            }
            Ok(())
        }
    }
}
