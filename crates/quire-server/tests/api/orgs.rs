//! Organizations: create, read, update, join, agent instructions.

use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn create_get_and_list_organizations() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let resp = app
        .post(
            &ann,
            "/v1/orgs",
            json!({"title": "Acme Docs", "emailDomains": ["Acme.COM"]}),
        )
        .await;
    let location = resp.headers["location"].to_str().unwrap().to_string();
    let org = resp.expect(201);
    assert_eq!(org["object"], "organization");
    assert_eq!(org["title"], "Acme Docs");
    assert_eq!(org["emailDomains"], json!(["acme.com"]));
    assert_eq!(org["urls"]["location"], location.as_str());
    assert_eq!(org["permissions"]["admin"], true);
    assert_eq!(org["trial"]["status"], "notapplicable");
    assert_eq!(org["mergeRules"]["type"], "none");
    for field in [
        "id",
        "createdAt",
        "type",
        "plan",
        "inviteLinks",
        "urls",
        "permissions",
    ] {
        assert!(org.get(field).is_some(), "missing {field}");
    }
    let id = org["id"].as_str().unwrap();
    let got = app.get(&ann, &format!("/v1/orgs/{id}")).await.expect(200);
    assert_eq!(got["id"], id);
    // Invisible to a non-member, and absent ids look the same.
    let bob = app.user("Bob").await;
    app.get(&bob, &format!("/v1/orgs/{id}")).await.expect_error(404);
    app.get(&bob, "/v1/orgs/doesnotexist").await.expect_error(404);
    assert_eq!(app.get(&bob, "/v1/orgs").await.expect(200)["count"], 0);
    // Title validation.
    app.post(&ann, "/v1/orgs", json!({"title": "A"}))
        .await
        .expect_error(400);
    app.post(&ann, "/v1/orgs", json!({"title": " Acme"}))
        .await
        .expect_error(400);
    app.post(&ann, "/v1/orgs", json!({"title": "x".repeat(256)}))
        .await
        .expect_error(400);
    app.post(
        &ann,
        "/v1/orgs",
        json!({"title": "Acme", "emailDomains": ["not a domain"]}),
    )
    .await
    .expect_error(400);
}

