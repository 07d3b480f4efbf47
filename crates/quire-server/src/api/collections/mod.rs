//! Collections: nestable groups of spaces.

pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::collections::{self, DESCRIPTION_MAX, TITLE_MAX};
use quire_store::paging::{List, Paging};
use quire_store::permissions::{DefaultLevel, collection, org};
use quire_store::{spaces, validate};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::spaces::{MoveBody, SpaceJson, space_json};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, OptionalJson, Patch, Path, QueryOf};
use crate::paths::{CollectionPath, OrgPath};
use crate::state::App;
pub use wire::{CollectionJson, collection_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_collections, create_collection))
        .routes(routes!(get_collection, update_collection, delete_collection))
        .routes(routes!(list_collection_spaces))
        .routes(routes!(move_collection))
        .routes(routes!(transfer_collection))
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}",
    tag = "Collections",
    summary = "Get a collection",
    params(CollectionPath),
    responses((status = 200, description = "The collection.", body = CollectionJson)),
    security(("token" = ["space:metadata:read"]))
)]
async fn get_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
) -> ApiResult<axum::Json<CollectionJson>> {
    let col = app
        .db
        .read_as::<collection::View, _>(caller.user_id.clone(), id.clone(), |_, it| Ok(it.into_inner()))
        .await?;
    Ok(axum::Json(collection_json(&app.urls, &col)))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateCollection {
    title: Option<String>,
    parent: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/collections",
    tag = "Collections",
    summary = "Create a collection",
    params(OrgPath),
    request_body(content = Option<CreateCollection>, description = "Optional.", content_type = "application/json"),
    responses((status = 201, description = "The new collection.", body = CollectionJson, headers(("Location" = String, description = "The collection's URL.")))),
    security(("token" = ["space:metadata:write"]))
)]
async fn create_collection(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    OptionalJson(body): OptionalJson<CreateCollection>,
) -> ApiResult<impl IntoResponse> {
    let body = body.unwrap_or_default();
    let title = body.title.unwrap_or_else(|| "Untitled".to_string());
    validate::name("title", &title, TITLE_MAX)?;
    let col = app
        .db
        .write(move |c| collections::create(c, &caller.user_id, &org_id, &title, body.parent.as_deref()))
        .await?;
    let json = collection_json(&app.urls, &col);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateCollection {
    title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<serde_json::Value>)]
    default_level: Patch<serde_json::Value>,
}

#[utoipa::path(
    patch,
    path = "/v1/collections/{collectionId}",
    tag = "Collections",
    summary = "Update a collection",
    params(CollectionPath),
    request_body = UpdateCollection,
    responses((status = 200, description = "The collection as updated.", body = CollectionJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn update_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    Json(body): Json<UpdateCollection>,
) -> ApiResult<axum::Json<CollectionJson>> {
    if let Some(t) = &body.title {
        validate::name("title", t, TITLE_MAX)?;
    }
    if let Patch::Value(d) = &body.description {
        validate::max_len("description", d, DESCRIPTION_MAX)?;
    }
    let changes = collections::Changes {
        default_level: DefaultLevel::parse_patch(&body.default_level)?,
        title: body.title,
        description: body.description,
    };
    let col = app
        .db
        .write_as::<collection::Admin, _>(caller.user_id.clone(), id.clone(), move |c, col| {
            collections::update(c, &col, &caller.user_id, &changes)
        })
        .await?;
    Ok(axum::Json(collection_json(&app.urls, &col)))
}

#[utoipa::path(
    delete,
    path = "/v1/collections/{collectionId}",
    tag = "Collections",
    summary = "Delete a collection and everything in it",
    params(CollectionPath),
    responses((status = 204, description = "The collection is deleted.")),
    security(("token" = ["space:metadata:write"]))
)]
async fn delete_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
) -> ApiResult<StatusCode> {
    let retention = app.store.settings.space_retention_ms;
    app.db
        .write_as::<collection::Admin, _>(caller.user_id.clone(), id.clone(), move |c, col| {
            // A collection the caller cannot see (or that never existed) answers 404.
            spaces::lifecycle::delete_collection(c, &col, retention, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/collections/{collectionId}/spaces",
    tag = "Collections",
    summary = "List the spaces of a collection",
    params(CollectionPath, Paging),
    responses((status = 200, description = "The spaces the caller can see.", body = List<SpaceJson>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_collection_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<SpaceJson>>> {
    let list = app
        .db
        .read_as::<collection::View, _>(caller.user_id.clone(), id.clone(), move |c, col| {
            spaces::in_collection(c, &col, &caller.user_id, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|s| space_json(&app.urls, &s))))
}

#[utoipa::path(
    post,
    path = "/v1/collections/{collectionId}/move",
    tag = "Collections",
    summary = "Move a collection",
    params(CollectionPath),
    request_body = MoveBody,
    responses((status = 200, description = "The collection as moved.", body = CollectionJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn move_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    Json(body): Json<MoveBody>,
) -> ApiResult<axum::Json<CollectionJson>> {
    body.check()?;
    let col = app
        .db
        .write_as::<collection::Admin, _>(caller.user_id.clone(), id.clone(), move |c, col| {
            collections::move_to(c, &col, &caller.user_id, &body.parent, body.position.as_ref())
        })
        .await?;
    Ok(axum::Json(collection_json(&app.urls, &col)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = TransferCollection)]
struct TransferBody {
    organization: String,
}

#[utoipa::path(
    post,
    path = "/v1/collections/{collectionId}/transfer",
    tag = "Collections",
    summary = "Transfer a collection to another organization",
    params(CollectionPath),
    request_body = TransferBody,
    responses((status = 200, description = "The collection in its new organization.", body = CollectionJson)),
    security(("token" = ["space:metadata:write"]))
)]
async fn transfer_collection(
    caller: Caller,
    State(app): State<App>,
    Path(CollectionPath { collection_id: id }): Path<CollectionPath>,
    Json(body): Json<TransferBody>,
) -> ApiResult<axum::Json<CollectionJson>> {
    let col = app
        .db
        .write_as::<collection::Admin, _>(caller.user_id.clone(), id.clone(), move |c, col| {
            collections::transfer(c, &col, &caller.user_id, &body.organization)
        })
        .await?;
    Ok(axum::Json(collection_json(&app.urls, &col)))
}

/// The query of `GET /v1/orgs/{organizationId}/collections`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListCollectionsQuery {
    /// Whether to list collections inside collections too (`true`, the default), or only the
    /// organization's top-level ones.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    nested: Option<bool>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/collections",
    tag = "Collections",
    summary = "List the collections of an organization",
    params(OrgPath, ListCollectionsQuery, Paging),
    responses((status = 200, description = "The collections the caller can see.", body = List<CollectionJson>)),
    security(("token" = ["space:metadata:read"]))
)]
async fn list_collections(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(ListCollectionsQuery { nested, paging }): QueryOf<ListCollectionsQuery>,
) -> ApiResult<axum::Json<List<CollectionJson>>> {
    let nested = nested.unwrap_or(true);
    let list = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            collections::list(c, &org, &caller.user_id, nested, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|c| collection_json(&app.urls, &c))))
}
