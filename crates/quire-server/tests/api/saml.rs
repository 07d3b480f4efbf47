//! SAML providers of an organization: created pending or active, checked field by field, listed
//! as sign-in choices, with the service provider's metadata for the identity provider.

use serde_json::json;

use crate::support::TestApp;

const CERT: &str = include_str!("fixtures/saml/idp-cert.pem");
const EXPIRED: &str = include_str!("fixtures/saml/idp-cert-expired.pem");

fn complete(label: &str) -> serde_json::Value {
    json!({
        "label": label,
        "entityID": "https://idp.example.com/metadata",
        "ssoURL": "https://idp.example.com/sso",
        "certificate": CERT,
    })
}

#[tokio::test]
async fn an_admin_adds_a_provider_that_is_active_once_complete() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let team = app
        .put(&ann, &format!("/v1/orgs/{org}/teams"), json!({"title": "Staff"}))
        .await
        .expect(201);
    let team_id = team["id"].as_str().unwrap();
    let saml = format!("/v1/orgs/{org}/saml");

    // Only a label: pending, its people readers by default.
    let created = app.post(&ann, &saml, json!({"label": "Okta"})).await;
    let location = created.headers["location"].to_str().unwrap().to_string();
    let pending = created.expect(201);
    assert_eq!(pending["object"], "saml-provider");
    assert_eq!(pending["status"], "pending");
    assert_eq!(pending["defaultRole"], "read");
    assert_eq!(pending["entityID"], "");
    let id = pending["id"].as_str().unwrap().to_string();
    assert!(
        location.ends_with(&format!("/v1/orgs/{org}/saml/{id}")),
        "{location}"
    );
    let service = &pending["service"];
    assert!(
        service["entityID"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/saml/{id}/metadata"))
    );
    assert!(
        service["acsURL"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/saml/{id}/acs"))
    );
    assert!(
        service["startURL"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/saml/{id}/start"))
    );
    assert_eq!(pending["urls"]["location"], location);
    // A pending provider is no way in yet.
    let logins = app.get(&ann, &format!("/v1/orgs/{org}/sso")).await.expect(200);
    assert_eq!(logins["items"], json!([]));

    // Completed (the bare base64 of the certificate is taken, and stored as PEM), with a team
    // and a role.
    let bare: String = CERT.lines().filter(|l| !l.starts_with("-----")).collect();
    let updated = app
        .patch(
            &ann,
            &format!("{saml}/{id}"),
            json!({
                "entityID": "https://idp.example.com/metadata",
                "ssoURL": "https://idp.example.com/sso",
                "certificate": bare,
                "defaultTeam": team_id,
                "defaultRole": "edit",
            }),
        )
        .await
        .expect(200);
    assert_eq!(updated["status"], "active");
    assert_eq!(updated["certificate"], CERT);
    assert_eq!(updated["defaultTeam"]["id"], team_id);
    assert_eq!(updated["defaultTeam"]["object"], "team");
    assert_eq!(updated["defaultRole"], "edit");
    assert_eq!(updated["label"], "Okta", "a field left out keeps its value");

    let got = app.get(&ann, &format!("{saml}/{id}")).await.expect(200);
    assert_eq!(got, updated);
    let listed = app.get(&ann, &saml).await.expect(200);
    assert_eq!(listed["count"], 1);
    assert_eq!(listed["items"][0], updated);
    let logins = app.get(&ann, &format!("/v1/orgs/{org}/sso")).await.expect(200);
    assert_eq!(
        logins["items"],
        json!([{"id": id, "label": "Okta", "startURL": updated["service"]["startURL"]}])
    );

    // Guests by choice; the team cleared.
    let guests = app
        .patch(
            &ann,
            &format!("{saml}/{id}"),
            json!({"defaultRole": null, "defaultTeam": null}),
        )
        .await
        .expect(200);
    assert_eq!(guests["defaultRole"], serde_json::Value::Null);
    assert!(guests.get("defaultTeam").is_none(), "{guests}");

    // Deleting the team leaves the provider without one.
    app.patch(&ann, &format!("{saml}/{id}"), json!({"defaultTeam": team_id}))
        .await
        .expect(200);
    app.delete(&ann, &format!("/v1/orgs/{org}/teams/{team_id}"))
        .await
        .expect(204);
    let after = app.get(&ann, &format!("{saml}/{id}")).await.expect(200);
    assert!(after.get("defaultTeam").is_none(), "{after}");

    // Delete: 204, then 404 to a read, and 204 again.
    app.delete(&ann, &format!("{saml}/{id}")).await.expect(204);
    app.get(&ann, &format!("{saml}/{id}")).await.expect_error(404);
    app.delete(&ann, &format!("{saml}/{id}")).await.expect(204);
    let listed = app.get(&ann, &saml).await.expect(200);
    assert_eq!(listed["count"], 0);
}

#[tokio::test]
async fn each_bad_field_is_a_400_naming_it_and_changes_nothing() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let other = app.org(&ann, "Other").await;
    let foreign_team = app
        .put(
            &ann,
            &format!("/v1/orgs/{other}/teams"),
            json!({"title": "Theirs"}),
        )
        .await
        .expect(201);
    let saml = format!("/v1/orgs/{org}/saml");
    let with = |field: &str, value: serde_json::Value| {
        let mut body = complete("Okta");
        body[field] = value;
        body
    };
    let cases = [
        (with("certificate", json!("not a certificate")), "`certificate`"),
        (with("certificate", json!(EXPIRED)), "expired on 2021-01-01"),
        (
            with(
                "certificate",
                json!("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"),
            ),
            "`certificate`",
        ),
        (
            with("certificate", json!(format!("{CERT}{CERT}"))),
            "one certificate",
        ),
        (with("certificate", json!("A".repeat(10_001))), "at most 10000"),
        (with("ssoURL", json!("idp.example.com/sso")), "`ssoURL`"),
        (with("ssoURL", json!("ftp://idp.example.com/sso")), "`ssoURL`"),
        (with("entityID", json!("not a uri")), "`entityID`"),
        (
            with("entityID", json!(format!("urn:{}", "x".repeat(1100)))),
            "`entityID`",
        ),
        (with("label", json!("")), "`label`"),
        (with("label", json!("x".repeat(31))), "`label`"),
        (with("defaultRole", json!("owner")), "`defaultRole`"),
        (with("defaultTeam", foreign_team["id"].clone()), "`defaultTeam`"),
        (with("defaultTeam", json!("nope")), "`defaultTeam`"),
        (json!({"entityID": "urn:a"}), "`label` is required"),
        (with("colour", json!("red")), "colour"),
    ];
    for (body, expected) in cases {
        let message = app.post(&ann, &saml, body.clone()).await.expect_error(400);
        assert!(message.contains(expected), "{body}: {message}");
    }
    assert_eq!(app.get(&ann, &saml).await.expect(200)["count"], 0);

    // A URN is an entity id too.
    let p = app
        .post(&ann, &saml, with("entityID", json!("urn:example:idp")))
        .await
        .expect(201);
    let id = p["id"].as_str().unwrap();
    let message = app
        .patch(&ann, &format!("{saml}/{id}"), json!({"certificate": EXPIRED}))
        .await
        .expect_error(400);
    assert!(message.contains("expired"), "{message}");
    let unchanged = app.get(&ann, &format!("{saml}/{id}")).await.expect(200);
    assert_eq!(unchanged["certificate"], CERT);
    app.get(&ann, &format!("{saml}/nope")).await.expect_error(404);
    app.patch(&ann, &format!("{saml}/nope"), json!({"label": "x"}))
        .await
        .expect_error(404);
}

#[tokio::test]
async fn providers_are_for_admins_and_sign_in_choices_for_members() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let cas = app.user("Cas").await;
    let out = app.user("Out").await;
    let org = app.org(&ann, "Acme").await;
    app.add_member(&ann, &org, &cas, Some("create")).await;
    let saml = format!("/v1/orgs/{org}/saml");
    let p = app.post(&ann, &saml, complete("Okta")).await.expect(201);
    let id = p["id"].as_str().unwrap();

    let message = app.get(&cas, &saml).await.expect_error(403);
    crate::support::assert_role_refusal(&message, "create");
    assert!(message.contains("needs the `admin` role"), "{message}");
    app.get(&cas, &format!("{saml}/{id}")).await.expect_error(403);
    app.post(&cas, &saml, complete("Mine")).await.expect_error(403);
    app.patch(&cas, &format!("{saml}/{id}"), json!({"label": "x"}))
        .await
        .expect_error(403);
    app.delete(&cas, &format!("{saml}/{id}")).await.expect_error(403);
    let logins = app.get(&cas, &format!("/v1/orgs/{org}/sso")).await.expect(200);
    assert_eq!(logins["items"][0]["id"], id);

    app.get(&out, &saml).await.expect_error(404);
    app.get(&out, &format!("/v1/orgs/{org}/sso"))
        .await
        .expect_error(404);
    app.delete(&out, &format!("{saml}/{id}")).await.expect(204);
    assert_eq!(app.get(&ann, &saml).await.expect(200)["count"], 1);
}

