//! GitBook's `SiteCustomizationSettings` as a PUT (or a site space's override) gives them: every
//! block, each optional (what is left out keeps the reader's default), unknown fields and wrong
//! types refused by serde, and what types cannot say checked by [`Settings::check`], naming the
//! field. What GET answers can be put back as it is.

use std::collections::BTreeMap;

use quire_content::ContentRef;
use quire_store::sites;
use quire_store::validate;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};

const MAX_LINKS: usize = 20;
const MAX_GROUPS: usize = 10;
const LINK_TITLE_MAX: usize = 64;
const GROUP_TITLE_MAX: usize = 128;
const MESSAGE_MIN: usize = 2;
const MESSAGE_MAX: usize = 128;
const COPYRIGHT_MAX: usize = 512;
const GREETING_MAX: usize = 256;
const INSTRUCTIONS_MAX: usize = 10_000;
const SUGGESTIONS_MAX: usize = 5;
const SOCIAL_ACCOUNTS_MAX: usize = 10;
const EMOJI_MAX: usize = 50;
const NAME_MAX: usize = 64;

/// The languages a localized text may be given in (GitBook's `TranslationLanguage`).
const LANGUAGES: &[&str] = &[
    "en", "fr", "de", "es", "it", "pt", "pt-br", "ru", "ja", "zh", "zh-tw", "yue", "ko", "ar", "hi", "nl",
    "pl", "tr", "sv", "no", "da", "fi", "el", "cs", "hu", "ro", "th", "vi", "id", "ms", "he", "uk", "sk",
    "bg", "hr", "lt", "lv", "et", "sl",
];

/// GitBook's fonts (`CustomizationDefaultFont`, `CustomizationDefaultMonospaceFont`). A custom
/// font (a definition with font files) is not served by quire's reader.
const FONTS: &[&str] = &[
    "ABCFavorit",
    "Inter",
    "Roboto",
    "RobotoSlab",
    "OpenSans",
    "SourceSansPro",
    "Lato",
    "Ubuntu",
    "Raleway",
    "Merriweather",
    "Overpass",
    "NotoSans",
    "IBMPlexSerif",
    "Poppins",
    "FiraSans",
];
const MONOSPACE_FONTS: &[&str] = &[
    "FiraCode",
    "IBMPlexMono",
    "JetBrainsMono",
    "SourceCodePro",
    "RobotoMono",
    "SpaceMono",
    "DMMono",
    "Inconsolata",
];

