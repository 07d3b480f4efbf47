//! Reading links and backlinks of a revision: main's from its index (`index`), a change
//! request's from its documents corrected by main's index.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::model::{Kind, Status, Target, links_of_document};
use crate::content::store::{self, ContentCache, StoredTree};
use crate::db::{Args, Conn, DbError, like_prefix};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::spaces::SpaceFor;

/// Most locations listed for one link: a link present on every page of a large space would
/// otherwise make one item megabytes long. Backlinks list them all, with paging.
const MAX_LOCATIONS: usize = 1_000;

/// Pages whose documents are read at once for change request backlinks.
const DOCUMENTS_AT_ONCE: usize = 200;

/// A revision whose links are read: the space it belongs to (the caller may read it), the
/// revision, and the change request it is of (compared with main), if not main's.
pub struct Revision<'a> {
    pub space: &'a SpaceFor,
    pub stored: &'a StoredTree,
    pub change_request: Option<&'a str>,
}

impl Revision<'_> {
    /// The scope of the cursors of list `what` of this revision about `id` (a page or file):
    /// the space and change request, not the revision, so that paging goes on across edits.
    fn scope(&self, what: &str, id: &str, status: Option<Status>) -> String {
        let mut parts = vec![what, self.space.space.id.as_str()];
        parts.extend(self.change_request);
        parts.push(id);
        format!("{}:{}", parts.join(":"), status.map_or("", Status::as_str))
    }
}

/// A link of a revision: its target, whether the pages embed it (`dependsOn`), its status, and
/// the pages it stands on.
pub struct Link {
    pub target: Target,
    pub depends: bool,
    pub status: Status,
    pub pages: Vec<String>,
}

/// A page of links with the revision's counts: every link, the broken ones, and (of a change
/// request) those it breaks.
pub struct Links {
    pub list: List<Link>,
    pub total: u64,
    pub broken: u64,
    pub broken_here: Option<u64>,
}

/// An SQL condition (starting with ` AND`) keeping the rows of `link_refs` with `status`.
fn status_sql(args: &mut Args, status: Status, base: &str) -> String {
    let mut in_app = || {
        format!(
            "(kind = 'url' AND (url = {} OR url LIKE {} ESCAPE '\\' OR url LIKE {} ESCAPE '\\' OR url LIKE {} ESCAPE '\\'))",
            args.arg(base),
            args.arg(like_prefix(&format!("{base}/"))),
            args.arg(like_prefix(&format!("{base}?"))),
            args.arg(like_prefix(&format!("{base}#"))),
        )
    };
    match status {
        Status::Broken => " AND broken = 1".to_string(),
        Status::InApp => format!(" AND broken = 0 AND {}", in_app()),
        Status::Ok => format!(" AND broken = 0 AND NOT {}", in_app()),
    }
}

crate::columns! {
    /// A link target of a space, grouped over the pages that link to it.
    struct TargetCols of "link_refs" {
        key: "target_key",
        kind: "MIN(kind)",
        space: "MIN(target_space)",
        id: "MIN(target_id)",
        anchor: "MIN(anchor)",
        url: "MIN(url)",
        depends: "MAX(depends)",
        broken: "MAX(broken)",
    }
}

