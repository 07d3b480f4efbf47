//! quire's OpenAPI document: its committed snapshot (`docs/openapi.json`), the spec's operations
//! it covers, and the access of every route the router serves.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

use crate::outsiders::router_routes;
use crate::support::TestApp;

/// A file of the repository, by its path from the repository's root.
pub(crate) fn repo_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

/// Every change to the contract shows in review as a diff of `docs/openapi.json`.
/// `QUIRE_UPDATE_SNAPSHOTS=1 cargo test -p quire-server --test api openapi` rewrites it.
#[test]
fn the_document_matches_its_snapshot() {
    let generated = quire_server::openapi::snapshot();
    let path = repo_file("docs/openapi.json");
    if std::env::var("QUIRE_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed == generated {
        return;
    }
    let first = committed
        .lines()
        .zip(generated.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| committed.lines().count().min(generated.lines().count()));
    let show = |text: &str| {
        text.lines()
            .skip(first.saturating_sub(3))
            .take(8)
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "docs/openapi.json differs from the document the code generates, from line {}:\n\
         --- committed\n{}\n+++ generated\n{}\n\
         If the change is meant, run `QUIRE_UPDATE_SNAPSHOTS=1 cargo test -p quire-server --test api openapi` \
         and commit docs/openapi.json with it.",
        first + 1,
        show(&committed),
        show(&generated),
    );
}

fn document() -> Value {
    serde_json::from_str(&quire_server::openapi::snapshot()).unwrap()
}

/// The one scope an operation's security requirement names, or None for a public one.
fn scope_of(doc: &Value, method: &str, path: &str) -> Result<Option<String>, String> {
    let path = path.replace("{*", "{");
    let op = &doc["paths"][&path][method.to_lowercase()];
    if !op.is_object() {
        return Err(format!("{method} {path} is not in the document"));
    }
    let security = op["security"]
        .as_array()
        .ok_or_else(|| format!("{method} {path} has no security"))?;
    match security.as_slice() {
        [requirement] if requirement.as_object().is_some_and(|r| r.is_empty()) => Ok(None),
        // A token is optional (a public OpenAPI specification's content): its scope when sent.
        [requirement] | [_, requirement]
            if security.len() == 1 || security[0].as_object().is_some_and(|r| r.is_empty()) =>
        {
            match requirement["token"].as_array().map(Vec::as_slice) {
                Some([Value::String(scope)]) => Ok(Some(scope.clone())),
                _ => Err(format!("{method} {path} has security {requirement}")),
            }
        }
        _ => Err(format!("{method} {path} has security {security:?}")),
    }
}

/// The spec's operations that quire serves are all in the document, each with its scope.
#[tokio::test]
async fn every_operation_of_the_spec_that_quire_serves_is_documented_with_a_scope() {
    let app = TestApp::start().await;
    let served = router_routes(&app);
    let doc = document();
    let spec = std::fs::read_to_string(repo_file("docs/spec/operations.tsv")).unwrap();
    let operations: Vec<(String, String)> = spec
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (cols[1].to_string(), cols[2].to_string())
        })
        .collect();
    assert_eq!(
        operations.len(),
        145,
        "docs/spec/operations.tsv lists 145 operations"
    );
    let mut implemented = 0;
    let mut faults = Vec::new();
    for (method, path) in &operations {
        if !served.contains(&(method.clone(), path.clone())) {
            continue;
        }
        implemented += 1;
        match scope_of(&doc, method, path) {
            Ok(Some(_)) => {}
            Ok(None) => faults.push(format!("{method} {path} is public")),
            Err(e) => faults.push(e),
        }
    }
    println!(
        "quire implements {implemented} of the spec's {} operations",
        operations.len()
    );
    assert!(faults.is_empty(), "{faults:#?}");
    // A floor, so that losing an operation shows; raise it as operations are added.
    assert!(
        implemented >= 115,
        "fewer of the spec's operations found than before: {implemented}"
    );
}

/// Every route the router serves (read from the router itself, as the outsider sweep reads it)
/// is in the route table and the document, with one scope or declared public.
#[tokio::test]
async fn every_route_of_the_router_has_an_access() {
    let app = TestApp::start().await;
    let served = router_routes(&app);
    let doc = document();
    let table = &app.server().api.get().expect("the route table is built").table;
    let mut faults = Vec::new();
    let public: BTreeSet<&str> = [
        "/",
        "/healthz",
        "/readyz",
        "/metrics",
        "/v1/openapi.json",
        "/blobs/{spaceId}/{hash}/{name}",
        // A PDF export's link: its signature is its authorization, like a file's.
        "/pdfs/{exportId}/{name}",
        // GitBook's renderer resolves a visitor's URL before it holds any token.
        "/v1/urls/published",
        // A SAML provider's service-provider metadata, which its identity provider fetches.
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/metadata",
        // Where a browser starts a sign-in with that provider, and where it ends.
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/start",
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/acs",
        // The browser's session (its cookie is its authorization).
        "/session",
        "/session/token",
        "/session/sign-out",
    ]
    .into_iter()
    .collect();
    // A public specification's latest content is read with no token.
    let token_optional: BTreeSet<&str> = [
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content/raw",
        // A public or unlisted integration's icon and preview images.
        "/v1/integrations/{integrationName}/assets/{assetHash}",
    ]
    .into_iter()
    .collect();
    for (method, path) in &served {
        let method_ = method.parse::<axum::http::Method>().unwrap();
        let access = table.access(&method_, path);
        let documented = scope_of(&doc, method, path);
        match (access, documented) {
            (Some(quire_server::openapi::Access::Scope(a)), Ok(Some(d))) if a == d => {}
            (Some(quire_server::openapi::Access::TokenOptional(a)), Ok(Some(d)))
                if a == d && token_optional.contains(path.as_str()) => {}
            (Some(quire_server::openapi::Access::Public), Ok(None)) if public.contains(path.as_str()) => {}
            other => faults.push(format!("{method} {path}: {other:?}")),
        }
    }
    let documented: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().len())
        .sum();
    assert_eq!(
        documented,
        served.len(),
        "the document lists routes the router does not serve"
    );
    assert!(faults.is_empty(), "{faults:#?}");
}

/// `GET /v1/openapi.json` serves the document without a token, for the server's own URL.
#[tokio::test]
async fn the_document_is_served_without_a_token() {
    let app = TestApp::start().await;
    let resp = app.request("GET", None, "/v1/openapi.json", None).await;
    let served = resp.expect(200);
    assert_eq!(served["openapi"], "3.1.0");
    assert_eq!(served["info"]["title"], "quire");
    let url = served["servers"][0]["url"].as_str().unwrap();
    assert_eq!(url, format!("http://{}", app.addr()));
    let mut expected = document();
    expected["servers"] = served["servers"].clone();
    assert_eq!(served, expected);
}
