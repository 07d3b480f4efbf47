//! Members, teams and invite links.

use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn a_user_invited_by_link_joins_with_the_links_role() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Acme").await;
    let invite = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/link-invites"),
            json!({"role": "edit"}),
        )
        .await
        .expect(201);
    assert_eq!(invite["object"], "invite");
    assert_eq!(invite["role"], "edit");
    assert_eq!(invite["redundant"], true, "Ann, an admin, already has edit");
    let id = invite["id"].as_str().unwrap();
    assert!(id.len() >= 32);
    // Bob can read the invite from the link before joining, and it is not redundant for him.
    let seen = app
        .get(&bob, &format!("/v1/orgs/{org}/link-invites/{id}"))
        .await
        .expect(200);
    assert_eq!(seen["redundant"], false);
    app.get(&bob, &format!("/v1/orgs/{org}")).await.expect_error(404);
    app.post(&bob, &format!("/v1/orgs/{org}/invites/{id}"), json!({}))
        .await
        .expect(200);
    let member = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}", bob.id))
        .await
        .expect(200);
    assert_eq!(member["object"], "member");
    assert_eq!(member["role"], "edit");
    assert_eq!(member["user"]["id"], bob.id.as_str());
    assert_eq!(member["teams"], 0);
    // Listing, changing and deleting invites.
    let list = app
        .get(&ann, &format!("/v1/orgs/{org}/link-invites"))
        .await
        .expect(200);
    assert_eq!(list["count"], 1);
    let changed = app
        .patch(
            &ann,
            &format!("/v1/orgs/{org}/link-invites/{id}"),
            json!({"role": "admin"}),
        )
        .await
        .expect(200);
    assert_eq!(changed["role"], "admin");
    app.patch(
        &ann,
        &format!("/v1/orgs/{org}/link-invites/{id}"),
        json!({"level": "read"}),
    )
    .await
    .expect_error(400);
    app.patch(
        &bob,
        &format!("/v1/orgs/{org}/link-invites/{id}"),
        json!({"role": "admin"}),
    )
    .await
    .expect_error(403);
    app.delete(&ann, &format!("/v1/orgs/{org}/link-invites/{id}"))
        .await
        .expect(204);
    app.delete(&ann, &format!("/v1/orgs/{org}/link-invites/{id}"))
        .await
        .expect(204);
    app.get(&bob, &format!("/v1/orgs/{org}/link-invites/{id}"))
        .await
        .expect_error(404);
    // The organization's inviteLinks flag is honoured.
    let second = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/link-invites"),
            json!({"role": null}),
        )
        .await
        .expect(201);
    app.patch(&ann, &format!("/v1/orgs/{org}"), json!({"inviteLinks": false}))
        .await
        .expect(200);
    app.post(
        &ann,
        &format!("/v1/orgs/{org}/link-invites"),
        json!({"role": "read"}),
    )
    .await
    .expect_error(400);
    let carol = app.user("Carol").await;
    app.post(
        &carol,
        &format!("/v1/orgs/{org}/invites/{}", second["id"].as_str().unwrap()),
        json!({}),
    )
    .await
    .expect_error(403);
    app.get(&carol, &format!("/v1/orgs/{org}"))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn roles_limit_what_members_may_do() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let reader = app.user("Reader").await;
    let org = app.org(&ann, "Acme").await;
    let other = app.org(&ann, "Other").await;
    app.add_member(&ann, &org, &reader, Some("read")).await;
    let team = app
        .put(
            &ann,
            &format!("/v1/orgs/{org}/teams"),
            json!({"title": "Writers"}),
        )
        .await
        .expect(201);
    let team_id = team["id"].as_str().unwrap();
    // A read member can see the team but not change it, and cannot see another organization.
    let seen = app
        .get(&reader, &format!("/v1/orgs/{org}/teams/{team_id}"))
        .await
        .expect(200);
    assert_eq!(seen["permissions"], json!({"admin": false, "view": true}));
    app.patch(
        &reader,
        &format!("/v1/orgs/{org}/teams/{team_id}"),
        json!({"title": "Mine"}),
    )
    .await
    .expect_error(403);
    app.get(&reader, &format!("/v1/orgs/{other}"))
        .await
        .expect_error(404);
    app.get(&reader, &format!("/v1/orgs/{other}/members"))
        .await
        .expect_error(404);
    app.patch(
        &reader,
        &format!("/v1/orgs/{org}/members/{}", ann.id),
        json!({"role": "read"}),
    )
    .await
    .expect_error(403);
    app.put(
        &reader,
        &format!("/v1/orgs/{org}/teams"),
        json!({"title": "Mine"}),
    )
    .await
    .expect_error(403);
    let org_json = app.get(&reader, &format!("/v1/orgs/{org}")).await.expect(200);
    assert_eq!(org_json["permissions"]["admin"], false);
    assert_eq!(org_json["permissions"]["listMembers"], true);
    assert_eq!(org_json["permissions"]["createContent"], false);
}

