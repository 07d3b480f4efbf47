//! Client connections: the accept loop, and the bounds that keep slow, idle or too many clients
//! from holding the server's connections and file descriptors.
//!
//! - At most `max_connections` are open; beyond it a new connection is answered a canned 503
//!   and closed at once (never queued).
//! - Each connection has a watchdog that looks at it every quarter of the shortest timeout: with
//!   no request in progress, a connection that has not completed a request's headers within
//!   `header_timeout` (counted from its opening, or from the first byte after it went idle) or
//!   that stayed silent for `idle_timeout` is closed. This covers what hyper's own
//!   `header_read_timeout` does not: hyper starts that timer only once the auto builder has
//!   sniffed the protocol (a client that sends nothing, or a slow HTTP/2 preface, is never timed
//!   out), it does nothing for HTTP/2, and on HTTP/1 it also runs while a keep-alive
//!   connection is idle, so the idle time could not be longer than the header time. So hyper's
//!   is turned off and this one serves both protocols.
//! - A request body must arrive within `body_timeout` plus one second per `body_min_rate` bytes
//!   received ([`TimedBody`]); a slower one fails the read, and the JSON extractors answer 408.
//! - On shutdown every connection is told to finish (HTTP/1 closes after the response in
//!   progress, HTTP/2 sends GOAWAY) and is dropped after `shutdown_grace` whatever it is doing.
//!
//! Cost on the hot path: per request two relaxed atomic adds and one subtract on the
//! connection's counters, per read one more; the watchdog's timer is armed once per period, not
//! per request.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{Request, Response};
use axum::routing::future::RouteFuture;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use pin_project_lite::pin_project;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::{Instant, Sleep};

use crate::config::ConnectionArgs;
use crate::ratelimit::{Admission, unix_now};
use crate::state::App;

/// The connection bounds, from `quire serve`'s flags.
#[derive(Clone, Debug)]
pub struct Limits {
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub body: BodyLimits,
    pub max_connections: u32,
    pub shutdown_grace: Duration,
}

impl Limits {
    pub fn from_args(args: &ConnectionArgs) -> Limits {
        Limits {
            header_timeout: args.header_timeout,
            idle_timeout: args.idle_timeout,
            body: BodyLimits {
                timeout: (!args.body_timeout.is_zero()).then_some(args.body_timeout),
                min_rate: args.body_min_rate.max(1),
            },
            max_connections: args.max_connections.max(1),
            shutdown_grace: args.shutdown_grace,
        }
    }

    /// How often a connection's watchdog looks: a quarter of the shortest timeout, so that a
    /// connection is closed at most 50% after its time.
    fn period(&self) -> Duration {
        (self.header_timeout.min(self.idle_timeout) / 4).max(Duration::from_millis(10))
    }
}

/// The answer to a connection beyond the limit, written without reading anything.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
retry-after: 1\r\nconnection: close\r\ncontent-length: 73\r\n\r\n\
{\"error\":{\"code\":503,\"message\":\"too many connections, retry shortly\"}}";

/// Accepts connections until `stop` turns true, then waits (at most the grace period and a
/// second) for the open ones to finish.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    app: App,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections as usize));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    // The watchdog times headers for both protocols (see the module documentation).
    builder.http1().header_read_timeout(None);
    let builder = Arc::new(builder);
    let limits = Arc::new(limits);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors or similar: back off instead of spinning.
                tracing::error!(error = %e, "cannot accept a connection");
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100)) => {}
                    _ = stop.wait_for(|s| *s) => break,
                }
                continue;
            }
        };
        match permits.clone().try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(connection(
                    stream,
                    peer,
                    builder.clone(),
                    router.clone(),
                    app.clone(),
                    limits.clone(),
                    stop.clone(),
                    permit,
                ));
            }
            Err(_) => refuse(&stream, peer),
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(
        limits.shutdown_grace + Duration::from_secs(1),
        permits.acquire_many(limits.max_connections),
    )
    .await;
}

fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Answers 503 to a connection beyond the limit, without waiting for anything, and closes it.
fn refuse(stream: &TcpStream, peer: SocketAddr) {
    tracing::warn!(peer = %peer, "connection refused: too many open connections");
    // Whatever the client has sent already is read and dropped, so that closing does not reset
    // the connection before the client reads the answer.
    let mut sink = [0u8; 4096];
    let _ = stream.try_read(&mut sink);
    let _ = stream.try_write(BUSY);
}

