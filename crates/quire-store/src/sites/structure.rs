//! A site's structure: section groups (nesting), sections, external links and site spaces, each
//! level kept in an exact order (`order`), and the defaults: a site with site spaces always has a default site
//! space in each section (and at the root), and a site with sections a default section.

use std::collections::HashMap;

use quire_adaptive::Condition;

pub use super::defaults::normalize_defaults;
use super::model::{self, ExternalLink, Group, Section, Site, SiteFor, SiteSpace, Structure};
use super::order::{self, Keyed, Kind, Position};
use crate::access::AccessContext;
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
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
pub const SITE_SPACE_TITLE_MIN: usize = 2;
pub const SITE_SPACE_TITLE_MAX: usize = 128;
pub const LINK_TITLE_MIN: usize = 2;
pub const LINK_TITLE_MAX: usize = 128;
pub const LINK_DESCRIPTION_MAX: usize = 256;

/// A site with its structure and the spaces its site spaces show, as the caller sees it.
#[derive(Clone, Debug)]
pub struct SiteView {
    pub site: SiteFor,
    pub tree: Structure,
    /// By space id, each with the caller's role on it (None: they have none).
    pub spaces: HashMap<String, SpaceFor>,
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

/// A site space with the space it shows, as the caller sees it: all its JSON needs.
#[derive(Clone, Debug)]
pub struct ShownSiteSpace {
    pub site_space: SiteSpace,
    pub space: SpaceFor,
}

/// A kind of item of a site's structure, as writes and lists answer it.
pub trait StructureItem: Sized {
    const KIND: Kind;
    fn id(&self) -> &str;
    /// The item `id` of a view; None when the view lacks it.
    fn in_view(view: &SiteView, id: &str) -> Option<Self>;
    /// Every item of the kind in a view.
    fn all(view: &SiteView) -> Vec<Self>;
}

impl StructureItem for Section {
    const KIND: Kind = Kind::Section;
    fn id(&self) -> &str {
        &self.id
    }
    fn in_view(view: &SiteView, id: &str) -> Option<Section> {
        view.tree.section(id).cloned()
    }
    fn all(view: &SiteView) -> Vec<Section> {
        view.tree.sections.clone()
    }
}

impl StructureItem for Group {
    const KIND: Kind = Kind::Group;
    fn id(&self) -> &str {
        &self.id
    }
    fn in_view(view: &SiteView, id: &str) -> Option<Group> {
        view.tree.group(id).cloned()
    }
    fn all(view: &SiteView) -> Vec<Group> {
        view.tree.groups.clone()
    }
}

impl StructureItem for ExternalLink {
    const KIND: Kind = Kind::Link;
    fn id(&self) -> &str {
        &self.id
    }
    fn in_view(view: &SiteView, id: &str) -> Option<ExternalLink> {
        view.tree.link(id).cloned()
    }
    fn all(view: &SiteView) -> Vec<ExternalLink> {
        view.tree.links.clone()
    }
}

impl ShownSiteSpace {
    fn of(view: &SiteView, site_space: &SiteSpace) -> Option<ShownSiteSpace> {
        let space = view.spaces.get(&site_space.space_id)?;
        Some(ShownSiteSpace {
            site_space: site_space.clone(),
            space: space.clone(),
        })
    }
}

/// A site space whose space is gone is left out: there is nothing to show.
impl StructureItem for ShownSiteSpace {
    const KIND: Kind = Kind::SiteSpace;
    fn id(&self) -> &str {
        &self.site_space.id
    }
    fn in_view(view: &SiteView, id: &str) -> Option<ShownSiteSpace> {
        ShownSiteSpace::of(view, view.tree.site_space(id)?)
    }
    fn all(view: &SiteView) -> Vec<ShownSiteSpace> {
        view.tree
            .site_spaces
            .iter()
            .filter_map(|ss| ShownSiteSpace::of(view, ss))
            .collect()
    }
}

/// An item a write left in place, with the site reloaded around it (its section's site spaces,
/// the defaults, the spaces' roles): what the write answers, with no look-up left that could
/// miss.
#[derive(Clone, Debug)]
pub struct Written<T> {
    pub view: SiteView,
    pub item: T,
}

fn not_found(kind: Kind, id: &str) -> StoreError {
    StoreError::not_found(format!("{} {id:?} not found", kind.noun()))
}

/// Reloads a site after a write of the item `id` and answers the item in it.
fn written<T: StructureItem>(
    c: &mut dyn Conn,
    site: &SiteFor,
    caller: &str,
    id: &str,
) -> StoreResult<Written<T>> {
    let site = model::load_visible(c, &site.site.org_id, &site.site.id, caller)?;
    let view = view(c, site, caller)?;
    // Read back in the transaction that wrote it, so it is there: a site space could miss only
    // without its space, and a space that goes takes its site spaces (`detach`). Were it to miss,
    // the 404 undoes the write rather than answering one that was made.
    let item = T::in_view(&view, id).ok_or_else(|| not_found(T::KIND, id))?;
    Ok(Written { view, item })
}

/// The level an item sits in: the group of a section or group (None: the root), the section of a
/// site space; 404 when the site has no such item.
fn level_of(tree: &Structure, kind: Kind, id: &str) -> StoreResult<Option<String>> {
    let level = match kind {
        Kind::Section => tree.section(id).map(|s| s.group.clone()),
        Kind::Group => tree.group(id).map(|g| g.parent.clone()),
        Kind::Link => tree.link(id).map(|l| l.group.clone()),
        Kind::SiteSpace => tree.site_space(id).map(|s| s.section.clone()),
    };
    level.ok_or_else(|| not_found(kind, id))
}

/// The items of a level in order with their keys, but the item `without` of `kind`: for sections,
/// groups and links, those directly in the group `level` (the root when None); for site spaces,
/// those of the section `level`.
fn siblings(tree: &Structure, kind: Kind, level: Option<&str>, without: Option<&str>) -> Vec<Keyed> {
    let keyed = |kind, id: &str, key: &str| Keyed {
        kind,
        id: id.to_string(),
        key: key.to_string(),
    };
    let items: Vec<Keyed> = match kind {
        Kind::SiteSpace => tree
            .site_spaces_in(level)
            .into_iter()
            .map(|s| keyed(Kind::SiteSpace, &s.id, &s.position))
            .collect(),
        Kind::Section | Kind::Group | Kind::Link => tree
            .level(level)
            .into_iter()
            .map(|item| {
                let kind = match item {
                    model::Item::Section(_) => Kind::Section,
                    model::Item::Group(_) => Kind::Group,
                    model::Item::Link(_) => Kind::Link,
                };
                keyed(kind, item.id(), item.position())
            })
            .collect(),
    };
    items
        .into_iter()
        .filter(|k| without.is_none_or(|id| !(k.kind == kind && k.id == id)))
        .collect()
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
    let key = order::key_at_end(&siblings(&tree, Kind::SiteSpace, section, None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_spaces (id, site_id, section_id, space_id, path, position, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![id.clone(), site_id, section, space_id, path, key, clock::now_ms()],
    )?;
    Ok(id)
}

/// Deletes an item; nothing when it is absent. A section goes with its site spaces; what a group
/// held moves up to the group's level, in its place and order; a default that went is replaced.
pub fn delete(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    kind: Kind,
    id: &str,
) -> StoreResult<()> {
    let site_id = site.site.id.clone();
    match kind {
        Kind::Section => {
            c.execute(
                "DELETE FROM site_spaces WHERE site_id = ?1 AND section_id = ?2",
                params![site_id.clone(), id],
            )?;
        }
        Kind::Group => lift_group_items(c, &site_id, id)?,
        Kind::SiteSpace | Kind::Link => {}
    }
    c.execute(
        &format!("DELETE FROM {} WHERE site_id = ?1 AND id = ?2", kind.table()),
        params![site_id.clone(), id],
    )?;
    normalize_defaults(c, &site_id)
}

/// Where a move puts an item: before or after a sibling (None: at the end) and, for a section
/// group or an external link, into a group (`parent`; null: the root; absent: where it is).
#[derive(Clone, Debug, Default)]
pub struct Move {
    pub position: Option<Position>,
    pub parent: Patch<String>,
}

/// Moves an item among the items of its level (a group or link can change level too; a group
/// never into itself or a group inside it).
pub fn move_item<T: StructureItem>(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    to: &Move,
) -> StoreResult<Written<T>> {
    let tree = model::load_structure(c, &site.site.id)?;
    let level = level_of(&tree, T::KIND, id)?;
    let target = match &to.parent {
        Patch::Absent => level.clone(),
        _ if !matches!(T::KIND, Kind::Group | Kind::Link) => {
            return Err(StoreError::invalid(
                "only a section group or an external link moves into a `parent`",
            ));
        }
        Patch::Null => None,
        Patch::Value(p) => {
            group_of_site(&tree, "parent", p)?;
            if tree.group_within(p, id) {
                return Err(StoreError::invalid(
                    "a section group cannot move into itself or a group inside it",
                ));
            }
            Some(p.clone())
        }
    };
    let siblings = siblings(&tree, T::KIND, target.as_deref(), Some(id));
    let index = match &to.position {
        Some(p) => order::index_of(&siblings, (T::KIND, id), p)?,
        None => siblings.len(),
    };
    if target != level {
        let sql = format!(
            "UPDATE {} SET {} = ?2 WHERE id = ?1",
            T::KIND.table(),
            T::KIND.level_column()
        );
        c.execute(&sql, params![id, target.clone()])?;
    }
    order::place(c, &siblings, (T::KIND, id), index)?;
    written(c, site, caller, id)
}

// Sections.

/// A new section, checked already.
#[derive(Clone, Debug)]
pub struct NewSection {
    pub space_id: String,
    pub title: String,
    pub icon: Option<String>,
    /// The section group it is made in, at its end; the root when None.
    pub group: Option<String>,
    pub draft: bool,
}

/// Adds a section at the end of the root level with a site space for `space_id`. The first
/// section of a site that has site spaces at its root takes them in (the root then is empty).
pub fn create_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewSection,
) -> StoreResult<Written<Section>> {
    let s = &site.site;
    super::usable_space(c, &s.org_id, caller, &new.space_id, "spaceId")?;
    let tree = model::load_structure(c, &s.id)?;
    if let Some(g) = &new.group {
        group_of_site(&tree, "siteSectionGroupId", g)?;
    }
    let taken: Vec<&str> = tree.sections.iter().map(|x| x.path.as_str()).collect();
    let path = unique(&slug(&new.title, "section"), &taken);
    let key = order::key_at_end(&siblings(&tree, Kind::Section, None, None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_sections (id, site_id, title, path, icon, position, created_at, draft)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            id.clone(),
            s.id.clone(),
            new.title.clone(),
            path,
            new.icon.clone(),
            key,
            clock::now_ms(),
            new.draft
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
    if new.group.is_some() {
        put_section_in(c, &s.id, &id, new.group.as_deref())?;
    }
    normalize_defaults(c, &s.id)?;
    written(c, site, caller, &id)
}

/// 400 unless `id` is a section group of the site.
fn group_of_site(tree: &Structure, field: &str, id: &str) -> StoreResult<()> {
    match tree.group(id) {
        Some(_) => Ok(()),
        None => Err(StoreError::invalid(format!(
            "`{field}` {id:?} is not a section group of this site"
        ))),
    }
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
    /// Into a section group, at its end (null: to the end of the root).
    pub group: Patch<String>,
    pub draft: Option<bool>,
}

pub fn update_section(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &SectionChanges,
) -> StoreResult<Written<Section>> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree
        .section(id)
        .cloned()
        .ok_or_else(|| not_found(Kind::Section, id))?;
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
    next.draft = changes.draft.unwrap_or(next.draft);
    c.execute(
        "UPDATE site_sections SET title = ?2, path = ?3, default_site_space_id = ?4, condition = ?5,
             icon = ?6, description = ?7, draft = ?8
         WHERE id = ?1",
        params![
            id,
            next.title,
            next.path,
            next.default_site_space,
            next.condition,
            next.icon,
            next.description,
            next.draft
        ],
    )?;
    let target = match &changes.group {
        Patch::Absent => next.group.clone(),
        Patch::Null => None,
        Patch::Value(g) => {
            group_of_site(&tree, "siteSectionGroupId", g)?;
            Some(g.clone())
        }
    };
    if target != next.group {
        put_section_in(c, &site.site.id, id, target.as_deref())?;
    }
    written(c, site, caller, id)
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
    pub draft: bool,
}

pub fn create_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewGroup,
) -> StoreResult<Written<Group>> {
    let site_id = site.site.id.clone();
    let tree = model::load_structure(c, &site_id)?;
    if let Some(p) = &new.parent {
        group_of_site(&tree, "parent", p)?;
    }
    for (i, s) in new.sections.iter().enumerate() {
        if tree.section(s).is_none() {
            return Err(StoreError::invalid(format!(
                "`sections[{i}]` {s:?} is not a section of this site"
            )));
        }
    }
    let key = order::key_at_end(&siblings(&tree, Kind::Group, new.parent.as_deref(), None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_section_groups (id, site_id, parent_id, title, icon, position, created_at, draft)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            id.clone(),
            site_id.clone(),
            new.parent.clone(),
            new.title.clone(),
            new.icon.clone(),
            key,
            clock::now_ms(),
            new.draft
        ],
    )?;
    for s in &new.sections {
        put_section_in(c, &site_id, s, Some(&id))?;
    }
    written(c, site, caller, &id)
}

/// Moves a section to the end of `group` (the root when None).
fn put_section_in(c: &mut dyn Conn, site_id: &str, section: &str, group: Option<&str>) -> StoreResult<()> {
    let tree = model::load_structure(c, site_id)?;
    let key = order::key_at_end(&siblings(&tree, Kind::Section, group, Some(section)));
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
    /// Into another group, at its end (null: to the end of the root).
    pub parent: Patch<String>,
    pub draft: Option<bool>,
}

pub fn update_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &GroupChanges,
) -> StoreResult<Written<Group>> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree
        .group(id)
        .cloned()
        .ok_or_else(|| not_found(Kind::Group, id))?;
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(i) = changes.icon.clone().into_update() {
        next.icon = i;
    }
    next.draft = changes.draft.unwrap_or(next.draft);
    c.execute(
        "UPDATE site_section_groups SET title = ?2, icon = ?3, draft = ?4 WHERE id = ?1",
        params![id, next.title, next.icon, next.draft],
    )?;
    into_parent(c, site, caller, id, next.parent.as_deref(), &changes.parent)
}

