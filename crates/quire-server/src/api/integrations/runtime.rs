//! What runs an integration's script from the outside: rendering its components (GitBook's
//! `POST /v1/integrations/{integrationName}/render`, what GitBook's renderer calls for an
//! integration block) and requests to its public endpoints, whose answers are the script's
//! own (`docs/integrations.md`, "The runtime").

use std::collections::HashMap;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use quire_store::integrations::bindings::On;
use quire_store::integrations::scripts::{self, ScriptCall};
use serde::Deserialize;
use serde_json::{Value as Json, json};
use sha2::Digest;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json as JsonBody, Path};
use crate::paths::IntegrationPath;
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    const ENDPOINTS: [&str; 4] = [
        "/v1/integrations/{integrationName}/integration",
        "/v1/integrations/{integrationName}/installations/{installationId}/endpoint",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}/endpoint",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}/endpoint",
    ];
    let mut router = OpenApiRouter::default().routes(routes!(render));
    // Public endpoints answer whatever the script answers, to anyone (webhooks from other
    // services, a webframe's page): not operations of the API, so not in its description.
    for path in ENDPOINTS {
        router = router
            .route(path, any(public_endpoint))
            .route(&format!("{path}/{{*rest}}"), any(public_endpoint));
    }
    router
}

/// The public endpoints of an integration, its installations and their space and site
/// installations (`urls.publicEndpoint`).
pub fn endpoint_path(name: &str, installation: Option<&str>, on: Option<(On, &str)>) -> String {
    match (installation, on) {
        (None, _) => format!("/integrations/{name}/integration"),
        (Some(i), None) => format!("/integrations/{name}/installations/{i}/endpoint"),
        (Some(i), Some((on, target))) => {
            format!(
                "/integrations/{name}/installations/{i}/{}s/{target}/endpoint",
                on.noun()
            )
        }
    }
}

/// The largest request body a public endpoint passes to the script.
pub const ENDPOINT_BODY_MAX: usize = 5 << 20;

/// GitBook's `RenderIntegrationUI`.
#[derive(Deserialize, utoipa::ToSchema)]
#[schema(as = RenderIntegrationUI)]
#[serde(rename_all = "camelCase")]
pub struct RenderBody {
    /// The component, as the integration's manifest and script name it.
    component_id: String,
    /// The component's properties.
    #[schema(value_type = Object)]
    props: Json,
    /// Its local state.
    #[schema(value_type = Option<Object>)]
    state: Option<Json>,
    /// Where it renders (GitBook's `ContentKitContext`: `spaceId`, `siteId` or `organizationId`).
    #[schema(value_type = Object)]
    context: Json,
    /// The action that caused this render.
    #[schema(value_type = Option<Object>)]
    action: Option<Json>,
}

/// The longest component id.
const COMPONENT_ID_MAX: usize = 100;

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}/render",
    tag = super::TAG,
    operation_id = "renderIntegrationUIWithPost",
    summary = "Render an integration's component",
    description = "Runs the component's `render` in the integration's script, for the installation that covers the space, site or organization of `context`, and answers its ContentKit output. A component that calls `setCache` answers `Cache-Control: max-age=N`, and the same request is answered from memory for that long.",
    params(IntegrationPath),
    request_body = RenderBody,
    responses(
        (status = 200, description = "GitBook's `ContentKitRenderOutput`.", body = Object,
            headers(("Cache-Control" = String, description = "`max-age=N` when the component asked to be cached."))),
        (status = 404, description = "No such integration, space or component, or the integration is not installed there."),
        (status = 502, description = "The script failed or was stopped at a limit."),
    ),
    security(("token" = ["integration:read"]))
)]
async fn render(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    JsonBody(body): JsonBody<RenderBody>,
) -> ApiResult<Response> {
    if body.component_id.is_empty() || body.component_id.chars().count() > COMPONENT_ID_MAX {
        return Err(ApiError::bad_request(format!(
            "`componentId` is 1 to {COMPONENT_ID_MAX} characters"
        )));
    }
    for (field, value) in [
        ("props", Some(&body.props)),
        ("context", Some(&body.context)),
        ("state", body.state.as_ref()),
    ] {
        if !value.is_none_or(Json::is_object) {
            return Err(ApiError::bad_request(format!("`{field}` must be an object")));
        }
    }
    let scope = scripts::RenderScope::of(&body.context)?;
    let target = app
        .store
        .render_targets
        .resolve(&app.db, &caller.user_id, &path.integration_name, scope)
        .await?;
    let asked = json!({
        "componentId": body.component_id,
        "props": body.props,
        "state": body.state,
        "context": body.context,
        "action": body.action,
    });
    // A component that asks to be cached says its output depends on the request alone.
    let key: [u8; 32] = sha2::Sha256::new()
        .chain_update(target.integration_id.as_bytes())
        .chain_update(target.version.to_le_bytes())
        .chain_update(target.installation_id.as_bytes())
        .chain_update(asked.to_string().as_bytes())
        .finalize()
        .into();
    if let Some(rendered) = app.renders.get(&key) {
        return Ok(render_response(rendered.body, Some(&rendered.cache_control)));
    }
    let mut event = asked;
    event["eventId"] = json!(quire_store::ids::new_id());
    event["type"] = json!("ui_render");
    event["installationId"] = json!(target.installation_id);
    event["auth"] = json!({ "userId": caller.user_id });
    if let Some(space) = &target.space_id {
        event["spaceId"] = json!(space);
    }
    if let Some(site) = &target.site_id {
        event["siteId"] = json!(site);
    }
    let call = ScriptCall {
        integration_id: target.integration_id.clone(),
        installation_id: Some(target.installation_id.clone()),
        space_id: target.space_id.clone(),
        site_id: target.site_id.clone(),
        event,
        fetch_body: None,
    };
    let outcome = app.store.scripts.call(&app.store, call).await?;
    for (level, line) in &outcome.logs {
        tracing::debug!(integration = %path.integration_name, level = level.as_str(), "{line}");
    }
    let answer = outcome.answer.map_err(|why| {
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            format!("integration {:?}: {why}", path.integration_name),
        )
    })?;
    if answer.status == 404 {
        return Err(ApiError::not_found(format!(
            "integration {:?} has no component {:?}",
            path.integration_name, body.component_id
        )));
    }
    if answer.status != 200 {
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            format!(
                "the integration's script answered {}: {}",
                answer.status,
                String::from_utf8_lossy(&answer.body)
                    .chars()
                    .take(300)
                    .collect::<String>()
            ),
        ));
    }
    if serde_json::from_slice::<serde::de::IgnoredAny>(&answer.body).is_err() {
        return Err(ApiError::new(
            StatusCode::BAD_GATEWAY,
            "the integration's script answered a render that is not JSON",
        ));
    }
    let cache_control = answer
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("cache-control"))
        .map(|(_, v)| v.clone());
    if let Some(value) = &cache_control
        && let Some(max_age) = max_age(value)
    {
        app.renders.keep(key, max_age, answer.body.clone(), value);
    }
    Ok(render_response(answer.body, cache_control.as_deref()))
}

