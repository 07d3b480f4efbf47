//! Invite links: a secret link that lets whoever follows it join an organization with a role, or
//! get a level of access to one space or collection (joining the organization as a guest).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};

use crate::app::App;
use crate::auth::Caller;
use crate::collections::{self, CollectionJson};
use crate::db::{Args, Conn, Row};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::{InvitePath, OrgPath};
use crate::spaces::{self, SpaceJson};
use crate::{clock, ids, params};
use quire_store::members;
use quire_store::orgs::{self, OrgFor};
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{CollectionAction, OrgAction, Role, SpaceAction, Standing};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_invites, create_invite))
        .routes(routes!(get_invite, update_invite, delete_invite))
        .routes(routes!(join_with_invite))
}

/// Invite ids are the secret of the link: longer than other ids.
fn new_invite_id() -> String {
    ids::random_base62(32)
}

#[derive(Clone, Debug)]
struct Invite {
    id: String,
    org_id: String,
    target_kind: String,
    target_id: Option<String>,
    role: Option<Role>,
}

quire_store::columns! {
    /// The columns [`Invite::from_row`] reads.
    struct InviteCols of "invite_links" {
        id: "id",
        org_id: "organization_id",
        target_kind: "target_kind",
        target_id: "target_id",
        role: "role",
        created_at: "created_at",
    }
}

const COLUMNS: &str = InviteCols::SQL;
const C: InviteCols = InviteCols::AT;

impl Invite {
    fn from_row(row: &Row) -> Result<Invite, crate::db::DbError> {
        Ok(Invite {
            id: row.col(C.id)?,
            org_id: row.col(C.org_id)?,
            target_kind: row.col(C.target_kind)?,
            target_id: row.col(C.target_id)?,
            role: row.col(C.role)?,
        })
    }
}

fn load(c: &mut dyn Conn, org_id: &str, invite_id: &str) -> ApiResult<Invite> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM invite_links WHERE id = ?1 AND organization_id = ?2"),
        params![invite_id, org_id],
    )?
    .map(|r| Invite::from_row(&r))
    .transpose()?
    .ok_or_else(|| ApiError::not_found(format!("invite {invite_id:?} not found")))
}

/// The wire invite: `role` for an organization invite, `level` and the target otherwise.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct InviteJson {
    object: &'static str,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Option<Role>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<Option<Role>>,
    redundant: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    space: Option<SpaceJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    collection: Option<CollectionJson>,
}

/// Renders an invite for the caller; `redundant` when the caller already has what it grants.
fn render(c: &mut dyn Conn, app: &App, invite: &Invite, caller: &str) -> ApiResult<InviteJson> {
    let standing = orgs::load_for(c, &invite.org_id, caller)?.map_or(Standing::Outsider, |o| o.standing);
    let mut json = InviteJson {
        object: "invite",
        id: invite.id.clone(),
        role: None,
        level: None,
        redundant: false,
        space: None,
        collection: None,
    };
    match (invite.target_kind.as_str(), &invite.target_id) {
        ("space", Some(id)) => {
            let space =
                spaces::model::load_for(c, id, caller)?.ok_or_else(|| spaces::model::not_found(id))?;
            json.redundant = space.role >= invite.role;
            json.level = Some(invite.role);
            // The invitee may not see the space yet: it is shown as the link will make it.
            let role = space.role.max(invite.role);
            json.space = Some(space.space.to_json(&app.urls, role));
        }
        ("collection", Some(id)) => {
            let col = collections::model::load_for(c, id, caller)?
                .ok_or_else(|| collections::model::not_found(id))?;
            json.redundant = col.role >= invite.role;
            json.level = Some(invite.role);
            let role = col.role.max(invite.role);
            json.collection = Some(col.collection.to_json(&app.urls, role));
        }
        _ => {
            json.redundant = match standing {
                Standing::Outsider => false,
                Standing::Guest => invite.role.is_none(),
                Standing::Member(r) => invite.role.is_none_or(|want| r >= want),
            };
            json.role = Some(invite.role);
        }
    }
    Ok(json)
}