/// After an update: the item moved to the end of the group a `parent` patch names (null: the
/// root) when that is not where it is, else answered where it is.
fn into_parent<T: StructureItem>(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    current: Option<&str>,
    parent: &Patch<String>,
) -> StoreResult<Written<T>> {
    let moves = match parent {
        Patch::Absent => false,
        Patch::Null => current.is_some(),
        Patch::Value(p) => current != Some(p.as_str()),
    };
    if !moves {
        return written(c, site, caller, id);
    }
    let to = Move {
        position: None,
        parent: parent.clone(),
    };
    move_item(c, site, caller, id, &to)
}

/// Before a group is deleted: what it holds takes its place in its parent's level, in its order
/// (the level is renumbered with them in it). Nothing when the group is absent.
fn lift_group_items(c: &mut dyn Conn, site_id: &str, id: &str) -> StoreResult<()> {
    let tree = model::load_structure(c, site_id)?;
    let Some(group) = tree.group(id) else {
        return Ok(());
    };
    let parent = group.parent.clone();
    let children = siblings(&tree, Kind::Group, Some(id), None);
    let mut all = siblings(&tree, Kind::Group, parent.as_deref(), Some(id));
    let index = tree
        .level(parent.as_deref())
        .iter()
        .position(|item| item.id() == id)
        .unwrap_or(all.len());
    all.splice(index..index, children);
    let keys = quire_content::order::keys_between(None, None, all.len());
    for (item, key) in all.iter().zip(keys) {
        let sql = format!(
            "UPDATE {} SET {} = ?2, position = ?3 WHERE id = ?1",
            item.kind.table(),
            item.kind.level_column()
        );
        c.execute(&sql, params![item.id.clone(), parent.clone(), key])?;
    }
    Ok(())
}

