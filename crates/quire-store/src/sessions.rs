//! Browser sessions: what a finished sign-in opens (the `quire_session` cookie), for the reader
//! site and the session pages. The API itself takes tokens only; a session turns into one on
//! the session page (decision 0087).
//!
//! A session belongs to the organization whose provider signed the person in. Its secret is
//! shown once, in the cookie; the database keeps its SHA-256. Sessions end when they expire,
//! when the person signs out, or when an administrator of the organization revokes them.

use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, org};
use crate::users::{User, UserCols};
use crate::{clock, ids, params};

/// Prefix of every session secret, so that a leaked one is recognisable.
pub const SESSION_PREFIX: &str = "quiresession_";
/// How long a session lasts unless configured otherwise (`--session-ttl`).
pub const DEFAULT_TTL_MS: i64 = 12 * 60 * 60 * 1000;
/// How long the API tokens that a session makes last.
pub const TOKEN_TTL_MS: i64 = 90 * 24 * 60 * 60 * 1000;

/// A session, with its user.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: String,
    pub user: User,
    pub org_id: String,
    pub provider_id: Option<String>,
    pub created_at: i64,
    pub expires_at: i64,
}

crate::columns! {
    /// What a session read takes from the session row, after its user's [`UserCols`].
    struct SessionCols of "sessions" {
        id: "s.id",
        org_id: "s.organization_id",
        provider_id: "s.provider_id",
        created_at: "s.created_at",
        expires_at: "s.expires_at",
    }
}

const S: SessionCols = SessionCols::at(UserCols::COUNT);

impl Session {
    fn from_row(row: &Row) -> Result<Session, DbError> {
        Ok(Session {
            id: row.col(S.id)?,
            user: User::from_row(row, UserCols::AT)?,
            org_id: row.col(S.org_id)?,
            provider_id: row.col(S.provider_id)?,
            created_at: row.col(S.created_at)?,
            expires_at: row.col(S.expires_at)?,
        })
    }
}

fn select() -> String {
    format!(
        "SELECT {}, {} FROM sessions s JOIN users u ON u.id = s.user_id",
        UserCols::SQL,
        SessionCols::SQL
    )
}

fn secret_hash(secret: &str) -> String {
    crate::auth::token_hash(secret)
}

/// Opens a session for `user_id`, signed in by the organization's provider; returns its secret.
pub fn open(
    c: &mut dyn Conn,
    user_id: &str,
    org_id: &str,
    provider_id: &str,
    ttl_ms: i64,
) -> StoreResult<(Session, String)> {
    let now = clock::now_ms();
    c.execute("DELETE FROM sessions WHERE expires_at < ?1", params![now])?;
    let secret = format!("{SESSION_PREFIX}{}", ids::random_base62(40));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO sessions (id, secret_hash, user_id, organization_id, provider_id, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id.clone(),
            secret_hash(&secret),
            user_id,
            org_id,
            provider_id,
            now,
            now.saturating_add(ttl_ms)
        ],
    )?;
    let session = c
        .query_opt(&format!("{} WHERE s.id = ?1", select()), params![id])?
        .map(|r| Session::from_row(&r))
        .transpose()?
        .ok_or_else(|| StoreError::internal("the session just opened is not there"))?;
    Ok((session, secret))
}

/// The unexpired session whose secret is `secret`.
pub fn find(c: &mut dyn Conn, secret: &str, now: i64) -> StoreResult<Option<Session>> {
    if !secret.starts_with(SESSION_PREFIX) {
        return Ok(None);
    }
    let found = c
        .query_opt(
            &format!("{} WHERE s.secret_hash = ?1 AND s.expires_at > ?2", select()),
            params![secret_hash(secret), now],
        )?
        .map(|r| Session::from_row(&r))
        .transpose()?;
    Ok(found)
}

/// Ends the session whose secret is `secret` (signing out); nothing when there is none.
pub fn close(c: &mut dyn Conn, secret: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM sessions WHERE secret_hash = ?1",
        params![secret_hash(secret)],
    )?;
    Ok(())
}

