//! The members of a team, and the teams of a member.

use std::collections::HashMap;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::paging::{List, Paging};
use quire_store::permissions::{org, team};
use quire_store::teams::TeamKey;
use quire_store::teams::{self, TeamRole};
use quire_store::users;
use serde::{Deserialize, Serialize};

use super::wire::{TeamJson, TeamMemberRole, team_json};
use crate::api::members::{MemberJson, member_json};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, OptionalJson, Path, QueryOf};
use crate::paths::{OrgMemberPath, TeamMemberPath, TeamPath};
use crate::state::App;

#[derive(Serialize, utoipa::ToSchema)]
pub(super) struct TeamMemberItem {
    organization: MemberJson,
    team: TeamMemberRole,
    permissions: ViewPermission,
}

#[derive(Serialize, utoipa::ToSchema)]
struct ViewPermission {
    view: bool,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/teams/{teamId}/members",
    tag = "Teams",
    summary = "List the members of a team",
    params(TeamPath, Paging),
    responses((status = 200, description = "The team's members with their role in it.", body = List<TeamMemberItem>)),
    security(("token" = ["org:read"]))
)]
pub(super) async fn list_team_members(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamMemberItem>>> {
    let list = app
        .db
        .read_as::<team::View, _>(
            caller.user_id.clone(),
            TeamKey { org_id, team_id },
            move |c, team| teams::list_members(c, &team, &paging),
        )
        .await?;
    Ok(axum::Json(list.map(|(m, role)| TeamMemberItem {
        organization: member_json(&app.urls, &m),
        team: TeamMemberRole { role },
        permissions: ViewPermission { view: true },
    })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct UpdateTeamMembers {
    #[serde(default)]
    add: Vec<String>,
    #[serde(default)]
    remove: Vec<String>,
    #[serde(default)]
    memberships: HashMap<String, RoleBody>,
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TeamRoleBody)]
pub(super) struct RoleBody {
    role: Option<TeamRole>,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/teams/{teamId}/members",
    tag = "Teams",
    summary = "Add, remove and change the role of team members",
    params(TeamPath),
    request_body = UpdateTeamMembers,
    responses((status = 204, description = "The team's members are updated.")),
    security(("token" = ["org:write"]))
)]
pub(super) async fn update_team_members(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
    Json(body): Json<UpdateTeamMembers>,
) -> ApiResult<StatusCode> {
    let changes = teams::MemberChanges {
        add: body.add,
        remove: body.remove,
        roles: body
            .memberships
            .into_iter()
            .map(|(who, r)| (who, r.role))
            .collect(),
    };
    app.db
        .write_as::<team::Manage, _>(
            caller.user_id.clone(),
            TeamKey { org_id, team_id },
            move |c, team| teams::change_members(c, &team, &changes),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
    tag = "Teams",
    summary = "Add a member to a team",
    params(TeamMemberPath),
    request_body(content = Option<RoleBody>, description = "Optional.", content_type = "application/json"),
    responses((status = 204, description = "The user is a member of the team.")),
    security(("token" = ["org:write"]))
)]
pub(super) async fn add_team_member(
    caller: Caller,
    State(app): State<App>,
    Path(TeamMemberPath {
        organization_id: org_id,
        team_id,
        user_id,
    }): Path<TeamMemberPath>,
    OptionalJson(body): OptionalJson<RoleBody>,
) -> ApiResult<StatusCode> {
    let role = body.and_then(|b| b.role);
    app.db
        .write_as::<team::Manage, _>(
            caller.user_id.clone(),
            TeamKey { org_id, team_id },
            move |c, team| teams::add_member(c, &team, &user_id, role),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
    tag = "Teams",
    summary = "Remove a member from a team",
    params(TeamMemberPath),
    responses((status = 204, description = "The user is not a member of the team.")),
    security(("token" = ["org:write"]))
)]
pub(super) async fn remove_team_member(
    caller: Caller,
    State(app): State<App>,
    Path(TeamMemberPath {
        organization_id: org_id,
        team_id,
        user_id,
    }): Path<TeamMemberPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<team::View, _>(
            caller.user_id.clone(),
            TeamKey { org_id, team_id },
            move |c, team| teams::remove_member(c, &team, &caller.user_id, &user_id),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The query of `GET /v1/orgs/{organizationId}/members/{userId}/teams`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListMemberTeamsQuery {
    /// Only the teams whose title contains this text (case and accents ignored).
    title: Option<String>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct MemberTeamItem {
    team: TeamJson,
    member: TeamMemberRole,
}

/// `GET /v1/orgs/{organizationId}/members/{userId}/teams`: the teams a member belongs to.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/members/{userId}/teams",
    tag = "Organization members",
    summary = "List the teams of a member",
    params(OrgMemberPath, ListMemberTeamsQuery, Paging),
    responses((status = 200, description = "The member's teams with its role in each.", body = List<MemberTeamItem>)),
    security(("token" = ["org:read"]))
)]
pub async fn list_member_teams(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
    QueryOf(ListMemberTeamsQuery { title, paging }): QueryOf<ListMemberTeamsQuery>,
) -> ApiResult<axum::Json<List<MemberTeamItem>>> {
    let title = title.as_deref().map(users::fold).filter(|s| !s.is_empty());
    let (standing, list) = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            let list = teams::of_member(c, &org, &caller.user_id, &user_id, title.as_deref(), &paging)?;
            Ok::<_, quire_store::StoreError>((org.standing, list))
        })
        .await?;
    Ok(axum::Json(list.map(|(t, role)| MemberTeamItem {
        team: team_json(&t, standing),
        member: TeamMemberRole { role },
    })))
}
