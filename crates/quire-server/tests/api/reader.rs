//! The reader site: published sites served as HTML at `/s/{basename or id}/` and on their
//! hostnames, with visibility (share links, visitor tokens), adaptive sections, the machine
//! files, caching, and every internal link of a rendered site answering.

use std::collections::{BTreeSet, VecDeque};

use reqwest::header::HeaderMap;
use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::site::{SiteBuilder, handbook_pages, id, page, visitor_key, visitor_token};
use crate::support::{TestApp, TestUser, gunzip};

/// A visitor's browser: no token, no redirects followed, cookies given by hand.
pub(crate) struct Browser {
    client: reqwest::Client,
    pub(crate) base: String,
}

pub(crate) struct Page {
    pub(crate) status: u16,
    headers: HeaderMap,
    pub(crate) body: String,
}

impl Page {
    pub(crate) fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
}

impl Browser {
    pub(crate) fn new(app: &TestApp) -> Browser {
        Browser {
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            base: format!("http://{}", app.addr()),
        }
    }

    pub(crate) async fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Page {
        let mut req = self.client.get(format!("{}{path}", self.base));
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let body = resp.text().await.unwrap();
        Page {
            status,
            headers,
            body,
        }
    }

    pub(crate) async fn get(&self, path: &str) -> Page {
        self.get_with(path, &[]).await
    }

    /// `path` asked with `Accept-Encoding: gzip`: it must come gzip-compressed; its headers,
    /// its size as sent and its text once inflated.
    async fn get_gzip(&self, path: &str) -> (HeaderMap, usize, String) {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .header("accept-encoding", "gzip")
            .send()
            .await
            .unwrap();
        assert_eq!(resp.headers()["content-encoding"], "gzip", "{path}");
        let vary = resp.headers()["vary"].to_str().unwrap().to_ascii_lowercase();
        assert!(vary.contains("accept-encoding"), "{path}: Vary {vary}");
        let headers = resp.headers().clone();
        let packed = resp.bytes().await.unwrap();
        let text = String::from_utf8(gunzip(&packed)).unwrap();
        (headers, packed.len(), text)
    }
}

/// The `href` and `src` values of a page, unescaped.
pub(crate) fn links(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (at, _) in html.match_indices(attr) {
            let rest = &html[at + attr.len()..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].replace("&amp;", "&"));
            }
        }
    }
    out
}

