//! Publishing an integration: what is checked, and the row it writes (a new integration, or
//! the next version of one).

use std::collections::BTreeMap;

use serde_json::{Value as Json, json};

use super::model::{self, CATEGORIES, IntegrationFor, SCOPES, Target, Visibility};
use super::secrets::SecretsKey;
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::orgs::{self, OrgFor};
use crate::permissions::OrgAction;
use crate::validate;

/// Limits of what a publish stores.
pub const ICON_MAX_BYTES: usize = 1024 * 1024;
pub const PREVIEW_MAX_BYTES: usize = 2 * 1024 * 1024;
pub const PREVIEWS_MAX: usize = 3;
pub const SCRIPT_MAX_BYTES: usize = 5 * 1024 * 1024;
pub const SECRETS_MAX: usize = 20;
pub const SECRET_MAX_BYTES: usize = 4096;
pub const BLOCKS_MAX: usize = 50;
pub const CONTENT_SOURCES_MAX: usize = 50;
pub const EXTERNAL_LINKS_MAX: usize = 5;
pub const UNFURL_MAX: usize = 50;
pub const CONFIGURATION_PROPERTIES_MAX: usize = 100;
/// The JSON of blocks, content sources, configurations and the content security policy
/// together.
pub const DEFINITION_MAX_BYTES: usize = 256 * 1024;

/// A publish request, its base64 already decoded.
#[derive(Clone, Debug, Default)]
pub struct Publish {
    pub name: String,
    /// The owner organization, by id or subdomain.
    pub organization: String,
    pub runtime: Option<String>,
    pub title: String,
    pub description: String,
    pub summary: Option<String>,
    pub visibility: Option<Visibility>,
    pub target: Option<Target>,
    pub scopes: Vec<String>,
    pub categories: Vec<String>,
    pub blocks: Vec<Json>,
    pub content_sources: Vec<Json>,
    pub configurations: Option<Json>,
    pub external_links: Vec<Json>,
    pub content_security_policy: Option<Json>,
    pub script: String,
    pub icon: Option<Vec<u8>>,
    pub preview_images: Vec<Vec<u8>>,
    pub secrets: Option<BTreeMap<String, String>>,
    /// Where events are delivered outside dev mode (quire's; GitBook runs the script).
    pub webhook_url: Option<String>,
}

/// Where the published bytes went: hashes of blobs under the integration's namespace.
#[derive(Clone, Debug, Default)]
pub struct StoredAssets {
    pub icon: Option<String>,
    pub preview_images: Vec<String>,
    pub script: String,
}

fn invalid(message: impl Into<String>) -> StoreError {
    StoreError::invalid(message)
}

fn object<'a>(value: &'a Json, what: &str) -> StoreResult<&'a serde_json::Map<String, Json>> {
    value
        .as_object()
        .ok_or_else(|| invalid(format!("{what} must be an object")))
}

fn string<'a>(
    map: &'a serde_json::Map<String, Json>,
    key: &str,
    what: &str,
    required: bool,
) -> StoreResult<Option<&'a str>> {
    match map.get(key) {
        None | Some(Json::Null) if !required => Ok(None),
        None | Some(Json::Null) => Err(invalid(format!("{what} needs `{key}`"))),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(format!("`{key}` of {what} must be a string"))),
    }
}

fn bounded(value: &str, field: &str, min: usize, max: usize) -> StoreResult<()> {
    let len = value.chars().count();
    if len < min || len > max {
        return Err(invalid(format!(
            "`{field}` must be {min} to {max} characters long, not {len}"
        )));
    }
    Ok(())
}

/// A block or content source: `id`, `title` (2 to 40), `description` (at most 150), `icon`.
fn check_component(value: &Json, what: &str) -> StoreResult<()> {
    let map = object(value, what)?;
    let id = string(map, "id", what, true)?.unwrap_or_default();
    validate::name(&format!("{what}.id"), id, 100)?;
    if id.is_empty() {
        return Err(invalid(format!("`id` of {what} must not be empty")));
    }
    bounded(
        string(map, "title", what, true)?.unwrap_or_default(),
        &format!("{what}.title"),
        2,
        40,
    )?;
    if let Some(description) = string(map, "description", what, false)? {
        bounded(description, &format!("{what}.description"), 0, 150)?;
    }
    string(map, "icon", what, false)?;
    Ok(())
}

