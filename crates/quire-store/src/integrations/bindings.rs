//! An installation enabled on a space or a site (GitBook's space and site installations):
//! enable, list, configure, disable. Spaces and sites are handled alike, by [`On`].

use serde_json::{Value as Json, json};

use super::events::{self, NewEvent};
use super::installations::{check_configuration, check_external_ids, fields};
use super::model::{InstallationFor, InstallationStatus, IntegrationFor};
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, installation, integration};
use crate::{clock, params};

/// What an installation is enabled on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    Space,
    Site,
}

impl On {
    fn table(self) -> &'static str {
        match self {
            On::Space => "integration_space_installations",
            On::Site => "integration_site_installations",
        }
    }

    fn column(self) -> &'static str {
        match self {
            On::Space => "space_id",
            On::Site => "site_id",
        }
    }

    pub fn noun(self) -> &'static str {
        match self {
            On::Space => "space",
            On::Site => "site",
        }
    }

    /// The event its setup makes, and the payload field that names it.
    fn setup_event(self) -> (&'static str, &'static str) {
        match self {
            On::Space => ("space_installation_setup", "spaceId"),
            On::Site => ("site_installation_setup", "siteId"),
        }
    }

    fn deleted_event(self) -> &'static str {
        match self {
            On::Space => "space_installation_deleted",
            On::Site => "site_installation_deleted",
        }
    }
}