/// The HTML parse errors of a page (html5ever, as browsers parse).
pub(crate) fn parse_errors(html: &str) -> Vec<String> {
    use html5ever::tendril::TendrilSink;
    let options = html5ever::ParseOpts {
        tree_builder: html5ever::tree_builder::TreeBuilderOpts {
            exact_errors: true,
            scripting_enabled: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let dom = html5ever::parse_document(markup5ever_rcdom::RcDom::default(), options).one(html);
    dom.errors.take().iter().map(|e| e.to_string()).collect()
}

/// A space with the handbook's pages ([`handbook_pages`]: a home page with an image and a
/// code block, a group of nested pages), a hidden page and a page left out of search; a site
/// showing it at its root, published as `handbook`. Answers (org, space, site).
async fn handbook(app: &TestApp, owner: &TestUser) -> (String, String, String) {
    let mut changes = handbook_pages();
    changes.extend([
        json!({"operation": "insert_page", "title": "Secret notes", "hidden": true,
               "document": {"markdown": "# Secret notes\n\nThe quokka hides here.\n"}}),
        json!({"operation": "insert_page", "title": "Quiet", "noIndex": true,
               "document": {"markdown": "# Quiet\n\nThe wombat is not searched.\n"}}),
    ]);
    let built = SiteBuilder::new(app, owner)
        .space("Guide", Value::Array(changes))
        .basename("handbook")
        .build()
        .await;
    (built.org, built.spaces[0].clone(), built.site)
}

#[tokio::test]
async fn reader_serves_pages_navigation_and_machine_files() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, space, site) = handbook(&app, &owner).await;
    let browser = Browser::new(&app);

    // The API points at the reader.
    let json = app
        .get(&owner, &format!("/v1/orgs/{org}/sites/{site}"))
        .await
        .expect(200);
    let published = json["urls"]["published"].as_str().unwrap().to_string();
    assert!(published.ends_with("/s/handbook"), "{published}");

    // The root without its slash goes to the root; the home page is the first page.
    let bare = browser.get("/s/handbook").await;
    assert_eq!(bare.status, 301);
    assert_eq!(bare.header("location"), "/s/handbook/");
    let home = browser.get("/s/handbook/").await;
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(home.header("content-type").starts_with("text/html"));
    assert_eq!(home.header("cache-control"), "public, max-age=0, must-revalidate");
    assert!(
        home.body.contains("<h1 id=\"welcome\">Welcome</h1>"),
        "{}",
        home.body
    );
    assert!(home.body.contains("Hello readers."));
    assert!(home.body.contains("<figure class=\"code"), "a code block");
    assert!(
        home.body.contains("href=\"/s/handbook/guides/setup\""),
        "nested page in the sidebar"
    );
    assert!(
        !home.body.contains(">Secret notes<"),
        "hidden pages are not in the navigation"
    );
    // By id too.
    assert_eq!(browser.get(&format!("/s/{site}/")).await.status, 200);
    // The API's URLs of the space and its pages (`/s/{space id}/...`) lead into the site.
    for (asked, lands) in [
        (format!("/s/{space}"), "/s/handbook/"),
        (format!("/s/{space}/"), "/s/handbook/"),
        (format!("/s/{space}/guides/setup"), "/s/handbook/guides/setup"),
        (format!("/s/{space}/welcome"), "/s/handbook/welcome"),
        // The home page by its own path: served at the root (not for good: a reordered tree
        // makes another page the home).
        ("/s/handbook/welcome".to_string(), "/s/handbook/"),
    ] {
        let moved = browser.get(&asked).await;
        assert_eq!(moved.status, 302, "{asked}");
        assert_eq!(moved.header("location"), lands, "{asked}");
    }
    // A page's URL with a trailing slash goes to the page.
    let moved = browser.get("/s/handbook/guides/setup/").await;
    assert_eq!(
        (moved.status, moved.header("location")),
        (301, "/s/handbook/guides/setup")
    );
    assert_eq!(browser.get("/s/handbook/no/such/page/").await.status, 404);
    let elsewhere = new_space(&app, &owner, &org, "Not on a site").await;
    assert_eq!(browser.get(&format!("/s/{elsewhere}/")).await.status, 404);
    // The API's URL of the site space leads to it.
    let listed = app
        .walk(&owner, &format!("/v1/orgs/{org}/sites/{site}/site-spaces"), 10)
        .await;
    let ss_url = listed[0]["urls"]["published"].as_str().unwrap().to_string();
    let ss_path = ss_url.strip_prefix(&browser.base).expect("on the public URL");
    let moved = browser.get(ss_path).await;
    assert_eq!(moved.status, 301, "{ss_path}");
    assert_eq!(moved.header("location"), "/s/handbook/");

    // The image loads.
    let image = links(&home.body)
        .into_iter()
        .find(|l| l.contains("/blobs/") && l.contains("logo.png"))
        .expect("the image's URL");
    let resp = reqwest::get(image.clone()).await.unwrap();
    assert_eq!(resp.status(), 200, "{image}");
    assert_eq!(resp.headers()["content-type"], "image/png");
    // A public site's files never expire: the same URL all day, cached by anyone.
    assert!(!image.contains("&e="), "{image}");
    assert_eq!(
        resp.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let forged = image.replace("logo.png", "other.png");
    assert_eq!(reqwest::get(forged).await.unwrap().status(), 404);

    // Nested, hidden, unknown pages.
    let setup = browser.get("/s/handbook/guides/setup").await;
    assert_eq!(setup.status, 200);
    assert!(setup.body.contains("zephyr tool"));
    let hidden = browser.get("/s/handbook/secret-notes").await;
    assert_eq!(hidden.status, 200, "hidden pages are served");
    assert!(hidden.body.contains("quokka"));
    let missing = browser.get("/s/handbook/no-such-page").await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("Page not found"), "{}", missing.body);
    assert_eq!(browser.get("/s/no-such-site/").await.status, 404);

    // Markdown, machine files.
    let md = browser.get("/s/handbook/guides/setup.md").await;
    assert_eq!(md.status, 200);
    assert!(md.header("content-type").starts_with("text/markdown"));
    assert!(md.body.starts_with("# Setup"), "{}", md.body);
    let sitemap = browser.get("/s/handbook/sitemap.xml").await;
    assert_eq!(sitemap.status, 200);
    assert!(
        sitemap.body.contains("/s/handbook/guides/setup</loc>"),
        "{}",
        sitemap.body
    );
    assert!(!sitemap.body.contains("secret-notes"));
    let robots = browser.get("/s/handbook/robots.txt").await;
    assert!(robots.body.contains("Allow: /"), "{}", robots.body);
    assert!(robots.body.contains("/s/handbook/sitemap.xml"));
    let llms = browser.get("/s/handbook/llms.txt").await;
    assert_eq!(llms.status, 200);
    assert!(llms.body.contains("Setup"), "{}", llms.body);
    let feed = browser.get("/s/handbook/~feed.xml").await;
    assert_eq!(feed.status, 200);
    assert!(feed.body.contains("<feed"));

    // Search: the visible site spaces, without noIndex pages.
    let found = browser
        .get_with("/s/handbook/~search?q=zephyr", &[("accept", "application/json")])
        .await;
    assert_eq!(found.status, 200, "{}", found.body);
    let results: Value = serde_json::from_str(&found.body).unwrap();
    assert_eq!(results["items"][0]["title"], "Setup", "{results}");
    assert!(
        results["items"][0]["url"]
            .as_str()
            .unwrap()
            .starts_with("/s/handbook/guides/setup"),
        "{results}"
    );
    let quiet = browser
        .get_with("/s/handbook/~search?q=wombat", &[("accept", "application/json")])
        .await;
    let results: Value = serde_json::from_str(&quiet.body).unwrap();
    assert_eq!(results["items"], json!([]), "noIndex pages are not searched");
    let page = browser.get("/s/handbook/~search?q=zephyr").await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("/s/handbook/guides/setup"));

    // ETag: an unchanged page answers 304.
    let etag = home.header("etag").to_string();
    assert!(!etag.is_empty());
    let again = browser
        .get_with("/s/handbook/", &[("if-none-match", &etag)])
        .await;
    assert_eq!(again.status, 304);

    // Every internal link of the site answers.
    let mut seen = BTreeSet::new();
    let mut queue = VecDeque::from(["/s/handbook/".to_string()]);
    let mut pages = 0;
    while let Some(url) = queue.pop_front() {
        if !seen.insert(url.clone()) {
            continue;
        }
        let page = browser.get(&url).await;
        assert_eq!(page.status, 200, "{url} is broken");
        if !page.header("content-type").starts_with("text/html") {
            continue;
        }
        pages += 1;
        let errors = parse_errors(&page.body);
        assert!(errors.is_empty(), "{url}: {errors:?}");
        for link in links(&page.body) {
            let link = link.split('#').next().unwrap_or_default().to_string();
            if link.is_empty() {
                continue;
            }
            if let Some(path) = link.strip_prefix(&browser.base) {
                queue.push_back(path.to_string());
            } else if link.starts_with('/') && !link.starts_with("//") {
                queue.push_back(link);
            }
        }
    }
    assert!(pages >= 4, "pages crawled: {pages}");
    assert!(seen.iter().any(|u| u.contains("/blobs/")), "{seen:?}");
    assert!(seen.iter().any(|u| u.contains("~assets/")), "{seen:?}");

    // A merge to main shows at once.
    write_main(
        &app,
        &owner,
        &space,
        vec![json!([{"operation": "insert_page", "title": "Late news",
                     "document": {"markdown": "# Late news\n\nJust merged.\n"}},
                    {"operation": "insert_page", "title": "Guide",
                     "document": {"markdown": "# Guide\n\nA page at the path of the site space.\n"}}])],
    )
    .await;
    // A page wins over the other URL of the site space (`ss_path`, redirected before).
    let page = browser.get(ss_path).await;
    assert_eq!(page.status, 200, "{ss_path}");
    assert!(
        page.body.contains("A page at the path of the site space."),
        "{ss_path}: {}",
        page.body.lines().find(|l| l.contains("<h1")).unwrap_or("")
    );
    let late = browser.get("/s/handbook/late-news").await;
    assert_eq!(late.status, 200);
    assert!(late.body.contains("Just merged."));
    let changed = browser
        .get_with("/s/handbook/", &[("if-none-match", &etag)])
        .await;
    assert_eq!(changed.status, 200, "the sidebar changed");
    assert!(changed.body.contains("href=\"/s/handbook/late-news\""));

    // The site's redirects apply to paths that name nothing.
    let ss_id = id(&listed[0]);
    let redirects = format!("/v1/orgs/{org}/sites/{site}/redirects");
    app.post(
        &owner,
        &redirects,
        json!({"source": "/old/*", "destination": {"kind": "site-space", "siteSpaceId": ss_id},
               "permanent": true, "captureWildcard": true}),
    )
    .await
    .expect(201);
    app.post(
        &owner,
        &redirects,
        json!({"source": "/blog", "destination": {"kind": "external", "url": "https://blog.example.com/"},
               "permanent": false, "captureWildcard": false}),
    )
    .await
    .expect(201);
    let old = browser.get("/s/handbook/old/guides/setup").await;
    assert_eq!(old.status, 301);
    let next = browser.get(old.header("location")).await;
    assert_eq!(
        next.status,
        301,
        "the site space's own URL: {}",
        old.header("location")
    );
    assert_eq!(next.header("location"), "/s/handbook/guides/setup");
    let blog = browser.get("/s/handbook/blog").await;
    assert_eq!(blog.status, 302);
    assert_eq!(blog.header("location"), "https://blog.example.com/");
    assert_eq!(
        browser.get("/s/handbook/guides/setup").await.status,
        200,
        "pages win"
    );

    // Unpublished: gone.
    app.post(
        &owner,
        &format!("/v1/orgs/{org}/sites/{site}/unpublish"),
        json!({}),
    )
    .await
    .expect(200);
    assert_eq!(browser.get("/s/handbook/").await.status, 404);
}