#[tokio::test]
async fn the_last_admin_cannot_leave_or_be_demoted() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Acme").await;
    let me = format!("/v1/orgs/{org}/members/{}", ann.id);
    let message = app.delete(&ann, &me).await.expect_error(400);
    assert!(message.contains("last admin"), "{message}");
    app.patch(&ann, &me, json!({"role": "edit"}))
        .await
        .expect_error(400);
    app.patch(&ann, &me, json!({"role": null}))
        .await
        .expect_error(400);
    assert_eq!(app.get(&ann, &me).await.expect(200)["role"], "admin");
    // With a second admin, the first may step down.
    app.add_member(&ann, &org, &bob, Some("admin")).await;
    app.patch(&ann, &me, json!({"role": "edit"})).await.expect(200);
    app.delete(&bob, &format!("/v1/orgs/{org}/members/{}", bob.id))
        .await
        .expect_error(400);
    // Removing is idempotent and a removed member loses access.
    app.delete(&bob, &me).await.expect(204);
    app.delete(&bob, &me).await.expect(204);
    app.get(&ann, &format!("/v1/orgs/{org}")).await.expect_error(404);
}

#[tokio::test]
async fn member_list_search_filters_sorts_and_pages() {
    let app = TestApp::start().await;
    let ann = app.user_with_email("Ann Admin", "ann@acme.com").await;
    let org = app.org(&ann, "Acme").await;
    let mut users = Vec::new();
    for (name, email, role) in [
        ("Bob Builder", "bob.builder@acme.com", Some("edit")),
        ("Chloé Martin", "chloe@other.org", Some("read")),
        ("Dan Guest", "dan@guests.net", None),
        ("Eve Editor", "eve.e@acme.com", Some("edit")),
    ] {
        let u = app.user_with_email(name, email).await;
        app.add_member(&ann, &org, &u, role).await;
        users.push(u);
    }
    let base = format!("/v1/orgs/{org}/members");
    let all = app.get(&ann, &base).await.expect(200);
    assert_eq!(all["count"], 5);
    // Default order is desc by joinedAt (then id); asc reverses it.
    crate::support::assert_sorted_by(all["items"].as_array().unwrap(), "/joinedAt", "/id", true);
    let asc = app.get(&ann, &format!("{base}?order=asc")).await.expect(200);
    crate::support::assert_sorted_by(asc["items"].as_array().unwrap(), "/joinedAt", "/id", false);
    let mut reversed = asc["items"].as_array().unwrap().clone();
    reversed.reverse();
    assert_eq!(&reversed, all["items"].as_array().unwrap());
    // Search by part of an email, by name, case- and accent-insensitively.
    let found = app
        .get(&ann, &format!("{base}?search=builder%40acme"))
        .await
        .expect(200);
    assert_eq!(found["count"], 1);
    assert_eq!(found["items"][0]["user"]["email"], "bob.builder@acme.com");
    let found = app.get(&ann, &format!("{base}?search=CHLOE")).await.expect(200);
    assert_eq!(found["count"], 1);
    let found = app.get(&ann, &format!("{base}?search=%25")).await.expect(200);
    assert_eq!(found["count"], 0, "% is matched literally");
    // Role filters, guests included.
    assert_eq!(
        app.get(&ann, &format!("{base}?role=edit")).await.expect(200)["count"],
        2
    );
    let guests = app.get(&ann, &format!("{base}?role=guest")).await.expect(200);
    assert_eq!(guests["count"], 1);
    assert_eq!(guests["items"][0]["role"], serde_json::Value::Null);
    app.get(&ann, &format!("{base}?role=owner"))
        .await
        .expect_error(400);
    app.get(&ann, &format!("{base}?sort=size"))
        .await
        .expect_error(400);
    // sort=lastSeenAt lists only members who pinged.
    let ping = app
        .post(&users[0], &format!("/v1/orgs/{org}/ping"), json!({}))
        .await
        .expect(200);
    let claims = ping["serviceVisitorClaims"].as_str().unwrap();
    assert_eq!(claims.split('.').count(), 3, "a JWT");
    app.post(&users[3], &format!("/v1/orgs/{org}/ping"), json!({}))
        .await
        .expect(200);
    let seen = app
        .get(&ann, &format!("{base}?sort=lastSeenAt"))
        .await
        .expect(200);
    assert_eq!(seen["count"], 2);
    let pinged: Vec<&str> = seen["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(pinged.contains(&users[0].id.as_str()) && pinged.contains(&users[3].id.as_str()));
    crate::support::assert_sorted_by(seen["items"].as_array().unwrap(), "/lastSeenAt", "/id", true);
    assert!(seen["items"][0]["lastSeenAt"].is_string());
    // Walk every list with limit=1: each member once.
    for query in ["", "?order=asc", "?sort=name", "?sort=lastSeenAt", "?role=edit"] {
        let walked = app.walk(&ann, &format!("{base}{query}"), 1).await;
        let expected = app.get(&ann, &format!("{base}{query}")).await.expect(200)["count"]
            .as_u64()
            .unwrap();
        let mut ids: Vec<_> = walked
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids.len() as u64, expected, "{query}");
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len() as u64, expected, "{query}: duplicates");
    }
    // A cursor of one list is refused by another.
    let first = app.get(&ann, &format!("{base}?limit=1")).await.expect(200);
    let cursor = first["next"]["page"].as_str().unwrap();
    app.get(&ann, &format!("{base}?limit=1&role=edit&page={cursor}"))
        .await
        .expect_error(400);
    // Guests cannot list members; SSO marks a member.
    app.get(&users[2], &base).await.expect_error(403);
    let sso = app
        .post(&ann, &format!("{base}/{}/sso", users[0].id), json!({}))
        .await
        .expect(200);
    assert_eq!(sso["sso"], true);
}

