//! Hostile input: slow and idle connections, too many connections, slow bodies, rate limits,
//! bodies that are not JSON, control characters in names, deletes of what one cannot see.
//!
//! The connection tests talk raw TCP to the server with short timeouts (1 s) so that they run
//! in seconds; the figures they print (`--nocapture`) are how long the server took.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{Resp, TestApp, TestUser};

/// Writes `bytes` one at a time, one every `pace`, while reading; returns when the server closes
/// the connection: how long after the start, and what it sent before closing. Panics if the
/// connection is still open after `limit`.
async fn trickle_until_closed(
    stream: &mut TcpStream,
    bytes: impl IntoIterator<Item = u8>,
    pace: Duration,
    limit: Duration,
) -> (Duration, Vec<u8>) {
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + limit;
    let (mut reader, mut writer) = stream.split();
    let mut bytes = bytes.into_iter();
    let mut ticks = tokio::time::interval(pace);
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let mut writing = true;
    loop {
        tokio::select! {
            read = reader.read(&mut buf) => match read {
                Ok(0) | Err(_) => return (started.elapsed(), received),
                Ok(n) => received.extend_from_slice(&buf[..n]),
            },
            _ = ticks.tick(), if writing => match bytes.next() {
                Some(b) => {
                    if writer.write_all(&[b]).await.is_err() {
                        // The server closed; what it sent is still to be read.
                        writing = false;
                    }
                }
                None => writing = false,
            },
            () = tokio::time::sleep_until(deadline) => {
                panic!("the connection is still open after {limit:?}; received {:?}", String::from_utf8_lossy(&received))
            }
        }
    }
}

/// Reads until `received` holds a whole small response (headers and a Content-Length body).
async fn read_response(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = String::from_utf8_lossy(&received).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            if received.len() >= end + 4 + length {
                return text;
            }
        }
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .expect("a response in time")
            .expect("read");
        assert!(n > 0, "closed before a whole response: {text:?}");
        received.extend_from_slice(&buf[..n]);
    }
}

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: quire\r\n\r\n";

/// An endless header: the request line and then one long header line.
fn endless_header() -> impl Iterator<Item = u8> {
    b"GET /healthz HTTP/1.1\r\nHost: quire\r\nX-Slow: "
        .iter()
        .copied()
        .chain(std::iter::repeat(b'a'))
}

