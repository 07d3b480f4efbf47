//! Collections and spaces: nesting, ordering, lifecycle, transfer and access.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

async fn collection(app: &TestApp, user: &TestUser, org: &str, title: &str, parent: Option<&str>) -> String {
    let body = app
        .post(
            user,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": title, "parent": parent}),
        )
        .await
        .expect(201);
    body["id"].as_str().unwrap().to_string()
}

async fn space(app: &TestApp, user: &TestUser, org: &str, title: &str, parent: Option<&str>) -> String {
    let body = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": title, "parent": parent}),
        )
        .await
        .expect(201);
    body["id"].as_str().unwrap().to_string()
}

/// The ids of the spaces and collections directly under `parent`, in sibling order.
async fn children(app: &TestApp, org: &str, parent: Option<&str>) -> Vec<String> {
    let db = app.db.clone();
    let (org, parent) = (org.to_string(), parent.map(str::to_string));
    tokio::task::spawn_blocking(move || {
        db.read_sync(|c| quire_store::siblings::ordered_ids(c, &org, parent.as_deref()))
            .unwrap()
            .into_iter()
            .map(|(_, id)| id)
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn create_read_update_spaces_and_collections() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let resp = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": "Guides"}),
        )
        .await;
    assert!(resp.headers.contains_key("location"));
    let col = resp.expect(201);
    assert_eq!(col["object"], "collection");
    assert_eq!(col["organization"], org.as_str());
    assert_eq!(col["defaultLevel"], "inherit");
    assert_eq!(
        col["permissions"],
        json!({"view": true, "admin": true, "viewInviteLinks": true, "create": true})
    );
    let cid = col["id"].as_str().unwrap();
    let resp = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook", "emoji": "📘", "parent": cid, "language": "fr"}),
        )
        .await;
    assert!(resp.headers["location"].to_str().unwrap().contains("/v1/spaces/"));
    let sp = resp.expect(201);
    assert_eq!(sp["object"], "space");
    assert_eq!(sp["title"], "Handbook");
    assert_eq!(sp["emoji"], "📘");
    assert_eq!(sp["parent"], cid);
    assert_eq!(sp["language"], "fr");
    assert_eq!(sp["visibility"], "private");
    assert_eq!(sp["editMode"], "live");
    assert_eq!(sp["mergeRules"], json!({"type": "inherit"}));
    for key in [
        "comments",
        "changeRequests",
        "changeRequestsOpen",
        "changeRequestsDraft",
    ] {
        assert_eq!(sp[key], 0, "{key}");
    }
    for key in [
        "view",
        "access",
        "admin",
        "viewInviteLinks",
        "edit",
        "triggerGitSync",
        "comment",
        "merge",
        "review",
        "installIntegration",
    ] {
        assert_eq!(sp["permissions"][key], true, "{key}");
    }
    let sid = sp["id"].as_str().unwrap();
    // Patch every field; validation errors change nothing.
    let patched = app
        .patch(
            &ann,
            &format!("/v1/spaces/{sid}"),
            json!({"title": "Handbook 2", "editMode": "locked", "defaultLevel": "comment", "language": "de",
                   "mergeRules": {"type": "rules", "rules": [{"rule": "require_specific_reviewers", "users": [ann.id]}]},
                   "emoji": null, "visibility": "in-collection"}),
        )
        .await
        .expect(200);
    assert_eq!(patched["title"], "Handbook 2");
    assert_eq!(patched["editMode"], "locked");
    assert_eq!(patched["defaultLevel"], "comment");
    assert_eq!(patched["language"], "de");
    assert_eq!(patched["emoji"], "");
    assert_eq!(patched["visibility"], "in-collection");
    assert_eq!(
        patched["permissions"]["edit"], false,
        "a locked space refuses edits"
    );
    assert_eq!(patched["permissions"]["merge"], false);
    for bad in [
        json!({"title": "x".repeat(51)}),
        json!({"emoji": "x".repeat(51)}),
        json!({"editMode": "frozen"}),
        json!({"language": "klingon"}),
        json!({"defaultLevel": "owner"}),
        json!({"visibility": "everyone"}),
        json!({"mergeRules": {"type": "rules", "rules": [{"rule": "require_specific_reviewers", "users": ["ghost"]}]}}),
    ] {
        app.patch(&ann, &format!("/v1/spaces/{sid}"), bad)
            .await
            .expect_error(400);
    }
    assert_eq!(
        app.get(&ann, &format!("/v1/spaces/{sid}")).await.expect(200)["title"],
        "Handbook 2"
    );
    // Collections: patch with limits, null defaultLevel.
    let patched = app
        .patch(
            &ann,
            &format!("/v1/collections/{cid}"),
            json!({"title": "Docs", "description": "All docs", "defaultLevel": null}),
        )
        .await
        .expect(200);
    assert_eq!(patched["description"], "All docs");
    assert_eq!(patched["defaultLevel"], Value::Null);
    app.patch(
        &ann,
        &format!("/v1/collections/{cid}"),
        json!({"title": "x".repeat(51)}),
    )
    .await
    .expect_error(400);
    app.patch(
        &ann,
        &format!("/v1/collections/{cid}"),
        json!({"description": "x".repeat(101)}),
    )
    .await
    .expect_error(400);
    app.post(
        &ann,
        &format!("/v1/orgs/{org}/collections"),
        json!({"title": "x".repeat(51)}),
    )
    .await
    .expect_error(400);
    app.post(
        &ann,
        &format!("/v1/orgs/{org}/spaces"),
        json!({"parent": "nosuch"}),
    )
    .await
    .expect_error(400);
    // Listings.
    let spaces = app
        .get(&ann, &format!("/v1/collections/{cid}/spaces"))
        .await
        .expect(200);
    assert_eq!(spaces["count"], 1);
    let spaces = app.get(&ann, &format!("/v1/orgs/{org}/spaces")).await.expect(200);
    assert_eq!(spaces["count"], 1);
}

