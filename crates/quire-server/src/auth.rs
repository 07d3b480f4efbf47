//! Bearer-token authentication over HTTP: the token from the `Authorization` header, the
//! caller it belongs to (`quire_store::auth`), and the scope the request's operation needs
//! (from the route table, see `openapi`).

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
pub use quire_store::auth::{Caller, SCOPES, TOKEN_PREFIX, token_hash};
use quire_store::spaces::SpaceFor;

use crate::error::ApiError;
use crate::state::App;

impl FromRequestParts<App> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        let Some(known) = quire_store::auth::authenticate(&app.store, token).await? else {
            if SiteVisitor::from_token(app, token).is_some() {
                return Err(ApiError::forbidden(
                    "a published site's visitor token reads only that site's published content",
                ));
            }
            return Err(ApiError::unauthorized("the bearer token is not valid"));
        };
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

/// The audience of the `apiToken` a URL lookup mints (`api::urls`).
pub const VISITOR_TOKEN_AUDIENCE: &str = "quire:published-content";

/// The holder of a URL lookup's `apiToken`: a visitor of one published site, with the claims
/// the site admitted them with. It reads what that site shows them, and nothing else.
#[derive(Clone, Debug)]
pub struct SiteVisitor {
    pub organization: String,
    pub site: String,
    /// The claims as stated (the visitor token's, with `unsigned`), read again with the site's
    /// schema at each request.
    pub claims: serde_json::Value,
}

impl SiteVisitor {
    /// The visitor of an unexpired `apiToken` signed by this instance.
    pub fn from_token(app: &App, token: &str) -> Option<SiteVisitor> {
        let now_s = quire_store::clock::now_ms() / 1000;
        let claims = crate::signing::jwt_claims(&app.signing_key, token, now_s)?;
        if claims["aud"] != VISITOR_TOKEN_AUDIENCE || claims["scope"] != "read" {
            return None;
        }
        Some(SiteVisitor {
            organization: claims["organization"].as_str()?.to_string(),
            site: claims["site"].as_str()?.to_string(),
            claims: claims["claims"].clone(),
        })
    }

    /// The published site this visitor was admitted to, when `organization` and `site` name
    /// it; 404 for any other, as for a site that does not exist.
    pub async fn own_site(
        &self,
        app: &App,
        organization: &str,
        site: &str,
    ) -> Result<std::sync::Arc<quire_store::sites::published::Published>, ApiError> {
        if self.organization != organization || self.site != site {
            return Err(quire_store::sites::not_found(site).into());
        }
        Ok(app
            .store
            .published_sites
            .load(&app.db, organization, site)
            .await?)
    }

    /// The space when the site shows it to this visitor, as a reader of it; 404 otherwise, as
    /// for a space that does not exist.
    pub async fn space(&self, app: &App, space_id: &str) -> Result<SpaceFor, ApiError> {
        let not_found = || ApiError::from(quire_store::spaces::not_found(space_id));
        // A site unpublished (or gone) since the token was minted shows nothing.
        let site = match app
            .store
            .published_sites
            .load(&app.db, &self.organization, &self.site)
            .await
        {
            Ok(site) => site,
            Err(e) if e.kind == quire_store::error::ErrorKind::NotFound => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        site.shown_space(&site.claims(&self.claims), space_id)
            .ok_or_else(not_found)
    }
}

/// Who reads published content: a user with a token, or a published site's visitor with the
/// `apiToken` of a URL lookup (how GitBook's renderer of published sites reads them). Only the
/// read operations a renderer needs take a `Reader`; every other one takes a [`Caller`], which
/// refuses a visitor's token.
#[derive(Clone, Debug)]
pub enum Reader {
    User(Caller),
    Visitor(SiteVisitor),
}

impl From<Caller> for Reader {
    fn from(caller: Caller) -> Reader {
        Reader::User(caller)
    }
}

impl Reader {
    /// The space as this reader may read it, unless deleted: a user's role on it, or a reader's
    /// for a visitor shown it.
    pub async fn active_space(&self, app: &App, space_id: &str) -> Result<SpaceFor, ApiError> {
        match self {
            Reader::User(caller) => Ok(app.spaces.load_active(&app.db, space_id, &caller.user_id).await?),
            Reader::Visitor(visitor) => visitor.space(app, space_id).await,
        }
    }
}

impl FromRequestParts<App> for Reader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &App) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        if !token.starts_with(TOKEN_PREFIX)
            && let Some(visitor) = SiteVisitor::from_token(app, token)
        {
            return Ok(Reader::Visitor(visitor));
        }
        Ok(Reader::User(Caller::from_request_parts(parts, app).await?))
    }
}
