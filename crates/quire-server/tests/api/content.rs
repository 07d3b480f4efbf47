//! Content: revisions, pages, files, markdown and documents, written through change requests.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A 1x1 PNG.
pub const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

pub async fn space_with_cr(app: &TestApp, user: &TestUser) -> (String, String, String) {
    let org = app.org(user, "Docs").await;
    let space = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Handbook", "empty": true}),
        )
        .await
        .expect(201);
    let space = space["id"].as_str().unwrap().to_string();
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Write"}),
        )
        .await
        .expect(201);
    (org, space, cr["id"].as_str().unwrap().to_string())
}

fn find<'a>(pages: &'a Value, title: &str) -> &'a Value {
    fn walk<'a>(pages: &'a Value, title: &str) -> Option<&'a Value> {
        for p in pages.as_array()? {
            if p["title"] == title {
                return Some(p);
            }
            if let Some(found) = walk(&p["pages"], title) {
                return Some(found);
            }
        }
        None
    }
    walk(pages, title).unwrap_or_else(|| panic!("no page {title} in {pages}"))
}

#[tokio::test]
async fn a_new_space_has_a_first_revision() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = app
        .post(&ann, &format!("/v1/orgs/{org}/spaces"), json!({"title": "S"}))
        .await
        .expect(201);
    let id = space["id"].as_str().unwrap();
    assert!(!space["revision"].as_str().unwrap().is_empty());
    let content = app
        .get(&ann, &format!("/v1/spaces/{id}/content"))
        .await
        .expect(200);
    assert_eq!(content["object"], "revision");
    assert_eq!(content["id"], space["revision"]);
    assert_eq!(content["type"], "edits");
    assert_eq!(content["pages"].as_array().unwrap().len(), 1);
    let empty = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "E", "empty": true}),
        )
        .await
        .expect(201);
    let pages = app
        .get(
            &ann,
            &format!("/v1/spaces/{}/content/pages", empty["id"].as_str().unwrap()),
        )
        .await
        .expect(200);
    assert_eq!(pages["pages"], json!([]));
}

