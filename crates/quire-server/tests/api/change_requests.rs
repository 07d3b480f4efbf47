//! Change requests: merge, update, conflicts, reviews, merge rules, counters, races.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A space whose main has one page with three paragraphs; returns (org, space, page id).
async fn space_with_page(app: &TestApp, user: &TestUser) -> (String, String, String) {
    let org = app.org(user, "Docs").await;
    let space = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook"}),
        )
        .await
        .expect(201);
    let space = space["id"].as_str().unwrap().to_string();
    let pages = app
        .get(user, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let page = pages["pages"][0]["id"].as_str().unwrap().to_string();
    let cr = new_cr(app, user, &space, "Seed").await;
    write(
        app,
        user,
        &space,
        &cr,
        json!([{"operation": "update_page", "page": page, "title": "Page",
        "document": {"markdown": "First paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n"}}]),
    )
    .await;
    merge(app, user, &space, &cr).await.expect(200);
    (org, space, page)
}

async fn new_cr(app: &TestApp, user: &TestUser, space: &str, subject: &str) -> String {
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": subject}),
        )
        .await
        .expect(201);
    cr["id"].as_str().unwrap().to_string()
}

async fn write(app: &TestApp, user: &TestUser, space: &str, cr: &str, changes: Value) -> Value {
    app.post(
        user,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": changes}),
    )
    .await
    .expect(200)
}

async fn merge(app: &TestApp, user: &TestUser, space: &str, cr: &str) -> crate::support::Resp {
    app.post(
        user,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
}

async fn main_markdown(app: &TestApp, user: &TestUser, space: &str, page: &str) -> String {
    let body = app
        .get(
            user,
            &format!("/v1/spaces/{space}/content/page/{page}?format=markdown"),
        )
        .await
        .expect(200);
    body["markdown"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn edits_to_different_paragraphs_both_merge() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, page) = space_with_page(&app, &ann).await;
    let a = new_cr(&app, &ann, &space, "Edit first").await;
    let b = new_cr(&app, &ann, &space, "Edit third").await;
    write(&app, &ann, &space, &a, json!([{"operation": "update_page", "page": page,
        "document": {"markdown": "First paragraph, edited by A.\n\nSecond paragraph.\n\nThird paragraph.\n"}}])).await;
    write(&app, &ann, &space, &b, json!([{"operation": "update_page", "page": page,
        "document": {"markdown": "First paragraph.\n\nSecond paragraph.\n\nThird paragraph, edited by B.\n"}}])).await;
    let merged = merge(&app, &ann, &space, &a).await.expect(200);
    assert_eq!(merged["result"], "merge");
    let b_json = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{b}"))
        .await
        .expect(200);
    assert_eq!(b_json["outdated"], true, "main moved past B's base");
    let merged = merge(&app, &ann, &space, &b).await.expect(200);
    assert_eq!(merged["result"], "merge");
    let text = main_markdown(&app, &ann, &space, &page).await;
    assert!(
        text.contains("edited by A") && text.contains("edited by B"),
        "{text}"
    );
    // The space's revision moved to the merge revision, whose parents are main and the change request.
    let space_json = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(space_json["revision"], merged["revision"]);
    let revision = app
        .get(
            &ann,
            &format!(
                "/v1/spaces/{space}/revisions/{}",
                merged["revision"].as_str().unwrap()
            ),
        )
        .await
        .expect(200);
    assert_eq!(revision["type"], "merge");
    assert_eq!(revision["mergedFrom"]["id"], b.as_str());
    assert_eq!(revision["parents"].as_array().unwrap().len(), 2);
    let b_json = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{b}"))
        .await
        .expect(200);
    assert_eq!(b_json["status"], "merged");
    assert_eq!(b_json["mergedBy"]["id"], ann.id.as_str());
    assert_eq!(b_json["revisionMerged"], merged["revision"]);
    assert_eq!(b_json["outdated"], false);
    // A merged change request refuses a second merge and content writes.
    merge(&app, &ann, &space, &b).await.expect_error(409);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{b}/content"),
        json!({"changes": [{"operation": "delete_page", "page": page}]}),
    )
    .await
    .expect_error(409);
}

