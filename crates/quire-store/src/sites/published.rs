//! The published view of a site: what a visitor may read, decided by the site's visibility
//! (share key, visitor token, membership) and, with adaptive content on, by the conditions of
//! its sections and site spaces evaluated with the visitor's claims (`quire-adaptive`, the one
//! evaluator the reader site uses too).
//!
//! Everything the view needs is loaded in a few statements ([`load`]) and kept while the
//! database has not changed ([`PublishedCache`], keyed by site), so a visitor's request costs a
//! token check, one evaluation per condition, and the rendering.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use quire_adaptive::{AdaptiveSchema, Claims, Condition};

use super::model::{self, Site, SiteVisibility, Structure};
use crate::db::{Args, Db, Stamp};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Role, Standing};
use crate::spaces::Space;
use crate::stamped::StampedCache;

/// A published site as loaded: immutable, shared between requests.
#[derive(Debug)]
pub struct Published {
    /// Unique per load: what was rendered from one load may be kept by it.
    pub generation: u64,
    pub site: Site,
    pub tree: Structure,
    /// The live spaces the site spaces show, by id.
    pub spaces: HashMap<String, Space>,
    /// The site's customization, and each site space's, parsed.
    pub customization: Option<serde_json::Value>,
    pub site_space_customizations: HashMap<String, serde_json::Value>,
    schema: AdaptiveSchema,
    /// The parsed conditions of sections, site spaces and external links, by their id; None for
    /// one that no longer parses (checked when set, so only by a change of the language), which
    /// hides.
    conditions: HashMap<String, Option<Condition>>,
    share_keys: Vec<String>,
    /// The sections and external links that are not live: drafts, and those in a draft group
    /// (made with the load, not at each visitor's request).
    not_live: std::collections::HashSet<String>,
}

static GENERATION: AtomicU64 = AtomicU64::new(1);

impl Published {
    /// The claims a visitor states as `json` (a token's, with `unsigned`), read with the site's
    /// adaptive schema: how a URL lookup's `apiToken` carries its visitor to later reads.
    pub fn claims(&self, json: &serde_json::Value) -> Claims {
        Claims::new(json, &self.schema)
    }

    /// The claims a visitor gets from what an identity provider said about them (attribute name
    /// to values): each signed claim of the site's adaptive schema that an attribute of the same
    /// name carries, converted to the claim's type; attributes the schema does not name, and
    /// values that do not convert, are left out.
    pub fn claims_from_attributes(
        &self,
        attributes: &std::collections::BTreeMap<String, Vec<String>>,
    ) -> serde_json::Map<String, serde_json::Value> {
        use quire_adaptive::schema::ClaimKind;
        use serde_json::Value;
        let mut claims = serde_json::Map::new();
        for claim in self.schema.claims() {
            let Some(value) = attributes.get(&claim.name).and_then(|v| v.first()) else {
                continue;
            };
            let value = value.trim();
            let converted = match &claim.kind {
                ClaimKind::Boolean => match value.to_ascii_lowercase().as_str() {
                    "true" | "1" | "yes" => Some(Value::Bool(true)),
                    "false" | "0" | "no" => Some(Value::Bool(false)),
                    _ => None,
                },
                ClaimKind::String => Some(Value::String(value.to_string())),
                ClaimKind::Enum(values) => values
                    .iter()
                    .any(|v| v == value)
                    .then(|| Value::String(value.to_string())),
                ClaimKind::Integer => value.parse::<i64>().ok().map(Value::from),
                ClaimKind::Number => value
                    .parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number),
            };
            if let Some(converted) = converted {
                claims.insert(claim.name.clone(), converted);
            }
        }
        claims
    }

    /// The space `space_id`, as its reader, when a site space the visitor with `claims` is shown
    /// holds it: what a lookup's `apiToken` may read.
    pub fn shown_space(&self, claims: &Claims, space_id: &str) -> Option<crate::spaces::SpaceFor> {
        let shown = shown(self, claims);
        let holds = self
            .tree
            .site_spaces
            .iter()
            .zip(shown.site_spaces)
            .any(|(ss, shown)| shown && ss.space_id == space_id);
        let space = self.spaces.get(space_id).filter(|_| holds)?;
        Some(crate::spaces::SpaceFor {
            space: space.clone(),
            role: Some(Role::Read),
        })
    }
}

