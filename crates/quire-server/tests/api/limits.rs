//! Content limits: bodies that used to crash the process or be stored unreadable are refused
//! with a 4xx naming the limit, the process stays up, and content at the limits is stored, read
//! back in every format and merged.

use serde_json::{Value, json};

use crate::content::space_with_cr;
use crate::support::{TestApp, TestUser};

/// The server still answers, and still writes.
async fn still_up(app: &TestApp, user: &TestUser, space: &str) {
    app.request("GET", None, "/healthz", None).await.expect(200);
    app.post(
        user,
        &format!("/v1/spaces/{space}/comments"),
        json!({"body": {"markdown": "Still here."}}),
    )
    .await
    .expect(200);
}

fn insert(markdown: &str) -> Value {
    json!({"changes": [{"operation": "insert_page", "title": "Deep", "document": {"markdown": markdown}}]})
}

#[tokio::test]
async fn bodies_that_crashed_the_process_answer_4xx_naming_the_limit() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    // A comment any member may post: 1,000 nested block quotes.
    let message = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/comments"),
            json!({"body": {"markdown": ">".repeat(1000) + " x"}}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("MAX_MARKDOWN_NESTING = 64"), "{message}");
    assert!(
        message.contains("is 1002"),
        "1,000 quotes, a paragraph and its text: {message}"
    );
    still_up(&app, &ann, &space).await;
    let bodies = [
        ">".repeat(1000) + " x",
        ">".repeat(10_000) + " x",
        "> ".repeat(100_000),
        (0..1000).map(|i| format!("{}- x\n", "  ".repeat(i))).collect(),
        (0..3000).map(|i| format!("{}- x\n", " ".repeat(i))).collect(),
        "*a ".repeat(20_000) + &"b* ".repeat(20_000),
        "{% hint %}\n\n".repeat(5_000),
        "<details>\n\n".repeat(5_000),
    ];
    for body in &bodies {
        let status = app.post(&ann, &content, insert(body)).await.status;
        assert!((400..500).contains(&status), "{status} for {:?}...", &body[..20]);
        still_up(&app, &ann, &space).await;
    }
    // Over the size limit: 413.
    let huge = "word ".repeat(500_000);
    let message = app.post(&ann, &content, insert(&huge)).await.expect_error(413);
    assert!(message.contains("MAX_MARKDOWN_BYTES"), "{message}");
    // Nothing was written by any of them.
    let pages = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content/pages"),
        )
        .await
        .expect(200);
    assert_eq!(pages["pages"].as_array().map(Vec::len), Some(0), "{pages}");
}

#[tokio::test]
async fn nesting_over_the_document_limit_is_refused_in_markdown_and_json() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    // 60 block quotes used to be stored and then unreadable (500 on read and on merge).
    let message = app
        .post(&ann, &content, insert(&(">".repeat(60) + " x")))
        .await
        .expect_error(400);
    assert!(message.contains("MAX_NESTING = 32"), "{message}");
    let mut node = json!({"object": "block", "type": "paragraph", "nodes": [
        {"object": "text", "leaves": [{"object": "leaf", "text": "x", "marks": []}]}]});
    for _ in 0..40 {
        node = json!({"object": "block", "type": "blockquote", "nodes": [node]});
    }
    let document = json!({"object": "document", "nodes": [node]});
    let message = app
        .post(
            &ann,
            &content,
            json!({"changes": [{"operation": "insert_page", "title": "Deep", "document": {"document": document}}]}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("nested more than 32"), "{message}");
    still_up(&app, &ann, &space).await;
}

