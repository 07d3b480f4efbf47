//! What a site is, as the reader needs it: its title and URL, its customization (read from
//! GitBook's `SiteCustomizationSettings` JSON), and the navigation between its sections and site
//! spaces.

use quire_content::ContentRef;
use serde::{Deserialize, Serialize};

/// A published site, as one request of a reader sees it.
#[derive(Debug, Clone)]
pub struct Site {
    /// The site's title (the customization's `title` wins when set).
    pub title: String,
    /// A short description of the site, for `llms.txt` and the home page's meta description.
    pub description: Option<String>,
    /// The absolute URL of the site's root, with a trailing slash
    /// (`https://docs.example.com/` or `https://quire.example.com/s/handbook/`). Canonical links,
    /// Open Graph tags, the sitemap and the feed use it to make page URLs absolute.
    pub url: String,
    /// Where the embedded assets are served (see [`crate::assets`]), with a trailing slash:
    /// `/_quire/assets/` by default.
    pub assets_url: String,
    /// The search endpoint the search box queries as you type (`{search_url}?q=...`, answered
    /// with [`crate::SearchResults`] as JSON); `None` hides the search box.
    pub search_url: Option<String>,
    /// The page that shows search results without JavaScript (the search form's `action`);
    /// `None` uses `search_url`.
    pub search_page_url: Option<String>,
    /// Prefix of the URLs of collapsed sidebar levels (`{nav_url}{page id}`, answered with
    /// [`crate::render_navigation_fragment`]); `None` renders collapsed levels as plain links.
    pub nav_url: Option<String>,
    /// Where the Atom feed of the site is served ([`crate::atom_feed`]), announced in each
    /// page's head; `None` announces none.
    pub feed_url: Option<String>,
    /// Whether search engines may index the site: false for unlisted sites and sites that ask
    /// robots to stay away.
    pub indexable: bool,
    /// The language of the content (`lang` of the pages).
    pub language: String,
    pub customization: Customization,
}

impl Site {
    /// A site with the defaults: indexable, English, assets under `/_quire/assets/`, no search.
    pub fn new(title: &str, url: &str) -> Site {
        let mut url = url.to_owned();
        if !url.ends_with('/') {
            url.push('/');
        }
        Site {
            title: title.to_owned(),
            description: None,
            url,
            assets_url: "/_quire/assets/".to_owned(),
            search_url: None,
            search_page_url: None,
            nav_url: None,
            feed_url: None,
            indexable: true,
            language: "en".to_owned(),
            customization: Customization::default(),
        }
    }

    /// The title shown: the customization's, else the site's.
    pub fn display_title(&self) -> &str {
        self.customization
            .title
            .as_deref()
            .filter(|title| !title.trim().is_empty())
            .unwrap_or(&self.title)
    }

    /// An absolute URL for a site URL (`/guide` → `https://docs.example.com/guide`); absolute
    /// URLs stay as they are.
    pub fn absolute(&self, href: &str) -> String {
        match url::Url::parse(&self.url).and_then(|base| base.join(href)) {
            Ok(joined) => joined.to_string(),
            Err(_) => href.to_owned(),
        }
    }
}

/// A color for each theme: `{"light": "#346ddb", "dark": "#5d8ff0"}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThemedColor {
    #[serde(default)]
    pub light: String,
    #[serde(default)]
    pub dark: String,
}

/// A URL for each theme (logos, icons).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThemedUrl {
    #[serde(default)]
    pub light: String,
    #[serde(default)]
    pub dark: String,
}

/// The part of GitBook's `SiteCustomizationSettings` the reader uses. Every field is optional
/// and unknown fields are ignored, so the stored settings deserialize as they are.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Customization {
    pub title: Option<String>,
    pub styling: Styling,
    pub favicon: Favicon,
    pub header: Header,
    pub footer: Footer,
    pub announcement: Option<Announcement>,
    pub themes: Themes,
    pub pagination: Toggle,
    pub social_preview: UrlSetting,
    pub privacy_policy: UrlSetting,
    pub trademark: Option<Toggle>,
    pub external_links: ExternalLinks,
}

/// How links out of the site open: `self` (the current tab, the default) or `blank` (a new
/// one).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExternalLinks {
    pub target: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Styling {
    pub primary_color: Option<ThemedColor>,
    pub tint: Option<Tint>,
    pub info_color: Option<ThemedColor>,
    pub success_color: Option<ThemedColor>,
    pub warning_color: Option<ThemedColor>,
    pub danger_color: Option<ThemedColor>,
    /// `straight`, `rounded` (the default) or `circular`.
    pub corners: Option<String>,
    /// `default` (links in the primary color) or `accent` (links in the text color).
    pub links: Option<String>,
    /// One of GitBook's fonts by name (`Inter`, `Roboto`, ...); a custom font definition is
    /// not read.
    #[serde(deserialize_with = "font_name")]
    pub font: Option<String>,
    #[serde(deserialize_with = "font_name")]
    pub monospace_font: Option<String>,
}

