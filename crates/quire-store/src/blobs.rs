//! File bytes as domain functions see them: stored once per space and content hash, somewhere
//! this crate does not know. `quire-blobs` implements [`Blobs`] twice (a local directory, an
//! S3-compatible bucket); it lives in its own crate because an S3 client is an HTTP client, and
//! this one has no HTTP in it.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;

use crate::StoreResult;

/// What a call to a [`Blobs`] gives back: a failing or slow store is `Unavailable`.
pub type BlobFuture<'a, T> = Pin<Box<dyn Future<Output = StoreResult<T>> + Send + 'a>>;

/// Where file bytes live, by space and content hash.
pub trait Blobs: Send + Sync {
    /// Stores bytes of a space under `hash`, their content hash (idempotent).
    fn put_hashed<'a>(&'a self, space_id: &'a str, hash: &'a str, bytes: Bytes) -> BlobFuture<'a, ()>;

    /// Copies a blob to another space (duplicating a space).
    fn copy<'a>(&'a self, from_space: &'a str, to_space: &'a str, hash: &'a str) -> BlobFuture<'a, ()>;

    /// Deletes one blob of a space (idempotent).
    fn delete<'a>(&'a self, space_id: &'a str, hash: &'a str) -> BlobFuture<'a, ()>;

    /// Deletes every blob of a space.
    fn delete_space<'a>(&'a self, space_id: &'a str) -> BlobFuture<'a, ()>;
}
