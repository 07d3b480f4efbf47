//! Spaces: the space record as loaded for a caller (`model`, kept in memory by `cache`), its
//! lifecycle (delete, restore, purge; `lifecycle`), its settings, where it sits (moves and
//! transfers), and the lists of spaces a caller or a member can see.
//!
//! Creating and duplicating a space write its first content, which moves its main revision and
//! the indexes derived from it: they live in `new_spaces`, above `main_revision`, so that this
//! module stays below everything that reads spaces (content, search, links, change requests).

pub mod cache;
pub mod lifecycle;
pub mod model;

pub use model::{
    EditMode, Space, SpaceCols, SpaceFor, Visibility, active, columns, load_active, load_for, load_visible,
    not_found, query_with_roles, role_in, visible,
};

use crate::access::AccessContext;
use crate::collections::{self, CollectionFor};
use crate::db::{Args, Conn, bytewise};
use crate::error::{StoreError, StoreResult};
use crate::merge_rules::MergeRules;
use crate::orgs;
use crate::paging::{List, Order, Page, Paging};
use crate::patch::Patch;
use crate::permissions::{Authorized, DefaultLevel, Role, Standing, member, space};
use crate::siblings::{self, Kind, Position};
use crate::{clock, params, validate};

pub const TITLE_MAX: usize = 50;
pub const EMOJI_MAX: usize = 50;

/// GitBook's translation languages: the values `language` accepts.
pub const LANGUAGES: &[&str] = &[
    "en", "fr", "de", "es", "it", "pt", "pt-br", "ru", "ja", "zh", "zh-tw", "yue", "ko", "ar", "hi", "nl",
    "pl", "tr", "sv", "no", "da", "fi", "el", "cs", "hu", "ro", "th", "vi", "id", "ms", "he", "uk", "sk",
    "bg", "hr", "lt", "lv", "et", "sl",
];

/// A `language`: one of [`LANGUAGES`].
pub fn language(value: &str) -> StoreResult<String> {
    if LANGUAGES.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(StoreError::invalid(format!(
            "`language` must be one of {}, not {value:?}",
            LANGUAGES.join(", ")
        )))
    }
}

/// An `editMode`: `live` or `locked`.
pub fn edit_mode(value: &str) -> StoreResult<EditMode> {
    EditMode::parse(value)
        .ok_or_else(|| StoreError::invalid(format!("`editMode` must be live or locked, not {value:?}")))
}

/// An `emoji` of at most [`EMOJI_MAX`] characters.
pub fn emoji(value: &str) -> StoreResult<String> {
    validate::max_len("emoji", value, EMOJI_MAX)?;
    Ok(value.to_string())
}

/// A `visibility`; `in-collection` only for a space inside a collection.
pub fn visibility(value: &str, in_collection: bool) -> StoreResult<Visibility> {
    let visibility = Visibility::parse(value).ok_or_else(|| {
        StoreError::invalid(format!(
            "`visibility` must be one of {}, not {value:?}",
            Visibility::list()
        ))
    })?;
    if visibility == Visibility::InCollection && !in_collection {
        return Err(StoreError::invalid(
            "`visibility` in-collection is only for spaces inside a collection",
        ));
    }
    Ok(visibility)
}

/// The active spaces of an organization that `ctx` can view, in creation order.
pub fn list(
    c: &mut dyn Conn,
    org_id: &str,
    ctx: &AccessContext,
    paging: &Paging,
) -> StoreResult<List<SpaceFor>> {
    let page = Page::new(paging, format!("org-spaces:{org_id}"))?;
    visible_page(c, org_id, ctx, &page, Order::Asc)
}

/// The active spaces of an organization that `ctx` can view, in creation order (or its
/// reverse): the page of [`list`] and of [`of_member`], each scoping its own cursors.
fn visible_page(
    c: &mut dyn Conn,
    org_id: &str,
    ctx: &AccessContext,
    page: &Page,
    order: Order,
) -> StoreResult<List<SpaceFor>> {
    let mut args = Args::default();
    let mut filter = format!(
        " WHERE s.organization_id = {} AND s.deleted_at IS NULL",
        args.arg(org_id)
    );
    filter += &ctx.visible_spaces_sql(&mut args);
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM spaces s{filter}"), args.values())?
        .unwrap_or(0);
    // The first page runs the keyset statement too, from a bound before every row: PostgreSQL
    // planned a statement without the bound again on every run (a custom plan, about 0.1 ms of
    // its CPU), where the keyset statement runs a generic plan, so page 1 was the slowest.
    let (created, id) = page
        .after::<(i64, String)>()?
        .unwrap_or_else(|| (order.start_time(), String::new()));
    let (op, dir) = (order.after_op(), order.sql());
    let (created, id, limit) = (args.arg(created), args.arg(id), args.arg(page.fetch()));
    let sql = format!(
        "SELECT {} FROM spaces s{filter} AND (s.created_at, s.id) {op} ({created}, {id})
         ORDER BY s.created_at {dir}, s.id {dir} LIMIT {limit}",
        model::columns(),
    );
    let rows = model::query_with_roles(c, &sql, args.values(), ctx)?;
    Ok(page.finish(rows, count as u64, |s| (s.space.created_at, s.space.id.clone())))
}

