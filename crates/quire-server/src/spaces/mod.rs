//! Spaces: create, list, read, update, delete and restore, duplicate, move, transfer; and the
//! spaces a member can access.

pub mod cache;
pub mod lifecycle;
pub mod model;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::app::App;
use crate::auth::Caller;
use crate::collections::{self, MoveBody, require_create_in};
use crate::db::{Args, Conn};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Json, OptionalJson, OrderQuery, Patch, Path, Query, QueryOf};
use crate::paths::{OrgMemberPath, OrgPath, SpacePath};
use crate::{clock, ids, params};
pub use model::{EditMode, Space, SpaceFor, SpaceJson, Visibility};
use quire_store::access::AccessContext;
use quire_store::events::{self, Event};
use quire_store::merge_rules::MergeRules;
use quire_store::orgs;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{Role, SpaceAction, Standing};
use quire_store::siblings::{self, Kind};
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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

pub const TITLE_MAX: usize = 50;
pub const EMOJI_MAX: usize = 50;

/// GitBook's translation languages: the values `language` accepts.
pub const LANGUAGES: &[&str] = &[
    "en", "fr", "de", "es", "it", "pt", "pt-br", "ru", "ja", "zh", "zh-tw", "yue", "ko", "ar", "hi", "nl",
    "pl", "tr", "sv", "no", "da", "fi", "el", "cs", "hu", "ro", "th", "vi", "id", "ms", "he", "uk", "sk",
    "bg", "hr", "lt", "lv", "et", "sl",
];

fn language(value: &str) -> ApiResult<String> {
    if LANGUAGES.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(ApiError::bad_request(format!(
            "`language` must be one of {}, not {value:?}",
            LANGUAGES.join(", ")
        )))
    }
}

fn edit_mode(value: &str) -> ApiResult<EditMode> {
    EditMode::parse(value)
        .ok_or_else(|| ApiError::bad_request(format!("`editMode` must be live or locked, not {value:?}")))
}

fn emoji(value: &str) -> ApiResult<String> {
    validate::max_len("emoji", value, EMOJI_MAX)?;
    Ok(value.to_string())
}

/// The query of `GET /v1/spaces/{spaceId}`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct GetSpaceQuery {
    /// The key of a share-link site, which resolves its published URLs. quire publishes no
    /// sites yet, so the key changes nothing in the answer.
    #[param(rename = "shareKey")]
    share_key: Option<String>,
}