/// The hosts a block's `urlUnfurl` patterns name (lowercase): its block domains.
fn unfurl_domains(block: &Json, domains: &mut Vec<String>) -> StoreResult<()> {
    let Some(patterns) = block.get("urlUnfurl") else {
        return Ok(());
    };
    let patterns = patterns
        .as_array()
        .ok_or_else(|| invalid("`urlUnfurl` of a block must be an array of URL patterns"))?;
    if patterns.len() > UNFURL_MAX {
        return Err(invalid(format!(
            "a block unfurls at most {UNFURL_MAX} URL patterns"
        )));
    }
    for pattern in patterns {
        let text = pattern
            .as_str()
            .ok_or_else(|| invalid("`urlUnfurl` holds URL patterns (strings)"))?;
        let host = url::Url::parse(text)
            .ok()
            .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
            .ok_or_else(|| invalid(format!("the URL pattern {text:?} of `urlUnfurl` names no host")))?;
        super::check_domain(&host)?;
        if !domains.contains(&host) {
            domains.push(host);
        }
    }
    Ok(())
}

/// `configurations`: `account`, `space` and `site`, each `{properties, required}`; a
/// property has a `type` among string, number, boolean, button.
fn check_configurations(value: &Json) -> StoreResult<()> {
    let map = object(value, "`configurations`")?;
    for (key, schema) in map {
        if !matches!(key.as_str(), "account" | "space" | "site") {
            return Err(invalid(format!(
                "`configurations` has `account`, `space` and `site`, not {key:?}"
            )));
        }
        let what = format!("`configurations.{key}`");
        let schema = object(schema, &what)?;
        let properties = schema
            .get("properties")
            .ok_or_else(|| invalid(format!("{what} needs `properties`")))?;
        let properties = object(properties, &format!("{what}.properties"))?;
        if properties.len() > CONFIGURATION_PROPERTIES_MAX {
            return Err(invalid(format!(
                "{what} has at most {CONFIGURATION_PROPERTIES_MAX} properties"
            )));
        }
        for (name, property) in properties {
            let pwhat = format!("property {name:?} of {what}");
            let property = object(property, &pwhat)?;
            let kind = string(property, "type", &pwhat, true)?.unwrap_or_default();
            if !matches!(kind, "string" | "number" | "boolean" | "button") {
                return Err(invalid(format!(
                    "the type of {pwhat} is string, number, boolean or button, not {kind:?}"
                )));
            }
            if let Some(description) = string(property, "description", &pwhat, false)? {
                bounded(description, "description", 0, 100)?;
            }
        }
        if let Some(required) = schema.get("required") {
            let names = required
                .as_array()
                .filter(|r| r.iter().all(Json::is_string))
                .ok_or_else(|| invalid(format!("`required` of {what} is an array of property names")))?;
            if let Some(unknown) = names
                .iter()
                .filter_map(Json::as_str)
                .find(|n| !properties.contains_key(*n))
            {
                return Err(invalid(format!(
                    "`required` of {what} names {unknown:?}, which is not one of its properties"
                )));
            }
        }
    }
    Ok(())
}

/// A content security policy: a string, or an object of directive strings.
fn check_csp(value: &Json) -> StoreResult<()> {
    match value {
        Json::String(_) => Ok(()),
        Json::Object(map) if map.values().all(Json::is_string) => Ok(()),
        _ => Err(invalid(
            "`contentSecurityPolicy` is a string, or an object of directive strings",
        )),
    }
}

