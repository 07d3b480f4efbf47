//! Users: the caller, and other users as the caller may see them.

pub mod model;

pub use model::{USER_COLUMNS, User, UserCols, fold, load, load_many, search_text};

use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::params;

/// A user seen by another: their email is shown only to users who share an organization with
/// them.
pub struct Seen {
    pub user: User,
    pub shares_org: bool,
}

/// The user `user_id` as `caller_id` sees them (404 when there is no such user).
pub fn get(c: &mut dyn Conn, caller_id: &str, user_id: &str) -> StoreResult<Seen> {
    let user =
        load(c, user_id)?.ok_or_else(|| StoreError::not_found(format!("user {user_id:?} not found")))?;
    let shares_org = user.id == caller_id
        || c.exists(
            "SELECT 1 FROM members a JOIN members b ON a.organization_id = b.organization_id
             WHERE a.user_id = ?1 AND b.user_id = ?2",
            params![caller_id, user.id.clone()],
        )?;
    Ok(Seen { user, shares_org })
}

/// The domain of a user's email (`email`), when it is verified.
pub fn verified_domain(c: &mut dyn Conn, user_id: &str, email: &str) -> StoreResult<Option<String>> {
    let verified: bool = c
        .query_scalar("SELECT email_verified FROM users WHERE id = ?1", params![user_id])?
        .unwrap_or(false);
    Ok(verified
        .then(|| email.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase()))
        .flatten())
}

/// A value with the users it names, loaded in one query, for answers that embed them (the
/// author and merger of a change request, the posters of comments, reviewers).
#[derive(Clone, Debug)]
pub struct WithUsers<T> {
    pub value: T,
    pub users: std::collections::HashMap<String, User>,
}

impl<T> WithUsers<T> {
    /// `value` with the users of `ids` (each loaded once; unknown ids are left out).
    pub fn load(c: &mut dyn Conn, value: T, ids: &[&str]) -> StoreResult<WithUsers<T>> {
        let users = load_many(c, ids)?;
        Ok(WithUsers { value, users })
    }
}
