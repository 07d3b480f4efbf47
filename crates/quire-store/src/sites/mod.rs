//! Docs sites: a site publishes spaces of its organization, arranged in sections, section groups
//! and site spaces (`structure`), to the audience its visibility names (`published`), with an
//! adaptive schema whose claims decide what each visitor sees (`quire-adaptive`).
//! `docs/sites.md` describes the rules; `docs/permissions.md` ("Docs sites") who may do what.

pub mod customization;
pub mod defaults;
pub mod detach;
pub mod model;
pub mod order;
pub mod published;
pub mod redirects;
pub mod share_links;
pub mod structure;

pub use model::{
    AgentsContext, ExternalLink, Group, Section, Site, SiteFor, SiteKey, SiteSpace, SiteType, SiteVisibility,
    Structure, load_structure, load_visible, not_found,
};

use crate::db::{Args, Conn, like_contains};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, SiteAction, require_org, site, site_allows};
use crate::spaces;
use crate::{clock, ids, params};

pub const TITLE_MIN: usize = 2;
pub const TITLE_MAX: usize = 128;
pub const BASENAME_MAX: usize = 100;
pub const HOSTNAME_MAX: usize = 512;
pub const PROXY_MAX: usize = 512;
/// Characters of a visitor-auth signing key (base62, about 285 bits).
const VISITOR_KEY_CHARS: usize = 48;

/// A new site, checked already.
#[derive(Clone, Debug)]
pub struct NewSite {
    pub kind: SiteType,
    pub title: String,
    pub visibility: SiteVisibility,
    /// Spaces to publish, one site space each, at the root, in this order.
    pub spaces: Vec<String>,
}

/// Checks that the caller may manage the sites of `org` (404 when the organization is
/// invisible, 403 for want of a role).
pub fn require_in_org(org: &OrgFor, action: SiteAction) -> StoreResult<()> {
    require_org(org.standing, crate::permissions::OrgAction::View, &org.org.id)?;
    if !site_allows(org.standing, action) {
        return Err(crate::permissions::role_forbidden(
            action.describe(),
            action.needed(),
            &format!("in organization {:?}", org.org.id),
            org.standing.role(),
        ));
    }
    Ok(())
}

/// Creates a site in `org`; answers it as the caller sees it.
pub fn create(c: &mut dyn Conn, org: &OrgFor, caller: &str, new: &NewSite) -> StoreResult<SiteFor> {
    require_in_org(org, SiteAction::Manage)?;
    let org_id = &org.org.id;
    for (i, space_id) in new.spaces.iter().enumerate() {
        usable_space(c, org_id, caller, space_id, &format!("spaces[{i}]"))?;
    }
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO sites (id, organization_id, title, created_at, type, visibility, visitor_key, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4)",
        params![
            id.clone(),
            org_id.clone(),
            new.title.clone(),
            now,
            new.kind,
            new.visibility,
            ids::random_base62(VISITOR_KEY_CHARS)
        ],
    )?;
    for space_id in &new.spaces {
        structure::insert_site_space(c, &id, None, space_id)?;
    }
    structure::normalize_defaults(c, &id)?;
    let payload = events::SiteCreated { site_id: &id };
    events::record(c, Event::site(org_id, &id, Some(caller), payload))?;
    model::load_visible(c, org_id, &id, caller)
}

/// Checks that `space_id` is a live space of `org_id` the caller can see; `field` names it in
/// the 400.
pub(crate) fn usable_space(
    c: &mut dyn Conn,
    org_id: &str,
    caller: &str,
    space_id: &str,
    field: &str,
) -> StoreResult<()> {
    let refused = || {
        StoreError::invalid(format!(
            "`{field}` {space_id:?} is not a space of this organization you can see"
        ))
    };
    let space = spaces::load_active(c, space_id, caller).map_err(|_| refused())?;
    if space.space.org_id != org_id {
        return Err(refused());
    }
    Ok(())
}

/// The changes of a site update, checked already (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub visibility: Option<SiteVisibility>,
    pub basename: Patch<String>,
    pub hostname: Patch<String>,
    pub proxy: Patch<String>,
    pub adaptive_enabled: Option<bool>,
    pub agents_context: Option<AgentsContext>,
    pub default_site_space: Option<String>,
    pub default_site_section: Option<String>,
}

