//! Three-way merge of revisions: a change request into main (`merge`) and main into a change
//! request (`update`), for page trees, files, reusable contents, variables and page documents.
//!
//! [`merge`] is pure. It takes the common ancestor (`base`) and the two tips (`main`, `change`)
//! and returns the merged tree, the new documents that tree references and the conflicts. It
//! decides nothing about writing: with conflicts the server answers 409 and writes nothing, so
//! the tree of a conflicting outcome is informative (every clean change merged, each conflicting
//! entry in its `change` version) but always valid.
//!
//! # Rules
//!
//! - Entries are matched by id. Unchanged on one side: the other side's version. The same on both
//!   sides: that version. Added on one side: kept. Deleted on one side and unchanged on the
//!   other: deleted (a page with its subtree). Deleted on both: deleted.
//! - A page changed on both sides merges field by field (title, slug, emoji, ... see
//!   [`ConflictKind::Metadata`]); its position (parent and order) is one field, so a move on one
//!   side is taken whole, and different moves on both sides are a [`ConflictKind::Move`].
//! - A page document changed on both sides merges block by block (diff3 over the top-level
//!   blocks, compared by content without keys): a region changed on one side takes that side,
//!   identical changes are taken once, overlapping different changes (two edits of one block, a
//!   delete and an edit, two different insertions at one place) are [`ConflictRegion`]s. Edits of
//!   adjacent blocks do not overlap, so they merge (a side that replaced n blocks by n blocks
//!   edited each in place). A merged document over the limits of [`crate::limits`] (both sides
//!   added many blocks) is a conflict without regions. The merged document keeps its blocks' keys; a key used twice gets a
//!   fresh one.
//! - Deleted on one side and changed (any field, position or document) on the other:
//!   [`ConflictKind::DeleteModify`].
//! - Files and reusable contents are immutable entries: keep, add, delete as above; an entry
//!   changed on both sides, or deleted on one and changed on the other, is a conflict. Variables
//!   merge three-way per name.
//!
//! # Choices
//!
//! - A conflicting entry keeps its `change` version in the tree (absent when `change` deleted
//!   it), except for positions that would break the tree (below).
//! - A page that survives while its parent does not (a page added or moved under a page the
//!   other side deleted, or changed under it) is a [`ConflictKind::DeleteModify`] on the parent.
//!   When `change` still has the parent, the parent comes back in its `change` version, in line
//!   with the rule above; when only `main` has it, the orphan moves to the top level.
//! - Moves on both sides that form a cycle, or nest pages deeper than [`MAX_DEPTH`], are
//!   [`ConflictKind::Move`] conflicts: the pages of a cycle are all reported, and the ones moved by
//!   `change` go back to their `main` position.
//! - Two pages with one slug under one parent (both sides added "intro") are not a conflict:
//!   slugs are cosmetic. The page that holds that slug under that parent in `main` keeps it; the
//!   other (the change request's) becomes `intro-2`, `intro-3`, ... Equal order keys among
//!   siblings (both sides appended a page) are separated the same way, the `main` page first.
//! - The outcome is deterministic: maps are ordered by id, conflicts sorted, and fresh keys drawn
//!   in document order.
//!
//! # Cost
//!
//! Revisions share unchanged entries (`Arc`), so entries are compared by pointer first and by
//! value only when the pointers differ. Documents are loaded only for pages whose document hash
//! changed on both sides, and the structural checks (orphans, cycles, slugs) look only at the
//! pages the merge did not take from `main` unless a move makes a full pass necessary. Merging a
//! 10,000-page tree where a few pages changed is one ordered walk over the ids.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::iter::Peekable;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::changes::encode_document;
use crate::diff::{Fingerprint, common_pairs, fingerprints};
use crate::document::{Document, Node};
use crate::order;
use crate::raw_document::{Outline, assemble};
use crate::tree::{Entries, MAX_DEPTH, PageEntry, Tree};

/// What a merge needs: the three trees and access to stored documents.
pub struct MergeInput<'a> {
    /// The common ancestor of `main` and `change`.
    pub base: &'a Tree,
    /// The space's current revision ("ours" when merging a change request).
    pub main: &'a Tree,
    /// The change request's revision ("theirs" when merging it).
    pub change: &'a Tree,
    /// Stored documents by content hash, as their JSON, one answer per hash asked for, in
    /// order (None: missing or unreadable). A merge asks for the versions of one page together.
    pub documents: &'a dyn Fn(&[&str]) -> Vec<Option<String>>,
    /// The same documents' top levels ([`Outline`]), asked for first: most merges of a page
    /// take whole blocks from one side or the other, and parse no version (see
    /// [`crate::raw_document`]). None: the merge reads the document instead.
    pub outlines: &'a dyn Fn(&[&str]) -> Vec<Option<Outline>>,
    /// The JSON of blocks an outline gave without it, by content hash, in order.
    pub blocks: &'a dyn Fn(&[&str]) -> Vec<Option<String>>,
    /// Fresh node keys, for blocks whose key the merged document already uses.
    pub new_key: &'a mut dyn FnMut() -> String,
    /// The time of the merge, for `updatedAt` of pages merged from both sides.
    pub now: i64,
}

/// The result of a merge.
#[derive(Debug, Clone)]
pub struct MergeOutcome {
    /// The merged tree: every clean change of both sides, conflicting entries in their `change`
    /// version. Satisfies the invariants of [`crate::tree`].
    pub tree: Tree,
    /// Documents the merged tree references that do not exist yet: (content hash, JSON bytes).
    pub documents: Vec<(String, Vec<u8>)>,
    /// The same documents parsed, by content hash, for a caller that indexes them: parsing the
    /// bytes again would cost as much as the merge of a large page.
    pub parsed: Vec<(String, Document)>,
    /// Sorted: pages by id, then files, reusable contents and variables.
    pub conflicts: Vec<Conflict>,
    /// Pages one of whose stored document versions is not a valid document, with the error.
    /// Such a page counts as a conflict, but the caller must fail the merge: stored data that
    /// does not read is corrupt, not a conflict for a person to resolve.
    pub unreadable: Vec<(String, String)>,
}

impl MergeOutcome {
    /// Whether the merge has no conflicts, so that its tree may be written.
    pub fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }
}

/// One of the two revisions being merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Main,
    Change,
}

/// Something both sides changed in incompatible ways.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Conflict {
    /// The page in conflict; empty (and not serialized) for file, reusable content and
    /// variable conflicts, whose kind names the entry.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub page: String,
    #[serde(flatten)]
    pub kind: ConflictKind,
    /// For [`ConflictKind::Content`]: the overlapping regions, in document order. Empty when
    /// the conflict is elsewhere (document-level data, or a version that cannot be read).
    pub regions: Vec<ConflictRegion>,
    /// Content hashes of the three versions of the page's (or reusable content's) document;
    /// None when that version is absent or has no document.
    pub base_document: Option<String>,
    pub main_document: Option<String>,
    pub change_document: Option<String>,
}

/// What kind of conflict, serialized as `"kind": "metadata", "fields": [...]` beside the other
/// fields of [`Conflict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum ConflictKind {
    /// Both sides changed the page document in overlapping places.
    Content,
    /// Both sides changed these page fields (camelCase names, as on the wire) differently.
    Metadata { fields: Vec<String> },
    /// One side deleted the page, the other changed it or something under it.
    DeleteModify { deleted_in: Side },
    /// Both sides moved the page to different places, or their moves together form a cycle or
    /// nest too deep.
    Move,
    /// Both sides changed a file differently, or one deleted what the other changed.
    File { file: String, deleted_in: Option<Side> },
    /// Both sides changed a reusable content differently, or one deleted what the other changed.
    Reusable {
        reusable: String,
        deleted_in: Option<Side>,
    },
    /// Both sides set a variable to different values (or one removed what the other changed).
    Variable { name: String },
}

impl ConflictKind {
    /// Sort key: pages first (by the order below), then files, reusable contents, variables.
    fn rank(&self) -> (u8, &str, u8) {
        match self {
            ConflictKind::DeleteModify { .. } => (0, "", 0),
            ConflictKind::Move => (0, "", 1),
            ConflictKind::Metadata { .. } => (0, "", 2),
            ConflictKind::Content => (0, "", 3),
            ConflictKind::File { file, .. } => (1, file, 0),
            ConflictKind::Reusable { reusable, .. } => (2, reusable, 0),
            ConflictKind::Variable { name } => (3, name, 0),
        }
    }
}

/// An overlapping region of a document conflict: half-open ranges of top-level block indexes
/// (`[start, end)`) in each version. An empty range is an insertion point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConflictRegion {
    pub base: (usize, usize),
    pub main: (usize, usize),
    pub change: (usize, usize),
}

/// Merges `change` and `main` from their common ancestor `base` (see the module documentation).
pub fn merge(input: MergeInput<'_>) -> MergeOutcome {
    let MergeInput {
        base,
        main,
        change,
        documents: load,
        outlines,
        blocks,
        new_key,
        now,
    } = input;
    let mut merger = Merger {
        base,
        main,
        change,
        load,
        outlines,
        blocks,
        new_key,
        now,
        pages: Entries::new(),
        touched: BTreeSet::new(),
        removed: BTreeSet::new(),
        pinned: BTreeSet::new(),
        documents: Vec::new(),
        parsed: Vec::new(),
        conflicts: Vec::new(),
        unreadable: Vec::new(),
    };
    merger.merge_pages();
    merger.repair_structure();
    merger.separate_siblings();
    let mut conflicts = std::mem::take(&mut merger.conflicts);
    let files = merge_entries(
        [&base.files, &main.files, &change.files],
        &mut |id, deleted_in| {
            conflicts.push(Conflict::entry(ConflictKind::File {
                file: id.to_string(),
                deleted_in,
            }));
        },
    );
    let reusable = merge_entries(
        [&base.reusable, &main.reusable, &change.reusable],
        &mut |id, deleted_in| {
            let hash = |t: &Tree| t.reusable.get(id).and_then(|r| r.document.clone());
            conflicts.push(Conflict {
                base_document: hash(base),
                main_document: hash(main),
                change_document: hash(change),
                ..Conflict::entry(ConflictKind::Reusable {
                    reusable: id.to_string(),
                    deleted_in,
                })
            });
        },
    );
    let variables = merge_variables(
        &base.variables,
        &main.variables,
        &change.variables,
        &mut conflicts,
    );
    sort_conflicts(&mut conflicts);
    MergeOutcome {
        tree: Tree {
            pages: merger.pages,
            files,
            reusable,
            variables,
        },
        documents: merger.documents,
        parsed: merger.parsed,
        conflicts,
        unreadable: merger.unreadable,
    }
}

impl Conflict {
    /// A conflict about a file, reusable content or variable: no page, no regions.
    fn entry(kind: ConflictKind) -> Conflict {
        Conflict {
            page: String::new(),
            kind,
            regions: Vec::new(),
            base_document: None,
            main_document: None,
            change_document: None,
        }
    }
}

/// Sorts conflicts (pages by id, then the rest) and drops repeats: the structural passes may
/// report a page's deletion or move more than once.
fn sort_conflicts(conflicts: &mut Vec<Conflict>) {
    conflicts.sort_by(|a, b| {
        let (ca, ida, ka) = a.kind.rank();
        let (cb, idb, kb) = b.kind.rank();
        (ca, a.page.as_str(), ida, ka).cmp(&(cb, b.page.as_str(), idb, kb))
    });
    conflicts.dedup_by(|a, b| a.page == b.page && a.kind.rank() == b.kind.rank());
}

// ------------------------------------------------------------------------------------------
// Three-way choice of one value.

/// Which version a three-way choice keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    Main,
    Change,
    Conflict,
}

/// Unchanged on one side: the other; the same on both: it; otherwise a conflict. `base` None
/// means the value has no ancestor (an entry added on both sides), so any difference conflicts.
fn pick<T: PartialEq + ?Sized>(base: Option<&T>, main: &T, change: &T) -> Pick {
    if main == change || base.is_some_and(|b| b == change) {
        Pick::Main
    } else if base.is_some_and(|b| b == main) {
        Pick::Change
    } else {
        Pick::Conflict
    }
}

/// Walks the ids of three ordered maps together, in order, each once: one pass over sorted
/// keys instead of a lookup per id.
struct Union3<'m, T> {
    iters: [Peekable<imbl::ordmap::Iter<'m, String, T, imbl::shared_ptr::DefaultSharedPtr>>; 3],
}

