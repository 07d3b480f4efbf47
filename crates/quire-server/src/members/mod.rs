//! Organization members: list, get, change role, remove, ping, SSO, a member's teams.

pub mod model;

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn, for_update, like_contains};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Json, Order, Patch, Path, Query, QueryOf};
use crate::orgs::{self, OrgFor};
use crate::paths::{OrgMemberPath, OrgPath};
use crate::{clock, params, signing};
pub use model::{Member, MemberJson};
use quire_store::events::{self, Event, Kind};
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{MemberAction, OrgAction, Role, member_allows};
use quire_store::users;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_members))
        .routes(routes!(get_member, update_member, remove_member))
        .routes(routes!(set_sso))
        .routes(routes!(crate::teams::list_member_teams))
        .routes(routes!(ping))
}

/// Fails with 404 or 403 unless the caller may act on the membership of `user_id`.
pub fn require_member_action(
    org: &OrgFor,
    caller: &Caller,
    user_id: &str,
    action: MemberAction,
) -> ApiResult<()> {
    org.require(OrgAction::View)?;
    if !member_allows(org.standing, caller.user_id == user_id, action) {
        return Err(quire_store::permissions::role_forbidden(
            action.describe(),
            action.needed(),
            &format!("in organization {:?}", org.org.id),
            org.standing.role(),
        )
        .into());
    }
    Ok(())
}

/// The query of `GET /v1/orgs/{organizationId}/members`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListMembersQuery {
    /// The direction of the sort.
    #[param(inline, value_type = Option<Order>)]
    order: Order,
    /// What to sort by: `joinedAt` (the default), `lastSeenAt` or `name`.
    #[param(value_type = Option<String>)]
    sort: &'static str,
    /// Only members with this role; `guest` for members without one.
    #[param(value_type = Option<String>)]
    role: Option<Option<Role>>,
    /// Only members whose name or email contains this text (case and accents ignored).
    #[param(value_type = Option<String>)]
    search: Option<String>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListMembersQuery {
    fn from_query(query: &Query) -> ApiResult<ListMembersQuery> {
        let order = query.order()?;
        let sort = query.one_of("sort", &["joinedAt", "lastSeenAt", "name"], "joinedAt")?;
        let role = match query.str("role") {
            None | Some("") => None,
            Some("guest") => Some(None),
            Some(r) => Some(Some(Role::parse_field("role", r)?)),
        };
        let search = query.str("search").map(users::fold).filter(|s| !s.is_empty());
        Ok(ListMembersQuery {
            order,
            sort,
            role,
            search,
            paging: Paging::from_query(query)?,
        })
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/members",
    tag = "Organization members",
    summary = "List the members of an organization",
    params(OrgPath, ListMembersQuery, Paging),
    responses((status = 200, description = "The members.", body = List<MemberJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_members(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(ListMembersQuery {
        order,
        sort,
        role,
        search,
        paging,
    }): QueryOf<ListMembersQuery>,
) -> ApiResult<axum::Json<List<MemberJson>>> {
    let scope = format!("members:{org_id}:{}:{sort}:{role:?}:{search:?}", order.name());
    let page = Page::new(&paging, scope)?;
    let list = app
        .db
        .read(move |c| {
            orgs::load_visible(c, &org_id, &caller.user_id)?.require(OrgAction::ListMembers)?;
            let mut args = Args::default();
            let org = args.arg(&org_id);
            let mut filter = String::new();
            match role {
                Some(Some(r)) => filter += &format!(" AND m.role = {}", args.arg(r.as_str())),
                Some(None) => filter += " AND m.role IS NULL",
                None => {}
            }
            if let Some(s) = &search {
                filter += &format!(" AND u.search_text LIKE {} ESCAPE '\\'", args.arg(like_contains(s)));
            }
            let key = match sort {
                "lastSeenAt" => {
                    filter += " AND m.last_seen_at IS NOT NULL";
                    "m.last_seen_at"
                }
                "name" => "u.display_name",
                _ => "m.joined_at",
            };
            let count: i64 = c
                .query_scalar(
                    &format!("SELECT count(*) FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = {org}{filter}"),
                    args.values(),
                )?
                .unwrap_or(0);
            let mut sql = format!("{}{filter}", model::select(&org));
            if let Some((value, id)) = page.after::<(serde_json::Value, String)>()? {
                let value = match value {
                    serde_json::Value::Number(n) => args.arg(n.as_i64().unwrap_or(0)),
                    serde_json::Value::String(s) => args.arg(s),
                    _ => return Err(ApiError::bad_request("query parameter `page` is not a cursor of this list")),
                };
                sql += &format!(" AND ({key}, m.user_id) {} ({value}, {})", order.after_op(), args.arg(id));
            }
            sql += &format!(" ORDER BY {key} {0}, m.user_id {0} LIMIT {1}", order.sql(), args.arg(page.fetch()));
            let members =
                c.query(&sql, args.values())?.iter().map(Member::from_row).collect::<Result<Vec<_>, _>>()?;
            Ok::<_, ApiError>(page.finish(members, count as u64, |m| {
                let value = match sort {
                    "lastSeenAt" => serde_json::json!(m.last_seen_at.unwrap_or(0)),
                    "name" => serde_json::json!(m.user.display_name),
                    _ => serde_json::json!(m.joined_at),
                };
                (value, m.user.id.clone())
            }))
        })
        .await?;
    Ok(axum::Json(list.map(|m| m.to_json(&app.urls))))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/members/{userId}",
    tag = "Organization members",
    summary = "Get a member of an organization",
    params(OrgMemberPath),
    responses((status = 200, description = "The member.", body = MemberJson)),
    security(("token" = ["org:read"]))
)]
async fn get_member(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
) -> ApiResult<axum::Json<MemberJson>> {
    let member = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            require_member_action(&org, &caller, &user_id, MemberAction::View)?;
            model::load(c, &org_id, &user_id)?.ok_or_else(|| not_a_member(&user_id))
        })
        .await?;
    Ok(axum::Json(member.to_json(&app.urls)))
}

fn not_a_member(user_id: &str) -> ApiError {
    ApiError::not_found(format!("user {user_id:?} is not a member of this organization"))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateMember {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/members/{userId}",
    tag = "Organization members",
    summary = "Change a member's role",
    params(OrgMemberPath),
    request_body = UpdateMember,
    responses((status = 200, description = "The member as updated.", body = MemberJson)),
    security(("token" = ["org:write"]))
)]
async fn update_member(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
    Json(body): Json<UpdateMember>,
) -> ApiResult<axum::Json<MemberJson>> {
    let role = match body.role {
        Patch::Absent => None,
        Patch::Null => Some(None),
        Patch::Value(r) => Some(Some(Role::parse_field("role", &r)?)),
    };
    let member = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            require_member_action(&org, &caller, &user_id, MemberAction::ChangeRole)?;
            lock_members(c, &org_id)?;
            let current = model::load(c, &org_id, &user_id)?.ok_or_else(|| not_a_member(&user_id))?;
            if let Some(role) = role {
                if current.role == Some(Role::Admin) && role != Some(Role::Admin) {
                    keep_an_admin(c, &org_id)?;
                }
                c.execute(
                    "UPDATE members SET role = ?3 WHERE organization_id = ?1 AND user_id = ?2",
                    params![org_id.clone(), user_id.clone(), role.map(Role::as_str)],
                )?;
            }
            model::load(c, &org_id, &user_id)?.ok_or_else(|| not_a_member(&user_id))
        })
        .await?;
    Ok(axum::Json(member.to_json(&app.urls)))
}

