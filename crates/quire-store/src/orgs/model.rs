//! The organization as stored and as loaded for a caller.

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::merge_rules::MergeRules;
use crate::permissions::{Action, Authorized, OrgAction, Role, Standing, org_allows, require_org};

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

/// An organization together with what the caller is to it. Only this crate's loaders make one
/// (`non_exhaustive`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OrgFor {
    pub org: Org,
    pub standing: Standing,
    pub owns_team: bool,
}

crate::columns! {
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

crate::columns! {
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
        let standing = Standing::from_member_columns(
            member.as_deref(),
            row.col(CALLER.disabled)?,
            row.col(CALLER.role)?,
        );
        Ok(OrgFor {
            org,
            standing,
            owns_team: row.col(CALLER.owns_team)?,
        })
    }

    /// Fails with 404 or 403 unless the caller may do `action`.
    pub fn require(&self, action: OrgAction) -> StoreResult<()> {
        require_org(self.standing, action, &self.org.id)
    }

    /// Proof that the caller may do `A` (`permissions::org::Admin`, ...), or 404 / 403 as
    /// [`OrgFor::require`].
    pub fn authorize<A: Action<OrgAction>>(self) -> StoreResult<Authorized<OrgFor, A>> {
        self.require(A::ACTION)?;
        Ok(Authorized::granted(self))
    }

    pub fn allows(&self, action: OrgAction) -> bool {
        org_allows(self.standing, action)
    }
}

/// Loads an organization with the caller's standing; None when it does not exist.
pub fn load_for(c: &mut dyn Conn, org_id: &str, user_id: &str) -> Result<Option<OrgFor>, DbError> {
    let sql = format!("{} WHERE o.id = ?1", select_for("?2"));
    c.query_opt(&sql, crate::params![org_id, user_id])?
        .map(|row| OrgFor::from_row(&row))
        .transpose()
}

/// Loads an organization the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, org_id: &str, user_id: &str) -> StoreResult<OrgFor> {
    match load_for(c, org_id, user_id)? {
        Some(org) if org.allows(OrgAction::View) => Ok(org),
        _ => Err(not_found(org_id)),
    }
}

pub fn not_found(org_id: &str) -> StoreError {
    StoreError::not_found(format!("organization {org_id:?} not found"))
}
