//! Answering one reader request: the visitor admitted (or not), then the file it asks for,
//! from the cache or rendered.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::Response;
use bytes::Bytes;
use quire_adaptive::{Claims, Condition};
use quire_content::search_text::query_words;
use quire_content::tree::FileEntry;
use quire_reader::{
    Context, NavTree, Navigation, SearchHit, SearchResults, SearchSection, Site, SpaceResolver,
};
use quire_store::StoreError;
use quire_store::content::store::{CachedDocument, StoredTree};
use quire_store::db::fulltext::FtsQuery;
use quire_store::permissions::Standing;
use quire_store::reader::{Redirected, SiteKey};
use quire_store::sites::SiteVisibility;
use quire_store::sites::published::{self, Published, Visitor};
use quire_store::sites::redirects::Target as RedirectTarget;

use super::layout::{Layout, Located, Placed};
use super::state::{Answer, AnswerKey};
use super::{Target, assets};
use crate::error::ApiError;
use crate::state::App;

/// The cookie that keeps a share key, and the one that keeps a visitor token.
const SHARE_COOKIE: &str = "quire_share";
const TOKEN_COOKIE: &str = "quire_visitor";
/// Query parameters that give a share key or a visitor token (GitBook's and the API's names).
pub(crate) const SHARE_PARAMS: &[&str] = &["share", "shareKey"];
pub(crate) const TOKEN_PARAMS: &[&str] = &["jwt_token", "visitorAuthToken"];
/// The query parameter of a preview URL (`GET .../publishing/preview`), and the cookie that
/// keeps its token.
const PREVIEW_PARAMS: &[&str] = &["preview"];
const PREVIEW_COOKIE: &str = "quire_preview";
/// The longest search query, as the API's.
const MAX_QUERY_CHARS: usize = 512;
/// Search hits shown.
const SEARCH_HITS: usize = 20;
/// Entries of the Atom feed.
const FEED_ENTRIES: usize = 20;

/// The request as the reader reads it.
struct Asked {
    path: String,
    query: Vec<(String, String)>,
    cookies: HashMap<String, String>,
    wants_json: bool,
    /// The client takes gzip-encoded answers.
    gzip: bool,
    if_none_match: Option<String>,
}

impl Asked {
    fn param(&self, names: &[&str]) -> Option<String> {
        self.query
            .iter()
            .find(|(k, v)| names.contains(&k.as_str()) && !v.is_empty())
            .map(|(_, v)| v.clone())
    }
}

fn read_request(req: &Request) -> Asked {
    let headers = req.headers();
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    Asked {
        path: req.uri().path().to_string(),
        query: req
            .uri()
            .query()
            .map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect())
            .unwrap_or_default(),
        cookies: cookies(headers),
        wants_json: text(header::ACCEPT).is_some_and(|a| a.contains("application/json")),
        gzip: crate::encoding::accepts_gzip(headers),
        if_none_match: text(header::IF_NONE_MATCH).map(str::to_string),
    }
}

pub(crate) fn cookies(headers: &HeaderMap) -> HashMap<String, String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            Some((name.to_string(), value.to_string()))
        })
        .collect()
}

