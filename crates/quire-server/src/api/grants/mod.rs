//! Access grants on spaces and collections (`quire_store::grants`): give users and teams a role,
//! list, change and remove them. Each operation exists for spaces and for collections; the two
//! handlers of an operation share one function here.

mod change;
mod grant;
mod list;
mod remove;

use axum::http::StatusCode;
use quire_store::grants::{self, Holder};
use quire_store::paging::{List, Paging};
use quire_store::permissions::Role;
use quire_store::siblings::Kind;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::teams::{TeamJson, team_json};
use crate::api::users::{UserJson, user_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::Patch;
use crate::state::App;
use change::*;
use grant::*;
use list::*;
use remove::*;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(invite_space))
        .routes(routes!(list_users_space))
        .routes(routes!(list_teams_space))
        .routes(routes!(update_user_space, remove_user_space))
        .routes(routes!(update_team_space, remove_team_space))
        .routes(routes!(invite_collection))
        .routes(routes!(list_users_collection))
        .routes(routes!(list_teams_collection))
        .routes(routes!(update_user_collection, remove_user_collection))
        .routes(routes!(update_team_collection, remove_team_collection))
}

/// `role` in a grant body: a role, or null to remove the access.
fn parse_role(value: &Patch<String>) -> ApiResult<Option<Role>> {
    match value {
        Patch::Absent => Err(ApiError::bad_request(
            "`role` is required: a role, or null to remove access",
        )),
        Patch::Null => Ok(None),
        Patch::Value(r) => Ok(Some(Role::parse_field("role", r)?)),
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GrantBody)]
struct InviteBody {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
    #[serde(default)]
    users: Vec<String>,
    #[serde(default)]
    teams: Vec<String>,
}

async fn invite(kind: Kind, caller: Caller, app: App, id: String, body: InviteBody) -> ApiResult<StatusCode> {
    let role = parse_role(&body.role)?;
    if body.users.is_empty() && body.teams.is_empty() {
        return Err(ApiError::bad_request("give at least one of `users` and `teams`"));
    }
    app.db
        .write(move |c| {
            let target = grants::load_target(c, kind, &id, &caller.user_id)?.authorize()?;
            grants::grant(c, &target, &caller.user_id, role, &body.users, &body.teams)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = GrantRoleBody)]
struct RoleBody {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
}

async fn update(
    kind: Kind,
    caller: Caller,
    app: App,
    id: String,
    holder: Holder,
    body: RoleBody,
) -> ApiResult<StatusCode> {
    let role = parse_role(&body.role)?;
    app.db
        .write(move |c| {
            let target = grants::load_target(c, kind, &id, &caller.user_id)?.authorize()?;
            grants::change(c, &target, &holder, role)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn remove(kind: Kind, caller: Caller, app: App, id: String, holder: Holder) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            // Content the caller cannot see answers 404 (as for any other operation on it); a
            // grant that is not there on visible content is removed already (204).
            let target = grants::load_target(c, kind, &id, &caller.user_id)?.authorize()?;
            grants::revoke(c, &target, &holder)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
struct UserPermission {
    permission: Role,
    user: UserJson,
}

#[derive(Serialize, utoipa::ToSchema)]
struct TeamPermission {
    permission: Role,
    team: TeamJson,
}

async fn list_users(
    kind: Kind,
    caller: Caller,
    app: App,
    id: String,
    paging: Paging,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    let list = app
        .db
        .read(move |c| {
            let target = grants::load_target(c, kind, &id, &caller.user_id)?;
            grants::users(c, &target, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|(u, permission)| UserPermission {
        permission,
        user: user_json(&app.urls, &u, true),
    })))
}

async fn list_teams(
    kind: Kind,
    caller: Caller,
    app: App,
    id: String,
    paging: Paging,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    let (standing, list) = app
        .db
        .read(move |c| {
            let target = grants::load_target(c, kind, &id, &caller.user_id)?;
            let list = grants::teams(c, &target, &caller.user_id, &paging)?;
            Ok::<_, quire_store::StoreError>((target.standing, list))
        })
        .await?;
    Ok(axum::Json(list.map(|(t, permission)| TeamPermission {
        permission,
        team: team_json(&t, standing),
    })))
}
