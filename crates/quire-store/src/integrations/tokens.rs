//! Installation tokens: what an integration calls quire's API with, limited to its
//! installation. Each installation acts as a user of its own (its bot, `bot-<installation>`),
//! a member of the installation's organization whose access is the installation's:
//!
//! - space selection `all`: a member with role `read` (`edit` when the integration's scopes
//!   write content), so it sees what members of that role see;
//! - `selected`: a guest, with a grant of that role on each space the installation is enabled
//!   on, so it sees those spaces and nothing else.
//!
//! The bot is made when the integration is installed and kept in step ([`sync`]) whenever the
//! selection or the enabled spaces change; uninstalling deletes it, its grants and its tokens.
//! Access goes through the same grants and roles as anyone's, so every read the API has is
//! limited alike. A token also carries the integration's scopes that quire knows, and expires
//! after [`TOKEN_TTL_MS`].

use super::model::{Installation, InstallationFor, Integration, Selection};
use crate::db::Conn;
use crate::error::StoreResult;
use crate::permissions::{Authorized, installation};
use crate::{clock, params};

/// How long an installation token is valid (GitBook's are temporary too).
pub const TOKEN_TTL_MS: i64 = 3600 * 1000;

/// The bot user of an installation.
pub fn bot_id(installation_id: &str) -> String {
    format!("bot-{installation_id}")
}

/// The role the bot has: `edit` when the integration writes content or metadata.
fn bot_role(scopes: &[String]) -> &'static str {
    if scopes
        .iter()
        .any(|s| s == "space:content:write" || s == "space:metadata:write")
    {
        "edit"
    } else {
        "read"
    }
}

/// Makes or updates the installation's bot: its membership and its grants, as the module says.
pub fn sync(c: &mut dyn Conn, inst: &Installation, title: &str, scopes: &[String]) -> StoreResult<()> {
    let bot = bot_id(&inst.id);
    let now = clock::now_ms();
    let email = format!("{bot}@integrations.quire.invalid").to_ascii_lowercase();
    let name = format!("{title} (integration)");
    c.execute(
        "INSERT INTO users (id, email, display_name, search_text, email_verified, created_at)
         VALUES (?1, ?2, ?3, ?4, 1, ?5) ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name",
        params![
            bot.clone(),
            email.clone(),
            name.clone(),
            crate::users::search_text(&name, &email),
            now
        ],
    )?;
    let role = bot_role(scopes);
    let member_role = (inst.space_selection == Selection::All).then_some(role);
    c.execute(
        "INSERT INTO members (organization_id, user_id, role, joined_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (organization_id, user_id) DO UPDATE SET role = excluded.role",
        params![inst.org_id.clone(), bot.clone(), member_role, now],
    )?;
    c.execute(
        "DELETE FROM grants WHERE organization_id = ?1 AND user_id = ?2",
        params![inst.org_id.clone(), bot.clone()],
    )?;
    if inst.space_selection == Selection::Selected {
        c.execute(
            "INSERT INTO grants (organization_id, target_kind, target_id, user_id, role, created_at)
             SELECT ?1, 'space', b.space_id, ?2, ?3, ?4 FROM integration_space_installations b
             WHERE b.installation_id = ?5 AND b.status = 'active'",
            params![inst.org_id.clone(), bot, role, now, inst.id.clone()],
        )?;
    }
    Ok(())
}

/// Removes the installation's bot, with its membership, grants and tokens.
pub fn remove(c: &mut dyn Conn, installation_id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM users WHERE id = ?1",
        params![bot_id(installation_id)],
    )?;
    Ok(())
}

/// A new token of the installation (its secret, shown once).
pub fn issue(
    c: &mut dyn Conn,
    found: &Authorized<InstallationFor, installation::Token>,
) -> StoreResult<String> {
    issue_for(c, &found.installation, &found.integration.integration)
}

/// A new token of the installation, for its own script's environment (the platform asks, not
/// a caller: [`issue`] is the API's way).
pub fn issue_for(
    c: &mut dyn Conn,
    installation: &Installation,
    integration: &Integration,
) -> StoreResult<String> {
    // Its scopes that quire's tokens know; none of them still limits it to reading metadata.
    let mut scopes: Vec<String> = integration
        .scopes
        .iter()
        .filter(|s| crate::auth::SCOPES.contains(&s.as_str()))
        .cloned()
        .collect();
    if scopes.is_empty() {
        scopes.push("space:metadata:read".into());
    }
    sync(c, installation, &integration.title, &integration.scopes)?;
    crate::auth::issue_token(
        c,
        &bot_id(&installation.id),
        &scopes,
        Some(&format!(
            "installation {} of {}",
            installation.id, integration.name
        )),
        Some(clock::now_ms() + TOKEN_TTL_MS),
    )
}