pub(super) async fn serve(app: App, req: Request, target: Target) -> Response {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut response = plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Only GET and HEAD are served here.",
        );
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return response;
    }
    let asked = read_request(&req);
    drop(req);
    // The stylesheet, script and icon: the same for every site, named by their hash.
    if let Some(name) = asked.path.strip_prefix(&format!("{}~assets/", target.root)) {
        return assets::response(name, asked.gzip).unwrap_or_else(|| not_found_plain(&target.root));
    }
    // A preview (`/s/{site id}/` with a token of `GET .../publishing/preview`) reads the site
    // published or not, whatever its visibility; a token that does not hold is no preview.
    let given_preview = asked.param(PREVIEW_PARAMS);
    let now = quire_store::clock::now_ms();
    let preview = match &target.key {
        SiteKey::Path(site_id) => given_preview
            .clone()
            .or_else(|| asked.cookies.get(PREVIEW_COOKIE).cloned())
            .filter(|t| crate::signing::preview_holds(&app.signing_key, site_id, t, now))
            .map(|t| (site_id.clone(), t)),
        _ => None,
    };
    let site_key = match &preview {
        Some((site_id, _)) => SiteKey::Preview(site_id.clone()),
        None => target.key.clone(),
    };
    // One stamp for both reads: on SQLite each is a query.
    let stamp = app.db.stamp();
    let site_ref = match app.reader_sites.find_at(&app.db, stamp, site_key).await {
        Ok(Some(found)) => found,
        Ok(None) => return space_redirect(&app, &target, &asked.path).await,
        Err(e) => return failure(e, &target.root),
    };
    let (org_id, site_id) = (&site_ref.0, &site_ref.1);
    let loaded = match preview {
        Some(_) => {
            app.published_sites
                .preview_at(&app.db, stamp, org_id, site_id)
                .await
        }
        None => app.published_sites.load_at(&app.db, stamp, org_id, site_id).await,
    };
    let p = match loaded {
        Ok(p) => p,
        Err(e) => return failure(e, &target.root),
    };

    // Signing out: the visitor token is forgotten, and the visitor sent where the site's
    // visitor-auth settings say (`logoutURL`), else to the site's home.
    if asked.path.strip_prefix(target.root.as_str()) == Some("~logout") {
        let mut response = see_other(p.site.visitor_logout_url.as_deref().unwrap_or(&target.root));
        let forget = format!(
            "{}; Max-Age=0",
            cookie(TOKEN_COOKIE, "", &target.root, app.reader.secure)
        );
        if let Ok(value) = HeaderValue::from_str(&forget) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        cache_control(&mut response, true);
        return response;
    }
    // Who reads: a key or token in the query wins over the cookie that keeps one.
    let given_share = asked.param(SHARE_PARAMS);
    let given_token = asked.param(TOKEN_PARAMS);
    let share = given_share
        .clone()
        .or_else(|| asked.cookies.get(SHARE_COOKIE).cloned());
    let mut token = given_token
        .clone()
        .or_else(|| asked.cookies.get(TOKEN_COOKIE).cloned());
    // A member signed in with the organization's identity provider reads its in-collection
    // sites (the session cookie, `crate::session`).
    let standing = match asked.cookies.get(crate::session::SESSION_COOKIE) {
        Some(secret) if p.site.visibility == SiteVisibility::InCollection => {
            // Boxed: the lookup's future would otherwise enlarge every reader request's.
            match Box::pin(member_standing(&app, secret, org_id)).await {
                Ok(standing) => standing,
                Err(e) => return failure(e, &target.root),
            }
        }
        _ => Standing::Outsider,
    };
    let admit = |token: Option<&str>| {
        published::admit(
            &p,
            &Visitor {
                share_key: share.as_deref(),
                token,
                standing,
                preview: preview.is_some(),
                unsigned: None,
            },
        )
    };
    let claims = match admit(token.as_deref()) {
        Ok(claims) => claims,
        // A site that needs no token reads a bad one as none.
        Err(_) if token.is_some() && p.site.visibility != SiteVisibility::VisitorAuth => match admit(None) {
            Ok(claims) => {
                token = None;
                claims
            }
            Err(_) => return refused(&app, &p, &target.root, &asked.path),
        },
        Err(_) => return refused(&app, &p, &target.root, &asked.path),
    };
    let private = preview.is_some()
        || !matches!(
            p.site.visibility,
            SiteVisibility::Public | SiteVisibility::Unlisted
        );
    let noindex = private || p.site.visibility != SiteVisibility::Public;
    if given_share.is_some() || given_token.is_some() || given_preview.is_some() {
        // Kept in cookies of the site's path; the visitor goes on at the clean URL.
        let mut set = Vec::new();
        if let Some(key) = &given_share {
            set.push(cookie(SHARE_COOKIE, key, &target.root, app.reader.secure));
        }
        if let (Some(given), Some(kept)) = (&given_token, &token)
            && given == kept
        {
            set.push(cookie(TOKEN_COOKIE, given, &target.root, app.reader.secure));
        }
        if let Some((_, held)) = &preview {
            set.push(cookie(PREVIEW_COOKIE, held, &target.root, app.reader.secure));
        }
        let given = |k: &str| [SHARE_PARAMS, TOKEN_PARAMS, PREVIEW_PARAMS].concat().contains(&k);
        let rest: Vec<&(String, String)> = asked.query.iter().filter(|(k, _)| !given(k)).collect();
        let mut location = asked.path.clone();
        if !rest.is_empty() {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            for (k, v) in rest {
                query.append_pair(k, v);
            }
            location.push('?');
            location.push_str(&query.finish());
        }
        let mut response = see_other(&location);
        for value in set {
            if let Ok(value) = HeaderValue::from_str(&value) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
        }
        cache_control(&mut response, true);
        return response;
    }
    if target.bare_root {
        let mut response = see_other(&target.root);
        *response.status_mut() = StatusCode::MOVED_PERMANENTLY;
        return response;
    }

    let shown = match (&token, app.reader.shown_without_claims.get(&p.generation)) {
        // Without a token the visitor has no claims: what they see is the load's alone.
        (None, Some(shown)) => shown,
        (None, None) => {
            let shown = Arc::new(published::shown(&p, &claims));
            app.reader
                .shown_without_claims
                .insert(p.generation, shown.clone());
            shown
        }
        (Some(_), _) => Arc::new(published::shown(&p, &claims)),
    };
    let is_search = asked.path == format!("{}~search", target.root);
    let key = AnswerKey {
        generation: p.generation,
        shown,
        visitor: token.as_deref().map_or(0, hash_of),
        hour: if private {
            quire_store::clock::now_ms() / 3_600_000
        } else {
            0
        },
        path: asked.path.clone(),
    };
    let cached = if is_search {
        None
    } else {
        app.reader.answers.get(&key)
    };
    let answer = match cached {
        Some(answer) => answer,
        None => {
            // The semaphore is never closed; were it, rendering unthrottled is still right.
            let _permit = app.reader.renders.acquire().await.ok();
            // Another request may have made the same answer while this one waited.
            let made = (!is_search).then(|| app.reader.answers.get(&key)).flatten();
            if let Some(answer) = made {
                return respond(&answer, &asked, private, noindex);
            }
            // Only to render: where the site spaces are served costs more than a cached
            // answer (a site of 60 site spaces: 60 URLs and their aliases, per request).
            let layout = Layout::new(&p, &key.shown, &target.root);
            let absolute_root = match &target.key {
                SiteKey::Path(_) | SiteKey::Space(_) | SiteKey::Preview(_) => {
                    format!("{}{}", app.urls.base(), target.root)
                }
                SiteKey::Host(host) => format!("{}/", host_origin(&app, host)),
            };
            let request = Rendering {
                app: app.clone(),
                p: p.clone(),
                claims,
                layout,
                absolute_root,
                permanent_files: !private,
            };
            match request.answer(&asked).await {
                Ok(answer) => {
                    let answer = Arc::new(answer);
                    if !is_search {
                        app.reader.answers.insert(key, answer.clone());
                    }
                    answer
                }
                Err(e) => return failure(e, &target.root),
            }
        }
    };
    respond(&answer, &asked, private, noindex)
}

