//! Organizations: list, create, get, update; joining by email domain; agent instructions.

mod agent_instructions;
pub mod cache;
mod join;
pub mod model;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Deserialize;

use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn};
use crate::error::ErrorEnvelope;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Patch, Path, QueryOf};
use crate::paths::OrgPath;
use crate::{clock, ids, params};
pub use model::{Org, OrgFor, OrgJson, load_for, load_visible};
use quire_store::merge_rules::MergeRules;
use quire_store::paging::{List, Page, Paging};
use quire_store::permissions::{OrgAction, Role};
use quire_store::validate;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

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
    let page = Page::new(&paging, "orgs")?;
    let list = app
        .db
        .read(move |c| {
            let mut args = Args::default();
            let me = args.arg(&caller.user_id);
            let mut sql = format!(
                "{} WHERE m.user_id = {me} AND m.disabled = 0",
                model::select_for(&me)
            );
            if let Some((joined, id)) = page.after::<(i64, String)>()? {
                sql += &format!(
                    " AND (m.joined_at, o.id) > ({}, {})",
                    args.arg(joined),
                    args.arg(id)
                );
            }
            sql += &format!(" ORDER BY m.joined_at, o.id LIMIT {}", args.arg(page.fetch()));
            let rows = c.query(&sql, args.values())?;
            let orgs = rows
                .iter()
                .map(|row| {
                    Ok((
                        model::OrgFor::from_row(row)?,
                        row.col::<i64>(model::CALLER.joined_at)?,
                    ))
                })
                .collect::<Result<Vec<_>, crate::db::DbError>>()?;
            let count: i64 = c
                .query_scalar(
                    "SELECT count(*) FROM members WHERE user_id = ?1 AND disabled = 0",
                    params![caller.user_id.clone()],
                )?
                .unwrap_or(0);
            Ok::<_, ApiError>(page.finish(orgs, count as u64, |(o, joined)| (*joined, o.org.id.clone())))
        })
        .await?;
    Ok(axum::Json(list.map(|(o, _)| o.to_json(&app.urls))))
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
    let domains = email_domains(&body.email_domains)?;
    let user_id = caller.user_id.clone();
    let org = app
        .db
        .write(move |c| {
            let id = create(c, &title, &user_id, &domains)?;
            load_visible(c, &id, &user_id)
        })
        .await?;
    let json = org.to_json(&app.urls);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, json.urls.location.clone())],
        axum::Json(json),
    ))
}

/// Creates an organization whose only member, `owner`, is its admin; returns its id.
pub fn create(c: &mut dyn Conn, title: &str, owner: &str, domains: &[String]) -> Result<String, ApiError> {
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO organizations (id, title, created_at, default_role, agent_instructions_updated_at,
                                    agent_instructions_updated_by)
         VALUES (?1, ?2, ?3, ?4, ?3, ?5)",
        params![id.clone(), title, now, Role::Read.as_str(), owner],
    )?;
    set_email_domains(c, &id, domains)?;
    c.execute(
        "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)",
        params![id.clone(), owner, Role::Admin.as_str(), now],
    )?;
    Ok(id)
}

