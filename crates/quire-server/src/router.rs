//! The whole HTTP surface: the list of every area's routes, and the router that serves them
//! with the cross-cutting conventions (`middleware`).

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;

use crate::middleware::{AbsentIsDeleted, deadline, method_not_allowed, not_found, observe, panic_response};
use crate::state::App;

/// Every route quire serves, each area's from its module. The route table (each route's token
/// scope) and the OpenAPI document are read from the same list (`crate::openapi`).
pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .merge(crate::service::routes())
        .merge(crate::api::users::routes())
        .merge(crate::api::tokens::routes())
        .merge(crate::api::orgs::routes())
        .merge(crate::api::members::routes())
        .merge(crate::api::teams::routes())
        .merge(crate::api::invites::routes())
        .merge(crate::api::saml::routes())
        .merge(crate::session::routes())
        .merge(crate::api::collections::routes())
        .merge(crate::api::spaces::routes())
        .merge(crate::api::grants::routes())
        .merge(crate::api::change_requests::routes())
        .merge(crate::api::content::routes())
        .merge(crate::api::comments::routes())
        .merge(crate::api::links::routes())
        .merge(crate::files::routes())
        .merge(crate::api::pdf::routes())
        .merge(crate::api::search::routes())
        .merge(crate::api::sites::routes())
        .merge(crate::api::openapi_specs::routes())
        .merge(crate::api::translations::routes())
        .merge(crate::api::conversations::routes())
        .merge(crate::api::integrations::routes())
        .merge(crate::api::urls::routes())
}

/// The whole HTTP surface of quire. Panics when a route does not declare its access (see
/// [`crate::openapi`]): a build that cannot tell which scope a route needs must not serve.
pub fn router(app: App) -> Router {
    let (routes, doc) = routes().split_for_parts();
    let api = crate::openapi::Api::new(&doc, app.urls.base())
        .unwrap_or_else(|e| panic!("refusing to build the router: {e}"));
    // Every router of one process is built from the same annotations, so a second call finds
    // the same table already set.
    let _ = app.api.set(api);
    let router = routes
        .route_layer(AbsentIsDeleted)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // Published sites (`/s/...` and sites' hostnames): not API routes (see `reader`).
        .layer(middleware::from_fn_with_state(
            app.clone(),
            crate::reader::dispatch,
        ))
        .layer(DefaultBodyLimit::max(app.settings.max_body_bytes))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn_with_state(
            app.settings.request_timeout,
            deadline,
        ));
    // Outside the deadline and panic layers, so that their answers carry the CORS headers too.
    let router = match crate::cors::layer(&app.settings.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    };
    router
        .layer(middleware::from_fn_with_state(app.clone(), observe))
        .with_state(app)
}
