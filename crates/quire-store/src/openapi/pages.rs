//! API reference pages: a computed page of a space's main content (`quire_content::computed`)
//! names a specification by its slug; the `openapi_pages` job writes its child pages from the
//! specification's latest version (one page per tag, `quire_openapi::reference`), as a new main
//! revision, so that the reader, search and links see them as any page. The page keeps the id
//! of the version its pages come from (`computedSeed`): the job runs when main has a computed
//! page whose seed is not its specification's latest version (a new page, a new source, a new
//! version, a deleted specification), and does nothing when they agree.
//!
//! Generated pages keep their ids from one version to the next (derived from the computed page
//! and the page's slug), so links and comments to them stay.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use quire_content::changes::encode_document;
use quire_content::computed::openapi_spec;
use quire_content::document::Document;
use quire_content::tree::{PageEntry, PageKind, Tree};
use serde_json::json;
use sha2::Digest as _;

use crate::content::store::{self, NewRevision, StoredTree};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::{Store, clock, jobs, params};

pub const PAGES_JOB: &str = "openapi_pages";

fn job_key(space_id: &str) -> String {
    format!("openapi-pages:{space_id}")
}

/// Schedules the generation of a space's computed pages now.
pub fn schedule(c: &mut dyn Conn, space_id: &str) -> StoreResult<()> {
    jobs::enqueue(
        c,
        PAGES_JOB,
        &json!({ "space": space_id }),
        clock::now_ms(),
        Some(&job_key(space_id)),
    )
}

/// The computed pages of a tree: (page id, spec slug, seed).
fn computed_pages(tree: &Tree) -> Vec<(&str, &str, Option<&str>)> {
    tree.pages
        .values()
        .filter_map(|p| openapi_spec(p).map(|slug| (p.id.as_str(), slug, p.computed_seed.as_deref())))
        .collect()
}

/// The latest version of the specification `slug` of `org_id`, if it has one.
fn latest_version(c: &mut dyn Conn, org_id: &str, slug: &str) -> StoreResult<Option<String>> {
    let row = c.query_opt(
        "SELECT last_version_id FROM openapi_specs WHERE organization_id = ?1 AND slug = ?2",
        params![org_id, slug],
    )?;
    Ok(match row {
        Some(row) => row.get::<Option<String>>(0)?,
        None => None,
    })
}

/// Keeps the dependents of specifications for a space whose main moves from `old` to `new`,
/// and schedules the generation of its computed pages when one is not generated from its
/// specification's latest version. Called by `main_revision::main_changed`.
pub fn main_changed(c: &mut dyn Conn, space_id: &str, old: Option<&Tree>, new: &Tree) -> StoreResult<()> {
    let now = computed_pages(new);
    let before = old.map(computed_pages).unwrap_or_default();
    if now.is_empty() && before.is_empty() {
        return Ok(());
    }
    let org_id = crate::events::organization_of_space(c, space_id)?;
    let slugs: BTreeSet<&str> = now.iter().map(|(_, slug, _)| *slug).collect();
    let slugs_before: BTreeSet<&str> = before.iter().map(|(_, slug, _)| *slug).collect();
    if slugs != slugs_before {
        c.execute(
            "DELETE FROM openapi_computed_pages WHERE space_id = ?1",
            params![space_id],
        )?;
        for slug in &slugs {
            c.execute(
                "INSERT INTO openapi_computed_pages (space_id, organization_id, spec_slug) VALUES (?1, ?2, ?3)",
                params![space_id, org_id.clone(), *slug],
            )?;
        }
    }
    for (_, slug, seed) in now {
        if latest_version(c, &org_id, slug)?.as_deref() != seed {
            return schedule(c, space_id);
        }
    }
    Ok(())
}

