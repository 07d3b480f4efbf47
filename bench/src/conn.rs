//! One keep-alive HTTP/1.1 connection of the load driver: a bare hyper client connection, so
//! that N connections are exactly N sockets and the driver spends as little CPU as it can.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The server's answer: status and the whole body.
pub struct Answer {
    pub status: u16,
    pub body: Bytes,
    /// The body is gzip-compressed (`Content-Encoding: gzip`).
    pub gzipped: bool,
    /// `Retry-After` in seconds, when the answer has one (a PDF link's 202).
    pub retry_after: Option<std::time::Duration>,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body, inflated when it came compressed.
    pub fn text(&self) -> Bytes {
        if !self.gzipped {
            return self.body.clone();
        }
        let mut out = Vec::new();
        match std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&self.body[..]), &mut out) {
            Ok(_) => Bytes::from(out),
            Err(_) => Bytes::new(),
        }
    }

    /// The body as JSON (Null when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.text()).unwrap_or(serde_json::Value::Null)
    }

    /// Whether this is the router's answer for a route that does not exist (the endpoint is not
    /// implemented), rather than a 404 for a missing resource.
    pub fn no_route(&self) -> bool {
        (self.status == 404 || self.status == 405) && {
            let text = self.text();
            let text = String::from_utf8_lossy(&text);
            text.contains("no route for") || text.contains("is not allowed on")
        }
    }

    /// A short description for error reports.
    pub fn describe(&self) -> String {
        let text = self.text();
        let text = String::from_utf8_lossy(&text);
        let text: String = text.chars().take(160).collect();
        format!("{} {}", self.status, text)
    }
}

/// A request without an answer by then counts as an error (and its connection is replaced).
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

pub struct Conn {
    addr: SocketAddr,
    host: HeaderValue,
    sender: Option<SendRequest<Full<Bytes>>>,
}

impl Conn {
    pub fn new(addr: SocketAddr) -> Result<Conn, String> {
        let host = HeaderValue::from_str(&addr.to_string()).map_err(|e| e.to_string())?;
        Ok(Conn {
            addr,
            host,
            sender: None,
        })
    }

    async fn connect(&mut self) -> Result<&mut SendRequest<Full<Bytes>>, String> {
        if self.sender.as_ref().is_none_or(|s| s.is_closed()) {
            let stream = TcpStream::connect(self.addr)
                .await
                .map_err(|e| format!("connect {}: {e}", self.addr))?;
            let _ = stream.set_nodelay(true);
            let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
                .await
                .map_err(|e| format!("handshake: {e}"))?;
            tokio::spawn(async move {
                let _ = connection.await;
            });
            self.sender = Some(sender);
        }
        self.sender.as_mut().ok_or_else(|| "no connection".to_string())
    }

    /// Sends one request and reads the whole answer. A broken connection is dropped and the
    /// next request opens a new one. An empty `token` sends no `Authorization` header.
    pub async fn send(
        &mut self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Answer, String> {
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, self.host.clone())
            // As browsers and HTTP libraries do. The driver reads compressed answers as they
            // come, without inflating them: that is the client's work, not the server's, and
            // here it would take the server's CPU.
            .header(header::ACCEPT_ENCODING, "gzip");
        // No token: a visitor of a published site, who has none.
        if !token.is_empty() {
            builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        let body = match body {
            Some(b) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(serde_json::to_vec(b).map_err(|e| e.to_string())?)
            }
            None => Bytes::new(),
        };
        let request = builder.body(Full::new(body)).map_err(|e| e.to_string())?;
        let exchange = async {
            let sender = self.connect().await?;
            sender.ready().await.map_err(|e| format!("connection: {e}"))?;
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| format!("request: {e}"))?;
            let status = response.status().as_u16();
            let gzipped = response
                .headers()
                .get(header::CONTENT_ENCODING)
                .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"));
            let retry_after = response
                .headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(std::time::Duration::from_secs);
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| format!("body: {e}"))?
                .to_bytes();
            Ok::<_, String>(Answer {
                status,
                body,
                gzipped,
                retry_after,
            })
        };
        let result = match tokio::time::timeout(TIMEOUT, exchange).await {
            Ok(r) => r,
            Err(_) => Err(format!("no answer within {} s", TIMEOUT.as_secs())),
        };
        if result.is_err() {
            self.sender = None;
        }
        result
    }

    pub async fn get(&mut self, path: &str, token: &str) -> Result<Answer, String> {
        self.send(Method::GET, path, token, None).await
    }

    pub async fn post(
        &mut self,
        path: &str,
        token: &str,
        body: &serde_json::Value,
    ) -> Result<Answer, String> {
        self.send(Method::POST, path, token, Some(body)).await
    }
}

/// The socket address of a base URL like `http://127.0.0.1:8080`.
pub fn addr_of(url: &str) -> Result<SocketAddr, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url}: only http:// URLs are supported"))?;
    let hostport = rest.split('/').next().unwrap_or(rest);
    let hostport = if hostport.starts_with("localhost:") {
        hostport.replacen("localhost", "127.0.0.1", 1)
    } else {
        hostport.to_string()
    };
    use std::net::ToSocketAddrs as _;
    hostport
        .to_socket_addrs()
        .map_err(|e| format!("{url}: {e}"))?
        .next()
        .ok_or_else(|| format!("{url}: no address"))
}
