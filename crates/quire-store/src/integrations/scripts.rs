//! Running an integration's script: the store decides when (an event with no tunnel or
//! webhook to go to, a block to render, a request to the integration's public endpoint); the
//! HTTP service says how, with [`Scripts`], since the script is given GitBook's wire shapes
//! (its `environment`) and reaches the network through the outbound policy, both of which live
//! there (`quire_server::scripts`). This crate runs no JavaScript.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value as Json;

use super::events::Level;
use crate::Store;
use crate::error::StoreError;

/// A call of an integration's script: the platform's POST with `event`, for the installation
/// and the space or site it concerns.
#[derive(Clone, Debug)]
pub struct ScriptCall {
    pub integration_id: String,
    pub installation_id: Option<String>,
    pub space_id: Option<String>,
    pub site_id: Option<String>,
    /// The event as GitBook's runtime reads it (`eventId`, `type`, ...).
    pub event: Json,
    /// The raw body of a request to the public endpoint (the form's `fetch-body`).
    pub fetch_body: Option<bytes::Bytes>,
}

/// What the script answered.
#[derive(Clone, Debug)]
pub struct ScriptAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: bytes::Bytes,
}

/// A call's answer, or why there is none (a limit, an exception), with the script's console.
#[derive(Clone, Debug)]
pub struct ScriptOutcome {
    pub answer: Result<ScriptAnswer, String>,
    pub logs: Vec<(Level, String)>,
    /// Time spent running the script's code.
    pub cpu_ms: u64,
}

pub type ScriptFuture<'a> = Pin<Box<dyn Future<Output = Result<ScriptOutcome, StoreError>> + Send + 'a>>;

/// Runs integration scripts.
pub trait Scripts: Send + Sync {
    /// Runs `call`; Err when the call could not be made at all (the integration is gone, its
    /// script is empty), which the caller reports as it reports a missing endpoint.
    fn call<'a>(&'a self, store: &'a Store, call: ScriptCall) -> ScriptFuture<'a>;
}

/// For a store that runs no scripts (tools and tests of this crate).
pub struct NoScripts;

impl Scripts for NoScripts {
    fn call<'a>(&'a self, _: &'a Store, _: ScriptCall) -> ScriptFuture<'a> {
        Box::pin(async { Err(StoreError::invalid("this quire runs no integration scripts")) })
    }
}

/// What a script's environment is made of, read in one transaction.
#[derive(Clone, Debug)]
pub struct ScriptContext {
    pub integration: super::Integration,
    /// The hash of the script's blob (in the integration's namespace).
    pub script: String,
    /// The integration's secrets, opened.
    pub secrets: std::collections::BTreeMap<String, String>,
    pub signing_secret: String,
    pub installation: Option<super::Installation>,
    /// The installation's space or site installation the call concerns.
    pub binding: Option<(super::bindings::On, super::bindings::Binding)>,
}

/// Loads what `call` runs with: 404 when the integration is gone, or the installation is not
/// one of its installations.
pub fn context(
    c: &mut dyn crate::db::Conn,
    key: &super::secrets::SecretsKey,
    call: &ScriptCall,
) -> crate::error::StoreResult<ScriptContext> {
    use super::bindings::On;
    let integration = super::model::load_by_id(c, &call.integration_id)?
        .ok_or_else(|| StoreError::not_found("the integration was unpublished"))?;
    let row = c
        .query_opt(
            "SELECT script, secrets FROM integrations WHERE id = ?1",
            crate::params![integration.id.clone()],
        )?
        .ok_or_else(|| StoreError::not_found("the integration was unpublished"))?;
    let script: String = row.get(0)?;
    let sealed: Option<String> = row.get(1)?;
    let secrets = match sealed {
        Some(sealed) if !sealed.is_empty() => serde_json::from_slice(&key.open(&sealed)?)
            .map_err(|e| StoreError::internal(format!("the integration's secrets do not read back: {e}")))?,
        _ => Default::default(),
    };
    let signing_secret = super::signing_secret_of(c, key, &integration.id)?;
    let installation = match &call.installation_id {
        None => None,
        Some(id) => Some(
            super::model::load_installation_by_id(c, id)?
                .filter(|i| i.integration_id == integration.id)
                .ok_or_else(|| super::model::installation_not_found(id))?,
        ),
    };
    let binding = match (&installation, &call.space_id, &call.site_id) {
        (Some(inst), Some(space), _) => {
            super::bindings::find(c, &inst.id, On::Space, space)?.map(|b| (On::Space, b))
        }
        (Some(inst), None, Some(site)) => {
            super::bindings::find(c, &inst.id, On::Site, site)?.map(|b| (On::Site, b))
        }
        _ => None,
    };
    Ok(ScriptContext {
        integration,
        script,
        secrets,
        signing_secret,
        installation,
        binding,
    })
}

