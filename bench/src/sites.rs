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
//!
//! Then the pages of the big space as a visitor's browser reads them on the plain site
//! ([`READER_PAGE`]): `GET /s/{site}/{page path}`, HTML, no token, gzip accepted, one of
//! [`READER_PAGES`] pages at every depth of the tree at random, in alternating slices with the
//! reference server (their budget is a ratio to it); and the weight of a typical page, with the
//! stylesheet and script it loads.

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
pub const READER_PAGE: &str = "reader-page";

/// Budgets of the reader pages (issue 21): p99 at [`BUDGET_CONNECTIONS`], requests per second
/// as a share of the reference server's measured in the same moments, and the bytes of a
/// typical page with its stylesheet and script, images excluded (uncompressed).
pub const READER_P99_MS: f64 = 20.0;
pub const READER_MIN_RATIO: f64 = 0.40;
pub const PAGE_WEIGHT_LIMIT: usize = 100_000;
/// Distinct pages of the big space the reader reads (all of them in a smaller space). Readers
/// spread over a site: a few pages read again and again would measure a cache, not the site.
pub const READER_PAGES: usize = 2_000;

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
    /// Reader URLs of pages of the big space on the plain site (`/s/{site}/{path}`).
    pub pages: Vec<String>,
    pub pages_detail: String,
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
    /// The big space's pages read as HTML on the plain site (none when the phase failed first).
    #[serde(default)]
    pub reader: Option<ReaderResult>,
}

/// The reader pages: what was read, a typical page's weight, and the reference measured
/// alongside (the figures themselves are the `reader-page` family's, with the others').
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReaderResult {
    /// The plain site's root, `/s/{basename or id}/`.
    pub root: String,
    /// Pages of the big space with a URL, and the distinct ones read, per depth (the first is
    /// the top level).
    pub space_pages: usize,
    pub pages_read: usize,
    pub depths: Vec<usize>,
    pub weight: Option<PageWeight>,
    /// The reference server in alternating slices with `reader-page` (its budget's yardstick).
    pub reference: Option<FamilyResult>,
    pub failure: Option<String>,
}

/// What a page weighs as a browser loads it, images excluded: the HTML, and the stylesheet and
/// script it names, each as sent uncompressed and gzip-compressed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PageWeight {
    pub url: String,
    pub depth: usize,
    pub html_bytes: usize,
    pub html_gzip_bytes: usize,
    /// The server sent the HTML gzip-compressed (else its gzip size is computed here, at the
    /// default level).
    pub served_gzip: bool,
    pub css_bytes: usize,
    pub css_gzip_bytes: usize,
    pub js_bytes: usize,
    pub js_gzip_bytes: usize,
    /// Entries (`<li>`) in the page's sidebar.
    pub sidebar_entries: usize,
}

impl PageWeight {
    /// HTML, stylesheet and script, uncompressed: what the budget counts.
    pub fn total(&self) -> usize {
        self.html_bytes + self.css_bytes + self.js_bytes
    }

    pub fn total_gzip(&self) -> usize {
        self.html_gzip_bytes + self.css_gzip_bytes + self.js_gzip_bytes
    }
}

/// Runs the phase: builds the two sites, then measures both at `connections` and, when
/// `latency_duration` is not zero, on one connection; then the reader pages, alternating with
/// `reference` when there is one. Answers what it made and the figures at `connections` and
/// on one connection.
pub async fn run(
    driver: &Driver,
    reference: Option<&Driver>,
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
    let reader_ready = out.reader.as_ref().is_some_and(|r| r.failure.is_none());
    if let (Some(reader), true) = (out.reader.as_mut(), reader_ready) {
        match measure_reader(&driver, reference, connections, warmup, duration).await {
            Ok((r, reference)) => {
                loaded.push(r);
                reader.reference = reference;
            }
            Err(e) => reader.failure = Some(e),
        }
        if reader.failure.is_none() && latency_duration > Duration::ZERO {
            eprintln!("sites: {READER_PAGE} at 1 connection");
            match driver.run(Family::ReaderPage, 1, warmup, latency_duration).await {
                Ok(r) => {
                    eprint!("{}", crate::load::table(std::slice::from_ref(&r)));
                    single.push(r);
                }
                Err(e) => reader.failure = Some(e),
            }
        }
    }
    (out, loaded, single)
}