#[tokio::test]
async fn patch_updates_every_field_and_validates() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let id = app.org(&ann, "Acme").await;
    let path = format!("/v1/orgs/{id}");
    let org = app
        .patch(
            &ann,
            &path,
            json!({
                "title": "Acme Inc",
                "emailDomains": ["acme.com", "acme.org"],
                "hostname": "acme",
                "defaultRole": "edit",
                "logo": "https://acme.com/logo.png",
                "ai": true,
                "inviteLinks": false,
                "mergeRules": {"type": "rules", "rules": [{"rule": "require_specific_reviewers", "users": [ann.id]}]}
            }),
        )
        .await
        .expect(200);
    assert_eq!(org["title"], "Acme Inc");
    assert_eq!(org["emailDomains"], json!(["acme.com", "acme.org"]));
    assert_eq!(org["hostname"], "acme");
    assert_eq!(org["defaultRole"], "edit");
    assert_eq!(org["urls"]["logo"], "https://acme.com/logo.png");
    // `sso` needs an administrator signed in with a SAML provider (saml_signin.rs).
    assert_eq!(org["sso"], false);
    assert_eq!(org["ai"], true);
    assert_eq!(org["inviteLinks"], false);
    assert_eq!(org["mergeRules"]["rules"][0]["users"][0], ann.id.as_str());
    // null clears nullable fields; defaultRole null means new members are guests.
    let org = app
        .patch(
            &ann,
            &path,
            json!({"defaultRole": null, "logo": null, "hostname": null}),
        )
        .await
        .expect(200);
    assert_eq!(org["defaultRole"], serde_json::Value::Null);
    assert!(org["urls"].get("logo").is_none());
    assert!(org.get("hostname").is_none());
    assert_eq!(org["title"], "Acme Inc", "absent fields are kept");
    // Validation errors change nothing.
    let message = app
        .patch(
            &ann,
            &path,
            json!({"title": "Changed", "defaultContent": {"type": "site", "site": "nosuchsite"}}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("defaultContent"), "{message}");
    for bad in [
        json!({"defaultRole": "owner"}),
        json!({"hostname": "A!"}),
        json!({"logo": "not a url"}),
        json!({"mergeRules": {"type": "inherit"}}),
        json!({"mergeRules": {"type": "rules", "rules": [{"rule": "require_specific_reviewers", "users": ["stranger"]}]}}),
        json!({"sso": "yes"}),
        json!({"unknownField": 1}),
    ] {
        app.patch(&ann, &path, bad).await.expect_error(400);
    }
    let org = app.get(&ann, &path).await.expect(200);
    assert_eq!(org["title"], "Acme Inc");
    // Hostnames are unique.
    let other = app.org(&ann, "Other").await;
    app.patch(&ann, &format!("/v1/orgs/{other}"), json!({"hostname": "taken"}))
        .await
        .expect(200);
    app.patch(&ann, &path, json!({"hostname": "taken"}))
        .await
        .expect_error(409);
    // Only admins may patch; outsiders see nothing.
    let bob = app.user("Bob").await;
    app.patch(&bob, &path, json!({"title": "Mine"}))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn joining_by_verified_email_domain() {
    let app = TestApp::start().await;
    let ann = app.user_with_email("Ann", "ann@acme.com").await;
    let id = app.org(&ann, "Acme").await;
    app.patch(
        &ann,
        &format!("/v1/orgs/{id}"),
        json!({"emailDomains": ["acme.com"], "defaultRole": "comment"}),
    )
    .await
    .expect(200);
    let bob = app.user_with_email("Bob", "bob@acme.com").await;
    let eve = app.user_with_email("Eve", "eve@evil.com").await;
    // Bob finds the organization by his domain; Eve cannot enumerate acme.com's organizations.
    let found = app.get(&bob, "/v1/email-domains/acme.com/orgs").await.expect(200);
    assert_eq!(found["organizations"][0]["id"], id.as_str());
    let hidden = app.get(&eve, "/v1/email-domains/acme.com/orgs").await.expect(200);
    assert_eq!(hidden["organizations"], json!([]));
    // To Eve, whose domain the organization does not list, it does not exist.
    let message = app
        .post(&eve, &format!("/v1/orgs/{id}/join"), json!({}))
        .await
        .expect_error(404);
    assert!(message.contains("not found"), "{message}");
    app.post(&bob, "/v1/orgs/nosuchorg/join", json!({}))
        .await
        .expect_error(404);
    app.post(&bob, &format!("/v1/orgs/{id}/join"), json!({}))
        .await
        .expect(204);
    app.post(&bob, &format!("/v1/orgs/{id}/join"), json!({}))
        .await
        .expect(204);
    let org = app.get(&bob, &format!("/v1/orgs/{id}")).await.expect(200);
    assert_eq!(org["permissions"]["admin"], false);
    assert_eq!(org["permissions"]["view"], true);
    // Now that they share an organization, Bob sees Ann's email.
    let user = app.get(&bob, &format!("/v1/users/{}", ann.id)).await.expect(200);
    assert_eq!(user["email"], "ann@acme.com");
}

#[tokio::test]
async fn agent_instructions_round_trip() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let id = app.org(&ann, "Acme").await;
    let path = format!("/v1/orgs/{id}/agent-instructions");
    let empty = app.get(&ann, &path).await.expect(200);
    assert_eq!(empty["object"], "agent-instructions");
    assert_eq!(empty["instructions"]["nodes"], json!([]));
    let doc = json!({"object": "document", "data": {}, "nodes": [
        {"object": "block", "type": "paragraph", "nodes": [
            {"object": "text", "leaves": [{"object": "leaf", "text": "Be concise.", "marks": []}]}]}]});
    let put = app
        .put(&ann, &path, json!({"instructions": doc}))
        .await
        .expect(200);
    assert_eq!(
        put["instructions"]["nodes"][0]["nodes"][0]["leaves"][0]["text"],
        "Be concise."
    );
    assert_eq!(put["updatedBy"], ann.id.as_str());
    assert!(put["urls"]["location"].as_str().unwrap().ends_with(&path));
    let got = app.get(&ann, &path).await.expect(200);
    assert_eq!(got["instructions"], put["instructions"]);
    app.put(&ann, &path, json!({"instructions": {"nodes": "x"}}))
        .await
        .expect_error(400);
    let bob = app.user("Bob").await;
    app.get(&bob, &path).await.expect_error(404);
}