/// Loads a site's view as it would be published (a preview of it while it is not); None when
/// there is no such site.
pub fn load(c: &mut dyn crate::db::Conn, org_id: &str, site_id: &str) -> StoreResult<Option<Published>> {
    let Some(site) = model::load_site(c, org_id, site_id)? else {
        return Ok(None);
    };
    let tree = model::load_structure(c, site_id)?;
    let mut spaces = HashMap::new();
    if !tree.site_spaces.is_empty() {
        let mut args = Args::default();
        let list = args.list(tree.site_spaces.iter().map(|s| s.space_id.clone()));
        let sql = format!(
            "SELECT {} FROM spaces s WHERE s.id IN ({list}) AND s.deleted_at IS NULL",
            crate::spaces::model::columns()
        );
        for row in c.query(&sql, args.values())? {
            let space = Space::from_row(&row)?;
            spaces.insert(space.id.clone(), space);
        }
    }
    let schema = site.schema()?;
    let mut conditions = HashMap::new();
    let guarded = tree
        .sections
        .iter()
        .map(|s| (&s.id, &s.condition))
        .chain(tree.site_spaces.iter().map(|s| (&s.id, &s.condition)))
        .chain(tree.links.iter().map(|l| (&l.id, &l.condition)));
    for (id, condition) in guarded {
        if let Some(text) = condition {
            conditions.insert(id.clone(), Condition::parse(text).ok());
        }
    }
    let parse = |text: &Option<String>| text.as_deref().and_then(|t| serde_json::from_str(t).ok());
    let customization = parse(&site.customization);
    let site_space_customizations = tree
        .site_spaces
        .iter()
        .filter_map(|s| parse(&s.customization).map(|v| (s.id.clone(), v)))
        .collect();
    let share_keys = if site.visibility == SiteVisibility::ShareLink {
        super::share_links::active_keys(c, site_id)?
    } else {
        Vec::new()
    };
    let not_live = tree
        .sections
        .iter()
        .map(|s| (&s.id, s.draft, s.group.as_deref()))
        .chain(tree.links.iter().map(|l| (&l.id, l.draft, l.group.as_deref())))
        .filter(|(_, draft, group)| *draft || in_draft_group(&tree, *group))
        .map(|(id, _, _)| id.clone())
        .collect();
    Ok(Some(Published {
        generation: GENERATION.fetch_add(1, Ordering::Relaxed),
        site,
        tree,
        spaces,
        customization,
        site_space_customizations,
        schema,
        conditions,
        share_keys,
        not_live,
    }))
}

/// Who asks: what they present, and their standing in the site's organization (for
/// `in-collection` sites).
#[derive(Clone, Copy, Debug)]
pub struct Visitor<'a> {
    pub share_key: Option<&'a str>,
    /// A visitor token (JWT, HS256, signed with the site's visitor key, `aud` the site id).
    pub token: Option<&'a str>,
    pub standing: Standing,
    /// Holds a valid preview token of the site (checked by the reader, which signed it): reads
    /// it as a member previews it, whatever its visibility.
    pub preview: bool,
    /// Claims the visitor states without a signature (GitBook's `visitor.unsignedClaims`):
    /// conditions read them as `visitor.claims.unsigned.*`, next to the token's.
    pub unsigned: Option<&'a serde_json::Value>,
}

/// The claims of a visitor the site admits; 404 for anyone else, whatever the reason (no
/// share key, a revoked one, no token, a token expired, badly signed or for another audience),
/// so that nothing tells a hidden site from an absent one.
pub fn admit(p: &Published, visitor: &Visitor<'_>) -> StoreResult<Claims> {
    admit_stating(p, visitor).map(|(claims, _)| claims)
}

/// As [`admit`], with the claims as the visitor states them: the token's, and the unsigned ones
/// under `unsigned` (what a token minted for this visitor carries).
pub fn admit_stating(p: &Published, visitor: &Visitor<'_>) -> StoreResult<(Claims, serde_json::Value)> {
    let refused = || model::not_found(&p.site.id);
    let mut json = match visitor.token {
        Some(token) => verify_token(&p.site, token).map_err(|_| refused())?,
        None => serde_json::Value::Object(serde_json::Map::new()),
    };
    if let (Some(unsigned), serde_json::Value::Object(object)) = (visitor.unsigned, &mut json) {
        object.insert("unsigned".into(), unsigned.clone());
    }
    let claims = Claims::new(&json, &p.schema);
    let admitted = visitor.preview
        || match p.site.visibility {
            SiteVisibility::Public | SiteVisibility::Unlisted => true,
            SiteVisibility::ShareLink => visitor
                .share_key
                .is_some_and(|key| p.share_keys.iter().any(|k| k == key)),
            SiteVisibility::VisitorAuth => visitor.token.is_some(),
            SiteVisibility::InCollection => visitor.standing.at_least(Role::Read),
        };
    if !admitted {
        return Err(refused());
    }
    Ok((claims, json))
}

