//! Revisions and their content in the database: content-addressed objects (page documents and
//! tree buckets) and revision rows, with an in-process cache.
//!
//! The cache holds only immutable things, keyed by what identifies them forever (a revision id,
//! a content hash), so it is safe with any number of processes: nothing in it can go stale.

use std::sync::{Arc, OnceLock};

use quick_cache::sync::Cache;
use quick_cache::{OptionsBuilder, Weighter};
use quire_content::buckets::{self, Root};
use quire_content::raw_document::Outline;
use quire_content::tree::{Tree, TreeIndex};
use quire_content::{Document, changes};

use crate::db::{Conn, DbError};
use crate::error::{StoreError, StoreResult};
use crate::{clock, ids, params};

/// A revision's metadata and content.
#[derive(Debug)]
pub struct StoredTree {
    pub meta: RevisionMeta,
    pub tree: Tree,
    pub root: Root,
    index: OnceLock<TreeIndex>,
}

impl StoredTree {
    /// Children and paths, computed once per revision.
    pub fn index(&self) -> &TreeIndex {
        self.index.get_or_init(|| self.tree.index())
    }

    pub fn id(&self) -> &str {
        &self.meta.id
    }

    /// An empty revision, to compare a first revision with.
    pub fn empty(space_id: &str) -> StoredTree {
        StoredTree {
            meta: RevisionMeta {
                id: String::new(),
                space_id: space_id.to_string(),
                kind: "edits".into(),
                parents: Vec::new(),
                change_request: None,
                merged_from: None,
                created_at: 0,
            },
            tree: Tree::default(),
            root: Root::default(),
            index: OnceLock::new(),
        }
    }
}

/// A revision row.
#[derive(Debug, Clone)]
pub struct RevisionMeta {
    pub id: String,
    pub space_id: String,
    pub kind: String,
    pub parents: Vec<String>,
    pub change_request: Option<String>,
    pub merged_from: Option<String>,
    pub created_at: i64,
}

#[derive(Clone)]
struct TreeWeight;

impl Weighter<String, Arc<StoredTree>> for TreeWeight {
    fn weight(&self, _: &String, tree: &Arc<StoredTree>) -> u64 {
        1 + (tree.tree.pages.len() + tree.tree.files.len()) as u64
    }
}

#[derive(Clone)]
struct DocWeight;

impl Weighter<(String, String), Arc<CachedDocument>> for DocWeight {
    fn weight(&self, _: &(String, String), doc: &Arc<CachedDocument>) -> u64 {
        // A parsed document (nodes, leaves, data maps) takes about ten times its JSON in
        // memory: 32 MB of cached JSON weighed as itself grew the server by 300 MB.
        doc.bytes as u64 * 10
    }
}

#[derive(Clone)]
struct BytesWeight;

impl Weighter<RenderedKey, bytes::Bytes> for BytesWeight {
    fn weight(&self, key: &RenderedKey, body: &bytes::Bytes) -> u64 {
        // Keys count too: a compressed page answer is about 1 KB, its key a fifth of that.
        (body.len() + key.revision.len() + key.org_id.len() + key.options.len() + 64) as u64
    }
}

/// What a rendered answer about a whole revision depends on besides the revision: the
/// organization in its URLs (a space can move) and the options of the read.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct RenderedKey {
    pub what: &'static str,
    pub revision: String,
    pub org_id: String,
    pub options: String,
}

/// A parsed document and the size of its stored JSON.
#[derive(Debug)]
pub struct CachedDocument {
    pub document: Document,
    bytes: usize,
}

/// A document parsed by whoever made it (a merge), so that it is not parsed again from its
/// bytes. Its size is left at 0: such a document is only pinned, never weighed by the cache.
impl From<Document> for CachedDocument {
    fn from(document: Document) -> Self {
        CachedDocument { document, bytes: 0 }
    }
}

impl CachedDocument {
    /// Parses document `hash` of a space from its stored JSON.
    fn parse(space_id: &str, hash: &str, json: &str) -> StoreResult<CachedDocument> {
        let document = serde_json::from_str(json)
            .map_err(|e| decode_error(format_args!("document {hash} of space {space_id:?}"), e))?;
        Ok(CachedDocument {
            document,
            bytes: json.len(),
        })
    }
}

