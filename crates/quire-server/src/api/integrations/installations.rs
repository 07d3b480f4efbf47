//! Installations of an integration and the spaces and sites they are enabled on: GitBook's
//! `installIntegration`, `listIntegrationInstallations`, `get`/`update`/`uninstall`, and the
//! space and site installation operations.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::db::Conn;
use quire_store::integrations::bindings::{self, Binding, On};
use quire_store::integrations::installations::{self, Update};
use quire_store::integrations::{InstallationFor, Selection};
use quire_store::paging::{List, Paging};
use quire_store::permissions::{installation, integration, org, site, space};
use quire_store::{sites, spaces, visible};
use serde::Deserialize;
use serde_json::Value as Json;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG;
use super::wire::{BindingJson, InstallationJson, binding_json, installation_json};
use crate::api::sites::wire::site_json;
use crate::api::spaces::wire::space_json;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Json as JsonBody, Path, QueryOf};
use crate::paths::{InstallationPath, InstallationSitePath, InstallationSpacePath, IntegrationPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_installations, install_integration))
        .routes(routes!(
            get_installation,
            update_installation,
            uninstall_integration
        ))
        .routes(routes!(create_installation_token))
        .routes(routes!(list_integration_spaces))
        .routes(routes!(list_integration_sites))
        .routes(routes!(list_installation_spaces, install_on_space))
        .routes(routes!(
            get_space_installation,
            update_space_installation,
            uninstall_from_space
        ))
        .routes(routes!(list_installation_sites, install_on_site))
        .routes(routes!(
            get_site_installation,
            update_site_installation,
            uninstall_from_site
        ))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ExternalIdQuery {
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
    /// Only those with this external id.
    external_id: Option<String>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct BindingsQuery {
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
    /// Only those with this external id.
    external_id: Option<String>,
    /// Answer each space or site as its object (when the caller may see it), not its id.
    #[serde(default, deserialize_with = "crate::extract::flag")]
    extended: Option<bool>,
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct InstallationBindingsQuery {
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
    /// Answer each space or site as its object (when the caller may see it), not its id.
    #[serde(default, deserialize_with = "crate::extract::flag")]
    extended: Option<bool>,
}

/// The space or site of a binding as answered: its id, or (extended) its object when the
/// caller may see it.
fn target_json(
    app: &App,
    c: &mut dyn Conn,
    org_id: &str,
    on: On,
    b: &Binding,
    extended: bool,
    user: &str,
) -> ApiResult<Json> {
    if !extended {
        return Ok(Json::String(b.target.clone()));
    }
    let object = match on {
        On::Space => spaces::model::load_for(c, &b.target, user)?
            .filter(|s| s.allows(quire_store::permissions::SpaceAction::View))
            .map(|s| serde_json::to_value(space_json(&app.urls, &s))),
        On::Site => sites::model::load_for(c, org_id, &b.target, user)?
            .filter(|s| s.allows(quire_store::permissions::SiteAction::View))
            .map(|s| serde_json::to_value(site_json(&app.urls, &s.site, s.standing))),
    };
    Ok(object
        .and_then(Result::ok)
        .unwrap_or_else(|| Json::String(b.target.clone())))
}

fn bindings_json(
    app: &App,
    c: &mut dyn Conn,
    name: &str,
    on: On,
    list: List<Binding>,
    (extended, user): (bool, &str),
) -> ApiResult<List<BindingJson>> {
    let mut items = Vec::with_capacity(list.items.len());
    for b in &list.items {
        let target = target_json(app, c, &b.org_id, on, b, extended, user)?;
        items.push(binding_json(&app.urls, name, on, b, target));
    }
    Ok(List {
        next: list.next,
        count: list.count,
        items,
    })
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations",
    tag = TAG,
    summary = "List an integration's installations",
    params(IntegrationPath, ExternalIdQuery, Paging),
    responses((status = 200, description = "The installations, oldest first.", body = List<InstallationJson>)),
    security(("token" = ["integration:installations:read"]))
)]
async fn list_installations(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    QueryOf(query): QueryOf<ExternalIdQuery>,
) -> ApiResult<axum::Json<List<InstallationJson>>> {
    if let Some(external) = &query.external_id {
        quire_store::integrations::check_ref("externalId", external)?;
    }
    let name = path.integration_name.clone();
    let list = app
        .db
        .read_as::<integration::Admin, _>(caller.user_id, path.integration_name, move |c, found| {
            installations::list(c, &found, query.external_id.as_deref(), &query.paging)
        })
        .await?;
    Ok(axum::Json(list.map(|i| installation_json(&app.urls, &name, &i))))
}

/// GitBook's `OrganizationTarget`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct InstallBody {
    /// The organization to install in: the caller must be its admin.
    organization: String,
}

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}/installations",
    tag = TAG,
    summary = "Install an integration in an organization",
    params(IntegrationPath),
    request_body = InstallBody,
    responses((status = 201, description = "The installation.", body = InstallationJson, headers(("Location" = String, description = "The installation's URL.")))),
    security(("token" = ["integration:installations:write"]))
)]
async fn install_integration(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    JsonBody(body): JsonBody<InstallBody>,
) -> ApiResult<impl IntoResponse> {
    quire_store::integrations::check_ref("organization", &body.organization)?;
    let name = path.integration_name.clone();
    let user = caller.user_id.clone();
    let installed = app
        .db
        .write(move |c| -> ApiResult<InstallationFor> {
            let found = visible::authorized::<integration::View>(c, &name, &user)?;
            let target = visible::authorized::<org::InstallIntegration>(c, &body.organization, &user)?;
            Ok(installations::install(c, &found, &target, Some(&user))?)
        })
        .await?;
    let json = installation_json(&app.urls, &path.integration_name, &installed.installation);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations/{installationId}",
    tag = TAG,
    summary = "Get an installation",
    params(InstallationPath),
    responses((status = 200, description = "The installation.", body = InstallationJson)),
    security(("token" = ["integration:installations:read"]))
)]
async fn get_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
) -> ApiResult<axum::Json<InstallationJson>> {
    let found = app
        .db
        .read_as::<installation::View, _>(caller.user_id, path.installation(), |_, found| {
            Ok(found.into_inner())
        })
        .await?;
    Ok(axum::Json(installation_json(
        &app.urls,
        &path.integration_name,
        &found.installation,
    )))
}