#[tokio::test]
async fn reader_visibility_share_links_and_visitor_tokens() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, _, site) = handbook(&app, &owner).await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let browser = Browser::new(&app);

    // Unlisted: served, but not for robots.
    app.patch(&owner, &base, json!({"visibility": "unlisted"}))
        .await
        .expect(200);
    let page = browser.get("/s/handbook/").await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("noindex"),
        "{:?} {}",
        page.headers,
        &page.body[..300]
    );
    assert_eq!(page.header("x-robots-tag"), "noindex");
    let robots = browser.get("/s/handbook/robots.txt").await;
    assert!(robots.body.contains("Disallow: /"), "{}", robots.body);
    assert!(
        !browser
            .get("/s/handbook/sitemap.xml")
            .await
            .body
            .contains("<loc>")
    );

    // Share link: refused without a key; the key sets a cookie and leads to the clean URL.
    app.patch(&owner, &base, json!({"visibility": "share-link"}))
        .await
        .expect(200);
    assert_eq!(browser.get("/s/handbook/").await.status, 404);
    let link = app
        .post(
            &owner,
            &format!("{base}/share-links"),
            json!({"name": "Reviewers"}),
        )
        .await
        .expect(201);
    let key = link["key"].as_str().unwrap().to_string();
    let wrong = browser
        .get(&format!("/s/handbook/guides/setup?share=x{key}"))
        .await;
    assert_eq!(wrong.status, 404);
    let entered = browser
        .get(&format!("/s/handbook/guides/setup?share={key}"))
        .await;
    assert_eq!(entered.status, 303);
    assert_eq!(entered.header("location"), "/s/handbook/guides/setup");
    let set = entered.header("set-cookie").to_string();
    assert!(set.starts_with(&format!("quire_share={key};")), "{set}");
    assert!(
        set.contains("Path=/s/handbook/") && set.contains("HttpOnly"),
        "{set}"
    );
    let cookie = format!("quire_share={key}");
    let page = browser
        .get_with("/s/handbook/guides/setup", &[("cookie", &cookie)])
        .await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("zephyr tool"));
    assert_eq!(
        page.header("cache-control"),
        "private, max-age=0, must-revalidate"
    );
    // Its files' URLs expire: a site not everyone may read hands out no lasting links.
    let home = browser.get_with("/s/handbook/", &[("cookie", &cookie)]).await;
    let image = links(&home.body)
        .into_iter()
        .find(|l| l.contains("/blobs/") && l.contains("logo.png"))
        .expect("the image's URL");
    assert!(image.contains("&e="), "{image}");
    let resp = reqwest::get(image.clone()).await.unwrap();
    assert_eq!(
        resp.headers()["cache-control"],
        "private, max-age=3600, immutable"
    );
    app.delete(&owner, &format!("{base}/share-links/{}", id(&link)))
        .await
        .expect(204);
    let revoked = browser
        .get_with("/s/handbook/guides/setup", &[("cookie", &cookie)])
        .await;
    assert_eq!(revoked.status, 404, "a revoked key is refused at once");

    // Visitor tokens: 401 without, admitted through `?jwt_token=`, refused when signed with
    // another key.
    app.patch(&owner, &base, json!({"visibility": "visitor-auth"}))
        .await
        .expect(200);
    let signin = browser.get("/s/handbook/").await;
    assert_eq!(signin.status, 401);
    assert!(!signin.body.contains("Hello readers."), "nothing of the content");
    let secret = visitor_key(&app, &owner, &base).await;
    let token = visitor_token(&secret, &site, json!({}));
    let entered = browser.get(&format!("/s/handbook/?jwt_token={token}")).await;
    assert_eq!(entered.status, 303);
    assert_eq!(entered.header("location"), "/s/handbook/");
    assert!(
        entered
            .header("set-cookie")
            .starts_with(&format!("quire_visitor={token};"))
    );
    let cookie = format!("quire_visitor={token}");
    let page = browser.get_with("/s/handbook/", &[("cookie", &cookie)]).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Hello readers."));
    let forged = visitor_token("another-key", &site, json!({}));
    let refused = browser.get(&format!("/s/handbook/?jwt_token={forged}")).await;
    assert_eq!(refused.status, 401);
    assert!(refused.header("set-cookie").is_empty());
    let refused = browser
        .get_with("/s/handbook/", &[("cookie", &format!("quire_visitor={forged}"))])
        .await;
    assert_eq!(refused.status, 401);

    // A sign-in URL: visitors without a valid token are sent there, with where they were going.
    let auth = format!("{base}/publishing/auth");
    for bad in [json!("ftp://login.example.com/"), json!("/relative"), json!(7)] {
        let error = app
            .patch(&owner, &auth, json!({"fallbackURL": bad}))
            .await
            .expect_error(400);
        assert!(error.contains("fallbackURL"), "{error}");
    }
    let reader = app.user("Reader").await;
    app.add_member(&owner, &org, &reader, Some("read")).await;
    app.patch(
        &reader,
        &auth,
        json!({"fallbackURL": "https://login.example.com/"}),
    )
    .await
    .expect_error(403);
    let set = app
        .patch(
            &owner,
            &auth,
            json!({"fallbackURL": "https://login.example.com/sign-in?from=docs"}),
        )
        .await
        .expect(200);
    assert_eq!(set["fallbackURL"], "https://login.example.com/sign-in?from=docs");
    assert_eq!(set["privateKey"], secret.as_str(), "the key stays");
    assert_eq!(
        app.get(&owner, &auth).await.expect(200)["fallbackURL"],
        "https://login.example.com/sign-in?from=docs"
    );
    let sent = "https://login.example.com/sign-in?from=docs&location=%2Fs%2Fhandbook%2Fguides%2Fsetup";
    let away = browser.get("/s/handbook/guides/setup").await;
    assert_eq!(away.status, 302);
    assert_eq!(away.header("location"), sent);
    assert_eq!(away.header("cache-control"), "no-store");
    assert!(!away.body.contains("zephyr"), "nothing of the content");
    let forged_away = browser
        .get(&format!("/s/handbook/guides/setup?jwt_token={forged}"))
        .await;
    assert_eq!(forged_away.status, 302);
    assert_eq!(forged_away.header("location"), sent, "the token is not passed on");
    let page = browser
        .get_with("/s/handbook/guides/setup", &[("cookie", &cookie)])
        .await;
    assert_eq!(page.status, 200, "a valid token still reads");
    let cleared = app
        .patch(&owner, &auth, json!({"fallbackURL": null}))
        .await
        .expect(200);
    assert!(cleared.get("fallbackURL").is_none(), "{cleared}");
    assert_eq!(browser.get("/s/handbook/").await.status, 401);

    // Signing out: as GitBook's client sets it (with its `backend`), the token is forgotten and
    // the visitor sent to the sign-out URL, else to the site's home.
    let out = browser
        .get_with("/s/handbook/~logout", &[("cookie", &cookie)])
        .await;
    assert_eq!((out.status, out.header("location")), (303, "/s/handbook/"));
    let forget = out.header("set-cookie");
    assert!(
        forget.starts_with("quire_visitor=;") && forget.contains("Max-Age=0"),
        "{forget}"
    );
    let set = app
        .patch(
            &owner,
            &auth,
            json!({"backend": "custom", "logoutURL": "https://login.example.com/bye", "fallbackURL": null}),
        )
        .await
        .expect(200);
    assert_eq!(
        (set["backend"].clone(), set["logoutURL"].clone()),
        (json!("custom"), json!("https://login.example.com/bye"))
    );
    assert_eq!(
        app.get(&owner, &auth).await.expect(200)["logoutURL"],
        "https://login.example.com/bye"
    );
    let out = browser
        .get_with("/s/handbook/~logout", &[("cookie", &cookie)])
        .await;
    assert_eq!(out.header("location"), "https://login.example.com/bye");
    let message = app
        .patch(&owner, &auth, json!({"backend": "integration"}))
        .await
        .expect_error(400);
    assert!(message.contains("backend"), "{message}");
    let message = app
        .patch(&owner, &auth, json!({"logoutURL": "javascript:alert(1)"}))
        .await
        .expect_error(400);
    assert!(message.contains("logoutURL"), "{message}");
    let cleared = app
        .patch(&owner, &auth, json!({"logoutURL": null}))
        .await
        .expect(200);
    assert!(cleared.get("logoutURL").is_none(), "{cleared}");
}

