//! A team as answered, with the caller's `permissions` on it.

use quire_store::clock;
use quire_store::permissions::{Standing, TeamAction};
use quire_store::teams::{Team, TeamRole};
use serde::Serialize;

/// `standing` is the caller's in the team's organization.
pub fn team_json(team: &Team, standing: Standing) -> TeamJson {
    TeamJson {
        object: "team",
        id: team.id.clone(),
        title: team.title.clone(),
        members: team.members,
        spaces: team.spaces,
        created_at: team.created_at,
        permissions: TeamPermissions {
            admin: team.allows(standing, TeamAction::Manage),
            view: team.allows(standing, TeamAction::View),
        },
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

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct TeamMemberRole {
    pub role: TeamRole,
}