impl Publish {
    /// Every check of the request's fields (no database): 400 naming the field.
    pub fn check(&self) -> StoreResult<()> {
        super::check_name(&self.name)?;
        if let Some(runtime) = &self.runtime
            && !matches!(runtime.as_str(), "v1" | "v2")
        {
            return Err(invalid(format!("`runtime` is v1 or v2, not {runtime:?}")));
        }
        validate::no_control("title", &self.title)?;
        super::check_ref("organization", &self.organization)?;
        // Free text may hold newlines and tabs, but never NUL (PostgreSQL refuses it in text).
        for (field, text) in [
            ("description", Some(&self.description)),
            ("summary", self.summary.as_ref()),
            ("script", Some(&self.script)),
        ] {
            if text.is_some_and(|t| t.contains('\0')) {
                return Err(invalid(format!("`{field}` must not contain NUL characters")));
            }
        }
        bounded(&self.title, "title", 2, 30)?;
        bounded(&self.description, "description", 0, 100)?;
        if let Some(summary) = &self.summary {
            bounded(summary, "summary", 0, 2048)?;
        }
        for scope in &self.scopes {
            if !SCOPES.contains(&scope.as_str()) {
                return Err(invalid(format!(
                    "unknown scope {scope:?}; scopes: {}",
                    SCOPES.join(", ")
                )));
            }
        }
        for category in &self.categories {
            if !CATEGORIES.contains(&category.as_str()) {
                return Err(invalid(format!(
                    "unknown category {category:?}; categories: {}",
                    CATEGORIES.join(", ")
                )));
            }
        }
        if self.blocks.len() > BLOCKS_MAX {
            return Err(invalid(format!("at most {BLOCKS_MAX} blocks")));
        }
        let mut domains = Vec::new();
        for block in &self.blocks {
            check_component(block, "a block")?;
            unfurl_domains(block, &mut domains)?;
        }
        if self.content_sources.len() > CONTENT_SOURCES_MAX {
            return Err(invalid(format!("at most {CONTENT_SOURCES_MAX} content sources")));
        }
        for source in &self.content_sources {
            check_component(source, "a content source")?;
            let map = object(source, "a content source")?;
            let configuration = map
                .get("configuration")
                .ok_or_else(|| invalid("a content source needs `configuration`"))?;
            string(
                object(configuration, "the configuration of a content source")?,
                "componentId",
                "the configuration of a content source",
                true,
            )?;
        }
        if let Some(configurations) = &self.configurations {
            check_configurations(configurations)?;
        }
        if self.external_links.len() > EXTERNAL_LINKS_MAX {
            return Err(invalid(format!("at most {EXTERNAL_LINKS_MAX} external links")));
        }
        for link in &self.external_links {
            let map = object(link, "an external link")?;
            validate::url(
                "externalLinks.url",
                string(map, "url", "an external link", true)?.unwrap_or_default(),
            )?;
            validate::name(
                "externalLinks.label",
                string(map, "label", "an external link", true)?.unwrap_or_default(),
                100,
            )?;
        }
        if let Some(csp) = &self.content_security_policy {
            check_csp(csp)?;
        }
        if self.script.len() > SCRIPT_MAX_BYTES {
            return Err(StoreError::too_large(format!(
                "`script` is at most {SCRIPT_MAX_BYTES} bytes"
            )));
        }
        if self.icon.as_ref().is_some_and(|i| i.len() > ICON_MAX_BYTES) {
            return Err(StoreError::too_large(format!(
                "`icon` is at most {ICON_MAX_BYTES} bytes"
            )));
        }
        if self.preview_images.len() > PREVIEWS_MAX {
            return Err(invalid(format!("at most {PREVIEWS_MAX} preview images")));
        }
        if self.preview_images.iter().any(|p| p.len() > PREVIEW_MAX_BYTES) {
            return Err(StoreError::too_large(format!(
                "a preview image is at most {PREVIEW_MAX_BYTES} bytes"
            )));
        }
        if let Some(secrets) = &self.secrets {
            if secrets.len() > SECRETS_MAX {
                return Err(invalid(format!("at most {SECRETS_MAX} secrets")));
            }
            if let Some((name, _)) = secrets
                .iter()
                .find(|(k, v)| k.is_empty() || k.len() > 100 || v.len() > SECRET_MAX_BYTES)
            {
                return Err(invalid(format!(
                    "secret {:?}: a name has 1 to 100 characters, a value at most {SECRET_MAX_BYTES} bytes",
                    name.chars().take(60).collect::<String>()
                )));
            }
        }
        if let Some(url) = &self.webhook_url {
            validate::url("webhookUrl", url)?;
        }
        if self.definition().to_string().len() > DEFINITION_MAX_BYTES {
            return Err(StoreError::too_large(format!(
                "blocks, content sources, configurations, external links and the content security policy are at most {DEFINITION_MAX_BYTES} bytes of JSON together"
            )));
        }
        Ok(())
    }

    fn definition(&self) -> Json {
        json!({
            "blocks": self.blocks,
            "contentSources": self.content_sources,
            "configurations": self.configurations.clone().unwrap_or_else(|| json!({})),
            "externalLinks": self.external_links,
            "contentSecurityPolicy": self.content_security_policy,
        })
    }

    fn block_domains(&self) -> StoreResult<Vec<String>> {
        let mut domains = Vec::new();
        for block in &self.blocks {
            unfurl_domains(block, &mut domains)?;
        }
        Ok(domains)
    }
}

/// The owner organization named by id or subdomain, when the caller may publish for it (its
/// admins): 404 when it is unknown or invisible to them, 403 when they are not an admin, 409
/// when another organization owns the name.
pub fn authorize_publish(c: &mut dyn Conn, user_id: &str, request: &Publish) -> StoreResult<OrgFor> {
    let org_id: Option<String> = c.query_scalar(
        "SELECT id FROM organizations WHERE id = ?1 OR hostname = ?1 ORDER BY (id = ?1) DESC LIMIT 1",
        crate::params![request.organization.clone()],
    )?;
    let unknown = || {
        StoreError::not_found(format!(
            "organization {:?} not found (by id or subdomain)",
            request.organization
        ))
    };
    let org = orgs::load_for(c, &org_id.ok_or_else(unknown)?, user_id)?
        .filter(|o| o.allows(OrgAction::View))
        .ok_or_else(unknown)?;
    if !org.allows(OrgAction::Admin) {
        return Err(crate::permissions::role_forbidden(
            "publishing integrations",
            crate::permissions::Role::Admin,
            &format!("in organization {:?}", org.org.id),
            org.standing.role(),
        ));
    }
    let owner: Option<String> = c.query_scalar(
        "SELECT organization_id FROM integrations WHERE name = ?1",
        crate::params![request.name.clone()],
    )?;
    if owner.is_some_and(|o| o != org.org.id) {
        return Err(StoreError::conflict(format!(
            "the integration name {:?} belongs to another organization",
            request.name
        )));
    }
    Ok(org)
}

