//! Installations of an integration in organizations: install, list, configure, uninstall. Each
//! change the integration should hear of makes its event in the same transaction
//! (`installation_setup`, `installation_deleted`).

use serde_json::{Map, Value as Json, json};

use super::events::{self, NewEvent};
use super::model::{
    Installation, InstallationCols, InstallationFor, InstallationStatus, IntegrationFor, Selection,
    Visibility,
};
use crate::db::{Args, Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, installation, integration, org};
use crate::{clock, ids, params};

/// At most this many external ids (GitBook's `IntegrationInstallationExternalIds`), each of at
/// most [`EXTERNAL_ID_MAX`] characters.
pub const EXTERNAL_IDS_MAX: usize = 5;
pub const EXTERNAL_ID_MAX: usize = 200;
/// A configuration's JSON is at most this many bytes.
pub const CONFIGURATION_MAX_BYTES: usize = 64 * 1024;

pub fn check_external_ids(ids: &[String]) -> StoreResult<()> {
    if ids.len() > EXTERNAL_IDS_MAX {
        return Err(StoreError::invalid(format!(
            "`externalIds` has at most {EXTERNAL_IDS_MAX} ids"
        )));
    }
    for id in ids {
        crate::validate::name("externalIds", id, EXTERNAL_ID_MAX)?;
    }
    Ok(())
}

pub fn check_configuration(configuration: &Json) -> StoreResult<()> {
    if !configuration.is_object() {
        return Err(StoreError::invalid("`configuration` must be an object"));
    }
    if configuration.to_string().len() > CONFIGURATION_MAX_BYTES {
        return Err(StoreError::too_large(format!(
            "`configuration` is at most {CONFIGURATION_MAX_BYTES} bytes of JSON"
        )));
    }
    Ok(())
}

fn load_by_id(c: &mut dyn Conn, id: &str) -> Result<Installation, StoreError> {
    super::model::load_installation_by_id(c, id)?.ok_or_else(|| super::model::installation_not_found(id))
}

/// Installs the integration in an organization (its admins'); 409 when it is installed there.
/// A private integration installs only in its owner organization.
pub fn install(
    c: &mut dyn Conn,
    found: &IntegrationFor,
    org: &Authorized<OrgFor, org::InstallIntegration>,
    caller: Option<&str>,
) -> StoreResult<InstallationFor> {
    let integration = &found.integration;
    if integration.visibility == Visibility::Private && integration.org_id != org.org.id {
        return Err(StoreError::forbidden(format!(
            "integration {:?} is private: it installs only in the organization that owns it",
            integration.name
        )));
    }
    let exists = c.exists(
        "SELECT 1 FROM integration_installations WHERE integration_id = ?1 AND organization_id = ?2",
        params![integration.id.clone(), org.org.id.clone()],
    )?;
    if exists {
        return Err(StoreError::conflict(format!(
            "integration {:?} is installed in organization {:?} already",
            integration.name, org.org.id
        )));
    }
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO integration_installations (id, integration_id, organization_id, status, space_selection,
             site_selection, configuration, external_ids, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'active', 'selected', 'selected', '{}', '[]', ?4, ?4)",
        params![id.clone(), integration.id.clone(), org.org.id.clone(), now],
    )?;
    events::create(
        c,
        NewEvent {
            integration_id: &integration.id,
            installation_id: Some(&id),
            organization_id: &org.org.id,
            source_id: None,
            kind: "installation_setup",
            fields: fields(json!({"status": "active"})),
        },
    )?;
    let installed = load_by_id(c, &id)?;
    super::tokens::sync(c, &installed, &integration.title, &integration.scopes)?;
    crate::events::record(
        c,
        crate::events::Event::in_org(
            &org.org.id,
            &id,
            caller,
            crate::events::IntegrationInstalled {
                integration_id: &integration.id,
                installation_id: &id,
                name: &integration.name,
            },
        ),
    )?;
    Ok(InstallationFor::made(installed, found.clone(), org.standing))
}

pub(crate) fn fields(value: Json) -> Map<String, Json> {
    match value {
        Json::Object(map) => map,
        _ => Map::new(),
    }
}