#[tokio::test]
async fn content_at_the_limits_is_stored_read_back_and_merged() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let content = format!("/v1/spaces/{space}/change-requests/{cr}/content");
    // 30 block quotes (31 levels with the paragraph, 32 with its text) and a wide table.
    let deep = ">".repeat(30) + " deep";
    let columns = 1000;
    let rows = 20;
    let mut table = String::from("|");
    for c in 0..columns {
        table.push_str(&format!("h{c}|"));
    }
    table.push_str("\n|");
    table.push_str(&"-|".repeat(columns));
    for r in 0..rows {
        table.push_str("\n|");
        for c in 0..columns {
            table.push_str(&format!("{}|", r * columns + c));
        }
    }
    let markdown = format!("{deep}\n\nIntro.\n\n{table}\n");
    let answer = app
        .post(
            &ann,
            &format!("{content}?compat=false"),
            json!({"changes": [{"operation": "insert_page", "title": "Limits", "document": {"markdown": markdown}}]}),
        )
        .await
        .expect(200);
    let page = answer["changes"][0]["page"]["id"].as_str().unwrap().to_string();
    let md = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content/page/{page}?format=markdown"),
        )
        .await
        .expect(200);
    let text = md["markdown"].as_str().unwrap();
    assert!(
        text.contains(&(">".repeat(30) + " deep")) || text.contains("> > > "),
        "{}",
        &text[..200]
    );
    assert!(text.contains("| 19999 |"), "the last cell is rendered");
    let doc = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content/page/{page}?format=document"),
        )
        .await
        .expect(200);
    assert_eq!(doc["document"]["nodes"].as_array().map(Vec::len), Some(3));
    // Main changes the same page's intro meanwhile, so the merge diffs the documents.
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let other = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Intro"}),
        )
        .await
        .expect(201);
    let other = other["id"].as_str().unwrap();
    let edited = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Table"}),
        )
        .await
        .expect(201);
    let edited = edited["id"].as_str().unwrap();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{other}/content"),
        json!({"changes": [{"operation": "update_page", "page": page,
            "document": {"markdown": format!("{deep}\n\nA new intro.\n\n{table}\n")}}]}),
    )
    .await
    .expect(200);
    let changed_table = table.replacen("| 0|", "| zero|", 1).replacen("|0|", "|zero|", 1);
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{edited}/content"),
        json!({"changes": [{"operation": "update_page", "page": page,
            "document": {"markdown": format!("{deep}\n\nIntro.\n\n{changed_table}\n")}}]}),
    )
    .await
    .expect(200);
    let merged = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{other}/merge"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(merged["result"], "merge", "{merged}");
    let merged = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{edited}/merge"),
            json!({}),
        )
        .await
        .expect(200);
    assert_eq!(merged["result"], "merge", "{merged}");
    let md = app
        .get(
            &ann,
            &format!("/v1/spaces/{space}/content/page/{page}?format=markdown"),
        )
        .await
        .expect(200);
    let text = md["markdown"].as_str().unwrap();
    assert!(text.contains("A new intro."), "main's edit is kept");
    assert!(text.contains("| zero |"), "the change request's edit is kept");
}

/// The bytes of the `objects` rows of a space whose body starts with `start`.
async fn stored(app: &TestApp, space: &str, start: &'static str) -> Vec<usize> {
    let space = space.to_string();
    let rows = app
        .db
        .read(move |c| {
            c.query(
                "SELECT length(body) FROM objects WHERE space_id = ?1 AND body LIKE ?2 ORDER BY 1",
                quire_server::params![space.clone(), format!("{start}%")],
            )
            .map_err(quire_server::error::ApiError::from)
        })
        .await
        .unwrap();
    rows.iter().map(|r| r.get::<i64>(0).unwrap() as usize).collect()
}

/// A table of `rows` rows and 500 columns whose cells are `version` + their number: about
/// 140 KB of JSON per 10 rows, a block stored apart.
fn wide_table(rows: usize, version: &str) -> String {
    let columns = 500;
    let mut table = String::from("|");
    for c in 0..columns {
        table.push_str(&format!("h{c}|"));
    }
    table.push_str("\n|");
    table.push_str(&"-|".repeat(columns));
    for r in 0..rows {
        table.push_str("\n|");
        for c in 0..columns {
            table.push_str(&format!("{version}{}|", r * columns + c));
        }
    }
    table
}

