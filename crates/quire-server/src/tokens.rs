//! The caller's own API tokens: `GET /v1/user/tokens`, `GET` and `DELETE
//! /v1/user/tokens/{tokenId}` (GitBook's API has no token endpoints; see docs/decisions.md), and
//! the same listing and revocation for `quire admin token ...`.
//!
//! Revoking deletes the token's row: every process looks tokens up again within
//! `TokenCache::TTL_MS` (see `auth`), so a revoked token is refused everywhere within a second.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::App;
use crate::auth::Caller;
use crate::clock;
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::params;
use crate::paths::TokenPath;
use crate::urls::Urls;
use quire_store::paging::{List, Page, Paging};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_tokens))
        .routes(routes!(get_token, revoke_token))
}

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

quire_store::columns! {
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

    fn to_json(&self, urls: &Urls, current_id: &str) -> TokenJson {
        TokenJson {
            object: "token",
            id: self.id.clone(),
            label: self.label.clone(),
            scopes: self.scopes.clone(),
            created_at: self.created_at,
            expires_at: self.expires_at,
            expired: self.is_expired(clock::now_ms()),
            current: self.id == current_id,
            urls: TokenUrls {
                location: urls.api(&format!("/user/tokens/{}", self.id)),
            },
        }
    }
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct TokenJson {
    object: &'static str,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<String>,
    scopes: Vec<String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    created_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    expires_at: Option<i64>,
    expired: bool,
    /// Whether this is the token the request came with.
    current: bool,
    urls: TokenUrls,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
struct TokenUrls {
    location: String,
}

/// A user's tokens, oldest first, one page of them.
fn list_page(c: &mut dyn Conn, user_id: &str, page: &Page) -> ApiResult<List<Token>> {
    let mut args = Args::default();
    let filter = format!(" WHERE user_id = {}", args.arg(user_id));
    Ok(quire_store::paging::by_creation(
        c,
        page,
        ("api_tokens", COLUMNS),
        (filter, args),
        Token::from_row,
        |t| (t.created_at, t.id.clone()),
    )?)
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

fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("token {id:?} not found among your tokens"))
}

/// List the caller's API tokens
#[utoipa::path(
    get,
    path = "/v1/user/tokens",
    tag = "API tokens",
    params(Paging),
    responses((status = 200, description = "The caller's tokens, oldest first; the one of this request is `current`.", body = List<TokenJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_tokens(
    caller: Caller,
    State(app): State<App>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TokenJson>>> {
    let page = Page::new(&paging, "user-tokens")?;
    let user_id = caller.user_id.clone();
    let list = app.db.read(move |c| list_page(c, &user_id, &page)).await?;
    Ok(axum::Json(list.map(|t| t.to_json(&app.urls, &caller.token_id))))
}

/// Get one of the caller's API tokens
#[utoipa::path(
    get,
    path = "/v1/user/tokens/{tokenId}",
    tag = "API tokens",
    params(TokenPath),
    responses((status = 200, description = "The token (never its secret).", body = TokenJson)),
    security(("token" = ["org:read"]))
)]
async fn get_token(
    caller: Caller,
    State(app): State<App>,
    Path(TokenPath { token_id }): Path<TokenPath>,
) -> ApiResult<axum::Json<TokenJson>> {
    let user_id = caller.user_id.clone();
    let token = app
        .db
        .read(move |c| load(c, &token_id, Some(&user_id))?.ok_or_else(|| not_found(&token_id)))
        .await?;
    Ok(axum::Json(token.to_json(&app.urls, &caller.token_id)))
}

/// 204 also when there is no such token of the caller's (DELETE is idempotent, and another
/// user's token id tells nothing).
#[utoipa::path(
    delete,
    path = "/v1/user/tokens/{tokenId}",
    tag = "API tokens",
    summary = "Revoke one of the caller's API tokens",
    params(TokenPath),
    responses((status = 204, description = "The token is revoked (or was not the caller's).")),
    security(("token" = ["org:write"]))
)]
async fn revoke_token(
    caller: Caller,
    State(app): State<App>,
    Path(TokenPath { token_id }): Path<TokenPath>,
) -> ApiResult<StatusCode> {
    let revoked = app
        .db
        .write(move |c| Ok::<_, ApiError>(revoke(c, &token_id, Some(&caller.user_id))?))
        .await?;
    if let Some(hash) = revoked {
        app.tokens.forget(&hash);
    }
    Ok(StatusCode::NO_CONTENT)
}
