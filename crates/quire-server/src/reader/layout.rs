//! Where each site space of a published site is served for one visitor, and the navigation
//! between sections and site spaces.
//!
//! With `R` the site's root (`/s/{basename or id}/`, or `/` on its hostname):
//! - a site without sections: its default site space at `R`, the others at `R{path}/`;
//! - a site with sections: the default section at `R`, the others at `R{section path}/`; in a
//!   section, its default site space at the section's URL, the others at `{section URL}{path}/`.
//!
//! Defaults the visitor does not see give way to the first shown one. The URLs the API answers
//! (`urls.published`: `R{section path}/{path}`) that are not these are aliases, redirected.

use quire_reader::{NavLink, Navigation, SectionItem};
use quire_store::sites::model::Item;
use quire_store::sites::published::{Published, Shown};
use quire_store::sites::{Section, SiteSpace};

/// A site space as served to this visitor.
#[derive(Clone, Debug)]
pub struct Placed {
    pub site_space_id: String,
    pub space_id: String,
    pub title: String,
    pub section: Option<String>,
    /// Its URL path, with a trailing slash.
    pub base: String,
    /// Served, but not offered in the navigation (GitBook's hidden site spaces).
    pub hidden: bool,
}

/// The site spaces a visitor sees, where they are served.
pub struct Layout {
    pub root: String,
    pub placed: Vec<Placed>,
    /// Other URLs of a site space (alias base, canonical base).
    aliases: Vec<(String, String)>,
    /// The shown sections' URLs, by section id.
    sections: Vec<(String, String)>,
    /// The ids of the external links the visitor sees.
    links: Vec<String>,
}

/// What a request path leads to.
pub enum Located<'a> {
    Space(&'a Placed),
    Redirect(String),
    Nothing,
}

fn segment(path: &str) -> String {
    path.trim_matches('/').to_string()
}

impl Layout {
    pub fn new(p: &Published, shown: &Shown, root: &str) -> Layout {
        let tree = &p.tree;
        let shows_ss = |ss: &SiteSpace| {
            tree.site_spaces
                .iter()
                .position(|s| s.id == ss.id)
                .and_then(|i| shown.site_spaces.get(i).copied())
                .unwrap_or(false)
        };
        let shows_section = |s: &Section| {
            tree.sections
                .iter()
                .position(|x| x.id == s.id)
                .and_then(|i| shown.sections.get(i).copied())
                .unwrap_or(false)
        };
        let mut placed = Vec::new();
        let mut aliases = Vec::new();
        let mut sections = Vec::new();
        if tree.sections.is_empty() {
            place(
                p,
                &shows_ss,
                None,
                p.site.default_site_space.as_deref(),
                root,
                &mut placed,
                &mut aliases,
            );
        } else {
            let shown_sections: Vec<&Section> = tree
                .sections_in_order()
                .into_iter()
                .filter(|s| shows_section(s))
                .collect();
            let default = shown_sections
                .iter()
                .find(|s| Some(s.id.as_str()) == p.site.default_section.as_deref())
                .or_else(|| shown_sections.first())
                .map(|s| s.id.clone());
            for section in shown_sections {
                let own = format!("{root}{}/", segment(&section.path));
                let base = if default.as_deref() == Some(section.id.as_str()) {
                    aliases.push((own.clone(), root.to_string()));
                    root.to_string()
                } else {
                    own.clone()
                };
                sections.push((section.id.clone(), base.clone()));
                place(
                    p,
                    &shows_ss,
                    Some(section),
                    section.default_site_space.as_deref(),
                    &base,
                    &mut placed,
                    &mut aliases,
                );
                // The API's URL of a site space: the section's own path, then the site space's.
                if base != own {
                    for ss in tree.site_spaces_in(Some(&section.id)) {
                        if let Some(placed) = placed.iter().find(|x| x.site_space_id == ss.id) {
                            aliases.push((format!("{own}{}/", segment(&ss.path)), placed.base.clone()));
                        }
                    }
                }
            }
        }
        // An alias never hides a real URL.
        aliases.retain(|(alias, _)| !placed.iter().any(|x| &x.base == alias));
        // Links sit beside sections: a site without them shows none.
        let links = if sections.is_empty() {
            Vec::new()
        } else {
            tree.links
                .iter()
                .zip(&shown.links)
                .filter(|(_, shown)| **shown)
                .map(|(l, _)| l.id.clone())
                .collect()
        };
        Layout {
            root: root.to_string(),
            placed,
            aliases,
            sections,
            links,
        }
    }

