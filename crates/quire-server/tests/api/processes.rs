//! Several processes on one storage (the same database, and the same data directory or bucket),
//! as behind a load balancer: what one writes, the other reads and serves, caches included.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::content::{PNG, space_with_cr};
use crate::support::{TestApp, TestUser};

/// How soon a write through one process must show on another (PostgreSQL notifies the others;
/// SQLite's other processes see the database's version change within a millisecond).
const WITHIN: Duration = Duration::from_secs(1);

/// Reads `path` through `app` until `done` holds, and answers how long that took.
async fn seen_after(app: &TestApp, user: &TestUser, path: &str, done: impl Fn(&Value) -> bool) -> Duration {
    let since = Instant::now();
    loop {
        let body = app.get(user, path).await.expect(200);
        if done(&body) {
            return since.elapsed();
        }
        assert!(since.elapsed() < 2 * WITHIN, "{path} still reads {body}");
        // A pause between polls keeps the loop under the rate limit.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn merge(app: &TestApp, user: &TestUser, space: &str, cr: &str) {
    app.post(
        user,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn bytes_merges_and_cached_reads_cross_between_two_processes() {
    let first = TestApp::start().await;
    let second = first.beside().await;
    let ann = first.user("Ann").await;
    let (_, space, cr) = space_with_cr(&first, &ann).await;
    let (space_path, main) = (
        format!("/v1/spaces/{space}"),
        format!("/v1/spaces/{space}/content"),
    );
    // Both processes have read, and cached, the space and its main content.
    for app in [&first, &second] {
        app.get(&ann, &space_path).await.expect(200);
        app.get(&ann, &main).await.expect(200);
    }

    // A file and a page written and merged through the first process...
    first
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
            json!({"changes": [
                {"operation": "insert_files", "files": [{"ref": "img", "name": "img.png", "contentType": "image/png", "base64": PNG}]},
                {"operation": "insert_page", "title": "With image", "document": {"markdown": "![x](./img)"}}
            ]}),
        )
        .await
        .expect(200);
    merge(&first, &ann, &space, &cr).await;
    // ...show on the second within a second, and the second serves the bytes.
    let took = seen_after(&second, &ann, &main, |c| c["pages"][0]["title"] == "With image").await;
    assert!(
        took < WITHIN,
        "the merge showed on the other process after {took:?}"
    );
    let files = second.get(&ann, &format!("{main}/files")).await.expect(200);
    let url = files["items"][0]["downloadURL"].as_str().unwrap();
    assert!(url.starts_with(&second.base), "{url}");
    let download = reqwest::get(url).await.unwrap();
    assert_eq!(download.status(), 200);
    let png = base64::engine::general_purpose::STANDARD.decode(PNG).unwrap();
    assert_eq!(download.bytes().await.unwrap().as_ref(), png.as_slice());

    // A change merged through the second shows on the first, whose caches held the old page.
    let page = first.get(&ann, &main).await.expect(200)["pages"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    first.get(&ann, &format!("{main}/page/{page}")).await.expect(200);
    let cr2 = second
        .post(
            &ann,
            &format!("{space_path}/change-requests"),
            json!({"subject": "Rename"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    second
        .post(
            &ann,
            &format!("{space_path}/change-requests/{cr2}/content"),
            json!({"changes": [{"operation": "update_page", "page": page, "title": "Renamed", "document": {"markdown": "Text written through the second process."}}]}),
        )
        .await
        .expect(200);
    merge(&second, &ann, &space, &cr2).await;
    let took = seen_after(
        &first,
        &ann,
        &format!("{main}/page/{page}?format=markdown"),
        |p| {
            p["title"] == "Renamed"
                && p["markdown"]
                    .as_str()
                    .is_some_and(|m| m.contains("second process"))
        },
    )
    .await;
    assert!(
        took < WITHIN,
        "the merge showed on the other process after {took:?}"
    );

    // A space setting changed through the first shows on the second's cached space.
    first
        .patch(&ann, &space_path, json!({"title": "Handbook, renamed"}))
        .await
        .expect(200);
    let took = seen_after(&second, &ann, &space_path, |s| s["title"] == "Handbook, renamed").await;
    assert!(
        took < WITHIN,
        "the space showed on the other process after {took:?}"
    );
}
