//! The application state every handler shares: the store, URLs, settings, metrics, the signing
//! key, the file store, rate limits, the route table, and the HTTP layer's own caches. It
//! depends on no handler: the router (`router`) and the handlers depend on it.

use std::ops::Deref;
use std::sync::Arc;

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
    /// How long a PDF link waits for its PDF before answering 202 (`api::pdf`).
    pub pdf_wait: std::time::Duration,
    /// How long a session opened by a sign-in lasts (`--session-ttl`).
    pub session_ttl_ms: i64,
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
    pub published_bodies: crate::published_bodies::Bodies,
    /// The reader site's caches (rendered pages, page trees).
    pub reader: crate::reader::state::ReaderState,
    /// Integration components' renders that asked to be cached.
    pub renders: crate::scripts::RenderCache,
}

impl AppInner {
    /// How full each of the process's caches is.
    pub fn cache_sizes(&self) -> Vec<quire_store::stamped::CacheSize> {
        let mut sizes = self.store.content.sizes();
        sizes.extend(self.store.cache_sizes());
        sizes.push(self.lists.size("lists", "bytes"));
        sizes.push(self.published_bodies.size());
        sizes.extend(self.reader.sizes());
        sizes.push(self.renders.size());
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
            published_bodies: crate::published_bodies::Bodies::default(),
            reader: crate::reader::state::ReaderState::new(urls.base()),
            renders: Default::default(),
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
