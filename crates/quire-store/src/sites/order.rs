//! The order of a site's sections, section groups, external links and site spaces: fractional keys
//! (`quire_content::order`), so placing an item writes only its key unless its neighbours share
//! one, when the level is renumbered.

use quire_content::order;

use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::params;

/// What is ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Section,
    Group,
    Link,
    SiteSpace,
}

impl Kind {
    pub(crate) fn table(self) -> &'static str {
        match self {
            Kind::Section => "site_sections",
            Kind::Group => "site_section_groups",
            Kind::Link => "site_external_links",
            Kind::SiteSpace => "site_spaces",
        }
    }

    /// The column naming the level an item is in: its group (the root when NULL), or a site
    /// space's section.
    pub(crate) fn level_column(self) -> &'static str {
        match self {
            Kind::Section | Kind::Link => "group_id",
            Kind::Group => "parent_id",
            Kind::SiteSpace => "section_id",
        }
    }

    /// The wire name (`site-section`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Section => "site-section",
            Kind::Group => "site-section-group",
            Kind::Link => "site-external-link",
            Kind::SiteSpace => "site-space",
        }
    }

    /// The name in messages (`site section`, ...).
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Section => "site section",
            Kind::Group => "site section group",
            Kind::Link => "site external link",
            Kind::SiteSpace => "site space",
        }
    }
}

/// A sibling named by a move's `position`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    pub kind: Kind,
    pub id: String,
}

/// Where a moved item goes: before or after a sibling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    Before(Ref),
    After(Ref),
}

/// An item of a level with its key.
#[derive(Clone, Debug)]
pub struct Keyed {
    pub kind: Kind,
    pub id: String,
    pub key: String,
}

/// The index `position` names among `siblings` (the level without the moved item).
pub fn index_of(siblings: &[Keyed], item: (Kind, &str), position: &Position) -> StoreResult<usize> {
    let (target, after) = match position {
        Position::Before(r) => (r, false),
        Position::After(r) => (r, true),
    };
    if target.kind == item.0 && target.id == item.1 {
        return Err(StoreError::invalid("`position` cannot name the item being moved"));
    }
    let found = siblings
        .iter()
        .position(|s| s.kind == target.kind && s.id == target.id)
        .ok_or_else(|| {
            StoreError::invalid(format!(
                "`position` names {} {:?}, which is not a sibling of the {} being moved",
                target.kind.name(),
                target.id,
                item.0.name()
            ))
        })?;
    Ok(if after { found + 1 } else { found })
}

/// Writes the key that puts `item` at `index` among `siblings` (which exclude it).
pub fn place(c: &mut dyn Conn, siblings: &[Keyed], item: (Kind, &str), index: usize) -> StoreResult<()> {
    let index = index.min(siblings.len());
    let prev = index
        .checked_sub(1)
        .and_then(|i| siblings.get(i))
        .map(|s| s.key.as_str());
    let next = siblings.get(index).map(|s| s.key.as_str());
    if let (Some(p), Some(n)) = (prev, next)
        && p >= n
    {
        // No room between equal keys: renumber the level with the item in its place.
        let mut all: Vec<(Kind, &str)> = siblings.iter().map(|s| (s.kind, s.id.as_str())).collect();
        all.insert(index, item);
        let keys = order::keys_between(None, None, all.len());
        for ((kind, id), key) in all.into_iter().zip(keys) {
            set_key(c, kind, id, &key)?;
        }
        return Ok(());
    }
    set_key(c, item.0, item.1, &order::key_between(prev, next))
}

/// A key after every one of `siblings`, for an item added at the end.
pub fn key_at_end(siblings: &[Keyed]) -> String {
    order::key_between(siblings.last().map(|s| s.key.as_str()), None)
}

fn set_key(c: &mut dyn Conn, kind: Kind, id: &str, key: &str) -> StoreResult<()> {
    c.execute(
        &format!("UPDATE {} SET position = ?2 WHERE id = ?1", kind.table()),
        params![id, key],
    )?;
    Ok(())
}