/// A font's name, or None for anything else GitBook allows there (a custom font definition).
fn font_name<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(value.as_str().map(str::to_owned))
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Tint {
    pub color: ThemedColor,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Favicon {
    pub icon: Option<ThemedUrl>,
    pub emoji: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Header {
    pub logo: Option<ThemedUrl>,
    pub links: Vec<HeaderLink>,
}

/// A header link, or a menu of links when it has `links`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct HeaderLink {
    pub title: String,
    /// `link`, `button-primary` or `button-secondary`.
    pub style: Option<String>,
    pub to: Option<ContentRef>,
    pub links: Vec<ContentLink>,
}

/// A titled link to a content reference (footer links, header menu entries, announcements).
#[derive(Debug, Clone, Deserialize)]
pub struct ContentLink {
    #[serde(default)]
    pub title: String,
    pub to: ContentRef,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Footer {
    pub logo: Option<ThemedUrl>,
    pub groups: Vec<FooterGroup>,
    pub copyright: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FooterGroup {
    pub title: String,
    pub links: Vec<ContentLink>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Announcement {
    pub enabled: bool,
    pub message: String,
    pub link: Option<ContentLink>,
    /// `info`, `warning`, `danger` or `success`.
    pub style: Option<String>,
}

/// Light and dark themes: which one a first visit gets, and whether the reader may switch.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Themes {
    /// `light`, `dark` or `system` (follow the visitor's preference).
    pub default: String,
    pub toggeable: bool,
}

impl Default for Themes {
    fn default() -> Self {
        Themes {
            default: "system".to_owned(),
            toggeable: true,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Toggle {
    pub enabled: bool,
}

impl Default for Toggle {
    fn default() -> Self {
        Toggle { enabled: true }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UrlSetting {
    pub url: Option<String>,
}

/// The navigation between the parts of a site: its sections (top tabs, section groups as
/// menus) and the site spaces of the current section (the variant switcher).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Navigation {
    pub sections: Vec<SectionItem>,
    pub variants: Vec<NavLink>,
}

/// A section or an external link (with a URL), or a section group (with `children`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct SectionItem {
    pub title: String,
    pub url: Option<String>,
    /// The visitor is in this section (or, for a group, in one of its sections).
    pub current: bool,
    pub children: Vec<NavLink>,
    /// Leads out of the site (an external link of the site's structure).
    pub external: bool,
}

/// A titled link that may be the current one.
#[derive(Debug, Clone, Default, Serialize)]
pub struct NavLink {
    pub title: String,
    pub url: String,
    pub current: bool,
    /// Leads out of the site.
    pub external: bool,
}

/// An emoji as characters. GitBook's API writes emojis as code points in hex (`1f44b`, or
/// `1f468-200d-1f4bb` for a sequence); imported pages hold the characters themselves.
pub fn emoji_text(emoji: &str) -> Option<String> {
    let emoji = emoji.trim();
    if emoji.is_empty() {
        return None;
    }
    let is_code = emoji
        .split('-')
        .all(|code| !code.is_empty() && code.len() <= 6 && code.chars().all(|c| c.is_ascii_hexdigit()));
    if is_code {
        let text: String = emoji
            .split('-')
            .filter_map(|code| u32::from_str_radix(code, 16).ok().and_then(char::from_u32))
            .collect();
        return (!text.is_empty()).then_some(text);
    }
    // Characters: an emoji has no ASCII (which keeps markup and URLs out of a favicon).
    (!emoji.is_ascii() && emoji.chars().all(|c| !c.is_ascii()) && emoji.len() <= 32).then(|| emoji.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gitbook_customization_settings_deserialize() {
        let customization: Customization = serde_json::from_value(json!({
            "title": "Acme docs",
            "styling": {"theme": "clean", "primaryColor": {"light": "#346DDB", "dark": "#5d8ff0"},
                        "corners": "rounded", "font": "Inter", "sidebar": {"background": "default", "list": "default"}},
            "header": {"preset": "default", "logo": {"light": "https://x/l.png", "dark": "https://x/d.png"},
                       "links": [{"title": "Blog", "to": {"kind": "url", "url": "https://blog.example.com"}, "links": []},
                                 {"title": "More", "to": null, "links": [{"title": "A", "to": {"kind": "page", "page": "p1"}}]}]},
            "footer": {"groups": [{"title": "Company", "links": [{"title": "About", "to": {"kind": "url", "url": "/about"}}]}],
                       "copyright": "© Acme"},
            "announcement": {"enabled": true, "message": "New!", "style": "info"},
            "themes": {"default": "dark", "toggeable": false},
            "pagination": {"enabled": false},
            "unknown": {"anything": 1}
        }))
        .unwrap();
        assert_eq!(customization.title.as_deref(), Some("Acme docs"));
        assert_eq!(customization.styling.primary_color.unwrap().light, "#346DDB");
        assert_eq!(customization.header.links.len(), 2);
        assert!(customization.header.links[1].to.is_none());
        assert_eq!(customization.footer.groups[0].links[0].title, "About");
        assert!(customization.announcement.unwrap().enabled);
        assert_eq!(customization.themes.default, "dark");
        assert!(!customization.pagination.enabled);
        let empty: Customization = serde_json::from_value(json!({})).unwrap();
        assert!(empty.pagination.enabled && empty.themes.toggeable);
    }

    #[test]
    fn emojis_from_code_points_or_characters() {
        assert_eq!(emoji_text("1f44b").as_deref(), Some("👋"));
        assert_eq!(emoji_text("1f468-200d-1f4bb").as_deref(), Some("👨\u{200d}💻"));
        assert_eq!(emoji_text("🚀").as_deref(), Some("🚀"));
        assert_eq!(emoji_text("<b>"), None);
        assert_eq!(emoji_text(""), None);
    }

    #[test]
    fn absolute_urls() {
        let site = Site::new("Docs", "https://quire.example.com/s/handbook");
        assert_eq!(site.url, "https://quire.example.com/s/handbook/");
        assert_eq!(
            site.absolute("/s/handbook/guide"),
            "https://quire.example.com/s/handbook/guide"
        );
        assert_eq!(
            site.absolute("guide"),
            "https://quire.example.com/s/handbook/guide"
        );
        assert_eq!(
            site.absolute("https://other.example/x"),
            "https://other.example/x"
        );
    }
}
