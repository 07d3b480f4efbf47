//! The `sites` phase: a docs site's published view, as a visitor reads it.
//!
//! Before measuring, it builds through the API, in the dataset's first organization (the one
//! with the big space), two sites of the same shape: [`SECTIONS`] sections in [`GROUPS`]
//! section groups and [`SITE_SPACES`] site spaces (the big space is the first section's; the
//! others are the organization's other spaces, made when the dataset has too few):
//!
//! - the **adaptive** site: visibility `visitor-auth`, an adaptive schema with a boolean claim
//!   (`isBeta`) and an enum claim (`plan`), conditions on half the sections and half the added
//!   site spaces, adaptive content enabled; read with a visitor token (JWT, HS256, signed with
//!   the site's key from `GET .../publishing/auth`, `aud` the site, `exp` a day ahead) whose
//!   claims satisfy every condition ([`SITE_PUBLISHED`]), so that the view is the plain site's
//!   and the two differ only by the token check and the evaluation of the conditions. Another
//!   visitor's token (`isBeta: false, plan: free`), read once, must see less: the conditions
//!   do apply;
//! - the **plain** site: visibility `public`, no schema, no conditions, read without a visitor
//!   token ([`SITE_PUBLISHED_PLAIN`]).
//!
//! Both are published, then `GET /v1/orgs/{org}/sites/{siteId}/published` is measured on each
//! at `--connections`, in alternating slices (as the list pages are: the ratio of the two is the
//! cost of the token and the conditions, and must not depend on which ran while the machine was
//! busy), and again on one connection when the run has an unloaded pass.

use std::net::SocketAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::dataset::Dataset;
use crate::load::{Driver, Family, FamilyResult};

pub const SECTIONS: usize = 20;
pub const GROUPS: usize = 4;
pub const SITE_SPACES: usize = 60;
/// Budget: p99 of the adaptive site's published view at 64 connections.
pub const P99_MS: f64 = 10.0;
/// The concurrency of the budget.
pub const BUDGET_CONNECTIONS: usize = 64;

pub const SITE_PUBLISHED: &str = "site-published";
pub const SITE_PUBLISHED_PLAIN: &str = "site-published-plain";

/// The visitor's claims: a beta user on the `pro` plan.
const SCHEMA: &str = r#"{"type": "object", "properties": {
    "isBeta": {"type": "boolean", "description": "In the beta program"},
    "plan": {"type": "string", "enum": ["free", "pro", "enterprise"]}
}, "additionalProperties": false}"#;

/// Conditions of the odd sections, in turn. Every condition holds for the measured visitor
/// (`isBeta: true, plan: pro`); the sections' hold for none of the other visitor's
/// (`isBeta: false, plan: free`).
const SECTION_CONDITIONS: [&str; 2] = [
    "visitor.claims.isBeta == true",
    "visitor.claims.plan == \"enterprise\" || visitor.claims.plan == \"pro\"",
];
/// Conditions of every other added site space, in turn; the first fails for the other visitor.
const SITE_SPACE_CONDITIONS: [&str; 2] = [
    "(visitor.claims.plan == \"pro\" || visitor.claims.plan == \"enterprise\") && visitor.claims.isBeta == true",
    "visitor.claims.plan != \"free\" || visitor.claims.isBeta == false",
];
/// The measured visitor's claims, and the other visitor's.
const VISITOR: (bool, &str) = (true, "pro");
const OTHER_VISITOR: (bool, &str) = (false, "free");

/// What the driver's `site-published*` families request.
#[derive(Clone, Debug, Default)]
pub struct Targets {
    pub org: String,
    /// The adaptive (visitor-auth) site and the visitor token it is read with.
    pub site: String,
    pub visitor_token: String,
    /// The plain (public) site.
    pub plain_site: String,
    pub detail: String,
    pub plain_detail: String,
}

impl Targets {
    pub fn path(&self) -> String {
        format!(
            "/v1/orgs/{}/sites/{}/published?visitorAuthToken={}",
            self.org, self.site, self.visitor_token
        )
    }

    pub fn plain_path(&self) -> String {
        format!("/v1/orgs/{}/sites/{}/published", self.org, self.plain_site)
    }
}