#[tokio::test]
async fn reader_adaptive_sections_and_hostnames() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, guide, site) = handbook(&app, &owner).await;
    let text = |t: &str| {
        json!({"object": "block", "type": "paragraph", "nodes": [
        {"object": "text", "leaves": [{"object": "leaf", "text": t, "marks": []}]}]})
    };
    write_main(
        &app,
        &owner,
        &guide,
        vec![
            json!([{"operation": "insert_page", "title": "Flags", "document": {"document": {
            "object": "document", "data": {}, "nodes": [
                text("For everyone."),
                {"object": "block", "type": "if", "data": {"expression": "visitor.claims.isBeta == true"},
                 "nodes": [text("Only for beta visitors.")]}
            ]}}}]),
        ],
    )
    .await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let browser = Browser::new(&app);
    let beta_space = new_space(&app, &owner, &org, "Beta docs").await;
    write_main(
        &app,
        &owner,
        &beta_space,
        vec![json!([{"operation": "insert_page", "title": "Preview",
                     "document": {"markdown": "# Preview\n\nThe beta feature.\n"}}])],
    )
    .await;
    app.put(
        &owner,
        &format!("{base}/adaptive-schema"),
        json!({"jsonSchema": {"type": "object", "properties": {"isBeta": {"type": "boolean"}}, "additionalProperties": false}}),
    )
    .await
    .expect(200);
    // A first section takes the root's site space, and gets one of the beta space, shown to
    // beta visitors only; a second section of the beta space is for beta visitors too.
    let main = app
        .post(
            &owner,
            &format!("{base}/sections"),
            json!({"spaceId": beta_space, "title": "Main"}),
        )
        .await
        .expect(201);
    let in_main = main["siteSpaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|ss| ss["space"]["id"] == beta_space.as_str())
        .expect("the beta space's site space")
        .clone();
    assert_eq!(in_main["default"], false, "{main}");
    app.patch(
        &owner,
        &format!("{base}/site-spaces/{}", id(&in_main)),
        json!({"condition": "visitor.claims.isBeta == true"}),
    )
    .await
    .expect(200);
    let extra = app
        .post(
            &owner,
            &format!("{base}/sections"),
            json!({"spaceId": beta_space, "title": "Extra"}),
        )
        .await
        .expect(201);
    app.patch(
        &owner,
        &format!("{base}/sections/{}", id(&extra)),
        json!({"condition": "visitor.claims.isBeta == true"}),
    )
    .await
    .expect(200);
    app.patch(&owner, &base, json!({"adaptiveContent": {"enabled": true}}))
        .await
        .expect(200);
    let variant_url = format!("/s/handbook/{}/", in_main["path"].as_str().unwrap());
    let extra_url = format!("/s/handbook/{}/", extra["path"].as_str().unwrap());

    let home = browser.get("/s/handbook/").await;
    assert_eq!(home.status, 200, "{}", home.body);
    for url in [&variant_url, &extra_url] {
        assert!(
            !home.body.contains(url.as_str()),
            "{url} is not in the navigation"
        );
        assert_eq!(browser.get(url).await.status, 404, "{url}");
    }
    assert!(
        !browser
            .get("/s/handbook/sitemap.xml")
            .await
            .body
            .contains("preview")
    );

    let secret = visitor_key(&app, &owner, &base).await;
    let cookie = format!(
        "quire_visitor={}",
        visitor_token(&secret, &site, json!({"isBeta": true}))
    );
    let home = browser.get_with("/s/handbook/", &[("cookie", &cookie)]).await;
    for url in [&variant_url, &extra_url] {
        assert!(
            home.body.contains(&format!("href=\"{url}\"")),
            "{url}: {}",
            home.body
        );
        let preview = browser.get_with(url, &[("cookie", &cookie)]).await;
        assert_eq!(preview.status, 200, "{url}");
        assert!(preview.body.contains("The beta feature."));
    }
    let sitemap = browser
        .get_with("/s/handbook/sitemap.xml", &[("cookie", &cookie)])
        .await;
    assert!(sitemap.body.contains(&extra_url), "{}", sitemap.body);
    // llms.txt: every site space the visitor sees, each under its title.
    let llms = browser
        .get_with("/s/handbook/llms.txt", &[("cookie", &cookie)])
        .await;
    assert!(llms.body.contains("\n## Beta docs\n"), "{}", llms.body);
    assert!(llms.body.contains("[Preview]("), "{}", llms.body);
    assert!(llms.body.contains("\n## Guide\n"), "{}", llms.body);
    let plain = browser.get("/s/handbook/llms.txt").await;
    assert!(!plain.body.contains("Preview"), "{}", plain.body);
    assert!(
        plain.body.contains("\n## Pages\n"),
        "one site space: {}",
        plain.body
    );
    let flags = browser
        .get_with("/s/handbook/flags", &[("cookie", &cookie)])
        .await;
    assert!(flags.body.contains("Only for beta visitors."), "{}", flags.body);
    let not_beta = format!(
        "quire_visitor={}",
        visitor_token(&secret, &site, json!({"isBeta": false}))
    );
    assert_eq!(
        browser
            .get_with(&extra_url, &[("cookie", &not_beta)])
            .await
            .status,
        404
    );

    // A custom hostname serves the site at its root; the API's paths stay the API's.
    app.patch(&owner, &base, json!({"hostname": "docs.example.com"}))
        .await
        .expect(200);
    let json = app.get(&owner, &base).await.expect(200);
    assert_eq!(json["urls"]["published"], "https://docs.example.com");
    let page = browser
        .get_with("/guides/setup", &[("host", "docs.example.com")])
        .await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("zephyr tool"));
    assert!(page.body.contains("href=\"/guides\""), "links from the root");
    // No redirect leaves the host: `/{section path}//x` (an alias) leads to `/x`.
    let main_path = main["path"].as_str().unwrap();
    let alias = browser
        .get_with(
            &format!("/{main_path}//evil.example/x"),
            &[("host", "docs.example.com")],
        )
        .await;
    assert_eq!(alias.status, 301);
    assert_eq!(alias.header("location"), "/evil.example/x");
    let entered = browser
        .get_with("//evil.example/?share=anything", &[("host", "docs.example.com")])
        .await;
    assert!(
        !entered.header("location").starts_with("//"),
        "{}",
        entered.header("location")
    );
    let api = browser
        .get_with("/v1/user", &[("host", "docs.example.com")])
        .await;
    assert_eq!(api.status, 401, "{}", api.body);
    assert!(api.header("content-type").starts_with("application/json"));
    let other = browser.get_with("/", &[("host", "other.example.com")]).await;
    assert!(other.header("content-type").starts_with("application/json") || other.status == 200);
}