/// `/s/{space id}/...` (the API's `urls.published` of a space and of its pages, which know no
/// site): a redirect to the same path in the space's place in the oldest published site that
/// shows it; not found when none does. The site then admits or refuses the visitor itself.
async fn space_redirect(app: &App, target: &Target, path: &str) -> Response {
    let SiteKey::Path(name) = &target.key else {
        return not_found_plain(&target.root);
    };
    let found = match app.reader_sites.find(&app.db, SiteKey::Space(name.clone())).await {
        Ok(Some(found)) => found,
        Ok(None) => return not_found_plain(&target.root),
        Err(e) => return failure(e, &target.root),
    };
    let p = match app.published_sites.load(&app.db, &found.0, &found.1).await {
        Ok(p) => p,
        Err(e) => return failure(e, &target.root),
    };
    // Where the space is placed, whoever reads: the visitor's own view is the site's to decide.
    let everything = published::Shown {
        sections: vec![true; p.tree.sections.len()],
        site_spaces: vec![true; p.tree.site_spaces.len()],
        links: vec![true; p.tree.links.len()],
    };
    let (origin, root) = match &p.site.hostname {
        Some(host) => (host_origin(app, host), "/".to_string()),
        None => (
            String::new(),
            format!("/s/{}/", p.site.basename.as_deref().unwrap_or(&p.site.id)),
        ),
    };
    let layout = Layout::new(&p, &everything, &root);
    let Some(placed) = layout.placed.iter().find(|placed| placed.space_id == *name) else {
        return not_found_plain(&target.root);
    };
    let rest = path.strip_prefix(&target.root).unwrap_or_default();
    let mut response = see_other(&format!("{origin}{}{rest}", placed.base));
    *response.status_mut() = StatusCode::FOUND;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A site's origin on its own hostname, with the scheme the public URL has.
pub(crate) fn host_origin(app: &App, host: &str) -> String {
    let scheme = if app.reader.secure { "https" } else { "http" };
    format!("{scheme}://{host}")
}

fn hash_of(text: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

/// The standing in `org_id` of the person whose session `secret` is, when the session was
/// opened by that organization's identity provider; an outsider otherwise.
async fn member_standing(app: &App, secret: &str, org_id: &str) -> Result<Standing, StoreError> {
    let (secret, org_id) = (secret.to_string(), org_id.to_string());
    let now = quire_store::clock::now_ms();
    app.db
        .read(move |c| {
            let Some(session) = quire_store::sessions::find(c, &secret, now)? else {
                return Ok(Standing::Outsider);
            };
            if session.org_id != org_id {
                return Ok(Standing::Outsider);
            }
            Ok(quire_store::orgs::load_for(c, &org_id, &session.user.id)?
                .map_or(Standing::Outsider, |o| o.standing))
        })
        .await
}

pub(crate) fn cookie(name: &str, value: &str, path: &str, secure: bool) -> String {
    let value: String = value
        .chars()
        .filter(|c| c.is_ascii_graphic() && *c != ';' && *c != ',')
        .collect();
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; HttpOnly; SameSite=Lax{secure}")
}

fn see_other(location: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = HeaderValue::from_str(&same_site(location)) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// A path of this host stays one: `//host/x` (or `/\\host`) would send the browser to another
/// host, so leading slashes collapse into one. Absolute URLs (a site's external redirects) are
/// kept.
fn same_site(location: &str) -> String {
    match location.strip_prefix('/') {
        Some(rest) => format!("/{}", rest.trim_start_matches(['/', '\\'])),
        None => location.to_string(),
    }
}

fn cache_control(response: &mut Response, private: bool) {
    let value = if private {
        "private, max-age=0, must-revalidate"
    } else {
        "public, max-age=0, must-revalidate"
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
}

fn respond(answer: &Answer, asked: &Asked, private: bool, noindex: bool) -> Response {
    if let Some(location) = &answer.location {
        let mut response = see_other(location);
        *response.status_mut() = answer.status;
        cache_control(&mut response, private);
        return response;
    }
    let send_gzip = answer.gzipped && asked.gzip;
    let etag = if send_gzip {
        answer.gzip_etag()
    } else {
        answer.etag.clone()
    };
    let matches = asked.if_none_match.as_deref().is_some_and(|tags| {
        tags.split(',')
            .any(|tag| tag.trim().trim_start_matches("W/") == etag || tag.trim() == "*")
    });
    let mut response = if matches && answer.status == StatusCode::OK {
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        response
    } else {
        let body = if answer.gzipped && !send_gzip {
            match gunzip(&answer.body) {
                Ok(body) => body,
                // The bytes were compressed here: they inflate, unless memory is corrupt.
                Err(e) => {
                    tracing::error!(error = %e, "a kept reader answer does not inflate");
                    return plain(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "This page cannot be shown right now.",
                    );
                }
            }
        } else {
            answer.body.clone()
        };
        let mut response = Response::new(Body::from(body));
        *response.status_mut() = answer.status;
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(answer.content_type),
        );
        if send_gzip {
            response
                .headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        response
    };
    let headers = response.headers_mut();
    if let Ok(etag) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Accept, Accept-Encoding, Cookie"),
    );
    if noindex {
        headers.insert("x-robots-tag", HeaderValue::from_static("noindex"));
    }
    cache_control(&mut response, private);
    response
}

/// The bytes of a gzip stream.
fn gunzip(packed: &[u8]) -> std::io::Result<Bytes> {
    let mut out = Vec::with_capacity(packed.len() * 4);
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(packed), &mut out)?;
    Ok(Bytes::from(out))
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer for a site that does not exist or is hidden from this visitor: nothing tells
/// one from the other.
fn not_found_plain(root: &str) -> Response {
    let mut site = Site::new("Not found", "/");
    site.assets_url = format!("{root}~assets/");
    site.indexable = false;
    let navigation = Navigation::default();
    let nav = NavTree::default();
    let resolver = NoReferences;
    let context = Context {
        site: &site,
        navigation: &navigation,
        tree: &nav,
        resolver: &resolver,
    };
    let mut response = html_response(StatusCode::NOT_FOUND, quire_reader::render_not_found(&context));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn html_response(status: StatusCode, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}

/// A resolver that resolves nothing (pages with no content).
struct NoReferences;

impl quire_reader::Resolver for NoReferences {
    fn page(&self, _: &str, _: Option<&str>) -> Option<quire_reader::PageTarget> {
        None
    }

    fn file(&self, _: &str, _: Option<&str>) -> Option<quire_reader::FileTarget> {
        None
    }
}

/// A visitor the site does not admit: for a visitor-auth site, a redirect to its sign-in URL
/// with the page asked for as `location`, or without one the sign-in page (nothing of the
/// content); the not-found page for any other.
fn refused(app: &App, p: &Published, root: &str, asked_path: &str) -> Response {
    if p.site.visibility != SiteVisibility::VisitorAuth {
        return not_found_plain(root);
    }
    let login = p.site.visitor_fallback_url.as_deref().and_then(|fallback| {
        let mut url = url::Url::parse(fallback).ok()?;
        url.query_pairs_mut().append_pair("location", asked_path);
        Some(url)
    });
    let mut site = Site::new(&p.site.title, app.urls.base());
    site.indexable = false;
    site.assets_url = format!("{root}~assets/");
    let page = quire_reader::render_login_required(&site, login.as_ref().map(url::Url::as_str));
    let mut response = match &login {
        Some(url) => match HeaderValue::from_str(url.as_str()) {
            Ok(location) => {
                let mut response = html_response(StatusCode::FOUND, page);
                response.headers_mut().insert(header::LOCATION, location);
                response
            }
            Err(_) => html_response(StatusCode::UNAUTHORIZED, page),
        },
        None => html_response(StatusCode::UNAUTHORIZED, page),
    };
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A failure of the store: not found as the not-found page, anything else as a short page
/// with its status (the cause is logged, never shown).
fn failure(e: StoreError, root: &str) -> Response {
    let error = ApiError::from(e);
    if error.status == StatusCode::NOT_FOUND {
        return not_found_plain(root);
    }
    tracing::error!(status = error.status.as_u16(), message = %error.message, "reader request failed");
    let mut response = html_response(
        error.status,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Unavailable</title></head>\
         <body><h1>This page cannot be shown right now</h1><p>Try again in a moment.</p></body></html>"
            .to_string(),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// What one answer is rendered from.
struct Rendering {
    app: App,
    p: Arc<Published>,
    claims: Claims,
    layout: Layout,
    absolute_root: String,
    /// Whether file URLs never expire: the site is one anyone may read, not seen in a preview.
    permanent_files: bool,
}

/// A page's document and the reusable contents of its space it includes (and those include),
/// loaded before rendering, which does no I/O.
struct Loaded {
    document: Option<Arc<CachedDocument>>,
    reusable: HashMap<String, Arc<CachedDocument>>,
    /// The pages of the other site spaces it links to, by space id.
    linked: HashMap<String, Arc<NavTree>>,
}

/// At most this many reusable contents are included in one page; more are left out.
const MAX_REUSABLE_PER_PAGE: usize = 64;

/// Links of one page into at most this many other site spaces resolve; more render as text.
const MAX_LINKED_SPACES_PER_PAGE: usize = 16;

/// What is rendered in a site space (off the async runtime).
enum What {
    Page(String, Loaded),
    Markdown(String, Loaded),
    Fragment(String),
    Feed,
    NotFound,
    Search(SearchResults),
}

impl Rendering {
    /// The reader's `Site` for a site space (the root when None): the site's customization,
    /// with the site space's own laid over it.
    fn site(&self, placed: Option<&Placed>) -> Site {
        let root = &self.layout.root;
        let mut site = Site::new(&self.p.site.title, &self.absolute_root);
        let own = placed.and_then(|placed| self.p.site_space_customizations.get(&placed.site_space_id));
        let customization = match (self.p.customization.clone(), own) {
            (Some(mut merged), Some(own)) => {
                quire_store::sites::customization::overlay(&mut merged, own);
                Some(merged)
            }
            (None, Some(own)) => Some(own.clone()),
            (site_wide, None) => site_wide,
        };
        site.customization = customization
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        site.indexable = self.p.site.visibility == SiteVisibility::Public;
        site.assets_url = format!("{root}~assets/");
        site.search_url = Some(format!("{root}~search"));
        site.search_page_url = Some(format!("{root}~search"));
        if let Some(placed) = placed {
            site.nav_url = Some(format!("{}~nav/", placed.base));
            site.feed_url = Some(format!("{}~feed.xml", placed.base));
        }
        site
    }

    async fn answer(self, asked: &Asked) -> Result<Answer, StoreError> {
        let root = self.layout.root.clone();
        let path = asked.path.as_str();
        let text = |body: String| Answer::new(StatusCode::OK, "text/plain; charset=utf-8", body);
        if path == format!("{root}robots.txt") {
            let site = self.site(None);
            return Ok(text(quire_reader::robots_txt(
                &site,
                Some(&format!("{root}sitemap.xml")),
            )));
        }
        if path == format!("{root}sitemap.xml") {
            let site = self.site(None);
            let mut entries = Vec::new();
            for placed in &self.layout.placed {
                let (_, nav) = self.open(placed).await?;
                entries.extend(quire_reader::sitemap_entries(&site, &nav));
            }
            return Ok(Answer::new(
                StatusCode::OK,
                "application/xml; charset=utf-8",
                quire_reader::sitemap_xml(&entries),
            ));
        }
        if path == format!("{root}llms.txt") {
            // Every site space the visitor sees, each under its title when there are several.
            let site = self.site(None);
            let mut trees = Vec::with_capacity(self.layout.placed.len());
            for placed in &self.layout.placed {
                let (_, nav) = self.open(placed).await?;
                trees.push((placed.title.as_str(), nav));
            }
            let spaces: Vec<(&str, &NavTree)> = trees.iter().map(|(title, nav)| (*title, &**nav)).collect();
            return Ok(text(quire_reader::llms_txt_of_spaces(&site, &spaces)));
        }
        if path == format!("{root}~search") {
            let results = self.search(asked).await?;
            if asked.wants_json {
                return Ok(Answer::new(StatusCode::OK, "application/json", results.to_json()));
            }
            return self.in_home(What::Search(results)).await;
        }
        let placed = match self.layout.locate(path) {
            Located::Redirect(to) => {
                // A page of a site space wins over another URL of a site space.
                let page = match self.layout.space_under(path).cloned() {
                    Some(placed) => {
                        let (_, nav) = self.open(&placed).await?;
                        nav.page_at(path).is_some().then_some(placed)
                    }
                    None => None,
                };
                match page {
                    Some(placed) => placed,
                    None => return Ok(Answer::redirect(to)),
                }
            }
            Located::Nothing => return self.not_found(path).await,
            Located::Space(placed) => placed.clone(),
        };
        let base = placed.base.clone();
        let (stored, nav) = self.open(&placed).await?;
        let what = if path == format!("{base}~feed.xml") {
            What::Feed
        } else if let Some(id) = path.strip_prefix(&format!("{base}~nav/")) {
            What::Fragment(id.to_string())
        } else if let Some(node) = nav.page_at(path) {
            let id = node.id.clone();
            let loaded = self.loaded(&placed, &stored, &id).await?;
            What::Page(id, loaded)
        } else if let Some(node) = path
            .ends_with(".md")
            .then(|| quire_reader::page_for_markdown_url(&nav, path))
            .flatten()
        {
            let id = node.id.clone();
            let loaded = self.loaded(&placed, &stored, &id).await?;
            What::Markdown(id, loaded)
        } else if format!("{path}/") == base {
            return Ok(Answer::redirect(base));
        } else if nav.is_home_alias(path) {
            // Not permanent: another page becomes the home when the tree is reordered.
            return Ok(Answer::redirect_with(StatusCode::FOUND, base));
        } else if let Some(page) = path.strip_suffix('/').filter(|p| nav.page_at(p).is_some()) {
            // A page's URL has no trailing slash; one typed or linked with it lands on the page.
            return Ok(Answer::redirect(page.to_string()));
        } else {
            return self.not_found(path).await;
        };
        self.render(Some(placed), Some((stored, nav)), what).await
    }

    /// A path that names nothing: where the site's redirects send it, else where the imported
    /// redirects of the site space it is in send it, else the not-found page.
    async fn not_found(self, path: &str) -> Result<Answer, StoreError> {
        let from_root = format!(
            "/{}",
            path.strip_prefix(self.layout.root.as_str())
                .unwrap_or_default()
                .trim_end_matches('/')
        );
        let placed = self.layout.space_under(path).cloned();
        let within = placed.as_ref().map(|placed| {
            let rest = path.strip_prefix(placed.base.as_str()).unwrap_or_default();
            (placed.space_id.clone(), rest.to_string())
        });
        let (site, store) = (self.p.site.clone(), self.app.store.clone());
        let found = self
            .app
            .db
            .read(move |c| {
                let within = within
                    .as_ref()
                    .map(|(space, rest)| (space.as_str(), rest.as_str()));
                quire_store::reader::redirect_or_imported(c, &store.content, &site, &from_root, within)
            })
            .await?;
        match found {
            Some(Redirected::Site(target, permanent)) => {
                let to = match target {
                    RedirectTarget::Url(url) => match quire_reader::safe_url(&url) {
                        Some(_) => url,
                        None => return self.in_home(What::NotFound).await,
                    },
                    RedirectTarget::SitePath(path) => {
                        format!("{}{}", self.layout.root, path.trim_start_matches('/'))
                    }
                };
                let status = if permanent {
                    StatusCode::MOVED_PERMANENTLY
                } else {
                    StatusCode::FOUND
                };
                Ok(Answer::redirect_with(status, to))
            }
            // The page's URL in this site space, if the revision served still has it (a page
            // deleted since leads nowhere).
            Some(Redirected::ImportedPage(page_id)) => {
                let url = match &placed {
                    Some(placed) => {
                        let (_, nav) = self.open(placed).await?;
                        nav.get(&page_id).and_then(|node| node.url.clone())
                    }
                    None => None,
                };
                match url {
                    Some(url) => Ok(Answer::redirect(url)),
                    None => self.in_home(What::NotFound).await,
                }
            }
            None => self.in_home(What::NotFound).await,
        }
    }

    /// Renders `what` in the site's home site space (or with no site space when it shows none).
    async fn in_home(self, what: What) -> Result<Answer, StoreError> {
        let Some(placed) = self.layout.home().cloned() else {
            return self.render(None, None, what).await;
        };
        let opened = self.open(&placed).await?;
        self.render(Some(placed), Some(opened), what).await
    }

    /// The current revision of a site space's space, and its page tree at the site space's URL.
    async fn open(&self, placed: &Placed) -> Result<(Arc<StoredTree>, Arc<NavTree>), StoreError> {
        let space = self
            .p
            .spaces
            .get(&placed.space_id)
            .ok_or_else(|| StoreError::not_found("no such space"))?;
        let revision = space
            .revision
            .clone()
            .ok_or_else(|| StoreError::internal("space without revision"))?;
        let store = self.app.store.clone();
        let (space_id, rev) = (placed.space_id.clone(), revision.clone());
        let stored = self
            .app
            .db
            .read(move |c| quire_store::reader::load_tree(c, &store.content, &space_id, &rev))
            .await?;
        let key = (revision, placed.base.clone());
        let nav = match self.app.reader.nav_trees.get(&key) {
            Some(nav) => nav,
            None => {
                let base = placed.base.clone();
                let tree = stored.clone();
                let nav = tokio::task::spawn_blocking(move || {
                    Arc::new(NavTree::build(&tree.tree, tree.index(), &base))
                })
                .await
                .map_err(|e| StoreError::internal(format!("building a page tree: {e}")))?;
                self.app.reader.nav_trees.insert(key, nav.clone());
                nav
            }
        };
        Ok((stored, nav))
    }

    async fn loaded(
        &self,
        placed: &Placed,
        stored: &StoredTree,
        page_id: &str,
    ) -> Result<Loaded, StoreError> {
        let document = match stored
            .tree
            .pages
            .get(page_id)
            .and_then(|page| page.document.clone())
        {
            Some(hash) => Some(self.load_document(placed, hash).await?),
            None => None,
        };
        let mut reusable: HashMap<String, Arc<CachedDocument>> = HashMap::new();
        let mut wanted = document
            .as_ref()
            .map(|d| quire_reader::reusable_contents_used(&d.document.nodes))
            .unwrap_or_default();
        for _ in 0..quire_reader::MAX_INCLUDE_DEPTH {
            let mut next = Vec::new();
            for id in wanted {
                if reusable.contains_key(&id) || reusable.len() >= MAX_REUSABLE_PER_PAGE {
                    continue;
                }
                let Some(hash) = stored.tree.reusable.get(&id).and_then(|r| r.document.clone()) else {
                    continue;
                };
                let included = self.load_document(placed, hash).await?;
                next.extend(quire_reader::reusable_contents_used(&included.document.nodes));
                reusable.insert(id, included);
            }
            if next.is_empty() {
                break;
            }
            wanted = next;
        }
        let linked = self
            .linked_spaces(placed, document.iter().chain(reusable.values()))
            .await?;
        Ok(Loaded {
            document,
            reusable,
            linked,
        })
    }

    /// The page trees of the other site spaces the visitor sees that `documents` link to.
    async fn linked_spaces(
        &self,
        placed: &Placed,
        documents: impl Iterator<Item = &Arc<CachedDocument>>,
    ) -> Result<HashMap<String, Arc<NavTree>>, StoreError> {
        let mut wanted: Vec<String> = Vec::new();
        for document in documents {
            quire_content::for_each_ref(&document.document, &mut |target, _| {
                let space = match target {
                    quire_content::ContentRef::Page {
                        space: Some(space), ..
                    }
                    | quire_content::ContentRef::Anchor {
                        space: Some(space), ..
                    } => space,
                    _ => return,
                };
                if *space != placed.space_id && !wanted.contains(space) {
                    wanted.push(space.clone());
                }
            });
        }
        let mut linked = HashMap::new();
        for space in wanted {
            if linked.len() >= MAX_LINKED_SPACES_PER_PAGE {
                break;
            }
            let Some(other) = self.layout.placed.iter().find(|p| p.space_id == space) else {
                continue;
            };
            let (_, nav) = self.open(other).await?;
            linked.insert(space, nav);
        }
        Ok(linked)
    }

    async fn load_document(&self, placed: &Placed, hash: String) -> Result<Arc<CachedDocument>, StoreError> {
        let store = self.app.store.clone();
        let space_id = placed.space_id.clone();
        self.app
            .db
            .read(move |c| quire_store::reader::load_document(c, &store.content, &space_id, &hash))
            .await
    }

    /// Search over the site spaces the visitor sees, without `noIndex` pages.
    async fn search(&self, asked: &Asked) -> Result<SearchResults, StoreError> {
        let query: String = asked
            .param(&["q"])
            .unwrap_or_default()
            .chars()
            .take(MAX_QUERY_CHARS)
            .collect();
        let words = query_words(&query);
        let prefix_last = words.last().is_some_and(|w| w.chars().count() >= 2);
        let fts = FtsQuery { words, prefix_last };
        let mut spaces: Vec<String> = self.layout.placed.iter().map(|x| x.space_id.clone()).collect();
        spaces.dedup();
        let words = fts.words.clone();
        let matches = self
            .app
            .db
            .read(move |c| quire_store::reader::search(c, &fts, &spaces, SEARCH_HITS as i64))
            .await?;
        let mut opened: HashMap<String, Arc<NavTree>> = HashMap::new();
        let mut items = Vec::new();
        for m in matches {
            if items.len() >= SEARCH_HITS {
                break;
            }
            let Some(placed) = self.layout.placed.iter().find(|x| x.space_id == m.space_id) else {
                continue;
            };
            let nav = match opened.get(&placed.site_space_id) {
                Some(nav) => nav.clone(),
                None => {
                    let (_, nav) = self.open(placed).await?;
                    opened.insert(placed.site_space_id.clone(), nav.clone());
                    nav
                }
            };
            let Some(node) = nav.get(&m.page_id) else {
                continue;
            };
            let Some(url) = node.url.clone() else {
                continue;
            };
            if node.no_index {
                continue;
            }
            let sections = m
                .sections
                .iter()
                .map(|s| SearchSection {
                    title: if s.title.is_empty() {
                        node.title.clone()
                    } else {
                        s.title.clone()
                    },
                    url: if s.anchor.is_empty() {
                        url.clone()
                    } else {
                        format!("{url}#{}", s.anchor)
                    },
                    body: crate::api::search::excerpt(&s.body, &words),
                })
                .collect();
            items.push(SearchHit {
                title: node.title.clone(),
                url,
                sections,
            });
        }
        Ok(SearchResults { query, items })
    }

    /// Renders off the async runtime (templates, highlighting, math), on the render threads.
    async fn render(
        self,
        placed: Option<Placed>,
        opened: Option<(Arc<StoredTree>, Arc<NavTree>)>,
        what: What,
    ) -> Result<Answer, StoreError> {
        let app = self.app.clone();
        app.reader
            .pool
            .run(move || self.render_now(placed, opened, what))
            .await
            .map_err(|e| StoreError::internal(format!("rendering a page: {e}")))
    }

    fn render_now(
        &self,
        placed: Option<Placed>,
        opened: Option<(Arc<StoredTree>, Arc<NavTree>)>,
        what: What,
    ) -> Answer {
        let site = self.site(placed.as_ref());
        let navigation = self.layout.navigation(&self.p, placed.as_ref());
        let (stored, nav) = match opened {
            Some((stored, nav)) => (Some(stored), nav),
            None => (None, Arc::new(NavTree::default())),
        };
        let empty = quire_content::tree::Tree::default();
        let tree = stored.as_ref().map_or(&empty, |s| &s.tree);
        let urls = &self.app.urls;
        let key = &self.app.signing_key;
        let space_id = placed.as_ref().map(|x| x.space_id.clone()).unwrap_or_default();
        let signed = if self.permanent_files {
            crate::files::permanent_download_url
        } else {
            crate::files::download_url
        };
        let file_url =
            |file: &FileEntry| signed(urls, key, &space_id, &file.blob, &file.name, &file.content_type);
        let claims = &self.claims;
        let condition = |expression: &str| {
            Condition::parse(expression)
                .map(|c| c.evaluate(claims))
                .unwrap_or(false)
        };
        let included = match &what {
            What::Page(_, loaded) | What::Markdown(_, loaded) => Some(&loaded.reusable),
            _ => None,
        };
        let reusable = |id: &str| {
            included
                .and_then(|docs| docs.get(id))
                .map(|doc| doc.document.clone())
        };
        let linked = match &what {
            What::Page(_, loaded) | What::Markdown(_, loaded) => Some(&loaded.linked),
            _ => None,
        };
        let mut resolver = SpaceResolver::new(&nav, tree, &file_url);
        resolver.condition = Some(&condition);
        resolver.reusable = Some(&reusable);
        resolver.space_id = Some(&space_id);
        for other in &self.layout.placed {
            if other.space_id == space_id || resolver.others.contains_key(&other.space_id) {
                continue;
            }
            resolver.others.insert(
                other.space_id.clone(),
                quire_reader::OtherSpace {
                    title: other.title.clone(),
                    url: other.base.clone(),
                    nav: linked.and_then(|l| l.get(&other.space_id)).map(|nav| &**nav),
                },
            );
        }
        let context = Context {
            site: &site,
            navigation: &navigation,
            tree: &nav,
            resolver: &resolver,
        };
        let not_found = || Answer::html(StatusCode::NOT_FOUND, quire_reader::render_not_found(&context));
        let empty_document = quire_content::Document::default();
        match &what {
            What::Page(id, loaded) => match tree.pages.get(id.as_str()) {
                Some(page) => {
                    let document = loaded.document.as_ref().map_or(&empty_document, |d| &d.document);
                    Answer::html(
                        StatusCode::OK,
                        quire_reader::render_page(&context, page, document),
                    )
                }
                None => not_found(),
            },
            What::Markdown(id, loaded) => match tree.pages.get(id.as_str()) {
                Some(page) => {
                    let document = loaded.document.as_ref().map_or(&empty_document, |d| &d.document);
                    Answer::new(
                        StatusCode::OK,
                        "text/markdown; charset=utf-8",
                        quire_reader::page_markdown(&context, page, document),
                    )
                }
                None => not_found(),
            },
            What::Fragment(id) => match quire_reader::render_navigation_fragment(&context, id) {
                Some(fragment) => Answer::html(StatusCode::OK, fragment),
                None => Answer::new(
                    StatusCode::NOT_FOUND,
                    "text/plain; charset=utf-8",
                    "no such page".to_string(),
                ),
            },
            What::Feed => {
                let feed_url = site.feed_url.clone().unwrap_or_default();
                Answer::new(
                    StatusCode::OK,
                    "application/atom+xml; charset=utf-8",
                    quire_reader::atom_feed(&context, &feed_url, FEED_ENTRIES),
                )
            }
            What::Search(results) => Answer::html(
                StatusCode::OK,
                quire_reader::render_search_page(&context, results),
            ),
            What::NotFound => not_found(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_answers_are_kept_compressed_and_inflate_back() {
        let page = format!("<!DOCTYPE html><p>{}</p>", "a reader page ".repeat(200));
        let answer = Answer::html(StatusCode::OK, page.clone());
        assert!(answer.gzipped);
        assert!(answer.body.len() < page.len() / 4, "{} bytes", answer.body.len());
        assert_eq!(gunzip(&answer.body).unwrap(), page.as_bytes());
        assert_ne!(answer.gzip_etag(), answer.etag);
        assert!(answer.gzip_etag().starts_with('"') && answer.gzip_etag().ends_with("-gzip\""));
        // Small answers are kept as they are: compressing them gains nothing worth the work.
        let small = Answer::new(
            StatusCode::OK,
            "text/plain; charset=utf-8",
            "User-agent: *\n".into(),
        );
        assert!(!small.gzipped);
        assert_eq!(&small.body[..], b"User-agent: *\n");
    }
}
