//! External links of a site's structure: items beside sections and section groups that open a
//! URL outside the site (GitBook's `SiteExternalLink`). They move with `PATCH .../structure/sort`
//! and into a group with `parent`, and show in the reader's section tabs.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use quire_store::patch::Patch;
use quire_store::permissions::site;
use quire_store::sites::order::Kind;
use quire_store::sites::structure as st;
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::structure::{check_icon, created, delete, set};
use super::wire::{self, ExternalLinkJson};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path, PreferMinimal};
use crate::paths::{SiteExternalLinkPath, SitePath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(create_link))
        .routes(routes!(update_link, delete_link))
}

fn check_title(title: &str) -> ApiResult<()> {
    validate::title("title", title, st::LINK_TITLE_MIN, st::LINK_TITLE_MAX)?;
    Ok(())
}

fn check_description(description: Option<&String>) -> ApiResult<()> {
    if let Some(d) = description {
        validate::name("description", d, st::LINK_DESCRIPTION_MAX)?;
    }
    Ok(())
}

fn check_url(url: &str) -> ApiResult<()> {
    validate::url("url", url)?;
    Ok(())
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateLink {
    title: String,
    description: Option<String>,
    icon: Option<String>,
    /// An absolute http or https URL.
    url: String,
    /// The section group to make it in (at its end); the root when absent.
    parent: Option<String>,
    /// Made as a draft: not live until made live.
    #[serde(default)]
    draft: bool,
    /// An adaptive condition: visitors see the link only when it holds.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    condition: Patch<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/external-links",
    tag = "Site sections, section groups, site spaces",
    summary = "Add an external link to a site's structure",
    params(SitePath),
    request_body = CreateLink,
    responses(
        (status = 201, description = "The new link, at the end of its level.", body = ExternalLinkJson),
        (status = 400, description = "The site has no sections, or the parent group or URL is invalid.", body = crate::error::ErrorEnvelope),
    ),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_link(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateLink>,
) -> ApiResult<impl IntoResponse> {
    check_title(&body.title)?;
    check_description(body.description.as_ref())?;
    check_icon(body.icon.as_ref())?;
    check_url(&body.url)?;
    let new = st::NewLink {
        title: body.title,
        description: body.description,
        icon: body.icon,
        url: body.url,
        group: body.parent,
        draft: body.draft,
        condition: body.condition,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::create_link(c, &site, &caller.user_id, &new)
        })
        .await?;
    Ok(created(&app, &path, &written))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateLink {
    title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    icon: Patch<String>,
    url: Option<String>,
    /// Into this section group, at its end; null: to the end of the site's root.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    parent: Patch<String>,
    /// true: not live; false: live.
    draft: Option<bool>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    condition: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/external-links/{siteExternalLinkId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Update an external link",
    params(
        SiteExternalLinkPath,
        ("prefer" = Option<String>, Header, description = "`return=minimal`: answer 204 instead of the link."),
    ),
    request_body = UpdateLink,
    responses(
        (status = 200, description = "The link as updated.", body = ExternalLinkJson),
        (status = 204, description = "Updated; sent for `Prefer: return=minimal`."),
    ),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_link(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteExternalLinkPath>,
    prefer: PreferMinimal,
    Json(body): Json<UpdateLink>,
) -> ApiResult<Response> {
    if let Some(t) = &body.title {
        check_title(t)?;
    }
    check_description(set(&body.description))?;
    check_icon(set(&body.icon))?;
    if let Some(u) = &body.url {
        check_url(u)?;
    }
    let changes = st::LinkChanges {
        title: body.title,
        description: body.description,
        icon: body.icon,
        url: body.url,
        group: body.parent,
        draft: body.draft,
        condition: body.condition,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::update_link(c, &site, &caller.user_id, &path.site_external_link_id, &changes)
        })
        .await?;
    Ok(prefer.answer(wire::written_json(&app.urls, &written)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/external-links/{siteExternalLinkId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Delete an external link",
    params(SiteExternalLinkPath),
    responses((status = 204, description = "The link is deleted (or never was).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_link(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteExternalLinkPath>,
) -> ApiResult<StatusCode> {
    delete(app, caller, p.site(), Kind::Link, p.site_external_link_id).await
}
