//! Joining an organization through its email domains, and finding organizations by domain.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use super::model::{self, OrgJson};
use crate::app::App;
use crate::auth::Caller;
use crate::db::Args;
use crate::error::{ApiError, ApiResult};
use crate::extract::Path;
use crate::paths::{EmailDomainPath, OrgPath};
use crate::{clock, params};
use quire_store::permissions::Role;
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(join_org))
        .routes(routes!(orgs_for_domain))
}

/// The domain of the caller's email, when it is verified.
fn verified_domain(c: &mut dyn crate::db::Conn, caller: &Caller) -> Result<Option<String>, ApiError> {
    let verified: bool = c
        .query_scalar(
            "SELECT email_verified FROM users WHERE id = ?1",
            params![caller.user_id.clone()],
        )?
        .unwrap_or(false);
    Ok(verified
        .then(|| caller.email.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase()))
        .flatten())
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
        .write(move |c| {
            let org = model::load_for(c, &org_id, &caller.user_id)?
                .ok_or_else(|| ApiError::not_found(format!("organization {org_id:?} not found")))?;
            if org.standing.is_member() {
                return Ok(());
            }
            // An organization is visible to a stranger only through a verified email domain it
            // lists (as in `orgs_for_domain`); to anyone else it does not exist, whatever the
            // reason, so that a known id does not tell whether the organization exists.
            let not_found = || ApiError::not_found(format!("organization {org_id:?} not found"));
            let domain = verified_domain(c, &caller)?.ok_or_else(not_found)?;
            if !org.org.email_domains.contains(&domain) {
                return Err(not_found());
            }
            let joined = c.execute(
                "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (organization_id, user_id) DO NOTHING",
                params![
                    org_id.clone(),
                    caller.user_id.clone(),
                    org.org.default_role.map(Role::as_str),
                    clock::now_ms()
                ],
            )?;
            if joined > 0 {
                crate::members::added(c, &org_id, &caller.user_id, org.org.default_role, &caller.user_id)?;
            }
            Ok(())
        })
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
        .read(move |c| {
            let own = verified_domain(c, &caller)?;
            let mut args = Args::default();
            let me = args.arg(&caller.user_id);
            let sql = format!(
                "{} JOIN organization_email_domains d ON d.organization_id = o.id
                 WHERE d.domain = {} AND (m.user_id IS NOT NULL OR {} = 1)
                 ORDER BY o.created_at, o.id LIMIT 1000",
                model::select_for(&me),
                args.arg(domain.clone()),
                args.arg(own.as_deref() == Some(domain.as_str())),
            );
            let rows = c.query(&sql, args.values())?;
            rows.iter()
                .map(model::OrgFor::from_row)
                .collect::<Result<Vec<_>, _>>()
                .map_err(ApiError::from)
        })
        .await?;
    Ok(axum::Json(OrgsForDomain {
        organizations: orgs.iter().map(|o| o.to_json(&app.urls)).collect(),
    }))
}