/// The organization's live sessions, oldest first, for its administrators.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::Admin>,
    paging: &Paging,
) -> StoreResult<List<Session>> {
    let page = Page::new(paging, format!("sessions:{}", org.org.id))?;
    let mut args = Args::default();
    let filter = format!(
        " WHERE s.organization_id = {} AND s.expires_at > {}",
        args.arg(&org.org.id),
        args.arg(clock::now_ms())
    );
    let list = crate::paging::by_creation(
        c,
        &page,
        ("sessions s", LISTED),
        (filter, args),
        |r| {
            Ok(Listed {
                id: r.get(0)?,
                user_id: r.get(1)?,
                org_id: r.get(2)?,
                provider_id: r.get(3)?,
                created_at: r.get(4)?,
                expires_at: r.get(5)?,
            })
        },
        |s| (s.created_at, s.id.clone()),
    )?;
    let ids: Vec<&str> = list.items.iter().map(|s| s.user_id.as_str()).collect();
    let users = crate::users::load_many(c, &ids)?;
    let items = list
        .items
        .iter()
        .filter_map(|s| {
            Some(Session {
                id: s.id.clone(),
                user: users.get(&s.user_id).cloned()?,
                org_id: s.org_id.clone(),
                provider_id: s.provider_id.clone(),
                created_at: s.created_at,
                expires_at: s.expires_at,
            })
        })
        .collect();
    Ok(List {
        next: list.next,
        count: list.count,
        items,
    })
}

/// A listed session's row, before its user is read.
struct Listed {
    id: String,
    user_id: String,
    org_id: String,
    provider_id: Option<String>,
    created_at: i64,
    expires_at: i64,
}

const LISTED: &str = "s.id, s.user_id, s.organization_id, s.provider_id, s.created_at, s.expires_at";

/// Ends one of the organization's sessions (nothing when there is none).
pub fn revoke(c: &mut dyn Conn, org: &Authorized<OrgFor, org::Admin>, id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM sessions WHERE id = ?1 AND organization_id = ?2",
        params![id, org.org.id.clone()],
    )?;
    Ok(())
}

/// Turns single sign-on enforcement on for the organization, as `admin` asks: it needs an
/// active provider, and an administrator who signed in with one (else they would end their own
/// tokens). The API tokens of every member who has not signed in with SSO stop working: they
/// are revoked, and new ones are refused until they do ([`refuse_unless_sso_allows`]).
pub fn enforce_sso(c: &mut dyn Conn, org_id: &str, admin: &str) -> StoreResult<()> {
    let providers = crate::saml::active_count(c, org_id)?;
    if providers == 0 {
        return Err(StoreError::invalid(
            "`sso` needs an active SAML provider: add one (with its entityID, ssoURL and certificate) first",
        ));
    }
    let admin_sso = crate::members::model::load(c, org_id, admin)?.is_some_and(|m| m.sso);
    if !admin_sso {
        return Err(StoreError::invalid(
            "sign in with one of the organization's SAML providers before enforcing `sso`: enforcing it revokes the API tokens of members who have not, yours included",
        ));
    }
    let revoked = c.execute(
        "DELETE FROM api_tokens WHERE user_id IN
             (SELECT user_id FROM members WHERE organization_id = ?1 AND sso = 0)",
        params![org_id],
    )?;
    tracing::info!(organization = %org_id, revoked, "single sign-on enforced: tokens of members without SSO revoked");
    Ok(())
}

/// 403 when `user_id` is a member, not signed in with SSO, of an organization that enforces
/// it: such members get no new API tokens until they sign in with its identity provider.
pub fn refuse_unless_sso_allows(c: &mut dyn Conn, user_id: &str) -> StoreResult<()> {
    let enforcing: Option<String> = c.query_scalar(
        "SELECT o.title FROM members m JOIN organizations o ON o.id = m.organization_id
         WHERE m.user_id = ?1 AND m.sso = 0 AND o.sso = 1 ORDER BY o.title LIMIT 1",
        params![user_id],
    )?;
    match enforcing {
        Some(title) => Err(StoreError::forbidden(format!(
            "the organization {title:?} requires single sign-on: sign in with its identity provider (its `startURL`) first"
        ))),
        None => Ok(()),
    }
}
