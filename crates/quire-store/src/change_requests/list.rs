//! Listing change requests of a space or of an organization, with GitBook's filters.

use super::model::{COLUMNS, ChangeRequest, FROM, Status};
use crate::access::AccessContext;
use crate::db::{Args, Conn};
use crate::error::StoreResult;
use crate::orgs::OrgFor;
use crate::paging::{List, Order, Page, Paging};
use crate::spaces::SpaceFor;

/// The filters of both listings, parsed already.
#[derive(Clone, Debug)]
pub struct Filters {
    /// The states wanted (known ones, sorted, deduplicated).
    pub statuses: Vec<String>,
    pub creator: Option<String>,
    pub contributor: Option<String>,
    pub reviewer: Option<String>,
    pub cluster: Option<String>,
    pub space: Option<String>,
    /// `cr.updated_at` or `cr.created_at`.
    pub order_by: &'static str,
    pub order: Order,
}

impl Filters {
    /// The states a status filter accepts, for its message.
    pub fn statuses() -> String {
        Status::list()
    }

    /// Whether `text` is a status.
    pub fn is_status(text: &str) -> bool {
        Status::parse(text).is_some()
    }

    /// The scope of the list's cursors: its kind and parent (`list`), and the filters.
    fn scope(&self, list: &str) -> String {
        format!(
            "{list}:{:?}:{:?}:{:?}:{:?}:{:?}:{:?}:{}:{}",
            self.statuses,
            self.creator,
            self.contributor,
            self.reviewer,
            self.cluster,
            self.space,
            self.order_by,
            self.order.name()
        )
    }

    /// The WHERE conditions (after a first condition), with their arguments.
    fn sql(&self, args: &mut Args) -> String {
        let mut sql = format!(" AND cr.status IN ({})", args.list(self.statuses.iter().cloned()));
        if let Some(u) = &self.creator {
            sql += &format!(" AND cr.created_by = {}", args.arg(u));
        }
        if let Some(u) = &self.contributor {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM change_request_contributors k WHERE k.change_request_id = cr.id AND k.user_id = {})",
                args.arg(u)
            );
        }
        if let Some(u) = &self.reviewer {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM change_request_reviewers r WHERE r.change_request_id = cr.id AND r.user_id = {})",
                args.arg(u)
            );
        }
        if let Some(c) = &self.cluster {
            sql += &format!(" AND cr.conversations_issues_cluster = {}", args.arg(c));
        }
        if let Some(s) = &self.space {
            sql += &format!(" AND cr.space_id = {}", args.arg(s));
        }
        sql
    }
}

/// Runs a filtered, paged query of change requests; `base` is the first WHERE condition.
fn query(
    c: &mut dyn Conn,
    base: String,
    mut args: Args,
    filters: &Filters,
    page: &Page,
) -> StoreResult<List<ChangeRequest>> {
    let filter = format!("{base}{}", filters.sql(&mut args));
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM {FROM} WHERE {filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let key = filters.order_by;
    let mut sql = format!("SELECT {COLUMNS} FROM {FROM} WHERE {filter}");
    if let Some((at, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND ({key}, cr.id) {} ({}, {})",
            filters.order.after_op(),
            args.arg(at),
            args.arg(id)
        );
    }
    sql += &format!(
        " ORDER BY {key} {0}, cr.id {0} LIMIT {1}",
        filters.order.sql(),
        args.arg(page.fetch())
    );
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(ChangeRequest::from_row)
        .collect::<Result<Vec<_>, _>>()?;
    let by_created = key == "cr.created_at";
    Ok(page.finish(rows, count as u64, |cr| {
        (
            if by_created { cr.created_at } else { cr.updated_at },
            cr.id.clone(),
        )
    }))
}

/// The change requests of a space the caller can see.
pub fn of_space(
    c: &mut dyn Conn,
    space: &SpaceFor,
    filters: &Filters,
    paging: &Paging,
) -> StoreResult<List<ChangeRequest>> {
    let page = Page::new(paging, filters.scope(&format!("space-crs:{}", space.space.id)))?;
    let mut args = Args::default();
    let base = format!("cr.space_id = {}", args.arg(&space.space.id));
    query(c, base, args, filters, &page)
}

/// The change requests of the spaces of an organization the caller can see.
pub fn of_org(
    c: &mut dyn Conn,
    org: &OrgFor,
    caller: &str,
    filters: &Filters,
    paging: &Paging,
) -> StoreResult<List<ChangeRequest>> {
    let org_id = &org.org.id;
    let page = Page::new(paging, filters.scope(&format!("org-crs:{org_id}")))?;
    let ctx = AccessContext::for_org(c, org_id, caller, org.standing)?;
    let mut args = Args::default();
    let mut base = format!(
        "s.organization_id = {} AND s.deleted_at IS NULL",
        args.arg(org_id)
    );
    base += &ctx.visible_spaces_sql(&mut args);
    query(c, base, args, filters, &page)
}