#[tokio::test]
async fn overlapping_edits_conflict_then_update_and_resolve() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, page) = space_with_page(&app, &ann).await;
    let a = new_cr(&app, &ann, &space, "A").await;
    let b = new_cr(&app, &ann, &space, "B").await;
    write(&app, &ann, &space, &a, json!([{"operation": "update_page", "page": page,
        "document": {"markdown": "First paragraph.\n\nSecond paragraph, as A wants it.\n\nThird paragraph.\n"}}])).await;
    write(&app, &ann, &space, &b, json!([{"operation": "update_page", "page": page,
        "document": {"markdown": "First paragraph.\n\nSecond paragraph, as B wants it.\n\nThird paragraph.\n"}}])).await;
    merge(&app, &ann, &space, &a).await.expect(200);
    let before = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200)["revision"].clone();
    let attempt = merge(&app, &ann, &space, &b).await.expect(200);
    assert_eq!(attempt["result"], "conflicts");
    let conflicts = attempt["conflicts"].as_array().unwrap();
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0]["page"], page.as_str());
    assert_eq!(conflicts[0]["kind"], "content");
    assert_eq!(conflicts[0]["regions"][0]["base"], json!([1, 2]));
    // Main is untouched.
    assert_eq!(
        app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200)["revision"],
        before
    );
    assert!(
        main_markdown(&app, &ann, &space, &page)
            .await
            .contains("as A wants it")
    );
    // Update records the conflict; the three versions are readable.
    let updated = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{b}/update"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(updated["result"], "conflicts");
    let cr = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{b}"))
        .await
        .expect(200);
    assert_eq!(cr["outdated"], false);
    assert_eq!(cr["revisionMergedAncestor"], before);
    let conflict = &cr["conflicts"][0];
    for side in ["baseDocument", "mainDocument", "changeDocument"] {
        let id = conflict[side].as_str().unwrap();
        app.get(&ann, &format!("/v1/spaces/{space}/documents/{id}"))
            .await
            .expect(200);
    }
    let main_version = conflict["revisions"]["main"].as_str().unwrap();
    let main_page = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/revisions/{main_version}/page/{page}?format=markdown"),
        )
        .await
        .expect(200);
    assert!(main_page["markdown"].as_str().unwrap().contains("as A wants it"));
    // It cannot merge while conflicted.
    let message = merge(&app, &ann, &space, &b).await.expect_error(409);
    assert!(message.contains(&page), "{message}");
    // Writing the page resolves it; then it merges.
    write(&app, &ann, &space, &b, json!([{"operation": "update_page", "page": page,
        "document": {"markdown": "First paragraph.\n\nSecond paragraph, as A and B agreed.\n\nThird paragraph.\n"}}])).await;
    let cr = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{b}"))
        .await
        .expect(200);
    assert!(cr.get("conflicts").is_none(), "{cr}");
    let merged = merge(&app, &ann, &space, &b).await.expect(200);
    assert_eq!(merged["result"], "merge");
    assert!(
        main_markdown(&app, &ann, &space, &page)
            .await
            .contains("as A and B agreed")
    );
}