#[tokio::test]
async fn a_client_sending_headers_one_byte_at_a_time_is_disconnected() {
    let app = TestApp::start_with(&["--header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    let (after, received) = trickle_until_closed(
        &mut stream,
        endless_header(),
        Duration::from_millis(50),
        Duration::from_secs(10),
    )
    .await;
    eprintln!("slow headers (header timeout 1 s): disconnected after {after:?}");
    assert!(received.is_empty(), "{:?}", String::from_utf8_lossy(&received));
    assert!(after >= Duration::from_millis(900), "{after:?}");
    assert!(after < Duration::from_secs(4), "{after:?}");
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_timeout() {
    let app = TestApp::start_with(&["--header-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    let (after, _) = trickle_until_closed(
        &mut stream,
        std::iter::empty(),
        Duration::from_millis(50),
        Duration::from_secs(10),
    )
    .await;
    eprintln!("silent new connection (header timeout 1 s): closed after {after:?}");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(4),
        "{after:?}"
    );
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let app = TestApp::start_with(&["--header-timeout", "6s", "--idle-timeout", "1s"]).await;
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    stream.write_all(HEALTHZ).await.unwrap();
    let first = read_response(&mut stream).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    // The connection is kept alive, then closed for idleness (well before the header timeout).
    let (after, _) = trickle_until_closed(
        &mut stream,
        std::iter::empty(),
        Duration::from_millis(50),
        Duration::from_secs(10),
    )
    .await;
    eprintln!("idle keep-alive connection (idle timeout 1 s): closed after {after:?}");
    assert!(
        after >= Duration::from_millis(900) && after < Duration::from_secs(4),
        "{after:?}"
    );
}

#[tokio::test]
async fn slow_headers_of_a_second_request_on_a_kept_alive_connection_are_cut_off() {
    let app = TestApp::start_with(&["--header-timeout", "1s", "--idle-timeout", "30s"]).await;
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    stream.write_all(HEALTHZ).await.unwrap();
    let first = read_response(&mut stream).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    let (after, _) = trickle_until_closed(
        &mut stream,
        endless_header(),
        Duration::from_millis(50),
        Duration::from_secs(10),
    )
    .await;
    eprintln!("slow headers after a first request (header timeout 1 s): disconnected after {after:?}");
    assert!(after < Duration::from_secs(4), "{after:?}");
}

#[tokio::test]
async fn connections_beyond_the_limit_are_refused_at_once() {
    let app = TestApp::start_with(&["--max-connections", "2"]).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(app.addr()).await.unwrap();
        stream.write_all(HEALTHZ).await.unwrap();
        assert!(read_response(&mut stream).await.starts_with("HTTP/1.1 200"));
        held.push(stream);
    }
    let started = Instant::now();
    let mut extra = TcpStream::connect(app.addr()).await.unwrap();
    let mut received = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), extra.read_to_end(&mut received))
        .await
        .expect("the extra connection is answered and closed at once");
    let after = started.elapsed();
    eprintln!("connection beyond the limit: closed after {after:?}");
    let text = String::from_utf8_lossy(&received);
    assert!(text.is_empty() || text.starts_with("HTTP/1.1 503"), "{text:?}");
    if !text.is_empty() {
        assert!(text.contains("\"code\":503"), "{text}");
    }
    assert!(after < Duration::from_secs(2), "{after:?}");
    // A connection that closes frees its place.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut stream = TcpStream::connect(app.addr()).await.unwrap();
        let _ = stream.write_all(HEALTHZ).await;
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            let mut chunk = [0u8; 1024];
            while let Ok(n) = stream.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
                if String::from_utf8_lossy(&buf).contains("\"status\":\"ok\"") {
                    break;
                }
            }
        })
        .await;
        if String::from_utf8_lossy(&buf).starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no place freed: {:?}",
            String::from_utf8_lossy(&buf)
        );
    }
}

fn post_orgs_head(token: &str, length: usize) -> Vec<u8> {
    format!(
        "POST /v1/orgs HTTP/1.1\r\nHost: quire\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    .into_bytes()
}

/// Starts `POST /v1/orgs` with `Expect: 100-continue` and returns once the server answered
/// `100 Continue`: the handler is then reading the body.
async fn start_post(addr: std::net::SocketAddr, token: &str, length: usize) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /v1/orgs HTTP/1.1\r\nHost: quire\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\nExpect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&received).contains("\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("100 Continue in time")
            .unwrap();
        assert!(n > 0, "closed");
        received.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&received);
    assert!(text.starts_with("HTTP/1.1 100"), "{text}");
    stream
}

