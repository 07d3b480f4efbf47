//! Integrations (issue 42, `docs/integrations.md`): published by an organization, installed on
//! organizations and enabled on their spaces and sites; the changes of what an installation
//! covers reach it as events, delivered to the integration's dev tunnel or webhook, signed.
//!
//! Publishing is three steps so that no bytes are stored for a caller who may not publish:
//! [`authorize_publish`] (a read), then the handler stores the icon, preview images and
//! script in the object store, then [`publish`] writes the row, checking again.

pub mod bindings;
pub mod delivery;
pub mod events;
pub mod fanout;
pub mod installations;
pub mod model;
pub mod publish;
pub mod retention;
pub mod scripts;
pub mod secrets;
pub mod tokens;

pub use model::{
    EventStatus, Installation, InstallationFor, InstallationKey, InstallationStatus, Integration,
    IntegrationFor, Selection, Target, Visibility,
};
pub use publish::{Publish, authorize_publish, publish};

use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, Standing, integration};

/// At most this many characters in an integration's name.
pub const NAME_MAX: usize = 100;

/// An integration name: `^[a-zA-Z0-9-_.]+$`, at most [`NAME_MAX`] characters.
pub fn check_name(name: &str) -> StoreResult<()> {
    if name.is_empty()
        || name.len() > NAME_MAX
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(StoreError::invalid(format!(
            "an integration name matches ^[a-zA-Z0-9-_.]+$ and has at most {NAME_MAX} characters; {:?} does not",
            shorten(name)
        )));
    }
    Ok(())
}

/// The start of a value, for an error message that names it.
fn shorten(value: &str) -> String {
    value.chars().take(60).collect()
}

/// An id or subdomain given in a body or a query (an organization, a space, a site, an
/// external id filter): at most 200 characters, no control characters, which no id has (and
/// PostgreSQL refuses NUL in text).
pub fn check_ref(field: &str, value: &str) -> StoreResult<()> {
    crate::validate::name(field, value, 200)
}

/// The filters of the integration list (GitBook's `listIntegrations`).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// In the name or the title, ignoring case.
    pub search: Option<String>,
    pub category: Option<String>,
    /// A domain the integration's blocks unfurl.
    pub block_domain: Option<String>,
    pub blocks: Option<bool>,
    pub content_sources: Option<bool>,
    /// The owner organization's id.
    pub owner: Option<String>,
    pub scope: Option<String>,
    pub target: Option<Target>,
}

impl Filter {
    pub fn check(&self) -> StoreResult<()> {
        if let Some(category) = &self.category
            && !model::CATEGORIES.contains(&category.as_str())
        {
            return Err(StoreError::invalid(format!(
                "unknown category {category:?}; categories: {}",
                model::CATEGORIES.join(", ")
            )));
        }
        if let Some(scope) = &self.scope
            && !model::SCOPES.contains(&scope.as_str())
        {
            return Err(StoreError::invalid(format!(
                "unknown scope {scope:?}; scopes: {}",
                model::SCOPES.join(", ")
            )));
        }
        if let Some(domain) = &self.block_domain {
            check_domain(domain)?;
        }
        if let Some(search) = &self.search {
            check_ref("search", search)?;
        }
        if let Some(owner) = &self.owner {
            check_ref("owner", owner)?;
        }
        Ok(())
    }
}

/// A block domain: `^[a-zA-Z0-9-_.]+$`, at most 100 characters (GitBook's `blockDomain`).
pub fn check_domain(domain: &str) -> StoreResult<()> {
    if domain.is_empty()
        || domain.len() > 100
        || !domain
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(StoreError::invalid(format!(
            "a block domain matches ^[a-zA-Z0-9-_.]+$ and has at most 100 characters; {:?} does not",
            shorten(domain)
        )));
    }
    Ok(())
}

