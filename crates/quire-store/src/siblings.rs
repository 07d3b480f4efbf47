//! The order of spaces and collections that share a parent: one sequence, kept with fractional
//! keys (`quire_content::order`) so that placing an item writes only that item's key.

use quire_content::order;
use serde::Deserialize;

use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::params;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
#[schema(as = SiblingKind)]
pub enum Kind {
    Space,
    Collection,
}

impl Kind {
    fn table(self) -> &'static str {
        match self {
            Kind::Space => "spaces",
            Kind::Collection => "collections",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Space => "space",
            Kind::Collection => "collection",
        }
    }
}

/// `{type: "space", space: id}` or `{type: "collection", collection: id}`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Pointer {
    #[serde(rename = "type")]
    pub kind: Kind,
    pub space: Option<String>,
    pub collection: Option<String>,
}

impl Pointer {
    fn id(&self) -> StoreResult<&str> {
        let id = match self.kind {
            Kind::Space => self.space.as_deref(),
            Kind::Collection => self.collection.as_deref(),
        };
        id.ok_or_else(|| {
            StoreError::invalid(format!(
                "`position` names a {} without its `{}` id",
                self.kind.name(),
                self.kind.name()
            ))
        })
    }
}

/// The `position` of a move: before or after a sibling.
#[derive(Clone, Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    pub before: Option<Pointer>,
    pub after: Option<Pointer>,
}

#[derive(Clone, Debug)]
struct Sibling {
    kind: Kind,
    id: String,
    key: String,
}

crate::columns! {
    /// A space or collection among its siblings, after the literal kind of its table.
    struct SiblingCols of "spaces, collections" {
        id: "id",
        key: "position",
    }
}

/// The kind each branch of the UNION in [`siblings`] selects first, as a literal.
const KIND: crate::db::Col = crate::columns::extra("spaces, collections", "kind", 0);
const SIBLING: SiblingCols = SiblingCols::at(1);

/// The siblings under `parent` (top level when None) in order, active spaces only.
fn siblings(c: &mut dyn Conn, org_id: &str, parent: Option<&str>) -> StoreResult<Vec<Sibling>> {
    let mut args = Args::default();
    let org = args.arg(org_id);
    let under = match parent {
        Some(p) => format!("= {}", args.arg(p)),
        None => "IS NULL".to_string(),
    };
    let sql = format!(
        "SELECT 'space', {columns} FROM spaces
         WHERE organization_id = {org} AND parent_id {under} AND deleted_at IS NULL
         UNION ALL
         SELECT 'collection', {columns} FROM collections WHERE organization_id = {org} AND parent_id {under}",
        columns = SiblingCols::SQL
    );
    let mut items = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            let kind: String = r.col(KIND)?;
            Ok(Sibling {
                kind: if kind == Kind::Space.name() {
                    Kind::Space
                } else {
                    Kind::Collection
                },
                id: r.col(SIBLING.id)?,
                key: r.col(SIBLING.key)?,
            })
        })
        .collect::<Result<Vec<_>, crate::db::DbError>>()?;
    // Ordered here rather than in SQL: keys compare by bytes, which PostgreSQL collations do not.
    items.sort_by(|a, b| a.key.cmp(&b.key).then_with(|| a.id.cmp(&b.id)));
    Ok(items)
}

/// The key for an item placed under `parent`: at the end, or before/after a sibling. Writes the
/// item's key; when two siblings share a key there is no room between them, and the siblings are
/// renumbered first. `item` is excluded from its own siblings.
pub fn place(
    c: &mut dyn Conn,
    org_id: &str,
    parent: Option<&str>,
    item: (Kind, &str),
    position: Option<&Position>,
) -> StoreResult<()> {
    let mut list: Vec<Sibling> = siblings(c, org_id, parent)?
        .into_iter()
        .filter(|s| !(s.kind == item.0 && s.id == item.1))
        .collect();
    let index = match position {
        None
        | Some(Position {
            before: None,
            after: None,
        }) => list.len(),
        Some(Position {
            before: Some(_),
            after: Some(_),
        }) => {
            return Err(StoreError::invalid(
                "`position` takes `before` or `after`, not both",
            ));
        }
        Some(Position {
            before: Some(p),
            after: None,
        }) => locate(&list, p, item)?,
        Some(Position {
            before: None,
            after: Some(p),
        }) => locate(&list, p, item)? + 1,
    };
    let prev = index
        .checked_sub(1)
        .and_then(|i| list.get(i))
        .map(|s| s.key.clone());
    let next = list.get(index).map(|s| s.key.clone());
    if let (Some(p), Some(n)) = (&prev, &next)
        && p >= n
    {
        renumber(c, &mut list)?;
        return place(c, org_id, parent, item, position);
    }
    let key = order::key_between(prev.as_deref(), next.as_deref());
    set_key(c, item.0, item.1, &key)
}

fn locate(list: &[Sibling], pointer: &Pointer, item: (Kind, &str)) -> StoreResult<usize> {
    let id = pointer.id()?;
    if pointer.kind == item.0 && id == item.1 {
        return Err(StoreError::invalid("`position` cannot name the item being moved"));
    }
    list.iter()
        .position(|s| s.kind == pointer.kind && s.id == id)
        .ok_or_else(|| {
            StoreError::invalid(format!(
                "`position` names {} {id:?}, which is not a sibling under the target parent",
                pointer.kind.name()
            ))
        })
}

fn renumber(c: &mut dyn Conn, list: &mut [Sibling]) -> StoreResult<()> {
    let keys = order::keys_between(None, None, list.len());
    for (sibling, key) in list.iter_mut().zip(keys) {
        set_key(c, sibling.kind, &sibling.id, &key)?;
        sibling.key = key;
    }
    Ok(())
}

fn set_key(c: &mut dyn Conn, kind: Kind, id: &str, key: &str) -> StoreResult<()> {
    c.execute(
        &format!("UPDATE {} SET position = ?2 WHERE id = ?1", kind.table()),
        params![id, key],
    )?;
    Ok(())
}

/// The ids of a sequence of siblings in order (for tests and listings).
pub fn ordered_ids(c: &mut dyn Conn, org_id: &str, parent: Option<&str>) -> StoreResult<Vec<(Kind, String)>> {
    Ok(siblings(c, org_id, parent)?
        .into_iter()
        .map(|s| (s.kind, s.id))
        .collect())
}