#[allow(clippy::too_many_arguments)]
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    builder: Arc<auto::Builder<TokioExecutor>>,
    router: Router,
    app: App,
    limits: Arc<Limits>,
    mut stop: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let activity = Arc::new(Activity::default());
    let io = TokioIo::new(Watched {
        io: stream,
        activity: activity.clone(),
    });
    let service = ConnService {
        router,
        app,
        peer,
        activity: activity.clone(),
        body: limits.body,
    };
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let opened = Instant::now();
    let period = limits.period();
    let mut watchdog = Watchdog::new(opened);
    let tick = tokio::time::sleep_until(opened + period);
    tokio::pin!(tick);
    let grace = tokio::time::sleep_until(opened);
    tokio::pin!(grace);
    let mut draining = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(peer = %peer, error = %e, "connection ended with an error");
                }
                break;
            }
            () = &mut tick => {
                let now = Instant::now();
                if let Some(what) = watchdog.check(&activity, now, &limits) {
                    tracing::debug!(peer = %peer, what, "closing a connection past its time");
                    break;
                }
                tick.as_mut().reset(now + period);
            }
            _ = stop.wait_for(|s| *s), if !draining => {
                draining = true;
                conn.as_mut().graceful_shutdown();
                grace.as_mut().reset(Instant::now() + limits.shutdown_grace);
            }
            () = &mut grace, if draining => {
                tracing::debug!(peer = %peer, "dropping a connection at the end of the shutdown grace");
                break;
            }
        }
    }
}

/// What a connection has done, counted by its I/O and its requests, read by its watchdog.
#[derive(Default)]
struct Activity {
    /// Reads that returned bytes.
    reads: AtomicU64,
    /// Requests whose headers were complete.
    requests: AtomicU64,
    /// Requests not yet answered to the end of their body.
    in_flight: AtomicUsize,
}

/// Held by a request from its headers to the end of its response body.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn enter(activity: &Arc<Activity>) -> InFlight {
        activity.requests.fetch_add(1, Ordering::Relaxed);
        activity.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(activity.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Waiting for a request's headers to be complete.
    Headers,
    /// No request in progress, nothing received since the last one.
    Idle,
    /// A request in progress (its body is timed by [`TimedBody`]).
    Busy,
}

struct Watchdog {
    phase: Phase,
    since: Instant,
    reads: u64,
    requests: u64,
}

impl Watchdog {
    fn new(opened: Instant) -> Watchdog {
        Watchdog {
            phase: Phase::Headers,
            since: opened,
            reads: 0,
            requests: 0,
        }
    }

    /// Moves to the phase the counters show; names the timeout passed, if any.
    fn check(&mut self, activity: &Activity, now: Instant, limits: &Limits) -> Option<&'static str> {
        let reads = activity.reads.load(Ordering::Relaxed);
        let requests = activity.requests.load(Ordering::Relaxed);
        if activity.in_flight.load(Ordering::Relaxed) > 0 {
            self.phase = Phase::Busy;
        } else if requests != self.requests || self.phase == Phase::Busy {
            self.phase = Phase::Idle;
            self.since = now;
        } else if self.phase == Phase::Idle && reads != self.reads {
            self.phase = Phase::Headers;
            self.since = now;
        }
        self.reads = reads;
        self.requests = requests;
        let elapsed = now.saturating_duration_since(self.since);
        match self.phase {
            Phase::Headers if elapsed >= limits.header_timeout => Some("header timeout"),
            Phase::Idle if elapsed >= limits.idle_timeout => Some("idle timeout"),
            _ => None,
        }
    }
}

/// The TCP stream, counting the reads that bring bytes.
struct Watched {
    io: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.reads.fetch_add(1, Ordering::Relaxed);
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The service of one connection: counts the request for the watchdog and the rate limits,
/// times its body, and routes it.
#[derive(Clone)]
struct ConnService {
    router: Router,
    app: App,
    peer: SocketAddr,
    activity: Arc<Activity>,
    body: BodyLimits,
}

impl hyper::service::Service<Request<Incoming>> for ConnService {
    type Response = Response<GuardedBody>;
    type Error = Infallible;
    type Future = ConnFuture;

    fn call(&self, req: Request<Incoming>) -> ConnFuture {
        let guard = InFlight::enter(&self.activity);
        let admission = match &self.app.limiter {
            Some(limiter) => {
                let admission = limiter.admit(
                    req.uri().path(),
                    req.headers(),
                    self.peer,
                    &self.app.tokens,
                    unix_now(),
                );
                if let Some(refusal) = admission.refusal(unix_now()) {
                    return ConnFuture::Ready {
                        response: Some(refusal.map(|inner| GuardedBody {
                            inner,
                            _guard: Some(guard),
                        })),
                    };
                }
                admission
            }
            None => Admission::Exempt,
        };
        let body = self.body;
        let req = req.map(|incoming| TimedBody::new(incoming, body));
        let mut router = self.router.clone();
        ConnFuture::Routing {
            future: tower::Service::call(&mut router, req),
            guard: Some(guard),
            admission,
            app: self.app.clone(),
        }
    }
}

pin_project! {
    #[project = ConnFutureProj]
    pub enum ConnFuture {
        Ready { response: Option<Response<GuardedBody>> },
        Routing {
            #[pin]
            future: RouteFuture<Infallible>,
            guard: Option<InFlight>,
            admission: Admission,
            app: App,
        },
    }
}

impl Future for ConnFuture {
    type Output = Result<Response<GuardedBody>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            ConnFutureProj::Ready { response } => Poll::Ready(Ok(response.take().unwrap_or_else(|| {
                crate::error::error_response(
                    axum::http::StatusCode::INTERNAL_SERVER_ERROR,
                    "internal server error",
                )
                .map(|inner| GuardedBody { inner, _guard: None })
            }))),
            ConnFutureProj::Routing {
                future,
                guard,
                admission,
                app,
            } => {
                let Ok(mut response) = ready!(future.poll(cx));
                if let Some(limiter) = &app.limiter {
                    limiter.finish(admission, &mut response, &app.tokens);
                }
                let guard = guard.take();
                Poll::Ready(Ok(response.map(|inner| GuardedBody { inner, _guard: guard })))
            }
        }
    }
}

