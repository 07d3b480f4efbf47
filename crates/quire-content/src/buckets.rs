//! How a [`Tree`] is stored: its entries spread over content-addressed buckets, so that a
//! revision that changes one page writes one small bucket and a root, never a copy of the tree.
//!
//! An entry's bucket is a stable hash of its id modulo the bucket count, a power of two chosen
//! for about [`TARGET_PER_BUCKET`] entries each. The root lists the bucket hashes (empty for an
//! empty bucket) and holds the revision's variables. Bucket bytes are the JSON array of the
//! entries sorted by id, and their name is the SHA-256 of those bytes, so equal buckets are
//! stored once.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use imbl::ordmap::DiffItem;

use crate::tree::{Entries, FileEntry, PageEntry, ReusableEntry, Tree};

/// Entries per bucket the count aims at.
pub const TARGET_PER_BUCKET: usize = 48;

/// One stored entry. Short-lived (encoding and decoding), so the size of the page variant
/// does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "k")]
pub enum Entry {
    #[serde(rename = "p")]
    Page(PageEntry),
    #[serde(rename = "f")]
    File(FileEntry),
    #[serde(rename = "r")]
    Reusable(ReusableEntry),
}

/// The root object of a stored revision.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// Bucket hashes by bucket number; empty string for an empty bucket.
    #[serde(rename = "b")]
    pub buckets: Vec<String>,
    #[serde(rename = "v", default, skip_serializing_if = "Map::is_empty")]
    pub variables: Map<String, Value>,
}

impl Root {
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Root, serde_json::Error> {
        serde_json::from_slice(bytes)
    }

    /// The non-empty bucket hashes.
    pub fn bucket_hashes(&self) -> impl Iterator<Item = &str> {
        self.buckets.iter().map(String::as_str).filter(|h| !h.is_empty())
    }
}

/// SHA-256 of `bytes`, hex-encoded: the name of stored objects (and of API tokens).
pub fn content_hash(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(64);
    for b in Sha256::digest(bytes) {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    out
}

/// The number of buckets for `entries` entries: a power of two.
pub fn bucket_count(entries: usize) -> usize {
    entries.div_ceil(TARGET_PER_BUCKET).max(1).next_power_of_two()
}

/// FNV-1a of the id: stable across versions and platforms, as stored data depends on it.
pub fn bucket_of(id: &str, count: usize) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    usize::try_from(hash % count.max(1) as u64).unwrap_or(0)
}

/// A bucket's entries.
#[derive(Default)]
struct Group<'a> {
    pages: Vec<&'a Arc<PageEntry>>,
    files: Vec<&'a Arc<FileEntry>>,
    reusable: Vec<&'a Arc<ReusableEntry>>,
}

impl Group<'_> {
    fn is_empty(&self) -> bool {
        self.pages.is_empty() && self.files.is_empty() && self.reusable.is_empty()
    }

    fn encode(&self) -> Vec<u8> {
        let mut entries: Vec<(&str, Entry)> = Vec::new();
        entries.extend(
            self.pages
                .iter()
                .map(|p| (p.id.as_str(), Entry::Page((***p).clone()))),
        );
        entries.extend(
            self.files
                .iter()
                .map(|f| (f.id.as_str(), Entry::File((***f).clone()))),
        );
        entries.extend(
            self.reusable
                .iter()
                .map(|r| (r.id.as_str(), Entry::Reusable((***r).clone()))),
        );
        entries.sort_by(|a, b| a.0.cmp(b.0));
        let entries: Vec<Entry> = entries.into_iter().map(|(_, e)| e).collect();
        serde_json::to_vec(&entries).unwrap_or_default()
    }
}

/// The entries of the buckets `wanted` says to rebuild (all when it is `None`), grouped by
/// bucket; the others stay empty.
fn group<'t>(tree: &'t Tree, count: usize, wanted: Option<&[bool]>) -> Vec<Group<'t>> {
    let mut groups: Vec<Group<'_>> = (0..count).map(|_| Group::default()).collect();
    let keep = |i: usize| wanted.is_none_or(|w| w[i]);
    // Map iteration is sorted by id, so each group's lists are sorted too.
    for (id, page) in &tree.pages {
        let i = bucket_of(id, count);
        if keep(i) {
            groups[i].pages.push(page);
        }
    }
    for (id, file) in &tree.files {
        let i = bucket_of(id, count);
        if keep(i) {
            groups[i].files.push(file);
        }
    }
    for (id, reusable) in &tree.reusable {
        let i = bucket_of(id, count);
        if keep(i) {
            groups[i].reusable.push(reusable);
        }
    }
    groups
}

/// Which buckets hold an entry that differs between `tree` and `base`. The maps share every
/// node a batch did not touch, and their diff skips shared nodes, so a one-page change costs
/// a walk down a few nodes, not a comparison of every entry.
fn changed_buckets(tree: &Tree, base: &Tree, count: usize) -> Vec<bool> {
    fn mark<T: PartialEq>(dirty: &mut [bool], new: &Entries<T>, old: &Entries<T>, count: usize) {
        for change in old.diff(new) {
            let id = match change {
                DiffItem::Add(id, _) | DiffItem::Remove(id, _) => id,
                DiffItem::Update { new: (id, _), .. } => id,
            };
            dirty[bucket_of(id, count)] = true;
        }
    }
    let mut dirty = vec![false; count];
    mark(&mut dirty, &tree.pages, &base.pages, count);
    mark(&mut dirty, &tree.files, &base.files, count);
    mark(&mut dirty, &tree.reusable, &base.reusable, count);
    dirty
}

