//! The defaults of a site's structure, kept whole after every change: each section with site
//! spaces, and the root, has a default site space among its own, and a site with sections a
//! default section. A default that is gone is replaced by the first in order, so the pick is
//! deterministic. Depends only on the site's rows, so that space deletion can call it
//! (`detach`) without the structure module.

use super::model;
use crate::db::Conn;
use crate::error::StoreResult;
use crate::params;

/// Keeps the defaults whole: each section with site spaces, and the root, has a default site
/// space among its own (the first in order when it had none or lost it); a site with sections
/// has a default section (the first in reading order when it had none or lost it).
pub fn normalize_defaults(c: &mut dyn Conn, site_id: &str) -> StoreResult<()> {
    let Some(row) = c.query_opt(
        "SELECT default_section_id, default_site_space_id FROM sites WHERE id = ?1",
        params![site_id],
    )?
    else {
        return Ok(());
    };
    let default_section: Option<String> = row.get(0)?;
    let default_root: Option<String> = row.get(1)?;
    let tree = model::load_structure(c, site_id)?;
    let pick = |current: Option<&str>, section: Option<&str>| -> Option<String> {
        let own = tree.site_spaces_in(section);
        match current {
            Some(id) if own.iter().any(|s| s.id == id) => Some(id.to_string()),
            _ => own.first().map(|s| s.id.clone()),
        }
    };
    let root = pick(default_root.as_deref(), None);
    let ordered = tree.sections_in_order();
    let section = match default_section.as_deref() {
        Some(id) if tree.section(id).is_some() => Some(id.to_string()),
        _ => ordered.first().map(|s| s.id.clone()),
    };
    if root != default_root || section != default_section {
        c.execute(
            "UPDATE sites SET default_site_space_id = ?2, default_section_id = ?3 WHERE id = ?1",
            params![site_id, root, section],
        )?;
    }
    for s in &tree.sections {
        let picked = pick(s.default_site_space.as_deref(), Some(&s.id));
        if picked != s.default_site_space {
            c.execute(
                "UPDATE site_sections SET default_site_space_id = ?2 WHERE id = ?1",
                params![s.id.clone(), picked],
            )?;
        }
    }
    Ok(())
}
