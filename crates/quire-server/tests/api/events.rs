//! The event outbox: each change an integration cares about leaves exactly one event row, written
//! in the change's own transaction, so a change that rolls back leaves none.

use std::time::{Duration, Instant};

use quire_server::db::{Conn, with_deadline};
use quire_server::error::ApiError;
use quire_server::{clock, params};
use quire_store::events::{self, Event};
use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

const DAY_MS: i64 = 86_400_000;

/// An event as stored.
#[derive(Debug, Clone)]
struct Stored {
    kind: String,
    organization: String,
    space: Option<String>,
    subject: String,
    actor: Option<String>,
    payload: Value,
}

/// Every event, in the order recorded.
async fn all_events(app: &TestApp) -> Vec<Stored> {
    app.db
        .read(|c| {
            let rows = c.query(
                "SELECT kind, organization_id, space_id, subject_id, actor_id, payload FROM events ORDER BY seq",
                &[],
            )?;
            rows.iter()
                .map(|r| {
                    let payload: String = r.get(5)?;
                    Ok(Stored {
                        kind: r.get(0)?,
                        organization: r.get(1)?,
                        space: r.get::<Option<String>>(2)?,
                        subject: r.get(3)?,
                        actor: r.get::<Option<String>>(4)?,
                        payload: serde_json::from_str(&payload).expect("payload is JSON"),
                    })
                })
                .collect::<Result<Vec<_>, quire_server::db::DbError>>()
        })
        .await
        .unwrap()
}

/// The events of one kind.
async fn of_kind(app: &TestApp, kind: &str) -> Vec<Stored> {
    all_events(app)
        .await
        .into_iter()
        .filter(|e| e.kind == kind)
        .collect()
}

/// The one event of `kind` about `subject`; fails unless there is exactly one.
#[track_caller]
fn only<'a>(events: &'a [Stored], kind: &str, subject: &str) -> &'a Stored {
    let found: Vec<&Stored> = events
        .iter()
        .filter(|e| e.kind == kind && e.subject == subject)
        .collect();
    assert_eq!(found.len(), 1, "one {kind} event about {subject}: {events:#?}");
    found[0]
}

async fn create_space(app: &TestApp, user: &TestUser, org: &str, title: &str) -> Value {
    app.post(user, &format!("/v1/orgs/{org}/spaces"), json!({ "title": title }))
        .await
        .expect(201)
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

#[tokio::test]
async fn spaces_record_created_duplicated_deleted_and_restored() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    assert!(
        all_events(&app).await.is_empty(),
        "creating an organization records nothing"
    );

    let space = create_space(&app, &ann, &org, "Handbook").await;
    let space_id = id(&space);
    let events = all_events(&app).await;
    assert_eq!(events.len(), 1, "{events:#?}");
    let created = only(&events, "space_created", &space_id);
    assert_eq!(created.organization, org);
    assert_eq!(created.space.as_deref(), Some(space_id.as_str()));
    assert_eq!(created.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(created.payload["spaceId"], space_id.as_str());
    assert_eq!(created.payload["revisionId"], space["revision"]);

    let copy = app
        .post(&ann, &format!("/v1/spaces/{space_id}/duplicate"), json!({}))
        .await
        .expect(201);
    let copy_id = id(&copy);
    let events = of_kind(&app, "space_created").await;
    assert_eq!(events.len(), 2);
    let duplicated = only(&events, "space_created", &copy_id);
    assert_eq!(duplicated.payload["duplicateOf"], space_id.as_str());
    assert_eq!(duplicated.payload["revisionId"], copy["revision"]);

    // Deleting twice answers 204 twice but deletes once.
    for _ in 0..2 {
        app.delete(&ann, &format!("/v1/spaces/{copy_id}"))
            .await
            .expect(204);
    }
    let deleted = of_kind(&app, "space_deleted").await;
    let event = only(&deleted, "space_deleted", &copy_id);
    assert_eq!(deleted.len(), 1);
    assert_eq!(event.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(event.organization, org);

    app.post(&ann, &format!("/v1/spaces/{copy_id}/restore"), json!({}))
        .await
        .expect(200);
    // Restoring a space that is not deleted changes nothing and records nothing.
    app.post(&ann, &format!("/v1/spaces/{copy_id}/restore"), json!({}))
        .await
        .expect(200);
    let restored = of_kind(&app, "space_restored").await;
    assert_eq!(restored.len(), 1);
    only(&restored, "space_restored", &copy_id);

    // Deleting a collection deletes the spaces inside: one event each.
    let collection = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": "Guides"}),
        )
        .await
        .expect(201);
    let inside = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Inside", "parent": id(&collection)}),
        )
        .await
        .expect(201);
    app.delete(&ann, &format!("/v1/collections/{}", id(&collection)))
        .await
        .expect(204);
    let deleted = of_kind(&app, "space_deleted").await;
    assert_eq!(deleted.len(), 2);
    only(&deleted, "space_deleted", &id(&inside));
}

