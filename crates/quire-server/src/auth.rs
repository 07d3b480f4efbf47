//! Bearer-token authentication over HTTP: the token from the `Authorization` header, the
//! caller it belongs to (`quire_store::auth`), and the scope the request's operation needs
//! (from the route table, see `openapi`).

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
pub use quire_store::auth::{Caller, SCOPES, TOKEN_PREFIX, token_hash};

use crate::error::ApiError;
use crate::state::App;

impl FromRequestParts<App> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        let known = quire_store::auth::authenticate(&app.store, token)
            .await?
            .ok_or_else(|| ApiError::unauthorized("the bearer token is not valid"))?;
        // Looked up for every token, not only scoped ones, so that a route missing from the
        // table fails in every test that calls it rather than only with scoped tokens.
        let needed = crate::openapi::required_scope(app.api.get(), parts)?;
        if !known.allows_scope(needed) {
            return Err(ApiError::forbidden(format!(
                "this token lacks the scope `{needed}`"
            )));
        }
        Ok(known.caller.clone())
    }
}

/// The caller when the request sends a token, for an operation anyone may also call without
/// one (`openapi::Access::TokenOptional`): no `Authorization` header is None; a header with a
/// bad token is still a 401.
pub struct OptionalCaller(pub Option<Caller>);

impl FromRequestParts<App> for OptionalCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        if !parts.headers.contains_key(header::AUTHORIZATION) {
            return Ok(OptionalCaller(None));
        }
        Ok(OptionalCaller(Some(
            Caller::from_request_parts(parts, app).await?,
        )))
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