/// Updates a site; answers it as the caller sees it.
pub fn update(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    changes: &Changes,
) -> StoreResult<SiteFor> {
    let mut next = site.site.clone();
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(v) = changes.visibility {
        next.visibility = v;
    }
    if let Some(b) = changes.basename.clone().into_update() {
        next.basename = b;
    }
    if let Some(h) = changes.hostname.clone().into_update() {
        next.hostname = h;
    }
    if let Some(p) = changes.proxy.clone().into_update() {
        next.proxy = p;
    }
    if let Some(a) = changes.adaptive_enabled {
        next.adaptive_enabled = a;
    }
    if let Some(a) = changes.agents_context {
        next.agents_context = a;
    }
    let tree = load_structure(c, &next.id)?;
    if let Some(section) = &changes.default_site_section {
        if tree.section(section).is_none() {
            return Err(StoreError::invalid(format!(
                "`defaultSiteSection` {section:?} is not a section of this site"
            )));
        }
        next.default_section = Some(section.clone());
    }
    if let Some(ss) = &changes.default_site_space {
        let found = tree.site_space(ss).ok_or_else(|| {
            StoreError::invalid(format!(
                "`defaultSiteSpace` {ss:?} is not a site space of this site"
            ))
        })?;
        match &found.section {
            None => next.default_site_space = Some(ss.clone()),
            Some(section) => {
                // The default of its section, which becomes the default section.
                next.default_section = Some(section.clone());
                c.execute(
                    "UPDATE site_sections SET default_site_space_id = ?2 WHERE id = ?1",
                    params![section.clone(), ss.clone()],
                )?;
            }
        }
    }
    if !changes.hostname.is_absent()
        && let Some(h) = &next.hostname
    {
        let taken = c.exists(
            "SELECT 1 FROM sites WHERE hostname = ?1 AND id <> ?2",
            params![h.clone(), next.id.clone()],
        )?;
        if taken {
            return Err(StoreError::conflict(format!(
                "`hostname` {h:?} is already used by another site"
            )));
        }
    }
    c.execute(
        "UPDATE sites SET title = ?2, visibility = ?3, basename = ?4, hostname = ?5, proxy = ?6,
             adaptive_enabled = ?7, agents_context = ?8, default_section_id = ?9,
             default_site_space_id = ?10, updated_at = ?11
         WHERE id = ?1",
        params![
            next.id.clone(),
            next.title.clone(),
            next.visibility,
            next.basename.clone(),
            next.hostname.clone(),
            next.proxy.clone(),
            next.adaptive_enabled,
            next.agents_context,
            next.default_section.clone(),
            next.default_site_space.clone(),
            clock::now_ms()
        ],
    )?;
    structure::normalize_defaults(c, &next.id)?;
    model::load_visible(c, &next.org_id, &next.id, caller)
}

/// Deletes a site with its structure, share links and redirects.
pub fn delete(c: &mut dyn Conn, site: &Authorized<SiteFor, site::Manage>, actor: &str) -> StoreResult<()> {
    let id = &site.site.id;
    for table in [
        "site_spaces",
        "site_sections",
        "site_section_groups",
        "site_share_links",
        "site_redirects",
    ] {
        c.execute(
            &format!("DELETE FROM {table} WHERE site_id = ?1"),
            params![id.clone()],
        )?;
    }
    c.execute(
        "UPDATE organizations SET default_content_site = NULL WHERE default_content_site = ?1",
        params![id.clone()],
    )?;
    c.execute("DELETE FROM sites WHERE id = ?1", params![id.clone()])?;
    let payload = events::SiteDeleted { site_id: id };
    events::record(c, Event::site(&site.site.org_id, id, Some(actor), payload))?;
    Ok(())
}

/// Makes a site live (`published` true), or takes it down; records the event when it changes.
pub fn set_published(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    published: bool,
) -> StoreResult<SiteFor> {
    let id = &site.site.id;
    let changed = c.execute(
        "UPDATE sites SET published = ?2, updated_at = ?3 WHERE id = ?1 AND published <> ?2",
        params![id.clone(), published, clock::now_ms()],
    )?;
    if changed > 0 {
        let org = &site.site.org_id;
        if published {
            let payload = events::SitePublished { site_id: id };
            events::record(c, Event::site(org, id, Some(caller), payload))?;
        } else {
            let payload = events::SiteUnpublished { site_id: id };
            events::record(c, Event::site(org, id, Some(caller), payload))?;
        }
    }
    model::load_visible(c, &site.site.org_id, id, caller)
}

/// The filters of the list of sites.
#[derive(Clone, Debug, Default)]
pub struct Filters {
    pub space: Option<String>,
    /// Part of the title, case-insensitive (ASCII).
    pub title: Option<String>,
    pub published: Option<bool>,
}