#[tokio::test]
async fn moves_keep_sibling_order_exact_in_a_three_level_tree() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let top = collection(&app, &ann, &org, "Top", None).await;
    let mid = collection(&app, &ann, &org, "Mid", Some(&top)).await;
    let low = collection(&app, &ann, &org, "Low", Some(&mid)).await;
    let mut in_low = Vec::new();
    for i in 0..5 {
        in_low.push(space(&app, &ann, &org, &format!("S{i}"), Some(&low)).await);
    }
    assert_eq!(children(&app, &org, Some(&low)).await, in_low);
    // Move S4 before S1, S0 after S4, S2 to the end (no position).
    app.post(
        &ann,
        &format!("/v1/spaces/{}/move", in_low[4]),
        json!({"position": {"before": {"type": "space", "space": in_low[1]}}}),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{}/move", in_low[0]),
        json!({"position": {"after": {"type": "space", "space": in_low[4]}}}),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{}/move", in_low[2]),
        json!({"parent": low}),
    )
    .await
    .expect(200);
    let expected = vec![
        in_low[4].clone(),
        in_low[0].clone(),
        in_low[1].clone(),
        in_low[3].clone(),
        in_low[2].clone(),
    ];
    assert_eq!(children(&app, &org, Some(&low)).await, expected);
    // Move a space up to Mid, before the Low collection: spaces and collections share one order.
    app.post(
        &ann,
        &format!("/v1/spaces/{}/move", in_low[3]),
        json!({"parent": mid, "position": {"before": {"type": "collection", "collection": low}}}),
    )
    .await
    .expect(200);
    assert_eq!(
        children(&app, &org, Some(&mid)).await,
        vec![in_low[3].clone(), low.clone()]
    );
    assert_eq!(children(&app, &org, Some(&low)).await.len(), 4);
    // Many moves between the same two neighbours keep the order exact.
    let (a, b) = (in_low[4].clone(), in_low[0].clone());
    for i in 0..30 {
        let mover = &in_low[if i % 2 == 0 { 1 } else { 2 }];
        app.post(
            &ann,
            &format!("/v1/spaces/{mover}/move"),
            json!({"position": {"after": {"type": "space", "space": a}}}),
        )
        .await
        .expect(200);
        let order = children(&app, &org, Some(&low)).await;
        assert_eq!(order[0], a);
        assert_eq!(&order[1], mover);
        assert!(order.contains(&b));
    }
    // Invalid positions: a non-sibling, the item itself, both before and after, nothing at all.
    let s1 = &in_low[1];
    let message = app
        .post(
            &ann,
            &format!("/v1/spaces/{s1}/move"),
            json!({"position": {"before": {"type": "space", "space": in_low[3]}}}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("sibling"), "{message}");
    app.post(
        &ann,
        &format!("/v1/spaces/{s1}/move"),
        json!({"position": {"before": {"type": "space", "space": s1}}}),
    )
    .await
    .expect_error(400);
    app.post(
        &ann,
        &format!("/v1/spaces/{s1}/move"),
        json!({"position": {"before": {"type": "space", "space": a}, "after": {"type": "space", "space": b}}}),
    )
    .await
    .expect_error(400);
    app.post(&ann, &format!("/v1/spaces/{s1}/move"), json!({}))
        .await
        .expect_error(400);
    // A collection cannot move under itself or its descendants.
    app.post(
        &ann,
        &format!("/v1/collections/{top}/move"),
        json!({"parent": top}),
    )
    .await
    .expect_error(400);
    app.post(
        &ann,
        &format!("/v1/collections/{top}/move"),
        json!({"parent": low}),
    )
    .await
    .expect_error(400);
    // Collections move with positions too.
    let other = collection(&app, &ann, &org, "Other", None).await;
    app.post(
        &ann,
        &format!("/v1/collections/{other}/move"),
        json!({"position": {"before": {"type": "collection", "collection": top}}}),
    )
    .await
    .expect(200);
    assert_eq!(children(&app, &org, None).await, vec![other.clone(), top.clone()]);
    app.post(
        &ann,
        &format!("/v1/collections/{low}/move"),
        json!({"parent": null}),
    )
    .await
    .expect(200);
    assert_eq!(children(&app, &org, None).await, vec![other, top, low.clone()]);
    // nested=false lists top-level collections only.
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/collections"))
            .await
            .expect(200)["count"],
        4
    );
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/collections?nested=false"))
            .await
            .expect(200)["count"],
        3
    );
    // Spaces of a collection are listed in sibling order, walked page by page.
    let listed: Vec<String> = app
        .walk(&ann, &format!("/v1/collections/{low}/spaces"), 1)
        .await
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(listed, children(&app, &org, Some(&low)).await);
}

