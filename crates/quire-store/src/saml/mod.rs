//! SAML single sign-on: the identity providers an organization trusts (`providers` here), what
//! the service-provider side shows an identity provider's administrator (`metadata.rs`), a
//! sign-in's start (`requests`) and its end: the response checked (`response`, `signature`,
//! `c14n`) and turned into a member and a session (`signin`).

mod c14n;
pub mod certificate;
pub mod metadata;
pub mod refusal;
pub mod requests;
pub mod response;
mod signature;
pub mod signin;

use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, Role, org};
use crate::teams::{self, Team};
use crate::{clock, ids, params, validate};

/// The bytes of base64 text as SAML and PEM write it, broken across lines: ASCII whitespace is
/// skipped (the base64 crate refuses it).
pub(crate) fn base64_spaced(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::Engine as _;
    let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD.decode(compact)
}

/// How many providers an organization may have: each is a way in, and a sign-in page lists
/// them all.
pub const MAX_PROVIDERS: i64 = 20;
/// GitBook's limits on the fields.
pub const MAX_LABEL_CHARS: usize = 30;
pub const MAX_ENTITY_ID_CHARS: usize = 1024;

/// A provider as stored, with its default team as the caller sees it.
#[derive(Clone, Debug)]
pub struct Provider {
    pub id: String,
    pub org_id: String,
    pub label: String,
    /// '' until set, as `sso_url` and `certificate`.
    pub entity_id: String,
    pub sso_url: String,
    pub certificate: String,
    pub default_team_id: Option<String>,
    pub default_team: Option<Team>,
    /// None: the people it signs in join as guests.
    pub default_role: Option<Role>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Provider {
    /// Whether it can sign people in: GitBook's `active`, else `pending`.
    pub fn is_active(&self) -> bool {
        !self.entity_id.is_empty() && !self.sso_url.is_empty() && !self.certificate.is_empty()
    }
}

crate::columns! {
    /// The columns [`Provider::from_row`] reads.
    struct ProviderCols of "saml_providers" {
        id: "id",
        org_id: "organization_id",
        label: "label",
        entity_id: "entity_id",
        sso_url: "sso_url",
        certificate: "certificate",
        default_team_id: "default_team_id",
        default_role: "default_role",
        created_at: "created_at",
        updated_at: "updated_at",
    }
}

const COLUMNS: &str = ProviderCols::SQL;
const C: ProviderCols = ProviderCols::AT;

impl Provider {
    fn from_row(row: &Row) -> Result<Provider, DbError> {
        Ok(Provider {
            id: row.col(C.id)?,
            org_id: row.col(C.org_id)?,
            label: row.col(C.label)?,
            entity_id: row.col(C.entity_id)?,
            sso_url: row.col(C.sso_url)?,
            certificate: row.col(C.certificate)?,
            default_team_id: row.col(C.default_team_id)?,
            default_team: None,
            default_role: row.col(C.default_role)?,
            created_at: row.col(C.created_at)?,
            updated_at: row.col(C.updated_at)?,
        })
    }
}

fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("SAML provider {id:?} not found"))
}

/// The provider `id` of the organization (any caller: the sign-in flow has no caller yet).
pub fn load(c: &mut dyn Conn, org_id: &str, id: &str) -> StoreResult<Provider> {
    c.query_opt(
        &format!("SELECT {COLUMNS} FROM saml_providers WHERE id = ?1 AND organization_id = ?2"),
        params![id, org_id],
    )?
    .map(|r| Provider::from_row(&r))
    .transpose()?
    .ok_or_else(|| not_found(id))
}

/// Fills in the default teams of `providers` as `caller` sees them, in one query.
fn with_teams(c: &mut dyn Conn, caller: &str, providers: &mut [Provider]) -> StoreResult<()> {
    let mut ids: Vec<String> = providers
        .iter()
        .filter_map(|p| p.default_team_id.clone())
        .collect();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Ok(());
    }
    let mut args = Args::default();
    let me = args.arg(caller);
    let list = ids.iter().map(|id| args.arg(id)).collect::<Vec<_>>().join(", ");
    let sql = format!("{} WHERE t.id IN ({list})", teams::select(&me, ""));
    let found = c
        .query(&sql, args.values())?
        .iter()
        .map(Team::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    for p in providers.iter_mut() {
        p.default_team = p
            .default_team_id
            .as_ref()
            .and_then(|id| found.iter().find(|t| &t.id == id).cloned());
    }
    Ok(())
}

