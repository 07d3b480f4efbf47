//! Collections: nestable groups of spaces.

pub mod model;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde::Deserialize;

use crate::access::AccessContext;
use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn, bytewise};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, OptionalJson, Patch, Path, Query};
use crate::orgs;
use crate::paging::{List, Page};
use crate::permissions::{CollectionAction, DefaultLevel, OrgAction};
use crate::siblings::{self, Kind, Position};
use crate::spaces::{self, SpaceJson};
use crate::{clock, ids, params, validate};
pub use model::{Collection, CollectionFor, CollectionJson};

pub fn routes() -> Router<App> {
    Router::new()
        .route(
            "/v1/collections/{collectionId}",
            get(get_collection)
                .patch(update_collection)
                .delete(delete_collection),
        )
        .route(
            "/v1/collections/{collectionId}/spaces",
            get(list_collection_spaces),
        )
        .route("/v1/collections/{collectionId}/move", post(move_collection))
        .route(
            "/v1/collections/{collectionId}/transfer",
            post(transfer_collection),
        )
        .route(
            "/v1/orgs/{organizationId}/collections",
            get(list_collections).post(create_collection),
        )
}

pub const TITLE_MAX: usize = 50;
pub const DESCRIPTION_MAX: usize = 100;

async fn get_collection(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
) -> ApiResult<axum::Json<CollectionJson>> {
    let col = app
        .db
        .read(move |c| model::load_visible(c, &id, &caller.user_id))
        .await?;
    Ok(axum::Json(col.to_json(&app.urls)))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CreateCollection {
    title: Option<String>,
    parent: Option<String>,
}

async fn create_collection(
    caller: Caller,
    State(app): State<App>,
    Path(org_id): Path<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateCollection {
    title: Option<String>,
    #[serde(default)]
    description: Patch<String>,
    #[serde(default)]
    default_level: Patch<serde_json::Value>,
}

/// `defaultLevel` of a PATCH: absent keeps it; `null` is a value (no default access).
pub fn parse_default_level(value: &Patch<serde_json::Value>) -> ApiResult<Option<DefaultLevel>> {
    match value {
        Patch::Absent => Ok(None),
        Patch::Null => Ok(Some(DefaultLevel::NoAccess)),
        Patch::Value(v) => DefaultLevel::parse(v).map(Some),
    }
}

async fn update_collection(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
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

async fn delete_collection(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    let retention = app.settings.space_retention_ms;
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

async fn list_collection_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
    query: Query,
) -> ApiResult<axum::Json<List<SpaceJson>>> {
    let page = Page::from_query(&query, format!("collection-spaces:{id}"))?;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    #[serde(default)]
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
        None => orgs::load_visible(c, org_id, user_id)?.require(OrgAction::CreateContent),
    }
}

async fn move_collection(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TransferBody {
    organization: String,
}

async fn transfer_collection(
    caller: Caller,
    State(app): State<App>,
    Path(id): Path<String>,
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

async fn list_collections(
    caller: Caller,
    State(app): State<App>,
    Path(org_id): Path<String>,
    query: Query,
) -> ApiResult<axum::Json<List<CollectionJson>>> {
    let nested = query.bool("nested", true)?;
    let page = Page::from_query(&query, format!("collections:{org_id}:{nested}"))?;
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
