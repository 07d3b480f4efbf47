//! PDF exports: `GET /v1/spaces/{id}/pdf` and its change request's, answered with a signed
//! link that serves the PDF once the `pdf_render` job typeset it (202 with `Retry-After`
//! until then), cached per revision, page and `only`.
//!
//! The PDF's text is checked with poppler's `pdftotext` when it is installed (required when
//! `QUIRE_TEST_PDF_TOOLS=required`, as in CI).

use std::process::Command;

use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::site::{handbook_pages, id};
use crate::support::{TestApp, TestUser};

/// A server whose jobs run only when a test says (`drain`), and whose PDF links answer at
/// once rather than wait for a PDF.
async fn app() -> TestApp {
    TestApp::start_with(&["--no-jobs", "--pdf-wait", "0s"]).await
}

async fn drain(app: &TestApp) {
    while quire_store::worker::run_one(app.server()).await.unwrap() {}
}

/// A space written with the handbook's pages (an image, a home page, a group with a page).
async fn handbook(app: &TestApp, owner: &TestUser) -> (String, String) {
    let org = app.org(owner, "Docs").await;
    let space = new_space(app, owner, &org, "Handbook").await;
    write_main(app, owner, &space, vec![Value::Array(handbook_pages())]).await;
    (org, space)
}

/// GETs a link as a browser would: no token.
async fn fetch(url: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let resp = reqwest::get(url).await.expect("the link answers");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.expect("a body").to_vec())
}

/// The text of a PDF, when poppler's `pdftotext` is installed.
fn pdf_text(bytes: &[u8]) -> Option<String> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("export.pdf");
    std::fs::write(&path, bytes).expect("the PDF written");
    match Command::new("pdftotext").arg(&path).arg("-").output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("pdftotext failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(_) if std::env::var("QUIRE_TEST_PDF_TOOLS").as_deref() == Ok("required") => {
            panic!("pdftotext is required (QUIRE_TEST_PDF_TOOLS=required) but not installed")
        }
        Err(_) => None,
    }
}

/// The link an export operation (`path`, with its query) answers.
async fn pdf_link(app: &TestApp, user: &TestUser, path: &str) -> String {
    let answer = app.get(user, path).await.expect(200);
    answer["url"].as_str().expect("a url").to_string()
}

/// The export id a link names.
fn export_of(url: &str) -> String {
    url.split("/pdfs/")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("an export id")
        .to_string()
}

#[tokio::test]
async fn a_space_exports_as_a_pdf_at_a_signed_link_typeset_once() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let url = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    assert!(url.contains("/pdfs/") && url.contains("Handbook.pdf?e="), "{url}");

    // Not typeset yet: the link says so and when to ask again.
    let (status, headers, body) = fetch(&url).await;
    assert_eq!(status, 202, "{}", String::from_utf8_lossy(&body));
    assert_eq!(headers["retry-after"], "2");
    let pending: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(pending["state"], "pending");

    drain(&app).await;
    let (status, headers, pdf) = fetch(&url).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/pdf");
    assert_eq!(
        headers["content-disposition"],
        "inline; filename*=UTF-8''Handbook.pdf"
    );
    assert!(pdf.starts_with(b"%PDF-"), "a PDF");
    if let Some(text) = pdf_text(&pdf) {
        let at = |needle: &str| {
            text.find(needle)
                .unwrap_or_else(|| panic!("{needle:?} not in the PDF: {text}"))
        };
        // The cover, the contents in tree order, the pages' text.
        assert!(at("Handbook") < at("Contents"));
        assert!(text.contains("Hello readers."));
        assert!(text.contains("Install it with the zephyr tool."));
        assert!(text.rfind("Welcome").unwrap() < text.rfind("Setup").unwrap());
    }

    // Asked again: the same export, no new job, the same bytes.
    let again = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    assert_eq!(export_of(&again), export_of(&url));
    assert_eq!(
        app.scalar("SELECT count(*) FROM jobs WHERE kind = ?1", "pdf_render")
            .await,
        0
    );
    let (_, _, same) = fetch(&again).await;
    assert_eq!(same, pdf);
    assert_eq!(
        app.scalar(
            "SELECT count(*) FROM pdf_exports WHERE space_id = ?1",
            space.as_str()
        )
        .await,
        1
    );

    // A new revision of main is a new export.
    write_main(
        &app,
        &owner,
        &space,
        vec![json!([crate::support::site::page(
            "Changelog",
            "# Changelog\n\nVersion two.\n"
        )])],
    )
    .await;
    let newer = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    assert_ne!(export_of(&newer), export_of(&url));
    drain(&app).await;
    let (status, _, pdf) = fetch(&newer).await;
    assert_eq!(status, 200);
    if let Some(text) = pdf_text(&pdf) {
        assert!(text.contains("Version two."), "{text}");
    }
}