/// One provider of the organization, for its administrators.
pub fn get(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    id: &str,
) -> StoreResult<Provider> {
    let mut provider = load(c, &org.org.id, id)?;
    with_teams(c, caller, std::slice::from_mut(&mut provider))?;
    Ok(provider)
}

/// The organization's providers, oldest first.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    paging: &Paging,
) -> StoreResult<List<Provider>> {
    let page = Page::new(paging, format!("saml:{}", org.org.id))?;
    let mut args = Args::default();
    let filter = format!(" WHERE organization_id = {}", args.arg(&org.org.id));
    let mut list = crate::paging::by_creation(
        c,
        &page,
        ("saml_providers", COLUMNS),
        (filter, args),
        Provider::from_row,
        |p| (p.created_at, p.id.clone()),
    )?;
    with_teams(c, caller, &mut list.items)?;
    Ok(list)
}

/// The providers people can sign in with (the `active` ones), oldest first: the organization's
/// sign-in choices. Bounded by [`MAX_PROVIDERS`].
pub fn logins(c: &mut dyn Conn, org: &Authorized<OrgFor, org::View>) -> StoreResult<Vec<Provider>> {
    let rows = c.query(
        &format!(
            "SELECT {COLUMNS} FROM saml_providers WHERE organization_id = ?1
             ORDER BY created_at, id"
        ),
        params![org.org.id.clone()],
    )?;
    let providers = rows
        .iter()
        .map(Provider::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(providers.into_iter().filter(Provider::is_active).collect())
}

/// How many of the organization's providers can sign people in.
pub fn active_count(c: &mut dyn Conn, org_id: &str) -> StoreResult<i64> {
    Ok(c.query_scalar(
        "SELECT count(*) FROM saml_providers WHERE organization_id = ?1
                 AND entity_id <> '' AND sso_url <> '' AND certificate <> ''",
        params![org_id],
    )?
    .unwrap_or(0))
}

/// What a create or an update sets, each field checked ([`Fields::check`]).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub label: Option<String>,
    pub entity_id: Option<String>,
    pub sso_url: Option<String>,
    /// The PEM the certificate is stored as.
    pub certificate: Option<String>,
    /// Some(None) clears it.
    pub default_team: Option<Option<String>>,
    /// Some(None): guests.
    pub default_role: Option<Option<Role>>,
}

/// The fields of a create or update body, as sent.
#[derive(Clone, Debug, Default)]
pub struct Fields {
    pub label: Option<String>,
    pub entity_id: Option<String>,
    pub sso_url: Option<String>,
    pub certificate: Option<String>,
    pub default_team: Patch<String>,
    pub default_role: Patch<String>,
}

impl Fields {
    /// Checks every field without the database (the team is checked in the transaction): 400
    /// naming the field.
    pub fn check(self, now_ms: i64) -> StoreResult<Changes> {
        let label = self
            .label
            .map(|l| validate::title("label", &l, 1, MAX_LABEL_CHARS))
            .transpose()?;
        let entity_id = self.entity_id.map(|e| entity_id(&e)).transpose()?;
        let sso_url = self
            .sso_url
            .map(|u| validate::url("ssoURL", &u).map(|_| u))
            .transpose()?;
        let certificate = self
            .certificate
            .map(|t| certificate::parse(&t, now_ms).map(|cert| cert.pem))
            .transpose()?;
        let default_role = match self.default_role {
            Patch::Absent => None,
            Patch::Null => Some(None),
            Patch::Value(r) => Some(Some(Role::parse_field("defaultRole", &r)?)),
        };
        Ok(Changes {
            label,
            entity_id,
            sso_url,
            certificate,
            default_team: self.default_team.into_update(),
            default_role,
        })
    }
}