impl<'m, T> Union3<'m, T> {
    fn new(maps: [&'m imbl::OrdMap<String, T>; 3]) -> Self {
        Union3 {
            iters: maps.map(|m| m.iter().peekable()),
        }
    }
}

impl<'m, T> Iterator for Union3<'m, T> {
    type Item = (&'m str, [Option<&'m T>; 3]);

    fn next(&mut self) -> Option<Self::Item> {
        let id: &'m String = self
            .iters
            .iter_mut()
            .filter_map(|i| i.peek().map(|(k, _)| *k))
            .min()?;
        let mut values = [None; 3];
        for (slot, iter) in values.iter_mut().zip(&mut self.iters) {
            if iter.peek().is_some_and(|(k, _)| *k == id) {
                *slot = iter.next().map(|(_, v)| v);
            }
        }
        Some((id.as_str(), values))
    }
}

/// Whether two shared entries are the same: the same allocation, or equal values.
fn same<T: PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}

/// Merges maps of immutable entries (files, reusable contents) by id. `conflict` receives the
/// id and, for a delete against a change, the side that deleted; the `change` version is kept.
fn merge_entries<T: PartialEq>(
    maps: [&Entries<T>; 3],
    conflict: &mut dyn FnMut(&str, Option<Side>),
) -> Entries<T> {
    let mut merged = Vec::with_capacity(maps[1].len());
    for (id, [b, m, c]) in Union3::new(maps) {
        let kept = match (b, m, c) {
            (_, Some(m), Some(c)) if same(m, c) => Some(m),
            (Some(b), Some(m), Some(c)) if same(b, m) => Some(c),
            (Some(b), Some(m), Some(c)) if same(b, c) => Some(m),
            (_, Some(_), Some(c)) => {
                conflict(id, None);
                Some(c)
            }
            (None, m, c) => m.or(c),
            (Some(b), Some(m), None) => {
                if !same(b, m) {
                    conflict(id, Some(Side::Change));
                }
                None
            }
            (Some(b), None, Some(c)) => {
                if same(b, c) {
                    None
                } else {
                    conflict(id, Some(Side::Main));
                    Some(c)
                }
            }
            (Some(_), None, None) => None,
        };
        if let Some(entry) = kept {
            merged.push((id.to_string(), entry.clone()));
        }
    }
    merged.into_iter().collect()
}

/// Merges the variables per name. The result lists `main`'s names in `main`'s order, then the
/// names only `change` has, in `change`'s order.
fn merge_variables(
    base: &Map<String, Value>,
    main: &Map<String, Value>,
    change: &Map<String, Value>,
    conflicts: &mut Vec<Conflict>,
) -> Map<String, Value> {
    let names = main
        .keys()
        .chain(change.keys().filter(|k| !main.contains_key(*k)));
    let mut merged = Map::new();
    for name in names {
        let (b, m, c) = (base.get(name), main.get(name), change.get(name));
        let value = match pick(Some(&b), &m, &c) {
            Pick::Main => m,
            Pick::Change => c,
            Pick::Conflict => {
                conflicts.push(Conflict::entry(ConflictKind::Variable { name: name.clone() }));
                c
            }
        };
        if let Some(value) = value {
            merged.insert(name.clone(), value.clone());
        }
    }
    merged
}

// ------------------------------------------------------------------------------------------
// Pages.

/// Whether two page versions are the same, ignoring `updatedAt` (an edit undone is no change).
fn same_page(a: &Arc<PageEntry>, b: &Arc<PageEntry>) -> bool {
    Arc::ptr_eq(a, b) || equal_ignoring_time(a, b)
}

fn equal_ignoring_time(a: &PageEntry, b: &PageEntry) -> bool {
    if a.updated_at == b.updated_at {
        return a == b;
    }
    let mut b = b.clone();
    b.updated_at = a.updated_at;
    *a == b
}

fn cloned<T: Clone>(value: &T) -> T {
    value.clone()
}

/// The document of a page changed on both sides.
enum PageDocument {
    /// Take this hash (one side's, or both sides').
    Keep(Option<String>),
    /// A new document merged from both sides, to be stored.
    Merged(Document),
    /// A new document merged from both sides by taking whole blocks, with its JSON as
    /// assembled (see [`merge_raw`]).
    Assembled(Document, String),
    /// Overlapping changes.
    Conflict(Vec<ConflictRegion>),
}

struct Merger<'a> {
    base: &'a Tree,
    main: &'a Tree,
    change: &'a Tree,
    load: &'a dyn Fn(&[&str]) -> Vec<Option<String>>,
    outlines: &'a dyn Fn(&[&str]) -> Vec<Option<Outline>>,
    blocks: &'a dyn Fn(&[&str]) -> Vec<Option<String>>,
    new_key: &'a mut dyn FnMut() -> String,
    now: i64,
    /// The merged pages.
    pages: Entries<PageEntry>,
    /// Ids whose merged entry is not `main`'s: the only pages that can break the tree's
    /// invariants, since `main` itself satisfies them.
    touched: BTreeSet<String>,
    /// Ids of `main` the merge removed: their children in `main` may be orphans.
    removed: BTreeSet<String>,
    /// Pages whose position a structural repair fixed, never moved again (so repairs end).
    pinned: BTreeSet<String>,
    documents: Vec<(String, Vec<u8>)>,
    parsed: Vec<(String, Document)>,
    conflicts: Vec<Conflict>,
    unreadable: Vec<(String, String)>,
}

