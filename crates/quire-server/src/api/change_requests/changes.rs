//! Semantic changes between two revisions: pages and files created, edited, moved, deleted;
//! variables edited (GitBook's `RevisionSemanticChanges`), computed from the trees the store
//! opens (`quire_store::reads`).

use serde::Deserialize;
use std::sync::Arc;

use axum::extract::State;
use quire_content::tree::{PageEntry, Tree, TreeIndex};
use quire_store::content::store::StoredTree;
use quire_store::{reads, spaces};
use serde_json::{Map, Value, json};

use super::wire::cr_json;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Path, QueryOf};
use crate::paths::{ChangeRequestPath, RevisionPath};
use crate::state::App;

/// The query of the changes of a change request or a revision.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ChangesQuery {
    /// How many changes to answer, from 1 to 1000 (10 when absent); `more` counts the rest.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    #[serde(default = "ten", deserialize_with = "quire_store::paging::limit")]
    limit: usize,
}

fn ten() -> usize {
    10
}

/// The answer of the changes operations (built as JSON by [`respond`]).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct ChangesJson {
    /// What changed, each `{"type": "page_created" | "page_edited" | "page_moved" |
    /// "page_deleted" | "file_created" | "file_edited" | "file_deleted" | "variables_edited", ...}`
    /// with the page, file or variables concerned.
    changes: Vec<serde_json::Value>,
    /// How many more changes there are beyond `limit`; absent when none.
    more: Option<u64>,
}

fn page_ref(p: &PageEntry, index: &TreeIndex) -> Value {
    let mut v = json!({"id": p.id, "type": p.kind.as_str(), "title": p.title});
    if let Some(path) = index.path(&p.id) {
        v["path"] = json!(path);
    }
    v
}

fn attribute<T: PartialEq + serde::Serialize>(
    out: &mut Map<String, Value>,
    name: &str,
    before: &T,
    after: &T,
) {
    if before != after {
        out.insert(name.into(), json!({"before": before, "after": after}));
    }
}

/// The changes from `before` to `after`, in a stable order; `download` gives a file's
/// `downloadURL`.
pub fn diff(
    before: &StoredTree,
    after: &StoredTree,
    download: &dyn Fn(&quire_content::tree::FileEntry) -> String,
) -> Vec<Value> {
    let (b, a) = (&before.tree, &after.tree);
    let (bi, ai) = (before.index(), after.index());
    let mut out = Vec::new();
    for (id, page) in &a.pages {
        match b.pages.get(id) {
            None => out.push(json!({"type": "page_created", "page": page_ref(page, ai)})),
            Some(old) if Arc::ptr_eq(old, page) => {}
            Some(old) => {
                let mut attrs = Map::new();
                attribute(&mut attrs, "title", &old.title, &page.title);
                attribute(&mut attrs, "slug", &old.slug, &page.slug);
                attribute(&mut attrs, "emoji", &old.emoji, &page.emoji);
                attribute(&mut attrs, "icon", &old.icon, &page.icon);
                attribute(&mut attrs, "description", &old.description, &page.description);
                attribute(&mut attrs, "document", &old.document, &page.document);
                attribute(&mut attrs, "hidden", &old.hidden, &page.hidden);
                attribute(&mut attrs, "layout", &old.layout, &page.layout);
                attribute(&mut attrs, "cover", &old.cover, &page.cover);
                if !attrs.is_empty() {
                    out.push(json!({"type": "page_edited", "page": page_ref(page, ai), "attributes": attrs}));
                }
                if old.parent != page.parent {
                    let parent = |t: &Tree, i: &TreeIndex, id: &Option<String>| {
                        id.as_ref().and_then(|id| t.pages.get(id)).map(|p| page_ref(p, i))
                    };
                    out.push(json!({"type": "page_moved", "page": page_ref(page, ai),
                                    "parent": {"before": parent(b, bi, &old.parent), "after": parent(a, ai, &page.parent)}}));
                }
            }
        }
    }
    for (id, page) in &b.pages {
        if !a.pages.contains_key(id) {
            out.push(json!({"type": "page_deleted", "page": page_ref(page, bi)}));
        }
    }
    let file = |f: &quire_content::tree::FileEntry| json!({"id": f.id, "name": f.name, "contentType": f.content_type, "downloadURL": download(f)});
    for (id, f) in &a.files {
        match b.files.get(id) {
            None => out.push(json!({"type": "file_created", "file": file(f)})),
            Some(old) if old != f => {
                let mut attrs = Map::new();
                attribute(&mut attrs, "name", &old.name, &f.name);
                attribute(&mut attrs, "contentType", &old.content_type, &f.content_type);
                attribute(&mut attrs, "size", &old.size, &f.size);
                out.push(json!({"type": "file_edited", "file": file(f), "attributes": attrs}));
            }
            Some(_) => {}
        }
    }
    for (id, f) in &b.files {
        if !a.files.contains_key(id) {
            out.push(json!({"type": "file_deleted", "file": file(f)}));
        }
    }
    if a.variables != b.variables {
        let mut vars = Map::new();
        for name in a.variables.keys().chain(b.variables.keys()) {
            let (before, after) = (b.variables.get(name), a.variables.get(name));
            if before != after {
                vars.insert(name.clone(), json!({"before": before, "after": after}));
            }
        }
        out.push(json!({"type": "variables_edited", "variables": vars}));
    }
    out
}

