//! Listing change requests of a space or of an organization, with GitBook's filters.

use axum::extract::State;

use super::model::{COLUMNS, ChangeRequest, FROM, Status};
use super::{ChangeRequestJson, render};
use crate::app::App;
use crate::auth::Caller;
use crate::db::{Args, Conn};
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Order, Path, Query, QueryOf};
use crate::paths::{OrgPath, SpacePath};
use quire_store::access::AccessContext;
use quire_store::orgs;
use quire_store::paging::{List, Page, Paging};
use quire_store::spaces;

/// The filters of both listings.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Filters {
    /// Only change requests in these states (repeated or comma-separated): `draft`, `open`
    /// (the default), `archived`, `merged`.
    #[param(rename = "status", inline, value_type = Option<Vec<Status>>, style = Form, explode = true)]
    statuses: Vec<String>,
    /// Only those created by this user (an id).
    creator: Option<String>,
    /// Only those this user (an id) contributed to.
    contributor: Option<String>,
    /// Only those with a review requested from this user (an id).
    #[param(rename = "requestedReviewer")]
    reviewer: Option<String>,
    /// Only those that address this conversations issues cluster.
    #[param(rename = "conversationsIssuesCluster")]
    cluster: Option<String>,
    /// Only those of this space (an id); for the organization's listing.
    space: Option<String>,
    /// What the list is ordered by: `updatedAt` (the default) or `createdAt`.
    #[param(rename = "orderBy", value_type = Option<String>)]
    order_by: &'static str,
    /// The direction of the order.
    #[param(inline, value_type = Option<Order>)]
    order: Order,
}

/// The query of both listings: filters and paging.
pub struct ListQuery {
    filters: Filters,
    paging: Paging,
}

impl FromQuery for ListQuery {
    fn from_query(q: &Query) -> ApiResult<ListQuery> {
        Ok(ListQuery {
            filters: Filters::from_query(q)?,
            paging: Paging::from_query(q)?,
        })
    }
}

impl Filters {
    fn from_query(q: &Query) -> ApiResult<Filters> {
        let mut statuses = q.all("status");
        if statuses.is_empty() {
            statuses.push("open".to_string());
        }
        for s in &statuses {
            if Status::parse(s).is_none() {
                return Err(ApiError::bad_request(format!(
                    "query parameter `status` must be one of {}, not {s:?}",
                    Status::list()
                )));
            }
        }
        statuses.sort();
        statuses.dedup();
        let non_empty = |name: &str| q.str(name).filter(|s| !s.is_empty()).map(str::to_string);
        Ok(Filters {
            statuses,
            creator: non_empty("creator"),
            contributor: non_empty("contributor"),
            reviewer: non_empty("requestedReviewer"),
            cluster: non_empty("conversationsIssuesCluster"),
            space: non_empty("space"),
            order_by: match q.one_of("orderBy", &["updatedAt", "createdAt"], "updatedAt")? {
                "createdAt" => "cr.created_at",
                _ => "cr.updated_at",
            },
            order: q.order()?,
        })
    }

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
) -> ApiResult<List<ChangeRequest>> {
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

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests",
    tag = "Change requests",
    summary = "List the change requests of a space",
    params(SpacePath, Filters, Paging),
    responses((status = 200, description = "The change requests.", body = List<ChangeRequestJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_space_change_requests(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    QueryOf(ListQuery { filters, paging }): QueryOf<ListQuery>,
) -> ApiResult<axum::Json<List<ChangeRequestJson>>> {
    let page = Page::new(&paging, filters.scope(&format!("space-crs:{space_id}")))?;
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            spaces::load_active(c, &space_id, &caller.user_id)?;
            let mut args = Args::default();
            let base = format!("cr.space_id = {}", args.arg(&space_id));
            let list = query(c, base, args, &filters, &page)?;
            let items = render(c, &app2, &list.items)?;
            Ok::<_, ApiError>(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/change-requests",
    tag = "Change requests",
    summary = "List the change requests of an organization",
    params(OrgPath, Filters, Paging),
    responses((status = 200, description = "The change requests of the spaces the caller can see.", body = List<ChangeRequestJson>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_org_change_requests(
    caller: Caller,
    State(app): State<App>,
    Path(OrgPath {
        organization_id: org_id,
    }): Path<OrgPath>,
    QueryOf(ListQuery { filters, paging }): QueryOf<ListQuery>,
) -> ApiResult<axum::Json<List<ChangeRequestJson>>> {
    let page = Page::new(&paging, filters.scope(&format!("org-crs:{org_id}")))?;
    let app2 = app.clone();
    let list = app
        .db
        .read_blocking(move |c| {
            let org = orgs::load_visible(c, &org_id, &caller.user_id)?;
            let ctx = AccessContext::for_org(c, &org_id, &caller.user_id, org.standing)?;
            let mut args = Args::default();
            let mut base = format!(
                "s.organization_id = {} AND s.deleted_at IS NULL",
                args.arg(&org_id)
            );
            base += &ctx.visible_spaces_sql(&mut args);
            let list = query(c, base, args, &filters, &page)?;
            let items = render(c, &app2, &list.items)?;
            Ok::<_, ApiError>(List {
                next: list.next,
                count: list.count,
                items,
            })
        })
        .await?;
    Ok(axum::Json(list))
}