#[tokio::test]
async fn change_requests_record_created_status_merged_and_main_updated() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = id(&create_space(&app, &ann, &org, "Handbook").await);
    let crs = format!("/v1/spaces/{space}/change-requests");

    let cr = app.post(&ann, &crs, json!({"subject": "Fix"})).await.expect(201);
    let cr_id = id(&cr);
    let created = of_kind(&app, "change_request_created").await;
    let event = only(&created, "change_request_created", &cr_id);
    assert_eq!(created.len(), 1);
    assert_eq!(event.space.as_deref(), Some(space.as_str()));
    assert_eq!(event.organization, org);
    assert_eq!(event.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(event.payload["status"], "draft");
    assert_eq!(event.payload["number"], cr["number"]);

    // A status change is an event; a new subject is not.
    app.patch(&ann, &format!("{crs}/{cr_id}"), json!({"status": "open"}))
        .await
        .expect(200);
    app.patch(&ann, &format!("{crs}/{cr_id}"), json!({"subject": "Fix typos"}))
        .await
        .expect(200);
    let updated = of_kind(&app, "change_request_status_updated").await;
    let event = only(&updated, "change_request_status_updated", &cr_id);
    assert_eq!(updated.len(), 1);
    assert_eq!(event.payload["status"], "open");
    assert_eq!(event.payload["previousStatus"], "draft");

    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let page = pages["pages"][0]["id"].as_str().unwrap().to_string();
    app.post(
        &ann,
        &format!("{crs}/{cr_id}/content"),
        json!({"changes": [{"operation": "update_page", "page": page, "document": {"markdown": "Hello.\n"}}]}),
    )
    .await
    .expect(200);
    let before = all_events(&app).await.len();
    let merged = app
        .post(&ann, &format!("{crs}/{cr_id}/merge"), json!({}))
        .await
        .expect(200);
    let events = all_events(&app).await;
    assert_eq!(
        events.len(),
        before + 2,
        "a merge records two events: {events:#?}"
    );
    let event = only(&events, "change_request_merged", &cr_id);
    assert_eq!(event.payload["revisionId"], merged["revision"]);
    assert_eq!(event.actor.as_deref(), Some(ann.id.as_str()));
    let content = only(&events, "space_content_updated", &space);
    assert_eq!(content.payload["revisionId"], merged["revision"]);
    assert_eq!(content.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(content.organization, org);

    // Archiving another change request.
    let other = id(&app
        .post(&ann, &crs, json!({"subject": "Later"}))
        .await
        .expect(201));
    app.patch(&ann, &format!("{crs}/{other}"), json!({"status": "archived"}))
        .await
        .expect(200);
    let updated = of_kind(&app, "change_request_status_updated").await;
    let event = only(&updated, "change_request_status_updated", &other);
    assert_eq!(event.payload["status"], "archived");
    assert_eq!(event.payload["previousStatus"], "draft");

    // A template applied to main moves main without a change request.
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/content/template"),
        json!({"id": "changelog"}),
    )
    .await
    .expect(201);
    let updates = of_kind(&app, "space_content_updated").await;
    assert_eq!(updates.len(), 2);
    let main = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(updates[1].payload["revisionId"], main["revision"]);
    assert_eq!(updates[1].payload["previousRevisionId"], merged["revision"]);
}

