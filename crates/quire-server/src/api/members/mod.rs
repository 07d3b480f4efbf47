//! Organization members: list, get, change role, remove, ping, SSO, a member's teams.

pub mod wire;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::members::MemberKey;
use quire_store::members::{self, Filter};
use quire_store::paging::{List, Order, Paging};
use quire_store::permissions::{Role, member, org};
use quire_store::{clock, users};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::{OrgMemberPath, OrgPath};
use crate::signing;
use crate::state::App;
pub use wire::{MemberJson, member_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_members))
        .routes(routes!(get_member, update_member, remove_member))
        .routes(routes!(set_sso))
        .routes(routes!(ping))
}

/// The query of `GET /v1/orgs/{organizationId}/members`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListMembersQuery {
    /// The direction of the sort.
    #[param(inline, value_type = Option<Order>)]
    #[serde(default)]
    order: Order,
    /// What to sort by: `joinedAt` (the default), `lastSeenAt` or `name`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    sort: MemberSort,
    /// Only members with this role; `guest` for members without one.
    #[param(value_type = Option<String>)]
    role: Option<String>,
    /// Only members whose name or email contains this text (case and accents ignored).
    #[param(value_type = Option<String>)]
    search: Option<String>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[derive(Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
enum MemberSort {
    #[default]
    JoinedAt,
    LastSeenAt,
    Name,
}

impl MemberSort {
    fn as_str(self) -> &'static str {
        match self {
            MemberSort::JoinedAt => "joinedAt",
            MemberSort::LastSeenAt => "lastSeenAt",
            MemberSort::Name => "name",
        }
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
    let sort = sort.as_str();
    let role = match role.as_deref() {
        None => None,
        Some("guest") => Some(None),
        Some(r) => Some(Some(Role::parse_field("role", r)?)),
    };
    let search = search.as_deref().map(users::fold).filter(|s| !s.is_empty());
    let filter = Filter {
        order,
        sort,
        role,
        search,
    };
    let list = app
        .db
        .read_as::<org::ListMembers, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            members::list(c, &org, &filter, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|m| member_json(&app.urls, &m))))
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
        .read_as::<member::View, _>(
            caller.user_id.clone(),
            MemberKey { org_id, user_id },
            move |c, membership| members::get(c, &membership),
        )
        .await?;
    Ok(axum::Json(member_json(&app.urls, &member)))
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
        .write_as::<member::ChangeRole, _>(
            caller.user_id.clone(),
            MemberKey { org_id, user_id },
            move |c, membership| members::change_role(c, &membership, role),
        )
        .await?;
    Ok(axum::Json(member_json(&app.urls, &member)))
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
        .write_as::<member::Remove, _>(
            caller.user_id.clone(),
            MemberKey { org_id, user_id },
            move |c, membership| members::remove(c, &membership, &caller.user_id),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
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
        .write_as::<member::MarkSso, _>(
            caller.user_id.clone(),
            MemberKey { org_id, user_id },
            move |c, membership| members::mark_sso(c, &membership),
        )
        .await?;
    Ok(axum::Json(member_json(&app.urls, &member)))
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
        .write_as::<org::View, _>(caller.user_id.clone(), org_id, move |c, org| {
            members::seen(c, &org, &user_id, now)?;
            Ok::<_, quire_store::StoreError>(org.into_inner())
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
