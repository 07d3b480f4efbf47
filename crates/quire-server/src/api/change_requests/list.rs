//! Listing change requests of a space or of an organization, with GitBook's filters.

use axum::extract::State;
use quire_store::change_requests::{self, Status, list::Filters as ListFilters};
use quire_store::paging::{List, Order, Paging};
use quire_store::permissions::org;
use quire_store::spaces;
use serde::Deserialize;

use super::wire::{ChangeRequestJson, crs_json};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::paths::{OrgPath, SpacePath};
use crate::state::App;

/// The filters of both listings.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Filters {
    /// Only change requests in these states (repeated or comma-separated): `draft`, `open`
    /// (the default), `archived`, `merged`.
    #[param(inline, value_type = Option<Vec<Status>>, style = Form, explode = true)]
    #[serde(rename = "status", default, deserialize_with = "crate::extract::list")]
    statuses: Vec<String>,
    /// Only those created by this user (an id).
    creator: Option<String>,
    /// Only those this user (an id) contributed to.
    contributor: Option<String>,
    /// Only those with a review requested from this user (an id).
    #[serde(rename = "requestedReviewer")]
    reviewer: Option<String>,
    /// Only those that address this conversations issues cluster.
    #[serde(rename = "conversationsIssuesCluster")]
    cluster: Option<String>,
    /// Only those of this space (an id); for the organization's listing.
    space: Option<String>,
    /// What the list is ordered by: `updatedAt` (the default) or `createdAt`.
    #[param(value_type = Option<String>)]
    #[serde(rename = "orderBy", default)]
    order_by: OrderBy,
    /// The direction of the order.
    #[param(inline, value_type = Option<Order>)]
    #[serde(default)]
    order: Order,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[derive(Clone, Copy, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
enum OrderBy {
    #[default]
    UpdatedAt,
    CreatedAt,
}

impl Filters {
    /// The store's filters (`open` when no status is named, each status one the store
    /// knows), and the paging.
    fn parsed(self) -> ApiResult<(ListFilters, Paging)> {
        let mut statuses = self.statuses;
        if statuses.is_empty() {
            statuses.push("open".to_string());
        }
        if let Some(s) = statuses.iter().find(|s| Status::parse(s).is_none()) {
            return Err(ApiError::bad_request(format!(
                "query parameter `status` must be one of {}, not {s:?}",
                Status::list()
            )));
        }
        statuses.sort();
        statuses.dedup();
        let filters = ListFilters {
            statuses,
            creator: self.creator,
            contributor: self.contributor,
            reviewer: self.reviewer,
            cluster: self.cluster,
            space: self.space,
            order_by: match self.order_by {
                OrderBy::CreatedAt => "cr.created_at",
                OrderBy::UpdatedAt => "cr.updated_at",
            },
            order: self.order,
        };
        Ok((filters, self.paging))
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
    QueryOf(query): QueryOf<Filters>,
) -> ApiResult<axum::Json<List<ChangeRequestJson>>> {
    let (filters, paging) = query.parsed()?;
    let list = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            let list = change_requests::list::of_space(c, &space, &filters, &paging)?;
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
    QueryOf(query): QueryOf<Filters>,
) -> ApiResult<axum::Json<List<ChangeRequestJson>>> {
    let (filters, paging) = query.parsed()?;
    let list = app
        .db
        .read_blocking_as::<org::View, _>(caller.user_id.clone(), org_id, move |c, org| {
            let list = change_requests::list::of_org(c, &org, &caller.user_id, &filters, &paging)?;
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
