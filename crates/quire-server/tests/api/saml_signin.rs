//! Signing in with a SAML provider, end to end: a sign-in started at quire, answered by the
//! test identity provider (`support::idp`, signing with the fixture key), checked at the ACS
//! URL, and what it opens: a member with the provider's role and team, a session cookie that
//! reads the organization's in-collection site, an API token from the session, sign-out,
//! revocation, expiry and SSO enforcement. Every way a response can be wrong is refused with
//! its own reason and opens nothing.

use serde_json::{Value, json};

use crate::support::idp::{self, Answer};
use crate::support::site::SiteBuilder;
use crate::support::{TestApp, TestUser};

const CERT: &str = include_str!("fixtures/saml/idp-cert.pem");

struct SignIn {
    app: TestApp,
    ann: TestUser,
    org: String,
    team: String,
    provider: Value,
    browser: reqwest::Client,
}

impl SignIn {
    async fn start() -> SignIn {
        SignIn::start_with(&[]).await
    }

    async fn start_with(flags: &[&str]) -> SignIn {
        let app = TestApp::start_with(flags).await;
        let ann = app.user("Ann").await;
        let org = app.org(&ann, "Acme").await;
        let team = app
            .put(&ann, &format!("/v1/orgs/{org}/teams"), json!({"title": "Staff"}))
            .await
            .expect(201)["id"]
            .as_str()
            .unwrap()
            .to_string();
        let provider = app
            .post(
                &ann,
                &format!("/v1/orgs/{org}/saml"),
                json!({
                    "label": "Okta",
                    "entityID": "https://idp.example.com/metadata",
                    "ssoURL": "https://idp.example.com/sso",
                    "certificate": CERT,
                    "defaultRole": "edit",
                    "defaultTeam": team,
                }),
            )
            .await
            .expect(201);
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        SignIn {
            app,
            ann,
            org,
            team,
            provider,
            browser,
        }
    }

    fn service(&self, field: &str) -> String {
        self.provider["service"][field].as_str().unwrap().to_string()
    }

    /// Starts a sign-in as a browser would; answers the request's id.
    async fn begin(&self, return_to: &str) -> String {
        let resp = self
            .browser
            .get(format!("{}?returnTo={return_to}", self.service("startURL")))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 302);
        let location = url::Url::parse(resp.headers()["location"].to_str().unwrap()).unwrap();
        location
            .query_pairs()
            .find(|(k, _)| k == "RelayState")
            .unwrap()
            .1
            .into_owned()
    }

    /// A valid answer to a sign-in just started.
    async fn answer(&self, email: &str) -> Answer {
        let request = self.begin("/s/handbook/").await;
        Answer::to(
            &request,
            &self.service("acsURL"),
            &self.service("entityID"),
            email,
        )
    }

    /// A browser's request to `path` of the server with the session `cookie` (and `origin`).
    async fn browse(
        &self,
        method: &str,
        path: &str,
        cookie: &str,
        origin: Option<&str>,
    ) -> reqwest::Response {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.app.base)
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut req = self.browser.request(method, url).header("cookie", cookie);
        if let Some(origin) = origin {
            req = req.header("origin", origin);
        }
        req.send().await.unwrap()
    }

    /// How many sessions the organization has (live or expired).
    async fn sessions(&self) -> i64 {
        self.app
            .scalar(
                "SELECT count(*) FROM sessions WHERE organization_id = ?1",
                self.org.as_str(),
            )
            .await
    }

    /// Posts `xml` to the ACS URL as the identity provider's form would.
    async fn post(&self, xml: &str) -> reqwest::Response {
        self.browser
            .post(self.service("acsURL"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                url::form_urlencoded::Serializer::new(String::new())
                    .append_pair("SAMLResponse", &idp::form_field(xml))
                    .append_pair("RelayState", "x")
                    .finish(),
            )
            .send()
            .await
            .unwrap()
    }

    /// Posts `xml` and expects it refused for `reason`, with no session and no new user.
    async fn refused(&self, xml: &str, reason: &str, email: &str) {
        let resp = self.post(xml).await;
        assert_eq!(resp.status(), 400, "{reason}");
        assert!(
            resp.headers().get("set-cookie").is_none(),
            "{reason}: no session cookie"
        );
        let body: Value = resp.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains(&format!("({reason})")), "{reason}: {message}");
        assert_eq!(
            self.app
                .scalar("SELECT count(*) FROM users WHERE email = ?1", email)
                .await,
            0,
            "{reason}"
        );
        assert_eq!(self.sessions().await, 0, "{reason}");
    }
}

