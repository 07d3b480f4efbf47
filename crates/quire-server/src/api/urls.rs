//! URL lookups (GitBook's `urls` operations): a published URL resolved to what serves it (site,
//! section, site space, space, revision, the page path left), which is where a renderer of
//! published sites starts; and a URL quire answers (a space, change request, page or collection
//! in the app, or a published page) resolved to that content for its caller.
//!
//! A published URL is resolved as the reader serves it (`reader::target`, `published::admit`,
//! `published::shown`, `Layout`), so a lookup never finds what the reader would not show that
//! visitor, and answers 404 alike for what is absent and what is hidden.

use axum::extract::State;
use quire_store::permissions::{Standing, collection};
use quire_store::sites::SiteVisibility;
use quire_store::sites::published::{self, Published, Visitor};
use quire_store::validate;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::change_requests::wire::{ChangeRequestJson, cr_json};
use crate::api::collections::wire::{CollectionJson, collection_json};
use crate::api::content::render::{PageJson, ReadOptions};
use crate::api::spaces::wire::{SpaceJson, space_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, QueryOf};
use crate::paths::RouteIds;
use crate::reader::layout::{Layout, Located};
// The query parameters of a published URL that give a share key or a visitor token, as the
// reader reads them.
use crate::reader::serve::{SHARE_PARAMS, TOKEN_PARAMS};
use crate::state::App;

/// How long the `apiToken` of a lookup lets its holder read (GitBook's tokens are short-lived).
pub const API_TOKEN_TTL_S: i64 = 3_600;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_published_content, resolve_published_content))
        .routes(routes!(get_content_by_url))
}

/// The published content a URL leads a visitor to.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedSiteContent {
    pub site: String,
    /// The section serving the URL (absent on a site without sections).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site_section: Option<String>,
    pub site_space: String,
    pub space: String,
    /// The space's current revision (what the site shows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The path of the page within the site space, without a leading slash (empty: its first
    /// page).
    pub pathname: String,
    /// The URL path the site space is served at, with a trailing slash.
    pub base_path: String,
    /// The URL path of the site's root, with a trailing slash.
    pub site_base_path: String,
    /// A JWT (HS256, the instance's signing key) for this visitor: organization, site, site
    /// space, space, the visitor's claims, `scope: "read"`, an `exp` an hour away.
    pub api_token: String,
    pub organization: String,
    /// The share key the visitor was admitted with (share-link sites).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share_key: Option<String>,
    /// Whether no longer URL could lead elsewhere: false when another site space the visitor
    /// sees is served under this one's path (the default section's, at the root of a site with
    /// sections). GitBook's renderer looks up several prefixes of a URL at once and takes a
    /// complete answer of a shorter one as final.
    pub complete: bool,
    /// The URL of the content where the site serves it.
    pub canonical_url: String,
    pub preview: bool,
}

/// Somewhere else to go: `content` (the canonical URL of an alias on the site), or `external`
/// (a visitor-auth site's sign-in, for `redirectOnError`).
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct PublishedContentRedirect {
    #[schema(value_type = String, example = "content")]
    pub target: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    pub redirect: String,
}

