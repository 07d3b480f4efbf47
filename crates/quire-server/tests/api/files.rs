//! File bytes: nothing stored or fetched for rejected batches, unreferenced bytes collected after
//! the retention, storage quotas.

use base64::Engine as _;
use quire_content::buckets::content_hash;
use serde_json::{Value, json};

use crate::content::space_with_cr;
use crate::support::{TestApp, TestUser};

/// `len` bytes that differ for each `seed`.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

fn file(name: &str, seed: u64, len: usize) -> Value {
    json!({
        "name": name,
        "contentType": "application/octet-stream",
        "base64": base64::engine::general_purpose::STANDARD.encode(bytes(seed, len)),
    })
}

fn insert(files: Vec<Value>) -> Value {
    json!({"changes": [{"operation": "insert_files", "files": files}]})
}

fn hash(seed: u64, len: usize) -> String {
    content_hash(&bytes(seed, len))
}

async fn new_cr(app: &TestApp, user: &TestUser, space: &str) -> String {
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "More"}),
        )
        .await
        .expect(201);
    cr["id"].as_str().unwrap().to_string()
}

async fn new_space(app: &TestApp, user: &TestUser, org: &str) -> String {
    let space = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Other", "empty": true}),
        )
        .await
        .expect(201);
    space["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn rejected_file_batches_store_nothing() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (org, space, cr) = space_with_cr(&app, &ann).await;
    let outsider = app.user("Olga").await;
    app.org(&outsider, "Elsewhere").await;
    let reader = app.user("Rita").await;
    app.add_member(&ann, &org, &reader, Some("read")).await;
    let removed = app.user("Remy").await;
    app.add_member(&ann, &org, &removed, Some("edit")).await;
    app.delete(&ann, &format!("/v1/orgs/{org}/members/{}", removed.id))
        .await
        .expect(204);
    let seven: Vec<Value> = (0..7).map(|i| file(&format!("f{i}.bin"), i, 200_000)).collect();
    let batch = insert(seven);
    let path = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let before = app.stored_files().await;
    for user in [&outsider, &removed] {
        let message = app.post(user, &path, batch.clone()).await.expect_error(404);
        assert!(message.contains(&space), "{message}");
    }
    app.post(&reader, &path, batch.clone()).await.expect_error(403);
    app.post(&ann, "/v1/spaces/junk0/change-requests/x/content", batch.clone())
        .await
        .expect_error(404);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/nope/content"),
        batch.clone(),
    )
    .await
    .expect_error(404);
    let archived = new_cr(&app, &ann, &space).await;
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{archived}"),
        json!({"status": "archived"}),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{archived}/content"),
        batch.clone(),
    )
    .await
    .expect_error(409);
    // An invalid file after valid ones: the whole batch is refused before any byte is stored.
    let mut files: Vec<Value> = (0..3)
        .map(|i| file(&format!("ok{i}.bin"), 10 + i, 50_000))
        .collect();
    files
        .push(json!({"name": "bad.bin", "contentType": "application/octet-stream", "base64": "not base64!"}));
    let message = app.post(&ann, &path, insert(files)).await.expect_error(400);
    assert!(message.contains("changes[0].files[3]"), "{message}");
    let second_change_bad = json!({"changes": [
        {"operation": "insert_files", "files": [file("ok.bin", 20, 50_000)]},
        {"operation": "insert_files", "files": [{"name": "a/b.bin", "contentType": "text/plain", "base64": "AAAA"}]}
    ]});
    app.post(&ann, &path, second_change_bad).await.expect_error(400);
    // A file whose URL cannot be fetched, after base64 ones already stored: those are removed.
    let unfetchable = json!({"changes": [
        {"operation": "insert_files", "files": [file("kept.bin", 30, 50_000), file("kept2.bin", 31, 50_000)]},
        {"operation": "insert_files", "files": [{"name": "x.png", "url": "http://127.0.0.1:9/x.png"}]}
    ]});
    let message = app.post(&ann, &path, unfetchable).await.expect_error(400);
    assert!(message.contains("changes[1].files[0]"), "{message}");
    assert_eq!(app.stored_files().await, before, "a rejected batch stored bytes");
    // The same batch by an editor is stored.
    app.post(&ann, &path, batch).await.expect(200);
    let after = app.stored_files().await;
    assert_eq!(after.0, before.0 + 7);
    assert_eq!(after.1, before.1 + 7 * 200_000);
}