#[tokio::test]
async fn a_batch_inserts_pages_linked_by_ref_and_an_image_readable_in_both_formats() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let resp = app
        .post(
            &ann,
            &format!("{base}?compat=false"),
            json!({"changes": [
                {"operation": "insert_files", "files": [{"ref": "logo", "name": "logo.png", "contentType": "image/png", "base64": PNG}]},
                {"operation": "insert_page", "ref": "guide", "title": "Guide",
                 "document": {"markdown": "---\ndescription: All about it\n---\n\n# Guide\n\nRead the [setup](./setup.md).\n\n![Logo](./logo)\n"}},
                {"operation": "insert_page", "ref": "setup", "into": "guide",
                 "document": {"markdown": "# Setup\n\nBack to the [guide](./guide.md#top).\n\n* one\n* **two**\n"}}
            ]}),
        )
        .await
        .expect(200);
    assert_eq!(resp["changeRequest"]["object"], "change-request");
    let changes = resp["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0]["object"], "created_page");
    assert_eq!(changes[0]["ref"], "guide");
    let guide_id = changes[0]["page"]["id"].as_str().unwrap().to_string();
    let setup_id = changes[1]["page"]["id"].as_str().unwrap().to_string();
    let file = &resp["insertedFiles"][0];
    assert_eq!(file["name"], "logo.png");
    assert_eq!(file["contentType"], "image/png");
    assert_eq!(file["dimensions"], json!({"width": 1, "height": 1}));
    let file_id = file["id"].as_str().unwrap().to_string();
    // The tree.
    let pages = app.get(&ann, &format!("{base}/pages")).await.expect(200);
    let guide = find(&pages["pages"], "Guide");
    assert_eq!(guide["id"], guide_id.as_str());
    assert_eq!(guide["path"], "guide");
    assert_eq!(guide["description"], "All about it");
    assert_eq!(guide["type"], "document");
    assert_eq!(guide["pages"][0]["id"], setup_id.as_str());
    assert_eq!(guide["pages"][0]["path"], "guide/setup");
    // Document format: links are references by id.
    let setup = app
        .get(&ann, &format!("{base}/page/{setup_id}?format=document"))
        .await
        .expect(200);
    let text = setup["document"].to_string();
    assert!(text.contains(&format!("\"page\":\"{guide_id}\"")), "{text}");
    let guide_doc = app
        .get(&ann, &format!("{base}/page/{guide_id}?format=document"))
        .await
        .expect(200);
    let text = guide_doc["document"].to_string();
    assert!(text.contains(&format!("\"page\":\"{setup_id}\"")), "{text}");
    assert!(text.contains(&format!("\"file\":\"{file_id}\"")), "{text}");
    // Markdown format: the page file, links written relative to it, stable on a round trip.
    let md = app
        .get(&ann, &format!("{base}/page/{guide_id}?format=markdown"))
        .await
        .expect(200);
    let markdown = md["markdown"].as_str().unwrap().to_string();
    assert!(markdown.contains("# Guide"), "{markdown}");
    assert!(markdown.contains("description: All about it"), "{markdown}");
    assert!(markdown.contains("(setup.md)"), "{markdown}");
    assert!(markdown.contains(&format!("/files/{file_id}")), "{markdown}");
    assert!(md.get("document").is_none());
    let plain = app
        .get(&ann, &format!("{base}/page/{guide_id}"))
        .await
        .expect(200);
    assert!(plain.get("markdown").is_none() && plain["documentId"].is_string());
    app.post(&ann, &base, json!({"changes": [{"operation": "update_page", "page": guide_id, "document": {"markdown": markdown}}]}))
        .await
        .expect(200);
    let again = app
        .get(&ann, &format!("{base}/page/{guide_id}?format=markdown"))
        .await
        .expect(200);
    assert_eq!(again["markdown"], markdown.as_str());
    let again_doc = app
        .get(&ann, &format!("{base}/page/{guide_id}?format=document"))
        .await
        .expect(200);
    assert_eq!(
        again_doc["document"], guide_doc["document"],
        "keys and content survive the round trip"
    );
    // The JSON document is accepted back as is.
    app.post(&ann, &base, json!({"changes": [{"operation": "update_page", "page": setup_id, "document": {"document": setup["document"]}}]}))
        .await
        .expect(200);
    // Reads by path, files and the download URL.
    let by_path = app
        .get(&ann, &format!("{base}/path/guide/setup?format=markdown"))
        .await
        .expect(200);
    assert_eq!(by_path["id"], setup_id.as_str());
    assert!(
        by_path["markdown"]
            .as_str()
            .unwrap()
            .contains("[guide](README.md#top)"),
        "{by_path}"
    );
    let files = app.get(&ann, &format!("{base}/files")).await.expect(200);
    assert_eq!(files["count"], 1);
    let url = files["items"][0]["downloadURL"].as_str().unwrap().to_string();
    let download = reqwest::get(&url).await.unwrap();
    assert_eq!(download.status(), 200);
    assert_eq!(download.headers()["content-type"], "image/png");
    let bytes = download.bytes().await.unwrap();
    assert_eq!(bytes.len(), 70);
    let tampered = url.replace("&s=", "&s=x");
    assert_eq!(reqwest::get(&tampered).await.unwrap().status(), 404);
    app.get(&ann, &format!("{base}/files/{file_id}"))
        .await
        .expect(200);
    app.get(&ann, &format!("{base}/files/nosuchfile"))
        .await
        .expect_error(404);
    app.get(&ann, &format!("{base}/page/nosuchpage"))
        .await
        .expect_error(404);
    // Main is untouched until the change request merges.
    let main = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    assert_eq!(main["pages"], json!([]));
    // The change request's revision is readable by id too.
    let cr_json = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}"))
        .await
        .expect(200);
    let rev = cr_json["revision"].as_str().unwrap();
    let revision = app
        .get(&ann, &format!("/v1/spaces/{space}/revisions/{rev}"))
        .await
        .expect(200);
    assert_eq!(revision["id"], rev);
    assert_eq!(revision["files"][0]["id"], file_id.as_str());
    let doc_id = plain["documentId"].as_str().unwrap();
    app.get(&ann, &format!("/v1/spaces/{space}/documents/{doc_id}"))
        .await
        .expect(200);
}

