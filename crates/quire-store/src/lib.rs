//! quire's storage and domain layer, without HTTP: the database (`db`: one synchronous `Conn`
//! over SQLite or PostgreSQL, migrations, change stamps), clocks and ids, and [`StoreError`],
//! which every function here returns. The HTTP service (`quire-server`) depends on this crate,
//! never the other way round; `cargo tree -p quire-store` shows neither axum nor http.

pub mod change_requests;
pub mod clock;
pub mod collections;
pub mod columns;
pub mod comments;
pub mod content;
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
pub mod invites;
pub mod jobs;
pub mod links;
pub mod main_revision;
pub mod members;
pub mod merge_rules;
pub mod new_spaces;
pub mod orgs;
pub mod paging;
pub mod patch;
pub mod permissions;
pub mod reads;
pub mod richtext;
pub mod search;
pub mod siblings;
pub mod spaces;
pub mod stamped;
pub mod store;
pub mod teams;
pub mod templates;
pub mod tokens;
pub mod transfer;
pub mod users;
pub mod validate;

pub use error::{ErrorKind, StoreError, StoreResult};
pub use store::{Settings, Store};
