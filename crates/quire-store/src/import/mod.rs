//! `quire admin import --space ID DIR`: a folder of markdown in GitBook's Git Sync layout
//! becomes one new revision of a space's main content, and the redirects its `.gitbook.yaml`
//! declares become the space's imported redirects ([`redirects`]), in the same transaction.

pub mod redirects;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;
use quire_content::import::{ImportContext, ImportFile, import_folder};
use quire_content::tree::FileEntry;

use crate::blobs::Blobs;
use crate::content::store::{self, ContentCache, NewRevision};
use crate::db::Db;
use crate::error::StoreError;
use crate::files::store_file;
use crate::{clock, ids, params};

/// What an import did.
pub struct Imported {
    pub revision: String,
    pub pages: usize,
    pub files: usize,
    /// Redirects kept from `.gitbook.yaml` (those whose file is an imported page).
    pub redirects: usize,
    pub warnings: Vec<String>,
}

/// Reads every file under `dir` (skipping `.git`), with paths relative to it.
fn read_folder(dir: &Path) -> Result<Vec<ImportFile>, String> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", folder.display()))?;
            let path = entry.path();
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if kind.is_file() {
                let relative = path.strip_prefix(dir).map_err(|e| e.to_string())?;
                let name = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/");
                let bytes =
                    std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                out.push(ImportFile { path: name, bytes });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A content type from a file name's extension.
pub fn content_type_of(name: &str) -> &'static str {
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "webp" => "image/webp",
        "ico" => "image/x-icon",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "csv" => "text/csv",
        "txt" => "text/plain",
        "mp4" => "video/mp4",
        "mp3" => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

/// Imports `dir` into the space's main content. Blocking: runs the object store on its own
/// small runtime.
pub fn import_space(db: &Db, blobs: &dyn Blobs, space_id: &str, dir: &Path) -> Result<Imported, String> {
    let files = read_folder(dir)?;
    let exists: bool = db
        .read_sync(|c| {
            c.exists(
                "SELECT 1 FROM spaces WHERE id = ?1 AND deleted_at IS NULL",
                params![space_id],
            )
        })
        .map_err(|e| e.to_string())?;
    if !exists {
        return Err(format!("no space has the id {space_id:?}"));
    }
    // First pass: which files the import references; their bytes go to the object store before
    // the transaction, so that it never waits on the network.
    let mut referenced: Vec<String> = Vec::new();
    {
        let mut new_id = ids::new_id;
        let mut new_key = || ids::random_base62(12);
        let mut record = |path: &str, _: &[u8]| {
            referenced.push(path.to_string());
            Ok(FileEntry {
                id: ids::new_id(),
                name: String::new(),
                content_type: String::new(),
                size: 0,
                blob: String::new(),
                dimensions: None,
                created_at: 0,
            })
        };
        let mut ctx = ImportContext {
            now: clock::now_ms(),
            new_id: &mut new_id,
            new_key: &mut new_key,
            store_file: &mut record,
        };
        import_folder(files.clone(), &mut ctx).map_err(|e| e.to_string())?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let bytes_of: HashMap<&str, &[u8]> = files
        .iter()
        .map(|f| (f.path.as_str(), f.bytes.as_slice()))
        .collect();
    let mut stored: HashMap<String, FileEntry> = HashMap::new();
    for path in &referenced {
        let Some(bytes) = bytes_of.get(path.as_str()) else {
            continue;
        };
        let name = path.rsplit('/').next().unwrap_or(path);
        let entry = runtime
            .block_on(store_file(
                blobs,
                space_id,
                name,
                content_type_of(name),
                Bytes::copy_from_slice(bytes),
            ))
            .map_err(|e| format!("cannot store {path}: {}", e.message))?;
        stored.insert(path.clone(), entry);
    }
    let cache = ContentCache::default();
    let outcome = db.write_sync(|c| {
        let mut new_id = ids::new_id;
        let mut new_key = || ids::random_base62(12);
        let mut lookup = |path: &str, _: &[u8]| {
            stored
                .get(path)
                .cloned()
                .ok_or_else(|| format!("{path} was not stored"))
        };
        let mut ctx = ImportContext {
            now: clock::now_ms(),
            new_id: &mut new_id,
            new_key: &mut new_key,
            store_file: &mut lookup,
        };
        let outcome =
            import_folder(files.clone(), &mut ctx).map_err(|e| StoreError::invalid(e.to_string()))?;
        let main = crate::main_revision::lock_main(c, space_id)?;
        let written = store::write_revision(
            c,
            &cache,
            NewRevision {
                space_id,
                kind: "edits",
                parents: vec![main.clone()],
                change_request: None,
                merged_from: None,
                created_by: None,
            },
            None,
            outcome.tree.clone(),
            &outcome.documents,
        )?;
        c.execute(
            "UPDATE spaces SET revision_id = ?3, updated_at = ?4 WHERE id = ?1 AND revision_id = ?2",
            params![space_id, &main, written.id(), clock::now_ms()],
        )?;
        crate::main_revision::main_changed(c, &cache, space_id, &written)?;
        crate::main_revision::updated(c, space_id, &main, written.id(), None)?;
        let blobs: Vec<(String, u64)> = stored.values().map(|e| (e.blob.clone(), e.size)).collect();
        crate::files::record_stored(c, space_id, &blobs, clock::now_ms())?;
        redirects::replace(c, space_id, &outcome.redirects, clock::now_ms())?;
        Ok::<_, StoreError>(Imported {
            revision: written.id().to_string(),
            pages: outcome.tree.pages.len(),
            files: outcome.tree.files.len(),
            redirects: outcome.redirects.len(),
            warnings: outcome.warnings,
        })
    });
    outcome.map_err(|e| e.message)
}
