//! Search: a space's current content and an organization's spaces, ranked with title matches
//! first, folded for case and accents, with prefix matching on the last word.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// Creates an empty space; returns its id.
pub async fn new_space(app: &TestApp, user: &TestUser, org: &str, title: &str) -> String {
    let space = app
        .post(
            user,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": title, "empty": true}),
        )
        .await
        .expect(201);
    space["id"].as_str().unwrap().to_string()
}

/// Writes `batches` of changes to main through one change request, merged; returns the change
/// request id and the responses of the batches.
pub async fn write_main(
    app: &TestApp,
    user: &TestUser,
    space: &str,
    batches: Vec<Value>,
) -> (String, Vec<Value>) {
    let cr = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Write"}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap().to_string();
    let mut responses = Vec::new();
    for changes in batches {
        let resp = app
            .post(
                user,
                &format!("/v1/spaces/{space}/change-requests/{cr}/content?compat=false"),
                json!({ "changes": changes }),
            )
            .await
            .expect(200);
        responses.push(resp);
    }
    let merged = app
        .post(
            user,
            &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(merged["result"], "merge", "{merged}");
    (cr, responses)
}

fn search_path(space: &str, query: &str) -> String {
    format!("/v1/spaces/{space}/search?query={}", urlencode(query))
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

fn titles(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_string())
        .collect()
}

/// Filler words that are in every page, so ranking has something to sort.
const FILLER: &str = "The team keeps each guide short and clear before every release.";

#[tokio::test]
async fn a_500_page_space_answers_with_the_title_match_first() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Big").await;
    let mut batches = Vec::new();
    for batch in 0..10 {
        let changes: Vec<Value> = (0..50)
            .map(|i| {
                let n = batch * 50 + i;
                // Every tenth page mentions zephyr in its text, some of them twice.
                let text = if n % 10 == 3 {
                    format!("{FILLER}\n\n## Winds {n}\n\nThe zephyr blows on page {n}. Zephyr again.")
                } else {
                    format!("{FILLER}\n\n## Notes {n}\n\nNothing special on page {n}.")
                };
                json!({"operation": "insert_page", "title": format!("Page {n}"), "document": {"markdown": text}})
            })
            .collect();
        batches.push(Value::Array(changes));
    }
    batches.push(json!([
        {"operation": "insert_page", "ref": "zephyr", "title": "Zephyr",
         "description": "About the west wind", "document": {"markdown": "A gentle wind from the west."}},
        {"operation": "insert_page", "title": "Hidden notes", "hidden": true,
         "document": {"markdown": "The quokka lives here."}},
        {"operation": "insert_page", "ref": "secret", "title": "Secret parent", "hidden": true,
         "document": {"markdown": "Nothing."}},
        {"operation": "insert_page", "title": "Child of secret", "into": "secret",
         "document": {"markdown": "The platypus lives below a hidden page."}},
        {"operation": "insert_page", "title": "Not indexed", "noIndex": true,
         "document": {"markdown": "The wombat lives here."}},
        {"operation": "insert_page", "title": "Desserts",
         "document": {"markdown": "## Crème brûlée\n\nA Crème Brûlée recipe, with SUGAR."}}
    ]));
    write_main(&app, &ann, &space, batches).await;

    // The page whose title matches comes first, then the 50 pages whose text does.
    let body = app.get(&ann, &search_path(&space, "zephyr")).await.expect(200);
    assert_eq!(body["count"], 51, "{body}");
    let first = &body["items"][0];
    assert_eq!(first["title"], "Zephyr");
    assert_eq!(first["path"], "zephyr");
    assert_eq!(first["rank"], 1);
    assert_eq!(first["resultType"], "page");
    assert_eq!(first["description"], "About the west wind");
    assert!(
        first["urls"]["app"].as_str().unwrap().ends_with("/zephyr"),
        "{first}"
    );
    let second = &body["items"][1];
    assert_eq!(second["resultType"], "section");
    let section = &second["sections"][0];
    assert!(
        section["title"].as_str().unwrap().starts_with("Winds "),
        "{second}"
    );
    assert!(section["body"].as_str().unwrap().contains("zephyr"), "{section}");
    assert!(section["path"].as_str().unwrap().contains("#winds-"), "{section}");
    assert!(
        section["urls"]["app"].as_str().unwrap().contains("#winds-"),
        "{section}"
    );

    // Paging walks every hit once, ranks in order.
    let all = app.walk(&ann, &search_path(&space, "zephyr"), 7).await;
    assert_eq!(all.len(), 51);
    let mut ids: Vec<&str> = all.iter().map(|i| i["id"].as_str().unwrap()).collect();
    let ranks: Vec<u64> = all.iter().map(|i| i["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, (1..=51).collect::<Vec<u64>>());
    assert_eq!(all[0]["title"], "Zephyr");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 51);

    // Prefix on the last word: search as you type.
    let prefix = app.get(&ann, &search_path(&space, "zeph")).await.expect(200);
    assert_eq!(prefix["count"], 51);
    assert_eq!(prefix["items"][0]["title"], "Zephyr");
    let two = app.get(&ann, &search_path(&space, "blows zep")).await.expect(200);
    assert_eq!(two["count"], 50);
    // Whole earlier words are not prefixes.
    let not_prefix = app
        .get(&ann, &search_path(&space, "blo zephyr"))
        .await
        .expect(200);
    assert_eq!(not_prefix["count"], 0);

    // Hidden pages, pages below them and noIndex pages are not found.
    for word in ["quokka", "platypus", "wombat", "Hidden notes"] {
        let none = app.get(&ann, &search_path(&space, word)).await.expect(200);
        assert_eq!(none["count"], 0, "{word}: {none}");
        assert_eq!(none["items"], json!([]));
    }

    // Case and accents do not matter, either way round.
    for query in ["creme brulee", "CRÈME", "brûlée", "Creme Brulee recipe", "sugar"] {
        let found = app.get(&ann, &search_path(&space, query)).await.expect(200);
        assert_eq!(titles(&found), ["Desserts"], "{query}");
    }
    // Query syntax of the engines is only text: quotes, operators and punctuation are harmless.
    for query in [
        "\"zephyr",
        "zephyr*",
        "(zephyr",
        "zephyr^",
        "zephyr:* & !",
        "-zephyr",
    ] {
        let found = app.get(&ann, &search_path(&space, query)).await.expect(200);
        assert!(found["count"].as_u64().unwrap() >= 51, "{query}: {found}");
    }
    let punctuation = app.get(&ann, &search_path(&space, "&&& :*")).await.expect(200);
    assert_eq!(punctuation["count"], 0);
}

#[tokio::test]
async fn search_follows_main_as_it_changes() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    let (_, responses) = write_main(
        &app,
        &ann,
        &space,
        vec![json!([
            {"operation": "insert_page", "title": "Stars", "document": {"markdown": "A nebula is a cloud."}},
            {"operation": "insert_page", "title": "Planets", "document": {"markdown": "Orbits and a nebula."}}
        ])],
    )
    .await;
    let stars = responses[0]["changes"][0]["page"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let planets = responses[0]["changes"][1]["page"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let found = app.get(&ann, &search_path(&space, "nebula")).await.expect(200);
    assert_eq!(found["count"], 2);
    // A change request is not main: nothing changes until it merges.
    let cr = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Edit"}),
        )
        .await
        .expect(201);
    let cr = cr["id"].as_str().unwrap();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [
            {"operation": "update_page", "page": stars, "document": {"markdown": "A quasar is bright."}},
            {"operation": "delete_page", "page": planets}
        ]}),
    )
    .await
    .expect(200);
    let before = app.get(&ann, &search_path(&space, "nebula")).await.expect(200);
    assert_eq!(before["count"], 2);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let after = app.get(&ann, &search_path(&space, "nebula")).await.expect(200);
    assert_eq!(after["count"], 0, "{after}");
    let quasar = app.get(&ann, &search_path(&space, "quasar")).await.expect(200);
    assert_eq!(titles(&quasar), ["Stars"]);
    // Renaming and hiding change what is found.
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([{"operation": "update_page", "page": stars, "title": "Galaxies"}])],
    )
    .await;
    let renamed = app.get(&ann, &search_path(&space, "galaxies")).await.expect(200);
    assert_eq!(titles(&renamed), ["Galaxies"]);
    assert_eq!(renamed["items"][0]["path"], "stars", "the slug stays");
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([{"operation": "update_page", "page": stars, "hidden": true}])],
    )
    .await;
    let hidden = app.get(&ann, &search_path(&space, "quasar")).await.expect(200);
    assert_eq!(hidden["count"], 0);
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([{"operation": "update_page", "page": stars, "hidden": false}])],
    )
    .await;
    let shown = app.get(&ann, &search_path(&space, "quasar")).await.expect(200);
    assert_eq!(shown["count"], 1);
}

