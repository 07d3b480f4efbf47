//! Docs sites as answered: the site with the caller's `permissions`, its sections, section
//! groups, external links and site spaces (GitBook's shapes), and the published content site.

use quire_store::clock;
use quire_store::paging::List;
use quire_store::permissions::{SiteAction, Standing, site_allows};
use quire_store::sites::model::Item;
use quire_store::sites::structure::{ShownSiteSpace, SiteView, StructureItem, Written};
use quire_store::sites::{
    AgentsContext, ExternalLink, Group, Section, Site, SiteSpace, SiteType, SiteVisibility, Structure,
};
use serde::Serialize;

use crate::api::spaces::wire::{SpaceJson, with_role};
use crate::urls::Urls;

/// Where a site is read once published: its hostname's root, else `/s/{basename or id}` on the
/// public URL (both served by `reader`).
pub fn reader_url(urls: &Urls, site: &Site) -> String {
    match &site.hostname {
        Some(h) => format!("https://{h}"),
        None => urls.app(&format!("/s/{}", site.basename.as_deref().unwrap_or(&site.id))),
    }
}

/// Where a published site is read (None while it is not).
pub fn published_url(urls: &Urls, site: &Site) -> Option<String> {
    site.published.then(|| reader_url(urls, site))
}

/// Where members preview the site on the reader, published or not: by its id, which the token
/// of a preview URL (`GET .../publishing/preview`, kept in a cookie) is for.
pub fn preview_url(urls: &Urls, site: &Site) -> String {
    urls.app(&format!("/s/{}/", site.id))
}