/// Schedules the generation of the pages of every space that has a computed page of the
/// specification `slug` (it has a new version, or is gone).
pub fn spec_changed(c: &mut dyn Conn, org_id: &str, slug: &str) -> StoreResult<()> {
    let spaces: Vec<String> = c
        .query(
            "SELECT space_id FROM openapi_computed_pages WHERE organization_id = ?1 AND spec_slug = ?2",
            params![org_id, slug],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect::<Result<_, _>>()?;
    for space in spaces {
        schedule(c, &space)?;
    }
    Ok(())
}

/// What one run generates: main as read, and for each computed page to generate again, the
/// version it is generated from (None: its specification has no version, or is gone) and that
/// version's files.
struct Plan {
    main: Arc<StoredTree>,
    pages: Vec<(String, Option<(String, String)>)>,
}

/// Runs the job; Some(time) asks to run again then (main moved while the pages were written).
pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let space_id = payload
        .get("space")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| StoreError::internal(format!("{PAGES_JOB} payload without `space`: {payload}")))?
        .to_string();
    let reading = store.clone();
    let id = space_id.clone();
    let Some(plan) = store.db.read_blocking(move |c| plan(c, &reading, &id)).await? else {
        return Ok(None);
    };
    if plan.pages.is_empty() {
        return Ok(None);
    }
    let base = plan.main.clone();
    let generated = tokio::task::spawn_blocking(move || generate(&plan))
        .await
        .map_err(|e| StoreError::internal(format!("generating API reference pages stopped: {e}")))?;
    let writing = store.clone();
    let moved = store
        .db
        .write(move |c| write(c, &writing, &space_id, &base, &generated))
        .await?;
    Ok(moved.then(clock::now_ms))
}

fn plan(c: &mut dyn Conn, store: &Store, space_id: &str) -> StoreResult<Option<Plan>> {
    let row = c.query_opt(
        "SELECT revision_id, organization_id FROM spaces WHERE id = ?1 AND deleted_at IS NULL",
        params![space_id],
    )?;
    let Some(row) = row else { return Ok(None) };
    let (Some(revision), org_id) = (row.get::<Option<String>>(0)?, row.get::<String>(1)?) else {
        return Ok(None);
    };
    let main = store::load_tree(c, &store.content, space_id, &revision)?;
    let mut pages = Vec::new();
    for (page_id, slug, seed) in computed_pages(&main.tree) {
        let latest = latest_version(c, &org_id, slug)?;
        if latest.as_deref() == seed {
            continue;
        }
        let source = match latest {
            Some(version) => {
                let filesystem: Option<String> = c.query_scalar(
                    "SELECT filesystem FROM openapi_spec_versions WHERE id = ?1",
                    params![version.clone()],
                )?;
                filesystem.map(|fs| (version, fs))
            }
            None => None,
        };
        pages.push((page_id.to_string(), source));
    }
    Ok(Some(Plan { main, pages }))
}

/// The pages generated for the computed pages of a run, and their documents.
struct Generated {
    pages: Vec<Regenerated>,
    documents: Vec<(String, Vec<u8>)>,
}

/// A computed page's new pages and the version they come from (None: no version, no pages).
struct Regenerated {
    page_id: String,
    seed: Option<String>,
    children: Vec<PageEntry>,
}

