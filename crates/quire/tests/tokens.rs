//! `quire admin token create --expires`, `token list` and `token revoke` as an operator runs
//! them: the real binary on a database of a temporary directory (SQLite; the same functions run
//! on PostgreSQL in the API tests of crates/quire-server).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

/// Runs `quire admin ARGS` on the database in `dir`.
fn admin(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quire"))
        .arg("admin")
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .env_remove("QUIRE_DATABASE_URL")
        .env_remove("QUIRE_DATA_DIR")
        .output()
        .expect("run quire")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "quire failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn tokens_are_created_with_an_expiry_listed_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    // The database and its user, made as the server would (not through the command line, whose
    // handling of a new database is not what this test is about).
    let db = quire_server::db::Db::open(&quire_server::db::DbConfig::Sqlite {
        path: dir.path().join("quire.db"),
    })
    .unwrap();
    quire_store::admin::create_user(&db, "ann@example.com", "Ann").unwrap();
    drop(db);

    let lasting = stdout(&admin(
        dir.path(),
        &["token", "create", "--email", "ann@example.com"],
    ));
    assert!(lasting.trim().starts_with("quire_"), "{lasting}");
    let expiring = admin(
        dir.path(),
        &[
            "token",
            "create",
            "--email",
            "ann@example.com",
            "--expires",
            "30d",
            "--scope",
            "space:content:read",
        ],
    );
    assert!(stdout(&expiring).trim().starts_with("quire_"));

    let list = stdout(&admin(
        dir.path(),
        &["token", "list", "--email", "ann@example.com"],
    ));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines[0], "ID\tCREATED\tEXPIRES\tSCOPES\tLABEL", "{list}");
    assert_eq!(lines.len(), 3, "{list}");
    assert!(!list.contains("quire_"), "secrets are never listed: {list}");
    let never = lines
        .iter()
        .find(|l| l.contains("\tnever\t"))
        .expect("a token without expiry");
    assert!(never.contains("(all)"), "{never}");
    let expires = lines[1..]
        .iter()
        .find(|l| l.contains("space:content:read"))
        .expect("the scoped token");
    let expiry = expires.split('\t').nth(2).unwrap();
    let year: i32 = expiry[..4].parse().unwrap();
    assert!(expiry.ends_with('Z') && year >= 2024, "{expires}");

    let id = never.split('\t').next().unwrap();
    assert_eq!(
        stdout(&admin(dir.path(), &["token", "revoke", id])).trim(),
        format!("revoked token {id}")
    );
    let list = stdout(&admin(
        dir.path(),
        &["token", "list", "--email", "ann@example.com"],
    ));
    assert_eq!(list.lines().count(), 2, "{list}");
    assert!(!list.contains(id), "{list}");

    // Revoking again, or an unknown id, fails and says why.
    let again = admin(dir.path(), &["token", "revoke", id]);
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains(&format!("no token has the id {id}")),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // A bad expiry is refused before anything is written.
    let bad = admin(
        dir.path(),
        &["token", "create", "--email", "ann@example.com", "--expires", "0"],
    );
    assert!(!bad.status.success());
    let list = stdout(&admin(
        dir.path(),
        &["token", "list", "--email", "ann@example.com"],
    ));
    assert_eq!(list.lines().count(), 2, "{list}");
}
