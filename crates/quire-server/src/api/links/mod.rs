//! Links and backlinks of a space's content (`quire_store::links`). Each operation exists for
//! main and for a change request (`operations.rs`); they share one handler here.

mod operations;
pub mod wire;

use quire_store::links::read::{self, Linked, Links, Revision};
use quire_store::paging::{List, Paging};
use quire_store::reads::Opened;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::api::content::open_path;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::param;
use crate::paths::RouteIds;
use crate::state::App;
use quire_store::links::model::Status;
use wire::{BrokenStats, LinkItem, LinkList, Location, Stats, Where};

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(operations::list_space_links))
        .routes(routes!(operations::list_content_page_links))
        .routes(routes!(operations::list_content_page_backlinks))
        .routes(routes!(operations::list_content_file_backlinks))
        .routes(routes!(operations::list_change_request_page_links))
        .routes(routes!(operations::list_change_request_page_backlinks))
        .routes(routes!(operations::list_change_request_file_backlinks))
}

/// The query of the links lists: `status` and paging.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct LinksQuery {
    /// Only the links with this status.
    #[param(inline, value_type = Option<Status>)]
    status: Option<Status>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

fn location_base(opened: &Opened) -> Where<'_> {
    Where {
        org_id: &opened.space.space.org_id,
        space_id: &opened.space.space.id,
        revision: opened.stored.id(),
    }
}

fn revision(opened: &Opened) -> Revision<'_> {
    Revision {
        space: &opened.space,
        stored: &opened.stored,
        change_request: opened.change_request.as_ref().map(|cr| cr.id.as_str()),
    }
}

/// The answer of a links list.
fn link_list(opened: &Opened, links: Links) -> LinkList {
    let at = location_base(opened);
    let list = links.list.map(|link| {
        LinkItem::new(
            link.status,
            link.depends,
            at.target(&link.target),
            link.pages.iter().map(|p| at.page(p)).collect(),
        )
    });
    let stats = Stats {
        total: links.total,
        broken: BrokenStats {
            total: links.broken,
            change_request: links.broken_here,
        },
    };
    LinkList::new(list, stats)
}

/// `GET /v1/spaces/{spaceId}/links`: the links of main, one item per target, in target order.
pub async fn space_links(
    caller: Caller,
    app: App,
    params: RouteIds,
    LinksQuery { status, paging }: LinksQuery,
) -> ApiResult<axum::Json<LinkList>> {
    let app2 = app.clone();
    let list = app
        .db
        .read_blocking(move |c| {
            let opened = open_path(c, &app2, &caller, &params)?;
            let links = read::of_main(c, &opened.space, app2.urls.base(), status, &paging)?;
            Ok::<_, ApiError>(link_list(&opened, links))
        })
        .await?;
    Ok(axum::Json(list))
}

/// `GET .../page/{pageId}/links`: the links of one page of main or of a change request, read
/// from its document.
pub async fn page_links(
    caller: Caller,
    app: App,
    params: RouteIds,
    LinksQuery { status, paging }: LinksQuery,
) -> ApiResult<axum::Json<LinkList>> {
    let app2 = app.clone();
    let list = app
        .db
        .read(move |c| {
            let opened = open_path(c, &app2, &caller, &params)?;
            let page_id = param(&params, "pageId")?;
            let links = read::of_page(
                c,
                &app2.content,
                &revision(&opened),
                app2.urls.base(),
                page_id,
                status,
                &paging,
            )?;
            Ok::<_, ApiError>(link_list(&opened, links))
        })
        .await?;
    Ok(axum::Json(list))
}

pub async fn page_backlinks(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<Location>>> {
    backlinks(caller, app, params, paging, "pageId").await
}

pub async fn file_backlinks(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
) -> ApiResult<axum::Json<List<Location>>> {
    backlinks(caller, app, params, paging, "fileId").await
}

/// The pages that link to a page, or that embed or link to a file, in page id order.
async fn backlinks(
    caller: Caller,
    app: App,
    params: RouteIds,
    paging: Paging,
    what: &'static str,
) -> ApiResult<axum::Json<List<Location>>> {
    let app2 = app.clone();
    let list = app
        .db
        .read_blocking(move |c| {
            let opened = open_path(c, &app2, &caller, &params)?;
            let id = param(&params, what)?;
            let linked = if what == "pageId" {
                Linked::Page(id)
            } else {
                Linked::File(id)
            };
            let pages = read::backlinks(c, &app2.content, &revision(&opened), linked, &paging)?;
            let at = location_base(&opened);
            Ok::<_, ApiError>(pages.map(|p| at.page(&p)))
        })
        .await?;
    Ok(axum::Json(list))
}
