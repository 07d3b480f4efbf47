//! 403 messages name the role an action needs and the caller's role, in the API's words
//! (`review`, `edit`, ...), for spaces, change requests, collections, access grants and comments.
//! (The organization, member, team and invite refusals are checked by the matrix.)

use serde_json::json;

use crate::search::new_space;
use crate::support::{TestApp, TestUser, assert_role_refusal};

/// An organization owned by Ann, with a member for each of `roles`.
async fn org_with(app: &TestApp, roles: &[&str]) -> (TestUser, String, Vec<TestUser>) {
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let mut members = Vec::new();
    for role in roles {
        let user = app.user(role).await;
        app.add_member(&ann, &org, &user, Some(role)).await;
        members.push(user);
    }
    (ann, org, members)
}

/// A new change request of `space` by `user`; its id.
async fn change_request(app: &TestApp, user: &TestUser, space: &str) -> String {
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Fix"}),
        )
        .await
        .expect(201);
    cr["id"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_review_by_an_edit_member_names_review_and_edit() {
    let app = TestApp::start().await;
    let (ann, org, members) = org_with(&app, &["edit"]).await;
    let editor = &members[0];
    let space = new_space(&app, &ann, &org, "Docs").await;
    let cr = &change_request(&app, &ann, &space).await;
    let message = app
        .post(
            editor,
            &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
            json!({"status": "approved"}),
        )
        .await
        .expect_error(403);
    assert_role_refusal(&message, "edit");
    assert!(message.contains("`review`"), "{message}");
    assert!(!message.contains("(Review)"), "{message}");
    let reviews = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"))
        .await
        .expect(200);
    assert_eq!(reviews["count"], 0, "a refused review changes nothing");
}

#[tokio::test]
async fn space_and_change_request_refusals_name_both_roles() {
    let app = TestApp::start().await;
    let (ann, org, members) = org_with(&app, &["read", "edit"]).await;
    let (reader, editor) = (&members[0], &members[1]);
    let space = new_space(&app, &ann, &org, "Docs").await;
    // Writing content needs `edit`.
    let message = app
        .post(
            reader,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Mine"}),
        )
        .await
        .expect_error(403);
    assert_role_refusal(&message, "read");
    assert!(message.contains("`edit`"), "{message}");
    // Changing a change request needs `edit`.
    let cr = &change_request(&app, &ann, &space).await;
    let message = app
        .patch(
            reader,
            &format!("/v1/spaces/{space}/change-requests/{cr}"),
            json!({"subject": "Renamed"}),
        )
        .await
        .expect_error(403);
    assert_role_refusal(&message, "read");
    assert!(message.contains("`edit`"), "{message}");
    // Settings need `admin`.
    let message = app
        .patch(editor, &format!("/v1/spaces/{space}"), json!({"title": "Mine"}))
        .await
        .expect_error(403);
    assert_role_refusal(&message, "edit");
    assert!(message.contains("`admin`"), "{message}");
    // And so does inviting someone to the space.
    let message = app
        .post(
            editor,
            &format!("/v1/spaces/{space}/permissions"),
            json!({"role": "read", "users": [reader.id]}),
        )
        .await
        .expect_error(403);
    assert_role_refusal(&message, "edit");
    assert!(message.contains("`admin`"), "{message}");
}

#[tokio::test]
async fn collection_and_comment_refusals_name_both_roles() {
    let app = TestApp::start().await;
    let (ann, org, members) = org_with(&app, &["edit", "comment"]).await;
    let (editor, commenter) = (&members[0], &members[1]);
    let collection = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": "Guides"}),
        )
        .await
        .expect(201);
    let collection = collection["id"].as_str().unwrap();
    let message = app
        .post(
            editor,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Inside", "parent": collection}),
        )
        .await
        .expect_error(403);
    assert_role_refusal(&message, "edit");
    assert!(message.contains("`create`"), "{message}");
    // Deleting someone else's comment needs `admin`.
    let space = new_space(&app, &ann, &org, "Docs").await;
    let comment = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments"),
            json!({"body": {"markdown": "Ann's note"}}),
        )
        .await
        .expect(200);
    let comment = comment["id"].as_str().unwrap();
    let message = app
        .delete(commenter, &format!("/v1/spaces/{space}/comments/{comment}"))
        .await
        .expect_error(403);
    assert_role_refusal(&message, "comment");
    assert!(message.contains("`admin`"), "{message}");
    app.get(&ann, &format!("/v1/spaces/{space}/comments/{comment}"))
        .await
        .expect(200);
}