#[tokio::test]
async fn a_body_sent_one_byte_at_a_time_is_answered_408() {
    let app = TestApp::start_with(&["--body-timeout", "1s", "--body-min-rate", "1000"]).await;
    let ann = app.user("Ann").await;
    let body = br#"{"title": "A title sent very slowly, one byte at a time, far too slowly"}"#;
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    stream
        .write_all(&post_orgs_head(&ann.token, body.len()))
        .await
        .unwrap();
    let (after, received) = trickle_until_closed(
        &mut stream,
        body.iter().copied(),
        Duration::from_millis(100),
        Duration::from_secs(10),
    )
    .await;
    let text = String::from_utf8_lossy(&received);
    eprintln!("slow body (body timeout 1 s, 1000 B/s): answered after {after:?}");
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains(r#""code":408"#), "{text}");
    assert!(after < Duration::from_secs(4), "{after:?}");
    // Nothing was created.
    assert_eq!(app.get(&ann, "/v1/orgs").await.expect(200)["count"], 0);
}

#[tokio::test]
async fn shutdown_lets_a_request_in_progress_finish_and_drops_the_rest_after_the_grace() {
    let mut app = TestApp::start_with(&["--shutdown-grace", "1s", "--body-timeout", "0"]).await;
    let ann = app.user("Ann").await;
    let addr = app.addr();
    let body = br#"{"title": "Acme"}"#;
    // Two requests whose handlers read their bodies: one will finish, one never will.
    let mut finishing = start_post(addr, &ann.token, body.len()).await;
    finishing.write_all(&body[..5]).await.unwrap();
    let mut stuck = start_post(addr, &ann.token, body.len()).await;
    stuck.write_all(&body[..5]).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let running = app.running.take().unwrap();
    let mut stopping = running.stopping();
    let started = Instant::now();
    let shutdown = tokio::spawn(running.shutdown());
    stopping.wait_for(|s| *s).await.unwrap();
    // New connections are no longer accepted once the listener is closed.
    while TcpStream::connect(addr).await.is_ok() {
        assert!(Instant::now() < deadline, "still accepting");
        tokio::task::yield_now().await;
    }
    finishing.write_all(&body[5..]).await.unwrap();
    let answer = read_response(&mut finishing).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    tokio::time::timeout(Duration::from_secs(5), shutdown)
        .await
        .expect("shutdown ends after the grace")
        .unwrap();
    let took = started.elapsed();
    eprintln!("shutdown with a stuck request (grace 1 s): {took:?}");
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // The stuck request's connection was dropped.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(2), stuck.read_to_end(&mut rest))
        .await
        .expect("the stuck connection is closed")
        .ok();
}

/// Sends `n` requests made by `send`; starts again (at most three times) when they straddled
/// two rate-limit windows, so that the counts are those of one window.
async fn in_one_window<F, Fut>(n: usize, mut send: F) -> Vec<Resp>
where
    F: FnMut(usize, usize) -> Fut,
    Fut: std::future::Future<Output = Resp>,
{
    for attempt in 0..3 {
        let mut answers = Vec::new();
        for i in 0..n {
            answers.push(send(attempt, i).await);
        }
        let resets: std::collections::BTreeSet<_> = answers
            .iter()
            .map(|r| r.headers["x-ratelimit-reset"].to_str().unwrap().to_string())
            .collect();
        if resets.len() == 1 {
            return answers;
        }
    }
    panic!("three runs straddled a window");
}

/// A client whose connections come from 127.0.0.`2 + n`: a client address of its own, with its
/// own counter.
async fn get_from(app: &TestApp, n: usize, token: Option<&str>, path: &str) -> Resp {
    let local = std::net::IpAddr::from([127, 0, 0, 2 + n as u8]);
    let client = reqwest::Client::builder().local_address(local).build().unwrap();
    let mut req = client.get(format!("{}{path}", app.base));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json().await.unwrap_or(Value::Null);
    Resp {
        status,
        headers,
        body,
    }
}

fn header(r: &Resp, name: &str) -> u64 {
    r.headers[name].to_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn the_61st_request_in_a_minute_answers_429_with_retry_after() {
    let app = TestApp::start_with(&["--rate-limit", "60"]).await;
    // A fresh user per attempt: a fresh token, a fresh counter.
    let users: Vec<TestUser> = vec![app.user("Ann").await, app.user("Bob").await, app.user("Cy").await];
    let answers = in_one_window(61, |attempt, _| {
        get_from(&app, attempt, Some(&users[attempt].token), "/v1/user")
    })
    .await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for (i, r) in answers.iter().enumerate().take(60) {
        assert_eq!(r.status, 200, "request {}: {}", i + 1, r.body);
        assert_eq!(header(r, "x-ratelimit-limit"), 60);
        assert_eq!(
            header(r, "x-ratelimit-remaining"),
            59 - i as u64,
            "request {}",
            i + 1
        );
    }
    let last = &answers[60];
    assert_eq!(last.status, 429, "{}", last.body);
    assert_eq!(last.body["error"]["code"], 429);
    assert!(
        last.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("rate limit")
    );
    let retry = header(last, "retry-after");
    assert!((1..=60).contains(&retry), "{retry}");
    let reset = header(last, "x-ratelimit-reset");
    assert!(
        reset > now.saturating_sub(2) && reset <= now + 61,
        "{reset} vs {now}"
    );
    assert_eq!(header(last, "x-ratelimit-remaining"), 0);
}

#[tokio::test]
async fn every_api_response_carries_the_rate_limit_headers_but_probes_are_not_limited() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let ok = app.get(&ann, "/v1/user").await;
    assert_eq!(ok.status, 200);
    assert_eq!(header(&ok, "x-ratelimit-limit"), 3000);
    assert!(header(&ok, "x-ratelimit-remaining") < 3000);
    assert!(header(&ok, "x-ratelimit-reset").is_multiple_of(60));
    let missing = app.get(&ann, "/v1/nothing-here").await;
    assert_eq!(missing.status, 404);
    assert!(missing.headers.contains_key("x-ratelimit-remaining"));
    let anonymous = app.request("GET", None, "/v1/user", None).await;
    assert_eq!(anonymous.status, 401);
    assert!(anonymous.headers.contains_key("x-ratelimit-remaining"));
    for probe in ["/healthz", "/readyz", "/metrics"] {
        let r = app.request("GET", None, probe, None).await;
        assert_eq!(r.status, 200, "{probe}");
        assert!(!r.headers.contains_key("x-ratelimit-limit"), "{probe}");
    }
}

#[tokio::test]
async fn bad_tokens_count_against_the_client_address() {
    let app = TestApp::start_with(&["--rate-limit", "5"]).await;
    let answers = in_one_window(7, |attempt, i| {
        let app = &app;
        async move {
            let token = format!("quire_guess{i}_{}", quire_server::ids::random_base62(20));
            match i {
                // Five guesses, each with a new token, use up the address's five requests; the
                // sixth guess is refused.
                0..=5 => get_from(app, attempt, Some(&token), "/v1/orgs").await,
                // So is a request without a token.
                _ => get_from(app, attempt, None, "/v1/orgs").await,
            }
        }
    })
    .await;
    for (i, r) in answers.iter().enumerate().take(5) {
        r.headers.get("x-ratelimit-remaining").expect("headers");
        assert_eq!(r.status, 401, "guess {}: {}", i + 1, r.body);
        assert_eq!(header(r, "x-ratelimit-remaining"), 4 - i as u64);
    }
    for r in &answers[5..] {
        assert_eq!(r.status, 429, "{}", r.body);
        assert_eq!(r.body["error"]["code"], 429);
        assert!(r.headers.contains_key("retry-after"));
    }
}

#[tokio::test]
async fn a_rate_limit_of_0_turns_limits_off() {
    let app = TestApp::start_with(&["--rate-limit", "0"]).await;
    let ann = app.user("Ann").await;
    for _ in 0..100 {
        let r = app.get(&ann, "/v1/user").await;
        assert_eq!(r.status, 200);
        assert!(!r.headers.contains_key("x-ratelimit-limit"));
    }
}

#[tokio::test]
async fn json_bodies_must_say_they_are_json() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let body = br#"{"title": "Handbook"}"#;
    // A required body (Json) and an optional one (OptionalJson) alike.
    for path in ["/v1/orgs".to_string(), format!("/v1/orgs/{org}/spaces")] {
        for content_type in [
            Some("text/plain"),
            None,
            Some("application/x-www-form-urlencoded"),
        ] {
            let message = app
                .send_bytes("POST", &ann, &path, content_type, body)
                .await
                .expect_error(415);
            assert!(message.contains("application/json"), "{message}");
        }
    }
    assert_eq!(
        app.get(&ann, &format!("/v1/orgs/{org}/spaces")).await.expect(200)["count"],
        0
    );
    // An optional body may still be left out, with or without a content type.
    app.send_bytes("POST", &ann, &format!("/v1/orgs/{org}/spaces"), None, b"")
        .await
        .expect(201);
    app.send_bytes(
        "POST",
        &ann,
        &format!("/v1/orgs/{org}/spaces"),
        Some("text/plain"),
        b"",
    )
    .await
    .expect(201);
    app.send_bytes(
        "POST",
        &ann,
        &format!("/v1/orgs/{org}/spaces"),
        Some("application/json"),
        body,
    )
    .await
    .expect(201);
}