/// What a published URL resolves to (GitBook's `PublishedSiteContentLookup`).
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(untagged)]
pub enum PublishedLookup {
    Content(Box<PublishedSiteContent>),
    Redirect(PublishedContentRedirect),
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct PublishedQuery {
    /// The URL to resolve: a page of a published site (its hostname, or `/s/{basename}` on
    /// quire's public URL).
    url: String,
    /// A visitor token of a visitor-auth or adaptive site.
    visitor_auth_token: Option<String>,
    /// true: a visitor-auth site that refuses the visitor answers a redirect to its sign-in.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    redirect_on_error: Option<bool>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ResolvePublished {
    url: String,
    #[serde(default)]
    redirect_on_error: bool,
    visitor: Option<VisitorPayload>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum VisitorType {
    Human,
    Agent,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct VisitorPayload {
    /// `human` or `agent`: quire shows both the same content.
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: Option<VisitorType>,
    /// A visitor token of the site.
    jwt_token: Option<String>,
    /// Claims read as `visitor.claims.unsigned.*`.
    #[schema(value_type = Option<Object>)]
    unsigned_claims: Option<serde_json::Map<String, Value>>,
}

/// A lookup as asked, by either method.
struct Asked {
    url: String,
    token: Option<String>,
    unsigned: Option<Value>,
    redirect_on_error: bool,
}

#[utoipa::path(
    get,
    path = "/v1/urls/published",
    tag = "URLs",
    summary = "Resolve a URL of a published site",
    params(PublishedQuery),
    responses(
        (status = 200, description = "What serves the URL, or where it redirects.", body = PublishedLookup),
        (status = 404, description = "No content at this URL for this visitor (absent and hidden alike).", body = crate::error::ErrorEnvelope),
    ),
    security(())
)]
async fn get_published_content(
    State(app): State<App>,
    QueryOf(query): QueryOf<PublishedQuery>,
) -> ApiResult<axum::Json<PublishedLookup>> {
    let asked = Asked {
        url: query.url,
        token: query.visitor_auth_token,
        unsigned: None,
        redirect_on_error: query.redirect_on_error.unwrap_or(false),
    };
    Ok(axum::Json(lookup(&app, asked).await?))
}

#[utoipa::path(
    post,
    path = "/v1/urls/published",
    tag = "URLs",
    summary = "Resolve a URL of a published site for a visitor",
    request_body = ResolvePublished,
    responses(
        (status = 200, description = "What serves the URL, or where it redirects.", body = PublishedLookup),
        (status = 404, description = "No content at this URL for this visitor (absent and hidden alike).", body = crate::error::ErrorEnvelope),
    ),
    security(())
)]
async fn resolve_published_content(
    State(app): State<App>,
    Json(body): Json<ResolvePublished>,
) -> ApiResult<axum::Json<PublishedLookup>> {
    let (token, unsigned) = match body.visitor {
        Some(v) => (v.jwt_token, v.unsigned_claims.map(Value::Object)),
        None => (None, None),
    };
    let asked = Asked {
        url: body.url,
        token,
        unsigned,
        redirect_on_error: body.redirect_on_error,
    };
    Ok(axum::Json(lookup(&app, asked).await?))
}

/// A published site found from a URL, with the visitor it admitted.
struct Reached {
    url: url::Url,
    p: std::sync::Arc<Published>,
    layout: Layout,
    /// The URL's origin as the site is served there (`https://docs.example.com`, or quire's
    /// public URL).
    origin: String,
    share_key: Option<String>,
    claims_json: Value,
}

fn no_content(url: &str) -> ApiError {
    ApiError::not_found(format!("no published content at {url:?}"))
}

fn url_param(url: &url::Url, names: &[&str]) -> Option<String> {
    url.query_pairs()
        .find(|(k, v)| names.contains(&k.as_ref()) && !v.is_empty())
        .map(|(_, v)| v.into_owned())
}

/// Finds the published site of `asked.url` and admits the visitor; Err(redirect) for a
/// visitor-auth site that refuses them when they asked for one.
async fn reach(app: &App, asked: &Asked) -> ApiResult<Result<Reached, PublishedContentRedirect>> {
    let url = validate::url("url", &asked.url)?;
    let host = url.host_str().map(str::to_ascii_lowercase);
    let path = url.path().to_string();
    // `/s/...` is quire's own URL of a site: only on quire's own origin.
    if path.starts_with("/s/") && !app.urls.is_own_origin(&url) {
        return Err(no_content(&asked.url));
    }
    let target = crate::reader::target(app, &path, host)
        .await
        .ok_or_else(|| no_content(&asked.url))?;
    let (org_id, site_id) = app
        .reader_sites
        .find(&app.db, target.key.clone())
        .await?
        .ok_or_else(|| no_content(&asked.url))?;
    let p = app.published_sites.load(&app.db, &org_id, &site_id).await?;
    let share_key = url_param(&url, SHARE_PARAMS);
    let token = asked.token.clone().or_else(|| url_param(&url, TOKEN_PARAMS));
    let admit = |token: Option<&str>| {
        published::admit_stating(
            &p,
            &Visitor {
                share_key: share_key.as_deref(),
                token,
                standing: Standing::Outsider,
                preview: false,
                unsigned: asked.unsigned.as_ref(),
            },
        )
    };
    let visitor_auth = p.site.visibility == SiteVisibility::VisitorAuth;
    let (claims, claims_json) = match admit(token.as_deref()) {
        Ok(admitted) => admitted,
        // A site that needs no token reads a bad one as none, as the reader does.
        Err(_) if token.is_some() && !visitor_auth => match admit(None) {
            Ok(admitted) => admitted,
            Err(_) => return Err(no_content(&asked.url)),
        },
        Err(_) => {
            let sign_in = p.site.visitor_fallback_url.as_deref().filter(|_| visitor_auth);
            return match sign_in.and_then(|f| url::Url::parse(f).ok()) {
                Some(mut to) if asked.redirect_on_error => {
                    to.query_pairs_mut().append_pair("location", &asked.url);
                    Ok(Err(PublishedContentRedirect {
                        target: "external",
                        site: Some(site_id),
                        redirect: to.into(),
                    }))
                }
                _ => Err(no_content(&asked.url)),
            };
        }
    };
    let shown = published::shown(&p, &claims);
    let layout = Layout::new(&p, &shown, &target.root);
    let origin = match &target.key {
        quire_store::reader::SiteKey::Host(h) => crate::reader::serve::host_origin(app, h),
        _ => app.urls.base().trim_end_matches('/').to_string(),
    };
    Ok(Ok(Reached {
        url,
        p,
        layout,
        origin,
        share_key,
        claims_json,
    }))
}

