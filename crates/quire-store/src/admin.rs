//! Administration commands (`quire admin ...`) and first-start bootstrap. They work directly on
//! the database, so they run beside a live server: every change is one transaction.

use crate::auth::issue_token;
use crate::db::{Conn, Db};
use crate::error::StoreError;
use crate::{clock, ids, params, validate};

/// Creates a user and returns its id.
pub fn create_user(db: &Db, email: &str, name: &str) -> Result<String, StoreError> {
    let email = validate::email("--email", email)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 255 {
        return Err(StoreError::invalid("--name must be 1 to 255 characters"));
    }
    db.write_sync(|c| insert_user(c, &email, name))
}

pub(crate) fn insert_user(c: &mut dyn Conn, email: &str, name: &str) -> Result<String, StoreError> {
    if find_user(c, email)?.is_some() {
        return Err(StoreError::conflict(format!(
            "a user with email {email} already exists"
        )));
    }
    let id = ids::new_id();
    c.execute(
        "INSERT INTO users (id, email, display_name, search_text, email_verified, created_at)
         VALUES (?1, ?2, ?3, ?4, 1, ?5)",
        params![
            id.clone(),
            email.to_ascii_lowercase(),
            name,
            crate::users::search_text(name, email),
            clock::now_ms()
        ],
    )?;
    Ok(id)
}

pub(crate) fn find_user(c: &mut dyn Conn, email: &str) -> Result<Option<String>, StoreError> {
    Ok(c.query_scalar(
        "SELECT id FROM users WHERE email = ?1",
        params![email.to_ascii_lowercase()],
    )?)
}

fn user_by_email(c: &mut dyn Conn, email: &str) -> Result<String, StoreError> {
    find_user(c, email)?.ok_or_else(|| StoreError::not_found(format!("no user has the email {email}")))
}

/// Creates an organization whose admin is the user with email `owner`; returns its id.
pub fn create_org(db: &Db, title: &str, owner: &str) -> Result<String, StoreError> {
    let title = validate::title("--title", title, 2, 255)?;
    db.write_sync(|c| {
        let owner = user_by_email(c, owner)?;
        crate::orgs::insert(c, &title, &owner, &[])
    })
}

/// Issues an API token for the user with email `email`; returns the secret.
pub fn create_token(db: &Db, email: &str, scopes: &[String]) -> Result<String, StoreError> {
    create_expiring_token(db, email, scopes, None)
}

/// As [`create_token`], valid for `lifetime` from now when given.
pub fn create_expiring_token(
    db: &Db,
    email: &str,
    scopes: &[String],
    lifetime: Option<std::time::Duration>,
) -> Result<String, StoreError> {
    let expires_at = match lifetime {
        None => None,
        Some(d) => {
            let ms = i64::try_from(d.as_millis()).ok().filter(|ms| *ms > 0);
            let at = ms.and_then(|ms| clock::now_ms().checked_add(ms));
            Some(at.ok_or_else(|| {
                StoreError::invalid("--expires must be more than zero and at most a few centuries")
            })?)
        }
    };
    db.write_sync(|c| {
        let user = user_by_email(c, email)?;
        crate::sessions::refuse_unless_sso_allows(c, &user)?;
        issue_token(c, &user, scopes, Some("admin command line"), expires_at)
    })
}

/// The tokens of the user with email `email`, oldest first.
pub fn list_tokens(db: &Db, email: &str) -> Result<Vec<crate::tokens::Token>, StoreError> {
    db.read_sync(|c| {
        let user = user_by_email(c, email)?;
        Ok(crate::tokens::list_all(c, &user)?)
    })
}

/// Revokes a token by id: every server refuses it within a second (see `auth::TokenCache`).
pub fn revoke_token(db: &Db, id: &str) -> Result<(), StoreError> {
    db.write_sync(|c| match crate::tokens::revoke(c, id, None)? {
        Some(_) => Ok(()),
        None => Err(StoreError::not_found(format!("no token has the id {id}"))),
    })
}

/// What the first start created, to print once.
pub struct Bootstrap {
    pub email: String,
    pub user_id: String,
    pub org_title: String,
    pub org_id: String,
    pub token: String,
}

/// On the first start with an empty database, creates an administrator, an organization and a
/// token. The `bootstrapped` setting is claimed first, so that of several processes starting
/// together on one database exactly one bootstraps.
pub fn bootstrap(db: &Db, email: &str) -> Result<Option<Bootstrap>, StoreError> {
    let email = validate::email("QUIRE_BOOTSTRAP_EMAIL", email)?;
    db.write_sync(|c| {
        let claimed = c.execute(
            "INSERT INTO settings (key, value) VALUES ('bootstrapped', ?1) ON CONFLICT (key) DO NOTHING",
            params![clock::format_ms(clock::now_ms())],
        )?;
        let empty = c
            .query_scalar::<i64>("SELECT count(*) FROM users", params![])?
            .unwrap_or(0)
            == 0;
        if claimed == 0 || !empty {
            return Ok(None);
        }
        let user_id = insert_user(c, &email, "Administrator")?;
        let org_title = "My Organization".to_string();
        let org_id = crate::orgs::insert(c, &org_title, &user_id, &[])?;
        let token = issue_token(c, &user_id, &[], Some("first start"), None)?;
        Ok(Some(Bootstrap {
            email: email.clone(),
            user_id,
            org_title,
            org_id,
            token,
        }))
    })
}