/// One site as made, and what its published view showed the phase's caller.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SiteMade {
    pub id: String,
    pub visibility: String,
    pub sections: usize,
    pub groups: usize,
    pub site_spaces: usize,
    /// Conditions set on sections and on site spaces.
    pub section_conditions: usize,
    pub site_space_conditions: usize,
    /// What the published view showed (with the visitor token for the adaptive site).
    pub shown_sections: usize,
    pub shown_site_spaces: usize,
    pub body_bytes: usize,
    /// What it showed the other visitor (adaptive site only).
    #[serde(default)]
    pub other_visitor_shown: Option<(usize, usize)>,
}

/// What the phase made and measured; the figures themselves go with the other families'
/// (`EngineReport::results` and `single`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SitesResult {
    pub org: String,
    /// The adaptive (visitor-auth) site and the plain (public) one.
    pub adaptive: Option<SiteMade>,
    pub plain: Option<SiteMade>,
    /// Spaces the phase made in the organization (the dataset had fewer than [`SITE_SPACES`]).
    pub spaces_made: usize,
    /// Seconds to build and publish both sites.
    pub setup_seconds: f64,
    /// The server has no docs site routes: nothing measured.
    pub sites_missing: bool,
    pub failure: Option<String>,
    /// Peak resident set of the server during the phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

/// Runs the phase: builds the two sites, then measures both at `connections` and, when
/// `latency_duration` is not zero, on one connection. Answers what it made and the figures at
/// `connections` and on one connection.
pub async fn run(
    driver: &Driver,
    connections: usize,
    warmup: Duration,
    duration: Duration,
    latency_duration: Duration,
) -> (SitesResult, Vec<FamilyResult>, Vec<FamilyResult>) {
    let mut out = SitesResult::default();
    let started = std::time::Instant::now();
    let targets = match setup(driver.addr(), driver.dataset(), &mut out).await {
        Ok(Some(t)) => t,
        Ok(None) => {
            out.sites_missing = true;
            out.failure = Some("the server has no docs site routes".into());
            return (out, Vec::new(), Vec::new());
        }
        Err(e) => {
            eprintln!("sites: {e}");
            out.failure = Some(e);
            return (out, Vec::new(), Vec::new());
        }
    };
    out.setup_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "sites: two sites built and published in {:.1} s",
        out.setup_seconds
    );
    let driver = driver.with_sites(targets);
    let families = [Family::SitePublished, Family::SitePublishedPlain];
    let mut loaded = Vec::new();
    let mut single = Vec::new();
    match measure(&driver, families, connections, warmup, duration).await {
        Ok(rs) => loaded = rs,
        Err(e) => out.failure = Some(e),
    }
    if out.failure.is_none() && latency_duration > Duration::ZERO {
        match measure(&driver, families, 1, warmup, latency_duration).await {
            Ok(rs) => single = rs,
            Err(e) => out.failure = Some(e),
        }
    }
    (out, loaded, single)
}

async fn measure(
    driver: &Driver,
    families: [Family; 2],
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<Vec<FamilyResult>, String> {
    eprintln!(
        "sites: {} and {} at {connections} connection(s), alternating",
        families[0].name(),
        families[1].name()
    );
    let sides = [(driver, families[0]), (driver, families[1])];
    let rs = crate::load::alternate(
        sides,
        connections,
        warmup,
        duration,
        crate::load::ALTERNATING_ROUNDS,
    )
    .await?;
    eprint!("{}", crate::load::table(&rs));
    Ok(rs.to_vec())
}

/// The organization's spaces for the sites: the big space first, then the organization's other
/// spaces of the dataset, then spaces made for the phase until there are [`SITE_SPACES`].
async fn spaces(conn: &mut Conn, data: &Dataset, org: &str) -> Result<(Vec<String>, usize), String> {
    // The dataset's spaces are the big one, then each organization's in turn: the first
    // organization's are the first `list_org_spaces`.
    let mut spaces: Vec<String> = data
        .spaces
        .iter()
        .take(data.list_org_spaces.max(1))
        .filter(|s| **s != data.big_space)
        .take(SITE_SPACES - 1)
        .cloned()
        .collect();
    spaces.insert(0, data.big_space.clone());
    let mut made = 0;
    while spaces.len() < SITE_SPACES {
        let title = format!("Site space {}", spaces.len() + 1);
        let a = conn
            .post(
                &format!("/v1/orgs/{org}/spaces"),
                &data.admin_token,
                &json!({"title": title}),
            )
            .await?;
        spaces.push(id_of(&a, "create a space")?);
        made += 1;
    }
    Ok((spaces, made))
}

fn id_of(a: &crate::conn::Answer, what: &str) -> Result<String, String> {
    if !a.ok() {
        return Err(format!("{what}: {}", a.describe()));
    }
    a.json()["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {}", a.describe()))
}

