//! Opening a revision of a space for reading: its main content, a past revision, or a change
//! request's. Content reads (pages, files, documents), links and the changes of a revision or a
//! change request start here; opening a change request's content needs `change_requests`,
//! which is why this sits above it (and `content`, below both, knows neither).

use std::sync::Arc;

use quire_content::tree::{FileEntry, Tree};

use crate::change_requests::{self, ChangeRequest};
use crate::content::store::{self, ContentCache, StoredTree};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::spaces::{self, SpaceFor};

/// Which revision a read is about.
#[derive(Debug, Clone)]
pub enum Source {
    Main,
    Revision(String),
    ChangeRequest(String),
}

/// A revision opened for reading, with the space it belongs to.
pub struct Opened {
    pub space: SpaceFor,
    pub stored: Arc<StoredTree>,
    pub change_request: Option<ChangeRequest>,
}

/// Opens the revision `source` of a space the caller can view.
pub fn open(
    c: &mut dyn Conn,
    cache: &ContentCache,
    user_id: &str,
    space_id: &str,
    source: &Source,
) -> StoreResult<Opened> {
    let space = spaces::load_active(c, space_id, user_id)?;
    open_space(c, cache, space, source)
}

/// Opens the revision `source` of a space already loaded with [`spaces::load_active`].
pub fn open_space(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: SpaceFor,
    source: &Source,
) -> StoreResult<Opened> {
    let space_id = space.space.id.as_str();
    let (revision, change_request) = match source {
        Source::Main => (
            space
                .space
                .revision
                .clone()
                .ok_or_else(|| StoreError::internal("space without revision"))?,
            None,
        ),
        Source::Revision(r) => (r.clone(), None),
        Source::ChangeRequest(id) => {
            let cr = change_requests::load(c, space_id, id)?;
            (cr.revision.clone(), Some(cr))
        }
    };
    let stored = store::load_tree(c, cache, space_id, &revision)?;
    Ok(Opened {
        space,
        stored,
        change_request,
    })
}

impl Opened {
    /// The space's main revision, for reads of a change request that compare with it.
    pub fn main_tree(&self, c: &mut dyn Conn, cache: &ContentCache) -> StoreResult<Arc<StoredTree>> {
        let revision = self
            .space
            .space
            .revision
            .as_deref()
            .ok_or_else(|| StoreError::internal("space without revision"))?;
        store::load_tree(c, cache, &self.space.space.id, revision)
    }
}

/// A revision's files in list order: by creation, then id.
pub fn sorted_files(tree: &Tree) -> Vec<&FileEntry> {
    let mut files: Vec<&FileEntry> = tree.files.values().map(|f| f.as_ref()).collect();
    files.sort_by(|a, b| a.created_at.cmp(&b.created_at).then_with(|| a.id.cmp(&b.id)));
    files
}

/// The files of an opened revision in list order, one page of them. Cursors are scoped by the
/// space, not the revision: a cursor is a file's (creation time, id), a position in the files of
/// any revision of it.
pub fn files<'a>(opened: &'a Opened, paging: &Paging) -> StoreResult<List<&'a FileEntry>> {
    let page = Page::new(paging, format!("files:{}", opened.space.space.id))?;
    let files = sorted_files(&opened.stored.tree);
    let after: Option<(i64, String)> = page.after()?;
    let start = match &after {
        Some((created, id)) => {
            files.partition_point(|f| (f.created_at, f.id.as_str()) <= (*created, id.as_str()))
        }
        None => 0,
    };
    let count = files.len() as u64;
    let rows: Vec<&FileEntry> = files[start..].iter().take(page.limit + 1).copied().collect();
    Ok(page.finish(rows, count, |f| (f.created_at, f.id.clone())))
}

/// What a change request changes: the revision it is based on, and its own.
pub fn change_request_trees(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: SpaceFor,
    cr_id: &str,
) -> StoreResult<(Arc<StoredTree>, Arc<StoredTree>)> {
    let opened = open_space(c, cache, space, &Source::ChangeRequest(cr_id.to_string()))?;
    let cr = opened
        .change_request
        .as_ref()
        .ok_or_else(|| StoreError::internal("no change request"))?;
    let base = store::load_tree(c, cache, &opened.space.space.id, cr.base_revision())?;
    Ok((base, opened.stored))
}

/// What a revision changed: its first parent (an empty revision for a first one), itself, and
/// the change request it merged, with its users.
pub struct RevisionChanges {
    pub parent: Arc<StoredTree>,
    pub revision: Arc<StoredTree>,
    pub merged_from: Option<crate::users::WithUsers<ChangeRequest>>,
}

/// What a revision of a space changed.
pub fn revision_changes(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: SpaceFor,
    revision_id: &str,
) -> StoreResult<RevisionChanges> {
    let opened = open_space(c, cache, space, &Source::Revision(revision_id.to_string()))?;
    let space_id = opened.space.space.id.clone();
    let parent = match opened.stored.meta.parents.first() {
        Some(parent) => store::load_tree(c, cache, &space_id, parent)?,
        None => Arc::new(StoredTree::empty(&space_id)),
    };
    let merged_from = match &opened.stored.meta.merged_from {
        Some(id) => {
            let cr = change_requests::load(c, &space_id, id)?;
            Some(change_requests::one_with_users(c, cr)?)
        }
        None => None,
    };
    Ok(RevisionChanges {
        parent,
        revision: opened.stored,
        merged_from,
    })
}
