//! Creating and duplicating a space (`quire_store::new_spaces`).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::new_spaces::{self, NewSpace};
use quire_store::spaces::{TITLE_MAX, edit_mode, emoji, language, visibility};
use quire_store::templates::TemplateRequest;
use quire_store::validate;
use serde::Deserialize;

use super::wire::{SpaceJson, space_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{OptionalJson, Path};
use crate::paths::{OrgPath, SpacePath};
use crate::state::App;

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
        .map(|t| TemplateRequest::parse(t, "template"))
        .transpose()?;
    let new = NewSpace {
        title,
        emoji,
        icon,
        parent: body.parent,
        language,
        edit_mode,
        visibility,
        empty: body.empty,
        template,
    };
    let store = app.store.clone();
    let space = app
        .db
        .write(move |c| new_spaces::create(c, &store.content, &caller.user_id, &org_id, &new))
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
    // copied first, so the new space never references bytes it does not have.
    let space = new_spaces::duplicate(&app.store, &caller.user_id, &space_id).await?;
    let json = space_json(&app.urls, &space);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}
