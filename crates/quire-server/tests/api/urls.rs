//! URL lookups: a published URL resolved as the reader serves it (site, section, site space,
//! space, revision, the page path left, an API token for the visitor), redirects for aliases
//! and for a visitor-auth site's sign-in, and a URL of quire resolved to the content it shows.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::site::{BuiltSite, SiteBuilder, handbook_pages, id, visitor_key, visitor_token};
use crate::support::{TestApp, TestUser};

/// `GET /v1/urls/published?url=...` without a token, as GitBook's renderer calls it.
async fn published(app: &TestApp, url: &str, extra: &str) -> crate::support::Resp {
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("url", url)
        .finish();
    app.request("GET", None, &format!("/v1/urls/published?{query}{extra}"), None)
        .await
}

/// The payload of a JWT, unchecked (as GitBook's renderer reads its `apiToken`).
/// A published site "gated" with two sections, Open and Beta, and its published URL.
async fn open_and_beta(app: &TestApp, owner: &TestUser) -> (BuiltSite, String) {
    let built = SiteBuilder::new(app, owner)
        .section("Open", "One")
        .section("Beta", "Two")
        .basename("gated")
        .build()
        .await;
    let root = app.get(owner, &built.base).await.expect(200)["urls"]["published"]
        .as_str()
        .unwrap()
        .to_string();
    (built, root)
}

fn jwt_payload(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("a JWT");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64url");
    serde_json::from_slice(&bytes).expect("JSON claims")
}

#[tokio::test]
async fn a_published_url_resolves_to_what_serves_it() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .space("Handbook", json!(handbook_pages()))
        .basename("docs")
        .build()
        .await;
    let site = app.get(&owner, &built.base).await.expect(200);
    let root = site["urls"]["published"].as_str().unwrap().to_string();
    assert!(root.ends_with("/s/docs"), "{root}");

    let found = published(&app, &format!("{root}/guides/setup"), "")
        .await
        .expect(200);
    let space = app
        .get(&owner, &format!("/v1/spaces/{}", built.spaces[0]))
        .await
        .expect(200);
    assert_eq!(
        (
            found["site"].clone(),
            found["siteSpace"].clone(),
            found["space"].clone(),
            found["revision"].clone(),
            found["organization"].clone(),
        ),
        (
            json!(built.site),
            built.added[0]["id"].clone(),
            json!(built.spaces[0]),
            space["revision"].clone(),
            json!(built.org),
        )
    );
    assert_eq!(
        (
            found["pathname"].clone(),
            found["basePath"].clone(),
            found["siteBasePath"].clone(),
            found["canonicalUrl"].clone(),
            found["complete"].clone(),
            found.get("siteSection").cloned(),
        ),
        (
            json!("guides/setup"),
            json!("/s/docs/"),
            json!("/s/docs/"),
            json!(format!("{root}/guides/setup")),
            json!(true),
            None
        )
    );
    // The API token is a JWT for this visitor, an hour long, for reads.
    let claims = jwt_payload(found["apiToken"].as_str().unwrap());
    assert_eq!(
        (
            claims["site"].clone(),
            claims["space"].clone(),
            claims["scope"].clone()
        ),
        (json!(built.site), json!(built.spaces[0]), json!("read"))
    );
    let lifetime = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
    assert_eq!(lifetime, 3600);

    // POST takes the same URL in a body; the site's root is its first page.
    let posted = app
        .request(
            "POST",
            None,
            "/v1/urls/published",
            Some(json!({"url": format!("{root}/"), "visitor": {"type": "agent"}})),
        )
        .await
        .expect(200);
    assert_eq!(
        (posted["space"].clone(), posted["pathname"].clone()),
        (json!(built.spaces[0]), json!(""))
    );

    // Nothing there, and what is not a URL.
    let base = app.server().urls.base().to_string();
    for nowhere in [
        format!("{base}/s/nothing-here/page"),
        format!("{base}/o/{}", built.org),
        "https://elsewhere.example.com/s/docs/guides/setup".to_string(),
    ] {
        published(&app, &nowhere, "").await.expect_error(404);
    }
    for bad in ["not a url", "ftp://example.com/s/docs/"] {
        let message = published(&app, bad, "").await.expect_error(400);
        assert!(message.contains("url"), "{message}");
    }
    let message = app
        .request(
            "POST",
            None,
            "/v1/urls/published",
            Some(json!({"url": root, "visitor": {"type": "robot"}})),
        )
        .await
        .expect_error(400);
    assert!(message.contains("type"), "{message}");

    // Unpublished: nothing, as for a site that never was.
    app.post(&owner, &format!("{}/unpublish", built.base), json!({}))
        .await
        .expect(200);
    published(&app, &format!("{root}/guides/setup"), "")
        .await
        .expect_error(404);
}