impl Filters {
    /// The scope of the cursors of the organization's sites shown with these filters.
    fn scope(&self, org_id: &str) -> String {
        format!(
            "sites:{org_id}:{:?}:{:?}:{:?}",
            self.space, self.title, self.published
        )
    }
}

/// The sites of an organization, oldest first.
pub fn list(
    c: &mut dyn Conn,
    org: &OrgFor,
    filters: &Filters,
    paging: &Paging,
) -> StoreResult<List<SiteFor>> {
    let page = Page::new(paging, filters.scope(&org.org.id))?;
    require_in_org(org, SiteAction::View)?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE t.organization_id = {}", args.arg(org.org.id.clone()));
    if let Some(space) = &filters.space {
        filter += &format!(
            " AND EXISTS (SELECT 1 FROM site_spaces k WHERE k.site_id = t.id AND k.space_id = {})",
            args.arg(space.clone())
        );
    }
    if let Some(title) = &filters.title {
        filter += &format!(
            " AND lower(t.title) LIKE {} ESCAPE '\\'",
            args.arg(like_contains(&title.to_ascii_lowercase()))
        );
    }
    if let Some(published) = filters.published {
        filter += &format!(" AND t.published = {}", args.arg(published));
    }
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM sites t{filter}"), args.values())?
        .unwrap_or(0);
    let mut sql = format!("SELECT {} FROM sites t{filter}", model::COLUMNS);
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (t.created_at, t.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
    let standing = org.standing;
    let sites = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| Ok(SiteFor::listed(Site::from_row(r)?, standing)))
        .collect::<Result<Vec<_>, crate::db::DbError>>()?;
    Ok(page.finish(sites, u64::try_from(count).unwrap_or(0), |s| {
        (s.site.created_at, s.site.id.clone())
    }))
}

/// A site's adaptive schema as stored: GitBook's JSON and when it was set.
#[derive(Clone, Debug)]
pub struct StoredSchema {
    pub json: serde_json::Value,
    pub updated_at: i64,
}

/// The adaptive schema of a site; 404 when it has none.
pub fn adaptive_schema(site: &SiteFor) -> StoreResult<StoredSchema> {
    let s = &site.site;
    match (&s.adaptive_schema, s.adaptive_schema_updated_at) {
        (Some(_), Some(updated_at)) => Ok(StoredSchema {
            json: s.schema()?.to_json(),
            updated_at,
        }),
        _ => Err(StoreError::not_found(format!(
            "site {:?} has no adaptive schema",
            s.id
        ))),
    }
}

/// Validates the `jsonSchema` of a PUT (`quire-adaptive`): a 400 naming the JSON path at fault.
pub fn parse_schema(json: &serde_json::Value) -> StoreResult<quire_adaptive::AdaptiveSchema> {
    quire_adaptive::AdaptiveSchema::parse(json)
        .map_err(|e| StoreError::invalid(format!("invalid adaptive schema: {e}")))
}

/// Sets a site's adaptive schema, validated already (`AdaptiveSchema::parse`). Conditions
/// stored before keep evaluating by the rules of `docs/adaptive-content.md`.
pub fn set_adaptive_schema(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    schema: &quire_adaptive::AdaptiveSchema,
) -> StoreResult<StoredSchema> {
    let json = schema.to_json();
    let now = clock::now_ms();
    c.execute(
        "UPDATE sites SET adaptive_schema = ?2, adaptive_schema_updated_at = ?3, updated_at = ?3 WHERE id = ?1",
        params![site.site.id.clone(), json.to_string(), now],
    )?;
    Ok(StoredSchema {
        json,
        updated_at: now,
    })
}

/// The template conditions of a site's schema (none without a schema).
pub fn template_conditions(site: &SiteFor) -> StoreResult<Vec<quire_adaptive::TemplateCondition>> {
    Ok(quire_adaptive::template_conditions(&site.site.schema()?))
}

/// A site's visitor-auth settings: the key visitor tokens are signed with (HS256), and where a
/// visitor without a valid token is sent to sign in.
#[derive(Debug, Clone)]
pub struct PublishingAuth {
    pub key: String,
    pub fallback_url: Option<String>,
    pub logout_url: Option<String>,
}

impl PublishingAuth {
    fn of(site: &Site) -> PublishingAuth {
        PublishingAuth {
            key: site.visitor_key.clone(),
            fallback_url: site.visitor_fallback_url.clone(),
            logout_url: site.visitor_logout_url.clone(),
        }
    }
}

