//! A team as stored.

use crate::db::{DbError, Row};
use crate::permissions::{Standing, TeamAction, team_allows};

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

crate::columns! {
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

crate::columns! {
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
}

crate::wire_enum! {
    /// A user's role in a team.
    pub enum TeamRole {
        Owner = "owner",
        Member = "member",
    }
}