/// Where a component renders: the installation whose script renders it, and the space or site
/// of the ContentKit context.
#[derive(Clone, Debug)]
pub struct RenderTarget {
    pub integration_id: String,
    pub version: i64,
    pub installation_id: String,
    pub space_id: Option<String>,
    pub site_id: Option<String>,
}

/// What a ContentKit context renders in: its space, else its site, else its organization.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RenderScope {
    Space(String),
    Site(String),
    Organization(String),
}

impl RenderScope {
    /// The scope `context` (GitBook's `ContentKitContext`) names; 400 when it names none.
    pub fn of(context: &Json) -> crate::error::StoreResult<RenderScope> {
        let text = |key: &str| context.get(key).and_then(Json::as_str).map(str::to_string);
        if let Some(id) = text("spaceId") {
            Ok(RenderScope::Space(id))
        } else if let Some(id) = text("siteId") {
            Ok(RenderScope::Site(id))
        } else if let Some(id) = text("organizationId") {
            Ok(RenderScope::Organization(id))
        } else {
            Err(StoreError::invalid(
                "`context` names no space (`spaceId`), site (`siteId`) or organization (`organizationId`)",
            ))
        }
    }
}

/// Render targets with their callers, kept while the database has not changed (`stamped`):
/// a cached render is answered from memory, and without this the authorization before it was
/// most of its cost (bench/ANALYSIS.md, the `scripts` phase).
pub struct RenderTargets {
    /// By (user id, integration name, scope).
    pub(crate) entries: crate::stamped::StampedCache<(String, String, RenderScope), RenderTarget>,
}

impl Default for RenderTargets {
    fn default() -> Self {
        RenderTargets {
            entries: crate::stamped::StampedCache::new(10_000),
        }
    }
}

impl RenderTargets {
    /// As [`render_target`].
    pub async fn resolve(
        &self,
        db: &crate::db::Db,
        user_id: &str,
        name: &str,
        scope: RenderScope,
    ) -> crate::error::StoreResult<RenderTarget> {
        let key = (user_id.to_string(), name.to_string(), scope);
        let (user_id, name, scope) = key.clone();
        let found = self
            .entries
            .get_or_read(db, key, move |c| {
                render_target(c, &user_id, &name, &scope).map(Some)
            })
            .await?;
        found.ok_or_else(|| StoreError::internal("a render target read found nothing"))
    }
}

