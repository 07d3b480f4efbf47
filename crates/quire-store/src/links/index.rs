//! Writing the link index of a space's main revision (`link_refs`): the distinct targets of each
//! page's document, with whether each is broken in the revision. A page's rows are written again
//! when its document changes; when pages or files appear or go, the rows that point at them
//! change status.

use quire_content::tree::Tree;

use super::model::{Kind, links_of_document};
use crate::content::diff::Changes;
use crate::content::store::{self, ContentCache};
use crate::db::{Args, Conn};
use crate::error::StoreResult;
use crate::params;

/// Rows per multi-row INSERT.
const CHUNK: usize = 100;

/// Pages whose documents are loaded at once.
const DOCUMENTS_AT_ONCE: usize = 200;

/// Removes every row of a space.
pub fn clear(c: &mut dyn Conn, space_id: &str) -> StoreResult<()> {
    c.execute("DELETE FROM link_refs WHERE space_id = ?1", params![space_id])?;
    Ok(())
}

/// Applies `changes`; `tree` is the new revision's.
pub fn apply(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    tree: &Tree,
    changes: &Changes,
) -> StoreResult<()> {
    for chunk in changes.documents.chunks(500) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().map(String::as_str));
        c.execute(
            &format!("DELETE FROM link_refs WHERE space_id = {space} AND page_id IN ({list})"),
            args.values(),
        )?;
    }
    let pages: Vec<_> = changes
        .documents
        .iter()
        .filter_map(|id| tree.pages.get(id))
        .filter(|p| p.document.is_some())
        .collect();
    for pages in pages.chunks(DOCUMENTS_AT_ONCE) {
        let hashes: Vec<&str> = pages.iter().filter_map(|p| p.document.as_deref()).collect();
        let documents = store::load_documents(c, cache, space_id, &hashes)?;
        let mut rows = Vec::new();
        for page in pages {
            let Some(document) = page.document.as_deref().and_then(|h| documents.get(h)) else {
                continue;
            };
            for (key, (target, depends)) in links_of_document(&document.document, &page.id, space_id) {
                let broken = target.is_broken(tree);
                rows.push((page.id.as_str(), key, target, depends, broken));
            }
        }
        for chunk in rows.chunks(CHUNK) {
            let mut args = Args::default();
            let space = args.arg(space_id);
            let values: Vec<String> = chunk
                .iter()
                .map(|(page, key, target, depends, broken)| {
                    format!(
                        "({space}, {}, {}, {}, {}, {}, {}, {}, {}, {})",
                        args.arg(*page),
                        args.arg(key.as_str()),
                        args.arg(target.kind.as_str()),
                        args.arg(target.space.as_deref()),
                        args.arg(target.id.as_deref()),
                        args.arg(target.anchor.as_deref()),
                        args.arg(target.url.as_deref()),
                        args.arg(i64::from(*depends)),
                        args.arg(i64::from(*broken)),
                    )
                })
                .collect();
            c.execute(
                &format!(
                    "INSERT INTO link_refs (space_id, page_id, target_key, kind, target_space, target_id, anchor, url, depends, broken)
                     VALUES {}",
                    values.join(", ")
                ),
                args.values(),
            )?;
        }
    }
    set_broken(
        c,
        space_id,
        &[Kind::Page, Kind::Anchor],
        &changes.pages_removed,
        true,
    )?;
    set_broken(
        c,
        space_id,
        &[Kind::Page, Kind::Anchor],
        &changes.pages_added,
        false,
    )?;
    set_broken(c, space_id, &[Kind::File], &changes.files_removed, true)?;
    set_broken(c, space_id, &[Kind::File], &changes.files_added, false)?;
    Ok(())
}

/// Marks the links of this space to `targets` broken or not.
fn set_broken(
    c: &mut dyn Conn,
    space_id: &str,
    kinds: &[Kind],
    targets: &[String],
    broken: bool,
) -> StoreResult<()> {
    for chunk in targets.chunks(500) {
        let mut args = Args::default();
        let flag = args.arg(i64::from(broken));
        let space = args.arg(space_id);
        let kinds = args.list(kinds.iter().map(|k| k.as_str()));
        let list = args.list(chunk.iter().map(String::as_str));
        c.execute(
            &format!(
                "UPDATE link_refs SET broken = {flag}
                 WHERE space_id = {space} AND target_id IN ({list}) AND kind IN ({kinds})
                   AND target_space IS NULL AND broken <> {flag}"
            ),
            args.values(),
        )?;
    }
    Ok(())
}
