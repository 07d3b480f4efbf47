//! SAML single sign-on (`quire_store::saml`): an organization's identity providers, its sign-in
//! choices, and the service-provider metadata an identity provider's administrator loads.

pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::clock;
use quire_store::paging::{List, Paging};
use quire_store::permissions::org;
use quire_store::saml::{self, Fields};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::{OrgPath, SamlProviderPath};
use crate::state::App;
use wire::{SamlProviderJson, SsoLoginsJson, login_json, provider_json, service_provider};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_providers, create_provider))
        .routes(routes!(get_provider, update_provider, delete_provider))
        .routes(routes!(list_sso_logins))
        .routes(routes!(provider_metadata))
        .routes(routes!(start_sign_in))
}

/// The body of a create (`label` required) or an update (every field optional).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ProviderBody {
    /// 1 to 30 characters.
    label: Option<String>,
    /// The identity provider's entity id: a URI of at most 1024 characters.
    #[serde(rename = "entityID")]
    entity_id: Option<String>,
    /// The identity provider's signing certificate: X.509, PEM (or the bare base64 of its DER),
    /// valid now.
    certificate: Option<String>,
    /// The identity provider's sign-in URL (HTTP-Redirect binding).
    #[serde(rename = "ssoURL")]
    sso_url: Option<String>,
    /// A team of the organization the people it signs in join; null for none.
    #[serde(default, rename = "defaultTeam")]
    #[schema(value_type = Option<String>)]
    default_team: Patch<String>,
    /// The role they get; null makes them guests. `read` when a create leaves it out.
    #[serde(default, rename = "defaultRole")]
    #[schema(value_type = Option<String>)]
    default_role: Patch<String>,
}

impl ProviderBody {
    fn fields(self) -> Fields {
        Fields {
            label: self.label,
            entity_id: self.entity_id,
            sso_url: self.sso_url,
            certificate: self.certificate,
            default_team: self.default_team,
            default_role: self.default_role,
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/saml",
    tag = "Single sign-on",
    summary = "List the SAML providers of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The providers, oldest first.", body = List<SamlProviderJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_providers(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<SamlProviderJson>>> {
    let (standing, list) = app
        .db
        .read_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            let list = saml::list(c, &org, &caller.user_id, &paging)?;
            Ok::<_, quire_store::StoreError>((org.standing, list))
        })
        .await?;
    Ok(axum::Json(list.map(|p| provider_json(&app.urls, &p, standing))))
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/saml",
    tag = "Single sign-on",
    summary = "Add a SAML provider",
    params(OrgPath),
    request_body = ProviderBody,
    responses((status = 201, description = "The new provider; `pending` until its entity id, sign-in URL and certificate are set.", body = SamlProviderJson, headers(("Location" = String, description = "The provider's URL.")))),
    security(("token" = ["org:write"]))
)]
async fn create_provider(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<ProviderBody>,
) -> ApiResult<impl IntoResponse> {
    let changes = body.fields().check(clock::now_ms())?;
    let (standing, provider) = app
        .db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            let provider = saml::create(c, &org, &caller.user_id, &changes)?;
            Ok((org.standing, provider))
        })
        .await?;
    let json = provider_json(&app.urls, &provider, standing);
    let location = app
        .urls
        .api(&format!("/orgs/{}/saml/{}", provider.org_id, provider.id));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}",
    tag = "Single sign-on",
    summary = "Get a SAML provider",
    params(SamlProviderPath),
    responses((status = 200, description = "The provider.", body = SamlProviderJson)),
    security(("token" = ["org:read"]))
)]
async fn get_provider(
    caller: Caller,
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
) -> ApiResult<axum::Json<SamlProviderJson>> {
    let (standing, provider) = app
        .db
        .read_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            let provider = saml::get(c, &org, &caller.user_id, &id)?;
            Ok::<_, quire_store::StoreError>((org.standing, provider))
        })
        .await?;
    Ok(axum::Json(provider_json(&app.urls, &provider, standing)))
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}",
    tag = "Single sign-on",
    summary = "Update a SAML provider",
    params(SamlProviderPath),
    request_body = ProviderBody,
    responses((status = 200, description = "The provider as updated.", body = SamlProviderJson)),
    security(("token" = ["org:write"]))
)]
async fn update_provider(
    caller: Caller,
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
    Json(body): Json<ProviderBody>,
) -> ApiResult<axum::Json<SamlProviderJson>> {
    let changes = body.fields().check(clock::now_ms())?;
    let (standing, provider) = app
        .db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            let provider = saml::update(c, &org, &caller.user_id, &id, &changes)?;
            Ok((org.standing, provider))
        })
        .await?;
    Ok(axum::Json(provider_json(&app.urls, &provider, standing)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}",
    tag = "Single sign-on",
    summary = "Delete a SAML provider",
    params(SamlProviderPath),
    responses((status = 204, description = "The provider is gone (or never was); the people it signed in stay members.")),
    security(("token" = ["org:write"]))
)]
async fn delete_provider(
    caller: Caller,
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            saml::delete(c, &org, &id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sso",
    tag = "Single sign-on",
    summary = "List the ways to sign in to an organization",
    params(OrgPath),
    responses((status = 200, description = "The active SAML providers, oldest first, with where a sign-in starts.", body = SsoLoginsJson)),
    security(("token" = ["org:read"]))
)]
async fn list_sso_logins(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
) -> ApiResult<axum::Json<SsoLoginsJson>> {
    let providers = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), org_id, move |c, org| {
            saml::logins(c, &org)
        })
        .await?;
    Ok(axum::Json(SsoLoginsJson {
        items: providers.iter().map(|p| login_json(&app.urls, p)).collect(),
    }))
}