/// The content cache of one process.
pub struct ContentCache {
    trees: Cache<String, Arc<StoredTree>, TreeWeight>,
    documents: Cache<(String, String), Arc<CachedDocument>, DocWeight>,
    /// Serialized answers that are the same for every caller who may read the revision (the
    /// page tree): a 10,000-page tree is 8 MB of JSON that took 70 ms to render.
    rendered: Cache<RenderedKey, bytes::Bytes, BytesWeight>,
    /// Pages as answered (with their markdown or document), about 1 KB each gzip-compressed: a
    /// hit costs a tenth of rendering again from the parsed document, which itself takes ten
    /// times its JSON in memory. 24 MB holds every page of a 10,000-page space compressed.
    pages: Cache<RenderedKey, bytes::Bytes, BytesWeight>,
    /// Documents a merge parsed before its write transaction, which the transaction's index
    /// updates need again, whatever their size (`documents` keeps none heavier than its shard,
    /// and a page at the content limits is 20 MB of JSON): held, with a count of holders, only
    /// while the merge runs (see [`ContentCache::pin`]).
    pinned: std::sync::Mutex<Pinned>,
}

/// Pinned documents by (space, hash), with how many operations hold each.
type Pinned = std::collections::HashMap<(String, String), (Arc<CachedDocument>, usize)>;

impl Default for ContentCache {
    fn default() -> Self {
        ContentCache {
            // About 200,000 page entries across cached revisions (entries are shared between
            // revisions derived from one another, so this is an upper bound on memory; with
            // half as many, four writers of change requests on a 10,000-page space decoded
            // trees again and wrote half as fast), and about 32 MB of parsed documents.
            trees: one_shard(256, 200_000, TreeWeight),
            documents: Cache::with_weighter(8_192, 16 * 1024 * 1024, DocWeight),
            rendered: one_shard(64, 16 * 1024 * 1024, BytesWeight),
            pages: Cache::with_weighter(16_384, 24 * 1024 * 1024, BytesWeight),
            pinned: Default::default(),
        }
    }
}

/// A cache of few heavy items, in one shard with a large probation area. quick_cache divides its
/// capacity among shards (eight here) and never keeps an item heavier than its shard's share: a
/// 10,000-page tree had a shard to itself and was evicted by the next one. And it admits new
/// items into a cold area of 3% by default: once the hot area was full of older trees, each new
/// revision was evicted before its next batch could read it, so writers decoded the tree again
/// on every batch.
fn one_shard<K, V, W>(items: usize, weight: u64, weighter: W) -> Cache<K, V, W>
where
    K: Eq + std::hash::Hash,
    V: Clone,
    W: Weighter<K, V> + Clone,
{
    let options = OptionsBuilder::new()
        .estimated_items_capacity(items)
        .weight_capacity(weight)
        .shards(1)
        .hot_allocation(0.5)
        .build();
    match options {
        Ok(options) => Cache::with_options(options, weighter, Default::default(), Default::default()),
        Err(_) => Cache::with_weighter(items, weight, weighter),
    }
}

impl ContentCache {
    /// How full each cache is (documents weigh ten times their JSON, see `DocWeight`).
    pub fn sizes(&self) -> Vec<crate::stamped::CacheSize> {
        use crate::stamped::CacheSize;
        vec![
            CacheSize::of("content_trees", "entries", &self.trees),
            CacheSize::of("content_documents", "bytes", &self.documents),
            CacheSize::of("content_rendered", "bytes", &self.rendered),
            CacheSize::of("content_pages", "bytes", &self.pages),
        ]
    }

    /// Holds parsed documents of a space until [`ContentCache::unpin`] with the keys returned.
    pub fn pin(
        &self,
        space_id: &str,
        documents: Vec<(String, Arc<CachedDocument>)>,
    ) -> Vec<(String, String)> {
        let mut pinned = self
            .pinned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        documents
            .into_iter()
            .map(|(hash, document)| {
                let key = (space_id.to_string(), hash);
                pinned.entry(key.clone()).or_insert((document, 0)).1 += 1;
                key
            })
            .collect()
    }