/// Sends one management request with the administrator's token; a non-2xx answer is an error.
async fn call(
    conn: &mut Conn,
    method: http::Method,
    path: &str,
    token: &str,
    body: Value,
) -> Result<Value, String> {
    let a = conn.send(method.clone(), path, token, Some(&body)).await?;
    if !a.ok() {
        return Err(format!("{method} {path}: {}", a.describe()));
    }
    Ok(a.json())
}

/// Builds and publishes both sites; None when the server has no site routes.
async fn setup(addr: SocketAddr, data: &Dataset, out: &mut SitesResult) -> Result<Option<Targets>, String> {
    let org = if data.list_org.is_empty() {
        data.orgs
            .first()
            .cloned()
            .ok_or("the dataset has no organization")?
    } else {
        data.list_org.clone()
    };
    out.org = org.clone();
    let token = data.admin_token.clone();
    let mut conn = Conn::new(addr)?;
    let probe = conn.get(&format!("/v1/orgs/{org}/sites"), &token).await?;
    if probe.no_route() {
        return Ok(None);
    }
    let (spaces, made) = spaces(&mut conn, data, &org).await?;
    out.spaces_made = made;
    let (site, mut adaptive) = build(&mut conn, &org, &token, &spaces, true).await?;
    let (plain_site, mut plain) = build(&mut conn, &org, &token, &spaces, false).await?;
    let auth = conn
        .get(&format!("/v1/orgs/{org}/sites/{site}/publishing/auth"), &token)
        .await?;
    if !auth.ok() {
        return Err(format!("GET .../publishing/auth: {}", auth.describe()));
    }
    let key = auth.json()["privateKey"]
        .as_str()
        .map(str::to_string)
        .ok_or("GET .../publishing/auth: no privateKey")?;
    let other_token = visitor_token(&key, &site, OTHER_VISITOR)?;
    let visitor_token = visitor_token(&key, &site, VISITOR)?;
    let mut targets = Targets {
        org,
        site,
        visitor_token,
        plain_site,
        ..Targets::default()
    };
    // What each view shows a reader (the tokens the load uses are the members').
    let reader = data.read_tokens().first().cloned().unwrap_or(token);
    for (path, made) in [
        (targets.path(), &mut adaptive),
        (targets.plain_path(), &mut plain),
    ] {
        let a = conn.get(&path, &reader).await?;
        if !a.ok() {
            return Err(format!(
                "GET {}: {}",
                path.split('?').next().unwrap_or(&path),
                a.describe()
            ));
        }
        let body = a.json();
        let (sections, site_spaces) = shown(&body);
        made.shown_sections = sections;
        made.shown_site_spaces = site_spaces;
        made.body_bytes = a.text().len();
    }
    if (adaptive.shown_sections, adaptive.shown_site_spaces)
        != (plain.shown_sections, plain.shown_site_spaces)
    {
        return Err(format!(
            "the measured visitor should see the whole site: the adaptive site shows {} sections and {} site spaces, the plain one {} and {}",
            adaptive.shown_sections,
            adaptive.shown_site_spaces,
            plain.shown_sections,
            plain.shown_site_spaces
        ));
    }
    let path = format!(
        "/v1/orgs/{}/sites/{}/published?visitorAuthToken={other_token}",
        targets.org, targets.site
    );
    let a = conn.get(&path, &reader).await?;
    if !a.ok() {
        return Err(format!(
            "GET .../published with another visitor's token: {}",
            a.describe()
        ));
    }
    let other = shown(&a.json());
    if other.1 >= adaptive.shown_site_spaces {
        return Err(format!(
            "the conditions did not apply: a visitor {{isBeta: false, plan: free}} sees {} of {} site spaces",
            other.1, adaptive.shown_site_spaces
        ));
    }
    adaptive.other_visitor_shown = Some(other);
    let describe = |m: &SiteMade, how: &str| {
        format!(
            "{} site, {} sections in {} groups, {} site spaces{}; {how}: {} sections and {} site spaces shown, {:.1} KB{}",
            m.visibility,
            m.sections,
            m.groups,
            m.site_spaces,
            if m.section_conditions + m.site_space_conditions > 0 {
                format!(
                    ", conditions on {} sections and {} site spaces",
                    m.section_conditions, m.site_space_conditions
                )
            } else {
                ", no conditions".into()
            },
            m.shown_sections,
            m.shown_site_spaces,
            m.body_bytes as f64 / 1024.0,
            m.other_visitor_shown
                .map(|(a, b)| format!(" (a visitor {{isBeta: false, plan: free}} sees {a} and {b})"))
                .unwrap_or_default()
        )
    };
    targets.detail = describe(
        &adaptive,
        "visitor token {isBeta: true, plan: pro}, every condition holds",
    );
    targets.plain_detail = describe(&plain, "no visitor token");
    out.adaptive = Some(adaptive);
    out.plain = Some(plain);
    Ok(Some(targets))
}

