//! Collections: nestable groups of spaces. Deleting one deletes the spaces inside it, so it is
//! `spaces::lifecycle::delete_collection`; the spaces of a collection are `spaces::in_collection`.

pub mod model;

pub use model::{COLUMNS, Collection, CollectionCols, CollectionFor, load_for, load_visible, not_found};

use crate::access::AccessContext;
use crate::db::{Args, Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::orgs::{self, OrgFor};
use crate::paging::{List, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, CollectionAction, DefaultLevel, OrgAction, collection};
use crate::siblings::{self, Kind, Position};
use crate::{clock, ids, params};

pub const TITLE_MAX: usize = 50;
pub const DESCRIPTION_MAX: usize = 100;

/// Creates a collection in `parent` (None: the top level of the organization), which the
/// caller may create content in; `title` is checked already. Answers it as the caller sees it.
pub fn create(
    c: &mut dyn Conn,
    caller: &str,
    org_id: &str,
    title: &str,
    parent: Option<&str>,
) -> StoreResult<CollectionFor> {
    let org = orgs::load_visible(c, org_id, caller)?;
    match parent {
        Some(parent) => {
            let parent = model::load_visible(c, parent, caller).map_err(|_| {
                StoreError::invalid(format!("`parent` {parent:?} is not a collection you can see"))
            })?;
            if parent.collection.org_id != org_id {
                return Err(StoreError::invalid("`parent` belongs to another organization"));
            }
            parent.require(CollectionAction::Create)?;
        }
        None => org.require(OrgAction::CreateContent)?,
    }
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO collections (id, organization_id, parent_id, title, position, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, '', ?5, ?5)",
        params![id.clone(), org_id, parent, title, now],
    )?;
    siblings::place(c, org_id, parent, (Kind::Collection, &id), None)?;
    model::load_visible(c, &id, caller)
}

/// The changes of an update, checked already (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub title: Option<String>,
    pub description: Patch<String>,
    pub default_level: Option<DefaultLevel>,
}

/// Updates a collection; answers it as `caller` sees it.
pub fn update(
    c: &mut dyn Conn,
    col: &Authorized<CollectionFor, collection::Admin>,
    caller: &str,
    changes: &Changes,
) -> StoreResult<CollectionFor> {
    let mut next = col.collection.clone();
    if let Some(t) = &changes.title {
        next.title = t.clone();
    }
    if let Some(d) = changes.description.clone().into_update() {
        next.description = d;
    }
    if let Some(level) = changes.default_level {
        next.default_level = level;
    }
    c.execute(
        "UPDATE collections SET title = ?2, description = ?3, default_level = ?4, updated_at = ?5 WHERE id = ?1",
        params![next.id.clone(), next.title, next.description, next.default_level.to_column(), clock::now_ms()],
    )?;
    model::load_visible(c, &next.id, caller)
}

/// The ids of a collection and every collection below it.
pub fn subtree(c: &mut dyn Conn, collection_id: &str) -> StoreResult<Vec<String>> {
    let rows = c.query(
        "WITH RECURSIVE tree (id, depth) AS (
             SELECT id, 0 FROM collections WHERE id = ?1
             UNION ALL
             SELECT k.id, tree.depth + 1 FROM collections k JOIN tree ON k.parent_id = tree.id WHERE tree.depth < 64
         )
         SELECT id FROM tree",
        params![collection_id],
    )?;
    rows.iter().map(|r| r.get(0).map_err(StoreError::from)).collect()
}

/// Checks that the caller may put content into `parent` (None: the top level) of `org_id`.
pub fn require_create_in(
    c: &mut dyn Conn,
    org_id: &str,
    parent: Option<&str>,
    user_id: &str,
) -> StoreResult<()> {
    match parent {
        Some(p) => {
            let col = model::load_visible(c, p, user_id).map_err(|_| {
                StoreError::invalid(format!("`parent` {p:?} is not a collection you can see"))
            })?;
            if col.collection.org_id != org_id {
                return Err(StoreError::invalid(format!(
                    "`parent` {p:?} belongs to another organization"
                )));
            }
            col.require(CollectionAction::Create)
        }
        None => orgs::load_visible(c, org_id, user_id)?.require(OrgAction::CreateContent),
    }
}