#[tokio::test]
async fn large_blocks_are_stored_once_apart_from_their_documents() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let (_, space, cr) = space_with_cr(&app, &ann).await;
    let page_md =
        |intro: &str, table: &str| format!("# Big\n\n{intro}\n\n{}\n\nThe end.\n", wide_table(10, table));
    let answer = app
        .post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content?compat=false"),
            json!({"changes": [{"operation": "insert_page", "title": "Big",
                "document": {"markdown": page_md("Intro.", "v")}}]}),
        )
        .await
        .expect(200);
    let page = answer["changes"][0]["page"]["id"].as_str().unwrap().to_string();
    app.post(
        &ann,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    // The table is a row of its own; the document's row is its outline, a few hundred bytes.
    let blocks = stored(&app, &space, "{\"object\":\"block\"").await;
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert!(blocks[0] > 64 * 1024);
    let outlines = stored(&app, &space, "{\"quire\":\"outline\"").await;
    assert_eq!(outlines.len(), 1);
    assert!(outlines[0] < 4096, "{outlines:?}");

    // Main edits the intro while a change request edits the table: the merge takes the intro
    // from main and the table from the change request, and stores no second copy of either.
    let new_cr = |subject: &'static str| {
        let (app, ann, space) = (&app, &ann, &space);
        async move {
            let cr = app
                .post(
                    ann,
                    &format!("/v1/spaces/{space}/change-requests"),
                    json!({"subject": subject}),
                )
                .await
                .expect(201);
            cr["id"].as_str().unwrap().to_string()
        }
    };
    let (intro, table) = (new_cr("Intro").await, new_cr("Table").await);
    for (cr, markdown) in [
        (&intro, page_md("A new intro.", "v")),
        (&table, page_md("Intro.", "w")),
    ] {
        app.post(
            &ann,
            &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
            json!({"changes": [{"operation": "update_page", "page": page, "document": {"markdown": markdown}}]}),
        )
        .await
        .expect(200);
    }
    for cr in [&intro, &table] {
        let merged = app
            .post(
                &ann,
                &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
                json!({}),
            )
            .await
            .expect(200);
        assert_eq!(merged["result"], "merge", "{merged}");
    }
    assert_eq!(
        stored(&app, &space, "{\"object\":\"block\"").await.len(),
        2,
        "the two tables"
    );
    assert_eq!(stored(&app, &space, "{\"quire\":\"outline\"").await.len(), 4);

    // Read back whole, in every format, by page and by document id.
    let read = |space: String| {
        let (app, ann, page) = (&app, &ann, &page);
        async move {
            let md = app
                .get(
                    ann,
                    &format!("/v1/spaces/{space}/content/page/{page}?format=markdown"),
                )
                .await
                .expect(200);
            let md = md["markdown"].as_str().unwrap().to_string();
            let doc = app
                .get(
                    ann,
                    &format!("/v1/spaces/{space}/content/page/{page}?format=document"),
                )
                .await
                .expect(200);
            let id = doc["documentId"].as_str().unwrap().to_string();
            let by_id = app
                .get(ann, &format!("/v1/spaces/{space}/documents/{id}"))
                .await
                .expect(200);
            assert_eq!(by_id, doc["document"]);
            (md, doc["document"]["nodes"].as_array().map(Vec::len))
        }
    };
    let (md, blocks) = read(space.clone()).await;
    assert!(
        md.contains("A new intro.") && md.contains("| w4999 |") && !md.contains("| v0 |"),
        "{}",
        &md[..300]
    );
    assert_eq!(blocks, Some(3), "intro, table, end");

    // A duplicate of the space copies the blocks its documents keep apart.
    let copy = app
        .post(&ann, &format!("/v1/spaces/{space}/duplicate"), json!({}))
        .await
        .expect(201);
    let copy = copy["id"].as_str().unwrap().to_string();
    let (copied, _) = read(copy).await;
    assert_eq!(copied, md);
}
