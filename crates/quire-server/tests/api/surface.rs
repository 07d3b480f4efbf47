//! The HTTP surface outside the API's resources: `GET /` and CORS (`--cors-origin`).

use crate::support::TestApp;

#[tokio::test]
async fn the_root_answers_a_small_page_naming_quire() {
    let app = TestApp::start().await;
    let resp = reqwest::get(format!("{}/", app.base)).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    let page = resp.text().await.unwrap();
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("<h1>quire</h1>"), "{page}");
    assert!(
        page.contains(&format!("Version {}", env!("CARGO_PKG_VERSION"))),
        "{page}"
    );
    for link in ["/healthz", "/readyz", "/metrics", "/v1/user"] {
        assert!(page.contains(&format!("href=\"{link}\"")), "{link}: {page}");
    }
    assert!(page.contains(&format!("{}/v1", app.base)), "{page}");
    // Unknown routes keep the JSON envelope.
    let resp = app.request("GET", None, "/nope", None).await;
    resp.expect_error(404);
}

/// A CORS preflight: the status and the `access-control-*` headers.
async fn preflight(app: &TestApp, origin: &str) -> (u16, reqwest::header::HeaderMap) {
    let resp = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, format!("{}/v1/orgs", app.base))
        .header("origin", origin)
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization,content-type")
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.headers().clone())
}

#[tokio::test]
async fn cors_is_off_by_default() {
    let app = TestApp::start().await;
    let (status, headers) = preflight(&app, "https://docs.example.com").await;
    assert_eq!(status, 405);
    assert!(!headers.contains_key("access-control-allow-origin"));
}

#[tokio::test]
async fn configured_origins_get_preflight_answers_and_cors_headers() {
    let app = TestApp::start_with(&[
        "--cors-origin",
        "https://docs.example.com,http://localhost:3000",
        "--cors-origin",
        "https://other.example.com",
    ])
    .await;
    for origin in [
        "https://docs.example.com",
        "http://localhost:3000",
        "https://other.example.com",
    ] {
        let (status, headers) = preflight(&app, origin).await;
        assert_eq!(status, 200, "{origin}");
        assert_eq!(headers["access-control-allow-origin"], origin);
        let methods = headers["access-control-allow-methods"].to_str().unwrap();
        for method in ["GET", "POST", "PATCH", "PUT", "DELETE"] {
            assert!(methods.contains(method), "{methods}");
        }
        let allowed = headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .to_ascii_lowercase();
        assert!(
            allowed.contains("authorization") && allowed.contains("content-type"),
            "{allowed}"
        );
        assert_eq!(headers["access-control-max-age"], "3600");
    }
    // Another origin gets no permission.
    let (_, headers) = preflight(&app, "https://evil.example.net").await;
    assert!(!headers.contains_key("access-control-allow-origin"));
    // Actual requests from an allowed origin carry the headers, errors included, and expose
    // the request id.
    let ann = app.user("Ann").await;
    let client = reqwest::Client::new();
    let resp = client
        .get(format!("{}/v1/user", app.base))
        .bearer_auth(&ann.token)
        .header("origin", "https://docs.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["access-control-allow-origin"],
        "https://docs.example.com"
    );
    let exposed = resp.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    assert!(exposed.contains("x-request-id"), "{exposed}");
    let resp = client
        .get(format!("{}/v1/user", app.base))
        .header("origin", "https://docs.example.com")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 401);
    assert_eq!(
        resp.headers()["access-control-allow-origin"],
        "https://docs.example.com"
    );
}

#[tokio::test]
async fn any_origin_with_a_star() {
    let app = TestApp::start_with(&["--cors-origin", "*"]).await;
    let (status, headers) = preflight(&app, "https://anywhere.example").await;
    assert_eq!(status, 200);
    assert_eq!(headers["access-control-allow-origin"], "*");
}
