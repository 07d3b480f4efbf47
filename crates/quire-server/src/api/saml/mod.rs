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
        .routes(routes!(finish_sign_in))
        .routes(routes!(list_sessions))
        .routes(routes!(revoke_session))
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
    /// The same, by the name a visitor-auth site's sign-in URL is given it (`fallbackURL`):
    /// used when `returnTo` is absent.
    location: Option<String>,
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
    let return_to = return_to(&app.urls, query.return_to.or(query.location).as_deref())?;
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

/// The identity provider's form post (HTTP-POST binding).
#[derive(Deserialize, utoipa::ToSchema)]
struct AcsForm {
    /// The response, base64.
    #[serde(rename = "SAMLResponse")]
    saml_response: String,
    /// What the sign-in's start handed the identity provider (the request's id); the response's
    /// `InResponseTo` decides which sign-in it finishes.
    #[serde(rename = "RelayState")]
    #[schema(value_type = Option<String>)]
    _relay_state: Option<serde::de::IgnoredAny>,
}

/// Public: the identity provider's response comes here through the person's browser. It is
/// checked (signature against the provider's certificate, issuer, destination, audience, time
/// window, the started sign-in it answers, replay) before the person becomes a member (with the
/// provider's default role and team) and gets a session cookie; 303 back to where they started.
/// A refused response is a 400 naming the reason, logged with it.
#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/saml/{samlProviderId}/acs",
    tag = "Single sign-on",
    summary = "Finish a sign-in: the SAML assertion consumer service",
    params(SamlProviderPath),
    request_body(content = AcsForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Signed in: a `quire_session` cookie, and back to where the sign-in started."),
        (status = 400, description = "The response was refused; the message names the reason.", body = crate::error::ErrorEnvelope),
    ),
    security(())
)]
async fn finish_sign_in(
    State(app): State<App>,
    Path(SamlProviderPath {
        organization_id: org_id,
        saml_provider_id: id,
    }): Path<SamlProviderPath>,
    body: axum::body::Bytes,
) -> ApiResult<axum::response::Response> {
    let body = std::str::from_utf8(&body).map_err(|_| ApiError::bad_request("the form is not UTF-8"))?;
    let form: AcsForm = crate::extract::parse_query(body)?;
    let form = form.saml_response;
    let provider = {
        let (org_id, id) = (org_id.clone(), id.clone());
        app.db.read(move |c| saml::load(c, &org_id, &id)).await?
    };
    if !provider.is_active() {
        return Err(ApiError::bad_request(format!(
            "SAML provider {id:?} is pending: it signs nobody in"
        )));
    }
    let sp = service_provider(&app.urls, &provider);
    let refuse = |refusal: saml::refusal::Refusal| {
        tracing::warn!(
            organization = %org_id,
            provider = %id,
            reason = refusal.reason(),
            "SAML sign-in refused: {refusal}"
        );
        ApiError::bad_request(refusal.to_string())
    };
    let checked = {
        let provider = provider.clone();
        tokio::task::spawn_blocking(move || {
            let xml = saml::response::decode(&form)?;
            saml::response::verify(&xml, &provider, &sp, clock::now_ms())
        })
        .await
        .map_err(|e| ApiError::internal(format!("checking the response failed: {e}")))?
    };
    let verified = checked.map_err(refuse)?;
    let ttl = app.settings.session_ttl_ms;
    let finished = {
        let verified = verified.clone();
        app.db
            .write(move |c| saml::signin::finish(c, &provider, &verified, ttl))
            .await?
    };
    let signed_in = finished.map_err(refuse)?;
    tracing::info!(
        organization = %org_id,
        provider = %id,
        user = %signed_in.session.user.id,
        joined = signed_in.joined,
        "SAML sign-in"
    );
    let location = match visitor_entry(&app, &org_id, &signed_in, &verified).await {
        Ok(Some(entry)) => entry,
        Ok(None) => signed_in.return_to.clone(),
        Err(e) => {
            tracing::warn!(organization = %org_id, "no visitor token for the site signed in to: {}", e.message);
            signed_in.return_to.clone()
        }
    };
    let mut response = (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
    )
        .into_response();
    if let Some(cookie) = crate::session::set_cookie(&app, &signed_in.secret, ttl) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    Ok(response)
}

/// When the sign-in started at a visitor-auth site of the organization (its `fallbackURL` is the
/// provider's start URL), the way back in: the path the visitor asked for with a visitor token
/// (`jwt_token`) the site's key signs, carrying the assertion's attributes that the site's
/// adaptive schema names as claims, valid as long as the session. The reader keeps it in its
/// visitor cookie, as any site's sign-in's token.
async fn visitor_entry(
    app: &App,
    org_id: &str,
    signed_in: &saml::signin::SignedIn,
    verified: &saml::response::Verified,
) -> ApiResult<Option<String>> {
    let absolute = match signed_in.return_to.starts_with('/') {
        true => app.urls.app(&signed_in.return_to),
        false => signed_in.return_to.clone(),
    };
    let asked = url::Url::parse(&absolute).map_err(|e| ApiError::internal(format!("{absolute:?}: {e}")))?;
    let Some(target) = crate::reader::target(app, asked.path(), None).await else {
        return Ok(None);
    };
    let Some(found) = app.reader_sites.find(&app.db, target.key).await? else {
        return Ok(None);
    };
    if found.0 != org_id {
        return Ok(None);
    }
    let site = app.published_sites.load(&app.db, &found.0, &found.1).await?;
    if site.site.visibility != quire_store::sites::SiteVisibility::VisitorAuth {
        return Ok(None);
    }
    let claims = site.claims_from_attributes(&verified.attributes);
    let token =
        quire_store::sites::published::mint_token(&site.site, claims, signed_in.session.expires_at / 1000)?;
    let mut entry = asked;
    entry.query_pairs_mut().append_pair("jwt_token", &token);
    Ok(Some(entry[url::Position::BeforePath..].to_string()))
}

/// The organization's live browser sessions (opened by its SAML providers), oldest first.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sessions",
    tag = "Single sign-on",
    summary = "List the organization's sessions",
    params(OrgPath, Paging),
    responses((status = 200, description = "The sessions.", body = List<wire::SessionJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_sessions(
    State(app): State<App>,
    caller: Caller,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<wire::SessionJson>>> {
    let list = app
        .db
        .read_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            quire_store::sessions::list(c, &org, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|s| wire::session_json(&app.urls, &s))))
}

/// Ends a session at once: its cookie no longer signs anyone in. 204 also when there is none.
#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sessions/{sessionId}",
    tag = "Single sign-on",
    summary = "Revoke a session",
    params(crate::paths::SessionPath),
    responses((status = 204, description = "Revoked.")),
    security(("token" = ["org:write"]))
)]
async fn revoke_session(
    State(app): State<App>,
    caller: Caller,
    Path(crate::paths::SessionPath {
        organization_id: org_id,
        session_id,
    }): Path<crate::paths::SessionPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id, move |c, org| {
            quire_store::sessions::revoke(c, &org, &session_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
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
