//! Search of a space's current content and of an organization's spaces.
//!
//! The index (`index`) lives in the database, beside the content it describes, and is updated
//! in the transaction that moves a space's main revision (`main_revision::main_changed`);
//! queries (`query`) are answered by the engine's full-text index.

pub mod any_term;
pub mod index;
pub mod query;

use std::collections::HashMap;
use std::sync::Arc;

use crate::access::AccessContext;
use crate::content::store::{self, ContentCache, StoredTree};
use crate::db::fulltext::FtsQuery;
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::orgs::OrgFor;
use crate::paging::{Next, Page, Paging};
use crate::spaces::{self, Space};
use query::{After, PageMatch, Scope};

/// A space whose hits are shown, with the revision they were found in.
pub struct Shown {
    pub space: Space,
    pub tree: Arc<StoredTree>,
}

/// One page of a search: the matching pages, best first, the spaces they are in, and the
/// total of matches.
pub struct Results {
    pub matches: Vec<PageMatch>,
    pub shown: HashMap<String, Shown>,
    pub next: Option<Next>,
    pub total: u64,
    /// Whether the index described the revision read throughout (the answer may be kept for
    /// the revision).
    pub exact: bool,
}

impl Results {
    fn empty() -> Results {
        Results {
            matches: Vec::new(),
            shown: HashMap::new(),
            next: None,
            total: 0,
            exact: true,
        }
    }
}

/// The scope of the cursors of search `list` of `parent`: the folded words searched (what the
/// results depend on), not the query as typed.
fn scope(list: &str, parent: &str, fts: &FtsQuery) -> String {
    format!("{list}:{parent}:{:?}:{}", fts.words, fts.prefix_last)
}

/// Searches the current content of `space`, which the caller may read (loaded with
/// `spaces::load_active`).
pub fn in_space(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: Space,
    fts: &FtsQuery,
    paging: &Paging,
) -> StoreResult<Results> {
    let page = Page::new(paging, scope("search", &space.id, fts))?;
    let after: Option<After> = page.after()?;
    if fts.words.is_empty() {
        return Ok(Results::empty());
    }
    let space_id = space.id.clone();
    let (mut matches, total) = query::search(c, fts, &Scope::Space(&space_id), after.as_ref(), page.fetch())?;
    let next = page.cut(&mut matches, PageMatch::cursor);
    let revision = space.revision.clone();
    let mut shown = HashMap::new();
    shown.insert(space_id.clone(), open_shown(c, cache, space)?);
    // Kept only when the index described the revision read throughout: revisions only move
    // forward, so an index still at it now was at it all along.
    let indexed: Option<String> = c.query_scalar(
        "SELECT revision_id FROM content_indexes WHERE space_id = ?1",
        crate::params![space_id.as_str()],
    )?;
    let exact = indexed.is_some() && indexed == revision;
    Ok(Results {
        matches,
        shown,
        next,
        total,
        exact,
    })
}

/// Searches the spaces of an organization the caller can see.
pub fn in_org(
    c: &mut dyn Conn,
    cache: &ContentCache,
    org: &OrgFor,
    caller: &str,
    fts: &FtsQuery,
    paging: &Paging,
) -> StoreResult<Results> {
    let org_id = &org.org.id;
    let page = Page::new(paging, scope("org-search", org_id, fts))?;
    let access = AccessContext::for_org(c, org_id, caller, org.standing)?;
    let after: Option<After> = page.after()?;
    if fts.words.is_empty() {
        return Ok(Results::empty());
    }
    let scope = Scope::Org {
        org_id,
        access: &access,
    };
    let (mut matches, total) = query::search(c, fts, &scope, after.as_ref(), page.fetch())?;
    // Paging counts page hits, as the ranking does; a page of results groups its hits by
    // space, in the order of each space's best hit.
    let next = page.cut(&mut matches, PageMatch::cursor);
    let shown = open_spaces(c, cache, &matches)?;
    Ok(Results {
        matches,
        shown,
        next,
        total,
        exact: false,
    })
}

/// Opens the current revision of a space whose hits are shown.
fn open_shown(c: &mut dyn Conn, cache: &ContentCache, space: Space) -> StoreResult<Shown> {
    let revision = space
        .revision
        .clone()
        .ok_or_else(|| StoreError::internal("space without revision"))?;
    let tree = store::load_tree(c, cache, &space.id, &revision)?;
    Ok(Shown { space, tree })
}

/// Opens the spaces of organization hits, with one query for their rows.
fn open_spaces(
    c: &mut dyn Conn,
    cache: &ContentCache,
    matches: &[PageMatch],
) -> StoreResult<HashMap<String, Shown>> {
    let mut ids: Vec<&str> = matches.iter().map(|m| m.space_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut shown = HashMap::new();
    if ids.is_empty() {
        return Ok(shown);
    }
    let mut args = Args::default();
    let list = args.list(ids.iter().copied());
    let rows = c.query(
        &format!(
            "SELECT {} FROM spaces s WHERE s.id IN ({list})",
            spaces::columns()
        ),
        args.values(),
    )?;
    for row in rows {
        let space = Space::from_row(&row)?;
        shown.insert(space.id.clone(), open_shown(c, cache, space)?);
    }
    Ok(shown)
}
