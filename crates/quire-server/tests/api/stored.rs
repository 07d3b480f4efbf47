//! Stored data that no longer decodes (JSON, states, roles) is an error: a 500 with the JSON
//! envelope, never a default value, an empty document or a weaker role; and a document a
//! merge cannot load fails the merge instead of passing for a conflict.

use quire_server::error::ApiError;
use quire_server::params;
use serde_json::json;

use crate::support::{TestApp, TestUser};

/// Runs one statement on the server's database, bypassing the API.
async fn corrupt(app: &TestApp, sql: &'static str, id: &str) {
    let id = id.to_string();
    let changed = app
        .db
        .write(move |c| c.execute(sql, params![id.clone()]).map_err(ApiError::from))
        .await
        .unwrap();
    assert_eq!(changed, 1, "{sql}");
}

/// Asserts a 500 with the envelope and a message that says nothing of the database.
#[track_caller]
fn assert_internal(resp: crate::support::Resp) {
    let message = resp.expect_error(500);
    assert_eq!(message, "internal server error");
}

async fn space(app: &TestApp, user: &TestUser, org: &str) -> String {
    let space = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook"}),
        )
        .await
        .expect(201);
    space["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn merge_rules_that_do_not_decode_are_an_error_not_no_rules() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = space(&app, &ann, &org).await;
    app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    corrupt(
        &app,
        "UPDATE spaces SET merge_rules = '{\"type\":' WHERE id = ?1",
        &space,
    )
    .await;
    assert_internal(app.get(&ann, &format!("/v1/spaces/{space}")).await);
    corrupt(
        &app,
        "UPDATE organizations SET merge_rules = 'rules' WHERE id = ?1",
        &org,
    )
    .await;
    assert_internal(app.get(&ann, &format!("/v1/orgs/{org}")).await);
}

#[tokio::test]
async fn unknown_states_and_roles_are_an_error_not_a_default() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Docs").await;
    app.add_member(&ann, &org, &bob, Some("edit")).await;
    let space = space(&app, &ann, &org).await;
    // A role quire does not know must not read as a guest (or any role).
    corrupt(
        &app,
        "UPDATE members SET role = 'owner' WHERE user_id = ?1",
        &bob.id,
    )
    .await;
    assert_internal(app.get(&ann, &format!("/v1/orgs/{org}/members")).await);
    assert_internal(app.get(&bob, &format!("/v1/spaces/{space}")).await);
    corrupt(
        &app,
        "UPDATE spaces SET visibility = 'everyone' WHERE id = ?1",
        &space,
    )
    .await;
    assert_internal(app.get(&ann, &format!("/v1/spaces/{space}")).await);
}

#[tokio::test]
async fn stored_json_of_change_requests_and_comments_that_does_not_decode_is_an_error() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = space(&app, &ann, &org).await;
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Edit"}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap().to_string();
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}"),
        json!({"description": {"object": "document", "data": {}, "nodes": []}}),
    )
    .await
    .expect(200);
    corrupt(
        &app,
        "UPDATE change_requests SET description = '{\"object\"' WHERE id = ?1",
        &cr,
    )
    .await;
    // Before: the description silently disappeared from the answer.
    assert_internal(
        app.get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}"))
            .await,
    );

    let comment = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments"),
            json!({"body": {"markdown": "Hello"}}),
        )
        .await
        .expect(200);
    let comment = comment["id"].as_str().unwrap().to_string();
    app.get(&ann, &format!("/v1/spaces/{space}/comments"))
        .await
        .expect(200);
    corrupt(&app, "UPDATE comments SET body = 'Hello' WHERE id = ?1", &comment).await;
    // Before: an empty body.
    assert_internal(app.get(&ann, &format!("/v1/spaces/{space}/comments")).await);
    assert_internal(
        app.get(&ann, &format!("/v1/spaces/{space}/comments/{comment}"))
            .await,
    );
}

#[tokio::test]
async fn a_merge_that_cannot_load_a_document_fails_instead_of_answering_conflicts() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = space(&app, &ann, &org).await;
    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let page = pages["pages"][0]["id"].as_str().unwrap().to_string();
    let write = |cr: String, markdown: &'static str| {
        let (app, ann, space, page) = (&app, &ann, space.clone(), page.clone());
        async move {
            app.post(
                ann,
                &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
                json!({"changes": [{"operation": "update_page", "page": page,
                    "document": {"markdown": markdown}}]}),
            )
            .await
            .expect(200);
        }
    };
    let new_cr = |subject: &'static str| {
        let (app, ann, space) = (&app, &ann, space.clone());
        async move {
            let cr = app
                .post(
                    ann,
                    &format!("/v1/spaces/{space}/change-requests"),
                    json!({"subject": subject}),
                )
                .await
                .expect(201);
            cr["id"].as_str().unwrap().to_string()
        }
    };
    let seed = new_cr("Seed").await;
    write(seed.clone(), "First.\n\nSecond.\n\nThird.\n").await;
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{seed}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let a = new_cr("A").await;
    let b = new_cr("B").await;
    write(a.clone(), "First, edited by A.\n\nSecond.\n\nThird.\n").await;
    write(b.clone(), "First.\n\nSecond.\n\nThird, edited by B.\n").await;
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{a}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    // B's document is now unreadable. Merging B needs a three-way merge of the page, which
    // must fail rather than take the unreadable version for a conflict or an empty page.
    let changed = {
        let space = space.clone();
        app.db
            .write(move |c| {
                c.execute(
                    "UPDATE objects SET body = '{\"object\":\"document\",' WHERE space_id = ?1 AND body LIKE '%edited by B%'",
                    params![space.clone()],
                )
                .map_err(ApiError::from)
            })
            .await
            .unwrap()
    };
    assert_eq!(changed, 1);
    // Another process reads the database afresh: nothing of B's document is in its caches.
    let other = app.beside().await;
    assert_internal(
        other
            .post(
                &ann,
                &format!("/v1/spaces/{space}/change-requests/{b}/merge"),
                json!({}),
            )
            .await,
    );
    let b_json = other
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{b}"))
        .await
        .expect(200);
    assert_eq!(b_json["status"], "draft", "nothing was merged");
    assert!(b_json.get("conflicts").is_none(), "{b_json}");
}