/// The session cookie a response sets (`quire_session=...`), with its attributes.
fn set_cookie(resp: &reqwest::Response) -> String {
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("quire_session="))
        .expect("a session cookie")
}

fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_string()
}

#[tokio::test]
async fn a_valid_sign_in_makes_a_member_a_session_and_a_token() {
    let s = SignIn::start().await;
    let answer = s.answer("ada@example.com").await;
    let resp = s.post(&idp::signed_xml(&answer)).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/s/handbook/");
    let set = set_cookie(&resp);
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Lax") && set.contains("Path=/"),
        "{set}"
    );
    assert!(set.contains("Max-Age=43200"), "12 hours by default: {set}");
    assert!(!set.contains("Secure"), "the test server's URL is http: {set}");
    let cookie = cookie_pair(&set);

    // A member with the provider's role, in its team, marked SSO.
    let members = s
        .app
        .get(&s.ann, &format!("/v1/orgs/{}/members?limit=100", s.org))
        .await
        .expect(200);
    let ada = members["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["user"]["email"] == "ada@example.com")
        .expect("Ada is a member");
    assert_eq!(ada["role"], "edit");
    assert_eq!(ada["sso"], true);
    assert_eq!(ada["user"]["displayName"], "Ada Lovelace");
    let ada_id = ada["user"]["id"].as_str().unwrap().to_string();
    let in_team = s
        .app
        .scalar(
            "SELECT count(*) FROM team_members WHERE user_id = ?1",
            ada_id.as_str(),
        )
        .await;
    assert_eq!(in_team, 1);
    let team_of = s
        .app
        .get(&s.ann, &format!("/v1/orgs/{}/teams/{}/members", s.org, s.team))
        .await
        .expect(200);
    assert!(team_of["items"].to_string().contains(&ada_id), "{team_of}");

    // The session page knows her; it turns the session into a token that works on the API.
    let page = s.browse("GET", "/session", &cookie, None).await;
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["cache-control"], "no-store");
    let html = page.text().await.unwrap();
    assert!(
        html.contains("ada@example.com") && html.contains("Acme"),
        "{html}"
    );
    let made = s
        .browse("POST", "/session/token", &cookie, Some(&s.app.base))
        .await;
    assert_eq!(made.status(), 201);
    let html = made.text().await.unwrap();
    let token = html
        .split("<code id=\"token\">")
        .nth(1)
        .and_then(|rest| rest.split('<').next())
        .expect("the token on the page")
        .to_string();
    let me = s
        .app
        .request("GET", Some(&token), "/v1/user", None)
        .await
        .expect(200);
    assert_eq!(me["email"], "ada@example.com");
    let tokens = s
        .app
        .request("GET", Some(&token), "/v1/user/tokens", None)
        .await
        .expect(200);
    assert!(tokens["items"][0]["expiresAt"].is_string(), "{tokens}");

    // Another site's page cannot make one with her cookie.
    let forged = s
        .browse("POST", "/session/token", &cookie, Some("https://evil.example"))
        .await;
    assert_eq!(forged.status(), 403);

    // Signing in again keeps her role and signs her in again.
    let again = s.answer("ADA@example.com").await;
    let resp = s.post(&idp::signed_xml(&again)).await;
    assert_eq!(resp.status(), 303);
    let users = s
        .app
        .scalar("SELECT count(*) FROM users WHERE email = ?1", "ada@example.com")
        .await;
    assert_eq!(users, 1, "found by email, not created twice");

    // Signing out ends the session: the page no longer knows her.
    let out = s.browse("POST", "/session/sign-out", &cookie, None).await;
    assert_eq!(out.status(), 303);
    assert!(set_cookie(&out).contains("Max-Age=0"));
    let html = s
        .browse("GET", "/session", &cookie, None)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains("not signed in"), "{html}");
    let refused = s.browse("POST", "/session/token", &cookie, None).await;
    assert_eq!(refused.status(), 401);
}