#[tokio::test]
async fn teams_and_their_members_with_exact_counters() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let carol = app.user("Carol").await;
    let org = app.org(&ann, "Acme").await;
    app.add_member(&ann, &org, &bob, Some("edit")).await;
    app.add_member(&ann, &org, &carol, Some("read")).await;
    let teams = format!("/v1/orgs/{org}/teams");
    let resp = app
        .put(&ann, &teams, json!({"title": "Writers", "members": [bob.id]}))
        .await;
    assert!(resp.headers.contains_key("location"));
    let writers = resp.expect(201);
    assert_eq!(writers["object"], "team");
    assert_eq!(writers["members"], 1);
    assert_eq!(writers["spaces"], 0);
    let wid = writers["id"].as_str().unwrap().to_string();
    app.put(&ann, &teams, json!({"title": ""}))
        .await
        .expect_error(400);
    app.put(&ann, &teams, json!({"title": "x".repeat(65)}))
        .await
        .expect_error(400);
    app.put(&ann, &teams, json!({"title": "Ghosts", "members": ["nobody"]}))
        .await
        .expect_error(400);
    let reviewers = app
        .put(&ann, &teams, json!({"title": "Reviewers"}))
        .await
        .expect(201);
    let rid = reviewers["id"].as_str().unwrap().to_string();
    // Manage members: add by id or email, set roles, remove; removal wins over addition.
    app.put(
        &ann,
        &format!("{teams}/{wid}/members"),
        json!({"add": [carol.email, ann.id], "remove": [ann.id], "memberships": {bob.id.clone(): {"role": "owner"}}}),
    )
    .await
    .expect(204);
    let members = app.get(&ann, &format!("{teams}/{wid}/members")).await.expect(200);
    assert_eq!(members["count"], 2);
    let roles: Vec<(String, String)> = members["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["organization"]["id"].as_str().unwrap().into(),
                m["team"]["role"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(roles.contains(&(bob.id.clone(), "owner".into())));
    assert!(roles.contains(&(carol.id.clone(), "member".into())));
    assert_eq!(
        app.get(&ann, &format!("{teams}/{wid}")).await.expect(200)["members"],
        2
    );
    // Bob owns Writers: he can rename it, but not Reviewers.
    let bob_view = app.get(&bob, &format!("{teams}/{wid}")).await.expect(200);
    assert_eq!(bob_view["permissions"]["admin"], true);
    app.patch(&bob, &format!("{teams}/{wid}"), json!({"title": "Authors"}))
        .await
        .expect(200);
    app.patch(&bob, &format!("{teams}/{rid}"), json!({"title": "Mine"}))
        .await
        .expect_error(403);
    assert_eq!(
        app.get(&bob, &format!("/v1/orgs/{org}")).await.expect(200)["permissions"]["ownTeam"],
        true
    );
    // Per-user add and remove.
    app.put(
        &ann,
        &format!("{teams}/{rid}/members/{}", carol.id),
        json!({"role": "owner"}),
    )
    .await
    .expect(204);
    app.delete(&ann, &format!("{teams}/{wid}/members/{}", carol.id))
        .await
        .expect(204);
    app.delete(&ann, &format!("{teams}/{wid}/members/{}", carol.id))
        .await
        .expect(204);
    let carol_member = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}", carol.id))
        .await
        .expect(200);
    assert_eq!(carol_member["teams"], 1);
    // Filters: title contains (case-insensitive) and owner.
    let found = app.get(&ann, &format!("{teams}?title=AUTH")).await.expect(200);
    assert_eq!(found["count"], 1);
    assert_eq!(found["items"][0]["title"], "Authors");
    let owned = app
        .get(&ann, &format!("{teams}?owner={}", bob.id))
        .await
        .expect(200);
    assert_eq!(owned["count"], 1);
    assert_eq!(
        app.get(&ann, &format!("{teams}?owner={}", ann.id))
            .await
            .expect(200)["count"],
        2
    );
    // A member's teams, with their role in each.
    let bobs = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}/teams", bob.id))
        .await
        .expect(200);
    assert_eq!(bobs["count"], 1);
    assert_eq!(bobs["items"][0]["member"]["role"], "owner");
    assert_eq!(bobs["items"][0]["team"]["id"], wid.as_str());
    let filtered = app
        .get(
            &ann,
            &format!("/v1/orgs/{org}/members/{}/teams?title=rev", carol.id),
        )
        .await
        .expect(200);
    assert_eq!(filtered["count"], 1);
    // Deleting a team is idempotent and updates every counter.
    app.delete(&ann, &format!("{teams}/{rid}")).await.expect(204);
    app.delete(&ann, &format!("{teams}/{rid}")).await.expect(204);
    let carol_member = app
        .get(&ann, &format!("/v1/orgs/{org}/members/{}", carol.id))
        .await
        .expect(200);
    assert_eq!(carol_member["teams"], 0);
    app.get(&ann, &format!("{teams}/{rid}")).await.expect_error(404);
    let walked = app.walk(&ann, &teams, 1).await;
    assert_eq!(walked.len(), 1);
}