impl Merger<'_> {
    fn page_conflict(&mut self, id: &str, kind: ConflictKind, regions: Vec<ConflictRegion>) {
        let hash = |t: &Tree| t.pages.get(id).and_then(|p| p.document.clone());
        self.conflicts.push(Conflict {
            page: id.to_string(),
            kind,
            regions,
            base_document: hash(self.base),
            main_document: hash(self.main),
            change_document: hash(self.change),
        });
    }

    fn merge_pages(&mut self) {
        let (base, main, change) = (self.base, self.main, self.change);
        let mut merged = Vec::with_capacity(main.pages.len());
        for (id, [b, m, c]) in Union3::new([&base.pages, &main.pages, &change.pages]) {
            match self.merge_page(id, b, m, c) {
                Some(page) => {
                    if !m.is_some_and(|m| Arc::ptr_eq(m, &page)) {
                        self.touched.insert(id.to_string());
                    }
                    merged.push((id.to_string(), page));
                }
                None if m.is_some() => {
                    self.removed.insert(id.to_string());
                }
                None => {}
            }
        }
        self.pages = merged.into_iter().collect();
    }

    /// The merged version of one page, before structural repairs; None: deleted.
    fn merge_page(
        &mut self,
        id: &str,
        base: Option<&Arc<PageEntry>>,
        main: Option<&Arc<PageEntry>>,
        change: Option<&Arc<PageEntry>>,
    ) -> Option<Arc<PageEntry>> {
        match (base, main, change) {
            (_, Some(m), Some(c)) if Arc::ptr_eq(m, c) => Some(m.clone()),
            (Some(b), Some(m), Some(c)) if Arc::ptr_eq(b, m) => Some(c.clone()),
            (Some(b), Some(m), Some(c)) if Arc::ptr_eq(b, c) => Some(m.clone()),
            (b, Some(m), Some(c)) => Some(self.merge_page_versions(id, b.map(|b| &**b), m, c)),
            (None, m, c) => m.or(c).cloned(),
            (Some(b), Some(m), None) => {
                if !same_page(b, m) {
                    self.page_conflict(
                        id,
                        ConflictKind::DeleteModify {
                            deleted_in: Side::Change,
                        },
                        Vec::new(),
                    );
                }
                None
            }
            (Some(b), None, Some(c)) => {
                if same_page(b, c) {
                    None
                } else {
                    self.page_conflict(
                        id,
                        ConflictKind::DeleteModify {
                            deleted_in: Side::Main,
                        },
                        Vec::new(),
                    );
                    Some(c.clone())
                }
            }
            (Some(_), None, None) => None,
        }
    }

    /// Merges a page that both sides have and changed: field by field, position as one field,
    /// document block by block. Any conflict keeps the `change` version.
    fn merge_page_versions(
        &mut self,
        id: &str,
        b: Option<&PageEntry>,
        m: &Arc<PageEntry>,
        c: &Arc<PageEntry>,
    ) -> Arc<PageEntry> {
        if same_page(m, c) {
            return m.clone();
        }
        let mut merged = (**m).clone();
        let mut fields = Vec::new();
        // Each line: the wire name, then the struct fields that change together.
        macro_rules! three_way {
            ($($name:literal: $($field:ident),+;)+) => {$(
                match pick(b.map(|b| ($(&b.$field,)+)).as_ref(), &($(&m.$field,)+), &($(&c.$field,)+)) {
                    Pick::Main => {}
                    Pick::Change => { $(merged.$field = cloned(&c.$field);)+ }
                    Pick::Conflict => fields.push($name.to_string()),
                }
            )+};
        }
        three_way! {
            "type": kind;
            "title": title;
            "slug": slug;
            "emoji": emoji;
            "icon": icon;
            "description": description;
            "layout": layout;
            "cover": cover;
            "hidden": hidden;
            "noIndex": no_index;
            "noRobotsIndex": no_robots_index;
            "variables": variables;
            "target": target;
            "href": href;
            "linkTitle": link_title;
            "condition": condition;
            "computed": computed, computed_seed;
        }
        let position = pick(
            b.map(|b| (&b.parent, &b.order)).as_ref(),
            &(&m.parent, &m.order),
            &(&c.parent, &c.order),
        );
        if position == Pick::Change {
            merged.parent = c.parent.clone();
            merged.order = c.order.clone();
        }
        let document = self.merge_page_document(b, m, c);

        let mut conflicted = false;
        if !fields.is_empty() {
            self.page_conflict(id, ConflictKind::Metadata { fields }, Vec::new());
            conflicted = true;
        }
        if position == Pick::Conflict {
            self.page_conflict(id, ConflictKind::Move, Vec::new());
            conflicted = true;
        }
        match document {
            PageDocument::Conflict(regions) => {
                self.page_conflict(id, ConflictKind::Content, regions);
                return c.clone();
            }
            _ if conflicted => return c.clone(),
            PageDocument::Keep(hash) => merged.document = hash,
            PageDocument::Merged(doc) => merged.document = Some(self.store_document(doc, None, m, c)),
            PageDocument::Assembled(doc, json) => {
                merged.document = Some(self.store_document(doc, Some(json), m, c));
            }
        }
        if equal_ignoring_time(&merged, m) {
            m.clone()
        } else if equal_ignoring_time(&merged, c) {
            c.clone()
        } else {
            merged.updated_at = self.now.max(m.updated_at).max(c.updated_at);
            Arc::new(merged)
        }
    }

    /// Merges the documents of a page both sides changed. Documents are loaded only when both
    /// sides changed the hash.
    fn merge_page_document(&mut self, b: Option<&PageEntry>, m: &PageEntry, c: &PageEntry) -> PageDocument {
        match pick(b.map(|b| &b.document), &m.document, &c.document) {
            Pick::Main => PageDocument::Keep(m.document.clone()),
            Pick::Change => PageDocument::Keep(c.document.clone()),
            Pick::Conflict => {
                let hashes = [
                    b.and_then(|b| b.document.as_deref()),
                    m.document.as_deref(),
                    c.document.as_deref(),
                ];
                let asked: Vec<&str> = hashes.iter().flatten().copied().collect();
                let empty = || String::from_utf8(encode_document(&Document::default()).1).ok();
                let mut outlines = (self.outlines)(&asked).into_iter();
                let mut outline = |hash: Option<&str>| match hash {
                    None => empty().as_deref().and_then(Outline::of),
                    Some(_) => outlines.next().flatten(),
                };
                let outlines = [outline(hashes[0]), outline(hashes[1]), outline(hashes[2])];
                if let [Some(base), Some(main), Some(change)] = outlines
                    && let Some(merged) = merge_raw([base, main, change], self.blocks)
                {
                    return merged;
                }
                let mut loaded = (self.load)(&asked).into_iter();
                let mut version = |hash: Option<&str>| match hash {
                    None => empty(),
                    Some(_) => loaded.next().flatten(),
                };
                let texts = [version(hashes[0]), version(hashes[1]), version(hashes[2])];
                let [base, main, change] =
                    crate::parallel::parse_documents(texts).map(|parsed| match parsed {
                        Some(Err(error)) => {
                            self.unreadable.push((m.id.clone(), error.to_string()));
                            None
                        }
                        Some(Ok(document)) => Some(document),
                        None => None,
                    });
                let versions = (base, main, change);
                match versions {
                    (Some(base), Some(main), Some(change)) => match merge_documents(base, main, change) {
                        Ok(doc) => PageDocument::Merged(doc),
                        Err(regions) => PageDocument::Conflict(regions),
                    },
                    // A version that cannot be read cannot be merged safely.
                    versions => {
                        crate::parallel::drop_later(versions);
                        PageDocument::Conflict(Vec::new())
                    }
                }
            }
        }
    }

    /// Gives the merged document unique keys and queues it for storage; returns its hash.
    /// `json`: the document's JSON when it was assembled from stored blocks, kept unless its keys
    /// had to change.
    fn store_document(
        &mut self,
        mut doc: Document,
        json: Option<String>,
        m: &PageEntry,
        c: &PageEntry,
    ) -> String {
        let (hash, bytes) = match json {
            Some(json) if keys_are_unique(&doc.nodes) => {
                let bytes = json.into_bytes();
                (crate::buckets::content_hash(&bytes), bytes)
            }
            _ => {
                ensure_unique_keys(&mut doc, &mut *self.new_key);
                encode_document(&doc)
            }
        };
        let exists = m.document.as_deref() == Some(&hash)
            || c.document.as_deref() == Some(&hash)
            || self.documents.iter().any(|(h, _)| *h == hash);
        if exists {
            crate::parallel::drop_later(doc);
        } else {
            self.documents.push((hash.clone(), bytes));
            self.parsed.push((hash.clone(), doc));
        }
        hash
    }

    // --------------------------------------------------------------------------------------
    // Structure: orphans, cycles, depth.

    /// Repairs what merging pages one by one can break: pages whose parent is gone, cycles and
    /// nesting beyond [`MAX_DEPTH`]. Each round restores a page or pins one, so it ends.
    fn repair_structure(&mut self) {
        let rounds = 2 * (self.pages.len() + self.change.pages.len()) + 8;
        for _ in 0..rounds {
            if self.adopt_orphans() {
                continue;
            }
            // Cycles and depth come only from parents that differ from `main`'s.
            if !self.touched.iter().any(|id| self.parent_differs_from_main(id)) {
                return;
            }
            match self.find_bad_chain() {
                Some((chain, cycle)) if self.fix_chain(&chain, cycle) => {}
                _ => return,
            }
        }
    }

    fn parent_differs_from_main(&self, id: &str) -> bool {
        match (self.pages.get(id), self.main.pages.get(id)) {
            (Some(p), Some(m)) => p.parent != m.parent,
            (Some(p), None) => p.parent.is_some(),
            (None, _) => false,
        }
    }

    /// Pages whose parent is not in the merged tree, with that parent, by page id.
    fn orphans(&self) -> BTreeMap<String, String> {
        let mut orphans = BTreeMap::new();
        let mut check = |page: &PageEntry| {
            if let Some(parent) = &page.parent
                && !self.pages.contains_key(parent)
            {
                orphans.insert(page.id.clone(), parent.clone());
            }
        };
        for id in &self.touched {
            if let Some(page) = self.pages.get(id) {
                check(page);
            }
        }
        // Pages taken from `main` have `main`'s parent: only a removed one can be missing.
        if !self.removed.is_empty() {
            for page in self.pages.values() {
                if page.parent.as_ref().is_some_and(|p| self.removed.contains(p)) {
                    check(page);
                }
            }
        }
        orphans
    }

    /// Gives orphans a parent: their parent's `change` version when `change` has it (deleted in
    /// `main`), else the top level (deleted in `change`). Either way the parent's deletion is a
    /// conflict. Returns whether anything changed.
    fn adopt_orphans(&mut self) -> bool {
        let orphans = self.orphans();
        for (id, parent) in &orphans {
            if self.pages.contains_key(parent) {
                continue;
            }
            if let Some(restored) = self.change.pages.get(parent) {
                self.pages.insert(parent.clone(), restored.clone());
                self.touched.insert(parent.clone());
                self.page_conflict(
                    parent,
                    ConflictKind::DeleteModify {
                        deleted_in: Side::Main,
                    },
                    Vec::new(),
                );
            } else {
                let order = self.pages.get(id).map(|p| p.order.clone()).unwrap_or_default();
                self.set_position(id, None, order);
                self.page_conflict(
                    parent,
                    ConflictKind::DeleteModify {
                        deleted_in: Side::Change,
                    },
                    Vec::new(),
                );
            }
        }
        !orphans.is_empty()
    }

    /// The first problem of the tree, by page id: a cycle (its pages, true) or a chain of pages
    /// nested too deep (the deep page and its ancestors, false).
    fn find_bad_chain(&self) -> Option<(Vec<String>, bool)> {
        let mut depths: HashMap<&str, usize> = HashMap::with_capacity(self.pages.len());
        for start in self.pages.keys() {
            let mut path: Vec<&str> = Vec::new();
            let mut next = Some(start.as_str());
            let above = loop {
                let Some(id) = next else { break 0 };
                if let Some(depth) = depths.get(id) {
                    break *depth;
                }
                if let Some(at) = path.iter().position(|p| *p == id) {
                    return Some((path[at..].iter().map(|p| p.to_string()).collect(), true));
                }
                if path.len() > MAX_DEPTH {
                    return Some((path.iter().map(|p| p.to_string()).collect(), false));
                }
                path.push(id);
                next = self.pages.get(id).and_then(|p| p.parent.as_deref());
            };
            for (i, id) in path.iter().rev().enumerate() {
                let depth = above + i + 1;
                if depth > MAX_DEPTH {
                    return Some((self.ancestors(id), false));
                }
                depths.insert(id, depth);
            }
        }
        None
    }

    /// `id` and its ancestors, nearest first (bounded, for chains that are known acyclic).
    fn ancestors(&self, id: &str) -> Vec<String> {
        let mut chain = vec![id.to_string()];
        let mut next = self.pages.get(id).and_then(|p| p.parent.clone());
        while let Some(parent) = next {
            if chain.len() > 2 * MAX_DEPTH + 2 {
                break;
            }
            next = self.pages.get(&parent).and_then(|p| p.parent.clone());
            chain.push(parent);
        }
        chain
    }

    /// Fixes a bad chain: its pages moved away from their `main` parent go back to their `main`
    /// position (when that parent is still there); if none can, the first free page of the chain
    /// goes to the top level. Returns whether anything changed.
    fn fix_chain(&mut self, chain: &[String], cycle: bool) -> bool {
        let mut reverted = Vec::new();
        for id in chain {
            if self.pinned.contains(id) {
                continue;
            }
            let (Some(page), Some(in_main)) = (self.pages.get(id), self.main.pages.get(id)) else {
                continue;
            };
            let parent_kept = in_main.parent.as_ref().is_none_or(|p| self.pages.contains_key(p));
            if page.parent != in_main.parent && parent_kept {
                reverted.push((id.clone(), in_main.parent.clone(), in_main.order.clone()));
            }
        }
        if reverted.is_empty() {
            let free = chain.iter().find(|id| {
                !self.pinned.contains(*id) && self.pages.get(*id).is_some_and(|p| p.parent.is_some())
            });
            if let Some(id) = free {
                let order = self.pages.get(id).map(|p| p.order.clone()).unwrap_or_default();
                reverted.push((id.clone(), None, order));
            }
        }
        if reverted.is_empty() {
            return false;
        }
        let reported: Vec<String> = if cycle {
            chain.to_vec()
        } else {
            reverted.iter().map(|(id, _, _)| id.clone()).collect()
        };
        for (id, parent, order) in reverted {
            self.set_position(&id, parent, order);
        }
        for id in reported {
            self.page_conflict(&id, ConflictKind::Move, Vec::new());
        }
        true
    }

    /// Moves a merged page and pins it, sharing `main`'s entry when that is the result.
    fn set_position(&mut self, id: &str, parent: Option<String>, order: String) {
        self.pinned.insert(id.to_string());
        let Some(page) = self.pages.get(id) else { return };
        let mut moved = (**page).clone();
        moved.parent = parent;
        moved.order = order;
        self.replace(moved);
    }

    /// Puts a page entry in the merged tree, reusing `main`'s allocation when equal.
    fn replace(&mut self, page: PageEntry) {
        let id = page.id.clone();
        match self.main.pages.get(&id) {
            Some(in_main) if equal_ignoring_time(in_main, &page) => {
                self.touched.remove(&id);
                self.pages.insert(id, in_main.clone());
            }
            _ => {
                self.touched.insert(id.clone());
                self.pages.insert(id, Arc::new(page));
            }
        }
    }

    // --------------------------------------------------------------------------------------
    // Siblings: slugs and order keys.

    /// Renames slugs and re-keys orders that two siblings share. Only pages whose slug, parent
    /// or order differ from `main`'s can collide, so only their parents are looked at.
    fn separate_siblings(&mut self) {
        let mut parents: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
        for id in &self.touched {
            let Some(page) = self.pages.get(id) else { continue };
            let in_main = self.main.pages.get(id);
            let same_place = in_main.is_some_and(|m| m.parent == page.parent);
            let same_slug = same_place && in_main.is_some_and(|m| m.slug == page.slug);
            let same_order = same_place && in_main.is_some_and(|m| m.order == page.order);
            if !same_slug || !same_order {
                parents.entry(page.parent.clone()).or_default().push(id.clone());
            }
        }
        for (parent, candidates) in parents {
            self.separate_under(parent.as_deref(), &candidates);
        }
    }

    fn separate_under(&mut self, parent: Option<&str>, candidates: &[String]) {
        let siblings: Vec<Arc<PageEntry>> = self
            .pages
            .values()
            .filter(|p| p.parent.as_deref() == parent)
            .cloned()
            .collect();
        let claims = |p: &PageEntry, same: &dyn Fn(&PageEntry) -> bool| {
            self.main
                .pages
                .get(&p.id)
                .is_some_and(|m| m.parent.as_deref() == parent && same(m))
        };
        let mut updates: BTreeMap<String, PageEntry> = BTreeMap::new();

        // Slugs: the page holding the slug in `main` keeps it, the others get a suffix.
        let wanted: BTreeSet<&str> = candidates
            .iter()
            .filter_map(|id| self.pages.get(id))
            .filter(|p| p.kind.has_path())
            .map(|p| p.slug.as_str())
            .collect();
        let mut by_slug: BTreeMap<&str, Vec<&PageEntry>> = BTreeMap::new();
        for page in siblings.iter().filter(|p| p.kind.has_path()) {
            if wanted.contains(page.slug.as_str()) {
                by_slug.entry(page.slug.as_str()).or_default().push(page);
            }
        }
        let mut used: Option<HashSet<String>> = None;
        for (slug, mut pages) in by_slug {
            if pages.len() < 2 {
                continue;
            }
            pages.sort_by_key(|p| (!claims(p, &|m| m.slug == p.slug), p.id.as_str()));
            let used = used.get_or_insert_with(|| siblings.iter().map(|p| p.slug.clone()).collect());
            for page in &pages[1..] {
                let renamed = free_slug(slug, used);
                used.insert(renamed.clone());
                let mut entry = (**page).clone();
                entry.slug = renamed;
                updates.insert(entry.id.clone(), entry);
            }
        }

        // Order keys: the page with the key in `main` keeps it, the others go right after it.
        let wanted: BTreeSet<&str> = candidates
            .iter()
            .filter_map(|id| self.pages.get(id))
            .map(|p| p.order.as_str())
            .collect();
        let mut by_order: BTreeMap<&str, Vec<&PageEntry>> = BTreeMap::new();
        for page in &siblings {
            if wanted.contains(page.order.as_str()) {
                by_order.entry(page.order.as_str()).or_default().push(page);
            }
        }
        for (key, mut pages) in by_order {
            if pages.len() < 2 {
                continue;
            }
            pages.sort_by_key(|p| (!claims(p, &|m| m.order == p.order), p.id.as_str()));
            let next = siblings
                .iter()
                .map(|p| p.order.as_str())
                .filter(|o| *o > key)
                .min();
            let keys = order::keys_between(Some(key), next, pages.len() - 1);
            for (page, new_key) in pages[1..].iter().zip(keys) {
                let entry = updates.entry(page.id.clone()).or_insert_with(|| (**page).clone());
                entry.order = new_key;
            }
        }

        for (_, entry) in updates {
            self.replace(entry);
        }
    }
}