/// A string enum of GitBook's, its values the variants' names in kebab-case.
macro_rules! choice {
    ($name:ident { $($(#[$attr:meta])* $variant:ident),+ $(,)? }) => {
        #[derive(Deserialize, Serialize, utoipa::ToSchema, Clone, Copy, Debug)]
        #[serde(rename_all = "kebab-case")]
        pub enum $name { $($(#[$attr])* $variant),+ }
    };
}

choice!(Theme {
    Clean,
    Muted,
    Bold,
    Gradient
});
choice!(Corners {
    Straight,
    Rounded,
    Circular
});
choice!(Depth { Subtle, Flat });
choice!(LinkColors { Default, Accent });
choice!(Background { Plain, Match });
choice!(Icons {
    Regular,
    Solid,
    Duotone,
    Light,
    Thin
});
choice!(SidebarBackground { Default, Filled });
choice!(SidebarList { Default, Pill, Line });
choice!(SearchStyle { Prominent, Subtle });
choice!(Locale {
    En,
    Fr,
    Es,
    Zh,
    Ja,
    De,
    Nl,
    No,
    PtBr,
    Ru
});
choice!(HeaderPreset {
    Default,
    Bold,
    Contrast,
    Custom,
    None
});
choice!(LinkStyle {
    Link,
    ButtonPrimary,
    ButtonSecondary
});
choice!(AnnouncementStyle {
    Info,
    Warning,
    Danger,
    Success
});
choice!(ThemeMode { Light, Dark, System });
choice!(AiMode {
    None,
    Search,
    Assistant
});
choice!(PageAction {
    Assistant,
    ExternalAi,
    Markdown,
    Mcp,
    Git,
    Pdf
});
choice!(LinkTarget {
    #[serde(rename = "self")]
    SameTab,
    Blank
});
choice!(Platform {
    Twitter,
    Instagram,
    Facebook,
    Linkedin,
    Github,
    Discord,
    Slack,
    Youtube,
    Tiktok,
    Reddit,
    Bluesky,
    Mastodon,
    Threads,
    Medium,
});

/// A text by language, overriding the default one.
pub type Localized = BTreeMap<String, String>;

#[derive(Deserialize, Serialize, utoipa::ToSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Settings {
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_title: Option<Localized>,
    #[serde(skip_serializing_if = "Option::is_none")]
    styling: Option<Styling>,
    #[serde(skip_serializing_if = "Option::is_none")]
    internationalization: Option<Internationalization>,
    #[serde(skip_serializing_if = "Option::is_none")]
    favicon: Option<Favicon>,
    #[serde(skip_serializing_if = "Option::is_none")]
    header: Option<Header>,
    #[serde(skip_serializing_if = "Option::is_none")]
    footer: Option<Footer>,
    #[serde(skip_serializing_if = "Option::is_none")]
    announcement: Option<Announcement>,
    #[serde(skip_serializing_if = "Option::is_none")]
    themes: Option<Themes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    feedback: Option<Toggle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ai: Option<Ai>,
    #[serde(skip_serializing_if = "Option::is_none")]
    advanced_customization: Option<Toggle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page_actions: Option<PageActions>,
    #[serde(skip_serializing_if = "Option::is_none")]
    external_links: Option<ExternalLinks>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pagination: Option<Toggle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trademark: Option<Toggle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    privacy_policy: Option<UrlSetting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    social_preview: Option<UrlSetting>,
    #[serde(skip_serializing_if = "Option::is_none")]
    social_accounts: Option<Vec<SocialAccount>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    insights: Option<Insights>,
    /// As GET answers it; a PUT may send it back, and it is not kept (the write sets it).
    #[allow(dead_code)]
    #[serde(default, skip_serializing)]
    #[schema(value_type = Option<String>, format = DateTime)]
    updated_at: Option<serde_json::Value>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Styling {
    #[serde(skip_serializing_if = "Option::is_none")]
    theme: Option<Theme>,
    #[serde(skip_serializing_if = "Option::is_none")]
    primary_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tint: Option<Tint>,
    #[serde(skip_serializing_if = "Option::is_none")]
    info_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    success_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warning_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    danger_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    corners: Option<Corners>,
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<Depth>,
    #[serde(skip_serializing_if = "Option::is_none")]
    links: Option<LinkColors>,
    /// One of GitBook's fonts, by name (`Inter`, `Roboto`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    font: Option<serde_json::Value>,
    /// null: headings in `font`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    heading_font: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    monospace_font: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code_theme: Option<CodeThemes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    background: Option<Background>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icons: Option<Icons>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sidebar: Option<Sidebar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    search: Option<SearchStyle>,
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
struct Tint {
    color: ThemedColor,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CodeThemes {
    default: ThemedName,
    openapi: ThemedName,
}

/// A code theme for each mode (`default-light`, `github-dark`, ...).
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ThemedName {
    light: String,
    dark: String,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Sidebar {
    background: SidebarBackground,
    list: SidebarList,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Internationalization {
    locale: Locale,
}

/// An icon for each mode, or an emoji, or neither (quire's icon).
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Favicon {
    #[serde(skip_serializing_if = "Option::is_none")]
    icon: Option<ThemedUrl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    emoji: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Header {
    #[serde(skip_serializing_if = "Option::is_none")]
    preset: Option<HeaderPreset>,
    #[serde(skip_serializing_if = "Option::is_none")]
    logo: Option<ThemedUrl>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    primary_link: Option<ContentRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    background_color: Option<ThemedColor>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link_color: Option<ThemedColor>,
    #[serde(default)]
    links: Vec<HeaderItem>,
}

/// A header link, or a menu of links when it has `links`.
#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HeaderItem {
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_title: Option<Localized>,
    #[serde(skip_serializing_if = "Option::is_none")]
    style: Option<LinkStyle>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    to: Option<ContentRef>,
    #[serde(default)]
    links: Vec<ContentLink>,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ContentLink {
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_title: Option<Localized>,
    #[schema(value_type = Object)]
    to: ContentRef,
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
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FooterGroup {
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_title: Option<Localized>,
    links: Vec<ContentLink>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Announcement {
    enabled: bool,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_message: Option<Localized>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link: Option<ContentLink>,
    style: AnnouncementStyle,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Themes {
    default: ThemeMode,
    toggeable: bool,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct Toggle {
    enabled: bool,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Ai {
    mode: AiMode,
    #[serde(skip_serializing_if = "Option::is_none")]
    greeting: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    localized_greeting: Option<Localized>,
    #[serde(skip_serializing_if = "Option::is_none")]
    suggestions: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct PageActions {
    items: Vec<PageAction>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ExternalLinks {
    target: LinkTarget,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UrlSetting {
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SocialAccount {
    platform: Platform,
    handle: String,
    display: SocialDisplay,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SocialDisplay {
    footer: bool,
    header: bool,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Insights {
    tracking_cookie: bool,
}

fn invalid(message: String) -> ApiError {
    ApiError::bad_request(message)
}

fn color(field: &str, value: &str) -> ApiResult<()> {
    let hex = value.strip_prefix('#').unwrap_or("");
    if !(hex.len() == 3 || hex.len() == 6) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(invalid(format!(
            "`{field}` must be a color written #rgb or #rrggbb, not {value:?}"
        )));
    }
    Ok(())
}

fn themed_color(field: &str, c: Option<&ThemedColor>) -> ApiResult<()> {
    if let Some(c) = c {
        color(&format!("{field}.light"), &c.light)?;
        color(&format!("{field}.dark"), &c.dark)?;
    }
    Ok(())
}

fn themed_url(field: &str, u: Option<&ThemedUrl>) -> ApiResult<()> {
    if let Some(u) = u {
        validate::url(&format!("{field}.light"), &u.light)?;
        validate::url(&format!("{field}.dark"), &u.dark)?;
    }
    Ok(())
}

fn at_most<T>(field: &str, items: &[T], max: usize) -> ApiResult<()> {
    if items.len() > max {
        return Err(invalid(format!(
            "`{field}` holds at most {max} items, not {}",
            items.len()
        )));
    }
    Ok(())
}

fn localized(field: &str, texts: Option<&Localized>, max: usize) -> ApiResult<()> {
    for (language, text) in texts.into_iter().flatten() {
        if !LANGUAGES.contains(&language.as_str()) {
            return Err(invalid(format!(
                "`{field}`: {language:?} is not a language GitBook translates into"
            )));
        }
        validate::name(&format!("{field}.{language}"), text, max)?;
    }
    Ok(())
}

/// A reference a link can follow: a kind GitBook knows, with its fields; a URL absolute.
fn content_ref(field: &str, to: &ContentRef) -> ApiResult<()> {
    match to {
        ContentRef::Other(_) => Err(invalid(format!(
            "`{field}` is not a content reference (`{{\"kind\": \"url\", \"url\": ...}}`, `page`, `file`, `anchor`, `space`, ...)"
        ))),
        ContentRef::Url { url } => validate::url(&format!("{field}.url"), url)
            .map(|_| ())
            .map_err(Into::into),
        _ => Ok(()),
    }
}

fn link(field: &str, l: &ContentLink) -> ApiResult<()> {
    validate::title(&format!("{field}.title"), &l.title, 1, LINK_TITLE_MAX)?;
    localized(
        &format!("{field}.localizedTitle"),
        l.localized_title.as_ref(),
        LINK_TITLE_MAX,
    )?;
    content_ref(&format!("{field}.to"), &l.to)
}

fn links(field: &str, items: &[ContentLink]) -> ApiResult<()> {
    at_most(field, items, MAX_LINKS)?;
    for (i, l) in items.iter().enumerate() {
        link(&format!("{field}[{i}]"), l)?;
    }
    Ok(())
}

/// A font by one of GitBook's names; a custom font definition is refused.
fn font(field: &str, value: Option<&serde_json::Value>, names: &[&str]) -> ApiResult<()> {
    match value {
        None | Some(serde_json::Value::Null) => Ok(()),
        Some(serde_json::Value::String(name)) if names.contains(&name.as_str()) => Ok(()),
        Some(serde_json::Value::Object(_)) => Err(invalid(format!(
            "`{field}`: custom fonts are not served by quire's reader; name one of {}",
            names.join(", ")
        ))),
        Some(other) => Err(invalid(format!(
            "`{field}` must be one of {}, not {other}",
            names.join(", ")
        ))),
    }
}

fn name(field: &str, value: &str) -> ApiResult<()> {
    let ok = !value.is_empty()
        && value.len() <= NAME_MAX
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !ok {
        return Err(invalid(format!(
            "`{field}` must be a code theme's name (lowercase letters, digits and `-`), not {value:?}"
        )));
    }
    Ok(())
}

impl Styling {
    fn check(&self) -> ApiResult<()> {
        themed_color("styling.tint.color", self.tint.as_ref().map(|t| &t.color))?;
        let colors = [
            ("primaryColor", &self.primary_color),
            ("infoColor", &self.info_color),
            ("successColor", &self.success_color),
            ("warningColor", &self.warning_color),
            ("dangerColor", &self.danger_color),
        ];
        for (field, c) in colors {
            themed_color(&format!("styling.{field}"), c.as_ref())?;
        }
        font("styling.font", self.font.as_ref(), FONTS)?;
        font("styling.headingFont", self.heading_font.as_ref(), FONTS)?;
        font(
            "styling.monospaceFont",
            self.monospace_font.as_ref(),
            MONOSPACE_FONTS,
        )?;
        if let Some(code) = &self.code_theme {
            for (field, themed) in [("default", &code.default), ("openapi", &code.openapi)] {
                name(&format!("styling.codeTheme.{field}.light"), &themed.light)?;
                name(&format!("styling.codeTheme.{field}.dark"), &themed.dark)?;
            }
        }
        Ok(())
    }
}

impl Header {
    fn check(&self) -> ApiResult<()> {
        themed_url("header.logo", self.logo.as_ref())?;
        themed_color("header.backgroundColor", self.background_color.as_ref())?;
        themed_color("header.linkColor", self.link_color.as_ref())?;
        if let Some(to) = &self.primary_link {
            content_ref("header.primaryLink", to)?;
        }
        at_most("header.links", &self.links, MAX_LINKS)?;
        for (i, item) in self.links.iter().enumerate() {
            let field = format!("header.links[{i}]");
            validate::title(&format!("{field}.title"), &item.title, 1, LINK_TITLE_MAX)?;
            localized(
                &format!("{field}.localizedTitle"),
                item.localized_title.as_ref(),
                LINK_TITLE_MAX,
            )?;
            if let Some(to) = &item.to {
                content_ref(&format!("{field}.to"), to)?;
            }
            links(&format!("{field}.links"), &item.links)?;
            if let Some(condition) = &item.condition {
                quire_adaptive::Condition::parse(condition)
                    .map_err(|e| invalid(format!("`{field}.condition`: {e}")))?;
            }
        }
        Ok(())
    }
}

impl Footer {
    fn check(&self) -> ApiResult<()> {
        themed_url("footer.logo", self.logo.as_ref())?;
        at_most("footer.groups", &self.groups, MAX_GROUPS)?;
        for (i, g) in self.groups.iter().enumerate() {
            let field = format!("footer.groups[{i}]");
            validate::title(&format!("{field}.title"), &g.title, 1, GROUP_TITLE_MAX)?;
            localized(
                &format!("{field}.localizedTitle"),
                g.localized_title.as_ref(),
                GROUP_TITLE_MAX,
            )?;
            links(&format!("{field}.links"), &g.links)?;
        }
        if let Some(c) = &self.copyright {
            validate::name("footer.copyright", c, COPYRIGHT_MAX)?;
        }
        Ok(())
    }
}

impl Settings {
    /// What types cannot say: lengths, colors, URLs, languages, references, fonts.
    pub fn check(&self) -> ApiResult<()> {
        if let Some(t) = &self.title {
            validate::title("title", t, sites::TITLE_MIN, sites::TITLE_MAX)?;
        }
        localized("localizedTitle", self.localized_title.as_ref(), sites::TITLE_MAX)?;
        if let Some(s) = &self.styling {
            s.check()?;
        }
        if let Some(f) = &self.favicon {
            if f.icon.is_some() && f.emoji.is_some() {
                return Err(invalid("`favicon` is an `icon` or an `emoji`, not both".into()));
            }
            themed_url("favicon.icon", f.icon.as_ref())?;
            if let Some(e) = &f.emoji {
                validate::name("favicon.emoji", e, EMOJI_MAX)?;
            }
        }
        if let Some(h) = &self.header {
            h.check()?;
        }
        if let Some(f) = &self.footer {
            f.check()?;
        }
        if let Some(a) = &self.announcement {
            validate::title("announcement.message", &a.message, MESSAGE_MIN, MESSAGE_MAX)?;
            localized(
                "announcement.localizedMessage",
                a.localized_message.as_ref(),
                MESSAGE_MAX,
            )?;
            if let Some(l) = &a.link {
                link("announcement.link", l)?;
            }
        }
        if let Some(ai) = &self.ai {
            if let Some(g) = &ai.greeting {
                validate::name("ai.greeting", g, GREETING_MAX)?;
            }
            localized(
                "ai.localizedGreeting",
                ai.localized_greeting.as_ref(),
                MESSAGE_MAX,
            )?;
            let suggestions = ai.suggestions.as_deref().unwrap_or_default();
            at_most("ai.suggestions", suggestions, SUGGESTIONS_MAX)?;
            for (i, s) in suggestions.iter().enumerate() {
                validate::title(&format!("ai.suggestions[{i}]"), s, 3, LINK_TITLE_MAX)?;
            }
            if let Some(i) = &ai.instructions {
                validate::name("ai.instructions", i, INSTRUCTIONS_MAX)?;
            }
        }
        for (field, setting) in [
            ("privacyPolicy", &self.privacy_policy),
            ("socialPreview", &self.social_preview),
        ] {
            if let Some(url) = setting.as_ref().and_then(|s| s.url.as_ref()) {
                validate::url(&format!("{field}.url"), url)?;
            }
        }
        let accounts = self.social_accounts.as_deref().unwrap_or_default();
        at_most("socialAccounts", accounts, SOCIAL_ACCOUNTS_MAX)?;
        for (i, a) in accounts.iter().enumerate() {
            validate::title(&format!("socialAccounts[{i}].handle"), &a.handle, 1, 128)?;
        }
        Ok(())
    }

    /// The settings as stored: what was given, `updatedAt` left out.
    pub fn to_json(&self) -> ApiResult<serde_json::Value> {
        serde_json::to_value(self)
            .map_err(|e| ApiError::internal(format!("cannot store a customization: {e}")))
    }
}