/// Serializes membership changes of one organization, so that two admins demoting each other at
/// once cannot leave it without an admin.
fn lock_members(c: &mut dyn Conn, org_id: &str) -> ApiResult<()> {
    let sql = format!("SELECT id FROM organizations WHERE id = ?1{}", for_update(c));
    c.query(&sql, params![org_id])?;
    Ok(())
}

/// Fails unless another admin remains once the current one steps down.
fn keep_an_admin(c: &mut dyn Conn, org_id: &str) -> ApiResult<()> {
    let admins: i64 = c
        .query_scalar(
            "SELECT count(*) FROM members WHERE organization_id = ?1 AND role = 'admin' AND disabled = 0",
            params![org_id],
        )?
        .unwrap_or(0);
    if admins <= 1 {
        return Err(ApiError::bad_request(
            "this is the last admin of the organization: make another member admin first",
        ));
    }
    Ok(())
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/members/{userId}",
    tag = "Organization members",
    summary = "Remove a member from an organization",
    params(OrgMemberPath),
    responses((status = 204, description = "The user is no longer a member.")),
    security(("token" = ["org:write"]))
)]
async fn remove_member(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            require_member_action(&org, &caller, &user_id, MemberAction::Remove)?;
            lock_members(c, &org_id)?;
            let Some(current) = model::load(c, &org_id, &user_id)? else {
                return Ok(());
            };
            if current.role == Some(Role::Admin) {
                keep_an_admin(c, &org_id)?;
            }
            remove(c, &org_id, &user_id, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Removes a user from an organization with everything that gave them access in it.
pub fn remove(c: &mut dyn Conn, org_id: &str, user_id: &str, actor: &str) -> ApiResult<()> {
    c.execute(
        "DELETE FROM team_members WHERE user_id = ?2
             AND team_id IN (SELECT id FROM teams WHERE organization_id = ?1)",
        params![org_id, user_id],
    )?;
    c.execute(
        "DELETE FROM grants WHERE organization_id = ?1 AND user_id = ?2",
        params![org_id, user_id],
    )?;
    let removed = c.execute(
        "DELETE FROM members WHERE organization_id = ?1 AND user_id = ?2",
        params![org_id, user_id],
    )?;
    if removed > 0 {
        let payload = json!({ "userId": user_id });
        events::record(
            c,
            Event::member(Kind::MemberRemoved, org_id, user_id, Some(actor), payload),
        )?;
    }
    Ok(())
}

/// Adds a user to an organization, or raises their role to `role` when it is stronger. Never
/// lowers a role: joining through an invite cannot demote anyone. `actor` is who let them in.
pub fn join(c: &mut dyn Conn, org_id: &str, user_id: &str, role: Option<Role>, actor: &str) -> ApiResult<()> {
    let current: Option<Option<Role>> = c
        .query_opt(
            "SELECT role FROM members WHERE organization_id = ?1 AND user_id = ?2",
            params![org_id, user_id],
        )?
        .map(|r| r.get(0))
        .transpose()?;
    match current {
        None => {
            c.execute(
                "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)",
                params![org_id, user_id, role.map(Role::as_str), clock::now_ms()],
            )?;
            added(c, org_id, user_id, role, actor)?;
        }
        Some(existing) => {
            if role > existing {
                c.execute(
                    "UPDATE members SET role = ?3 WHERE organization_id = ?1 AND user_id = ?2",
                    params![org_id, user_id, role.map(Role::as_str)],
                )?;
            }
        }
    }
    Ok(())
}

/// Records that `user_id` joined the organization with `role` (None: a guest).
pub fn added(
    c: &mut dyn Conn,
    org_id: &str,
    user_id: &str,
    role: Option<Role>,
    actor: &str,
) -> ApiResult<()> {
    let payload = json!({ "userId": user_id, "role": role.map(Role::as_str) });
    events::record(
        c,
        Event::member(Kind::MemberAdded, org_id, user_id, Some(actor), payload),
    )?;
    Ok(())
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/members/{userId}/sso",
    tag = "Organization members",
    summary = "Mark a member as an SSO member",
    params(OrgMemberPath),
    responses((status = 200, description = "The member as updated.", body = MemberJson)),
    security(("token" = ["org:write"]))
)]
async fn set_sso(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
) -> ApiResult<axum::Json<MemberJson>> {
    let member = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            require_member_action(&org, &caller, &user_id, MemberAction::MarkSso)?;
            let changed = c.execute(
                "UPDATE members SET sso = 1 WHERE organization_id = ?1 AND user_id = ?2",
                params![org_id.clone(), user_id.clone()],
            )?;
            if changed == 0 {
                return Err(not_a_member(&user_id));
            }
            model::load(c, &org_id, &user_id)?.ok_or_else(|| not_a_member(&user_id))
        })
        .await?;
    Ok(axum::Json(member.to_json(&app.urls)))
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PingResponse {
    service_visitor_claims: String,
}

/// Records that the caller was active, and returns a signed token of the claims a visitor-auth
/// site can attach to this user.
#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/ping",
    tag = "Organization members",
    summary = "Record the caller's activity in an organization",
    params(OrgPath),
    responses((status = 200, description = "The signed claims a visitor-auth site can attach to the caller.", body = PingResponse)),
    security(("token" = ["org:write"]))
)]
async fn ping(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
) -> ApiResult<axum::Json<PingResponse>> {
    let now = clock::now_ms();
    let user_id = caller.user_id.clone();
    let org = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &user_id)?;
            c.execute(
                "UPDATE members SET last_seen_at = ?3 WHERE organization_id = ?1 AND user_id = ?2",
                params![org_id.clone(), user_id.clone(), now],
            )?;
            Ok::<_, ApiError>(org)
        })
        .await?;
    let claims = serde_json::json!({
        "iss": app.urls.base(),
        "sub": caller.user_id,
        "email": caller.email,
        "name": caller.display_name,
        "organization": org.org.id,
        "role": org.standing.role(),
        "iat": now / 1000,
        "exp": now / 1000 + 3600,
    });
    Ok(axum::Json(PingResponse {
        service_visitor_claims: signing::jwt(&app.signing_key, &claims),
    }))
}