#[tokio::test]
async fn a_url_file_of_a_rejected_batch_is_never_fetched() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let outsider = app.user("Olga").await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/secret.png", listener.local_addr().unwrap());
    let batch = json!({"changes": [{"operation": "insert_files", "files": [{"name": "x.png", "url": url}]}]});
    let path = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    // The permission check answers first, before the address is even looked at...
    let message = app.post(&outsider, &path, batch.clone()).await.expect_error(404);
    assert!(message.contains("not found"), "{message}");
    // ...which the caller allowed to write gets to see.
    let message = app.post(&ann, &path, batch).await.expect_error(400);
    assert!(message.contains("private or reserved"), "{message}");
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the listener was reached: {other:?}"),
    }
}

#[tokio::test]
async fn unreferenced_file_bytes_are_collected_after_the_retention() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, merged) = space_with_cr(&app, &ann).await;
    let content = |cr: &str| format!("/v1/spaces/{space}/change-requests/{cr}/content");
    const LEN: usize = 5_000;
    // 1: merged into main. 2: in a change request then archived. 3: in an open change request.
    // 4: uploaded by a batch that then failed. 5: in main and also in the archived one.
    app.post(
        &ann,
        &content(&merged),
        insert(vec![file("one.bin", 1, LEN), file("five.bin", 5, LEN)]),
    )
    .await
    .expect(200);
    let result = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{merged}/merge"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(result["result"], "merge");
    let archived = new_cr(&app, &ann, &space).await;
    app.post(
        &ann,
        &content(&archived),
        insert(vec![file("two.bin", 2, LEN), file("five.bin", 5, LEN)]),
    )
    .await
    .expect(200);
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{archived}"),
        json!({"status": "archived"}),
    )
    .await
    .expect(200);
    let open = new_cr(&app, &ann, &space).await;
    app.post(&ann, &content(&open), insert(vec![file("three.bin", 3, LEN)]))
        .await
        .expect(200);
    let failing = json!({"changes": [
        {"operation": "insert_files", "files": [file("four.bin", 4, LEN)]},
        {"operation": "update_page", "page": "nosuchpage", "document": {"markdown": "x"}}
    ]});
    app.post(&ann, &content(&open), failing).await.expect_error(400);
    let all: std::collections::BTreeSet<String> = (1..=5).map(|s| hash(s, LEN)).collect();
    assert_eq!(app.stored_blobs(&space).await, all);

    // Within the retention nothing goes.
    let now = quire_server::clock::now_ms();
    let done = quire_store::files::collect(app.server(), now).await.unwrap();
    assert_eq!(done.blobs, 0);
    assert_eq!(app.stored_blobs(&space).await, all);

    // After it, the archived change request's and the failed batch's bytes go, once.
    let later = now + 3 * 86_400_000 + 60_000;
    let done = quire_store::files::collect(app.server(), later).await.unwrap();
    assert_eq!(done.blobs, 2, "{done:?}");
    assert_eq!(done.bytes, 2 * LEN as u64);
    let kept: std::collections::BTreeSet<String> = [1, 3, 5].iter().map(|s| hash(*s, LEN)).collect();
    assert_eq!(app.stored_blobs(&space).await, kept);
    let again = quire_store::files::collect(app.server(), later).await.unwrap();
    assert_eq!(again.blobs, 0);

    // What main and the open change request reference still downloads.
    for path in [
        format!("/v1/spaces/{space}/content/files"),
        format!("/v1/spaces/{space}/change-requests/{open}/content/files"),
    ] {
        let files = app.get(&ann, &path).await.expect(200);
        let items = files["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{files}");
        for f in items {
            let url = f["downloadURL"].as_str().unwrap();
            let path = url.strip_prefix(&app.base).unwrap();
            let resp = app.request("GET", None, path, None).await;
            assert_eq!(resp.status, 200, "{url}");
        }
    }

    // The same bytes uploaded again are stored again, and kept.
    let again = new_cr(&app, &ann, &space).await;
    app.post(
        &ann,
        &content(&again),
        insert(vec![file("two-again.bin", 2, LEN)]),
    )
    .await
    .expect(200);
    assert!(app.stored_blobs(&space).await.contains(&hash(2, LEN)));
    let done = quire_store::files::collect(app.server(), later + 60_000)
        .await
        .unwrap();
    assert_eq!(done.blobs, 0, "bytes an open change request references are kept");
}