#[tokio::test]
async fn renaming_and_moving_a_page_keeps_links_to_it() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let resp = app
        .post(
            &ann,
            &format!("{base}?compat=false"),
            json!({"changes": [
                {"operation": "insert_page", "ref": "a", "title": "A", "document": {"markdown": "See [B](./b.md)."}},
                {"operation": "insert_page", "ref": "b", "title": "B", "document": {}},
                {"operation": "insert_page", "ref": "c", "title": "C", "document": {}}
            ]}),
        )
        .await
        .expect(200);
    let a = resp["changes"][0]["page"]["id"].as_str().unwrap().to_string();
    let b = resp["changes"][1]["page"]["id"].as_str().unwrap().to_string();
    let c = resp["changes"][2]["page"]["id"].as_str().unwrap().to_string();
    app.post(&ann, &base, json!({"changes": [{"operation": "update_page", "page": b, "title": "Bee", "slug": "bee", "into": c, "at": 0}]}))
        .await
        .expect(200);
    let md = app
        .get(&ann, &format!("{base}/page/{a}?format=markdown"))
        .await
        .expect(200);
    assert!(
        md["markdown"].as_str().unwrap().contains("[B](c/bee.md)"),
        "{}",
        md["markdown"]
    );
    let moved = app.get(&ann, &format!("{base}/page/{b}")).await.expect(200);
    assert_eq!(moved["path"], "c/bee");
    assert_eq!(moved["title"], "Bee");
    // Moving under itself is refused.
    let message = app
        .post(
            &ann,
            &base,
            json!({"changes": [{"operation": "update_page", "page": c, "into": b}]}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("changes[0]"), "{message}");
}

#[tokio::test]
async fn a_batch_whose_third_change_is_invalid_writes_nothing() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    let before = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}"))
        .await
        .expect(200)["revision"]
        .clone();
    let message = app
        .post(
            &ann,
            &base,
            json!({"changes": [
                {"operation": "insert_page", "title": "One", "document": {}},
                {"operation": "insert_page", "title": "Two", "document": {}},
                {"operation": "delete_page", "page": "doesnotexist"}
            ]}),
        )
        .await
        .expect_error(400);
    assert!(message.starts_with("changes[2]"), "{message}");
    let after = app
        .get(&ann, &format!("/v1/spaces/{space}/change-requests/{cr}"))
        .await
        .expect(200)["revision"]
        .clone();
    assert_eq!(before, after);
    assert_eq!(
        app.get(&ann, &format!("{base}/pages")).await.expect(200)["pages"],
        json!([])
    );
    // Malformed batches are refused whole too.
    for bad in [
        json!({"changes": []}),
        json!({"changes": [{"operation": "explode"}]}),
        json!({"changes": [{"operation": "insert_page"}]}),
        json!({"changes": [{"operation": "insert_page", "document": {"markdown": "x"}, "slug": "Bad Slug"}]}),
        json!({"nochanges": true}),
    ] {
        app.post(&ann, &base, bad).await.expect_error(400);
    }
    let too_many: Vec<Value> = (0..51)
        .map(|i| json!({"operation": "insert_page", "title": format!("P{i}"), "document": {}}))
        .collect();
    app.post(&ann, &base, json!({"changes": too_many}))
        .await
        .expect_error(400);
}

#[tokio::test]
async fn insert_files_refuses_private_addresses() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    for url in [
        "http://127.0.0.1:9/secret.png",
        "http://localhost/x.png",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
    ] {
        let message = app
            .post(
                &ann,
                &base,
                json!({"changes": [{"operation": "insert_files", "files": [{"name": "x.png", "url": url}]}]}),
            )
            .await
            .expect_error(400);
        assert!(message.contains("private or reserved"), "{url}: {message}");
    }
    // base64 needs a content type and stays under 1 MiB.
    app.post(
        &ann,
        &base,
        json!({"changes": [{"operation": "insert_files", "files": [{"name": "x.png", "base64": PNG}]}]}),
    )
    .await
    .expect_error(400);
    let big = "A".repeat(1_500_000);
    app.post(&ann, &base, json!({"changes": [{"operation": "insert_files", "files": [{"name": "x.bin", "contentType": "application/octet-stream", "base64": big}]}]}))
        .await
        .expect_error(400);
    assert_eq!(
        app.get(&ann, &format!("{base}/files")).await.expect(200)["count"],
        0
    );
}