/// `slug-2`, `slug-3`, ...: the first not in `used`, within the 100 characters of a slug.
fn free_slug(slug: &str, used: &HashSet<String>) -> String {
    (2..)
        .map(|n| {
            let suffix = format!("-{n}");
            let stem: String = slug.chars().take(100usize.saturating_sub(suffix.len())).collect();
            format!("{stem}{suffix}")
        })
        .find(|s| !used.contains(s))
        .unwrap_or_default()
}

// ------------------------------------------------------------------------------------------
// Documents.

/// Merges three versions of a document: blocks by diff3, `data` and unknown fields as whole
/// values. Err holds the conflicting regions (empty when only document-level fields conflict).
/// Takes the versions by value: the merged document is made of their blocks, moved (a table at
/// the limits is 20 MB to copy), and what it does not take is freed on another thread.
fn merge_documents(
    base: Document,
    mut main: Document,
    mut change: Document,
) -> Result<Document, Vec<ConflictRegion>> {
    let data = pick(Some(&base.data), &main.data, &change.data);
    let extra = pick(Some(&base.extra), &main.extra, &change.extra);
    let data_map = std::mem::take(if data == Pick::Change {
        &mut change.data
    } else {
        &mut main.data
    });
    let extra_map = std::mem::take(if extra == Pick::Change {
        &mut change.extra
    } else {
        &mut main.extra
    });
    let nodes = merge_blocks(base.nodes, main.nodes, change.nodes)?;
    if data == Pick::Conflict || extra == Pick::Conflict {
        crate::parallel::drop_later(nodes);
        return Err(Vec::new());
    }
    let mut doc = Document::new(nodes);
    doc.data = data_map;
    doc.extra = extra_map;
    // Both sides within the limits can still add up to a document over them (each side adding
    // the most nodes a document may hold): that page is a conflict for a person to resolve,
    // never a document written over the limits.
    if crate::limits::check_document(&doc).is_err() {
        crate::parallel::drop_later(doc);
        return Err(Vec::new());
    }
    Ok(doc)
}

/// A run of base blocks one side replaced: `base[base.0..base.1]` became
/// `side[side.0..side.1]`. Either range may be empty (an insertion, a deletion).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hunk {
    base: (usize, usize),
    side: (usize, usize),
}

impl Hunk {
    fn base_len(&self) -> usize {
        self.base.1.saturating_sub(self.base.0)
    }

    fn side_len(&self) -> usize {
        self.side.1.saturating_sub(self.side.0)
    }
}

/// Hunks that must be resolved together: transitively overlapping changes of both sides, or a
/// single change of one side.
struct Group {
    base: (usize, usize),
    hunks: Vec<(Side, Hunk)>,
}

impl Group {
    fn has(&self, side: Side) -> bool {
        self.hunks.iter().any(|(s, _)| *s == side)
    }

    /// The range of `side` blocks that stands for the group's base range, given where the group
    /// starts in `side`: base blocks no hunk of `side` touches keep their count.
    fn side_range(&self, side: Side, start: usize) -> (usize, usize) {
        let (replaced, inserted) = self
            .hunks
            .iter()
            .filter(|(s, _)| *s == side)
            .fold((0, 0), |(r, i), (_, h)| (r + h.base_len(), i + h.side_len()));
        let kept = self.base.1.saturating_sub(self.base.0).saturating_sub(replaced);
        (start, start + kept + inserted)
    }
}

/// The hunks that turn `base` into `side`, compared by fingerprint (see [`crate::diff`]).
fn diff(base: &[Fingerprint], side: &[Fingerprint]) -> Vec<Hunk> {
    let pairs = common_pairs(base, side);
    let mut hunks = Vec::new();
    let (mut i, mut j) = (0, 0);
    let end = (base.len(), side.len());
    for &(pi, pj) in pairs.iter().chain(std::iter::once(&end)) {
        if pi - i == pj - j {
            // n blocks replaced by n blocks: n in-place edits, so that the other side's edits
            // of neighbouring blocks (or insertions between them) do not overlap them.
            for k in 0..pi - i {
                hunks.push(Hunk {
                    base: (i + k, i + k + 1),
                    side: (j + k, j + k + 1),
                });
            }
        } else {
            hunks.push(Hunk {
                base: (i, pi),
                side: (j, pj),
            });
        }
        (i, j) = (pi + 1, pj + 1);
    }
    hunks
}

/// Whether two hunks of different sides touch the same base blocks: their ranges intersect,
/// they insert at the same point, or one inserts strictly inside the other's range. Adjacent
/// changes (one ends where the other starts) do not overlap.
fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    match (a.0 == a.1, b.0 == b.1) {
        (true, true) => a.0 == b.0,
        (true, false) => b.0 < a.0 && a.0 < b.1,
        (false, true) => a.0 < b.0 && b.0 < a.1,
        (false, false) => a.0.max(b.0) < a.1.min(b.1),
    }
}

/// Groups the hunks of both sides in base order. Hunks of one side never overlap each other,
/// and they are sorted by start, so a hunk can only overlap members of the current group.
fn group_hunks(main: &[Hunk], change: &[Hunk]) -> Vec<Group> {
    let mut all: Vec<(Side, Hunk)> = main
        .iter()
        .map(|h| (Side::Main, *h))
        .chain(change.iter().map(|h| (Side::Change, *h)))
        .collect();
    all.sort_by_key(|(side, h)| (h.base, *side == Side::Change));
    let mut groups: Vec<Group> = Vec::new();
    for (side, hunk) in all {
        match groups.last_mut() {
            Some(group)
                if group
                    .hunks
                    .iter()
                    .any(|(s, h)| *s != side && overlaps(h.base, hunk.base)) =>
            {
                group.base.1 = group.base.1.max(hunk.base.1);
                group.hunks.push((side, hunk));
            }
            _ => groups.push(Group {
                base: hunk.base,
                hunks: vec![(side, hunk)],
            }),
        }
    }
    groups
}

fn slice<T>(nodes: &[T], range: (usize, usize)) -> &[T] {
    nodes.get(range.0..range.1).unwrap_or_default()
}

/// One side's blocks, moved out by increasing ranges; the blocks skipped are kept aside to be
/// freed off the caller's thread.
struct Blocks {
    rest: std::vec::IntoIter<Node>,
    at: usize,
    skipped: Vec<Node>,
}

impl Blocks {
    fn new(nodes: Vec<Node>) -> Self {
        Blocks {
            rest: nodes.into_iter(),
            at: 0,
            skipped: Vec::new(),
        }
    }

    /// The blocks of `range`, which starts at or after the end of the range taken before.
    fn take(&mut self, range: (usize, usize)) -> impl Iterator<Item = Node> + '_ {
        let skip = range.0.saturating_sub(self.at);
        self.skipped.extend(self.rest.by_ref().take(skip));
        let count = range.1.saturating_sub(range.0.max(self.at));
        self.at = self.at.max(range.1);
        self.rest.by_ref().take(count)
    }
}

/// The fingerprints of three block sequences, each on its own thread.
fn fingerprints3(base: &[Node], main: &[Node], change: &[Node]) -> [Vec<Fingerprint>; 3] {
    let ((base, main), change) = crate::parallel::join(
        || crate::parallel::join(|| fingerprints(base), || fingerprints(main)),
        || fingerprints(change),
    );
    [base, main, change]
}

/// A range of blocks of one side that a merged sequence takes.
type Taken = (Side, (usize, usize));

/// diff3 over sequences of blocks given by their fingerprints (see the module documentation):
/// the ranges of `main` and `change` blocks the merged sequence is made of, in order, or the
/// regions both sides changed differently. Blocks unchanged on both sides and identical changes
/// come from `main`, so they keep `main`'s keys.
fn diff3(
    base: &[Fingerprint],
    main: &[Fingerprint],
    change: &[Fingerprint],
) -> Result<Vec<Taken>, Vec<ConflictRegion>> {
    let groups = group_hunks(&diff(base, main), &diff(base, change));
    let mut taken = Vec::with_capacity(2 * groups.len() + 1);
    let mut regions = Vec::new();
    // The base position reached, and where it is in each side.
    let (mut at_base, mut at_main, mut at_change) = (0, 0, 0);
    for group in &groups {
        let stable = group.base.0.saturating_sub(at_base);
        taken.push((Side::Main, (at_main, at_main + stable)));
        let main_range = group.side_range(Side::Main, at_main + stable);
        let change_range = group.side_range(Side::Change, at_change + stable);
        match (group.has(Side::Main), group.has(Side::Change)) {
            (true, false) => taken.push((Side::Main, main_range)),
            (false, true) => taken.push((Side::Change, change_range)),
            _ if slice(main, main_range) == slice(change, change_range) => {
                taken.push((Side::Main, main_range));
            }
            _ => regions.push(ConflictRegion {
                base: group.base,
                main: main_range,
                change: change_range,
            }),
        }
        (at_base, at_main, at_change) = (group.base.1, main_range.1, change_range.1);
    }
    taken.push((Side::Main, (at_main, main.len().max(at_main))));
    if regions.is_empty() {
        Ok(taken)
    } else {
        Err(regions)
    }
}

/// diff3 over top-level blocks, compared by content (see the module documentation).
fn merge_blocks(
    base: Vec<Node>,
    main: Vec<Node>,
    change: Vec<Node>,
) -> Result<Vec<Node>, Vec<ConflictRegion>> {
    let [base_contents, main_contents, change_contents] = fingerprints3(&base, &main, &change);
    let taken = diff3(&base_contents, &main_contents, &change_contents);
    let mut merged = Vec::with_capacity(main.len().max(change.len()));
    let (mut main, mut change) = (Blocks::new(main), Blocks::new(change));
    for (side, range) in taken.iter().flatten() {
        match side {
            Side::Main => merged.extend(main.take(*range)),
            Side::Change => merged.extend(change.take(*range)),
        }
    }
    crate::parallel::drop_later((base, main.skipped, main.rest, change.skipped, change.rest));
    match taken {
        Ok(_) => Ok(merged),
        Err(regions) => {
            crate::parallel::drop_later(merged);
            Err(regions)
        }
    }
}

/// Merges three versions of a page's document without parsing them, when that is enough: when
/// `data` and the unknown fields changed on at most one side, and diff3 over the blocks'
/// stored bytes (by their hashes) finds no region both sides changed differently, the merged
/// document is the blocks it takes, as they were stored (read through `blocks` when an outline
/// lacks them), and only that document is parsed (for the limits, the keys and the caller's
/// indexes). None otherwise: the caller merges the parsed versions, by content, as before.
/// Comparing bytes is stricter than comparing content (a key, or the order of a map's entries,
/// may differ), so this may find a change where the other finds none, never the reverse; a
/// block it calls changed on one side only is taken from that side: the same content.
fn merge_raw(
    versions: [Outline; 3],
    blocks: &dyn Fn(&[&str]) -> Vec<Option<String>>,
) -> Option<PageDocument> {
    let [base, main, change] = versions;
    let fields = if main.same_fields(&base) {
        &change
    } else if change.same_fields(&base) || change.same_fields(&main) {
        &main
    } else {
        return None;
    };
    let taken = diff3(
        &base.fingerprints()?,
        &main.fingerprints()?,
        &change.fingerprints()?,
    )
    .ok()?;
    let taken: Vec<&crate::raw_document::OutlineBlock> = taken
        .iter()
        .flat_map(|(side, range)| {
            let side = match side {
                Side::Main => &main.blocks,
                Side::Change => &change.blocks,
            };
            slice(side, *range)
        })
        .collect();
    let absent: Vec<&str> = taken
        .iter()
        .filter(|b| b.json.is_none())
        .map(|b| b.hash.as_str())
        .collect();
    let read: Vec<Option<String>> = if absent.is_empty() {
        Vec::new()
    } else {
        blocks(&absent)
    };
    let mut read = read.iter();
    let mut texts: Vec<&str> = Vec::with_capacity(taken.len());
    for block in &taken {
        match &block.json {
            Some(json) => texts.push(json),
            // A block the store cannot give: the versions are read whole instead.
            None => texts.push(read.next()?.as_deref()?),
        }
    }
    let json = assemble(&fields.prefix, &fields.suffix, texts);
    // Versions that do not read as documents are left to the parsed merge, which reports them.
    let document: Document = serde_json::from_str(&json).ok()?;
    // As in `merge_documents`: both sides within the limits can add up to a document over them.
    if crate::limits::check_document(&document).is_err() {
        crate::parallel::drop_later(document);
        return Some(PageDocument::Conflict(Vec::new()));
    }
    Some(PageDocument::Assembled(document, json))
}

