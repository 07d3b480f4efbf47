//! quire's HTTP service: the Documentation Platform API over the domain of `quire-store`.
//!
//! Layout: `api/<group>/`, one folder per group of the spec's operations (its routes, handlers
//! and JSON shapes; handlers parse, call a domain function of `quire_store`, and shape the
//! answer), beside the HTTP infrastructure: `state` (what handlers share; it imports no
//! handler), `router` (the list of every area's routes), `middleware` (request ids, logs,
//! deadlines, the error envelope), `auth` (bearer tokens and scopes), `extract`, `paths`,
//! `error` (the one mapping of `StoreError` to the error envelope), `openapi`, `files` (signed
//! downloads), connections, rate limits, CORS, metrics. The reader site (`reader`) sits beside
//! `api/`. See docs/architecture.md.
//! No SQL here (`layout` tests it).

/// The store's database, clock, ids and parameters, as the tests and the command line name them.
pub use quire_store::{clock, db, ids, params};

pub mod api;
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
pub mod middleware;
pub mod openapi;
pub mod outbound;
pub mod paths;
mod published_bodies;
pub mod ratelimit;
pub mod reader;
pub mod router;
pub mod scripts;
pub mod server;
mod service;
pub mod session;
pub mod signing;
pub mod state;
pub mod translator;
pub mod typeset;
pub mod urls;
