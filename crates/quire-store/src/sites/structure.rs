//! A site's structure: section groups (nesting), sections and site spaces, each kind kept in an
//! exact order (`order`), and the defaults: a site with site spaces always has a default site
//! space in each section (and at the root), and a site with sections a default section.

use std::collections::HashMap;

use quire_adaptive::Condition;

pub use super::defaults::normalize_defaults;
use super::model::{self, Site, SiteFor, Structure};
use super::order::{self, Keyed, Kind, Position};
use crate::access::AccessContext;
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::patch::Patch;
use crate::permissions::{Authorized, site};
use crate::spaces::{self, SpaceFor};
use crate::{clock, ids, params};

pub const SECTION_TITLE_MIN: usize = 2;
pub const SECTION_TITLE_MAX: usize = 128;
pub const SECTION_DESCRIPTION_MAX: usize = 256;
pub const GROUP_TITLE_MIN: usize = 1;
pub const GROUP_TITLE_MAX: usize = 100;
pub const PATH_MAX: usize = 100;
pub const ICON_MAX: usize = 50;

/// A site with its structure and the spaces its site spaces show, as the caller sees them.
#[derive(Clone, Debug)]
pub struct SiteView {
    pub site: SiteFor,
    pub tree: Structure,
    /// By space id; a space the caller cannot see is absent.
    pub spaces: HashMap<String, SpaceFor>,
}

impl SiteView {
    /// Whether `site_space` is the default of its section (or of the root).
    pub fn is_default_site_space(&self, site_space: &model::SiteSpace) -> bool {
        let default = match &site_space.section {
            None => self.site.site.default_site_space.as_deref(),
            Some(section) => self
                .tree
                .section(section)
                .and_then(|s| s.default_site_space.as_deref()),
        };
        default == Some(site_space.id.as_str())
    }

    pub fn is_default_section(&self, section: &model::Section) -> bool {
        self.site.site.default_section.as_deref() == Some(section.id.as_str())
    }
}

/// Loads the structure of a site and its spaces with the caller's roles: four statements.
pub fn view(c: &mut dyn Conn, site: SiteFor, caller: &str) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut spaces = HashMap::new();
    let ids: Vec<String> = tree.site_spaces.iter().map(|s| s.space_id.clone()).collect();
    if !ids.is_empty() {
        let ctx = AccessContext::for_org(c, &site.site.org_id, caller, site.standing)?;
        let mut args = Args::default();
        let list = args.list(ids);
        let sql = format!(
            "SELECT {} FROM spaces s WHERE s.id IN ({list})",
            spaces::model::columns()
        );
        for space in spaces::model::query_with_roles(c, &sql, args.values(), &ctx)? {
            spaces.insert(space.space.id.clone(), space);
        }
    }
    Ok(SiteView { site, tree, spaces })
}

/// Reloads a site after a change and views it.
fn reload(c: &mut dyn Conn, site: &SiteFor, caller: &str) -> StoreResult<SiteView> {
    let site = model::load_visible(c, &site.site.org_id, &site.site.id, caller)?;
    view(c, site, caller)
}

/// A URL path segment: letters, digits, `-` and `_`, 1 to 100 characters.
pub fn check_path(field: &str, value: &str) -> StoreResult<()> {
    let len = value.chars().count();
    if len == 0 || len > PATH_MAX {
        return Err(StoreError::invalid(format!(
            "`{field}` must be 1 to {PATH_MAX} characters long, not {len}"
        )));
    }
    if !value
        .chars()
        .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
    {
        return Err(StoreError::invalid(format!(
            "`{field}` may hold only letters, digits, `-` and `_`, not {value:?}"
        )));
    }
    Ok(())
}

/// A path made from a title: lowercase ASCII letters and digits joined by `-`.
fn slug(title: &str, fallback: &str) -> String {
    let ascii = deunicode::deunicode(title).to_ascii_lowercase();
    let mut out = String::new();
    for word in ascii
        .split(|ch: char| !ch.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(word);
        if out.len() >= 60 {
            break;
        }
    }
    if out.is_empty() { fallback.to_string() } else { out }
}