#[tokio::test]
async fn comments_replies_and_review_comments_are_recorded() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = id(&create_space(&app, &ann, &org, "Handbook").await);
    let comment = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments"),
            json!({"body": {"markdown": "Looks good."}}),
        )
        .await
        .expect(200);
    let comment_id = id(&comment);
    let reply = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments/{comment_id}/replies"),
            json!({"body": {"markdown": "Thanks."}}),
        )
        .await
        .expect(200);
    let reply_id = id(&reply);
    let events = all_events(&app).await;
    let posted = only(&events, "comment_posted", &comment_id);
    assert_eq!(posted.space.as_deref(), Some(space.as_str()));
    assert_eq!(posted.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(posted.payload["changeRequestId"], Value::Null);
    let replied = only(&events, "comment_reply_posted", &reply_id);
    assert_eq!(replied.payload["commentId"], comment_id.as_str());
    assert_eq!(replied.organization, org);

    // A review with a comment posts that comment on the change request.
    let bob = app.user("Bob").await;
    app.add_member(&ann, &org, &bob, Some("review")).await;
    let cr = id(&app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Fix"}),
        )
        .await
        .expect(201));
    let review = app
        .post(
            &bob,
            &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
            json!({"status": "changes-requested", "comment": {"markdown": "Please fix the title."}}),
        )
        .await
        .expect(201);
    let review_comment = id(&review["comment"]);
    let events = of_kind(&app, "comment_posted").await;
    assert_eq!(events.len(), 2);
    let event = only(&events, "comment_posted", &review_comment);
    assert_eq!(event.actor.as_deref(), Some(bob.id.as_str()));
    assert_eq!(event.payload["changeRequestId"], cr.as_str());
}

#[tokio::test]
async fn members_added_and_removed_are_recorded() {
    let app = TestApp::start().await;
    let ann = app.user_with_email("Ann", "ann@acme.com").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Acme").await;

    // An invite link: Bob lets himself in.
    app.add_member(&ann, &org, &bob, Some("edit")).await;
    let added = of_kind(&app, "member_added").await;
    assert_eq!(added.len(), 1, "a role change is not a new member: {added:#?}");
    let event = only(&added, "member_added", &bob.id);
    assert_eq!(event.organization, org);
    assert_eq!(event.space, None);
    assert_eq!(event.actor.as_deref(), Some(bob.id.as_str()));
    assert_eq!(event.payload["userId"], bob.id.as_str());

    // Invited to a space: Ann lets Cat in, as a guest.
    let cat = app.user("Cat").await;
    let space = id(&create_space(&app, &ann, &org, "Handbook").await);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/permissions"),
        json!({"role": "read", "users": [cat.id]}),
    )
    .await
    .expect(204);
    let added = of_kind(&app, "member_added").await;
    let event = only(&added, "member_added", &cat.id);
    assert_eq!(event.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(event.payload["role"], Value::Null);

    // By verified email domain.
    app.patch(
        &ann,
        &format!("/v1/orgs/{org}"),
        json!({"emailDomains": ["acme.com"]}),
    )
    .await
    .expect(200);
    let dan = app.user_with_email("Dan", "dan@acme.com").await;
    for _ in 0..2 {
        app.post(&dan, &format!("/v1/orgs/{org}/join"), json!({}))
            .await
            .expect(204);
    }
    let added = of_kind(&app, "member_added").await;
    assert_eq!(added.len(), 3);
    only(&added, "member_added", &dan.id);

    // Removed twice, removed once.
    for _ in 0..2 {
        app.delete(&ann, &format!("/v1/orgs/{org}/members/{}", bob.id))
            .await
            .expect(204);
    }
    let removed = of_kind(&app, "member_removed").await;
    assert_eq!(removed.len(), 1);
    let event = only(&removed, "member_removed", &bob.id);
    assert_eq!(event.actor.as_deref(), Some(ann.id.as_str()));
    assert_eq!(event.organization, org);
}