#[tokio::test]
async fn deleted_spaces_restore_within_retention_and_are_purged_after() {
    let app = TestApp::start_with(&["--space-retention", "2s"]).await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let kept = space(&app, &ann, &org, "Kept", None).await;
    let gone = space(&app, &ann, &org, "Gone", None).await;
    app.delete(&ann, &format!("/v1/spaces/{kept}")).await.expect(204);
    app.delete(&ann, &format!("/v1/spaces/{kept}")).await.expect(204);
    // A space that never existed: a DELETE of it is done already (204), as the spec says.
    app.delete(&ann, "/v1/spaces/neverexisted").await.expect(204);
    let deleted = app.get(&ann, &format!("/v1/spaces/{kept}")).await.expect(200);
    assert!(deleted["deletedAt"].is_string());
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        1,
        "left the listing"
    );
    let restored = app
        .post(&ann, &format!("/v1/spaces/{kept}/restore"), json!({}))
        .await
        .expect(200);
    assert_eq!(restored["id"], kept.as_str());
    assert!(restored.get("deletedAt").is_none());
    assert_eq!(restored["title"], "Kept");
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        2
    );
    // Past the retention the purge job removes the space for good.
    app.delete(&ann, &format!("/v1/spaces/{gone}")).await.expect(204);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let db = app.db.clone();
        let id = gone.clone();
        let rows: i64 = tokio::task::spawn_blocking(move || {
            db.read_sync(|c| {
                c.query_scalar::<i64>("SELECT count(*) FROM spaces WHERE id = ?1", &[id.as_str().into()])
                    .map(|n| n.unwrap_or(0))
            })
            .unwrap()
        })
        .await
        .unwrap();
        if rows == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the purge job did not remove the space"
        );
        tokio::task::yield_now().await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    app.post(&ann, &format!("/v1/spaces/{gone}/restore"), json!({}))
        .await
        .expect_error(404);
    app.get(&ann, &format!("/v1/spaces/{gone}"))
        .await
        .expect_error(404);
    // A repeated DELETE of a purged space is done already.
    app.delete(&ann, &format!("/v1/spaces/{gone}")).await.expect(204);
}