/// The spaces a member can access, with the member's role on each; each space as the caller
/// sees it (their `permissions`).
pub fn of_member(
    c: &mut dyn Conn,
    membership: &Authorized<crate::members::Membership, member::View>,
    caller: &str,
    order: Order,
    paging: &Paging,
) -> StoreResult<List<(Role, SpaceFor)>> {
    let (org, user_id) = (&membership.org, membership.user_id.as_str());
    let org_id = &org.org.id;
    let page = Page::new(
        paging,
        format!("member-spaces:{org_id}:{user_id}:{}", order.name()),
    )?;
    let standing = orgs::load_for(c, org_id, user_id)?
        .map(|o| o.standing)
        .unwrap_or(Standing::Outsider);
    if standing == Standing::Outsider {
        return Err(StoreError::not_found(format!(
            "user {user_id:?} is not a member of this organization"
        )));
    }
    let member_ctx = AccessContext::for_org(c, org_id, user_id, standing)?;
    let caller_ctx = AccessContext::for_org(c, org_id, caller, org.standing)?;
    let list = visible_page(c, org_id, &member_ctx, &page, order)?;
    Ok(list.map(|s| {
        let caller_role = model::role_in(&caller_ctx, &s.space);
        (s.role.unwrap_or(Role::Read), s.with_role(caller_role))
    }))
}

/// The active spaces of a collection the caller can see, in their order.
pub fn in_collection(
    c: &mut dyn Conn,
    col: &CollectionFor,
    caller: &str,
    paging: &Paging,
) -> StoreResult<List<SpaceFor>> {
    let id = &col.collection.id;
    let page = Page::new(paging, format!("collection-spaces:{id}"))?;
    let ctx = AccessContext::for_org(c, &col.collection.org_id, caller, col.standing)?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE s.parent_id = {} AND s.deleted_at IS NULL", args.arg(id));
    filter += &ctx.visible_spaces_sql(&mut args);
    let count: i64 = c
        .query_scalar(&format!("SELECT count(*) FROM spaces s{filter}"), args.values())?
        .unwrap_or(0);
    let position = bytewise(c, "s.position");
    let mut sql = format!("SELECT {} FROM spaces s{filter}", model::columns());
    if let Some((key, sid)) = page.after::<(String, String)>()? {
        sql += &format!(
            " AND ({position} > {} OR (s.position = {} AND s.id > {}))",
            args.arg(key.clone()),
            args.arg(key),
            args.arg(sid)
        );
    }
    sql += &format!(" ORDER BY {position}, s.id LIMIT {}", args.arg(page.fetch()));
    let rows = model::query_with_roles(c, &sql, args.values(), &ctx)?;
    Ok(page.finish(rows, count as u64, |s| {
        (s.space.position.clone(), s.space.id.clone())
    }))
}

/// The changes of an update, parsed already (absent: unchanged), except `visibility`, which is
/// checked against the space (`in-collection` needs a parent).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub edit_mode: Option<EditMode>,
    pub title: Option<String>,
    pub default_level: Option<DefaultLevel>,
    pub language: Option<String>,
    pub merge_rules: Option<MergeRules>,
    pub emoji: Patch<String>,
    pub icon: Patch<String>,
    pub visibility: Option<String>,
}

