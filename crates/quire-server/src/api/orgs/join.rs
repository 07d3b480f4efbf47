//! Joining an organization through its email domains, and finding organizations by domain.

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::members;
use quire_store::orgs::domains;
use quire_store::validate;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{OrgJson, org_json};
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::Path;
use crate::paths::{EmailDomainPath, OrgPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(join_org))
        .routes(routes!(orgs_for_domain))
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/join",
    tag = "Organizations",
    summary = "Join an organization by the caller's verified email domain",
    params(OrgPath),
    responses((status = 204, description = "The caller is a member.")),
    security(("token" = ["org:write"]))
)]
async fn join_org(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write(move |c| members::join_by_domain(c, &caller, &org_id))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize, utoipa::ToSchema)]
struct OrgsForDomain {
    organizations: Vec<OrgJson>,
}

/// Organizations that list `emailDomain` and that the caller belongs to or may join (its own
/// verified domain): other callers cannot enumerate a domain's organizations.
#[utoipa::path(
    get,
    path = "/v1/email-domains/{emailDomain}/orgs",
    tag = "Organizations",
    summary = "List the organizations of an email domain",
    params(EmailDomainPath),
    responses((status = 200, description = "The organizations listing the domain that the caller belongs to or may join.", body = OrgsForDomain)),
    security(("token" = ["org:read"]))
)]
async fn orgs_for_domain(
    caller: Caller,
    State(app): State<App>,
    Path(EmailDomainPath { email_domain: domain }): Path<EmailDomainPath>,
) -> ApiResult<axum::Json<OrgsForDomain>> {
    let domain = validate::email_domain("emailDomain", &domain)?;
    let orgs = app
        .db
        .read(move |c| domains::for_domain(c, &caller, &domain))
        .await?;
    Ok(axum::Json(OrgsForDomain {
        organizations: orgs.iter().map(|o| org_json(&app.urls, o)).collect(),
    }))
}