/// GitBook's `UpdateIntegrationInstallation`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateBody {
    /// At most 5, each at most 200 characters.
    #[serde(rename = "externalIds")]
    external_ids: Option<Vec<String>>,
    #[schema(value_type = Option<Object>)]
    configuration: Option<Json>,
    space_selection: Option<Selection>,
    site_selection: Option<Selection>,
}

#[utoipa::path(
    patch,
    path = "/v1/integrations/{integrationName}/installations/{installationId}",
    tag = TAG,
    summary = "Configure an installation",
    description = "A changed configuration or selection sends `installation_setup` with the previous one.",
    params(InstallationPath),
    request_body = UpdateBody,
    responses((status = 200, description = "The installation.", body = InstallationJson)),
    security(("token" = ["integration:installations:write"]))
)]
async fn update_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
    JsonBody(body): JsonBody<UpdateBody>,
) -> ApiResult<axum::Json<InstallationJson>> {
    let update = Update {
        external_ids: body.external_ids,
        configuration: body.configuration,
        space_selection: body.space_selection,
        site_selection: body.site_selection,
    };
    update.check()?;
    let updated = app
        .db
        .write_as::<installation::Manage, _>(caller.user_id, path.installation(), move |c, found| {
            installations::update(c, &found, &update)
        })
        .await?;
    Ok(axum::Json(installation_json(
        &app.urls,
        &path.integration_name,
        &updated,
    )))
}