#[tokio::test]
async fn lookups_admit_visitors_as_the_reader_does() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (built, root) = open_and_beta(&app, &owner).await;
    let base = built.base.clone();
    let beta = built.added[1].clone();
    let beta_url = format!("{root}/{}/", beta["path"].as_str().unwrap());

    // A section's own URL is the section: its id comes back, complete (no longer URL leads
    // elsewhere); the root is the default section, and not complete (one does).
    let found = published(&app, &beta_url, "").await.expect(200);
    assert_eq!(
        (
            found["siteSection"].clone(),
            found["basePath"].clone(),
            found["complete"].clone()
        ),
        (
            beta["id"].clone(),
            json!(format!("/s/gated/{}/", beta["path"].as_str().unwrap())),
            json!(true)
        )
    );
    let at_root = published(&app, &format!("{root}/"), "").await.expect(200);
    assert_eq!(
        (at_root["siteSection"].clone(), at_root["complete"].clone()),
        (built.added[0]["id"].clone(), json!(false))
    );
    // The default section's own path is an alias of the root: a redirect to the canonical URL.
    let open = &built.added[0];
    let alias = published(&app, &format!("{root}/{}/", open["path"].as_str().unwrap()), "")
        .await
        .expect(200);
    assert_eq!(
        alias,
        json!({"target": "content", "redirect": format!("{root}/")})
    );

    // Adaptive: a section whose condition fails is not there for this visitor; unsigned claims
    // and a signed token both count.
    app.put(
        &owner,
        &format!("{base}/adaptive-schema"),
        json!({"jsonSchema": {"type": "object", "properties": {
            "isBeta": {"type": "boolean"},
            "unsigned": {"type": "object", "properties": {"plan": {"type": "string"}}, "additionalProperties": false}
        }, "additionalProperties": false}}),
    )
    .await
    .expect(200);
    app.patch(&owner, &base, json!({"adaptiveContent": {"enabled": true}}))
        .await
        .expect(200);
    app.patch(
        &owner,
        &format!("{base}/sections/{}", id(&beta)),
        json!({"condition": "visitor.claims.isBeta == true || visitor.claims.unsigned.plan == \"pro\""}),
    )
    .await
    .expect(200);
    // Hidden, its path is only a page path under the root (which has no such page), as the
    // reader serves it.
    let hidden = published(&app, &beta_url, "").await.expect(200);
    assert_eq!(
        (hidden["siteSection"].clone(), hidden["pathname"].clone()),
        (open["id"].clone(), json!("beta"))
    );
    let resolve = |body: Value| app.request("POST", None, "/v1/urls/published", Some(body));
    let pro = resolve(json!({"url": beta_url, "visitor": {"unsignedClaims": {"plan": "pro"}}}))
        .await
        .expect(200);
    assert_eq!(pro["siteSection"], beta["id"]);
    assert_eq!(
        jwt_payload(pro["apiToken"].as_str().unwrap())["claims"],
        json!({"unsigned": {"plan": "pro"}}),
        "the token carries the claims the lookup was made with"
    );
    let key = visitor_key(&app, &owner, &base).await;
    let token = visitor_token(&key, &built.site, json!({"isBeta": true}));
    published(&app, &beta_url, &format!("&visitorAuthToken={token}"))
        .await
        .expect(200);

    // Visitor-auth: nothing without a token; with `redirectOnError`, the site's sign-in.
    app.patch(&owner, &base, json!({"visibility": "visitor-auth"}))
        .await
        .expect(200);
    published(&app, &beta_url, "").await.expect_error(404);
    published(&app, &beta_url, "&redirectOnError=true")
        .await
        .expect_error(404);
    app.patch(
        &owner,
        &format!("{base}/publishing/auth"),
        json!({"fallbackURL": "https://login.example.com/start"}),
    )
    .await
    .expect(200);
    let redirect = resolve(json!({"url": beta_url, "redirectOnError": true}))
        .await
        .expect(200);
    let mut expected = url::Url::parse("https://login.example.com/start").unwrap();
    expected.query_pairs_mut().append_pair("location", &beta_url);
    assert_eq!(
        redirect,
        json!({"target": "external", "site": built.site, "redirect": expected.as_str()})
    );
    let admitted = resolve(json!({"url": beta_url, "visitor": {"jwtToken": token}}))
        .await
        .expect(200);
    assert_eq!(admitted["siteSection"], beta["id"]);

    // Share links: the key in the URL admits, and is answered back.
    app.patch(&owner, &base, json!({"visibility": "share-link"}))
        .await
        .expect(200);
    let link = app
        .post(&owner, &format!("{base}/share-links"), json!({"name": "Team"}))
        .await
        .expect(201);
    let share = link["key"].as_str().unwrap();
    published(&app, &root, "").await.expect_error(404);
    let shared = published(&app, &format!("{root}/?shareKey={share}"), "")
        .await
        .expect(200);
    assert_eq!(shared["shareKey"], json!(share));
}

