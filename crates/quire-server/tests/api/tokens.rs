//! The caller's own tokens (`/v1/user/tokens`), expiry, and revocation seen by every process
//! within a second whatever its token cache holds.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// How soon every process must refuse a revoked or expired token.
const WITHIN: Duration = Duration::from_secs(1);

/// Polls `GET /v1/user` with `token` on `app` until it answers 401; how long that took from
/// `since`. Fails when it is still accepted after twice [`WITHIN`] (the assertion on the time
/// taken is the caller's).
async fn refused_after(app: &TestApp, token: &str, since: Instant) -> Duration {
    loop {
        let status = app.request("GET", Some(token), "/v1/user", None).await.status;
        if status == 401 {
            return since.elapsed();
        }
        assert_eq!(status, 200, "a token is either accepted or refused");
        assert!(
            since.elapsed() < 2 * WITHIN,
            "the token is still accepted {:?} later",
            since.elapsed()
        );
        // A pause between polls keeps the loop under the rate limit.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A second token for `user`, valid for `lifetime` when given.
async fn another_token(app: &TestApp, user: &TestUser, lifetime: Option<Duration>) -> String {
    let (db, email) = (app.db.clone(), user.email.clone());
    tokio::task::spawn_blocking(move || {
        quire_store::admin::create_expiring_token(&db, &email, &["org:read".into()], lifetime)
    })
    .await
    .unwrap()
    .unwrap()
}

/// The token of `list` that the request came with (`current`), and the other one: tokens
/// created in the same millisecond are in id order, so position tells nothing.
fn current_and_other(list: &Value) -> (&Value, &Value) {
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{list}");
    let current = items
        .iter()
        .position(|t| t["current"] == true)
        .expect("a current token");
    assert_eq!(items[1 - current]["current"], false);
    (&items[current], &items[1 - current])
}

fn ids(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_user_lists_and_revokes_their_own_tokens() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let bob = app.user("Bob").await;
    let second = another_token(&app, &ann, Some(Duration::from_secs(30 * 86_400))).await;
    let list = app.get(&ann, "/v1/user/tokens").await.expect(200);
    assert_eq!(list["count"], 2, "{list}");
    // The one the request came with is `current`; no secret is ever shown.
    let (own, other) = current_and_other(&list);
    assert_eq!(own["object"], "token");
    assert_eq!(other["scopes"], serde_json::json!(["org:read"]));
    assert_eq!(other["expired"], false);
    assert!(other["expiresAt"].as_str().unwrap().ends_with('Z'));
    assert!(own.get("expiresAt").is_none());
    assert!(!list.to_string().contains("quire_"), "{list}");
    let own_id = own["id"].as_str().unwrap().to_string();
    let second_id = other["id"].as_str().unwrap().to_string();
    let location = other["urls"]["location"].as_str().unwrap();
    assert!(location.ends_with(&format!("/v1/user/tokens/{second_id}")));
    app.get(&ann, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect(200);
    // Paging walks both.
    assert_eq!(app.walk(&ann, "/v1/user/tokens", 1).await.len(), 2);

    // Another user neither sees nor revokes Ann's token: 404 to read, and a DELETE that
    // changes nothing (204, as for a token that is not there).
    app.get(&bob, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect_error(404);
    app.delete(&bob, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect(204);
    assert_eq!(ids(&app.get(&bob, "/v1/user/tokens").await.expect(200)).len(), 1);
    app.request("GET", Some(&second), "/v1/user", None)
        .await
        .expect(200);

    // Ann revokes it: refused at once by this process, gone from the list; DELETE again is 204.
    app.delete(&ann, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect(204);
    let message = app
        .request("GET", Some(&second), "/v1/user", None)
        .await
        .expect_error(401);
    assert!(message.contains("token"), "{message}");
    let list = app.get(&ann, "/v1/user/tokens").await.expect(200);
    assert_eq!(list["count"], 1);
    assert_eq!(ids(&list), [own_id.as_str()]);
    app.delete(&ann, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect(204);
    app.get(&ann, &format!("/v1/user/tokens/{second_id}"))
        .await
        .expect_error(404);

    // A token may revoke itself; it is refused from then on.
    app.delete(&ann, &format!("/v1/user/tokens/{own_id}"))
        .await
        .expect(204);
    app.get(&ann, "/v1/user").await.expect_error(401);
}

#[tokio::test]
async fn a_token_past_its_expiry_is_refused_whatever_the_cache_holds() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let token = another_token(&app, &ann, Some(Duration::from_secs(3600))).await;
    // Accepted, and so kept in the token cache.
    app.request("GET", Some(&token), "/v1/user", None)
        .await
        .expect(200);
    // Its expiry moves into the past, as time passing would, written by another process.
    let db = app.another_process().await;
    let hash = quire_server::auth::token_hash(&token);
    let changed = tokio::task::spawn_blocking(move || {
        db.write_sync(|c| {
            c.execute(
                "UPDATE api_tokens SET expires_at = ?1 WHERE secret_hash = ?2",
                quire_server::params![quire_server::clock::now_ms() - 1, hash.clone()],
            )
        })
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(changed, 1);
    let since = Instant::now();
    let took = refused_after(&app, &token, since).await;
    assert!(took < WITHIN, "refused after {took:?}");
    let list = app.get(&ann, "/v1/user/tokens").await.expect(200);
    let (own, other) = current_and_other(&list);
    assert_eq!(
        (&own["expired"], &other["expired"]),
        (&json!(false), &json!(true)),
        "{list}"
    );

    // A token created already expired is never accepted.
    let short = another_token(&app, &ann, Some(Duration::from_millis(1))).await;
    let since = Instant::now();
    assert!(refused_after(&app, &short, since).await < WITHIN);
}

#[tokio::test]
async fn a_token_revoked_through_one_process_is_refused_by_another_within_a_second() {
    let first = TestApp::start().await;
    let second = first.beside().await;
    let ann = first.user("Ann").await;
    let spare = another_token(&first, &ann, None).await;
    // Both processes have accepted (and cached) both tokens.
    for app in [&first, &second] {
        app.get(&ann, "/v1/user").await.expect(200);
        app.request("GET", Some(&spare), "/v1/user", None)
            .await
            .expect(200);
    }
    // Revoked through the first server's API...
    let list = first.get(&ann, "/v1/user/tokens").await.expect(200);
    let (own, spare_item) = current_and_other(&list);
    let (own_id, spare_id) = (
        own["id"].as_str().unwrap().to_string(),
        spare_item["id"].as_str().unwrap().to_string(),
    );
    first
        .delete(&ann, &format!("/v1/user/tokens/{spare_id}"))
        .await
        .expect(204);
    let revoked = Instant::now();
    // ...the second refuses it within a second, though it had it cached.
    let took = refused_after(&second, &spare, revoked).await;
    assert!(took < WITHIN, "the second process refused it after {took:?}");
    // Revoked by `quire admin token revoke` (another process again): both servers refuse it.
    let db = first.another_process().await;
    tokio::task::spawn_blocking(move || quire_store::admin::revoke_token(&db, &own_id))
        .await
        .unwrap()
        .unwrap();
    let revoked = Instant::now();
    for app in [&first, &second] {
        let took = refused_after(app, &ann.token, revoked).await;
        assert!(took < WITHIN, "refused after {took:?}");
    }
}

#[tokio::test]
async fn admin_revoke_of_an_unknown_token_is_an_error() {
    let app = TestApp::start().await;
    let db = app.db.clone();
    let err = tokio::task::spawn_blocking(move || quire_store::admin::revoke_token(&db, "nope"))
        .await
        .unwrap()
        .unwrap_err();
    let err = quire_server::error::ApiError::from(err);
    assert_eq!(err.status, 404);
    assert!(err.message.contains("nope"), "{}", err.message);
}
