//! The HTTP API: one folder per group of the spec's operations. Each folder's `mod.rs` registers
//! its handlers (`routes()`), each handler parses the request, calls one domain function of
//! `quire_store` and shapes the answer; `wire.rs` holds the JSON shapes (`urls`, `permissions`,
//! schemas). No SQL here: the store has it.

pub mod change_requests;
pub mod collections;
pub mod comments;
pub mod content;
pub mod conversations;
pub mod grants;
pub mod integrations;
pub mod invites;
pub mod links;
pub mod members;
pub mod openapi_specs;
pub mod orgs;
pub mod pdf;
pub mod saml;
pub mod search;
pub mod sites;
pub mod spaces;
pub mod teams;
pub mod tokens;
pub mod translations;
pub mod urls;
pub mod users;
