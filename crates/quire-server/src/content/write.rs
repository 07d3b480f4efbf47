//! `POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/content`: a batch of 1 to 50
//! changes applied atomically as one new revision of the change request.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::State;
use base64::Engine as _;
use bytes::Bytes;
use quire_content::changes::{self, Affected, BatchContext, Change, FileInput};
use quire_content::tree::FileEntry;
use serde::Serialize;
use serde_json::Value;

use super::render::{self, FileJson};
use super::store::{self, NewRevision};
use crate::app::App;
use crate::auth::Caller;
use crate::change_requests::{self, ChangeRequest, ChangeRequestJson};
use crate::db::{Conn, for_update};
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, Query};
use crate::permissions::SpaceAction;
use crate::{clock, files, ids, params, spaces};

#[derive(Serialize)]
#[serde(untagged)]
pub enum UpdateResponse {
    Compat(ChangeRequestJson),
    Detailed(Detailed),
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Detailed {
    change_request: ChangeRequestJson,
    changes: Vec<AffectedJson>,
    inserted_files: Vec<FileJson>,
}

#[derive(Serialize)]
pub struct AffectedJson {
    object: &'static str,
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    reference: Option<String>,
    page: Value,
}

/// Reads the `changes` of a batch, naming the failing change.
fn parse_changes(body: Value) -> ApiResult<Vec<Change>> {
    let Some(list) = body.get("changes").and_then(Value::as_array) else {
        return Err(ApiError::bad_request("the body must be {\"changes\": [...]}"));
    };
    if list.is_empty() || list.len() > changes::MAX_CHANGES {
        return Err(ApiError::bad_request(format!(
            "`changes` holds 1 to {} changes, not {}",
            changes::MAX_CHANGES,
            list.len()
        )));
    }
    list.iter()
        .enumerate()
        .map(|(i, c)| {
            let change = Change::from_json(c.clone())
                .map_err(|e| ApiError::bad_request(format!("changes[{i}]: {e}")))?;
            check_names(&change)
                .map_err(|e| ApiError::bad_request(format!("changes[{i}]: {}", e.message)))?;
            Ok(change)
        })
        .collect()
}

/// Page titles and file names of a change carry no control characters.
fn check_names(change: &Change) -> ApiResult<()> {
    let fields = match change {
        Change::InsertPage(c) => &c.fields,
        Change::UpdatePage(c) => &c.fields,
        Change::InsertFiles(c) => {
            for (j, file) in c.files.iter().enumerate() {
                crate::validate::no_control(&format!("files[{j}].name"), &file.name)?;
            }
            return Ok(());
        }
        Change::DeletePage(_) | Change::RevertPage(_) => return Ok(()),
    };
    for (field, value) in [("title", &fields.title), ("linkTitle", &fields.link_title)] {
        if let Some(value) = value {
            crate::validate::no_control(field, value)?;
        }
    }
    Ok(())
}

/// Gets the bytes of every file of `insert_files` changes and stores them, before the
/// transaction: a batch that then fails leaves only unreferenced blobs, which are collected.
async fn upload_files(
    app: &App,
    space_id: &str,
    changes: &[Change],
) -> ApiResult<HashMap<usize, Vec<FileEntry>>> {
    let mut out = HashMap::new();
    for (i, change) in changes.iter().enumerate() {
        let Change::InsertFiles(c) = change else { continue };
        if c.files.is_empty() || c.files.len() > changes::MAX_FILES {
            return Err(ApiError::bad_request(format!(
                "changes[{i}]: `files` holds 1 to {} files",
                changes::MAX_FILES
            )));
        }
        let mut entries = Vec::new();
        for (j, file) in c.files.iter().enumerate() {
            let at = format!("changes[{i}].files[{j}]");
            entries.push(
                upload_file(app, space_id, file)
                    .await
                    .map_err(|e| ApiError::bad_request(format!("{at}: {e}")))?,
            );
        }
        out.insert(i, entries);
    }
    Ok(out)
}

async fn upload_file(app: &App, space_id: &str, file: &FileInput) -> Result<FileEntry, String> {
    let len = file.name.chars().count();
    if len == 0 || len > 256 || file.name.contains('/') {
        return Err("`name` must be 1 to 256 characters, without `/`".into());
    }
    let (bytes, content_type) = match (&file.base64, &file.url) {
        (Some(_), Some(_)) | (None, None) => return Err("give exactly one of `url` and `base64`".into()),
        (Some(data), None) => {
            let content_type = file
                .content_type
                .clone()
                .ok_or("`contentType` is required with `base64`")?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| format!("`base64` is not valid base64: {e}"))?;
            if bytes.len() > files::MAX_BASE64_BYTES {
                return Err(format!(
                    "`base64` holds more than {} bytes: upload larger files by `url`",
                    files::MAX_BASE64_BYTES
                ));
            }
            (Bytes::from(bytes), content_type)
        }
        (None, Some(url)) => {
            if url.len() > 2048 {
                return Err("`url` must be at most 2048 characters".into());
            }
            let (bytes, fetched_type) = files::fetch_public(url, files::MAX_FETCH_BYTES).await?;
            let content_type = file
                .content_type
                .clone()
                .or(fetched_type)
                .unwrap_or_else(|| "application/octet-stream".into());
            (bytes, content_type)
        }
    };
    if content_type.is_empty() || content_type.len() > 255 {
        return Err("`contentType` must be a MIME type".into());
    }
    files::store_file(&app.blobs, space_id, &file.name, &content_type, bytes)
        .await
        .map_err(|e| e.message)
}