/// Moves a collection into `parent` (absent: where it is; null: the top level) and among its
/// siblings at `position`; never into itself or a collection inside it.
pub fn move_to(
    c: &mut dyn Conn,
    col: &Authorized<CollectionFor, collection::Admin>,
    caller: &str,
    parent: &Patch<String>,
    position: Option<&Position>,
) -> StoreResult<CollectionFor> {
    let id = &col.collection.id;
    let org_id = &col.collection.org_id;
    let parent = match parent.clone() {
        Patch::Absent => col.collection.parent.clone(),
        Patch::Null => None,
        Patch::Value(p) => Some(p),
    };
    if let Some(p) = &parent
        && subtree(c, id)?.contains(p)
    {
        return Err(StoreError::invalid(
            "a collection cannot move into itself or a collection inside it",
        ));
    }
    if parent != col.collection.parent {
        require_create_in(c, org_id, parent.as_deref(), caller)?;
        c.execute(
            "UPDATE collections SET parent_id = ?2, updated_at = ?3 WHERE id = ?1",
            params![id.clone(), parent.clone(), clock::now_ms()],
        )?;
    }
    siblings::place(c, org_id, parent.as_deref(), (Kind::Collection, id), position)?;
    model::load_visible(c, id, caller)
}

/// Moves a collection, the collections below it and their spaces to another organization (the
/// caller administers both), at its top level.
pub fn transfer(
    c: &mut dyn Conn,
    col: &Authorized<CollectionFor, collection::Admin>,
    caller: &str,
    organization: &str,
) -> StoreResult<CollectionFor> {
    let id = &col.collection.id;
    crate::transfer::require_admin_of_both(c, &col.collection.org_id, organization, caller)?;
    let collections = subtree(c, id)?;
    let mut args = Args::default();
    let list = args.list(collections.iter().cloned());
    let spaces: Vec<String> = c
        .query(
            &format!("SELECT id FROM spaces WHERE parent_id IN ({list})"),
            args.values(),
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    for cid in &collections {
        c.execute(
            "UPDATE collections SET organization_id = ?2, updated_at = ?3 WHERE id = ?1",
            params![cid.clone(), organization, clock::now_ms()],
        )?;
    }
    for sid in &spaces {
        c.execute(
            "UPDATE spaces SET organization_id = ?2, updated_at = ?3 WHERE id = ?1",
            params![sid.clone(), organization, clock::now_ms()],
        )?;
    }
    // The sites of its old organization stop showing its spaces.
    crate::sites::detach::remove_spaces(c, &spaces)?;
    let mut targets = collections.clone();
    targets.extend(spaces);
    crate::transfer::move_access(c, organization, &targets)?;
    // The collection lands at the top level of its new organization.
    c.execute(
        "UPDATE collections SET parent_id = NULL WHERE id = ?1",
        params![id.clone()],
    )?;
    siblings::place(c, organization, None, (Kind::Collection, id), None)?;
    model::load_visible(c, id, caller)
}

/// The collections of an organization the caller can see (with `nested`, those inside
/// collections too), in creation order.
pub fn list(
    c: &mut dyn Conn,
    org: &OrgFor,
    caller: &str,
    nested: bool,
    paging: &Paging,
) -> StoreResult<List<CollectionFor>> {
    let org_id = &org.org.id;
    let page = Page::new(paging, format!("collections:{org_id}:{nested}"))?;
    let ctx = AccessContext::for_org(c, org_id, caller, org.standing)?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE c.organization_id = {}", args.arg(org_id));
    if !nested {
        filter += " AND c.parent_id IS NULL";
    }
    filter += &ctx.visible_collections_sql(&mut args);
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM collections c{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!("SELECT {} FROM collections c{filter}", model::COLUMNS);
    if let Some((created, cid)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (c.created_at, c.id) > ({}, {})",
            args.arg(created),
            args.arg(cid)
        );
    }
    sql += &format!(" ORDER BY c.created_at, c.id LIMIT {}", args.arg(page.fetch()));
    let cols = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| {
            let col = Collection::from_row(r)?;
            let role = ctx.collection_role_with(&col.id, col.default_level, col.parent.as_deref());
            Ok(CollectionFor::listed(col, role, org.standing))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(cols, count as u64, |c| {
        (c.collection.created_at, c.collection.id.clone())
    }))
}
