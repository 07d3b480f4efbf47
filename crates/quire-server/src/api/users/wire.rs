//! The user object, embedded in most answers.

use quire_store::users::User;
use serde::Serialize;

use crate::urls::Urls;

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

/// The wire object; `show_email` is false for users the caller shares no organization with.
pub fn user_json(urls: &Urls, user: &User, show_email: bool) -> UserJson {
    UserJson {
        object: "user",
        id: user.id.clone(),
        display_name: user.display_name.clone(),
        email: show_email.then(|| user.email.clone()),
        photo_url: user.photo_url.clone(),
        urls: UserUrls {
            location: urls.api(&format!("/users/{}", user.id)),
        },
    }
}

/// The user `id` from users loaded for an answer, or, when they no longer exist, a "Deleted
/// user" shown by id.
pub fn user_or_deleted(urls: &Urls, users: &std::collections::HashMap<String, User>, id: &str) -> UserJson {
    match users.get(id) {
        Some(user) => user_json(urls, user, true),
        None => deleted_user(urls, id),
    }
}

/// A user who no longer exists, shown by id.
pub fn deleted_user(urls: &Urls, id: &str) -> UserJson {
    let user = User {
        id: id.to_string(),
        email: String::new(),
        display_name: "Deleted user".into(),
        photo_url: None,
    };
    user_json(urls, &user, false)
}