async fn lookup(app: &App, asked: Asked) -> ApiResult<PublishedLookup> {
    let reached = match reach(app, &asked).await? {
        Ok(reached) => reached,
        Err(redirect) => return Ok(PublishedLookup::Redirect(redirect)),
    };
    let Reached {
        url,
        p,
        layout,
        origin,
        share_key,
        claims_json,
    } = reached;
    let mut path = url.path().to_string();
    if format!("{path}/") == layout.root {
        path.push('/');
    }
    let placed = match layout.locate(&path) {
        Located::Space(placed) => placed,
        Located::Redirect(to) => {
            return Ok(PublishedLookup::Redirect(PublishedContentRedirect {
                target: "content",
                site: None,
                redirect: format!("{origin}{to}"),
            }));
        }
        Located::Nothing => return Err(no_content(&asked.url)),
    };
    let pathname = path
        .strip_prefix(&placed.base)
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_string();
    let revision = p.spaces.get(&placed.space_id).and_then(|s| s.revision.clone());
    let now = quire_store::clock::now_ms() / 1000;
    let api_token = crate::signing::jwt(
        &app.signing_key,
        &json!({
            "iss": "quire",
            "aud": crate::auth::VISITOR_TOKEN_AUDIENCE,
            "organization": p.site.org_id,
            "site": p.site.id,
            "siteSpace": placed.site_space_id,
            "space": placed.space_id,
            "claims": claims_json,
            "scope": "read",
            "iat": now,
            "exp": now + API_TOKEN_TTL_S,
        }),
    );
    // Answered back only where it admitted the visitor.
    let share_key = share_key.filter(|_| p.site.visibility == SiteVisibility::ShareLink);
    Ok(PublishedLookup::Content(Box::new(PublishedSiteContent {
        site: p.site.id.clone(),
        site_section: placed.section.clone(),
        site_space: placed.site_space_id.clone(),
        space: placed.space_id.clone(),
        revision,
        canonical_url: format!("{origin}{}{pathname}", placed.base),
        pathname,
        base_path: placed.base.clone(),
        site_base_path: layout.root.clone(),
        api_token,
        organization: p.site.org_id.clone(),
        share_key,
        complete: !layout
            .placed
            .iter()
            .any(|other| other.base.len() > placed.base.len() && other.base.starts_with(&placed.base)),
        preview: false,
    })))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ContentQuery {
    /// A URL quire answers: a space (`urls.app`), one of its pages, a change request
    /// (`.../~/changes/{number}`, with a page after it or not), a collection, or a page of a
    /// published site.
    url: String,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct CollectionContent {
    pub collection: CollectionJson,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpaceContent {
    pub space: SpaceJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_request: Option<ChangeRequestJson>,
    /// The page the URL names (absent for the space itself, or a path that names no page).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageJson>,
}

/// What a URL resolves to (GitBook's `getContentByUrl` answer).
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(untagged)]
pub enum ContentLookup {
    Collection(Box<CollectionContent>),
    Space(Box<SpaceContent>),
}

/// The content an app URL names, by its path (`/o/{org}/...`).
enum AppPath {
    Collection(String),
    Space {
        space_id: String,
        change_request: Option<String>,
        page_path: String,
    },
}

fn app_path(path: &str) -> Option<AppPath> {
    let rest = path.strip_prefix("/o/")?;
    let (_org, rest) = rest.split_once('/')?;
    if let Some(collection) = rest.strip_prefix("c/") {
        let id = collection.trim_end_matches('/');
        return (!id.is_empty() && !id.contains('/')).then(|| AppPath::Collection(id.to_string()));
    }
    let rest = rest.strip_prefix("s/")?;
    let (space_id, rest) = rest.split_once('/').unwrap_or((rest, ""));
    if space_id.is_empty() {
        return None;
    }
    let (change_request, page) = match rest.strip_prefix("~/changes/") {
        Some(cr) => {
            let (number, page) = cr.split_once('/').unwrap_or((cr, ""));
            (Some(number.to_string()), page)
        }
        None => (None, rest),
    };
    Some(AppPath::Space {
        space_id: space_id.to_string(),
        change_request,
        page_path: page.trim_matches('/').to_string(),
    })
}

#[utoipa::path(
    get,
    path = "/v1/urls/content",
    tag = "URLs",
    summary = "Resolve a URL to the space, change request, page or collection it shows",
    params(ContentQuery),
    responses(
        (status = 200, description = "The content, as the caller sees it.", body = ContentLookup),
        (status = 404, description = "The URL shows nothing the caller can see.", body = crate::error::ErrorEnvelope),
    ),
    security(("token" = ["space:content:read"]))
)]
async fn get_content_by_url(
    caller: Caller,
    State(app): State<App>,
    QueryOf(query): QueryOf<ContentQuery>,
) -> ApiResult<axum::Json<ContentLookup>> {
    let url = validate::url("url", &query.url)?;
    let found = if app.urls.is_own_origin(&url) && url.path().starts_with("/o/") {
        app_path(url.path())
    } else {
        // A page of a published site, as an anonymous visitor reaches it.
        let asked = Asked {
            url: query.url.clone(),
            token: None,
            unsigned: None,
            redirect_on_error: false,
        };
        match lookup(&app, asked).await? {
            PublishedLookup::Content(c) => Some(AppPath::Space {
                space_id: c.space,
                change_request: None,
                page_path: c.pathname,
            }),
            PublishedLookup::Redirect(_) => None,
        }
    };
    match found.ok_or_else(|| ApiError::not_found(format!("no content at {:?}", query.url)))? {
        AppPath::Collection(id) => {
            let col = app
                .db
                .read_as::<collection::View, _>(caller.user_id.clone(), id, |_, it| Ok(it.into_inner()))
                .await?;
            let collection = collection_json(&app.urls, &col);
            Ok(axum::Json(ContentLookup::Collection(Box::new(
                CollectionContent { collection },
            ))))
        }
        AppPath::Space {
            space_id,
            change_request,
            page_path,
        } => {
            let space = app
                .spaces
                .load_visible(&app.db, &space_id, &caller.user_id)
                .await?;
            let change_request = match &change_request {
                Some(number) => {
                    let (space_id, number, user) = (space_id.clone(), number.clone(), caller.user_id.clone());
                    let cr = app
                        .db
                        .read(move |c| {
                            let space = quire_store::spaces::load_active(c, &space_id, &user)?;
                            quire_store::change_requests::get(c, &space, &number)
                        })
                        .await?;
                    Some(cr_json(&app.urls, &cr)?)
                }
                None => None,
            };
            let page = if page_path.is_empty() {
                None
            } else {
                let ids = RouteIds {
                    space_id: space_id.clone(),
                    change_request_id: change_request.as_ref().map(|cr| cr.id.clone()),
                    page_path: Some(page_path),
                    ..RouteIds::default()
                };
                // The defaults of a page read: no body, as GitBook's answer has none.
                let opts = crate::extract::parse_query::<ReadOptions>("")?;
                match crate::api::content::read::get_page_by_path(caller.into(), app.clone(), ids, opts).await
                {
                    Ok(axum::Json(page)) => Some(page),
                    Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => None,
                    Err(e) => return Err(e),
                }
            };
            Ok(axum::Json(ContentLookup::Space(Box::new(SpaceContent {
                space: space_json(&app.urls, &space),
                change_request,
                page,
            }))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_paths_name_a_collection_a_space_a_change_request_and_a_page() {
        assert!(matches!(app_path("/o/org/c/col1"), Some(AppPath::Collection(id)) if id == "col1"));
        let Some(AppPath::Space {
            space_id,
            change_request,
            page_path,
        }) = app_path("/o/org/s/sp1/~/changes/12/guides/setup/")
        else {
            panic!("a change request's page");
        };
        assert_eq!(
            (space_id.as_str(), change_request.as_deref(), page_path.as_str()),
            ("sp1", Some("12"), "guides/setup")
        );
        let Some(AppPath::Space {
            change_request,
            page_path,
            ..
        }) = app_path("/o/org/s/sp1")
        else {
            panic!("a space");
        };
        assert_eq!((change_request, page_path.as_str()), (None, ""));
        for nothing in [
            "/",
            "/o/",
            "/o/org",
            "/o/org/s/",
            "/o/org/c/",
            "/o/org/c/a/b",
            "/o/org/x/y",
        ] {
            assert!(app_path(nothing).is_none(), "{nothing}");
        }
    }
}