/// An installation enabled on a space or site.
#[derive(Clone, Debug)]
pub struct Binding {
    pub installation_id: String,
    /// The installation's organization (the space's or site's).
    pub org_id: String,
    /// The space's or site's id.
    pub target: String,
    pub status: InstallationStatus,
    pub configuration: Json,
    pub external_ids: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

const COLUMNS: &str = "b.installation_id, b.target, b.status, b.configuration, b.external_ids, \
     b.created_at, b.updated_at, i.organization_id";

fn select(on: On) -> String {
    COLUMNS.replace("b.target", &format!("b.{} AS target", on.column()))
}

impl Binding {
    fn from_row(row: &Row) -> Result<Binding, DbError> {
        let text: String = row.get(4)?;
        let ids = serde_json::from_str(&text)
            .map_err(|e| DbError::stored("external ids of a space or site installation", e))?;
        Ok(Binding {
            installation_id: row.get(0)?,
            target: row.get(1)?,
            status: row.get(2)?,
            configuration: row.get(3)?,
            external_ids: ids,
            created_at: row.get(5)?,
            updated_at: row.get(6)?,
            org_id: row.get(7)?,
        })
    }
}

fn not_found(on: On, id: &str) -> StoreError {
    StoreError::not_found(format!("the installation is not enabled on {} {id:?}", on.noun()))
}

/// One binding of the installation; 404 when it is not enabled there.
pub fn get(c: &mut dyn Conn, found: &InstallationFor, on: On, target: &str) -> StoreResult<Binding> {
    find(c, &found.installation.id, on, target)?.ok_or_else(|| not_found(on, target))
}

/// The installation's binding to a space or site, if it is enabled there (whoever asks: a
/// script's environment).
pub fn find(
    c: &mut dyn Conn,
    installation_id: &str,
    on: On,
    target: &str,
) -> Result<Option<Binding>, DbError> {
    c.query_opt(
        &format!(
            "SELECT {} FROM {} b JOIN integration_installations i ON i.id = b.installation_id
             WHERE b.installation_id = ?1 AND b.{} = ?2",
            select(on),
            on.table(),
            on.column()
        ),
        params![installation_id, target],
    )?
    .map(|r| Binding::from_row(&r))
    .transpose()
}

/// Enables the installation on a space or site of its organization: the caller has proved
/// they may install integrations there (`space::InstallIntegration`, `site::Admin`); 409 when
/// it is enabled there already.
pub fn enable(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Manage>,
    on: On,
    target: &str,
    target_org: &str,
) -> StoreResult<Binding> {
    let inst = &found.installation;
    if target_org != inst.org_id {
        return Err(StoreError::invalid(format!(
            "{} {target:?} is not in the installation's organization",
            on.noun()
        )));
    }
    let now = clock::now_ms();
    let inserted = c.execute(
        &format!(
            "INSERT INTO {} (installation_id, {}, status, configuration, external_ids, created_at, updated_at)
             VALUES (?1, ?2, 'active', '{{}}', '[]', ?3, ?3) ON CONFLICT DO NOTHING",
            on.table(),
            on.column()
        ),
        params![inst.id.clone(), target, now],
    )?;
    if inserted == 0 {
        return Err(StoreError::conflict(format!(
            "the installation is enabled on {} {target:?} already",
            on.noun()
        )));
    }
    resync(c, found)?;
    let (kind, field) = on.setup_event();
    let mut payload = fields(json!({"status": "active"}));
    payload.insert(field.into(), Json::String(target.into()));
    events::create(
        c,
        NewEvent {
            integration_id: &inst.integration_id,
            installation_id: Some(&inst.id),
            organization_id: &inst.org_id,
            source_id: None,
            kind,
            fields: payload,
        },
    )?;
    get(c, found, on, target)
}

/// Keeps the installation's bot (`tokens`) in step with the spaces it is enabled on.
fn resync(c: &mut dyn Conn, found: &InstallationFor) -> StoreResult<()> {
    let integration = &found.integration.integration;
    super::tokens::sync(c, &found.installation, &integration.title, &integration.scopes)
}

/// Changes a binding's configuration or external ids; a changed configuration makes a setup
/// event with the previous one.
pub fn update(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Manage>,
    on: On,
    target: &str,
    external: Option<&[String]>,
    configuration: Option<&Json>,
) -> StoreResult<Binding> {
    if let Some(ids) = external {
        check_external_ids(ids)?;
    }
    if let Some(configuration) = configuration {
        check_configuration(configuration)?;
    }
    let before = get(c, found, on, target)?;
    let ids = external
        .map(<[String]>::to_vec)
        .unwrap_or_else(|| before.external_ids.clone());
    let new_configuration = configuration
        .cloned()
        .unwrap_or_else(|| before.configuration.clone());
    c.execute(
        &format!(
            "UPDATE {} SET configuration = ?3, external_ids = ?4, updated_at = ?5
             WHERE installation_id = ?1 AND {} = ?2",
            on.table(),
            on.column()
        ),
        params![
            found.installation.id.clone(),
            target,
            new_configuration.to_string(),
            serde_json::to_string(&ids).map_err(|e| StoreError::internal(e.to_string()))?,
            clock::now_ms()
        ],
    )?;
    if new_configuration != before.configuration {
        let (kind, field) = on.setup_event();
        let mut payload = fields(json!({
            "status": before.status.as_str(),
            "previous": {"status": before.status.as_str(), "configuration": before.configuration},
        }));
        payload.insert(field.into(), Json::String(target.into()));
        let inst = &found.installation;
        events::create(
            c,
            NewEvent {
                integration_id: &inst.integration_id,
                installation_id: Some(&inst.id),
                organization_id: &inst.org_id,
                source_id: None,
                kind,
                fields: payload,
            },
        )?;
    }
    get(c, found, on, target)
}

/// Disables the installation on a space or site (204 whether or not it was enabled there).
pub fn disable(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Manage>,
    on: On,
    target: &str,
) -> StoreResult<()> {
    let Ok(before) = get(c, found, on, target) else {
        return Ok(());
    };
    c.execute(
        &format!(
            "DELETE FROM {} WHERE installation_id = ?1 AND {} = ?2",
            on.table(),
            on.column()
        ),
        params![found.installation.id.clone(), target],
    )?;
    resync(c, found)?;
    let mut payload = fields(json!({"previous": {"configuration": before.configuration}}));
    payload.insert(on.setup_event().1.into(), Json::String(target.into()));
    let inst = &found.installation;
    events::create(
        c,
        NewEvent {
            integration_id: &inst.integration_id,
            installation_id: Some(&inst.id),
            organization_id: &inst.org_id,
            source_id: None,
            kind: on.deleted_event(),
            fields: payload,
        },
    )?;
    Ok(())
}

/// Pages bindings matching `filter` (SQL on `b` and `i`, the installation), oldest first.
fn page_of(
    c: &mut dyn Conn,
    on: On,
    scope: String,
    (filter, mut args): (String, Args),
    paging: &Paging,
) -> StoreResult<List<Binding>> {
    let page = Page::new(paging, scope)?;
    let from = format!(
        " FROM {} b JOIN integration_installations i ON i.id = b.installation_id",
        on.table()
    );
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*){from}{filter}"), args.values())?
        .unwrap_or(0);
    let key = format!("b.{}", on.column());
    let mut sql = format!("SELECT {}{from}{filter}", select(on));
    if let Some((created, id, target)) = page.after::<(i64, String, String)>()? {
        sql += &format!(
            " AND (b.created_at, b.installation_id, {key}) > ({}, {}, {})",
            args.arg(created),
            args.arg(id),
            args.arg(target)
        );
    }
    sql += &format!(
        " ORDER BY b.created_at, b.installation_id, {key} LIMIT {}",
        args.arg(page.fetch())
    );
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(Binding::from_row)
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(rows, u64::try_from(count).unwrap_or(0), |b| {
        (b.created_at, b.installation_id.clone(), b.target.clone())
    }))
}

/// The spaces or sites one installation is enabled on.
pub fn list_for_installation(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::View>,
    on: On,
    paging: &Paging,
) -> StoreResult<List<Binding>> {
    let mut args = Args::default();
    let filter = format!(
        " WHERE b.installation_id = {}",
        args.arg(found.installation.id.clone())
    );
    page_of(
        c,
        on,
        format!("{}-installations:{}", on.noun(), found.installation.id),
        (filter, args),
        paging,
    )
}

/// The spaces or sites every installation of the integration is enabled on, optionally those
/// with an external id.
pub fn list_for_integration(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    on: On,
    external_id: Option<&str>,
    paging: &Paging,
) -> StoreResult<List<Binding>> {
    let mut args = Args::default();
    let mut filter = format!(
        " WHERE i.integration_id = {}",
        args.arg(found.integration.id.clone())
    );
    if let Some(external) = external_id {
        filter += &format!(
            " AND {}",
            super::has_external_id(&mut args, "b.external_ids", external)
        );
    }
    page_of(
        c,
        on,
        format!("{}-bindings:{}", on.noun(), found.integration.id),
        (filter, args),
        paging,
    )
}
