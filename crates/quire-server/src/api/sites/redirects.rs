//! Redirects of a site, and resolving a path through them.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::paging::{List, Paging};
use quire_store::permissions::site;
use quire_store::sites::Site;
use quire_store::sites::redirects::{self, Destination, DestinationInput, Redirect, Target};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::reader_url;
use crate::auth::{Caller, Reader};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{SitePath, SiteRedirectPath};
use crate::state::App;
use crate::urls::Urls;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_redirects, create_redirect, bulk_redirects))
        .routes(routes!(get_redirect, update_redirect, delete_redirect))
        .routes(routes!(resolve_redirect))
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedirectJson {
    pub object: &'static str,
    pub id: String,
    pub source: String,
    pub draft: bool,
    pub capture_wildcard: bool,
    pub permanent: bool,
    pub destination: Destination,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "quire_store::clock::ts")]
    pub created_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "quire_store::clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<i64>,
}

fn redirect_json(r: &Redirect) -> RedirectJson {
    RedirectJson {
        object: "site-redirect",
        id: r.id.clone(),
        source: r.source.clone(),
        draft: false,
        capture_wildcard: r.capture_wildcard,
        permanent: r.permanent,
        destination: r.destination.clone(),
        created_at: r.created_at,
        updated_at: r.updated_at,
    }
}

fn check_destination(d: &DestinationInput) -> ApiResult<()> {
    if let Some(url) = d.external_url() {
        quire_store::validate::url("destination.url", url)?;
    }
    Ok(())
}

/// `search`, `orderBy`, `draft` and PAGING.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct RedirectsQuery {
    /// Only redirects whose source contains this text (case-insensitive).
    #[param(value_type = Option<String>)]
    search: Option<String>,
    /// `createdAt` (newest first), `updatedAt` (the most recently updated first) or `source`
    /// (alphabetically); absent: oldest first.
    #[param(value_type = Option<String>)]
    order_by: Option<redirects::OrderBy>,
    /// `true`: the draft redirects (quire keeps none; every redirect is live); `false`: the
    /// live ones.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    draft: Option<bool>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
    tag = "Docs sites",
    summary = "List the redirects of a site",
    params(SitePath, RedirectsQuery, Paging),
    responses((status = 200, description = "The redirects, oldest first unless `orderBy` says.", body = List<RedirectJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_redirects(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(query): QueryOf<RedirectsQuery>,
) -> ApiResult<axum::Json<List<RedirectJson>>> {
    let filters = redirects::Filters {
        search: query.search,
        order: query.order_by,
        draft: query.draft,
    };
    let list = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            redirects::list(c, &site, &filters, &query.paging)
        })
        .await?;
    Ok(axum::Json(list.map(|r| redirect_json(&r))))
}

/// The most redirects one bulk write takes (GitBook's limit).
const BULK_MAX: usize = 500;

/// What a bulk write does to a source: `live` sets (or, with a null destination, removes) its
/// redirect; `draft` and `publish` are GitBook's draft redirects, which quire does not keep.
#[derive(Deserialize, utoipa::ToSchema, Default, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Intent {
    #[default]
    Live,
    Draft,
    Publish,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct BulkRedirect {
    source: String,
    #[serde(default)]
    intent: Intent,
    #[serde(default)]
    capture_wildcard: bool,
    permanent: Option<bool>,
    /// Where it leads; null removes the redirect from `source`.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    destination: quire_store::patch::Patch<DestinationInput>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct BulkRedirects {
    redirects: Vec<BulkRedirect>,
}