#[utoipa::path(
    delete,
    path = "/v1/integrations/{integrationName}/installations/{installationId}",
    tag = TAG,
    summary = "Uninstall an integration from an organization",
    params(InstallationPath),
    responses((status = 204, description = "Uninstalled.")),
    security(("token" = ["integration:installations:write"]))
)]
async fn uninstall_integration(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<installation::Manage, _>(caller.user_id.clone(), path.installation(), move |c, found| {
            installations::uninstall(c, &found, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// GitBook's `APITemporaryToken`.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[schema(as = APITemporaryToken)]
struct TokenJson {
    /// The secret, shown once: a bearer token of the installation's bot, valid for an hour.
    token: String,
}

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/tokens",
    tag = TAG,
    summary = "Make a token of an installation",
    description = "A bearer token, valid for an hour, that acts as the installation: the integration's scopes (those quire knows), on the spaces the installation is enabled on (all of the organization's with the `all` selection), read-only unless the integration writes content. For the integration's admins.",
    params(InstallationPath),
    responses((status = 200, description = "The token.", body = TokenJson)),
    security(("token" = ["integration:publish"]))
)]
async fn create_installation_token(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
) -> ApiResult<axum::Json<TokenJson>> {
    let token = app
        .db
        .write_as::<installation::Token, _>(caller.user_id, path.installation(), |c, found| {
            quire_store::integrations::tokens::issue(c, &found)
        })
        .await?;
    Ok(axum::Json(TokenJson { token }))
}

/// The integration-level lists of bindings (`/v1/integrations/{name}/spaces`, `/sites`).
async fn integration_bindings(
    caller: Caller,
    app: App,
    name: String,
    on: On,
    query: BindingsQuery,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    if let Some(external) = &query.external_id {
        quire_store::integrations::check_ref("externalId", external)?;
    }
    let answering = app.clone();
    let user = caller.user_id.clone();
    let list = app
        .db
        .read(move |c| -> ApiResult<List<BindingJson>> {
            let found = visible::authorized::<integration::Admin>(c, &name, &user)?;
            let list =
                bindings::list_for_integration(c, &found, on, query.external_id.as_deref(), &query.paging)?;
            bindings_json(
                &answering,
                c,
                &name,
                on,
                list,
                (query.extended.unwrap_or(false), &user),
            )
        })
        .await?;
    Ok(axum::Json(list))
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/spaces",
    tag = TAG,
    summary = "List the spaces an integration is enabled on, across its installations",
    params(IntegrationPath, BindingsQuery, Paging),
    responses((status = 200, description = "The space installations.", body = List<BindingJson>)),
    security(("token" = ["integration:installations:read"]))
)]
async fn list_integration_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    QueryOf(query): QueryOf<BindingsQuery>,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    integration_bindings(caller, app, path.integration_name, On::Space, query).await
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/sites",
    tag = TAG,
    summary = "List the sites an integration is enabled on, across its installations",
    params(IntegrationPath, BindingsQuery, Paging),
    responses((status = 200, description = "The site installations.", body = List<BindingJson>)),
    security(("token" = ["integration:installations:read"]))
)]
async fn list_integration_sites(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<IntegrationPath>,
    QueryOf(query): QueryOf<BindingsQuery>,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    integration_bindings(caller, app, path.integration_name, On::Site, query).await
}

