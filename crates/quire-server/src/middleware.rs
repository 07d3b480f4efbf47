//! The cross-cutting HTTP conventions every answer goes through: request ids, access logs and
//! metrics, the request deadline, and the JSON error envelope for panics, unknown routes and
//! wrong methods.

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tracing::Instrument;

use crate::error::{ApiError, error_response};
use crate::state::App;

const REQUEST_ID: &str = "x-request-id";

/// Gives every request an id (the caller's `x-request-id` when it sent a sane one), logs it in a
/// span, returns it in the response, and records metrics.
pub(crate) async fn observe(State(app): State<App>, mut req: Request, next: Next) -> Response {
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
pub(crate) async fn deadline(State(limit): State<std::time::Duration>, req: Request, next: Next) -> Response {
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

pub(crate) fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    tracing::error!("handler panicked");
    error_response(StatusCode::INTERNAL_SERVER_ERROR, "internal server error")
}

/// The spec's rule for DELETE: 204 with no content both when the resource existed and when it
/// did not. A DELETE of what is absent, or of what the caller cannot see, is answered as done
/// and changes nothing (the 404 rolled its transaction back), the same for both, so no caller
/// tells hidden from absent; a caller who sees the resource but may not delete it still gets
/// 403. Only on matched routes (`route_layer`): an unknown path stays a 404.
///
/// A layer of its own rather than `from_fn`: it wraps every route, and a request that is no
/// DELETE goes through it with neither an allocation nor a boxed future.
#[derive(Clone, Copy)]
pub(crate) struct AbsentIsDeleted;

impl<S> tower::Layer<S> for AbsentIsDeleted {
    type Service = AbsentIsDeletedService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AbsentIsDeletedService(inner)
    }
}

#[derive(Clone)]
pub(crate) struct AbsentIsDeletedService<S>(S);

type Answer<E> = Result<Response, E>;

fn absent_is_done<E>(answer: Answer<E>) -> Answer<E> {
    match answer {
        Ok(response) if response.status() == StatusCode::NOT_FOUND => {
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        other => other,
    }
}

impl<S> tower::Service<Request> for AbsentIsDeletedService<S>
where
    S: tower::Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = futures_util::future::Either<
        S::Future,
        futures_util::future::Map<S::Future, fn(Answer<S::Error>) -> Answer<S::Error>>,
    >;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use futures_util::FutureExt;
        if req.method() == axum::http::Method::DELETE {
            futures_util::future::Either::Right(self.0.call(req).map(absent_is_done as fn(_) -> _))
        } else {
            futures_util::future::Either::Left(self.0.call(req))
        }
    }
}

pub(crate) async fn not_found(req: Request) -> ApiError {
    ApiError::not_found(format!("no route for {} {}", req.method(), req.uri().path()))
}

pub(crate) async fn method_not_allowed(req: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method {} is not allowed on {}", req.method(), req.uri().path()),
    )
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::Request;
    use axum::middleware;
    use axum::routing::get;
    use tower::ServiceExt;
    use tower_http::catch_panic::CatchPanicLayer;

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