/// An entity id is a URI (a URL or a URN) of at most 1024 characters.
fn entity_id(value: &str) -> StoreResult<String> {
    validate::no_control("entityID", value)?;
    validate::max_len("entityID", value, MAX_ENTITY_ID_CHARS)?;
    url::Url::parse(value)
        .map_err(|e| StoreError::invalid(format!("`entityID` must be a URI (a URL or a URN): {e}")))?;
    Ok(value.to_string())
}

/// 400 unless `team` is a team of the organization.
fn check_team(c: &mut dyn Conn, org_id: &str, team: &str) -> StoreResult<()> {
    let found = c.exists(
        "SELECT 1 FROM teams WHERE id = ?1 AND organization_id = ?2",
        params![team, org_id],
    )?;
    if !found {
        return Err(StoreError::invalid(format!(
            "`defaultTeam` {team:?} is not a team of this organization"
        )));
    }
    Ok(())
}

/// Creates a provider; `label` is required. Without `defaultRole` the people it signs in are
/// readers.
pub fn create(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    changes: &Changes,
) -> StoreResult<Provider> {
    let org_id = &org.org.id;
    let label = changes
        .label
        .clone()
        .ok_or_else(|| StoreError::invalid("`label` is required"))?;
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM saml_providers WHERE organization_id = ?1",
            params![org_id.clone()],
        )?
        .unwrap_or(0);
    if count >= MAX_PROVIDERS {
        return Err(StoreError::invalid(format!(
            "an organization has at most {MAX_PROVIDERS} SAML providers"
        )));
    }
    let team = changes.default_team.clone().flatten();
    if let Some(team) = &team {
        check_team(c, org_id, team)?;
    }
    let role = changes.default_role.unwrap_or(Some(Role::Read));
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO saml_providers (id, organization_id, label, entity_id, sso_url, certificate,
             default_team_id, default_role, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
        params![
            id.clone(),
            org_id.clone(),
            label,
            changes.entity_id.clone().unwrap_or_default(),
            changes.sso_url.clone().unwrap_or_default(),
            changes.certificate.clone().unwrap_or_default(),
            team,
            role.map(Role::as_str),
            now
        ],
    )?;
    get(c, org, caller, &id)
}

/// Changes the fields `changes` sets.
pub fn update(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    caller: &str,
    id: &str,
    changes: &Changes,
) -> StoreResult<Provider> {
    let mut p = load(c, &org.org.id, id)?;
    if let Some(Some(team)) = &changes.default_team {
        check_team(c, &org.org.id, team)?;
    }
    let Changes {
        label,
        entity_id,
        sso_url,
        certificate,
        default_team,
        default_role,
    } = changes.clone();
    p.label = label.unwrap_or(p.label);
    p.entity_id = entity_id.unwrap_or(p.entity_id);
    p.sso_url = sso_url.unwrap_or(p.sso_url);
    p.certificate = certificate.unwrap_or(p.certificate);
    p.default_team_id = default_team.unwrap_or(p.default_team_id);
    p.default_role = default_role.unwrap_or(p.default_role);
    c.execute(
        "UPDATE saml_providers SET label = ?2, entity_id = ?3, sso_url = ?4, certificate = ?5,
             default_team_id = ?6, default_role = ?7, updated_at = ?8
         WHERE id = ?1",
        params![
            p.id.clone(),
            p.label.clone(),
            p.entity_id.clone(),
            p.sso_url.clone(),
            p.certificate.clone(),
            p.default_team_id.clone(),
            p.default_role.map(Role::as_str),
            clock::now_ms()
        ],
    )?;
    get(c, org, caller, id)
}

/// Deletes a provider (nothing when there is none). People it signed in stay members.
pub fn delete(c: &mut dyn Conn, org: &Authorized<OrgFor, org::Admin>, id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM saml_providers WHERE id = ?1 AND organization_id = ?2",
        params![id, org.org.id.clone()],
    )?;
    Ok(())
}