/// Puts a section at the end of a group; nothing when it is in the group already.
pub fn add_to_group(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    group: &str,
    section: &str,
) -> StoreResult<Written<Group>> {
    let tree = model::load_structure(c, &site.site.id)?;
    if tree.group(group).is_none() {
        return Err(not_found(Kind::Group, group));
    }
    let found = tree.section(section).ok_or_else(|| {
        StoreError::invalid(format!("`sectionId` {section:?} is not a section of this site"))
    })?;
    if found.group.as_deref() != Some(group) {
        put_section_in(c, &site.site.id, section, Some(group))?;
    }
    written(c, site, caller, group)
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
    let siblings = siblings(&tree, Kind::Section, parent.as_deref(), Some(section));
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

// External links.

/// A new external link, checked already.
#[derive(Clone, Debug, Default)]
pub struct NewLink {
    pub title: String,
    pub description: Option<String>,
    pub icon: Option<String>,
    pub url: String,
    /// The section group it is made in, at its end; the root when None.
    pub group: Option<String>,
    pub draft: bool,
    pub condition: Patch<String>,
}

/// Adds an external link at the end of its level. A link sits beside sections, so a site must
/// have sections (GitBook's "simple structure" refuses it).
pub fn create_link(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewLink,
) -> StoreResult<Written<ExternalLink>> {
    let site_id = site.site.id.clone();
    let tree = model::load_structure(c, &site_id)?;
    if tree.sections.is_empty() {
        return Err(StoreError::invalid(
            "this site has no sections: an external link sits beside sections (add a section first)",
        ));
    }
    if let Some(g) = &new.group {
        group_of_site(&tree, "parent", g)?;
    }
    let condition = condition(&site.site, &new.condition)?.flatten();
    let key = order::key_at_end(&siblings(&tree, Kind::Link, new.group.as_deref(), None));
    let id = ids::new_id();
    c.execute(
        "INSERT INTO site_external_links
             (id, site_id, group_id, title, description, icon, url, condition, draft, position, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            id.clone(),
            site_id,
            new.group.clone(),
            new.title.clone(),
            new.description.clone(),
            new.icon.clone(),
            new.url.clone(),
            condition,
            new.draft,
            key,
            clock::now_ms()
        ],
    )?;
    written(c, site, caller, &id)
}

/// The changes of an external link update (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct LinkChanges {
    pub title: Option<String>,
    pub description: Patch<String>,
    pub icon: Patch<String>,
    pub url: Option<String>,
    /// Into a section group, at its end (null: to the end of the root).
    pub group: Patch<String>,
    pub draft: Option<bool>,
    pub condition: Patch<String>,
}