#[tokio::test]
async fn a_url_of_quire_resolves_to_the_content_it_shows() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let outsider = app.user("Outsider").await;
    app.org(&outsider, "Elsewhere").await;
    let built = SiteBuilder::new(&app, &owner)
        .space("Handbook", json!(handbook_pages()))
        .basename("docs")
        .build()
        .await;
    let space_id = built.spaces[0].clone();
    let space = app
        .get(&owner, &format!("/v1/spaces/{space_id}"))
        .await
        .expect(200);
    let content = async |user, url: &str| {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("url", url)
            .finish();
        app.get(user, &format!("/v1/urls/content?{query}")).await
    };
    let app_url = space["urls"]["app"].as_str().unwrap().to_string();

    let found = content(&owner, &app_url).await.expect(200);
    assert_eq!(found["space"]["id"], json!(space_id));
    assert!(found.get("page").is_none(), "{found}");
    let page = content(&owner, &format!("{app_url}/guides/setup"))
        .await
        .expect(200);
    assert_eq!(
        (page["space"]["id"].clone(), page["page"]["title"].clone()),
        (json!(space_id), json!("Setup"))
    );
    // A path that names no page is the space.
    let missing = content(&owner, &format!("{app_url}/no/such/page"))
        .await
        .expect(200);
    assert!(missing.get("page").is_none(), "{missing}");

    // A change request, with a page of its own content.
    let cr = app
        .post(
            &owner,
            &format!("/v1/spaces/{space_id}/change-requests"),
            json!({"subject": "Edits"}),
        )
        .await
        .expect(201);
    let cr_url = cr["urls"]["app"].as_str().unwrap().to_string();
    let in_cr = content(&owner, &format!("{cr_url}/guides/setup"))
        .await
        .expect(200);
    assert_eq!(
        (
            in_cr["changeRequest"]["id"].clone(),
            in_cr["page"]["title"].clone()
        ),
        (cr["id"].clone(), json!("Setup"))
    );

    // A collection.
    let collection = app
        .post(
            &owner,
            &format!("/v1/orgs/{}/collections", built.org),
            json!({"title": "Guides"}),
        )
        .await
        .expect(201);
    let found = content(&owner, collection["urls"]["app"].as_str().unwrap())
        .await
        .expect(200);
    assert_eq!(found["collection"]["id"], collection["id"]);

    // A page of the published site: its space and page.
    let site = app.get(&owner, &built.base).await.expect(200);
    let root = site["urls"]["published"].as_str().unwrap();
    let from_site = content(&owner, &format!("{root}/guides/setup")).await.expect(200);
    assert_eq!(
        (
            from_site["space"]["id"].clone(),
            from_site["page"]["title"].clone()
        ),
        (json!(space_id), json!("Setup"))
    );

    // Someone who cannot see the space learns nothing: 404, as for what is not there.
    content(&outsider, &app_url).await.expect_error(404);
    content(&outsider, &format!("{cr_url}/guides/setup"))
        .await
        .expect_error(404);
    content(&outsider, collection["urls"]["app"].as_str().unwrap())
        .await
        .expect_error(404);
    content(
        &owner,
        &format!("{}/o/{}/x/y", app.server().urls.base(), built.org),
    )
    .await
    .expect_error(404);
    content(&owner, "not a url").await.expect_error(400);
}

