//! Integrations (the spec's "Integrations" table and GitBook's installation operations):
//! publish, list, read, unpublish; the dev tunnel; installations and the spaces and sites they
//! are enabled on; the integration's events with their traces (`quire_store::integrations`,
//! `docs/integrations.md`).

mod installations;
pub mod runtime;
pub mod wire;

use std::collections::HashMap;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use quire_store::integrations::{self, Filter, Integration, IntegrationFor, Publish, Target, Visibility};
use quire_store::orgs;
use quire_store::paging::{List, Paging};
use quire_store::permissions::integration;
use serde::Deserialize;
use serde_json::Value as Json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::wire::{
    EventDetailJson, EventJson, IntegrationJson, event_detail_json, event_json, integration_json,
};
use crate::api::orgs::wire::org_json;
use crate::auth::{Caller, OptionalCaller};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json as JsonBody, Path, QueryOf};
use crate::paths::{IntegrationAssetPath, IntegrationEventPath, IntegrationPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_integrations))
        .routes(routes!(
            get_integration,
            publish_integration,
            unpublish_integration
        ))
        .routes(routes!(get_asset))
        .routes(routes!(list_events))
        .routes(routes!(get_event))
        .routes(routes!(set_dev, clear_dev))
        .merge(installations::routes())
        .merge(runtime::routes())
}

const TAG: &str = "Integrations";

/// The integration as answered, with its owner organization as the caller sees it.
fn answer(
    app: &App,
    c: &mut dyn quire_store::db::Conn,
    found: &IntegrationFor,
    user_id: &str,
) -> ApiResult<IntegrationJson> {
    let owner = orgs::load_for(c, &found.integration.org_id, user_id)?
        .ok_or_else(|| ApiError::internal("an integration's owner organization is missing"))?;
    Ok(integration_json(&app.urls, found, org_json(&app.urls, &owner)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ListQuery {
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
    /// In the name or the title, ignoring case.
    search: Option<String>,
    /// One of GitBook's categories.
    category: Option<String>,
    /// A domain the integration's blocks unfurl (`^[a-zA-Z0-9-_.]+$`).
    block_domain: Option<String>,
    /// Only integrations with blocks (true) or without (false).
    #[serde(default, deserialize_with = "crate::extract::flag")]
    blocks: Option<bool>,
    /// Only integrations with content sources (true) or without (false).
    #[serde(default, deserialize_with = "crate::extract::flag")]
    content_sources: Option<bool>,
    /// The owner organization's id.
    owner: Option<String>,
    /// One of GitBook's integration scopes.
    scope: Option<String>,
    target: Option<Target>,
}

#[utoipa::path(
    get,
    path = "/v1/integrations",
    tag = TAG,
    summary = "List integrations",
    description = "Public integrations, and every integration of the organizations the caller is a member of, oldest first.",
    params(ListQuery, Paging),
    responses((status = 200, description = "The integrations.", body = List<IntegrationJson>)),
    security(("token" = ["integration:read"]))
)]
async fn list_integrations(
    caller: Caller,
    State(app): State<App>,
    QueryOf(query): QueryOf<ListQuery>,
) -> ApiResult<axum::Json<List<IntegrationJson>>> {
    let filter = Filter {
        search: query.search,
        category: query.category,
        block_domain: query.block_domain,
        blocks: query.blocks,
        content_sources: query.content_sources,
        owner: query.owner,
        scope: query.scope,
        target: query.target,
    };
    let paging = query.paging;
    let answering = app.clone();
    let list = app
        .db
        .read(move |c| -> ApiResult<List<IntegrationJson>> {
            let list = integrations::list(c, &caller.user_id, &filter, &paging)?;
            // Owners are read once each: a page has at most as many as it has items.
            let mut owners: HashMap<String, orgs::OrgFor> = HashMap::new();
            let mut items = Vec::with_capacity(list.items.len());
            for found in &list.items {
                let org_id = &found.integration.org_id;
                let owner = match owners.get(org_id) {
                    Some(owner) => owner,
                    None => {
                        let owner = orgs::load_for(c, org_id, &caller.user_id)?.ok_or_else(|| {
                            ApiError::internal("an integration's owner organization is missing")
                        })?;
                        owners.entry(org_id.clone()).or_insert(owner)
                    }
                };
                items.push(integration_json(
                    &answering.urls,
                    found,
                    org_json(&answering.urls, owner),
                ));
            }
            Ok(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}",
    tag = TAG,
    summary = "Get an integration by its name",
    params(IntegrationPath),
    responses((status = 200, description = "The integration.", body = IntegrationJson)),
    security(("token" = ["integration:read"]))
)]
async fn get_integration(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
) -> ApiResult<axum::Json<IntegrationJson>> {
    let answering = app.clone();
    let user = caller.user_id.clone();
    let json = app
        .db
        .read(move |c| -> ApiResult<IntegrationJson> {
            let found = integrations::model::load_visible(c, &path.integration_name, &user)?;
            answer(&answering, c, &found, &user)
        })
        .await?;
    Ok(axum::Json(json))
}

/// GitBook's `PublishIntegration`, plus quire's `webhookUrl`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PublishBody {
    /// v1 (the default) or v2.
    runtime: Option<String>,
    /// Base64 of the icon, at most 1 MiB.
    icon: Option<String>,
    /// 2 to 30 characters.
    title: String,
    /// At most 100 characters.
    description: String,
    /// Markdown, at most 2,048 characters.
    summary: Option<String>,
    /// Base64 of up to 3 images, each at most 2 MiB.
    preview_images: Option<Vec<String>>,
    visibility: Option<Visibility>,
    /// Where it may be installed; `all` when absent.
    target: Option<Target>,
    scopes: Vec<String>,
    categories: Option<Vec<String>>,
    #[schema(value_type = Option<Vec<Object>>)]
    blocks: Option<Vec<Json>>,
    #[schema(value_type = Option<Vec<Object>>)]
    content_sources: Option<Vec<Json>>,
    #[schema(value_type = Option<Vec<Object>>)]
    external_links: Option<Vec<Json>>,
    #[schema(value_type = Option<Object>)]
    configurations: Option<Json>,
    /// The script's content, at most 5 MiB.
    script: String,
    /// The owner organization, by id or subdomain.
    organization: String,
    /// At most 20, sealed at rest and never answered.
    secrets: Option<std::collections::BTreeMap<String, String>>,
    /// A string, or an object of directives: sent as `Content-Security-Policy` with deliveries.
    #[schema(value_type = Option<Object>)]
    content_security_policy: Option<Json>,
    /// quire's: where events are delivered outside dev mode (signed POSTs).
    webhook_url: Option<String>,
}

fn base64(field: &str, text: &str) -> ApiResult<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|_| ApiError::bad_request(format!("`{field}` must be base64")))
}

