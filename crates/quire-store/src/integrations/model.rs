//! Integrations and their installations as stored, and as loaded for a caller.

use serde_json::Value as Json;

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{
    Action, Authorized, InstallationAction, IntegrationAction, Standing, installation_allows,
    integration_allows, role_forbidden,
};

crate::wire_enum! {
    /// Who sees the integration: anyone (`public`, `unlisted`: not in the public listing), or
    /// only its owner organization's members (`private`).
    pub enum Visibility {
        Public = "public",
        Private = "private",
        Unlisted = "unlisted",
    }
}

crate::wire_enum! {
    /// Where the integration may be installed.
    pub enum Target {
        All = "all",
        Site = "site",
        Space = "space",
        Organization = "organization",
    }
}

crate::wire_enum! {
    pub enum InstallationStatus {
        Active = "active",
        Pending = "pending",
        Paused = "paused",
    }
}

crate::wire_enum! {
    /// Whether an installation covers every space (or site) of its organization, or those it
    /// was enabled on.
    pub enum Selection {
        All = "all",
        Selected = "selected",
    }
}

crate::wire_enum! {
    /// An event's delivery: under way (first attempt or retries), delivered, given up.
    pub enum EventStatus {
        Pending = "pending",
        Success = "success",
        Failed = "failed",
    }
}

/// GitBook's integration scopes (`IntegrationScope`).
pub const SCOPES: &[&str] = &[
    "space:content:read",
    "space:content:write",
    "space:metadata:read",
    "space:metadata:write",
    "space:git:sync",
    "page:feedback:read",
    "site:metadata:read",
    "site:views:read",
    "site:script:inject",
    "site:script:cookies",
    "site:visitor:auth",
    "site:visitor:claims",
    "site:adaptive:read",
    "site:adaptive:write",
    "conversations:ingest",
    "openapi:read",
    "openapi:write",
];

/// GitBook's integration categories (`IntegrationCategory`).
pub const CATEGORIES: &[&str] = &[
    "analytics",
    "collaboration",
    "content",
    "marketing",
    "visitor-auth",
    "other",
];

#[derive(Clone, Debug)]
pub struct Integration {
    pub id: String,
    pub name: String,
    /// The owner organization.
    pub org_id: String,
    pub version: i64,
    pub runtime: String,
    pub title: String,
    pub description: String,
    pub summary: Option<String>,
    pub visibility: Visibility,
    pub target: Target,
    pub scopes: Vec<String>,
    pub categories: Vec<String>,
    /// `blocks`, `contentSources`, `configurations`, `externalLinks` and
    /// `contentSecurityPolicy`, as published.
    pub definition: Json,
    /// Hash of the icon's blob.
    pub icon: Option<String>,
    /// Hashes of the preview images' blobs, in order.
    pub preview_images: Vec<String>,
    pub webhook_url: Option<String>,
    pub dev_tunnel_url: Option<String>,
    pub dev_all: bool,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::columns! {
    /// The columns [`Integration::from_row`] reads, with the table aliased `t`.
    pub struct IntegrationCols of "integrations" {
        id: "t.id",
        name: "t.name",
        org_id: "t.organization_id",
        version: "t.version",
        runtime: "t.runtime",
        title: "t.title",
        description: "t.description",
        summary: "t.summary",
        visibility: "t.visibility",
        target: "t.target",
        scopes: "t.scopes",
        categories: "t.categories",
        definition: "t.definition",
        icon: "t.icon",
        preview_images: "t.preview_images",
        webhook_url: "t.webhook_url",
        dev_tunnel_url: "t.dev_tunnel_url",
        dev_all: "t.dev_all",
        created_at: "t.created_at",
        updated_at: "t.updated_at",
    }
}

crate::columns! {
    /// The caller's membership of an organization (`m`), after the columns of what was loaded.
    pub struct CallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

const T: IntegrationCols = IntegrationCols::AT;

/// Space-separated words, as `scopes` and `categories` are stored.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

impl Integration {
    pub fn from_row(row: &Row) -> Result<Integration, DbError> {
        let id: String = row.col(T.id)?;
        let previews: String = row.col(T.preview_images)?;
        let preview_images = serde_json::from_str(&previews)
            .map_err(|e| DbError::stored(format_args!("preview images of integration {id:?}"), e))?;
        Ok(Integration {
            name: row.col(T.name)?,
            org_id: row.col(T.org_id)?,
            version: row.col(T.version)?,
            runtime: row.col(T.runtime)?,
            title: row.col(T.title)?,
            description: row.col(T.description)?,
            summary: row.col(T.summary)?,
            visibility: row.col(T.visibility)?,
            target: row.col(T.target)?,
            scopes: words(&row.col::<String>(T.scopes)?),
            categories: words(&row.col::<String>(T.categories)?),
            definition: row.col(T.definition)?,
            icon: row.col(T.icon)?,
            preview_images,
            webhook_url: row.col(T.webhook_url)?,
            dev_tunnel_url: row.col(T.dev_tunnel_url)?,
            dev_all: row.col(T.dev_all)?,
            created_at: row.col(T.created_at)?,
            updated_at: row.col(T.updated_at)?,
            id,
        })
    }

    pub fn listed(&self) -> bool {
        self.visibility != Visibility::Private
    }

    /// Whether the integration's scopes include `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Where its blobs live in the object store (a namespace beside spaces').
    pub fn blob_namespace(name: &str) -> String {
        format!("integration-{name}")
    }
}

/// An integration with the caller's standing in its owner organization. Only this crate's
/// loaders make one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct IntegrationFor {
    pub integration: Integration,
    pub owner: Standing,
}

impl IntegrationFor {
    pub fn allows(&self, action: IntegrationAction) -> bool {
        integration_allows(self.owner, self.integration.listed(), action)
    }