/// Writes the integration (version 1, or the next version of the one of that name), after
/// checking again what [`authorize_publish`] checked. A publish re-enables a webhook that was
/// disabled for failing.
pub fn publish(
    c: &mut dyn Conn,
    key: &SecretsKey,
    user_id: &str,
    request: &Publish,
    assets: &StoredAssets,
) -> StoreResult<IntegrationFor> {
    let org = authorize_publish(c, user_id, request)?;
    let now = crate::clock::now_ms();
    let secrets = match &request.secrets {
        None => None,
        Some(map) => Some(
            key.seal(
                serde_json::to_string(map)
                    .map_err(|e| StoreError::internal(e.to_string()))?
                    .as_bytes(),
            )?,
        ),
    };
    let definition = request.definition().to_string();
    let previews =
        serde_json::to_string(&assets.preview_images).map_err(|e| StoreError::internal(e.to_string()))?;
    let domains = request.block_domains()?.join(" ");
    let existing: Option<String> = c.query_scalar(
        "SELECT id FROM integrations WHERE name = ?1",
        crate::params![request.name.clone()],
    )?;
    let visibility = request.visibility.unwrap_or(Visibility::Private);
    let target = request.target.unwrap_or(Target::All);
    let runtime = request.runtime.clone().unwrap_or_else(|| "v1".into());
    match existing {
        Some(id) => {
            // Secrets are replaced only when the request gives them.
            c.execute(
                "UPDATE integrations SET version = version + 1, runtime = ?2, title = ?3, description = ?4,
                     summary = ?5, visibility = ?6, target = ?7, scopes = ?8, categories = ?9,
                     has_blocks = ?10, has_content_sources = ?11, block_domains = ?12, definition = ?13,
                     icon = ?14, preview_images = ?15, script = ?16, secrets = COALESCE(?17, secrets),
                     webhook_url = ?18, webhook_failing_since = NULL, webhook_disabled_at = NULL,
                     updated_at = ?19
                 WHERE id = ?1",
                crate::params![
                    id,
                    runtime,
                    request.title.clone(),
                    request.description.clone(),
                    request.summary.clone(),
                    visibility.as_str(),
                    target.as_str(),
                    request.scopes.join(" "),
                    request.categories.join(" "),
                    !request.blocks.is_empty(),
                    !request.content_sources.is_empty(),
                    domains,
                    definition,
                    assets.icon.clone(),
                    previews,
                    assets.script.clone(),
                    secrets,
                    request.webhook_url.clone(),
                    now
                ],
            )?;
        }
        None => {
            let signing = key.seal(crate::ids::random_base62(43).as_bytes())?;
            c.execute(
                "INSERT INTO integrations (id, name, organization_id, version, runtime, title, description,
                     summary, visibility, target, scopes, categories, has_blocks, has_content_sources,
                     block_domains, definition, icon, preview_images, script, secrets, signing_secret,
                     webhook_url, dev_all, created_at, updated_at)
                 VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                     ?18, ?19, ?20, ?21, ?22, ?23, ?23)",
                crate::params![
                    crate::ids::new_id(),
                    request.name.clone(),
                    org.org.id.clone(),
                    runtime,
                    request.title.clone(),
                    request.description.clone(),
                    request.summary.clone(),
                    visibility.as_str(),
                    target.as_str(),
                    request.scopes.join(" "),
                    request.categories.join(" "),
                    !request.blocks.is_empty(),
                    !request.content_sources.is_empty(),
                    domains,
                    definition,
                    assets.icon.clone(),
                    previews,
                    assets.script.clone(),
                    secrets,
                    signing,
                    request.webhook_url.clone(),
                    false,
                    now
                ],
            )?;
        }
    }
    let published = model::load_for(c, &request.name, user_id)?
        .ok_or_else(|| StoreError::internal("the published integration is missing"))?;
    let i = &published.integration;
    crate::events::record(
        c,
        crate::events::Event::in_org(
            &i.org_id,
            &i.id,
            Some(user_id),
            crate::events::IntegrationPublished {
                integration_id: &i.id,
                name: &i.name,
                version: i.version,
            },
        ),
    )?;
    Ok(published)
}
