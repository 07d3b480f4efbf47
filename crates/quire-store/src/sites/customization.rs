//! Customization of a site and of its site spaces: GitBook's `SiteCustomizationSettings`,
//! stored as given (JSON, checked by the API's types) and answered complete: every block GitBook
//! has, the reader's defaults ([`defaults`]) where nothing was set, the site's settings over
//! them, a site space's own over the site's ([`effective`]).

use serde_json::{Value, json};

use super::model::SiteFor;
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Authorized, site};
use crate::{clock, params};

/// A customization as stored: the JSON and when it was set (None: never set).
#[derive(Clone, Debug, Default)]
pub struct Stored {
    pub json: Option<serde_json::Value>,
    pub updated_at: Option<i64>,
}

fn parse(site_id: &str, text: Option<&str>) -> StoreResult<Option<serde_json::Value>> {
    text.map(|t| {
        serde_json::from_str(t)
            .map_err(|e| StoreError::internal(format!("stored customization of site {site_id:?}: {e}")))
    })
    .transpose()
}

/// The site's customization.
pub fn of_site(site: &SiteFor) -> StoreResult<Stored> {
    Ok(Stored {
        json: parse(&site.site.id, site.site.customization.as_deref())?,
        updated_at: site.site.customization_updated_at,
    })
}

/// Replaces the site's customization.
pub fn set_site(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    json: &serde_json::Value,
) -> StoreResult<Stored> {
    let now = clock::now_ms();
    c.execute(
        "UPDATE sites SET customization = ?2, customization_updated_at = ?3, updated_at = ?3 WHERE id = ?1",
        params![site.site.id.clone(), json.to_string(), now],
    )?;
    Ok(Stored {
        json: Some(json.clone()),
        updated_at: Some(now),
    })
}

fn site_space_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("site space {id:?} not found"))
}

/// A site space's own customization (over the site's).
pub fn of_site_space(c: &mut dyn Conn, site: &SiteFor, site_space: &str) -> StoreResult<Stored> {
    let row = c
        .query_opt(
            "SELECT customization, customization_updated_at FROM site_spaces WHERE id = ?1 AND site_id = ?2",
            params![site_space, site.site.id.clone()],
        )?
        .ok_or_else(|| site_space_not_found(site_space))?;
    let text: Option<String> = row.get(0)?;
    Ok(Stored {
        json: parse(&site.site.id, text.as_deref())?,
        updated_at: row.get(1)?,
    })
}

/// Replaces a site space's customization.
pub fn set_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    site_space: &str,
    json: &serde_json::Value,
) -> StoreResult<Stored> {
    let now = clock::now_ms();
    let changed = c.execute(
        "UPDATE site_spaces SET customization = ?3, customization_updated_at = ?4 WHERE id = ?1 AND site_id = ?2",
        params![site_space, site.site.id.clone(), json.to_string(), now],
    )?;
    if changed == 0 {
        return Err(site_space_not_found(site_space));
    }
    Ok(Stored {
        json: Some(json.clone()),
        updated_at: Some(now),
    })
}

/// Removes a site space's own customization; whether it had one. 404 when the site has no such
/// site space.
pub fn clear_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    site_space: &str,
) -> StoreResult<()> {
    c.execute(
        "UPDATE site_spaces SET customization = NULL, customization_updated_at = NULL
         WHERE id = ?1 AND site_id = ?2",
        params![site_space, site.site.id.clone()],
    )?;
    Ok(())
}

/// What the reader renders a site with that set nothing, in GitBook's names: its colors
/// (`reader.css`), rounded corners, the visitor's light or dark theme with a toggle, pagination
/// between pages, external links in the same tab; none of what it does not have (feedback, AI,
/// page actions, a trademark, tracking).
pub fn defaults() -> Value {
    let color = |light: &str, dark: &str| json!({"light": light, "dark": dark});
    let code = json!({"light": "default-light", "dark": "default-dark"});
    json!({
        "styling": {
            "theme": "clean",
            "primaryColor": color("#2f6fe4", "#6c9fff"),
            "infoColor": color("#2f6fe4", "#6c9fff"),
            "successColor": color("#1a8a4a", "#3fb970"),
            "warningColor": color("#c47a00", "#e0a030"),
            "dangerColor": color("#d1343f", "#f26b73"),
            "corners": "rounded",
            "depth": "subtle",
            "links": "default",
            "font": "Inter",
            "monospaceFont": "FiraCode",
            "codeTheme": {"default": code, "openapi": code},
            "background": "plain",
            "icons": "regular",
            "sidebar": {"background": "default", "list": "default"},
            "search": "subtle",
        },
        "internationalization": {"locale": "en"},
        "favicon": {},
        "header": {"preset": "default", "links": []},
        "footer": {"groups": []},
        "themes": {"default": "system", "toggeable": true},
        "feedback": {"enabled": false},
        "ai": {"mode": "none"},
        "advancedCustomization": {"enabled": false},
        "pageActions": {"items": []},
        "externalLinks": {"target": "self"},
        "pagination": {"enabled": true},
        "trademark": {"enabled": false},
        "privacyPolicy": {},
        "socialPreview": {},
        "socialAccounts": [],
        "insights": {"trackingCookie": false},
    })
}

/// Lays `over` onto `base`: objects merge key by key (recursively), anything else replaces. A
/// site space's customization changes what it sets and keeps the site's for the rest.
pub fn overlay(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(base), Value::Object(over)) => {
            for (key, value) in over {
                match base.get_mut(key) {
                    Some(existing) => overlay(existing, value),
                    None => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, over) => *base = over.clone(),
    }
}

/// A JSON merge patch (RFC 7396) applied to `target`: objects merge key by key, `null` removes
/// a key, anything else replaces. How a site space's override is changed (`PATCH`).
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(target) = target {
        for (key, value) in patch {
            if value.is_null() {
                target.remove(key);
            } else {
                merge_patch(target.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// The settings a site (or one of its site spaces) is rendered with: the defaults, the site's
/// over them, the site space's own over those.
pub fn effective(site: Option<&Value>, site_space: Option<&Value>) -> Value {
    let mut out = defaults();
    for over in [site, site_space].into_iter().flatten() {
        overlay(&mut out, over);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_effective_settings_lay_the_site_and_its_site_space_over_the_defaults() {
        let site = json!({"styling": {"theme": "bold"}, "pagination": {"enabled": false}});
        let own = json!({"styling": {"primaryColor": {"light": "#000", "dark": "#fff"}}});
        let out = effective(Some(&site), Some(&own));
        assert_eq!(out["styling"]["theme"], "bold");
        assert_eq!(out["styling"]["primaryColor"]["dark"], "#fff");
        assert_eq!(out["styling"]["corners"], "rounded", "a default kept");
        assert_eq!(out["pagination"]["enabled"], false);
        assert_eq!(out["themes"], json!({"default": "system", "toggeable": true}));
    }

    #[test]
    fn a_merge_patch_removes_what_is_null_and_replaces_the_rest() {
        let mut own = json!({"title": "A", "styling": {"theme": "bold", "corners": "straight"}});
        merge_patch(
            &mut own,
            &json!({"title": null, "styling": {"theme": "muted"}, "feedback": {"enabled": true}}),
        );
        assert_eq!(
            own,
            json!({"styling": {"theme": "muted", "corners": "straight"}, "feedback": {"enabled": true}})
        );
        merge_patch(&mut own, &json!({"styling": null}));
        assert_eq!(own, json!({"feedback": {"enabled": true}}));
    }
}
