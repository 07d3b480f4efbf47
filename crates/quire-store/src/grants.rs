//! Access grants on spaces and collections: users and teams given a role, listed, changed and
//! removed. Users given a role who are not in the organization join it as guests.

use crate::collections;
use crate::db::{Args, Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::members;
use crate::orgs;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, CollectionAction, Role, SpaceAction, Standing};
use crate::siblings::Kind;
use crate::spaces;
use crate::teams::{self, Team};
use crate::users::{User, UserCols};
use crate::{clock, params};

/// A space or collection whose access is being read or changed, as the caller sees it.
#[derive(Clone, Debug)]
pub struct Target {
    pub kind: Kind,
    pub id: String,
    pub org_id: String,
    can_admin: bool,
    /// The caller's role on it, to name in a refusal.
    role: Option<Role>,
    /// The caller's standing in its organization.
    pub standing: Standing,
}

/// Changing who can access a space or collection (its `Admin` action), as a type for
/// [`Authorized`].
#[derive(Debug)]
pub enum ChangeAccess {}

/// Loads the target the caller can see, or 404.
pub fn load_target(c: &mut dyn Conn, kind: Kind, id: &str, user_id: &str) -> StoreResult<Target> {
    match kind {
        Kind::Space => {
            let s = spaces::load_active(c, id, user_id)?;
            let standing =
                orgs::load_for(c, &s.space.org_id, user_id)?.map_or(Standing::Outsider, |o| o.standing);
            Ok(Target {
                kind,
                id: id.to_string(),
                org_id: s.space.org_id.clone(),
                can_admin: s.allows(SpaceAction::Admin),
                role: s.role,
                standing,
            })
        }
        Kind::Collection => {
            let col = collections::load_visible(c, id, user_id)?;
            Ok(Target {
                kind,
                id: id.to_string(),
                org_id: col.collection.org_id.clone(),
                can_admin: col.allows(CollectionAction::Admin),
                role: col.role,
                standing: col.standing,
            })
        }
    }
}

impl Target {
    /// Proof that the caller may change who can access the target (403 otherwise).
    pub fn authorize(self) -> StoreResult<Authorized<Target, ChangeAccess>> {
        if !self.can_admin {
            return Err(crate::permissions::role_forbidden(
                "changing who can access it",
                Role::Admin,
                &format!("on {} {:?}", self.kind.name(), self.id),
                self.role,
            ));
        }
        Ok(Authorized::granted(self))
    }
}

/// Who holds a grant.
#[derive(Clone, Debug)]
pub enum Holder {
    User(String),
    Team(String),
}

impl Holder {
    fn column(&self) -> &'static str {
        match self {
            Holder::User(_) => "user_id",
            Holder::Team(_) => "team_id",
        }
    }

    fn id(&self) -> &str {
        match self {
            Holder::User(id) | Holder::Team(id) => id,
        }
    }
}

/// Gives `users` and `teams` the role `role` on the target (None: removes their access). Users
/// outside the organization join it as guests when given a role.
pub fn grant(
    c: &mut dyn Conn,
    target: &Authorized<Target, ChangeAccess>,
    actor: &str,
    role: Option<Role>,
    users: &[String],
    teams: &[String],
) -> StoreResult<()> {
    for user in users {
        if crate::users::load(c, user)?.is_none() {
            return Err(StoreError::not_found(format!("no user has the id {user:?}")));
        }
        if role.is_some() {
            // Someone outside the organization joins it as a guest of this content.
            members::join(c, &target.org_id, user, None, actor)?;
        }
        set_grant(c, target, &Holder::User(user.clone()), role)?;
    }
    for team in teams {
        let known = c.exists(
            "SELECT 1 FROM teams WHERE id = ?1 AND organization_id = ?2",
            params![team.clone(), target.org_id.clone()],
        )?;
        if !known {
            return Err(StoreError::not_found(format!(
                "no team of this organization has the id {team:?}"
            )));
        }
        set_grant(c, target, &Holder::Team(team.clone()), role)?;
    }
    Ok(())
}

