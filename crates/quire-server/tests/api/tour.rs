//! The operations no other test answers with success, each called once as a GitBook client
//! would, so that GitBook's schema judges every answer quire gives (`support/gitbook.rs`). Only
//! reusable contents are left out: nothing in the API creates one yet.

use serde_json::json;

use crate::search::{new_space, write_main};
use crate::support::TestApp;
use crate::support::site::page;

#[tokio::test]
async fn the_rest_of_the_operations_answer_in_gitbooks_shapes() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Guide").await;
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([
            {"operation": "insert_files", "files": [{"ref": "logo", "name": "logo.png",
              "contentType": "image/png", "base64": crate::content::PNG}]},
            page("Setup", "# Setup\n\nInstall it.\n")
        ])],
    )
    .await;
    let revision = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200)["revision"]
        .as_str()
        .unwrap()
        .to_string();
    let base = format!("/v1/spaces/{space}/revisions/{revision}");
    let pages = app.get(&ann, &format!("{base}/pages")).await.expect(200);
    let page_id = pages["pages"][0]["id"].as_str().unwrap().to_string();
    let path = pages["pages"][0]["path"].as_str().unwrap().to_string();
    app.get(&ann, &format!("{base}/path/{path}")).await.expect(200);
    app.get(&ann, &format!("{base}/page/{page_id}/document"))
        .await
        .expect(200);
    let files = app.get(&ann, &format!("{base}/files")).await.expect(200);
    let file = files["items"][0]["id"].as_str().unwrap().to_string();
    app.get(&ann, &format!("{base}/files/{file}")).await.expect(200);
    app.get(&ann, &format!("{base}/changes")).await.expect(200);

    // A change request's page by path.
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Edit"}),
        )
        .await
        .expect(201);
    let cr_base = format!(
        "/v1/spaces/{space}/change-requests/{}",
        cr["id"].as_str().unwrap()
    );
    app.get(&ann, &format!("{cr_base}/content/path/{path}"))
        .await
        .expect(200);

    // Replies edited, on the space and on the change request.
    for comments in [
        format!("/v1/spaces/{space}/comments"),
        format!("{cr_base}/comments"),
    ] {
        let comment = app
            .post(&ann, &comments, json!({"body": {"markdown": "A question."}}))
            .await
            .expect(200);
        let replies = format!("{comments}/{}/replies", comment["id"].as_str().unwrap());
        let reply = app
            .post(&ann, &replies, json!({"body": {"markdown": "An answer."}}))
            .await
            .expect(200);
        let edited = app
            .put(
                &ann,
                &format!("{replies}/{}", reply["id"].as_str().unwrap()),
                json!({"body": {"markdown": "A better answer."}}),
            )
            .await
            .expect(200);
        assert_eq!(edited["id"], reply["id"]);
    }
}