/// `base`, or `base-2`, `base-3`, ... the first not in `taken`.
fn unique(base: &str, taken: &[&str]) -> String {
    if !taken.contains(&base) {
        return base.to_string();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|candidate| !taken.contains(&candidate.as_str()))
        .unwrap_or_else(ids::new_id)
}

/// A condition as set by a PATCH: absent keeps it (None), null or blank removes it
/// (`Some(None)`), text is parsed and checked against the site's schema (400 with the position).
pub fn condition(site: &Site, patch: &Patch<String>) -> StoreResult<Option<Option<String>>> {
    match patch {
        Patch::Absent => Ok(None),
        Patch::Null => Ok(Some(None)),
        Patch::Value(text) => {
            let schema = site.schema()?;
            let parsed = Condition::parse_checked(text, &schema)
                .map_err(|e| StoreError::invalid(format!("`condition`: {e}")))?;
            Ok(Some((!parsed.is_empty()).then(|| parsed.source().to_string())))
        }
    }
}

fn keyed_level(tree: &Structure, parent: Option<&str>, without: Option<(Kind, &str)>) -> Vec<Keyed> {
    tree.level(parent)
        .into_iter()
        .map(|item| match item {
            model::Item::Section(s) => Keyed {
                kind: Kind::Section,
                id: s.id.clone(),
                key: s.position.clone(),
            },
            model::Item::Group(g) => Keyed {
                kind: Kind::Group,
                id: g.id.clone(),
                key: g.position.clone(),
            },
        })
        .filter(|k| without.is_none_or(|(kind, id)| !(k.kind == kind && k.id == id)))
        .collect()
}

fn keyed_site_spaces(tree: &Structure, section: Option<&str>, without: Option<&str>) -> Vec<Keyed> {
    tree.site_spaces_in(section)
        .into_iter()
        .filter(|s| without != Some(s.id.as_str()))
        .map(|s| Keyed {
            kind: Kind::SiteSpace,
            id: s.id.clone(),
            key: s.position.clone(),
        })
        .collect()
}

/// Adds a site space for `space_id` at the end of `section` (the root when None), with a path
/// made from the space's title. Answers its id.
pub(crate) fn insert_site_space(
    c: &mut dyn Conn,
    site_id: &str,
    section: Option<&str>,
    space_id: &str,
) -> StoreResult<String> {
    let tree = model::load_structure(c, site_id)?;
    let title: String = c
        .query_scalar("SELECT title FROM spaces WHERE id = ?1", params![space_id])?
        .unwrap_or_default();
    let taken: Vec<&str> = tree
        .site_spaces_in(section)
        .into_iter()
        .map(|s| s.path.as_str())
        .collect();
    let path = unique(&slug(&title, "space"), &taken);
    let key = order::key_at_end(&keyed_site_spaces(&tree, section, None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_spaces (id, site_id, section_id, space_id, path, position, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id.clone(), site_id, section, space_id, path, key, clock::now_ms()],
    )?;
    Ok(id)
}

// Sections.

/// A new section, checked already.
#[derive(Clone, Debug)]
pub struct NewSection {
    pub space_id: String,
    pub title: String,
    pub icon: Option<String>,
}

/// Adds a section at the end of the root level with a site space for `space_id`. The first
/// section of a site that has site spaces at its root takes them in (the root then is empty).
pub fn create_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewSection,
) -> StoreResult<(SiteView, String)> {
    let s = &site.site;
    super::usable_space(c, &s.org_id, caller, &new.space_id, "spaceId")?;
    let tree = model::load_structure(c, &s.id)?;
    let taken: Vec<&str> = tree.sections.iter().map(|x| x.path.as_str()).collect();
    let path = unique(&slug(&new.title, "section"), &taken);
    let key = order::key_at_end(&keyed_level(&tree, None, None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_sections (id, site_id, title, path, icon, position, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id.clone(),
            s.id.clone(),
            new.title.clone(),
            path,
            new.icon.clone(),
            key,
            clock::now_ms()
        ],
    )?;
    if tree.sections.is_empty() && !tree.site_spaces.is_empty() {
        c.execute(
            "UPDATE site_spaces SET section_id = ?2 WHERE site_id = ?1 AND section_id IS NULL",
            params![s.id.clone(), id.clone()],
        )?;
        c.execute(
            "UPDATE site_sections SET default_site_space_id = ?2 WHERE id = ?1",
            params![id.clone(), s.default_site_space.clone()],
        )?;
    }
    insert_site_space(c, &s.id, Some(&id), &new.space_id)?;
    normalize_defaults(c, &s.id)?;
    Ok((reload(c, site, caller)?, id))
}

fn section_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("site section {id:?} not found"))
}