#[tokio::test]
async fn the_metadata_tells_the_identity_provider_where_to_answer() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let out = app.user("Out").await;
    let org = app.org(&ann, "Acme").await;
    let p = app
        .post(&ann, &format!("/v1/orgs/{org}/saml"), json!({"label": "Okta"}))
        .await
        .expect(201);
    let id = p["id"].as_str().unwrap();
    let path = format!("/v1/orgs/{org}/saml/{id}/metadata");
    // Public: anyone may read it, the identity provider included.
    let (status, headers, body) = app.get_raw(&out, &path, &[]).await;
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "application/samlmetadata+xml");
    let xml = String::from_utf8(body.to_vec()).unwrap();
    assert!(
        xml.contains(&format!(
            "entityID=\"{}\"",
            p["service"]["entityID"].as_str().unwrap()
        )),
        "{xml}"
    );
    assert!(
        xml.contains(&format!(
            "Location=\"{}\"",
            p["service"]["acsURL"].as_str().unwrap()
        )),
        "{xml}"
    );
    assert!(
        xml.contains("urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"),
        "{xml}"
    );
    let (status, _, _) = app
        .get_raw(&out, &format!("/v1/orgs/{org}/saml/nope/metadata"), &[])
        .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn an_organization_has_at_most_twenty_providers() {
    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let saml = format!("/v1/orgs/{org}/saml");
    for i in 0..20 {
        app.post(&ann, &saml, json!({"label": format!("IdP {i}")}))
            .await
            .expect(201);
    }
    let message = app
        .post(&ann, &saml, json!({"label": "One more"}))
        .await
        .expect_error(400);
    assert!(message.contains("at most 20"), "{message}");
    let pages = app.walk(&ann, &saml, 7).await;
    assert_eq!(pages.len(), 20);
}