/// Validates a list of email domains: lowercased, deduplicated, at most 50.
fn email_domains(domains: &[String]) -> ApiResult<Vec<String>> {
    if domains.len() > 50 {
        return Err(ApiError::bad_request(
            "`emailDomains` may hold at most 50 domains",
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for d in domains {
        let d = validate::email_domain("emailDomains", d)?;
        if !out.contains(&d) {
            out.push(d);
        }
    }
    Ok(out)
}

fn set_email_domains(c: &mut dyn Conn, org_id: &str, domains: &[String]) -> Result<(), ApiError> {
    let text = serde_json::to_string(domains).unwrap_or_else(|_| "[]".into());
    c.execute(
        "UPDATE organizations SET email_domains = ?2 WHERE id = ?1",
        params![org_id, text],
    )?;
    c.execute(
        "DELETE FROM organization_email_domains WHERE organization_id = ?1",
        params![org_id],
    )?;
    for d in domains {
        c.execute(
            "INSERT INTO organization_email_domains (domain, organization_id) VALUES (?1, ?2)",
            params![d.clone(), org_id],
        )?;
    }
    Ok(())
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
        .read(move |c| load_visible(c, &org_id, &caller.user_id))
        .await?;
    Ok(axum::Json(org.to_json(&app.urls)))
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
    let title = body
        .title
        .as_deref()
        .map(|t| validate::title("title", t, 2, 255))
        .transpose()?;
    let domains = body.email_domains.as_deref().map(email_domains).transpose()?;
    let hostname = match body.hostname {
        Patch::Value(h) => Patch::Value(hostname(&h)?),
        other => other,
    };
    let default_role = match body.default_role {
        Patch::Value(r) => Patch::Value(Role::parse_field("defaultRole", &r)?),
        Patch::Null => Patch::Null,
        Patch::Absent => Patch::Absent,
    };
    let default_content = match body.default_content {
        Patch::Value(dc) if dc.kind != "site" => {
            return Err(ApiError::bad_request("`defaultContent.type` must be \"site\""));
        }
        other => other,
    };
    let logo = match body.logo {
        Patch::Value(url) => Patch::Value(validate::url("logo", &url)?.to_string()),
        other => other,
    };
    let merge_rules = body
        .merge_rules
        .map(|v| MergeRules::parse(v, false))
        .transpose()?;
    let (sso, ai, invite_links) = (body.sso, body.ai, body.invite_links);
    let user_id = caller.user_id.clone();
    let org = app
        .db
        .write(move |c| {
            let org = load_visible(c, &org_id, &user_id)?;
            org.require(OrgAction::Admin)?;
            let mut o = org.org;
            if let Some(t) = &title {
                o.title = t.clone();
            }
            if let Some(h) = hostname.clone().into_update() {
                if let Some(h) = &h {
                    let taken = c.exists(
                        "SELECT 1 FROM organizations WHERE hostname = ?1 AND id <> ?2",
                        params![h.clone(), o.id.clone()],
                    )?;
                    if taken {
                        return Err(ApiError::conflict(format!(
                            "hostname {h:?} is already used by another organization"
                        )));
                    }
                }
                o.hostname = h;
            }
            if let Some(r) = default_role.clone().into_update() {
                o.default_role = r;
            }
            if let Some(dc) = default_content.clone().into_update() {
                if let Some(dc) = &dc {
                    let known = c.exists(
                        "SELECT 1 FROM sites WHERE id = ?1 AND organization_id = ?2",
                        params![dc.site.clone(), o.id.clone()],
                    )?;
                    if !known {
                        return Err(ApiError::bad_request(format!(
                            "invalid `defaultContent`: {:?} is not a site of this organization",
                            dc.site
                        )));
                    }
                }
                o.default_content_site = dc.map(|d| d.site);
            }
            if let Some(l) = logo.clone().into_update() {
                o.logo_url = l;
            }
            if let Some(rules) = &merge_rules {
                for user in rules.users() {
                    let member = c.exists(
                        "SELECT 1 FROM members WHERE organization_id = ?1 AND user_id = ?2",
                        params![o.id.clone(), user],
                    )?;
                    if !member {
                        return Err(ApiError::bad_request(format!(
                            "invalid `mergeRules`: user {user:?} is not a member of this organization"
                        )));
                    }
                }
                o.merge_rules = rules.clone();
            }
            o.sso = sso.unwrap_or(o.sso);
            o.ai = ai.unwrap_or(o.ai);
            o.invite_links = invite_links.unwrap_or(o.invite_links);
            c.execute(
                "UPDATE organizations SET title = ?2, hostname = ?3, default_role = ?4,
                     default_content_site = ?5, logo_url = ?6, sso = ?7, ai = ?8, invite_links = ?9,
                     merge_rules = ?10
                 WHERE id = ?1",
                params![
                    o.id.clone(),
                    o.title.clone(),
                    o.hostname.clone(),
                    o.default_role.map(Role::as_str),
                    o.default_content_site.clone(),
                    o.logo_url.clone(),
                    o.sso,
                    o.ai,
                    o.invite_links,
                    o.merge_rules.to_json_text()
                ],
            )?;
            if let Some(d) = &domains {
                set_email_domains(c, &o.id, d)?;
            }
            load_visible(c, &o.id, &user_id)
        })
        .await?;
    Ok(axum::Json(org.to_json(&app.urls)))
}

/// An organization hostname: 3 to 32 lowercase letters, digits and inner hyphens.
fn hostname(value: &str) -> ApiResult<String> {
    let ok = (3..=32).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    if !ok {
        return Err(ApiError::bad_request(
            "`hostname` must be 3 to 32 lowercase letters, digits or inner hyphens",
        ));
    }
    Ok(value.to_string())
}