#[tokio::test]
async fn a_one_page_edit_of_a_thousand_page_space_stores_one_document() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    for batch in 0..20 {
        let changes: Vec<Value> = (0..50)
            .map(|i| {
                json!({"operation": "insert_page", "title": format!("Page {}", batch * 50 + i),
                            "document": {"markdown": format!("Text of page {}.", batch * 50 + i)}})
            })
            .collect();
        app.post(&ann, &base, json!({"changes": changes}))
            .await
            .expect(200);
    }
    let pages = app.get(&ann, &format!("{base}/pages")).await.expect(200);
    assert_eq!(pages["pages"].as_array().unwrap().len(), 1000);
    let target = pages["pages"][500]["id"].as_str().unwrap().to_string();
    let count_objects = || app.scalar("SELECT count(*) FROM objects WHERE space_id = ?1", &space);
    let before = count_objects().await;
    app.post(&ann, &base, json!({"changes": [{"operation": "update_page", "page": target, "document": {"markdown": "Changed."}}]}))
        .await
        .expect(200);
    let after = count_objects().await;
    // One new document and the one bucket holding the page (a 1,000-page tree has 32).
    assert_eq!(
        after - before,
        2,
        "a one-page edit stored {} objects",
        after - before
    );
}

#[tokio::test]
async fn templates_fill_a_space() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "T", "empty": true}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/content/template"),
        json!({"id": "getting-started", "params": {"contentRefs": {"support": {"kind": "url", "url": "https://help.example.com"}}}}),
    )
    .await
    .expect(201);
    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let titles: Vec<&str> = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Introduction", "Quickstart", "FAQ"]);
    // Clients that take gzip get the same tree compressed; others get it plain.
    let tree_path = format!("/v1/spaces/{space}/content/pages");
    app.assert_same_json_gzip_or_plain(&ann, &tree_path, "br;q=0.9, gzip", "gzip;q=0, br", &pages)
        .await;
    let faq = pages["pages"][2]["id"].as_str().unwrap();
    let md = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/content/page/{faq}?format=markdown"),
        )
        .await
        .expect(200);
    assert!(
        md["markdown"]
            .as_str()
            .unwrap()
            .contains("https://help.example.com")
    );
    assert!(
        md["markdown"].as_str().unwrap().contains("(introduction.md)"),
        "{}",
        md["markdown"]
    );
    // A page is cached per encoding: compressed and plain answers hold the same JSON.
    let page_path = format!("/v1/spaces/{space}/content/page/{faq}?format=markdown");
    app.assert_same_json_gzip_or_plain(&ann, &page_path, "gzip", "", &md)
        .await;
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/content/template"),
        json!({"id": "nope"}),
    )
    .await
    .expect_error(400);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/content/template"),
        json!({"id": "blank", "params": {"contentRefs": {"x": {"kind": "url", "url": "u"}}}}),
    )
    .await
    .expect_error(400);
}