#[tokio::test]
async fn transfer_moves_a_collection_with_its_whole_subtree() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let source = app.org(&ann, "Source").await;
    let target = app.org(&ann, "Target").await;
    app.add_member(&ann, &source, &bob, Some("read")).await;
    let top = collection(&app, &ann, &source, "Top", None).await;
    let child = collection(&app, &ann, &source, "Child", Some(&top)).await;
    let s1 = space(&app, &ann, &source, "S1", Some(&top)).await;
    let s2 = space(&app, &ann, &source, "S2", Some(&child)).await;
    app.post(
        &ann,
        &format!("/v1/spaces/{s2}/permissions"),
        json!({"role": "edit", "users": [bob.id]}),
    )
    .await
    .expect(204);
    // Bob, not an admin of the target, cannot transfer.
    app.post(
        &bob,
        &format!("/v1/collections/{top}/transfer"),
        json!({"organization": target}),
    )
    .await
    .expect_error(403);
    let moved = app
        .post(
            &ann,
            &format!("/v1/collections/{top}/transfer"),
            json!({"organization": target}),
        )
        .await
        .expect(200);
    assert_eq!(moved["organization"], target.as_str());
    assert!(moved.get("parent").is_none());
    let child_json = app
        .get(&ann, &format!("/v1/collections/{child}"))
        .await
        .expect(200);
    assert_eq!(child_json["organization"], target.as_str());
    assert_eq!(child_json["parent"], top.as_str());
    for s in [&s1, &s2] {
        assert_eq!(
            app.get(&ann, &format!("/v1/spaces/{s}")).await.expect(200)["organization"],
            target.as_str()
        );
    }
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{source}/spaces"))
            .await
            .expect(200)["count"],
        0
    );
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{target}/spaces"))
            .await
            .expect(200)["count"],
        2
    );
    // Bob is not in the target organization: his grant did not follow.
    app.get(&bob, &format!("/v1/spaces/{s2}")).await.expect_error(404);
    // A single space transfers into a collection of the other organization.
    let lone = space(&app, &ann, &source, "Lone", None).await;
    let moved = app
        .post(
            &ann,
            &format!("/v1/spaces/{lone}/transfer"),
            json!({"organization": target, "collection": child}),
        )
        .await
        .expect(200);
    assert_eq!(moved["organization"], target.as_str());
    assert_eq!(moved["parent"], child.as_str());
    app.post(
        &ann,
        &format!("/v1/spaces/{lone}/transfer"),
        json!({"organization": target}),
    )
    .await
    .expect_error(400);
}

#[tokio::test]
async fn a_guest_granted_one_space_sees_that_space_and_nothing_else() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let guest = app.user("Guest").await;
    let org = app.org(&ann, "Acme").await;
    let col = collection(&app, &ann, &org, "Private", None).await;
    let shared = space(&app, &ann, &org, "Shared", None).await;
    let other = space(&app, &ann, &org, "Other", None).await;
    let inner = space(&app, &ann, &org, "Inner", Some(&col)).await;
    app.post(
        &ann,
        &format!("/v1/spaces/{shared}/permissions"),
        json!({"role": "read", "users": [guest.id]}),
    )
    .await
    .expect(204);
    let seen = app.get(&guest, &format!("/v1/spaces/{shared}")).await.expect(200);
    assert_eq!(seen["permissions"]["view"], true);
    assert_eq!(seen["permissions"]["comment"], false);
    assert_eq!(seen["permissions"]["edit"], false);
    assert_eq!(seen["permissions"]["admin"], false);
    app.get(&guest, &format!("/v1/spaces/{other}"))
        .await
        .expect_error(404);
    app.get(&guest, &format!("/v1/spaces/{inner}"))
        .await
        .expect_error(404);
    app.get(&guest, &format!("/v1/collections/{col}"))
        .await
        .expect_error(404);
    let listed = app
        .get(&guest, &format!("/v1/orgs/{org}/spaces"))
        .await
        .expect(200);
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["items"][0]["id"], shared.as_str());
    assert_eq!(
        app.get(&guest, &format!("/v1/orgs/{org}/collections"))
            .await
            .expect(200)["count"],
        0
    );
    // The guest is a member with a null role, and cannot do what read does not allow.
    let member = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}", guest.id))
        .await
        .expect(200);
    assert_eq!(member["role"], Value::Null);
    assert_eq!(member["spaces"], 1);
    app.patch(&guest, &format!("/v1/spaces/{shared}"), json!({"title": "Mine"}))
        .await
        .expect_error(403);
    app.delete(&guest, &format!("/v1/spaces/{shared}"))
        .await
        .expect_error(403);
    // A grant on the collection opens what is inside it.
    app.post(
        &ann,
        &format!("/v1/collections/{col}/permissions"),
        json!({"role": "comment", "users": [guest.id]}),
    )
    .await
    .expect(204);
    let inside = app.get(&guest, &format!("/v1/spaces/{inner}")).await.expect(200);
    assert_eq!(inside["permissions"]["comment"], true);
    assert_eq!(
        app.get(&guest, &format!("/v1/orgs/{org}/spaces"))
            .await
            .expect(200)["count"],
        2
    );
    // The member's spaces, with the effective permission.
    let spaces = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}/spaces", guest.id))
        .await
        .expect(200);
    assert_eq!(spaces["count"], 2);
    let perms: Vec<&str> = spaces["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["permission"].as_str().unwrap())
        .collect();
    assert!(perms.contains(&"read") && perms.contains(&"comment"), "{perms:?}");
    assert_eq!(
        spaces["items"][0]["space"]["permissions"]["admin"], true,
        "space permissions are the caller's"
    );
    // Grants are listed, changed and removed.
    let users = app
        .get(&ann, &format!("/v1/spaces/{shared}/permissions/users"))
        .await
        .expect(200);
    assert_eq!(users["items"][0]["permission"], "read");
    assert_eq!(users["items"][0]["user"]["id"], guest.id.as_str());
    app.patch(
        &ann,
        &format!("/v1/spaces/{shared}/permissions/users/{}", guest.id),
        json!({"role": "edit"}),
    )
    .await
    .expect(204);
    assert_eq!(
        app.get(&guest, &format!("/v1/spaces/{shared}")).await.expect(200)["permissions"]["edit"],
        true
    );
    app.delete(
        &ann,
        &format!("/v1/spaces/{shared}/permissions/users/{}", guest.id),
    )
    .await
    .expect(204);
    app.get(&guest, &format!("/v1/spaces/{shared}"))
        .await
        .expect_error(404);
    app.patch(
        &ann,
        &format!("/v1/spaces/{shared}/permissions/users/{}", guest.id),
        json!({"role": "edit"}),
    )
    .await
    .expect_error(404);
}