pub fn publishing_auth(site: &Authorized<SiteFor, site::Admin>) -> PublishingAuth {
    PublishingAuth::of(&site.site)
}

/// Replaces the visitor-auth signing key: tokens signed with the old one are refused at once.
pub fn regenerate_visitor_key(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Admin>,
) -> StoreResult<PublishingAuth> {
    let key = ids::random_base62(VISITOR_KEY_CHARS);
    c.execute(
        "UPDATE sites SET visitor_key = ?2, updated_at = ?3 WHERE id = ?1",
        params![site.site.id.clone(), key.clone(), clock::now_ms()],
    )?;
    Ok(PublishingAuth {
        key,
        ..PublishingAuth::of(&site.site)
    })
}

/// Sets (null: clears; absent: keeps) where a visitor-auth site sends visitors to sign in
/// (`fallbackURL`) and where it sends them when they sign out (`logoutURL`): absolute http(s)
/// URLs.
pub fn set_visitor_urls(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Admin>,
    fallback: &Patch<String>,
    logout: &Patch<String>,
) -> StoreResult<PublishingAuth> {
    let mut next = PublishingAuth::of(&site.site);
    for (field, patch, value) in [
        ("fallbackURL", fallback, &mut next.fallback_url),
        ("logoutURL", logout, &mut next.logout_url),
    ] {
        if let Patch::Value(url) = patch {
            crate::validate::url(field, url)?;
        }
        if let Some(update) = patch.clone().into_update() {
            *value = update;
        }
    }
    c.execute(
        "UPDATE sites SET visitor_fallback_url = ?2, visitor_logout_url = ?3, updated_at = ?4 WHERE id = ?1",
        params![
            site.site.id.clone(),
            next.fallback_url.clone(),
            next.logout_url.clone(),
            clock::now_ms()
        ],
    )?;
    Ok(next)
}

/// A custom hostname: the spec's pattern `^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?[.]){2,}[a-z0-9][a-z0-9-]{0,61}[a-z0-9]$`
/// (at least three labels, lowercase), at most 512 characters.
pub fn check_hostname(value: &str) -> StoreResult<()> {
    let refused = || {
        StoreError::invalid(format!(
            "`hostname` must be a lowercase domain name of at least three labels (docs.example.com), not {value:?}"
        ))
    };
    if value.len() > HOSTNAME_MAX {
        return Err(refused());
    }
    let labels: Vec<&str> = value.split('.').collect();
    let label_ok = |l: &str, min: usize| {
        l.len() >= min
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    let Some((last, rest)) = labels.split_last() else {
        return Err(refused());
    };
    if rest.len() < 2 || !label_ok(last, 2) || !rest.iter().all(|l| label_ok(l, 1)) {
        return Err(refused());
    }
    Ok(())
}

/// A proxy origin: the spec's pattern `^([\w-]+\.)*[\w-]+\.[a-zA-Z]{2,}(\/[\w-]+)+$` (a host
/// and a path, `example.com/docs`), at most 512 characters.
pub fn check_proxy(value: &str) -> StoreResult<()> {
    let refused = || {
        StoreError::invalid(format!(
            "`proxy` must be a host and a path such as example.com/docs, not {value:?}"
        ))
    };
    if value.len() > PROXY_MAX {
        return Err(refused());
    }
    let word = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let Some((host, path)) = value.split_once('/') else {
        return Err(refused());
    };
    let labels: Vec<&str> = host.split('.').collect();
    let Some((tld, rest)) = labels.split_last() else {
        return Err(refused());
    };
    let tld_ok = tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic());
    if rest.is_empty() || !tld_ok || !rest.iter().all(|l| word(l)) || !path.split('/').all(word) {
        return Err(refused());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostnames_follow_the_spec_pattern() {
        assert!(check_hostname("docs.example.com").is_ok());
        assert!(check_hostname("a.b.co").is_ok());
        assert!(check_hostname("example.com").is_err());
        assert!(check_hostname("Docs.example.com").is_err());
        assert!(check_hostname("-a.example.com").is_err());
        assert!(check_hostname("docs.example.c").is_err());
        assert!(check_hostname("docs..com").is_err());
    }

    #[test]
    fn proxies_follow_the_spec_pattern() {
        assert!(check_proxy("example.com/docs").is_ok());
        assert!(check_proxy("www.company.com/developer/docs").is_ok());
        assert!(check_proxy("example.com").is_err());
        assert!(check_proxy("example.com/").is_err());
        assert!(check_proxy("example.c1/docs").is_err());
        assert!(check_proxy("https://example.com/docs").is_err());
    }
}