/// The links of main, one item per target, in target order. `base` is the public base URL,
/// which tells in-app links from the rest.
pub fn of_main(
    c: &mut dyn Conn,
    space: &SpaceFor,
    base: &str,
    status: Option<Status>,
    paging: &Paging,
) -> StoreResult<Links> {
    let space_id = space.space.id.as_str();
    let page = Page::new(
        paging,
        format!("links:{space_id}:{}", status.map_or("", Status::as_str)),
    )?;
    let stats = c
        .query_opt(
            "SELECT COUNT(DISTINCT target_key), COUNT(DISTINCT CASE WHEN broken = 1 THEN target_key END)
             FROM link_refs WHERE space_id = ?1",
            crate::params![space_id],
        )?
        .map(|r| Ok::<_, StoreError>((r.get::<i64>(0)?, r.get::<i64>(1)?)))
        .transpose()?
        .unwrap_or((0, 0));
    let mut args = Args::default();
    let mut filter = format!("space_id = {}", args.arg(space_id));
    if let Some(status) = status {
        filter += &status_sql(&mut args, status, base);
    }
    let count: i64 = c
        .query_scalar(
            &format!("SELECT COUNT(DISTINCT target_key) FROM link_refs WHERE {filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    if let Some(after) = page.after::<String>()? {
        filter += &format!(" AND target_key > {}", args.arg(after));
    }
    let rows = c.query(
        &format!(
            "SELECT {} FROM link_refs WHERE {filter}
             GROUP BY target_key ORDER BY target_key LIMIT {}",
            TargetCols::SQL,
            args.arg(page.fetch())
        ),
        args.values(),
    )?;
    let mut targets = Vec::with_capacity(rows.len());
    for row in rows {
        const T: TargetCols = TargetCols::AT;
        let key: String = row.col(T.key)?;
        let kind: String = row.col(T.kind)?;
        let target = Target {
            kind: Kind::parse(&kind).ok_or_else(|| {
                DbError::stored(
                    format_args!("link kind of {key:?} in space {space_id:?}"),
                    format!("unknown kind {kind:?}"),
                )
            })?,
            space: row.col(T.space)?,
            id: row.col(T.id)?,
            anchor: row.col(T.anchor)?,
            url: row.col(T.url)?,
        };
        targets.push((
            key,
            target,
            row.col::<bool>(T.depends)?,
            row.col::<bool>(T.broken)?,
        ));
    }
    let mut list = page.finish(targets, count.max(0).unsigned_abs(), |(key, ..)| key.clone());
    let locations = locations_of(c, space_id, list.items.iter().map(|(key, ..)| key.as_str()))?;
    let items = std::mem::take(&mut list.items)
        .into_iter()
        .map(|(key, target, depends, broken)| Link {
            status: Status::of(&target, broken, base),
            pages: locations.get(&key).cloned().unwrap_or_default(),
            target,
            depends,
        })
        .collect();
    Ok(Links {
        list: List {
            next: list.next,
            count: list.count,
            items,
        },
        total: stats.0.max(0).unsigned_abs(),
        broken: stats.1.max(0).unsigned_abs(),
        broken_here: None,
    })
}

/// The pages holding each of `keys`, in page order, at most [`MAX_LOCATIONS`] each.
fn locations_of<'a>(
    c: &mut dyn Conn,
    space_id: &str,
    keys: impl Iterator<Item = &'a str>,
) -> StoreResult<HashMap<String, Vec<String>>> {
    let keys: Vec<&str> = keys.collect();
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for chunk in keys.chunks(500) {
        let mut args = Args::default();
        let space = args.arg(space_id);
        let list = args.list(chunk.iter().copied());
        let rows = c.query(
            &format!(
                "SELECT target_key, page_id FROM link_refs WHERE space_id = {space} AND target_key IN ({list})
                 ORDER BY target_key, page_id"
            ),
            args.values(),
        )?;
        for row in rows {
            let pages = out.entry(row.get(0)?).or_default();
            if pages.len() < MAX_LOCATIONS {
                pages.push(row.get(1)?);
            }
        }
    }
    Ok(out)
}

