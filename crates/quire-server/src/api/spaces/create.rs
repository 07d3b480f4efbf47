//! Creating and duplicating a space. (Moving to `quire_store::new_spaces` with the content
//! they write.)

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::collections::require_create_in;
use quire_store::events::{self, Event};
use quire_store::siblings::{self, Kind};
use quire_store::spaces::{self as model, SpaceFor, TITLE_MAX, edit_mode, emoji, language, visibility};
use quire_store::validate;
use serde::Deserialize;
use serde_json::json;

use super::wire::{SpaceJson, space_json};
use crate::app::App;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{OptionalJson, Path};
use crate::paths::{OrgPath, SpacePath};
use crate::{clock, ids, params};

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct CreateSpace {
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
pub(super) async fn create_space(
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
            quire_store::main_revision::init::init_space(c, &app2.content, &id, empty, &caller.user_id)?;
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
    let json = space_json(&app.urls, &space);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
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
pub(super) async fn duplicate_space(
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
    let quotas = quire_store::files::Quotas::of(&app.store.settings);
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
            let tree = quire_store::content::store::load_tree(c, &app2.content, &space_id, &revision)?;
            let blobs: Vec<(String, u64)> = tree
                .tree
                .files
                .values()
                .map(|f| (f.blob.clone(), f.size))
                .collect();
            let bytes = blobs.iter().map(|(_, size)| size).sum();
            quire_store::files::check_room(c, &quotas, &new_id, &source.space.org_id, bytes)?;
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
    let json = space_json(&app.urls, &space);
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
    source: &SpaceFor,
    revision: &str,
    id: &str,
    blobs: &[(String, u64)],
) -> ApiResult<SpaceFor> {
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
    let quotas = quire_store::files::Quotas::of(&app.store.settings);
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
            quire_store::main_revision::init::copy_content(c, &app2.content, &s.id, &revision, &id, &user)?;
            quire_store::files::reserve(c, &quotas, &id, &s.org_id, &blobs, now)?;
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