#[tokio::test]
async fn reader_shows_a_merge_on_another_process_within_a_second() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (_, space, _) = handbook(&app, &owner).await;
    let other = app.beside().await;
    let browser = Browser::new(&other);
    let before = browser.get("/s/handbook/").await;
    assert_eq!(before.status, 200);
    assert!(!before.body.contains("Late news"));
    assert_eq!(browser.get("/s/handbook/late-news").await.status, 404);
    write_main(
        &app,
        &owner,
        &space,
        vec![json!([{"operation": "insert_page", "title": "Late news",
                     "document": {"markdown": "# Late news\n\nJust merged.\n"}}])],
    )
    .await;
    let merged = std::time::Instant::now();
    loop {
        let page = browser.get("/s/handbook/late-news").await;
        if page.status == 200 {
            assert!(page.body.contains("Just merged."));
            break;
        }
        assert!(
            merged.elapsed() < std::time::Duration::from_secs(1),
            "the other process still answers {}",
            page.status
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let home = browser.get("/s/handbook/").await;
    assert!(home.body.contains("href=\"/s/handbook/late-news\""));
}

#[tokio::test]
async fn reader_names_sites_by_id_then_the_oldest_basename() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (_, _, first) = handbook(&app, &owner).await;
    // Another organization's site takes the same basename: the older one keeps it.
    let other = app.user("Other").await;
    let second = SiteBuilder::new(&app, &other)
        .org_titled("Elsewhere")
        .titled("Theirs")
        .space(
            "Theirs",
            json!([page("Their home", "# Their home\n\nNot the handbook.\n")]),
        )
        .basename("handbook")
        .build()
        .await
        .site;
    let browser = Browser::new(&app);
    let page = browser.get("/s/handbook/").await;
    assert!(
        page.body.contains("Hello readers."),
        "the older site keeps the basename"
    );
    let theirs = browser.get(&format!("/s/{second}/")).await;
    assert!(
        theirs.body.contains("Not the handbook."),
        "an id always names its site"
    );
    assert!(
        browser
            .get(&format!("/s/{first}/"))
            .await
            .body
            .contains("Hello readers.")
    );

    // Only GET and HEAD.
    let head = browser
        .client
        .head(format!("{}/s/handbook/", browser.base))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    let post = browser
        .client
        .post(format!("{}/s/handbook/", browser.base))
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 405);
    assert_eq!(post.headers()["allow"], "GET, HEAD");
}

