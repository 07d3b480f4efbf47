//! The application: shared state and the router with the cross-cutting HTTP conventions
//! (request ids, logs, metrics, JSON errors for every failure, body limits).

use std::ops::Deref;
use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;
use tracing::Instrument;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, error_response};
use crate::metrics::Metrics;
use crate::urls::Urls;
use quire_blobs::BlobStore;
use quire_store::Store;

/// Settings of the HTTP layer (the store has its own, `quire_store::Settings`).
#[derive(Clone, Debug)]
pub struct Settings {
    pub max_body_bytes: usize,
    /// Requests per minute per token or client address (0: no limit).
    pub rate_limit: u32,
    /// Whether the client address comes from `X-Forwarded-For`.
    pub trust_proxy: bool,
    /// How long a request may run (see [`deadline`]).
    pub request_timeout: std::time::Duration,
    /// Origins allowed by CORS (none: CORS off).
    pub cors_origins: Vec<crate::cors::CorsOrigin>,
}

/// Shared state of every handler: cheap to clone. It derefs to [`AppInner`], which derefs to
/// the [`Store`], so `app.db` and the store's caches read as fields of the app.
#[derive(Clone)]
pub struct App(Arc<AppInner>);

pub struct AppInner {
    /// The database, caches and file bytes the domain functions work on.
    pub store: Store,
    pub urls: Urls,
    pub settings: Settings,
    pub metrics: Metrics,
    /// The instance's signing key (see `signing`), the same in every process.
    pub signing_key: Vec<u8>,
    /// Where file bytes live, for downloads and readiness (the store sees the same through
    /// `quire_store::blobs::Blobs`).
    pub blobs: BlobStore,
    /// Request counts per token and client address; None when there is no limit.
    pub limiter: Option<crate::ratelimit::RateLimiter>,
    /// The route table (each route's token scope) and the OpenAPI document, set by [`router`].
    pub api: std::sync::OnceLock<crate::openapi::Api>,
    /// Answers of list reads, by what they list and for whom, while the database has not
    /// changed (see `quire_store::stamped`).
    pub lists: quire_store::stamped::StampedCache<String, bytes::Bytes, quire_store::stamped::ByLength>,
    /// Rendered published sites, by the load they were rendered from (its `generation`) and
    /// what the visitor sees: a new load (after any change) has a new generation.
    pub published_bodies: crate::api::sites::published::Bodies,
    /// The reader site's caches (rendered pages, page trees).
    pub reader: crate::reader::ReaderState,
}

impl AppInner {
    /// How full each of the process's caches is.
    pub fn cache_sizes(&self) -> Vec<quire_store::stamped::CacheSize> {
        let mut sizes = self.store.content.sizes();
        sizes.extend(self.store.cache_sizes());
        sizes.push(self.lists.size("lists", "bytes"));
        sizes.push(self.published_bodies.size());
        sizes.extend(self.reader.sizes());
        sizes
    }
}

impl Deref for App {
    type Target = AppInner;

    fn deref(&self) -> &AppInner {
        &self.0
    }
}

impl Deref for AppInner {
    type Target = Store;

    fn deref(&self) -> &Store {
        &self.store
    }
}

/// What the kept list answers may weigh in all: a page of 100 comments is about 100 KB, so
/// about 160 of them; counted by bytes because a page of 1,000 long comments weighs megabytes.
const LISTS_BYTES: u64 = 16 << 20;

impl App {
    pub fn new(store: Store, urls: Urls, settings: Settings, signing_key: Vec<u8>, blobs: BlobStore) -> App {
        let limiter = crate::ratelimit::RateLimiter::new(settings.rate_limit, settings.trust_proxy);
        App(Arc::new(AppInner {
            lists: quire_store::stamped::StampedCache::with_bytes(500, LISTS_BYTES),
            published_bodies: crate::api::sites::published::Bodies::default(),
            reader: crate::reader::ReaderState::new(urls.base()),
            limiter,
            store,
            urls,
            settings,
            metrics: Metrics::default(),
            signing_key,
            blobs,
            api: std::sync::OnceLock::new(),
        }))
    }
}

const REQUEST_ID: &str = "x-request-id";

