//! A user as stored.

use std::collections::HashMap;

use crate::db::{Conn, DbError, Row, Value};
use crate::params;

/// A user as stored.
#[derive(Clone, Debug)]
pub struct User {
    pub id: String,
    pub email: String,
    pub display_name: String,
    pub photo_url: Option<String>,
}

crate::columns! {
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

pub fn load(c: &mut dyn Conn, id: &str) -> Result<Option<User>, DbError> {
    let row = c.query_opt(
        &format!("SELECT {USER_COLUMNS} FROM users u WHERE u.id = ?1"),
        params![id],
    )?;
    row.map(|r| User::from_row(&r, UserCols::AT)).transpose()
}

/// The text member search matches: lowercased and accent-folded, the same on every engine.
pub fn search_text(display_name: &str, email: &str) -> String {
    fold(&format!("{display_name} {email}"))
}

/// Lowercases and folds accents (`É` → `e`), for case- and accent-insensitive matching.
pub fn fold(text: &str) -> String {
    deunicode::deunicode(text).to_lowercase()
}