    /// Releases documents [`ContentCache::pin`] held; returns those no merge holds any more,
    /// for the caller to free when it suits it.
    pub fn unpin(&self, keys: &[(String, String)]) -> Vec<Arc<CachedDocument>> {
        let mut pinned = self
            .pinned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut released = Vec::new();
        for key in keys {
            if let Some(entry) = pinned.get_mut(key) {
                entry.1 -= 1;
                if entry.1 == 0 {
                    released.extend(pinned.remove(key).map(|(document, _)| document));
                }
            }
        }
        released
    }

    /// A cached or pinned document.
    fn document(&self, key: &(String, String)) -> Option<Arc<CachedDocument>> {
        if let Some(document) = self.documents.get(key) {
            return Some(document);
        }
        let pinned = self
            .pinned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pinned.get(key).map(|(document, _)| document.clone())
    }

    /// The cached rendering for `key`, or renders it. Concurrent misses on one key wait for the
    /// first to render: 64 readers of a new revision's tree rendered 8 MB each at once.
    pub fn rendered<E>(
        &self,
        key: RenderedKey,
        render: impl FnOnce() -> Result<bytes::Bytes, E>,
    ) -> Result<bytes::Bytes, E> {
        self.rendered.get_or_insert_with(&key, render)
    }

    /// The cached answer about one page for `key`, if there is one.
    pub fn cached_page(&self, key: &RenderedKey) -> Option<bytes::Bytes> {
        self.pages.get(key)
    }

    /// The cached answer about one page for `key`, or renders and keeps it.
    pub fn page<E>(
        &self,
        key: RenderedKey,
        render: impl FnOnce() -> Result<bytes::Bytes, E>,
    ) -> Result<bytes::Bytes, E> {
        if let Some(body) = self.pages.get(&key) {
            return Ok(body);
        }
        let body = render()?;
        self.pages.insert(key, body.clone());
        Ok(body)
    }

    /// The cached answer for `key`, or the one `render` gives, kept when it says the answer is
    /// exact. Concurrent misses wait for the first, as with [`ContentCache::rendered`]; when it
    /// does not keep its answer, they render their own.
    pub async fn rendered_async<E>(
        &self,
        key: &RenderedKey,
        render: impl Future<Output = Result<(bytes::Bytes, bool), E>>,
    ) -> Result<bytes::Bytes, E> {
        match self.rendered.get_value_or_guard_async(key).await {
            Ok(body) => Ok(body),
            Err(guard) => {
                let (body, exact) = render.await?;
                if exact {
                    let _ = guard.insert(body.clone());
                }
                Ok(body)
            }
        }
    }
}

/// A 500 whose log line names what is unreadable; the client learns nothing of it.
fn decode_error(what: impl std::fmt::Display, e: impl std::fmt::Display) -> StoreError {
    DbError::stored(what, e).into()
}

crate::columns! {
    /// The columns of a revision that [`load_tree`] reads.
    struct RevisionCols of "revisions" {
        id: "id",
        space_id: "space_id",
        kind: "kind",
        parents: "parents",
        root: "root",
        change_request: "change_request_id",
        merged_from: "merged_from",
        created_at: "created_at",
    }
}

/// Loads a revision of a space (404 when the space has no such revision).
pub fn load_tree(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    revision_id: &str,
) -> StoreResult<Arc<StoredTree>> {
    if let Some(tree) = cache.trees.get(revision_id)
        && tree.meta.space_id == space_id
    {
        return Ok(tree);
    }
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "SELECT {} FROM revisions WHERE id = ?1 AND space_id = ?2",
            RevisionCols::SQL
        )
    });
    const R: RevisionCols = RevisionCols::AT;
    let row = c
        .query_opt(&SQL, params![revision_id, space_id])?
        .ok_or_else(|| StoreError::not_found(format!("revision {revision_id:?} not found in this space")))?;
    let parents: String = row.col(R.parents)?;
    let root_text: String = row.col(R.root)?;
    let meta = RevisionMeta {
        id: row.col(R.id)?,
        space_id: row.col(R.space_id)?,
        kind: row.col(R.kind)?,
        parents: serde_json::from_str(&parents)
            .map_err(|e| decode_error(format_args!("parents of revision {revision_id:?}"), e))?,
        change_request: row.col(R.change_request)?,
        merged_from: row.col(R.merged_from)?,
        created_at: row.col(R.created_at)?,
    };
    let root = Root::from_bytes(root_text.as_bytes())
        .map_err(|e| decode_error(format_args!("root of revision {revision_id:?}"), e))?;
    let hashes: Vec<&str> = root.bucket_hashes().collect();
    let bodies: std::collections::HashMap<String, String> =
        load_objects(c, space_id, &hashes)?.into_iter().collect();
    let mut ordered = Vec::with_capacity(hashes.len());
    for h in &hashes {
        let body = bodies
            .get(*h)
            .ok_or_else(|| DbError::Other(format!("bucket {h} of revision {revision_id:?} is missing")))?;
        ordered.push(body.as_bytes());
    }
    let tree = buckets::load(&root, ordered)
        .map_err(|e| decode_error(format_args!("buckets of revision {revision_id:?}"), e))?;
    tracing::debug!(
        revision = revision_id,
        pages = tree.pages.len(),
        "decoded a revision tree"
    );
    let stored = Arc::new(StoredTree {
        meta,
        tree,
        root,
        index: OnceLock::new(),
    });
    cache.trees.insert(revision_id.to_string(), stored.clone());
    Ok(stored)
}