#[tokio::test]
async fn reader_site_spaces_own_customization_and_links_between_them() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (org, guide, site) = handbook(&app, &owner).await;
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let other = new_space(&app, &owner, &org, "Version two").await;
    write_main(
        &app,
        &owner,
        &other,
        vec![json!([{"operation": "insert_page", "title": "Changes",
                     "document": {"markdown": "# Changes\n\nWhat changed.\n"}}])],
    )
    .await;
    let second = app
        .post(&owner, &format!("{base}/site-spaces"), json!({"spaceId": other}))
        .await
        .expect(201);
    app.put(
        &owner,
        &format!("{base}/customization"),
        json!({"title": "Team handbook", "styling": {"primaryColor": {"light": "#123456", "dark": "#abcdef"},
               "font": "RobotoSlab", "monospaceFont": "JetBrainsMono"}}),
    )
    .await
    .expect(200);
    app.put(
        &owner,
        &format!("{base}/site-spaces/{}/customization", id(&second)),
        json!({"styling": {"primaryColor": {"light": "#654321", "dark": "#fedcba"}},
               "announcement": {"enabled": true, "message": "Version two is new.", "style": "info"}}),
    )
    .await
    .expect(200);
    // A page of the first space links to a page of the second, and to the second space.
    let changes = app
        .get(&owner, &format!("/v1/spaces/{other}/content/path/changes"))
        .await
        .expect(200);
    let link = |target: Value, label: &str| {
        json!({"object": "inline", "type": "link", "data": {"ref": target},
               "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": label, "marks": []}]}]})
    };
    write_main(
        &app,
        &owner,
        &guide,
        vec![
            json!([{"operation": "insert_page", "title": "Links", "document": {"document": {
                "object": "document", "data": {}, "nodes": [
                {"object": "block", "type": "paragraph", "nodes": [
                    link(json!({"kind": "page", "page": id(&changes), "space": other}), "the changes"),
                    link(json!({"kind": "space", "space": other}), "version two"),
                    link(json!({"kind": "page", "page": "nope", "space": "nowhere"}), "a lost page")
                ]}
            ]}}}]),
        ],
    )
    .await;
    let browser = Browser::new(&app);

    let path = second["path"].as_str().unwrap();
    let links = browser.get("/s/handbook/links").await;
    assert_eq!(links.status, 200, "{}", links.body);
    assert!(
        links
            .body
            .contains(&format!("href=\"/s/handbook/{path}/\">the changes</a>")),
        "the first page of the other site space is at its root: {}",
        links.body
    );
    assert!(
        links
            .body
            .contains(&format!("href=\"/s/handbook/{path}/\">version two</a>"))
    );
    assert!(links.body.contains("a lost page") && !links.body.contains("nowhere"));

    let home = browser.get("/s/handbook/").await;
    assert_eq!(home.status, 200);
    assert!(home.body.contains("Team handbook"), "the site's title");
    assert!(home.body.to_lowercase().contains("#123456"), "the site's color");
    assert!(!home.body.contains("Version two is new."));
    assert!(
        home.body
            .contains(r#"--font:"Roboto Slab",var(--sans);--mono:"JetBrains Mono",var(--monospace);"#),
        "the site's fonts"
    );
    let setup = browser.get("/s/handbook/guides/setup").await;
    assert!(setup.body.contains("class=\"pagination"), "pagination by default");

    let page = browser.get(&format!("/s/handbook/{path}/")).await;
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("What changed."));
    assert!(page.body.contains("Team handbook"), "the site's title stays");
    assert!(page.body.to_lowercase().contains("#654321"), "its own color");
    assert!(
        !page.body.to_lowercase().contains("#123456"),
        "instead of the site's"
    );
    assert!(page.body.contains("Version two is new."), "its own announcement");

    app.put(
        &owner,
        &format!("{base}/customization"),
        json!({"pagination": {"enabled": false}}),
    )
    .await
    .expect(200);
    let setup = browser.get("/s/handbook/guides/setup").await;
    assert!(
        !setup.body.contains("class=\"pagination"),
        "pagination turned off"
    );
    assert!(!setup.body.contains("--font:"), "the default fonts again");
}

/// A page of about 2 KB of markdown, as a docs page is: a paragraph, sections with lists and a
/// code block.
fn typical_markdown(title: &str) -> String {
    let paragraph = "This page explains how the service stores what you write, how it \
                     replicates it across regions, and what to configure before going live. \
                     Read it once before you change the defaults.";
    format!(
        "# {title}\n\n{paragraph}\n\n## Before you start\n\n{paragraph}\n\n- an account with \
         the editor role\n- the command line tool, version 2 or later\n- ten minutes\n\n## \
         Configure\n\n{paragraph}\n\n```yaml\nreplication:\n  regions: [eu-west, us-east]\n  \
         latency_budget_ms: 50\n```\n\n## Check\n\n{paragraph}\n\n1. Open the dashboard.\n2. \
         Look at the replication lag.\n3. Compare it with the budget.\n"
    )
}