pub fn update_link(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &LinkChanges,
) -> StoreResult<Written<ExternalLink>> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree.link(id).cloned().ok_or_else(|| not_found(Kind::Link, id))?;
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(u) = &changes.url {
        next.url = u.clone();
    }
    if let Some(d) = changes.description.clone().into_update() {
        next.description = d;
    }
    if let Some(i) = changes.icon.clone().into_update() {
        next.icon = i;
    }
    if let Some(cond) = condition(&site.site, &changes.condition)? {
        next.condition = cond;
    }
    next.draft = changes.draft.unwrap_or(next.draft);
    c.execute(
        "UPDATE site_external_links SET title = ?2, description = ?3, icon = ?4, url = ?5,
             condition = ?6, draft = ?7
         WHERE id = ?1",
        params![
            id,
            next.title,
            next.description,
            next.icon,
            next.url,
            next.condition,
            next.draft
        ],
    )?;
    into_parent(c, site, caller, id, next.group.as_deref(), &changes.group)
}

// Site spaces.

/// A new site space, checked already.
#[derive(Clone, Debug, Default)]
pub struct NewSiteSpace {
    pub space_id: String,
    /// Absent: the default section, or the root of a site without sections.
    pub section: Option<String>,
    /// The variant's own name (None: the space's title).
    pub title: Option<String>,
    pub draft: bool,
}

