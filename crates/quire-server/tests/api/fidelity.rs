//! A folder written the way GitBook exports a space (HTML tables with card views and hidden
//! headers, bare and aligned `<img>`, `<a name>` anchors, headings linked by GitBook's anchors,
//! a SUMMARY entry without a link), imported with quire's import and published: what a team
//! moving off GitBook sees on the reader site and gets back from the `.md` export.

use base64::Engine as _;
use serde_json::json;

use crate::reader::{Browser, links, parse_errors};
use crate::support::TestApp;
use crate::support::site::{SiteBuilder, id};

const HOME: &str = r##"# Welcome

Intro with a screenshot <img src=".gitbook/assets/shot.png" alt="Shot" width="600"> between two lines.

<table data-view="cards"><thead><tr><th></th><th></th><th data-hidden data-card-cover data-type="files"></th><th data-hidden data-card-target data-type="content-ref"></th></tr></thead><tbody>
<tr><td><strong>Guide</strong></td><td>Read the guide &#x26; more</td><td><a href=".gitbook/assets/cover.png">cover.png</a></td><td><a href="guide/setup.md">setup.md</a></td></tr>
</tbody></table>

<table data-header-hidden><thead><tr><th width="134"></th><th></th></tr></thead><tbody><tr><td><code>floor</code></td><td><ul><li>rounds down</li><li>never up</li></ul></td></tr></tbody></table>

<div align="left"><img src=".gitbook/assets/bare.png" alt="Bare"></div>

See <a name="legacy-place"></a>this place.

## Abuse via .git/config

## Mocks & webhooks

Links: [git](#abuse-via-.git-config), [mocks](#mocks-and-webhooks), [old mocks](#mocks-&-webhooks), [title](#welcome), [place](#legacy-place).
"##;

#[tokio::test]
async fn gitbooks_html_forms_render_as_content_and_export_as_they_came() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let space = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Moved"}),
        )
        .await
        .expect(201));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let write = |path: &str, bytes: &[u8]| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, bytes).unwrap();
    };
    let png = base64::engine::general_purpose::STANDARD
        .decode(crate::content::PNG)
        .unwrap();
    for name in ["shot.png", "cover.png", "bare.png"] {
        write(&format!(".gitbook/assets/{name}"), &png);
    }
    write("README.md", HOME.as_bytes());
    write("guide/setup.md", b"# Setup\n\nSet it up.\n");
    write(
        "SUMMARY.md",
        b"# Table of contents\n\n* [Welcome](README.md)\n* Guides\n  * [Setup](guide/setup.md)\n",
    );
    let (db, blobs, space_id) = (app.db.clone(), app.blobs(), space.clone());
    let imported =
        tokio::task::spawn_blocking(move || quire_store::import::import_space(&db, &blobs, &space_id, &root))
            .await
            .unwrap()
            .unwrap();
    assert_eq!(imported.pages, 3);
    SiteBuilder::new(&app, &owner)
        .in_org(&org)
        .titled("Moved docs")
        .existing_space(&space)
        .basename("moved")
        .build()
        .await;

    let browser = Browser::new(&app);
    let home = browser.get("/s/moved/").await;
    assert_eq!(home.status, 200);
    let body = &home.body;
    let errors = parse_errors(body);
    assert!(errors.is_empty(), "{errors:?}");
    // No HTML source on the page: tables are tables, images are images.
    assert!(!body.contains("&lt;table") && !body.contains("&lt;img"), "{body}");
    assert!(body.contains("<div class=\"cards\">"), "{body}");
    assert!(
        body.contains("class=\"card table-card\" href=\"/s/moved/guides/setup\""),
        "{body}"
    );
    assert!(body.contains("<strong>Guide</strong>"));
    assert!(body.contains("Read the guide &amp; more"));
    assert!(body.contains("<code>floor</code>") && body.contains("<li>rounds down</li>"));
    // Every image of the source is imported and shown, at its own size.
    let images: Vec<String> = links(body)
        .into_iter()
        .filter(|l| l.contains("/blobs/"))
        .collect();
    for name in ["shot.png", "cover.png", "bare.png"] {
        let url = images
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name} in {images:?}"));
        assert_eq!(reqwest::get(url).await.unwrap().status(), 200, "{url}");
    }
    assert!(body.contains("width=\"600\""), "the inline image keeps its width");
    // Anchors: `<a name>`, GitBook's heading anchors (today's and the earlier rule), the title.
    for anchor in [
        "legacy-place",
        "abuse-via-.git-config",
        "mocks-and-webhooks",
        "mocks-&amp;-webhooks",
        "welcome",
    ] {
        assert!(body.contains(&format!("id=\"{anchor}\"")), "#{anchor} in {body}");
    }
    // The SUMMARY entry without a link lists its pages.
    let group = browser.get("/s/moved/guides").await;
    assert_eq!(group.status, 200);
    assert!(
        group.body.contains("href=\"/s/moved/guides/setup\""),
        "{}",
        group.body
    );

    // The page as markdown gives GitBook's forms back (quire-content's round-trip corpus shows
    // they import to the same content).
    let home_id = id(&app
        .get(&owner, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200)["pages"][0]);
    let md = app
        .get(
            &owner,
            &format!("/v1/spaces/{space}/content/page/{home_id}?format=markdown"),
        )
        .await
        .expect(200);
    let md = md["markdown"].as_str().unwrap();
    assert!(md.contains("<table data-view=\"cards\">"), "{md}");
    assert!(
        md.contains("<table data-header-hidden><thead><tr><th width=\"134\">"),
        "{md}"
    );
    assert!(md.contains("<a id=\"legacy-place\"></a>"), "{md}");
    assert!(md.contains("<div align=\"left\"><figure><img src="), "{md}");
    assert!(!md.contains("```html"), "{md}");
    // The reader's `.md` of the page too, whose links are absolute URLs.
    let public_md = browser.get("/s/moved/index.md").await;
    assert_eq!(public_md.status, 200);
    assert!(
        public_md.body.contains("<a id=\"legacy-place\"></a>"),
        "{}",
        public_md.body
    );
    assert!(
        public_md.body.contains("<table data-view=\"cards\">"),
        "{}",
        public_md.body
    );
}