/// Why a visitor token is refused (never told to the visitor; for tests and logs).
#[derive(Debug, PartialEq, Eq)]
pub enum TokenError {
    Invalid(String),
}

/// Verifies a visitor token: HS256 signed with the site's key, `exp` in the future (no leeway),
/// `aud` the site's id. Answers its claims.
pub fn verify_token(site: &Site, token: &str) -> Result<serde_json::Value, TokenError> {
    use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode};
    let mut validation = Validation::new(Algorithm::HS256);
    validation.leeway = 0;
    validation.set_audience(&[site.id.as_str()]);
    validation.set_required_spec_claims(&["exp", "aud"]);
    let key = DecodingKey::from_secret(site.visitor_key.as_bytes());
    decode::<serde_json::Value>(token, &key, &validation)
        .map(|data| data.claims)
        .map_err(|e| TokenError::Invalid(e.to_string()))
}

/// A visitor token for `site`, signed as the site's own sign-in would sign one (HS256 with its
/// visitor key, `aud` the site), carrying `claims` until `exp_s` (Unix seconds).
pub fn mint_token(
    site: &Site,
    claims: serde_json::Map<String, serde_json::Value>,
    exp_s: i64,
) -> StoreResult<String> {
    use jsonwebtoken::{EncodingKey, Header, encode};
    let mut body = claims;
    body.insert("aud".into(), site.id.clone().into());
    body.insert("exp".into(), exp_s.into());
    encode(
        &Header::default(),
        &body,
        &EncodingKey::from_secret(site.visitor_key.as_bytes()),
    )
    .map_err(|e| StoreError::internal(format!("signing a visitor token failed: {e}")))
}

/// Which sections, site spaces and external links a visitor sees, in the order of
/// `tree.sections`, `tree.site_spaces` and `tree.links`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shown {
    pub sections: Vec<bool>,
    pub site_spaces: Vec<bool>,
    pub links: Vec<bool>,
}

/// Whether `group` or a group it is in is a draft.
fn in_draft_group<'a>(tree: &'a Structure, mut group: Option<&'a str>) -> bool {
    // Groups nest by parent ids the store keeps acyclic; the bound is a second guard.
    for _ in 0..=tree.groups.len() {
        match group.and_then(|g| tree.group(g)) {
            Some(g) if g.draft => return true,
            Some(g) => group = g.parent.as_deref(),
            None => return false,
        }
    }
    false
}

/// What a visitor with `claims` sees: a site space that is live (not a draft) and whose space
/// is, whose condition holds and whose section is shown; a section that is live, in no draft
/// group, whose condition holds and that shows a site space; an external link that is live, in
/// no draft group, and whose condition holds. Conditions apply when the site's
/// adaptive content is enabled.
pub fn shown(p: &Published, claims: &Claims) -> Shown {
    let holds = |id: &str| {
        !p.site.adaptive_enabled
            || match p.conditions.get(id) {
                None => true,
                Some(Some(condition)) => condition.evaluate(claims),
                Some(None) => false,
            }
    };
    let section_holds: HashMap<&str, bool> = p
        .tree
        .sections
        .iter()
        .map(|s| (s.id.as_str(), !p.not_live.contains(&s.id) && holds(&s.id)))
        .collect();
    let site_spaces: Vec<bool> = p
        .tree
        .site_spaces
        .iter()
        .map(|ss| {
            !ss.draft
                && p.spaces.contains_key(&ss.space_id)
                && holds(&ss.id)
                && ss
                    .section
                    .as_deref()
                    .is_none_or(|s| section_holds.get(s).copied().unwrap_or(false))
        })
        .collect();
    let sections = p
        .tree
        .sections
        .iter()
        .map(|s| {
            section_holds.get(s.id.as_str()).copied().unwrap_or(false)
                && p.tree
                    .site_spaces
                    .iter()
                    .zip(&site_spaces)
                    .any(|(ss, shown)| *shown && ss.section.as_deref() == Some(s.id.as_str()))
        })
        .collect();
    let links = p
        .tree
        .links
        .iter()
        .map(|l| !p.not_live.contains(&l.id) && holds(&l.id))
        .collect();
    Shown {
        sections,
        site_spaces,
        links,
    }
}

