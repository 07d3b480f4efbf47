//! Request deadlines: a write transaction whose request's deadline has passed rolls back
//! instead of committing, so a request answered 503 for its time never writes afterwards.

use std::time::{Duration, Instant};

use quire_server::db::with_deadline;
use quire_server::error::ApiError;
use quire_server::params;

use crate::support::TestApp;

#[tokio::test]
async fn a_write_past_its_deadline_is_rolled_back_and_answered_503() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let rename = |name: &'static str| {
        let id = ann.id.clone();
        move |c: &mut dyn quire_server::db::Conn| {
            c.execute(
                "UPDATE users SET display_name = ?2 WHERE id = ?1",
                params![id.clone(), name],
            )?;
            Ok::<_, ApiError>(())
        }
    };
    let past = Instant::now();
    let error = with_deadline(past, app.db.write(rename("Late")))
        .await
        .unwrap_err();
    assert_eq!(error.status.as_u16(), 503);
    assert!(error.message.contains("nothing was written"), "{}", error.message);
    assert_eq!(name(&app, &ann.id).await, "Ann", "the late write was rolled back");
    // Within its deadline, the same write commits.
    with_deadline(
        Instant::now() + Duration::from_secs(60),
        app.db.write(rename("Ann B")),
    )
    .await
    .unwrap();
    assert_eq!(name(&app, &ann.id).await, "Ann B");
}

/// The user's name as stored (API answers may come from a cache of the token's user).
async fn name(app: &TestApp, id: &str) -> String {
    let id = id.to_string();
    app.db
        .read(move |c| c.query_scalar::<String>("SELECT display_name FROM users WHERE id = ?1", params![id]))
        .await
        .unwrap()
        .unwrap()
}
