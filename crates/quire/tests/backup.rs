//! `quire admin backup` while the server takes writes, and `quire admin restore`: the restored
//! database passes SQLite's integrity check and holds every write acknowledged before the backup
//! started, with the bytes of every file it refers to. Backups are of the embedded storage, so
//! these tests run on SQLite whatever the suite's engine; on PostgreSQL the commands refuse and
//! point to pg_dump.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use quire_server::db::{Db, DbConfig};
use quire_server::error::ApiError;
use serde_json::json;
use support::{Burst, Server, Storage, admin, call, client, runtime, stderr};

/// Concurrent writers during the backup.
const WRITERS: usize = 6;

fn flags(data_dir: &std::path::Path) -> Vec<String> {
    vec!["--data-dir".into(), data_dir.display().to_string()]
}

fn run_admin(cwd: &std::path::Path, flags: &[String], args: &[&str]) -> std::process::Output {
    let all: Vec<&str> = flags
        .iter()
        .map(String::as_str)
        .chain(args.iter().copied())
        .collect();
    admin(cwd, &all)
}

/// A folder to import: one page showing one image, whose bytes go to the file store.
fn folder_with_an_image(root: &std::path::Path) {
    std::fs::create_dir_all(root.join(".gitbook/assets")).unwrap();
    std::fs::write(
        root.join("README.md"),
        "# Welcome\n\n![Logo](.gitbook/assets/logo.png)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("SUMMARY.md"),
        "# Table of contents\n\n* [Welcome](README.md)\n",
    )
    .unwrap();
    let bytes: Vec<u8> = (0..40_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(root.join(".gitbook/assets/logo.png"), bytes).unwrap();
}

fn ids_in(db: &Db, table: &str) -> std::collections::BTreeSet<String> {
    db.read_sync(|c| {
        let rows = c.query(&format!("SELECT id FROM {table}"), &[])?;
        Ok::<_, ApiError>(rows.iter().map(|r| r.get::<String>(0).unwrap()).collect())
    })
    .unwrap()
}

#[test]
fn an_online_backup_during_a_write_burst_restores_every_acknowledged_write() {
    let storage = Storage::sqlite();
    let data = storage.dir.path().to_path_buf();
    let server = Server::start(&storage, true, &[]);
    let boot = server.bootstrap.as_ref().unwrap();
    let (org, token) = (boot.org.clone(), boot.token.clone());
    let work = tempfile::tempdir().unwrap();
    let backup_file = work.path().join("quire-backup.tar.gz");

    let (before, during) = runtime().block_on(async {
        let (status, space) = call(
            &client(),
            &token,
            "POST",
            &format!("{}/v1/orgs/{org}/spaces", server.base),
            Some(json!({"title": "Docs"})),
        )
        .await;
        assert_eq!(status, 201, "{space}");
        let space = space["id"].as_str().unwrap().to_string();
        // An import beside the running server puts bytes in the file store.
        let docs = work.path().join("docs");
        folder_with_an_image(&docs);
        let import_space = space.clone();
        let (data_flags, docs_dir) = (flags(&data), docs.display().to_string());
        let imported = tokio::task::spawn_blocking(move || {
            run_admin(
                &docs,
                &data_flags,
                &["import", "--space", &import_space, &docs_dir],
            )
        })
        .await
        .unwrap();
        assert!(imported.status.success(), "{}", stderr(&imported));

        let mut burst = Burst::start(&server.base, &token, &org, &space, 1, WRITERS);
        burst.wait_for(100, &server).await;
        // Everything acknowledged before the backup starts must be in it.
        let before = burst.acked();
        let (data_flags, to) = (flags(&data), backup_file.display().to_string());
        let cwd = work.path().to_path_buf();
        let backed_up =
            tokio::task::spawn_blocking(move || run_admin(&cwd, &data_flags, &["backup", "--to", &to]))
                .await
                .unwrap();
        let during = burst.acked().len() - before.len();
        burst.stop().await;
        assert!(backed_up.status.success(), "{}", stderr(&backed_up));
        (before, during)
    });
    eprintln!("writes acknowledged while the backup ran: {during}");
    assert!(
        during > 0,
        "no write was acknowledged while the backup ran: not an online backup test"
    );
    drop(server);

    let restored_dir = work.path().join("restored");
    let restored = run_admin(
        work.path(),
        &flags(&restored_dir),
        &["restore", "--from", &backup_file.display().to_string()],
    );
    assert!(restored.status.success(), "{}", stderr(&restored));

    let db = Db::open(&DbConfig::Sqlite {
        path: restored_dir.join("quire.db"),
    })
    .unwrap();
    let verdict: Option<String> = db
        .read_sync(|c| Ok::<_, ApiError>(c.query_scalar("PRAGMA integrity_check", &[])?))
        .unwrap();
    assert_eq!(verdict.as_deref(), Some("ok"));
    let comments = ids_in(&db, "comments");
    let spaces = ids_in(&db, "spaces");
    let lost: Vec<_> = before
        .comments
        .iter()
        .filter(|id| !comments.contains(*id))
        .chain(before.spaces.iter().filter(|id| !spaces.contains(*id)))
        .collect();
    assert!(
        lost.is_empty(),
        "writes acknowledged before the backup are missing: {lost:?}"
    );

    // Every file the restored database refers to has its bytes in the restored store.
    let blobs: Vec<(String, String, i64)> = db
        .read_sync(|c| {
            let rows = c.query("SELECT space_id, hash, size FROM file_blobs", &[])?;
            Ok::<_, ApiError>(
                rows.iter()
                    .map(|r| (r.get(0).unwrap(), r.get(1).unwrap(), r.get(2).unwrap()))
                    .collect(),
            )
        })
        .unwrap();
    assert!(!blobs.is_empty(), "the import stored no file");
    for (space, hash, size) in &blobs {
        let path = restored_dir.join(format!("files/spaces/{space}/blobs/{hash}"));
        let len = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len();
        assert_eq!(len as i64, *size, "{}", path.display());
    }
}

#[test]
fn restore_refuses_a_data_directory_in_use_or_not_empty_and_changes_nothing() {
    let storage = Storage::sqlite();
    let data = storage.dir.path().to_path_buf();
    let server = Server::start(&storage, true, &[]);
    let work = tempfile::tempdir().unwrap();
    let file = work.path().join("b.tar");
    let to = file.display().to_string();
    let made = run_admin(work.path(), &flags(&data), &["backup", "--to", &to]);
    assert!(made.status.success(), "{}", stderr(&made));
    // A second backup never overwrites the first.
    let again = run_admin(work.path(), &flags(&data), &["backup", "--to", &to]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));

    let before = std::fs::read(data.join("quire.db")).unwrap().len();
    let refused = run_admin(work.path(), &flags(&data), &["restore", "--from", &to]);
    assert!(!refused.status.success());
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    let in_use = run_admin(work.path(), &flags(&data), &["restore", "--from", &to, "--force"]);
    assert!(!in_use.status.success());
    assert!(stderr(&in_use).contains("in use"), "{}", stderr(&in_use));
    assert_eq!(std::fs::read(data.join("quire.db")).unwrap().len(), before);
    drop(server);

    // Stopped: --force replaces the data, and the server starts on it without bootstrapping.
    let forced = run_admin(work.path(), &flags(&data), &["restore", "--from", &to, "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    let restarted = Server::start(&storage, false, &[]);
    let printed = restarted.stdout.lock().unwrap().join("\n");
    assert!(!printed.contains("API token"), "{printed}");

    // Something that is not a backup is refused before anything is touched.
    let bogus = work.path().join("bogus.tar");
    std::fs::write(&bogus, b"not a tar file at all").unwrap();
    let elsewhere = work.path().join("elsewhere");
    let rejected = run_admin(
        work.path(),
        &flags(&elsewhere),
        &["restore", "--from", &bogus.display().to_string()],
    );
    assert!(!rejected.status.success());
    assert!(
        stderr(&rejected).contains("not a quire backup"),
        "{}",
        stderr(&rejected)
    );
    assert!(!elsewhere.join("quire.db").exists());
}

#[test]
fn on_postgresql_backup_and_restore_point_to_pg_dump() {
    let storage = Storage::new();
    let Some(url) = storage.database_url.clone() else {
        // SQLite: the tests above cover it.
        return;
    };
    let server = Server::start(&storage, true, &[]);
    let work = tempfile::tempdir().unwrap();
    let pg = ["--database-url".to_string(), url];
    let file = work.path().join("b.tar").display().to_string();
    let backup = run_admin(work.path(), &pg, &["backup", "--to", &file]);
    assert!(!backup.status.success());
    assert!(stderr(&backup).contains("pg_dump"), "{}", stderr(&backup));
    assert!(!work.path().join("b.tar").exists());
    let restore = run_admin(work.path(), &pg, &["restore", "--from", &file]);
    assert!(!restore.status.success());
    assert!(stderr(&restore).contains("pg_restore"), "{}", stderr(&restore));
    drop(server);
}

#[test]
fn with_files_in_an_object_store_backup_says_to_use_its_tools() {
    let storage = Storage::sqlite();
    let data = flags(storage.dir.path());
    let made = run_admin(storage.dir.path(), &data, support::CREATE_ANN);
    assert!(made.status.success(), "{}", stderr(&made));
    let s3 = [
        &data[..],
        &["--object-store-url".into(), "s3://bucket/quire".into()],
    ]
    .concat();
    let file = storage.dir.path().join("b.tar");
    let refused = run_admin(
        storage.dir.path(),
        &s3,
        &["backup", "--to", &file.display().to_string()],
    );
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("s3://bucket/quire"),
        "{}",
        stderr(&refused)
    );
    assert!(
        stderr(&refused).contains("versioning or replication"),
        "{}",
        stderr(&refused)
    );
    assert!(!file.exists());
}
