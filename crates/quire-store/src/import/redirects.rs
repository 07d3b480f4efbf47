//! The redirects an import declared (`.gitbook.yaml`), kept with the space (table
//! `space_import_redirects`): written by the import in its transaction, read by the reader for
//! a path of a site space that names no page.
//!
//! Kept with the space rather than copied into the redirects of the sites showing it: the
//! sources are paths below the space's place in a site, so they hold in every site showing the
//! space, in a site published after the import, and wherever the site space moves; and a
//! re-import replaces them without touching what the site's managers wrote.

use quire_content::import_redirects::{ImportedRedirect, normalize_source};

use crate::db::{Args, Conn};
use crate::error::StoreResult;
use crate::params;

/// Rows per insert: a few statements for the largest set (`MAX_REDIRECTS`), well under either
/// engine's limit on parameters.
const ROWS_AT_ONCE: usize = 200;

/// Makes `redirects` the space's set, in place of the one before (a re-import replaces it;
/// an import without redirects empties it).
pub fn replace(
    c: &mut dyn Conn,
    space_id: &str,
    redirects: &[ImportedRedirect],
    now: i64,
) -> StoreResult<()> {
    c.execute(
        "DELETE FROM space_import_redirects WHERE space_id = ?1",
        params![space_id],
    )?;
    for chunk in redirects.chunks(ROWS_AT_ONCE) {
        let mut args = Args::default();
        let rows: Vec<String> = chunk
            .iter()
            .map(|r| {
                format!(
                    "({}, {}, {}, {})",
                    args.arg(space_id),
                    args.arg(r.source.as_str()),
                    args.arg(r.page_id.as_str()),
                    args.arg(now)
                )
            })
            .collect();
        // The import keeps the first of a source; DO NOTHING only guards the key.
        c.execute(
            &format!(
                "INSERT INTO space_import_redirects (space_id, source, page_id, created_at) VALUES {}
                 ON CONFLICT (space_id, source) DO NOTHING",
                rows.join(", ")
            ),
            args.values(),
        )?;
    }
    Ok(())
}

/// The page an imported redirect of the space sends `path` to (a path below the site space's
/// URL, as requested: percent-encoded, slashes or not); None when none matches. Whether the
/// page still exists is the caller's to check against the revision it serves.
pub fn page_for(c: &mut dyn Conn, space_id: &str, path: &str) -> StoreResult<Option<String>> {
    let Ok(source) = normalize_source(path) else {
        return Ok(None);
    };
    Ok(c.query_scalar(
        "SELECT page_id FROM space_import_redirects WHERE space_id = ?1 AND source = ?2",
        params![space_id, source],
    )?)
}
