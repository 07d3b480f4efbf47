//! Teams of an organization (their members: `members.rs`).

mod members;
pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::paging::{List, Paging};
use quire_store::permissions::{org, team};
use quire_store::teams::TeamKey;
use quire_store::teams::{self};
use quire_store::users;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{OrgPath, TeamPath};
use crate::state::App;
pub use members::*;
pub use wire::{TeamJson, TeamMemberRole, team_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_teams, create_team))
        .routes(routes!(get_team, update_team, delete_team))
        .routes(routes!(list_team_members, update_team_members))
        .routes(routes!(add_team_member, remove_team_member))
        .routes(routes!(list_member_teams))
}

/// The query of `GET /v1/orgs/{organizationId}/teams`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListTeamsQuery {
    /// Only the teams this user (an id) belongs to.
    owner: Option<String>,
    /// Only the teams whose title contains this text (case and accents ignored).
    title: Option<String>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
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
    let title = title.as_deref().map(users::fold).filter(|s| !s.is_empty());
    let filter = teams::Filter { owner, title };
    let (standing, list) = app
        .db
        .read_as::<org::ListTeams, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            let list = teams::list(c, &org, &caller.user_id, &filter, &paging)?;
            Ok::<_, quire_store::StoreError>((org.standing, list))
        })
        .await?;
    Ok(axum::Json(list.map(|t| team_json(&t, standing))))
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
    let title = teams::title(&body.title)?;
    let team = app
        .db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            teams::create(c, &org, &caller.user_id, &title, &body.members)
        })
        .await?;
    let json = team_json(&team.team, team.org.standing);
    let location = app
        .urls
        .api(&format!("/orgs/{}/teams/{}", team.team.org_id, team.team.id));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json),
    ))
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
    let team = app
        .db
        .read_as::<team::View, _>(caller.user_id.clone(), TeamKey { org_id, team_id }, |_, team| {
            Ok(team.into_inner())
        })
        .await?;
    Ok(axum::Json(team_json(&team.team, team.org.standing)))
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
    let title = teams::title(&body.title)?;
    let team = app
        .db
        .write_as::<team::Manage, _>(
            caller.user_id.clone(),
            TeamKey { org_id, team_id },
            move |c, team| teams::rename(c, &team, &caller.user_id, &title),
        )
        .await?;
    Ok(axum::Json(team_json(&team.team, team.org.standing)))
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
        .write_as::<org::View, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            teams::delete(c, org.into_inner(), &caller.user_id, &team_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