#[tokio::test]
async fn search_answers_bad_input_with_clear_errors() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    let message = app
        .get(&ann, &format!("/v1/spaces/{space}/search"))
        .await
        .expect_error(400);
    assert!(message.contains("query"), "{message}");
    app.get(&ann, &format!("/v1/spaces/{space}/search?query=%20"))
        .await
        .expect_error(400);
    let long = "a".repeat(513);
    app.get(&ann, &search_path(&space, &long)).await.expect_error(400);
    app.get(&ann, &format!("{}&limit=0", search_path(&space, "x")))
        .await
        .expect_error(400);
    app.get(&ann, &format!("{}&page=garbage", search_path(&space, "x")))
        .await
        .expect_error(400);
    app.get(&ann, &format!("/v1/orgs/{org}/search"))
        .await
        .expect_error(400);
    app.get(&ann, "/v1/spaces/nosuchspace/search?query=x")
        .await
        .expect_error(404);
    app.get(&ann, "/v1/orgs/nosuchorg/search?query=x")
        .await
        .expect_error(404);
    app.request("GET", None, &search_path(&space, "x"), None)
        .await
        .expect_error(401);
}

#[tokio::test]
async fn organization_search_groups_by_space_and_shows_only_readable_active_spaces() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let guest = app.user("Guest").await;
    let org = app.org(&ann, "Acme").await;
    let mut spaces = Vec::new();
    for (title, pages) in [("Alpha", 3), ("Beta", 2), ("Gamma", 1)] {
        let space = new_space(&app, &ann, &org, title).await;
        let changes: Vec<Value> = (0..pages)
            .map(|i| {
                json!({"operation": "insert_page", "title": format!("{title} {i}"),
                            "document": {"markdown": format!("The nebula of {title} number {i}.")}})
            })
            .collect();
        write_main(&app, &ann, &space, vec![Value::Array(changes)]).await;
        spaces.push(space);
    }
    let path = format!("/v1/orgs/{org}/search?query=nebula");
    let all = app.get(&ann, &path).await.expect(200);
    assert_eq!(all["count"], 6, "{all}");
    let mut groups: Vec<(String, usize)> = all["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            assert_eq!(g["type"], "space");
            (
                g["title"].as_str().unwrap().to_string(),
                g["pages"].as_array().unwrap().len(),
            )
        })
        .collect();
    groups.sort();
    assert_eq!(
        groups,
        [
            ("Alpha".to_string(), 3),
            ("Beta".to_string(), 2),
            ("Gamma".to_string(), 1)
        ]
    );
    // Paging counts page hits; every page hit appears once across the pages.
    let mut seen = Vec::new();
    for group in app.walk(&ann, &path, 2).await {
        for page in group["pages"].as_array().unwrap() {
            seen.push(page["id"].as_str().unwrap().to_string());
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 6);

    // A guest with one space finds only that space's pages, and cannot search the others.
    app.post(
        &ann,
        &format!("/v1/spaces/{}/permissions", spaces[1]),
        json!({"role": "read", "users": [guest.id]}),
    )
    .await
    .expect(204);
    let guest_found = app.get(&guest, &path).await.expect(200);
    assert_eq!(guest_found["count"], 2, "{guest_found}");
    assert_eq!(guest_found["items"].as_array().unwrap().len(), 1);
    assert_eq!(guest_found["items"][0]["id"], spaces[1].as_str());
    app.get(&guest, &search_path(&spaces[1], "nebula"))
        .await
        .expect(200);
    app.get(&guest, &search_path(&spaces[0], "nebula"))
        .await
        .expect_error(404);
    let stranger = app.user("Stranger").await;
    app.get(&stranger, &path).await.expect_error(404);

    // A deleted space is not searched.
    app.delete(&ann, &format!("/v1/spaces/{}", spaces[0]))
        .await
        .expect(204);
    let after = app.get(&ann, &path).await.expect(200);
    assert_eq!(after["count"], 3, "{after}");
    app.get(&ann, &search_path(&spaces[0], "nebula"))
        .await
        .expect_error(404);
    // Restored, it is found again: its index was kept.
    app.post(&ann, &format!("/v1/spaces/{}/restore", spaces[0]), json!({}))
        .await
        .expect(200);
    let restored = app.get(&ann, &path).await.expect(200);
    assert_eq!(restored["count"], 6);
}

