//! Share links of a site: keys that open a share-link site's published view.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::paging::{List, Paging};
use quire_store::permissions::site;
use quire_store::sites::share_links;
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{ShareLinkJson, share_link_json};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{SitePath, SiteShareLinkPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_share_links, create_share_link))
        .routes(routes!(update_share_link, delete_share_link))
}

/// `search` and PAGING.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ShareLinksQuery {
    /// Only links whose name or key contains this text (case-insensitive).
    #[param(value_type = Option<String>)]
    search: Option<String>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/share-links",
    tag = "Docs sites",
    summary = "List the share links of a site",
    params(SitePath, ShareLinksQuery, Paging),
    responses((status = 200, description = "The links, oldest first, with their keys.", body = List<ShareLinkJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_share_links(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(query): QueryOf<ShareLinksQuery>,
) -> ApiResult<axum::Json<List<ShareLinkJson>>> {
    let (site, list) = app
        .db
        .read_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            let list = share_links::list(c, &site, query.search.as_deref(), &query.paging)?;
            Ok::<_, quire_store::StoreError>((site.into_inner(), list))
        })
        .await?;
    Ok(axum::Json(
        list.map(|l| share_link_json(&app.urls, &site.site, &l)),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateShareLink {
    name: String,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/share-links",
    tag = "Docs sites",
    summary = "Create a share link, minting a key",
    params(SitePath),
    request_body = CreateShareLink,
    responses((status = 201, description = "The new link, with its key.", body = ShareLinkJson, headers(("Location" = String, description = "The link's URL.")))),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_share_link(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateShareLink>,
) -> ApiResult<impl IntoResponse> {
    validate::name("name", &body.name, share_links::NAME_MAX)?;
    let p = path.clone();
    let (site, link) = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), p.site(), move |c, site| {
            let link = share_links::create(c, &site, &body.name)?;
            Ok::<_, quire_store::StoreError>((site.into_inner(), link))
        })
        .await?;
    let location = app.urls.api(&format!(
        "/orgs/{}/sites/{}/share-links/{}",
        path.organization_id, path.site_id, link.id
    ));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(share_link_json(&app.urls, &site.site, &link)),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateShareLink {
    name: Option<String>,
    active: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}",
    tag = "Docs sites",
    summary = "Rename a share link, or (de)activate it",
    params(SiteShareLinkPath),
    request_body = UpdateShareLink,
    responses((status = 200, description = "The link as updated; an inactive link's key opens nothing.", body = ShareLinkJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_share_link(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteShareLinkPath>,
    Json(body): Json<UpdateShareLink>,
) -> ApiResult<axum::Json<ShareLinkJson>> {
    if let Some(n) = &body.name {
        validate::name("name", n, share_links::NAME_MAX)?;
    }
    let (site, link) = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            let link = share_links::update(c, &site, &path.share_link_id, body.name.as_deref(), body.active)?;
            Ok::<_, quire_store::StoreError>((site.into_inner(), link))
        })
        .await?;
    Ok(axum::Json(share_link_json(&app.urls, &site.site, &link)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}",
    tag = "Docs sites",
    summary = "Revoke a share link",
    params(SiteShareLinkPath),
    responses((status = 204, description = "The link is gone (or never was): its key opens nothing.")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_share_link(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteShareLinkPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            share_links::delete(c, &site, &path.share_link_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