#[tokio::test]
async fn default_levels_and_team_grants_decide_member_access() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let ed = app.user("Ed").await;
    let org = app.org(&ann, "Acme").await;
    app.add_member(&ann, &org, &ed, Some("edit")).await;
    let col = collection(&app, &ann, &org, "Docs", None).await;
    let open = space(&app, &ann, &org, "Open", Some(&col)).await;
    // Members inherit their organization role.
    let seen = app.get(&ed, &format!("/v1/spaces/{open}")).await.expect(200);
    assert_eq!(seen["permissions"]["edit"], true);
    assert_eq!(seen["permissions"]["review"], false);
    // The collection limits members to read; its spaces inherit the limit.
    app.patch(
        &ann,
        &format!("/v1/collections/{col}"),
        json!({"defaultLevel": "read"}),
    )
    .await
    .expect(200);
    let seen = app.get(&ed, &format!("/v1/spaces/{open}")).await.expect(200);
    assert_eq!(seen["permissions"]["edit"], false);
    assert_eq!(seen["permissions"]["view"], true);
    // null: members get nothing by default, so the space disappears for Ed.
    app.patch(
        &ann,
        &format!("/v1/collections/{col}"),
        json!({"defaultLevel": null}),
    )
    .await
    .expect(200);
    app.get(&ed, &format!("/v1/spaces/{open}"))
        .await
        .expect_error(404);
    assert_eq!(
        app.get(&ed, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        0
    );
    // A space's own level wins over the collection's.
    app.patch(
        &ann,
        &format!("/v1/spaces/{open}"),
        json!({"defaultLevel": "comment"}),
    )
    .await
    .expect(200);
    let seen = app.get(&ed, &format!("/v1/spaces/{open}")).await.expect(200);
    assert_eq!(seen["permissions"]["comment"], true);
    assert_eq!(seen["permissions"]["edit"], false);
    assert_eq!(
        app.get(&ed, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        1
    );
    // A team grant gives more than the default.
    app.patch(
        &ann,
        &format!("/v1/spaces/{open}"),
        json!({"defaultLevel": "inherit"}),
    )
    .await
    .expect(200);
    let team = app
        .put(
            &ann,
            &format!("/v1/orgs/{org}/teams"),
            json!({"title": "Reviewers", "members": [ed.id]}),
        )
        .await
        .expect(201);
    let tid = team["id"].as_str().unwrap();
    app.post(
        &ann,
        &format!("/v1/collections/{col}/permissions"),
        json!({"role": "review", "teams": [tid]}),
    )
    .await
    .expect(204);
    let seen = app.get(&ed, &format!("/v1/spaces/{open}")).await.expect(200);
    assert_eq!(seen["permissions"]["review"], true);
    let teams = app
        .get(&ann, &format!("/v1/collections/{col}/permissions/teams"))
        .await
        .expect(200);
    assert_eq!(teams["items"][0]["permission"], "review");
    assert_eq!(teams["items"][0]["team"]["id"], tid);
    app.delete(&ann, &format!("/v1/collections/{col}/permissions/teams/{tid}"))
        .await
        .expect(204);
    app.get(&ed, &format!("/v1/spaces/{open}"))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn duplicate_and_collection_delete() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let col = collection(&app, &ann, &org, "Docs", None).await;
    let a = space(&app, &ann, &org, "A", Some(&col)).await;
    let b = space(&app, &ann, &org, "B", Some(&col)).await;
    let resp = app
        .post(&ann, &format!("/v1/spaces/{a}/duplicate"), json!({}))
        .await;
    assert!(resp.headers.contains_key("location"));
    let copy = resp.expect(201);
    assert_eq!(copy["title"], "A (copy)");
    assert_ne!(copy["id"], a.as_str());
    let copy_id = copy["id"].as_str().unwrap().to_string();
    assert_eq!(
        children(&app, &org, Some(&col)).await,
        vec![a.clone(), copy_id.clone(), b.clone()]
    );
    // Deleting a collection soft-deletes its spaces; they restore at the top level.
    app.delete(&ann, &format!("/v1/collections/{col}"))
        .await
        .expect(204);
    // Deleted for good: it answers like a collection that never existed (a DELETE: 204).
    app.delete(&ann, &format!("/v1/collections/{col}"))
        .await
        .expect(204);
    app.get(&ann, &format!("/v1/collections/{col}"))
        .await
        .expect_error(404);
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        0
    );
    let restored = app
        .post(&ann, &format!("/v1/spaces/{b}/restore"), json!({}))
        .await
        .expect(200);
    assert!(restored.get("parent").is_none());
}

