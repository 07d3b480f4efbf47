//! Teams of an organization and their members.

pub mod model;

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn, like_contains};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Json, OptionalJson, Path, Query, QueryOf};
use crate::members::{self, MemberJson};
use crate::orgs::{self, OrgFor};
use crate::paths::{OrgMemberPath, OrgPath, TeamMemberPath, TeamPath};
use crate::{clock, ids, params};
pub use model::{Team, TeamJson, TeamMemberRole, TeamRole};
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{OrgAction, Role, TeamAction};
use quire_store::users;
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_teams, create_team))
        .routes(routes!(get_team, update_team, delete_team))
        .routes(routes!(list_team_members, update_team_members))
        .routes(routes!(add_team_member, remove_team_member))
}

fn title(value: &str) -> ApiResult<String> {
    Ok(validate::title("title", value, 1, 64)?)
}

/// Loads a team of the organization, or 404.
pub fn load(c: &mut dyn Conn, org: &OrgFor, team_id: &str, caller: &str) -> ApiResult<Team> {
    let sql = format!(
        "{} WHERE t.id = ?2 AND t.organization_id = ?3",
        model::select("?1", "")
    );
    let team = c
        .query_opt(&sql, params![caller, team_id, org.org.id.clone()])?
        .map(|r| Team::from_row(&r))
        .transpose()?
        .ok_or_else(|| ApiError::not_found(format!("team {team_id:?} not found")))?;
    if !team.allows(org.standing, TeamAction::View) && !team.caller_owns {
        return Err(ApiError::not_found(format!("team {team_id:?} not found")));
    }
    Ok(team)
}

fn require_manage(org: &OrgFor, team: &Team) -> ApiResult<()> {
    if !team.allows(org.standing, TeamAction::Manage) {
        let refusal = quire_store::permissions::role_refusal(
            &format!("changing team {:?}", team.id),
            Role::Admin,
            &format!("in organization {:?} (or ownership of the team)", org.org.id),
            org.standing.role(),
        );
        return Err(ApiError::forbidden(refusal));
    }
    Ok(())
}

/// The query of `GET /v1/orgs/{organizationId}/teams`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListTeamsQuery {
    /// Only the teams this user (an id) belongs to.
    owner: Option<String>,
    /// Only the teams whose title contains this text (case and accents ignored).
    title: Option<String>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListTeamsQuery {
    fn from_query(query: &Query) -> ApiResult<ListTeamsQuery> {
        Ok(ListTeamsQuery {
            owner: query.str("owner").filter(|s| !s.is_empty()).map(String::from),
            title: query.str("title").map(users::fold).filter(|s| !s.is_empty()),
            paging: Paging::from_query(query)?,
        })
    }
}

/// The query of `GET /v1/orgs/{organizationId}/members/{userId}/teams`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListMemberTeamsQuery {
    /// Only the teams whose title contains this text (case and accents ignored).
    title: Option<String>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListMemberTeamsQuery {
    fn from_query(query: &Query) -> ApiResult<ListMemberTeamsQuery> {
        Ok(ListMemberTeamsQuery {
            title: query.str("title").map(users::fold).filter(|s| !s.is_empty()),
            paging: Paging::from_query(query)?,
        })
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/teams",
    tag = "Teams",
    summary = "List the teams of an organization",
    params(OrgPath, ListTeamsQuery, Paging),
    responses((status = 200, description = "The teams.", body = List<TeamJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_teams(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(ListTeamsQuery { owner, title, paging }): QueryOf<ListTeamsQuery>,
) -> ApiResult<axum::Json<List<TeamJson>>> {
    let page = Page::new(&paging, format!("teams:{org_id}:{owner:?}:{title:?}"))?;
    let (standing, list) = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            org.require(OrgAction::ListTeams)?;
            let mut args = Args::default();
            let mut filter = format!(" WHERE t.organization_id = {}", args.arg(&org_id));
            if let Some(t) = &title {
                filter += &format!(" AND t.search_title LIKE {} ESCAPE '\\'", args.arg(like_contains(t)));
            }
            if let Some(owner) = &owner {
                // Teams that member can manage: all of them for an admin, else the ones they own.
                let owner_is_admin = c.exists(
                    "SELECT 1 FROM members WHERE organization_id = ?1 AND user_id = ?2 AND role = 'admin'",
                    params![org_id.clone(), owner.clone()],
                )?;
                if !owner_is_admin {
                    filter += &format!(
                        " AND EXISTS (SELECT 1 FROM team_members w WHERE w.team_id = t.id AND w.user_id = {} AND w.role = 'owner')",
                        args.arg(owner)
                    );
                }
            }
            let count: i64 =
                c.query_scalar(&format!("SELECT count(*) FROM teams t{filter}"), args.values())?.unwrap_or(0);
            let me = args.arg(&caller.user_id);
            let mut sql = format!("{}{filter}", model::select(&me, ""));
            if let Some((created, id)) = page.after::<(i64, String)>()? {
                sql += &format!(" AND (t.created_at, t.id) > ({}, {})", args.arg(created), args.arg(id));
            }
            sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
            let teams = c.query(&sql, args.values())?.iter().map(Team::from_row).collect::<Result<Vec<_>, _>>()?;
            let list = page.finish(teams, count as u64, |t| (t.created_at, t.id.clone()));
            Ok::<_, ApiError>((org.standing, list))
        })
        .await?;
    Ok(axum::Json(list.map(|t| t.to_json(standing))))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateTeam {
    title: String,
    #[serde(default)]
    members: Vec<String>,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/teams",
    tag = "Teams",
    summary = "Create a team",
    params(OrgPath),
    request_body = CreateTeam,
    responses((status = 201, description = "The new team.", body = TeamJson, headers(("Location" = String, description = "The team's URL.")))),
    security(("token" = ["org:write"]))
)]
async fn create_team(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<CreateTeam>,
) -> ApiResult<impl IntoResponse> {
    let title = title(&body.title)?;
    let (standing, team) = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            org.require(OrgAction::Admin)?;
            let id = ids::new_id();
            let now = clock::now_ms();
            c.execute(
                "INSERT INTO teams (id, organization_id, title, search_title, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id.clone(), org_id.clone(), title.clone(), users::fold(&title), now],
            )?;
            for member in &body.members {
                let user = resolve_member(c, &org_id, member)?;
                set_team_member(c, &id, &user, TeamRole::Member)?;
            }
            Ok::<_, ApiError>((org.standing, load(c, &org, &id, &caller.user_id)?))
        })
        .await?;
    let json = team.to_json(standing);
    let location = app.urls.api(&format!("/orgs/{}/teams/{}", team.org_id, team.id));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json),
    ))
}

