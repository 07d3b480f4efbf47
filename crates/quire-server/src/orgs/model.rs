//! The organization as stored, as loaded for a caller, and as sent on the wire.

use serde::Serialize;

use crate::clock;
use crate::db::{Conn, DbError, Row};
use crate::error::ApiError;
use crate::urls::Urls;
use quire_store::merge_rules::MergeRules;
use quire_store::permissions::{OrgAction, Role, Standing, org_allows, require_org};

#[derive(Clone, Debug)]
pub struct Org {
    pub id: String,
    pub title: String,
    pub created_at: i64,
    pub kind: String,
    pub use_case: Option<String>,
    pub community_type: Option<String>,
    pub email_domains: Vec<String>,
    pub hostname: Option<String>,
    pub custom_hostname: Option<String>,
    pub default_role: Option<Role>,
    pub default_content_site: Option<String>,
    pub sso: bool,
    pub ai: bool,
    pub invite_links: bool,
    pub logo_url: Option<String>,
    pub merge_rules: MergeRules,
}

/// An organization together with what the caller is to it.
#[derive(Clone, Debug)]
pub struct OrgFor {
    pub org: Org,
    pub standing: Standing,
    pub owns_team: bool,
}

quire_store::columns! {
    /// The columns [`Org::from_row`] reads, with the table aliased `o`.
    pub struct OrgCols of "organizations" {
        id: "o.id",
        title: "o.title",
        created_at: "o.created_at",
        kind: "o.type",
        use_case: "o.use_case",
        community_type: "o.community_type",
        email_domains: "o.email_domains",
        hostname: "o.hostname",
        custom_hostname: "o.custom_hostname",
        default_role: "o.default_role",
        default_content_site: "o.default_content_site",
        sso: "o.sso",
        ai: "o.ai",
        invite_links: "o.invite_links",
        logo_url: "o.logo_url",
        merge_rules: "o.merge_rules",
    }
}

quire_store::columns! {
    /// What the caller is to the organization, selected after its [`OrgCols`]; `{caller}`
    /// stands for the placeholder of the caller's id (see [`select_for`]).
    pub struct OrgCallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
        joined_at: "m.joined_at",
        owns_team: "EXISTS (SELECT 1 FROM team_members tm JOIN teams t ON t.id = tm.team_id
                            WHERE t.organization_id = o.id AND tm.user_id = {caller} AND tm.role = 'owner')",
    }
}

const ORG: OrgCols = OrgCols::AT;
/// The caller's columns in a row of [`select_for`].
pub const CALLER: OrgCallerCols = OrgCallerCols::at(OrgCols::COUNT);

/// The SELECT of an organization with the caller's standing, which [`OrgFor::from_row`] reads
/// (`caller` is the placeholder of the caller's id).
pub fn select_for(caller: &str) -> String {
    format!(
        "SELECT {}, {} FROM organizations o LEFT JOIN members m ON m.organization_id = o.id AND m.user_id = {caller}",
        OrgCols::SQL,
        OrgCallerCols::SQL.replace("{caller}", caller)
    )
}

impl Org {
    pub fn from_row(row: &Row) -> Result<Org, DbError> {
        let id: String = row.col(ORG.id)?;
        let domains: String = row.col(ORG.email_domains)?;
        let email_domains = serde_json::from_str(&domains)
            .map_err(|e| DbError::stored(format_args!("email domains of organization {id:?}"), e))?;
        let merge_rules: String = row.col(ORG.merge_rules)?;
        let merge_rules = MergeRules::from_json_text(&merge_rules)
            .map_err(|e| DbError::stored(format_args!("merge rules of organization {id:?}"), e))?;
        Ok(Org {
            id,
            title: row.col(ORG.title)?,
            created_at: row.col(ORG.created_at)?,
            kind: row.col(ORG.kind)?,
            use_case: row.col(ORG.use_case)?,
            community_type: row.col(ORG.community_type)?,
            email_domains,
            hostname: row.col(ORG.hostname)?,
            custom_hostname: row.col(ORG.custom_hostname)?,
            default_role: row.col(ORG.default_role)?,
            default_content_site: row.col(ORG.default_content_site)?,
            sso: row.col(ORG.sso)?,
            ai: row.col(ORG.ai)?,
            invite_links: row.col(ORG.invite_links)?,
            logo_url: row.col(ORG.logo_url)?,
            merge_rules,
        })
    }
}

