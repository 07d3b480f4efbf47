//! Organization members: list, read, change a role, remove, mark as SSO, record activity; and
//! joining an organization (through invites, grants to outsiders, email domains).

pub mod model;

pub use model::{MEMBER_END, Member, MemberCols, load, select, select_columns};

use crate::auth::Caller;
use crate::db::{Args, Conn, for_update, like_contains};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::orgs::OrgFor;
use crate::paging::{List, Order, Page, Paging};
use crate::permissions::{Action, Authorized, MemberAction, OrgAction, Role, member, member_allows, org};
use crate::{clock, params};

/// A membership the caller acts on: the organization as loaded for them, and the member.
/// What names a membership: the organization and the member's user id.
#[derive(Clone, Debug)]
pub struct MemberKey {
    pub org_id: String,
    pub user_id: String,
}

#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Membership {
    pub org: OrgFor,
    pub user_id: String,
    /// Whether the caller it was loaded for is that member (members may leave, and see
    /// themselves).
    by_self: bool,
}

impl Membership {
    /// The membership of `user_id` in `org`, as the caller `caller_id` sees it: 404 when the
    /// organization is invisible to them.
    pub fn load(org: OrgFor, caller_id: &str, user_id: &str) -> StoreResult<Membership> {
        org.require(OrgAction::View)?;
        Ok(Membership {
            org,
            user_id: user_id.to_string(),
            by_self: caller_id == user_id,
        })
    }

    /// Proof that the caller may do `A` to the membership (403 when the action is not theirs).
    pub fn authorize<A: Action<MemberAction>>(self) -> StoreResult<Authorized<Membership, A>> {
        let action = A::ACTION;
        if !member_allows(self.org.standing, self.by_self, action) {
            return Err(crate::permissions::role_forbidden(
                action.describe(),
                action.needed(),
                &format!("in organization {:?}", self.org.org.id),
                self.org.standing.role(),
            ));
        }
        Ok(Authorized::granted(self))
    }
}

/// How a member list is filtered and sorted.
#[derive(Clone, Debug)]
pub struct Filter {
    pub order: Order,
    /// `joinedAt`, `lastSeenAt` or `name`.
    pub sort: &'static str,
    /// Only members with this role (Some(None): guests).
    pub role: Option<Option<Role>>,
    /// Only members whose folded name or email contains this ([`crate::users::fold`]).
    pub search: Option<String>,
}

impl Filter {
    /// The scope of the cursors of the organization's members listed with this filter.
    fn scope(&self, org_id: &str) -> String {
        format!(
            "members:{org_id}:{}:{}:{:?}:{:?}",
            self.order.name(),
            self.sort,
            self.role,
            self.search
        )
    }
}

