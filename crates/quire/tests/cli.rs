//! The first hour with the `quire` binary: which database a command uses (said, as an absolute
//! path, and never made by accident), the access log, and `--version`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Server, Storage, admin, call, client, runtime, stderr};

#[test]
fn admin_in_another_directory_says_which_database_and_refuses_to_make_one() {
    let cwd = tempfile::tempdir().unwrap();
    let data = cwd.path().join("data");
    let user = ["user", "create", "--email", "ann@example.com", "--name", "Ann"];

    let refused = admin(cwd.path(), &user);
    assert!(!refused.status.success(), "{}", stderr(&refused));
    let said = stderr(&refused);
    let db_path = data.join("quire.db").display().to_string();
    assert!(said.contains(&format!("database {db_path} (SQLite)")), "{said}");
    assert!(
        said.contains(&format!("data directory {}", data.display())),
        "{said}"
    );
    assert!(said.contains("--create"), "{said}");
    assert!(!data.exists(), "a refused command made {}", data.display());

    let created = admin(cwd.path(), &[&user[..], &["--create"]].concat());
    assert!(created.status.success(), "{}", stderr(&created));
    assert!(stderr(&created).contains("setting up a new, empty database"));
    assert!(data.join("quire.db").exists());

    // Once it exists, no flag is needed, and the same database is reported.
    let again = admin(
        cwd.path(),
        &["user", "create", "--email", "bob@example.com", "--name", "Bob"],
    );
    assert!(again.status.success(), "{}", stderr(&again));
    assert!(stderr(&again).contains(&db_path), "{}", stderr(&again));
    assert!(!stderr(&again).contains("new, empty"));
}

#[test]
fn admin_refuses_a_database_quire_never_set_up_on_either_engine() {
    // SQLite in a temporary directory, or a fresh PostgreSQL schema: both hold no quire schema.
    let storage = Storage::new();
    let flags = storage.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let org = [
        &flags[..],
        &["org", "create", "--title", "Acme", "--owner", "ann@example.com"],
    ]
    .concat();
    let refused = admin(storage.dir.path(), &org);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("no quire database at"),
        "{}",
        stderr(&refused)
    );
    if storage.database_url.is_some() {
        assert!(stderr(&refused).contains("(PostgreSQL)"), "{}", stderr(&refused));
        // Asking changed nothing: the schema is still empty.
        let pg_url = storage.database_url.clone().unwrap();
        let mut client = postgres::Client::connect(&pg_url, postgres::NoTls).unwrap();
        let tables: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(tables, 0);
    }
    let user = [&flags[..], support::CREATE_ANN].concat();
    let created = admin(storage.dir.path(), &user);
    assert!(created.status.success(), "{}", stderr(&created));
    let org_made = admin(storage.dir.path(), &org);
    assert!(org_made.status.success(), "{}", stderr(&org_made));
}

/// Polls the server's log (10 s at most) for a line `matches` accepts.
fn log_line(server: &Server, matches: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(line) = server.log.lock().unwrap().iter().find(|l| matches(l)) {
            return line.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no such log line; log:\n{}",
            server.log.lock().unwrap().join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn text_logs_have_no_colour_off_a_terminal_and_one_line_per_request() {
    let storage = Storage::new();
    let server = Server::start_logging(&storage, true, &[], "text");
    let answered = runtime().block_on(async {
        client()
            .get(format!("{}/readyz", server.base))
            .header("x-request-id", "text-log-probe-1")
            .send()
            .await
            .unwrap()
            .status()
    });
    assert_eq!(answered, 200);
    let line = log_line(&server, |l| l.contains("id=text-log-probe-1"));
    assert!(
        line.contains("request method=GET route=/readyz status=200 ms="),
        "{line}"
    );
    let ms = line
        .split("ms=")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let decimals = ms.split('.').nth(1).map_or(0, str::len);
    assert!(ms.parse::<f64>().is_ok() && decimals <= 2, "{line}");
    let storage_line = log_line(&server, |l| l.contains("storage database="));
    assert!(
        storage_line.contains(&format!("data_dir={}", storage.dir.path().display())),
        "{storage_line}"
    );
    let log = server.log.lock().unwrap().join("\n");
    assert!(!log.contains('\u{1b}'), "ANSI escapes in a piped log:\n{log}");
}

#[test]
fn json_logs_give_each_request_its_route_status_duration_and_id() {
    let storage = Storage::new();
    let server = Server::start(&storage, true, &[]);
    let token = server.bootstrap.as_ref().unwrap().token.clone();
    runtime().block_on(async {
        let (status, body) = call(
            &client(),
            &token,
            "GET",
            &format!("{}/v1/orgs", server.base),
            None,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        let missing = client()
            .get(format!("{}/v1/spaces/nope", server.base))
            .bearer_auth(&token)
            .header("x-request-id", "json-log-probe-2")
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
    });
    let parsed = |l: &str| serde_json::from_str::<Value>(l).ok();
    let line = log_line(&server, |l| {
        parsed(l).is_some_and(|v| v["fields"]["id"] == "json-log-probe-2")
    });
    let v = parsed(&line).unwrap();
    assert_eq!(v["level"], "INFO", "{line}");
    assert_eq!(v["fields"]["message"], "request", "{line}");
    assert_eq!(v["fields"]["method"], "GET", "{line}");
    // The matched route, not the path with its ids.
    assert_eq!(v["fields"]["route"], "/v1/spaces/{spaceId}", "{line}");
    assert_eq!(v["fields"]["status"], 404, "{line}");
    let ms = v["fields"]["ms"].as_f64().expect("ms is a number");
    assert_eq!((ms * 100.0).round() / 100.0, ms, "{line}");
    // Successes are logged at info too.
    log_line(&server, |l| {
        parsed(l).is_some_and(|v| v["fields"]["route"] == "/v1/orgs" && v["fields"]["status"] == 200)
    });
}

#[test]
fn version_names_the_release_and_the_commit() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_quire"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let text = text.trim();
    let expected = format!("quire {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&expected) && text.ends_with(')'), "{text}");
    let commit = &text[expected.len()..text.len() - 1];
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{text}"
    );
}
