//! OpenAPI specifications and their versions (the spec's "OpenAPI specs and versions" table):
//! create from a URL or a text, replace, delete, set the visibility, and read the versions that
//! processing made (`quire_store::openapi`, `docs/openapi-specs.md`).

pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::openapi::{self, Source, SpecVisibility, Which};
use quire_store::paging::{List, Paging};
use quire_store::permissions::{org, spec};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::wire::{
    ContentJson, RawContentJson, SpecJson, VersionJson, content_json, spec_json, spec_path, version_json,
};
use crate::auth::{Caller, OptionalCaller};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{OpenApiSpecPath, OpenApiSpecVersionPath, OrgPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_specs, create_spec))
        .routes(routes!(get_spec, put_spec, update_spec, delete_spec))
        .routes(routes!(list_versions))
        .routes(routes!(get_latest_version))
        .routes(routes!(get_latest_content))
        .routes(routes!(get_latest_raw_content))
        .routes(routes!(get_version))
        .routes(routes!(get_version_content))
}

const TAG: &str = "OpenAPI specs";

/// Where a specification's description comes from: a URL to fetch, or the text itself.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SourceInput {
    /// An http(s) URL, at most 2,048 characters; fetched, and fetched again periodically.
    url: Option<String>,
    /// The description's text (JSON or YAML), at most 16 MiB.
    text: Option<String>,
}

