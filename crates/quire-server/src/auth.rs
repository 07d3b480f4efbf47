//! Bearer-token authentication and token scopes.
//!
//! Tokens are random secrets shown once; the database keeps only their SHA-256. A token may
//! carry scopes; a token without scopes may do whatever its user may do.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{Method, header};
use sha2::{Digest, Sha256};

use crate::app::App;
use crate::db::Conn;
use crate::error::ApiError;
use crate::params;

/// Prefix of every token, so that leaked tokens are easy to recognise and scan for.
pub const TOKEN_PREFIX: &str = "quire_";

/// The scopes a token may carry. GitBook's integration scope names, plus `org:read` and
/// `org:write` for organization, member and team management.
pub const SCOPES: &[&str] = &[
    "org:read",
    "org:write",
    "space:metadata:read",
    "space:metadata:write",
    "space:content:read",
    "space:content:write",
    "site:metadata:read",
    "site:metadata:write",
    "openapi:read",
    "openapi:write",
    "conversations:ingest",
];

/// The authenticated user behind a request.
#[derive(Clone, Debug)]
pub struct Caller {
    pub user_id: String,
    pub email: String,
    pub display_name: String,
    pub photo_url: Option<String>,
}

impl FromRequestParts<App> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        let hash = token_hash(token);
        let now = crate::clock::now_ms();
        let found = app
            .db
            .read(move |c| {
                c.query_opt(
                    "SELECT u.id, u.email, u.display_name, u.photo_url, t.scopes
                     FROM api_tokens t JOIN users u ON u.id = t.user_id
                     WHERE t.secret_hash = ?1 AND (t.expires_at IS NULL OR t.expires_at > ?2)",
                    params![hash, now],
                )
            })
            .await
            .map_err(ApiError::from)?;
        let row = found.ok_or_else(|| ApiError::unauthorized("the bearer token is not valid"))?;
        let scopes: String = row.get(4)?;
        if !scopes.is_empty() {
            let needed = required_scope(&parts.method, parts.uri.path());
            if !scopes.split(' ').any(|s| s == needed) {
                return Err(ApiError::forbidden(format!(
                    "this token lacks the scope `{needed}`"
                )));
            }
        }
        Ok(Caller {
            user_id: row.get(0)?,
            email: row.get(1)?,
            display_name: row.get(2)?,
            photo_url: row.get(3)?,
        })
    }
}

fn bearer_token(parts: &Parts) -> Result<&str, ApiError> {
    let header = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::unauthorized("missing Authorization header: send `Authorization: Bearer <token>`")
    })?;
    let value = header
        .to_str()
        .map_err(|_| ApiError::unauthorized("the Authorization header is not valid text"))?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or_else(|| ApiError::unauthorized("the Authorization header must be `Bearer <token>`"))?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.trim().is_empty() {
        return Err(ApiError::unauthorized(
            "the Authorization header must be `Bearer <token>`",
        ));
    }
    Ok(token.trim())
}

/// The scope an operation needs, decided from its method and path in this one place so that no
/// handler can forget it.
pub fn required_scope(method: &Method, path: &str) -> &'static str {
    let read = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    let segments: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
    let family = match segments.as_slice() {
        [
            "spaces",
            _,
            "content" | "change-requests" | "revisions" | "search" | "links",
            ..,
        ] => "space:content",
        ["spaces", ..] | ["collections", ..] => "space:metadata",
        ["orgs", _, "spaces", ..] | ["orgs", _, "collections", ..] => "space:metadata",
        ["orgs", _, "change-requests", ..] | ["orgs", _, "search", ..] => "space:content",
        ["orgs", _, "openapi", ..] => "openapi",
        ["orgs", _, "sites", ..] => "site:metadata",
        ["orgs", _, "conversations", ..] if !read => return "conversations:ingest",
        _ => "org",
    };
    match (family, read) {
        ("space:content", true) => "space:content:read",
        ("space:content", false) => "space:content:write",
        ("space:metadata", true) => "space:metadata:read",
        ("space:metadata", false) => "space:metadata:write",
        ("openapi", true) => "openapi:read",
        ("openapi", false) => "openapi:write",
        ("site:metadata", true) => "site:metadata:read",
        ("site:metadata", false) => "site:metadata:write",
        (_, true) => "org:read",
        (_, false) => "org:write",
    }
}

/// SHA-256 of a token, hex-encoded: what the database stores and looks tokens up by.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Issues a new token for a user and returns the secret, which is never stored.
pub fn issue_token(
    c: &mut dyn Conn,
    user_id: &str,
    scopes: &[String],
    label: Option<&str>,
) -> Result<String, ApiError> {
    for scope in scopes {
        if !SCOPES.contains(&scope.as_str()) {
            return Err(ApiError::bad_request(format!(
                "unknown scope {scope:?}; known scopes: {}",
                SCOPES.join(", ")
            )));
        }
    }
    let secret = format!("{TOKEN_PREFIX}{}", crate::ids::random_base62(40));
    c.execute(
        "INSERT INTO api_tokens (id, user_id, secret_hash, scopes, label, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            crate::ids::new_id(),
            user_id,
            token_hash(&secret),
            scopes.join(" "),
            label,
            crate::clock::now_ms()
        ],
    )?;
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_follow_the_path() {
        assert_eq!(
            required_scope(&Method::GET, "/v1/spaces/abc"),
            "space:metadata:read"
        );
        assert_eq!(
            required_scope(&Method::POST, "/v1/spaces/abc/change-requests"),
            "space:content:write"
        );
        assert_eq!(required_scope(&Method::GET, "/v1/orgs/o/members"), "org:read");
        assert_eq!(required_scope(&Method::PATCH, "/v1/orgs/o"), "org:write");
        assert_eq!(
            required_scope(&Method::POST, "/v1/orgs/o/spaces"),
            "space:metadata:write"
        );
        assert_eq!(required_scope(&Method::GET, "/v1/user"), "org:read");
    }

    #[test]
    fn hashes_are_hex_sha256() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