/// The members of the organization, one page of them.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::ListMembers>,
    filter: &Filter,
    paging: &Paging,
) -> StoreResult<List<Member>> {
    let page = Page::new(paging, filter.scope(&org.org.id))?;
    let Filter {
        order,
        sort,
        role,
        search,
    } = filter;
    let (order, sort) = (*order, *sort);
    let mut args = Args::default();
    let org = args.arg(&org.org.id);
    let mut filter = String::new();
    match role {
        Some(Some(r)) => filter += &format!(" AND m.role = {}", args.arg(r.as_str())),
        Some(None) => filter += " AND m.role IS NULL",
        None => {}
    }
    if let Some(s) = search {
        filter += &format!(
            " AND u.search_text LIKE {} ESCAPE '\\'",
            args.arg(like_contains(s))
        );
    }
    let key = match sort {
        "lastSeenAt" => {
            filter += " AND m.last_seen_at IS NOT NULL";
            "m.last_seen_at"
        }
        "name" => "u.display_name",
        _ => "m.joined_at",
    };
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = {org}{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!("{}{filter}", model::select(&org));
    if let Some((value, id)) = page.after::<(serde_json::Value, String)>()? {
        let value = match value {
            serde_json::Value::Number(n) => args.arg(n.as_i64().unwrap_or(0)),
            serde_json::Value::String(s) => args.arg(s),
            _ => {
                return Err(StoreError::invalid(
                    "query parameter `page` is not a cursor of this list",
                ));
            }
        };
        sql += &format!(
            " AND ({key}, m.user_id) {} ({value}, {})",
            order.after_op(),
            args.arg(id)
        );
    }
    sql += &format!(
        " ORDER BY {key} {0}, m.user_id {0} LIMIT {1}",
        order.sql(),
        args.arg(page.fetch())
    );
    let members = c
        .query(&sql, args.values())?
        .iter()
        .map(Member::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(page.finish(members, count as u64, |m| {
        let value = match sort {
            "lastSeenAt" => serde_json::json!(m.last_seen_at.unwrap_or(0)),
            "name" => serde_json::json!(m.user.display_name),
            _ => serde_json::json!(m.joined_at),
        };
        (value, m.user.id.clone())
    }))
}

/// The member (404 when the user is not one).
pub fn get(c: &mut dyn Conn, membership: &Authorized<Membership, member::View>) -> StoreResult<Member> {
    load_member(c, membership)
}

fn load_member(c: &mut dyn Conn, m: &Membership) -> StoreResult<Member> {
    model::load(c, &m.org.org.id, &m.user_id)?.ok_or_else(|| not_a_member(&m.user_id))
}

fn not_a_member(user_id: &str) -> StoreError {
    StoreError::not_found(format!("user {user_id:?} is not a member of this organization"))
}

/// Changes a member's role (None: unchanged; Some(None): a guest). The last admin keeps theirs.
pub fn change_role(
    c: &mut dyn Conn,
    membership: &Authorized<Membership, member::ChangeRole>,
    role: Option<Option<Role>>,
) -> StoreResult<Member> {
    let (org_id, user_id) = (&membership.org.org.id, &membership.user_id);
    lock_members(c, org_id)?;
    let current = load_member(c, membership)?;
    if let Some(role) = role {
        if current.role == Some(Role::Admin) && role != Some(Role::Admin) {
            keep_an_admin(c, org_id)?;
        }
        c.execute(
            "UPDATE members SET role = ?3 WHERE organization_id = ?1 AND user_id = ?2",
            params![org_id.clone(), user_id.clone(), role.map(Role::as_str)],
        )?;
    }
    load_member(c, membership)
}

/// Serializes membership changes of one organization, so that two admins demoting each other at
/// once cannot leave it without an admin.
fn lock_members(c: &mut dyn Conn, org_id: &str) -> StoreResult<()> {
    let sql = format!("SELECT id FROM organizations WHERE id = ?1{}", for_update(c));
    c.query(&sql, params![org_id])?;
    Ok(())
}

/// Fails unless another admin remains once the current one steps down.
fn keep_an_admin(c: &mut dyn Conn, org_id: &str) -> StoreResult<()> {
    let admins: i64 = c
        .query_scalar(
            "SELECT count(*) FROM members WHERE organization_id = ?1 AND role = 'admin' AND disabled = 0",
            params![org_id],
        )?
        .unwrap_or(0);
    if admins <= 1 {
        return Err(StoreError::invalid(
            "this is the last admin of the organization: make another member admin first",
        ));
    }
    Ok(())
}

/// Removes a member (nothing when the user is not one); the last admin cannot go. `actor` is
/// who removes them.
pub fn remove(
    c: &mut dyn Conn,
    membership: &Authorized<Membership, member::Remove>,
    actor: &str,
) -> StoreResult<()> {
    let (org_id, user_id) = (&membership.org.org.id, &membership.user_id);
    lock_members(c, org_id)?;
    let Some(current) = model::load(c, org_id, user_id)? else {
        return Ok(());
    };
    if current.role == Some(Role::Admin) {
        keep_an_admin(c, org_id)?;
    }
    remove_from(c, org_id, user_id, actor)
}

/// Removes a user from an organization with everything that gave them access in it.
pub fn remove_from(c: &mut dyn Conn, org_id: &str, user_id: &str, actor: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM team_members WHERE user_id = ?2
             AND team_id IN (SELECT id FROM teams WHERE organization_id = ?1)",
        params![org_id, user_id],
    )?;
    c.execute(
        "DELETE FROM grants WHERE organization_id = ?1 AND user_id = ?2",
        params![org_id, user_id],
    )?;
    let removed = c.execute(
        "DELETE FROM members WHERE organization_id = ?1 AND user_id = ?2",
        params![org_id, user_id],
    )?;
    if removed > 0 {
        let payload = events::MemberRemoved { user_id };
        events::record(c, Event::member(org_id, user_id, Some(actor), payload))?;
    }
    Ok(())
}

/// Marks a member as signed in through SSO.
pub fn mark_sso(
    c: &mut dyn Conn,
    membership: &Authorized<Membership, member::MarkSso>,
) -> StoreResult<Member> {
    let changed = c.execute(
        "UPDATE members SET sso = 1 WHERE organization_id = ?1 AND user_id = ?2",
        params![membership.org.org.id.clone(), membership.user_id.clone()],
    )?;
    if changed == 0 {
        return Err(not_a_member(&membership.user_id));
    }
    load_member(c, membership)
}

/// Records that `user_id`, to whom the organization is visible, was active at `now`.
pub fn seen(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::View>,
    user_id: &str,
    now: i64,
) -> StoreResult<()> {
    c.execute(
        "UPDATE members SET last_seen_at = ?3 WHERE organization_id = ?1 AND user_id = ?2",
        params![org.org.id.clone(), user_id, now],
    )?;
    Ok(())
}

/// Makes the caller a member of `org_id`, with its default role, if the organization lists the
/// caller's verified email domain (nothing when they are a member already).
pub fn join_by_domain(c: &mut dyn Conn, caller: &Caller, org_id: &str) -> StoreResult<()> {
    let org = crate::orgs::load_for(c, org_id, &caller.user_id)?
        .ok_or_else(|| StoreError::not_found(format!("organization {org_id:?} not found")))?;
    if org.standing.is_member() {
        return Ok(());
    }
    // An organization is visible to a stranger only through a verified email domain it
    // lists (as in `orgs::domains::for_domain`); to anyone else it does not exist, whatever the reason, so
    // that a known id does not tell whether the organization exists.
    let not_found = || StoreError::not_found(format!("organization {org_id:?} not found"));
    let domain = crate::users::verified_domain(c, &caller.user_id, &caller.email)?.ok_or_else(not_found)?;
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
        added(c, org_id, &caller.user_id, org.org.default_role, &caller.user_id)?;
    }
    Ok(())
}