    /// Proof that the caller may do `A`: 404 when they cannot see the integration, 403 when
    /// the action is not allowed.
    pub fn authorize<A: Action<IntegrationAction>>(self) -> StoreResult<Authorized<IntegrationFor, A>> {
        if !self.allows(IntegrationAction::View) {
            return Err(not_found(&self.integration.name));
        }
        if !self.allows(A::ACTION) {
            return Err(role_forbidden(
                A::ACTION.describe(),
                crate::permissions::Role::Admin,
                &format!(
                    "in the organization that owns integration {:?}",
                    self.integration.name
                ),
                self.owner.role(),
            ));
        }
        Ok(Authorized::granted(self))
    }

    pub(crate) fn made(integration: Integration, owner: Standing) -> IntegrationFor {
        IntegrationFor { integration, owner }
    }
}

pub fn not_found(name: &str) -> StoreError {
    StoreError::not_found(format!("integration {name:?} not found"))
}

fn standing(row: &Row, at: CallerCols) -> Result<Standing, DbError> {
    let member: Option<String> = row.col(at.member)?;
    Ok(Standing::from_member_columns(
        member.as_deref(),
        row.col(at.disabled)?,
        row.col(at.role)?,
    ))
}

/// Loads an integration by name with the caller's standing in its owner; None when absent.
pub fn load_for(c: &mut dyn Conn, name: &str, user_id: &str) -> Result<Option<IntegrationFor>, DbError> {
    let sql = format!(
        "SELECT {}, {} FROM integrations t
         LEFT JOIN members m ON m.organization_id = t.organization_id AND m.user_id = ?2
         WHERE t.name = ?1",
        IntegrationCols::SQL,
        CallerCols::SQL
    );
    let Some(row) = c.query_opt(&sql, crate::params![name, user_id])? else {
        return Ok(None);
    };
    Ok(Some(IntegrationFor {
        integration: Integration::from_row(&row)?,
        owner: standing(&row, CallerCols::at(IntegrationCols::COUNT))?,
    }))
}

/// Loads an integration the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, name: &str, user_id: &str) -> StoreResult<IntegrationFor> {
    match load_for(c, name, user_id)? {
        Some(found) if found.allows(IntegrationAction::View) => Ok(found),
        _ => Err(not_found(name)),
    }
}

/// Loads an integration by id, whoever asks (delivery).
pub fn load_by_id(c: &mut dyn Conn, id: &str) -> Result<Option<Integration>, DbError> {
    let sql = format!(
        "SELECT {} FROM integrations t WHERE t.id = ?1",
        IntegrationCols::SQL
    );
    c.query_opt(&sql, crate::params![id])?
        .map(|row| Integration::from_row(&row))
        .transpose()
}