fn group_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("site section group {id:?} not found"))
}

fn site_space_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("site space {id:?} not found"))
}

/// The changes of a section update, checked already (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct SectionChanges {
    pub title: Option<String>,
    pub path: Option<String>,
    pub default_site_space: Option<String>,
    pub condition: Patch<String>,
    pub icon: Patch<String>,
    pub description: Patch<String>,
}

pub fn update_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &SectionChanges,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree.section(id).cloned().ok_or_else(|| section_not_found(id))?;
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(p) = &changes.path {
        if tree.sections.iter().any(|s| s.id != id && &s.path == p) {
            return Err(StoreError::invalid(format!(
                "`path` {p:?} is already the path of another section of this site"
            )));
        }
        next.path = p.clone();
    }
    if let Some(ss) = &changes.default_site_space {
        if !tree.site_spaces_in(Some(id)).iter().any(|s| &s.id == ss) {
            return Err(StoreError::invalid(format!(
                "`defaultSiteSpace` {ss:?} is not a site space of this section"
            )));
        }
        next.default_site_space = Some(ss.clone());
    }
    if let Some(cond) = condition(&site.site, &changes.condition)? {
        next.condition = cond;
    }
    if let Some(icon) = changes.icon.clone().into_update() {
        next.icon = icon;
    }
    if let Some(d) = changes.description.clone().into_update() {
        next.description = d;
    }
    c.execute(
        "UPDATE site_sections SET title = ?2, path = ?3, default_site_space_id = ?4, condition = ?5,
             icon = ?6, description = ?7
         WHERE id = ?1",
        params![
            id,
            next.title,
            next.path,
            next.default_site_space,
            next.condition,
            next.icon,
            next.description
        ],
    )?;
    reload(c, site, caller)
}

/// Deletes a section with its site spaces (nothing when it is absent); another section becomes
/// the default when it was.
pub fn delete_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    id: &str,
) -> StoreResult<()> {
    let site_id = site.site.id.clone();
    c.execute(
        "DELETE FROM site_spaces WHERE site_id = ?1 AND section_id = ?2",
        params![site_id.clone(), id],
    )?;
    c.execute(
        "DELETE FROM site_sections WHERE site_id = ?1 AND id = ?2",
        params![site_id.clone(), id],
    )?;
    normalize_defaults(c, &site_id)
}

/// Moves a section among the sections and groups of its level.
pub fn move_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    position: &Position,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let section = tree.section(id).ok_or_else(|| section_not_found(id))?;
    let siblings = keyed_level(&tree, section.group.as_deref(), Some((Kind::Section, id)));
    let index = order::index_of(&siblings, (Kind::Section, id), position)?;
    order::place(c, &siblings, (Kind::Section, id), index)?;
    reload(c, site, caller)
}

// Section groups.

/// A new section group, checked already.
#[derive(Clone, Debug)]
pub struct NewGroup {
    pub title: String,
    pub icon: Option<String>,
    /// Sections moved into the group, in this order.
    pub sections: Vec<String>,
    /// The group it nests in; the root when None.
    pub parent: Option<String>,
}

