//! Links and backlinks of a space's content.
//!
//! Main's links are kept in `link_refs` (`index`), written in the transaction that moves main, so
//! the space-wide list, its statuses and backlinks are indexed queries. A change request's
//! revision has no index of its own: its page links come from the one document, and its
//! backlinks from main's index corrected by the pages whose documents differ from main's, which
//! are usually few (see docs/decisions/0020-links.md).

pub mod index;
pub mod model;
pub mod read;
