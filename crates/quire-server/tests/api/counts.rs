//! The counts a space shows stay exact under concurrent writers: comments created, resolved,
//! reopened and deleted, and change requests created, opened and archived, all at once.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

const WRITERS: usize = 8;
const COMMENTS_EACH: usize = 6;

/// One writer's work: comments (two resolved, one of them reopened, one deleted) and two
/// change requests (one opened, one archived).
async fn write(app: &TestApp, user: &TestUser, space: &str, writer: usize) {
    let comments = format!("/v1/spaces/{space}/comments");
    let mut ids = Vec::new();
    for i in 0..COMMENTS_EACH {
        let body = json!({"body": {"markdown": format!("Writer {writer}, comment {i}.")}});
        let posted = app.post(user, &comments, body).await.expect(200);
        ids.push(posted["id"].as_str().unwrap().to_string());
    }
    for id in &ids[..2] {
        app.put(user, &format!("{comments}/{id}"), json!({"resolved": true}))
            .await
            .expect(200);
    }
    app.put(
        user,
        &format!("{comments}/{}", ids[0]),
        json!({"resolved": false}),
    )
    .await
    .expect(200);
    app.delete(user, &format!("{comments}/{}", ids[5]))
        .await
        .expect(204);
    let crs = format!("/v1/spaces/{space}/change-requests");
    for (i, status) in ["open", "archived"].into_iter().enumerate() {
        let cr = app
            .post(user, &crs, json!({"subject": format!("Writer {writer}, {i}")}))
            .await
            .expect(201);
        let id = cr["id"].as_str().unwrap();
        app.patch(user, &format!("{crs}/{id}"), json!({"status": status}))
            .await
            .expect(200);
    }
    // A draft left as it is.
    app.post(user, &crs, json!({"subject": format!("Writer {writer}, draft")}))
        .await
        .expect(201);
}

fn count(items: &[Value], status: &str) -> usize {
    items.iter().filter(|i| i["status"] == status).count()
}

#[tokio::test]
async fn counts_stay_exact_under_concurrent_writers() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Busy", "empty": true}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let user = app.user(&format!("Writer{w}")).await;
        app.add_member(&ann, &org, &user, Some("edit")).await;
        writers.push(user);
    }
    let work = writers
        .iter()
        .enumerate()
        .map(|(w, user)| write(&app, user, &space, w));
    futures_util::future::join_all(work).await;

    // What the space shows, against the rows counted afresh through the lists.
    let shown = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    let comments = app
        .walk(&ann, &format!("/v1/spaces/{space}/comments?status=all"), 100)
        .await;
    let crs = app
        .walk(
            &ann,
            &format!(
                "/v1/spaces/{space}/change-requests?status=draft&status=open&status=archived&status=merged"
            ),
            100,
        )
        .await;
    assert_eq!(comments.len(), WRITERS * (COMMENTS_EACH - 1));
    assert_eq!(count(&comments, "open"), WRITERS * (COMMENTS_EACH - 2));
    assert_eq!(shown["comments"], json!(count(&comments, "open")), "{shown}");
    assert_eq!(crs.len(), WRITERS * 3);
    assert_eq!(shown["changeRequests"], json!(crs.len()), "{shown}");
    assert_eq!(shown["changeRequestsOpen"], json!(count(&crs, "open")), "{shown}");
    assert_eq!(
        shown["changeRequestsDraft"],
        json!(count(&crs, "draft")),
        "{shown}"
    );
    // The list's own total comes from the same counts.
    let first = app
        .get(&ann, &format!("/v1/spaces/{space}/comments?status=all&limit=1"))
        .await
        .expect(200);
    assert_eq!(first["count"], json!(comments.len()), "{first}");
    let open = app
        .get(&ann, &format!("/v1/spaces/{space}/comments?status=open&limit=1"))
        .await
        .expect(200);
    assert_eq!(open["count"], json!(count(&comments, "open")), "{open}");
}
