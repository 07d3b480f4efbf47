//! Access grants on spaces and collections: invite users and teams with a role, list, change and
//! remove them. Users invited who are not in the organization join it as guests.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use crate::api::teams::TeamJson;
use crate::api::users::UserJson;
use crate::app::App;
use crate::auth::Caller;
use crate::collections;
use crate::db::{Args, Conn};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::{
    CollectionPath, CollectionTeamPath, CollectionUserPath, SpacePath, SpaceTeamPath, SpaceUserPath,
};
use crate::spaces;
use crate::{clock, params};
use quire_store::members;
use quire_store::orgs;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{CollectionAction, Role, SpaceAction};
use quire_store::siblings::Kind;
use quire_store::teams;
use quire_store::users::{User, UserCols};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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

/// A space or collection whose access is being read or changed.
struct Target {
    kind: Kind,
    id: String,
    org_id: String,
    can_admin: bool,
    /// The caller's role on it, to name in a refusal.
    role: Option<Role>,
    standing: quire_store::permissions::Standing,
}

/// Loads the target the caller can see, or 404.
fn load_target(c: &mut dyn Conn, kind: Kind, id: &str, user_id: &str) -> ApiResult<Target> {
    match kind {
        Kind::Space => {
            let s = spaces::model::load_active(c, id, user_id)?;
            let standing = orgs::load_for(c, &s.space.org_id, user_id)?
                .map_or(quire_store::permissions::Standing::Outsider, |o| o.standing);
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
            let col = collections::model::load_visible(c, id, user_id)?;
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
    fn require_admin(&self) -> ApiResult<()> {
        if !self.can_admin {
            return Err(quire_store::permissions::role_forbidden(
                "changing who can access it",
                Role::Admin,
                &format!("on {} {:?}", self.kind.name(), self.id),
                self.role,
            )
            .into());
        }
        Ok(())
    }
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
            let target = load_target(c, kind, &id, &caller.user_id)?;
            target.require_admin()?;
            for user in &body.users {
                if quire_store::users::load(c, user)?.is_none() {
                    return Err(ApiError::not_found(format!("no user has the id {user:?}")));
                }
                if role.is_some() {
                    // Someone outside the organization joins it as a guest of this content.
                    members::join(c, &target.org_id, user, None, &caller.user_id)?;
                }
                set_grant(c, &target, Holder::User(user), role)?;
            }
            for team in &body.teams {
                let known = c.exists(
                    "SELECT 1 FROM teams WHERE id = ?1 AND organization_id = ?2",
                    params![team.clone(), target.org_id.clone()],
                )?;
                if !known {
                    return Err(ApiError::not_found(format!(
                        "no team of this organization has the id {team:?}"
                    )));
                }
                set_grant(c, &target, Holder::Team(team), role)?;
            }
            Ok::<_, ApiError>(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

enum Holder<'a> {
    User(&'a str),
    Team(&'a str),
}

impl Holder<'_> {
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

/// Sets (or with None removes) the role a user or team has on the target.
fn set_grant(c: &mut dyn Conn, target: &Target, holder: Holder<'_>, role: Option<Role>) -> ApiResult<()> {
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
    holder: HolderId,
    body: RoleBody,
) -> ApiResult<StatusCode> {
    let role = parse_role(&body.role)?;
    app.db
        .write(move |c| {
            let target = load_target(c, kind, &id, &caller.user_id)?;
            target.require_admin()?;
            let holder = holder.as_holder();
            let exists = c.exists(
                &format!(
                    "SELECT 1 FROM grants WHERE target_id = ?1 AND {} = ?2",
                    holder.column()
                ),
                params![target.id.clone(), holder.id()],
            )?;
            if !exists {
                return Err(ApiError::not_found(format!(
                    "{} {:?} has no access granted on this {}",
                    if matches!(holder, Holder::User(_)) {
                        "user"
                    } else {
                        "team"
                    },
                    holder.id(),
                    kind.name()
                )));
            }
            set_grant(c, &target, holder, role)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn remove(kind: Kind, caller: Caller, app: App, id: String, holder: HolderId) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            // Content the caller cannot see answers 404 (as for any other operation on it); a
            // grant that is not there on visible content is removed already (204).
            let target = load_target(c, kind, &id, &caller.user_id)?;
            target.require_admin()?;
            set_grant(c, &target, holder.as_holder(), None)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Clone)]
enum HolderId {
    User(String),
    Team(String),
}

impl HolderId {
    fn as_holder(&self) -> Holder<'_> {
        match self {
            HolderId::User(id) => Holder::User(id),
            HolderId::Team(id) => Holder::Team(id),
        }
    }
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

quire_store::columns! {
    /// The role a grant gives, selected after the grantee's columns.
    struct GrantCols of "grants" {
        role: "g.role",
    }
}

async fn list_users(
    kind: Kind,
    caller: Caller,
    app: App,
    id: String,
    paging: Paging,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    let page = Page::new(&paging, format!("grants-users:{id}"))?;
    let list = app
        .db
        .read(move |c| {
            let target = load_target(c, kind, &id, &caller.user_id)?;
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
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            Ok::<_, ApiError>(page.finish(rows, count as u64, |(u, _)| u.id.clone()))
        })
        .await?;
    Ok(axum::Json(list.map(|(u, permission)| UserPermission {
        permission,
        user: crate::api::users::user_json(&app.urls, &u, true),
    })))
}

async fn list_teams(
    kind: Kind,
    caller: Caller,
    app: App,
    id: String,
    paging: Paging,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    let page = Page::new(&paging, format!("grants-teams:{id}"))?;
    let (standing, list) = app
        .db
        .read(move |c| {
            let target = load_target(c, kind, &id, &caller.user_id)?;
            let mut args = Args::default();
            let filter = format!(
                " JOIN grants g ON g.team_id = t.id WHERE g.target_id = {}",
                args.arg(&target.id)
            );
            let count: i64 = c
                .query_scalar(&format!("SELECT count(*) FROM teams t{filter}"), args.values())?
                .unwrap_or(0);
            let me = args.arg(&caller.user_id);
            let mut sql = format!(
                "{}{filter}",
                teams::model::select(&me, &format!(", {}", GrantCols::SQL))
            );
            if let Some(after) = page.after::<String>()? {
                sql += &format!(" AND t.id > {}", args.arg(after));
            }
            sql += &format!(" ORDER BY t.id LIMIT {}", args.arg(page.fetch()));
            let rows = c
                .query(&sql, args.values())?
                .iter()
                .map(|r| {
                    let role = r.col(GrantCols::at(teams::model::TeamCols::COUNT).role)?;
                    Ok((teams::Team::from_row(r)?, role))
                })
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            Ok::<_, ApiError>((
                target.standing,
                page.finish(rows, count as u64, |(t, _)| t.id.clone()),
            ))
        })
        .await?;
    Ok(axum::Json(list.map(|(t, permission)| TeamPermission {
        permission,
        team: crate::api::teams::team_json(&t, standing),
    })))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/permissions",
    tag = "Permissions",
    summary = "Give users and teams a role on a space",
    params(SpacePath),
    request_body = InviteBody,
    responses((status = 204, description = "The grants are made (users outside the organization join it as guests).")),
    security(("token" = ["space:metadata:write"]))
)]
async fn invite_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    Json(body): Json<InviteBody>,
) -> ApiResult<StatusCode> {
    invite(Kind::Space, caller, app, id, body).await
}

#[utoipa::path(
    post,
    path = "/v1/collections/{collectionId}/permissions",
    tag = "Permissions",
    summary = "Give users and teams a role on a collection",
    params(CollectionPath),
    request_body = InviteBody,
    responses((status = 204, description = "The grants are made (users outside the organization join it as guests).")),
    security(("token" = ["space:metadata:write"]))
)]
async fn invite_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    Json(body): Json<InviteBody>,
) -> ApiResult<StatusCode> {
    invite(Kind::Collection, caller, app, id, body).await
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/permissions/users",
    tag = "Permissions",
    summary = "List the users with a role on a space",
    params(SpacePath, Paging),
    responses((status = 200, description = "The users and their roles.", body = List<UserPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_users_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    list_users(Kind::Space, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}/permissions/users",
    tag = "Permissions",
    summary = "List the users with a role on a collection",
    params(CollectionPath, Paging),
    responses((status = 200, description = "The users and their roles.", body = List<UserPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_users_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<UserPermission>>> {
    list_users(Kind::Collection, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/permissions/teams",
    tag = "Permissions",
    summary = "List the teams with a role on a space",
    params(SpacePath, Paging),
    responses((status = 200, description = "The teams and their roles.", body = List<TeamPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_teams_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id: id }): Path<SpacePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    list_teams(Kind::Space, caller, app, id, paging).await
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}/permissions/teams",
    tag = "Permissions",
    summary = "List the teams with a role on a collection",
    params(CollectionPath, Paging),
    responses((status = 200, description = "The teams and their roles.", body = List<TeamPermission>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_teams_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TeamPermission>>> {
    list_teams(Kind::Collection, caller, app, id, paging).await
}

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Change or remove a user's role on a space",
    params(SpaceUserPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_user_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceUserPath {
        space_id: id,
        user_id: user,
    }): Path<SpaceUserPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Space, caller, app, id, HolderId::User(user), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/collections/{collectionId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Change or remove a user's role on a collection",
    params(CollectionUserPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_user_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionUserPath {
        collection_id: id,
        user_id: user,
    }): Path<CollectionUserPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Collection, caller, app, id, HolderId::User(user), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Change or remove a team's role on a space",
    params(SpaceTeamPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_team_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceTeamPath {
        space_id: id,
        team_id: team,
    }): Path<SpaceTeamPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Space, caller, app, id, HolderId::Team(team), body).await
}

#[utoipa::path(
    patch,
    path = "/v1/collections/{collectionId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Change or remove a team's role on a collection",
    params(CollectionTeamPath),
    request_body = RoleBody,
    responses((status = 204, description = "The grant is changed.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_team_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionTeamPath {
        collection_id: id,
        team_id: team,
    }): Path<CollectionTeamPath>,
    Json(body): Json<RoleBody>,
) -> ApiResult<StatusCode> {
    update(Kind::Collection, caller, app, id, HolderId::Team(team), body).await
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Remove a user's role on a space",
    params(SpaceUserPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn remove_user_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceUserPath {
        space_id: id,
        user_id: user,
    }): Path<SpaceUserPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Space, caller, app, id, HolderId::User(user)).await
}

#[utoipa::path(
    delete,
    path = "/v1/collections/{collectionId}/permissions/users/{userId}",
    tag = "Permissions",
    summary = "Remove a user's role on a collection",
    params(CollectionUserPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn remove_user_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionUserPath {
        collection_id: id,
        user_id: user,
    }): Path<CollectionUserPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Collection, caller, app, id, HolderId::User(user)).await
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Remove a team's role on a space",
    params(SpaceTeamPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn remove_team_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpaceTeamPath {
        space_id: id,
        team_id: team,
    }): Path<SpaceTeamPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Space, caller, app, id, HolderId::Team(team)).await
}

#[utoipa::path(
    delete,
    path = "/v1/collections/{collectionId}/permissions/teams/{teamId}",
    tag = "Permissions",
    summary = "Remove a team's role on a collection",
    params(CollectionTeamPath),
    responses((status = 204, description = "The grant is gone.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn remove_team_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionTeamPath {
        collection_id: id,
        team_id: team,
    }): Path<CollectionTeamPath>,
) -> ApiResult<StatusCode> {
    remove(Kind::Collection, caller, app, id, HolderId::Team(team)).await
}