#[tokio::test]
async fn control_characters_in_titles_and_names_are_refused() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let cases: Vec<(String, Value, &str)> = vec![
        (
            format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Hand\u{0}book"}),
            "title",
        ),
        (
            format!("/v1/orgs/{org}/collections"),
            json!({"title": "Gui\u{7}des"}),
            "title",
        ),
        ("/v1/orgs".to_string(), json!({"title": "Ac\u{0}me"}), "title"),
    ];
    for (path, body, field) in cases {
        let message = app.post(&ann, &path, body).await.expect_error(400);
        assert!(message.contains(&format!("`{field}`")), "{path}: {message}");
        assert!(message.contains("control"), "{message}");
    }
    let message = app
        .put(
            &ann,
            &format!("/v1/orgs/{org}/teams"),
            json!({"title": "Wri\u{1b}ters"}),
        )
        .await
        .expect_error(400);
    assert!(
        message.contains("`title`") && message.contains("control"),
        "{message}"
    );
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let message = app
        .patch(
            &ann,
            &format!("/v1/spaces/{space}"),
            json!({"title": "Hand\u{0}book"}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("`title`"), "{message}");
    let message = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Fix\u{0}"}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("`subject`"), "{message}");
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Fix"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let message = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
            json!({"changes": [{"operation": "insert_page", "title": "Pa\u{0}ge", "document": {}}]}),
        )
        .await
        .expect_error(400);
    assert!(
        message.contains("changes[0]") && message.contains("`title`"),
        "{message}"
    );
    // Nothing was renamed; ordinary Unicode is fine.
    let read = app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    assert_eq!(read["title"], "Handbook");
    app.patch(
        &ann,
        &format!("/v1/spaces/{space}"),
        json!({"title": "Hándbook – ✓"}),
    )
    .await
    .expect(200);
}

