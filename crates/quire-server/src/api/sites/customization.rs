//! Customization of a site and of its site spaces: a validated subset of GitBook's
//! `SiteCustomizationSettings` (title, styling theme and primary color, header logo and links,
//! footer logo, link groups and copyright, an announcement, the light/dark theme). Unknown
//! fields and wrong types are 400s naming the field; colors are `#rgb` or `#rrggbb`; links are
//! absolute http(s) URLs.

use axum::extract::State;
use quire_store::permissions::site;
use quire_store::sites::{self, customization};
use quire_store::validate;
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path};
use crate::paths::{SitePath, SiteSpacePath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_site_customization, put_site_customization))
        .routes(routes!(
            get_site_space_customization,
            put_site_space_customization
        ))
}

const MAX_LINKS: usize = 20;
const MAX_GROUPS: usize = 10;
const LINK_TITLE_MAX: usize = 128;
const MESSAGE_MAX: usize = 512;
const COPYRIGHT_MAX: usize = 512;

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Customization {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    styling: Option<Styling>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<Header>,
    #[serde(skip_serializing_if = "Option::is_none")]
    footer: Option<Footer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    announcement: Option<Announcement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    themes: Option<Themes>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Styling {
    #[serde(skip_serializing_if = "Option::is_none")]
    theme: Option<Theme>,
    #[serde(skip_serializing_if = "Option::is_none")]
    primary_color: Option<ThemedColor>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum Theme {
    Clean,
    Muted,
    Bold,
    Gradient,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ThemedColor {
    light: String,
    dark: String,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ThemedUrl {
    light: String,
    dark: String,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Header {
    #[serde(skip_serializing_if = "Option::is_none")]
    logo: Option<ThemedUrl>,
    #[serde(default)]
    links: Vec<HeaderLink>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct HeaderLink {
    title: String,
    to: UrlRef,
    #[serde(skip_serializing_if = "Option::is_none")]
    style: Option<LinkStyle>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
enum LinkStyle {
    Link,
    ButtonPrimary,
    ButtonSecondary,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Footer {
    #[serde(skip_serializing_if = "Option::is_none")]
    logo: Option<ThemedUrl>,
    #[serde(default)]
    groups: Vec<FooterGroup>,
    #[serde(skip_serializing_if = "Option::is_none")]
    copyright: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct FooterGroup {
    title: String,
    links: Vec<ContentLink>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ContentLink {
    title: String,
    to: UrlRef,
}

/// GitBook's `ContentRefURL`: `{kind: "url", url}`.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UrlRef {
    kind: UrlKind,
    url: String,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum UrlKind {
    Url,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Announcement {
    enabled: bool,
    message: String,
    style: AnnouncementStyle,
    #[serde(skip_serializing_if = "Option::is_none")]
    link: Option<ContentLink>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum AnnouncementStyle {
    Info,
    Warning,
    Danger,
    Success,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Themes {
    default: ThemeMode,
    toggeable: bool,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
enum ThemeMode {
    Light,
    Dark,
    System,
}

fn color(field: &str, value: &str) -> ApiResult<()> {
    let hex = value.strip_prefix('#').unwrap_or("");
    if !(hex.len() == 3 || hex.len() == 6) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::bad_request(format!(
            "`{field}` must be a color written #rgb or #rrggbb, not {value:?}"
        )));
    }
    Ok(())
}

fn link(field: &str, l: &ContentLink) -> ApiResult<()> {
    validate::title(&format!("{field}.title"), &l.title, 1, LINK_TITLE_MAX)?;
    validate::url(&format!("{field}.to.url"), &l.to.url)?;
    Ok(())
}

fn themed_url(field: &str, u: &ThemedUrl) -> ApiResult<()> {
    validate::url(&format!("{field}.light"), &u.light)?;
    validate::url(&format!("{field}.dark"), &u.dark)?;
    Ok(())
}

impl Customization {
    fn check(&self) -> ApiResult<()> {
        if let Some(t) = &self.title {
            validate::title("title", t, sites::TITLE_MIN, sites::TITLE_MAX)?;
        }
        if let Some(c) = self.styling.as_ref().and_then(|s| s.primary_color.as_ref()) {
            color("styling.primaryColor.light", &c.light)?;
            color("styling.primaryColor.dark", &c.dark)?;
        }
        if let Some(h) = &self.header {
            if let Some(logo) = &h.logo {
                themed_url("header.logo", logo)?;
            }
            if h.links.len() > MAX_LINKS {
                return Err(ApiError::bad_request(format!(
                    "`header.links` holds at most {MAX_LINKS} links"
                )));
            }
            for (i, l) in h.links.iter().enumerate() {
                let field = format!("header.links[{i}]");
                validate::title(&format!("{field}.title"), &l.title, 1, LINK_TITLE_MAX)?;
                validate::url(&format!("{field}.to.url"), &l.to.url)?;
            }
        }
        if let Some(f) = &self.footer {
            if let Some(logo) = &f.logo {
                themed_url("footer.logo", logo)?;
            }
            if f.groups.len() > MAX_GROUPS {
                return Err(ApiError::bad_request(format!(
                    "`footer.groups` holds at most {MAX_GROUPS} groups"
                )));
            }
            for (i, g) in f.groups.iter().enumerate() {
                validate::title(&format!("footer.groups[{i}].title"), &g.title, 1, LINK_TITLE_MAX)?;
                if g.links.len() > MAX_LINKS {
                    return Err(ApiError::bad_request(format!(
                        "`footer.groups[{i}].links` holds at most {MAX_LINKS} links"
                    )));
                }
                for (j, l) in g.links.iter().enumerate() {
                    link(&format!("footer.groups[{i}].links[{j}]"), l)?;
                }
            }
            if let Some(c) = &f.copyright {
                validate::name("footer.copyright", c, COPYRIGHT_MAX)?;
            }
        }
        if let Some(a) = &self.announcement {
            validate::name("announcement.message", &a.message, MESSAGE_MAX)?;
            if let Some(l) = &a.link {
                link("announcement.link", l)?;
            }
        }
        Ok(())
    }

    fn to_json(&self) -> ApiResult<serde_json::Value> {
        serde_json::to_value(self)
            .map_err(|e| ApiError::internal(format!("cannot store a customization: {e}")))
    }
}

/// The answer: the customization as stored, with `updatedAt` once it was set.
fn answer(stored: customization::Stored) -> serde_json::Value {
    let mut json = match stored.json {
        Some(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    if let Some(at) = stored.updated_at {
        json.insert(
            "updatedAt".into(),
            serde_json::Value::String(quire_store::clock::format_ms(at)),
        );
    }
    serde_json::Value::Object(json)
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/customization",
    tag = "Docs sites",
    summary = "Get the customization of a site",
    params(SitePath),
    responses((status = 200, description = "The customization (empty until set).", body = Customization)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_site_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let stored = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |_c, site| {
            customization::of_site(&site)
        })
        .await?;
    Ok(axum::Json(answer(stored)))
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/customization",
    tag = "Docs sites",
    summary = "Replace the customization of a site",
    params(SitePath),
    request_body = Customization,
    responses((status = 200, description = "The customization as stored.", body = Customization)),
    security(("token" = ["site:metadata:write"]))
)]
async fn put_site_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<Customization>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    body.check()?;
    let json = body.to_json()?;
    let stored = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::set_site(c, &site, &json)
        })
        .await?;
    Ok(axum::Json(answer(stored)))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Get the customization of a site space (over the site's)",
    params(SiteSpacePath),
    responses((status = 200, description = "The customization (empty until set).", body = Customization)),
    security(("token" = ["site:metadata:read"]))
)]
async fn get_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    let stored = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::of_site_space(c, &site, &path.site_space_id)
        })
        .await?;
    Ok(axum::Json(answer(stored)))
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
    tag = "Docs sites",
    summary = "Replace the customization of a site space",
    params(SiteSpacePath),
    request_body = Customization,
    responses((status = 200, description = "The customization as stored.", body = Customization)),
    security(("token" = ["site:metadata:write"]))
)]
async fn put_site_space_customization(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
    Json(body): Json<Customization>,
) -> ApiResult<axum::Json<serde_json::Value>> {
    body.check()?;
    let json = body.to_json()?;
    let stored = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            customization::set_site_space(c, &site, &path.site_space_id, &json)
        })
        .await?;
    Ok(axum::Json(answer(stored)))
}
