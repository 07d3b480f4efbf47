//! quire's HTTP service: the Documentation Platform API over SQLite or PostgreSQL.
//!
//! Layout: one module per resource group (routes, handlers and queries together), beside the
//! shared infrastructure (`db`, `auth`, `permissions`, `paging`, `error`, `extract`, `jobs`).

pub use quire_store::{clock, db, ids, params};

pub mod api;
pub mod app;
pub mod auth;
pub mod config;
pub mod connections;
pub mod cors;
mod encoding;
pub mod error;
pub mod extract;
pub mod files;
mod home;
#[cfg(test)]
mod layout;
mod metrics;
pub mod openapi;
pub mod paths;
pub mod ratelimit;
pub mod server;
pub mod signing;
pub mod urls;