#[tokio::test]
async fn the_collection_job_is_scheduled_once_per_database() {
    let app = TestApp::start().await;
    let db = app.another_process().await;
    let count = |db: quire_server::db::Db| async move {
        tokio::task::spawn_blocking(move || {
            db.read_sync(|c| {
                c.query_scalar::<i64>("SELECT count(*) FROM jobs WHERE kind = 'collect_files'", &[])
                    .map(|n| n.unwrap_or(0))
            })
            .unwrap()
        })
        .await
        .unwrap()
    };
    assert_eq!(count(db.clone()).await, 1);
    let schedule = db.clone();
    tokio::task::spawn_blocking(move || {
        schedule
            .write_sync(|c| quire_store::files::schedule(c, quire_server::clock::now_ms()))
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(count(db.clone()).await, 1);
    // Due now, it runs (here or on the background runner) and is scheduled again, not removed.
    let now = quire_server::clock::now_ms();
    let due = db.clone();
    tokio::task::spawn_blocking(move || {
        due.write_sync(|c| c.execute("UPDATE jobs SET run_at = 0 WHERE kind = 'collect_files'", &[]))
            .unwrap()
    })
    .await
    .unwrap();
    quire_store::worker::run_one(app.server()).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let read = db.clone();
        let run_at = tokio::task::spawn_blocking(move || {
            read.read_sync(|c| {
                c.query_scalar::<i64>("SELECT run_at FROM jobs WHERE kind = 'collect_files'", &[])
            })
            .unwrap()
        })
        .await
        .unwrap();
        if run_at.is_some_and(|at| at >= now + 60_000) {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the collection was not rescheduled: {run_at:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn files_of_revisions_written_before_the_index_are_indexed_before_collecting() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, merged) = space_with_cr(&app, &ann).await;
    let content = |cr: &str| format!("/v1/spaces/{space}/change-requests/{cr}/content");
    const LEN: usize = 3_000;
    app.post(&ann, &content(&merged), insert(vec![file("one.bin", 1, LEN)]))
        .await
        .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{merged}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let archived = new_cr(&app, &ann, &space).await;
    app.post(&ann, &content(&archived), insert(vec![file("two.bin", 2, LEN)]))
        .await
        .expect(200);
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{archived}"),
        json!({"status": "archived"}),
    )
    .await
    .expect(200);
    let open = new_cr(&app, &ann, &space).await;
    app.post(&ann, &content(&open), insert(vec![file("three.bin", 3, LEN)]))
        .await
        .expect(200);
    // As a database from before the index: no rows, not marked complete.
    let db = app.db.clone();
    tokio::task::spawn_blocking(move || {
        db.write_sync(|c| {
            c.execute("DELETE FROM file_refs", &[])?;
            c.execute("DELETE FROM file_blobs", &[])?;
            c.execute("DELETE FROM settings WHERE key = 'file_refs_complete'", &[])
        })
        .unwrap()
    })
    .await
    .unwrap();
    // The first collection indexes them; what it finds gets a whole retention from then on.
    let now = quire_server::clock::now_ms();
    let done = quire_store::files::collect(app.server(), now).await.unwrap();
    assert_eq!(done.blobs, 0, "{done:?}");
    assert_eq!(app.stored_blobs(&space).await.len(), 3);
    let later = now + 3 * 86_400_000 + 60_000;
    let done = quire_store::files::collect(app.server(), later).await.unwrap();
    assert_eq!(done.blobs, 1, "{done:?}");
    let kept: std::collections::BTreeSet<String> = [1, 3].iter().map(|s| hash(*s, LEN)).collect();
    assert_eq!(app.stored_blobs(&space).await, kept);
}

#[tokio::test]
async fn the_space_storage_quota_refuses_uploads_beyond_it() {
    let app = TestApp::start_with(&["--space-storage-quota", "12KB"]).await;
    let ann = app.user("Ann").await;
    let (org, space, cr) = space_with_cr(&app, &ann).await;
    let path = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    app.post(
        &ann,
        &path,
        insert(vec![file("a.bin", 1, 5_000), file("b.bin", 2, 5_000)]),
    )
    .await
    .expect(200);
    let before = app.stored_files().await;
    let message = app
        .post(&ann, &path, insert(vec![file("c.bin", 3, 5_000)]))
        .await
        .expect_error(413);
    assert!(
        message.contains("space storage quota of 12KB (12000 bytes)"),
        "{message}"
    );
    assert!(message.contains(&space), "{message}");
    // Two files that fit alone but not together.
    let mut files: Vec<Value> = vec![file("d.bin", 4, 1_000), file("e.bin", 5, 1_500)];
    app.post(&ann, &path, insert(files.clone()))
        .await
        .expect_error(413);
    assert_eq!(app.stored_files().await, before, "a refused upload stored bytes");
    // Bytes the space holds already cost nothing more; what fits is stored.
    files.truncate(1);
    files.push(file("a-again.bin", 1, 5_000));
    app.post(&ann, &path, insert(files)).await.expect(200);
    assert_eq!(app.stored_files().await.1, before.1 + 1_000);
    // Another space has room of its own.
    let other = new_space(&app, &ann, &org).await;
    let other_cr = new_cr(&app, &ann, &other).await;
    app.post(
        &ann,
        &format!("/v1/spaces/{other}/change-requests/{other_cr}/content"),
        insert(vec![file("c.bin", 3, 5_000), file("f.bin", 6, 5_000)]),
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn the_org_storage_quota_counts_every_space_of_the_organization() {
    let app = TestApp::start_with(&["--org-storage-quota", "12KB"]).await;
    let ann = app.user("Ann").await;
    let (org, space, cr) = space_with_cr(&app, &ann).await;
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        insert(vec![file("a.bin", 1, 5_000), file("b.bin", 2, 5_000)]),
    )
    .await
    .expect(200);
    let other = new_space(&app, &ann, &org).await;
    let other_cr = new_cr(&app, &ann, &other).await;
    let before = app.stored_files().await;
    let path = format!("/v1/spaces/{other}/change-requests/{other_cr}/content");
    // Bytes are stored per space: the same file in another space counts again.
    for seed in [1, 3] {
        let message = app
            .post(&ann, &path, insert(vec![file("c.bin", seed, 5_000)]))
            .await
            .expect_error(413);
        assert!(
            message.contains("organization storage quota of 12KB (12000 bytes)"),
            "{message}"
        );
        assert!(message.contains(&org), "{message}");
    }
    assert_eq!(app.stored_files().await, before, "a refused upload stored bytes");
    app.post(&ann, &path, insert(vec![file("small.bin", 4, 2_000)]))
        .await
        .expect(200);
    // Another organization has room of its own.
    let bob = app.user("Bob").await;
    let (_, bob_space, bob_cr) = space_with_cr(&app, &bob).await;
    app.post(
        &bob,
        &format!("/v1/spaces/{bob_space}/change-requests/{bob_cr}/content"),
        insert(vec![file("a.bin", 1, 5_000), file("b.bin", 2, 5_000)]),
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn duplicating_a_space_checks_the_role_and_the_quota_before_copying_bytes() {
    let app = TestApp::start_with(&["--org-storage-quota", "12KB"]).await;
    let ann = app.user("Ann").await;
    let (org, space, cr) = space_with_cr(&app, &ann).await;
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        insert(vec![file("a.bin", 1, 5_000)]),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let reader = app.user("Rita").await;
    app.add_member(&ann, &org, &reader, Some("read")).await;
    let duplicate = format!("/v1/spaces/{space}/duplicate");
    let (files_before, spaces_before) = (app.stored_files().await, space_count(&app, &ann, &org).await);
    // A reader sees the space but may not create one: refused before any byte is copied.
    app.post(&reader, &duplicate, json!({})).await.expect_error(403);
    assert_eq!(
        app.stored_files().await,
        files_before,
        "a refused duplicate copied bytes"
    );
    // The first copy fits in the organization's quota (10 KB of 12 KB); a second would not.
    app.post(&ann, &duplicate, json!({})).await.expect(201);
    let files_before = app.stored_files().await;
    assert_eq!(files_before.1, 10_000);
    let message = app.post(&ann, &duplicate, json!({})).await.expect_error(413);
    assert!(
        message.contains("organization storage quota of 12KB (12000 bytes)"),
        "{message}"
    );
    assert_eq!(
        app.stored_files().await,
        files_before,
        "a refused duplicate copied bytes"
    );
    assert_eq!(
        space_count(&app, &ann, &org).await,
        spaces_before + 1,
        "a refused duplicate made a space"
    );
}

async fn space_count(app: &TestApp, user: &TestUser, org: &str) -> usize {
    let list = app.get(user, &format!("/v1/orgs/{org}/spaces")).await.expect(200);
    list["items"].as_array().map_or(0, Vec::len)
}
