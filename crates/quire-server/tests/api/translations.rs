//! Translations: a space translated into another language by a translator that upper-cases
//! (the test servers of `support::translator`, one per protocol), kept in sync by later runs
//! that send only what changed, never overwriting a page a person edited, and finishing once
//! when the process running them is killed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::translator::{FakeTranslator, Protocol};
use crate::support::{TestApp, TestUser};

/// A server that reaches the test translator and runs no jobs of its own: the tests run the
/// queue themselves (`drain`).
async fn app_with(translator: &FakeTranslator) -> TestApp {
    let mut flags = translator.flags();
    flags.push("--no-jobs".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    TestApp::start_with(&flags).await
}

async fn drain(app: &TestApp) {
    while quire_store::worker::run_one(app.server()).await.unwrap() {}
}

/// The GitBook folder the renderer's compatibility check imports: pages with code blocks,
/// hints, tables and links between pages.
fn gitbook_folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../compat/gitbook-renderer/docs")
}

async fn imported_space(app: &TestApp, owner: &TestUser, org: &str) -> String {
    let space = new_space(app, owner, org, "Lantern").await;
    let (db, blobs, id) = (app.db.clone(), app.blobs(), space.clone());
    tokio::task::spawn_blocking(move || {
        quire_store::import::import_space(&db, &blobs, &id, &gitbook_folder())
    })
    .await
    .unwrap()
    .unwrap();
    space
}

async fn create(app: &TestApp, user: &TestUser, org: &str, space: &str, language: &str) -> Value {
    app.post(
        user,
        &format!("/v1/orgs/{org}/translations"),
        json!({"source": {"space": space, "language": "en"}, "language": language}),
    )
    .await
    .expect(201)
}

/// Runs the translation to its end; its state after.
async fn run(app: &TestApp, user: &TestUser, org: &str, id: &str) -> Value {
    app.post(user, &format!("/v1/orgs/{org}/translations/{id}/run"), json!({}))
        .await
        .expect(204);
    drain(app).await;
    app.get(user, &format!("/v1/orgs/{org}/translations/{id}"))
        .await
        .expect(200)
}