/// Adds a user to an organization, or raises their role to `role` when it is stronger. Never
/// lowers a role: joining through an invite cannot demote anyone. `actor` is who let them in.
pub fn join(
    c: &mut dyn Conn,
    org_id: &str,
    user_id: &str,
    role: Option<Role>,
    actor: &str,
) -> StoreResult<()> {
    let current: Option<Option<Role>> = c
        .query_opt(
            "SELECT role FROM members WHERE organization_id = ?1 AND user_id = ?2",
            params![org_id, user_id],
        )?
        .map(|r| r.get(0))
        .transpose()?;
    match current {
        None => {
            c.execute(
                "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)",
                params![org_id, user_id, role.map(Role::as_str), clock::now_ms()],
            )?;
            added(c, org_id, user_id, role, actor)?;
        }
        Some(existing) => {
            if role > existing {
                c.execute(
                    "UPDATE members SET role = ?3 WHERE organization_id = ?1 AND user_id = ?2",
                    params![org_id, user_id, role.map(Role::as_str)],
                )?;
            }
        }
    }
    Ok(())
}

/// Records that `user_id` joined the organization with `role` (None: a guest).
pub fn added(
    c: &mut dyn Conn,
    org_id: &str,
    user_id: &str,
    role: Option<Role>,
    actor: &str,
) -> StoreResult<()> {
    let payload = events::MemberAdded { user_id, role };
    events::record(c, Event::member(org_id, user_id, Some(actor), payload))?;
    Ok(())
}
