//! The JSON document tree of GitBook's API: blocks, inlines, texts with leaves and marks, and
//! fragments, plus content references and the operations every other module builds on
//! (validation, keys, reference visitors).

mod content_ref;
mod keys;
mod node;
mod refs;
mod table;
mod validate;

pub use content_ref::ContentRef;
pub use keys::{fill_missing_keys, strip_keys};
pub use node::{Document, Fragment, JsonMap, Leaf, Mark, Node, NodeObject};
pub(crate) use node::{walk_nodes, walk_nodes_mut};
pub(crate) use refs::node_refs;
pub use refs::{RefSite, for_each_ref, for_each_ref_mut};
pub use table::TableView;
pub use validate::{MAX_DEPTH, ValidationError, validate_document};