/// Every page of a space's main content, flattened: (id, path, title, type).
async fn pages(app: &TestApp, user: &TestUser, space: &str) -> Vec<Value> {
    let tree = app
        .get(user, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let mut out = Vec::new();
    let mut stack: Vec<Value> = tree["pages"].as_array().unwrap().clone();
    while let Some(page) = stack.pop() {
        if let Some(children) = page["pages"].as_array() {
            stack.extend(children.iter().cloned());
        }
        out.push(page);
    }
    out.sort_by_key(|p| p["id"].as_str().unwrap().to_string());
    out
}

async fn document(app: &TestApp, user: &TestUser, space: &str, page: &str) -> Value {
    app.get(
        user,
        &format!("/v1/spaces/{space}/content/page/{page}?format=document"),
    )
    .await
    .expect(200)["document"]
        .clone()
}

/// The nodes of a document of `types`, as JSON, in document order.
fn nodes_of(doc: &Value, types: &[&str], out: &mut Vec<Value>) {
    match doc {
        Value::Object(map) => {
            if map
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| types.contains(&t))
            {
                out.push(doc.clone());
                return;
            }
            for v in map.values() {
                nodes_of(v, types, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| nodes_of(v, types, out)),
        _ => {}
    }
}

/// The text of the leaves under a node: those marked as inline code (`code`), or the others.
fn leaves_of(node: &Value, code: bool) -> String {
    let mut out = String::new();
    fn walk(v: &Value, code: bool, out: &mut String) {
        match v {
            Value::Object(map) => {
                if map.get("object").and_then(Value::as_str) == Some("leaf") {
                    let is_code = map["marks"]
                        .as_array()
                        .is_some_and(|marks| marks.iter().any(|m| m["type"] == "code"));
                    if is_code == code {
                        out.push_str(map["text"].as_str().unwrap_or_default());
                        out.push('|');
                    }
                }
                for v in map.values() {
                    walk(v, code, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, code, out)),
            _ => {}
        }
    }
    walk(node, code, &mut out);
    out
}

fn text_of(node: &Value) -> String {
    leaves_of(node, false)
}

/// Leaves out the human text `data` holds: image descriptions, tab and column titles, labels.
fn strip_text(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for key in ["alt", "title", "label"] {
                if map.get(key).is_some_and(Value::is_string) {
                    map.remove(key);
                }
            }
            map.values_mut().for_each(strip_text);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_text),
        _ => {}
    }
}

/// The `data` of every node, without the human text it holds ([`strip_text`]): links,
/// references, code languages, hint styles, table structure.
fn data_of(doc: &Value, out: &mut Vec<Value>) {
    match doc {
        Value::Object(map) => {
            if let Some(data) = map
                .get("data")
                .filter(|d| d.as_object().is_some_and(|o| !o.is_empty()))
            {
                let mut data = data.clone();
                strip_text(&mut data);
                out.push(data);
            }
            for (k, v) in map {
                if k != "data" {
                    data_of(v, out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| data_of(v, out)),
        _ => {}
    }
}

#[tokio::test]
async fn a_run_translates_the_human_text_and_keeps_code_links_and_slugs() {
    translates_the_folder(Protocol::OpenAi).await;
}

#[tokio::test]
async fn a_run_through_libretranslate_keeps_the_structure_too() {
    translates_the_folder(Protocol::LibreTranslate).await;
}

/// A run over the imported GitBook folder through `protocol`: every code block, link target and
/// slug byte-identical, every paragraph translated; a second run with nothing changed sends
/// nothing.
async fn translates_the_folder(protocol: Protocol) {
    let translator = FakeTranslator::start(protocol).await;
    let app = app_with(&translator).await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let source = imported_space(&app, &owner, &org).await;

    let created = create(&app, &owner, &org, &source, "fr").await;
    assert_eq!(created["object"], "translation");
    assert_eq!(created["status"], "pending");
    assert_eq!(created["source"], json!({"space": source, "language": "en"}));
    assert_eq!(created["language"], "fr");
    assert_eq!(created["permissions"], json!({"view": true, "edit": true}));
    assert_eq!(created["stats"]["runs"], 0);
    assert!(created.get("result").is_none());
    let id = created["id"].as_str().unwrap().to_string();

    let done = run(&app, &owner, &org, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let target = done["result"]["space"].as_str().unwrap().to_string();
    assert_ne!(target, source);
    let space = app.get(&owner, &format!("/v1/spaces/{target}")).await.expect(200);
    assert!(space["title"].as_str().unwrap().contains("French"), "{space}");
    assert_eq!(space["language"], "fr");
    assert_eq!(done["result"]["revision"], space["revision"]);

    let (source_pages, target_pages) = (
        pages(&app, &owner, &source).await,
        pages(&app, &owner, &target).await,
    );
    assert_eq!(source_pages.len(), target_pages.len());
    let documents = source_pages.iter().filter(|p| p["type"] == "document").count() as i64;
    assert_eq!(done["stats"]["runs"], 1);
    assert_eq!(done["stats"]["latestPages"], source_pages.len() as i64);
    assert_eq!(done["stats"]["totalPages"], source_pages.len() as i64);
    assert!(done["stats"]["latestWords"].as_i64().unwrap() > 100, "{done}");
    assert_eq!(done["stats"]["totalWords"], done["stats"]["latestWords"]);
    assert!(documents >= 8);

    let (mut paragraphs, mut images) = (0, 0);
    for (s, t) in source_pages.iter().zip(&target_pages) {
        // Same page, same place: ids, paths and slugs are the source's.
        assert_eq!(s["id"], t["id"]);
        assert_eq!(s["path"], t["path"]);
        assert_eq!(s["slug"], t["slug"]);
        assert_eq!(t["title"], s["title"].as_str().unwrap().to_uppercase());
        if s["type"] != "document" {
            continue;
        }
        let page = s["id"].as_str().unwrap();
        let (sd, td) = (
            document(&app, &owner, &source, page).await,
            document(&app, &owner, &target, page).await,
        );
        // Code blocks byte-identical; every link target, reference and code language too.
        let (mut sc, mut tc) = (Vec::new(), Vec::new());
        nodes_of(&sd, &["code"], &mut sc);
        nodes_of(&td, &["code"], &mut tc);
        assert_eq!(sc, tc, "code blocks of {page}");
        let (mut sdata, mut tdata) = (Vec::new(), Vec::new());
        data_of(&sd, &mut sdata);
        data_of(&td, &mut tdata);
        assert_eq!(sdata, tdata, "links and references of {page}");
        // Image descriptions are text: translated.
        let (mut simg, mut timg) = (Vec::new(), Vec::new());
        nodes_of(&sd, &["image"], &mut simg);
        nodes_of(&td, &["image"], &mut timg);
        for (a, b) in simg.iter().zip(&timg) {
            if let Some(alt) = a["data"]["alt"].as_str() {
                assert_eq!(b["data"]["alt"], alt.to_uppercase());
                images += 1;
            }
        }
        // Every paragraph's text is translated, and only its text.
        let (mut sp, mut tp) = (Vec::new(), Vec::new());
        nodes_of(&sd, &["paragraph"], &mut sp);
        nodes_of(&td, &["paragraph"], &mut tp);
        assert_eq!(sp.len(), tp.len());
        for (a, b) in sp.iter().zip(&tp) {
            let text = text_of(a);
            if text.chars().any(char::is_lowercase) {
                assert_ne!(text_of(b), text, "{page}: {a}");
            }
            assert_eq!(
                text_of(b).replace('|', ""),
                text.replace('|', "").to_uppercase(),
                "{page}: {a}"
            );
            assert_eq!(leaves_of(b, true), leaves_of(a, true), "inline code of {page}");
            paragraphs += 1;
        }
    }
    assert!(paragraphs > 10);
    assert!(images > 0, "the folder has an image with a description");
    // The translator got text and markup placeholders, never a URL or a code block.
    let sent = translator.texts().join("\n");
    assert!(!sent.contains("https://example.com/lantern/install.sh"), "{sent}");
    assert!(!sent.contains("lantern serve --data"), "{sent}");
    // The run is in the target's history: one change request, merged.
    let crs = app
        .get(
            &owner,
            &format!("/v1/spaces/{target}/change-requests?status=merged"),
        )
        .await
        .expect(200);
    assert_eq!(crs["items"].as_array().unwrap().len(), 1, "{crs}");

    // A run with nothing changed sends nothing and translates no page.
    let before = translator.requests();
    let again = run(&app, &owner, &org, &id).await;
    assert_eq!(translator.requests(), before);
    assert_eq!(again["stats"]["runs"], 2);
    assert_eq!(again["stats"]["latestPages"], 0);
    assert_eq!(again["stats"]["latestWords"], 0);
    assert_eq!(again["stats"]["latestSkippedPages"], source_pages.len() as i64);
    assert_eq!(again["stats"]["totalPages"], source_pages.len() as i64);
}

/// Writes a page's markdown to a space's main content.
async fn set_markdown(app: &TestApp, user: &TestUser, space: &str, page: &str, markdown: &str) {
    let change = json!([{"operation": "update_page", "page": page, "document": {"markdown": markdown}}]);
    write_main(app, user, space, vec![change]).await;
}

#[tokio::test]
async fn later_runs_send_only_what_changed_and_leave_pages_people_edited() {
    let translator = FakeTranslator::start(Protocol::LibreTranslate).await;
    let app = app_with(&translator).await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let source = new_space(&app, &owner, &org, "Guide").await;
    let (_, written) = write_main(
        &app,
        &owner,
        &source,
        vec![json!([
            {"operation": "insert_page", "ref": "a", "title": "Alpha",
             "document": {"markdown": "# Alpha\n\nFirst paragraph of alpha.\n\nSecond paragraph of alpha.\n\nSee [beta](./beta.md).\n"}},
            {"operation": "insert_page", "ref": "b", "title": "Beta",
             "document": {"markdown": "# Beta\n\nBeta says hello.\n\n```sh\necho keep me\n```\n"}},
            {"operation": "insert_page", "ref": "c", "title": "Gamma",
             "document": {"markdown": "# Gamma\n\nGamma stays.\n"}}
        ])],
    )
    .await;
    let page = |i: usize| {
        written[0]["changes"][i]["page"]["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (alpha, beta) = (page(0), page(1));
    let id = create(&app, &owner, &org, &source, "de").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let first = run(&app, &owner, &org, &id).await;
    assert_eq!(first["status"], "completed", "{first}");
    assert_eq!(first["stats"]["latestPages"], 3);
    let target = first["result"]["space"].as_str().unwrap().to_string();
    let sent_first = translator.texts().len();

    // One paragraph of alpha changes: only it goes to the translator.
    set_markdown(
        &app,
        &owner,
        &source,
        &alpha,
        "# Alpha\n\nFirst paragraph of alpha.\n\nA rewritten second paragraph.\n\nSee [beta](./beta.md).\n",
    )
    .await;
    let second = run(&app, &owner, &org, &id).await;
    assert_eq!(second["status"], "completed", "{second}");
    let sent: Vec<String> = translator.texts()[sent_first..].to_vec();
    assert_eq!(sent, vec!["A rewritten second paragraph.".to_string()]);
    assert_eq!(second["stats"]["latestPages"], 1);
    assert_eq!(second["stats"]["latestSkippedPages"], 2);
    assert_eq!(second["stats"]["latestWords"], 4);
    let alpha_doc = document(&app, &owner, &target, &alpha).await.to_string();
    assert!(alpha_doc.contains("A REWRITTEN SECOND PARAGRAPH."), "{alpha_doc}");
    assert!(alpha_doc.contains("FIRST PARAGRAPH OF ALPHA."), "{alpha_doc}");

    // A person edits beta in the target; then beta's source changes: the person's text stays,
    // and the run says the page needs review.
    set_markdown(
        &app,
        &owner,
        &target,
        &beta,
        "# Beta\n\nEin Mensch hat das geschrieben.\n",
    )
    .await;
    set_markdown(&app, &owner, &source, &beta, "# Beta\n\nBeta says goodbye.\n").await;
    let third = run(&app, &owner, &org, &id).await;
    assert_eq!(third["status"], "completed", "{third}");
    assert_eq!(third["pagesToReview"], json!([beta]));
    assert_eq!(third["stats"]["latestPagesToReview"], 1);
    assert_eq!(third["stats"]["latestPages"], 0);
    let beta_doc = document(&app, &owner, &target, &beta).await.to_string();
    assert!(beta_doc.contains("Ein Mensch hat das geschrieben."), "{beta_doc}");
    assert!(!beta_doc.contains("GOODBYE"), "{beta_doc}");
    assert_eq!(third["stats"]["runs"], 3);
    assert_eq!(third["stats"]["totalPages"], 3);
}

#[tokio::test]
async fn a_run_cut_short_by_a_killed_process_finishes_once_after_restart() {
    let translator = FakeTranslator::start(Protocol::OpenAi).await;
    let flags = translator.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut first = TestApp::start_with(&flags).await;
    let owner = first.user("Owner").await;
    let org = first.org(&owner, "Docs").await;
    let source = imported_space(&first, &owner, &org).await;
    let id = create(&first, &owner, &org, &source, "es").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    translator.hold();
    first
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations/{id}/run"),
            json!({}),
        )
        .await
        .expect(204);
    translator.wait_for_requests(1).await;
    let running = first
        .get(&owner, &format!("/v1/orgs/{org}/translations/{id}"))
        .await
        .expect(200);
    assert_eq!(running["status"], "running");
    first.kill();
    // The killed process's lease would expire in a minute: expire it now.
    let db = first.another_process().await;
    db.write(|c| {
        c.execute(
            "UPDATE jobs SET lease_until = 0 WHERE lease_until IS NOT NULL",
            &[],
        )
    })
    .await
    .unwrap();
    translator.release();
    let second = first.beside_with(&flags).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let done = loop {
        let t = second
            .get(&owner, &format!("/v1/orgs/{org}/translations/{id}"))
            .await
            .expect(200);
        if t["status"] == "completed" {
            break t;
        }
        assert_ne!(t["status"], "failed", "{t}");
        assert!(Instant::now() < deadline, "the run never finished: {t}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["stats"]["runs"], 1, "{done}");
    let target = done["result"]["space"].as_str().unwrap();
    let crs = second
        .get(
            &owner,
            &format!("/v1/spaces/{target}/change-requests?status=merged"),
        )
        .await
        .expect(200);
    assert_eq!(
        crs["items"].as_array().unwrap().len(),
        1,
        "one change request: {crs}"
    );
    let open = second
        .get(
            &owner,
            &format!("/v1/spaces/{target}/change-requests?status=open"),
        )
        .await
        .expect(200);
    assert_eq!(open["items"], json!([]), "none left open");
    let spaces = second
        .get(&owner, &format!("/v1/orgs/{org}/spaces"))
        .await
        .expect(200);
    let translated = spaces["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["language"] == "es")
        .count();
    assert_eq!(translated, 1, "one target space");
}

#[tokio::test]
async fn bad_requests_are_refused_and_permissions_are_the_callers() {
    let translator = FakeTranslator::start(Protocol::LibreTranslate).await;
    let app = app_with(&translator).await;
    let owner = app.user("Owner").await;
    let reader = app.user("Reader").await;
    let outsider = app.user("Outsider").await;
    let org = app.org(&owner, "Docs").await;
    app.add_member(&owner, &org, &reader, Some("read")).await;
    let source = new_space(&app, &owner, &org, "Guide").await;
    let base = format!("/v1/orgs/{org}/translations");
    let body = |space: &str, from: &str, to: &str| json!({"source": {"space": space, "language": from}, "language": to});

    let message = app
        .post(&owner, &base, body(&source, "en", "xx"))
        .await
        .expect_error(400);
    assert!(message.contains("`language`"), "{message}");
    let message = app
        .post(&owner, &base, body(&source, "zz", "fr"))
        .await
        .expect_error(400);
    assert!(message.contains("`source.language`"), "{message}");
    let message = app
        .post(&owner, &base, body(&source, "fr", "fr"))
        .await
        .expect_error(400);
    assert!(message.contains("source's own language"), "{message}");
    let other_org = app.org(&outsider, "Elsewhere").await;
    let foreign = new_space(&app, &outsider, &other_org, "Theirs").await;
    let message = app
        .post(&owner, &base, body(&foreign, "en", "fr"))
        .await
        .expect_error(400);
    assert!(message.contains("`source.space`"), "{message}");
    app.post(
        &owner,
        &base,
        json!({"source": {"space": source, "language": "en"}, "language": "fr", "instructions": "be nice"}),
    )
    .await
    .expect_error(400);
    app.post(&reader, &base, body(&source, "en", "fr"))
        .await
        .expect_error(403);

    let created = app
        .post(
            &owner,
            &base,
            json!({"source": {"space": source, "language": "en"}, "language": "fr",
                   "instructions": {"object": "document", "data": {}, "nodes": []}}),
        )
        .await
        .expect(201);
    let id = created["id"].as_str().unwrap();
    app.post(&owner, &base, body(&source, "en", "fr"))
        .await
        .expect_error(400);
    let path = format!("{base}/{id}");
    let seen = app.get(&reader, &path).await.expect(200);
    assert_eq!(seen["permissions"], json!({"view": true, "edit": false}));
    app.post(&reader, &format!("{path}/run"), json!({}))
        .await
        .expect_error(403);
    app.put(
        &reader,
        &path,
        json!({"instructions": {"object": "document", "nodes": []}}),
    )
    .await
    .expect_error(403);
    app.get(&outsider, &path).await.expect_error(404);
    app.get(&owner, &format!("{base}/nope")).await.expect_error(404);
    app.post(&owner, &format!("{base}/nope/run"), json!({}))
        .await
        .expect_error(404);
    let listed = app.get(&reader, &base).await.expect(200);
    assert_eq!(listed["items"].as_array().unwrap().len(), 1);

    let instructions = json!({"object": "document", "data": {}, "nodes": [
        {"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "Use the formal Sie.", "marks": []}]}]}
    ]});
    let updated = app
        .put(&owner, &path, json!({"instructions": instructions}))
        .await
        .expect(200);
    assert_eq!(updated["instructions"], instructions);
    app.put(&owner, &path, json!({})).await.expect_error(400);

    app.delete(&reader, &path).await.expect_error(403);
    app.delete(&owner, &path).await.expect(204);
    app.delete(&owner, &path).await.expect(204);
    app.get(&owner, &path).await.expect_error(404);
}

#[tokio::test]
async fn without_a_translator_a_run_says_how_to_configure_one() {
    let app = TestApp::start_with(&["--no-jobs"]).await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let source = new_space(&app, &owner, &org, "Guide").await;
    let id = create(&app, &owner, &org, &source, "ja").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let message = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations/{id}/run"),
            json!({}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("QUIRE_TRANSLATOR=openai"), "{message}");
    let t = app
        .get(&owner, &format!("/v1/orgs/{org}/translations/{id}"))
        .await
        .expect(200);
    assert_eq!(t["status"], "pending");
}

#[tokio::test]
async fn the_glossary_and_instructions_reach_the_translator() {
    let translator = FakeTranslator::start(Protocol::OpenAi).await;
    let app = app_with(&translator).await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let glossary = format!("/v1/orgs/{org}/translations-glossary");
    app.put(
        &owner,
        &glossary,
        json!({"operations": [
            {"type": "insert", "translations": {"en": "change request", "fr": "demande de modification"}},
            {"type": "insert", "translations": {"en": "space", "de": "Bereich"}}
        ]}),
    )
    .await
    .expect(204);
    let entries = app
        .get(&owner, &format!("{glossary}?orderBy=en"))
        .await
        .expect(200);
    let items = entries["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["translations"]["en"], "change request");
    assert_eq!(items[0]["object"], "glossary-entry");
    let entry = items[1]["id"].as_str().unwrap();
    let one = app.get(&owner, &format!("{glossary}/{entry}")).await.expect(200);
    assert_eq!(one["translations"]["de"], "Bereich");
    app.put(
        &owner,
        &glossary,
        json!({"operations": [{"type": "update", "id": "nope", "translations": {"en": "x"}}]}),
    )
    .await
    .expect_error(400);
    app.put(
        &owner,
        &glossary,
        json!({"operations": [{"type": "insert", "translations": {"en": "two\nlines"}}]}),
    )
    .await
    .expect_error(400);

    let source = new_space(&app, &owner, &org, "Guide").await;
    write_main(
        &app,
        &owner,
        &source,
        vec![json!([{"operation": "insert_page", "title": "Reviews",
            "document": {"markdown": "# Reviews\n\nOpen a change request to propose edits.\n"}}])],
    )
    .await;
    let created = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations"),
            json!({"source": {"space": source, "language": "en"}, "language": "fr",
                   "instructions": {"object": "document", "data": {}, "nodes": [
                       {"object": "block", "type": "paragraph", "nodes": [{"object": "text", "leaves": [{"object": "leaf", "text": "Tutoyez le lecteur.", "marks": []}]}]}
                   ]}}),
        )
        .await
        .expect(201);
    let id = created["id"].as_str().unwrap();
    let done = run(&app, &owner, &org, id).await;
    assert_eq!(done["status"], "completed", "{done}");
    let prompts = translator.system_prompts().join("\n");
    assert!(prompts.contains("Tutoyez le lecteur."), "{prompts}");
    assert!(
        prompts.contains("change request") && prompts.contains("demande de modification"),
        "{prompts}"
    );
    assert!(
        !prompts.contains("Bereich"),
        "only the entries of the run's languages: {prompts}"
    );
}

/// A new organization's space of one page, and its translation into Italian: (owner, org, id).
async fn one_page_translation(app: &TestApp) -> (TestUser, String, String) {
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let source = new_space(app, &owner, &org, "Guide").await;
    write_main(
        app,
        &owner,
        &source,
        vec![json!([{"operation": "insert_page", "title": "Alpha",
            "document": {"markdown": "# Alpha\n\nSome text.\n"}}])],
    )
    .await;
    let id = create(app, &owner, &org, &source, "it").await["id"]
        .as_str()
        .unwrap()
        .to_string();
    (owner, org, id)
}

#[tokio::test]
async fn a_translator_that_fails_is_tried_again_and_one_that_refuses_fails_the_run() {
    let translator = FakeTranslator::start(Protocol::OpenAi).await;
    let app = app_with(&translator).await;
    let (owner, org, id) = one_page_translation(&app).await;
    // Unavailable for every try of the translator's: the step fails, the run goes on later.
    translator.fail_next(4);
    let waiting = run(&app, &owner, &org, &id).await;
    assert_eq!(waiting["status"], "running", "{waiting}");
    assert!(waiting["error"].as_str().unwrap().contains("503"), "{waiting}");
    let db = app.another_process().await;
    db.write(|c| c.execute("UPDATE jobs SET run_at = 0", &[]))
        .await
        .unwrap();
    drain(&app).await;
    let done = app
        .get(&owner, &format!("/v1/orgs/{org}/translations/{id}"))
        .await
        .expect(200);
    assert_eq!(done["status"], "completed", "{done}");
    assert!(done.get("error").is_none(), "{done}");
    assert_eq!(done["stats"]["runs"], 1);

    // A translator that refuses the key: the run fails at once, saying why.
    let mut flags = translator.flags();
    let key = flags.iter().position(|f| f == "--translator-key").unwrap();
    flags[key + 1] = "wrong-key".into();
    flags.push("--no-jobs".into());
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let refused = TestApp::start_with(&flags).await;
    let (owner, org, id) = one_page_translation(&refused).await;
    let failed = run(&refused, &owner, &org, &id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("401") && !error.contains("wrong-key"), "{error}");
    // Run again: queued afresh.
    refused
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations/{id}/run"),
            json!({}),
        )
        .await
        .expect(204);
    let queued = refused
        .get(&owner, &format!("/v1/orgs/{org}/translations/{id}"))
        .await
        .expect(200);
    assert_eq!(queued["status"], "pending");
}

#[tokio::test]
async fn a_purged_target_space_is_made_again_with_every_page() {
    let translator = FakeTranslator::start(Protocol::LibreTranslate).await;
    let mut flags = translator.flags();
    flags.extend(["--no-jobs".into(), "--space-retention".into(), "0s".into()]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let app = TestApp::start_with(&flags).await;
    let (owner, org, id) = one_page_translation(&app).await;
    let first = run(&app, &owner, &org, &id).await;
    let target = first["result"]["space"].as_str().unwrap().to_string();
    // Deleted, then purged (no retention): the translation no longer has a target.
    app.delete(&owner, &format!("/v1/spaces/{target}"))
        .await
        .expect(204);
    drain(&app).await;
    app.get(&owner, &format!("/v1/spaces/{target}"))
        .await
        .expect_error(404);
    let requests = translator.requests();
    let again = run(&app, &owner, &org, &id).await;
    assert_eq!(again["status"], "completed", "{again}");
    let made = again["result"]["space"].as_str().unwrap();
    assert_ne!(made, target);
    assert_eq!(again["stats"]["latestPages"], 1);
    assert_eq!(translator.requests(), requests, "the memory had every segment");
    let page = &pages(&app, &owner, made).await[0];
    assert_eq!(page["title"], "ALPHA");
}