/// Who may manage an invite: organization admins, and admins of the space or collection it
/// opens.
fn require_manage(c: &mut dyn Conn, org: &OrgFor, invite: &Invite, caller: &str) -> ApiResult<()> {
    let (allowed, role, place) = match (invite.target_kind.as_str(), &invite.target_id) {
        ("space", Some(id)) => {
            let space = spaces::model::load_for(c, id, caller)?;
            let allowed = space.as_ref().is_some_and(|s| s.allows(SpaceAction::Admin));
            (allowed, space.and_then(|s| s.role), format!("on space {id:?}"))
        }
        ("collection", Some(id)) => {
            let col = collections::model::load_for(c, id, caller)?;
            let allowed = col
                .as_ref()
                .is_some_and(|col| col.allows(CollectionAction::Admin));
            (
                allowed,
                col.and_then(|col| col.role),
                format!("on collection {id:?}"),
            )
        }
        _ => (
            org.allows(OrgAction::Admin),
            org.standing.role(),
            format!("in organization {:?}", org.org.id),
        ),
    };
    if !allowed {
        return Err(quire_store::permissions::role_forbidden(
            "managing an invite link",
            Role::Admin,
            &place,
            role,
        )
        .into());
    }
    Ok(())
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/link-invites",
    tag = "Organizations",
    summary = "List the invite links of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The invite links.", body = List<InviteJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_invites(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<InviteJson>>> {
    let page = Page::new(&paging, format!("invites:{org_id}"))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            orgs::load_visible(c, &org_id, &caller.user_id)?.require(OrgAction::Admin)?;
            let mut args = Args::default();
            let filter = format!(
                " WHERE organization_id = {} AND target_kind = 'organization'",
                args.arg(&org_id)
            );
            let list = quire_store::paging::by_creation(
                c,
                &page,
                ("invite_links", COLUMNS),
                (filter, args),
                |r| Ok((Invite::from_row(r)?, r.col::<i64>(C.created_at)?)),
                |(i, created)| (*created, i.id.clone()),
            )?;
            let mut items = Vec::with_capacity(list.items.len());
            for (invite, _) in &list.items {
                items.push(render(c, &app2, invite, &caller.user_id)?);
            }
            Ok::<_, ApiError>(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateInvite {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    level: Patch<String>,
    space: Option<String>,
    collection: Option<String>,
}

fn role_field(field: &str, value: &Patch<String>) -> ApiResult<Option<Role>> {
    match value {
        Patch::Absent => Err(ApiError::bad_request(format!("`{field}` is required"))),
        Patch::Null => Ok(None),
        Patch::Value(r) => Ok(Some(Role::parse_field(field, r)?)),
    }
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/link-invites",
    tag = "Organizations",
    summary = "Create an invite link",
    params(OrgPath),
    request_body = CreateInvite,
    responses((status = 201, description = "The new invite link; its id is the link's secret.", body = InviteJson)),
    security(("token" = ["org:write"]))
)]
async fn create_invite(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<CreateInvite>,
) -> ApiResult<impl IntoResponse> {
    let (kind, target, role) = match (&body.space, &body.collection) {
        (Some(_), Some(_)) => {
            return Err(ApiError::bad_request(
                "an invite opens a `space` or a `collection`, not both",
            ));
        }
        (Some(s), None) => ("space", Some(s.clone()), role_field("level", &body.level)?),
        (None, Some(col)) => ("collection", Some(col.clone()), role_field("level", &body.level)?),
        (None, None) => ("organization", None, role_field("role", &body.role)?),
    };
    if kind != "organization" && role.is_none() {
        return Err(ApiError::bad_request(
            "`level` of a space or collection invite must be a role",
        ));
    }
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            if !org.org.invite_links {
                return Err(ApiError::bad_request("invite links are turned off for this organization (`inviteLinks`)"));
            }
            if let Some(t) = &target {
                let in_org: Option<String> = c.query_scalar(
                    &format!("SELECT organization_id FROM {}s WHERE id = ?1", kind),
                    params![t.clone()],
                )?;
                if in_org.as_deref() != Some(org_id.as_str()) {
                    return Err(ApiError::bad_request(format!("`{kind}` {t:?} is not in this organization")));
                }
            }
            let invite = Invite {
                id: new_invite_id(),
                org_id: org_id.clone(),
                target_kind: kind.to_string(),
                target_id: target.clone(),
                role,
            };
            require_manage(c, &org, &invite, &caller.user_id)?;
            c.execute(
                "INSERT INTO invite_links (id, organization_id, target_kind, target_id, role, created_by, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    invite.id.clone(),
                    org_id.clone(),
                    kind,
                    target.clone(),
                    role.map(Role::as_str),
                    caller.user_id.clone(),
                    clock::now_ms()
                ],
            )?;
            render(c, &app2, &invite, &caller.user_id)
        })
        .await?;
    Ok((StatusCode::CREATED, axum::Json(json)))
}

