//! A token as answered (never its secret).

use quire_store::clock;
use quire_store::tokens::Token;
use serde::Serialize;

use crate::urls::Urls;

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenJson {
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
pub struct TokenUrls {
    location: String,
}

/// `current_id` is the id of the token the request came with.
pub fn token_json(urls: &Urls, token: &Token, current_id: &str) -> TokenJson {
    TokenJson {
        object: "token",
        id: token.id.clone(),
        label: token.label.clone(),
        scopes: token.scopes.clone(),
        created_at: token.created_at,
        expires_at: token.expires_at,
        expired: token.is_expired(clock::now_ms()),
        current: token.id == current_id,
        urls: TokenUrls {
            location: urls.api(&format!("/user/tokens/{}", token.id)),
        },
    }
}