/// Adds a site space at the end of its section.
pub fn create_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    new: &NewSiteSpace,
) -> StoreResult<Written<ShownSiteSpace>> {
    let s = &site.site;
    super::usable_space(c, &s.org_id, caller, &new.space_id, "spaceId")?;
    let tree = model::load_structure(c, &s.id)?;
    let section = match new.section.as_deref() {
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
    let id = insert_site_space(c, &s.id, section.as_deref(), &new.space_id)?;
    if new.title.is_some() || new.draft {
        c.execute(
            "UPDATE site_spaces SET title = ?2, draft = ?3 WHERE id = ?1",
            params![id.clone(), new.title.clone(), new.draft],
        )?;
    }
    normalize_defaults(c, &s.id)?;
    written(c, site, caller, &id)
}

/// The changes of a site space update (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct SiteSpaceChanges {
    pub path: Option<String>,
    pub condition: Patch<String>,
    pub space_id: Option<String>,
    pub hidden: Option<bool>,
    pub draft: Option<bool>,
}

pub fn update_site_space(
    c: &mut dyn Conn,
    site: &Authorized<SiteFor, site::Manage>,
    caller: &str,
    id: &str,
    changes: &SiteSpaceChanges,
) -> StoreResult<Written<ShownSiteSpace>> {
    let tree = model::load_structure(c, &site.site.id)?;
    let mut next = tree
        .site_space(id)
        .cloned()
        .ok_or_else(|| not_found(Kind::SiteSpace, id))?;
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
    next.hidden = changes.hidden.unwrap_or(next.hidden);
    next.draft = changes.draft.unwrap_or(next.draft);
    c.execute(
        "UPDATE site_spaces SET path = ?2, condition = ?3, space_id = ?4, hidden = ?5, draft = ?6
         WHERE id = ?1",
        params![
            id,
            next.path,
            next.condition,
            next.space_id,
            next.hidden,
            next.draft
        ],
    )?;
    written(c, site, caller, id)
}