fn generate(plan: &Plan) -> Generated {
    let now = clock::now_ms();
    let mut out = Generated {
        pages: Vec::new(),
        documents: Vec::new(),
    };
    for (page_id, source) in &plan.pages {
        let Some((version, filesystem)) = source else {
            out.pages.push(Regenerated {
                page_id: page_id.clone(),
                seed: None,
                children: Vec::new(),
            });
            continue;
        };
        let files: Vec<quire_openapi::filesystem::FileEntry> = match serde_json::from_str(filesystem) {
            Ok(files) => files,
            Err(e) => {
                tracing::error!(page = %page_id, version = %version, error = %e, "stored OpenAPI filesystem does not read");
                continue;
            }
        };
        let taken = sibling_slugs(&plan.main.tree, page_id);
        let mut children = Vec::new();
        let mut slugs: HashSet<String> = HashSet::new();
        let references = quire_openapi::reference::pages(&files);
        let keys = quire_content::order::keys_between(None, None, references.len());
        for (reference, order) in references.into_iter().zip(keys) {
            let mut slug = reference.slug.clone();
            let mut n = 2;
            while taken.contains(slug.as_str()) || slugs.contains(&slug) {
                slug = format!("{}-{n}", reference.slug);
                n += 1;
            }
            slugs.insert(slug.clone());
            let document = quire_content::markdown_to_document(&reference.markdown).unwrap_or_else(|e| {
                note(&format!(
                    "This reference page is too large to show here ({e}); the specification's content has it in full."
                ))
            });
            let (hash, bytes) = encode_document(&document);
            out.documents.push((hash.clone(), bytes));
            let mut page = PageEntry::new(
                &generated_id(page_id, &slug),
                PageKind::Document,
                &reference.title,
                now,
            );
            page.parent = Some(page_id.clone());
            page.order = order;
            page.slug = slug;
            page.description = reference.description;
            page.document = Some(hash);
            children.push(page);
        }
        out.pages.push(Regenerated {
            page_id: page_id.clone(),
            seed: Some(version.clone()),
            children,
        });
    }
    out
}

/// The slugs of the pages whose paths the generated pages share: the computed page's siblings.
fn sibling_slugs<'a>(tree: &'a Tree, page_id: &str) -> HashSet<&'a str> {
    let parent = tree.pages.get(page_id).and_then(|p| p.parent.clone());
    tree.pages
        .values()
        .filter(|p| p.parent == parent && p.id != page_id && p.kind.has_path())
        .map(|p| p.slug.as_str())
        .collect()
}

/// A page id that is the same each time `computed` generates the page of `slug`.
fn generated_id(computed: &str, slug: &str) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let digest = sha2::Sha256::digest(format!("{computed}/{slug}").as_bytes());
    digest
        .iter()
        .take(20)
        .map(|b| ALPHABET[usize::from(*b) % 62] as char)
        .collect()
}

/// A document of one paragraph.
fn note(text: &str) -> Document {
    quire_content::markdown_to_document(text).unwrap_or_default()
}

/// Writes the generated pages as main's next revision, if main is still the one they were
/// generated from; true when it moved meanwhile (the job runs again).
fn write(
    c: &mut dyn Conn,
    store: &Store,
    space_id: &str,
    base: &Arc<StoredTree>,
    generated: &Generated,
) -> StoreResult<bool> {
    let main = crate::main_revision::lock_main(c, space_id)?;
    if main != base.meta.id {
        return Ok(true);
    }
    let mut tree = base.tree.clone();
    for Regenerated {
        page_id,
        seed,
        children,
    } in &generated.pages
    {
        let Some(computed) = tree.pages.get(page_id).cloned() else {
            continue;
        };
        let old: Vec<String> = tree
            .pages
            .values()
            .filter(|p| p.parent.as_deref() == Some(page_id.as_str()))
            .map(|p| p.id.clone())
            .collect();
        for id in old {
            tree.delete_page(&id)
                .map_err(|e| StoreError::internal(e.to_string()))?;
        }
        for child in children {
            tree.pages.insert(child.id.clone(), Arc::new(child.clone()));
        }
        let mut computed = (*computed).clone();
        computed.computed_seed = seed.clone();
        tree.replace_page(computed);
    }
    let written = store::write_revision(
        c,
        &store.content,
        NewRevision {
            space_id,
            kind: "edits",
            parents: vec![main.clone()],
            change_request: None,
            merged_from: None,
            created_by: None,
        },
        Some(base),
        tree,
        &generated.documents,
    )?;
    c.execute(
        "UPDATE spaces SET revision_id = ?3, updated_at = ?4 WHERE id = ?1 AND revision_id = ?2",
        params![space_id, main.clone(), written.id(), clock::now_ms()],
    )?;
    crate::main_revision::updated(c, space_id, &main, written.id(), None)?;
    crate::main_revision::main_changed(c, &store.content, space_id, &written)?;
    Ok(false)
}
