//! Docs sites: the site itself, its publication, adaptive schema and visitor-auth key. Its
//! structure (`structure.rs`), published view (`published.rs`), share links and customization
//! have their own files.

mod customization;
mod external_links;
pub(crate) mod published;
mod redirects;
mod share_links;
mod structure;
pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::paging::{List, Paging};
use quire_store::patch::Patch;
use quire_store::permissions::{org, site};
use quire_store::sites::{self, AgentsContext, SiteType, SiteVisibility};
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, OptionalJson, Path, QueryOf};
use crate::paths::{OrgPath, SitePath};
use crate::state::App;
use wire::{AdaptiveSchemaJson, PublishingAuthJson, TemplateConditionJson, TemplateConditionsJson};
pub use wire::{SiteJson, site_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_sites, create_site))
        .routes(routes!(get_site, update_site, delete_site))
        .routes(routes!(publish_site))
        .routes(routes!(unpublish_site))
        .routes(routes!(get_adaptive_schema, put_adaptive_schema))
        .routes(routes!(get_template_conditions))
        .routes(routes!(get_publishing_auth, update_publishing_auth))
        .routes(routes!(regenerate_publishing_auth))
        .routes(routes!(get_publishing_preview))
        .merge(structure::routes())
        .merge(external_links::routes())
        .merge(published::routes())
        .merge(share_links::routes())
        .merge(customization::routes())
        .merge(redirects::routes())
}

fn check_title(title: &str) -> ApiResult<()> {
    validate::title("title", title, sites::TITLE_MIN, sites::TITLE_MAX)?;
    Ok(())
}