#[tokio::test]
async fn a_response_signed_as_a_whole_is_accepted() {
    let s = SignIn::start().await;
    let mut answer = s.answer("bo@example.com").await;
    answer.sign_response = true;
    let resp = s.post(&idp::signed_xml(&answer)).await;
    assert_eq!(resp.status(), 303, "{}", resp.text().await.unwrap());
}

#[tokio::test]
async fn bad_responses_are_refused_each_for_its_reason() {
    let s = SignIn::start().await;
    let email = "mallory@example.com";
    let mut reasons = Vec::new();
    let mut check = async |xml: String, reason: &'static str| {
        s.refused(&xml, reason, email).await;
        reasons.push(reason);
    };

    // Tampered: the email changed after signing.
    let good = s.answer("someone@example.com").await;
    let tampered = idp::signed_xml(&good).replace("someone@example.com", email);
    check(tampered, "tampered").await;

    // Wrapped: a forged assertion carrying a real signature that references the real one.
    let real = s.answer(email).await;
    let signed = idp::signed_xml(&real);
    let start = signed.find("<ds:Signature ").unwrap();
    let end = signed.find("</ds:Signature>").unwrap() + "</ds:Signature>".len();
    let signature = signed[start..end].to_string();
    let mut forged = real.clone();
    forged.assertion_id = "_forged".into();
    let forged_assertion = idp::assertion(&forged, &signature);
    check(
        idp::response(&forged, &forged_assertion, ""),
        "signature_wrapping",
    )
    .await;
    // ... or the real assertion hidden beside a forged one with the same ID.
    let mut same_id = real.clone();
    same_id.email = "eve@example.com".into();
    let hidden = signed
        .split("<saml:Assertion")
        .nth(1)
        .map(|rest| format!("<saml:Assertion{}", rest.trim_end_matches("</samlp:Response>")))
        .unwrap();
    let wrapped = idp::response(
        &same_id,
        &idp::assertion(&same_id, &signature),
        &format!("<samlp:Extensions>{hidden}</samlp:Extensions>"),
    );
    check(wrapped, "signature_wrapping").await;

    // Expired, not yet valid, for another audience, sent elsewhere, unsigned, from another
    // issuer, signed by another key, answering nothing started here.
    let expired = s.answer(email).await.valid(-900, -600);
    check(idp::signed_xml(&expired), "expired").await;
    let early = s.answer(email).await.valid(600, 900);
    check(idp::signed_xml(&early), "not_yet_valid").await;
    let mut audience = s.answer(email).await;
    audience.audience = "https://other-sp.example/metadata".into();
    check(idp::signed_xml(&audience), "wrong_audience").await;
    let mut destination = s.answer(email).await;
    destination.destination = "https://other-sp.example/acs".into();
    check(idp::signed_xml(&destination), "wrong_destination").await;
    let unsigned = s.answer(email).await;
    check(
        idp::response(&unsigned, &idp::assertion(&unsigned, ""), ""),
        "unsigned",
    )
    .await;
    let mut issuer = s.answer(email).await;
    issuer.issuer = "https://evil-idp.example/metadata".into();
    check(idp::signed_xml(&issuer), "wrong_issuer").await;
    let mut unknown = s.answer(email).await;
    unknown.in_response_to = "_never_started".into();
    check(idp::signed_xml(&unknown), "unknown_request").await;
    check("<samlp:Response".into(), "malformed").await;

    let mut distinct = reasons.clone();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        reasons.len() - 1,
        "one repeat (two kinds of wrapping): {reasons:?}"
    );
}