/// `value` escaped for a LIKE pattern with `ESCAPE '\'`.
fn like_escaped(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// SQL that is true when the external ids of `column` (a JSON array of strings) include `id`:
/// the id quoted as JSON, matched literally.
pub(crate) fn has_external_id(args: &mut Args, column: &str, id: &str) -> String {
    let quoted = serde_json::Value::String(id.to_string()).to_string();
    format!(
        "{column} LIKE {} ESCAPE '\\'",
        args.arg(format!("%{}%", like_escaped(&quoted)))
    )
}

/// SQL that is true when the space-separated words of `column` include `word`.
fn has_word(args: &mut Args, column: &str, word: &str) -> String {
    format!(
        "(' ' || {column} || ' ') LIKE {} ESCAPE '\\'",
        args.arg(format!("% {} %", like_escaped(word)))
    )
}

/// The integrations the caller sees, oldest first: public ones, and every one of the
/// organizations they are a member of.
pub fn list(
    c: &mut dyn Conn,
    user_id: &str,
    filter: &Filter,
    paging: &Paging,
) -> StoreResult<List<IntegrationFor>> {
    filter.check()?;
    let page = Page::new(paging, "integrations")?;
    let mut args = Args::default();
    let me = args.arg(user_id.to_string());
    let mut filter_sql = format!(
        " WHERE (t.visibility = 'public' OR (m.user_id IS NOT NULL AND (m.disabled IS NULL OR m.disabled = {})))",
        args.arg(false)
    );
    if let Some(search) = &filter.search {
        let pattern = args.arg(format!("%{}%", like_escaped(&search.to_lowercase())));
        filter_sql += &format!(
            " AND (lower(t.name) LIKE {pattern} ESCAPE '\\' OR lower(t.title) LIKE {pattern} ESCAPE '\\')"
        );
    }
    if let Some(category) = &filter.category {
        filter_sql += &format!(" AND {}", has_word(&mut args, "t.categories", category));
    }
    if let Some(scope) = &filter.scope {
        filter_sql += &format!(" AND {}", has_word(&mut args, "t.scopes", scope));
    }
    if let Some(domain) = &filter.block_domain {
        filter_sql += &format!(
            " AND {}",
            has_word(&mut args, "t.block_domains", &domain.to_ascii_lowercase())
        );
    }
    if let Some(blocks) = filter.blocks {
        filter_sql += &format!(" AND t.has_blocks = {}", args.arg(blocks));
    }
    if let Some(sources) = filter.content_sources {
        filter_sql += &format!(" AND t.has_content_sources = {}", args.arg(sources));
    }
    if let Some(owner) = &filter.owner {
        filter_sql += &format!(" AND t.organization_id = {}", args.arg(owner.clone()));
    }
    if let Some(target) = filter.target {
        filter_sql += &format!(" AND t.target = {}", args.arg(target.as_str()));
    }
    let from = format!(
        " FROM integrations t LEFT JOIN members m ON m.organization_id = t.organization_id AND m.user_id = {me}"
    );
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*){from}{filter_sql}"), args.values())?
        .unwrap_or(0);
    let mut sql = format!(
        "SELECT {}, {}{from}{filter_sql}",
        model::IntegrationCols::SQL,
        model::CallerCols::SQL
    );
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (t.created_at, t.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
    let caller = model::CallerCols::at(model::IntegrationCols::COUNT);
    let found = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            let member: Option<String> = r.col(caller.member)?;
            let owner = Standing::from_member_columns(
                member.as_deref(),
                r.col(caller.disabled)?,
                r.col(caller.role)?,
            );
            Ok(IntegrationFor::made(Integration::from_row(r)?, owner))
        })
        .collect::<Result<Vec<_>, crate::db::DbError>>()?;
    Ok(page.finish(found, u64::try_from(count).unwrap_or(0), |i| {
        (i.integration.created_at, i.integration.id.clone())
    }))
}

/// Unpublishes an integration: it, its installations and their bindings go (their events
/// stay, as the record of what was delivered). The caller removes its blobs afterwards.
pub fn unpublish(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    caller: &str,
) -> StoreResult<()> {
    // The users of its installations go with them, and their grants and tokens with them.
    let installations: Vec<String> = c
        .query(
            "SELECT id FROM integration_installations WHERE integration_id = ?1",
            crate::params![found.integration.id.clone()],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    for installation in &installations {
        tokens::remove(c, installation)?;
    }
    c.execute(
        "DELETE FROM integrations WHERE id = ?1",
        crate::params![found.integration.id.clone()],
    )?;
    let i = &found.integration;
    crate::events::record(
        c,
        crate::events::Event::in_org(
            &i.org_id,
            &i.id,
            Some(caller),
            crate::events::IntegrationUnpublished {
                integration_id: &i.id,
                name: &i.name,
            },
        ),
    )?;
    // Deliveries still scheduled for it end: their job finds no integration and stops.
    Ok(())
}

/// At most this many characters in a dev tunnel URL (GitBook's `tunnelUrl`).
pub const TUNNEL_URL_MAX: usize = 256;

/// Sends the integration's events to `tunnel_url` (only its owner organization's, unless
/// `all`), and re-enables a dev tunnel that was disabled for failing.
pub fn set_dev(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    tunnel_url: &str,
    all: bool,
) -> StoreResult<()> {
    if tunnel_url.chars().count() > TUNNEL_URL_MAX {
        return Err(StoreError::invalid(format!(
            "`tunnelUrl` has at most {TUNNEL_URL_MAX} characters"
        )));
    }
    crate::validate::url("tunnelUrl", tunnel_url)?;
    c.execute(
        "UPDATE integrations SET dev_tunnel_url = ?2, dev_all = ?3, dev_failing_since = NULL,
             dev_disabled_at = NULL, updated_at = ?4 WHERE id = ?1",
        crate::params![
            found.integration.id.clone(),
            tunnel_url,
            all,
            crate::clock::now_ms()
        ],
    )?;
    Ok(())
}

/// Stops sending events to the dev tunnel.
pub fn clear_dev(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
) -> StoreResult<()> {
    c.execute(
        "UPDATE integrations SET dev_tunnel_url = NULL, dev_all = ?2, dev_failing_since = NULL,
             dev_disabled_at = NULL, updated_at = ?3 WHERE id = ?1",
        crate::params![found.integration.id.clone(), false, crate::clock::now_ms()],
    )?;
    Ok(())
}

/// The integration's signing secret, for its admins (the publish answer carries it, so that a
/// receiver can verify deliveries).
pub fn signing_secret(
    c: &mut dyn Conn,
    key: &secrets::SecretsKey,
    found: &Authorized<IntegrationFor, integration::Admin>,
) -> StoreResult<String> {
    signing_secret_of(c, key, &found.integration.id)
}

pub(crate) fn signing_secret_of(
    c: &mut dyn Conn,
    key: &secrets::SecretsKey,
    integration_id: &str,
) -> StoreResult<String> {
    let sealed: String = c
        .query_scalar(
            "SELECT signing_secret FROM integrations WHERE id = ?1",
            crate::params![integration_id],
        )?
        .ok_or_else(|| StoreError::not_found("integration not found"))?;
    String::from_utf8(key.open(&sealed)?).map_err(|_| StoreError::internal("a signing secret is not text"))
}