/// What became of one source of a bulk write: `created`, `updated` or `deleted`, or `error`.
#[derive(Serialize, utoipa::ToSchema)]
struct BulkResult {
    status: &'static str,
    source: String,
    draft: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
struct BulkResults {
    results: Vec<BulkResult>,
}

/// One source of a bulk write, checked then written; a refusal is its own result.
fn bulk_one(
    c: &mut dyn quire_store::db::Conn,
    site: &quire_store::permissions::Authorized<quire_store::sites::SiteFor, site::Manage>,
    cache: &quire_store::content::store::ContentCache,
    item: &BulkRedirect,
) -> quire_store::StoreResult<BulkResult> {
    use quire_store::patch::Patch;
    let result = |status, id: Option<String>, error: Option<String>| BulkResult {
        status,
        source: item.source.clone(),
        draft: false,
        id,
        error,
    };
    if item.intent != Intent::Live {
        let error = "quire keeps no draft redirects: every redirect is live (intent \"live\")";
        return Ok(result("error", None, Some(error.into())));
    }
    let destination = match &item.destination {
        Patch::Absent => {
            let error = "`destination` is required (null removes the redirect)";
            return Ok(result("error", None, Some(error.into())));
        }
        Patch::Null => None,
        Patch::Value(d) => Some(d),
    };
    let written = redirects::upsert(
        c,
        site,
        cache,
        &item.source,
        destination,
        item.permanent,
        item.capture_wildcard,
    );
    match written {
        Ok(redirects::Upserted::Created(r)) => Ok(result("created", Some(r.id), None)),
        Ok(redirects::Upserted::Updated(r)) => Ok(result("updated", Some(r.id), None)),
        Ok(redirects::Upserted::Deleted) => Ok(result("deleted", None, None)),
        // A refusal of this source; a fault of the database fails (and retries) the whole write.
        Err(e)
            if matches!(
                e.kind,
                quire_store::ErrorKind::Invalid
                    | quire_store::ErrorKind::NotFound
                    | quire_store::ErrorKind::Conflict
            ) =>
        {
            Ok(result("error", None, Some(e.message)))
        }
        Err(e) => Err(e),
    }
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
    tag = "Docs sites",
    summary = "Set or remove up to 500 redirects by their source, in one write",
    params(SitePath),
    request_body = BulkRedirects,
    responses((status = 200, description = "What became of each source, in order; one refused does not stop the others.", body = BulkResults)),
    security(("token" = ["site:metadata:write"]))
)]
async fn bulk_redirects(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<BulkRedirects>,
) -> ApiResult<axum::Json<BulkResults>> {
    if body.redirects.is_empty() || body.redirects.len() > BULK_MAX {
        return Err(ApiError::bad_request(format!(
            "`redirects` holds 1 to {BULK_MAX} redirects, not {}",
            body.redirects.len()
        )));
    }
    // A malformed source or destination is a malformed request: nothing is written.
    for (i, item) in body.redirects.iter().enumerate() {
        redirects::check_source(&format!("redirects[{i}].source"), &item.source, true)?;
        if let quire_store::patch::Patch::Value(d) = &item.destination {
            check_destination(d)
                .map_err(|e| ApiError::bad_request(format!("`redirects[{i}]`: {}", e.message)))?;
        }
    }
    let store = app.store.clone();
    let results = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            body.redirects
                .iter()
                .map(|item| bulk_one(c, &site, &store.content, item))
                .collect::<Result<Vec<_>, _>>()
        })
        .await?;
    Ok(axum::Json(BulkResults { results }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateRedirect {
    source: String,
    destination: DestinationInput,
    #[serde(default)]
    permanent: bool,
    #[serde(default)]
    capture_wildcard: bool,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
    tag = "Docs sites",
    summary = "Create a redirect",
    params(SitePath),
    request_body = CreateRedirect,
    responses((status = 201, description = "The new redirect.", body = RedirectJson, headers(("Location" = String, description = "The redirect's URL."))), (status = 409, description = "The site has a redirect from this source already.")),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_redirect(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateRedirect>,
) -> ApiResult<impl IntoResponse> {
    redirects::check_source("source", &body.source, true)?;
    check_destination(&body.destination)?;
    let new = redirects::NewRedirect {
        source: body.source,
        destination: body.destination,
        permanent: body.permanent,
        capture_wildcard: body.capture_wildcard,
    };
    let (p, store) = (path.clone(), app.store.clone());
    let created = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), p.site(), move |c, site| {
            redirects::create(c, &site, &store.content, &new)
        })
        .await?;
    let location = app.urls.api(&format!(
        "/orgs/{}/sites/{}/redirects/{}",
        path.organization_id, path.site_id, created.id
    ));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(redirect_json(&created)),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
    tag = "Docs sites",
    summary = "Get a redirect",
    params(SiteRedirectPath),
    responses((status = 200, description = "The redirect.", body = RedirectJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_redirect(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteRedirectPath>,
) -> ApiResult<axum::Json<RedirectJson>> {
    let found = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            redirects::get(c, &site, &path.site_redirect_id)
        })
        .await?;
    Ok(axum::Json(redirect_json(&found)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateRedirect {
    source: Option<String>,
    destination: Option<DestinationInput>,
    permanent: Option<bool>,
    capture_wildcard: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
    tag = "Docs sites",
    summary = "Update a redirect",
    params(SiteRedirectPath),
    request_body = UpdateRedirect,
    responses((status = 200, description = "The redirect as updated.", body = RedirectJson), (status = 409, description = "Another redirect has this source.")),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_redirect(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteRedirectPath>,
    Json(body): Json<UpdateRedirect>,
) -> ApiResult<axum::Json<RedirectJson>> {
    if let Some(s) = &body.source {
        redirects::check_source("source", s, true)?;
    }
    if let Some(d) = &body.destination {
        check_destination(d)?;
    }
    let changes = redirects::Changes {
        source: body.source,
        destination: body.destination,
        permanent: body.permanent,
        capture_wildcard: body.capture_wildcard,
    };
    let store = app.store.clone();
    let updated = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            redirects::update(c, &site, &store.content, &path.site_redirect_id, &changes)
        })
        .await?;
    Ok(axum::Json(redirect_json(&updated)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
    tag = "Docs sites",
    summary = "Delete a redirect",
    params(SiteRedirectPath),
    responses((status = 204, description = "The redirect is gone (or never was).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_redirect(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteRedirectPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            redirects::delete(c, &site, &path.site_redirect_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `source` (required) and `shareKey`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ResolveQuery {
    /// The path to resolve (`/docs/old`).
    source: String,
    /// A share key of the site (accepted; members see every redirect).
    #[param(value_type = Option<String>)]
    // Accepted from GitBook's clients; a member sees every redirect without one.
    #[allow(dead_code)]
    share_key: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct ResolvedJson {
    pub redirect: RedirectJson,
    /// The URL the path leads to.
    pub target: String,
}

fn target_url(urls: &Urls, site: &Site, target: Target) -> String {
    match target {
        Target::Url(url) => url,
        Target::SitePath(path) => {
            let base = reader_url(urls, site);
            format!("{base}/{path}")
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/redirect",
    tag = "Docs sites",
    summary = "Resolve a path through the redirects of a site",
    params(SitePath, ResolveQuery),
    responses((status = 200, description = "The redirect the path follows (the exact source, else the longest wildcard one) and where it leads.", body = ResolvedJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn resolve_redirect(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(query): QueryOf<ResolveQuery>,
) -> ApiResult<axum::Json<ResolvedJson>> {
    redirects::check_source("source", &query.source, false)?;
    let store = app.store.clone();
    let (site, redirect, target) = match reader {
        Reader::User(caller) => {
            app.db
                .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
                    let (redirect, target) = redirects::resolve(c, &store.content, &site, &query.source)?;
                    Ok::<_, quire_store::StoreError>((site.site.clone(), redirect, target))
                })
                .await?
        }
        // A visitor follows the redirects of the published site they were admitted to.
        Reader::Visitor(visitor) => {
            let published = visitor
                .own_site(&app, &path.organization_id, &path.site_id)
                .await?;
            app.db
                .read(move |c| {
                    let (redirect, target) =
                        redirects::resolve_published(c, &store.content, &published, &query.source)?;
                    Ok::<_, quire_store::StoreError>((published.site.clone(), redirect, target))
                })
                .await?
        }
    };
    Ok(axum::Json(ResolvedJson {
        redirect: redirect_json(&redirect),
        target: target_url(&app.urls, &site, target),
    }))
}
