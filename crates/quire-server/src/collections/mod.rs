//! Collections: nestable groups of spaces.

pub mod model;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;

use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn, bytewise};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Json, OptionalJson, Patch, Path, Query, QueryOf};
use crate::paths::{CollectionPath, OrgPath};
use crate::spaces::{self, SpaceJson};
use crate::{clock, ids, params};
pub use model::{Collection, CollectionFor, CollectionJson};
use quire_store::access::AccessContext;
use quire_store::orgs;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{CollectionAction, DefaultLevel, OrgAction};
use quire_store::siblings::{self, Kind, Position};
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_collections, create_collection))
        .routes(routes!(get_collection, update_collection, delete_collection))
        .routes(routes!(list_collection_spaces))
        .routes(routes!(move_collection))
        .routes(routes!(transfer_collection))
}

pub const TITLE_MAX: usize = 50;
pub const DESCRIPTION_MAX: usize = 100;

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
        .read(move |c| model::load_visible(c, &id, &caller.user_id))
        .await?;
    Ok(axum::Json(col.to_json(&app.urls)))
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
        .write(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            match &body.parent {
                Some(parent) => {
                    let parent = model::load_visible(c, parent, &caller.user_id)
                        .map_err(|_| ApiError::bad_request(format!("`parent` {parent:?} is not a collection you can see")))?;
                    if parent.collection.org_id != org_id {
                        return Err(ApiError::bad_request("`parent` belongs to another organization"));
                    }
                    parent.require(CollectionAction::Create)?;
                }
                None => org.require(OrgAction::CreateContent)?,
            }
            let id = ids::new_id();
            let now = clock::now_ms();
            c.execute(
                "INSERT INTO collections (id, organization_id, parent_id, title, position, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, '', ?5, ?5)",
                params![id.clone(), org_id.clone(), body.parent.clone(), title.clone(), now],
            )?;
            siblings::place(c, &org_id, body.parent.as_deref(), (Kind::Collection, &id), None)?;
            model::load_visible(c, &id, &caller.user_id)
        })
        .await?;
    let json = col.to_json(&app.urls);
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