pub async fn update_content(
    caller: Caller,
    State(app): State<App>,
    Path((space_id, cr_id)): Path<(String, String)>,
    query: Query,
    Json(body): Json<Value>,
) -> ApiResult<axum::Json<UpdateResponse>> {
    let compat = query.bool("compat", true)?;
    let changes = parse_changes(body)?;
    let files = upload_files(&app, &space_id, &changes).await?;
    let app2 = app.clone();
    let response = app
        .db
        .write(move |c| {
            let space = spaces::model::load_active(c, &space_id, &caller.user_id)?;
            space.require(SpaceAction::Edit)?;
            let cr = lock_change_request(c, &space_id, &cr_id)?;
            let base = store::load_tree(c, &app2.content, &space_id, &cr.revision)?;
            let revert_base = store::load_tree(c, &app2.content, &space_id, cr.base_revision())?;
            let outcome = {
                let mut new_id = ids::new_id;
                let mut new_key = || ids::random_base62(12);
                let content = &app2.content;
                // Documents are read through a connection borrowed for the batch's lifetime.
                let conn = std::cell::RefCell::new(&mut *c);
                let document = |hash: &str| {
                    store::load_document(*conn.borrow_mut(), content, &space_id, hash).ok().map(|d| d.document.clone())
                };
                let revision = |rev: &str| store::load_tree(*conn.borrow_mut(), content, &space_id, rev).ok().map(|t| Arc::new(t.tree.clone()));
                let mut ctx = BatchContext {
                    now: clock::now_ms(),
                    new_id: &mut new_id,
                    new_key: &mut new_key,
                    document: &document,
                    base: &revert_base.tree,
                    revision: &revision,
                    files: &files,
                };
                changes::apply_batch(&base.tree, changes.clone(), &mut ctx).map_err(|e| ApiError::bad_request(e.to_string()))?
            };
            let written = store::write_revision(
                c,
                &app2.content,
                NewRevision {
                    space_id: &space_id,
                    kind: "edits",
                    parents: vec![cr.revision.clone()],
                    change_request: Some(&cr.id),
                    merged_from: None,
                    created_by: Some(&caller.user_id),
                },
                Some(&base),
                outcome.tree,
                &outcome.documents,
            )?;
            let conflicts = remaining_conflicts(&cr, &outcome.affected);
            c.execute(
                "UPDATE change_requests SET revision = ?2, updated_at = ?3, conflicts = ?4 WHERE id = ?1",
                params![cr.id.clone(), written.id(), clock::now_ms(), conflicts],
            )?;
            crate::change_requests::contributors::record(c, &cr.id, &caller.user_id)?;
            let cr = change_requests::model::load(c, &space_id, &cr.id)?;
            let json = change_requests::render(c, &app2, std::slice::from_ref(&cr))?
                .into_iter()
                .next()
                .ok_or_else(|| ApiError::internal("change request vanished"))?;
            if compat {
                return Ok(UpdateResponse::Compat(json));
            }
            let ctx = render::Context {
                urls: &app2.urls,
                org_id: &space.space.org_id,
                space_id: &space_id,
                visibility: &space.space.visibility,
                signing_key: &app2.signing_key,
            };
            let page_ref = |id: &str| {
                serde_json::json!({
                    "object": "page",
                    "id": id,
                    "urls": {"location": app2.urls.api(&format!("/spaces/{space_id}/change-requests/{}/content/page/{id}", cr.id))}
                })
            };
            let changes = outcome
                .affected
                .iter()
                .map(|a| match a {
                    Affected::Created { page, reference } => {
                        AffectedJson { object: "created_page", reference: reference.clone(), page: page_ref(page) }
                    }
                    Affected::Updated { page } => AffectedJson { object: "updated_page", reference: None, page: page_ref(page) },
                    Affected::Deleted { page } => {
                        AffectedJson { object: "deleted_page", reference: None, page: Value::String(page.clone()) }
                    }
                })
                .collect();
            let inserted_files = outcome
                .inserted_files
                .iter()
                .filter_map(|id| written.tree.files.get(id))
                .map(|f| render::file(&ctx, f))
                .collect();
            Ok::<_, ApiError>(UpdateResponse::Detailed(Detailed { change_request: json, changes, inserted_files }))
        })
        .await?;
    Ok(axum::Json(response))
}

/// Loads a change request for writing, locked against concurrent writers on PostgreSQL, and
/// refuses merged and archived ones.
pub fn lock_change_request(c: &mut dyn Conn, space_id: &str, cr_id: &str) -> ApiResult<ChangeRequest> {
    let cr = change_requests::model::load(c, space_id, cr_id)?;
    let lock = format!("SELECT id FROM change_requests WHERE id = ?1{}", for_update(c));
    c.query(&lock, params![cr.id.clone()])?;
    // Read again under the lock: another writer may have moved it meanwhile.
    let cr = change_requests::model::load(c, space_id, &cr.id)?;
    if !cr.is_writable() {
        return Err(ApiError::conflict(format!(
            "change request #{} is {}: its content can no longer change",
            cr.number, cr.status
        )));
    }
    Ok(cr)
}

/// The conflicts left after a batch: writing a conflicting page's document resolves it.
fn remaining_conflicts(cr: &ChangeRequest, affected: &[Affected]) -> Option<String> {
    let text = cr.conflicts.as_deref()?;
    let list: Vec<Value> = serde_json::from_str(text).ok()?;
    let touched: Vec<&str> = affected
        .iter()
        .map(|a| match a {
            Affected::Created { page, .. } | Affected::Updated { page } | Affected::Deleted { page } => {
                page.as_str()
            }
        })
        .collect();
    let left: Vec<Value> = list
        .into_iter()
        .filter(|c| {
            !c.get("page")
                .and_then(Value::as_str)
                .is_some_and(|p| touched.contains(&p))
        })
        .collect();
    (!left.is_empty()).then(|| Value::Array(left).to_string())
}