/// A space of 2,089 pages four levels deep, imported from a GitBook folder: a home page, then
/// 8 groups of 10 chapters of 5 sections of 4 topics. A page's HTML with the stylesheet and
/// script it loads stays under 100 KB (issue 21: "a typical page weighs under 100 KB before
/// images"), because its sidebar carries its own branch: the other chapters and sections are
/// collapsed and their levels are served apart, at the site space's `~nav/{page id}`.
#[tokio::test]
async fn reader_pages_of_a_large_deep_space_stay_light() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let space = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Large"}),
        )
        .await
        .expect(201));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let write = |path: &str, text: &str| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    };
    let mut summary = String::from("# Table of contents\n\n* [Welcome](README.md)\n");
    write("README.md", &typical_markdown("Welcome"));
    for g in 0..8 {
        summary += &format!("\n## Part {g}\n\n");
        for c in 0..10 {
            let title = format!("Chapter {c} of part {g}");
            summary += &format!("* [{title}](p{g}/c{c}/README.md)\n");
            write(&format!("p{g}/c{c}/README.md"), &typical_markdown(&title));
            for s in 0..5 {
                let title = format!("Section {s} of chapter {c}.{g}");
                summary += &format!("  * [{title}](p{g}/c{c}/s{s}/README.md)\n");
                write(&format!("p{g}/c{c}/s{s}/README.md"), &typical_markdown(&title));
                for t in 0..4 {
                    let title = format!("Topic {t} of section {s}.{c}.{g}");
                    summary += &format!("    * [{title}](p{g}/c{c}/s{s}/t{t}.md)\n");
                    write(&format!("p{g}/c{c}/s{s}/t{t}.md"), &typical_markdown(&title));
                }
            }
        }
    }
    write("SUMMARY.md", &summary);
    let (db, blobs, space_id) = (app.db.clone(), app.blobs(), space.clone());
    let imported =
        tokio::task::spawn_blocking(move || quire_store::import::import_space(&db, &blobs, &space_id, &root))
            .await
            .unwrap()
            .unwrap();
    assert_eq!(imported.pages, 1 + 8 + 8 * 10 * (1 + 5 * (1 + 4)));

    SiteBuilder::new(&app, &owner)
        .in_org(&org)
        .titled("Large docs")
        .existing_space(&space)
        .basename("large")
        .build()
        .await;

    // A topic of the last section of the last chapter of the last part, and the chapter
    // before its own, collapsed.
    let pages = app
        .get(&owner, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let last = |v: &Value| v["pages"].as_array().unwrap().last().unwrap().clone();
    let part = last(&pages);
    let chapters = part["pages"].as_array().unwrap();
    let other_chapter = id(&chapters[8]);
    let topic = last(&last(&last(&part)));
    assert_eq!(topic["title"], "Topic 3 of section 4.9.7");
    let url = format!("/s/large/{}", topic["path"].as_str().unwrap());

    let browser = Browser::new(&app);
    let page = browser.get(&url).await;
    assert_eq!(page.status, 200, "{url}");
    assert!(
        page.body
            .contains("aria-current=\"page\">Topic 3 of section 4.9.7</a>"),
        "{}",
        page.body
    );
    let errors = parse_errors(&page.body);
    assert!(errors.is_empty(), "{errors:?}");
    // The stylesheet and script the page loads (images are not counted).
    let mut weight = page.body.len();
    let mut assets = Vec::new();
    for link in links(&page.body) {
        if link.ends_with(".css") || link.ends_with(".js") {
            let asset = browser.get(&link).await;
            assert_eq!(asset.status, 200, "{link}");
            weight += asset.body.len();
            assets.push((link, asset.body));
        }
    }
    assert_eq!(assets.len(), 2, "one stylesheet, one script");
    println!(
        "a page four levels deep in a {}-page space: {} bytes of HTML, {weight} with its stylesheet and script",
        imported.pages,
        page.body.len()
    );
    assert!(weight < 100_000, "the page weighs {weight} bytes");

    // Browsers take gzip: the page comes compressed, the same bytes once inflated, under a tag
    // of its own, which revalidates.
    let (headers, packed, html) = browser.get_gzip(&url).await;
    let etag = headers["etag"].to_str().unwrap().to_string();
    assert_ne!(etag, page.header("etag"));
    assert_eq!(html, page.body);
    println!("the same page gzip-compressed: {packed} bytes");
    assert!(packed * 2 < html.len(), "{packed} bytes");
    let again = browser
        .get_with(&url, &[("accept-encoding", "gzip"), ("if-none-match", &etag)])
        .await;
    assert_eq!(again.status, 304);
    // So do the stylesheet and the script.
    for (link, plain) in &assets {
        let (_, packed, text) = browser.get_gzip(link).await;
        assert_eq!(&text, plain, "{link}");
        assert!(packed * 2 < plain.len(), "{link}: {packed} bytes");
    }

    // Its branch is open; the other chapters are collapsed, their levels served apart.
    assert!(page.body.contains(">Section 0 of chapter 9.7</a>"));
    assert!(page.body.contains(">Chapter 0 of part 0</a>"), "groups are open");
    assert!(page.body.contains(&format!("<li data-id=\"{other_chapter}\">")));
    assert!(
        !page.body.contains(">Section 0 of chapter 8.7</a>"),
        "a collapsed chapter's sections are not in the page"
    );
    assert!(!page.body.contains(">Topic 0 of section 0.9.7</a>"));
    let nav_url = page
        .body
        .split("data-nav-url=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the sidebar names where collapsed levels are")
        .to_string();
    let level = browser.get(&format!("{nav_url}{other_chapter}")).await;
    assert_eq!(level.status, 200, "{nav_url}{other_chapter}");
    assert!(
        level.body.contains(">Section 0 of chapter 8.7</a>"),
        "{}",
        level.body
    );
    assert_eq!(level.body.matches("<li").count(), 5, "{}", level.body);
}

#[tokio::test]
async fn members_preview_a_site_that_is_not_published_through_its_preview_url() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .space("Guide", Value::Array(handbook_pages()))
        .basename("handbook")
        .unpublished()
        .build()
        .await;
    let browser = Browser::new(&app);
    let by_id = format!("/s/{}/", built.site);
    // Not published: nobody reads it, by basename or by id.
    assert_eq!(browser.get("/s/handbook/").await.status, 404);
    assert_eq!(browser.get(&by_id).await.status, 404);

    let site = app.get(&owner, &built.base).await.expect(200);
    assert_eq!(site["urls"]["preview"], format!("{}{by_id}", app.base));
    let url = app
        .get(&owner, &format!("{}/publishing/preview", built.base))
        .await
        .expect(200)["url"]
        .as_str()
        .unwrap()
        .to_string();
    let path = url.strip_prefix(&app.base).unwrap();
    assert!(path.starts_with(&format!("{by_id}?preview=")), "{url}");

    // The token is kept in a cookie of the site's path; the member goes on at the clean URL.
    let entered = browser.get(path).await;
    assert_eq!(entered.status, 303, "{}", entered.body);
    assert_eq!(entered.header("location"), by_id);
    let set = entered.header("set-cookie").to_string();
    assert!(
        set.starts_with("quire_preview=") && set.contains("HttpOnly"),
        "{set}"
    );
    assert!(set.contains(&format!("Path={by_id}")), "{set}");
    let cookie = set.split(';').next().unwrap().to_string();
    let home = browser.get_with(&by_id, &[("cookie", &cookie)]).await;
    assert_eq!(home.status, 200, "{}", home.body);
    assert!(home.body.contains("Hello readers."), "{}", home.body);
    assert!(home.header("cache-control").starts_with("private"));
    assert_eq!(
        home.header("x-robots-tag"),
        "noindex",
        "a preview is never indexed"
    );
    let setup = browser
        .get_with(&format!("{by_id}guides/setup"), &[("cookie", &cookie)])
        .await;
    assert_eq!(setup.status, 200);
    assert!(setup.body.contains("zephyr"));

    // A token changed in any way previews nothing; neither does one under another name.
    let (name, token) = cookie.split_once('=').unwrap();
    let (expires, signature) = token.split_once('.').unwrap();
    let later = format!("{name}={}.{signature}", expires.parse::<i64>().unwrap() + 1);
    assert_eq!(browser.get_with(&by_id, &[("cookie", &later)]).await.status, 404);
    let forged = format!("{name}={expires}.{}", "A".repeat(signature.len()));
    assert_eq!(browser.get_with(&by_id, &[("cookie", &forged)]).await.status, 404);
    assert_eq!(
        browser
            .get_with("/s/handbook/", &[("cookie", &cookie)])
            .await
            .status,
        404
    );
    // Published, the site reads as ever, by basename, without the token.
    app.post(&owner, &format!("{}/publish", built.base), json!({}))
        .await
        .expect(200);
    assert_eq!(browser.get("/s/handbook/").await.status, 200);
}

