//! The service's own routes: the home page, liveness, readiness and metrics.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, error_response};
use crate::state::App;

/// The service's routes: the home page, health, readiness and metrics. All public.
pub(crate) fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(crate::home::page))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        .routes(routes!(get_openapi))
}

/// The answer of `/healthz` and `/readyz`.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// `ok` (alive) or `ready` (the database and the file store answer).
    status: &'static str,
}

/// Liveness
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "Service",
    description = "Answers while the process serves requests; checks nothing else.",
    responses((status = 200, description = "The process is alive.", body = Health)),
    security(())
)]
async fn healthz() -> axum::Json<Health> {
    axum::Json(Health { status: "ok" })
}

/// Readiness
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "Service",
    description = "Answers 200 when the database and the file store answer, 503 otherwise.",
    responses((status = 200, description = "Ready to serve.", body = Health)),
    security(())
)]
async fn readyz(State(app): State<App>) -> Response {
    let ping = app.db.ping().await;
    if let Err(e) = ping {
        tracing::warn!(error = %e, "readiness check failed");
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "the database is not reachable");
    }
    // A process whose bucket is down would answer every file read and upload 503.
    if app.blobs.check().await.is_err() {
        return error_response(StatusCode::SERVICE_UNAVAILABLE, "the file store is not reachable");
    }
    axum::Json(Health { status: "ready" }).into_response()
}

/// Prometheus metrics
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "Service",
    description = "Request counts and latencies by route and status, in Prometheus' text format.",
    responses((status = 200, description = "The metrics.", content_type = "text/plain", body = String)),
    security(())
)]
async fn metrics(State(app): State<App>) -> impl IntoResponse {
    (
        [(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        app.metrics.render(&app.cache_sizes()),
    )
}

/// quire's OpenAPI document, as built by the router (`crate::openapi`)
#[utoipa::path(
    get,
    path = "/v1/openapi.json",
    tag = "Service",
    summary = "quire's OpenAPI 3.1 document",
    description = "Every operation quire serves, with its parameters, bodies, answers and the token \
                   scope it needs. Generated from the code at startup; no token needed.",
    responses((status = 200, description = "The document.", content_type = "application/json", body = Object)),
    security(())
)]
async fn get_openapi(State(app): State<App>) -> Response {
    match app.api.get() {
        Some(api) => ([(header::CONTENT_TYPE, "application/json")], api.json.clone()).into_response(),
        None => ApiError::internal("the OpenAPI document is not built").into_response(),
    }
}