/// Checks that the caller may render the integration's components in `scope`: they see the
/// integration and the space, site or organization, and the integration is installed there
/// (enabled on that space or site, or on all of them). 404 for what the caller cannot see.
pub fn render_target(
    c: &mut dyn crate::db::Conn,
    user_id: &str,
    name: &str,
    scope: &RenderScope,
) -> crate::error::StoreResult<RenderTarget> {
    let found = super::model::load_visible(c, name, user_id)?;
    let integration = &found.integration;
    let (org_id, space_id, site_id) = match scope {
        RenderScope::Space(space_id) => {
            let space = crate::spaces::model::load_visible(c, space_id, user_id)?;
            (space.space.org_id, Some(space_id.clone()), None)
        }
        RenderScope::Site(site_id) => {
            let org: Option<String> = c.query_scalar(
                "SELECT organization_id FROM sites WHERE id = ?1",
                crate::params![site_id.clone()],
            )?;
            let org = org.ok_or_else(|| crate::sites::model::not_found(site_id))?;
            crate::sites::model::load_visible(c, &org, site_id, user_id)?;
            (org, None, Some(site_id.clone()))
        }
        RenderScope::Organization(org_id) => {
            crate::orgs::load_visible(c, org_id, user_id)?;
            (org_id.clone(), None, None)
        }
    };
    let (selection, table, column, target) = match (&space_id, &site_id) {
        (Some(space), _) => (
            "space_selection",
            "integration_space_installations",
            "space_id",
            space.clone(),
        ),
        (None, Some(site)) => (
            "site_selection",
            "integration_site_installations",
            "site_id",
            site.clone(),
        ),
        (None, None) => (
            "space_selection",
            "integration_space_installations",
            "space_id",
            String::new(),
        ),
    };
    let installation: Option<String> = if target.is_empty() {
        c.query_scalar(
            "SELECT i.id FROM integration_installations i
             WHERE i.integration_id = ?1 AND i.organization_id = ?2 AND i.status = 'active'",
            crate::params![integration.id.clone(), org_id],
        )?
    } else {
        c.query_scalar(
            &format!(
                "SELECT i.id FROM integration_installations i
                 WHERE i.integration_id = ?1 AND i.organization_id = ?2 AND i.status = 'active'
                   AND (i.{selection} = 'all' OR EXISTS (SELECT 1 FROM {table} b
                        WHERE b.installation_id = i.id AND b.{column} = ?3 AND b.status = 'active'))"
            ),
            crate::params![integration.id.clone(), org_id, target],
        )?
    };
    let installation_id = installation.ok_or_else(|| {
        StoreError::not_found(format!(
            "integration {name:?} is not installed on {}",
            match (&space_id, &site_id) {
                (Some(s), _) => format!("space {s:?}"),
                (None, Some(s)) => format!("site {s:?}"),
                (None, None) => "this organization".into(),
            }
        ))
    })?;
    Ok(RenderTarget {
        integration_id: integration.id.clone(),
        version: integration.version,
        installation_id,
        space_id,
        site_id,
    })
}

/// Which installation a request to a public endpoint concerns, checked against the
/// integration, with the integration's `contentSecurityPolicy`: 404 when the integration or
/// the installation (or its binding) is not there.
pub fn endpoint_target(
    c: &mut dyn crate::db::Conn,
    name: &str,
    installation_id: Option<&str>,
    on: Option<(super::bindings::On, &str)>,
) -> crate::error::StoreResult<(ScriptCall, Option<Json>)> {
    let row = c
        .query_opt(
            "SELECT id, definition FROM integrations WHERE name = ?1",
            crate::params![name],
        )?
        .ok_or_else(|| super::model::not_found(name))?;
    let integration_id: String = row.get(0)?;
    let definition: Json = row.get(1)?;
    let csp = definition
        .get("contentSecurityPolicy")
        .filter(|v| !v.is_null())
        .cloned();
    if let Some(id) = installation_id {
        super::model::load_installation_by_id(c, id)?
            .filter(|i| i.integration_id == integration_id)
            .ok_or_else(|| super::model::installation_not_found(id))?;
        if let Some((on, target)) = on {
            super::bindings::find(c, id, on, target)?.ok_or_else(|| {
                StoreError::not_found(format!(
                    "the installation is not enabled on {} {target:?}",
                    on.noun()
                ))
            })?;
        }
    }
    let (space_id, site_id) = match on {
        Some((super::bindings::On::Space, s)) => (Some(s.to_string()), None),
        Some((super::bindings::On::Site, s)) => (None, Some(s.to_string())),
        None => (None, None),
    };
    let call = ScriptCall {
        integration_id,
        installation_id: installation_id.map(str::to_string),
        space_id,
        site_id,
        event: Json::Null,
        fetch_body: None,
    };
    Ok((call, csp))
}
