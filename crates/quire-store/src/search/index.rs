//! Writing the search index of a space's main revision: one row for each page's own fields and
//! one for each section of its document (quire_content::sections), with the folded text the
//! engines index (quire_content::search_text). Each page shown by search has a key
//! (`search_pages`) and its rows are numbered from `key * 1024`, so that ranking groups the
//! matches of a page by their numbers alone.

use std::collections::HashMap;

use quire_content::search_text::index_text;
use quire_content::{Section, sections};

use crate::content::diff::Changes;
use crate::content::store::{self, ContentCache};
use crate::db::fulltext::{self, SECTIONS_PER_KEY, SectionRow};
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::params;

/// Most characters of a section's text kept to be shown (the excerpt is cut from them).
const SHOWN_BODY_CHARS: usize = 4_000;

/// Pages whose documents are loaded at once while indexing: bounds memory on a full index.
const DOCUMENTS_AT_ONCE: usize = 200;

/// Removes every row of a space.
pub fn clear(c: &mut dyn Conn, space_id: &str) -> StoreResult<()> {
    c.execute(
        "DELETE FROM search_sections WHERE space_id = ?1",
        params![space_id],
    )?;
    c.execute("DELETE FROM search_pages WHERE space_id = ?1", params![space_id])?;
    Ok(())
}

/// Applies `changes` to the rows of a space.
pub fn apply(c: &mut dyn Conn, cache: &ContentCache, space_id: &str, changes: &Changes) -> StoreResult<()> {
    for chunk in changes.search_remove.chunks(500) {
        remove(c, space_id, chunk)?;
    }
    for pages in changes.search_add.chunks(DOCUMENTS_AT_ONCE) {
        let keys = page_keys(c, space_id, pages.iter().map(|p| p.id.as_str()))?;
        let hashes: Vec<&str> = pages.iter().filter_map(|p| p.document.as_deref()).collect();
        let documents = store::load_documents(c, cache, space_id, &hashes)?;
        // Owned texts first: the rows borrow them.
        let mut texts: Vec<(i64, String, String, String)> = Vec::new();
        for page in pages {
            let key = keys
                .get(page.id.as_str())
                .copied()
                .ok_or_else(|| StoreError::internal(format!("no search key for page {:?}", page.id)))?;
            let first = key * SECTIONS_PER_KEY;
            texts.push((
                first,
                String::new(),
                page.title.clone(),
                page.description.clone().unwrap_or_default(),
            ));
            let Some(document) = page.document.as_deref().and_then(|h| documents.get(h)) else {
                continue;
            };
            for (position, section) in (1..).zip(numbered(sections(&document.document))) {
                texts.push((first + position, section.anchor, section.title, section.body));
            }
        }
        let rows: Vec<SectionRow<'_>> = texts
            .iter()
            .map(|(id, anchor, title, body)| SectionRow {
                id: *id,
                anchor,
                title,
                body: shown(body),
                index_title: index_text(title),
                index_body: index_text(body),
            })
            .collect();
        fulltext::insert_sections(c, space_id, &rows)?;
    }
    Ok(())
}

/// Removes the rows of some pages.
fn remove(c: &mut dyn Conn, space_id: &str, pages: &[String]) -> StoreResult<()> {
    let mut args = Args::default();
    let space = args.arg(space_id);
    let list = args.list(pages.iter().map(String::as_str));
    let keys = c.query(
        &format!("SELECT key FROM search_pages WHERE space_id = {space} AND page_id IN ({list})"),
        args.values(),
    )?;
    for row in keys {
        let key: i64 = row.get(0)?;
        c.execute(
            "DELETE FROM search_sections WHERE id >= ?1 AND id < ?2",
            params![key * SECTIONS_PER_KEY, (key + 1) * SECTIONS_PER_KEY],
        )?;
    }
    c.execute(
        &format!("DELETE FROM search_pages WHERE space_id = {space} AND page_id IN ({list})"),
        args.values(),
    )?;
    Ok(())
}

/// The keys of pages, given to those that have none.
fn page_keys<'a>(
    c: &mut dyn Conn,
    space_id: &str,
    pages: impl Iterator<Item = &'a str>,
) -> StoreResult<HashMap<String, i64>> {
    let mut args = Args::default();
    let space = args.arg(space_id);
    let values: Vec<String> = pages.map(|p| format!("({space}, {})", args.arg(p))).collect();
    let mut keys = HashMap::new();
    if values.is_empty() {
        return Ok(keys);
    }
    // RETURNING names the page of each key, so the order of its rows does not matter.
    let rows = c.query(
        &format!(
            "INSERT INTO search_pages (space_id, page_id) VALUES {}
             ON CONFLICT (space_id, page_id) DO UPDATE SET page_id = excluded.page_id
             RETURNING page_id, key",
            values.join(", ")
        ),
        args.values(),
    )?;
    for row in rows {
        keys.insert(row.get(0)?, row.get(1)?);
    }
    Ok(keys)
}

/// At most `SECTIONS_PER_KEY - 1` sections: the text of any further ones joins the last.
fn numbered(mut sections: Vec<Section>) -> Vec<Section> {
    let max = usize::try_from(SECTIONS_PER_KEY - 1).unwrap_or(usize::MAX);
    if sections.len() > max {
        let rest: Vec<Section> = sections.split_off(max);
        if let Some(last) = sections.last_mut() {
            for extra in rest {
                last.body.push('\n');
                last.body.push_str(&extra.title);
                last.body.push('\n');
                last.body.push_str(&extra.body);
            }
        }
    }
    sections
}

/// The start of a section's text, cut on a character boundary.
fn shown(body: &str) -> &str {
    match body.char_indices().nth(SHOWN_BODY_CHARS) {
        Some((i, _)) => &body[..i],
        None => body,
    }
}
