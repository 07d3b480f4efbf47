//! An organization as answered, with the caller's `permissions`.

use quire_store::clock;
use quire_store::merge_rules::MergeRules;
use quire_store::orgs::OrgFor;
use quire_store::permissions::{OrgAction, Role};
use serde::Serialize;

use crate::urls::Urls;

/// A self-hosted quire has no billing: every feature is available and nothing is sold, which
/// GitBook's product list calls `internal`. See docs/decisions/0004-organizations-plan-billing-trial.md.
const SELF_HOSTED_PLAN: &str = "internal";

pub fn org_json(urls: &Urls, org_for: &OrgFor) -> OrgJson {
    let org = &org_for.org;
    let p = |a| org_for.allows(a);
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
            own_team: org_for.owns_team,
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
