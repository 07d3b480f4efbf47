//! A batch of content changes (GitBook's `POST .../change-requests/{id}/content`): applied in
//! order to a tree, all or nothing, giving the next tree and the documents it needs.
//!
//! Changes are applied in two passes. The first makes every structural change (insert, update,
//! move, delete, revert) and collects the documents to store; the second resolves the links of
//! every document written from markdown against the final tree, so that a page may link to one
//! inserted later in the same batch (`./<ref>.md`) and to files inserted anywhere in it.

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use crate::buckets::content_hash;
use crate::diff::{common_pairs, fingerprints};
use crate::document::{ContentRef, Document, fill_missing_keys, for_each_ref_mut};
use crate::limits::LimitError;
use crate::markdown::{LinkTarget, normalize_link_target, resolve_links};
use crate::page_markdown::parse_page_markdown;
use crate::tree::{FileEntry, PageEntry, PageKind, Tree, TreeIndex};

/// Most changes in one batch.
pub const MAX_CHANGES: usize = 50;
/// Most files in one `insert_files` change.
pub const MAX_FILES: usize = 20;

/// A field that may be absent, null, or set.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Field<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Option::<T>::deserialize(d)?.map_or(Field::Null, Field::Value))
    }
}

/// A page body: `{markdown}`, `{document}`, or `{}` (empty).
#[derive(Debug, Clone, PartialEq)]
pub enum DocumentInput {
    Markdown(String),
    Json(Value),
    Empty,
}

impl<'de> Deserialize<'de> for DocumentInput {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let mut map = Map::deserialize(d)?;
        match (map.remove("markdown"), map.remove("document")) {
            (Some(_), Some(_)) => Err(D::Error::custom(
                "a document has `markdown` or `document`, not both",
            )),
            (Some(Value::String(md)), None) if map.is_empty() => Ok(DocumentInput::Markdown(md)),
            (Some(_), None) if map.is_empty() => Err(D::Error::custom("`markdown` must be a string")),
            (None, Some(doc)) if map.is_empty() => Ok(DocumentInput::Json(doc)),
            (None, None) if map.is_empty() => Ok(DocumentInput::Empty),
            _ => Err(D::Error::custom(format!(
                "unknown field `{}` in the document: use {{\"markdown\": ...}} or {{\"document\": ...}}",
                map.keys().next().map_or("", String::as_str)
            ))),
        }
    }
}