/// The integration's installations, oldest first, optionally those with an external id.
pub fn list(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    external_id: Option<&str>,
    paging: &Paging,
) -> StoreResult<List<Installation>> {
    let page = Page::new(paging, format!("installations:{}", found.integration.id))?;
    let mut args = Args::default();
    let mut filter = format!(
        " WHERE i.integration_id = {}",
        args.arg(found.integration.id.clone())
    );
    if let Some(external) = external_id {
        filter += &format!(
            " AND {}",
            super::has_external_id(&mut args, "i.external_ids", external)
        );
    }
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM integration_installations i{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!(
        "SELECT {} FROM integration_installations i{filter}",
        InstallationCols::SQL
    );
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (i.created_at, i.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY i.created_at, i.id LIMIT {}", args.arg(page.fetch()));
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(Installation::from_row)
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(rows, u64::try_from(count).unwrap_or(0), |i| {
        (i.created_at, i.id.clone())
    }))
}

/// What an installation update changes (each None: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Update {
    pub external_ids: Option<Vec<String>>,
    pub configuration: Option<Json>,
    pub space_selection: Option<Selection>,
    pub site_selection: Option<Selection>,
}

impl Update {
    pub fn check(&self) -> StoreResult<()> {
        if let Some(ids) = &self.external_ids {
            check_external_ids(ids)?;
        }
        if let Some(configuration) = &self.configuration {
            check_configuration(configuration)?;
        }
        Ok(())
    }
}

/// Updates an installation; a changed configuration or selection makes an
/// `installation_setup` event with the previous status and configuration.
pub fn update(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Manage>,
    update: &Update,
) -> StoreResult<Installation> {
    update.check()?;
    let before = &found.installation;
    let external_ids = update
        .external_ids
        .clone()
        .unwrap_or_else(|| before.external_ids.clone());
    let configuration = update
        .configuration
        .clone()
        .unwrap_or_else(|| before.configuration.clone());
    let space_selection = update.space_selection.unwrap_or(before.space_selection);
    let site_selection = update.site_selection.unwrap_or(before.site_selection);
    let now = clock::now_ms();
    c.execute(
        "UPDATE integration_installations SET external_ids = ?2, configuration = ?3, space_selection = ?4,
             site_selection = ?5, updated_at = ?6 WHERE id = ?1",
        params![
            before.id.clone(),
            serde_json::to_string(&external_ids).map_err(|e| StoreError::internal(e.to_string()))?,
            configuration.to_string(),
            space_selection.as_str(),
            site_selection.as_str(),
            now
        ],
    )?;
    let setup_changed = configuration != before.configuration
        || space_selection != before.space_selection
        || site_selection != before.site_selection;
    if setup_changed {
        events::create(
            c,
            NewEvent {
                integration_id: &before.integration_id,
                installation_id: Some(&before.id),
                organization_id: &before.org_id,
                source_id: None,
                kind: "installation_setup",
                fields: fields(json!({
                    "status": before.status.as_str(),
                    "previous": {"status": before.status.as_str(), "configuration": before.configuration},
                })),
            },
        )?;
    }
    let after = load_by_id(c, &before.id)?;
    let integration = &found.integration.integration;
    super::tokens::sync(c, &after, &integration.title, &integration.scopes)?;
    Ok(after)
}

/// Uninstalls: the installation and its space and site bindings go; the integration hears
/// `installation_deleted`.
pub fn uninstall(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Manage>,
    caller: &str,
) -> StoreResult<()> {
    let before = &found.installation;
    events::create(
        c,
        NewEvent {
            integration_id: &before.integration_id,
            installation_id: Some(&before.id),
            organization_id: &before.org_id,
            source_id: None,
            kind: "installation_deleted",
            fields: fields(json!({"previous": {"configuration": before.configuration}})),
        },
    )?;
    c.execute(
        "DELETE FROM integration_installations WHERE id = ?1",
        params![before.id.clone()],
    )?;
    super::tokens::remove(c, &before.id)?;
    let integration = &found.integration.integration;
    crate::events::record(
        c,
        crate::events::Event::in_org(
            &before.org_id,
            &before.id,
            Some(caller),
            crate::events::IntegrationUninstalled {
                integration_id: &integration.id,
                installation_id: &before.id,
                name: &integration.name,
            },
        ),
    )?;
    Ok(())
}

/// Whether an installation is active (events go only to active ones).
pub fn is_active(status: InstallationStatus) -> bool {
    status == InstallationStatus::Active
}
