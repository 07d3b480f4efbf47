//! A space's content as stored: revisions (each a tree of pages, files, reusable contents and
//! variables in content-addressed buckets), page documents and the large blocks stored apart
//! from them (`objects`), the blobs each revision introduces (`file_refs`), the in-process cache
//! of immutable trees and documents (`store::ContentCache`), and how two revisions differ for
//! the indexes derived from main (`diff`). Nothing here knows change requests or who may read
//! what: writers of content (`main_revision`, `change_requests`, `new_spaces`, `import`) and
//! readers (`reads`, `search`, `links`) build on it.

pub mod attempts;
pub mod diff;
pub mod file_refs;
pub mod objects;
pub mod store;

pub use store::{CachedDocument, ContentCache, Loader, NewRevision, RenderedKey, RevisionMeta, StoredTree};