fn respond(changes: Vec<Value>, limit: usize, merged_from: Option<Value>) -> Value {
    let total = changes.len();
    let mut body = json!({"changes": changes.into_iter().take(limit).collect::<Vec<_>>()});
    if total > limit {
        body["more"] = json!(total - limit);
    }
    if let Some(m) = merged_from {
        body["mergedFrom"] = m;
    }
    body
}

/// `GET .../change-requests/{id}/changes`: what the change request changes from its base.
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/changes",
    tag = "Change requests",
    summary = "List what a change request changes",
    params(ChangeRequestPath, ChangesQuery),
    responses((status = 200, description = "The changes from the change request's base.", body = ChangesJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_changes(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(ChangesQuery { limit }): QueryOf<ChangesQuery>,
) -> ApiResult<axum::Json<Value>> {
    let store = app.store.clone();
    let (urls, key) = (app.urls.clone(), app.signing_key.clone());
    let body = app
        .db
        .read_blocking(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            let (base, tree) = reads::change_request_trees(c, &store.content, space, &cr_id)?;
            let download = |f: &quire_content::tree::FileEntry| {
                crate::files::download_url(&urls, &key, &space_id, &f.blob, &f.name, &f.content_type)
            };
            Ok::<_, ApiError>(respond(diff(&base, &tree, &download), limit, None))
        })
        .await?;
    Ok(axum::Json(body))
}

/// `GET /v1/spaces/{spaceId}/revisions/{revisionId}/changes`: what a revision changed from its
/// first parent.
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/revisions/{revisionId}/changes",
    tag = "Revisions",
    summary = "List what a revision changed",
    params(RevisionPath, ChangesQuery),
    responses((status = 200, description = "The changes from the revision's first parent.", body = ChangesJson)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_revision_changes(
    caller: Caller,
    State(app): State<App>,
    Path(RevisionPath {
        space_id,
        revision_id,
    }): Path<RevisionPath>,
    QueryOf(ChangesQuery { limit }): QueryOf<ChangesQuery>,
) -> ApiResult<axum::Json<Value>> {
    let store = app.store.clone();
    let space = space_id.clone();
    let changes = app
        .db
        .read_blocking(move |c| {
            let space = spaces::load_active(c, &space, &caller.user_id)?;
            Ok::<_, ApiError>(reads::revision_changes(c, &store.content, space, &revision_id)?)
        })
        .await?;
    let download = |f: &quire_content::tree::FileEntry| {
        crate::files::download_url(
            &app.urls,
            &app.signing_key,
            &space_id,
            &f.blob,
            &f.name,
            &f.content_type,
        )
    };
    let merged_from = match &changes.merged_from {
        Some(cr) => Some(serde_json::to_value(cr_json(&app.urls, cr)?).unwrap_or(Value::Null)),
        None => None,
    };
    Ok(axum::Json(respond(
        diff(&changes.parent, &changes.revision, &download),
        limit,
        merged_from,
    )))
}
