//! Writing the search index of a space's main revision: one row for each page's own fields and
//! one for each section of its document (quire_content::sections), with the folded text the
//! engines index (quire_content::search_text).

use quire_content::search_text::index_text;
use quire_content::sections;

use crate::content::derived::Changes;
use crate::content::store::{self, ContentCache};
use crate::db::fulltext::{self, SectionRow};
use crate::db::{Args, Conn};
use crate::error::ApiResult;
use crate::params;

/// Most characters of a section's text kept to be shown (the excerpt is cut from them).
const SHOWN_BODY_CHARS: usize = 4_000;

/// Pages whose documents are loaded at once while indexing: bounds memory on a full index.
const DOCUMENTS_AT_ONCE: usize = 200;

/// Removes every row of a space.
pub fn clear(c: &mut dyn Conn, space_id: &str) -> ApiResult<()> {
    c.execute(
        "DELETE FROM search_sections WHERE space_id = ?1",
        params![space_id],
    )?;
    Ok(())
}

/// Applies `changes` to the rows of a space.
pub fn apply(c: &mut dyn Conn, cache: &ContentCache, space_id: &str, changes: &Changes) -> ApiResult<()> {
    for chunk in changes.search_remove.chunks(500) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().map(String::as_str));
        c.execute(
            &format!("DELETE FROM search_sections WHERE space_id = {space} AND page_id IN ({list})"),
            args.values(),
        )?;
    }
    for pages in changes.search_add.chunks(DOCUMENTS_AT_ONCE) {
        let hashes: Vec<&str> = pages.iter().filter_map(|p| p.document.as_deref()).collect();
        let documents = store::load_documents(c, cache, space_id, &hashes)?;
        // Owned texts first: the rows borrow them.
        let mut texts: Vec<(&str, i64, String, String, String)> = Vec::new();
        for page in pages {
            texts.push((
                &page.id,
                0,
                String::new(),
                page.title.clone(),
                page.description.clone().unwrap_or_default(),
            ));
            let Some(document) = page.document.as_deref().and_then(|h| documents.get(h)) else {
                continue;
            };
            for (i, section) in sections(&document.document).into_iter().enumerate() {
                let position = i64::try_from(i + 1).unwrap_or(i64::MAX);
                texts.push((&page.id, position, section.anchor, section.title, section.body));
            }
        }
        let rows: Vec<SectionRow<'_>> = texts
            .iter()
            .map(|(page_id, position, anchor, title, body)| SectionRow {
                page_id,
                position: *position,
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

/// The start of a section's text, cut on a character boundary.
fn shown(body: &str) -> &str {
    match body.char_indices().nth(SHOWN_BODY_CHARS) {
        Some((i, _)) => &body[..i],
        None => body,
    }
}