/// A member of the organization given by user id or email; 400 when there is none.
fn resolve_member(c: &mut dyn Conn, org_id: &str, who: &str) -> ApiResult<String> {
    let found: Option<String> = c.query_scalar(
        "SELECT m.user_id FROM members m JOIN users u ON u.id = m.user_id
         WHERE m.organization_id = ?1 AND (u.id = ?2 OR u.email = ?3)",
        params![org_id, who, who.to_ascii_lowercase()],
    )?;
    found.ok_or_else(|| ApiError::bad_request(format!("{who:?} is not a member of this organization")))
}

fn set_team_member(c: &mut dyn Conn, team_id: &str, user_id: &str, role: TeamRole) -> ApiResult<()> {
    c.execute(
        "INSERT INTO team_members (team_id, user_id, role, added_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role",
        params![team_id, user_id, role.as_str(), clock::now_ms()],
    )?;
    Ok(())
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/teams/{teamId}",
    tag = "Teams",
    summary = "Get a team",
    params(TeamPath),
    responses((status = 200, description = "The team.", body = TeamJson)),
    security(("token" = ["org:read"]))
)]
async fn get_team(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
) -> ApiResult<axum::Json<TeamJson>> {
    let (standing, team) = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            Ok::<_, ApiError>((org.standing, team))
        })
        .await?;
    Ok(axum::Json(team.to_json(standing)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateTeam {
    title: String,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/teams/{teamId}",
    tag = "Teams",
    summary = "Rename a team",
    params(TeamPath),
    request_body = UpdateTeam,
    responses((status = 200, description = "The team as updated.", body = TeamJson)),
    security(("token" = ["org:write"]))
)]
async fn update_team(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
    Json(body): Json<UpdateTeam>,
) -> ApiResult<axum::Json<TeamJson>> {
    let title = title(&body.title)?;
    let (standing, team) = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            require_manage(&org, &team)?;
            c.execute(
                "UPDATE teams SET title = ?2, search_title = ?3 WHERE id = ?1",
                params![team_id.clone(), title.clone(), users::fold(&title)],
            )?;
            Ok::<_, ApiError>((org.standing, load(c, &org, &team_id, &caller.user_id)?))
        })
        .await?;
    Ok(axum::Json(team.to_json(standing)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/teams/{teamId}",
    tag = "Teams",
    summary = "Delete a team",
    params(TeamPath),
    responses((status = 204, description = "The team is gone.")),
    security(("token" = ["org:write"]))
)]
async fn delete_team(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = match load(c, &org, &team_id, &caller.user_id) {
                Ok(team) => team,
                Err(e) if e.status == StatusCode::NOT_FOUND => return Ok(()),
                Err(e) => return Err(e),
            };
            require_manage(&org, &team)?;
            c.execute("DELETE FROM grants WHERE team_id = ?1", params![team_id.clone()])?;
            c.execute(
                "DELETE FROM team_members WHERE team_id = ?1",
                params![team_id.clone()],
            )?;
            c.execute("DELETE FROM teams WHERE id = ?1", params![team_id.clone()])?;
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
struct TeamMemberItem {
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
async fn list_team_members(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamMemberItem>>> {
    let page = Page::new(&paging, format!("team-members:{team_id}"))?;
    let list = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            let mut args = Args::default();
            let org_arg = args.arg(&org_id);
            let mut sql = format!(
                "SELECT {}, {} FROM team_members tm JOIN members m ON m.user_id = tm.user_id AND m.organization_id = {org_arg}
                 JOIN users u ON u.id = m.user_id WHERE tm.team_id = {}",
                members::model::select_columns(),
                model::TeamMemberCols::SQL,
                args.arg(&team.id)
            );
            if let Some(id) = page.after::<String>()? {
                sql += &format!(" AND tm.user_id > {}", args.arg(id));
            }
            sql += &format!(" ORDER BY tm.user_id LIMIT {}", args.arg(page.fetch()));
            let rows = c.query(&sql, args.values())?;
            let items = rows
                .iter()
                .map(|r| {
                    let role = r.col(model::TeamMemberCols::at(members::model::MEMBER_END).role)?;
                    Ok((members::Member::from_row(r)?, role))
                })
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            let list = page.finish(items, team.members as u64, |(m, _)| m.user.id.clone());
            Ok::<_, ApiError>(list)
        })
        .await?;
    Ok(axum::Json(list.map(|(m, role)| TeamMemberItem {
        organization: m.to_json(&app.urls),
        team: TeamMemberRole { role },
        permissions: ViewPermission { view: true },
    })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateTeamMembers {
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
struct RoleBody {
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
async fn update_team_members(
    caller: Caller,
    State(app): State<App>,
    Path(TeamPath {
        organization_id: org_id,
        team_id,
    }): Path<TeamPath>,
    Json(body): Json<UpdateTeamMembers>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            require_manage(&org, &team)?;
            let removed: Vec<String> = body
                .remove
                .iter()
                .map(|w| resolve_member(c, &org_id, w))
                .collect::<ApiResult<_>>()?;
            for who in &body.add {
                let user = resolve_member(c, &org_id, who)?;
                if !removed.contains(&user) {
                    add_keeping_role(c, &team.id, &user)?;
                }
            }
            for (who, role) in &body.memberships {
                let user = resolve_member(c, &org_id, who)?;
                if !removed.contains(&user) {
                    set_team_member(c, &team.id, &user, role.role.unwrap_or(TeamRole::Member))?;
                }
            }
            for user in &removed {
                c.execute(
                    "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2",
                    params![team.id.clone(), user.clone()],
                )?;
            }
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

fn add_keeping_role(c: &mut dyn Conn, team_id: &str, user_id: &str) -> ApiResult<()> {
    c.execute(
        "INSERT INTO team_members (team_id, user_id, role, added_at) VALUES (?1, ?2, 'member', ?3)
         ON CONFLICT (team_id, user_id) DO NOTHING",
        params![team_id, user_id, clock::now_ms()],
    )?;
    Ok(())
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
async fn add_team_member(
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
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            require_manage(&org, &team)?;
            let user = resolve_member(c, &org_id, &user_id)?;
            match role {
                Some(role) => set_team_member(c, &team.id, &user, role),
                None => add_keeping_role(c, &team.id, &user),
            }
        })
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
async fn remove_team_member(
    caller: Caller,
    State(app): State<App>,
    Path(TeamMemberPath {
        organization_id: org_id,
        team_id,
        user_id,
    }): Path<TeamMemberPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let team = load(c, &org, &team_id, &caller.user_id)?;
            // Members may leave a team; changing anyone else needs the right to manage it.
            if user_id != caller.user_id {
                require_manage(&org, &team)?;
            }
            c.execute(
                "DELETE FROM team_members WHERE team_id = ?1 AND user_id = ?2",
                params![team.id.clone(), user_id.clone()],
            )?;
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
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
    let page = Page::new(&paging, format!("member-teams:{org_id}:{user_id}:{title:?}"))?;
    let (standing, list) = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            if caller.user_id != user_id {
                org.require(OrgAction::ListTeams)?;
            }
            let mut args = Args::default();
            let mut filter = format!(
                " JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_id = {} AND tm.user_id = {}",
                args.arg(&org_id),
                args.arg(&user_id)
            );
            if let Some(t) = &title {
                filter += &format!(
                    " AND t.search_title LIKE {} ESCAPE '\\'",
                    args.arg(like_contains(t))
                );
            }
            let count: i64 = c
                .query_scalar(&format!("SELECT count(*) FROM teams t{filter}"), args.values())?
                .unwrap_or(0);
            let me = args.arg(&caller.user_id);
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
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            Ok::<_, ApiError>((
                org.standing,
                page.finish(items, count as u64, |(t, _)| (t.created_at, t.id.clone())),
            ))
        })
        .await?;
    Ok(axum::Json(list.map(|(t, role)| MemberTeamItem {
        team: t.to_json(standing),
        member: TeamMemberRole { role },
    })))
}