/// One page of `items` in reading order, keyset-paged on each item's [`sort_key`].
fn page_of<T: StructureItem>(view: &SiteView, items: Vec<T>, page: &Page) -> StoreResult<List<T>> {
    let mut keyed: Vec<(Vec<String>, T)> = items
        .into_iter()
        .map(|item| (sort_key(&view.tree, T::KIND, item.id()), item))
        .collect();
    keyed.sort_by(|a, b| a.0.cmp(&b.0));
    let count = u64::try_from(keyed.len()).unwrap_or(u64::MAX);
    let after = page.after::<Vec<String>>()?;
    let fetch = usize::try_from(page.fetch()).unwrap_or(usize::MAX);
    let rows: Vec<(Vec<String>, T)> = keyed
        .into_iter()
        .filter(|(key, _)| after.as_ref().is_none_or(|a| key > a))
        .take(fetch)
        .collect();
    Ok(page
        .finish(rows, count, |(key, _)| key.clone())
        .map(|(_, item)| item))
}

/// The sections of a site in reading order, one page of them.
pub fn sections(view: &SiteView, paging: &Paging) -> StoreResult<List<Section>> {
    let page = Page::new(paging, format!("site-sections:{}", view.site.site.id))?;
    page_of(view, Section::all(view), &page)
}

/// The section groups of a site in reading order, one page of them.
pub fn groups(view: &SiteView, paging: &Paging) -> StoreResult<List<Group>> {
    let page = Page::new(paging, format!("site-section-groups:{}", view.site.site.id))?;
    page_of(view, Group::all(view), &page)
}

/// The site spaces of a site in reading order (only the default ones of the root and of each
/// section, or only the others, when `default` says), one page of them.
pub fn site_spaces(
    view: &SiteView,
    default: Option<bool>,
    paging: &Paging,
) -> StoreResult<List<ShownSiteSpace>> {
    let page = Page::new(paging, format!("site-spaces:{}:{default:?}", view.site.site.id))?;
    let items = ShownSiteSpace::all(view)
        .into_iter()
        .filter(|shown| {
            default.is_none_or(|d| {
                d == view
                    .tree
                    .is_default_site_space(&view.site.site, &shown.site_space)
            })
        })
        .collect();
    page_of(view, items, &page)
}

/// An item's sort key in reading order: its path of (position, id) pairs from the root, compared
/// element by element (bytewise), which is depth-first order. Site spaces at the root come first
/// (`"0"`), then those of sections (`"1"`, then the section's key).
pub fn sort_key(tree: &Structure, kind: Kind, id: &str) -> Vec<String> {
    let mut pairs: Vec<[&str; 2]> = Vec::new();
    let mut root_mark = None;
    let mut next = Some((kind, id));
    while let Some((kind, id)) = next {
        let found = match kind {
            Kind::Group => tree.group(id).map(|g| (&g.position, g.parent.as_deref())),
            Kind::Section => tree.section(id).map(|s| (&s.position, s.group.as_deref())),
            Kind::Link => tree.link(id).map(|l| (&l.position, l.group.as_deref())),
            Kind::SiteSpace => tree.site_space(id).map(|ss| {
                let section = ss.section.as_deref().filter(|s| tree.section(s).is_some());
                root_mark = Some(if section.is_some() { "1" } else { "0" });
                (&ss.position, section)
            }),
        };
        let Some((position, up)) = found else {
            break;
        };
        pairs.push([position, id]);
        // Groups nest by parent ids the store keeps acyclic; the bound is a second guard.
        if pairs.len() > tree.groups.len() + 2 {
            break;
        }
        let up_kind = if kind == Kind::SiteSpace {
            Kind::Section
        } else {
            Kind::Group
        };
        next = up.map(|up| (up_kind, up));
    }
    root_mark
        .into_iter()
        .chain(pairs.into_iter().rev().flatten())
        .map(String::from)
        .collect()
}