/// The stored form of `tree`: its root and the buckets to write (hash, bytes). With the tree
/// and root it was derived from, only buckets holding a changed entry are encoded again; the
/// others keep their stored names.
pub fn store(tree: &Tree, base: Option<(&Tree, &Root)>) -> (Root, Vec<(String, Vec<u8>)>) {
    let entries = tree.pages.len() + tree.files.len() + tree.reusable.len();
    let count = bucket_count(entries);
    let base = base
        .filter(|(_, root)| root.buckets.len() == count)
        .map(|(t, root)| (changed_buckets(tree, t, count), root));
    let groups = group(tree, count, base.as_ref().map(|(dirty, _)| dirty.as_slice()));
    let mut buckets = Vec::with_capacity(count);
    let mut writes = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        if let Some((dirty, root)) = &base
            && !dirty[i]
        {
            buckets.push(root.buckets[i].clone());
            continue;
        }
        if g.is_empty() {
            buckets.push(String::new());
            continue;
        }
        let bytes = g.encode();
        let hash = content_hash(&bytes);
        buckets.push(hash.clone());
        writes.push((hash, bytes));
    }
    (
        Root {
            buckets,
            variables: tree.variables.clone(),
        },
        writes,
    )
}

/// Rebuilds a tree from its root and the bytes of its buckets.
pub fn load<'a>(root: &Root, buckets: impl IntoIterator<Item = &'a [u8]>) -> Result<Tree, serde_json::Error> {
    let mut tree = Tree {
        variables: root.variables.clone(),
        ..Tree::default()
    };
    for bytes in buckets {
        let entries: Vec<Entry> = serde_json::from_slice(bytes)?;
        for entry in entries {
            match entry {
                Entry::Page(p) => {
                    tree.pages.insert(p.id.clone(), Arc::new(p));
                }
                Entry::File(f) => {
                    tree.files.insert(f.id.clone(), Arc::new(f));
                }
                Entry::Reusable(r) => {
                    tree.reusable.insert(r.id.clone(), Arc::new(r));
                }
            }
        }
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{PageEntry, PageKind};

    fn tree_of(n: usize) -> Tree {
        let mut t = Tree::default();
        for i in 0..n {
            let mut p = PageEntry::new(&format!("page{i:05}"), PageKind::Document, &format!("P{i}"), 0);
            p.slug = format!("p{i}");
            p.order = format!("a{i:05}");
            t.pages.insert(p.id.clone(), Arc::new(p));
        }
        t
    }

    #[test]
    fn round_trips_and_changes_write_one_bucket() {
        let base = tree_of(1000);
        let (root, writes) = store(&base, None);
        assert_eq!(root.buckets.len(), bucket_count(1000));
        assert_eq!(writes.len(), root.bucket_hashes().count());
        let loaded = load(&root, writes.iter().map(|(_, b)| b.as_slice())).unwrap();
        assert_eq!(loaded, base);
        // One changed page: one bucket written, the others reused.
        let mut next = base.clone();
        let mut changed = (*next.pages["page00007"]).clone();
        changed.title = "Changed".into();
        next.replace_page(changed);
        let (root2, writes2) = store(&next, Some((&base, &root)));
        assert_eq!(writes2.len(), 1);
        let differing = root
            .buckets
            .iter()
            .zip(&root2.buckets)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(differing, 1);
    }

    #[test]
    fn incremental_store_names_the_same_buckets_as_a_full_one() {
        let base = tree_of(1000);
        let (root, _) = store(&base, None);
        let mut next = base.clone();
        let mut changed = (*next.pages["page00042"]).clone();
        changed.title = "Changed".into();
        next.replace_page(changed);
        next.pages.remove("page00500");
        let mut added = PageEntry::new("page-new", PageKind::Document, "New", 0);
        added.slug = "new".into();
        added.order = "z".into();
        next.pages.insert(added.id.clone(), Arc::new(added));
        // The same value under a new allocation is not a change.
        let same = (*next.pages["page00007"]).clone();
        next.pages.insert(same.id.clone(), Arc::new(same));
        let (incremental, writes) = store(&next, Some((&base, &root)));
        let (full, _) = store(&next, None);
        assert_eq!(incremental, full);
        assert!(
            (2..=3).contains(&writes.len()),
            "{} buckets written",
            writes.len()
        );
    }

    #[test]
    fn buckets_are_stable_and_bounded() {
        assert_eq!(bucket_count(0), 1);
        assert_eq!(bucket_count(48), 1);
        assert_eq!(bucket_count(49), 2);
        assert_eq!(bucket_count(10_000), 256);
        assert_eq!(bucket_of("abc", 256), bucket_of("abc", 256));
        assert!(bucket_of("abc", 4) < 4);
        assert_eq!(
            content_hash(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