impl Published {
    /// What this load was read as, for [`PublishedCache`] to tell an unchanged load: every
    /// row it was made from (what is parsed from them follows). Debug output, because these
    /// rows have no other common form; maps in key order.
    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let spaces: std::collections::BTreeMap<&String, &Space> = self.spaces.iter().collect();
        let customizations: std::collections::BTreeMap<&String, &serde_json::Value> =
            self.site_space_customizations.iter().collect();
        let text = format!(
            "{:?}{:?}{spaces:?}{:?}{customizations:?}{:?}",
            self.site, self.tree, self.customization, self.share_keys
        );
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        hasher.finish()
    }
}

/// The last load of each site, by (organization, site): the stamp it was read at, its
/// fingerprint, its generation.
type LastLoads = Arc<std::sync::Mutex<HashMap<(String, String), (Stamp, u64, u64)>>>;

/// Published views kept while the database has not changed, by (organization, site).
pub struct PublishedCache {
    pub(crate) entries: StampedCache<(String, String), Arc<Published>>,
    last: LastLoads,
}

impl Default for PublishedCache {
    fn default() -> Self {
        PublishedCache {
            entries: StampedCache::new(1_000),
            last: Arc::default(),
        }
    }
}

impl PublishedCache {
    /// The published view of a site; 404 when it is absent or not published.
    pub async fn load(&self, db: &Db, org_id: &str, site_id: &str) -> StoreResult<Arc<Published>> {
        self.load_at(db, db.stamp(), org_id, site_id).await
    }

    /// [`PublishedCache::load`] with a stamp taken before (see `StampedCache::get_or_read_at`).
    pub async fn load_at(
        &self,
        db: &Db,
        stamp: Option<Stamp>,
        org_id: &str,
        site_id: &str,
    ) -> StoreResult<Arc<Published>> {
        let view = self.preview_at(db, stamp, org_id, site_id).await?;
        if !view.site.published {
            return Err(model::not_found(site_id));
        }
        Ok(view)
    }

    /// The view of a site as it would be published, published or not (a preview); 404 when it
    /// is absent. The same entries as [`PublishedCache::load_at`]: publishing moves the stamp.
    pub async fn preview_at(
        &self,
        db: &Db,
        stamp: Option<Stamp>,
        org_id: &str,
        site_id: &str,
    ) -> StoreResult<Arc<Published>> {
        let key = (org_id.to_string(), site_id.to_string());
        let (org, site) = key.clone();
        let (watch, last, site_key) = (db.clone(), self.last.clone(), key.clone());
        let found = self
            .entries
            .get_or_read_at(
                db,
                stamp,
                key,
                move |c| -> Result<Option<Arc<Published>>, StoreError> {
                    // Taken before reading, as the cache's own.
                    let stamp = watch.stamp();
                    let Some(mut published) = load(c, &org, &site)? else {
                        return Ok(None);
                    };
                    // A kept view is read again after `stamped::MAX_AGE` even when nothing was
                    // written: a load read at the same stamp, made of the same rows, keeps the
                    // generation of the one before, and with it what the reader rendered from it
                    // (a new one every few seconds emptied the reader's cache of a quiet site).
                    // Any write moves the stamp, and so still makes a new generation. (Should a
                    // PostgreSQL notification be lost, a change of these rows still shows within
                    // MAX_AGE; one of what is read apart, the site's redirects, waits for the next
                    // write.)
                    if let Some(stamp) = stamp {
                        let fingerprint = published.fingerprint();
                        let mut last = last.lock().unwrap_or_else(|p| p.into_inner());
                        if let Some(&(was, same, generation)) = last.get(&site_key)
                            && was == stamp
                            && same == fingerprint
                        {
                            published.generation = generation;
                        }
                        last.insert(site_key, (stamp, fingerprint, published.generation));
                    }
                    Ok(Some(Arc::new(published)))
                },
            )
            .await?;
        found.ok_or_else(|| model::not_found(site_id))
    }
}