/// The query of `GET /v1/orgs/{organizationId}/sites`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListSitesQuery {
    /// Only sites that publish this space.
    #[param(value_type = Option<String>)]
    space: Option<String>,
    /// GitBook's name for `space`.
    #[param(ignore)]
    #[serde(rename = "spaceId")]
    space_id: Option<String>,
    /// Only sites whose title contains this text (case-insensitive).
    #[param(value_type = Option<String>)]
    title: Option<String>,
    /// Only published (`true`) or unpublished (`false`) sites.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    published: Option<bool>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites",
    tag = "Docs sites",
    summary = "List the docs sites of an organization",
    params(OrgPath, ListSitesQuery, Paging),
    responses((status = 200, description = "The sites, oldest first.", body = List<SiteJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_sites(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(query): QueryOf<ListSitesQuery>,
) -> ApiResult<axum::Json<List<SiteJson>>> {
    let space = query.space.or(query.space_id);
    let filters = sites::Filters {
        space,
        title: query.title,
        published: query.published,
    };
    let paging = query.paging;
    let list = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            sites::list(c, &org, &filters, &paging)
        })
        .await?;
    Ok(axum::Json(
        list.map(|s| site_json(&app.urls, &s.site, s.standing)),
    ))
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateSite {
    #[serde(rename = "type")]
    kind: Option<SiteType>,
    title: Option<String>,
    visibility: Option<SiteVisibility>,
    spaces: Option<Vec<String>>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites",
    tag = "Docs sites",
    summary = "Create a docs site",
    params(OrgPath),
    request_body(content = Option<CreateSite>, description = "Optional.", content_type = "application/json"),
    responses((status = 201, description = "The new site.", body = SiteJson, headers(("Location" = String, description = "The site's URL.")))),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_site(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    OptionalJson(body): OptionalJson<CreateSite>,
) -> ApiResult<impl IntoResponse> {
    let body = body.unwrap_or_default();
    let title = body.title.unwrap_or_else(|| "Untitled site".to_string());
    check_title(&title)?;
    let new = sites::NewSite {
        kind: body.kind.unwrap_or(SiteType::Basic),
        title,
        visibility: body.visibility.unwrap_or(SiteVisibility::Public),
        spaces: body.spaces.unwrap_or_default(),
    };
    let site = app
        .db
        .write_as::<org::View, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            sites::create(c, &org, &caller.user_id, &new)
        })
        .await?;
    let json = site_json(&app.urls, &site.site, site.standing);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}",
    tag = "Docs sites",
    summary = "Get a docs site",
    params(SitePath),
    responses((status = 200, description = "The site.", body = SiteJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<SiteJson>> {
    let site = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), |_, it| Ok(it.into_inner()))
        .await?;
    Ok(axum::Json(site_json(&app.urls, &site.site, site.standing)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct AdaptiveContentBody {
    enabled: bool,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateSite {
    title: Option<String>,
    visibility: Option<SiteVisibility>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    basename: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    hostname: Patch<String>,
    adaptive_content: Option<AdaptiveContentBody>,
    agents_context: Option<AgentsContext>,
    default_site_space: Option<String>,
    default_site_section: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    proxy: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}",
    tag = "Docs sites",
    summary = "Update a docs site",
    params(SitePath),
    request_body = UpdateSite,
    responses((status = 200, description = "The site as updated.", body = SiteJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<UpdateSite>,
) -> ApiResult<axum::Json<SiteJson>> {
    if let Some(t) = &body.title {
        check_title(t)?;
    }
    if let Patch::Value(b) = &body.basename {
        validate::name("basename", b, sites::BASENAME_MAX)?;
        if b.is_empty() {
            return Err(ApiError::bad_request(
                "`basename` must be 1 to 100 characters long, not 0",
            ));
        }
    }
    if let Patch::Value(h) = &body.hostname {
        sites::check_hostname(h)?;
    }
    if let Patch::Value(p) = &body.proxy {
        sites::check_proxy(p)?;
    }
    let changes = sites::Changes {
        title: body.title,
        visibility: body.visibility,
        basename: body.basename,
        hostname: body.hostname,
        proxy: body.proxy,
        adaptive_enabled: body.adaptive_content.map(|a| a.enabled),
        agents_context: body.agents_context,
        default_site_space: body.default_site_space,
        default_site_section: body.default_site_section,
    };
    let site = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::update(c, &site, &caller.user_id, &changes)
        })
        .await?;
    Ok(axum::Json(site_json(&app.urls, &site.site, site.standing)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}",
    tag = "Docs sites",
    summary = "Delete a docs site",
    params(SitePath),
    responses((status = 204, description = "The site is deleted.")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::delete(c, &site, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn set_published(
    app: App,
    caller: Caller,
    path: SitePath,
    published: bool,
) -> ApiResult<axum::Json<SiteJson>> {
    let site = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::set_published(c, &site, &caller.user_id, published)
        })
        .await?;
    Ok(axum::Json(site_json(&app.urls, &site.site, site.standing)))
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/publish",
    tag = "Docs sites",
    summary = "Publish a docs site",
    params(SitePath),
    responses((status = 200, description = "The site, live for its visibility's audience.", body = SiteJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn publish_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<SiteJson>> {
    set_published(app, caller, path, true).await
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/unpublish",
    tag = "Docs sites",
    summary = "Take a docs site down",
    params(SitePath),
    responses((status = 200, description = "The site, no longer live.", body = SiteJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn unpublish_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<SiteJson>> {
    set_published(app, caller, path, false).await
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema",
    tag = "Docs sites",
    summary = "Get the adaptive schema of a site",
    params(SitePath),
    responses((status = 200, description = "The schema; 404 when the site has none.", body = AdaptiveSchemaJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_adaptive_schema(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<AdaptiveSchemaJson>> {
    let schema = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            sites::adaptive_schema(&site)
        })
        .await?;
    Ok(axum::Json(AdaptiveSchemaJson {
        object: "site-adaptive-schema",
        json_schema: schema.json,
        updated_at: schema.updated_at,
    }))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PutAdaptiveSchema {
    #[schema(value_type = Object)]
    json_schema: serde_json::Value,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema",
    tag = "Docs sites",
    summary = "Set the adaptive schema of a site",
    params(SitePath),
    request_body = PutAdaptiveSchema,
    responses((status = 200, description = "The schema as stored.", body = AdaptiveSchemaJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn put_adaptive_schema(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<PutAdaptiveSchema>,
) -> ApiResult<axum::Json<AdaptiveSchemaJson>> {
    let schema = sites::parse_schema(&body.json_schema)?;
    let stored = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::set_adaptive_schema(c, &site, &schema)
        })
        .await?;
    Ok(axum::Json(AdaptiveSchemaJson {
        object: "site-adaptive-schema",
        json_schema: stored.json,
        updated_at: stored.updated_at,
    }))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema/template-conditions",
    tag = "Docs sites",
    summary = "Suggested conditions derived from the adaptive schema",
    params(SitePath),
    responses((status = 200, description = "The template conditions.", body = TemplateConditionsJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_template_conditions(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<TemplateConditionsJson>> {
    let items = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            sites::template_conditions(&site)
        })
        .await?;
    Ok(axum::Json(TemplateConditionsJson {
        items: items
            .into_iter()
            .map(|t| TemplateConditionJson {
                description: t.description,
                condition: t.condition,
            })
            .collect(),
    }))
}

fn publishing_auth(auth: sites::PublishingAuth) -> PublishingAuthJson {
    PublishingAuthJson {
        object: "publishing-auth",
        backend: "custom",
        private_key: auth.key,
        fallback_url: auth.fallback_url,
        logout_url: auth.logout_url,
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
    tag = "Docs sites",
    summary = "Get the visitor-auth settings of a site, with the key visitor tokens are signed with",
    params(SitePath),
    responses((status = 200, description = "The settings.", body = PublishingAuthJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_publishing_auth(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<PublishingAuthJson>> {
    let key = app
        .db
        .read_as::<site::Admin, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            Ok::<_, quire_store::StoreError>(sites::publishing_auth(&site))
        })
        .await?;
    Ok(axum::Json(publishing_auth(key)))
}

/// The visitor-auth backend: quire's sites verify the tokens of a custom backend (one that
/// signs them with the site's key); integration backends need integrations, not built yet.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum Backend {
    Custom,
    Integration,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdatePublishingAuth {
    /// `custom` (GitBook's client always sends one).
    backend: Option<Backend>,
    /// An absolute http(s) URL, or null to show quire's sign-in page.
    #[serde(default, rename = "fallbackURL")]
    #[schema(value_type = Option<String>)]
    fallback_url: Patch<String>,
    /// An absolute http(s) URL, or null to send a visitor who signs out to the site's home.
    #[serde(default, rename = "logoutURL")]
    #[schema(value_type = Option<String>)]
    logout_url: Patch<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
    tag = "Docs sites",
    summary = "Set where visitors of a visitor-auth site sign in",
    params(SitePath),
    request_body = UpdatePublishingAuth,
    responses((status = 200, description = "The settings as updated.", body = PublishingAuthJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_publishing_auth(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<UpdatePublishingAuth>,
) -> ApiResult<axum::Json<PublishingAuthJson>> {
    if let Some(Backend::Integration) = body.backend {
        return Err(ApiError::bad_request(
            "`backend`: \"integration\" needs an authenticated-access integration, and quire has none; use \"custom\" (tokens signed with the site's key)",
        ));
    }
    let auth = app
        .db
        .write_as::<site::Admin, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::set_visitor_urls(c, &site, &body.fallback_url, &body.logout_url)
        })
        .await?;
    Ok(axum::Json(publishing_auth(auth)))
}

/// A temporary URL of the site's preview.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct PreviewJson {
    /// The site's `urls.preview` with a token good for `signing::PREVIEW_TTL_MS` (an hour): the
    /// reader keeps it in a cookie, so the site reads as published, whatever its visibility,
    /// until it expires.
    url: String,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/publishing/preview",
    tag = "Docs sites",
    summary = "A temporary URL to preview the site as published, published or not",
    params(SitePath),
    responses((status = 200, description = "The preview URL, good for an hour.", body = PreviewJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_publishing_preview(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<PreviewJson>> {
    let site = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            Ok::<_, quire_store::StoreError>(site.into_inner().site)
        })
        .await?;
    let expires = quire_store::clock::now_ms() + crate::signing::PREVIEW_TTL_MS;
    let token = crate::signing::preview_token(&app.signing_key, &site.id, expires);
    Ok(axum::Json(PreviewJson {
        url: format!("{}?preview={token}", wire::preview_url(&app.urls, &site)),
    }))
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/regenerate",
    tag = "Docs sites",
    summary = "Rotate the key visitor tokens are signed with",
    params(SitePath),
    responses((status = 200, description = "The settings with the new key; tokens signed with the old one are refused.", body = PublishingAuthJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn regenerate_publishing_auth(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<PublishingAuthJson>> {
    let key = app
        .db
        .write_as::<site::Admin, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::regenerate_visitor_key(c, &site)
        })
        .await?;
    Ok(axum::Json(publishing_auth(key)))
}