/// Gives every node and fragment of a merged document a key used nowhere else in it: the first
/// in document order keeps a shared key, later ones (and keyless ones) get fresh keys.
fn ensure_unique_keys(document: &mut Document, new_key: &mut dyn FnMut() -> String) {
    // Stored documents have a key on every node, and merged ones rarely repeat one: checking by
    // reference first spares copying every key of a large document.
    if keys_are_unique(&document.nodes) {
        return;
    }
    let mut seen = HashSet::new();
    unique_keys_in(&mut document.nodes, &mut seen, new_key);
}

/// Whether every node and fragment has a key and no key is used twice.
fn keys_are_unique(nodes: &[Node]) -> bool {
    // foldhash: a document at the limits holds 300,000 keys, and SipHash was most of the cost.
    let mut seen: foldhash::HashSet<&str> = foldhash::HashSet::default();
    let mut stack: Vec<&Node> = nodes.iter().collect();
    while let Some(node) = stack.pop() {
        match node.key.as_deref() {
            Some(key) if seen.insert(key) => {}
            _ => return false,
        }
        stack.extend(node.nodes.iter().flatten());
        for fragment in node.fragments.iter().flatten() {
            match fragment.key.as_deref() {
                Some(key) if seen.insert(key) => {}
                _ => return false,
            }
            stack.extend(fragment.nodes.iter());
        }
    }
    true
}

fn unique_keys_in(nodes: &mut [Node], seen: &mut HashSet<String>, new_key: &mut dyn FnMut() -> String) {
    for node in nodes {
        claim_key(&mut node.key, seen, new_key);
        if let Some(children) = node.nodes.as_mut() {
            unique_keys_in(children, seen, new_key);
        }
        for fragment in node.fragments.iter_mut().flatten() {
            claim_key(&mut fragment.key, seen, new_key);
            unique_keys_in(&mut fragment.nodes, seen, new_key);
        }
    }
}