/// Updates a space's settings; a deleted space cannot change. Answers it as `caller` sees it.
pub fn update(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Admin>,
    caller: &str,
    changes: &Changes,
) -> StoreResult<SpaceFor> {
    let mut s = space.space.clone();
    if s.deleted_at.is_some() {
        return Err(StoreError::invalid(
            "a deleted space cannot change: restore it first",
        ));
    }
    if let Some(m) = &changes.edit_mode {
        s.edit_mode = *m;
    }
    if let Some(t) = &changes.title {
        s.title = t.clone();
    }
    if let Some(d) = changes.default_level {
        s.default_level = d;
    }
    if let Some(l) = &changes.language {
        s.language = Some(l.clone());
    }
    if let Some(rules) = &changes.merge_rules {
        orgs::require_members(c, &s.org_id, rules)?;
        s.merge_rules = rules.clone();
    }
    if let Some(e) = changes.emoji.clone().into_update() {
        s.emoji = e;
    }
    if let Some(i) = changes.icon.clone().into_update() {
        s.icon_url = i;
    }
    if let Some(v) = &changes.visibility {
        s.visibility = visibility(v, s.parent.is_some())?;
    }
    c.execute(
        "UPDATE spaces SET edit_mode = ?2, title = ?3, default_level = ?4, language = ?5, merge_rules = ?6,
             emoji = ?7, icon_url = ?8, visibility = ?9, updated_at = ?10
         WHERE id = ?1",
        params![
            s.id.clone(),
            s.edit_mode,
            s.title.clone(),
            s.default_level.to_column(),
            s.language.clone(),
            s.merge_rules.to_json_text(),
            s.emoji.clone(),
            s.icon_url.clone(),
            s.visibility,
            clock::now_ms()
        ],
    )?;
    load_visible(c, &s.id, caller)
}

/// Deletes a space: restorable until `retention_ms` has passed (deleting a deleted space again
/// changes nothing).
pub fn delete(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Admin>,
    retention_ms: i64,
    actor: &str,
) -> StoreResult<()> {
    lifecycle::soft_delete(c, &space.space.id, clock::now_ms(), retention_ms, actor)
}

/// Brings a deleted space back (404 once its retention has passed); answers it as `caller` sees
/// it.
pub fn restore(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Admin>,
    caller: &str,
    retention_ms: i64,
) -> StoreResult<SpaceFor> {
    lifecycle::restore(c, &space.space, clock::now_ms(), retention_ms, caller)?;
    load_visible(c, &space.space.id, caller)
}

/// Moves a space into `parent` (absent: where it is; null: the top level) and among its
/// siblings at `position`.
pub fn move_to(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Admin>,
    caller: &str,
    parent: &Patch<String>,
    position: Option<&Position>,
) -> StoreResult<SpaceFor> {
    let current = &space.space;
    if current.deleted_at.is_some() {
        return Err(StoreError::invalid(
            "a deleted space cannot move: restore it first",
        ));
    }
    let (space_id, org_id) = (&current.id, &current.org_id);
    let parent = match parent.clone() {
        Patch::Absent => current.parent.clone(),
        Patch::Null => None,
        Patch::Value(p) => Some(p),
    };
    if parent != current.parent {
        collections::require_create_in(c, org_id, parent.as_deref(), caller)?;
        reparent(c, space_id, parent.as_deref())?;
    }
    siblings::place(c, org_id, parent.as_deref(), (Kind::Space, space_id), position)?;
    load_visible(c, space_id, caller)
}

/// Sets a space's parent. A space that leaves every collection cannot stay `in-collection`: it
/// becomes `private`, the narrowest audience.
fn reparent(c: &mut dyn Conn, space_id: &str, parent: Option<&str>) -> StoreResult<()> {
    c.execute(
        "UPDATE spaces SET parent_id = ?2, updated_at = ?3,
             visibility = CASE WHEN ?4 = 1 AND visibility = 'in-collection' THEN 'private' ELSE visibility END
         WHERE id = ?1",
        params![space_id, parent, clock::now_ms(), parent.is_none()],
    )?;
    Ok(())
}

/// Moves a space to another organization (the caller administers both), at its top level or
/// into `collection` there.
pub fn transfer(
    c: &mut dyn Conn,
    space: &Authorized<SpaceFor, space::Admin>,
    caller: &str,
    organization: &str,
    collection: Option<&str>,
) -> StoreResult<SpaceFor> {
    let current = &space.space;
    if current.deleted_at.is_some() {
        return Err(StoreError::invalid(
            "a deleted space cannot be transferred: restore it first",
        ));
    }
    let space_id = &current.id;
    crate::transfer::require_admin_of_both(c, &current.org_id, organization, caller)?;
    if let Some(col) = collection {
        let col = collections::load_visible(c, col, caller).map_err(|_| {
            StoreError::invalid(format!("`collection` {col:?} is not a collection you can see"))
        })?;
        if col.collection.org_id != organization {
            return Err(StoreError::invalid(
                "`collection` is not in the target organization",
            ));
        }
    }
    c.execute(
        "UPDATE spaces SET organization_id = ?2 WHERE id = ?1",
        params![space_id.clone(), organization],
    )?;
    reparent(c, space_id, collection)?;
    crate::transfer::move_access(c, organization, std::slice::from_ref(space_id))?;
    // The sites of its old organization stop showing it.
    crate::sites::detach::remove_spaces(c, std::slice::from_ref(space_id))?;
    siblings::place(c, organization, collection, (Kind::Space, space_id), None)?;
    load_visible(c, space_id, caller)
}
