//! Spaces: create, list, read, update, delete and restore, duplicate, move, transfer; and the
//! spaces a member can access.

mod create;
pub mod wire;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::members::MemberKey;
use quire_store::merge_rules::MergeRules;
use quire_store::paging::{List, Paging};
use quire_store::permissions::{DefaultLevel, Role, member, space};
use quire_store::spaces::{self, TITLE_MAX};
use quire_store::validate;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::{Caller, Reader};
use crate::error::ApiResult;
use crate::extract::{Json, OrderQuery, Patch, Path, QueryOf};
use crate::paths::{OrgMemberPath, OrgPath, SpacePath};
use crate::state::App;
use create::{__path_create_space, __path_duplicate_space, create_space, duplicate_space};
pub use wire::{MoveBody, SpaceJson, space_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_org_spaces, create_space))
        .routes(routes!(get_space, update_space, delete_space))
        .routes(routes!(duplicate_space))
        .routes(routes!(restore_space))
        .routes(routes!(move_space))
        .routes(routes!(transfer_space))
        .routes(routes!(list_member_spaces))
}

/// The query of `GET /v1/spaces/{spaceId}`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct GetSpaceQuery {
    /// The key of a share-link site, which resolves its published URLs. quire publishes no
    /// sites yet, so the key changes nothing in the answer.
    #[serde(rename = "shareKey")]
    #[allow(dead_code)]
    share_key: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}",
    tag = "Spaces",
    summary = "Get a space",
    params(SpacePath, GetSpaceQuery),
    responses((status = 200, description = "The space.", body = SpaceJson)),
    security(("token" = ["space:metadata:read"]))
)]
async fn get_space(
    reader: Reader,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    QueryOf(_): QueryOf<GetSpaceQuery>,
) -> ApiResult<axum::Json<SpaceJson>> {
    let space = match &reader {
        // A deleted space stays readable by its members until it is purged.
        Reader::User(caller) => {
            app.spaces
                .load_visible(&app.db, &space_id, &caller.user_id)
                .await?
        }
        Reader::Visitor(visitor) => visitor.space(&app, &space_id).await?,
    };
    Ok(axum::Json(space_json(&app.urls, &space)))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/spaces",
    tag = "Spaces",
    summary = "List the spaces of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The spaces the caller can see, in creation order.", body = List<SpaceJson>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_org_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<SpaceJson>>> {
    let access = app
        .orgs
        .load_visible(&app.db, &org_id, &caller.user_id)
        .await?
        .access;
    let list = app
        .db
        .read(move |c| spaces::list(c, &org_id, &access, &paging))
        .await?;
    Ok(axum::Json(list.map(|s| space_json(&app.urls, &s))))
}

#[derive(Serialize, utoipa::ToSchema)]
struct MemberSpace {
    permission: Role,
    space: SpaceJson,
}

/// The spaces a member can access, with the member's effective role on each; each space's
/// `permissions` are the caller's.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/members/{userId}/spaces",
    tag = "Organization members",
    summary = "List the spaces a member can access",
    params(OrgMemberPath, OrderQuery, Paging),
    responses((status = 200, description = "The spaces with the member's role on each.", body = List<MemberSpace>)),
    security(("token" = ["org:read"]))
)]
async fn list_member_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(OrgMemberPath {
        organization_id: org_id,
        user_id,
    }): Path<OrgMemberPath>,
    QueryOf(OrderQuery { order, paging }): QueryOf<OrderQuery>,
) -> ApiResult<axum::Json<List<MemberSpace>>> {
    let list = app
        .db
        .read_as::<member::View, _>(
            caller.user_id.clone(),
            MemberKey { org_id, user_id },
            move |c, membership| spaces::of_member(c, &membership, &caller.user_id, order, &paging),
        )
        .await?;
    Ok(axum::Json(list.map(|(permission, s)| MemberSpace {
        permission,
        space: space_json(&app.urls, &s),
    })))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateSpace {
    edit_mode: Option<String>,
    title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<serde_json::Value>)]
    default_level: Patch<serde_json::Value>,
    language: Option<String>,
    merge_rules: Option<serde_json::Value>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    emoji: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    icon: Patch<String>,
    visibility: Option<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/spaces/{spaceId}",
    tag = "Spaces",
    summary = "Update a space",
    params(SpacePath),
    request_body = UpdateSpace,
    responses((status = 200, description = "The space as updated.", body = SpaceJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    Json(body): Json<UpdateSpace>,
) -> ApiResult<axum::Json<SpaceJson>> {
    let changes = spaces::Changes {
        edit_mode: body.edit_mode.as_deref().map(spaces::edit_mode).transpose()?,
        title: match body.title {
            Some(t) => {
                validate::name("title", &t, TITLE_MAX)?;
                Some(t)
            }
            None => None,
        },
        default_level: DefaultLevel::parse_patch(&body.default_level)?,
        language: body.language.as_deref().map(spaces::language).transpose()?,
        merge_rules: body.merge_rules.map(|v| MergeRules::parse(v, true)).transpose()?,
        emoji: match body.emoji {
            Patch::Value(e) => Patch::Value(spaces::emoji(&e)?),
            other => other,
        },
        icon: match body.icon {
            Patch::Value(u) => Patch::Value(validate::url("icon", &u)?.to_string()),
            other => other,
        },
        visibility: body.visibility,
    };
    let space = app
        .db
        .write_as::<space::Admin, _>(caller.user_id.clone(), space_id.clone(), move |c, space| {
            spaces::update(c, &space, &caller.user_id, &changes)
        })
        .await?;
    Ok(axum::Json(space_json(&app.urls, &space)))
}

#[utoipa::path(
    delete,
    path = "/v1/spaces/{spaceId}",
    tag = "Spaces",
    summary = "Delete a space (it can be restored for the retention period)",
    params(SpacePath),
    responses((status = 204, description = "The space is deleted.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn delete_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
) -> ApiResult<StatusCode> {
    let retention = app.store.settings.space_retention_ms;
    app.db
        .write_as::<space::Admin, _>(caller.user_id.clone(), space_id.clone(), move |c, space| {
            // A space the caller cannot see (or that never existed, or was purged) fails the
            // load with a 404, which a DELETE answers as 204 (`middleware::AbsentIsDeleted`).
            spaces::delete(c, &space, retention, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/restore",
    tag = "Spaces",
    summary = "Restore a deleted space",
    params(SpacePath),
    responses((status = 200, description = "The space, restored.", body = SpaceJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn restore_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
) -> ApiResult<axum::Json<SpaceJson>> {
    let retention = app.store.settings.space_retention_ms;
    let space = app
        .db
        .write_as::<space::Admin, _>(caller.user_id.clone(), space_id.clone(), move |c, space| {
            spaces::restore(c, &space, &caller.user_id, retention)
        })
        .await?;
    Ok(axum::Json(space_json(&app.urls, &space)))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/move",
    tag = "Spaces",
    summary = "Move a space",
    params(SpacePath),
    request_body = MoveBody,
    responses((status = 200, description = "The space as moved.", body = SpaceJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn move_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    Json(body): Json<MoveBody>,
) -> ApiResult<axum::Json<SpaceJson>> {
    body.check()?;
    let space = app
        .db
        .write_as::<space::Admin, _>(caller.user_id.clone(), space_id.clone(), move |c, space| {
            spaces::move_to(c, &space, &caller.user_id, &body.parent, body.position.as_ref())
        })
        .await?;
    Ok(axum::Json(space_json(&app.urls, &space)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct TransferSpace {
    organization: String,
    collection: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/transfer",
    tag = "Spaces",
    summary = "Transfer a space to another organization",
    params(SpacePath),
    request_body = TransferSpace,
    responses((status = 200, description = "The space in its new organization.", body = SpaceJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn transfer_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    Json(body): Json<TransferSpace>,
) -> ApiResult<axum::Json<SpaceJson>> {
    let space = app
        .db
        .write_as::<space::Admin, _>(caller.user_id.clone(), space_id.clone(), move |c, space| {
            spaces::transfer(
                c,
                &space,
                &caller.user_id,
                &body.organization,
                body.collection.as_deref(),
            )
        })
        .await?;
    Ok(axum::Json(space_json(&app.urls, &space)))
}