#[tokio::test]
async fn a_response_is_accepted_once() {
    let s = SignIn::start().await;
    let answer = s.answer("cy@example.com").await;
    let xml = idp::signed_xml(&answer);
    assert_eq!(s.post(&xml).await.status(), 303);
    let again = s.post(&xml).await;
    assert_eq!(again.status(), 400);
    assert!(again.headers().get("set-cookie").is_none());
    let body: Value = again.json().await.unwrap();
    assert!(
        body["error"]["message"].as_str().unwrap().contains("(replay)"),
        "{body}"
    );
    assert_eq!(s.sessions().await, 1, "only the first opened a session");
}

#[tokio::test]
async fn a_signed_in_member_reads_the_in_collection_site_until_the_session_ends() {
    let s = SignIn::start_with(&["--session-ttl", "1h"]).await;
    let built = SiteBuilder::new(&s.app, &s.ann)
        .in_org(&s.org)
        .space("Guide", Value::Array(crate::support::site::handbook_pages()))
        .basename("handbook")
        .build()
        .await;
    s.app
        .patch(&s.ann, &built.base, json!({"visibility": "in-collection"}))
        .await
        .expect(200);
    let site = format!("{}/s/handbook/", s.app.base);
    let anonymous = s.browser.get(&site).send().await.unwrap();
    assert_eq!(anonymous.status(), 404, "nobody signed in");

    let answer = s.answer("dee@example.com").await;
    let resp = s.post(&idp::signed_xml(&answer)).await;
    let set = set_cookie(&resp);
    assert!(set.contains("Max-Age=3600"), "{set}");
    let cookie = cookie_pair(&set);
    let page = s.browse("GET", &site, &cookie, None).await;
    assert_eq!(page.status(), 200);
    assert!(page.text().await.unwrap().contains("Guide"));

    // An admin sees and revokes the session; the site is hidden again at once.
    let sessions = s
        .app
        .get(&s.ann, &format!("/v1/orgs/{}/sessions", s.org))
        .await
        .expect(200);
    assert_eq!(sessions["count"], 1);
    let session = &sessions["items"][0];
    assert_eq!(session["object"], "session");
    assert_eq!(session["user"]["email"], "dee@example.com");
    let id = session["id"].as_str().unwrap();
    s.app
        .delete(&s.ann, &format!("/v1/orgs/{}/sessions/{id}", s.org))
        .await
        .expect(204);
    let after = s.browse("GET", &site, &cookie, None).await;
    assert_eq!(after.status(), 404);

    // A session past its expiry reads nothing either.
    let answer = s.answer("dee@example.com").await;
    let cookie = cookie_pair(&set_cookie(&s.post(&idp::signed_xml(&answer)).await));
    assert_eq!(s.browse("GET", &site, &cookie, None).await.status(), 200);
    let db = s.app.db.clone();
    tokio::task::spawn_blocking(move || {
        db.write_sync(|c| c.execute("UPDATE sessions SET expires_at = 1", &[]))
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(s.browse("GET", &site, &cookie, None).await.status(), 404);
}

#[tokio::test]
async fn enforcing_sso_revokes_the_tokens_of_members_without_it() {
    let s = SignIn::start().await;
    let org = format!("/v1/orgs/{}", s.org);
    let bob = s.app.user("Bob").await;
    s.app.add_member(&s.ann, &s.org, &bob, Some("admin")).await;

    // Ann has not signed in with SSO: enforcing it would end her own tokens.
    let message = s
        .app
        .patch(&s.ann, &org, json!({"sso": true}))
        .await
        .expect_error(400);
    assert!(message.contains("sign in"), "{message}");
    assert_eq!(s.app.get(&bob, "/v1/user").await.status, 200);

    // Once signed in with the provider (as her own email) and holding a token from that
    // session, she enforces it: Bob's token stops working, and he gets no new one.
    let answer = s.answer(&s.ann.email).await;
    let cookie = cookie_pair(&set_cookie(&s.post(&idp::signed_xml(&answer)).await));
    let page = s.browse("POST", "/session/token", &cookie, None).await;
    assert_eq!(page.status(), 201);
    let enforced = s.app.patch(&s.ann, &org, json!({"sso": true})).await.expect(200);
    assert_eq!(enforced["sso"], true);
    assert_eq!(s.app.get(&bob, "/v1/user").await.status, 401);
    assert_eq!(
        s.app.get(&s.ann, "/v1/user").await.status,
        200,
        "hers still works"
    );
    let db = s.app.db.clone();
    let email = bob.email.clone();
    let refused = tokio::task::spawn_blocking(move || quire_store::admin::create_token(&db, &email, &[]))
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        refused.message.contains("requires single sign-on"),
        "{}",
        refused.message
    );
}

#[tokio::test]
async fn a_visitor_auth_site_signs_its_visitors_in_with_the_provider() {
    let s = SignIn::start().await;
    let built = SiteBuilder::new(&s.app, &s.ann)
        .in_org(&s.org)
        .space("Guide", Value::Array(crate::support::site::handbook_pages()))
        .basename("handbook")
        .build()
        .await;
    let base = &built.base;
    s.app
        .patch(&s.ann, base, json!({"visibility": "visitor-auth"}))
        .await
        .expect(200);
    s.app
        .put(
            &s.ann,
            &format!("{base}/adaptive-schema"),
            json!({"jsonSchema": {"type": "object", "properties": {
                "department": {"type": "string"},
                "beta": {"type": "boolean"},
            }, "additionalProperties": false}}),
        )
        .await
        .expect(200);
    // The site's sign-in is the organization's provider.
    s.app
        .patch(
            &s.ann,
            &format!("{base}/publishing/auth"),
            json!({"fallbackURL": s.service("startURL")}),
        )
        .await
        .expect(200);

    // A visitor without a token is sent to the provider's start, with where they were going.
    let away = s
        .browser
        .get(format!("{}/s/handbook/", s.app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(away.status(), 302);
    let start = away.headers()["location"].to_str().unwrap().to_string();
    assert!(start.starts_with(&s.service("startURL")), "{start}");
    let to_idp = s.browser.get(&start).send().await.unwrap();
    assert_eq!(to_idp.status(), 302);
    let idp = url::Url::parse(to_idp.headers()["location"].to_str().unwrap()).unwrap();
    let request = idp
        .query_pairs()
        .find(|(k, _)| k == "RelayState")
        .unwrap()
        .1
        .into_owned();

    // Signed in: back at the site with a visitor token carrying the attributes the site's
    // schema names (`department`; the schema's `beta` is not asserted, `displayName` is not in
    // the schema).
    let answer = Answer::to(
        &request,
        &s.service("acsURL"),
        &s.service("entityID"),
        "vi@example.com",
    );
    let back = s.post(&idp::signed_xml(&answer)).await;
    assert_eq!(back.status(), 303);
    let entry = back.headers()["location"].to_str().unwrap().to_string();
    assert!(entry.starts_with("/s/handbook/?jwt_token="), "{entry}");
    let token = entry.split("jwt_token=").nth(1).unwrap();
    let payload = token.split('.').nth(1).unwrap();
    use base64::Engine as _;
    let claims: Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["department"], "engineering");
    assert_eq!(claims["aud"], built.site.as_str());
    assert!(
        claims.get("beta").is_none() && claims.get("displayName").is_none(),
        "{claims}"
    );

    // The reader takes the token as any site sign-in's, and the visitor reads.
    let entered = s
        .browser
        .get(format!("{}{entry}", s.app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(entered.status(), 303);
    let visitor = entered.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(visitor.starts_with("quire_visitor="), "{visitor}");
    let page = s.browse("GET", "/s/handbook/", &visitor, None).await;
    assert_eq!(page.status(), 200);
}