/// Loads objects by hash (documents whole), in chunks that stay under every engine's
/// parameter limit.
fn load_objects(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<(String, String)>> {
    super::objects::load(c, space_id, hashes)
}

/// Loads a document by its content hash.
pub fn load_document(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hash: &str,
) -> StoreResult<Arc<CachedDocument>> {
    let key = (space_id.to_string(), hash.to_string());
    if let Some(doc) = cache.document(&key) {
        return Ok(doc);
    }
    let doc = Arc::new(read_document(c, space_id, hash)?);
    cache.documents.insert(key, doc.clone());
    Ok(doc)
}

/// A document to change or consume, for an answer that is cached itself (a page's): taken
/// from the document cache when there, otherwise read and parsed without being kept, since
/// keeping it would evict a document that is still wanted and copy this one for the caller.
pub fn owned_document(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hash: &str,
) -> StoreResult<Document> {
    if let Some(doc) = cache.document(&(space_id.to_string(), hash.to_string())) {
        return Ok(doc.document.clone());
    }
    Ok(read_document(c, space_id, hash)?.document)
}

/// A document for an answer that is cached itself (a reader page), as [`owned_document`] but
/// shared: from the document cache when there, otherwise read and parsed without being kept.
/// The reader renders each page once per published load; keeping what it read put 2,186
/// documents of the 10,000-page space through the cache in a second, evicting those the API's
/// page reads wanted, and the freed documents' small blocks, among the pages the reader kept,
/// left the allocator about 10 MB larger (bench/ANALYSIS.md).
pub fn shared_document(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hash: &str,
) -> StoreResult<Arc<CachedDocument>> {
    if let Some(doc) = cache.document(&(space_id.to_string(), hash.to_string())) {
        return Ok(doc);
    }
    Ok(Arc::new(read_document(c, space_id, hash)?))
}

/// A stored document, parsed, with the length of its JSON.
fn read_document(c: &mut dyn Conn, space_id: &str, hash: &str) -> StoreResult<CachedDocument> {
    let body = load_objects(c, space_id, &[hash])?
        .pop()
        .map(|(_, body)| body)
        .ok_or_else(|| DbError::Other(format!("document {hash} of space {space_id:?} is missing")))?;
    CachedDocument::parse(space_id, hash, &body)
}

/// Stored documents as their JSON, in the order of `hashes`, for a merge, which takes them
/// apart itself (most merges of a large page parse none of its versions; see
/// `quire_content::raw_document`). Read in one query; never cached: the document cache keeps
/// parsed documents, and reading the text again costs a fraction of parsing it.
pub fn document_texts(c: &mut dyn Conn, space_id: &str, hashes: &[&str]) -> StoreResult<Vec<String>> {
    let mut wanted: Vec<&str> = hashes.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    let mut read: std::collections::HashMap<String, String> =
        load_objects(c, space_id, &wanted)?.into_iter().collect();
    hashes
        .iter()
        .enumerate()
        .map(|(i, hash)| {
            // A hash asked for again later is copied; its last answer takes the text.
            let text = if hashes[i + 1..].contains(hash) {
                read.get(*hash).cloned()
            } else {
                read.remove(*hash)
            };
            text.ok_or_else(|| {
                StoreError::from(DbError::Other(format!(
                    "document {hash} of space {space_id:?} is missing"
                )))
            })
        })
        .collect()
}

/// Loads the documents of many pages at once (hash → document), for reads that need them all.
pub fn load_documents(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hashes: &[&str],
) -> StoreResult<std::collections::HashMap<String, Arc<CachedDocument>>> {
    let (cached, mut missing) = cached_and_missing(cache, space_id, hashes);
    let mut out: std::collections::HashMap<_, _> = cached.into_iter().collect();
    missing.sort_unstable();
    missing.dedup();
    for (hash, body) in load_objects(c, space_id, &missing)? {
        let doc = Arc::new(CachedDocument::parse(space_id, &hash, &body)?);
        cache
            .documents
            .insert((space_id.to_string(), hash.clone()), doc.clone());
        out.insert(hash, doc);
    }
    Ok(out)
}

/// The documents of `hashes` that are cached, and of the others those whose stored JSON's
/// length `keep` accepts (asked in turn), parsed but not put in the cache: for a merge that
/// holds them through its transaction and bounds how much it holds.
pub fn load_documents_if(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    hashes: &[&str],
    mut keep: impl FnMut(usize) -> bool,
) -> StoreResult<Vec<(String, Arc<CachedDocument>)>> {
    let (mut out, missing) = cached_and_missing(cache, space_id, hashes);
    for (hash, body) in load_objects(c, space_id, &missing)? {
        if keep(body.len()) {
            let doc = CachedDocument::parse(space_id, &hash, &body)?;
            out.push((hash, Arc::new(doc)));
        }
    }
    Ok(out)
}

/// The documents of `hashes` in the cache (by hash), and the hashes of the others.
fn cached_and_missing<'a>(
    cache: &ContentCache,
    space_id: &str,
    hashes: &[&'a str],
) -> (Vec<(String, Arc<CachedDocument>)>, Vec<&'a str>) {
    let mut cached = Vec::new();
    let mut missing = Vec::new();
    for h in hashes {
        match cache.document(&(space_id.to_string(), h.to_string())) {
            Some(doc) => cached.push((h.to_string(), doc)),
            None => missing.push(*h),
        }
    }
    (cached, missing)
}

/// Stores objects (documents, buckets); objects already stored are left alone.
pub fn put_objects(c: &mut dyn Conn, space_id: &str, objects: &[(String, Vec<u8>)]) -> StoreResult<()> {
    super::objects::put(c, space_id, objects)
}

/// What a new revision is.
pub struct NewRevision<'a> {
    pub space_id: &'a str,
    pub kind: &'a str,
    pub parents: Vec<String>,
    pub change_request: Option<&'a str>,
    pub merged_from: Option<&'a str>,
    pub created_by: Option<&'a str>,
}

