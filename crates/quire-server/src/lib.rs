//! quire's HTTP service: the Documentation Platform API over SQLite or PostgreSQL.
//!
//! Layout: one module per resource group (routes, handlers and queries together), beside the
//! shared infrastructure (`db`, `auth`, `permissions`, `paging`, `error`, `extract`, `jobs`).

pub use quire_store::{clock, db, ids, params};

pub mod access;
pub mod admin;
pub mod app;
pub mod auth;
pub mod change_requests;
pub mod collections;
pub mod columns;
pub mod comments;
pub mod config;
pub mod connections;
pub mod content;
pub mod cors;
mod encoding;
pub mod error;
pub mod events;
pub mod extract;
pub mod file_blobs;
pub mod files;
pub mod grants;
mod home;
pub mod import;
pub mod invites;
pub mod jobs;
pub mod links;
pub mod members;
pub mod merge_rules;
mod metrics;
pub mod openapi;
pub mod orgs;
pub mod paging;
pub mod paths;
pub mod permissions;
pub mod ratelimit;
mod richtext;
pub mod search;
pub mod server;
pub mod siblings;
pub mod signing;
pub mod spaces;
mod stamped;
pub mod teams;
pub mod tokens;
pub mod transfer;
pub mod urls;
pub mod users;
mod validate;
mod wire_enum;