#[tokio::test]
async fn an_imported_folder_with_a_summary_yields_its_tree_and_working_links() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Docs").await;
    let space = app
        .post(
            &ann,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Imported"}),
        )
        .await
        .expect(201);
    let space = space["id"].as_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    };
    let mut summary = String::from("# Table of contents\n\n* [Welcome](README.md)\n\n## Guides\n\n");
    for i in 0..9 {
        summary += &format!("* [Guide {i}](guides/guide-{i}.md)\n");
        write(
            &format!("guides/guide-{i}.md"),
            &format!(
                "# Guide {i}\n\nNext: [guide {}](guide-{}.md). Home: [welcome](../README.md).\n",
                i + 1,
                i + 1
            ),
        );
    }
    summary += "\n## Reference\n\n* [API](reference/README.md)\n";
    for i in 0..9 {
        summary += &format!("  * [Endpoint {i}](reference/endpoint-{i}.md)\n");
        write(
            &format!("reference/endpoint-{i}.md"),
            &format!("# Endpoint {i}\n\nSee the [first guide](../guides/guide-0.md#top).\n"),
        );
    }
    write("guides/guide-9.md", "# Guide 9\n\nLast one.\n");
    write(
        "README.md",
        "# Welcome\n\n![Logo](.gitbook/assets/logo.png)\n\nStart with [guide 0](guides/guide-0.md).\n",
    );
    write("reference/README.md", "# API\n\nThe reference.\n");
    write("SUMMARY.md", &summary);
    std::fs::create_dir_all(root.join(".gitbook/assets")).unwrap();
    use base64::Engine as _;
    std::fs::write(
        root.join(".gitbook/assets/logo.png"),
        base64::engine::general_purpose::STANDARD.decode(PNG).unwrap(),
    )
    .unwrap();
    let (db, blobs, space_id, dir_path) = (app.db.clone(), app.blobs(), space.clone(), root.to_path_buf());
    let imported = tokio::task::spawn_blocking(move || {
        quire_store::import::import_space(&db, &blobs, &space_id, &dir_path)
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        imported.pages,
        2 + 9 + 1 + 9 + 1,
        "welcome, guides group, nine guides (guide 9 is unlisted), reference group, API, nine endpoints"
    );
    assert_eq!(imported.files, 1);
    // The tree follows SUMMARY.md.
    let pages = app
        .get(&ann, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let top: Vec<(&str, &str)> = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["title"].as_str().unwrap(), p["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        top,
        [
            ("Welcome", "document"),
            ("Guides", "group"),
            ("Reference", "group")
        ]
    );
    let guides = &pages["pages"][1]["pages"];
    assert_eq!(guides.as_array().unwrap().len(), 9);
    assert_eq!(guides[0]["title"], "Guide 0");
    let api = &pages["pages"][2]["pages"][0];
    assert_eq!(api["title"], "API");
    assert_eq!(api["pages"].as_array().unwrap().len(), 9);
    // Links between pages and to the image work.
    let g0 = guides[0]["id"].as_str().unwrap();
    let g1 = guides[1]["id"].as_str().unwrap();
    let doc = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/content/page/{g0}?format=document"),
        )
        .await
        .expect(200);
    assert!(
        doc["document"]
            .to_string()
            .contains(&format!("\"page\":\"{g1}\"")),
        "{}",
        doc["document"]
    );
    let endpoint = api["pages"][3]["id"].as_str().unwrap();
    let doc = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/content/page/{endpoint}?format=document"),
        )
        .await
        .expect(200);
    assert!(
        doc["document"]
            .to_string()
            .contains(&format!("\"page\":\"{g0}\"")),
        "{}",
        doc["document"]
    );
    let welcome = pages["pages"][0]["id"].as_str().unwrap();
    let md = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/content/page/{welcome}?format=markdown"),
        )
        .await
        .expect(200);
    let file = app
        .get(&ann, &format!("/v1/spaces/{space}/content/files"))
        .await
        .expect(200);
    let file_id = file["items"][0]["id"].as_str().unwrap();
    assert!(
        md["markdown"]
            .as_str()
            .unwrap()
            .contains(&format!("/files/{file_id}")),
        "{}",
        md["markdown"]
    );
    let download = reqwest::get(file["items"][0]["downloadURL"].as_str().unwrap())
        .await
        .unwrap();
    assert_eq!(download.status(), 200);
    assert!(
        imported.warnings.iter().any(|w| w.contains("guide-9.md")),
        "{:?}",
        imported.warnings
    );
}

#[tokio::test]
async fn duplicates_and_restores_keep_content_and_files() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let base = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    app.post(
        &ann,
        &base,
        json!({"changes": [
            {"operation": "insert_files", "files": [{"ref": "img", "name": "img.png", "contentType": "image/png", "base64": PNG}]},
            {"operation": "insert_page", "title": "With image", "document": {"markdown": "![x](./img)"}}
        ]}),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let original = app
        .get(&ann, &format!("/v1/spaces/{space}/content"))
        .await
        .expect(200);
    // The copy has the same pages and its own copy of the file bytes.
    let copy = app
        .post(&ann, &format!("/v1/spaces/{space}/duplicate"), json!({}))
        .await
        .expect(201);
    let copy_id = copy["id"].as_str().unwrap();
    let copied = app
        .get(&ann, &format!("/v1/spaces/{copy_id}/content"))
        .await
        .expect(200);
    assert_eq!(copied["pages"][0]["title"], "With image");
    assert_eq!(
        copied["pages"][0]["documentId"],
        original["pages"][0]["documentId"]
    );
    let url = copied["files"][0]["downloadURL"].as_str().unwrap();
    assert!(url.contains(copy_id));
    assert_eq!(reqwest::get(url).await.unwrap().status(), 200);
    // Deleted then restored: same id, same content.
    app.delete(&ann, &format!("/v1/spaces/{space}")).await.expect(204);
    app.get(&ann, &format!("/v1/spaces/{space}/content"))
        .await
        .expect_error(404);
    let restored = app
        .post(&ann, &format!("/v1/spaces/{space}/restore"), json!({}))
        .await
        .expect(200);
    assert_eq!(restored["id"], space.as_str());
    let after = app
        .get(&ann, &format!("/v1/spaces/{space}/content"))
        .await
        .expect(200);
    assert_eq!(after["id"], original["id"]);
    assert_eq!(after["pages"], original["pages"]);
}
