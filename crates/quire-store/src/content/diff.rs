//! How a space's pages and files differ between two revisions, for what main derives: its
//! search index (`search::index`) and its link index (`links::index`). Both describe the space's
//! current revision and are brought to a new one in the transaction that moves main
//! (`main_revision`), by comparing the revision they describe with the new one: a revision that
//! changes one page of 10,000 re-indexes that page, not the space.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use quire_content::tree::{PageEntry, PageKind, Tree};

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