/// Builds one site of [`SECTIONS`] sections in [`GROUPS`] groups and [`SITE_SPACES`] site
/// spaces and publishes it: `adaptive`, visitor-auth with a schema and conditions; otherwise
/// public without either.
async fn build(
    conn: &mut Conn,
    org: &str,
    token: &str,
    spaces: &[String],
    adaptive: bool,
) -> Result<(String, SiteMade), String> {
    let post = http::Method::POST;
    let patch = http::Method::PATCH;
    let visibility = if adaptive { "visitor-auth" } else { "public" };
    let title = if adaptive {
        "Benchmark site (adaptive)"
    } else {
        "Benchmark site (plain)"
    };
    let site = call(
        conn,
        post.clone(),
        &format!("/v1/orgs/{org}/sites"),
        token,
        json!({"title": title, "visibility": visibility}),
    )
    .await?;
    let site = site["id"].as_str().ok_or("create a site: no id")?.to_string();
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let mut made = SiteMade {
        id: site.clone(),
        visibility: visibility.into(),
        ..SiteMade::default()
    };
    if adaptive {
        let schema: Value = serde_json::from_str(SCHEMA).map_err(|e| e.to_string())?;
        call(
            conn,
            http::Method::PUT,
            &format!("{base}/adaptive-schema"),
            token,
            json!({"jsonSchema": schema}),
        )
        .await?;
    }
    let mut sections = Vec::with_capacity(SECTIONS);
    for (i, space) in spaces.iter().take(SECTIONS).enumerate() {
        let s = call(
            conn,
            post.clone(),
            &format!("{base}/sections"),
            token,
            json!({"spaceId": space, "title": format!("Section {}", i + 1)}),
        )
        .await?;
        sections.push(s["id"].as_str().ok_or("create a section: no id")?.to_string());
    }
    made.sections = sections.len();
    made.site_spaces = sections.len();
    let per_group = SECTIONS.div_ceil(GROUPS);
    for (g, members) in sections.chunks(per_group).enumerate() {
        call(
            conn,
            post.clone(),
            &format!("{base}/section-groups"),
            token,
            json!({"title": format!("Group {}", g + 1), "sections": members}),
        )
        .await?;
        made.groups += 1;
    }
    let mut added = Vec::new();
    for (j, space) in spaces
        .iter()
        .skip(SECTIONS)
        .take(SITE_SPACES - SECTIONS)
        .enumerate()
    {
        let ss = call(
            conn,
            post.clone(),
            &format!("{base}/site-spaces"),
            token,
            json!({"spaceId": space, "sectionId": sections[j % sections.len()]}),
        )
        .await?;
        added.push(ss["id"].as_str().ok_or("create a site space: no id")?.to_string());
        made.site_spaces += 1;
    }
    if adaptive {
        // Odd sections (never the first: it holds the big space); every other added site space.
        for (n, section) in sections.iter().skip(1).step_by(2).enumerate() {
            let condition = SECTION_CONDITIONS[n % SECTION_CONDITIONS.len()];
            call(
                conn,
                patch.clone(),
                &format!("{base}/sections/{section}"),
                token,
                json!({"condition": condition}),
            )
            .await?;
            made.section_conditions += 1;
        }
        for (n, ss) in added.iter().step_by(2).enumerate() {
            let condition = SITE_SPACE_CONDITIONS[n % SITE_SPACE_CONDITIONS.len()];
            call(
                conn,
                patch.clone(),
                &format!("{base}/site-spaces/{ss}"),
                token,
                json!({"condition": condition}),
            )
            .await?;
            made.site_space_conditions += 1;
        }
        call(
            conn,
            patch.clone(),
            &base,
            token,
            json!({"adaptiveContent": {"enabled": true}}),
        )
        .await?;
    }
    call(conn, post, &format!("{base}/publish"), token, json!({})).await?;
    Ok((site, made))
}

