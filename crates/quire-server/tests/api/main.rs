//! API tests: each starts a real server and talks HTTP to it, on SQLite, or on PostgreSQL when
//! `QUIRE_TEST_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

mod browser;
mod change_requests;
mod comments;
mod content;
mod conversations;
mod counts;
mod deadlines;
mod events;
mod fidelity;
mod files;
mod foundation;
mod hostile;
mod integration_scripts;
mod integrations;
mod limits;
mod links;
mod matrix;
mod members;
mod object_store;
mod openapi;
mod openapi_specs;
mod orgs;
mod outsiders;
mod pdf;
mod permissions_doc;
mod processes;
mod reader;
mod refusals;
mod saml;
mod saml_signin;
mod search;
mod sites;
mod spaces;
mod stored;
mod surface;
mod tokens;
mod tour;
mod translations;
mod urls;