#[tokio::test]
async fn a_duplicated_space_is_searchable() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    write_main(
        &app,
        &ann,
        &space,
        vec![
            json!([{"operation": "insert_page", "title": "Comets", "document": {"markdown": "Icy comets."}}]),
        ],
    )
    .await;
    let copy = app
        .post(&ann, &format!("/v1/spaces/{space}/duplicate"), json!({}))
        .await
        .expect(201);
    let copy = copy["id"].as_str().unwrap();
    let found = app.get(&ann, &search_path(copy, "icy")).await.expect(200);
    assert_eq!(titles(&found), ["Comets"]);
}

#[tokio::test]
async fn spaces_without_an_index_are_indexed_at_start() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Docs").await;
    write_main(
        &app,
        &ann,
        &space,
        vec![json!([{"operation": "insert_page", "title": "Comets", "document": {"markdown": "Icy [comets](https://example.com)."}}])],
    )
    .await;
    // As a database written before the indexes existed.
    let db = app.db.clone();
    tokio::task::spawn_blocking(move || {
        db.write_sync(|c| {
            for table in ["content_indexes", "search_sections", "search_pages", "link_refs"] {
                c.execute(&format!("DELETE FROM {table}"), &[])?;
            }
            Ok::<_, quire_server::db::DbError>(())
        })
        .unwrap()
    })
    .await
    .unwrap();
    let none = app.get(&ann, &search_path(&space, "icy")).await.expect(200);
    assert_eq!(none["count"], 0);
    let db = app.db.clone();
    let indexed = tokio::task::spawn_blocking(move || {
        let cache = quire_store::content::store::ContentCache::default();
        quire_store::main_revision::catch_up(&db, &cache).unwrap()
    })
    .await
    .unwrap();
    assert!(indexed >= 1);
    let found = app.get(&ann, &search_path(&space, "icy")).await.expect(200);
    assert_eq!(titles(&found), ["Comets"]);
    let links = app
        .get(&ann, &format!("/v1/spaces/{space}/links"))
        .await
        .expect(200);
    assert_eq!(links["count"], 1);
}

