//! Users: `GET /v1/user` and `GET /v1/users/{userId}`.

pub mod wire;

use axum::extract::State;
use quire_store::auth::Caller;
use quire_store::users::{self, User};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::ApiResult;
use crate::extract::Path;
use crate::paths::UserPath;
use crate::state::App;
pub use wire::{UserJson, user_json};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_authenticated_user))
        .routes(routes!(get_user))
}

/// Get the authenticated user
#[utoipa::path(
    get,
    path = "/v1/user",
    tag = "Users",
    responses((status = 200, description = "The user the token belongs to.", body = UserJson)),
    security(("token" = ["org:read"]))
)]
async fn get_authenticated_user(caller: Caller, State(app): State<App>) -> ApiResult<axum::Json<UserJson>> {
    Ok(axum::Json(user_json(&app.urls, &User::from(&caller), true)))
}

/// Get a user by its id
#[utoipa::path(
    get,
    path = "/v1/users/{userId}",
    tag = "Users",
    params(UserPath),
    responses((status = 200, description = "The user's public profile (with its email when the caller shares an organization with it).", body = UserJson)),
    security(("token" = ["org:read"]))
)]
async fn get_user(
    caller: Caller,
    State(app): State<App>,
    Path(UserPath { user_id }): Path<UserPath>,
) -> ApiResult<axum::Json<UserJson>> {
    let seen = app
        .db
        .read(move |c| users::get(c, &caller.user_id, &user_id))
        .await?;
    Ok(axum::Json(user_json(&app.urls, &seen.user, seen.shares_org)))
}
