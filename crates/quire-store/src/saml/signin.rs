//! The end of a sign-in: a response `response::verify` accepted becomes a member and a
//! session, in one transaction with the checks only the database can make (the started
//! sign-in it answers, and that its assertion was never used before).

use super::refusal::Refusal;
use super::response::Verified;
use super::{Provider, requests::REQUEST_TTL_MS};
use crate::db::Conn;
use crate::error::StoreResult;
use crate::sessions::{self, Session};
use crate::{clock, params};

/// A finished sign-in.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub session: Session,
    /// The session's secret, for the cookie.
    pub secret: String,
    /// Where the person started.
    pub return_to: String,
    /// Whether this sign-in made them a member.
    pub joined: bool,
}

/// Finishes the sign-in `verified` answers with `provider`: refuses a replayed assertion and a
/// response to no started sign-in (each started sign-in is used once), then finds the person
/// by email or creates them, makes them a member with the provider's default role and team
/// (a member already keeps their role), marks the membership SSO and opens a session.
pub fn finish(
    c: &mut dyn Conn,
    provider: &Provider,
    verified: &Verified,
    session_ttl_ms: i64,
) -> StoreResult<Result<SignedIn, Refusal>> {
    let now = clock::now_ms();
    c.execute("DELETE FROM saml_assertions WHERE expires_at < ?1", params![now])?;
    let recorded = c.execute(
        "INSERT INTO saml_assertions (provider_id, assertion_id, expires_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (provider_id, assertion_id) DO NOTHING",
        params![
            provider.id.clone(),
            verified.assertion_id.clone(),
            verified.valid_until.max(now + REQUEST_TTL_MS)
        ],
    )?;
    if recorded == 0 {
        return Ok(Err(Refusal::Replay(format!(
            "the assertion {:?} was already used to sign in",
            verified.assertion_id
        ))));
    }
    let started: Option<String> = c.query_scalar(
        "SELECT return_to FROM saml_requests WHERE id = ?1 AND provider_id = ?2 AND expires_at >= ?3",
        params![verified.in_response_to.clone(), provider.id.clone(), now],
    )?;
    let Some(return_to) = started else {
        return Ok(Err(Refusal::UnknownRequest(format!(
            "no sign-in {:?} is waiting for this provider: it was never started here, took over 10 minutes, or was finished already",
            verified.in_response_to
        ))));
    };
    c.execute(
        "DELETE FROM saml_requests WHERE id = ?1",
        params![verified.in_response_to.clone()],
    )?;

    let user_id = match crate::admin::find_user(c, &verified.email)? {
        Some(id) => id,
        None => {
            let name = verified
                .name
                .clone()
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| verified.email.split('@').next().unwrap_or("").to_string());
            let name: String = name.trim().chars().take(255).collect();
            crate::admin::insert_user(c, &verified.email, &name)?
        }
    };
    let org_id = &provider.org_id;
    let membership = crate::members::model::load(c, org_id, &user_id)?;
    let joined = match membership.map(|m| m.disabled) {
        Some(true) => {
            return Ok(Err(Refusal::Refused(format!(
                "{} is a disabled member of this organization",
                verified.email
            ))));
        }
        Some(false) => false,
        None => {
            crate::members::join(c, org_id, &user_id, provider.default_role, &user_id)?;
            true
        }
    };
    c.execute(
        "UPDATE members SET sso = 1 WHERE organization_id = ?1 AND user_id = ?2",
        params![org_id.clone(), user_id.clone()],
    )?;
    if let Some(team) = &provider.default_team_id {
        crate::teams::add_keeping_role(c, team, &user_id)?;
    }
    let (session, secret) = sessions::open(c, &user_id, org_id, &provider.id, session_ttl_ms)?;
    Ok(Ok(SignedIn {
        session,
        secret,
        return_to,
        joined,
    }))
}