/// Changes (or with None removes) the role of a holder that has a grant on the target (404
/// when they have none).
pub fn change(
    c: &mut dyn Conn,
    target: &Authorized<Target, ChangeAccess>,
    holder: &Holder,
    role: Option<Role>,
) -> StoreResult<()> {
    let exists = c.exists(
        &format!(
            "SELECT 1 FROM grants WHERE target_id = ?1 AND {} = ?2",
            holder.column()
        ),
        params![target.id.clone(), holder.id()],
    )?;
    if !exists {
        return Err(StoreError::not_found(format!(
            "{} {:?} has no access granted on this {}",
            if matches!(holder, Holder::User(_)) {
                "user"
            } else {
                "team"
            },
            holder.id(),
            target.kind.name()
        )));
    }
    set_grant(c, target, holder, role)
}

/// Removes a holder's grant on the target (nothing when there is none).
pub fn revoke(
    c: &mut dyn Conn,
    target: &Authorized<Target, ChangeAccess>,
    holder: &Holder,
) -> StoreResult<()> {
    set_grant(c, target, holder, None)
}

/// Sets (or with None removes) the role a user or team has on the target.
fn set_grant(c: &mut dyn Conn, target: &Target, holder: &Holder, role: Option<Role>) -> StoreResult<()> {
    let column = holder.column();
    match role {
        None => {
            c.execute(
                &format!("DELETE FROM grants WHERE target_id = ?1 AND {column} = ?2"),
                params![target.id.clone(), holder.id()],
            )?;
        }
        Some(role) => {
            c.execute(
                &format!(
                    "INSERT INTO grants (organization_id, target_kind, target_id, {column}, role, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (target_id, {column}) DO UPDATE SET role = excluded.role"
                ),
                params![
                    target.org_id.clone(),
                    target.kind.name(),
                    target.id.clone(),
                    holder.id(),
                    role.as_str(),
                    clock::now_ms()
                ],
            )?;
        }
    }
    Ok(())
}

crate::columns! {
    /// The role a grant gives, selected after the grantee's columns.
    struct GrantCols of "grants" {
        role: "g.role",
    }
}

/// The users with a grant on the target, with their role, in id order.
pub fn users(c: &mut dyn Conn, target: &Target, paging: &Paging) -> StoreResult<List<(User, Role)>> {
    let page = Page::new(paging, format!("grants-users:{}", target.id))?;
    let mut args = Args::default();
    let filter = format!(
        " WHERE g.target_id = {} AND g.user_id IS NOT NULL",
        args.arg(&target.id)
    );
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM grants g{filter}"), args.values())?
        .unwrap_or(0);
    let mut sql = format!(
        "SELECT {}, {} FROM grants g JOIN users u ON u.id = g.user_id{filter}",
        UserCols::SQL,
        GrantCols::SQL
    );
    if let Some(after) = page.after::<String>()? {
        sql += &format!(" AND g.user_id > {}", args.arg(after));
    }
    sql += &format!(" ORDER BY g.user_id LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            Ok((
                User::from_row(r, UserCols::AT)?,
                r.col(GrantCols::at(UserCols::COUNT).role)?,
            ))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(rows, count as u64, |(u, _)| u.id.clone()))
}

/// The teams with a grant on the target, with their role, in id order, as `caller` sees them.
pub fn teams(
    c: &mut dyn Conn,
    target: &Target,
    caller: &str,
    paging: &Paging,
) -> StoreResult<List<(Team, Role)>> {
    let page = Page::new(paging, format!("grants-teams:{}", target.id))?;
    let mut args = Args::default();
    let filter = format!(
        " JOIN grants g ON g.team_id = t.id WHERE g.target_id = {}",
        args.arg(&target.id)
    );
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM teams t{filter}"), args.values())?
        .unwrap_or(0);
    let me = args.arg(caller);
    let mut sql = format!("{}{filter}", teams::select(&me, &format!(", {}", GrantCols::SQL)));
    if let Some(after) = page.after::<String>()? {
        sql += &format!(" AND t.id > {}", args.arg(after));
    }
    sql += &format!(" ORDER BY t.id LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            let role = r.col(GrantCols::at(teams::TeamCols::COUNT).role)?;
            Ok((Team::from_row(r)?, role))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(rows, count as u64, |(t, _)| t.id.clone()))
}