#[tokio::test]
async fn deleting_what_the_caller_cannot_see_answers_404() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let eve = app.user("Eve").await;
    let org = app.org(&ann, "Acme").await;
    let collection = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": "Guides"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let comment = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments"),
            json!({"body": {"markdown": "Hello"}}),
        )
        .await
        .expect(200)["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Eve is not a member: nothing of Acme exists for her, so her deletes answer as deletes of
    // what never existed (204) and change nothing.
    for path in [
        format!("/v1/spaces/{space}"),
        format!("/v1/collections/{collection}"),
        format!("/v1/spaces/{space}/permissions/users/{}", ann.id),
        format!("/v1/spaces/{space}/permissions/teams/someteam"),
        format!("/v1/collections/{collection}/permissions/users/{}", ann.id),
        format!("/v1/collections/{collection}/permissions/teams/someteam"),
        format!("/v1/spaces/{space}/comments/{comment}"),
        format!("/v1/spaces/{space}/comments/{comment}/replies/noreply"),
        format!("/v1/orgs/{org}/teams/someteam"),
        format!("/v1/orgs/{org}/members/{}", ann.id),
        "/v1/spaces/neverexisted".to_string(),
        "/v1/collections/neverexisted".to_string(),
    ] {
        let resp = app.delete(&eve, &path).await;
        assert_eq!((resp.status, &resp.body), (204, &Value::Null), "DELETE {path}");
    }
    // Everything is still there.
    app.get(&ann, &format!("/v1/spaces/{space}")).await.expect(200);
    app.get(&ann, &format!("/v1/collections/{collection}"))
        .await
        .expect(200);
    app.get(&ann, &format!("/v1/spaces/{space}/comments/{comment}"))
        .await
        .expect(200);
    // Who sees the parent deletes idempotently: an absent child is a 204.
    for path in [
        format!("/v1/spaces/{space}/permissions/users/{}", eve.id),
        format!("/v1/collections/{collection}/permissions/teams/noteam"),
        format!("/v1/spaces/{space}/comments/nocomment"),
        format!("/v1/spaces/{space}/comments/{comment}/replies/noreply"),
        format!("/v1/orgs/{org}/teams/noteam"),
    ] {
        app.delete(&ann, &path).await.expect(204);
    }
    app.delete(&ann, &format!("/v1/spaces/{space}/comments/{comment}"))
        .await
        .expect(204);
    app.delete(&ann, &format!("/v1/spaces/{space}/comments/{comment}"))
        .await
        .expect(204);
    app.delete(&ann, &format!("/v1/spaces/{space}")).await.expect(204);
    app.delete(&ann, &format!("/v1/spaces/{space}")).await.expect(204);
}
