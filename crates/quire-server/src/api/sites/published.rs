//! The published content site (what a visitor reads) and the structure of a site (what its
//! members manage).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use quire_store::orgs;
use quire_store::permissions::{Standing, site};
use quire_store::sites::published::{self, Published, Shown, Visitor};
use quire_store::sites::{self, SiteVisibility, customization};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{self, PublishedCustomizations, PublishedSiteJson, Render, StructureJson};
use crate::api::spaces::wire::with_role;
use crate::auth::{Caller, Reader, SiteVisitor};
use crate::encoding;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::paths::SitePath;
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_published))
        .routes(routes!(get_structure))
}

/// `shareKey` and `visitorAuthToken`.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct PublishedQuery {
    /// The key of an active share link: required by share-link sites.
    #[param(value_type = Option<String>)]
    share_key: Option<String>,
    /// A visitor token: a JWT signed (HS256) with the site's visitor key, `aud` the site's
    /// id, with `exp`. Required by visitor-auth sites; its claims feed adaptive content.
    #[param(value_type = Option<String>)]
    visitor_auth_token: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/published",
    tag = "Docs sites",
    summary = "The published content site, as its visitor may read it",
    params(SitePath, PublishedQuery),
    responses((status = 200, description = "The sections, groups and site spaces the visitor may see, with their spaces, the customizations and scripts; 404 when the site is absent, not published, or not open to this visitor.", body = PublishedSiteJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_published(
    reader: Reader,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(query): QueryOf<PublishedQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let caller = match reader {
        Reader::User(caller) => caller,
        Reader::Visitor(visitor) => {
            return published_to_visitor(&app, &visitor, &path, &headers).await;
        }
    };
    let site = app
        .store
        .published_sites
        .load(&app.db, &path.organization_id, &path.site_id)
        .await?;
    let standing = if site.site.visibility == SiteVisibility::InCollection {
        let (org, user) = (path.organization_id.clone(), caller.user_id.clone());
        app.db
            .read(move |c| orgs::load_for(c, &org, &user))
            .await?
            .map_or(Standing::Outsider, |o| o.standing)
    } else {
        Standing::Outsider
    };
    let claims = published::admit(
        &site,
        &Visitor {
            share_key: query.share_key.as_deref(),
            token: query.visitor_auth_token.as_deref(),
            standing,
            preview: false,
            unsigned: None,
        },
    )?;
    let shown = published::shown(&site, &claims);
    answer(&app, &site, shown, &headers)
}

/// The site as its visitor was admitted to it by a URL lookup (their `apiToken`): with the
/// claims they were admitted with; any other site is absent to them.
async fn published_to_visitor(
    app: &App,
    visitor: &SiteVisitor,
    path: &SitePath,
    headers: &HeaderMap,
) -> ApiResult<Response> {
    let site = visitor
        .own_site(app, &path.organization_id, &path.site_id)
        .await?;
    let shown = published::shown(&site, &site.claims(&visitor.claims));
    answer(app, &site, shown, headers)
}

/// The published site as `shown`, rendered once per load and kept (plain and compressed).
fn answer(app: &App, site: &Published, shown: Shown, headers: &HeaderMap) -> ApiResult<Response> {
    let key = (site.generation, shown);
    let body = match app.published_bodies.get(&key) {
        Some(body) => body,
        None => {
            let json = render(app, site, &key.1);
            let plain = serde_json::to_vec(&json)
                .map_err(|e| ApiError::internal(format!("cannot render a published site: {e}")))?;
            let gzip = encoding::gzip(&plain, encoding::Effort::Fast)
                .map_err(|e| ApiError::internal(format!("cannot compress a published site: {e}")))?;
            let body = crate::published_bodies::Body {
                plain: encoding::kept(plain),
                gzip,
            };
            app.published_bodies.insert(key, body.clone());
            body
        }
    };
    Ok(if encoding::accepts_gzip(headers) {
        encoding::json(body.gzip, true)
    } else {
        encoding::json(body.plain, false)
    })
}

/// Whether the visitor sees each item, by its id (`shown` lists them in the tree's order).
fn by_id<'a>(ids: impl Iterator<Item = &'a str>, shown: &[bool]) -> HashMap<&'a str, bool> {
    ids.zip(shown.iter().copied()).collect()
}

fn render(app: &App, p: &Published, shown: &Shown) -> PublishedSiteJson {
    let urls = &app.urls;
    let sections = by_id(p.tree.sections.iter().map(|s| s.id.as_str()), &shown.sections);
    let site_spaces = by_id(
        p.tree.site_spaces.iter().map(|s| s.id.as_str()),
        &shown.site_spaces,
    );
    let links = by_id(p.tree.links.iter().map(|l| l.id.as_str()), &shown.links);
    let space = |ss: &sites::SiteSpace| p.spaces.get(&ss.space_id).map(|s| with_role(urls, s, None));
    let shows_section = |s: &sites::Section| sections.get(s.id.as_str()).copied().unwrap_or(false);
    let shows_site_space = |s: &sites::SiteSpace| site_spaces.get(s.id.as_str()).copied().unwrap_or(false);
    let render = Render {
        urls,
        site: &p.site,
        tree: &p.tree,
        space: &space,
        shows_section: &shows_section,
        shows_site_space: &shows_site_space,
        shows_link: &|l| links.get(l.id.as_str()).copied().unwrap_or(false),
        hide_empty_groups: true,
    };
    // Complete, as GET .../customization answers them: each shown site space's own over the
    // site's, or the site's for one without its own (GitBook lists every site space, and its
    // renderer warns of one it does not find).
    let site_space_customizations = p
        .tree
        .site_spaces
        .iter()
        .filter(|ss| site_spaces.get(ss.id.as_str()).copied().unwrap_or(false))
        .map(|ss| {
            let own = p.site_space_customizations.get(&ss.id);
            (
                ss.id.clone(),
                customization::effective(p.customization.as_ref(), own),
            )
        })
        .collect();
    PublishedSiteJson {
        object: "published-content-site",
        site: wire::site_json(urls, &p.site, Standing::Outsider),
        structure: render.structure(),
        customizations: PublishedCustomizations {
            site: customization::effective(p.customization.as_ref(), None),
            site_spaces: site_space_customizations,
        },
        scripts: Vec::new(),
    }
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/structure",
    tag = "Docs sites",
    summary = "The structure of a site: its sections and groups, or its site spaces",
    params(SitePath),
    responses((status = 200, description = "Every section, group and site space, in order.", body = StructureJson)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_structure(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<StructureJson>> {
    let view = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            sites::structure::view(c, site.into_inner(), &caller.user_id)
        })
        .await?;
    let space = wire::view_space(&app.urls, &view);
    Ok(axum::Json(
        wire::render_view(&app.urls, &view, &space).structure(),
    ))
}