#[tokio::test]
async fn require_specific_reviewers_blocks_until_approval() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let rev = app.user("Reviewer").await;
    let (org, space, page) = space_with_page(&app, &ann).await;
    app.add_member(&ann, &org, &rev, Some("review")).await;
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}"),
        json!({"mergeRules": {"type": "rules", "rules": [
        {"rule": "require_specific_reviewers", "users": [rev.id]}]}}),
    )
    .await
    .expect(200);
    let cr = new_cr(&app, &ann, &space, "Needs review").await;
    write(
        &app,
        &ann,
        &space,
        &cr,
        json!([{"operation": "update_page", "page": page, "title": "Renamed"}]),
    )
    .await;
    let message = merge(&app, &ann, &space, &cr).await.expect_error(409);
    assert!(
        message.contains("Reviewer") && message.contains(&rev.id),
        "{message}"
    );
    // Request, review with changes requested, then approve.
    let requested = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/requested-reviewers"),
            json!({"users": [rev.id]}),
        )
        .await
        .expect(200);
    assert_eq!(requested["users"][0]["user"]["id"], rev.id.as_str());
    let listed = app
        .get(
            &ann,
            &format!(
                "/v1/spaces/{space}/change-requests?requestedReviewer={}&status=draft",
                rev.id
            ),
        )
        .await
        .expect(200);
    assert_eq!(listed["count"], 1);
    let review = app
        .post(
            &rev,
            &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
            json!({"status": "changes-requested", "comment": {"markdown": "Please fix the title."}}),
        )
        .await;
    assert!(review.headers.contains_key("location"));
    let review = review.expect(201);
    assert_eq!(review["object"], "change-request-review");
    assert_eq!(review["requestedBy"]["id"], ann.id.as_str());
    assert!(
        review["comment"]["body"]["markdown"]
            .as_str()
            .unwrap()
            .contains("Please fix")
    );
    merge(&app, &ann, &space, &cr).await.expect_error(409);
    let approval = app
        .post(
            &rev,
            &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
            json!({"status": "approved"}),
        )
        .await
        .expect(201);
    let reviews = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"))
        .await
        .expect(200);
    assert_eq!(reviews["count"], 2);
    let first = reviews["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["status"] == "changes-requested")
        .unwrap();
    assert_eq!(first["outdated"], true, "superseded by the approval");
    app.get(
        &ann,
        &format!(
            "/v1/spaces/{space}/change-requests/{cr}/reviews/{}",
            approval["id"].as_str().unwrap()
        ),
    )
    .await
    .expect(200);
    // A new revision makes the approval outdated again.
    write(
        &app,
        &ann,
        &space,
        &cr,
        json!([{"operation": "update_page", "page": page, "title": "Renamed again"}]),
    )
    .await;
    merge(&app, &ann, &space, &cr).await.expect_error(409);
    app.post(
        &rev,
        &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
        json!({"status": "approved"}),
    )
    .await
    .expect(201);
    assert_eq!(
        merge(&app, &ann, &space, &cr).await.expect(200)["result"],
        "merge"
    );
    // Only review role or stronger may review; contributors are listed.
    let editor = app.user("Editor").await;
    app.add_member(&ann, &org, &editor, Some("edit")).await;
    let other = new_cr(&app, &ann, &space, "Other").await;
    app.post(
        &editor,
        &format!("/v1/spaces/{space}/change-requests/{other}/reviews"),
        json!({"status": "approved"}),
    )
    .await
    .expect_error(403);
    let contributors = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/contributors"),
        )
        .await
        .expect(200);
    assert_eq!(contributors["items"][0]["user"]["id"], ann.id.as_str());
    assert_eq!(contributors["items"][0]["count"], 2);
}

#[tokio::test]
async fn counters_statuses_filters_and_locks() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let (org, space, page) = space_with_page(&app, &ann).await;
    app.add_member(&ann, &org, &bob, Some("edit")).await;
    let counters = |v: &Value| {
        (
            v["changeRequests"].clone(),
            v["changeRequestsOpen"].clone(),
            v["changeRequestsDraft"].clone(),
        )
    };
    let s = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(
        counters(&s),
        (json!(1), json!(0), json!(0)),
        "the seed change request is merged"
    );
    let a = new_cr(&app, &ann, &space, "A").await;
    let b = new_cr(&app, &bob, &space, "B").await;
    let s = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(counters(&s), (json!(3), json!(0), json!(2)));
    let patched = app.patch(&ann, &format!("/v1/spaces/{space}/change-requests/{a}"),
        json!({"status": "open", "subject": "A, opened", "description": {"object": "document", "data": {}, "nodes": []}})).await.expect(200);
    assert_eq!(patched["status"], "open");
    assert_eq!(patched["subject"], "A, opened");
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{b}"),
        json!({"status": "archived"}),
    )
    .await
    .expect(200);
    let s = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(counters(&s), (json!(3), json!(1), json!(0)));
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{a}"),
        json!({"status": "merged"}),
    )
    .await
    .expect_error(400);
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{a}"),
        json!({"subject": "x".repeat(101)}),
    )
    .await
    .expect_error(400);
    // An archived change request refuses content writes.
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{b}/content"),
        json!({"changes": [{"operation": "update_page", "page": page, "title": "No"}]}),
    )
    .await
    .expect_error(409);
    // Lists: default status open; filters; by number.
    let open = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests"))
        .await
        .expect(200);
    assert_eq!(open["count"], 1);
    assert_eq!(open["items"][0]["id"], a.as_str());
    let by_creator = app
        .get(
            &ann,
            &format!(
                "/v1/spaces/{space}/change-requests?status=archived&creator={}",
                bob.id
            ),
        )
        .await
        .expect(200);
    assert_eq!(by_creator["count"], 1);
    let all = app
        .walk(
            &ann,
            &format!("/v1/spaces/{space}/change-requests?status=open,archived,merged,draft"),
            1,
        )
        .await;
    assert_eq!(all.len(), 3);
    let org_list = app
        .get(&ann, &format!("/v1/orgs/{org}/change-requests?status=merged"))
        .await
        .expect(200);
    assert_eq!(org_list["count"], 1);
    let number = open["items"][0]["number"].as_i64().unwrap();
    let by_number = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{number}"))
        .await
        .expect(200);
    assert_eq!(by_number["id"], a.as_str());
    app.get(&ann, &format!("/v1/spaces/{space}/change-requests?status=closed"))
        .await
        .expect_error(400);
    // A locked space refuses content writes and merges, with a clear message.
    write(
        &app,
        &ann,
        &space,
        &a,
        json!([{"operation": "update_page", "page": page, "title": "Locked soon"}]),
    )
    .await;
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}"),
        json!({"editMode": "locked"}),
    )
    .await
    .expect(200);
    let message = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{a}/content"),
            json!({"changes": [{"operation": "update_page", "page": page, "title": "No"}]}),
        )
        .await
        .expect_error(403);
    assert!(message.contains("locked"), "{message}");
    let message = merge(&app, &ann, &space, &a).await.expect_error(403);
    assert!(message.contains("locked"), "{message}");
    app.patch(&ann, &format!("/v1/spaces/{space}"), json!({"editMode": "live"}))
        .await
        .expect(200);
    assert_eq!(merge(&app, &ann, &space, &a).await.expect(200)["result"], "merge");
    let s = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(counters(&s), (json!(3), json!(0), json!(0)));
    // Semantic changes of a change request.
    let c = new_cr(&app, &ann, &space, "C").await;
    write(
        &app,
        &ann,
        &space,
        &c,
        json!([{"operation": "insert_page", "title": "New", "document": {}}]),
    )
    .await;
    let changes = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{c}/changes"))
        .await
        .expect(200);
    assert_eq!(changes["changes"][0]["type"], "page_created");
}