impl PublishBody {
    fn into_publish(self, name: String) -> ApiResult<Publish> {
        if self
            .icon
            .as_ref()
            .is_some_and(|i| i.len() > 2 * integrations::publish::ICON_MAX_BYTES)
            || self.preview_images.as_ref().is_some_and(|p| {
                p.iter()
                    .any(|i| i.len() > 2 * integrations::publish::PREVIEW_MAX_BYTES)
            })
        {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "`icon` is at most 1 MiB and each preview image at most 2 MiB",
            ));
        }
        Ok(Publish {
            name,
            organization: self.organization,
            runtime: self.runtime,
            title: self.title,
            description: self.description,
            summary: self.summary,
            visibility: self.visibility,
            target: self.target,
            scopes: self.scopes,
            categories: self.categories.unwrap_or_default(),
            blocks: self.blocks.unwrap_or_default(),
            content_sources: self.content_sources.unwrap_or_default(),
            configurations: self.configurations,
            external_links: self.external_links.unwrap_or_default(),
            content_security_policy: self.content_security_policy,
            script: self.script,
            icon: self.icon.map(|i| base64("icon", &i)).transpose()?,
            preview_images: self
                .preview_images
                .unwrap_or_default()
                .iter()
                .map(|p| base64("previewImages", p))
                .collect::<ApiResult<_>>()?,
            secrets: self.secrets,
            webhook_url: self.webhook_url,
        })
    }
}

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}",
    tag = TAG,
    summary = "Publish an integration, or a new version of it",
    description = "The caller must be an admin of the owner organization. The answer carries `signingSecret`, the secret deliveries are signed with.",
    params(IntegrationPath),
    request_body = PublishBody,
    responses((status = 200, description = "The integration.", body = IntegrationJson)),
    security(("token" = ["integration:publish"]))
)]
async fn publish_integration(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    JsonBody(body): JsonBody<PublishBody>,
) -> ApiResult<axum::Json<IntegrationJson>> {
    let request = body.into_publish(path.integration_name)?;
    request.check()?;
    // Authorized before any byte is stored.
    let (checking, user) = (request.clone(), caller.user_id.clone());
    app.db
        .read(move |c| integrations::authorize_publish(c, &user, &checking).map(drop))
        .await?;
    let namespace = Integration::blob_namespace(&request.name);
    let mut assets = integrations::publish::StoredAssets::default();
    if let Some(icon) = &request.icon {
        assets.icon = Some(app.blobs.put(&namespace, icon.clone().into()).await?);
    }
    for image in &request.preview_images {
        assets
            .preview_images
            .push(app.blobs.put(&namespace, image.clone().into()).await?);
    }
    assets.script = app
        .blobs
        .put(&namespace, request.script.clone().into_bytes().into())
        .await?;
    let key = app.store.settings.secrets_key.clone();
    let answering = app.clone();
    let user = caller.user_id.clone();
    let json = app
        .db
        .write(move |c| -> ApiResult<IntegrationJson> {
            let found = integrations::publish(c, &key, &user, &request, &assets)?;
            let admin = found.clone().authorize::<integration::Admin>()?;
            let secret = integrations::signing_secret(c, &key, &admin)?;
            let mut json = answer(&answering, c, &found, &user)?;
            json.signing_secret = Some(secret);
            Ok(json)
        })
        .await?;
    Ok(axum::Json(json))
}

