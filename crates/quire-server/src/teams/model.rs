//! A team as stored and as sent.

use serde::Serialize;

use crate::clock;
use crate::db::{DbError, Row};
use quire_store::permissions::{Standing, TeamAction, team_allows};

#[derive(Clone, Debug)]
pub struct Team {
    pub id: String,
    pub org_id: String,
    pub title: String,
    pub created_at: i64,
    pub members: i64,
    pub spaces: i64,
    /// Whether the caller owns this team.
    pub caller_owns: bool,
}

quire_store::columns! {
    /// The columns [`Team::from_row`] reads, with the table aliased `t`; `{caller}` stands for
    /// the placeholder of the caller's id (see [`select`]).
    pub struct TeamCols of "teams" {
        id: "t.id",
        org_id: "t.organization_id",
        title: "t.title",
        created_at: "t.created_at",
        members: "(SELECT count(*) FROM team_members x WHERE x.team_id = t.id)",
        spaces: "(SELECT count(*) FROM grants g JOIN spaces s ON s.id = g.target_id
                  WHERE g.team_id = t.id AND g.target_kind = 'space' AND s.deleted_at IS NULL)",
        caller_owns: "EXISTS (SELECT 1 FROM team_members o
                              WHERE o.team_id = t.id AND o.user_id = {caller} AND o.role = 'owner')",
    }
}

const TEAM: TeamCols = TeamCols::AT;

quire_store::columns! {
    /// A user's role in a team, selected after a member's or a team's columns.
    pub struct TeamMemberCols of "team_members" {
        role: "tm.role",
    }
}

/// The SELECT of teams with their counters; `caller` is the placeholder of the caller's id and
/// `extra` selects more columns after the [`TeamCols`], which start at [`TeamCols::COUNT`].
pub fn select(caller: &str, extra: &str) -> String {
    format!(
        "SELECT {} {extra} FROM teams t",
        TeamCols::SQL.replace("{caller}", caller)
    )
}

impl Team {
    pub fn from_row(row: &Row) -> Result<Team, DbError> {
        Ok(Team {
            id: row.col(TEAM.id)?,
            org_id: row.col(TEAM.org_id)?,
            title: row.col(TEAM.title)?,
            created_at: row.col(TEAM.created_at)?,
            members: row.col(TEAM.members)?,
            spaces: row.col(TEAM.spaces)?,
            caller_owns: row.col(TEAM.caller_owns)?,
        })
    }

    pub fn allows(&self, standing: Standing, action: TeamAction) -> bool {
        team_allows(standing, self.caller_owns, action)
    }

    pub fn to_json(&self, standing: Standing) -> TeamJson {
        TeamJson {
            object: "team",
            id: self.id.clone(),
            title: self.title.clone(),
            members: self.members,
            spaces: self.spaces,
            created_at: self.created_at,
            permissions: TeamPermissions {
                admin: self.allows(standing, TeamAction::Manage),
                view: self.allows(standing, TeamAction::View),
            },
        }
    }
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    pub members: i64,
    pub spaces: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    pub permissions: TeamPermissions,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct TeamPermissions {
    pub admin: bool,
    pub view: bool,
}

quire_store::wire_enum! {
    /// A user's role in a team.
    pub enum TeamRole {
        Owner = "owner",
        Member = "member",
    }
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct TeamMemberRole {
    pub role: TeamRole,
}
