//! Links and backlinks of main and of change requests.

use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::{TestApp, TestUser};

/// A 1x1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// The ids of the pages of `items` (locations or backlinks), sorted.
fn page_ids(items: &Value) -> Vec<String> {
    let mut ids: Vec<String> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(l["kind"], "page", "{l}");
            l["page"].as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<&str>) -> Vec<String> {
    ids.sort_unstable();
    ids.into_iter().map(str::to_string).collect()
}

/// The item of `list` whose target is the page `page` (without an anchor).
fn page_item<'a>(list: &'a Value, page: &str) -> &'a Value {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| {
            i["targetReference"]["page"] == page && i["targetReference"].get("internalLocation").is_none()
        })
        .unwrap_or_else(|| panic!("no link to {page} in {list}"))
}

struct Site {
    space: String,
    org: String,
    target: String,
    a: String,
    b: String,
    c: String,
}

/// A space whose pages A and B link to the page Target (A also to its anchor), and C links to an
/// external URL and to a URL of this quire.
async fn site(app: &TestApp, ann: &TestUser) -> Site {
    let org = app.org(ann, "Acme").await;
    let space = new_space(app, ann, &org, "Docs").await;
    let in_app = format!("{}/o/{org}/s/{space}/elsewhere", app.base);
    let (_, responses) = write_main(
        app,
        ann,
        &space,
        vec![json!([
            {"operation": "insert_page", "ref": "target", "title": "Target",
             "document": {"markdown": "# Target\n\n## Details\n\nThe details."}},
            {"operation": "insert_page", "ref": "a", "title": "A",
             "document": {"markdown": "See [the target](./target.md) and [its details](./target.md#details)."}},
            {"operation": "insert_page", "ref": "b", "title": "B",
             "document": {"markdown": "Also [the target](./target.md), twice: [again](./target.md)."}},
            {"operation": "insert_page", "ref": "c", "title": "C",
             "document": {"markdown": format!("[Outside](https://example.com/x) and [inside]({in_app}).")}}
        ])],
    )
    .await;
    let id = |i: usize| {
        responses[0]["changes"][i]["page"]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    Site {
        space,
        org,
        target: id(0),
        a: id(1),
        b: id(2),
        c: id(3),
    }
}

#[tokio::test]
async fn links_of_a_space_have_statuses_stats_and_locations() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let s = site(&app, &ann).await;
    let links = app
        .get(&ann, &format!("/v1/spaces/{}/links", s.space))
        .await
        .expect(200);
    // The page, its anchor, and two URLs.
    assert_eq!(links["count"], 4, "{links}");
    assert_eq!(links["stats"], json!({"total": 4, "broken": {"total": 0}}));
    let to_target = page_item(&links, &s.target);
    assert_eq!(to_target["status"], "ok");
    assert_eq!(to_target["relation"], "reference");
    assert_eq!(to_target["targetReference"]["kind"], "page");
    assert_eq!(to_target["targetReference"]["space"], s.space.as_str());
    assert_eq!(to_target["targetReference"]["organization"], s.org.as_str());
    assert_eq!(to_target["targetReference"]["versionContext"]["type"], "revision");
    assert_eq!(
        page_ids(&to_target["locationReferences"]),
        sorted(vec![&s.a, &s.b])
    );
    let statuses: Vec<(String, String)> = links["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["targetReference"]["kind"] == "url")
        .map(|i| {
            (
                i["targetReference"]["url"].as_str().unwrap().to_string(),
                i["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), 2);
    for (url, status) in statuses {
        let expected = if url.starts_with(&app.base) {
            "in-app"
        } else {
            "ok"
        };
        assert_eq!(status, expected, "{url}");
    }
    // The status filter: count follows it, stats do not.
    let in_app = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=in-app", s.space))
        .await
        .expect(200);
    assert_eq!(in_app["count"], 1);
    assert_eq!(in_app["stats"]["total"], 4);
    assert_eq!(
        page_ids(&in_app["items"][0]["locationReferences"]),
        sorted(vec![&s.c])
    );
    let ok = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=ok", s.space))
        .await
        .expect(200);
    assert_eq!(ok["count"], 3);
    let broken = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=broken", s.space))
        .await
        .expect(200);
    assert_eq!(broken["count"], 0);
    assert_eq!(broken["items"], json!([]));
    let message = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=dead", s.space))
        .await
        .expect_error(400);
    assert!(message.contains("status"), "{message}");
    // Paging walks each link once, in a stable order.
    let walked = app.walk(&ann, &format!("/v1/spaces/{}/links", s.space), 1).await;
    assert_eq!(walked.len(), 4);
    let first_pass: Vec<&Value> = links["items"].as_array().unwrap().iter().collect();
    assert_eq!(walked.iter().collect::<Vec<_>>(), first_pass);
    let in_app_page = app
        .get(
            &ann,
            &format!("/v1/spaces/{}/links?status=in-app&limit=1", s.space),
        )
        .await
        .expect(200);
    assert!(in_app_page.get("next").is_none());
    // Page links: one page's links, with the same statuses.
    let a_links = app
        .get(
            &ann,
            &format!("/v1/spaces/{}/content/page/{}/links", s.space, s.a),
        )
        .await
        .expect(200);
    assert_eq!(a_links["count"], 2);
    assert_eq!(a_links["stats"], json!({"total": 2, "broken": {"total": 0}}));
    let anchor = a_links["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["targetReference"].get("internalLocation").is_some())
        .unwrap();
    assert_eq!(
        anchor["targetReference"]["internalLocation"],
        json!({"type": "anchor", "anchor": "details"})
    );
    assert_eq!(page_ids(&anchor["locationReferences"]), sorted(vec![&s.a]));
    app.get(
        &ann,
        &format!("/v1/spaces/{}/content/page/nosuchpage/links", s.space),
    )
    .await
    .expect_error(404);
    // Backlinks of a page: the pages that link to it, paged.
    let back = app
        .get(
            &ann,
            &format!("/v1/spaces/{}/content/page/{}/backlinks", s.space, s.target),
        )
        .await
        .expect(200);
    assert_eq!(back["count"], 2);
    assert_eq!(page_ids(&back["items"]), sorted(vec![&s.a, &s.b]));
    let walked = app
        .walk(
            &ann,
            &format!("/v1/spaces/{}/content/page/{}/backlinks", s.space, s.target),
            1,
        )
        .await;
    assert_eq!(page_ids(&Value::Array(walked)), sorted(vec![&s.a, &s.b]));
    let none = app
        .get(
            &ann,
            &format!("/v1/spaces/{}/content/page/{}/backlinks", s.space, s.c),
        )
        .await
        .expect(200);
    assert_eq!(none["count"], 0);
    // Someone who cannot see the space cannot see its links.
    let stranger = app.user("Stranger").await;
    app.get(&stranger, &format!("/v1/spaces/{}/links", s.space))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn a_merged_deletion_breaks_the_links_to_the_deleted_page() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let s = site(&app, &ann).await;
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{}/change-requests", s.space),
            json!({"subject": "Prune"}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap().to_string();
    app.post(
        &ann,
        &format!("/v1/spaces/{}/change-requests/{cr}/content", s.space),
        json!({"changes": [{"operation": "delete_page", "page": s.target}]}),
    )
    .await
    .expect(200);
    // In the change request, A's links are broken, by the change request.
    let cr_links = app
        .get(
            &ann,
            &format!(
                "/v1/spaces/{}/change-requests/{cr}/content/page/{}/links",
                s.space, s.a
            ),
        )
        .await
        .expect(200);
    assert_eq!(
        cr_links["stats"],
        json!({"total": 2, "broken": {"total": 2, "changeRequest": 2}})
    );
    assert!(
        cr_links["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["status"] == "broken")
    );
    let cr_broken = app
        .get(
            &ann,
            &format!(
                "/v1/spaces/{}/change-requests/{cr}/content/page/{}/links?status=broken",
                s.space, s.b
            ),
        )
        .await
        .expect(200);
    assert_eq!(cr_broken["count"], 1);
    // Main is unchanged until the merge.
    let main_links = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=broken", s.space))
        .await
        .expect(200);
    assert_eq!(main_links["count"], 0);
    app.post(
        &ann,
        &format!("/v1/spaces/{}/change-requests/{cr}/merge", s.space),
        json!({}),
    )
    .await
    .expect(200);
    let broken = app
        .get(&ann, &format!("/v1/spaces/{}/links?status=broken", s.space))
        .await
        .expect(200);
    assert_eq!(broken["count"], 2, "{broken}");
    assert_eq!(broken["stats"], json!({"total": 4, "broken": {"total": 2}}));
    let to_target = page_item(&broken, &s.target);
    assert_eq!(to_target["status"], "broken");
    assert_eq!(
        page_ids(&to_target["locationReferences"]),
        sorted(vec![&s.a, &s.b])
    );
    for page in [&s.a, &s.b] {
        let links = app
            .get(&ann, &format!("/v1/spaces/{}/content/page/{page}/links", s.space))
            .await
            .expect(200);
        assert!(
            links["items"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["status"] == "broken"),
            "{links}"
        );
    }
    // Bringing the page back (same id, by reverting the deletion) mends the links.
    let revert = app
        .post(
            &ann,
            &format!("/v1/spaces/{}/change-requests", s.space),
            json!({"subject": "Back"}),
        )
        .await
        .expect(201);
    let revert = revert["id"].as_str().unwrap().to_string();
    let merged = app
        .get(&ann, &format!("/v1/spaces/{}/change-requests/{cr}", s.space))
        .await
        .expect(200);
    let before = merged["revisionInitial"].as_str().unwrap();
    app.post(
        &ann,
        &format!("/v1/spaces/{}/change-requests/{revert}/content", s.space),
        json!({"changes": [{"operation": "revert_page", "page": s.target, "revision": before}]}),
    )
    .await
    .expect(200);
    app.post(
        &ann,
        &format!("/v1/spaces/{}/change-requests/{revert}/merge", s.space),
        json!({}),
    )
    .await
    .expect(200);
    let mended = app
        .get(&ann, &format!("/v1/spaces/{}/links", s.space))
        .await
        .expect(200);
    assert_eq!(mended["stats"]["broken"]["total"], 0, "{mended}");
}

#[tokio::test]
async fn file_backlinks_list_exactly_the_pages_that_embed_the_file() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    let (_, responses) = write_main(
        &app,
        &ann,
        &space,
        vec![json!([
            {"operation": "insert_files", "files": [
                {"ref": "logo", "name": "logo.png", "contentType": "image/png", "base64": PNG},
                {"ref": "other", "name": "other.png", "contentType": "image/png", "base64": PNG}
            ]},
            {"operation": "insert_page", "title": "One", "document": {"markdown": "![Logo](./logo)"}},
            {"operation": "insert_page", "title": "Two", "document": {"markdown": "Text.\n\n![Logo](./logo)\n\n![Again](./logo)"}},
            {"operation": "insert_page", "title": "Three", "document": {"markdown": "![Other](./other)"}},
            {"operation": "insert_page", "title": "Four", "document": {"markdown": "No pictures."}}
        ])],
    )
    .await;
    let logo = responses[0]["insertedFiles"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let page = |i: usize| {
        responses[0]["changes"][i]["page"]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (one, two, three, four) = (page(0), page(1), page(2), page(3));
    let path = format!("/v1/spaces/{space}/content/files/{logo}/backlinks");
    let back = app.get(&ann, &path).await.expect(200);
    assert_eq!(back["count"], 2, "{back}");
    assert_eq!(page_ids(&back["items"]), sorted(vec![&one, &two]));
    assert_eq!(back["items"][0]["space"], space.as_str());
    // The link list calls embedding a dependency.
    let links = app
        .get(&ann, &format!("/v1/spaces/{space}/content/page/{one}/links"))
        .await
        .expect(200);
    assert_eq!(links["items"][0]["relation"], "dependsOn");
    assert_eq!(links["items"][0]["targetReference"]["kind"], "file");
    assert_eq!(links["items"][0]["targetReference"]["file"], logo.as_str());
    app.get(
        &ann,
        &format!("/v1/spaces/{space}/content/files/nosuchfile/backlinks"),
    )
    .await
    .expect_error(404);

    // A change request that moves the picture from One to Four: its backlinks follow, main's
    // do not until the merge.
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Move"}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap().to_string();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [
            {"operation": "update_page", "page": one, "document": {"markdown": "No picture now."}},
            {"operation": "update_page", "page": four, "document": {"markdown": format!("![Logo](/files/{logo})")}}
        ]}),
    )
    .await
    .expect(200);
    let cr_path = format!("/v1/spaces/{space}/change-requests/{cr}/content/files/{logo}/backlinks");
    let cr_back = app.get(&ann, &cr_path).await.expect(200);
    assert_eq!(
        page_ids(&cr_back["items"]),
        sorted(vec![&two, &four]),
        "{cr_back}"
    );
    let walked = app.walk(&ann, &cr_path, 1).await;
    assert_eq!(page_ids(&Value::Array(walked)), sorted(vec![&two, &four]));
    let cr_page_back = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content/page/{three}/backlinks"),
        )
        .await
        .expect(200);
    assert_eq!(cr_page_back["count"], 0);
    let main_back = app.get(&ann, &path).await.expect(200);
    assert_eq!(page_ids(&main_back["items"]), sorted(vec![&one, &two]));
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let merged = app.get(&ann, &path).await.expect(200);
    assert_eq!(page_ids(&merged["items"]), sorted(vec![&two, &four]));
}

/// A link whose target is missing from an import, or from a markdown write, is a broken link:
/// not an external URL with status `ok`.
#[tokio::test]
async fn links_to_missing_targets_of_an_import_are_broken() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("guide")).unwrap();
    std::fs::write(
        root.join("SUMMARY.md"),
        "# Table of contents\n\n* [Welcome](README.md)\n* [Setup](guide/setup.md)\n",
    )
    .unwrap();
    std::fs::write(
        root.join("README.md"),
        "# Welcome\n\nSee [setup](guide/setup.md) and [the site](https://example.com/docs).\n",
    )
    .unwrap();
    std::fs::write(
        root.join("guide/setup.md"),
        "# Setup\n\nOld notes: [gone](../nope.md). Home: [welcome](../README.md).\n",
    )
    .unwrap();
    let (db, blobs, space_id) = (app.db.clone(), app.blobs(), space.clone());
    let imported =
        tokio::task::spawn_blocking(move || quire_store::import::import_space(&db, &blobs, &space_id, &root))
            .await
            .unwrap()
            .unwrap();
    assert!(
        imported.warnings.iter().any(|w| w.contains("../nope.md")),
        "{:?}",
        imported.warnings
    );
    let broken = app
        .get(&ann, &format!("/v1/spaces/{space}/links?status=broken"))
        .await
        .expect(200);
    assert_eq!(broken["count"], 1, "{broken}");
    let item = &broken["items"][0];
    assert_eq!(item["status"], "broken");
    assert_eq!(item["targetReference"]["kind"], "url");
    assert_eq!(item["targetReference"]["url"], "../nope.md");
    let all = app
        .get(&ann, &format!("/v1/spaces/{space}/links"))
        .await
        .expect(200);
    assert_eq!(all["stats"]["broken"]["total"], 1, "{all}");
    let ok = app
        .get(&ann, &format!("/v1/spaces/{space}/links?status=ok"))
        .await
        .expect(200);
    let ok_urls: Vec<&Value> = ok["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["targetReference"]["kind"] == "url")
        .map(|i| &i["targetReference"]["url"])
        .collect();
    assert_eq!(ok_urls, [&json!("https://example.com/docs")]);

    // The same through a markdown write: an unresolved relative link is broken.
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([
            {"operation": "insert_page", "title": "Later",
             "document": {"markdown": "See [the plan](./plan.md)."}}
        ])],
    )
    .await;
    let broken = app
        .get(&ann, &format!("/v1/spaces/{space}/links?status=broken"))
        .await
        .expect(200);
    let urls: Vec<&str> = broken["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["targetReference"]["url"].as_str().unwrap())
        .collect();
    assert_eq!(urls.len(), 2, "{broken}");
    assert!(
        urls.contains(&"../nope.md") && urls.iter().any(|u| u.contains("plan.md")),
        "{urls:?}"
    );
}