#[tokio::test]
async fn concurrent_merges_of_disjoint_change_requests_all_succeed_linearly() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "S", "empty": true}),
        )
        .await
        .expect(201);
    let space = space["id"].as_str().unwrap().to_string();
    // Twenty pages on main, then twenty change requests each editing its own page.
    let seed = new_cr(&app, &ann, &space, "Seed").await;
    let changes: Vec<Value> = (0..20).map(|i| json!({"operation": "insert_page", "title": format!("P{i}"), "document": {"markdown": "Original."}})).collect();
    write(&app, &ann, &space, &seed, json!(changes)).await;
    merge(&app, &ann, &space, &seed).await.expect(200);
    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let ids: Vec<String> = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    let mut crs = Vec::new();
    for (i, page) in ids.iter().enumerate() {
        let cr = new_cr(&app, &ann, &space, &format!("Edit {i}")).await;
        write(&app, &ann, &space, &cr, json!([{"operation": "update_page", "page": page, "document": {"markdown": format!("Edited by change request {i}.")}}])).await;
        crs.push(cr);
    }
    let start = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200)["revision"]
        .as_str()
        .unwrap()
        .to_string();
    let calls = crs.iter().map(|cr| {
        let (app, ann, space) = (&app, &ann, &space);
        async move { merge(app, ann, space, cr).await }
    });
    let results = futures_util::future::join_all(calls).await;
    for r in results {
        assert_eq!(r.expect(200)["result"], "merge");
    }
    // Twenty merge revisions in a linear history (each one's first parent is the previous main).
    let mut rev = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200)["revision"]
        .as_str()
        .unwrap()
        .to_string();
    let mut merges = 0;
    while rev != start {
        let r = app
            .get(&ann, &format!("/v1/spaces/{space}/revisions/{rev}"))
            .await
            .expect(200);
        assert_eq!(r["type"], "merge");
        merges += 1;
        rev = r["parents"][0].as_str().unwrap().to_string();
        assert!(merges <= 20, "history is not linear");
    }
    assert_eq!(merges, 20);
    for (i, page) in ids.iter().enumerate() {
        let text = main_markdown(&app, &ann, &space, page).await;
        assert!(text.contains(&format!("Edited by change request {i}.")), "{text}");
    }
    // Two merges of one change request at once: one merges, the other learns it is merged.
    let last = new_cr(&app, &ann, &space, "Twice").await;
    write(
        &app,
        &ann,
        &space,
        &last,
        json!([{"operation": "update_page", "page": ids[0], "title": "Twice"}]),
    )
    .await;
    let (x, y) = tokio::join!(merge(&app, &ann, &space, &last), merge(&app, &ann, &space, &last));
    let mut statuses = [x.status, y.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409]);
}