/// The wire object of a site for a caller of `standing` in its organization.
pub fn site_json(urls: &Urls, site: &Site, standing: Standing) -> SiteJson {
    let allows = |action| site_allows(standing, action);
    let published = published_url(urls, site);
    SiteJson {
        object: "site",
        id: site.id.clone(),
        kind: site.kind,
        // quire has no plans to lapse or freeze a site: the type applied is the type set.
        applied_type: site.kind,
        title: site.title.clone(),
        hostname: site.hostname.clone(),
        basename: site.basename.clone(),
        proxy: site.proxy.as_ref().map(|origin| SiteProxy {
            origin: origin.clone(),
            target: reader_url(urls, site),
        }),
        visibility: site.visibility,
        // Members reach a site by their organization role (`site_allows`), never by a role of
        // the site's own.
        default_level: "inherit",
        published: site.published,
        site_spaces: site.site_spaces,
        created_at: site.created_at,
        adaptive_content: AdaptiveContent {
            enabled: site.adaptive_enabled,
        },
        agents_context: site.agents_context,
        features: Vec::new(),
        urls: SiteUrls {
            location: urls.api(&format!("/orgs/{}/sites/{}", site.org_id, site.id)),
            app: urls.app(&format!("/o/{}/sites/{}", site.org_id, site.id)),
            published,
            preview: preview_url(urls, site),
        },
        permissions: SitePermissions {
            view: allows(SiteAction::View),
            access: allows(SiteAction::View),
            edit: allows(SiteAction::Manage),
            create: allows(SiteAction::Manage),
            admin: allows(SiteAction::Admin),
            install_integration: allows(SiteAction::Admin),
            view_adaptive_schema: allows(SiteAction::View),
            edit_adaptive_schema: allows(SiteAction::Manage),
        },
    }
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SiteJson {
    pub object: &'static str,
    pub id: String,
    #[serde(rename = "type")]
    pub kind: SiteType,
    pub applied_type: SiteType,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basename: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proxy: Option<SiteProxy>,
    pub visibility: SiteVisibility,
    /// The default access of the organization's members: their organization role.
    #[schema(value_type = String, example = "inherit")]
    pub default_level: &'static str,
    pub published: bool,
    pub site_spaces: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    pub adaptive_content: AdaptiveContent,
    pub agents_context: AgentsContext,
    #[schema(value_type = Vec<Object>)]
    pub features: Vec<serde_json::Value>,
    pub urls: SiteUrls,
    pub permissions: SitePermissions,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct SiteProxy {
    pub origin: String,
    pub target: String,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct AdaptiveContent {
    pub enabled: bool,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct SiteUrls {
    pub location: String,
    pub app: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    /// Where members preview the site, published or not, once they hold a preview URL's token.
    pub preview: String,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SitePermissions {
    pub view: bool,
    pub access: bool,
    pub edit: bool,
    pub create: bool,
    pub admin: bool,
    pub install_integration: bool,
    pub view_adaptive_schema: bool,
    pub edit_adaptive_schema: bool,
}

/// `urls.published` of an item at `path` under the site's published URL.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct PublishedUrls {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SiteSpaceJson {
    pub object: &'static str,
    pub id: String,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    pub space: SpaceJson,
    /// The variant's own title, else its space's.
    pub title: String,
    pub default: bool,
    /// Not live: absent from the published site.
    pub draft: bool,
    /// Live, but left out of the site's navigation.
    pub hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    pub has_advanced_customization_feature: bool,
    pub urls: PublishedUrls,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SectionJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub default: bool,
    pub draft: bool,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_group: Option<String>,
    pub site_spaces: Vec<SiteSpaceJson>,
    pub urls: PublishedUrls,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct GroupJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_group: Option<String>,
    pub draft: bool,
    /// The sections directly in the group (deprecated by GitBook for `children`).
    pub sections: Vec<SectionJson>,
    /// The sections, groups and external links in the group, in order.
    #[schema(value_type = Vec<Object>)]
    pub children: Vec<ChildJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalLinkJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    /// The absolute http(s) URL the link opens.
    pub url: String,
    /// The section group it is in; absent at the root.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section_group: Option<String>,
    pub draft: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
}

/// An item of a level of the structure.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(untagged)]
pub enum ChildJson {
    Section(SectionJson),
    Group(GroupJson),
    Link(ExternalLinkJson),
}

/// `{type: "sections", structure}` or `{type: "siteSpaces", structure}`.
#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(tag = "type", content = "structure")]
pub enum StructureJson {
    #[serde(rename = "sections")]
    Sections(Vec<ChildJson>),
    #[serde(rename = "siteSpaces")]
    SiteSpaces(Vec<SiteSpaceJson>),
}

/// What to show of a structure: everything (the management API) or a visitor's part.
pub struct Render<'a> {
    pub urls: &'a Urls,
    pub site: &'a Site,
    pub tree: &'a Structure,
    /// The space of a site space as shown (None: the site space is left out).
    pub space: &'a dyn Fn(&SiteSpace) -> Option<SpaceJson>,
    pub shows_section: &'a dyn Fn(&Section) -> bool,
    pub shows_site_space: &'a dyn Fn(&SiteSpace) -> bool,
    pub shows_link: &'a dyn Fn(&ExternalLink) -> bool,
    /// Whether a group that shows no section is left out (a visitor's view).
    pub hide_empty_groups: bool,
}

impl Render<'_> {
    fn item_url(&self, parts: &[&str]) -> Option<String> {
        published_url(self.urls, self.site).map(|base| {
            let mut url = base;
            for p in parts {
                url.push('/');
                url.push_str(p);
            }
            url
        })
    }

    pub fn site_space(&self, ss: &SiteSpace) -> Option<SiteSpaceJson> {
        Some(self.site_space_showing(ss, (self.space)(ss)?))
    }

    fn site_space_showing(&self, ss: &SiteSpace, space: SpaceJson) -> SiteSpaceJson {
        let section_path = ss
            .section
            .as_deref()
            .and_then(|s| self.tree.section(s))
            .map(|s| s.path.as_str());
        let url = match section_path {
            Some(sp) => self.item_url(&[sp, &ss.path]),
            None => self.item_url(&[&ss.path]),
        };
        SiteSpaceJson {
            object: "site-space",
            id: ss.id.clone(),
            path: ss.path.clone(),
            section: ss.section.clone(),
            title: ss.title.clone().unwrap_or_else(|| space.title.clone()),
            space,
            default: self.tree.is_default_site_space(self.site, ss),
            draft: ss.draft,
            hidden: ss.hidden,
            condition: ss.condition.clone(),
            has_advanced_customization_feature: false,
            urls: PublishedUrls { published: url },
        }
    }

    pub fn section(&self, section: &Section) -> SectionJson {
        let site_spaces = self
            .tree
            .site_spaces_in(Some(&section.id))
            .into_iter()
            .filter(|ss| (self.shows_site_space)(ss))
            .filter_map(|ss| self.site_space(ss))
            .collect();
        SectionJson {
            object: "site-section",
            id: section.id.clone(),
            title: section.title.clone(),
            description: section.description.clone(),
            default: self.site.default_section.as_deref() == Some(section.id.as_str()),
            draft: section.draft,
            path: section.path.clone(),
            condition: section.condition.clone(),
            section_group: section.group.clone(),
            site_spaces,
            urls: PublishedUrls {
                published: self.item_url(&[&section.path]),
            },
            icon: section.icon.clone(),
        }
    }

    pub fn link(&self, link: &ExternalLink) -> ExternalLinkJson {
        ExternalLinkJson {
            object: "site-external-link",
            id: link.id.clone(),
            title: link.title.clone(),
            description: link.description.clone(),
            icon: link.icon.clone(),
            url: link.url.clone(),
            section_group: link.group.clone(),
            draft: link.draft,
            condition: link.condition.clone(),
        }
    }

    /// The items of a level (a group; the root when None), groups left out when they show
    /// nothing.
    pub fn level(&self, parent: Option<&str>, depth: usize) -> Vec<ChildJson> {
        self.tree
            .level(parent)
            .into_iter()
            .filter_map(|item| match item {
                Item::Section(s) => (self.shows_section)(s).then(|| ChildJson::Section(self.section(s))),
                Item::Group(g) => {
                    let group = self.group(g, depth + 1);
                    (!(self.hide_empty_groups && group.children.is_empty()))
                        .then_some(ChildJson::Group(group))
                }
                Item::Link(l) => (self.shows_link)(l).then(|| ChildJson::Link(self.link(l))),
            })
            .collect()
    }

    pub fn group(&self, group: &Group, depth: usize) -> GroupJson {
        // Groups nest by parent ids the store keeps acyclic; the bound is a second guard.
        let children = if depth > 64 {
            Vec::new()
        } else {
            self.level(Some(&group.id), depth)
        };
        let sections = children
            .iter()
            .filter_map(|c| match c {
                ChildJson::Section(s) => Some(s.clone()),
                ChildJson::Group(_) | ChildJson::Link(_) => None,
            })
            .collect();
        GroupJson {
            object: "site-section-group",
            id: group.id.clone(),
            title: group.title.clone(),
            section_group: group.parent.clone(),
            draft: group.draft,
            sections,
            children,
            icon: group.icon.clone(),
        }
    }

    /// The whole structure: sections and groups when the site has sections, else its site
    /// spaces.
    pub fn structure(&self) -> StructureJson {
        if self.tree.sections.is_empty() {
            StructureJson::SiteSpaces(
                self.tree
                    .site_spaces_in(None)
                    .into_iter()
                    .filter(|ss| (self.shows_site_space)(ss))
                    .filter_map(|ss| self.site_space(ss))
                    .collect(),
            )
        } else {
            StructureJson::Sections(self.level(None, 0))
        }
    }
}

/// A renderer of everything in a site as its caller sees it (the management API).
pub fn render_view<'a>(
    urls: &'a Urls,
    view: &'a SiteView,
    space: &'a dyn Fn(&SiteSpace) -> Option<SpaceJson>,
) -> Render<'a> {
    Render {
        urls,
        site: &view.site.site,
        tree: &view.tree,
        space,
        shows_section: &|_| true,
        shows_site_space: &|_| true,
        shows_link: &|_| true,
        hide_empty_groups: false,
    }
}