pub fn create_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewGroup,
) -> StoreResult<(SiteView, String)> {
    let site_id = site.site.id.clone();
    let tree = model::load_structure(c, &site_id)?;
    if let Some(p) = &new.parent
        && tree.group(p).is_none()
    {
        return Err(StoreError::invalid(format!(
            "`parent` {p:?} is not a section group of this site"
        )));
    }
    for (i, s) in new.sections.iter().enumerate() {
        if tree.section(s).is_none() {
            return Err(StoreError::invalid(format!(
                "`sections[{i}]` {s:?} is not a section of this site"
            )));
        }
    }
    let key = order::key_at_end(&keyed_level(&tree, new.parent.as_deref(), None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_section_groups (id, site_id, parent_id, title, icon, position, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            id.clone(),
            site_id.clone(),
            new.parent.clone(),
            new.title.clone(),
            new.icon.clone(),
            key,
            clock::now_ms()
        ],
    )?;
    for s in &new.sections {
        put_section_in(c, &site_id, s, Some(&id))?;
    }
    Ok((reload(c, site, caller)?, id))
}

/// Moves a section to the end of `group` (the root when None).
fn put_section_in(c: &mut dyn Conn, site_id: &str, section: &str, group: Option<&str>) -> StoreResult<()> {
    let tree = model::load_structure(c, site_id)?;
    let key = order::key_at_end(&keyed_level(&tree, group, Some((Kind::Section, section))));
    c.execute(
        "UPDATE site_sections SET group_id = ?2, position = ?3 WHERE id = ?1",
        params![section, group, key],
    )?;
    Ok(())
}

/// The changes of a group update (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct GroupChanges {
    pub title: Option<String>,
    pub icon: Patch<String>,
}

pub fn update_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &GroupChanges,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree.group(id).cloned().ok_or_else(|| group_not_found(id))?;
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(i) = changes.icon.clone().into_update() {
        next.icon = i;
    }
    c.execute(
        "UPDATE site_section_groups SET title = ?2, icon = ?3 WHERE id = ?1",
        params![id, next.title, next.icon],
    )?;
    reload(c, site, caller)
}

/// Deletes a group; what it held moves up to its parent level, in place of the group and in its
/// order. Nothing when it is absent.
pub fn delete_group(c: &mut dyn Conn, site: &Authorized<SiteFor, site::Manage>, id: &str) -> StoreResult<()> {
    let site_id = site.site.id.clone();
    let tree = model::load_structure(c, &site_id)?;
    let Some(group) = tree.group(id) else {
        return Ok(());
    };
    let parent = group.parent.clone();
    let children = keyed_level(&tree, Some(id), None);
    let siblings = keyed_level(&tree, parent.as_deref(), Some((Kind::Group, id)));
    let index = tree
        .level(parent.as_deref())
        .iter()
        .position(|item| item.id() == id)
        .unwrap_or(siblings.len());
    // The children take the group's place: renumber the level with them in it.
    let mut all: Vec<(Kind, String)> = siblings.iter().map(|s| (s.kind, s.id.clone())).collect();
    for (offset, child) in children.iter().enumerate() {
        all.insert(index + offset, (child.kind, child.id.clone()));
    }
    let keys = quire_content::order::keys_between(None, None, all.len());
    for ((kind, item), key) in all.iter().zip(keys) {
        let sql = match kind {
            Kind::Section => "UPDATE site_sections SET group_id = ?2, position = ?3 WHERE id = ?1",
            _ => "UPDATE site_section_groups SET parent_id = ?2, position = ?3 WHERE id = ?1",
        };
        c.execute(sql, params![item.clone(), parent.clone(), key])?;
    }
    c.execute(
        "DELETE FROM site_section_groups WHERE site_id = ?1 AND id = ?2",
        params![site_id, id],
    )?;
    Ok(())
}

/// Puts a section at the end of a group; nothing when it is in the group already.
pub fn add_to_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    group: &str,
    section: &str,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    if tree.group(group).is_none() {
        return Err(group_not_found(group));
    }
    let found = tree.section(section).ok_or_else(|| {
        StoreError::invalid(format!("`sectionId` {section:?} is not a section of this site"))
    })?;
    if found.group.as_deref() != Some(group) {
        put_section_in(c, &site.site.id, section, Some(group))?;
    }
    reload(c, site, caller)
}

