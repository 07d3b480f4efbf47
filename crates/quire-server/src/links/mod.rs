//! Links and backlinks of a space's content.
//!
//! Main's links are kept in `link_refs` (`index`), written in the transaction that moves main, so
//! the space-wide list, its statuses and backlinks are indexed queries. A change request's
//! revision has no index of its own: its page links come from the one document, and its
//! backlinks from main's index corrected by the pages whose documents differ from main's, which
//! are usually few (see docs/decisions.md, "Links").

pub mod index;
pub mod model;
mod read;

use axum::Router;
use axum::routing::get;

use crate::app::App;

pub fn routes() -> Router<App> {
    let content = |prefix: &str| {
        Router::new()
            .route(&format!("{prefix}/page/{{pageId}}/links"), get(read::page_links))
            .route(
                &format!("{prefix}/page/{{pageId}}/backlinks"),
                get(read::page_backlinks),
            )
            .route(
                &format!("{prefix}/files/{{fileId}}/backlinks"),
                get(read::file_backlinks),
            )
    };
    Router::new()
        .route("/v1/spaces/{spaceId}/links", get(read::space_links))
        .merge(content("/v1/spaces/{spaceId}/content"))
        .merge(content(
            "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
        ))
}
