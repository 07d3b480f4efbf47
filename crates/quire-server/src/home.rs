//! `GET /`: a small page for whoever opens the server's address in a browser, saying what
//! answers here and where to go, instead of the 404 envelope of unknown routes.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;

use crate::state::App;

/// The home page
///
/// It names only routes that exist: the reader site does not yet, so it is not linked.
#[utoipa::path(
    get,
    path = "/",
    tag = "Service",
    description = "A small HTML page saying what answers here and where to go.",
    responses((status = 200, description = "The page.", content_type = "text/html", body = String)),
    security(())
)]
pub async fn page(State(app): State<App>) -> impl IntoResponse {
    let api = escape(&app.urls.api(""));
    let version = env!("CARGO_PKG_VERSION");
    let body = format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>quire {version}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;line-height:1.5}}code{{background:#f3f3f3;padding:0 .2em}}</style>
</head>
<body>
<h1>quire</h1>
<p>Version {version}. A self-hosted documentation platform serving a GitBook-compatible API.</p>
<h2>API</h2>
<p>The API answers under <code>{api}</code>; every request sends <code>Authorization: Bearer &lt;token&gt;</code>
(an administrator issues tokens with <code>quire admin token create --email ...</code>). Try
<a href="/v1/user"><code>GET /v1/user</code></a>, which names the token's user.</p>
<h2>Operations</h2>
<ul>
<li><a href="/healthz"><code>/healthz</code></a>: liveness</li>
<li><a href="/readyz"><code>/readyz</code></a>: readiness (the database answers)</li>
<li><a href="/metrics"><code>/metrics</code></a>: Prometheus metrics</li>
<li><a href="/v1/openapi.json"><code>/v1/openapi.json</code></a>: the OpenAPI 3.1 description of the API</li>
</ul>
</body>
</html>
"#
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

/// Escapes text for HTML: the public URL is configuration, not trusted markup.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