/// Anyone holding an invite's id may read it: the id is the secret the link carries.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Get an invite link",
    params(InvitePath),
    responses((status = 200, description = "The invite link.", body = InviteJson)),
    security(("token" = ["org:read"]))
)]
async fn get_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<axum::Json<InviteJson>> {
    let app2 = app.clone();
    let json = app
        .db
        .read(move |c| {
            let invite = load(c, &org_id, &invite_id)?;
            render(c, &app2, &invite, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(json))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateInvite {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    role: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    level: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Update an invite link",
    params(InvitePath),
    request_body = UpdateInvite,
    responses((status = 200, description = "The invite link as updated.", body = InviteJson)),
    security(("token" = ["org:write"]))
)]
async fn update_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
    Json(body): Json<UpdateInvite>,
) -> ApiResult<axum::Json<InviteJson>> {
    let app2 = app.clone();
    let json = app
        .db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let mut invite = load(c, &org_id, &invite_id)?;
            require_manage(c, &org, &invite, &caller.user_id)?;
            invite.role = if invite.target_kind == "organization" {
                if !body.level.is_absent() {
                    return Err(ApiError::bad_request(
                        "an organization invite has a `role`, not a `level`",
                    ));
                }
                role_field("role", &body.role)?
            } else {
                if !body.role.is_absent() {
                    return Err(ApiError::bad_request(
                        "a space or collection invite has a `level`, not a `role`",
                    ));
                }
                Some(role_field("level", &body.level)?.ok_or_else(|| {
                    ApiError::bad_request("`level` of a space or collection invite must be a role")
                })?)
            };
            c.execute(
                "UPDATE invite_links SET role = ?2 WHERE id = ?1",
                params![invite.id.clone(), invite.role.map(Role::as_str)],
            )?;
            render(c, &app2, &invite, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(json))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/link-invites/{inviteId}",
    tag = "Organizations",
    summary = "Delete an invite link",
    params(InvitePath),
    responses((status = 204, description = "The invite link is gone.")),
    security(("token" = ["org:write"]))
)]
async fn delete_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let invite = match load(c, &org_id, &invite_id) {
                Ok(invite) => invite,
                Err(e) if e.status == StatusCode::NOT_FOUND => return Ok(()),
                Err(e) => return Err(e),
            };
            require_manage(c, &org, &invite, &caller.user_id)?;
            c.execute("DELETE FROM invite_links WHERE id = ?1", params![invite.id])?;
            Ok(())
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
struct Joined {}

/// Follows an invite: joins the organization with the invite's role (never lowering a role the
/// caller already has), or as a guest with the invite's level on its space or collection.
#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/invites/{inviteId}",
    tag = "Organizations",
    summary = "Join an organization through an invite link",
    params(InvitePath),
    responses((status = 200, description = "The caller joined.", body = Joined)),
    security(("token" = ["org:write"]))
)]
async fn join_with_invite(
    caller: Caller,
    State(app): State<App>,
    Path(InvitePath {
        organization_id: org_id,
        invite_id,
    }): Path<InvitePath>,
) -> ApiResult<axum::Json<Joined>> {
    app.db
        .write(move |c| {
            let invite = load(c, &org_id, &invite_id)?;
            let enabled: bool = c
                .query_scalar("SELECT invite_links FROM organizations WHERE id = ?1", params![org_id.clone()])?
                .unwrap_or(false);
            if !enabled {
                return Err(ApiError::forbidden("invite links are turned off for this organization"));
            }
            match &invite.target_id {
                None => Ok(members::join(c, &org_id, &caller.user_id, invite.role, &caller.user_id)?),
                Some(target) => {
                    members::join(c, &org_id, &caller.user_id, None, &caller.user_id)?;
                    let role = invite.role.unwrap_or(Role::Read);
                    let current: Option<Role> = c.query_scalar(
                        "SELECT role FROM grants WHERE target_id = ?1 AND user_id = ?2",
                        params![target.clone(), caller.user_id.clone()],
                    )?;
                    if current < Some(role) {
                        c.execute(
                            "INSERT INTO grants (organization_id, target_kind, target_id, user_id, role, created_at)
                             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                             ON CONFLICT (target_id, user_id) DO UPDATE SET role = excluded.role",
                            params![
                                org_id.clone(),
                                invite.target_kind.clone(),
                                target.clone(),
                                caller.user_id.clone(),
                                role.as_str(),
                                clock::now_ms()
                            ],
                        )?;
                    }
                    Ok(())
                }
            }
        })
        .await?;
    Ok(axum::Json(Joined {}))
}
