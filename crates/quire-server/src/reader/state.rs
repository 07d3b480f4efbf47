//! The reader's state: its caches (page trees, rendered answers, what visitors without claims
//! see), its render pool, and what it knows of the public URL. Kept apart from the serving code
//! so that the application state holds it without depending on any handler.

use std::sync::Arc;

use axum::http::StatusCode;
use bytes::Bytes;
use quire_reader::NavTree;
use quire_store::sites::published::Shown;
use sha2::{Digest, Sha256};

/// The reader's caches and what it knows of the public URL.
pub struct ReaderState {
    pub(super) public_host: Option<String>,
    pub(crate) secure: bool,
    /// Page trees by (revision, base path): revisions never change.
    pub(super) nav_trees: quick_cache::sync::Cache<(String, String), Arc<NavTree>, NavWeight>,
    /// Rendered answers (see [`AnswerKey`]), weighed by their bytes.
    pub(super) answers: quick_cache::sync::Cache<AnswerKey, Arc<Answer>, AnswerWeight>,
    /// What a visitor without claims sees, by published load: the same for every such visitor,
    /// and computing it compares every site space with every section.
    pub(super) shown_without_claims: quick_cache::sync::Cache<u64, Arc<Shown>>,
    /// Answers being made at once (see [`render_permits`]).
    pub(super) renders: tokio::sync::Semaphore,
    /// Where they are rendered.
    pub(super) pool: super::pool::RenderPool,
}

/// How many answers are made at once (their documents read, then rendered on the
/// [`RenderPool`](super::pool::RenderPool)): twice the processors, so that one waiting for the
/// database does not leave a processor idle. 64 visitors on pages nobody had asked for yet
/// made 64 at once, no sooner in all on two processors, each with its parsed document.
fn render_permits() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 2
}

/// Page tree entries kept at most (a 10,000-page space is 10,000).
const NAV_ENTRIES: u64 = 200_000;

#[derive(Clone)]
pub(super) struct NavWeight;

impl quick_cache::Weighter<(String, String), Arc<NavTree>> for NavWeight {
    fn weight(&self, _: &(String, String), nav: &Arc<NavTree>) -> u64 {
        1 + nav.nodes().len() as u64
    }
}

/// Rendered answers kept at most (bytes of bodies and keys).
const ANSWER_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Clone)]
pub(super) struct AnswerWeight;

impl quick_cache::Weighter<AnswerKey, Arc<Answer>> for AnswerWeight {
    fn weight(&self, key: &AnswerKey, answer: &Arc<Answer>) -> u64 {
        (answer.body.len() + key.path.len() + key.shown.sections.len() + key.shown.site_spaces.len() + 128)
            as u64
    }
}

impl ReaderState {
    pub fn new(public_url: &str) -> ReaderState {
        let parsed = url::Url::parse(public_url).ok();
        ReaderState {
            public_host: parsed
                .as_ref()
                .and_then(|u| u.host_str())
                .map(str::to_ascii_lowercase),
            secure: parsed.as_ref().is_some_and(|u| u.scheme() == "https"),
            nav_trees: quick_cache::sync::Cache::with_weighter(1_000, NAV_ENTRIES, NavWeight),
            answers: quick_cache::sync::Cache::with_weighter(4_096, ANSWER_BYTES, AnswerWeight),
            shown_without_claims: quick_cache::sync::Cache::new(1_000),
            renders: tokio::sync::Semaphore::new(render_permits()),
            pool: super::pool::RenderPool::new(),
        }
    }

    /// How full the reader's caches are.
    pub fn sizes(&self) -> Vec<quire_store::stamped::CacheSize> {
        use quire_store::stamped::CacheSize;
        vec![
            CacheSize::of("reader_nav_trees", "entries", &self.nav_trees),
            CacheSize::of("reader_answers", "bytes", &self.answers),
            CacheSize::of("reader_shown", "entries", &self.shown_without_claims),
        ]
    }

    /// Whether `host` is the host of the public URL (the API's own).
    pub fn is_public_host(&self, host: &str) -> bool {
        self.public_host.as_deref() == Some(host)
    }
}

/// What a rendered answer depends on: the published load (new after any write), what the
/// visitor sees, the visitor's token (`if` blocks read its claims), the hour (file URLs are
/// signed for it; 0 when they never expire, on a site anyone may read) and the path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct AnswerKey {
    pub(super) generation: u64,
    pub(super) shown: Arc<Shown>,
    pub(super) visitor: u64,
    pub(super) hour: i64,
    pub(super) path: String,
}

/// An answer as kept: status, type, bytes and their `ETag`, or a redirect.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) content_type: &'static str,
    /// The bytes, gzip-compressed when `gzipped`.
    pub(super) body: Bytes,
    pub(super) gzipped: bool,
    /// The tag of the bytes uncompressed, quoted (the compressed ones are tagged
    /// [`Answer::gzip_etag`]).
    pub(super) etag: String,
    pub(super) location: Option<String>,
}

/// Answers from this size on are kept gzip-compressed.
const GZIP_FROM: usize = 1024;

impl Answer {
    /// An answer of `body`, kept compressed when it is large enough: browsers take gzip, so
    /// that is what is sent (a page of the 10,000-page space: 17 KB of HTML, 5 KB
    /// compressed), and the cache holds four times more pages (it holds the bytes). The rare
    /// client without gzip gets them inflated. Compressed once, when rendered.
    pub(super) fn new(status: StatusCode, content_type: &'static str, body: String) -> Answer {
        let digest = Sha256::digest(body.as_bytes());
        let hash: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
        let packed = (body.len() >= GZIP_FROM)
            .then(|| crate::encoding::gzip(body.as_bytes(), crate::encoding::Effort::Fast).ok())
            .flatten()
            .filter(|packed| packed.len() < body.len());
        let (body, gzipped) = match packed {
            Some(packed) => (packed, true),
            None => (crate::encoding::kept(body.into_bytes()), false),
        };
        Answer {
            status,
            content_type,
            body,
            gzipped,
            etag: format!("\"{hash}\""),
            location: None,
        }
    }

    /// The tag of the compressed bytes: another representation, so another strong tag.
    pub(super) fn gzip_etag(&self) -> String {
        format!("{}-gzip\"", self.etag.trim_end_matches('"'))
    }

    pub(super) fn html(status: StatusCode, body: String) -> Answer {
        Answer::new(status, "text/html; charset=utf-8", body)
    }

    pub(super) fn redirect(to: String) -> Answer {
        Answer::redirect_with(StatusCode::MOVED_PERMANENTLY, to)
    }

    pub(super) fn redirect_with(status: StatusCode, to: String) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Bytes::new(),
            gzipped: false,
            etag: String::new(),
            location: Some(to),
        }
    }
}
