//! `quire admin backup` and `quire admin restore`, for the embedded storage: a SQLite database
//! and the local file store.
//!
//! A backup is one tar file (gzip-compressed when its name ends in `.gz`) holding, in order:
//! - `quire-backup.json`: `{"format": "quire-backup", "version": 1, "quire": ..., "createdAt":
//!   ..., "files": N}`;
//! - `quire.db`: a consistent copy of the database (`VACUUM INTO`, one read snapshot);
//! - `files/...`: the file store's files, at their paths below `DATA_DIR/files`.
//!
//! The database is copied first, the files after: file bytes are written under their hash
//! before any row refers to them and are never changed, so every file the copied database refers
//! to is in the store when the files are read. Bytes uploaded after the snapshot may come along
//! too; nothing refers to them in the copy.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

use quire_server::config::StorageArgs;
use quire_server::db::{Db, DbConfig, Dialect};

const MANIFEST: &str = "quire-backup.json";
const FORMAT: &str = "quire-backup";
const FORMAT_VERSION: u64 = 1;
const DATABASE: &str = "quire.db";
const FILES: &str = "files";

/// `quire admin backup --to FILE`: writes the backup to FILE (which must not exist) and returns
/// its path.
pub fn backup(db: &Db, storage: &StorageArgs, to: &Path) -> Result<String, String> {
    if db.dialect() == Dialect::Postgres {
        return Err(
            "the database is PostgreSQL: `quire admin backup` copies only the embedded SQLite \
             database; use pg_dump (see README.md, Operations, Backups)"
                .into(),
        );
    }
    let files_dir = local_files(storage, "backup")?;
    let to = std::path::absolute(to).map_err(|e| format!("cannot resolve {}: {e}", to.display()))?;
    if to.exists() {
        return Err(format!("{} exists: name a new file", to.display()));
    }
    let parent = to.parent().unwrap_or(Path::new("/"));
    // Written beside the target and renamed into place, so that FILE is either whole or absent.
    let staging = tempfile::Builder::new()
        .prefix(".quire-backup-")
        .tempdir_in(parent)
        .map_err(|e| format!("cannot write in {}: {e}", parent.display()))?;
    let db_copy = staging.path().join(DATABASE);
    db.backup_into(&db_copy)
        .map_err(|e| format!("cannot copy the database: {e}"))?;
    let files = list_files(&files_dir)?;
    let manifest = serde_json::json!({
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "quire": crate::VERSION,
        "createdAt": quire_server::clock::format_ms(quire_server::clock::now_ms()),
        "files": files.len(),
    });
    let partial = staging.path().join("backup.tar");
    let out = File::create(&partial).map_err(|e| format!("cannot create {}: {e}", partial.display()))?;
    let gzip = to.extension().is_some_and(|e| e == "gz");
    let written = if gzip {
        let encoder = flate2::write::GzEncoder::new(BufWriter::new(out), flate2::Compression::default());
        write_archive(encoder, &manifest, &db_copy, &files_dir, &files)
            .and_then(|(encoder, n)| Ok((encoder.finish()?, n)))
    } else {
        write_archive(BufWriter::new(out), &manifest, &db_copy, &files_dir, &files)
    };
    let (out, copied) = written.map_err(|e| format!("cannot write the backup: {e}"))?;
    out.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .map_err(|e| format!("cannot write the backup: {e}"))?;
    std::fs::rename(&partial, &to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
    eprintln!(
        "quire: backed up the database and {copied} files of {} to {}",
        files_dir.display(),
        to.display()
    );
    Ok(to.display().to_string())
}

/// The local directory of file bytes; an object store has its own backups.
fn local_files(storage: &StorageArgs, command: &str) -> Result<PathBuf, String> {
    match storage.object_store_url.as_deref().filter(|u| !u.is_empty()) {
        Some(url) => Err(format!(
            "files are kept in {url}: `quire admin {command}` handles only a local file store; use \
             the object store's versioning or replication (see README.md, Operations, Backups)"
        )),
        None => Ok(storage.data_dir.join(FILES)),
    }
}

/// Every file below `dir`, relative to it, in a stable order. Files the object store is still
/// writing (`NAME#N`, renamed to NAME once complete) are left out.
fn list_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        let entries = match std::fs::read_dir(dir.join(&relative)) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot read {}: {e}", dir.join(&relative).display())),
        };
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
            let path = relative.join(entry.file_name());
            let kind = entry
                .file_type()
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file() && !entry.file_name().to_string_lossy().contains('#') {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Writes the archive and returns its writer and how many files went in (a file collected
/// between the listing and its copy is left out: nothing in the copied database refers to it).
fn write_archive<W: Write>(
    out: W,
    manifest: &serde_json::Value,
    db_copy: &Path,
    files_dir: &Path,
    files: &[PathBuf],
) -> std::io::Result<(W, usize)> {
    let mut archive = tar::Builder::new(out);
    let manifest = serde_json::to_vec_pretty(manifest)?;
    let mut header = tar::Header::new_gnu();
    header.set_size(manifest.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_cksum();
    archive.append_data(&mut header, MANIFEST, manifest.as_slice())?;
    archive.append_path_with_name(db_copy, DATABASE)?;
    let mut copied = 0;
    for file in files {
        match archive.append_path_with_name(files_dir.join(file), Path::new(FILES).join(file)) {
            Ok(()) => copied += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok((archive.into_inner()?, copied))
}

/// `quire admin restore --from FILE [--force]`: brings a backup back into the data directory.
pub fn restore(storage: &StorageArgs, config: &DbConfig, from: &Path, force: bool) -> Result<String, String> {
    let db_path = match config {
        DbConfig::Sqlite { path } => path.clone(),
        DbConfig::Postgres { .. } => {
            return Err(
                "the database is PostgreSQL: `quire admin restore` restores only the embedded \
                 SQLite database; use pg_restore or psql with a pg_dump (see README.md, Operations, \
                 Backups)"
                    .into(),
            );
        }
    };
    let files_dir = local_files(storage, "restore")?;
    let data_dir = &storage.data_dir;
    let occupied = has_entries(data_dir)? || db_path.exists();
    if occupied && !force {
        return Err(format!(
            "{} is not empty: restore into a new data directory (--data-dir), or pass --force to \
             replace its database and files",
            data_dir.display()
        ));
    }
    if db_path.exists()
        && quire_server::db::sqlite_in_use(&db_path)
            .map_err(|e| format!("cannot open {}: {e}", db_path.display()))?
    {
        return Err(format!(
            "{} is in use (is `quire serve` running on it?): stop the server, then restore",
            db_path.display()
        ));
    }
    std::fs::create_dir_all(data_dir).map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    // Unpacked and checked beside its destination first, so that a bad backup changes nothing.
    let staging = tempfile::Builder::new()
        .prefix(".quire-restore-")
        .tempdir_in(data_dir)
        .map_err(|e| format!("cannot write in {}: {e}", data_dir.display()))?;
    let files = unpack(from, staging.path())?;
    let restored_db = staging.path().join(DATABASE);
    check_database(&restored_db)?;

    for suffix in ["", "-wal", "-shm"] {
        let old = PathBuf::from(format!("{}{suffix}", db_path.display()));
        remove_if_present(&old)?;
    }
    if let Some(parent) = db_path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    move_into_place(&restored_db, &db_path)?;
    remove_if_present(&files_dir)?;
    let restored_files = staging.path().join(FILES);
    if restored_files.exists() {
        move_into_place(&restored_files, &files_dir)?;
    }
    eprintln!(
        "quire: restored the database to {} and {files} files to {}",
        db_path.display(),
        files_dir.display()
    );
    Ok(db_path.display().to_string())
}

fn has_entries(dir: &Path) -> Result<bool, String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_some()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(format!("cannot read {}: {e}", dir.display())),
    }
}

/// Unpacks a backup into `into` after checking its manifest; returns how many files it held.
/// Only the database and files below `files/` are taken, each by a plain relative path.
fn unpack(from: &Path, into: &Path) -> Result<usize, String> {
    let bad = |why: String| format!("{} is not a quire backup: {why}", from.display());
    let mut file = File::open(from).map_err(|e| format!("cannot open {}: {e}", from.display()))?;
    let mut magic = [0u8; 2];
    let gzip = file.read_exact(&mut magic).is_ok() && magic == [0x1f, 0x8b];
    let file = File::open(from).map_err(|e| format!("cannot open {}: {e}", from.display()))?;
    let reader: Box<dyn Read> = if gzip {
        Box::new(flate2::read::GzDecoder::new(BufReader::new(file)))
    } else {
        Box::new(BufReader::new(file))
    };
    let mut archive = tar::Archive::new(reader);
    let mut entries = archive.entries().map_err(|e| bad(e.to_string()))?;
    let mut first = entries
        .next()
        .ok_or_else(|| bad("it is empty".into()))?
        .map_err(|e| bad(e.to_string()))?;
    let mut manifest = String::new();
    let is_manifest = first.path().map(|p| p == Path::new(MANIFEST)).unwrap_or(false);
    if !is_manifest || first.read_to_string(&mut manifest).is_err() {
        return Err(bad(format!("it does not start with {MANIFEST}")));
    }
    let manifest: serde_json::Value = serde_json::from_str(&manifest).map_err(|e| bad(e.to_string()))?;
    if manifest["format"] != FORMAT {
        return Err(bad(format!("{MANIFEST} names no {FORMAT:?} format")));
    }
    if manifest["version"] != FORMAT_VERSION {
        return Err(format!(
            "{} is a backup of format version {}; this quire reads version {FORMAT_VERSION}",
            from.display(),
            manifest["version"]
        ));
    }
    let mut files = 0;
    let mut database = false;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(e.to_string()))?;
        let path = entry.path().map_err(|e| bad(e.to_string()))?.into_owned();
        let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
        let is_database = path == Path::new(DATABASE);
        if !plain || !entry.header().entry_type().is_file() || !(is_database || path.starts_with(FILES)) {
            return Err(bad(format!("unexpected entry {}", path.display())));
        }
        let target = into.join(&path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        entry
            .unpack(&target)
            .map_err(|e| format!("cannot unpack {}: {e}", path.display()))?;
        if is_database {
            database = true;
        } else {
            files += 1;
        }
    }
    if !database {
        return Err(bad(format!("it holds no {DATABASE}")));
    }
    Ok(files)
}

/// The restored database passes SQLite's integrity check and is one of quire's.
fn check_database(path: &Path) -> Result<(), String> {
    let config = DbConfig::Sqlite {
        path: path.to_path_buf(),
    };
    let is_quire = config
        .holds_quire()
        .map_err(|e| format!("cannot open the restored database: {e}"))?;
    if !is_quire {
        return Err("the backup's database is not a quire database".into());
    }
    let db = Db::open(&config).map_err(|e| format!("cannot open the restored database: {e}"))?;
    let verdict: Option<String> = db
        .read_sync(|c| c.query_scalar("PRAGMA integrity_check", &[]))
        .map_err(|e| format!("cannot check the restored database: {e}"))?;
    match verdict.as_deref() {
        Some("ok") => Ok(()),
        other => Err(format!(
            "the backup's database fails SQLite's integrity check: {}",
            other.unwrap_or("no answer")
        )),
    }
}

fn remove_if_present(path: &Path) -> Result<(), String> {
    let removed = if path.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    match removed {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", path.display())),
    }
}

/// Renames `from` to `to`: both are in the data directory unless `--database-url` names a
/// SQLite file elsewhere, on another file system, where the database is copied instead.
fn move_into_place(from: &Path, to: &Path) -> Result<(), String> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to)
        .map(drop)
        .map_err(|e| format!("cannot move the restored data to {}: {e}", to.display()))
}