/// `defaultLevel` of a PATCH: absent keeps it; `null` is a value (no default access).
pub fn parse_default_level(value: &Patch<serde_json::Value>) -> ApiResult<Option<DefaultLevel>> {
    match value {
        Patch::Absent => Ok(None),
        Patch::Null => Ok(Some(DefaultLevel::NoAccess)),
        Patch::Value(v) => Ok(Some(DefaultLevel::parse(v)?)),
    }
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
    let default_level = parse_default_level(&body.default_level)?;
    let col = app
        .db
        .write(move |c| {
            let col = model::load_visible(c, &id, &caller.user_id)?;
            col.require(CollectionAction::Admin)?;
            let mut next = col.collection.clone();
            if let Some(t) = &body.title {
                next.title = t.clone();
            }
            if let Some(d) = body.description.clone().into_update() {
                next.description = d;
            }
            if let Some(level) = default_level {
                next.default_level = level;
            }
            c.execute(
                "UPDATE collections SET title = ?2, description = ?3, default_level = ?4, updated_at = ?5 WHERE id = ?1",
                params![id.clone(), next.title, next.description, next.default_level.to_column(), clock::now_ms()],
            )?;
            model::load_visible(c, &id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(col.to_json(&app.urls)))
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
        .write(move |c| {
            // A collection the caller cannot see (or that never existed) answers 404.
            let col = model::load_for(c, &id, &caller.user_id)?
                .filter(|col| col.allows(CollectionAction::View))
                .ok_or_else(|| ApiError::not_found(format!("collection {id:?} not found")))?;
            col.require(CollectionAction::Admin)?;
            delete_subtree(c, &col.collection, retention, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The ids of a collection and every collection below it.
pub fn subtree(c: &mut dyn Conn, collection_id: &str) -> ApiResult<Vec<String>> {
    let rows = c.query(
        "WITH RECURSIVE tree (id, depth) AS (
             SELECT id, 0 FROM collections WHERE id = ?1
             UNION ALL
             SELECT k.id, tree.depth + 1 FROM collections k JOIN tree ON k.parent_id = tree.id WHERE tree.depth < 64
         )
         SELECT id FROM tree",
        params![collection_id],
    )?;
    rows.iter().map(|r| r.get(0).map_err(ApiError::from)).collect()
}

/// Deletes a collection and the collections below it; the spaces inside are soft-deleted (and
/// restorable at the top level of the organization until the retention ends).
fn delete_subtree(c: &mut dyn Conn, col: &Collection, retention_ms: i64, actor: &str) -> ApiResult<()> {
    let ids = subtree(c, &col.id)?;
    let mut args = Args::default();
    let list = args.list(ids.iter().cloned());
    let spaces: Vec<String> = c
        .query(
            &format!("SELECT id FROM spaces WHERE parent_id IN ({list}) AND deleted_at IS NULL"),
            args.values(),
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let now = clock::now_ms();
    for space in &spaces {
        spaces::lifecycle::soft_delete(c, space, now, retention_ms, actor)?;
    }
    c.execute(
        &format!(
            "UPDATE spaces SET parent_id = NULL,
                 visibility = CASE WHEN visibility = 'in-collection' THEN 'private' ELSE visibility END
             WHERE parent_id IN ({list})"
        ),
        args.values(),
    )?;
    c.execute(
        &format!("DELETE FROM grants WHERE target_id IN ({list})"),
        args.values(),
    )?;
    c.execute(
        &format!("DELETE FROM invite_links WHERE target_id IN ({list})"),
        args.values(),
    )?;
    // Children first, so that no row points at a deleted parent.
    for id in ids.iter().rev() {
        c.execute("DELETE FROM collections WHERE id = ?1", params![id.clone()])?;
    }
    Ok(())
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
    let page = Page::new(&paging, format!("collection-spaces:{id}"))?;
    let list = app
        .db
        .read(move |c| {
            let col = model::load_visible(c, &id, &caller.user_id)?;
            let ctx = AccessContext::for_org(c, &col.collection.org_id, &caller.user_id, col.standing)?;
            let mut args = Args::default();
            let mut filter = format!(" WHERE s.parent_id = {} AND s.deleted_at IS NULL", args.arg(&id));
            filter += &ctx.visible_spaces_sql(&mut args);
            let count: i64 = c
                .query_scalar(&format!("SELECT count(*) FROM spaces s{filter}"), args.values())?
                .unwrap_or(0);
            let position = bytewise(c, "s.position");
            let mut sql = format!("SELECT {} FROM spaces s{filter}", spaces::model::columns());
            if let Some((key, sid)) = page.after::<(String, String)>()? {
                sql += &format!(
                    " AND ({position} > {} OR (s.position = {} AND s.id > {}))",
                    args.arg(key.clone()),
                    args.arg(key),
                    args.arg(sid)
                );
            }
            sql += &format!(" ORDER BY {position}, s.id LIMIT {}", args.arg(page.fetch()));
            let rows = spaces::model::query_with_roles(c, &sql, args.values(), &ctx)?;
            Ok::<_, ApiError>(page.finish(rows, count as u64, |s| {
                (s.space.position.clone(), s.space.id.clone())
            }))
        })
        .await?;
    Ok(axum::Json(list.map(|s| s.to_json(&app.urls))))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Move)]
pub struct MoveBody {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub parent: Patch<String>,
    pub position: Option<Position>,
}

impl MoveBody {
    pub fn check(&self) -> ApiResult<()> {
        if self.parent.is_absent() && self.position.is_none() {
            return Err(ApiError::bad_request("give `parent`, `position` or both"));
        }
        Ok(())
    }
}

/// Checks that the caller may put content into `parent` (None: the top level) of `org_id`.
pub fn require_create_in(
    c: &mut dyn Conn,
    org_id: &str,
    parent: Option<&str>,
    user_id: &str,
) -> ApiResult<()> {
    match parent {
        Some(p) => {
            let col = model::load_visible(c, p, user_id).map_err(|_| {
                ApiError::bad_request(format!("`parent` {p:?} is not a collection you can see"))
            })?;
            if col.collection.org_id != org_id {
                return Err(ApiError::bad_request(format!(
                    "`parent` {p:?} belongs to another organization"
                )));
            }
            col.require(CollectionAction::Create)
        }
        None => Ok(orgs::load_visible(c, org_id, user_id)?.require(OrgAction::CreateContent)?),
    }
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
        .write(move |c| {
            let col = model::load_visible(c, &id, &caller.user_id)?;
            col.require(CollectionAction::Admin)?;
            let org_id = col.collection.org_id.clone();
            let parent = match body.parent.clone() {
                Patch::Absent => col.collection.parent.clone(),
                Patch::Null => None,
                Patch::Value(p) => Some(p),
            };
            if let Some(p) = &parent {
                if subtree(c, &id)?.contains(p) {
                    return Err(ApiError::bad_request(
                        "a collection cannot move into itself or a collection inside it",
                    ));
                }
            }
            if parent != col.collection.parent {
                require_create_in(c, &org_id, parent.as_deref(), &caller.user_id)?;
                c.execute(
                    "UPDATE collections SET parent_id = ?2, updated_at = ?3 WHERE id = ?1",
                    params![id.clone(), parent.clone(), clock::now_ms()],
                )?;
            }
            siblings::place(
                c,
                &org_id,
                parent.as_deref(),
                (Kind::Collection, &id),
                body.position.as_ref(),
            )?;
            model::load_visible(c, &id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(col.to_json(&app.urls)))
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
        .write(move |c| {
            let col = model::load_visible(c, &id, &caller.user_id)?;
            col.require(CollectionAction::Admin)?;
            let source = col.collection.org_id.clone();
            crate::transfer::require_admin_of_both(c, &source, &body.organization, &caller.user_id)?;
            let collections = subtree(c, &id)?;
            let mut args = Args::default();
            let list = args.list(collections.iter().cloned());
            let spaces: Vec<String> = c
                .query(
                    &format!("SELECT id FROM spaces WHERE parent_id IN ({list})"),
                    args.values(),
                )?
                .iter()
                .map(|r| r.get(0))
                .collect::<Result<_, _>>()?;
            for cid in &collections {
                c.execute(
                    "UPDATE collections SET organization_id = ?2, updated_at = ?3 WHERE id = ?1",
                    params![cid.clone(), body.organization.clone(), clock::now_ms()],
                )?;
            }
            for sid in &spaces {
                c.execute(
                    "UPDATE spaces SET organization_id = ?2, updated_at = ?3 WHERE id = ?1",
                    params![sid.clone(), body.organization.clone(), clock::now_ms()],
                )?;
            }
            let mut targets = collections.clone();
            targets.extend(spaces);
            crate::transfer::move_access(c, &body.organization, &targets)?;
            // The collection lands at the top level of its new organization.
            c.execute(
                "UPDATE collections SET parent_id = NULL WHERE id = ?1",
                params![id.clone()],
            )?;
            siblings::place(c, &body.organization, None, (Kind::Collection, &id), None)?;
            model::load_visible(c, &id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(col.to_json(&app.urls)))
}

/// The query of `GET /v1/orgs/{organizationId}/collections`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListCollectionsQuery {
    /// Whether to list collections inside collections too (`true`, the default), or only the
    /// organization's top-level ones.
    #[param(value_type = Option<bool>)]
    nested: bool,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListCollectionsQuery {
    fn from_query(query: &Query) -> ApiResult<ListCollectionsQuery> {
        Ok(ListCollectionsQuery {
            nested: query.bool("nested", true)?,
            paging: Paging::from_query(query)?,
        })
    }
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
    let page = Page::new(&paging, format!("collections:{org_id}:{nested}"))?;
    let list = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let ctx = AccessContext::for_org(c, &org_id, &caller.user_id, org.standing)?;
            let mut args = Args::default();
            let mut filter = format!(" WHERE c.organization_id = {}", args.arg(&org_id));
            if !nested {
                filter += " AND c.parent_id IS NULL";
            }
            filter += &ctx.visible_collections_sql(&mut args);
            let count: i64 = c
                .query_scalar(
                    &format!("SELECT count(*) FROM collections c{filter}"),
                    args.values(),
                )?
                .unwrap_or(0);
            let mut sql = format!("SELECT {} FROM collections c{filter}", model::COLUMNS);
            if let Some((created, cid)) = page.after::<(i64, String)>()? {
                sql += &format!(
                    " AND (c.created_at, c.id) > ({}, {})",
                    args.arg(created),
                    args.arg(cid)
                );
            }
            sql += &format!(" ORDER BY c.created_at, c.id LIMIT {}", args.arg(page.fetch()));
            let cols = c
                .query(&sql, args.values())?
                .iter()
                .map(|r| {
                    let col = Collection::from_row(r)?;
                    let role = ctx.collection_role_with(&col.id, col.default_level, col.parent.as_deref());
                    Ok(CollectionFor {
                        collection: col,
                        role,
                        standing: org.standing,
                    })
                })
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            Ok::<_, ApiError>(page.finish(cols, count as u64, |c| {
                (c.collection.created_at, c.collection.id.clone())
            }))
        })
        .await?;
    Ok(axum::Json(list.map(|c| c.to_json(&app.urls))))
}
