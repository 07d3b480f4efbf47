//! Organizations: list, create, get, update; joining by email domain; agent instructions.

mod agent_instructions;
mod join;
pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::merge_rules::MergeRules;
use quire_store::orgs;
use quire_store::paging::{List, Paging};
use quire_store::permissions::{Role, org};
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::ErrorEnvelope;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::OrgPath;
use crate::state::App;
pub use wire::{OrgJson, org_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_orgs, create_org))
        .routes(routes!(get_org, update_org))
        .merge(join::routes())
        .merge(agent_instructions::routes())
}

#[utoipa::path(
    get,
    path = "/v1/orgs",
    tag = "Organizations",
    summary = "List the organizations the caller belongs to",
    params(Paging),
    responses((status = 200, description = "The caller's organizations.", body = List<OrgJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_orgs(
    caller: Caller,
    State(app): State<App>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<OrgJson>>> {
    let list = app
        .db
        .read(move |c| orgs::list(c, &caller.user_id, &paging))
        .await?;
    Ok(axum::Json(list.map(|o| org_json(&app.urls, &o))))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct CreateOrg {
    title: String,
    #[serde(default)]
    email_domains: Vec<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs",
    tag = "Organizations",
    summary = "Create an organization",
    request_body = CreateOrg,
    responses((status = 201, description = "The new organization, whose only member (its admin) is the caller.", body = OrgJson, headers(("Location" = String, description = "The organization's URL.")))),
    security(("token" = ["org:write"]))
)]
async fn create_org(
    caller: Caller,
    State(app): State<App>,
    Json(body): Json<CreateOrg>,
) -> ApiResult<impl IntoResponse> {
    let title = validate::title("title", &body.title, 2, 255)?;
    let domains = orgs::email_domains(&body.email_domains)?;
    let org = app
        .db
        .write(move |c| orgs::create(c, &caller.user_id, &title, &domains))
        .await?;
    let json = org_json(&app.urls, &org);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}",
    tag = "Organizations",
    summary = "Get an organization",
    params(OrgPath),
    responses((status = 200, description = "The organization.", body = OrgJson)),
    security(("token" = ["org:read"]))
)]
async fn get_org(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
) -> ApiResult<axum::Json<OrgJson>> {
    let org = app
        .db
        .read_as::<org::View, _>(
            caller.user_id.clone(),
            org_id.clone(),
            |_, it| Ok(it.into_inner()),
        )
        .await?;
    Ok(axum::Json(org_json(&app.urls, &org)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateOrg {
    title: Option<String>,
    email_domains: Option<Vec<String>>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    hostname: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    default_role: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<DefaultContent>)]
    default_content: Patch<DefaultContent>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    logo: Patch<String>,
    sso: Option<bool>,
    ai: Option<bool>,
    invite_links: Option<bool>,
    merge_rules: Option<serde_json::Value>,
}

#[derive(Deserialize, Clone, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct DefaultContent {
    #[serde(rename = "type")]
    kind: String,
    site: String,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}",
    tag = "Organizations",
    summary = "Update an organization",
    params(OrgPath),
    request_body = UpdateOrg,
    responses(
        (status = 200, description = "The organization as updated.", body = OrgJson),
        (status = 409, description = "The hostname is taken.", body = ErrorEnvelope),
    ),
    security(("token" = ["org:write"]))
)]
async fn update_org(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    Json(body): Json<UpdateOrg>,
) -> ApiResult<axum::Json<OrgJson>> {
    let enforcing = body.sso == Some(true);
    let changes = orgs::Changes {
        title: body
            .title
            .as_deref()
            .map(|t| validate::title("title", t, 2, 255))
            .transpose()?,
        email_domains: body
            .email_domains
            .as_deref()
            .map(orgs::email_domains)
            .transpose()?,
        hostname: match body.hostname {
            Patch::Value(h) => Patch::Value(orgs::hostname(&h)?),
            other => other,
        },
        default_role: match body.default_role {
            Patch::Value(r) => Patch::Value(Role::parse_field("defaultRole", &r)?),
            Patch::Null => Patch::Null,
            Patch::Absent => Patch::Absent,
        },
        default_content_site: match body.default_content {
            Patch::Value(dc) if dc.kind != "site" => {
                return Err(ApiError::bad_request("`defaultContent.type` must be \"site\""));
            }
            Patch::Value(dc) => Patch::Value(dc.site),
            Patch::Null => Patch::Null,
            Patch::Absent => Patch::Absent,
        },
        logo: match body.logo {
            Patch::Value(url) => Patch::Value(validate::url("logo", &url)?.to_string()),
            other => other,
        },
        merge_rules: body
            .merge_rules
            .map(|v| MergeRules::parse(v, false))
            .transpose()?,
        sso: body.sso,
        ai: body.ai,
        invite_links: body.invite_links,
    };
    let org = app
        .db
        .write_as::<org::Admin, _>(caller.user_id.clone(), org_id.clone(), move |c, org| {
            orgs::update(c, &org, &caller.user_id, &changes)
        })
        .await?;
    if enforcing {
        // Enforcing SSO may have revoked tokens this process still trusts.
        app.store.tokens.forget_all();
    }
    Ok(axum::Json(org_json(&app.urls, &org)))
}
