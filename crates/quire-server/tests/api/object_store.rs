//! A bucket that is down, hanging or failing is the server's fault, not the client's: uploads
//! and readiness answer 503 with `Retry-After` within a bounded time, and nothing is written.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use base64::Engine as _;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::content::space_with_cr;
use crate::support::TestApp;

#[derive(Clone, Copy)]
enum Fault {
    /// Nothing listens on the port.
    Unreachable,
    /// Connections are accepted and never answered.
    Hanging,
    /// Every request is answered 500.
    Failing,
}

/// A stand-in for a bucket with `fault`, and the address it answers (or does not) on.
async fn faulty_bucket(fault: Fault) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    match fault {
        Fault::Unreachable => drop(listener),
        Fault::Hanging => {
            tokio::spawn(async move {
                let mut held = Vec::new();
                while let Ok((socket, _)) = listener.accept().await {
                    held.push(socket);
                }
            });
        }
        Fault::Failing => {
            tokio::spawn(async move {
                while let Ok((mut socket, _)) = listener.accept().await {
                    tokio::spawn(async move {
                        let mut buf = vec![0u8; 64 * 1024];
                        // One read is enough to have the request line; the answer closes.
                        let _ = socket.read(&mut buf).await;
                        let _ = socket
                            .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                            .await;
                    });
                }
            });
        }
    }
    addr
}

async fn server_with(fault: Fault) -> TestApp {
    let addr = faulty_bucket(fault).await;
    let url = format!(
        "s3://quire/files?endpoint=http://{addr}&allow_http=true&skip_signature=true&region=us-east-1"
    );
    TestApp::start_with(&["--object-store-url", &url, "--object-store-timeout", "2s"]).await
}

async fn upload_is_refused_and_changes_nothing(fault: Fault) {
    let app = server_with(fault).await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let before = app.get(&ann, &content).await.expect(200);
    let png = base64::engine::general_purpose::STANDARD.encode(b"not really a png, but bytes");
    let started = Instant::now();
    let refused = app
        .post(
            &ann,
            &content,
            json!({"changes": [{"operation": "insert_files", "files": [{"name": "a.bin", "contentType": "application/octet-stream", "base64": png}]}]}),
        )
        .await;
    let waited = started.elapsed();
    assert_eq!(refused.status, 503, "{:?}", refused.body);
    assert!(refused.headers.contains_key("retry-after"));
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("file store"), "{message}");
    assert!(waited < Duration::from_secs(30), "answered after {waited:?}");
    let after = app.get(&ann, &content).await.expect(200);
    assert_eq!(after["id"], before["id"], "a refused upload made a revision");
    assert_eq!(after["files"], before["files"]);
    let ready = app.request("GET", None, "/readyz", None).await;
    assert_eq!(ready.status, 503, "{:?}", ready.body);
}

#[tokio::test]
async fn an_unreachable_bucket_answers_503_and_changes_nothing() {
    upload_is_refused_and_changes_nothing(Fault::Unreachable).await;
}

#[tokio::test]
async fn a_hanging_bucket_answers_503_and_changes_nothing() {
    upload_is_refused_and_changes_nothing(Fault::Hanging).await;
}

#[tokio::test]
async fn a_failing_bucket_answers_503_and_changes_nothing() {
    upload_is_refused_and_changes_nothing(Fault::Failing).await;
}

#[tokio::test]
async fn a_reachable_store_is_ready() {
    let app = TestApp::start().await;
    let ready = app.request("GET", None, "/readyz", None).await;
    assert_eq!(ready.status, 200, "{:?}", ready.body);
}

/// A bucket kept in memory that answers the calls quire makes (HEAD, PUT, GET, DELETE of one
/// object) like S3 does, or answers 500 to everything while `down` is set.
async fn switchable_bucket(down: Arc<AtomicBool>) -> SocketAddr {
    type Objects = Arc<Mutex<HashMap<String, Bytes>>>;
    async fn answer(
        State((down, objects)): State<(Arc<AtomicBool>, Objects)>,
        method: Method,
        uri: Uri,
        body: Bytes,
    ) -> Response {
        if down.load(Ordering::SeqCst) {
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
        let key = uri.path().to_string();
        let mut objects = objects.lock().unwrap();
        let etag = |bytes: &Bytes| format!("\"{}\"", bytes.len());
        let found = |bytes: &Bytes, with_body: bool| {
            let headers = [
                ("etag", etag(bytes)),
                ("last-modified", "Fri, 27 Nov 2026 00:00:00 GMT".to_string()),
                ("content-length", bytes.len().to_string()),
            ];
            let body = if with_body { bytes.clone() } else { Bytes::new() };
            (headers, body).into_response()
        };
        match method {
            Method::PUT => {
                let tag = etag(&body);
                objects.insert(key, body);
                ([("etag", tag)], "").into_response()
            }
            Method::GET | Method::HEAD => match objects.get(&key) {
                Some(bytes) => found(bytes, method == Method::GET),
                None => StatusCode::NOT_FOUND.into_response(),
            },
            Method::DELETE => {
                objects.remove(&key);
                StatusCode::NO_CONTENT.into_response()
            }
            _ => StatusCode::NOT_IMPLEMENTED.into_response(),
        }
    }
    let objects: Objects = Arc::default();
    let router = axum::Router::new().fallback(answer).with_state((down, objects));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

#[tokio::test]
async fn uploads_work_again_when_the_bucket_is_back() {
    let down = Arc::new(AtomicBool::new(true));
    let addr = switchable_bucket(down.clone()).await;
    let url = format!(
        "s3://quire/files?endpoint=http://{addr}&allow_http=true&skip_signature=true&region=us-east-1"
    );
    let app = TestApp::start_with(&["--object-store-url", &url, "--object-store-timeout", "2s"]).await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let bytes = b"the bytes of a file, uploaded twice".to_vec();
    let upload = json!({"changes": [{"operation": "insert_files", "files": [{
        "name": "a.bin",
        "contentType": "application/octet-stream",
        "base64": base64::engine::general_purpose::STANDARD.encode(&bytes),
    }]}]});

    let before = app.get(&ann, &content).await.expect(200);
    app.post(&ann, &content, upload.clone()).await.expect_error(503);
    let ready = app.request("GET", None, "/readyz", None).await;
    assert_eq!(ready.status, 503, "{:?}", ready.body);
    assert_eq!(app.get(&ann, &content).await.expect(200)["id"], before["id"]);

    down.store(false, Ordering::SeqCst);
    let ready = app.request("GET", None, "/readyz", None).await;
    assert_eq!(ready.status, 200, "{:?}", ready.body);
    app.post(&ann, &content, upload).await.expect(200);
    let files = app.get(&ann, &format!("{content}/files")).await.expect(200);
    let items = files["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{files}");
    let download = reqwest::get(items[0]["downloadURL"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(download.bytes().await.unwrap().to_vec(), bytes);
}
