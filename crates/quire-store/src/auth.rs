//! Who is calling: bearer tokens and the users behind them.
//!
//! Tokens are random secrets shown once; the database keeps only their SHA-256. A token may
//! carry scopes; a token without scopes may do whatever its user may do. Reading the token from
//! a request and checking the scope an operation needs is the HTTP layer's (`quire-server`'s
//! `auth`); finding the token, and issuing new ones, is here.

use std::sync::Arc;

use crate::Store;
use crate::db::{Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::params;
use crate::users::{User, UserCols};

/// Prefix of every token, so that leaked tokens are easy to recognise and scan for.
pub const TOKEN_PREFIX: &str = "quire_";

/// The scopes a token may carry. GitBook's integration scope names, plus `org:read` and
/// `org:write` for organization, member and team management, and GitBook's OAuth scopes of
/// integrations (`integration:publish`, `integration:installations:*`) with
/// `integration:read` for reading them.
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
    "integration:read",
    "integration:publish",
    "integration:installations:read",
    "integration:installations:write",
];

/// The authenticated user behind a request.
#[derive(Clone, Debug)]
pub struct Caller {
    pub user_id: String,
    /// The id of the token the request came with (`GET /v1/user/tokens` marks it `current`).
    pub token_id: String,
    pub email: String,
    pub display_name: String,
    pub photo_url: Option<String>,
}

impl From<&Caller> for User {
    fn from(c: &Caller) -> User {
        User {
            id: c.user_id.clone(),
            email: c.email.clone(),
            display_name: c.display_name.clone(),
            photo_url: c.photo_url.clone(),
        }
    }
}

/// A token as stored, with its user.
pub struct KnownToken {
    pub caller: Caller,
    scopes: String,
    expires_at: Option<i64>,
    fetched_at: i64,
}

impl KnownToken {
    /// Whether the token may be used for an operation that needs `scope`: a token without
    /// scopes may do whatever its user may.
    pub fn allows_scope(&self, scope: &str) -> bool {
        self.scopes.is_empty() || self.scopes.split(' ').any(|s| s == scope)
    }
}

/// The token whose secret is `token`, if it exists and has not expired: from the cache when it
/// was found valid within [`TokenCache::TTL_MS`], else from the database.
pub async fn authenticate(store: &Store, token: &str) -> StoreResult<Option<Arc<KnownToken>>> {
    let hash = token_hash(token);
    let now = crate::clock::now_ms();
    let known = match store.tokens.get(&hash, now) {
        Some(known) => known,
        None => {
            let key = hash.clone();
            let found = store
                .db
                .read(move |c| lookup(c, &key))
                .await
                .map_err(StoreError::from)?;
            match found {
                Some(found) => store.tokens.insert(hash, found),
                None => return Ok(None),
            }
        }
    };
    if known.expires_at.is_some_and(|at| at <= now) {
        return Ok(None);
    }
    Ok(Some(known))
}

crate::columns! {
    /// What a token lookup reads of the token, after its user's [`UserCols`].
    struct TokenCols of "api_tokens" {
        scopes: "t.scopes",
        expires_at: "t.expires_at",
        id: "t.id",
    }
}

fn lookup(c: &mut dyn Conn, hash: &str) -> Result<Option<KnownToken>, DbError> {
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {}, {} FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.secret_hash = ?1",
            UserCols::SQL,
            TokenCols::SQL
        )
    });
    const USER: UserCols = UserCols::AT;
    const TOKEN: TokenCols = TokenCols::at(UserCols::COUNT);
    let Some(row) = c.query_opt(&SQL, params![hash])? else {
        return Ok(None);
    };
    Ok(Some(KnownToken {
        caller: Caller {
            user_id: row.col(USER.id)?,
            token_id: row.col(TOKEN.id)?,
            email: row.col(USER.email)?,
            display_name: row.col(USER.display_name)?,
            photo_url: row.col(USER.photo_url)?,
        },
        scopes: row.col(TOKEN.scopes)?,
        expires_at: row.col(TOKEN.expires_at)?,
        fetched_at: crate::clock::now_ms(),
    }))
}

/// Tokens found valid recently, so that a request costs one database round trip instead of two.
/// A token's row and its user's row are never changed once written (users are not renamed), but
/// a token can be revoked (its row deleted) by any process: by the API, or by `quire admin token
/// revoke` beside the server. An entry is therefore trusted for only `TTL_MS`, well under a
/// second, after which the token is looked up again, so every process refuses a revoked token
/// within that time whatever it had cached, on every engine and without relying on change
/// notifications. The revoking process also forgets the token at once. Expiry is checked on every
/// request from the cached `expires_at`. Unknown tokens are never kept, so guessing fills nothing.
///
/// The cost is one indexed point read per token and process every `TTL_MS` (bench/: the read mix
/// uses a few dozen tokens at thousands of requests a second).
pub struct TokenCache {
    known: quick_cache::sync::Cache<String, Arc<KnownToken>>,
}

impl TokenCache {
    const TTL_MS: i64 = 500;

    fn get(&self, hash: &str, now: i64) -> Option<Arc<KnownToken>> {
        self.known
            .get(hash)
            .filter(|known| now - known.fetched_at < Self::TTL_MS)
    }

    /// Whether a token (by its hash) was found valid recently.
    pub fn is_known(&self, hash: &str) -> bool {
        self.get(hash, crate::clock::now_ms()).is_some()
    }

    fn insert(&self, hash: String, known: KnownToken) -> Arc<KnownToken> {
        let known = Arc::new(known);
        self.known.insert(hash, known.clone());
        known
    }

    /// Forgets every token, after a change that may have revoked many (SSO enforced).
    pub fn forget_all(&self) {
        self.known.clear();
    }

    /// Forgets a token this process has just revoked (by its hash).
    pub fn forget(&self, hash: &str) {
        self.known.remove(hash);
    }
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache {
            known: quick_cache::sync::Cache::new(10_000),
        }
    }
}

/// SHA-256 of a token, hex-encoded: what the database stores and looks tokens up by.
pub fn token_hash(token: &str) -> String {
    quire_content::buckets::content_hash(token.as_bytes())
}

/// Issues a new token for a user and returns the secret, which is never stored. `expires_at`
/// (Unix ms) ends its validity; None: it is valid until revoked.
pub fn issue_token(
    c: &mut dyn Conn,
    user_id: &str,
    scopes: &[String],
    label: Option<&str>,
    expires_at: Option<i64>,
) -> StoreResult<String> {
    for scope in scopes {
        if !SCOPES.contains(&scope.as_str()) {
            return Err(StoreError::invalid(format!(
                "unknown scope {scope:?}; known scopes: {}",
                SCOPES.join(", ")
            )));
        }
    }
    let secret = format!("{TOKEN_PREFIX}{}", crate::ids::random_base62(40));
    c.execute(
        "INSERT INTO api_tokens (id, user_id, secret_hash, scopes, label, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            crate::ids::new_id(),
            user_id,
            token_hash(&secret),
            scopes.join(" "),
            label,
            crate::clock::now_ms(),
            expires_at
        ],
    )?;
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_hex_sha256() {
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