#[utoipa::path(
    delete,
    path = "/v1/integrations/{integrationName}",
    tag = TAG,
    summary = "Unpublish an integration",
    description = "Its installations go with it. Its events stay in the database (the record of what was delivered) but are no longer listed; pending ones end `failed`.",
    params(IntegrationPath),
    responses((status = 204, description = "Unpublished.")),
    security(("token" = ["integration:publish"]))
)]
async fn unpublish_integration(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
) -> ApiResult<StatusCode> {
    let name = path.integration_name.clone();
    app.db
        .write_as::<integration::Admin, _>(caller.user_id.clone(), path.integration_name, move |c, found| {
            integrations::unpublish(c, &found, &caller.user_id)
        })
        .await?;
    app.blobs
        .delete_space(&Integration::blob_namespace(&name))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The media type of an image by its first bytes; anything else is served as bytes.
fn image_type(bytes: &[u8]) -> &'static str {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => "image/png",
        [0xFF, 0xD8, 0xFF, ..] => "image/jpeg",
        [b'G', b'I', b'F', b'8', ..] => "image/gif",
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => "image/webp",
        _ => "application/octet-stream",
    }
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/assets/{assetHash}",
    tag = TAG,
    summary = "Get an integration's icon or preview image",
    description = "Public and unlisted integrations' images are readable with no token.",
    params(IntegrationAssetPath),
    responses((status = 200, description = "The image.", content_type = "application/octet-stream", body = Vec<u8>)),
    security((), ("token" = ["integration:read"]))
)]
async fn get_asset(
    OptionalCaller(caller): OptionalCaller,
    State(app): State<App>,
    Path(path): Path<IntegrationAssetPath>,
) -> ApiResult<Response> {
    let (name, hash) = (path.integration_name.clone(), path.asset_hash.clone());
    let user = caller.map(|c| c.user_id).unwrap_or_default();
    let known = app
        .db
        .read(move |c| -> ApiResult<bool> {
            let found = integrations::model::load_visible(c, &name, &user)?;
            let i = &found.integration;
            Ok(i.icon.as_deref() == Some(hash.as_str()) || i.preview_images.contains(&hash))
        })
        .await?;
    if !known {
        return Err(ApiError::not_found("no such image of this integration"));
    }
    let blob = app
        .blobs
        .get(
            &Integration::blob_namespace(&path.integration_name),
            &path.asset_hash,
        )
        .await?;
    let bytes = blob
        .bytes()
        .await
        .map_err(|e| ApiError::internal(format!("cannot read an integration image: {e}")))?;
    let mut response = bytes.clone().into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(image_type(&bytes)));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    Ok(response)
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/events",
    tag = TAG,
    summary = "List an integration's events, newest first",
    params(IntegrationPath, Paging),
    responses((status = 200, description = "The events with their delivery status.", body = List<EventJson>)),
    security(("token" = ["integration:read"]))
)]
async fn list_events(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<EventJson>>> {
    let list = app
        .db
        .read_as::<integration::Admin, _>(caller.user_id, path.integration_name, move |c, found| {
            integrations::events::list(c, &found, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|e| event_json(&e))))
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/events/{eventId}",
    tag = TAG,
    summary = "Get an integration event with the trace of its delivery",
    params(IntegrationEventPath),
    responses((status = 200, description = "The event and its trace.", body = EventDetailJson)),
    security(("token" = ["integration:read"]))
)]
async fn get_event(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationEventPath>,
) -> ApiResult<axum::Json<EventDetailJson>> {
    let event_id = path.event_id;
    let (event, logs) = app
        .db
        .read_as::<integration::Admin, _>(caller.user_id, path.integration_name, move |c, found| {
            integrations::events::get(c, &found, &event_id)
        })
        .await?;
    Ok(axum::Json(event_detail_json(&event, &logs)))
}

/// GitBook's body of `setIntegrationDevelopmentMode`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DevBody {
    /// An http(s) URL, at most 256 characters: events are POSTed there.
    tunnel_url: String,
    /// Forward every organization's events, not only the owner's (default false).
    #[serde(default)]
    all: bool,
}

#[utoipa::path(
    put,
    path = "/v1/integrations/{integrationName}/dev",
    tag = TAG,
    summary = "Send the integration's events to a dev tunnel",
    params(IntegrationPath),
    request_body = DevBody,
    responses((status = 204, description = "Events go to the tunnel from now on.")),
    security(("token" = ["integration:publish"]))
)]
async fn set_dev(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    JsonBody(body): JsonBody<DevBody>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<integration::Admin, _>(caller.user_id, path.integration_name, move |c, found| {
            integrations::set_dev(c, &found, &body.tunnel_url, body.all)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    delete,
    path = "/v1/integrations/{integrationName}/dev",
    tag = TAG,
    summary = "Stop sending the integration's events to its dev tunnel",
    params(IntegrationPath),
    responses((status = 205, description = "Dev mode is off.")),
    security(("token" = ["integration:publish"]))
)]
async fn clear_dev(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<integration::Admin, _>(caller.user_id, path.integration_name, move |c, found| {
            integrations::clear_dev(c, &found)
        })
        .await?;
    Ok(StatusCode::RESET_CONTENT)
}