    /// The site space serving `path` (the longest base it starts with), or where an alias
    /// leads.
    pub fn locate(&self, path: &str) -> Located<'_> {
        let within = |base: &str| path.starts_with(base) || format!("{path}/") == base;
        let best = self
            .placed
            .iter()
            .filter(|x| within(&x.base))
            .max_by_key(|x| x.base.len());
        let alias = self
            .aliases
            .iter()
            .filter(|(a, _)| within(a))
            .max_by_key(|(a, _)| a.len());
        match (best, alias) {
            (Some(placed), Some((a, _))) if placed.base.len() >= a.len() => Located::Space(placed),
            (_, Some((alias, canonical))) => {
                let rest = path.get(alias.len()..).unwrap_or_default();
                Located::Redirect(format!("{canonical}{rest}"))
            }
            (Some(placed), None) => Located::Space(placed),
            (None, None) => Located::Nothing,
        }
    }

    /// The site space whose URL `path` is under, aliases aside.
    pub fn space_under(&self, path: &str) -> Option<&Placed> {
        self.placed
            .iter()
            .filter(|x| path.starts_with(&x.base))
            .max_by_key(|x| x.base.len())
    }

    /// The site space at the root (the site's home), if any.
    pub fn home(&self) -> Option<&Placed> {
        self.placed
            .iter()
            .find(|x| x.base == self.root)
            .or(self.placed.first())
    }

    /// The sections (top tabs; groups as menus) and the site spaces of `current`'s section.
    pub fn navigation(&self, p: &Published, current: Option<&Placed>) -> Navigation {
        let section_url = |id: &str| {
            self.sections
                .iter()
                .find(|(s, _)| s == id)
                .map(|(_, url)| url.clone())
        };
        let current_section = current.and_then(|c| c.section.clone());
        let mut items = Vec::new();
        self.level(p, None, &section_url, current_section.as_deref(), &mut items, 0);
        let variants = match current {
            Some(current) => {
                // A hidden site space is offered only while the visitor is in it.
                let mates: Vec<&Placed> = self
                    .placed
                    .iter()
                    .filter(|x| x.section == current.section)
                    .filter(|x| !x.hidden || x.site_space_id == current.site_space_id)
                    .collect();
                if mates.len() > 1 {
                    mates
                        .into_iter()
                        .map(|x| NavLink {
                            title: x.title.clone(),
                            url: x.base.clone(),
                            current: x.site_space_id == current.site_space_id,
                            external: false,
                        })
                        .collect()
                } else {
                    Vec::new()
                }
            }
            None => Vec::new(),
        };
        Navigation {
            sections: if self.sections.len() + self.links.len() > 1 {
                items
            } else {
                Vec::new()
            },
            variants,
        }
    }

    fn level(
        &self,
        p: &Published,
        parent: Option<&str>,
        section_url: &dyn Fn(&str) -> Option<String>,
        current: Option<&str>,
        out: &mut Vec<SectionItem>,
        depth: usize,
    ) {
        if depth > p.tree.groups.len() {
            return;
        }
        for item in p.tree.level(parent) {
            match item {
                Item::Section(s) => {
                    if let Some(url) = section_url(&s.id) {
                        out.push(SectionItem {
                            title: s.title.clone(),
                            url: Some(url),
                            current: current == Some(s.id.as_str()),
                            children: Vec::new(),
                            external: false,
                        });
                    }
                }
                Item::Link(l) => {
                    if self.links.contains(&l.id) {
                        out.push(SectionItem {
                            title: l.title.clone(),
                            url: Some(l.url.clone()),
                            current: false,
                            children: Vec::new(),
                            external: true,
                        });
                    }
                }
                Item::Group(g) => {
                    let mut inner = Vec::new();
                    self.level(p, Some(&g.id), section_url, current, &mut inner, depth + 1);
                    // A group is a menu of the sections below it, however deep.
                    let mut children = Vec::new();
                    flatten(&inner, &mut children);
                    if !children.is_empty() {
                        out.push(SectionItem {
                            title: g.title.clone(),
                            url: None,
                            current: children.iter().any(|c| c.current),
                            children,
                            external: false,
                        });
                    }
                }
            }
        }
    }
}

/// Places the shown site spaces of a section (the root when None) under `base`.
fn place(
    p: &Published,
    shows: &dyn Fn(&SiteSpace) -> bool,
    section: Option<&Section>,
    default: Option<&str>,
    base: &str,
    placed: &mut Vec<Placed>,
    aliases: &mut Vec<(String, String)>,
) {
    let tree = &p.tree;
    let members: Vec<&SiteSpace> = tree
        .site_spaces_in(section.map(|s| s.id.as_str()))
        .into_iter()
        .filter(|ss| shows(ss))
        .collect();
    let default = members
        .iter()
        .find(|ss| Some(ss.id.as_str()) == default)
        .or_else(|| members.first())
        .map(|ss| ss.id.clone());
    for ss in members {
        let is_default = default.as_deref() == Some(ss.id.as_str());
        let own = format!("{base}{}/", segment(&ss.path));
        let canonical = if is_default { base.to_string() } else { own.clone() };
        if is_default && own != canonical {
            aliases.push((own, canonical.clone()));
        }
        placed.push(Placed {
            site_space_id: ss.id.clone(),
            space_id: ss.space_id.clone(),
            title: match &ss.title {
                Some(own) => own.clone(),
                None => p
                    .spaces
                    .get(&ss.space_id)
                    .map(|s| s.title.clone())
                    .unwrap_or_default(),
            },
            section: ss.section.clone(),
            base: canonical,
            hidden: ss.hidden,
        });
    }
}

fn flatten(items: &[SectionItem], out: &mut Vec<NavLink>) {
    for item in items {
        if let Some(url) = &item.url {
            out.push(NavLink {
                title: item.title.clone(),
                url: url.clone(),
                current: item.current,
                external: item.external,
            });
        }
        flatten_links(&item.children, out);
    }
}

fn flatten_links(links: &[NavLink], out: &mut Vec<NavLink>) {
    out.extend(links.iter().cloned());
}