/// The reader pages at `connections`: in alternating slices with the reference server when
/// there is one (the throughput budget is a ratio to it, which must not depend on which side
/// ran while a neighbour was busy), else alone.
async fn measure_reader(
    driver: &Driver,
    reference: Option<&Driver>,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<(FamilyResult, Option<FamilyResult>), String> {
    let Some(reference) = reference else {
        eprintln!("sites: {READER_PAGE} at {connections} connection(s)");
        let r = driver
            .run(Family::ReaderPage, connections, warmup, duration)
            .await?;
        eprint!("{}", crate::load::table(std::slice::from_ref(&r)));
        return Ok((r, None));
    };
    eprintln!("sites: {READER_PAGE} and the reference at {connections} connection(s), alternating");
    let sides = [(driver, Family::ReaderPage), (reference, Family::Reference)];
    let [r, reference] = crate::load::alternate(
        sides,
        connections,
        warmup,
        duration,
        crate::load::ALTERNATING_ROUNDS,
    )
    .await?;
    eprint!("{}", crate::load::table(&[r.clone(), reference.clone()]));
    Ok((r, Some(reference)))
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
    let reader = match reader_setup(&mut conn, data, &targets.org, &targets.plain_site).await {
        Ok((reader, pages)) => {
            targets.pages_detail = reader_detail(&reader);
            targets.pages = pages;
            reader
        }
        Err(e) => {
            eprintln!("sites: reader pages: {e}");
            ReaderResult {
                failure: Some(e),
                ..ReaderResult::default()
            }
        }
    };
    out.reader = Some(reader);
    Ok(Some(targets))
}

/// Finds the plain site's root and the big space's pages, picks the pages to read, checks
/// that one of each depth answers HTML, and weighs a typical page. Answers the reader URLs.
async fn reader_setup(
    conn: &mut Conn,
    data: &Dataset,
    org: &str,
    site: &str,
) -> Result<(ReaderResult, Vec<String>), String> {
    let token = &data.admin_token;
    let a = conn.get(&format!("/v1/orgs/{org}/sites/{site}"), token).await?;
    if !a.ok() {
        return Err(format!("GET the plain site: {}", a.describe()));
    }
    let published = a.json()["urls"]["published"]
        .as_str()
        .map(str::to_string)
        .ok_or("the plain site has no urls.published")?;
    let root = reader_root(&published).ok_or_else(|| format!("no /s/ in urls.published {published:?}"))?;
    let a = conn
        .get(&format!("/v1/spaces/{}/content/pages", data.big_space), token)
        .await?;
    if !a.ok() {
        return Err(format!("GET the big space's pages: {}", a.describe()));
    }
    let pages = page_paths(&a.json());
    if pages.is_empty() {
        return Err("the big space has no page with a path".into());
    }
    let picked = sample_by_depth(&pages, READER_PAGES);
    let urls: Vec<String> = picked
        .iter()
        .map(|&i| reader_url(&root, &pages[i].0, i == 0))
        .collect();
    let max_depth = picked.iter().map(|&i| pages[i].1).max().unwrap_or(1);
    let mut depths = vec![0; max_depth];
    for &i in &picked {
        depths[pages[i].1 - 1] += 1;
    }
    // One page of each depth must be a page of the site (a 404 would be measured as errors).
    for depth in 1..=max_depth {
        if let Some(&i) = picked.iter().find(|&&i| pages[i].1 == depth) {
            let url = reader_url(&root, &pages[i].0, i == 0);
            let a = conn.get(&url, "").await?;
            let text = a.text();
            if !a.ok() || !text.starts_with(b"<!DOCTYPE html>") {
                return Err(format!("GET {url}: {}", a.describe()));
            }
        }
    }
    // A typical page: one of the deepest, where most pages are, in the middle of the tree.
    let deepest: Vec<usize> = picked
        .iter()
        .copied()
        .filter(|&i| pages[i].1 == max_depth)
        .collect();
    let typical = deepest[deepest.len() / 2];
    let weight = weigh(
        conn,
        &reader_url(&root, &pages[typical].0, typical == 0),
        pages[typical].1,
    )
    .await?;
    eprintln!(
        "sites: reader pages under {root}: {} of {} pages (per depth {depths:?}); a typical page (depth {}) weighs {} bytes of HTML ({} gzip), {} with its stylesheet and script ({} gzip)",
        urls.len(),
        pages.len(),
        weight.depth,
        weight.html_bytes,
        weight.html_gzip_bytes,
        weight.total(),
        weight.total_gzip()
    );
    let reader = ReaderResult {
        root,
        space_pages: pages.len(),
        pages_read: urls.len(),
        depths,
        weight: Some(weight),
        reference: None,
        failure: None,
    };
    Ok((reader, urls))
}

/// Reads a page as a browser does (gzip accepted), then the stylesheet and script it names.
async fn weigh(conn: &mut Conn, url: &str, depth: usize) -> Result<PageWeight, String> {
    let a = conn.get(url, "").await?;
    if !a.ok() {
        return Err(format!("GET {url}: {}", a.describe()));
    }
    let html = a.text();
    let html_text = String::from_utf8_lossy(&html).into_owned();
    let mut weight = PageWeight {
        url: url.to_string(),
        depth,
        html_bytes: html.len(),
        html_gzip_bytes: if a.gzipped { a.body.len() } else { gzip_len(&html) },
        served_gzip: a.gzipped,
        sidebar_entries: sidebar_entries(&html_text),
        ..PageWeight::default()
    };
    let (css, js) = assets_of(&html_text);
    for (asset, bytes, gzipped) in [
        (css, &mut weight.css_bytes, &mut weight.css_gzip_bytes),
        (js, &mut weight.js_bytes, &mut weight.js_gzip_bytes),
    ] {
        for asset_url in asset {
            let a = conn.get(&asset_url, "").await?;
            if !a.ok() {
                return Err(format!("GET {asset_url}: {}", a.describe()));
            }
            let text = a.text();
            *bytes += text.len();
            *gzipped += if a.gzipped { a.body.len() } else { gzip_len(&text) };
        }
    }
    Ok(weight)
}

fn reader_detail(r: &ReaderResult) -> String {
    let depths: Vec<String> = r
        .depths
        .iter()
        .enumerate()
        .map(|(d, n)| format!("{n} at depth {}", d + 1))
        .collect();
    format!(
        "public site, no token, gzip accepted: one of {} of the big space's {} pages at random ({}){}",
        r.pages_read,
        r.space_pages,
        depths.join(", "),
        r.weight
            .as_ref()
            .map(|w| format!("; a typical page {:.1} KB of HTML", w.html_bytes as f64 / 1024.0))
            .unwrap_or_default()
    )
}

/// The reader root of a site, `/s/{basename or id}/`, from its `urls.published`.
fn reader_root(published: &str) -> Option<String> {
    let at = published.find("/s/")?;
    let root = published[at..].trim_end_matches('/');
    (root.len() > "/s/".len()).then(|| format!("{root}/"))
}

/// The reader URL of a page: the site space's root, then the page's path; the first page is
/// the root itself.
fn reader_url(root: &str, path: &str, first: bool) -> String {
    if first {
        root.to_string()
    } else {
        format!("{root}{}", path.trim_start_matches('/'))
    }
}

/// The pages of a pages list (`GET .../content/pages`) that have a reader URL, depth first as
/// the reader orders them (so the first is the site space's home): (path, depth), the top
/// level at depth 1. Groups are walked into but have no URL, and count as a level; hidden
/// pages are left out (the reader's home is the first visible page).
fn page_paths(body: &Value) -> Vec<(String, usize)> {
    fn walk(items: &[Value], depth: usize, out: &mut Vec<(String, usize)>) {
        for item in items {
            if item["hidden"].as_bool() == Some(true) {
                continue;
            }
            let kind = item["type"].as_str().unwrap_or_default();
            if let ("document" | "computed", Some(path)) = (kind, item["path"].as_str()) {
                out.push((path.to_string(), depth));
            }
            walk(
                item["pages"].as_array().map_or(&[], Vec::as_slice),
                depth + 1,
                out,
            );
        }
    }
    let mut out = Vec::new();
    walk(body["pages"].as_array().map_or(&[], Vec::as_slice), 1, &mut out);
    out
}

/// About `n` of `pages` (indexes), spread over every depth: each depth gets its share of `n`
/// by its number of pages, but at least `n / 8` (or all its pages when it has fewer), so
/// that the few top-level pages readers land on are read too. The pages of a depth are
/// evenly spaced in tree order, and the first page (the home) is always read. The result is
/// in tree order.
fn sample_by_depth(pages: &[(String, usize)], n: usize) -> Vec<usize> {
    let max_depth = pages.iter().map(|p| p.1).max().unwrap_or(0);
    let mut picked = Vec::new();
    for depth in 1..=max_depth {
        let at: Vec<usize> = (0..pages.len()).filter(|&i| pages[i].1 == depth).collect();
        let share = (n * at.len()).div_ceil(pages.len().max(1));
        let quota = share.max(n / 8).min(at.len());
        picked.extend((0..quota).map(|k| at[k * at.len() / quota.max(1)]));
    }
    if !pages.is_empty() && !picked.contains(&0) {
        picked.push(0);
    }
    picked.sort_unstable();
    picked.dedup();
    picked
}

/// The stylesheets and scripts an HTML page loads (`<link rel="stylesheet" href>`,
/// `<script src>`), as written in it.
fn assets_of(html: &str) -> (Vec<String>, Vec<String>) {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        let end = tag[start..].find('"')? + start;
        Some(tag[start..end].replace("&amp;", "&"))
    };
    let mut css = Vec::new();
    let mut js = Vec::new();
    for (at, _) in html.match_indices('<') {
        let rest = &html[at..];
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        if tag.starts_with("<link ") && tag.contains("rel=\"stylesheet\"") {
            css.extend(attr(tag, "href"));
        } else if tag.starts_with("<script ") {
            js.extend(attr(tag, "src"));
        }
    }
    (css, js)
}