/// Writes a revision: the documents it introduces, the buckets that changed since `base`, and
/// the revision row.
pub fn write_revision(
    c: &mut dyn Conn,
    cache: &ContentCache,
    new: NewRevision<'_>,
    base: Option<&StoredTree>,
    tree: Tree,
    documents: &[(String, Vec<u8>)],
) -> StoreResult<Arc<StoredTree>> {
    let (root, bucket_writes) = buckets::store(&tree, base.map(|b| (&b.tree, &b.root)));
    put_objects(c, new.space_id, documents)?;
    put_objects(c, new.space_id, &bucket_writes)?;
    let now = clock::now_ms();
    let id = ids::new_id();
    let parents = serde_json::to_string(&new.parents).unwrap_or_else(|_| "[]".into());
    let root_text = String::from_utf8_lossy(&root.to_bytes()).into_owned();
    c.execute(
        "INSERT INTO revisions (id, space_id, kind, parents, root, change_request_id, merged_from, created_by, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            id.clone(),
            new.space_id,
            new.kind,
            parents,
            root_text,
            new.change_request,
            new.merged_from,
            new.created_by,
            now
        ],
    )?;
    // The files it introduces over its base, for collecting unreferenced bytes (a base of
    // another space, when duplicating one, introduces nothing here).
    let same_space = base.filter(|b| b.meta.space_id == new.space_id);
    super::file_refs::record_refs(
        c,
        new.space_id,
        &id,
        new.change_request,
        same_space.map(|b| &b.tree),
        &tree,
    )?;
    let stored = Arc::new(StoredTree {
        meta: RevisionMeta {
            id: id.clone(),
            space_id: new.space_id.to_string(),
            kind: new.kind.to_string(),
            parents: new.parents,
            change_request: new.change_request.map(str::to_string),
            merged_from: new.merged_from.map(str::to_string),
            created_at: now,
        },
        tree,
        root,
        index: OnceLock::new(),
    });
    // A rolled-back transaction leaves an entry under an id nothing refers to: harmless.
    cache.trees.insert(id, stored.clone());
    Ok(stored)
}