/// Page metadata fields shared by `insert_page` and `update_page` (GitBook's
/// `RevisionPageUpdate`), plus quire's `type` and `target` to create group and link pages.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageFields {
    pub title: Option<String>,
    pub slug: Option<String>,
    pub emoji: Option<String>,
    pub icon: Option<String>,
    pub description: Option<String>,
    pub hidden: Option<bool>,
    pub no_index: Option<bool>,
    pub no_robots_index: Option<bool>,
    pub condition: Option<String>,
    pub link_title: Option<String>,
    pub layout: Option<Value>,
    pub cover: Option<Value>,
    /// Link pages: where the link points (a content reference).
    pub target: Option<Value>,
    pub href: Option<String>,
    /// Computed pages: the source their pages are generated from (`computed`).
    pub computed: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InsertPage {
    #[serde(flatten)]
    pub fields: PageFields,
    /// `document` (default), `group` or `link`.
    #[serde(rename = "type")]
    pub kind: Option<PageKind>,
    pub document: Option<DocumentInput>,
    pub into: Option<String>,
    pub at: Option<usize>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdatePage {
    #[serde(flatten)]
    pub fields: PageFields,
    pub page: String,
    pub document: Option<DocumentInput>,
    #[serde(default)]
    pub into: Field<String>,
    pub at: Option<usize>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeletePage {
    #[serde(rename = "operation")]
    _operation: Option<String>,
    pub page: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RevertPage {
    #[serde(rename = "operation")]
    _operation: Option<String>,
    pub page: String,
    pub revision: Option<String>,
    pub block: Option<Vec<String>>,
}

/// A file of `insert_files`, as a client sends it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FileInput {
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub name: String,
    pub content_type: Option<String>,
    pub url: Option<String>,
    pub base64: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertFiles {
    #[serde(rename = "operation")]
    _operation: Option<String>,
    pub files: Vec<FileInput>,
}

/// One change of a batch.
#[derive(Debug, Clone)]
pub enum Change {
    InsertPage(InsertPage),
    UpdatePage(UpdatePage),
    DeletePage(DeletePage),
    RevertPage(RevertPage),
    InsertFiles(InsertFiles),
}

impl Change {
    /// Parses one change, dispatching on `operation`.
    pub fn from_json(value: Value) -> Result<Change, String> {
        let operation = value
            .get("operation")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let parsed = match operation.as_str() {
            "insert_page" => serde_json::from_value(value).map(Change::InsertPage),
            "update_page" => serde_json::from_value(value).map(Change::UpdatePage),
            "delete_page" => serde_json::from_value(value).map(Change::DeletePage),
            "revert_page" => serde_json::from_value(value).map(Change::RevertPage),
            "insert_files" => serde_json::from_value(value).map(Change::InsertFiles),
            _ => {
                return Err(format!(
                    "`operation` must be insert_page, update_page, delete_page, revert_page or insert_files, not {operation:?}"
                ));
            }
        };
        parsed.map_err(|e| e.to_string())
    }
}

/// Why a batch was refused: which change, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("changes[{index}]: {message}")]
pub struct BatchError {
    pub index: usize,
    pub message: String,
    /// Whether the change is refused for its size (a 413 rather than a 400).
    pub too_large: bool,
}

fn err(index: usize, message: impl Into<String>) -> BatchError {
    BatchError {
        index,
        message: message.into(),
        too_large: false,
    }
}

/// What the batch needs from its surroundings.
pub struct BatchContext<'a> {
    pub now: i64,
    /// New page ids.
    pub new_id: &'a mut dyn FnMut() -> String,
    /// New node keys for documents.
    pub new_key: &'a mut dyn FnMut() -> String,
    /// A stored document by content hash.
    pub document: &'a dyn Fn(&str) -> Option<Document>,
    /// The tree `revert_page` goes back to by default: the change request's base.
    pub base: &'a Tree,
    /// Other revisions' trees, for `revert_page` with a `revision`.
    pub revision: &'a dyn Fn(&str) -> Option<Arc<Tree>>,
    /// The files of each `insert_files` change, by change index, already stored by the caller.
    pub files: &'a HashMap<usize, Vec<FileEntry>>,
}

/// A page the batch affected, in the order pages were first touched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affected {
    Created { page: String, reference: Option<String> },
    Updated { page: String },
    Deleted { page: String },
}

/// The result of a batch.
#[derive(Debug, Clone)]
pub struct BatchOutcome {
    pub tree: Tree,
    /// Documents to store: (content hash, JSON bytes).
    pub documents: Vec<(String, Vec<u8>)>,
    pub affected: Vec<Affected>,
    pub inserted_files: Vec<String>,
}

/// The content hash and bytes of a document as stored.
pub fn encode_document(document: &Document) -> (String, Vec<u8>) {
    let bytes = serde_json::to_vec(document).unwrap_or_default();
    (content_hash(&bytes), bytes)
}

/// A document waiting for link resolution at the end of the batch.
struct Pending {
    page: String,
    document: Document,
    /// Whether it came from markdown (raw link targets to resolve).
    from_markdown: bool,
    /// The page's document before the batch, whose keys unchanged blocks keep.
    previous: Option<Document>,
}

struct Batch<'c, 'a> {
    ctx: &'c mut BatchContext<'a>,
    tree: Tree,
    pending: BTreeMap<String, Pending>,
    page_refs: HashMap<String, String>,
    file_refs: HashMap<String, String>,
    affected: Vec<Affected>,
    inserted_files: Vec<String>,
}

/// Applies `changes` to `base` (the change request's current tree).
pub fn apply_batch(
    base: &Tree,
    changes: Vec<Change>,
    ctx: &mut BatchContext<'_>,
) -> Result<BatchOutcome, BatchError> {
    if changes.is_empty() || changes.len() > MAX_CHANGES {
        return Err(err(
            0,
            format!("a batch holds 1 to {MAX_CHANGES} changes, not {}", changes.len()),
        ));
    }
    let mut batch = Batch {
        ctx,
        tree: base.clone(),
        pending: BTreeMap::new(),
        page_refs: HashMap::new(),
        file_refs: HashMap::new(),
        affected: Vec::new(),
        inserted_files: Vec::new(),
    };
    // Refs are batch-wide: collect them first so any change may use any of them.
    for (i, change) in changes.iter().enumerate() {
        match change {
            Change::InsertPage(c) => {
                if let Some(r) = &c.reference {
                    if r.is_empty() || batch.page_refs.contains_key(r) {
                        return Err(err(
                            i,
                            format!("`ref` {r:?} is empty or used twice in this batch"),
                        ));
                    }
                    batch.page_refs.insert(r.clone(), (batch.ctx.new_id)());
                }
            }
            Change::InsertFiles(c) => {
                let entries = batch.ctx.files.get(&i).map_or(&[][..], Vec::as_slice);
                for (input, entry) in c.files.iter().zip(entries) {
                    if let Some(r) = &input.reference {
                        if r.is_empty() || batch.file_refs.contains_key(r) || batch.page_refs.contains_key(r)
                        {
                            return Err(err(
                                i,
                                format!("`ref` {r:?} is empty or used twice in this batch"),
                            ));
                        }
                        batch.file_refs.insert(r.clone(), entry.id.clone());
                    }
                }
            }
            _ => {}
        }
    }
    for (i, change) in changes.into_iter().enumerate() {
        match change {
            Change::InsertPage(c) => batch.insert_page(i, c)?,
            Change::UpdatePage(c) => batch.update_page(i, c)?,
            Change::DeletePage(c) => batch.delete_page(i, &c.page)?,
            Change::RevertPage(c) => batch.revert_page(i, c)?,
            Change::InsertFiles(c) => batch.insert_files(i, &c)?,
        }
    }
    batch.finish()
}

impl Batch<'_, '_> {
    fn touch(&mut self, affected: Affected) {
        let page = match &affected {
            Affected::Created { page, .. } | Affected::Updated { page } | Affected::Deleted { page } => {
                page.clone()
            }
        };
        let existing = self.affected.iter().position(|a| {
            matches!(a, Affected::Created { page: p, .. } | Affected::Updated { page: p } | Affected::Deleted { page: p } if *p == page)
        });
        match (existing, &affected) {
            (None, _) => self.affected.push(affected),
            // A page created then deleted in one batch never existed for the caller.
            (Some(at), Affected::Deleted { .. }) if matches!(self.affected[at], Affected::Created { .. }) => {
                self.affected.remove(at);
            }
            (Some(at), Affected::Deleted { .. }) => self.affected[at] = affected,
            (Some(_), _) => {}
        }
    }

    fn resolve_page(&self, i: usize, id: &str) -> Result<String, BatchError> {
        let id = self.page_refs.get(id).cloned().unwrap_or_else(|| id.to_string());
        if self.tree.pages.contains_key(&id) {
            Ok(id)
        } else {
            Err(err(
                i,
                format!("page {id:?} does not exist in this change request"),
            ))
        }
    }

    /// Reads a document input; markdown also yields page metadata.
    fn read_document(
        &self,
        i: usize,
        input: DocumentInput,
    ) -> Result<(Document, Option<crate::page_markdown::PageMeta>, bool), BatchError> {
        match input {
            DocumentInput::Empty => Ok((Document::default(), None, false)),
            DocumentInput::Markdown(md) => {
                let parsed = parse_page_markdown(&md).map_err(|e| BatchError {
                    too_large: e.limit().is_some_and(LimitError::is_size),
                    ..err(i, e.to_string())
                })?;
                Ok((parsed.document, Some(parsed.meta), true))
            }
            DocumentInput::Json(value) => {
                let doc =
                    Document::from_json(value).map_err(|e| err(i, format!("invalid `document`: {e}")))?;
                Ok((doc, None, false))
            }
        }
    }

    fn apply_fields(&self, i: usize, page: &mut PageEntry, fields: &PageFields) -> Result<(), BatchError> {
        if let Some(t) = &fields.title {
            if t.trim().is_empty() {
                return Err(err(i, "`title` must not be empty"));
            }
            page.title = t.clone();
        }
        let clearable = |v: &Option<String>| v.as_ref().map(|s| (!s.is_empty()).then(|| s.clone()));
        if let Some(e) = clearable(&fields.emoji) {
            if e.as_ref().is_some_and(|e| e.chars().count() > 50) {
                return Err(err(i, "`emoji` must be at most 50 characters"));
            }
            page.emoji = e;
        }
        if let Some(icon) = clearable(&fields.icon) {
            page.icon = icon;
        }
        if let Some(d) = &fields.description {
            page.description = (!d.is_empty()).then(|| d.clone());
        }
        if let Some(c) = clearable(&fields.condition) {
            page.condition = c;
        }
        if let Some(l) = clearable(&fields.link_title) {
            page.link_title = l;
        }
        page.hidden = fields.hidden.unwrap_or(page.hidden);
        page.no_index = fields.no_index.unwrap_or(page.no_index);
        page.no_robots_index = fields.no_robots_index.unwrap_or(page.no_robots_index);
        if let Some(layout) = &fields.layout {
            if !layout.is_object() {
                return Err(err(i, "`layout` must be an object"));
            }
            page.layout = Some(layout.clone());
        }
        if let Some(cover) = &fields.cover {
            page.cover = (!cover.is_null()).then(|| cover.clone());
        }
        if let Some(target) = &fields.target {
            if page.kind != PageKind::Link {
                return Err(err(i, "`target` is only for link pages"));
            }
            if ContentRef::from_value(target).is_none() {
                return Err(err(
                    i,
                    "`target` must be a content reference such as {\"kind\": \"url\", \"url\": ...}",
                ));
            }
            page.target = Some(self.map_json_refs(target.clone()));
        }
        if let Some(href) = &fields.href {
            page.href = Some(href.clone());
        }
        if let Some(source) = &fields.computed {
            if page.kind != PageKind::Computed {
                return Err(err(i, "`computed` is only for computed pages"));
            }
            crate::computed::check_source(source).map_err(|e| err(i, e))?;
            if page.computed.as_ref() != Some(source) {
                page.computed = Some(source.clone());
                // Generated again from the new source.
                page.computed_seed = None;
            }
        }
        Ok(())
    }

    /// Refuses to touch a page a computed page generated: its source decides it.
    fn not_generated(&self, i: usize, id: &str) -> Result<(), BatchError> {
        match self.tree.pages.get(id) {
            Some(page) if crate::computed::is_generated(&self.tree, page) => Err(err(
                i,
                format!(
                    "page {id:?} is generated by its computed parent page: change the parent's source instead"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Refuses a computed page as the parent of a page a batch places.
    fn not_into_computed(&self, i: usize, parent: Option<&str>) -> Result<(), BatchError> {
        match parent.and_then(|p| self.tree.pages.get(p)) {
            Some(p) if p.kind == PageKind::Computed => Err(err(
                i,
                format!(
                    "page {:?} is computed: its pages are generated from its source",
                    p.id
                ),
            )),
            _ => Ok(()),
        }
    }

    fn apply_meta(page: &mut PageEntry, meta: &crate::page_markdown::PageMeta) {
        if let Some(t) = &meta.title {
            page.title = t.clone();
        }
        if meta.description.is_some() {
            page.description = meta.description.clone();
        }
        if meta.emoji.is_some() {
            page.emoji = meta.emoji.clone();
        }
        if meta.icon.is_some() {
            page.icon = meta.icon.clone();
        }
        if meta.cover.is_some() {
            page.cover = meta.cover.clone();
        }
        if meta.layout.is_some() {
            page.layout = meta.layout.clone();
        }
        page.hidden = meta.hidden.unwrap_or(page.hidden);
        page.no_index = meta.no_index.unwrap_or(page.no_index);
        page.no_robots_index = meta.no_robots_index.unwrap_or(page.no_robots_index);
    }

    /// Replaces batch refs in a JSON value that holds content references.
    fn map_json_refs(&self, value: Value) -> Value {
        match ContentRef::from_value(&value) {
            Some(mut r) => {
                self.map_ref(&mut r);
                r.to_value()
            }
            None => value,
        }
    }

    fn map_ref(&self, r: &mut ContentRef) {
        match r {
            ContentRef::Page { page, .. } => {
                if let Some(id) = self.page_refs.get(page.as_str()) {
                    *page = id.clone();
                }
            }
            ContentRef::Anchor { page: Some(page), .. } => {
                if let Some(id) = self.page_refs.get(page.as_str()) {
                    *page = id.clone();
                }
            }
            ContentRef::File { file, .. } => {
                if let Some(id) = self.file_refs.get(file.as_str()) {
                    *file = id.clone();
                }
            }
            _ => {}
        }
    }

    fn insert_page(&mut self, i: usize, c: InsertPage) -> Result<(), BatchError> {
        let kind = c.kind.unwrap_or(PageKind::Document);
        if kind == PageKind::Computed && c.fields.computed.is_none() {
            return Err(err(
                i,
                "a computed page needs its source: `computed` ({\"type\": \"builtin:openapi\", ...})",
            ));
        }
        let id = match &c.reference {
            Some(r) => self
                .page_refs
                .get(r)
                .cloned()
                .unwrap_or_else(|| (self.ctx.new_id)()),
            None => (self.ctx.new_id)(),
        };
        let parent = c.into.as_deref().map(|p| self.resolve_page(i, p)).transpose()?;
        self.not_into_computed(i, parent.as_deref())?;
        let mut page = PageEntry::new(&id, kind, "Untitled", self.ctx.now);
        self.apply_fields(i, &mut page, &c.fields)?;
        if kind == PageKind::Link && page.target.is_none() {
            return Err(err(i, "a link page needs a `target`"));
        }
        let document = match (kind, c.document) {
            (PageKind::Document, Some(input)) => {
                let (doc, meta, from_markdown) = self.read_document(i, input)?;
                if let Some(meta) = &meta {
                    Self::apply_meta(&mut page, meta);
                }
                Some((doc, from_markdown))
            }
            (PageKind::Document, None) => {
                return Err(err(
                    i,
                    "`document` is required: {\"markdown\": ...}, {\"document\": ...} or {}",
                ));
            }
            (_, Some(_)) => return Err(err(i, format!("a {} page has no document", kind.as_str()))),
            (_, None) => None,
        };
        page.slug = c.fields.slug.clone().unwrap_or_default();
        self.tree
            .insert_page(page, parent.as_deref(), c.at)
            .map_err(|e| err(i, e.to_string()))?;
        if let Some((document, from_markdown)) = document {
            self.pending.insert(
                id.clone(),
                Pending {
                    page: id.clone(),
                    document,
                    from_markdown,
                    previous: None,
                },
            );
        }
        self.touch(Affected::Created {
            page: id,
            reference: c.reference,
        });
        Ok(())
    }

    fn update_page(&mut self, i: usize, c: UpdatePage) -> Result<(), BatchError> {
        let id = self.resolve_page(i, &c.page)?;
        self.not_generated(i, &id)?;
        let mut page = (**self.tree.page(&id).map_err(|e| err(i, e.to_string()))?).clone();
        self.apply_fields(i, &mut page, &c.fields)?;
        if let Some(input) = c.document {
            if page.kind != PageKind::Document {
                return Err(err(i, format!("a {} page has no document", page.kind.as_str())));
            }
            let (doc, meta, from_markdown) = self.read_document(i, input)?;
            if let Some(meta) = &meta {
                Self::apply_meta(&mut page, meta);
            }
            // Blocks that did not change keep their keys (matched once links are resolved, in
            // `finish`), so comments on them stay attached.
            let previous = self.current_document(&page);
            self.pending.insert(
                id.clone(),
                Pending {
                    page: id.clone(),
                    document: doc,
                    from_markdown,
                    previous,
                },
            );
        }
        page.updated_at = self.ctx.now;
        self.tree.replace_page(page);
        if let Some(slug) = &c.fields.slug {
            self.tree.set_slug(&id, slug).map_err(|e| err(i, e.to_string()))?;
        }
        let parent = match &c.into {
            Field::Absent => None,
            Field::Null => Some(None),
            Field::Value(p) => Some(Some(self.resolve_page(i, p)?)),
        };
        if let Some(parent) = &parent {
            self.not_into_computed(i, parent.as_deref())?;
        }
        if parent.is_some() || c.at.is_some() {
            self.tree
                .move_page(&id, parent.as_ref().map(|p| p.as_deref()), c.at)
                .map_err(|e| err(i, e.to_string()))?;
        }
        self.touch(Affected::Updated { page: id });
        Ok(())
    }

    /// The document a page has now in the batch: pending, else stored.
    fn current_document(&self, page: &PageEntry) -> Option<Document> {
        if let Some(p) = self.pending.get(&page.id) {
            return Some(p.document.clone());
        }
        page.document.as_deref().and_then(|h| (self.ctx.document)(h))
    }

    fn delete_page(&mut self, i: usize, page: &str) -> Result<(), BatchError> {
        let id = self.resolve_page(i, page)?;
        self.not_generated(i, &id)?;
        let removed = self.tree.delete_page(&id).map_err(|e| err(i, e.to_string()))?;
        for page in removed {
            self.pending.remove(&page);
            self.touch(Affected::Deleted { page });
        }
        Ok(())
    }

    fn revert_page(&mut self, i: usize, c: RevertPage) -> Result<(), BatchError> {
        let page_id = self
            .page_refs
            .get(&c.page)
            .cloned()
            .unwrap_or_else(|| c.page.clone());
        let other;
        let target: &Tree = match &c.revision {
            None => self.ctx.base,
            Some(rev) => {
                other = (self.ctx.revision)(rev)
                    .ok_or_else(|| err(i, format!("revision {rev:?} does not exist in this space")))?;
                &other
            }
        };
        let then = target.pages.get(&page_id).cloned();
        let now = self.tree.pages.get(&page_id).cloned();
        match (then, now, c.block) {
            (None, None, _) => Err(err(
                i,
                format!("page {page_id:?} exists neither now nor in the revision reverted to"),
            )),
            // Added since: remove it.
            (None, Some(_), None) => self.delete_page(i, &page_id),
            (None, Some(_), Some(_)) => Err(err(i, "cannot revert blocks of a page that did not exist then")),
            // Deleted since, or changed: put back the entry as it was.
            (Some(old), current, None) => {
                let parent = old.parent.clone().filter(|p| self.tree.pages.contains_key(p));
                let mut restored = (*old).clone();
                if current.is_some() {
                    self.tree.pages.remove(&page_id);
                }
                restored.slug = if self.tree.index().children(parent.as_deref()).iter().any(|s| {
                    self.tree
                        .pages
                        .get(s)
                        .is_some_and(|p| p.slug == restored.slug && p.kind.has_path())
                }) {
                    String::new()
                } else {
                    restored.slug.clone()
                };
                let order = restored.order.clone();
                self.tree
                    .insert_page(restored, parent.as_deref(), None)
                    .map_err(|e| err(i, e.to_string()))?;
                // Its old place among siblings when that key is still free.
                if let Some(p) = self.tree.pages.get(&page_id) {
                    let mut p = (**p).clone();
                    if !self
                        .tree
                        .pages
                        .values()
                        .any(|o| o.parent == p.parent && o.order == order && o.id != p.id)
                    {
                        p.order = order;
                    }
                    self.tree.replace_page(p);
                }
                self.pending.remove(&page_id);
                // Child pages deleted with it come back too.
                let children: Vec<Arc<PageEntry>> = target
                    .pages
                    .values()
                    .filter(|p| p.parent.as_deref() == Some(&page_id) && !self.tree.pages.contains_key(&p.id))
                    .cloned()
                    .collect();
                for child in children {
                    self.tree.pages.insert(child.id.clone(), child);
                }
                self.touch(if current.is_some() {
                    Affected::Updated { page: page_id }
                } else {
                    Affected::Created {
                        page: page_id,
                        reference: None,
                    }
                });
                Ok(())
            }
            (Some(_), None, Some(_)) => Err(err(i, "cannot revert blocks of a page that was deleted")),
            (Some(old), Some(current), Some(keys)) => {
                let old_doc = old
                    .document
                    .as_deref()
                    .and_then(|h| (self.ctx.document)(h))
                    .unwrap_or_default();
                let mut doc = self.current_document(&current).unwrap_or_default();
                revert_blocks(&old_doc, &mut doc, &keys);
                self.pending.insert(
                    page_id.clone(),
                    Pending {
                        page: page_id.clone(),
                        document: doc,
                        from_markdown: false,
                        previous: None,
                    },
                );
                let mut page = (*current).clone();
                page.updated_at = self.ctx.now;
                self.tree.replace_page(page);
                self.touch(Affected::Updated { page: page_id });
                Ok(())
            }
        }
    }

    fn insert_files(&mut self, i: usize, c: &InsertFiles) -> Result<(), BatchError> {
        if c.files.is_empty() || c.files.len() > MAX_FILES {
            return Err(err(i, format!("`files` holds 1 to {MAX_FILES} files")));
        }
        let entries = self.ctx.files.get(&i).cloned().unwrap_or_default();
        if entries.len() != c.files.len() {
            return Err(err(i, "the files of this change were not uploaded"));
        }
        for entry in entries {
            self.inserted_files.push(entry.id.clone());
            self.tree.files.insert(entry.id.clone(), Arc::new(entry));
        }
        Ok(())
    }

    /// Resolves links, fills keys, encodes documents and points pages at them.
    fn finish(mut self) -> Result<BatchOutcome, BatchError> {
        // Paths are needed only by relative links; most batches have none, and indexing a
        // 10,000-page tree was most of a one-page batch's time.
        let index = std::cell::OnceCell::new();
        let mut documents = Vec::new();
        let pending = std::mem::take(&mut self.pending);
        for (
            _,
            Pending {
                page,
                mut document,
                from_markdown,
                previous,
            },
        ) in pending
        {
            if from_markdown {
                let resolver = |target: &str| self.resolve_markdown_target(&index, &page, target);
                resolve_links(&mut document, &resolver);
            } else {
                for_each_ref_mut(&mut document, &mut |r| self.map_ref(r));
            }
            if let Some(previous) = &previous {
                carry_keys(previous, &mut document);
            }
            fill_missing_keys(&mut document, self.ctx.new_key);
            let (hash, bytes) = encode_document(&document);
            if let Some(entry) = self.tree.pages.get(&page) {
                let mut entry = (**entry).clone();
                if entry.document.as_deref() != Some(hash.as_str()) {
                    entry.document = Some(hash.clone());
                    entry.updated_at = self.ctx.now;
                    self.tree.replace_page(entry);
                }
            }
            documents.push((hash, bytes));
        }
        Ok(BatchOutcome {
            tree: self.tree,
            documents,
            affected: self.affected,
            inserted_files: self.inserted_files,
        })
    }

    /// Turns a markdown link target into a reference, GitBook's way: `/pages/<id or path>`,
    /// `/files/<id>`, batch refs (`./<ref>.md`, `./<ref>`), relative `.md` paths and folders,
    /// and `#anchors`. A target that names nothing stays a URL.
    fn resolve_markdown_target(
        &self,
        index: &OnceCell<TreeIndex>,
        page: &str,
        target: &str,
    ) -> Option<ContentRef> {
        resolve_target(&self.tree, index, page, target, &self.page_refs, &self.file_refs)
    }
}

/// Resolves a markdown link target written in page `page` against a tree (see
/// [`Batch::resolve_markdown_target`]). The tree's index is built in `index` when a target
/// needs paths.
pub fn resolve_target(
    tree: &Tree,
    index: &OnceCell<TreeIndex>,
    page: &str,
    target: &str,
    page_refs: &HashMap<String, String>,
    file_refs: &HashMap<String, String>,
) -> Option<ContentRef> {
    let index = || index.get_or_init(|| tree.index());
    let (path_part, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a.to_string()).filter(|a| !a.is_empty())),
        None => (target, None),
    };
    let page_ref = |id: &str| match &anchor {
        Some(a) => ContentRef::Anchor {
            anchor: a.clone(),
            page: Some(id.to_string()),
            space: None,
        },
        None => ContentRef::page(id),
    };
    if let Some(rest) = path_part.strip_prefix("/pages/") {
        if tree.pages.contains_key(rest) {
            return Some(page_ref(rest));
        }
        let path = rest
            .trim_end_matches(".md")
            .trim_end_matches("/README")
            .trim_end_matches("README");
        return index().by_path(path).map(page_ref);
    }
    if let Some(rest) = path_part.strip_prefix("/files/") {
        return tree.files.contains_key(rest).then(|| ContentRef::file(rest));
    }
    let bare = path_part.trim_start_matches("./");
    if let Some(id) = page_refs.get(bare.trim_end_matches(".md"))
        && (bare.ends_with(".md") || !file_refs.contains_key(bare))
    {
        return Some(page_ref(id));
    }
    if let Some(id) = file_refs.get(bare) {
        return Some(ContentRef::file(id));
    }
    // Only a relative path needs the page's own path (and so the index).
    let relative = !path_part.is_empty()
        && !path_part.starts_with('/')
        && !matches!(normalize_link_target("", target), Some(LinkTarget::External(_)));
    let current_file = if relative {
        index().file_path(page).unwrap_or_else(|| "README.md".to_string())
    } else {
        String::new()
    };
    match normalize_link_target(&current_file, target)? {
        LinkTarget::External(_) => None,
        LinkTarget::Anchor(a) => Some(ContentRef::Anchor {
            anchor: a,
            page: None,
            space: None,
        }),
        LinkTarget::Path {
            path,
            anchor,
            is_page,
        } => {
            if !is_page {
                // A folder link without an extension: the page at that path, if any.
                return index().by_path(&path).map(|id| match anchor {
                    Some(a) => ContentRef::Anchor {
                        anchor: a,
                        page: Some(id.to_string()),
                        space: None,
                    },
                    None => ContentRef::page(id),
                });
            }
            let id = index().by_path(&path)?;
            Some(match anchor {
                Some(a) => ContentRef::Anchor {
                    anchor: a,
                    page: Some(id.to_string()),
                    space: None,
                },
                None => ContentRef::page(id),
            })
        }
    }
}

/// Gives the top-level blocks of `new` that are unchanged in `old` (same content, in order) the
/// keys they had, and their inner nodes too.
pub fn carry_keys(old: &Document, new: &mut Document) {
    let pairs = common_pairs(&fingerprints(&old.nodes), &fingerprints(&new.nodes));
    for (o, n) in pairs {
        new.nodes[n] = old.nodes[o].clone();
    }
}

/// Reverts the top-level blocks with the given keys to their state in `old`: modified blocks are
/// reset, added ones removed, deleted ones put back at their old position.
pub fn revert_blocks(old: &Document, doc: &mut Document, keys: &[String]) {
    for key in keys {
        let in_old = old.nodes.iter().position(|n| n.key.as_deref() == Some(key));
        let in_new = doc.nodes.iter().position(|n| n.key.as_deref() == Some(key));
        match (in_old, in_new) {
            (Some(o), Some(n)) => doc.nodes[n] = old.nodes[o].clone(),
            (None, Some(n)) => {
                doc.nodes.remove(n);
            }
            (Some(o), None) => {
                let at = o.min(doc.nodes.len());
                doc.nodes.insert(at, old.nodes[o].clone());
            }
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Env {
        ids: usize,
        keys: usize,
        docs: HashMap<String, Document>,
        base: Tree,
        files: HashMap<usize, Vec<FileEntry>>,
    }

    impl Env {
        fn new() -> Env {
            Env {
                ids: 0,
                keys: 0,
                docs: HashMap::new(),
                base: Tree::default(),
                files: HashMap::new(),
            }
        }

        fn apply(&mut self, tree: &Tree, changes: Value) -> Result<BatchOutcome, BatchError> {
            let changes: Vec<Change> = changes
                .as_array()
                .unwrap()
                .iter()
                .map(|c| Change::from_json(c.clone()).unwrap())
                .collect();
            let mut ids = self.ids;
            let mut keys = self.keys;
            let mut new_id = || {
                ids += 1;
                format!("page{ids}")
            };
            let mut new_key = || {
                keys += 1;
                format!("k{keys}")
            };
            let docs = self.docs.clone();
            let lookup = move |h: &str| docs.get(h).cloned();
            let mut ctx = BatchContext {
                now: 1,
                new_id: &mut new_id,
                new_key: &mut new_key,
                document: &lookup,
                base: &self.base,
                revision: &|_| None,
                files: &self.files,
            };
            let out = apply_batch(tree, changes, &mut ctx);
            self.ids = ids;
            self.keys = keys;
            if let Ok(o) = &out {
                for (h, bytes) in &o.documents {
                    self.docs
                        .insert(h.clone(), serde_json::from_slice(bytes).unwrap());
                }
            }
            out
        }

        fn doc_of(&self, tree: &Tree, page: &str) -> Document {
            self.docs[tree.pages[page].document.as_ref().unwrap()].clone()
        }
    }

    #[test]
    fn refs_link_pages_inserted_in_one_batch_in_any_order() {
        let mut env = Env::new();
        let out = env
            .apply(
                &Tree::default(),
                json!([
                    {"operation": "insert_page", "ref": "parent", "title": "Parent", "document": {"markdown": "See [the child](./child.md#usage)."}},
                    {"operation": "insert_page", "ref": "child", "into": "parent", "document": {"markdown": "# Child\n\nBack to [the parent](./parent.md).\n"}},
                ]),
            )
            .unwrap();
        let parent_id = out.affected.iter().find_map(|a| match a {
            Affected::Created {
                page,
                reference: Some(r),
            } if r == "parent" => Some(page.clone()),
            _ => None,
        });
        let parent_id = parent_id.unwrap();
        let child = out
            .tree
            .pages
            .values()
            .find(|p| p.title == "Child")
            .unwrap()
            .clone();
        assert_eq!(child.parent.as_deref(), Some(parent_id.as_str()));
        let mut refs = Vec::new();
        crate::document::for_each_ref(&env.doc_of(&out.tree, &child.id), &mut |r, _| {
            refs.push(r.clone())
        });
        assert_eq!(refs, vec![ContentRef::page(&parent_id)]);
        let mut refs = Vec::new();
        crate::document::for_each_ref(&env.doc_of(&out.tree, &parent_id), &mut |r, _| {
            refs.push(r.clone())
        });
        assert_eq!(
            refs,
            vec![ContentRef::Anchor {
                anchor: "usage".into(),
                page: Some(child.id.clone()),
                space: None
            }]
        );
        assert_eq!(out.tree.index().path(&child.id), Some("parent/child"));
    }

    #[test]
    fn a_failing_change_names_its_index() {
        let mut env = Env::new();
        let error = env
            .apply(
                &Tree::default(),
                json!([
                    {"operation": "insert_page", "title": "A", "document": {}},
                    {"operation": "insert_page", "title": "B", "document": {}},
                    {"operation": "update_page", "page": "nope", "title": "C"},
                ]),
            )
            .unwrap_err();
        assert_eq!(error.index, 2);
        assert!(error.message.contains("nope"));
    }

    #[test]
    fn update_moves_renames_and_keeps_unchanged_block_keys() {
        let mut env = Env::new();
        let first = env
            .apply(
                &Tree::default(),
                json!([
                    {"operation": "insert_page", "ref": "a", "title": "A", "document": {"markdown": "One.\n\nTwo.\n"}},
                    {"operation": "insert_page", "ref": "b", "title": "B", "document": {}},
                ]),
            )
            .unwrap();
        let a = first
            .tree
            .pages
            .values()
            .find(|p| p.title == "A")
            .unwrap()
            .id
            .clone();
        let b = first
            .tree
            .pages
            .values()
            .find(|p| p.title == "B")
            .unwrap()
            .id
            .clone();
        let before = env.doc_of(&first.tree, &a);
        let second = env
            .apply(
                &first.tree,
                json!([{"operation": "update_page", "page": a, "title": "Renamed", "slug": "renamed", "into": b,
                        "document": {"markdown": "One.\n\nTwo changed.\n"}}]),
            )
            .unwrap();
        let page = &second.tree.pages[&a];
        assert_eq!(page.title, "Renamed");
        assert_eq!(page.parent.as_deref(), Some(b.as_str()));
        assert_eq!(second.tree.index().path(&a), Some("b/renamed"));
        let after = env.doc_of(&second.tree, &a);
        assert_eq!(
            after.nodes[0].key, before.nodes[0].key,
            "unchanged block keeps its key"
        );
        assert_ne!(after.nodes[1].key, before.nodes[1].key);
        // Back to the root with `into: null`.
        let third = env
            .apply(
                &second.tree,
                json!([{"operation": "update_page", "page": a, "into": null}]),
            )
            .unwrap();
        assert_eq!(third.tree.pages[&a].parent, None);
    }

    #[test]
    fn revert_restores_deleted_pages_and_removes_added_ones() {
        let mut env = Env::new();
        let base = env
            .apply(&Tree::default(), json!([{"operation": "insert_page", "title": "Keep", "document": {"markdown": "Base text."}}]))
            .unwrap();
        env.base = base.tree.clone();
        let keep = base.tree.pages.keys().next().unwrap().clone();
        let edited = env
            .apply(
                &base.tree,
                json!([{"operation": "delete_page", "page": keep}, {"operation": "insert_page", "title": "New", "document": {}}]),
            )
            .unwrap();
        let new = edited.tree.pages.keys().next().unwrap().clone();
        let reverted = env
            .apply(&edited.tree, json!([{"operation": "revert_page", "page": keep}, {"operation": "revert_page", "page": new}]))
            .unwrap();
        assert_eq!(reverted.tree.pages.len(), 1);
        assert_eq!(reverted.tree.pages[&keep].title, "Keep");
        assert_eq!(env.doc_of(&reverted.tree, &keep), env.doc_of(&base.tree, &keep));
    }

    #[test]
    fn files_are_linked_by_ref() {
        let mut env = Env::new();
        env.files.insert(
            0,
            vec![FileEntry {
                id: "file1".into(),
                name: "diagram.png".into(),
                content_type: "image/png".into(),
                size: 3,
                blob: "h".into(),
                dimensions: None,
                created_at: 1,
            }],
        );
        let out = env
            .apply(
                &Tree::default(),
                json!([
                    {"operation": "insert_files", "files": [{"ref": "diagram", "name": "diagram.png", "contentType": "image/png", "base64": "AAA="}]},
                    {"operation": "insert_page", "title": "P", "document": {"markdown": "![A diagram](./diagram)\n"}},
                ]),
            )
            .unwrap();
        assert_eq!(out.inserted_files, vec!["file1"]);
        let page = out.tree.pages.keys().next().unwrap().clone();
        let mut refs = Vec::new();
        crate::document::for_each_ref(&env.doc_of(&out.tree, &page), &mut |r, _| refs.push(r.clone()));
        assert_eq!(refs, vec![ContentRef::file("file1")]);
    }

    #[test]
    fn parses_document_inputs_and_operations() {
        assert!(Change::from_json(json!({"operation": "rename_page"})).is_err());
        assert!(Change::from_json(json!({"operation": "delete_page"})).is_err());
        assert!(Change::from_json(json!({"operation": "insert_page", "document": {"markdown": 1}})).is_err());
        assert!(Change::from_json(json!({"operation": "insert_page", "document": {"html": "x"}})).is_err());
        assert!(Change::from_json(json!({"operation": "insert_page", "document": {}})).is_ok());
    }
}
