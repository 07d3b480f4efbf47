//! What a space's main content derives: its search index and its link index. Both describe the
//! space's current revision and are brought to a new one in the transaction that moves main, by
//! comparing the revision they describe (`content_indexes`) with the new one: a revision that
//! changes one page of 10,000 re-indexes that page, not the space.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use quire_content::tree::{PageEntry, PageKind, Tree};

use super::store::{self, ContentCache, StoredTree};
use crate::db::Conn;
use crate::error::ApiResult;
use crate::{links, params, search};

/// How a space's pages and files differ between the revision its indexes describe and a new one.
#[derive(Default)]
pub struct Changes {
    /// Pages whose search rows must go (changed, hidden or removed pages).
    pub search_remove: Vec<String>,
    /// Pages to index for search, as they are in the new revision.
    pub search_add: Vec<Arc<PageEntry>>,
    /// Pages whose document changed (or that appeared or went): their links are extracted again.
    pub documents: Vec<String>,
    pub pages_added: Vec<String>,
    pub pages_removed: Vec<String>,
    pub files_added: Vec<String>,
    pub files_removed: Vec<String>,
}

impl Changes {
    /// Compares two trees; with no old tree, everything in `new` is added.
    pub fn between(old: Option<&Tree>, new: &Tree) -> Changes {
        let empty = Tree::default();
        let old = old.unwrap_or(&empty);
        let old_hidden = hidden_pages(old);
        let new_hidden = hidden_pages(new);
        let mut changes = Changes::default();
        for (id, page) in &new.pages {
            let searchable = is_searchable(page, &new_hidden);
            match old.pages.get(id) {
                None => {
                    changes.pages_added.push(id.clone());
                    changes.documents.push(id.clone());
                    if searchable {
                        changes.search_add.push(page.clone());
                    }
                }
                Some(before) => {
                    if before.document != page.document || before.kind != page.kind {
                        changes.documents.push(id.clone());
                    }
                    let was_searchable = is_searchable(before, &old_hidden);
                    let same_entry = Arc::ptr_eq(before, page)
                        || (before.document == page.document
                            && before.title == page.title
                            && before.description == page.description);
                    if same_entry && searchable == was_searchable {
                        continue;
                    }
                    if was_searchable {
                        changes.search_remove.push(id.clone());
                    }
                    if searchable {
                        changes.search_add.push(page.clone());
                    }
                }
            }
        }
        for id in old.pages.keys() {
            if !new.pages.contains_key(id) {
                changes.pages_removed.push(id.clone());
                changes.documents.push(id.clone());
                changes.search_remove.push(id.clone());
            }
        }
        for id in new.files.keys() {
            if !old.files.contains_key(id) {
                changes.files_added.push(id.clone());
            }
        }
        for id in old.files.keys() {
            if !new.files.contains_key(id) {
                changes.files_removed.push(id.clone());
            }
        }
        changes
    }
}

/// Whether search shows a page: a document page that is not hidden (nor below a hidden page)
/// and not marked `noIndex`.
fn is_searchable(page: &PageEntry, hidden: &HashSet<String>) -> bool {
    page.kind == PageKind::Document && !page.no_index && !hidden.contains(&page.id)
}

/// The pages that are hidden or below a hidden page.
fn hidden_pages(tree: &Tree) -> HashSet<String> {
    if !tree.pages.values().any(|p| p.hidden) {
        return HashSet::new();
    }
    let mut known: HashMap<&str, bool> = HashMap::new();
    for id in tree.pages.keys() {
        // Walk up to the first page whose answer is known (or the top), then settle the chain.
        let mut chain: Vec<&str> = Vec::new();
        let mut cursor = Some(id.as_str());
        let mut answer = false;
        while let Some(current) = cursor {
            if let Some(known) = known.get(current) {
                answer = *known;
                break;
            }
            let Some(page) = tree.pages.get(current) else {
                break;
            };
            chain.push(current);
            if page.hidden || chain.len() > quire_content::tree::MAX_DEPTH + 1 {
                answer = page.hidden;
                break;
            }
            cursor = page.parent.as_deref();
        }
        for page in chain {
            known.insert(page, answer);
        }
    }
    known
        .into_iter()
        .filter(|(_, hidden)| *hidden)
        .map(|(id, _)| id.to_string())
        .collect()
}

