//! Teams of an organization and their members.

pub mod model;

use std::collections::HashMap;

pub use model::{Team, TeamCols, TeamMemberCols, TeamRole, select};

use crate::db::{Args, Conn, DbError, like_contains};
use crate::error::{StoreError, StoreResult};
use crate::members::{self, Member};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Action, Authorized, OrgAction, Role, TeamAction, org, team};
use crate::{clock, ids, params, users, validate};

/// A team title: 1 to 64 characters.
pub fn title(value: &str) -> StoreResult<String> {
    validate::title("title", value, 1, 64)
}

/// What names a team: its organization and its id.
#[derive(Clone, Debug)]
pub struct TeamKey {
    pub org_id: String,
    pub team_id: String,
}

/// A team as the caller sees it, with the organization as loaded for them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TeamFor {
    pub org: OrgFor,
    pub team: Team,
}

impl TeamFor {
    /// Proof that the caller may do `A` to the team (403 naming what is needed otherwise).
    pub fn authorize<A: Action<TeamAction>>(self) -> StoreResult<Authorized<TeamFor, A>> {
        self.require(A::ACTION)?;
        Ok(Authorized::granted(self))
    }

    fn require(&self, action: TeamAction) -> StoreResult<()> {
        // A team is loaded only for who may see it (its owners too, whatever their role), so
        // seeing it needs nothing more.
        if action != TeamAction::View && !self.team.allows(self.org.standing, action) {
            let refusal = crate::permissions::role_refusal(
                &format!("changing team {:?}", self.team.id),
                Role::Admin,
                &format!("in organization {:?} (or ownership of the team)", self.org.org.id),
                self.org.standing.role(),
            );
            return Err(StoreError::forbidden(refusal));
        }
        Ok(())
    }
}

/// Loads a team of the organization the caller may see, or 404.
pub fn load(c: &mut dyn Conn, org: OrgFor, team_id: &str, caller: &str) -> StoreResult<TeamFor> {
    let team = load_team(c, &org, team_id, caller)?;
    Ok(TeamFor { org, team })
}

fn load_team(c: &mut dyn Conn, org: &OrgFor, team_id: &str, caller: &str) -> StoreResult<Team> {
    let sql = format!(
        "{} WHERE t.id = ?2 AND t.organization_id = ?3",
        model::select("?1", "")
    );
    let team = c
        .query_opt(&sql, params![caller, team_id, org.org.id.clone()])?
        .map(|r| Team::from_row(&r))
        .transpose()?
        .ok_or_else(|| StoreError::not_found(format!("team {team_id:?} not found")))?;
    if !team.allows(org.standing, TeamAction::View) && !team.caller_owns {
        return Err(StoreError::not_found(format!("team {team_id:?} not found")));
    }
    Ok(team)
}

/// Which teams a list shows.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only the teams this user (an id) can manage.
    pub owner: Option<String>,
    /// Only the teams whose folded title contains this.
    pub title: Option<String>,
}

impl Filter {
    /// The scope of the cursors of the organization's teams shown with this filter.
    fn scope(&self, org_id: &str) -> String {
        format!("teams:{org_id}:{:?}:{:?}", self.owner, self.title)
    }
}

