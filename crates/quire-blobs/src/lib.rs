//! File bytes, stored once per space and content hash in an object store: a local directory by
//! default, an S3-compatible bucket by configuration.
//!
//! A bucket is another server that can be down, slow or failing. Every call here is bounded by
//! [`BlobStore::CALL_BUDGET`] (retries included), and any failure of the store is
//! [`ErrorKind::Unavailable`]: the client is told to retry, never that its request was wrong,
//! and the caller leaves its rows as they were.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as StorePath;
use object_store::{ClientConfigKey, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use quire_content::buckets::content_hash;

use quire_store::blobs::BlobFuture;
use quire_store::{ErrorKind, StoreError, StoreResult};

/// Where file bytes live.
#[derive(Clone)]
pub struct BlobStore {
    store: Arc<dyn ObjectStore>,
    budget: Duration,
}

/// Options of an S3-compatible bucket that may be given in its URL's query
/// (`s3://bucket/prefix?endpoint=http://minio:9000&allow_http=true`), beside the `AWS_*`
/// variables. Credentials are not among them: they would end up in logs and process lists.
const URL_OPTIONS: &[&str] = &[
    "endpoint",
    "region",
    "allow_http",
    "skip_signature",
    "virtual_hosted_style_request",
];

impl BlobStore {
    /// The longest one call to the store may take, its retries included, by default.
    pub const CALL_BUDGET: Duration = Duration::from_secs(10);

    /// A local directory, created if missing.
    pub fn local(dir: &std::path::Path) -> Result<BlobStore, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let store = object_store::local::LocalFileSystem::new_with_prefix(dir).map_err(|e| e.to_string())?;
        Ok(BlobStore {
            store: Arc::new(store),
            budget: Self::CALL_BUDGET,
        })
    }

    /// An S3-compatible bucket (`s3://bucket/prefix?option=value`), with credentials and
    /// endpoint from the standard `AWS_*` environment variables and the URL's options
    /// ([`URL_OPTIONS`]). Each call gives up after `budget`: connections after a fifth of it,
    /// a request after half, and it is retried (idempotent calls only) within the budget.
    pub fn s3(url: &str, budget: Duration) -> Result<BlobStore, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("object store URL {url:?}: {e}"))?;
        let mut builder = AmazonS3Builder::from_env().with_url(format!(
            "s3://{}",
            parsed
                .host_str()
                .ok_or_else(|| format!("object store URL {url:?} names no bucket"))?
        ));
        for (key, value) in parsed.query_pairs() {
            if !URL_OPTIONS.contains(&key.as_ref()) {
                return Err(format!(
                    "object store URL option {key:?} is not supported (one of {})",
                    URL_OPTIONS.join(", ")
                ));
            }
            let key: AmazonS3ConfigKey = key
                .parse()
                .map_err(|e| format!("object store URL option {key:?}: {e}"))?;
            builder = builder.with_config(key, value.into_owned());
        }
        let seconds = |d: Duration| format!("{}ms", d.as_millis().max(1));
        let store = builder
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
                seconds(budget / 5),
            )
            .with_config(
                AmazonS3ConfigKey::Client(ClientConfigKey::Timeout),
                seconds(budget / 2),
            )
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: budget,
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| e.to_string())?;
        let prefix = parsed.path().trim_matches('/').to_string();
        let store: Arc<dyn ObjectStore> = if prefix.is_empty() {
            Arc::new(store)
        } else {
            Arc::new(object_store::prefix::PrefixStore::new(store, prefix))
        };
        Ok(BlobStore { store, budget })
    }

    /// Blobs live under their space, so that purging a space removes its bytes without any
    /// reference counting across spaces (and without its races).
    fn path(space_id: &str, hash: &str) -> StorePath {
        StorePath::from(format!("spaces/{space_id}/blobs/{hash}"))
    }

    /// Runs one call to the store within the budget; a failure or a timeout is `Unavailable`
    /// (logged with what was being done), NotFound is given back to the caller to judge.
    async fn bounded<T>(
        &self,
        doing: &str,
        call: impl std::future::Future<Output = object_store::Result<T>>,
    ) -> StoreResult<Result<T, NotFound>> {
        match tokio::time::timeout(self.budget, call).await {
            Ok(Ok(value)) => Ok(Ok(value)),
            Ok(Err(object_store::Error::NotFound { .. })) => Ok(Err(NotFound)),
            Ok(Err(e)) => Err(unavailable(doing, &e)),
            Err(_) => Err(unavailable(doing, &format!("no answer within {:?}", self.budget))),
        }
    }

    /// Stores bytes of a space under their hash (idempotent) and returns the hash.
    pub async fn put(&self, space_id: &str, bytes: Bytes) -> StoreResult<String> {
        let hash = content_hash(&bytes);
        self.put_hashed(space_id, &hash, bytes).await?;
        Ok(hash)
    }

    /// Stores bytes of a space under `hash`, their content hash (idempotent).
    pub async fn put_hashed(&self, space_id: &str, hash: &str, bytes: Bytes) -> StoreResult<()> {
        let path = Self::path(space_id, hash);
        if self
            .bounded("check a file", self.store.head(&path))
            .await?
            .is_ok()
        {
            return Ok(());
        }
        self.bounded("store a file", self.store.put(&path, PutPayload::from(bytes)))
            .await?
            .map_err(|NotFound| unavailable("store a file", &"the bucket is missing"))?;
        Ok(())
    }

    /// Deletes one blob of a space (idempotent).
    pub async fn delete(&self, space_id: &str, hash: &str) -> StoreResult<()> {
        let _gone_already = self
            .bounded("delete a file", self.store.delete(&Self::path(space_id, hash)))
            .await?;
        Ok(())
    }

    /// Opens a blob for reading.
    pub async fn get(&self, space_id: &str, hash: &str) -> StoreResult<object_store::GetResult> {
        self.bounded("read a file", self.store.get(&Self::path(space_id, hash)))
            .await?
            .map_err(|NotFound| StoreError::not_found("file not found"))
    }

    /// Copies a blob to another space (duplicating a space).
    pub async fn copy(&self, from_space: &str, to_space: &str, hash: &str) -> StoreResult<()> {
        let (from, to) = (Self::path(from_space, hash), Self::path(to_space, hash));
        self.bounded("copy a file", self.store.copy(&from, &to))
            .await?
            .map_err(|NotFound| StoreError::internal(format!("blob {hash} of space {from_space} is missing")))
    }

    /// Deletes every blob of a space.
    pub async fn delete_space(&self, space_id: &str) -> StoreResult<()> {
        for (location, _) in self.list(&format!("spaces/{space_id}")).await? {
            let _gone_already = self
                .bounded("delete a file", self.store.delete(&StorePath::from(location)))
                .await?;
        }
        Ok(())
    }

    /// Every object under `prefix` (`spaces/<id>/blobs`, or `""` for all), with its size: what
    /// a quota audit, or a test checking that a refused request stored nothing, counts.
    pub async fn list(&self, prefix: &str) -> StoreResult<Vec<(String, u64)>> {
        let prefix = (!prefix.is_empty()).then(|| StorePath::from(prefix));
        let listing = async {
            let mut listing = self.store.list(prefix.as_ref());
            let mut objects = Vec::new();
            while let Some(meta) = listing.next().await {
                let meta = meta?;
                objects.push((meta.location.to_string(), meta.size));
            }
            Ok(objects)
        };
        Ok(self.bounded("list files", listing).await?.unwrap_or_default())
    }

    /// Whether the store answers: a read of a path that does not exist must come back, as
    /// "not found", within the budget.
    pub async fn check(&self) -> StoreResult<()> {
        let probe = StorePath::from("readiness-probe");
        let _found_or_not = self
            .bounded("reach the file store", self.store.head(&probe))
            .await?;
        Ok(())
    }
}