#[tokio::test]
async fn a_page_exports_with_its_children_or_alone() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let pages = app
        .get(&owner, &format!("/v1/spaces/{space}/content/pages"))
        .await
        .expect(200);
    let guides = pages["pages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["title"] == "Guides")
        .expect("the Guides group")
        .clone();
    let guides_id = id(&guides);
    let subtree = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf?page={guides_id}")).await;
    assert!(subtree.contains("/Guides.pdf?"), "{subtree}");
    let alone = pdf_link(
        &app,
        &owner,
        &format!("/v1/spaces/{space}/pdf?page={guides_id}&only=true"),
    )
    .await;
    assert_ne!(export_of(&subtree), export_of(&alone));
    drain(&app).await;
    let (status, _, with_children) = fetch(&subtree).await;
    assert_eq!(status, 200);
    let (status, _, only) = fetch(&alone).await;
    assert_eq!(status, 200);
    if let (Some(with_children), Some(only)) = (pdf_text(&with_children), pdf_text(&only)) {
        assert!(
            with_children.contains("Install it with the zephyr tool."),
            "{with_children}"
        );
        assert!(!with_children.contains("Hello readers."), "{with_children}");
        assert!(only.contains("All the guides."), "{only}");
        assert!(!only.contains("zephyr"), "{only}");
    }

    // What the options cannot mean.
    let message = app
        .get(&owner, &format!("/v1/spaces/{space}/pdf?only=true"))
        .await
        .expect_error(400);
    assert!(message.contains("`only` needs `page`"), "{message}");
    app.get(&owner, &format!("/v1/spaces/{space}/pdf?page=nope"))
        .await
        .expect_error(404);
    app.get(&owner, &format!("/v1/spaces/{space}/pdf?only=maybe"))
        .await
        .expect_error(400);
    assert_eq!(
        app.scalar(
            "SELECT count(*) FROM pdf_exports WHERE space_id = ?1",
            space.as_str()
        )
        .await,
        2
    );
}

#[tokio::test]
async fn a_change_request_exports_its_draft() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let cr = id(&app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Draft"}),
        )
        .await
        .expect(201));
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [crate::support::site::page("Roadmap", "# Roadmap\n\nDrafted, not merged.\n")]}),
    )
    .await
    .expect(200);
    let url = pdf_link(
        &app,
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/pdf"),
    )
    .await;
    let main = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    drain(&app).await;
    let (status, _, draft) = fetch(&url).await;
    assert_eq!(status, 200);
    let (_, _, merged) = fetch(&main).await;
    if let (Some(draft), Some(merged)) = (pdf_text(&draft), pdf_text(&merged)) {
        assert!(draft.contains("Drafted, not merged."), "{draft}");
        assert!(!merged.contains("Drafted"), "{merged}");
    }
    app.get(&owner, &format!("/v1/spaces/{space}/change-requests/nope/pdf"))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn links_hold_only_as_signed_and_only_for_readers_of_the_space() {
    let app = app().await;
    let owner = app.user("ada").await;
    let stranger = app.user("eve").await;
    let (_, space) = handbook(&app, &owner).await;
    app.get(&stranger, &format!("/v1/spaces/{space}/pdf"))
        .await
        .expect_error(404);
    assert_eq!(
        app.scalar(
            "SELECT count(*) FROM pdf_exports WHERE space_id = ?1",
            space.as_str()
        )
        .await,
        0
    );

    let url = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    drain(&app).await;
    assert_eq!(fetch(&url).await.0, 200);
    let tampered = [
        url.replace("Handbook.pdf", "Other.pdf"),
        url.replace("&s=", "&s=x"),
        {
            let (head, _) = url.split_once("?e=").unwrap();
            let (_, signature) = url.split_once("&s=").unwrap();
            format!("{head}?e=9999999999&s={signature}")
        },
        url.split_once('?').unwrap().0.to_string(),
    ];
    for bad in tampered {
        let (status, _, body) = fetch(&bad).await;
        assert_eq!(status, 404, "{bad}");
        let error: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(error["error"]["code"], 404);
    }
}

