//! The target space's tree after a run, built from the source's structure, the run's
//! translations and the target as people left it; and the record of which pages a run wrote.
//!
//! Page ids are the source's, so links between pages (by id) keep working in the target, as do
//! slugs and the page tree. A page the last run wrote whose target fingerprint differs now was
//! edited (or deleted) by a person: it is left as it is, and listed for review when its source
//! changed. Pages a person added to the target are kept.

use std::collections::HashMap;
use std::sync::Arc;

use quire_content::tree::{PageEntry, ReusableEntry, Tree};

use crate::db::Conn;
use crate::error::StoreResult;
use crate::params;

/// A page's fingerprints when the last run wrote it.
#[derive(Clone, Debug)]
pub struct Prior {
    pub source: String,
    pub target: String,
}

/// A page's translation, made by this run.
pub struct TranslatedPage {
    pub fingerprint: String,
    pub title: String,
    pub description: Option<String>,
    /// The translated document (hash, bytes), for document pages.
    pub document: Option<(String, Vec<u8>)>,
}

/// A reusable content's translation, made by this run.
pub struct TranslatedReusable {
    pub id: String,
    pub title: String,
    pub document: Option<(String, Vec<u8>)>,
}

/// The target's new tree, the documents it introduces, and what happened to each page.
pub struct Assembled {
    pub tree: Tree,
    pub documents: Vec<(String, Vec<u8>)>,
    /// Pages whose record is written: (id, source fingerprint, target fingerprint).
    pub written: Vec<(String, String, String)>,
    /// Pages whose record goes (gone from the source).
    pub removed: Vec<String>,
    /// Pages translated by this run, and those of them translated for the first time.
    pub translated: i64,
    pub first_translated: i64,
    /// Pages left as they were: their source had not changed.
    pub skipped: i64,
    /// Target pages a person edited whose source changed (or went): not overwritten.
    pub review: Vec<String>,
}

/// What a page's human text is, as a hash: its title, description and document.
pub fn fingerprint(page: &PageEntry) -> String {
    let mut bytes = Vec::new();
    for part in [
        Some(page.title.as_str()),
        page.description.as_deref(),
        page.document.as_deref(),
    ] {
        match part {
            Some(text) => {
                bytes.push(b'1');
                bytes.extend_from_slice(&(text.len() as u64).to_le_bytes());
                bytes.extend_from_slice(text.as_bytes());
            }
            None => bytes.push(b'0'),
        }
    }
    quire_content::buckets::content_hash(&bytes)
}

/// The pages the last run wrote, with their fingerprints then.
pub fn prior(c: &mut dyn Conn, translation_id: &str) -> StoreResult<HashMap<String, Prior>> {
    let rows = c.query(
        "SELECT page_id, source_fingerprint, target_fingerprint FROM translation_pages WHERE translation_id = ?1",
        params![translation_id],
    )?;
    rows.iter()
        .map(|r| {
            Ok((
                r.get::<String>(0)?,
                Prior {
                    source: r.get(1)?,
                    target: r.get(2)?,
                },
            ))
        })
        .collect()
}

/// Records what a run wrote.
pub fn record(c: &mut dyn Conn, translation_id: &str, assembled: &Assembled) -> StoreResult<()> {
    for id in &assembled.removed {
        c.execute(
            "DELETE FROM translation_pages WHERE translation_id = ?1 AND page_id = ?2",
            params![translation_id, id.clone()],
        )?;
    }
    for (id, source, target) in &assembled.written {
        c.execute(
            "INSERT INTO translation_pages (translation_id, page_id, source_fingerprint, target_fingerprint)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (translation_id, page_id) DO UPDATE SET
                 source_fingerprint = excluded.source_fingerprint, target_fingerprint = excluded.target_fingerprint",
            params![translation_id, id.clone(), source.clone(), target.clone()],
        )?;
    }
    Ok(())
}

