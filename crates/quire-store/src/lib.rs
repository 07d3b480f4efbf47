//! quire's storage and domain layer, without HTTP: the database (`db`: one synchronous `Conn`
//! over SQLite or PostgreSQL, migrations, change stamps), clocks and ids, and [`StoreError`],
//! which every function here returns. The HTTP service (`quire-server`) depends on this crate,
//! never the other way round; `cargo tree -p quire-store` shows neither axum nor http.

pub mod clock;
pub mod db;
pub mod error;
pub mod ids;

pub use error::{ErrorKind, StoreError, StoreResult};
