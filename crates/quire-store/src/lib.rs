//! quire's storage and domain layer, without HTTP: the database (`db`: one synchronous `Conn`
//! over SQLite or PostgreSQL, migrations, change stamps), the permission model, the caches, the
//! job queue, the event outbox, and one module per resource whose functions are transactions
//! over a connection (`spaces::update`, `change_requests::merge::merge`, ...). Every function
//! returns [`StoreError`]. The HTTP service (`quire-server`) depends on this crate, never the
//! other way round; `cargo tree -p quire-store` shows neither axum nor http.
//!
//! The modules form a tree (docs/decisions/0056-layout-store-and-http-crates.md), from the foundations (`db`,
//! `error`, `permissions`, `access`, `paging`, `events`, `jobs`) through the resources
//! (`users`, `orgs`, `members`, `teams`, `collections`, `spaces`, `content`, `files`,
//! `search`, `links`, `grants`, `invites`, `comments`) to what builds on them
//! (`main_revision`, `templates`, `new_spaces`, `change_requests`, `reads`, `import`,
//! `worker`, `admin`). A domain function that acts takes the proof of its permission check,
//! [`permissions::Authorized`].

pub mod change_requests;
pub mod clock;
pub mod collections;
pub mod columns;
pub mod comments;
pub mod content;
pub mod conversations;
pub mod db;
pub mod error;
pub mod files;
pub mod grants;
pub mod ids;
pub mod wire_enum;
pub mod worker;

pub mod access;
pub mod admin;
pub mod auth;
pub mod blobs;
pub mod events;
pub mod import;
pub mod instance;
pub mod integrations;
pub mod invites;
pub mod jobs;
pub mod links;
pub mod main_revision;
pub mod members;
pub mod merge_rules;
pub mod new_spaces;
pub mod openapi;
pub mod orgs;
pub mod outbound;
pub mod paging;
pub mod patch;
pub mod pdf;
pub mod permissions;
pub mod reader;
pub mod reads;
pub mod richtext;
pub mod saml;
pub mod search;
pub mod sessions;
pub mod siblings;
pub mod sites;
pub mod spaces;
pub mod stamped;
pub mod teams;
pub mod templates;
pub mod tokens;
pub mod transfer;
pub mod translations;
pub mod users;
pub mod validate;
pub mod visible;

pub use error::{ErrorKind, StoreError, StoreResult};

// The store: the database with what domain functions share beside it (settings, caches, file
// bytes). Cheap to clone; the HTTP service keeps one in its state, the command line and the
// background jobs use the same. It is the crate's root context: modules reach the database and
// the caches through it, and it holds the caches of `auth`, `content`, `orgs` and `spaces`.

use std::ops::Deref;
use std::sync::Arc;

use crate::auth::TokenCache;
use crate::blobs::Blobs;
use crate::content::store::ContentCache;
use crate::db::Db;
use crate::orgs::cache::OrgCache;
use crate::spaces::cache::SpaceCache;

/// A storage quota of file bytes, with the text it was configured as (for messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quota {
    pub bytes: u64,
    pub text: String,
}

impl Quota {
    /// A quota from its flag's value; None for `0` (no quota).
    pub fn from_flag(flag: Option<&Quota>) -> Option<Quota> {
        flag.filter(|q| q.bytes > 0).cloned()
    }
}

/// Settings domain functions read.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// How long a deleted space can be restored.
    pub space_retention_ms: i64,
    /// How long unreferenced file bytes are kept (see `files`).
    pub file_retention_ms: i64,
    /// Storage quotas for file bytes, per space and per organization (None: no quota).
    pub space_storage_quota: Option<Quota>,
    pub org_storage_quota: Option<Quota>,
    /// How often an OpenAPI description given by URL is fetched again (0: never).
    pub openapi_refresh_ms: i64,
    /// The key integration secrets are sealed with.
    pub secrets_key: integrations::secrets::SecretsKey,
    /// How integration events are delivered and retried.
    pub delivery: integrations::delivery::DeliverySettings,
    /// How long dispatched outbox rows and settled integration events are kept (see
    /// `integrations::retention`).
    pub event_retention_ms: i64,
}

#[derive(Clone)]
pub struct Store(Arc<StoreInner>);

pub struct StoreInner {
    pub db: Db,
    pub settings: Settings,
    /// Where file bytes live.
    pub blobs: Arc<dyn Blobs>,
    /// How quire fetches from other servers (background jobs; requests pass theirs).
    pub fetch: Arc<dyn outbound::Fetch>,
    /// How integration scripts run (the HTTP service's JavaScript runtime).
    pub scripts: Arc<dyn integrations::scripts::Scripts>,
    /// How PDFs are typeset (the HTTP service's typesetter).
    pub typesetter: Arc<dyn pdf::Typesetter>,
    /// Where translation runs send their text (None: no translator is configured, and runs
    /// are refused saying how to configure one).
    pub translator: Option<Arc<dyn translations::Translator>>,
    /// Immutable content (revision trees, documents) kept in memory.
    pub content: ContentCache,
    /// Bearer tokens found valid recently.
    pub tokens: TokenCache,
    /// Organizations with their callers' standing and access, while the database has not
    /// changed.
    pub orgs: OrgCache,
    /// Spaces with their callers' roles, likewise.
    pub spaces: SpaceCache,
    /// Published views of docs sites, likewise.
    pub published_sites: crate::sites::published::PublishedCache,
    /// Which published site a reader request names, likewise.
    pub reader_sites: crate::reader::ReaderCache,
    /// Where integrations' components render for their callers, likewise.
    pub render_targets: integrations::scripts::RenderTargets,
}

impl StoreInner {
    /// How full the caches of reads kept while the database has not changed are (entries).
    pub fn cache_sizes(&self) -> Vec<stamped::CacheSize> {
        vec![
            self.orgs.entries.size("orgs", "entries"),
            self.spaces.entries.size("spaces", "entries"),
            self.published_sites.entries.size("published_sites", "entries"),
            self.reader_sites.sites.size("reader_sites", "entries"),
            self.render_targets.entries.size("render_targets", "entries"),
        ]
    }
}

impl Deref for Store {
    type Target = StoreInner;

    fn deref(&self) -> &StoreInner {
        &self.0
    }
}

impl Store {
    pub fn new(
        db: Db,
        settings: Settings,
        blobs: Arc<dyn Blobs>,
        fetch: Arc<dyn outbound::Fetch>,
        scripts: Arc<dyn integrations::scripts::Scripts>,
        typesetter: Arc<dyn pdf::Typesetter>,
        translator: Option<Arc<dyn translations::Translator>>,
    ) -> Store {
        Store(Arc::new(StoreInner {
            db,
            settings,
            blobs,
            fetch,
            scripts,
            typesetter,
            translator,
            content: ContentCache::default(),
            tokens: TokenCache::default(),
            orgs: OrgCache::default(),
            spaces: SpaceCache::default(),
            published_sites: Default::default(),
            reader_sites: Default::default(),
            render_targets: Default::default(),
        }))
    }
}
