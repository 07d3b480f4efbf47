//! Browser sessions over HTTP (`quire_store::sessions`): the `quire_session` cookie a finished
//! sign-in sets, and the session page, where a signed-in person sees who they are, turns the
//! session into an API token (shown once) and signs out.
//!
//! The cookie is HttpOnly, SameSite=Lax (so no other site's form can post with it), Secure when
//! the public URL is https, and valid for the whole server's path: the reader site reads it for
//! the organization's in-collection sites. The API never reads it; it takes tokens only, so a
//! page elsewhere cannot make a signed-in browser call the API. The two writes here also refuse
//! a request whose `Origin` is another site's.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use quire_store::sessions::{self, Session};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{ApiError, ApiResult};
use crate::home::escape;
use crate::state::App;

/// The cookie that holds a session's secret.
pub const SESSION_COOKIE: &str = "quire_session";

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(session_page))
        .routes(routes!(session_token))
        .routes(routes!(sign_out))
}

/// The session secret the request's cookies hold, if any.
pub fn secret(headers: &HeaderMap) -> Option<String> {
    crate::reader::serve::cookies(headers).remove(SESSION_COOKIE)
}

/// The unexpired session of the request's cookie.
pub async fn current(app: &App, headers: &HeaderMap) -> ApiResult<Option<Session>> {
    let Some(secret) = secret(headers) else {
        return Ok(None);
    };
    let now = quire_store::clock::now_ms();
    Ok(app.db.read(move |c| sessions::find(c, &secret, now)).await?)
}

/// The `Set-Cookie` value that keeps `secret` for `ttl_ms`.
pub fn set_cookie(app: &App, secret: &str, ttl_ms: i64) -> Option<HeaderValue> {
    let cookie = crate::reader::serve::cookie(SESSION_COOKIE, secret, "/", app.reader.secure);
    HeaderValue::from_str(&format!("{cookie}; Max-Age={}", ttl_ms / 1000)).ok()
}

fn clear_cookie(app: &App) -> Option<HeaderValue> {
    let cookie = crate::reader::serve::cookie(SESSION_COOKIE, "", "/", app.reader.secure);
    HeaderValue::from_str(&format!("{cookie}; Max-Age=0")).ok()
}

/// 403 when a write comes from a page of another origin (a browser says so in `Origin`).
fn same_origin(app: &App, headers: &HeaderMap) -> ApiResult<()> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(());
    };
    let own = origin
        .to_str()
        .ok()
        .and_then(|o| url::Url::parse(o).ok())
        .is_some_and(|o| app.urls.is_own_origin(&o));
    if !own {
        return Err(ApiError::forbidden("this form only works from quire's own pages"));
    }
    Ok(())
}

/// A time as people read it on these pages: `2026-11-30 05:26 UTC`.
fn minute(ms: i64) -> String {
    let iso = quire_store::clock::format_ms(ms);
    format!("{} UTC", iso.get(..16).unwrap_or(&iso).replace('T', " "))
}

fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{title} · quire</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}code{{background:#f3f3f3;padding:.2em .3em;word-break:break-all}}button{{font:inherit;padding:.3em .8em;margin:.2em 0}}form{{display:inline-block;margin-right:1em}}</style>
</head>
<body>
<h1>{title}</h1>
{body}
</body>
</html>
"#,
        title = escape(title),
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

const NOT_SIGNED_IN: &str = "<p>You are not signed in. Sign in with your organization's identity provider: its \
     <code>startURL</code> is listed by <code>GET /v1/orgs/{organizationId}/sso</code>.</p>";

/// The session page
///
/// Who the browser's session signs in, until when, and the forms to make an API token from it
/// and to sign out. Without a session it says how to sign in.
#[utoipa::path(
    get,
    path = "/session",
    tag = "Single sign-on",
    summary = "The browser's session",
    responses((status = 200, description = "An HTML page.", content_type = "text/html", body = String)),
    security(())
)]
async fn session_page(State(app): State<App>, headers: HeaderMap) -> ApiResult<Response> {
    let Some(session) = current(&app, &headers).await? else {
        return Ok(page(StatusCode::OK, "Not signed in", NOT_SIGNED_IN));
    };
    let (org_id, user_id) = (session.org_id.clone(), session.user.id.clone());
    let org = app
        .db
        .read(move |c| quire_store::orgs::load_for(c, &org_id, &user_id))
        .await?;
    let org_title = org.map(|o| o.org.title).unwrap_or_default();
    let body = format!(
        r#"<p>Signed in as <strong>{name}</strong> (<code>{email}</code>) with <strong>{org}</strong>'s identity provider, until {until}.</p>
<p>The command line and scripts use API tokens. Make one from this session; it is shown once and lasts {days} days.</p>
<form method="post" action="/session/token"><button type="submit">Create an API token</button></form>
<form method="post" action="/session/sign-out"><button type="submit">Sign out</button></form>"#,
        name = escape(&session.user.display_name),
        email = escape(&session.user.email),
        org = escape(&org_title),
        until = minute(session.expires_at),
        days = sessions::TOKEN_TTL_MS / (24 * 60 * 60 * 1000),
    );
    Ok(page(StatusCode::OK, "Your session", &body))
}

/// An API token from the session
///
/// Issues an API token for the session's user, without scopes (it may do what they may), valid
/// for 90 days, and shows it once. 401 without a session.
#[utoipa::path(
    post,
    path = "/session/token",
    tag = "Single sign-on",
    summary = "Turn the browser's session into an API token",
    responses(
        (status = 201, description = "An HTML page showing the token once.", content_type = "text/html", body = String),
        (status = 401, description = "No session.", content_type = "text/html", body = String),
    ),
    security(())
)]
async fn session_token(State(app): State<App>, headers: HeaderMap) -> ApiResult<Response> {
    same_origin(&app, &headers)?;
    let Some(session) = current(&app, &headers).await? else {
        return Ok(page(StatusCode::UNAUTHORIZED, "Not signed in", NOT_SIGNED_IN));
    };
    let now = quire_store::clock::now_ms();
    let expires_at = now.saturating_add(sessions::TOKEN_TTL_MS);
    let user_id = session.user.id.clone();
    let label = format!("signed in {}", quire_store::clock::format_ms(now));
    let token = app
        .db
        .write(move |c| {
            sessions::refuse_unless_sso_allows(c, &user_id)?;
            quire_store::auth::issue_token(c, &user_id, &[], Some(&label), Some(expires_at))
        })
        .await?;
    tracing::info!(user = %session.user.id, session = %session.id, "API token issued from a session");
    let body = format!(
        r#"<p>Your new API token, shown this once. Copy it now:</p>
<p><code id="token">{token}</code></p>
<p>Send it as <code>Authorization: Bearer &lt;token&gt;</code>. It lasts until {until}; revoke it with <code>DELETE /v1/user/tokens/{{tokenId}}</code>.</p>
<p><a href="/session">Back to your session</a></p>"#,
        token = escape(&token),
        until = minute(expires_at),
    );
    Ok(page(StatusCode::CREATED, "API token", &body))
}

/// Sign out
///
/// Ends the browser's session and forgets its cookie; 303 to `/session`.
#[utoipa::path(
    post,
    path = "/session/sign-out",
    tag = "Single sign-on",
    summary = "End the browser's session",
    responses((status = 303, description = "Signed out; to `/session`.")),
    security(())
)]
async fn sign_out(State(app): State<App>, headers: HeaderMap) -> ApiResult<Response> {
    same_origin(&app, &headers)?;
    if let Some(secret) = secret(&headers) {
        app.db.write(move |c| sessions::close(c, &secret)).await?;
    }
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/session")]).into_response();
    if let Some(clear) = clear_cookie(&app) {
        response.headers_mut().append(header::SET_COOKIE, clear);
    }
    Ok(response)
}