impl FromQuery for GetSpaceQuery {
    fn from_query(query: &Query) -> ApiResult<GetSpaceQuery> {
        Ok(GetSpaceQuery {
            share_key: query.str("shareKey").map(str::to_string),
        })
    }
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
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    QueryOf(GetSpaceQuery {
        share_key: _share_key,
    }): QueryOf<GetSpaceQuery>,
) -> ApiResult<axum::Json<SpaceJson>> {
    let space = app
        .spaces
        .load_visible(&app.db, &space_id, &caller.user_id)
        .await?;
    Ok(axum::Json(space.to_json(&app.urls)))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateSpace {
    title: Option<String>,
    emoji: Option<String>,
    icon: Option<String>,
    parent: Option<String>,
    language: Option<String>,
    edit_mode: Option<String>,
    visibility: Option<String>,
    #[serde(default)]
    empty: bool,
    template: Option<serde_json::Value>,
    computed_source: Option<serde_json::Value>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/spaces",
    tag = "Spaces",
    summary = "Create a space",
    params(OrgPath),
    request_body(content = Option<CreateSpace>, description = "Optional.", content_type = "application/json"),
    responses((status = 201, description = "The new space.", body = SpaceJson, headers(("Location" = String, description = "The space's URL.")))),
    security(("token" = ["space:metadata:write"]))
)]
async fn create_space(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    OptionalJson(body): OptionalJson<CreateSpace>,
) -> ApiResult<impl IntoResponse> {
    let body = body.unwrap_or_default();
    if body.computed_source.is_some() {
        return Err(ApiError::bad_request(
            "`computedSource`: quire does not support computed content sources",
        ));
    }
    if body.template.is_some() && body.empty {
        return Err(ApiError::bad_request("give `template` or `empty`, not both"));
    }
    let title = body.title.clone().unwrap_or_else(|| "Untitled".to_string());
    validate::name("title", &title, TITLE_MAX)?;
    let emoji = body.emoji.as_deref().map(emoji).transpose()?;
    let icon = body
        .icon
        .as_deref()
        .map(|u| validate::url("icon", u).map(|u| u.to_string()))
        .transpose()?;
    let language = body.language.as_deref().map(language).transpose()?;
    let edit_mode = edit_mode(body.edit_mode.as_deref().unwrap_or("live"))?;
    let visibility = visibility(
        body.visibility.as_deref().unwrap_or("private"),
        body.parent.is_some(),
    )?;
    let template = body
        .template
        .clone()
        .map(|t| crate::content::template::TemplateRequest::parse(t, "template"))
        .transpose()?;
    let app2 = app.clone();
    let space = app
        .db
        .write(move |c| {
            require_create_in(c, &org_id, body.parent.as_deref(), &caller.user_id)?;
            let id = ids::new_id();
            let now = clock::now_ms();
            c.execute(
                "INSERT INTO spaces (id, organization_id, parent_id, title, emoji, icon_url, visibility, edit_mode,
                                     language, position, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, '', ?10, ?10)",
                params![
                    id.clone(),
                    org_id.clone(),
                    body.parent.clone(),
                    title.clone(),
                    emoji.clone(),
                    icon.clone(),
                    visibility,
                    edit_mode,
                    language.clone(),
                    now
                ],
            )?;
            siblings::place(c, &org_id, body.parent.as_deref(), (Kind::Space, &id), None)?;
            let empty = body.empty || template.is_some();
            crate::content::init::init_space(c, &app2.content, &id, empty, &caller.user_id)?;
            if let Some(template) = &template {
                crate::content::template::apply_to_main(c, &app2, &id, template, &caller.user_id)?;
            }
            let space = model::load_visible(c, &id, &caller.user_id)?;
            let payload = json!({"spaceId": id, "revisionId": space.space.revision, "parent": body.parent});
            let event = Event::space(events::Kind::SpaceCreated, &org_id, &id, Some(&caller.user_id), payload);
            events::record(c, event)?;
            Ok::<_, ApiError>(space)
        })
        .await?;
    let json = space.to_json(&app.urls);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

fn visibility(value: &str, in_collection: bool) -> ApiResult<Visibility> {
    let visibility = Visibility::parse(value).ok_or_else(|| {
        ApiError::bad_request(format!(
            "`visibility` must be one of {}, not {value:?}",
            Visibility::list()
        ))
    })?;
    if visibility == Visibility::InCollection && !in_collection {
        return Err(ApiError::bad_request(
            "`visibility` in-collection is only for spaces inside a collection",
        ));
    }
    Ok(visibility)
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
    let page = Page::new(&paging, format!("org-spaces:{org_id}"))?;
    let access = app
        .orgs
        .load_visible(&app.db, &org_id, &caller.user_id)
        .await?
        .access;
    let list = app
        .db
        .read(move |c| list_visible(c, &org_id, &access, &page, crate::extract::Order::Asc))
        .await?;
    Ok(axum::Json(list.map(|s| s.to_json(&app.urls))))
}