#[tokio::test]
async fn a_request_that_fails_after_recording_leaves_no_event() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let org = app.org(&ann, "Acme").await;
    let space = id(&create_space(&app, &ann, &org, "Handbook").await);
    // Bob joins as a guest (an event is recorded in the transaction), then the next user of
    // the same request is unknown: the request fails and its transaction rolls back.
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/permissions"),
        json!({"role": "read", "users": [bob.id, "nosuchuser0000000000"]}),
    )
    .await
    .expect_error(404);
    assert!(of_kind(&app, "member_added").await.is_empty());
    app.get(&ann, &format!("/v1/orgs/{org}/members/{}", bob.id))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn a_rolled_back_transaction_leaves_no_event() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = id(&create_space(&app, &ann, &org, "Handbook").await);
    let recorded = all_events(&app).await.len();

    // The real deletion, in a transaction whose request ran out of time: it is rolled back
    // after the event was recorded.
    let (space_id, user) = (space.clone(), ann.id.clone());
    let error = with_deadline(
        Instant::now(),
        app.db.write(move |c| {
            quire_store::spaces::lifecycle::soft_delete(c, &space_id, clock::now_ms(), DAY_MS, &user)
                .map_err(ApiError::from)
        }),
    )
    .await
    .unwrap_err();
    assert_eq!(error.status.as_u16(), 503);
    assert_eq!(all_events(&app).await.len(), recorded);
    app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);

    // A transaction that records an event and then fails.
    let (org_id, user) = (org.clone(), ann.id.clone());
    let db = app.db.clone();
    let failed = tokio::task::spawn_blocking(move || {
        db.write_sync(|c: &mut dyn Conn| {
            let payload = events::MemberAdded {
                user_id: &user,
                role: None,
            };
            events::record(c, Event::member(&org_id, &user, Some(&user), payload))?;
            let seen: i64 = c
                .query_scalar(
                    "SELECT count(*) FROM events WHERE organization_id = ?1",
                    params![org_id.clone()],
                )?
                .unwrap_or(0);
            assert_eq!(seen, 2, "the transaction sees its own event");
            Err::<(), _>(ApiError::conflict("changed our mind"))
        })
    })
    .await
    .unwrap();
    assert_eq!(failed.unwrap_err().status.as_u16(), 409);
    assert_eq!(all_events(&app).await.len(), recorded);

    // Within its deadline, the same deletion commits with its event.
    let (space_id, user) = (space.clone(), ann.id.clone());
    with_deadline(
        Instant::now() + Duration::from_secs(60),
        app.db.write(move |c| {
            quire_store::spaces::lifecycle::soft_delete(c, &space_id, clock::now_ms(), DAY_MS, &user)
                .map_err(ApiError::from)
        }),
    )
    .await
    .unwrap();
    let deleted = of_kind(&app, "space_deleted").await;
    assert_eq!(
        only(&deleted, "space_deleted", &space).actor.as_deref(),
        Some(ann.id.as_str())
    );
}

#[tokio::test]
async fn docs_sites_record_created_published_unpublished_and_deleted() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let site = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites"),
            json!({"title": "Handbook"}),
        )
        .await
        .expect(201);
    let site = site["id"].as_str().unwrap().to_string();
    let base = format!("/v1/orgs/{org}/sites/{site}");
    // Publishing twice is one change; so is unpublishing twice.
    for _ in 0..2 {
        app.post(&owner, &format!("{base}/publish"), json!({}))
            .await
            .expect(200);
    }
    for _ in 0..2 {
        app.post(&owner, &format!("{base}/unpublish"), json!({}))
            .await
            .expect(200);
    }
    app.delete(&owner, &base).await.expect(204);
    let events = all_events(&app).await;
    for kind in [
        "site_created",
        "site_published",
        "site_unpublished",
        "site_deleted",
    ] {
        let e = only(&events, kind, &site);
        assert_eq!(e.organization, org);
        assert_eq!(e.space, None);
        assert_eq!(e.actor.as_deref(), Some(owner.id.as_str()));
        assert_eq!(e.payload["siteId"], site.as_str());
    }
    let kinds: Vec<&str> = events
        .iter()
        .filter(|e| e.subject == site)
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "site_created",
            "site_published",
            "site_unpublished",
            "site_deleted"
        ]
    );
}