/// Takes a section out of a group, to the group's own level right after the group; nothing when
/// the section is not in the group (or either is absent).
pub fn remove_from_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    group: &str,
    section: &str,
) -> StoreResult<()> {
    let tree = model::load_structure(c, &site.site.id)?;
    let (Some(g), Some(s)) = (tree.group(group), tree.section(section)) else {
        return Ok(());
    };
    if s.group.as_deref() != Some(group) {
        return Ok(());
    }
    let parent = g.parent.clone();
    let siblings = keyed_level(&tree, parent.as_deref(), Some((Kind::Section, section)));
    let index = siblings
        .iter()
        .position(|k| k.kind == Kind::Group && k.id == group)
        .map_or(siblings.len(), |i| i + 1);
    c.execute(
        "UPDATE site_sections SET group_id = ?2 WHERE id = ?1",
        params![section, parent],
    )?;
    order::place(c, &siblings, (Kind::Section, section), index)
}

/// Moves a group: into `parent` (absent: where it is; null: the root; never into itself or a
/// group inside it) and among that level's items at `position` (absent: at the end).
pub fn move_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    parent: &Patch<String>,
    position: Option<&Position>,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let group = tree.group(id).ok_or_else(|| group_not_found(id))?;
    let target = match parent {
        Patch::Absent => group.parent.clone(),
        Patch::Null => None,
        Patch::Value(p) => {
            if tree.group(p).is_none() {
                return Err(StoreError::invalid(format!(
                    "`parent` {p:?} is not a section group of this site"
                )));
            }
            if tree.group_within(p, id) {
                return Err(StoreError::invalid(
                    "a section group cannot move into itself or a group inside it",
                ));
            }
            Some(p.clone())
        }
    };
    let siblings = keyed_level(&tree, target.as_deref(), Some((Kind::Group, id)));
    let index = match position {
        Some(p) => order::index_of(&siblings, (Kind::Group, id), p)?,
        None => siblings.len(),
    };
    if target != group.parent {
        c.execute(
            "UPDATE site_section_groups SET parent_id = ?2 WHERE id = ?1",
            params![id, target.clone()],
        )?;
    }
    order::place(c, &siblings, (Kind::Group, id), index)?;
    reload(c, site, caller)
}

// Site spaces.

/// Adds a site space for `space_id` to `section` (absent: the default section, or the root of
/// a site without sections).
pub fn create_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    space_id: &str,
    section: Option<&str>,
) -> StoreResult<(SiteView, String)> {
    let s = &site.site;
    super::usable_space(c, &s.org_id, caller, space_id, "spaceId")?;
    let tree = model::load_structure(c, &s.id)?;
    let section = match section {
        Some(id) => {
            if tree.section(id).is_none() {
                return Err(StoreError::invalid(format!(
                    "`sectionId` {id:?} is not a section of this site"
                )));
            }
            Some(id.to_string())
        }
        None => s.default_section.clone().filter(|d| tree.section(d).is_some()),
    };
    let id = insert_site_space(c, &s.id, section.as_deref(), space_id)?;
    normalize_defaults(c, &s.id)?;
    Ok((reload(c, site, caller)?, id))
}

/// The changes of a site space update (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct SiteSpaceChanges {
    pub path: Option<String>,
    pub condition: Patch<String>,
    pub space_id: Option<String>,
}