/// A response body that keeps its request counted as in progress until it is sent.
pub struct GuardedBody {
    inner: Body,
    _guard: Option<InFlight>,
}

impl http_body::Body for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// How fast a request body must arrive.
#[derive(Clone, Copy, Debug)]
pub struct BodyLimits {
    /// None: no limit.
    pub timeout: Option<Duration>,
    /// Bytes per second after `timeout`.
    pub min_rate: u64,
}

/// A request body that fails with [`BodyError::TooSlow`] when it has not arrived within its
/// limits: `timeout` plus one second per `min_rate` bytes received, from the request's start.
/// The timer is armed only when the body makes the reader wait, and moved only when it fires.
pub struct TimedBody {
    inner: Incoming,
    limits: BodyLimits,
    received: u64,
    started: Option<Instant>,
    timer: Option<Pin<Box<Sleep>>>,
}

impl TimedBody {
    fn new(inner: Incoming, limits: BodyLimits) -> TimedBody {
        let started = (!http_body::Body::is_end_stream(&inner)).then(Instant::now);
        TimedBody {
            inner,
            limits,
            received: 0,
            started,
            timer: None,
        }
    }

    fn deadline(&self, started: Instant, timeout: Duration) -> Instant {
        let allowance = timeout.saturating_add(Duration::from_millis(
            self.received.saturating_mul(1000) / self.limits.min_rate,
        ));
        started
            .checked_add(allowance)
            .unwrap_or_else(|| started + Duration::from_secs(86_400 * 365))
    }

    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let (Some(timeout), Some(started)) = (self.limits.timeout, self.started) else {
            return Poll::Pending;
        };
        loop {
            let deadline = self.deadline(started, timeout);
            let timer = self
                .timer
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
            ready!(timer.as_mut().poll(cx));
            if Instant::now() >= deadline {
                return Poll::Ready(Some(Err(BodyError::TooSlow)));
            }
            timer.as_mut().reset(deadline);
        }
    }
}

impl http_body::Body for TimedBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received += data.len() as u64;
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(BodyError::Read(e)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => this.poll_deadline(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub enum BodyError {
    Read(hyper::Error),
    /// Slower than the body limits allow.
    TooSlow,
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BodyError::Read(e) => write!(f, "{e}"),
            BodyError::TooSlow => f.write_str("the request body arrived too slowly"),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BodyError::Read(e) => Some(e),
            BodyError::TooSlow => None,
        }
    }
}

/// Whether an error (or one of its sources) is a body that arrived too slowly.
pub fn is_too_slow(mut error: &(dyn std::error::Error + 'static)) -> bool {
    loop {
        if matches!(error.downcast_ref::<BodyError>(), Some(BodyError::TooSlow)) {
            return true;
        }
        match error.source() {
            Some(next) => error = next,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body: BodyLimits {
                timeout: None,
                min_rate: 1,
            },
            max_connections: 1,
            shutdown_grace: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_watchdog_times_headers_idleness_and_never_a_request_in_progress() {
        let limits = limits();
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let a = Activity::default();
        let mut w = Watchdog::new(t0);
        // A fresh connection must complete its headers in time, bytes or not.
        a.reads.store(3, Ordering::Relaxed);
        assert_eq!(w.check(&a, t0 + s(9), &limits), None);
        assert_eq!(w.check(&a, t0 + s(10), &limits), Some("header timeout"));
        // A request in progress is never timed here.
        let mut w = Watchdog::new(t0);
        let guard = InFlight::enter(&Arc::new(Activity::default()));
        let a = guard.0.clone();
        assert_eq!(w.check(&a, t0 + s(1000), &limits), None);
        drop(guard);
        // Answered: idle from now, for up to the idle timeout.
        assert_eq!(w.check(&a, t0 + s(1001), &limits), None);
        assert_eq!(w.check(&a, t0 + s(1060), &limits), None);
        assert_eq!(w.check(&a, t0 + s(1061), &limits), Some("idle timeout"));
        // A byte after the idle start begins the header time.
        let mut w = Watchdog::new(t0);
        let a = Arc::new(Activity::default());
        drop(InFlight::enter(&a));
        assert_eq!(w.check(&a, t0 + s(1), &limits), None);
        a.reads.fetch_add(1, Ordering::Relaxed);
        assert_eq!(w.check(&a, t0 + s(30), &limits), None);
        assert_eq!(w.check(&a, t0 + s(40), &limits), Some("header timeout"));
    }
}
