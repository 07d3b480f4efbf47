//! What happens to sites when a space leaves: deleted, or transferred to another
//! organization. Its site spaces go, in the same transaction, and the defaults are picked again.
//! Called by `spaces`; depends only on the site's rows.

use super::defaults::normalize_defaults;
use crate::db::{Args, Conn};
use crate::error::StoreResult;

/// Removes every site space showing one of `space_ids`.
pub fn remove_spaces(c: &mut dyn Conn, space_ids: &[String]) -> StoreResult<()> {
    if space_ids.is_empty() {
        return Ok(());
    }
    let mut args = Args::default();
    let list = args.list(space_ids.iter().cloned());
    let sites: Vec<String> = c
        .query(
            &format!("SELECT DISTINCT site_id FROM site_spaces WHERE space_id IN ({list})"),
            args.values(),
        )?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    if sites.is_empty() {
        return Ok(());
    }
    c.execute(
        &format!("DELETE FROM site_spaces WHERE space_id IN ({list})"),
        args.values(),
    )?;
    for site in &sites {
        normalize_defaults(c, site)?;
    }
    Ok(())
}