/// GitBook's renderer reads a published site with the `apiToken` of its lookup: the site, the
/// spaces it shows that visitor (their published revision only), the site's redirects; nothing
/// hidden from the visitor, nothing unpublished, nothing else.
#[tokio::test]
async fn a_lookups_api_token_reads_what_the_site_shows_that_visitor() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let (built, root) = open_and_beta(&app, &owner).await;
    let base = built.base.clone();
    let (one, two) = (built.spaces[0].clone(), built.spaces[1].clone());
    let merge_page = async |title: &str| {
        let crs = format!("/v1/spaces/{one}/change-requests");
        let cr = id(&app
            .post(&owner, &crs, json!({"subject": title}))
            .await
            .expect(201));
        app.post(
            &owner,
            &format!("{crs}/{cr}/content"),
            json!({"changes": [{"operation": "insert_page", "title": title, "document": {"markdown": "Text.\n\n## Hello\n\nMore."}}]}),
        )
        .await
        .expect(200);
        app.post(&owner, &format!("{crs}/{cr}/merge"), json!({}))
            .await
            .expect(200);
    };
    merge_page("Welcome").await;
    app.put(
        &owner,
        &format!("{base}/adaptive-schema"),
        json!({"jsonSchema": {"type": "object", "properties": {
            "unsigned": {"type": "object", "properties": {"plan": {"type": "string"}}, "additionalProperties": false}
        }, "additionalProperties": false}}),
    )
    .await
    .expect(200);
    app.patch(&owner, &base, json!({"adaptiveContent": {"enabled": true}}))
        .await
        .expect(200);
    app.patch(
        &owner,
        &format!("{base}/sections/{}", id(&built.added[1])),
        json!({"condition": "visitor.claims.unsigned.plan == \"pro\""}),
    )
    .await
    .expect(200);
    app.post(
        &owner,
        &format!("{base}/redirects"),
        json!({"source": "/old", "destination": {"kind": "site-section", "siteSectionId": id(&built.added[0])}}),
    )
    .await
    .expect(201);
    let token = async |visitor: Value| {
        app.request(
            "POST",
            None,
            "/v1/urls/published",
            Some(json!({"url": format!("{root}/"), "visitor": visitor})),
        )
        .await
        .expect(200)["apiToken"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let plain = token(json!({"type": "human"})).await;
    let pro = token(json!({"unsignedClaims": {"plan": "pro"}})).await;
    let read = async |token: &str, path: &str| app.request("GET", Some(token), path, None).await;

    // The space the site shows, at its published revision, with its pages and documents.
    let space = read(&plain, &format!("/v1/spaces/{one}")).await.expect(200);
    let revision = space["revision"].as_str().unwrap().to_string();
    let tree = read(
        &plain,
        &format!("/v1/spaces/{one}/revisions/{revision}?metadata=true"),
    )
    .await
    .expect(200);
    let page = tree["pages"][0]["id"].as_str().unwrap().to_string();
    let document = read(
        &plain,
        &format!(
            "/v1/spaces/{one}/revisions/{revision}/page/{page}/document?evaluated=deterministic-only&dereferenced=reusable-contents"
        ),
    )
    .await
    .expect(200);
    // Headings carry GitBook's `meta.id`, their anchor.
    assert_eq!(document["nodes"][1]["meta"]["id"], json!("hello"), "{document}");
    read(&plain, &format!("/v1/spaces/{one}/content/pages"))
        .await
        .expect(200);
    read(
        &plain,
        &format!("/v1/spaces/{one}/revisions/{revision}/reusable-contents/nope/document"),
    )
    .await
    .expect_error(404);
    // The site as that visitor sees it, and its redirects.
    let site = read(&plain, &format!("{base}/published")).await.expect(200);
    let shown: Vec<Value> = site["structure"]["structure"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    assert_eq!(shown, vec![built.added[0]["id"].clone()]);
    let followed = read(&plain, &format!("{base}/redirect?source=/old"))
        .await
        .expect(200);
    assert!(
        followed["target"].as_str().unwrap().starts_with(&root),
        "{followed}"
    );

    // The section hidden from this visitor: its space is absent, as for anyone outside;
    // a visitor whose claims match reads it.
    read(&plain, &format!("/v1/spaces/{two}")).await.expect_error(404);
    read(&pro, &format!("/v1/spaces/{two}")).await.expect(200);
    let pro_site = read(&pro, &format!("{base}/published")).await.expect(200);
    assert_eq!(pro_site["structure"]["structure"].as_array().unwrap().len(), 2);

    // What the site does not publish: a change request, an older revision, another site.
    let cr = app
        .post(
            &owner,
            &format!("/v1/spaces/{one}/change-requests"),
            json!({"subject": "Draft"}),
        )
        .await
        .expect(201);
    let cr_id = id(&cr);
    read(
        &plain,
        &format!("/v1/spaces/{one}/change-requests/{cr_id}/content"),
    )
    .await
    .expect_error(403);
    // A merge moves main on: the revision the site showed before is no longer published, the
    // new one is.
    merge_page("News").await;
    read(&plain, &format!("/v1/spaces/{one}/revisions/{revision}"))
        .await
        .expect_error(404);
    let now = read(&plain, &format!("/v1/spaces/{one}")).await.expect(200)["revision"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(now, revision);
    read(&plain, &format!("/v1/spaces/{one}/revisions/{now}"))
        .await
        .expect(200);
    let other = SiteBuilder::new(&app, &owner)
        .space("Elsewhere", json!(handbook_pages()))
        .basename("other")
        .build()
        .await;
    read(&plain, &format!("/v1/spaces/{}", other.spaces[0]))
        .await
        .expect_error(404);
    read(&plain, &format!("{}/published", other.base))
        .await
        .expect_error(404);
    // Reads only, and only of published content.
    for (method, path) in [
        ("GET", "/v1/user".to_string()),
        ("GET", format!("/v1/orgs/{}/spaces", built.org)),
        ("POST", format!("/v1/spaces/{one}/comments")),
        ("PATCH", format!("/v1/spaces/{one}")),
    ] {
        let body = (method != "GET").then(|| json!({"title": "x", "body": {"markdown": "x"}}));
        app.request(method, Some(&plain), &path, body)
            .await
            .expect_error(403);
    }
    // What the renderer probes and quire does not serve is a clean 404, never 405 or 500.
    for (method, path) in [
        (
            "GET",
            format!("/v1/spaces/{one}/revisions/{revision}/page/{page}/meta-links"),
        ),
        ("GET", format!("/v1/spaces/{one}/embed?url=https://example.com")),
        ("POST", format!("/v1/spaces/{one}/content/computed/document")),
        ("POST", format!("{base}/search")),
        ("POST", format!("{base}/insights/events")),
    ] {
        let body = (method == "POST").then(|| json!({}));
        app.request(method, Some(&plain), &path, body)
            .await
            .expect_error(404);
    }
    // A token that is not quire's own, or was altered, is no token.
    let mut altered = plain.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    read(&altered, &format!("/v1/spaces/{one}"))
        .await
        .expect_error(401);

    // Unpublished: the token reads nothing more.
    app.post(&owner, &format!("{base}/unpublish"), json!({}))
        .await
        .expect(200);
    read(&plain, &format!("/v1/spaces/{one}")).await.expect_error(404);
}
