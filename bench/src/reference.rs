//! `quire-bench reference`: the bare server every figure is compared with. It answers any GET
//! with one precomputed JSON body of a given size, on axum with the same runtime settings as
//! quire, so the ratio removes what the machine itself can do (shared cores, loopback, the
//! driver's own cost) from quire's figures.

use std::net::SocketAddr;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use bytes::Bytes;

/// A JSON object of exactly `bytes` bytes (at least the size of its fixed part).
pub fn body(bytes: usize) -> Bytes {
    let head = r#"{"object":"space","id":"reference","title":"Reference","padding":""#;
    let tail = r#""}"#;
    let fill = bytes.saturating_sub(head.len() + tail.len());
    let mut s = String::with_capacity(head.len() + fill + tail.len());
    s.push_str(head);
    s.extend(std::iter::repeat_n('x', fill));
    s.push_str(tail);
    Bytes::from(s)
}

/// Serves until the process is stopped; prints the address it listens on.
pub async fn serve(listen: SocketAddr, bytes: usize) -> Result<(), String> {
    let payload = body(bytes);
    let handler = move || {
        let payload = payload.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], payload).into_response() }
    };
    let app = Router::new().fallback(handler);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("reference listening on http://{addr} with a {bytes}-byte body");
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_body_has_the_asked_size_and_is_json() {
        let b = super::body(1500);
        assert_eq!(b.len(), 1500);
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["object"], "space");
    }
}