/// A visitor token for `site`: HS256 with the site's key, `aud` the site, `exp` a day ahead,
/// the claims `isBeta` and `plan`.
fn visitor_token(key: &str, site: &str, (is_beta, plan): (bool, &str)) -> Result<String, String> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| e.to_string())?
        .as_secs();
    let claims = json!({"aud": site, "exp": now + 86_400, "isBeta": is_beta, "plan": plan});
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(key.as_bytes()),
    )
    .map_err(|e| format!("cannot sign a visitor token: {e}"))
}

/// Sections and site spaces in a published view's structure (groups looked into).
fn shown(body: &Value) -> (usize, usize) {
    fn walk(items: &[Value], counts: &mut (usize, usize)) {
        for item in items {
            match item["object"].as_str() {
                Some("site-section-group") => {
                    walk(item["children"].as_array().map_or(&[], Vec::as_slice), counts);
                }
                Some("site-section") => {
                    counts.0 += 1;
                    counts.1 += item["siteSpaces"].as_array().map_or(0, Vec::len);
                }
                Some("site-space") => counts.1 += 1,
                _ => {}
            }
        }
    }
    let mut counts = (0, 0);
    walk(
        body["structure"]["structure"]
            .as_array()
            .map_or(&[], Vec::as_slice),
        &mut counts,
    );
    counts
}

/// A plain-text summary for the progress output.
pub fn table(r: &SitesResult) -> String {
    let mut s = String::new();
    for m in r.adaptive.iter().chain(&r.plain) {
        s += &format!(
            "site {} ({}): {} sections, {} groups, {} site spaces, {} + {} conditions; shown {} sections, {} site spaces, {} bytes\n",
            m.id,
            m.visibility,
            m.sections,
            m.groups,
            m.site_spaces,
            m.section_conditions,
            m.site_space_conditions,
            m.shown_sections,
            m.shown_site_spaces,
            m.body_bytes
        );
        if let Some((a, b)) = m.other_visitor_shown {
            s += &format!(
                "  another visitor (isBeta: false, plan: free) sees {a} sections, {b} site spaces\n"
            );
        }
    }
    if let Some(f) = &r.failure {
        s += &format!("FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_what_a_published_view_shows() {
        let body = json!({"structure": {"type": "sections", "structure": [
            {"object": "site-section-group", "children": [
                {"object": "site-section", "siteSpaces": [{}, {}]},
                {"object": "site-section", "siteSpaces": [{}]}
            ]},
            {"object": "site-section", "siteSpaces": [{}, {}, {}]}
        ]}});
        assert_eq!(shown(&body), (3, 6));
        let flat = json!({"structure": {"type": "site-spaces", "structure": [
            {"object": "site-space"}, {"object": "site-space"}
        ]}});
        assert_eq!(shown(&flat), (0, 2));
    }

    #[test]
    fn visitor_tokens_carry_the_site_and_the_claims() {
        let token = visitor_token("secret", "site1", VISITOR).unwrap();
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::HS256);
        validation.set_audience(&["site1"]);
        let data = jsonwebtoken::decode::<Value>(
            &token,
            &jsonwebtoken::DecodingKey::from_secret(b"secret"),
            &validation,
        )
        .unwrap();
        assert_eq!(data.claims["plan"], "pro");
        assert_eq!(data.claims["isBeta"], true);
    }
}