fn render_response(body: bytes::Bytes, cache_control: Option<&str>) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(value) = cache_control.and_then(|v| HeaderValue::from_str(v).ok()) {
        headers.insert(header::CACHE_CONTROL, value);
    }
    response
}

/// `max-age=N` of a Cache-Control value.
fn max_age(value: &str) -> Option<Duration> {
    value.split(',').find_map(|d| {
        let (k, v) = d.trim().split_once('=')?;
        (k.trim().eq_ignore_ascii_case("max-age"))
            .then(|| v.trim().parse::<u64>().ok().map(Duration::from_secs))
            .flatten()
    })
}

/// The sandbox every public endpoint's answer is given: scripts, forms, popups and downloads,
/// but no origin.
const SANDBOX: &str = "sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads";

/// Headers of the script's answer that are the connection's, not the script's.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "upgrade",
    "te",
    "trailer",
    "proxy-authenticate",
    "proxy-authorization",
];

/// A request to a public endpoint: the script's `fetch` event, answered as the script answers,
/// with the integration's `contentSecurityPolicy`.
async fn public_endpoint(
    State(app): State<App>,
    axum::extract::Path(params): axum::extract::Path<HashMap<String, String>>,
    request: Request,
) -> ApiResult<Response> {
    let name = params.get("integrationName").cloned().unwrap_or_default();
    let installation = params.get("installationId").cloned();
    let on = match (params.get("spaceId"), params.get("siteId")) {
        (Some(space), _) => Some((On::Space, space.clone())),
        (None, Some(site)) => Some((On::Site, site.clone())),
        _ => None,
    };
    let (looking_name, looking_installation, looking_on) = (name.clone(), installation.clone(), on.clone());
    let (mut call, csp) = app
        .db
        .read(move |c| {
            scripts::endpoint_target(
                c,
                &looking_name,
                looking_installation.as_deref(),
                looking_on.as_ref().map(|(o, t)| (*o, t.as_str())),
            )
        })
        .await?;
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, ENDPOINT_BODY_MAX).await.map_err(|_| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a request to an integration's endpoint is at most {ENDPOINT_BODY_MAX} bytes"),
        )
    })?;
    let url = app.urls.app(
        &parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_string(), |p| p.as_str().to_string()),
    );
    let headers: serde_json::Map<String, Json> = parts
        .headers
        .iter()
        .filter(|(k, _)| *k != header::AUTHORIZATION && *k != header::COOKIE)
        .filter_map(|(k, v)| Some((k.as_str().to_string(), json!(v.to_str().ok()?))))
        .collect();
    let mut event = json!({
        "eventId": quire_store::ids::new_id(),
        "type": "fetch",
        // GitBook's `FetchRequest.method` is lower case.
        "request": { "method": parts.method.as_str().to_ascii_lowercase(), "url": url, "headers": headers },
    });
    if let Some(i) = &call.installation_id {
        event["installationId"] = json!(i);
    }
    if let Some(space) = &call.space_id {
        event["spaceId"] = json!(space);
    }
    if let Some(site) = &call.site_id {
        event["siteId"] = json!(site);
    }
    call.event = event;
    call.fetch_body = Some(body);
    let outcome = app.store.scripts.call(&app.store, call).await?;
    for (level, line) in &outcome.logs {
        tracing::debug!(integration = %name, level = level.as_str(), "{line}");
    }
    let answer = outcome
        .answer
        .map_err(|why| ApiError::new(StatusCode::BAD_GATEWAY, format!("integration {name:?}: {why}")))?;
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let headers = response.headers_mut();
    for (k, v) in &answer.headers {
        if HOP_BY_HOP.contains(&k.to_ascii_lowercase().as_str()) {
            continue;
        }
        if let (Ok(k), Ok(v)) = (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(v)) {
            headers.append(k, v);
        }
    }
    if let Some(value) = csp
        .as_ref()
        .and_then(quire_store::integrations::delivery::csp_header)
        .and_then(|v| HeaderValue::from_str(&v).ok())
    {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    // The script's pages share quire's origin (GitBook gives them one of their own): a sandbox
    // without `allow-same-origin` gives the page an opaque origin, so it cannot read what the
    // origin's other pages hold (a reader site's visitor cookie) or call the API as them.
    headers.append(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(SANDBOX));
    Ok(response)
}