/// The links of one page of a revision, read from its document, in target order.
pub fn of_page(
    c: &mut dyn Conn,
    cache: &ContentCache,
    revision: &Revision<'_>,
    base: &str,
    page_id: &str,
    status: Option<Status>,
    paging: &Paging,
) -> StoreResult<Links> {
    let page = Page::new(paging, revision.scope("page-links", page_id, status))?;
    let opened = revision;
    let entry = opened
        .stored
        .tree
        .pages
        .get(page_id)
        .ok_or_else(|| StoreError::not_found(format!("page {page_id:?} not found in this revision")))?;
    let space_id = opened.space.space.id.as_str();
    let links = match entry.document.as_deref() {
        Some(hash) => {
            let document = store::load_document(c, cache, space_id, hash)?;
            links_of_document(&document.document, page_id, space_id)
        }
        None => BTreeMap::new(),
    };
    // On a change request, the links it breaks are those whose target main still has.
    let main = match opened.change_request {
        Some(_) => Some(main_tree(c, cache, opened)?),
        None => None,
    };
    let tree = &opened.stored.tree;
    let mut broken = 0u64;
    let mut broken_here = 0u64;
    let mut rows = Vec::new();
    for (key, (target, depends)) in &links {
        let is_broken = target.is_broken(tree);
        if is_broken {
            broken += 1;
            if main.as_ref().is_some_and(|m| !target.is_broken(&m.tree)) {
                broken_here += 1;
            }
        }
        let link_status = Status::of(target, is_broken, base);
        if status.is_none_or(|s| s == link_status) {
            rows.push((key, target, *depends, link_status));
        }
    }
    let count = rows.len() as u64;
    let after: Option<String> = page.after()?;
    let start = after.map_or(0, |a| {
        rows.partition_point(|(key, ..)| key.as_str() <= a.as_str())
    });
    let rows: Vec<_> = rows.into_iter().skip(start).take(page.limit + 1).collect();
    let list =
        page.finish(rows, count, |(key, ..)| (*key).clone())
            .map(|(_, target, depends, link_status)| Link {
                target: target.clone(),
                depends,
                status: link_status,
                pages: vec![page_id.to_string()],
            });
    Ok(Links {
        list,
        total: links.len() as u64,
        broken,
        broken_here: main.is_some().then_some(broken_here),
    })
}

/// The space's main revision, for reads of a change request that compare with it.
fn main_tree(
    c: &mut dyn Conn,
    cache: &ContentCache,
    revision: &Revision<'_>,
) -> StoreResult<std::sync::Arc<StoredTree>> {
    let space = &revision.space.space;
    let main = space
        .revision
        .as_deref()
        .ok_or_else(|| StoreError::internal("space without revision"))?;
    store::load_tree(c, cache, &space.id, main)
}

/// What backlinks are asked about.
pub enum Linked<'a> {
    Page(&'a str),
    File(&'a str),
}

impl Linked<'_> {
    fn kinds(&self) -> &'static [Kind] {
        match self {
            Linked::Page(_) => &[Kind::Page, Kind::Anchor],
            Linked::File(_) => &[Kind::File],
        }
    }

    fn id(&self) -> &str {
        match self {
            Linked::Page(id) | Linked::File(id) => id,
        }
    }

    fn is_target(&self, target: &Target) -> bool {
        match self {
            Linked::Page(id) => target.local_page() == Some(*id),
            Linked::File(id) => target.local_file() == Some(*id),
        }
    }

    /// A page's links to itself are not backlinks of it.
    fn excluded(&self) -> Option<&str> {
        match self {
            Linked::Page(id) => Some(id),
            Linked::File(_) => None,
        }
    }
}

