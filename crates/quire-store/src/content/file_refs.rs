//! The file references of revisions (`file_refs`): each revision records the blobs it
//! introduces over the one it derives from, so that collecting unreferenced file bytes (`files`)
//! never needs to read every revision.

use std::collections::{BTreeSet, HashSet};

use quire_content::tree::Tree;

use crate::db::Conn;
use crate::error::StoreResult;
use crate::params;

/// Records which blobs `tree` introduces over `base` (a revision of the same space it derives
/// from; None: all of them), as references of revision `revision_id`.
pub fn record_refs(
    c: &mut dyn Conn,
    space_id: &str,
    revision_id: &str,
    change_request: Option<&str>,
    base: Option<&Tree>,
    tree: &Tree,
) -> StoreResult<()> {
    let known: HashSet<&str> = base
        .map(|b| b.files.values().map(|f| f.blob.as_str()).collect())
        .unwrap_or_default();
    let introduced: BTreeSet<&str> = tree
        .files
        .values()
        .map(|f| f.blob.as_str())
        .filter(|h| !known.contains(h))
        .collect();
    for hash in introduced {
        c.execute(
            "INSERT INTO file_refs (space_id, hash, revision_id, change_request_id) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (space_id, hash, revision_id) DO NOTHING",
            params![space_id, hash, revision_id, change_request],
        )?;
    }
    Ok(())
}
