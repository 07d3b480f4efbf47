//! A team as stored and as sent.

use serde::Serialize;

use crate::clock;
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

/// The SELECT of teams with their counters; `caller` is the placeholder of the caller's id and
/// `extra` selects more columns after the [`TEAM_COLUMNS`] that [`Team::from_row`] reads.
pub fn select(caller: &str, extra: &str) -> String {
    format!(
        "SELECT t.id, t.organization_id, t.title, t.created_at,
             (SELECT count(*) FROM team_members x WHERE x.team_id = t.id),
             (SELECT count(*) FROM grants g JOIN spaces s ON s.id = g.target_id
              WHERE g.team_id = t.id AND g.target_kind = 'space' AND s.deleted_at IS NULL),
             EXISTS (SELECT 1 FROM team_members o WHERE o.team_id = t.id AND o.user_id = {caller} AND o.role = 'owner')
             {extra}
         FROM teams t"
    )
}

pub const TEAM_COLUMNS: usize = 7;

impl Team {
    pub fn from_row(row: &Row) -> Result<Team, DbError> {
        Ok(Team {
            id: row.get(0)?,
            org_id: row.get(1)?,
            title: row.get(2)?,
            created_at: row.get(3)?,
            members: row.get(4)?,
            spaces: row.get(5)?,
            caller_owns: row.get(6)?,
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

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct TeamJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    pub members: i64,
    pub spaces: i64,
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    pub permissions: TeamPermissions,
}

#[derive(Serialize, Debug)]
pub struct TeamPermissions {
    pub admin: bool,
    pub view: bool,
}

/// A user's role in a team.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeamRole {
    Owner,
    Member,
}

impl TeamRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TeamRole::Owner => "owner",
            TeamRole::Member => "member",
        }
    }

    pub fn from_column(text: &str) -> TeamRole {
        if text == "owner" {
            TeamRole::Owner
        } else {
            TeamRole::Member
        }
    }
}

#[derive(Serialize, Debug)]
pub struct TeamMemberRole {
    pub role: TeamRole,
}
