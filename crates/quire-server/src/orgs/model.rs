//! The organization as stored, as loaded for a caller, and as sent on the wire.

use serde::Serialize;

use crate::clock;
use crate::db::{Conn, DbError, Row};
use crate::error::ApiError;
use crate::merge_rules::MergeRules;
use crate::permissions::{OrgAction, Role, Standing, org_allows, require_org};
use crate::urls::Urls;

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

/// Columns for [`Org::from_row`], with the table aliased `o`.
pub const ORG_COLUMNS: &str = "o.id, o.title, o.created_at, o.type, o.use_case, o.community_type, \
     o.email_domains, o.hostname, o.custom_hostname, o.default_role, o.default_content_site, o.sso, \
     o.ai, o.invite_links, o.logo_url, o.merge_rules";
const ORG_COLUMN_COUNT: usize = 16;

/// The SELECT of an organization with the caller's standing (`caller` is the placeholder of the
/// caller's id). [`OrgFor::from_row`] reads its first [`ORG_FOR_COLUMNS`] columns; `extra`
/// selects more after them.
pub fn select_for(caller: &str, extra: &str) -> String {
    format!(
        "SELECT {ORG_COLUMNS}, m.user_id, m.role, m.disabled,
             EXISTS (SELECT 1 FROM team_members tm JOIN teams t ON t.id = tm.team_id
                     WHERE t.organization_id = o.id AND tm.user_id = {caller} AND tm.role = 'owner')
             {extra}
         FROM organizations o LEFT JOIN members m ON m.organization_id = o.id AND m.user_id = {caller}"
    )
}

pub const ORG_FOR_COLUMNS: usize = ORG_COLUMN_COUNT + 4;

impl Org {
    pub fn from_row(row: &Row) -> Result<Org, DbError> {
        let domains: String = row.get(6)?;
        let merge_rules: String = row.get(15)?;
        Ok(Org {
            id: row.get(0)?,
            title: row.get(1)?,
            created_at: row.get(2)?,
            kind: row.get(3)?,
            use_case: row.get(4)?,
            community_type: row.get(5)?,
            email_domains: serde_json::from_str(&domains).unwrap_or_default(),
            hostname: row.get(7)?,
            custom_hostname: row.get(8)?,
            default_role: Role::from_column(row.get(9)?),
            default_content_site: row.get(10)?,
            sso: row.get(11)?,
            ai: row.get(12)?,
            invite_links: row.get(13)?,
            logo_url: row.get(14)?,
            merge_rules: MergeRules::from_json_text(&merge_rules),
        })
    }
}

impl OrgFor {
    pub fn from_row(row: &Row) -> Result<OrgFor, DbError> {
        let org = Org::from_row(row)?;
        let member: Option<String> = row.get(ORG_COLUMN_COUNT)?;
        let disabled: Option<bool> = row.get(ORG_COLUMN_COUNT + 2)?;
        let standing = match member {
            Some(_) if disabled != Some(true) => {
                Standing::from_membership(Some(Role::from_column(row.get(ORG_COLUMN_COUNT + 1)?)))
            }
            _ => Standing::Outsider,
        };
        Ok(OrgFor {
            org,
            standing,
            owns_team: row.get(ORG_COLUMN_COUNT + 3)?,
        })
    }

    /// Fails with 404 or 403 unless the caller may do `action`.
    pub fn require(&self, action: OrgAction) -> Result<(), ApiError> {
        require_org(self.standing, action, &self.org.id)
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
    let sql = format!("{} WHERE o.id = ?1", select_for("?2", ""));
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

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct OrgJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
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

#[derive(Serialize, Debug)]
pub struct SitePointer {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub site: String,
}

#[derive(Serialize, Debug)]
pub struct OrgUrls {
    pub location: String,
    pub app: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
}

#[derive(Serialize, Debug)]
pub struct Trial {
    pub status: &'static str,
    pub count: u32,
}

#[derive(Serialize, Debug)]
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