fn claim_key(key: &mut Option<String>, seen: &mut HashSet<String>, new_key: &mut dyn FnMut() -> String) {
    if let Some(k) = key
        && seen.insert(k.clone())
    {
        return;
    }
    // The generator is meant to give fresh keys; a few tries guard against a clash anyway.
    let mut fresh = new_key();
    for _ in 0..8 {
        if !seen.contains(&fresh) {
            break;
        }
        fresh = new_key();
    }
    seen.insert(fresh.clone());
    *key = Some(fresh);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Fragment, JsonMap};
    use crate::tree::{FileEntry, PageKind, ReusableEntry};
    use std::cell::Cell;

    /// Stored documents and a key counter, as the server would provide them.
    #[derive(Default)]
    struct Store {
        docs: HashMap<String, Document>,
        keys: usize,
    }

    impl Store {
        fn put(&mut self, doc: &Document) -> String {
            let (hash, _) = encode_document(doc);
            self.docs.insert(hash.clone(), doc.clone());
            hash
        }

        /// Sets a page's document to the given (key, text) paragraphs.
        fn write(&mut self, tree: &mut Tree, id: &str, blocks: &[(&str, &str)]) {
            let hash = self.put(&doc(blocks));
            edit(tree, id, |p| p.document = Some(hash));
        }

        fn merge(&mut self, base: &Tree, main: &Tree, change: &Tree) -> MergeOutcome {
            let docs = &self.docs;
            let lookup = |hashes: &[&str]| {
                hashes
                    .iter()
                    .map(|h| {
                        docs.get(*h)
                            .map(|d| String::from_utf8(encode_document(d).1).unwrap())
                    })
                    .collect()
            };
            let mut keys = self.keys;
            let mut new_key = || {
                keys += 1;
                format!("new{keys}")
            };
            let outcome = merge(MergeInput {
                base,
                main,
                change,
                documents: &lookup,
                outlines: &|hashes| crate::raw_document::outlines_of(lookup(hashes)),
                blocks: &|hashes| vec![None; hashes.len()],
                new_key: &mut new_key,
                now: 100,
            });
            self.keys = keys;
            for (hash, bytes) in &outcome.documents {
                let stored: Document = serde_json::from_slice(bytes).unwrap();
                assert_eq!(encode_document(&stored).0, *hash, "hash of stored bytes");
                self.docs.insert(hash.clone(), stored);
            }
            outcome
        }

        fn texts(&self, tree: &Tree, id: &str) -> Vec<String> {
            let hash = tree.pages[id].document.as_ref().unwrap();
            self.docs[hash]
                .nodes
                .iter()
                .map(|n| {
                    crate::text::plain_text_of_nodes(std::slice::from_ref(n))
                        .trim()
                        .to_string()
                })
                .collect()
        }

        fn block_keys(&self, tree: &Tree, id: &str) -> Vec<String> {
            let hash = tree.pages[id].document.as_ref().unwrap();
            self.docs[hash]
                .nodes
                .iter()
                .map(|n| n.key.clone().unwrap())
                .collect()
        }
    }

    fn para(key: &str, text: &str) -> Node {
        let mut text_node = Node::plain_text(text);
        text_node.key = Some(format!("{key}-t"));
        let mut node = Node::paragraph(vec![text_node]);
        node.key = Some(key.to_string());
        node
    }

    fn doc(blocks: &[(&str, &str)]) -> Document {
        Document::new(blocks.iter().map(|(k, t)| para(k, t)).collect())
    }

    fn edit(tree: &mut Tree, id: &str, change: impl FnOnce(&mut PageEntry)) {
        let mut page = (*tree.pages[id]).clone();
        change(&mut page);
        tree.replace_page(page);
    }

    /// A tree of document pages `(id, parent)`, inserted in order, titled by id.
    fn tree(pages: &[(&str, Option<&str>)]) -> Tree {
        let mut t = Tree::default();
        for (id, parent) in pages {
            t.insert_page(PageEntry::new(id, PageKind::Document, id, 0), *parent, None)
                .unwrap();
        }
        t
    }

    fn add(t: &mut Tree, id: &str, title: &str, parent: Option<&str>) {
        t.insert_page(PageEntry::new(id, PageKind::Document, title, 1), parent, None)
            .unwrap();
    }

    fn kinds(outcome: &MergeOutcome) -> Vec<(String, ConflictKind)> {
        outcome
            .conflicts
            .iter()
            .map(|c| (c.page.clone(), c.kind.clone()))
            .collect()
    }

    fn children(t: &Tree, parent: Option<&str>) -> Vec<String> {
        t.index().children(parent).to_vec()
    }

    #[test]
    fn disjoint_page_edits_merge_cleanly() {
        let mut store = Store::default();
        let mut base = tree(&[("a", None), ("b", None), ("c", None)]);
        for id in ["a", "b", "c"] {
            store.write(&mut base, id, &[("k1", "One."), ("k2", "Two.")]);
        }
        let mut main = base.clone();
        edit(&mut main, "a", |p| p.title = "A from main".into());
        edit(&mut main, "b", |p| p.title = "B from main".into());
        let mut change = base.clone();
        store.write(&mut change, "c", &[("k1", "One."), ("k2", "Two, changed.")]);
        edit(&mut change, "b", |p| p.emoji = Some("1f600".into()));

        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        out.tree.check().unwrap();
        assert_eq!(out.tree.pages["a"].title, "A from main");
        assert!(Arc::ptr_eq(&out.tree.pages["a"], &main.pages["a"]));
        assert!(Arc::ptr_eq(&out.tree.pages["c"], &change.pages["c"]));
        let b = &out.tree.pages["b"];
        assert_eq!(
            (b.title.as_str(), b.emoji.as_deref()),
            ("B from main", Some("1f600"))
        );
        assert_eq!(b.updated_at, 100);
        assert_eq!(store.texts(&out.tree, "c"), ["One.", "Two, changed."]);
        assert!(out.documents.is_empty(), "no document changed on both sides");
    }

    #[test]
    fn edits_of_different_paragraphs_merge_cleanly() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        let blocks = [("k1", "One."), ("k2", "Two."), ("k3", "Three."), ("k4", "Four.")];
        store.write(&mut base, "p", &blocks);
        let mut main = base.clone();
        // Main edits the first paragraph and inserts one after the third.
        store.write(
            &mut main,
            "p",
            &[
                ("k1", "One, main."),
                ("k2", "Two."),
                ("k3", "Three."),
                ("m1", "Inserted by main."),
                ("k4", "Four."),
            ],
        );
        let mut change = base.clone();
        // The change request edits the (adjacent) second paragraph and deletes the last one.
        store.write(
            &mut change,
            "p",
            &[("k1", "One."), ("k2", "Two, change."), ("k3", "Three.")],
        );

        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(
            store.texts(&out.tree, "p"),
            ["One, main.", "Two, change.", "Three.", "Inserted by main."]
        );
        assert_eq!(store.block_keys(&out.tree, "p"), ["k1", "k2", "k3", "m1"]);
        assert_eq!(out.documents.len(), 1);
        assert_eq!(out.tree.pages["p"].document.as_ref(), Some(&out.documents[0].0));
    }

    #[test]
    fn different_edits_of_one_paragraph_conflict_with_regions() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None), ("q", None)]);
        store.write(
            &mut base,
            "p",
            &[("k1", "One."), ("k2", "Two."), ("k3", "Three.")],
        );
        store.write(&mut base, "q", &[("k1", "Kept.")]);
        let mut main = base.clone();
        store.write(
            &mut main,
            "p",
            &[("k1", "One."), ("k2", "Two, main."), ("k3", "Three.")],
        );
        edit(&mut main, "q", |p| p.title = "Q renamed".into());
        let mut change = base.clone();
        store.write(
            &mut change,
            "p",
            &[("k1", "One."), ("k2", "Two, change."), ("k3", "Three, change.")],
        );

        let out = store.merge(&base, &main, &change);
        assert_eq!(out.conflicts.len(), 1);
        let conflict = &out.conflicts[0];
        assert_eq!(
            (conflict.page.as_str(), &conflict.kind),
            ("p", &ConflictKind::Content)
        );
        // The second paragraph conflicts; the edit of the third is adjacent, so it is separate.
        assert_eq!(
            conflict.regions,
            [ConflictRegion {
                base: (1, 2),
                main: (1, 2),
                change: (1, 2)
            }]
        );
        assert_eq!(conflict.base_document, base.pages["p"].document);
        assert_eq!(conflict.main_document, main.pages["p"].document);
        assert_eq!(conflict.change_document, change.pages["p"].document);
        // The conflicting page keeps its change version; the rest is merged.
        assert!(Arc::ptr_eq(&out.tree.pages["p"], &change.pages["p"]));
        assert_eq!(out.tree.pages["q"].title, "Q renamed");
        assert!(out.documents.is_empty());
    }

    #[test]
    fn delete_against_edit_and_uneven_regions_conflict() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        store.write(
            &mut base,
            "p",
            &[("k1", "One."), ("k2", "Two."), ("k3", "Three."), ("k4", "Four.")],
        );
        let mut main = base.clone();
        // Main splits the second paragraph in two.
        store.write(
            &mut main,
            "p",
            &[
                ("k1", "One."),
                ("k2", "Two a."),
                ("m", "Two b."),
                ("k3", "Three."),
                ("k4", "Four."),
            ],
        );
        let mut change = base.clone();
        // The change request deletes it, and edits the last one.
        store.write(
            &mut change,
            "p",
            &[("k1", "One."), ("k3", "Three."), ("k4", "Four, change.")],
        );
        let out = store.merge(&base, &main, &change);
        assert_eq!(kinds(&out), [("p".to_string(), ConflictKind::Content)]);
        assert_eq!(
            out.conflicts[0].regions,
            [ConflictRegion {
                base: (1, 2),
                main: (1, 3),
                change: (1, 1)
            }]
        );
    }

    #[test]
    fn insertions_at_one_place_conflict_unless_identical() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        store.write(&mut base, "p", &[("k1", "One."), ("k2", "Two.")]);
        let mut main = base.clone();
        store.write(
            &mut main,
            "p",
            &[("k1", "One."), ("m", "From main."), ("k2", "Two.")],
        );
        let mut change = base.clone();
        store.write(
            &mut change,
            "p",
            &[("k1", "One."), ("c", "From change."), ("k2", "Two.")],
        );
        let out = store.merge(&base, &main, &change);
        assert_eq!(kinds(&out), [("p".to_string(), ConflictKind::Content)]);
        assert_eq!(
            out.conflicts[0].regions,
            [ConflictRegion {
                base: (1, 1),
                main: (1, 2),
                change: (1, 2)
            }]
        );

        // The same insertion on both sides (with other keys) is taken once, with main's key.
        let mut change = base.clone();
        store.write(
            &mut change,
            "p",
            &[("k1", "One."), ("x", "From main."), ("k2", "Two."), ("y", "End.")],
        );
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(
            store.texts(&out.tree, "p"),
            ["One.", "From main.", "Two.", "End."]
        );
        assert_eq!(store.block_keys(&out.tree, "p"), ["k1", "m", "k2", "y"]);

        // An insertion between two paragraphs the other side edited in place is no overlap.
        let mut main = base.clone();
        store.write(&mut main, "p", &[("k1", "One, main."), ("k2", "Two, main.")]);
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(
            store.texts(&out.tree, "p"),
            ["One, main.", "From main.", "Two, main.", "End."]
        );
    }

    #[test]
    fn identical_changes_on_both_sides_are_taken_once() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None), ("q", None)]);
        store.write(&mut base, "p", &[("k1", "One."), ("k2", "Two.")]);
        let mut main = base.clone();
        let mut change = base.clone();
        for t in [&mut main, &mut change] {
            edit(t, "p", |p| {
                p.title = "Same title".into();
                p.hidden = true;
            });
            store.write(t, "p", &[("k1", "One."), ("k2", "Two, edited the same way.")]);
            t.move_page("q", None, Some(0)).unwrap();
        }
        edit(&mut change, "p", |p| p.updated_at = 50);
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert!(Arc::ptr_eq(&out.tree.pages["p"], &main.pages["p"]));
        assert_eq!(children(&out.tree, None), ["q", "p"]);
        assert!(out.documents.is_empty());

        // Both sides delete the same block and edit another the same way, with different keys:
        // the merged document has each change once.
        let mut change = base.clone();
        store.write(&mut main, "p", &[("k2", "Two, edited.")]);
        store.write(&mut change, "p", &[("other", "Two, edited.")]);
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(store.texts(&out.tree, "p"), ["Two, edited."]);
    }

    #[test]
    fn metadata_edited_differently_on_both_sides_names_the_fields() {
        let store = &mut Store::default();
        let base = tree(&[("p", None)]);
        let mut main = base.clone();
        edit(&mut main, "p", |p| {
            p.title = "Main".into();
            p.description = Some("Main's".into());
            p.icon = Some("book".into());
        });
        let mut change = base.clone();
        edit(&mut change, "p", |p| {
            p.title = "Change".into();
            p.description = Some("Change's".into());
            p.no_index = true;
        });
        let out = store.merge(&base, &main, &change);
        assert_eq!(
            kinds(&out),
            [(
                "p".to_string(),
                ConflictKind::Metadata {
                    fields: vec!["title".into(), "description".into()]
                }
            )]
        );
        assert!(Arc::ptr_eq(&out.tree.pages["p"], &change.pages["p"]));
    }

    #[test]
    fn deletes_against_unchanged_pages_remove_their_subtree() {
        let mut store = Store::default();
        let base = tree(&[
            ("a", None),
            ("a1", Some("a")),
            ("a2", Some("a1")),
            ("b", None),
            ("c", None),
        ]);
        let mut main = base.clone();
        main.delete_page("a").unwrap();
        main.delete_page("c").unwrap();
        let mut change = base.clone();
        change.delete_page("c").unwrap();
        edit(&mut change, "b", |p| p.title = "B".into());
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(out.tree.pages.keys().collect::<Vec<_>>(), ["b"]);
        // The same, the other way round (`update`).
        let out = store.merge(&base, &change, &main);
        assert!(out.is_clean());
        assert_eq!(out.tree.pages.keys().collect::<Vec<_>>(), ["b"]);
    }

    #[test]
    fn delete_against_modify_conflicts_either_way() {
        let mut store = Store::default();
        let mut base = tree(&[("a", None), ("a1", Some("a")), ("b", None)]);
        store.write(&mut base, "a1", &[("k", "Text.")]);
        // Main deletes `a` (and `a1`); the change request edits `a1`'s document.
        let mut main = base.clone();
        main.delete_page("a").unwrap();
        let mut change = base.clone();
        store.write(&mut change, "a1", &[("k", "Text, edited.")]);
        let out = store.merge(&base, &main, &change);
        assert_eq!(
            kinds(&out),
            [
                (
                    "a".to_string(),
                    ConflictKind::DeleteModify {
                        deleted_in: Side::Main
                    }
                ),
                (
                    "a1".to_string(),
                    ConflictKind::DeleteModify {
                        deleted_in: Side::Main
                    }
                ),
            ]
        );
        assert_eq!(out.conflicts[1].main_document, None);
        assert_eq!(out.conflicts[1].change_document, change.pages["a1"].document);
        // The change version stays, with the parent it needs.
        assert!(Arc::ptr_eq(&out.tree.pages["a1"], &change.pages["a1"]));
        assert!(Arc::ptr_eq(&out.tree.pages["a"], &change.pages["a"]));
        out.tree.check().unwrap();

        // Reverse: the change request deletes, main moves the page.
        let mut main = base.clone();
        main.move_page("a1", Some(Some("b")), None).unwrap();
        let mut change = base.clone();
        change.delete_page("a").unwrap();
        let out = store.merge(&base, &main, &change);
        assert_eq!(
            kinds(&out),
            [(
                "a1".to_string(),
                ConflictKind::DeleteModify {
                    deleted_in: Side::Change
                }
            )]
        );
        assert_eq!(out.tree.pages.keys().collect::<Vec<_>>(), ["b"]);
        out.tree.check().unwrap();
    }

    #[test]
    fn pages_added_under_a_page_deleted_on_the_other_side() {
        let mut store = Store::default();
        let base = tree(&[("a", None), ("a1", Some("a")), ("b", None)]);
        // The change request adds under `a`, which main deleted: `a` comes back (change version).
        let mut main = base.clone();
        main.delete_page("a").unwrap();
        let mut change = base.clone();
        add(&mut change, "new", "New", Some("a"));
        let out = store.merge(&base, &main, &change);
        assert_eq!(
            kinds(&out),
            [(
                "a".to_string(),
                ConflictKind::DeleteModify {
                    deleted_in: Side::Main
                }
            )]
        );
        assert_eq!(out.tree.pages["new"].parent.as_deref(), Some("a"));
        assert!(!out.tree.pages.contains_key("a1"), "a1 was deleted and unchanged");
        out.tree.check().unwrap();

        // Main adds under `a`, which the change request deleted: the page moves to the top.
        let out = store.merge(&base, &change, &main);
        assert_eq!(
            kinds(&out),
            [(
                "a".to_string(),
                ConflictKind::DeleteModify {
                    deleted_in: Side::Change
                }
            )]
        );
        assert!(!out.tree.pages.contains_key("a"));
        assert_eq!(out.tree.pages["new"].parent, None);
        out.tree.check().unwrap();
    }

    #[test]
    fn pages_added_with_one_slug_on_both_sides_are_renamed() {
        let mut store = Store::default();
        let mut base = tree(&[("guide", None)]);
        add(&mut base, "x", "Intro 2", None);
        assert_eq!(base.pages["x"].slug, "intro-2");
        let mut main = base.clone();
        add(&mut main, "m", "Intro", None);
        let mut change = base.clone();
        add(&mut change, "c", "Intro", None);
        add(&mut change, "c2", "Setup", Some("guide"));
        let mut main2 = main.clone();
        add(&mut main2, "m2", "Setup", Some("guide"));

        let out = store.merge(&base, &main2, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        out.tree.check().unwrap();
        let slug = |id: &str| out.tree.pages[id].slug.clone();
        assert_eq!(slug("m"), "intro");
        assert_eq!(slug("c"), "intro-3");
        assert_eq!(slug("m2"), "setup");
        assert_eq!(slug("c2"), "setup-2");
        // Both were appended with the same order key: main's first, then the change request's.
        assert_eq!(children(&out.tree, None), ["guide", "x", "m", "c"]);
        assert_ne!(out.tree.pages["m"].order, out.tree.pages["c"].order);
        assert_eq!(children(&out.tree, Some("guide")), ["m2", "c2"]);
        // A slug renamed to one main now uses is renamed as well.
        let mut change = base.clone();
        change.set_slug("guide", "intro").unwrap();
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean());
        assert_eq!(out.tree.pages["guide"].slug, "intro-3");
        assert_eq!(out.tree.pages["m"].slug, "intro");
        out.tree.check().unwrap();
    }

    #[test]
    fn moves_merge_unless_both_sides_move_one_page() {
        let mut store = Store::default();
        let base = tree(&[("a", None), ("b", None), ("c", None), ("d", None)]);
        // Main moves c, the change request renames it and moves d: clean.
        let mut main = base.clone();
        main.move_page("c", Some(Some("a")), None).unwrap();
        let mut change = base.clone();
        edit(&mut change, "c", |p| p.title = "C!".into());
        change.move_page("d", None, Some(0)).unwrap();
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        assert_eq!(out.tree.pages["c"].parent.as_deref(), Some("a"));
        assert_eq!(out.tree.pages["c"].title, "C!");
        assert_eq!(children(&out.tree, None), ["d", "a", "b"]);

        // Both move c, to different parents: a Move conflict, the change version stays.
        change.move_page("c", Some(Some("b")), None).unwrap();
        let out = store.merge(&base, &main, &change);
        assert_eq!(kinds(&out), [("c".to_string(), ConflictKind::Move)]);
        assert_eq!(out.tree.pages["c"].parent.as_deref(), Some("b"));
        out.tree.check().unwrap();

        // Both move c to the same place: clean.
        let mut change = base.clone();
        change.move_page("c", Some(Some("a")), None).unwrap();
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean());
    }

    #[test]
    fn moves_forming_a_cycle_keep_mains_positions() {
        let mut store = Store::default();
        let base = tree(&[("a", None), ("b", None), ("b1", Some("b")), ("c", None)]);
        let mut main = base.clone();
        main.move_page("a", Some(Some("b1")), None).unwrap();
        let mut change = base.clone();
        change.move_page("b", Some(Some("a")), None).unwrap();
        edit(&mut change, "c", |p| p.title = "Still merged".into());
        let out = store.merge(&base, &main, &change);
        assert_eq!(
            kinds(&out),
            [
                ("a".to_string(), ConflictKind::Move),
                ("b".to_string(), ConflictKind::Move),
                ("b1".to_string(), ConflictKind::Move),
            ]
        );
        out.tree.check().unwrap();
        assert_eq!(out.tree.pages["a"].parent.as_deref(), Some("b1"));
        assert_eq!(out.tree.pages["b"].parent, None);
        assert_eq!(out.tree.pages["b"].order, main.pages["b"].order);
        assert_eq!(out.tree.pages["c"].title, "Still merged");
    }

    #[test]
    fn moves_nesting_too_deep_are_reverted() {
        let mut store = Store::default();
        let half = MAX_DEPTH / 2;
        let mut pages = Vec::new();
        for chain in ["a", "b", "c"] {
            for i in 0..half {
                let parent = (i > 0).then(|| format!("{chain}{}", i - 1));
                pages.push((format!("{chain}{i}"), parent));
            }
        }
        let pages: Vec<(&str, Option<&str>)> =
            pages.iter().map(|(i, p)| (i.as_str(), p.as_deref())).collect();
        let base = tree(&pages);
        let last = |chain: &str| format!("{chain}{}", half - 1);
        let mut main = base.clone();
        main.move_page("b0", Some(Some(&last("a"))), None).unwrap();
        let mut change = base.clone();
        change.move_page("c0", Some(Some(&last("b"))), None).unwrap();
        main.check().unwrap();
        change.check().unwrap();
        let out = store.merge(&base, &main, &change);
        assert_eq!(kinds(&out), [("c0".to_string(), ConflictKind::Move)]);
        assert_eq!(out.tree.pages["c0"].parent, None);
        assert_eq!(out.tree.pages["b0"].parent.as_deref(), Some(last("a").as_str()));
        out.tree.check().unwrap();
    }

    fn file(id: &str, name: &str) -> Arc<FileEntry> {
        Arc::new(FileEntry {
            id: id.into(),
            name: name.into(),
            content_type: "image/png".into(),
            size: 1,
            blob: format!("blob-{id}"),
            dimensions: None,
            created_at: 0,
        })
    }

    #[test]
    fn files_reusable_contents_and_variables_merge_three_way() {
        let mut store = Store::default();
        let mut base = Tree::default();
        for id in ["f1", "f2", "f3"] {
            base.files.insert(id.into(), file(id, id));
        }
        let reusable = |id: &str, title: &str| {
            Arc::new(ReusableEntry {
                id: id.into(),
                title: title.into(),
                document: Some(format!("doc-{title}")),
            })
        };
        base.reusable.insert("r1".into(), reusable("r1", "One"));
        base.reusable.insert("r2".into(), reusable("r2", "Two"));
        for (k, v) in [
            ("product", "Quire"),
            ("version", "1"),
            ("gone", "x"),
            ("kept", "k"),
        ] {
            base.variables.insert(k.into(), Value::from(v));
        }
        let mut main = base.clone();
        main.files.remove("f1");
        main.files.insert("fm".into(), file("fm", "main.png"));
        main.reusable.insert("r1".into(), reusable("r1", "One, main"));
        main.reusable.insert("r2".into(), reusable("r2", "Two, main"));
        main.variables.insert("version".into(), Value::from("2"));
        main.variables.insert("added".into(), Value::from("m"));
        main.variables.remove("gone");
        let mut change = base.clone();
        change.files.remove("f2");
        change.files.insert("fc".into(), file("fc", "change.png"));
        change.reusable.insert("r2".into(), reusable("r2", "Two, change"));
        change
            .variables
            .insert("product".into(), Value::from("Quire docs"));
        change.variables.insert("version".into(), Value::from("3"));
        change.variables.insert("new".into(), Value::from("c"));

        let out = store.merge(&base, &main, &change);
        assert_eq!(out.tree.files.keys().collect::<Vec<_>>(), ["f3", "fc", "fm"]);
        assert!(Arc::ptr_eq(&out.tree.files["f3"], &main.files["f3"]));
        assert_eq!(out.tree.reusable["r1"].title, "One, main");
        assert_eq!(
            out.tree.reusable["r2"].title, "Two, change",
            "conflict: change version"
        );
        assert_eq!(
            serde_json::to_value(&out.tree.variables).unwrap(),
            serde_json::json!({"product": "Quire docs", "version": "3", "kept": "k", "added": "m", "new": "c"})
        );
        assert_eq!(
            kinds(&out),
            [
                (
                    String::new(),
                    ConflictKind::Reusable {
                        reusable: "r2".into(),
                        deleted_in: None
                    }
                ),
                (
                    String::new(),
                    ConflictKind::Variable {
                        name: "version".into()
                    }
                ),
            ]
        );
        assert_eq!(out.conflicts[0].main_document.as_deref(), Some("doc-Two, main"));

        // A reusable content deleted on one side and changed on the other; a file deleted on
        // one side and unchanged on the other is simply deleted.
        let mut change = base.clone();
        change.reusable.remove("r1");
        change.files.remove("f3");
        let out = store.merge(&base, &main, &change);
        assert!(!out.tree.files.contains_key("f3"));
        assert_eq!(
            kinds(&out),
            [(
                String::new(),
                ConflictKind::Reusable {
                    reusable: "r1".into(),
                    deleted_in: Some(Side::Change)
                }
            )]
        );
    }

    #[test]
    fn conflicts_serialize_as_camel_case_json() {
        let conflict = Conflict {
            page: "p1".into(),
            kind: ConflictKind::DeleteModify {
                deleted_in: Side::Main,
            },
            regions: vec![],
            base_document: Some("h".into()),
            main_document: None,
            change_document: Some("h2".into()),
        };
        assert_eq!(
            serde_json::to_value(&conflict).unwrap(),
            serde_json::json!({"page": "p1", "kind": "deleteModify", "deletedIn": "main", "regions": [],
                "baseDocument": "h", "mainDocument": null, "changeDocument": "h2"})
        );
        let conflict = Conflict {
            page: "p1".into(),
            kind: ConflictKind::Content,
            regions: vec![ConflictRegion {
                base: (1, 2),
                main: (1, 3),
                change: (1, 1),
            }],
            base_document: None,
            main_document: None,
            change_document: None,
        };
        let json = serde_json::to_value(&conflict).unwrap();
        assert_eq!(json["kind"], "content");
        assert_eq!(
            json["regions"],
            serde_json::json!([{"base": [1, 2], "main": [1, 3], "change": [1, 1]}])
        );
        let variable = Conflict::entry(ConflictKind::Variable { name: "v".into() });
        let json = serde_json::to_value(&variable).unwrap();
        assert_eq!(json["kind"], "variable");
        assert_eq!(json["name"], "v");
        assert!(json.get("page").is_none());
        let metadata = serde_json::to_value(ConflictKind::Metadata {
            fields: vec!["noIndex".into()],
        })
        .unwrap();
        assert_eq!(
            metadata,
            serde_json::json!({"kind": "metadata", "fields": ["noIndex"]})
        );
    }

    #[test]
    fn merged_documents_get_unique_keys() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        store.write(&mut base, "p", &[("k1", "One."), ("k2", "Two.")]);
        let mut main = base.clone();
        // Both sides insert different blocks that reuse a key (a copy-paste of `k1`).
        store.write(
            &mut main,
            "p",
            &[("k1", "One."), ("k1", "Copy in main."), ("k2", "Two.")],
        );
        let mut change = base.clone();
        let mut with_caption = doc(&[("k1", "One."), ("k2", "Two.")]);
        let mut image = Node::void_block("image", JsonMap::new());
        image.key = Some("k2".into());
        image.fragments = Some(vec![Fragment::new("caption", None, vec![para("k1", "Caption")])]);
        with_caption.nodes.push(image);
        let hash = store.put(&with_caption);
        edit(&mut change, "p", |p| p.document = Some(hash));
        let out = store.merge(&base, &main, &change);
        assert!(out.is_clean(), "{:?}", out.conflicts);
        let merged = &store.docs[out.tree.pages["p"].document.as_ref().unwrap()];
        let mut keys = Vec::new();
        crate::document::walk_nodes(&merged.nodes, &mut |n| keys.push(n.key.clone().unwrap()));
        for f in merged.nodes[3].fragments() {
            keys.push(f.key.clone().unwrap());
        }
        let unique: HashSet<&String> = keys.iter().collect();
        assert_eq!(unique.len(), keys.len(), "{keys:?}");
        assert_eq!(store.block_keys(&out.tree, "p")[..3], ["k1", "new1", "k2"]);
    }

    #[test]
    fn unreadable_documents_conflict_instead_of_guessing() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        store.write(&mut base, "p", &[("k1", "One.")]);
        let mut main = base.clone();
        edit(&mut main, "p", |p| p.document = Some("missing".into()));
        let mut change = base.clone();
        store.write(&mut change, "p", &[("k1", "Two.")]);
        let out = store.merge(&base, &main, &change);
        assert_eq!(kinds(&out), [("p".to_string(), ConflictKind::Content)]);
        assert!(out.conflicts[0].regions.is_empty());
    }

    #[test]
    fn stored_versions_that_do_not_read_are_reported() {
        let mut store = Store::default();
        let mut base = tree(&[("p", None)]);
        store.write(&mut base, "p", &[("k1", "One.")]);
        let mut main = base.clone();
        edit(&mut main, "p", |p| p.document = Some("corrupt".into()));
        let mut change = base.clone();
        store.write(&mut change, "p", &[("k1", "Two.")]);
        let docs = &store.docs;
        let lookup = |hashes: &[&str]| {
            hashes
                .iter()
                .map(|h| match *h {
                    "corrupt" => Some(r#"{"object":"document","nodes":[{"object":"nope"}]}"#.to_string()),
                    h => docs
                        .get(h)
                        .map(|d| String::from_utf8(encode_document(d).1).unwrap()),
                })
                .collect()
        };
        let out = merge(MergeInput {
            base: &base,
            main: &main,
            change: &change,
            documents: &lookup,
            outlines: &|hashes| crate::raw_document::outlines_of(lookup(hashes)),
            blocks: &|hashes| vec![None; hashes.len()],
            new_key: &mut || "k".to_string(),
            now: 1,
        });
        assert_eq!(kinds(&out), [("p".to_string(), ConflictKind::Content)]);
        assert_eq!(out.unreadable.len(), 1);
        assert_eq!(out.unreadable[0].0, "p");
    }

    #[test]
    fn update_is_the_same_merge_from_the_other_side() {
        let mut store = Store::default();
        let mut base = tree(&[("a", None), ("b", None)]);
        store.write(&mut base, "a", &[("k1", "One."), ("k2", "Two.")]);
        let mut main = base.clone();
        store.write(&mut main, "a", &[("k1", "One, main."), ("k2", "Two.")]);
        add(&mut main, "n", "Intro", None);
        let mut change = base.clone();
        store.write(&mut change, "a", &[("k1", "One."), ("k2", "Two, change.")]);
        add(&mut change, "o", "Intro", None);
        let merged = store.merge(&base, &main, &change);
        let updated = store.merge(&base, &change, &main);
        assert!(merged.is_clean() && updated.is_clean());
        assert_eq!(store.texts(&merged.tree, "a"), store.texts(&updated.tree, "a"));
        // The side passed as `main` keeps the slug.
        assert_eq!(merged.tree.pages["o"].slug, "intro-2");
        assert_eq!(updated.tree.pages["n"].slug, "intro-2");
        // Deterministic.
        let again = store.merge(&base, &main, &change);
        assert_eq!(again.tree, merged.tree);
        assert_eq!(again.documents, merged.documents);
    }

    #[test]
    fn ten_thousand_pages_merge_by_pointer_without_loading_documents() {
        // Not a timed test: the merge is fast by construction (pointer comparisons, no
        // document loads); the duration is printed for information only.
        let mut base = Tree::default();
        let mut order = None;
        for i in 0..10_000 {
            let mut page = PageEntry::new(&format!("page{i:05}"), PageKind::Document, "Page", 0);
            page.slug = format!("page-{i}");
            let key = order::key_between(order.as_deref(), None);
            page.order = key.clone();
            order = Some(key);
            page.parent = (i >= 100).then(|| format!("page{:05}", i % 100));
            page.document = Some(format!("doc{i}"));
            base.pages.insert(page.id.clone(), Arc::new(page));
        }
        let mut main = base.clone();
        edit(&mut main, "page00017", |p| p.document = Some("doc-main".into()));
        let mut change = base.clone();
        edit(&mut change, "page09000", |p| p.title = "Changed".into());
        let loads = Cell::new(0);
        let lookup = |hashes: &[&str]| {
            loads.set(loads.get() + hashes.len());
            vec![None; hashes.len()]
        };
        let started = std::time::Instant::now();
        let out = merge(MergeInput {
            base: &base,
            main: &main,
            change: &change,
            documents: &lookup,
            outlines: &|hashes| crate::raw_document::outlines_of(lookup(hashes)),
            blocks: &|hashes| vec![None; hashes.len()],
            new_key: &mut || "k".to_string(),
            now: 1,
        });
        eprintln!("10,000-page merge: {:?}", started.elapsed());
        assert!(out.is_clean());
        assert_eq!(loads.get(), 0);
        assert_eq!(out.tree.pages.len(), 10_000);
        assert!(Arc::ptr_eq(
            &out.tree.pages["page00017"],
            &main.pages["page00017"]
        ));
        assert!(Arc::ptr_eq(
            &out.tree.pages["page09000"],
            &change.pages["page09000"]
        ));
        assert!(Arc::ptr_eq(
            &out.tree.pages["page00500"],
            &base.pages["page00500"]
        ));
        out.tree.check().unwrap();
    }

    // ----------------------------------------------------------------------------------------
    // Property tests: random edits of two sides that touch disjoint things merge cleanly and
    // keep both sides' changes.

    /// xorshift64*: deterministic randomness without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.next() % 100 < percent
        }

        fn choose<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
            (!items.is_empty()).then(|| &items[self.below(items.len())])
        }
    }

    /// Applies random edits to pages of `territory` only (ids owned by one side).
    fn random_edits(
        rng: &mut Rng,
        store: &mut Store,
        tree: &mut Tree,
        side: &str,
        territory: &mut BTreeSet<String>,
    ) {
        for step in 0..rng.below(8) {
            let pages: Vec<String> = territory
                .iter()
                .filter(|id| tree.pages.contains_key(*id))
                .cloned()
                .collect();
            let target = rng.choose(&pages).cloned();
            match (rng.below(5), target) {
                (0, Some(id)) => edit(tree, &id, |p| p.title = format!("{side} title {step}")),
                (1, Some(id)) => {
                    let text = format!("{side} text {step} {}", rng.next());
                    store.write(tree, &id, &[("k", "Kept."), ("e", &text)]);
                }
                (2, Some(id)) => {
                    let into = rng.choose(&pages).cloned().filter(|_| rng.chance(70));
                    let _ = tree.move_page(&id, Some(into.as_deref()), Some(rng.below(3)));
                }
                (3, Some(id)) => {
                    tree.delete_page(&id).unwrap();
                }
                _ => {
                    let id = format!("{side}-new-{step}");
                    let title = ["Intro", "Setup", "Guide"][rng.below(3)];
                    let parent = rng.choose(&pages).cloned().filter(|_| rng.chance(50));
                    if tree
                        .insert_page(
                            PageEntry::new(&id, PageKind::Document, title, 1),
                            parent.as_deref(),
                            None,
                        )
                        .is_ok()
                    {
                        territory.insert(id);
                    }
                }
            }
        }
    }

    #[test]
    fn random_disjoint_tree_edits_merge_cleanly_with_both_sides() {
        for seed in 1..=300u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
            let mut store = Store::default();
            let mut base = Tree::default();
            let mut owner: BTreeMap<String, bool> = BTreeMap::new();
            for i in 0..(5 + rng.below(25)) {
                let id = format!("p{i}");
                let parents: Vec<String> = base.pages.keys().cloned().collect();
                let parent = rng.choose(&parents).cloned().filter(|_| rng.chance(60));
                let title = ["Intro", "Setup", "Guide", "Reference"][rng.below(4)];
                base.insert_page(
                    PageEntry::new(&id, PageKind::Document, title, 0),
                    parent.as_deref(),
                    None,
                )
                .unwrap();
                store.write(&mut base, &id, &[("k", "Kept."), ("e", &format!("Base {i}"))]);
                // Subtrees are owned by the side owning their top-level page.
                let mine = match &parent {
                    Some(p) => owner[p],
                    None => rng.chance(50),
                };
                owner.insert(id, mine);
            }
            let mut main_territory: BTreeSet<String> = owner
                .iter()
                .filter(|(_, m)| **m)
                .map(|(id, _)| id.clone())
                .collect();
            let mut change_territory: BTreeSet<String> = owner
                .iter()
                .filter(|(_, m)| !**m)
                .map(|(id, _)| id.clone())
                .collect();
            let mut main = base.clone();
            random_edits(&mut rng, &mut store, &mut main, "m", &mut main_territory);
            let mut change = base.clone();
            random_edits(&mut rng, &mut store, &mut change, "c", &mut change_territory);

            let out = store.merge(&base, &main, &change);
            assert!(out.is_clean(), "seed {seed}: {:?}", out.conflicts);
            out.tree.check().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let ids: BTreeSet<&String> = base
                .pages
                .keys()
                .chain(main.pages.keys())
                .chain(change.pages.keys())
                .collect();
            for id in ids {
                let changed_in_main = match (base.pages.get(id), main.pages.get(id)) {
                    (Some(b), Some(m)) => !Arc::ptr_eq(b, m),
                    (None, None) => false,
                    _ => true,
                };
                let expected = if changed_in_main {
                    main.pages.get(id)
                } else {
                    change.pages.get(id)
                };
                let got = out.tree.pages.get(id);
                match (expected, got) {
                    (None, None) => {}
                    (Some(e), Some(g)) => {
                        // Slugs and order keys may be separated at the shared top level.
                        let mut g2 = (**g).clone();
                        if g.slug != e.slug {
                            assert!(
                                g.parent.is_none() && g.slug.starts_with(&format!("{}-", e.slug)),
                                "seed {seed}: {id}"
                            );
                            g2.slug = e.slug.clone();
                        }
                        g2.order = e.order.clone();
                        assert_eq!(g2, **e, "seed {seed}: page {id}");
                    }
                    _ => panic!("seed {seed}: page {id}: expected {expected:?}, got {got:?}"),
                }
            }
        }
    }

    #[test]
    fn random_disjoint_block_edits_merge_cleanly_with_both_sides() {
        for seed in 1..=300u64 {
            let mut rng = Rng(seed.wrapping_mul(0xd1b5_4a32_d192_ed03) | 1);
            let n = 1 + rng.below(12);
            let base: Vec<(String, String)> =
                (0..n).map(|i| (format!("b{i}"), format!("Base {i}."))).collect();
            let owners: Vec<bool> = (0..n).map(|_| rng.chance(50)).collect();
            let mut sides: [Vec<(String, String)>; 2] = [Vec::new(), Vec::new()];
            let mut expected = Vec::new();
            for (i, (key, text)) in base.iter().enumerate() {
                let owner = usize::from(owners[i]);
                // The owner may insert before its block, then keep, edit or delete it.
                let inserted: Vec<(String, String)> = (0..rng.below(3))
                    .map(|j| (format!("s{owner}-i{i}-{j}"), format!("Inserted {owner} {i} {j}.")))
                    .collect();
                let action = rng.below(3);
                let block = match action {
                    0 => Some((key.clone(), text.clone())),
                    1 => Some((key.clone(), format!("Edited by {owner}: {i}."))),
                    _ => None,
                };
                for (side, blocks) in sides.iter_mut().enumerate() {
                    if side == owner {
                        blocks.extend(inserted.iter().cloned());
                        blocks.extend(block.iter().cloned());
                    } else {
                        blocks.push((key.clone(), text.clone()));
                    }
                }
                expected.extend(inserted.iter().map(|(_, t)| t.clone()));
                expected.extend(block.map(|(_, t)| t));
            }
            // Main may also append at the end.
            for j in 0..rng.below(2) {
                let text = format!("Appended {j}.");
                sides[1].push((format!("end{j}"), text.clone()));
                expected.push(text);
            }
            let to_doc = |blocks: &[(String, String)]| {
                doc(&blocks
                    .iter()
                    .map(|(k, t)| (k.as_str(), t.as_str()))
                    .collect::<Vec<_>>())
            };
            let mut store = Store::default();
            let mut base_tree = tree(&[("p", None)]);
            let hash = store.put(&to_doc(&base));
            edit(&mut base_tree, "p", |p| p.document = Some(hash));
            let [change_blocks, main_blocks] = &sides;
            let mut main = base_tree.clone();
            let hash = store.put(&to_doc(main_blocks));
            edit(&mut main, "p", |p| p.document = Some(hash));
            let mut change = base_tree.clone();
            let hash = store.put(&to_doc(change_blocks));
            edit(&mut change, "p", |p| p.document = Some(hash));

            let out = store.merge(&base_tree, &main, &change);
            assert!(out.is_clean(), "seed {seed}: {:?}", out.conflicts);
            let texts = if out.tree.pages["p"].document.is_some() {
                store.texts(&out.tree, "p")
            } else {
                Vec::new()
            };
            assert_eq!(texts, expected, "seed {seed}");
        }
    }
}

