//! The first revision of a new space, and copies of a space's content.

use quire_content::tree::{PageEntry, PageKind, Tree};

use crate::content::store::{self, ContentCache, NewRevision};
use crate::db::Conn;
use crate::error::StoreResult;
use crate::{clock, ids, params};

/// Gives a new space its first revision: one empty page, or none when `empty`.
pub fn init_space(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    empty: bool,
    user_id: &str,
) -> StoreResult<String> {
    let mut tree = Tree::default();
    let mut documents = Vec::new();
    if !empty {
        let (hash, bytes) = store::empty_document();
        let mut page = PageEntry::new(&ids::new_id(), PageKind::Document, "Untitled", clock::now_ms());
        page.document = Some(hash.clone());
        tree.insert_page(page, None, None)
            .map_err(|e| crate::error::StoreError::internal(e.to_string()))?;
        documents.push((hash, bytes));
    }
    let stored = store::write_revision(
        c,
        cache,
        NewRevision {
            space_id,
            kind: "edits",
            parents: Vec::new(),
            change_request: None,
            merged_from: None,
            created_by: Some(user_id),
        },
        None,
        tree,
        &documents,
    )?;
    c.execute(
        "UPDATE spaces SET revision_id = ?2 WHERE id = ?1",
        params![space_id, stored.id()],
    )?;
    super::main_changed(c, cache, space_id, &stored)?;
    Ok(stored.id().to_string())
}

/// Gives `target` a first revision with the current content of `source`: the objects that
/// revision needs are copied, not the source's history.
pub fn copy_content(
    c: &mut dyn Conn,
    cache: &ContentCache,
    source: &str,
    revision: &str,
    target: &str,
    user_id: &str,
) -> StoreResult<()> {
    let stored = store::load_tree(c, cache, source, revision)?;
    let mut hashes: Vec<&str> = stored.root.bucket_hashes().collect();
    hashes.extend(stored.tree.pages.values().filter_map(|p| p.document.as_deref()));
    hashes.extend(
        stored
            .tree
            .reusable
            .values()
            .filter_map(|r| r.document.as_deref()),
    );
    // Blocks a large document keeps apart are objects of their own (see `objects`).
    let apart = crate::content::objects::blocks_apart(c, source, &hashes)?;
    hashes.extend(apart.iter().map(String::as_str));
    for chunk in hashes.chunks(400) {
        let mut args = crate::db::Args::default();
        let target_arg = args.arg(target);
        let source_arg = args.arg(source);
        let list = args.list(chunk.iter().copied());
        c.execute(
            &format!(
                "INSERT INTO objects (space_id, hash, body) SELECT {target_arg}, hash, body FROM objects
                 WHERE space_id = {source_arg} AND hash IN ({list}) ON CONFLICT (space_id, hash) DO NOTHING"
            ),
            args.values(),
        )?;
    }
    let copy = store::write_revision(
        c,
        cache,
        NewRevision {
            space_id: target,
            kind: "edits",
            parents: Vec::new(),
            change_request: None,
            merged_from: None,
            created_by: Some(user_id),
        },
        Some(&stored),
        stored.tree.clone(),
        &[],
    )?;
    c.execute(
        "UPDATE spaces SET revision_id = ?2 WHERE id = ?1",
        params![target, copy.id()],
    )?;
    super::main_changed(c, cache, target, &copy)
}