/// Builds the target's tree: `source`'s structure with `translated` pages, over `target` as it
/// is now, with the run's translated reusable contents.
pub fn assemble(
    source: &Tree,
    target: &Tree,
    prior: &HashMap<String, Prior>,
    translated: &HashMap<String, TranslatedPage>,
    reusable: &[TranslatedReusable],
) -> Assembled {
    let mut out = Assembled {
        tree: target.clone(),
        documents: Vec::new(),
        written: Vec::new(),
        removed: Vec::new(),
        translated: 0,
        first_translated: 0,
        skipped: 0,
        review: Vec::new(),
    };
    for page in source.pages.values() {
        let now_in_target = target.pages.get(&page.id);
        let edited = |p: &Prior| now_in_target.map(|t| fingerprint(t)).as_deref() != Some(p.target.as_str());
        match (prior.get(&page.id), translated.get(&page.id)) {
            // Unchanged source: the page keeps its translation (or a person's edit of it) and
            // follows the source's structure (moves, slugs, settings).
            (Some(p), None) => {
                out.skipped += 1;
                if let Some(current) = now_in_target {
                    let mut entry = page.as_ref().clone();
                    entry.title = current.title.clone();
                    entry.description = current.description.clone();
                    entry.document = current.document.clone();
                    if entry != **current {
                        let target_fingerprint = if edited(p) {
                            p.target.clone()
                        } else {
                            fingerprint(&entry)
                        };
                        out.written
                            .push((page.id.clone(), p.source.clone(), target_fingerprint));
                        out.tree.replace_page(entry);
                    }
                }
            }
            (Some(p), Some(_)) if edited(p) => out.review.push(page.id.clone()),
            (p, Some(tr)) => {
                let mut entry = page.as_ref().clone();
                entry.title = tr.title.clone();
                entry.description = tr.description.clone();
                entry.document = tr.document.as_ref().map(|(hash, _)| hash.clone());
                if let Some(doc) = &tr.document {
                    out.documents.push(doc.clone());
                }
                out.written
                    .push((page.id.clone(), tr.fingerprint.clone(), fingerprint(&entry)));
                out.translated += 1;
                if p.is_none() {
                    out.first_translated += 1;
                }
                out.tree.replace_page(entry);
            }
            // Neither written before nor planned: the source changed after the plan (the run
            // goes on with the source it planned from).
            (None, None) => {}
        }
    }
    for (id, p) in prior {
        if source.pages.contains_key(id) {
            continue;
        }
        out.removed.push(id.clone());
        match target.pages.get(id) {
            Some(current) if fingerprint(current) == p.target => {
                // Its children went with it in the source: those the target still has that a
                // person added are kept, at the top level.
                let _ = out.tree.delete_page(id);
            }
            Some(_) => out.review.push(id.clone()),
            None => {}
        }
    }
    rehome_orphans(&mut out.tree);
    for file in source.files.values() {
        out.tree.files.insert(file.id.clone(), file.clone());
    }
    out.tree.variables = source.variables.clone();
    for r in reusable {
        let entry = ReusableEntry {
            id: r.id.clone(),
            title: r.title.clone(),
            document: r.document.as_ref().map(|(hash, _)| hash.clone()),
        };
        if let Some(doc) = &r.document {
            out.documents.push(doc.clone());
        }
        out.tree.reusable.insert(r.id.clone(), Arc::new(entry));
    }
    out.review.sort();
    out
}

/// Puts pages whose parent is not in the tree (a person deleted it in the target) at the top
/// level, so that the tree stays whole.
fn rehome_orphans(tree: &mut Tree) {
    let orphans: Vec<PageEntry> = tree
        .pages
        .values()
        .filter(|p| {
            p.parent
                .as_ref()
                .is_some_and(|parent| !tree.pages.contains_key(parent))
        })
        .map(|p| p.as_ref().clone())
        .collect();
    for mut page in orphans {
        page.parent = None;
        tree.replace_page(page);
    }
}