/// Imports `files` (path, text) into `space` as `quire admin import` does.
async fn import_folder(app: &TestApp, space: &str, files: &[(&str, &str)]) -> quire_store::import::Imported {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
    let (db, blobs, space_id, root) = (
        app.db.clone(),
        app.blobs(),
        space.to_string(),
        dir.path().to_path_buf(),
    );
    let imported =
        tokio::task::spawn_blocking(move || quire_store::import::import_space(&db, &blobs, &space_id, &root))
            .await
            .unwrap()
            .unwrap();
    drop(dir);
    imported
}

/// The redirects of an imported `.gitbook.yaml` keep old URLs working in every site that shows
/// the space (issue 40): an old path answers 301 to its page's URL in that site space, with or
/// without its trailing slash; a site redirect from the same path wins; an unknown path, or one
/// whose page was deleted since, stays 404; a re-import replaces the set.
#[tokio::test]
async fn reader_follows_the_redirects_of_an_imported_space() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let space = new_space(&app, &owner, &org, "Imported").await;
    let yaml = "redirects:\n  \
        previous/page: guide/setup.md\n  \
        old/path/: guide/\n  \
        installation/docker.md: ./guide/setup.md\n  \
        taken: README.md\n  \
        gone: notes.md\n  \
        broken: nowhere.md\n";
    let imported = import_folder(
        &app,
        &space,
        &[
            (".gitbook.yaml", yaml),
            ("README.md", "# Welcome\n"),
            ("guide/README.md", "# Guide\n"),
            ("guide/setup.md", "# Setup\n"),
            ("notes.md", "# Notes\n"),
        ],
    )
    .await;
    assert_eq!(imported.redirects, 5);
    assert_eq!(
        imported.warnings,
        [
            ".gitbook.yaml: the redirect from \"broken\" to \"nowhere.md\" matches no file of the imported folder; skipped"
        ]
    );
    let built = SiteBuilder::new(&app, &owner)
        .in_org(&org)
        .existing_space(&space)
        .basename("moved")
        .build()
        .await;

    let browser = Browser::new(&app);
    let moved = |path: &str| {
        let path = path.to_string();
        let browser = &browser;
        async move {
            let page = browser.get(&path).await;
            (page.status, page.header("location").to_string())
        }
    };
    let permanent = |to: &str| (301, to.to_string());
    assert_eq!(moved("/s/moved/guide/setup").await.0, 200);
    assert_eq!(
        moved("/s/moved/previous/page").await,
        permanent("/s/moved/guide/setup")
    );
    assert_eq!(
        moved("/s/moved/previous/page/").await,
        permanent("/s/moved/guide/setup")
    );
    assert_eq!(moved("/s/moved/old/path").await, permanent("/s/moved/guide"));
    assert_eq!(
        moved("/s/moved/installation/docker.md").await,
        permanent("/s/moved/guide/setup")
    );
    assert_eq!(moved("/s/moved/taken").await, permanent("/s/moved/"));
    assert_eq!(moved("/s/moved/unknown").await.0, 404);
    assert_eq!(moved("/s/moved/broken").await.0, 404);
    assert_eq!(
        moved("/s/moved/Previous/Page").await.0,
        404,
        "sources match exactly"
    );

    // The site's own redirect from the same path wins.
    app.post(
        &owner,
        &format!("{}/redirects", built.base),
        json!({"source": "/taken", "destination": {"kind": "external", "url": "https://elsewhere.example.com/"},
               "permanent": false, "captureWildcard": false}),
    )
    .await
    .expect(201);
    assert_eq!(
        moved("/s/moved/taken").await,
        (302, "https://elsewhere.example.com/".to_string())
    );

    // Kept with the space: a second site shows it below its own home, at the site space's path.
    let other = SiteBuilder::new(&app, &owner)
        .in_org(&org)
        .space("Intro", Value::Array(vec![page("Start", "# Start\n")]))
        .existing_space(&space)
        .basename("moved-too")
        .build()
        .await;
    let ss_path = other.added[1]["path"].as_str().unwrap().to_string();
    assert_eq!(
        moved(&format!("/s/moved-too/{ss_path}/previous/page")).await,
        permanent(&format!("/s/moved-too/{ss_path}/guide/setup"))
    );
    assert_eq!(moved("/s/moved-too/previous/page").await.0, 404, "not the home's");

    // A page deleted since leads nowhere.
    assert_eq!(moved("/s/moved/gone").await, permanent("/s/moved/notes"));
    let pages = app
        .get(&owner, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let notes = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["title"] == "Notes")
        .map(id)
        .unwrap();
    write_main(
        &app,
        &owner,
        &space,
        vec![json!([{"operation": "delete_page", "page": notes}])],
    )
    .await;
    assert_eq!(moved("/s/moved/gone").await.0, 404);

    // A re-import replaces the set.
    let again = import_folder(
        &app,
        &space,
        &[
            (".gitbook.yaml", "redirects:\n  newer/page: setup.md\n"),
            ("README.md", "# Welcome\n"),
            ("setup.md", "# Setup\n"),
        ],
    )
    .await;
    assert_eq!(again.redirects, 1);
    assert_eq!(moved("/s/moved/newer/page").await, permanent("/s/moved/setup"));
    assert_eq!(moved("/s/moved/previous/page").await.0, 404);
    let space_id = space.clone();
    let kept = app
        .db
        .read(move |c| quire_store::import::redirects::page_for(c, &space_id, "previous/page"))
        .await
        .unwrap();
    assert_eq!(kept, None, "the old set is gone");
}