#[cfg(test)]
mod assembled {
    //! The merge that takes stored blocks as they are ([`merge_raw`]) against the merge of parsed
    //! versions ([`merge_documents`]): whenever the first gives a document, the second gives the
    //! same one.
    use super::*;
    use proptest::prelude::*;

    fn para(key: &str, text: &str) -> Node {
        let mut text_node = Node::plain_text(text);
        text_node.key = Some(format!("{key}-t"));
        let mut node = Node::paragraph(vec![text_node]);
        node.key = Some(key.to_string());
        node
    }

    #[derive(Debug, Clone)]
    enum Edit {
        Replace(usize, String),
        Insert(usize, String),
        Delete(usize),
        Data(String),
    }

    fn edit() -> impl Strategy<Value = Edit> {
        let text = proptest::sample::select(vec!["a", "b", "c", "d"]).prop_map(str::to_string);
        prop_oneof![
            (0..8usize, text.clone()).prop_map(|(i, t)| Edit::Replace(i, t)),
            (0..8usize, text.clone()).prop_map(|(i, t)| Edit::Insert(i, t)),
            (0..8usize).prop_map(Edit::Delete),
            text.prop_map(Edit::Data),
        ]
    }

    /// Applies edits; new blocks get keys with `prefix`, edited blocks keep theirs. A block's
    /// text starts with its key, so that blocks of equal content have equal keys: both merges
    /// then compare blocks alike (with repeated content they may align them differently, each
    /// a valid merge).
    fn apply(base: &Document, edits: &[Edit], prefix: &str) -> Document {
        let mut doc = base.clone();
        for (n, e) in edits.iter().enumerate() {
            let len = doc.nodes.len();
            match e {
                Edit::Replace(i, t) if len > 0 => {
                    let key = doc.nodes[i % len].key.clone().unwrap_or_default();
                    doc.nodes[i % len] = para(&key, &format!("{key}: {t}"));
                }
                Edit::Insert(i, t) => {
                    let key = format!("{prefix}{n}");
                    doc.nodes
                        .insert(i % (len + 1), para(&key, &format!("{key}: {t}")));
                }
                Edit::Delete(i) if len > 0 => {
                    doc.nodes.remove(i % len);
                }
                Edit::Data(t) => {
                    doc.data.insert("v".into(), Value::String(t.clone()));
                }
                _ => {}
            }
        }
        doc
    }