/// The whole HTTP surface of quire. Panics when a route does not declare its access (see
/// [`crate::openapi`]): a build that cannot tell which scope a route needs must not serve.
pub fn router(app: App) -> Router {
    let (routes, doc) = crate::openapi::routes().split_for_parts();
    let api = crate::openapi::Api::new(&doc, app.urls.base())
        .unwrap_or_else(|e| panic!("refusing to build the router: {e}"));
    // Every router of one process is built from the same annotations, so a second call finds
    // the same table already set.
    let _ = app.api.set(api);
    let router = routes
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

/// Gives every request an id (the caller's `x-request-id` when it sent a sane one), logs it in a
/// span, returns it in the response, and records metrics.
async fn observe(State(app): State<App>, mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_string)
        .unwrap_or_else(crate::ids::new_id);
    if let Ok(value) = HeaderValue::from_str(&id) {
        req.headers_mut().insert(REQUEST_ID, value);
    }
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let span = tracing::info_span!("request", id = %id, method = %method, path = %req.uri().path());
    let mut response = next.run(req).instrument(span).await;
    let elapsed = started.elapsed();
    let status = response.status();
    // One access line per request, outside the request's span so that it stands alone: the
    // matched route (no ids, no query), never the raw path. `RUST_LOG=warn` (or
    // `quire_server::app=warn`) leaves them out where their cost matters (bench/README.md).
    tracing::info!(
        method = %method,
        route = %route,
        status = status.as_u16(),
        ms = round_ms(elapsed),
        id = %id,
        "request"
    );
    app.metrics
        .record(method.as_str(), &route, status.as_u16(), elapsed);
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    response
}

/// A duration in milliseconds, rounded to hundredths.
fn round_ms(elapsed: std::time::Duration) -> f64 {
    (elapsed.as_secs_f64() * 1e5).round() / 100.0
}

/// How long after a request's deadline its answer is given up on: its write transaction checks
/// the deadline before committing, and this margin lets it answer for itself (a commit, or a
/// rollback reported as 503) rather than be cut off in the middle of committing.
const DEADLINE_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// Answers 503 when a request runs past `--request-timeout` (plus [`DEADLINE_GRACE`]); its
/// write transaction, if any, rolls back instead of committing after the deadline.
async fn deadline(State(limit): State<std::time::Duration>, req: Request, next: Next) -> Response {
    let deadline = Instant::now() + limit;
    let run = crate::db::with_deadline(deadline, next.run(req));
    match tokio::time::timeout(limit + DEADLINE_GRACE, run).await {
        Ok(response) => response,
        Err(_) => {
            tracing::warn!(
                timeout_ms = limit.as_millis() as u64,
                "request ran past its deadline"
            );
            let mut response = error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!(
                    "the request did not finish within the server's limit of {} ms and was stopped; retry shortly",
                    limit.as_millis()
                ),
            );
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, HeaderValue::from_static("1"));
            response
        }
    }
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("handler panicked");
    error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
}

async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(format!("no route for {} {}", req.method(), req.uri().path()))
}

async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method {} is not allowed on {}", req.method(), req.uri().path()),
    )
}

/// The service's routes: the home page, health, readiness and metrics. All public.
pub(crate) fn service_routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(crate::home::page))
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
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

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use axum::routing::get;
    use tower::ServiceExt;

    use super::*;

    #[test]
    fn access_lines_round_durations_to_hundredths_of_a_millisecond() {
        use std::time::Duration;
        assert_eq!(round_ms(Duration::from_micros(1234)), 1.23);
        assert_eq!(round_ms(Duration::from_micros(1236)), 1.24);
        assert_eq!(round_ms(Duration::from_nanos(4_999)), 0.0);
        assert_eq!(round_ms(Duration::from_millis(2500)), 2500.0);
        assert_eq!(format!("{}", round_ms(Duration::from_micros(300))), "0.3");
    }

    #[tokio::test]
    async fn a_request_past_its_deadline_answers_503_with_the_envelope() {
        async fn slow() -> &'static str {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
            "late"
        }
        let limit = std::time::Duration::from_millis(50);
        let router: Router = Router::new()
            .route("/slow", get(slow))
            .layer(middleware::from_fn_with_state(limit, deadline));
        let started = Instant::now();
        let response = router
            .oneshot(Request::get("/slow").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()["retry-after"], "1");
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"]["code"], 503);
        assert!(json["error"]["message"].as_str().unwrap().contains("50 ms"));
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_the_json_error_envelope() {
        async fn boom() -> &'static str {
            panic!("boom")
        }
        let router: Router = Router::new()
            .route("/boom", get(boom))
            .layer(CatchPanicLayer::custom(panic_response));
        let response = router
            .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(response.headers()["content-type"], "application/json");
        let body = axum::body::to_bytes(response.into_body(), 1024).await.unwrap();
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["error"]["code"], 500);
    }
}
