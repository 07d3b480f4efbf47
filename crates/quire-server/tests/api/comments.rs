//! Comments and replies on spaces and change requests.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

struct Setup {
    app: TestApp,
    users: Vec<TestUser>,
    reader: TestUser,
    space: String,
    pages: Vec<String>,
}

/// A space with two pages, three commenters (an admin and two editors) and a read member.
async fn setup() -> Setup {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let cid = app.user("Cid").await;
    let reader = app.user("Reader").await;
    let org = app.org(&ann, "Docs").await;
    app.add_member(&ann, &org, &bob, Some("edit")).await;
    app.add_member(&ann, &org, &cid, Some("comment")).await;
    app.add_member(&ann, &org, &reader, Some("read")).await;
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "S", "empty": true}),
        )
        .await
        .expect(201);
    let space = space["id"].as_str().unwrap().to_string();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/content/template"),
        json!({"id": "getting-started"}),
    )
    .await
    .expect(201);
    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let pages = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    Setup {
        app,
        users: vec![ann, bob, cid],
        reader,
        space,
        pages,
    }
}

fn ids(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn forty_comments_filtered_ordered_walked_with_exact_counters() {
    let s = setup().await;
    let app = &s.app;
    let base = format!("/v1/spaces/{}/comments", s.space);
    let mut posted = Vec::new();
    for i in 0..40 {
        let author = &s.users[i % 3];
        let page = &s.pages[i % 2];
        let comment = app
            .post(
                author,
                &base,
                json!({"body": {"markdown": format!("Comment number {i}.")}, "page": page}),
            )
            .await
            .expect(200);
        assert_eq!(comment["object"], "comment");
        assert_eq!(comment["status"], "open");
        assert_eq!(comment["target"]["page"]["id"], page.as_str());
        posted.push(comment["id"].as_str().unwrap().to_string());
    }
    // Replies and reactions on the first ten.
    for (i, id) in posted.iter().take(10).enumerate() {
        for r in 0..(i % 3) + 1 {
            let replier = &s.users[(i + r + 1) % 3];
            app.post(
                replier,
                &format!("{base}/{id}/replies"),
                json!({"body": {"markdown": format!("Reply {r}")}}),
            )
            .await
            .expect(200);
        }
        for u in &s.users {
            app.put(u, &format!("{base}/{id}"), json!({"addedReactions": ["👍"]}))
                .await
                .expect(200);
        }
        // Reacting twice with one emoji counts once.
        app.put(
            &s.users[0],
            &format!("{base}/{id}"),
            json!({"addedReactions": ["👍", "🎉"]}),
        )
        .await
        .expect(200);
    }
    let first = app
        .get(&s.users[0], &format!("{base}/{}", posted[2]))
        .await
        .expect(200);
    assert_eq!(first["replies"], 3);
    let repliers: i64 = first["repliers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["count"].as_i64().unwrap())
        .sum();
    assert_eq!(repliers, 3);
    let thumbs = first["reactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["emoji"] == "👍")
        .unwrap()
        .clone();
    assert_eq!(thumbs["count"], 3);
    assert_eq!(thumbs["users"].as_array().unwrap().len(), 3);
    // Default order is desc; asc reverses it; both walk every comment once.
    let desc = app.walk(&s.users[0], &base, 7).await;
    assert_eq!(ids(&desc).len(), 40);
    crate::support::assert_sorted_by(&desc, "/postedAt", "/id", true);
    let mut all: Vec<String> = ids(&desc);
    all.sort();
    let mut expected = posted.clone();
    expected.sort();
    assert_eq!(all, expected, "every comment exactly once");
    let asc = app.walk(&s.users[0], &format!("{base}?order=asc"), 7).await;
    let mut reversed = ids(&asc);
    reversed.reverse();
    assert_eq!(reversed, ids(&desc));
    // Filters: page, authors, status, combined.
    let on_first = app
        .walk(&s.users[0], &format!("{base}?targetPage={}", s.pages[0]), 3)
        .await;
    assert_eq!(on_first.len(), 20);
    assert!(
        on_first
            .iter()
            .all(|c| c["target"]["page"]["id"] == s.pages[0].as_str())
    );
    let by_bob = app
        .get(&s.users[0], &format!("{base}?authors={}", s.users[1].id))
        .await
        .expect(200);
    assert_eq!(by_bob["count"], 13);
    let two = app
        .get(
            &s.users[0],
            &format!("{base}?authors={}&authors={}", s.users[1].id, s.users[2].id),
        )
        .await
        .expect(200);
    assert_eq!(two["count"], 26);
    let both = app
        .get(
            &s.users[0],
            &format!("{base}?authors={}&targetPage={}", s.users[0].id, s.pages[1]),
        )
        .await
        .expect(200);
    let expected = (0..40).filter(|i| i % 3 == 0 && i % 2 == 1).count();
    assert_eq!(both["count"], expected);
    // Resolving and unresolving keep the space's open-comment counter exact.
    let space_comments = |v: &Value| v["comments"].as_i64().unwrap();
    let before = space_comments(
        &app.get(&s.users[0], &format!("/v1/spaces/{}", s.space))
            .await
            .expect(200),
    );
    assert_eq!(before, 40);
    for id in posted.iter().take(5) {
        let resolved = app
            .put(&s.users[1], &format!("{base}/{id}"), json!({"resolved": true}))
            .await
            .expect(200);
        assert_eq!(resolved["status"], "resolved");
        assert_eq!(resolved["resolvedBy"]["id"], s.users[1].id.as_str());
        assert!(resolved["resolvedAt"].is_string());
    }
    app.put(
        &s.users[1],
        &format!("{base}/{}", posted[0]),
        json!({"resolved": true}),
    )
    .await
    .expect(200);
    assert_eq!(
        space_comments(
            &app.get(&s.users[0], &format!("/v1/spaces/{}", s.space))
                .await
                .expect(200)
        ),
        35
    );
    assert_eq!(
        app.get(&s.users[0], &format!("{base}?status=resolved"))
            .await
            .expect(200)["count"],
        5
    );
    assert_eq!(
        app.get(&s.users[0], &format!("{base}?status=open"))
            .await
            .expect(200)["count"],
        35
    );
    let reopened = app
        .put(
            &s.users[2],
            &format!("{base}/{}", posted[1]),
            json!({"resolved": false}),
        )
        .await
        .expect(200);
    assert_eq!(reopened["status"], "open");
    assert!(reopened.get("resolvedAt").is_none() && reopened.get("resolvedBy").is_none());
    assert_eq!(
        space_comments(
            &app.get(&s.users[0], &format!("/v1/spaces/{}", s.space))
                .await
                .expect(200)
        ),
        36
    );
    // Deleting a comment and a reply keeps counters exact.
    let replies = app
        .get(&s.users[0], &format!("{base}/{}/replies", posted[2]))
        .await
        .expect(200);
    assert_eq!(replies["count"], 3);
    let reply = &replies["items"][0];
    let reply_path = format!("{base}/{}/replies/{}", posted[2], reply["id"].as_str().unwrap());
    let author = s
        .users
        .iter()
        .find(|u| u.id == reply["postedBy"]["id"].as_str().unwrap())
        .unwrap();
    app.delete(author, &reply_path).await.expect(204);
    app.delete(author, &reply_path).await.expect(204);
    assert_eq!(
        app.get(&s.users[0], &format!("{base}/{}", posted[2]))
            .await
            .expect(200)["replies"],
        2
    );
    app.delete(&s.users[0], &format!("{base}/{}", posted[39]))
        .await
        .expect(204);
    assert_eq!(
        space_comments(
            &app.get(&s.users[0], &format!("/v1/spaces/{}", s.space))
                .await
                .expect(200)
        ),
        35
    );
    assert_eq!(app.get(&s.users[0], &base).await.expect(200)["count"], 39);
    // Commenters are the members who commented or replied.
    let commenters = app
        .get(&s.users[0], &format!("/v1/spaces/{}/commenters", s.space))
        .await
        .expect(200);
    let set: HashSet<&str> = commenters["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(set, s.users.iter().map(|u| u.id.as_str()).collect());
}

#[tokio::test]
async fn who_may_post_edit_and_delete() {
    let s = setup().await;
    let app = &s.app;
    let base = format!("/v1/spaces/{}/comments", s.space);
    let (ann, bob, cid) = (&s.users[0], &s.users[1], &s.users[2]);
    app.post(&s.reader, &base, json!({"body": {"markdown": "Hi"}}))
        .await
        .expect_error(403);
    let comment = app
        .post(bob, &base, json!({"body": {"markdown": "Bob's"}}))
        .await
        .expect(200);
    let id = comment["id"].as_str().unwrap();
    assert_eq!(
        comment["permissions"],
        json!({"view": true, "edit": true, "reply": true, "delete": true})
    );
    let seen = app.get(cid, &format!("{base}/{id}")).await.expect(200);
    assert_eq!(
        seen["permissions"],
        json!({"view": true, "edit": false, "reply": true, "delete": false})
    );
    let seen = app.get(&s.reader, &format!("{base}/{id}")).await.expect(200);
    assert_eq!(
        seen["permissions"],
        json!({"view": true, "edit": false, "reply": false, "delete": false})
    );
    // One user cannot edit another's comment; editing sets editedAt, reactions do not.
    app.put(
        cid,
        &format!("{base}/{id}"),
        json!({"body": {"markdown": "Mine now"}}),
    )
    .await
    .expect_error(403);
    app.delete(cid, &format!("{base}/{id}")).await.expect_error(403);
    let reacted = app
        .put(cid, &format!("{base}/{id}"), json!({"addedReactions": ["❤️"]}))
        .await
        .expect(200);
    assert!(reacted.get("editedAt").is_none());
    let edited = app
        .put(
            bob,
            &format!("{base}/{id}"),
            json!({"body": {"markdown": "Bob's, edited"}}),
        )
        .await
        .expect(200);
    assert!(edited["editedAt"].is_string());
    assert_eq!(edited["body"]["markdown"], "Bob's, edited\n");
    // Replies follow the same rules; admins delete anything.
    let reply = app
        .post(
            cid,
            &format!("{base}/{id}/replies"),
            json!({"body": {"markdown": "Cid's reply"}}),
        )
        .await
        .expect(200);
    let reply_path = format!("{base}/{id}/replies/{}", reply["id"].as_str().unwrap());
    app.put(bob, &reply_path, json!({"body": {"markdown": "No"}}))
        .await
        .expect_error(403);
    app.post(
        &s.reader,
        &format!("{base}/{id}/replies"),
        json!({"body": {"markdown": "Hi"}}),
    )
    .await
    .expect_error(403);
    app.delete(ann, &reply_path).await.expect(204);
    app.delete(ann, &format!("{base}/{id}")).await.expect(204);
    app.get(ann, &format!("{base}/{id}")).await.expect_error(404);
    // Bad targets and bodies.
    app.post(
        bob,
        &base,
        json!({"body": {"markdown": "x"}, "page": "nosuchpage"}),
    )
    .await
    .expect_error(400);
    app.post(
        bob,
        &base,
        json!({"body": {"markdown": "x"}, "page": s.pages[0], "node": "nosuchnode"}),
    )
    .await
    .expect_error(400);
    app.post(bob, &base, json!({"body": {}})).await.expect_error(400);
    app.post(bob, &base, json!({"body": {"markdown": "   "}}))
        .await
        .expect_error(400);
    app.get(bob, &format!("{base}?status=closed"))
        .await
        .expect_error(400);
}

#[tokio::test]
async fn both_body_formats_round_trip_and_change_requests_have_their_own_comments() {
    let s = setup().await;
    let app = &s.app;
    let ann = &s.users[0];
    let base = format!("/v1/spaces/{}/comments", s.space);
    let markdown = "Some **bold** text with a [link](https://example.com).\n\n- one\n- two\n";
    let posted = app
        .post(ann, &base, json!({"body": {"markdown": markdown}}))
        .await
        .expect(200);
    assert_eq!(posted["body"]["markdown"], markdown);
    let id = posted["id"].as_str().unwrap();
    let as_document = app
        .get(ann, &format!("{base}/{id}?format=document"))
        .await
        .expect(200);
    let document = as_document["body"]["document"].clone();
    let posted = app
        .post(ann, &base, json!({"body": {"document": document}}))
        .await
        .expect(200);
    let again = app
        .get(
            ann,
            &format!("{base}/{}?format=document", posted["id"].as_str().unwrap()),
        )
        .await
        .expect(200);
    assert_eq!(again["body"]["document"], document);
    assert_eq!(posted["body"]["markdown"], markdown);
    // A node target: a block of the page's document.
    let page = app
        .get(
            ann,
            &format!(
                "/v1/spaces/{}/content/page/{}?format=document",
                s.space, s.pages[0]
            ),
        )
        .await
        .expect(200);
    let node = page["document"]["nodes"][0]["key"].as_str().unwrap().to_string();
    let on_node = app
        .post(
            ann,
            &base,
            json!({"body": {"markdown": "About this"}, "page": s.pages[0], "node": node}),
        )
        .await
        .expect(200);
    assert_eq!(on_node["target"]["node"]["id"], node.as_str());
    // Change request comments are separate, counted on the change request.
    let cr = app
        .post(
            ann,
            &format!("/v1/spaces/{}/change-requests", s.space),
            json!({"subject": "x"}),
        )
        .await
        .expect(201);
    let cr_id = cr["id"].as_str().unwrap();
    let cr_base = format!("/v1/spaces/{}/change-requests/{cr_id}/comments", s.space);
    let c1 = app
        .post(
            ann,
            &cr_base,
            json!({"body": {"markdown": "On the change request"}}),
        )
        .await
        .expect(200);
    assert_eq!(c1["target"]["changeRequest"], cr_id);
    let c1_id = c1["id"].as_str().unwrap();
    app.post(
        &s.users[1],
        &format!("{cr_base}/{c1_id}/replies"),
        json!({"body": {"markdown": "Reply"}}),
    )
    .await
    .expect(200);
    let replies = app
        .get(ann, &format!("{cr_base}/{c1_id}/replies"))
        .await
        .expect(200);
    assert_eq!(replies["count"], 1);
    let reply_id = replies["items"][0]["id"].as_str().unwrap();
    app.get(ann, &format!("{cr_base}/{c1_id}/replies/{reply_id}"))
        .await
        .expect(200);
    assert_eq!(app.get(ann, &cr_base).await.expect(200)["count"], 1);
    assert_eq!(
        app.get(ann, &format!("/v1/spaces/{}/change-requests/{cr_id}", s.space))
            .await
            .expect(200)["comments"],
        1
    );
    app.get(ann, &format!("{base}/{c1_id}")).await.expect_error(404);
    let commenters = app
        .get(
            ann,
            &format!("/v1/spaces/{}/change-requests/{cr_id}/commenters", s.space),
        )
        .await
        .expect(200);
    assert_eq!(commenters["count"], 2);
    app.put(ann, &format!("{cr_base}/{c1_id}"), json!({"resolved": true}))
        .await
        .expect(200);
    assert_eq!(
        app.get(ann, &format!("/v1/spaces/{}/change-requests/{cr_id}", s.space))
            .await
            .expect(200)["comments"],
        0
    );
}

/// A post answers the comment or reply as it was written, without reading it back: the answer
/// is what a read of it gives.
#[tokio::test]
async fn a_post_answers_what_a_read_gives() {
    let s = setup().await;
    let app = &s.app;
    let ann = &s.users[0];
    let base = format!("/v1/spaces/{}/comments", s.space);
    let bodies = [
        json!({"body": {"markdown": "On the space"}}),
        json!({"body": {"markdown": "On a page"}, "page": s.pages[0]}),
        json!({"body": {"markdown": "On a cell"}, "page": s.pages[0],
               "tableCell": {"record": "r1", "definition": "d1"}}),
    ];
    for body in bodies {
        let posted = app.post(ann, &base, body).await.expect(200);
        let id = posted["id"].as_str().unwrap();
        let read = app.get(ann, &format!("{base}/{id}")).await.expect(200);
        assert_eq!(posted, read);
        let replied = app
            .post(
                ann,
                &format!("{base}/{id}/replies"),
                json!({"body": {"markdown": "A reply"}}),
            )
            .await
            .expect(200);
        let reply = replied["id"].as_str().unwrap();
        let read = app
            .get(ann, &format!("{base}/{id}/replies/{reply}"))
            .await
            .expect(200);
        assert_eq!(replied, read);
    }
    // In a change request too.
    let cr = app
        .post(
            ann,
            &format!("/v1/spaces/{}/change-requests", s.space),
            json!({"subject": "x"}),
        )
        .await
        .expect(201);
    let base = format!(
        "/v1/spaces/{}/change-requests/{}/comments",
        s.space,
        cr["id"].as_str().unwrap()
    );
    let posted = app
        .post(ann, &base, json!({"body": {"markdown": "On the change request"}}))
        .await
        .expect(200);
    let read = app
        .get(ann, &format!("{base}/{}", posted["id"].as_str().unwrap()))
        .await
        .expect(200);
    assert_eq!(posted, read);
}

#[tokio::test]
async fn lists_are_gzip_compressed_for_clients_that_take_it_and_never_stale() {
    let s = setup().await;
    let app = &s.app;
    let ann = &s.users[0];
    let base = format!("/v1/spaces/{}/comments", s.space);
    for n in 0..3 {
        let body = json!({"body": {"markdown": format!("Comment {n}, long enough to be worth compressing: {}", "words ".repeat(40))}});
        app.post(ann, &base, body).await.expect(200);
    }
    let listed = app.get(ann, &base).await.expect(200);
    assert_eq!(listed["items"].as_array().unwrap().len(), 3);
    // Twice: the second answers come from the kept lists, one per encoding.
    for _ in 0..2 {
        app.assert_same_json_gzip_or_plain(ann, &base, "gzip", "", &listed)
            .await;
    }
    // A new comment shows in both kept forms.
    app.post(ann, &base, json!({"body": {"markdown": "One more"}}))
        .await
        .expect(200);
    let after = app.get(ann, &base).await.expect(200);
    assert_eq!(after["items"].as_array().unwrap().len(), 4);
    app.assert_same_json_gzip_or_plain(ann, &base, "x-gzip;q=0.5", "identity", &after)
        .await;
}