/// Public: an identity provider fetches it to learn how to reach quire, and it holds nothing
/// secret (quire's entity id and ACS URL).
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}/metadata",
    tag = "Single sign-on",
    summary = "The service provider's SAML metadata for a provider",
    params(SamlProviderPath),
    responses((status = 200, description = "SAML 2.0 metadata: quire's entity id and its ACS URL (HTTP-POST).", content_type = "application/samlmetadata+xml", body = String)),
    security(())
)]
async fn provider_metadata(
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
) -> ApiResult<impl IntoResponse> {
    let provider = app.db.read(move |c| saml::load(c, &org_id, &id)).await?;
    let xml = service_provider(&app.urls, &provider).metadata_xml();
    Ok(([(header::CONTENT_TYPE, "application/samlmetadata+xml")], xml))
}

/// The query of a provider's start URL.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct StartQuery {
    /// Where to send the person once signed in: a path of this server (`/s/handbook/...`), or a
    /// URL on its origin. `/` when absent.
    return_to: Option<String>,
}

/// Public: a browser follows it to sign in. It starts a sign-in (remembered for 10 minutes, so
/// that the response can be matched to it) and redirects to the identity provider with an
/// AuthnRequest (HTTP-Redirect binding); the relay state is the request's id.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}/start",
    tag = "Single sign-on",
    summary = "Start a sign-in with a SAML provider",
    params(SamlProviderPath, StartQuery),
    responses((status = 302, description = "To the identity provider's sign-in URL, with `SAMLRequest` and `RelayState`.")),
    security(())
)]
async fn start_sign_in(
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
    QueryOf(query): QueryOf<StartQuery>,
) -> ApiResult<impl IntoResponse> {
    let return_to = return_to(&app.urls, query.return_to.as_deref())?;
    let started = app
        .db
        .write(move |c| saml::requests::start(c, &org_id, &id, &return_to))
        .await?;
    let sp = service_provider(&app.urls, &started.provider);
    let request = saml::requests::redirect_parameter(&saml::requests::authn_request_xml(&started, &sp));
    let mut target = url::Url::parse(&started.provider.sso_url)
        .map_err(|e| ApiError::bad_request(format!("the provider's `ssoURL` is not a URL: {e}")))?;
    target
        .query_pairs_mut()
        .append_pair("SAMLRequest", &request)
        .append_pair("RelayState", &started.request_id);
    Ok((
        StatusCode::FOUND,
        [
            (header::LOCATION, target.to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
    ))
}

/// Where a sign-in may send the person back: a path of this server, or a URL on its origin;
/// never elsewhere (an open redirect would lend quire's name to any site).
fn return_to(urls: &crate::urls::Urls, value: Option<&str>) -> ApiResult<String> {
    let Some(value) = value else {
        return Ok("/".to_string());
    };
    let refuse = || {
        ApiError::bad_request(
            "`returnTo` must be a path of this server (starting with one `/`) or a URL on its origin",
        )
    };
    if value.len() > 2048 || value.chars().any(|c| c.is_control() || c == '\\') {
        return Err(refuse());
    }
    if value.starts_with('/') && !value.starts_with("//") {
        return Ok(value.to_string());
    }
    let target = url::Url::parse(value).map_err(|_| refuse())?;
    if !urls.is_own_origin(&target) {
        return Err(refuse());
    }
    Ok(value.to_string())
}