/// Brings the indexes of `space_id` to `new`, which is becoming its main revision. Call it in
/// the transaction that moves main.
pub fn main_changed(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    new: &StoredTree,
) -> ApiResult<()> {
    let indexed: Option<String> = c.query_scalar(
        "SELECT revision_id FROM content_indexes WHERE space_id = ?1",
        params![space_id],
    )?;
    if indexed.as_deref() == Some(new.id()) {
        return Ok(());
    }
    let old = match &indexed {
        Some(revision) => Some(store::load_tree(c, cache, space_id, revision)?),
        None => {
            // Nothing describes the space yet (a new space, or one written before the indexes
            // existed): start from empty.
            search::index::clear(c, space_id)?;
            links::index::clear(c, space_id)?;
            None
        }
    };
    let changes = Changes::between(old.as_ref().map(|o| &o.tree), &new.tree);
    search::index::apply(c, cache, space_id, &changes)?;
    links::index::apply(c, cache, space_id, &new.tree, &changes)?;
    c.execute(
        "INSERT INTO content_indexes (space_id, revision_id) VALUES (?1, ?2)
         ON CONFLICT (space_id) DO UPDATE SET revision_id = excluded.revision_id",
        params![space_id, new.id()],
    )?;
    Ok(())
}

/// Indexes the spaces whose indexes do not describe their main revision (spaces written before
/// migration 0007), one transaction each. Run at start.
pub fn catch_up(db: &crate::db::Db, cache: &ContentCache) -> ApiResult<usize> {
    let stale: Vec<(String, String)> = db.read_sync(|c| {
        let rows = c.query(
            "SELECT s.id, s.revision_id FROM spaces s LEFT JOIN content_indexes i ON i.space_id = s.id
             WHERE s.revision_id IS NOT NULL AND (i.revision_id IS NULL OR i.revision_id <> s.revision_id)",
            params![],
        )?;
        rows.iter()
            .map(|r| Ok((r.get(0)?, r.get(1)?)))
            .collect::<Result<Vec<_>, crate::db::DbError>>()
    })?;
    for (space_id, _) in &stale {
        db.write_sync(|c| {
            // Locked as writers of main lock it: processes starting together index each space
            // once, the later finding the work done.
            let revision = match super::main::lock_main(c, space_id) {
                Ok(revision) => revision,
                // Purged meanwhile: nothing to index.
                Err(e) if e.status == axum::http::StatusCode::NOT_FOUND => return Ok(()),
                Err(e) => return Err(e),
            };
            let tree = store::load_tree(c, cache, space_id, &revision)?;
            main_changed(c, cache, space_id, &tree)
        })?;
    }
    Ok(stale.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(id: &str, parent: Option<&str>, hidden: bool) -> Arc<PageEntry> {
        let mut p = PageEntry::new(id, PageKind::Document, id, 0);
        p.parent = parent.map(str::to_string);
        p.hidden = hidden;
        p.document = Some(format!("doc-{id}"));
        Arc::new(p)
    }

    #[test]
    fn hidden_pages_hide_their_children_and_changes_follow() {
        let mut old = Tree::default();
        for p in [
            page("a", None, false),
            page("b", Some("a"), false),
            page("c", None, false),
        ] {
            old.pages.insert(p.id.clone(), p);
        }
        let mut new = old.clone();
        new.pages.insert("a".into(), page("a", None, true));
        new.pages.remove("c");
        new.pages.insert("d".into(), page("d", None, false));
        assert_eq!(
            hidden_pages(&new),
            HashSet::from(["a".to_string(), "b".to_string()])
        );
        let changes = Changes::between(Some(&old), &new);
        let mut removed = changes.search_remove.clone();
        removed.sort();
        assert_eq!(removed, ["a", "b", "c"]);
        let added: Vec<&str> = changes.search_add.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(added, ["d"]);
        assert_eq!(changes.pages_added, ["d"]);
        assert_eq!(changes.pages_removed, ["c"]);
        let mut documents = changes.documents.clone();
        documents.sort();
        assert_eq!(documents, ["c", "d"]);
    }
}