#[tokio::test]
async fn an_export_of_a_deleted_space_fails_visibly() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let url = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    app.delete(&owner, &format!("/v1/spaces/{space}"))
        .await
        .expect(204);
    drain(&app).await;
    let (status, _, body) = fetch(&url).await;
    assert_eq!(status, 422);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the space was deleted"),
        "{error}"
    );
}

/// A run that died mid-typesetting leaves the export pending and the job leased; once the
/// lease runs out the job runs again, and the PDF is stored once.
#[tokio::test]
async fn a_render_that_died_is_taken_again_and_stored_once() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let url = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    let store = app.server().store.clone();
    let now = quire_store::clock::now_ms();
    let dead = store
        .db
        .write(move |c| quire_store::jobs::claim(c, now))
        .await
        .unwrap()
        .expect("the render is due");
    assert_eq!(dead.kind, "pdf_render");
    assert!(!quire_store::worker::run_one(&store).await.unwrap(), "leased");
    assert_eq!(fetch(&url).await.0, 202);
    let blobs_before = app.stored_blobs(&space).await;
    let later = now + quire_store::jobs::LEASE_MS + 1;
    let retaken = store
        .db
        .write(move |c| quire_store::jobs::claim(c, later))
        .await
        .unwrap()
        .expect("the lease ran out");
    assert_eq!(retaken.id, dead.id);
    quire_store::pdf::run(&store, &retaken.payload.clone().unwrap())
        .await
        .unwrap();
    // The first run finishing late finds the export ready and does nothing.
    quire_store::pdf::run(&store, &dead.payload.clone().unwrap())
        .await
        .unwrap();
    let (status, _, pdf) = fetch(&url).await;
    assert_eq!(status, 200);
    assert!(pdf.starts_with(b"%PDF-"));
    let added: Vec<String> = app
        .stored_blobs(&space)
        .await
        .difference(&blobs_before)
        .cloned()
        .collect();
    assert_eq!(added.len(), 1, "one PDF stored: {added:?}");
}

/// Exports nobody asked for within the retention go with their bytes; one whose bytes are
/// gone is typeset again when its link is followed.
#[tokio::test]
async fn unrequested_exports_are_pruned_and_lost_bytes_typeset_again() {
    let app = app().await;
    let owner = app.user("ada").await;
    let (_, space) = handbook(&app, &owner).await;
    let url = pdf_link(&app, &owner, &format!("/v1/spaces/{space}/pdf")).await;
    drain(&app).await;
    assert_eq!(fetch(&url).await.0, 200);
    let store = app.server().store.clone();
    let export = export_of(&url);
    let hash = {
        let id = export.clone();
        store
            .db
            .read(move |c| quire_store::pdf::load(c, &id))
            .await
            .unwrap()
            .unwrap()
            .hash
            .unwrap()
    };
    assert!(app.stored_blobs(&space).await.contains(&hash));

    // Bytes lost (a bucket emptied by hand): the link typesets the PDF again.
    app.blobs().delete(&space, &hash).await.unwrap();
    assert_eq!(fetch(&url).await.0, 202);
    drain(&app).await;
    assert_eq!(fetch(&url).await.0, 200);

    // Not asked for within the retention: the export and its bytes go.
    let now = quire_store::clock::now_ms();
    let removed = quire_store::pdf::prune(&store, now - quire_store::pdf::RETENTION_MS)
        .await
        .unwrap();
    assert_eq!(removed, 0, "asked for just now");
    let removed = quire_store::pdf::prune(&store, now + 1).await.unwrap();
    assert_eq!(removed, 1);
    assert!(!app.stored_blobs(&space).await.contains(&hash));
    assert_eq!(fetch(&url).await.0, 404);
}