/// One installation's bindings.
async fn installation_bindings(
    caller: Caller,
    app: App,
    path: InstallationPath,
    on: On,
    query: InstallationBindingsQuery,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    let answering = app.clone();
    let user = caller.user_id.clone();
    let name = path.integration_name.clone();
    let key = path.installation();
    let list = app
        .db
        .read(move |c| -> ApiResult<List<BindingJson>> {
            let found = visible::authorized::<installation::View>(c, &key, &user)?;
            let list = bindings::list_for_installation(c, &found, on, &query.paging)?;
            bindings_json(
                &answering,
                c,
                &name,
                on,
                list,
                (query.extended.unwrap_or(false), &user),
            )
        })
        .await?;
    Ok(axum::Json(list))
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/spaces",
    tag = TAG,
    summary = "List the spaces an installation is enabled on",
    params(InstallationPath, InstallationBindingsQuery, Paging),
    responses((status = 200, description = "The space installations.", body = List<BindingJson>)),
    security(("token" = ["integration:installations:read"]))
)]
async fn list_installation_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
    QueryOf(query): QueryOf<InstallationBindingsQuery>,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    installation_bindings(caller, app, path, On::Space, query).await
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/sites",
    tag = TAG,
    summary = "List the sites an installation is enabled on",
    params(InstallationPath, InstallationBindingsQuery, Paging),
    responses((status = 200, description = "The site installations.", body = List<BindingJson>)),
    security(("token" = ["integration:installations:read"]))
)]
async fn list_installation_sites(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
    QueryOf(query): QueryOf<InstallationBindingsQuery>,
) -> ApiResult<axum::Json<List<BindingJson>>> {
    installation_bindings(caller, app, path, On::Site, query).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SpaceBody {
    /// The id of the space, in the installation's organization.
    space: String,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SiteBody {
    /// The id of the site, in the installation's organization.
    site: String,
}

/// Enables an installation on a space or site and answers the binding (201).
async fn enable(
    caller: Caller,
    app: App,
    path: InstallationPath,
    on: On,
    target: String,
) -> ApiResult<axum::response::Response> {
    quire_store::integrations::check_ref(on.noun(), &target)?;
    let user = caller.user_id.clone();
    let key = path.installation();
    let id = target.clone();
    let binding = app
        .db
        .write(move |c| -> ApiResult<Binding> {
            let found = visible::authorized::<installation::Manage>(c, &key, &user)?;
            let org = match on {
                On::Space => {
                    let space = visible::authorized::<space::InstallIntegration>(c, &id, &user)?;
                    space.space.org_id.clone()
                }
                On::Site => {
                    let site_key = sites::SiteKey {
                        org_id: found.installation.org_id.clone(),
                        site_id: id.clone(),
                    };
                    visible::authorized::<site::Admin>(c, &site_key, &user)?;
                    found.installation.org_id.clone()
                }
            };
            Ok(bindings::enable(c, &found, on, &id, &org)?)
        })
        .await?;
    let json = binding_json(
        &app.urls,
        &path.integration_name,
        on,
        &binding,
        Json::String(target),
    );
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    )
        .into_response())
}

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/spaces",
    tag = TAG,
    summary = "Enable an installation on a space",
    description = "The caller must be allowed to install integrations on the space.",
    params(InstallationPath),
    request_body = SpaceBody,
    responses((status = 201, description = "The space installation.", body = BindingJson, headers(("Location" = String, description = "Its URL.")))),
    security(("token" = ["integration:installations:write"]))
)]
async fn install_on_space(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
    JsonBody(body): JsonBody<SpaceBody>,
) -> ApiResult<axum::response::Response> {
    enable(caller, app, path, On::Space, body.space).await
}

#[utoipa::path(
    post,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/sites",
    tag = TAG,
    summary = "Enable an installation on a site",
    description = "The caller must administer the site.",
    params(InstallationPath),
    request_body = SiteBody,
    responses((status = 201, description = "The site installation.", body = BindingJson, headers(("Location" = String, description = "Its URL.")))),
    security(("token" = ["integration:installations:write"]))
)]
async fn install_on_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationPath>,
    JsonBody(body): JsonBody<SiteBody>,
) -> ApiResult<axum::response::Response> {
    enable(caller, app, path, On::Site, body.site).await
}

/// GitBook's `UpdateIntegrationSpaceInstallation` / `...SiteInstallation`.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateBindingBody {
    #[serde(rename = "externalIds")]
    external_ids: Option<Vec<String>>,
    #[schema(value_type = Option<Object>)]
    configuration: Option<Json>,
}

async fn get_binding(
    caller: Caller,
    app: App,
    path: InstallationPath,
    on: On,
    target: String,
) -> ApiResult<axum::Json<BindingJson>> {
    let id = target.clone();
    let binding = app
        .db
        .read_as::<installation::View, _>(caller.user_id, path.installation(), move |c, found| {
            bindings::get(c, &found, on, &id)
        })
        .await?;
    Ok(axum::Json(binding_json(
        &app.urls,
        &path.integration_name,
        on,
        &binding,
        Json::String(target),
    )))
}

