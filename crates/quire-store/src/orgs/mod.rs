//! Organizations: list, create, read, update; joining one by email domain; the instructions
//! for documentation agents.

pub mod agent_instructions;
pub mod cache;
pub mod domains;
pub mod model;

pub use model::{CALLER, Org, OrgCallerCols, OrgCols, OrgFor, load_for, load_visible, not_found, select_for};

use crate::db::{Args, Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::merge_rules::MergeRules;
use crate::paging::{List, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, Role, org};
use crate::{clock, ids, params, validate};

/// The organizations the caller belongs to, in the order they joined them.
pub fn list(c: &mut dyn Conn, user_id: &str, paging: &Paging) -> StoreResult<List<OrgFor>> {
    // Not scoped by the user: a cursor is a position in join order, and only ever lists the
    // caller's own organizations.
    let page = Page::new(paging, "orgs")?;
    let mut args = Args::default();
    let me = args.arg(user_id);
    let mut sql = format!("{} WHERE m.user_id = {me} AND m.disabled = 0", select_for(&me));
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
        .map(|row| Ok((OrgFor::from_row(row)?, row.col::<i64>(CALLER.joined_at)?)))
        .collect::<Result<Vec<_>, DbError>>()?;
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM members WHERE user_id = ?1 AND disabled = 0",
            params![user_id],
        )?
        .unwrap_or(0);
    let list = page.finish(orgs, count as u64, |(o, joined)| (*joined, o.org.id.clone()));
    Ok(list.map(|(o, _)| o))
}

/// Creates an organization whose only member, `owner`, is its admin, and answers it as they
/// see it. `title` and `domains` are checked already ([`validate::title`], [`email_domains`]).
pub fn create(c: &mut dyn Conn, owner: &str, title: &str, domains: &[String]) -> StoreResult<OrgFor> {
    let id = insert(c, title, owner, domains)?;
    load_visible(c, &id, owner)
}

/// Inserts an organization whose only member, `owner`, is its admin; returns its id.
pub fn insert(c: &mut dyn Conn, title: &str, owner: &str, domains: &[String]) -> StoreResult<String> {
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
pub fn email_domains(domains: &[String]) -> StoreResult<Vec<String>> {
    if domains.len() > 50 {
        return Err(StoreError::invalid("`emailDomains` may hold at most 50 domains"));
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

fn set_email_domains(c: &mut dyn Conn, org_id: &str, domains: &[String]) -> StoreResult<()> {
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

/// An organization hostname: 3 to 32 lowercase letters, digits and inner hyphens.
pub fn hostname(value: &str) -> StoreResult<String> {
    let ok = (3..=32).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    if !ok {
        return Err(StoreError::invalid(
            "`hostname` must be 3 to 32 lowercase letters, digits or inner hyphens",
        ));
    }
    Ok(value.to_string())
}

/// The changes of an update, each checked already (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub email_domains: Option<Vec<String>>,
    pub hostname: Patch<String>,
    pub default_role: Patch<Role>,
    /// The site whose content is the default (`defaultContent.site`).
    pub default_content_site: Patch<String>,
    pub logo: Patch<String>,
    pub sso: Option<bool>,
    pub ai: Option<bool>,
    pub invite_links: Option<bool>,
    pub merge_rules: Option<MergeRules>,
}

/// Updates an organization; answers it as `user_id`, its admin, now sees it. A hostname another
/// organization uses is a conflict; a default site or merge rule naming what the organization
/// does not have is invalid.
pub fn update(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    user_id: &str,
    changes: &Changes,
) -> StoreResult<OrgFor> {
    let mut o = org.org.clone();
    if let Some(t) = &changes.title {
        o.title = t.clone();
    }
    if let Some(h) = changes.hostname.clone().into_update() {
        if let Some(h) = &h {
            let taken = c.exists(
                "SELECT 1 FROM organizations WHERE hostname = ?1 AND id <> ?2",
                params![h.clone(), o.id.clone()],
            )?;
            if taken {
                return Err(StoreError::conflict(format!(
                    "hostname {h:?} is already used by another organization"
                )));
            }
        }
        o.hostname = h;
    }
    if let Some(r) = changes.default_role.clone().into_update() {
        o.default_role = r;
    }
    if let Some(site) = changes.default_content_site.clone().into_update() {
        if let Some(site) = &site {
            let known = c.exists(
                "SELECT 1 FROM sites WHERE id = ?1 AND organization_id = ?2",
                params![site.clone(), o.id.clone()],
            )?;
            if !known {
                return Err(StoreError::invalid(format!(
                    "invalid `defaultContent`: {site:?} is not a site of this organization"
                )));
            }
        }
        o.default_content_site = site;
    }
    if let Some(l) = changes.logo.clone().into_update() {
        o.logo_url = l;
    }
    if let Some(rules) = &changes.merge_rules {
        require_members(c, &o.id, rules)?;
        o.merge_rules = rules.clone();
    }
    if changes.sso == Some(true) && !o.sso {
        crate::sessions::enforce_sso(c, &o.id, user_id)?;
    }
    o.sso = changes.sso.unwrap_or(o.sso);
    o.ai = changes.ai.unwrap_or(o.ai);
    o.invite_links = changes.invite_links.unwrap_or(o.invite_links);
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
    if let Some(d) = &changes.email_domains {
        set_email_domains(c, &o.id, d)?;
    }
    load_visible(c, &o.id, user_id)
}

/// Fails (invalid `mergeRules`) unless every user the rules name is a member of the
/// organization.
pub fn require_members(c: &mut dyn Conn, org_id: &str, rules: &MergeRules) -> StoreResult<()> {
    for user in rules.users() {
        let member = c.exists(
            "SELECT 1 FROM members WHERE organization_id = ?1 AND user_id = ?2",
            params![org_id, user],
        )?;
        if !member {
            return Err(StoreError::invalid(format!(
                "invalid `mergeRules`: user {user:?} is not a member of this organization"
            )));
        }
    }
    Ok(())
}