/// The store as domain functions use it (`quire_store::blobs`).
impl quire_store::blobs::Blobs for BlobStore {
    fn put_hashed<'a>(&'a self, space_id: &'a str, hash: &'a str, bytes: Bytes) -> BlobFuture<'a, ()> {
        Box::pin(BlobStore::put_hashed(self, space_id, hash, bytes))
    }

    fn copy<'a>(&'a self, from_space: &'a str, to_space: &'a str, hash: &'a str) -> BlobFuture<'a, ()> {
        Box::pin(BlobStore::copy(self, from_space, to_space, hash))
    }

    fn delete<'a>(&'a self, space_id: &'a str, hash: &'a str) -> BlobFuture<'a, ()> {
        Box::pin(BlobStore::delete(self, space_id, hash))
    }

    fn delete_space<'a>(&'a self, space_id: &'a str) -> BlobFuture<'a, ()> {
        Box::pin(BlobStore::delete_space(self, space_id))
    }
}

/// The store answered that the object does not exist.
struct NotFound;

fn unavailable(doing: &str, error: &dyn std::fmt::Display) -> StoreError {
    tracing::error!(error = %error, "cannot {doing}: the file store failed");
    StoreError::new(
        ErrorKind::Unavailable,
        format!("cannot {doing}: the file store is not reachable, retry shortly"),
    )
}