/// An installation of an integration in an organization.
#[derive(Clone, Debug)]
pub struct Installation {
    pub id: String,
    pub integration_id: String,
    pub org_id: String,
    pub status: InstallationStatus,
    pub space_selection: Selection,
    pub site_selection: Selection,
    pub configuration: Json,
    pub external_ids: Vec<String>,
    /// How many spaces it is enabled on.
    pub spaces: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::columns! {
    /// The columns [`Installation::from_row`] reads, with the table aliased `i`.
    pub struct InstallationCols of "integration_installations" {
        id: "i.id",
        integration_id: "i.integration_id",
        org_id: "i.organization_id",
        status: "i.status",
        space_selection: "i.space_selection",
        site_selection: "i.site_selection",
        configuration: "i.configuration",
        external_ids: "i.external_ids",
        spaces: "(SELECT count(*) FROM integration_space_installations b WHERE b.installation_id = i.id)",
        created_at: "i.created_at",
        updated_at: "i.updated_at",
    }
}

const I: InstallationCols = InstallationCols::AT;

/// External ids as stored: a JSON array of strings.
pub(crate) fn external_ids(row: &Row, col: crate::db::Col, what: &str) -> Result<Vec<String>, DbError> {
    let text: String = row.col(col)?;
    serde_json::from_str(&text).map_err(|e| DbError::stored(format_args!("external ids of {what}"), e))
}

impl Installation {
    pub fn from_row(row: &Row) -> Result<Installation, DbError> {
        let id: String = row.col(I.id)?;
        Ok(Installation {
            integration_id: row.col(I.integration_id)?,
            org_id: row.col(I.org_id)?,
            status: row.col(I.status)?,
            space_selection: row.col(I.space_selection)?,
            site_selection: row.col(I.site_selection)?,
            configuration: row.col(I.configuration)?,
            external_ids: external_ids(row, I.external_ids, &format!("installation {id:?}"))?,
            spaces: row.col(I.spaces)?,
            created_at: row.col(I.created_at)?,
            updated_at: row.col(I.updated_at)?,
            id,
        })
    }
}

/// What names an installation: its integration's name and its id.
#[derive(Clone, Debug)]
pub struct InstallationKey {
    pub integration: String,
    pub installation_id: String,
}

/// An installation with its integration (as the caller sees it) and the caller's standing in
/// the installation's organization.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct InstallationFor {
    pub installation: Installation,
    pub integration: IntegrationFor,
    pub standing: Standing,
}

impl InstallationFor {
    pub fn allows(&self, action: InstallationAction) -> bool {
        installation_allows(
            self.standing,
            self.integration.allows(IntegrationAction::Admin),
            action,
        )
    }

    pub fn authorize<A: Action<InstallationAction>>(self) -> StoreResult<Authorized<InstallationFor, A>> {
        if !self.allows(InstallationAction::View) {
            return Err(installation_not_found(&self.installation.id));
        }
        if !self.allows(A::ACTION) {
            return Err(role_forbidden(
                A::ACTION.describe(),
                crate::permissions::Role::Admin,
                &format!(
                    "in the organization of installation {:?} or the one that owns integration {:?}",
                    self.installation.id, self.integration.integration.name
                ),
                self.standing.role(),
            ));
        }
        Ok(Authorized::granted(self))
    }

    pub(crate) fn made(
        installation: Installation,
        integration: IntegrationFor,
        standing: Standing,
    ) -> InstallationFor {
        InstallationFor {
            installation,
            integration,
            standing,
        }
    }
}

pub fn installation_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("installation {id:?} not found"))
}

/// Loads an installation the caller may see, or 404.
pub fn load_installation(
    c: &mut dyn Conn,
    key: &InstallationKey,
    user_id: &str,
) -> StoreResult<InstallationFor> {
    let integration = load_visible(c, &key.integration, user_id)?;
    let sql = format!(
        "SELECT {}, {} FROM integration_installations i
         LEFT JOIN members m ON m.organization_id = i.organization_id AND m.user_id = ?3
         WHERE i.id = ?1 AND i.integration_id = ?2",
        InstallationCols::SQL,
        CallerCols::SQL
    );
    let row = c
        .query_opt(
            &sql,
            crate::params![
                key.installation_id.clone(),
                integration.integration.id.clone(),
                user_id
            ],
        )?
        .ok_or_else(|| installation_not_found(&key.installation_id))?;
    let found = InstallationFor {
        installation: Installation::from_row(&row)?,
        standing: standing(&row, CallerCols::at(InstallationCols::COUNT))?,
        integration,
    };
    if !found.allows(InstallationAction::View) {
        return Err(installation_not_found(&key.installation_id));
    }
    Ok(found)
}

/// Loads an installation by id, whoever asks (delivery, tokens).
pub fn load_installation_by_id(c: &mut dyn Conn, id: &str) -> Result<Option<Installation>, DbError> {
    let sql = format!(
        "SELECT {} FROM integration_installations i WHERE i.id = ?1",
        InstallationCols::SQL
    );
    c.query_opt(&sql, crate::params![id])?
        .map(|row| Installation::from_row(&row))
        .transpose()
}