impl OrgFor {
    pub fn from_row(row: &Row) -> Result<OrgFor, DbError> {
        let org = Org::from_row(row)?;
        let member: Option<String> = row.col(CALLER.member)?;
        let disabled: Option<bool> = row.col(CALLER.disabled)?;
        let standing = match member {
            Some(_) if disabled != Some(true) => Standing::from_membership(Some(row.col(CALLER.role)?)),
            _ => Standing::Outsider,
        };
        Ok(OrgFor {
            org,
            standing,
            owns_team: row.col(CALLER.owns_team)?,
        })
    }

    /// Fails with 404 or 403 unless the caller may do `action`.
    pub fn require(&self, action: OrgAction) -> Result<(), ApiError> {
        Ok(require_org(self.standing, action, &self.org.id)?)
    }

    pub fn allows(&self, action: OrgAction) -> bool {
        org_allows(self.standing, action)
    }

    pub fn to_json(&self, urls: &Urls) -> OrgJson {
        let org = &self.org;
        let p = |a| self.allows(a);
        OrgJson {
            object: "organization",
            id: org.id.clone(),
            title: org.title.clone(),
            created_at: org.created_at,
            email_domains: org.email_domains.clone(),
            hostname: org.hostname.clone(),
            kind: org.kind.clone(),
            use_case: org.use_case.clone(),
            community_type: org.community_type.clone(),
            default_role: org.default_role,
            default_content: org
                .default_content_site
                .clone()
                .map(|site| SitePointer { kind: "site", site }),
            sso: org.sso,
            ai: org.ai,
            invite_links: org.invite_links,
            audit_logs: false,
            plan: SELF_HOSTED_PLAN,
            merge_rules: org.merge_rules.clone(),
            urls: OrgUrls {
                location: urls.api(&format!("/orgs/{}", org.id)),
                app: urls.app(&format!("/o/{}", org.id)),
                logo: org.logo_url.clone(),
            },
            trial: Trial {
                status: "notapplicable",
                count: 0,
            },
            custom_hostname: org.custom_hostname.clone(),
            permissions: OrgPermissions {
                view: p(OrgAction::View),
                access: p(OrgAction::View),
                admin: p(OrgAction::Admin),
                own_team: self.owns_team,
                create_content: p(OrgAction::CreateContent),
                create_open_api_spec: p(OrgAction::CreateOpenApiSpec),
                ingest_conversations: p(OrgAction::IngestConversations),
                view_billing: p(OrgAction::ViewBilling),
                list_members: p(OrgAction::ListMembers),
                list_teams: p(OrgAction::ListTeams),
                list_integrations: p(OrgAction::ListIntegrations),
                list_installations: p(OrgAction::ListInstallations),
                install_integration: p(OrgAction::InstallIntegration),
            },
        }
    }
}

/// A self-hosted quire has no billing: every feature is available and nothing is sold, which
/// GitBook's product list calls `internal`. See docs/decisions.md.
const SELF_HOSTED_PLAN: &str = "internal";

/// Loads an organization with the caller's standing; None when it does not exist.
pub fn load_for(c: &mut dyn Conn, org_id: &str, user_id: &str) -> Result<Option<OrgFor>, DbError> {
    let sql = format!("{} WHERE o.id = ?1", select_for("?2"));
    c.query_opt(&sql, crate::params![org_id, user_id])?
        .map(|row| OrgFor::from_row(&row))
        .transpose()
}

/// Loads an organization the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, org_id: &str, user_id: &str) -> Result<OrgFor, ApiError> {
    match load_for(c, org_id, user_id)? {
        Some(org) if org.allows(OrgAction::View) => Ok(org),
        _ => Err(not_found(org_id)),
    }
}

pub fn not_found(org_id: &str) -> ApiError {
    ApiError::not_found(format!("organization {org_id:?} not found"))
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    pub email_domains: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub use_case: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub community_type: Option<String>,
    pub default_role: Option<Role>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_content: Option<SitePointer>,
    pub sso: bool,
    pub ai: bool,
    pub invite_links: bool,
    pub audit_logs: bool,
    pub plan: &'static str,
    pub merge_rules: MergeRules,
    pub urls: OrgUrls,
    pub trial: Trial,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub custom_hostname: Option<String>,
    pub permissions: OrgPermissions,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct SitePointer {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub site: String,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct OrgUrls {
    pub location: String,
    pub app: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct Trial {
    pub status: &'static str,
    pub count: u32,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OrgPermissions {
    pub view: bool,
    pub access: bool,
    pub admin: bool,
    pub own_team: bool,
    pub create_content: bool,
    #[serde(rename = "createOpenAPISpec")]
    pub create_open_api_spec: bool,
    pub ingest_conversations: bool,
    pub view_billing: bool,
    pub list_members: bool,
    pub list_teams: bool,
    pub list_integrations: bool,
    pub list_installations: bool,
    pub install_integration: bool,
}