/// The query pairs of a URL.
fn query(url: &url::Url) -> std::collections::BTreeMap<String, String> {
    url.query_pairs().into_owned().collect()
}

#[tokio::test]
async fn the_start_url_sends_the_browser_to_the_identity_provider_with_a_request() {
    use base64::Engine as _;
    use std::io::Read as _;

    let app = TestApp::start().await;
    let ann = app.user("Ann").await;
    let org = app.org(&ann, "Acme").await;
    let mut body = complete("Okta");
    body["ssoURL"] = json!("https://idp.example.com/sso?tenant=acme");
    let p = app
        .post(&ann, &format!("/v1/orgs/{org}/saml"), body)
        .await
        .expect(201);
    let start = p["service"]["startURL"].as_str().unwrap();
    // A browser, which follows the redirect itself: no token, no following here.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = browser
        .get(format!("{start}?returnTo=/s/handbook/install"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let location = url::Url::parse(resp.headers()["location"].to_str().unwrap()).unwrap();
    assert_eq!(location.host_str(), Some("idp.example.com"));
    assert_eq!(location.path(), "/sso");
    let q = query(&location);
    assert_eq!(q["tenant"], "acme", "the sign-in URL's own query is kept");
    let relay = &q["RelayState"];
    assert!(relay.len() <= 80, "SAML bindings cap the relay state at 80 bytes");
    let raw = base64::engine::general_purpose::STANDARD
        .decode(&q["SAMLRequest"])
        .unwrap();
    let mut xml = String::new();
    flate2::read::DeflateDecoder::new(&raw[..])
        .read_to_string(&mut xml)
        .unwrap();
    assert!(xml.contains(&format!(" ID=\"{relay}\"")), "{xml}");
    assert!(
        xml.contains("Destination=\"https://idp.example.com/sso?tenant=acme\""),
        "{xml}"
    );
    let acs = p["service"]["acsURL"].as_str().unwrap();
    assert!(
        xml.contains(&format!("AssertionConsumerServiceURL=\"{acs}\"")),
        "{xml}"
    );
    let issuer = p["service"]["entityID"].as_str().unwrap();
    assert!(
        xml.contains(&format!("<saml:Issuer>{issuer}</saml:Issuer>")),
        "{xml}"
    );
    assert!(xml.contains("bindings:HTTP-POST"), "{xml}");
    let kept = app
        .scalar(
            "SELECT count(*) FROM saml_requests WHERE id = ?1 AND return_to = '/s/handbook/install'",
            relay.as_str(),
        )
        .await;
    assert_eq!(kept, 1);

    // Each start is a request of its own.
    let again = browser.get(start).send().await.unwrap();
    let again = url::Url::parse(again.headers()["location"].to_str().unwrap()).unwrap();
    assert_ne!(&query(&again)["RelayState"], relay);

    // Never sent elsewhere afterwards; a pending or unknown provider starts nothing.
    for bad in [
        "//evil.example/x",
        "https://evil.example/",
        "javascript:alert(1)",
        "/\\evil",
    ] {
        let resp = browser
            .get(format!("{start}?returnTo={}", urlencode(bad)))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 400, "{bad}");
    }
    let on_origin = format!("{}/s/handbook", app.server().urls.base());
    let resp = browser
        .get(format!("{start}?returnTo={}", urlencode(&on_origin)))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 302);
    let pending = app
        .post(&ann, &format!("/v1/orgs/{org}/saml"), json!({"label": "Later"}))
        .await
        .expect(201);
    let resp = browser
        .get(pending["service"]["startURL"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let text = resp.text().await.unwrap();
    assert!(text.contains("pending"), "{text}");
    let resp = browser
        .get(format!(
            "{}/v1/orgs/{org}/saml/nope/start",
            app.server().urls.base()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
}

fn urlencode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}
