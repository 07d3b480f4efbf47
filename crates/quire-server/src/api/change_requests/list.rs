//! Listing change requests of a space or of an organization, with GitBook's filters.

use axum::extract::State;
use quire_store::change_requests::{self, Status, list::Filters as ListFilters};
use quire_store::paging::{List, Order, Page, Paging};
use quire_store::permissions::org;
use quire_store::spaces;

use super::wire::{ChangeRequestJson, crs_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{FromQuery, Path, Query, QueryOf};
use crate::paths::{OrgPath, SpacePath};
use crate::state::App;

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

    /// The store's filters.
    fn parsed(self) -> ListFilters {
        ListFilters {
            statuses: self.statuses,
            creator: self.creator,
            contributor: self.contributor,
            reviewer: self.reviewer,
            cluster: self.cluster,
            space: self.space,
            order_by: self.order_by,
            order: self.order,
        }
    }
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
    let filters = filters.parsed();
    let page = Page::new(&paging, filters.scope(&format!("space-crs:{space_id}")))?;
    let list = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            let list = change_requests::list::of_space(c, &space, &filters, &page)?;
            let shown = change_requests::with_users(c, list.items)?;
            Ok::<_, quire_store::StoreError>((list.next, list.count, shown))
        })
        .await?;
    let (next, count, shown) = list;
    Ok(axum::Json(List {
        next,
        count,
        items: crs_json(&app.urls, &shown)?,
    }))
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
    let filters = filters.parsed();
    let page = Page::new(&paging, filters.scope(&format!("org-crs:{org_id}")))?;
    let list = app
        .db
        .read_blocking_as::<org::View, _>(caller.user_id.clone(), org_id, move |c, org| {
            let list = change_requests::list::of_org(c, &org, &caller.user_id, &filters, &page)?;
            let shown = change_requests::with_users(c, list.items)?;
            Ok::<_, quire_store::StoreError>((list.next, list.count, shown))
        })
        .await?;
    let (next, count, shown) = list;
    Ok(axum::Json(List {
        next,
        count,
        items: crs_json(&app.urls, &shown)?,
    }))
}
