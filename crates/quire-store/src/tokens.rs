//! A user's own API tokens: listing, reading and revoking them (GitBook's API has no token
//! endpoints; see docs/decisions/0050-the-callers-tokens.md), for the API and for `quire admin token ...`. Issuing one,
//! and finding the token a request came with, is `auth`'s.
//!
//! Revoking deletes the token's row: every process looks tokens up again within
//! `TokenCache::TTL_MS` (see `auth`), so a revoked token is refused everywhere within a second.

use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::params;

/// A token as stored, without its secret (which is never stored).
#[derive(Clone, Debug)]
pub struct Token {
    pub id: String,
    pub user_id: String,
    pub label: Option<String>,
    /// Empty: the token may do whatever its user may.
    pub scopes: Vec<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

crate::columns! {
    /// The columns [`Token::from_row`] reads.
    struct TokenCols of "api_tokens" {
        id: "id",
        user_id: "user_id",
        label: "label",
        scopes: "scopes",
        created_at: "created_at",
        expires_at: "expires_at",
    }
}

const COLUMNS: &str = TokenCols::SQL;
const C: TokenCols = TokenCols::AT;

impl Token {
    fn from_row(row: &Row) -> Result<Token, DbError> {
        let scopes: String = row.col(C.scopes)?;
        Ok(Token {
            id: row.col(C.id)?,
            user_id: row.col(C.user_id)?,
            label: row.col(C.label)?,
            scopes: scopes.split_whitespace().map(str::to_string).collect(),
            created_at: row.col(C.created_at)?,
            expires_at: row.col(C.expires_at)?,
        })
    }

    pub fn is_expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|at| at <= now)
    }
}

/// A user's tokens, oldest first, one page of them.
pub fn list(c: &mut dyn Conn, user_id: &str, paging: &Paging) -> StoreResult<List<Token>> {
    // Not scoped by the user: a cursor is a position in creation order, and only ever lists the
    // caller's own tokens.
    let page = Page::new(paging, "user-tokens")?;
    let mut args = Args::default();
    let filter = format!(" WHERE user_id = {}", args.arg(user_id));
    crate::paging::by_creation(
        c,
        &page,
        ("api_tokens", COLUMNS),
        (filter, args),
        Token::from_row,
        |t| (t.created_at, t.id.clone()),
    )
}

/// Every token of a user, oldest first (for `quire admin token list`).
pub fn list_all(c: &mut dyn Conn, user_id: &str) -> Result<Vec<Token>, DbError> {
    c.query(
        &format!("SELECT {COLUMNS} FROM api_tokens WHERE user_id = ?1 ORDER BY created_at, id"),
        params![user_id],
    )?
    .iter()
    .map(Token::from_row)
    .collect()
}

/// One of the user's tokens (404 when it is not theirs).
pub fn get(c: &mut dyn Conn, user_id: &str, id: &str) -> StoreResult<Token> {
    load(c, id, Some(user_id))?.ok_or_else(|| not_found(id))
}

/// Loads a token by id; with `owner`, only if that user owns it.
fn load(c: &mut dyn Conn, id: &str, owner: Option<&str>) -> Result<Option<Token>, DbError> {
    let row = c.query_opt(
        &format!("SELECT {COLUMNS} FROM api_tokens WHERE id = ?1"),
        params![id],
    )?;
    let token = row.map(|r| Token::from_row(&r)).transpose()?;
    Ok(token.filter(|t| owner.is_none_or(|o| o == t.user_id)))
}

/// Deletes a token (with `owner`, only that user's); answers its secret's hash when it was
/// there, so that the caller can forget it from this process's cache.
pub fn revoke(c: &mut dyn Conn, id: &str, owner: Option<&str>) -> Result<Option<String>, DbError> {
    let row = match owner {
        Some(owner) => c.query_opt(
            "DELETE FROM api_tokens WHERE id = ?1 AND user_id = ?2 RETURNING secret_hash",
            params![id, owner],
        )?,
        None => c.query_opt(
            "DELETE FROM api_tokens WHERE id = ?1 RETURNING secret_hash",
            params![id],
        )?,
    };
    row.map(|r| r.get(0)).transpose()
}

fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("token {id:?} not found among your tokens"))
}

/// Revokes one of the user's tokens (nothing when it is not theirs: DELETE is idempotent), and
/// forgets it from this process's cache at once.
pub async fn revoke_own(store: &crate::Store, user_id: &str, id: &str) -> StoreResult<()> {
    let (id, user_id) = (id.to_string(), user_id.to_string());
    let revoked = store
        .db
        .write(move |c| Ok::<_, StoreError>(revoke(c, &id, Some(&user_id))?))
        .await?;
    if let Some(hash) = revoked {
        store.tokens.forget(&hash);
    }
    Ok(())
}