/// The active spaces of an organization that `ctx` can view, in creation order.
fn list_visible(
    c: &mut dyn Conn,
    org_id: &str,
    ctx: &AccessContext,
    page: &Page,
    order: crate::extract::Order,
) -> ApiResult<List<SpaceFor>> {
    let mut args = Args::default();
    let mut filter = format!(
        " WHERE s.organization_id = {} AND s.deleted_at IS NULL",
        args.arg(org_id)
    );
    filter += &ctx.visible_spaces_sql(&mut args);
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM spaces s{filter}"), args.values())?
        .unwrap_or(0);
    // The first page runs the keyset statement too, from a bound before every row: PostgreSQL
    // planned a statement without the bound again on every run (a custom plan, about 0.1 ms of
    // its CPU), where the keyset statement runs a generic plan, so page 1 was the slowest.
    let (created, id) = page
        .after::<(i64, String)>()?
        .unwrap_or_else(|| (order.start_time(), String::new()));
    let (op, dir) = (order.after_op(), order.sql());
    let (created, id, limit) = (args.arg(created), args.arg(id), args.arg(page.fetch()));
    let sql = format!(
        "SELECT {} FROM spaces s{filter} AND (s.created_at, s.id) {op} ({created}, {id})
         ORDER BY s.created_at {dir}, s.id {dir} LIMIT {limit}",
        model::columns(),
    );
    let rows = model::query_with_roles(c, &sql, args.values(), ctx)?;
    Ok(page.finish(rows, count as u64, |s| (s.space.created_at, s.space.id.clone())))
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
    let page = Page::new(
        &paging,
        format!("member-spaces:{org_id}:{user_id}:{}", order.name()),
    )?;
    let list = app
        .db
        .read(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            quire_store::members::authorize::<quire_store::permissions::member::View>(
                org.clone(),
                &caller.user_id,
                &user_id,
            )?;
            let membership = orgs::load_for(c, &org_id, &user_id)?
                .map(|o| o.standing)
                .unwrap_or(Standing::Outsider);
            if membership == Standing::Outsider {
                return Err(ApiError::not_found(format!(
                    "user {user_id:?} is not a member of this organization"
                )));
            }
            let member_ctx = AccessContext::for_org(c, &org_id, &user_id, membership)?;
            let caller_ctx = AccessContext::for_org(c, &org_id, &caller.user_id, org.standing)?;
            let list = list_visible(c, &org_id, &member_ctx, &page, order)?;
            Ok::<_, ApiError>(list.map(|s| {
                let caller_role = model::role_in(&caller_ctx, &s.space);
                (
                    s.role.unwrap_or(Role::Read),
                    SpaceFor {
                        space: s.space,
                        role: caller_role,
                    },
                )
            }))
        })
        .await?;
    Ok(axum::Json(list.map(|(permission, s)| MemberSpace {
        permission,
        space: s.to_json(&app.urls),
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
    let edit_mode = body.edit_mode.as_deref().map(edit_mode).transpose()?;
    if let Some(t) = &body.title {
        validate::name("title", t, TITLE_MAX)?;
    }
    let default_level = crate::collections::parse_default_level(&body.default_level)?;
    let language = body.language.as_deref().map(language).transpose()?;
    let merge_rules = body.merge_rules.map(|v| MergeRules::parse(v, true)).transpose()?;
    let emoji = match body.emoji {
        Patch::Value(e) => Patch::Value(emoji(&e)?),
        other => other,
    };
    let icon = match body.icon {
        Patch::Value(u) => Patch::Value(validate::url("icon", &u)?.to_string()),
        other => other,
    };
    let space = app
        .db
        .write(move |c| {
            let current = model::load_visible(c, &space_id, &caller.user_id)?;
            current.require(SpaceAction::Admin)?;
            let mut s = current.space.clone();
            if s.deleted_at.is_some() {
                return Err(ApiError::bad_request("a deleted space cannot change: restore it first"));
            }
            if let Some(m) = &edit_mode {
                s.edit_mode = *m;
            }
            if let Some(t) = &body.title {
                s.title = t.clone();
            }
            if let Some(d) = default_level {
                s.default_level = d;
            }
            if let Some(l) = &language {
                s.language = Some(l.clone());
            }
            if let Some(rules) = &merge_rules {
                for user in rules.users() {
                    let member = c.exists(
                        "SELECT 1 FROM members WHERE organization_id = ?1 AND user_id = ?2",
                        params![s.org_id.clone(), user],
                    )?;
                    if !member {
                        return Err(ApiError::bad_request(format!(
                            "invalid `mergeRules`: user {user:?} is not a member of this organization"
                        )));
                    }
                }
                s.merge_rules = rules.clone();
            }
            if let Some(e) = emoji.clone().into_update() {
                s.emoji = e;
            }
            if let Some(i) = icon.clone().into_update() {
                s.icon_url = i;
            }
            if let Some(v) = &body.visibility {
                s.visibility = visibility(v, s.parent.is_some())?;
            }
            c.execute(
                "UPDATE spaces SET edit_mode = ?2, title = ?3, default_level = ?4, language = ?5, merge_rules = ?6,
                     emoji = ?7, icon_url = ?8, visibility = ?9, updated_at = ?10
                 WHERE id = ?1",
                params![
                    s.id.clone(),
                    s.edit_mode,
                    s.title.clone(),
                    s.default_level.to_column(),
                    s.language.clone(),
                    s.merge_rules.to_json_text(),
                    s.emoji.clone(),
                    s.icon_url.clone(),
                    s.visibility,
                    clock::now_ms()
                ],
            )?;
            model::load_visible(c, &space_id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(space.to_json(&app.urls)))
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
        .write(move |c| {
            // A space the caller cannot see (or that never existed) answers 404, like every
            // other operation on it; deleting a deleted space again is a 204 for its admins.
            let space = model::load_for(c, &space_id, &caller.user_id)?
                .filter(|s| s.allows(SpaceAction::View))
                .ok_or_else(|| ApiError::not_found(format!("space {space_id:?} not found")))?;
            space.require(SpaceAction::Admin)?;
            lifecycle::soft_delete(c, &space_id, clock::now_ms(), retention, &caller.user_id)
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
        .write(move |c| {
            let space = model::load_visible(c, &space_id, &caller.user_id)?;
            space.require(SpaceAction::Admin)?;
            lifecycle::restore(c, &space.space, clock::now_ms(), retention, &caller.user_id)?;
            model::load_visible(c, &space_id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(space.to_json(&app.urls)))
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/duplicate",
    tag = "Spaces",
    summary = "Duplicate a space",
    params(SpacePath),
    responses((status = 201, description = "The copy.", body = SpaceJson, headers(("Location" = String, description = "The copy's URL.")))),
    security(("token" = ["space:metadata:write"]))
)]
async fn duplicate_space(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
) -> ApiResult<impl IntoResponse> {
    // The copy gets the content of the source's revision as it is now; its file bytes are
    // copied first, so the new space never references bytes it does not have. Who may create
    // the copy, and whether its bytes fit in the storage quotas, is checked before any byte is
    // copied, and again in the transaction that creates it.
    let app2 = app.clone();
    let user = caller.user_id.clone();
    let id = ids::new_id();
    let new_id = id.clone();
    let quotas = crate::file_blobs::Quotas::of(&app);
    let (source, revision, blobs) = app
        .db
        .read_blocking(move |c| {
            let source = model::load_visible(c, &space_id, &user)?;
            if source.space.deleted_at.is_some() {
                return Err(ApiError::bad_request(
                    "a deleted space cannot be duplicated: restore it first",
                ));
            }
            require_create_in(c, &source.space.org_id, source.space.parent.as_deref(), &user)?;
            let revision = source
                .space
                .revision
                .clone()
                .ok_or_else(|| ApiError::internal("space without revision"))?;
            let tree = crate::content::store::load_tree(c, &app2.content, &space_id, &revision)?;
            let blobs: Vec<(String, u64)> = tree
                .tree
                .files
                .values()
                .map(|f| (f.blob.clone(), f.size))
                .collect();
            let bytes = blobs.iter().map(|(_, size)| size).sum();
            crate::file_blobs::check_room(c, &quotas, &new_id, &source.space.org_id, bytes)?;
            Ok::<_, ApiError>((source, revision, blobs))
        })
        .await?;
    let created = create_copy(&app, &caller, &source, &revision, &id, &blobs).await;
    let space = match created {
        Ok(space) => space,
        Err(e) => {
            // The copy does not exist: its bytes go too (best effort; nothing references them).
            if let Err(cleanup) = app.blobs.delete_space(&id).await {
                tracing::warn!(space = %id, error = %cleanup, "cannot remove the bytes of a failed duplicate");
            }
            return Err(e);
        }
    };
    let json = space.to_json(&app.urls);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

/// Copies the source's file bytes to the new space `id`, then creates it with the source's
/// content and grants.
async fn create_copy(
    app: &App,
    caller: &Caller,
    source: &model::SpaceFor,
    revision: &str,
    id: &str,
    blobs: &[(String, u64)],
) -> ApiResult<model::SpaceFor> {
    for (blob, _) in blobs {
        app.blobs.copy(&source.space.id, id, blob).await?;
    }
    let (app2, source, revision, id, blobs, user) = (
        app.clone(),
        source.clone(),
        revision.to_string(),
        id.to_string(),
        blobs.to_vec(),
        caller.user_id.clone(),
    );
    let quotas = crate::file_blobs::Quotas::of(app);
    app.db
        .write(move |c| {
            let s = &source.space;
            require_create_in(c, &s.org_id, s.parent.as_deref(), &user)?;
            let now = clock::now_ms();
            let title: String = format!("{} (copy)", s.title).chars().take(TITLE_MAX).collect();
            c.execute(
                "INSERT INTO spaces (id, organization_id, parent_id, title, emoji, icon_url, visibility, edit_mode,
                                     language, default_level, merge_rules, position, created_at, updated_at)
                 SELECT ?2, organization_id, parent_id, ?3, emoji, icon_url, visibility, edit_mode, language,
                        default_level, merge_rules, '', ?4, ?4
                 FROM spaces WHERE id = ?1",
                params![s.id.clone(), id.clone(), title, now],
            )?;
            c.execute(
                "INSERT INTO grants (organization_id, target_kind, target_id, user_id, team_id, role, created_at)
                 SELECT organization_id, target_kind, ?2, user_id, team_id, role, ?3 FROM grants WHERE target_id = ?1",
                params![s.id.clone(), id.clone(), now],
            )?;
            crate::content::init::copy_content(c, &app2.content, &s.id, &revision, &id, &user)?;
            crate::file_blobs::reserve(c, &quotas, &id, &s.org_id, &blobs, now)?;
            let after = siblings::Pointer { kind: Kind::Space, space: Some(s.id.clone()), collection: None };
            let position = siblings::Position { before: None, after: Some(after) };
            siblings::place(c, &s.org_id, s.parent.as_deref(), (Kind::Space, &id), Some(&position))?;
            let copy = model::load_visible(c, &id, &user)?;
            let payload = json!({"spaceId": id, "revisionId": copy.space.revision, "parent": s.parent,
                                 "duplicateOf": s.id});
            let event = Event::space(events::Kind::SpaceCreated, &s.org_id, &id, Some(&user), payload);
            events::record(c, event)?;
            Ok(copy)
        })
        .await
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
        .write(move |c| {
            let current = model::load_visible(c, &space_id, &caller.user_id)?;
            current.require(SpaceAction::Admin)?;
            if current.space.deleted_at.is_some() {
                return Err(ApiError::bad_request(
                    "a deleted space cannot move: restore it first",
                ));
            }
            let org_id = current.space.org_id.clone();
            let parent = match body.parent.clone() {
                Patch::Absent => current.space.parent.clone(),
                Patch::Null => None,
                Patch::Value(p) => Some(p),
            };
            if parent != current.space.parent {
                require_create_in(c, &org_id, parent.as_deref(), &caller.user_id)?;
                reparent(c, &space_id, parent.as_deref())?;
            }
            siblings::place(
                c,
                &org_id,
                parent.as_deref(),
                (Kind::Space, &space_id),
                body.position.as_ref(),
            )?;
            model::load_visible(c, &space_id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(space.to_json(&app.urls)))
}

/// Sets a space's parent. A space that leaves every collection cannot stay `in-collection`: it
/// becomes `private`, the narrowest audience.
fn reparent(c: &mut dyn Conn, space_id: &str, parent: Option<&str>) -> ApiResult<()> {
    c.execute(
        "UPDATE spaces SET parent_id = ?2, updated_at = ?3,
             visibility = CASE WHEN ?4 = 1 AND visibility = 'in-collection' THEN 'private' ELSE visibility END
         WHERE id = ?1",
        params![space_id, parent, clock::now_ms(), parent.is_none()],
    )?;
    Ok(())
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
        .write(move |c| {
            let current = model::load_visible(c, &space_id, &caller.user_id)?;
            current.require(SpaceAction::Admin)?;
            if current.space.deleted_at.is_some() {
                return Err(ApiError::bad_request(
                    "a deleted space cannot be transferred: restore it first",
                ));
            }
            crate::transfer::require_admin_of_both(
                c,
                &current.space.org_id,
                &body.organization,
                &caller.user_id,
            )?;
            if let Some(col) = &body.collection {
                let col = collections::model::load_visible(c, col, &caller.user_id).map_err(|_| {
                    ApiError::bad_request(format!("`collection` {col:?} is not a collection you can see"))
                })?;
                if col.collection.org_id != body.organization {
                    return Err(ApiError::bad_request(
                        "`collection` is not in the target organization",
                    ));
                }
            }
            c.execute(
                "UPDATE spaces SET organization_id = ?2 WHERE id = ?1",
                params![space_id.clone(), body.organization.clone()],
            )?;
            reparent(c, &space_id, body.collection.as_deref())?;
            crate::transfer::move_access(c, &body.organization, std::slice::from_ref(&space_id))?;
            siblings::place(
                c,
                &body.organization,
                body.collection.as_deref(),
                (Kind::Space, &space_id),
                None,
            )?;
            model::load_visible(c, &space_id, &caller.user_id)
        })
        .await?;
    Ok(axum::Json(space.to_json(&app.urls)))
}