    fn json(doc: &Document) -> String {
        String::from_utf8(encode_document(doc).1).unwrap()
    }

    /// The versions' outlines; `keep_apart`: without their blocks' JSON, as a store that keeps
    /// blocks apart gives them ([`kept_apart`] reads them).
    fn outlines(versions: [&Document; 3], keep_apart: bool) -> [Outline; 3] {
        versions.map(|d| {
            let mut outline = Outline::of(&json(d)).unwrap();
            if keep_apart {
                outline.blocks.iter_mut().for_each(|b| b.json = None);
            }
            outline
        })
    }

    fn kept_apart(versions: &[&Document], hashes: &[&str]) -> Vec<Option<String>> {
        let blocks: HashMap<String, String> = versions
            .iter()
            .flat_map(|d| Outline::of(&json(d)).unwrap().blocks)
            .map(|b| (b.hash, b.json.unwrap()))
            .collect();
        hashes.iter().map(|h| blocks.get(*h).cloned()).collect()
    }

    proptest! {
        #[test]
        fn taking_stored_blocks_merges_as_parsing_does(
            keep_apart in any::<bool>(),
            texts in proptest::collection::vec(proptest::sample::select(vec!["a", "b", "c"]), 0..6),
            main_edits in proptest::collection::vec(edit(), 0..4),
            change_edits in proptest::collection::vec(edit(), 0..4),
        ) {
            let base = Document::new(
                texts.iter().enumerate().map(|(i, t)| para(&format!("b{i}"), &format!("b{i}: {t}"))).collect(),
            );
            let main = apply(&base, &main_edits, "m");
            let change = apply(&base, &change_edits, "c");
            let raw = merge_raw(outlines([&base, &main, &change], keep_apart), &|hashes| kept_apart(&[&base, &main, &change], hashes));
            let parsed = merge_documents(base, main, change);
            match (raw, parsed) {
                (None, _) => {}
                (Some(PageDocument::Assembled(doc, text)), Ok(expected)) => {
                    prop_assert_eq!(&doc, &expected);
                    prop_assert_eq!(text, json(&expected));
                }
                (Some(PageDocument::Conflict(_)), Err(_)) => {}
                (raw, parsed) => prop_assert!(false, "assembled {:?}, parsed {:?}", raw.is_some(), parsed),
            }
        }
    }

    #[test]
    fn a_large_block_taken_whole_is_not_parsed_for_the_merge() {
        let base = Document::new(vec![para("h", "intro"), para("t", "table"), para("e", "end")]);
        let mut main = base.clone();
        main.nodes[0] = para("h", "intro, edited");
        let mut change = base.clone();
        change.nodes[1] = para("t", "table, edited");
        let none = |hashes: &[&str]| vec![None; hashes.len()];
        match merge_raw(outlines([&base, &main, &change], false), &none) {
            Some(PageDocument::Assembled(doc, _)) => {
                let texts: Vec<String> = doc
                    .nodes
                    .iter()
                    .map(|n| crate::text::plain_text_of_nodes(std::slice::from_ref(n)))
                    .collect();
                assert_eq!(
                    texts.iter().map(|t| t.trim()).collect::<Vec<_>>(),
                    ["intro, edited", "table, edited", "end"]
                );
            }
            _ => panic!("expected an assembled merge"),
        }
        // Both sides edited the same block: left to the parsed merge, which reports it.
        let mut both = base.clone();
        both.nodes[0] = para("h", "intro, other");
        assert!(merge_raw(outlines([&base, &main, &both], false), &none).is_none());
        // A block the store cannot give: the versions are read whole instead.
        assert!(merge_raw(outlines([&base, &main, &change], true), &none).is_none());
    }
}