/// The document of a new empty page.
pub fn empty_document() -> (String, Vec<u8>) {
    changes::encode_document(&Document::default())
}

/// Documents and trees for the pure content code (`apply_batch`, `merge`), which asks for them
/// with `Fn(&str) -> Option<..>`: reads through one connection and keeps the first error, so
/// that a failed read (a dropped PostgreSQL connection, say) fails the operation instead of
/// passing for a missing document.
pub struct Loader<'c> {
    conn: std::cell::RefCell<&'c mut dyn Conn>,
    cache: &'c ContentCache,
    space_id: &'c str,
    failure: std::cell::RefCell<Option<StoreError>>,
}

impl<'c> Loader<'c> {
    pub fn new(conn: &'c mut dyn Conn, cache: &'c ContentCache, space_id: &'c str) -> Loader<'c> {
        Loader {
            conn: std::cell::RefCell::new(conn),
            cache,
            space_id,
            failure: std::cell::RefCell::new(None),
        }
    }

    fn keep<T>(&self, result: StoreResult<T>) -> Option<T> {
        result
            .map_err(|e| {
                self.failure.borrow_mut().get_or_insert(e);
            })
            .ok()
    }

    pub fn document(&self, hash: &str) -> Option<Document> {
        let loaded = load_document(&mut **self.conn.borrow_mut(), self.cache, self.space_id, hash);
        self.keep(loaded).map(|d| d.document.clone())
    }

    /// Documents as stored, to take apart (a merge's versions of a page): see
    /// [`document_texts`].
    pub fn document_texts(&self, hashes: &[&str]) -> Vec<Option<String>> {
        let loaded = document_texts(&mut **self.conn.borrow_mut(), self.space_id, hashes);
        match self.keep(loaded) {
            Some(documents) => documents.into_iter().map(Some).collect(),
            None => vec![None; hashes.len()],
        }
    }

    /// Documents' top levels (a merge's versions of a page), without the blocks stored apart;
    /// None for a document that cannot be outlined (the merge then reads it whole).
    pub fn outlines(&self, hashes: &[&str]) -> Vec<Option<Outline>> {
        let loaded = super::objects::outlines(&mut **self.conn.borrow_mut(), self.space_id, hashes);
        match self.keep(loaded) {
            Some(found) => {
                let mut found: std::collections::HashMap<String, Outline> = found.into_iter().collect();
                by_hash(hashes, &mut found)
            }
            None => vec![None; hashes.len()],
        }
    }

    /// The JSON of blocks stored apart, by hash.
    pub fn blocks(&self, hashes: &[&str]) -> Vec<Option<String>> {
        let loaded = super::objects::blocks(&mut **self.conn.borrow_mut(), self.space_id, hashes);
        match self.keep(loaded) {
            Some(found) => {
                let mut found: std::collections::HashMap<String, String> = found.into_iter().collect();
                by_hash(hashes, &mut found)
            }
            None => vec![None; hashes.len()],
        }
    }

    pub fn tree(&self, revision: &str) -> Option<Arc<Tree>> {
        let loaded = load_tree(&mut **self.conn.borrow_mut(), self.cache, self.space_id, revision);
        self.keep(loaded).map(|t| Arc::new(t.tree.clone()))
    }

    /// `value`, unless a read failed meanwhile.
    pub fn finish<T>(self, value: T) -> StoreResult<T> {
        match self.failure.into_inner() {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}

/// The values of `found` in the order of `hashes`; a hash asked for twice is copied.
fn by_hash<T: Clone>(hashes: &[&str], found: &mut std::collections::HashMap<String, T>) -> Vec<Option<T>> {
    hashes
        .iter()
        .enumerate()
        .map(|(i, hash)| {
            if hashes[i + 1..].contains(hash) {
                found.get(*hash).cloned()
            } else {
                found.remove(*hash)
            }
        })
        .collect()
}