/// The teams of an organization, one page of them, as `caller` sees them.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::ListTeams>,
    caller: &str,
    filter: &Filter,
    paging: &Paging,
) -> StoreResult<List<Team>> {
    let org_id = &org.org.id;
    let page = Page::new(paging, filter.scope(org_id))?;
    let mut args = Args::default();
    let mut sql_filter = format!(" WHERE t.organization_id = {}", args.arg(org_id));
    if let Some(t) = &filter.title {
        sql_filter += &format!(
            " AND t.search_title LIKE {} ESCAPE '\\'",
            args.arg(like_contains(t))
        );
    }
    if let Some(owner) = &filter.owner {
        // Teams that member can manage: all of them for an admin, else the ones they own.
        let owner_is_admin = c.exists(
            "SELECT 1 FROM members WHERE organization_id = ?1 AND user_id = ?2 AND role = 'admin'",
            params![org_id.clone(), owner.clone()],
        )?;
        if !owner_is_admin {
            sql_filter += &format!(
                " AND EXISTS (SELECT 1 FROM team_members w WHERE w.team_id = t.id AND w.user_id = {} AND w.role = 'owner')",
                args.arg(owner)
            );
        }
    }
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM teams t{sql_filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let me = args.arg(caller);
    let mut sql = format!("{}{sql_filter}", model::select(&me, ""));
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (t.created_at, t.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
    let teams = c
        .query(&sql, args.values())?
        .iter()
        .map(Team::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(page.finish(teams, count as u64, |t| (t.created_at, t.id.clone())))
}

/// Creates a team with `members` (ids or emails of members of the organization); `title` is
/// checked already ([`title`]). Answers the team as `caller` sees it.
pub fn create(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    title: &str,
    members: &[String],
) -> StoreResult<TeamFor> {
    let org_id = &org.org.id;
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO teams (id, organization_id, title, search_title, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id.clone(), org_id.clone(), title, users::fold(title), now],
    )?;
    for member in members {
        let user = resolve_member(c, org_id, member)?;
        set_team_member(c, &id, &user, TeamRole::Member)?;
    }
    load(c, (**org).clone(), &id, caller)
}

/// A member of the organization given by user id or email; 400 when there is none.
fn resolve_member(c: &mut dyn Conn, org_id: &str, who: &str) -> StoreResult<String> {
    let found: Option<String> = c.query_scalar(
        "SELECT m.user_id FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = ?1 AND (u.id = ?2 OR u.email = ?3)",
        params![org_id, who, who.to_ascii_lowercase()],
    )?;
    found.ok_or_else(|| StoreError::invalid(format!("{who:?} is not a member of this organization")))
}

fn set_team_member(c: &mut dyn Conn, team_id: &str, user_id: &str, role: TeamRole) -> StoreResult<()> {
    c.execute(
        "INSERT INTO team_members (team_id, user_id, role, added_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role",
        params![team_id, user_id, role.as_str(), clock::now_ms()],
    )?;
    Ok(())
}

pub(crate) fn add_keeping_role(c: &mut dyn Conn, team_id: &str, user_id: &str) -> StoreResult<()> {
    c.execute(
        "INSERT INTO team_members (team_id, user_id, role, added_at) VALUES (?1, ?2, 'member', ?3)
         ON CONFLICT (team_id, user_id) DO NOTHING",
        params![team_id, user_id, clock::now_ms()],
    )?;
    Ok(())
}

/// Renames a team (`title` checked already); answers it as `caller` sees it.
pub fn rename(
    c: &mut dyn Conn,
    team: &Authorized<TeamFor, team::Manage>,
    caller: &str,
    title: &str,
) -> StoreResult<TeamFor> {
    c.execute(
        "UPDATE teams SET title = ?2, search_title = ?3 WHERE id = ?1",
        params![team.team.id.clone(), title, users::fold(title)],
    )?;
    load(c, team.org.clone(), &team.team.id, caller)
}

/// Deletes a team with its members and grants; nothing when the caller sees no such team
/// (DELETE is idempotent).
pub fn delete(c: &mut dyn Conn, org: OrgFor, caller: &str, team_id: &str) -> StoreResult<()> {
    let team = match load(c, org, team_id, caller) {
        Ok(team) => team.authorize::<team::Manage>()?,
        Err(e) if e.kind == crate::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let team_id = &team.team.id;
    c.execute("DELETE FROM grants WHERE team_id = ?1", params![team_id.clone()])?;
    c.execute(
        "DELETE FROM team_members WHERE team_id = ?1",
        params![team_id.clone()],
    )?;
    c.execute("DELETE FROM teams WHERE id = ?1", params![team_id.clone()])?;
    Ok(())
}

/// The members of a team with their role in it, one page of them.
pub fn list_members(
    c: &mut dyn Conn,
    team: &TeamFor,
    paging: &Paging,
) -> StoreResult<List<(Member, TeamRole)>> {
    let page = Page::new(paging, format!("team-members:{}", team.team.id))?;
    let mut args = Args::default();
    let org_arg = args.arg(&team.org.org.id);
    let mut sql = format!(
        "SELECT {}, {} FROM team_members tm JOIN members m ON m.user_id = tm.user_id AND m.organization_id = {org_arg}
         JOIN users u ON u.id = m.user_id WHERE tm.team_id = {}",
        members::select_columns(),
        model::TeamMemberCols::SQL,
        args.arg(&team.team.id)
    );
    if let Some(id) = page.after::<String>()? {
        sql += &format!(" AND tm.user_id > {}", args.arg(id));
    }
    sql += &format!(" ORDER BY tm.user_id LIMIT {}", args.arg(page.fetch()));
    let rows = c.query(&sql, args.values())?;
    let items = rows
        .iter()
        .map(|r| {
            let role = r.col(model::TeamMemberCols::at(members::MEMBER_END).role)?;
            Ok((Member::from_row(r)?, role))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(items, team.team.members as u64, |(m, _)| m.user.id.clone()))
}

/// Changes of a team's members: users to add, to remove, and roles to set (by id or email).
#[derive(Clone, Debug, Default)]
pub struct MemberChanges {
    pub add: Vec<String>,
    pub remove: Vec<String>,
    pub roles: HashMap<String, Option<TeamRole>>,
}

/// Adds, removes and sets the roles of a team's members; a user both added and removed is
/// removed.
pub fn change_members(
    c: &mut dyn Conn,
    team: &Authorized<TeamFor, team::Manage>,
    changes: &MemberChanges,
) -> StoreResult<()> {
    let (org_id, team_id) = (&team.org.org.id, &team.team.id);
    let removed: Vec<String> = changes
        .remove
        .iter()
        .map(|w| resolve_member(c, org_id, w))
        .collect::<StoreResult<_>>()?;
    for who in &changes.add {
        let user = resolve_member(c, org_id, who)?;
        if !removed.contains(&user) {
            add_keeping_role(c, team_id, &user)?;
        }
    }
    for (who, role) in &changes.roles {
        let user = resolve_member(c, org_id, who)?;
        if !removed.contains(&user) {
            set_team_member(c, team_id, &user, role.unwrap_or(TeamRole::Member))?;
        }
    }
    for user in &removed {
        c.execute(
            "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2",
            params![team_id.clone(), user.clone()],
        )?;
    }
    Ok(())
}

/// Adds a member of the organization to the team, with `role` (None: a member, or the role
/// they have).
pub fn add_member(
    c: &mut dyn Conn,
    team: &Authorized<TeamFor, team::Manage>,
    user_id: &str,
    role: Option<TeamRole>,
) -> StoreResult<()> {
    let user = resolve_member(c, &team.org.org.id, user_id)?;
    match role {
        Some(role) => set_team_member(c, &team.team.id, &user, role),
        None => add_keeping_role(c, &team.team.id, &user),
    }
}

/// Removes a user from the team: members may leave a team; removing anyone else needs the
/// right to manage it.
pub fn remove_member(c: &mut dyn Conn, team: &TeamFor, caller: &str, user_id: &str) -> StoreResult<()> {
    if user_id != caller {
        team.require(TeamAction::Manage)?;
    }
    c.execute(
        "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2",
        params![team.team.id.clone(), user_id],
    )?;
    Ok(())
}

/// The teams `user_id` belongs to, with their role in each, one page of them. A caller sees their
/// own teams; another's need the right to list teams.
pub fn of_member(
    c: &mut dyn Conn,
    org: &OrgFor,
    caller: &str,
    user_id: &str,
    title: Option<&str>,
    paging: &Paging,
) -> StoreResult<List<(Team, TeamRole)>> {
    let page = Page::new(paging, format!("member-teams:{}:{user_id}:{title:?}", org.org.id))?;
    if caller != user_id {
        org.require(OrgAction::ListTeams)?;
    }
    let mut args = Args::default();
    let mut filter = format!(
        " JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_id = {} AND tm.user_id = {}",
        args.arg(&org.org.id),
        args.arg(user_id)
    );
    if let Some(t) = title {
        filter += &format!(
            " AND t.search_title LIKE {} ESCAPE '\\'",
            args.arg(like_contains(t))
        );
    }
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM teams t{filter}"), args.values())?
        .unwrap_or(0);
    let me = args.arg(caller);
    let mut sql = format!(
        "{}{filter}",
        model::select(&me, &format!(", {}", model::TeamMemberCols::SQL))
    );
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (t.created_at, t.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
    let rows = c.query(&sql, args.values())?;
    let items = rows
        .iter()
        .map(|r| {
            let role = r.col(model::TeamMemberCols::at(model::TeamCols::COUNT).role)?;
            Ok((Team::from_row(r)?, role))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(items, count as u64, |(t, _)| (t.created_at, t.id.clone())))
}