/// Entries of a page's sidebar: `<li` between the sidebar's opening and its `</nav>`.
fn sidebar_entries(html: &str) -> usize {
    let Some(start) = html.find("id=\"q-sidebar\"") else {
        return 0;
    };
    let rest = &html[start..];
    let end = rest.find("</nav>").unwrap_or(rest.len());
    rest[..end].matches("<li").count()
}

/// Bytes of `bytes` gzip-compressed at the default level.
fn gzip_len(bytes: &[u8]) -> usize {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    match encoder.write_all(bytes).and_then(|()| encoder.finish()) {
        Ok(out) => out.len(),
        Err(_) => 0,
    }
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
    fn reader_urls_from_the_published_url_and_page_paths() {
        assert_eq!(
            reader_root("http://127.0.0.1:8080/s/benchmark-site-plain").as_deref(),
            Some("/s/benchmark-site-plain/")
        );
        assert_eq!(reader_root("http://h/s/abc/").as_deref(), Some("/s/abc/"));
        assert_eq!(reader_root("http://h/s/"), None);
        assert_eq!(reader_root("https://docs.example.com/"), None);
        assert_eq!(reader_url("/s/abc/", "intro", true), "/s/abc/");
        assert_eq!(
            reader_url("/s/abc/", "guides/setup", false),
            "/s/abc/guides/setup"
        );
    }

    #[test]
    fn page_paths_walk_the_tree_depth_first() {
        let body = json!({"pages": [
            {"type": "document", "path": "home", "pages": []},
            {"type": "group", "pages": [
                {"type": "document", "path": "a", "pages": [
                    {"type": "document", "path": "a/b", "pages": []},
                    {"type": "document", "path": "a/secret", "hidden": true, "pages": [
                        {"type": "document", "path": "a/secret/c", "pages": []}
                    ]}
                ]},
                {"type": "link", "href": "https://example.com"}
            ]},
            {"type": "document", "path": "last"}
        ]});
        assert_eq!(
            page_paths(&body),
            vec![
                ("home".to_string(), 1),
                ("a".to_string(), 2),
                ("a/b".to_string(), 3),
                ("last".to_string(), 1)
            ]
        );
        assert!(page_paths(&json!({})).is_empty());
    }

    #[test]
    fn samples_spread_over_every_depth() {
        // The dataset's shape: 20 top pages, 20 children each, 9,580 below those.
        let mut pages = Vec::new();
        for t in 0..20 {
            pages.push((format!("t{t}"), 1));
            for c in 0..20 {
                pages.push((format!("t{t}/c{c}"), 2));
                for l in 0..(9_580 / 400 + usize::from(t * 20 + c < 9_580 % 400)) {
                    pages.push((format!("t{t}/c{c}/l{l}"), 3));
                }
            }
        }
        assert_eq!(pages.len(), 10_000);
        let picked = sample_by_depth(&pages, 2_000);
        let count = |d: usize| picked.iter().filter(|&&i| pages[i].1 == d).count();
        assert_eq!(count(1), 20, "every top-level page");
        assert_eq!(count(2), 250, "at least an eighth of the pages read");
        assert_eq!(count(3), 1_916, "its share");
        assert_eq!(picked[0], 0, "the home page");
        assert!(picked.windows(2).all(|w| w[0] < w[1]), "distinct, in tree order");
        // A small space is read whole.
        let small = &pages[..50];
        assert_eq!(sample_by_depth(small, 2_000), (0..50).collect::<Vec<_>>());
        assert!(sample_by_depth(&[], 10).is_empty());
    }

    #[test]
    fn finds_assets_and_sidebar_entries_of_a_page() {
        let html = r#"<!DOCTYPE html><html><head><link rel="icon" href="/s/a/~assets/favicon.1.svg">
<link rel="stylesheet" href="/s/a/~assets/reader.2.css"><script src="/s/a/~assets/reader.3.js"></script></head>
<body><nav class="sections"><ul><li>Section</li></ul></nav>
<nav id="q-sidebar" class="sidebar"><ul class="tree"><li data-id="x"><a href="/s/a/x">X</a></li><li><a href="/s/a/y">Y</a><ul><li>Z</li></ul></li></ul></nav>
<main><ul><li>not the sidebar</li></ul></main></body></html>"#;
        let (css, js) = assets_of(html);
        assert_eq!(css, ["/s/a/~assets/reader.2.css"]);
        assert_eq!(js, ["/s/a/~assets/reader.3.js"]);
        assert_eq!(sidebar_entries(html), 3);
        assert_eq!(sidebar_entries("<html></html>"), 0);
        let text = "a reader page ".repeat(100);
        let packed = gzip_len(text.as_bytes());
        assert!(packed > 0 && packed < text.len() / 10, "{packed}");
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