/// The space of a site space as the caller of a view sees it.
pub fn view_space<'a>(urls: &'a Urls, view: &'a SiteView) -> impl Fn(&SiteSpace) -> Option<SpaceJson> + 'a {
    move |ss: &SiteSpace| {
        view.spaces
            .get(&ss.space_id)
            .map(|s| with_role(urls, &s.space, s.role))
    }
}

/// An item of a site's structure as the management API answers it.
pub trait ItemJson: StructureItem {
    type Json: Serialize;
    /// Where the site's items of this kind are, under the site's URL.
    const COLLECTION: &'static str;
    fn json(render: &Render<'_>, item: &Self) -> Self::Json;
}

impl ItemJson for Section {
    type Json = SectionJson;
    const COLLECTION: &'static str = "sections";
    fn json(render: &Render<'_>, section: &Section) -> SectionJson {
        render.section(section)
    }
}

impl ItemJson for Group {
    type Json = GroupJson;
    const COLLECTION: &'static str = "section-groups";
    fn json(render: &Render<'_>, group: &Group) -> GroupJson {
        render.group(group, 0)
    }
}

impl ItemJson for ShownSiteSpace {
    type Json = SiteSpaceJson;
    const COLLECTION: &'static str = "site-spaces";
    fn json(render: &Render<'_>, shown: &ShownSiteSpace) -> SiteSpaceJson {
        let space = with_role(render.urls, &shown.space.space, shown.space.role);
        render.site_space_showing(&shown.site_space, space)
    }
}

impl ItemJson for ExternalLink {
    type Json = ExternalLinkJson;
    const COLLECTION: &'static str = "external-links";
    fn json(render: &Render<'_>, link: &ExternalLink) -> ExternalLinkJson {
        render.link(link)
    }
}

/// A written item, as answered.
pub fn written_json<T: ItemJson>(urls: &Urls, written: &Written<T>) -> T::Json {
    let space = view_space(urls, &written.view);
    T::json(&render_view(urls, &written.view, &space), &written.item)
}

/// A page of a view's items of a kind, as answered.
pub fn list_json<T: ItemJson>(urls: &Urls, view: &SiteView, list: List<T>) -> List<T::Json> {
    let space = view_space(urls, view);
    let render = render_view(urls, view, &space);
    list.map(|item| T::json(&render, &item))
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveSchemaJson {
    pub object: &'static str,
    #[schema(value_type = Object)]
    pub json_schema: serde_json::Value,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct TemplateConditionJson {
    pub description: String,
    pub condition: String,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct TemplateConditionsJson {
    pub items: Vec<TemplateConditionJson>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishingAuthJson {
    pub object: &'static str,
    pub backend: &'static str,
    pub private_key: String,
    /// Where the published site sends a visitor without a valid token, with the page they asked
    /// for as `location`; absent: quire's own sign-in page (401).
    #[serde(rename = "fallbackURL", skip_serializing_if = "Option::is_none")]
    pub fallback_url: Option<String>,
    /// Where the published site sends a visitor who signs out (`{site}/~logout`), after it
    /// forgets their token; absent: the site's home.
    #[serde(rename = "logoutURL", skip_serializing_if = "Option::is_none")]
    pub logout_url: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShareLinkJson {
    pub object: &'static str,
    pub id: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    pub name: String,
    pub active: bool,
    /// The key `shareKey` accepts (a quire addition: GitBook puts it in `urls.published` only).
    pub key: String,
    pub urls: PublishedUrls,
}

pub fn share_link_json(
    urls: &Urls,
    site: &Site,
    link: &quire_store::sites::share_links::ShareLink,
) -> ShareLinkJson {
    let base = reader_url(urls, site);
    ShareLinkJson {
        object: "share-link",
        id: link.id.clone(),
        created_at: link.created_at,
        name: link.name.clone(),
        active: link.active,
        key: link.key.clone(),
        urls: PublishedUrls {
            published: Some(format!("{base}?shareKey={}", link.key)),
        },
    }
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PublishedCustomizations {
    #[schema(value_type = Object)]
    pub site: serde_json::Value,
    #[schema(value_type = Object)]
    pub site_spaces: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct PublishedSiteJson {
    pub object: &'static str,
    pub site: SiteJson,
    pub structure: StructureJson,
    pub customizations: PublishedCustomizations,
    #[schema(value_type = Vec<Object>)]
    pub scripts: Vec<serde_json::Value>,
}
