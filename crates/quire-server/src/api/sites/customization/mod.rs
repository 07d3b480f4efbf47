//! Customization of a site and of its site spaces: GitBook's `SiteCustomizationSettings`
//! ([`settings`]). GET answers every block GitBook has, the reader's defaults where nothing was
//! set (`customization::effective`), so that what GET answers can be put back. A site space's
//! own settings are an override over the site's: PATCH changes it as a JSON merge patch (null
//! resets a field to the site's), DELETE removes it, PUT replaces it.

mod settings;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::db::Conn;
use quire_store::permissions::site;
use quire_store::sites::SiteFor;
use quire_store::sites::customization::{self, Stored};
use quire_store::{StoreError, StoreResult};
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json, Path};
use crate::paths::{SitePath, SiteSpacePath};
use crate::state::App;
pub use settings::Settings;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_site_customization, put_site_customization))
        .routes(routes!(
            get_site_space_customization,
            put_site_space_customization,
            patch_site_space_customization,
            delete_site_space_customization
        ))
}

/// The settings of a site, or of one of its site spaces over the site's, complete; `updatedAt`
/// when the last of them was set.
pub fn answer(site: &Stored, own: Option<&Stored>) -> Value {
    let mut json = customization::effective(site.json.as_ref(), own.and_then(|o| o.json.as_ref()));
    let updated = site.updated_at.max(own.and_then(|o| o.updated_at));
    if let (Some(at), Value::Object(map)) = (updated, &mut json) {
        map.insert(
            "updatedAt".into(),
            Value::String(quire_store::clock::format_ms(at)),
        );
    }
    json
}

/// A body checked and made what is stored.
fn checked(body: &Settings) -> ApiResult<Value> {
    body.check()?;
    body.to_json()
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/customization",
    tag = "Docs sites",
    summary = "Get the customization of a site",
    params(SitePath),
    responses((status = 200, description = "Every setting: the site's, the reader's defaults for the rest.", body = Settings)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_site_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<Value>> {
    let stored = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            customization::of_site(&site)
        })
        .await?;
    Ok(axum::Json(answer(&stored, None)))
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/customization",
    tag = "Docs sites",
    summary = "Replace the customization of a site",
    params(SitePath),
    request_body = Settings,
    responses((status = 200, description = "Every setting, as set.", body = Settings)),
    security(("token" = ["site:metadata:write"]))
)]
async fn put_site_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<Settings>,
) -> ApiResult<axum::Json<Value>> {
    let json = checked(&body)?;
    let stored = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::set_site(c, &site, &json)
        })
        .await?;
    Ok(axum::Json(answer(&stored, None)))
}

/// A site's settings and a site space's own, read in the transaction that may have changed them.
fn both(c: &mut dyn Conn, site: &SiteFor, id: &str) -> StoreResult<(Stored, Stored)> {
    Ok((
        customization::of_site(site)?,
        customization::of_site_space(c, site, id)?,
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Get the customization of a site space (its own over the site's)",
    params(SiteSpacePath),
    responses((status = 200, description = "Every setting: the site space's own, the site's, the reader's defaults for the rest.", body = Settings)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
) -> ApiResult<axum::Json<Value>> {
    let id = path.site_space_id.clone();
    let (site, own) = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            both(c, &site, &id)
        })
        .await?;
    Ok(axum::Json(answer(&site, Some(&own))))
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Replace the override of a site space's customization",
    params(SiteSpacePath),
    request_body = Settings,
    responses((status = 200, description = "Every setting of the site space, as set.", body = Settings)),
    security(("token" = ["site:metadata:write"]))
)]
async fn put_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
    Json(body): Json<Settings>,
) -> ApiResult<axum::Json<Value>> {
    let json = checked(&body)?;
    let id = path.site_space_id.clone();
    let (site, own) = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::set_site_space(c, &site, &id, &json)?;
            both(c, &site, &id)
        })
        .await?;
    Ok(axum::Json(answer(&site, Some(&own))))
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Change the override of a site space's customization (a JSON merge patch: null resets a field to the site's)",
    params(SiteSpacePath),
    request_body(content = Object, description = "The fields to change, in the shape of the settings; null resets one.", content_type = "application/json"),
    responses((status = 200, description = "Every setting of the site space, as changed.", body = Settings)),
    security(("token" = ["site:metadata:write"]))
)]
async fn patch_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
    Json(patch): Json<serde_json::Map<String, Value>>,
) -> ApiResult<axum::Json<Value>> {
    let patch = Value::Object(patch);
    let id = path.site_space_id.clone();
    let (site, own) = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            let mut own = customization::of_site_space(c, &site, &id)?
                .json
                .unwrap_or_default();
            customization::merge_patch(&mut own, &patch);
            // The override as patched is checked whole, as a PUT of it would be.
            let settings: Settings = serde_path_to_error::deserialize(own).map_err(|e| {
                let path = e.path().to_string();
                StoreError::invalid(format!("invalid field `{path}`: {}", e.into_inner()))
            })?;
            let json = checked(&settings).map_err(|e| StoreError::invalid(e.message))?;
            customization::set_site_space(c, &site, &id, &json)?;
            both(c, &site, &id)
        })
        .await?;
    Ok(axum::Json(answer(&site, Some(&own))))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Remove the override of a site space's customization: it reads the site's again",
    params(SiteSpacePath),
    responses((status = 204, description = "The override is removed (or there was none).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
) -> ApiResult<StatusCode> {
    let id = path.site_space_id.clone();
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::clear_site_space(c, &site, &id)
        })
        .await?;
    // 204 whether there was an override or not, as every DELETE (decision 0075), where GitBook
    // tells the two apart with 205.
    Ok(StatusCode::NO_CONTENT)
}
