//! Users: `GET /v1/user` and `GET /v1/users/{userId}`, and the user object embedded everywhere.

use std::collections::HashMap;

use axum::extract::State;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::App;
use crate::auth::Caller;
use crate::db::{Conn, DbError, Row, Value};
use crate::error::{ApiError, ApiResult};
use crate::extract::Path;
use crate::params;
use crate::paths::UserPath;
use crate::urls::Urls;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_authenticated_user))
        .routes(routes!(get_user))
}

/// A user as stored.
#[derive(Clone, Debug)]
pub struct User {
    pub id: String,
    pub email: String,
    pub display_name: String,
    pub photo_url: Option<String>,
}

quire_store::columns! {
    /// The columns [`User::from_row`] reads, with the table aliased `u`.
    pub struct UserCols of "users" {
        id: "u.id",
        email: "u.email",
        display_name: "u.display_name",
        photo_url: "u.photo_url",
    }
}

/// [`UserCols::SQL`], for the SELECTs that start with a user.
pub const USER_COLUMNS: &str = UserCols::SQL;

impl User {
    /// Reads a user from the columns of `at` (`UserCols::AT` when it is selected first).
    pub fn from_row(row: &Row, at: UserCols) -> Result<User, DbError> {
        Ok(User {
            id: row.col(at.id)?,
            email: row.col(at.email)?,
            display_name: row.col(at.display_name)?,
            photo_url: row.col(at.photo_url)?,
        })
    }

    /// The wire object; `show_email` is false for users the caller shares no organization with.
    pub fn to_json(&self, urls: &Urls, show_email: bool) -> UserJson {
        UserJson {
            object: "user",
            id: self.id.clone(),
            display_name: self.display_name.clone(),
            email: show_email.then(|| self.email.clone()),
            photo_url: self.photo_url.clone(),
            urls: UserUrls {
                location: urls.api(&format!("/users/{}", self.id)),
            },
        }
    }
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

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserJson {
    /// Always `user`.
    pub object: &'static str,
    pub id: String,
    pub display_name: String,
    /// Absent for users the caller shares no organization with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    #[serde(rename = "photoURL", skip_serializing_if = "Option::is_none")]
    pub photo_url: Option<String>,
    pub urls: UserUrls,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct UserUrls {
    pub location: String,
}

/// Loads users by id in one query (for lists that embed users).
pub fn load_many(c: &mut dyn Conn, ids: &[&str]) -> Result<HashMap<String, User>, DbError> {
    let mut out = HashMap::new();
    let mut unique: Vec<&str> = ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    // Bounded chunks keep the statement under every engine's parameter limit.
    for chunk in unique.chunks(500) {
        let placeholders: Vec<String> = (1..=chunk.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM users u WHERE u.id IN ({})",
            placeholders.join(",")
        );
        let params: Vec<Value> = chunk.iter().map(|id| Value::from(*id)).collect();
        for row in c.query(&sql, &params)? {
            let user = User::from_row(&row, UserCols::AT)?;
            out.insert(user.id.clone(), user);
        }
    }
    Ok(out)
}

/// The text member search matches: lowercased and accent-folded, the same on every engine.
pub fn search_text(display_name: &str, email: &str) -> String {
    fold(&format!("{display_name} {email}"))
}

/// Lowercases and folds accents (`É` → `e`), for case- and accent-insensitive matching.
pub fn fold(text: &str) -> String {
    deunicode::deunicode(text).to_lowercase()
}

pub fn load(c: &mut dyn Conn, id: &str) -> Result<Option<User>, DbError> {
    let row = c.query_opt(
        &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = ?1"),
        params![id],
    )?;
    row.map(|r| User::from_row(&r, UserCols::AT)).transpose()
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
    Ok(axum::Json(User::from(&caller).to_json(&app.urls, true)))
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
    let me = caller.user_id.clone();
    let (user, shares_org) = app
        .db
        .read(move |c| {
            let user = load(c, &user_id)?
                .ok_or_else(|| ApiError::not_found(format!("user {user_id:?} not found")))?;
            let shares_org = user.id == me
                || c.exists(
                    "SELECT 1 FROM members a JOIN members b ON a.organization_id = b.organization_id
                     WHERE a.user_id = ?1 AND b.user_id = ?2",
                    params![me, user.id.clone()],
                )?;
            Ok::<_, ApiError>((user, shares_org))
        })
        .await?;
    Ok(axum::Json(user.to_json(&app.urls, shares_org)))
}
