//! quire's HTTP service: the Documentation Platform API over SQLite or PostgreSQL.
//!
//! Layout: one module per resource group (routes, handlers and queries together), beside the
//! shared infrastructure (`db`, `auth`, `permissions`, `paging`, `error`, `extract`, `jobs`).

pub mod admin;
pub mod app;
pub mod auth;
pub mod clock;
pub mod config;
pub mod db;
pub mod error;
pub mod extract;
pub mod ids;
pub mod jobs;
pub mod merge_rules;
mod metrics;
pub mod orgs;
pub mod paging;
pub mod permissions;
mod richtext;
pub mod server;
pub mod urls;
pub mod users;
mod validate;