/// A merge whose documents weigh more than it pins before its write transaction (8 MB of JSON)
/// still indexes every page: the transaction parses the rest itself.
#[tokio::test]
async fn a_merge_past_what_it_pins_indexes_every_page() {
    const MARKERS: [&str; 24] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo",
        "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango", "uniform",
        "victor", "whiskey", "xray",
    ];
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let space = new_space(&app, &ann, &org, "Heavy").await;
    let paragraph = format!("{FILLER} ").repeat(5);
    let body = vec![paragraph.as_str(); 1_200].join("\n\n");
    let batches: Vec<Value> = MARKERS
        .chunks(3)
        .map(|markers| {
            let changes: Vec<Value> = markers
                .iter()
                .map(|m| {
                    json!({"operation": "insert_page", "title": format!("Heavy {m}"),
                           "document": {"markdown": format!("The {m}zulu marker.\n\n{body}")}})
                })
                .collect();
            Value::Array(changes)
        })
        .collect();
    write_main(&app, &ann, &space, batches).await;
    let stored = app
        .scalar(
            "SELECT sum(length(body)) FROM objects WHERE space_id = ?1",
            &space,
        )
        .await;
    assert!(
        stored > 9 << 20,
        "the pages' documents weigh {stored} bytes, not past the 8 MB pinned"
    );
    for m in MARKERS {
        let found = app
            .get(&ann, &search_path(&space, &format!("{m}zulu")))
            .await
            .expect(200);
        assert_eq!(titles(&found), vec![format!("Heavy {m}")], "searching {m}zulu");
    }
}
