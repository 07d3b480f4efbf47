//! OpenAPI descriptions as quire keeps them, with no I/O: the text of a description parsed and
//! checked ([`parse`]), the relative files it refers to gathered into a [`filesystem`]
//! (GitBook's shape), and the API reference pages written from it ([`reference`]).

pub mod filesystem;
pub mod limits;
pub mod parse;
pub mod reference;