pub fn update_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &SiteSpaceChanges,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree
        .site_space(id)
        .cloned()
        .ok_or_else(|| site_space_not_found(id))?;
    if let Some(p) = &changes.path {
        if tree
            .site_spaces_in(next.section.as_deref())
            .iter()
            .any(|s| s.id != id && &s.path == p)
        {
            return Err(StoreError::invalid(format!(
                "`path` {p:?} is already the path of another site space of this section"
            )));
        }
        next.path = p.clone();
    }
    if let Some(cond) = condition(&site.site, &changes.condition)? {
        next.condition = cond;
    }
    if let Some(space) = &changes.space_id {
        super::usable_space(c, &site.site.org_id, caller, space, "spaceId")?;
        next.space_id = space.clone();
    }
    c.execute(
        "UPDATE site_spaces SET path = ?2, condition = ?3, space_id = ?4 WHERE id = ?1",
        params![id, next.path, next.condition, next.space_id],
    )?;
    reload(c, site, caller)
}

/// Deletes a site space (nothing when absent); the next one in order becomes the default of its
/// section when it was.
pub fn delete_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    id: &str,
) -> StoreResult<()> {
    let site_id = site.site.id.clone();
    c.execute(
        "DELETE FROM site_spaces WHERE site_id = ?1 AND id = ?2",
        params![site_id.clone(), id],
    )?;
    normalize_defaults(c, &site_id)
}

/// Moves a site space among the site spaces of its section.
pub fn move_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    position: &Position,
) -> StoreResult<SiteView> {
    let tree = model::load_structure(c, &site.site.id)?;
    let ss = tree.site_space(id).ok_or_else(|| site_space_not_found(id))?;
    let siblings = keyed_site_spaces(&tree, ss.section.as_deref(), Some(id));
    let index = order::index_of(&siblings, (Kind::SiteSpace, id), position)?;
    order::place(c, &siblings, (Kind::SiteSpace, id), index)?;
    reload(c, site, caller)
}

/// A 404 for an item the caller named in the path but the site lacks.
pub fn require_section(view: &SiteView, id: &str) -> StoreResult<()> {
    view.tree
        .section(id)
        .map(|_| ())
        .ok_or_else(|| section_not_found(id))
}

pub fn require_site_space(view: &SiteView, id: &str) -> StoreResult<()> {
    view.tree
        .site_space(id)
        .map(|_| ())
        .ok_or_else(|| site_space_not_found(id))
}

pub fn require_group(view: &SiteView, id: &str) -> StoreResult<()> {
    view.tree.group(id).map(|_| ()).ok_or_else(|| group_not_found(id))
}

/// Sort keys of the lists, in reading order: each item's path of (position, id) pairs from the
/// root, compared element by element (bytewise), which is depth-first order.
pub fn group_sort_key(tree: &Structure, group: &str) -> Vec<String> {
    let mut chain = Vec::new();
    let mut current = tree.group(group);
    let mut steps = 0;
    while let Some(g) = current {
        chain.push(vec![g.position.clone(), g.id.clone()]);
        steps += 1;
        if steps > tree.groups.len() {
            break;
        }
        current = g.parent.as_deref().and_then(|p| tree.group(p));
    }
    chain.reverse();
    chain.into_iter().flatten().collect()
}

pub fn section_sort_key(tree: &Structure, section: &model::Section) -> Vec<String> {
    let mut key = section
        .group
        .as_deref()
        .map(|g| group_sort_key(tree, g))
        .unwrap_or_default();
    key.push(section.position.clone());
    key.push(section.id.clone());
    key
}

pub fn site_space_sort_key(tree: &Structure, ss: &model::SiteSpace) -> Vec<String> {
    let mut key = match ss.section.as_deref().and_then(|s| tree.section(s)) {
        None => vec!["0".to_string()],
        Some(section) => {
            let mut k = vec!["1".to_string()];
            k.extend(section_sort_key(tree, section));
            k
        }
    };
    key.push(ss.position.clone());
    key.push(ss.id.clone());
    key
}

/// The groups in reading order (depth first).
pub fn groups_in_order(tree: &Structure) -> Vec<&model::Group> {
    let mut groups: Vec<(Vec<String>, &model::Group)> = tree
        .groups
        .iter()
        .map(|g| (group_sort_key(tree, &g.id), g))
        .collect();
    groups.sort_by(|a, b| a.0.cmp(&b.0));
    groups.into_iter().map(|(_, g)| g).collect()
}
