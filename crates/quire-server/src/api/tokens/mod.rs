//! The caller's own API tokens: `GET /v1/user/tokens`, `GET` and `DELETE
//! /v1/user/tokens/{tokenId}` (see `quire_store::tokens`).

pub mod wire;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::auth::Caller;
use quire_store::paging::{List, Paging};
use quire_store::tokens;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::{Path, QueryOf};
use crate::paths::TokenPath;
use crate::state::App;
use wire::{TokenJson, token_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_tokens))
        .routes(routes!(get_token, revoke_token))
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
    let user_id = caller.user_id.clone();
    let list = app.db.read(move |c| tokens::list(c, &user_id, &paging)).await?;
    Ok(axum::Json(
        list.map(|t| token_json(&app.urls, &t, &caller.token_id)),
    ))
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
    let token = app.db.read(move |c| tokens::get(c, &user_id, &token_id)).await?;
    Ok(axum::Json(token_json(&app.urls, &token, &caller.token_id)))
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
    tokens::revoke_own(&app.store, &caller.user_id, &token_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