impl SourceInput {
    fn check(self) -> ApiResult<Source> {
        match (self.url, self.text) {
            (Some(url), None) => {
                openapi::check_url(&url)?;
                Ok(Source::Url(url))
            }
            (None, Some(text)) => {
                openapi::check_text(&text)?;
                Ok(Source::Text(text))
            }
            _ => Err(ApiError::bad_request(
                "`source` takes exactly one of `url` and `text`",
            )),
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi",
    tag = TAG,
    summary = "List the OpenAPI specifications of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The specifications, oldest first.", body = List<SpecJson>)),
    security(("token" = ["openapi:read"]))
)]
async fn list_specs(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<SpecJson>>> {
    let list = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            openapi::list(c, &org, &paging)
        })
        .await?;
    Ok(axum::Json(
        list.map(|s| spec_json(&app.urls, &s.spec, s.standing)),
    ))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateSpec {
    /// `^[a-z0-9]+(?:-[a-z0-9]+)*$`, at most 100 characters, unique in the organization.
    slug: String,
    source: SourceInput,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/openapi",
    tag = TAG,
    summary = "Create an OpenAPI specification; its processing is queued",
    params(OrgPath),
    request_body = CreateSpec,
    responses((status = 201, description = "The specification, `pending`.", body = SpecJson, headers(("Location" = String, description = "The specification's URL.")))),
    security(("token" = ["openapi:write"]))
)]
async fn create_spec(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    Json(body): Json<CreateSpec>,
) -> ApiResult<impl IntoResponse> {
    openapi::check_slug(&body.slug)?;
    let source = body.source.check()?;
    let slug = body.slug;
    let created = app
        .db
        .write_as::<org::CreateOpenApiSpec, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            openapi::create(c, &org, &caller.user_id, &slug, &source)
        })
        .await?;
    let location = app.urls.api(&spec_path(&created.spec));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(spec_json(&app.urls, &created.spec, created.standing)),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}",
    tag = TAG,
    summary = "Get an OpenAPI specification with its processing state",
    params(OpenApiSpecPath),
    responses((status = 200, description = "The specification.", body = SpecJson)),
    security(("token" = ["openapi:read"]))
)]
async fn get_spec(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
) -> ApiResult<axum::Json<SpecJson>> {
    let s = app
        .db
        .read_as::<spec::View, _>(caller.user_id.clone(), path.spec(), |_, s| Ok(s.into_inner()))
        .await?;
    Ok(axum::Json(spec_json(&app.urls, &s.spec, s.standing)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PutSpec {
    source: SourceInput,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}",
    tag = TAG,
    summary = "Replace the source of an OpenAPI specification, or create it",
    description = "Queues the processing of the new source. A version is made only when the text differs from the latest version's.",
    params(OpenApiSpecPath),
    request_body = PutSpec,
    responses(
        (status = 200, description = "The specification, its new source `pending`.", body = SpecJson),
        (status = 201, description = "The specification was created.", body = SpecJson, headers(("Location" = String, description = "The specification's URL."))),
    ),
    security(("token" = ["openapi:write"]))
)]
async fn put_spec(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
    Json(body): Json<PutSpec>,
) -> ApiResult<axum::response::Response> {
    openapi::check_slug(&path.spec_slug)?;
    let source = body.source.check()?;
    let slug = path.spec_slug;
    let (s, created) = app
        .db
        .write_as::<org::CreateOpenApiSpec, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            openapi::put(c, &org, &caller.user_id, &slug, &source)
        })
        .await?;
    let json = axum::Json(spec_json(&app.urls, &s.spec, s.standing));
    Ok(if created {
        let location = app.urls.api(&spec_path(&s.spec));
        (StatusCode::CREATED, [(header::LOCATION, location)], json).into_response()
    } else {
        json.into_response()
    })
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateSpec {
    /// `public`: anyone may read the latest content, with no token; `private`: members only.
    visibility: SpecVisibility,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}",
    tag = TAG,
    summary = "Set who may read an OpenAPI specification's latest content",
    params(OpenApiSpecPath),
    request_body = UpdateSpec,
    responses((status = 200, description = "The specification.", body = SpecJson)),
    security(("token" = ["openapi:write"]))
)]
async fn update_spec(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
    Json(body): Json<UpdateSpec>,
) -> ApiResult<axum::Json<SpecJson>> {
    let s = app
        .db
        .write_as::<spec::Edit, _>(caller.user_id.clone(), path.spec(), move |c, s| {
            openapi::set_visibility(c, &s, &caller.user_id, body.visibility)
        })
        .await?;
    Ok(axum::Json(spec_json(&app.urls, &s.spec, s.standing)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}",
    tag = TAG,
    summary = "Delete an OpenAPI specification and its versions",
    params(OpenApiSpecPath),
    responses((status = 204, description = "The specification is gone (or never was).")),
    security(("token" = ["openapi:write"]))
)]
async fn delete_spec(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<spec::Edit, _>(caller.user_id.clone(), path.spec(), move |c, s| {
            openapi::delete(c, &s, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions",
    tag = TAG,
    summary = "List the versions of an OpenAPI specification",
    params(OpenApiSpecPath, Paging),
    responses((status = 200, description = "The versions, newest first (the 20 newest are kept).", body = List<VersionJson>)),
    security(("token" = ["openapi:read"]))
)]
async fn list_versions(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<VersionJson>>> {
    let (s, list) = app
        .db
        .read_as::<spec::View, _>(caller.user_id.clone(), path.spec(), move |c, s| {
            let list = openapi::versions(c, &s, &paging)?;
            Ok((s.into_inner(), list))
        })
        .await?;
    Ok(axum::Json(list.map(|v| version_json(&app.urls, &s.spec, &v))))
}

async fn version(app: &App, caller: Caller, key: openapi::SpecKey, which: Which) -> ApiResult<VersionJson> {
    let (s, v) = app
        .db
        .read_as::<spec::View, _>(caller.user_id, key, move |c, s| {
            let v = openapi::version(c, &s, &which)?;
            Ok((s.into_inner(), v))
        })
        .await?;
    Ok(version_json(&app.urls, &s.spec, &v))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest",
    tag = TAG,
    summary = "Get the latest version of an OpenAPI specification",
    params(OpenApiSpecPath),
    responses((status = 200, description = "The version.", body = VersionJson)),
    security(("token" = ["openapi:read"]))
)]
async fn get_latest_version(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
) -> ApiResult<axum::Json<VersionJson>> {
    Ok(axum::Json(
        version(&app, caller, path.spec(), Which::Latest).await?,
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}",
    tag = TAG,
    summary = "Get a version of an OpenAPI specification",
    params(OpenApiSpecVersionPath),
    responses((status = 200, description = "The version.", body = VersionJson)),
    security(("token" = ["openapi:read"]))
)]
async fn get_version(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecVersionPath>,
) -> ApiResult<axum::Json<VersionJson>> {
    let which = Which::Id(path.version_id.clone());
    Ok(axum::Json(version(&app, caller, path.spec(), which).await?))
}

/// A version's content as the caller may read it: members by their role; anyone, with or
/// without a token, for the latest content of a public specification.
async fn content(
    app: &App,
    caller: Option<Caller>,
    key: openapi::SpecKey,
    which: Which,
) -> ApiResult<(quire_store::openapi::Spec, quire_store::openapi::VersionContent)> {
    let member = match caller {
        Some(caller) => {
            let (key, which) = (key.clone(), which.clone());
            app.db
                .read_blocking_as::<spec::View, _>(caller.user_id, key, move |c, s| {
                    let content = openapi::content(c, &s, &which)?;
                    Ok((s.into_inner().spec, content))
                })
                .await
        }
        None => Err(openapi::not_found(&key.slug)),
    };
    match member {
        Ok(found) => Ok(found),
        Err(e) if e.kind == quire_store::error::ErrorKind::NotFound && matches!(which, Which::Latest) => {
            Ok(app
                .db
                .read_blocking(move |c| openapi::public_content(c, &key))
                .await?)
        }
        Err(e) => Err(e.into()),
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content",
    tag = TAG,
    summary = "Get the latest content of an OpenAPI specification",
    description = "Its files, processed. A public specification's is readable by anyone, with no token.",
    params(OpenApiSpecPath),
    responses((status = 200, description = "The content.", body = ContentJson)),
    security((), ("token" = ["openapi:read"]))
)]
async fn get_latest_content(
    OptionalCaller(caller): OptionalCaller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
) -> ApiResult<axum::Json<ContentJson>> {
    let (s, c) = content(&app, caller, path.spec(), Which::Latest).await?;
    Ok(axum::Json(
        content_json(&app.urls, &s, c).map_err(ApiError::internal)?,
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content/raw",
    tag = TAG,
    summary = "Get the latest text of an OpenAPI specification, as given",
    description = "The entry file's text exactly as fetched or given. A public specification's is readable by anyone, with no token.",
    params(OpenApiSpecPath),
    responses((status = 200, description = "The text and its format.", body = RawContentJson)),
    security((), ("token" = ["openapi:read"]))
)]
async fn get_latest_raw_content(
    OptionalCaller(caller): OptionalCaller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecPath>,
) -> ApiResult<axum::Json<RawContentJson>> {
    let (_, c) = content(&app, caller, path.spec(), Which::Latest).await?;
    Ok(axum::Json(RawContentJson {
        text: c.raw_text,
        format: c.raw_format,
    }))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}/content",
    tag = TAG,
    summary = "Get the content of a version of an OpenAPI specification",
    params(OpenApiSpecVersionPath),
    responses((status = 200, description = "The content.", body = ContentJson)),
    security(("token" = ["openapi:read"]))
)]
async fn get_version_content(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OpenApiSpecVersionPath>,
) -> ApiResult<axum::Json<ContentJson>> {
    let which = Which::Id(path.version_id.clone());
    let (s, c) = content(&app, Some(caller), path.spec(), which).await?;
    Ok(axum::Json(
        content_json(&app.urls, &s, c).map_err(ApiError::internal)?,
    ))
}