/// Waits for the event (PostgreSQL's listening connection, or a notification), not for a
/// time: the deadline only turns a lost event into a failure instead of a hang.
async fn wait_for_stamp(app: &TestApp, done: impl Fn(Option<quire_server::db::Stamp>) -> bool, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done(app.db.stamp()) {
        assert!(Instant::now() < deadline, "{what}");
        tokio::task::yield_now().await;
    }
}

/// Runs `sql` in a write transaction of another process on the server's database (a second
/// server, `quire admin`), then waits until the server has heard of it: within a millisecond on SQLite,
/// by PostgreSQL's notification otherwise.
async fn write_from_another_process(app: &TestApp, sql: &'static str, params: Vec<String>) {
    wait_for_stamp(app, |s| s.is_some(), "this process never started listening").await;
    let before = app.db.stamp();
    let other = app.another_process().await;
    tokio::task::spawn_blocking(move || {
        let values: Vec<quire_server::db::Value> = params.into_iter().map(Into::into).collect();
        other.write_sync(|c| c.execute(sql, &values))
    })
    .await
    .expect("writer thread")
    .expect("the other process's write");
    wait_for_stamp(app, |s| s != before, "the other process's write was never heard").await;
}

/// Reads of a space and of an organization's access are answered from memory while the
/// database has not changed (spaces/cache.rs, orgs/cache.rs); a write by another process must
/// show in the next read once this process has heard of it.
#[tokio::test]
async fn reads_follow_writes_of_another_process() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Acme").await;
    app.add_member(&ann, &org, &bob, Some("read")).await;
    let id = space(&app, &ann, &org, "Before", None).await;
    // Read twice: the second answer comes from memory.
    for _ in 0..2 {
        let body = app.get(&ann, &format!("/v1/spaces/{id}")).await.expect(200);
        assert_eq!(body["title"], "Before");
        let list = app.get(&bob, &format!("/v1/orgs/{org}/spaces")).await.expect(200);
        assert_eq!(list["items"][0]["id"], id.as_str());
        app.get(&bob, &format!("/v1/spaces/{id}")).await.expect(200);
    }

    write_from_another_process(
        &app,
        "UPDATE spaces SET title = 'After' WHERE id = ?1",
        vec![id.clone()],
    )
    .await;
    let body = app.get(&ann, &format!("/v1/spaces/{id}")).await.expect(200);
    assert_eq!(body["title"], "After");

    write_from_another_process(
        &app,
        "DELETE FROM members WHERE organization_id = ?1 AND user_id = ?2",
        vec![org.clone(), bob.id.clone()],
    )
    .await;
    app.get(&bob, &format!("/v1/orgs/{org}/spaces"))
        .await
        .expect_error(404);
    app.get(&bob, &format!("/v1/spaces/{id}")).await.expect_error(404);
}