async fn update_binding(
    caller: Caller,
    app: App,
    path: InstallationPath,
    on: On,
    (target, body): (String, UpdateBindingBody),
) -> ApiResult<axum::Json<BindingJson>> {
    let id = target.clone();
    let binding = app
        .db
        .write_as::<installation::Manage, _>(caller.user_id, path.installation(), move |c, found| {
            bindings::update(
                c,
                &found,
                on,
                &id,
                body.external_ids.as_deref(),
                body.configuration.as_ref(),
            )
        })
        .await?;
    Ok(axum::Json(binding_json(
        &app.urls,
        &path.integration_name,
        on,
        &binding,
        Json::String(target),
    )))
}

async fn disable(
    caller: Caller,
    app: App,
    path: InstallationPath,
    on: On,
    target: String,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<installation::Manage, _>(caller.user_id, path.installation(), move |c, found| {
            bindings::disable(c, &found, on, &target)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

fn of_space(path: &InstallationSpacePath) -> InstallationPath {
    InstallationPath {
        integration_name: path.integration_name.clone(),
        installation_id: path.installation_id.clone(),
    }
}

fn of_site(path: &InstallationSitePath) -> InstallationPath {
    InstallationPath {
        integration_name: path.integration_name.clone(),
        installation_id: path.installation_id.clone(),
    }
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
    tag = TAG,
    summary = "Get an installation's binding to a space",
    params(InstallationSpacePath),
    responses((status = 200, description = "The space installation.", body = BindingJson)),
    security(("token" = ["integration:installations:read"]))
)]
async fn get_space_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSpacePath>,
) -> ApiResult<axum::Json<BindingJson>> {
    get_binding(caller, app, of_space(&path), On::Space, path.space_id).await
}

#[utoipa::path(
    patch,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
    tag = TAG,
    summary = "Configure an installation on a space",
    params(InstallationSpacePath),
    request_body = UpdateBindingBody,
    responses((status = 200, description = "The space installation.", body = BindingJson)),
    security(("token" = ["integration:installations:write"]))
)]
async fn update_space_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSpacePath>,
    JsonBody(body): JsonBody<UpdateBindingBody>,
) -> ApiResult<axum::Json<BindingJson>> {
    update_binding(caller, app, of_space(&path), On::Space, (path.space_id, body)).await
}

#[utoipa::path(
    delete,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
    tag = TAG,
    summary = "Disable an installation on a space",
    params(InstallationSpacePath),
    responses((status = 204, description = "Disabled there.")),
    security(("token" = ["integration:installations:write"]))
)]
async fn uninstall_from_space(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSpacePath>,
) -> ApiResult<StatusCode> {
    disable(caller, app, of_space(&path), On::Space, path.space_id).await
}

#[utoipa::path(
    get,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
    tag = TAG,
    summary = "Get an installation's binding to a site",
    params(InstallationSitePath),
    responses((status = 200, description = "The site installation.", body = BindingJson)),
    security(("token" = ["integration:installations:read"]))
)]
async fn get_site_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSitePath>,
) -> ApiResult<axum::Json<BindingJson>> {
    get_binding(caller, app, of_site(&path), On::Site, path.site_id).await
}

#[utoipa::path(
    patch,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
    tag = TAG,
    summary = "Configure an installation on a site",
    params(InstallationSitePath),
    request_body = UpdateBindingBody,
    responses((status = 200, description = "The site installation.", body = BindingJson)),
    security(("token" = ["integration:installations:write"]))
)]
async fn update_site_installation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSitePath>,
    JsonBody(body): JsonBody<UpdateBindingBody>,
) -> ApiResult<axum::Json<BindingJson>> {
    update_binding(caller, app, of_site(&path), On::Site, (path.site_id, body)).await
}

#[utoipa::path(
    delete,
    path = "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
    tag = TAG,
    summary = "Disable an installation on a site",
    params(InstallationSitePath),
    responses((status = 204, description = "Disabled there.")),
    security(("token" = ["integration:installations:write"]))
)]
async fn uninstall_from_site(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<InstallationSitePath>,
) -> ApiResult<StatusCode> {
    disable(caller, app, of_site(&path), On::Site, path.site_id).await
}