/// The pages of a revision that link to a page, or that embed or link to a file, in page id
/// order (404 when the page or file is not in the revision).
pub fn backlinks(
    c: &mut dyn Conn,
    cache: &ContentCache,
    revision: &Revision<'_>,
    linked: Linked<'_>,
    paging: &Paging,
) -> StoreResult<List<String>> {
    let page = Page::new(paging, revision.scope("backlinks", linked.id(), None))?;
    let opened = revision;
    let tree = &opened.stored.tree;
    match linked {
        Linked::Page(id) if !tree.pages.contains_key(id) => {
            return Err(StoreError::not_found(format!(
                "page {id:?} not found in this revision"
            )));
        }
        Linked::File(id) if !tree.files.contains_key(id) => {
            return Err(StoreError::not_found(format!(
                "file {id:?} not found in this revision"
            )));
        }
        _ => {}
    }
    let after: Option<String> = page.after()?;
    let (pages, count) = match opened.change_request {
        None => main_backlinks(c, opened, &linked, after.as_deref(), page.fetch())?,
        Some(_) => {
            let main = main_tree(c, cache, opened)?;
            let all = change_request_backlinks(c, cache, opened, &main, &linked)?;
            let count = all.len() as u64;
            let rows = all
                .into_iter()
                .filter(|p| after.as_deref().is_none_or(|a| p.as_str() > a))
                .take(page.limit + 1)
                .collect();
            (rows, count)
        }
    };
    Ok(page.finish(pages, count, Clone::clone))
}

/// Backlinks in main, from the index.
fn main_backlinks(
    c: &mut dyn Conn,
    opened: &Revision<'_>,
    linked: &Linked<'_>,
    after: Option<&str>,
    fetch: i64,
) -> StoreResult<(Vec<String>, u64)> {
    let mut args = Args::default();
    let mut filter = format!(
        "space_id = {} AND target_id = {} AND kind IN ({}) AND target_space IS NULL",
        args.arg(opened.space.space.id.as_str()),
        args.arg(linked.id()),
        args.list(linked.kinds().iter().map(|k| k.as_str())),
    );
    if let Some(excluded) = linked.excluded() {
        filter += &format!(" AND page_id <> {}", args.arg(excluded));
    }
    let count: i64 = c
        .query_scalar(
            &format!("SELECT COUNT(DISTINCT page_id) FROM link_refs WHERE {filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    if let Some(after) = after {
        filter += &format!(" AND page_id > {}", args.arg(after));
    }
    let rows = c.query(
        &format!(
            "SELECT DISTINCT page_id FROM link_refs WHERE {filter} ORDER BY page_id LIMIT {}",
            args.arg(fetch)
        ),
        args.values(),
    )?;
    let pages = rows
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<Vec<String>, _>>()?;
    Ok((pages, count.max(0).unsigned_abs()))
}

/// Backlinks in a change request's revision: main's backlinks from pages whose document the
/// change request has unchanged, and the links of the pages whose documents differ, read from
/// those documents.
fn change_request_backlinks(
    c: &mut dyn Conn,
    cache: &ContentCache,
    opened: &Revision<'_>,
    main: &StoredTree,
    linked: &Linked<'_>,
) -> StoreResult<BTreeSet<String>> {
    let space_id = opened.space.space.id.as_str();
    let tree = &opened.stored.tree;
    let same_document = |id: &str| match (main.tree.pages.get(id), tree.pages.get(id)) {
        (Some(m), Some(p)) => m.document == p.document,
        _ => false,
    };
    let (in_main, _) = main_backlinks(c, opened, linked, None, i64::MAX)?;
    let mut out: BTreeSet<String> = in_main.into_iter().filter(|p| same_document(p)).collect();
    let differing: Vec<_> = tree
        .pages
        .values()
        .filter(|p| p.document.is_some() && !same_document(&p.id))
        .collect();
    for pages in differing.chunks(DOCUMENTS_AT_ONCE) {
        let hashes: Vec<&str> = pages.iter().filter_map(|p| p.document.as_deref()).collect();
        let documents = store::load_documents(c, cache, space_id, &hashes)?;
        for page in pages {
            let Some(document) = page.document.as_deref().and_then(|h| documents.get(h)) else {
                continue;
            };
            let links = links_of_document(&document.document, &page.id, space_id);
            if links.values().any(|(target, _)| linked.is_target(target)) {
                out.insert(page.id.clone());
            }
        }
    }
    if let Some(excluded) = linked.excluded() {
        out.remove(excluded);
    }
    Ok(out)
}
