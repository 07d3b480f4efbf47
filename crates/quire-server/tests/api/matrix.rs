//! The permission matrix: for each role and each operation of organizations, members, teams,
//! invite links, docs sites and some of a space's, the status the server answers; and for each resource read, its
//! `permissions` object agrees with what the server then allows. `permissions_doc.rs` checks
//! that docs/permissions.md names, for each operation here, the weakest role the matrix allows.

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser, assert_role_refusal};

/// Callers, strongest first, in the order of the expected-status columns below.
pub(crate) const ROLES: [&str; 9] = [
    "admin",
    "create",
    "review",
    "edit",
    "comment",
    "read",
    "guest",
    "outsider",
    "anonymous",
];

struct World {
    app: TestApp,
    owner: TestUser,
    org: String,
    /// One user per role of [`ROLES`] (anonymous: a user whose token is not sent).
    callers: Vec<TestUser>,
    team: String,
    invite: String,
    /// A SAML provider of the organization.
    saml: String,
    space: String,
    /// A change request of `space`, opened by the owner, for reviews.
    change_request: String,
    site: String,
    /// The slug of an OpenAPI specification of the organization.
    spec: String,
    /// A translation of `space` into French.
    translation: String,
    /// An ingested conversation, its issue and that issue's cluster.
    conversation: String,
    issue: String,
    cluster: String,
    /// A private integration of the organization, installed in it.
    integration: String,
    installation: String,
}

async fn world() -> World {
    // A translator that cannot be reached (the outbound policy refuses it): runs are queued,
    // and fail in the background.
    let app = TestApp::start_with(&[
        "--translator",
        "libretranslate",
        "--translator-url",
        "http://127.0.0.1:9",
    ])
    .await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Matrix").await;
    let mut callers = Vec::new();
    for role in ROLES {
        let user = app.user(role).await;
        match role {
            "outsider" | "anonymous" => {}
            "guest" => app.add_member(&owner, &org, &user, None).await,
            r => app.add_member(&owner, &org, &user, Some(r)).await,
        }
        callers.push(user);
    }
    let team = app
        .put(&owner, &format!("/v1/orgs/{org}/teams"), json!({"title": "Team"}))
        .await
        .expect(201);
    let invite = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/link-invites"),
            json!({"role": "read"}),
        )
        .await
        .expect(201);
    let space = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Space"}),
        )
        .await
        .expect(201);
    let space_id = space["id"].as_str().unwrap().to_string();
    let change_request = app
        .post(
            &owner,
            &format!("/v1/spaces/{space_id}/change-requests"),
            json!({}),
        )
        .await
        .expect(201);
    let site = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites"),
            json!({"title": "Site", "spaces": [space_id]}),
        )
        .await
        .expect(201);
    app.post(
        &owner,
        &format!("/v1/orgs/{org}/openapi"),
        json!({"slug": "matrix", "source": {"text": "openapi: 3.1.0"}}),
    )
    .await
    .expect(201);
    let saml = app
        .post(&owner, &format!("/v1/orgs/{org}/saml"), json!({"label": "IdP"}))
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let translation = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations"),
            json!({"source": {"space": space_id, "language": "en"}, "language": "fr"}),
        )
        .await
        .expect(201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let (integration, installation) = fresh_integration(&app, &owner, &org).await;
    app.post(
        &owner,
        &format!("/v1/integrations/{integration}/installations/{installation}/spaces"),
        json!({"space": space_id}),
    )
    .await
    .expect(201);
    app.post(
        &owner,
        &format!("/v1/orgs/{org}/conversations"),
        json!({"id": "matrix", "parts": [{"type": "message", "role": "user", "body": "How do I export pages to Salesforce?"}]}),
    )
    .await
    .expect(204);
    crate::conversations::settled(&app, &owner, &org).await;
    let issues = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations-issues"))
        .await
        .expect(200);
    let issue = &issues["items"][0]["issue"];
    World {
        conversation: "matrix".to_string(),
        issue: issue["id"].as_str().unwrap().to_string(),
        cluster: issue["cluster"].as_str().unwrap().to_string(),
        translation,
        integration,
        installation,
        saml,
        spec: "matrix".to_string(),
        site: site["id"].as_str().unwrap().to_string(),
        team: team["id"].as_str().unwrap().to_string(),
        invite: invite["id"].as_str().unwrap().to_string(),
        space: space["id"].as_str().unwrap().to_string(),
        change_request: change_request["id"].as_str().unwrap().to_string(),
        app,
        owner,
        org,
        callers,
    }
}

/// A script whose one component, `card`, renders a block.
const CARD_SCRIPT: &str = r#"export default { async fetch(request) {
  const event = JSON.parse((await request.formData()).get("event"));
  if (event.type !== "ui_render") return new Response("OK");
  return Response.json({ type: "element", state: {}, props: event.props,
    element: { type: "block", children: [{ type: "markdown", content: "card" }] } });
} };"#;

/// A new private integration of `org` and its installation there.
async fn fresh_integration(app: &TestApp, owner: &TestUser, org: &str) -> (String, String) {
    let name = format!("m-{}", quire_server::ids::random_base62(10).to_lowercase());
    app.post(
        owner,
        &format!("/v1/integrations/{name}"),
        json!({"organization": org, "title": "Matrix app", "description": "", "script": CARD_SCRIPT,
               "scopes": ["space:content:read"]}),
    )
    .await
    .expect(200);
    let installation = app
        .post(
            owner,
            &format!("/v1/integrations/{name}/installations"),
            json!({"organization": org}),
        )
        .await
        .expect(201);
    (name, installation["id"].as_str().unwrap().to_string())
}

impl World {
    /// A fresh member, for operations that consume their target.
    async fn fresh_member(&self) -> TestUser {
        let user = self.app.user("target").await;
        self.app
            .add_member(&self.owner, &self.org, &user, Some("read"))
            .await;
        user
    }

    async fn fresh_team(&self) -> String {
        let team = self
            .app
            .put(
                &self.owner,
                &format!("/v1/orgs/{}/teams", self.org),
                json!({"title": "T"}),
            )
            .await;
        team.expect(201)["id"].as_str().unwrap().to_string()
    }

    /// A new specification's slug.
    async fn fresh_spec(&self) -> String {
        let slug = format!("s-{}", quire_server::ids::random_base62(10).to_lowercase());
        self.app
            .post(
                &self.owner,
                &format!("/v1/orgs/{}/openapi", self.org),
                json!({"slug": slug, "source": {"text": "openapi: 3.1.0"}}),
            )
            .await
            .expect(201);
        slug
    }

    /// A new translation of a new space.
    async fn fresh_translation(&self) -> String {
        let space = self
            .app
            .post(
                &self.owner,
                &format!("/v1/orgs/{}/spaces", self.org),
                json!({"title": "Translated"}),
            )
            .await
            .expect(201);
        let body = json!({"source": {"space": space["id"], "language": "en"}, "language": "de"});
        let path = format!("/v1/orgs/{}/translations", self.org);
        let created = self.app.post(&self.owner, &path, body).await.expect(201);
        created["id"].as_str().unwrap().to_string()
    }

    async fn fresh_site(&self) -> String {
        let site = self
            .app
            .post(
                &self.owner,
                &format!("/v1/orgs/{}/sites", self.org),
                json!({"title": "Fresh"}),
            )
            .await;
        site.expect(201)["id"].as_str().unwrap().to_string()
    }

    async fn fresh_invite(&self) -> String {
        let invite = self
            .app
            .post(
                &self.owner,
                &format!("/v1/orgs/{}/link-invites", self.org),
                json!({"role": "read"}),
            )
            .await;
        invite.expect(201)["id"].as_str().unwrap().to_string()
    }

    /// Calls the operation; a 403 must also say which role it needs and which the caller has.
    async fn call(&self, caller: usize, method: &str, path: &str, body: Option<Value>) -> u16 {
        let token = (ROLES[caller] != "anonymous").then_some(self.callers[caller].token.as_str());
        let resp = self.app.request(method, token, path, body).await;
        if resp.status == 403 {
            let message = resp.body["error"]["message"].as_str().unwrap_or_default();
            assert_role_refusal(message, ROLES[caller]);
        }
        resp.status
    }

    /// Runs operation `op` as `caller` and returns the status.
    async fn run(&self, op: &str, caller: usize) -> u16 {
        let (org, team, invite) = (&self.org, &self.team, &self.invite);
        let me = &self.callers[caller];
        let doc = json!({"object": "document", "data": {}, "nodes": []});
        match op {
            "GET /v1/user" => self.call(caller, "GET", "/v1/user", None).await,
            "GET /v1/users/{userId}" => {
                self.call(caller, "GET", &format!("/v1/users/{}", self.owner.id), None)
                    .await
            }
            "GET /v1/orgs" => self.call(caller, "GET", "/v1/orgs", None).await,
            "POST /v1/orgs" => {
                self.call(caller, "POST", "/v1/orgs", Some(json!({"title": "Mine"})))
                    .await
            }
            "GET /v1/orgs/{organizationId}" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}"), None).await
            }
            "PATCH /v1/orgs/{organizationId}" => {
                self.call(
                    caller,
                    "PATCH",
                    &format!("/v1/orgs/{org}"),
                    Some(json!({"ai": true})),
                )
                .await
            }
            "GET /v1/email-domains/{emailDomain}/orgs" => {
                self.call(caller, "GET", "/v1/email-domains/example.com/orgs", None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/join" => {
                self.call(caller, "POST", &format!("/v1/orgs/{org}/join"), None)
                    .await
            }
            "GET /v1/orgs/{organizationId}/agent-instructions" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/agent-instructions"), None)
                    .await
            }
            "PUT /v1/orgs/{organizationId}/agent-instructions" => {
                self.call(
                    caller,
                    "PUT",
                    &format!("/v1/orgs/{org}/agent-instructions"),
                    Some(json!({"instructions": doc})),
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/members" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/members"), None)
                    .await
            }
            "GET /v1/orgs/{organizationId}/members/{userId}" => {
                self.call(
                    caller,
                    "GET",
                    &format!("/v1/orgs/{org}/members/{}", self.owner.id),
                    None,
                )
                .await
            }
            "PATCH /v1/orgs/{organizationId}/members/{userId}" => {
                let target = self.fresh_member().await;
                self.call(
                    caller,
                    "PATCH",
                    &format!("/v1/orgs/{org}/members/{}", target.id),
                    Some(json!({"role": "edit"})),
                )
                .await
            }
            "DELETE /v1/orgs/{organizationId}/members/{userId}" => {
                let target = self.fresh_member().await;
                self.call(
                    caller,
                    "DELETE",
                    &format!("/v1/orgs/{org}/members/{}", target.id),
                    None,
                )
                .await
            }
            "POST /v1/orgs/{organizationId}/ping" => {
                self.call(caller, "POST", &format!("/v1/orgs/{org}/ping"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/members/{userId}/sso" => {
                self.call(
                    caller,
                    "POST",
                    &format!("/v1/orgs/{org}/members/{}/sso", self.owner.id),
                    None,
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/members/{userId}/teams" => {
                self.call(
                    caller,
                    "GET",
                    &format!("/v1/orgs/{org}/members/{}/teams", self.owner.id),
                    None,
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/members/{userId}/spaces" => {
                self.call(
                    caller,
                    "GET",
                    &format!("/v1/orgs/{org}/members/{}/spaces", self.owner.id),
                    None,
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/teams" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/teams"), None)
                    .await
            }
            "PUT /v1/orgs/{organizationId}/teams" => {
                self.call(
                    caller,
                    "PUT",
                    &format!("/v1/orgs/{org}/teams"),
                    Some(json!({"title": "New"})),
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/teams/{teamId}" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/teams/{team}"), None)
                    .await
            }
            "PATCH /v1/orgs/{organizationId}/teams/{teamId}" => {
                self.call(
                    caller,
                    "PATCH",
                    &format!("/v1/orgs/{org}/teams/{team}"),
                    Some(json!({"title": "Renamed"})),
                )
                .await
            }
            "DELETE /v1/orgs/{organizationId}/teams/{teamId}" => {
                let fresh = self.fresh_team().await;
                self.call(caller, "DELETE", &format!("/v1/orgs/{org}/teams/{fresh}"), None)
                    .await
            }
            "GET /v1/orgs/{organizationId}/teams/{teamId}/members" => {
                self.call(
                    caller,
                    "GET",
                    &format!("/v1/orgs/{org}/teams/{team}/members"),
                    None,
                )
                .await
            }
            "PUT /v1/orgs/{organizationId}/teams/{teamId}/members" => {
                self.call(
                    caller,
                    "PUT",
                    &format!("/v1/orgs/{org}/teams/{team}/members"),
                    Some(json!({"add": [self.owner.id]})),
                )
                .await
            }
            "PUT /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}" => {
                self.call(
                    caller,
                    "PUT",
                    &format!("/v1/orgs/{org}/teams/{team}/members/{}", self.owner.id),
                    None,
                )
                .await
            }
            "DELETE /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}" => {
                self.call(
                    caller,
                    "DELETE",
                    &format!("/v1/orgs/{org}/teams/{team}/members/{}", self.owner.id),
                    None,
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/link-invites" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/link-invites"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/link-invites" => {
                self.call(
                    caller,
                    "POST",
                    &format!("/v1/orgs/{org}/link-invites"),
                    Some(json!({"role": "read"})),
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/link-invites/{inviteId}" => {
                self.call(
                    caller,
                    "GET",
                    &format!("/v1/orgs/{org}/link-invites/{invite}"),
                    None,
                )
                .await
            }
            "PATCH /v1/orgs/{organizationId}/link-invites/{inviteId}" => {
                self.call(
                    caller,
                    "PATCH",
                    &format!("/v1/orgs/{org}/link-invites/{invite}"),
                    Some(json!({"role": "read"})),
                )
                .await
            }
            "DELETE /v1/orgs/{organizationId}/link-invites/{inviteId}" => {
                let fresh = self.fresh_invite().await;
                self.call(
                    caller,
                    "DELETE",
                    &format!("/v1/orgs/{org}/link-invites/{fresh}"),
                    None,
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/saml" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/saml"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/saml" => {
                let body = json!({"label": "Mine"});
                self.call(caller, "POST", &format!("/v1/orgs/{org}/saml"), Some(body))
                    .await
            }
            "GET /v1/orgs/{organizationId}/saml/{samlProviderId}" => {
                let path = format!("/v1/orgs/{org}/saml/{}", self.saml);
                self.call(caller, "GET", &path, None).await
            }
            "PATCH /v1/orgs/{organizationId}/saml/{samlProviderId}" => {
                let path = format!("/v1/orgs/{org}/saml/{}", self.saml);
                self.call(caller, "PATCH", &path, Some(json!({"label": "IdP"})))
                    .await
            }
            "DELETE /v1/orgs/{organizationId}/saml/{samlProviderId}" => {
                let fresh = self
                    .app
                    .post(
                        &self.owner,
                        &format!("/v1/orgs/{org}/saml"),
                        json!({"label": "Gone"}),
                    )
                    .await
                    .expect(201);
                let path = format!("/v1/orgs/{org}/saml/{}", fresh["id"].as_str().unwrap());
                self.call(caller, "DELETE", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/sso" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/sso"), None)
                    .await
            }
            "GET /v1/orgs/{organizationId}/sessions" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/sessions"), None)
                    .await
            }
            "DELETE /v1/orgs/{organizationId}/sessions/{sessionId}" => {
                self.call(
                    caller,
                    "DELETE",
                    &format!("/v1/orgs/{org}/sessions/nosuchsession"),
                    None,
                )
                .await
            }
            "POST /v1/orgs/{organizationId}/invites/{inviteId}" => {
                let fresh = self.fresh_invite().await;
                let status = self
                    .call(caller, "POST", &format!("/v1/orgs/{org}/invites/{fresh}"), None)
                    .await;
                // Joining made an outsider a member: undo it so later rows see an outsider.
                if ROLES[caller] == "outsider" && status == 200 {
                    self.app
                        .delete(&self.owner, &format!("/v1/orgs/{org}/members/{}", me.id))
                        .await
                        .expect(204);
                }
                status
            }
            "GET /v1/orgs/{organizationId}/sites" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/sites"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/sites" => {
                let body = Some(json!({"title": "Mine"}));
                self.call(caller, "POST", &format!("/v1/orgs/{org}/sites"), body)
                    .await
            }
            "GET /v1/orgs/{organizationId}/sites/{siteId}" => {
                let site = &self.site;
                self.call(caller, "GET", &format!("/v1/orgs/{org}/sites/{site}"), None)
                    .await
            }
            "PATCH /v1/orgs/{organizationId}/sites/{siteId}" => {
                let site = &self.site;
                let body = Some(json!({"title": "Site"}));
                self.call(caller, "PATCH", &format!("/v1/orgs/{org}/sites/{site}"), body)
                    .await
            }
            "POST /v1/orgs/{organizationId}/sites/{siteId}/publish" => {
                let site = &self.site;
                let path = format!("/v1/orgs/{org}/sites/{site}/publish");
                self.call(caller, "POST", &path, None).await
            }
            "POST /v1/orgs/{organizationId}/sites/{siteId}/sections" => {
                let site = &self.site;
                let body = Some(json!({"spaceId": self.space, "title": "Section"}));
                let path = format!("/v1/orgs/{org}/sites/{site}/sections");
                self.call(caller, "POST", &path, body).await
            }
            "GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth" => {
                let site = &self.site;
                let path = format!("/v1/orgs/{org}/sites/{site}/publishing/auth");
                self.call(caller, "GET", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/preview" => {
                let site = &self.site;
                let path = format!("/v1/orgs/{org}/sites/{site}/publishing/preview");
                self.call(caller, "GET", &path, None).await
            }
            "PATCH /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth" => {
                let site = &self.site;
                let path = format!("/v1/orgs/{org}/sites/{site}/publishing/auth");
                let body = Some(json!({"fallbackURL": "https://login.example.com/"}));
                self.call(caller, "PATCH", &path, body).await
            }
            // A space whose default level is "inherit": each member's role on it is their
            // organization role.
            "GET /v1/spaces/{spaceId}" => {
                self.call(caller, "GET", &format!("/v1/spaces/{}", self.space), None)
                    .await
            }
            "GET /v1/spaces/{spaceId}/pdf" => {
                self.call(caller, "GET", &format!("/v1/spaces/{}/pdf", self.space), None)
                    .await
            }
            "GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf" => {
                let (s, cr) = (&self.space, &self.change_request);
                let path = format!("/v1/spaces/{s}/change-requests/{cr}/pdf");
                self.call(caller, "GET", &path, None).await
            }
            "PATCH /v1/spaces/{spaceId}" => {
                let body = Some(json!({"title": "Space"}));
                self.call(caller, "PATCH", &format!("/v1/spaces/{}", self.space), body)
                    .await
            }
            "POST /v1/spaces/{spaceId}/comments" => {
                let body = Some(json!({"body": {"markdown": "Hi"}}));
                let path = format!("/v1/spaces/{}/comments", self.space);
                self.call(caller, "POST", &path, body).await
            }
            "POST /v1/spaces/{spaceId}/change-requests" => {
                let path = format!("/v1/spaces/{}/change-requests", self.space);
                self.call(caller, "POST", &path, Some(json!({}))).await
            }
            "POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews" => {
                let (s, cr) = (&self.space, &self.change_request);
                let path = format!("/v1/spaces/{s}/change-requests/{cr}/reviews");
                let body = Some(json!({"status": "approved"}));
                self.call(caller, "POST", &path, body).await
            }
            "GET /v1/orgs/{organizationId}/openapi" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/openapi"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/openapi" => {
                let slug = format!("m-{}", quire_server::ids::random_base62(10).to_lowercase());
                let body = Some(json!({"slug": slug, "source": {"text": "openapi: 3.1.0"}}));
                self.call(caller, "POST", &format!("/v1/orgs/{org}/openapi"), body)
                    .await
            }
            "GET /v1/orgs/{organizationId}/openapi/{specSlug}" => {
                let path = format!("/v1/orgs/{org}/openapi/{}", self.spec);
                self.call(caller, "GET", &path, None).await
            }
            "PUT /v1/orgs/{organizationId}/openapi/{specSlug}" => {
                let path = format!("/v1/orgs/{org}/openapi/{}", self.spec);
                let body = Some(json!({"source": {"text": "openapi: 3.1.0"}}));
                self.call(caller, "PUT", &path, body).await
            }
            "PATCH /v1/orgs/{organizationId}/openapi/{specSlug}" => {
                let path = format!("/v1/orgs/{org}/openapi/{}", self.spec);
                let body = Some(json!({"visibility": "private"}));
                self.call(caller, "PATCH", &path, body).await
            }
            "DELETE /v1/orgs/{organizationId}/openapi/{specSlug}" => {
                let fresh = self.fresh_spec().await;
                self.call(caller, "DELETE", &format!("/v1/orgs/{org}/openapi/{fresh}"), None)
                    .await
            }
            "GET /v1/orgs/{organizationId}/conversations" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/conversations"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/conversations" => {
                let body = json!({"id": format!("m-{caller}"),
                                  "parts": [{"type": "message", "role": "user", "body": "Is there dark mode?"}]});
                self.call(
                    caller,
                    "POST",
                    &format!("/v1/orgs/{org}/conversations"),
                    Some(body),
                )
                .await
            }
            "GET /v1/orgs/{organizationId}/conversations/{conversationId}" => {
                let path = format!("/v1/orgs/{org}/conversations/{}", self.conversation);
                self.call(caller, "GET", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/conversations-issues" => {
                let path = format!("/v1/orgs/{org}/conversations-issues");
                self.call(caller, "GET", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/conversations-issues/{issueId}" => {
                let path = format!("/v1/orgs/{org}/conversations-issues/{}", self.issue);
                self.call(caller, "GET", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/conversations-clusters" => {
                let path = format!("/v1/orgs/{org}/conversations-clusters");
                self.call(caller, "GET", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/conversations-clusters/{clusterId}" => {
                let path = format!("/v1/orgs/{org}/conversations-clusters/{}", self.cluster);
                self.call(caller, "GET", &path, None).await
            }
            "PATCH /v1/orgs/{organizationId}/conversations-clusters/{clusterId}" => {
                let path = format!("/v1/orgs/{org}/conversations-clusters/{}", self.cluster);
                self.call(caller, "PATCH", &path, Some(json!({"status": "open"})))
                    .await
            }
            "GET /v1/orgs/{organizationId}/translations" => {
                self.call(caller, "GET", &format!("/v1/orgs/{org}/translations"), None)
                    .await
            }
            "POST /v1/orgs/{organizationId}/translations" => {
                let space = self
                    .app
                    .post(
                        &self.owner,
                        &format!("/v1/orgs/{org}/spaces"),
                        json!({"title": "S"}),
                    )
                    .await
                    .expect(201);
                let body =
                    Some(json!({"source": {"space": space["id"], "language": "en"}, "language": "it"}));
                self.call(caller, "POST", &format!("/v1/orgs/{org}/translations"), body)
                    .await
            }
            "GET /v1/orgs/{organizationId}/translations/{translationId}" => {
                let path = format!("/v1/orgs/{org}/translations/{}", self.translation);
                self.call(caller, "GET", &path, None).await
            }
            "PUT /v1/orgs/{organizationId}/translations/{translationId}" => {
                let path = format!("/v1/orgs/{org}/translations/{}", self.translation);
                self.call(caller, "PUT", &path, Some(json!({"instructions": doc})))
                    .await
            }
            "POST /v1/orgs/{organizationId}/translations/{translationId}/run" => {
                let path = format!("/v1/orgs/{org}/translations/{}/run", self.translation);
                self.call(caller, "POST", &path, Some(json!({}))).await
            }
            "DELETE /v1/orgs/{organizationId}/translations/{translationId}" => {
                let fresh = self.fresh_translation().await;
                let path = format!("/v1/orgs/{org}/translations/{fresh}");
                self.call(caller, "DELETE", &path, None).await
            }
            "GET /v1/orgs/{organizationId}/translations-glossary" => {
                let path = format!("/v1/orgs/{org}/translations-glossary");
                self.call(caller, "GET", &path, None).await
            }
            "PUT /v1/orgs/{organizationId}/translations-glossary" => {
                let path = format!("/v1/orgs/{org}/translations-glossary");
                let body = json!({"operations": [{"type": "insert", "translations": {"en": "space", "fr": "espace"}}]});
                self.call(caller, "PUT", &path, Some(body)).await
            }
            "GET /v1/integrations/{integrationName}" => {
                let path = format!("/v1/integrations/{}", self.integration);
                self.call(caller, "GET", &path, None).await
            }
            "POST /v1/integrations/{integrationName}" => {
                let path = format!("/v1/integrations/{}", self.integration);
                let body = json!({"organization": org, "title": "Matrix app", "description": "",
                                  "script": CARD_SCRIPT, "scopes": ["space:content:read"]});
                self.call(caller, "POST", &path, Some(body)).await
            }
            "POST /v1/integrations/{integrationName}/render" => {
                let path = format!("/v1/integrations/{}/render", self.integration);
                let body = json!({"componentId": "card", "props": {},
                                  "context": {"type": "document", "spaceId": self.space, "editable": false, "theme": "light"}});
                self.call(caller, "POST", &path, Some(body)).await
            }
            "PUT /v1/integrations/{integrationName}/dev" => {
                let path = format!("/v1/integrations/{}/dev", self.integration);
                let body = json!({"tunnelUrl": "https://example.com/tunnel"});
                self.call(caller, "PUT", &path, Some(body)).await
            }
            "GET /v1/integrations/{integrationName}/events" => {
                let path = format!("/v1/integrations/{}/events", self.integration);
                self.call(caller, "GET", &path, None).await
            }
            "POST /v1/integrations/{integrationName}/installations" => {
                let (fresh, installation) = fresh_integration(&self.app, &self.owner, org).await;
                // Uninstalled first, so that the caller's install is the only one.
                let path = format!("/v1/integrations/{fresh}/installations");
                self.app
                    .delete(&self.owner, &format!("{path}/{installation}"))
                    .await
                    .expect(204);
                self.call(caller, "POST", &path, Some(json!({"organization": org})))
                    .await
            }
            "GET /v1/integrations/{integrationName}/installations/{installationId}" => {
                let path = format!(
                    "/v1/integrations/{}/installations/{}",
                    self.integration, self.installation
                );
                self.call(caller, "GET", &path, None).await
            }
            "PATCH /v1/integrations/{integrationName}/installations/{installationId}" => {
                let path = format!(
                    "/v1/integrations/{}/installations/{}",
                    self.integration, self.installation
                );
                let body = json!({"externalIds": ["matrix"]});
                self.call(caller, "PATCH", &path, Some(body)).await
            }
            "DELETE /v1/integrations/{integrationName}/installations/{installationId}" => {
                let (fresh, installation) = fresh_integration(&self.app, &self.owner, org).await;
                let path = format!("/v1/integrations/{fresh}/installations/{installation}");
                self.call(caller, "DELETE", &path, None).await
            }
            "DELETE /v1/orgs/{organizationId}/sites/{siteId}" => {
                let fresh = self.fresh_site().await;
                self.call(caller, "DELETE", &format!("/v1/orgs/{org}/sites/{fresh}"), None)
                    .await
            }
            other => panic!("unknown operation {other}"),
        }
    }
}

/// Expected status per caller, in the order of [`ROLES`], for each operation, named by its
/// method and route template.
pub(crate) const MATRIX: &[(&str, [u16; 9])] = &[
    //                                   admin create review edit comment read guest outsider anon
    ("GET /v1/user", [200, 200, 200, 200, 200, 200, 200, 200, 401]),
    (
        "GET /v1/users/{userId}",
        [200, 200, 200, 200, 200, 200, 200, 200, 401],
    ),
    ("GET /v1/orgs", [200, 200, 200, 200, 200, 200, 200, 200, 401]),
    ("POST /v1/orgs", [201, 201, 201, 201, 201, 201, 201, 201, 401]),
    (
        "GET /v1/orgs/{organizationId}",
        [200, 200, 200, 200, 200, 200, 200, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/email-domains/{emailDomain}/orgs",
        [200, 200, 200, 200, 200, 200, 200, 200, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/join",
        [204, 204, 204, 204, 204, 204, 204, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/agent-instructions",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/agent-instructions",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/members",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/members/{userId}",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/members/{userId}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/members/{userId}",
        [204, 403, 403, 403, 403, 403, 403, 204, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/ping",
        [200, 200, 200, 200, 200, 200, 200, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/members/{userId}/sso",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/members/{userId}/teams",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/members/{userId}/spaces",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/teams",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/teams",
        [201, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/teams/{teamId}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/teams/{teamId}",
        [200, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/teams/{teamId}",
        [204, 403, 403, 403, 403, 403, 204, 204, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/teams/{teamId}/members",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/teams/{teamId}/members",
        [204, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
        [204, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
        [204, 403, 403, 403, 403, 403, 204, 204, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/link-invites",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/link-invites",
        [201, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/link-invites/{inviteId}",
        [200, 200, 200, 200, 200, 200, 200, 200, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/link-invites/{inviteId}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/link-invites/{inviteId}",
        [204, 403, 403, 403, 403, 403, 403, 204, 401],
    ),
    // Single sign-on: providers are for admins, the sign-in choices for anyone in it.
    (
        "GET /v1/orgs/{organizationId}/saml",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/saml",
        [201, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/saml/{samlProviderId}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/saml/{samlProviderId}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/saml/{samlProviderId}",
        [204, 403, 403, 403, 403, 403, 403, 204, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/sso",
        [200, 200, 200, 200, 200, 200, 200, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/sessions",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/sessions/{sessionId}",
        [204, 403, 403, 403, 403, 403, 403, 204, 401],
    ),
    // Docs sites: by organization role (docs/permissions.md, "Docs sites").
    (
        "GET /v1/orgs/{organizationId}/sites",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/sites",
        [201, 201, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/sites/{siteId}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/sites/{siteId}",
        [200, 200, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/sites/{siteId}/publish",
        [200, 200, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/sites/{siteId}/sections",
        [201, 201, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
        [200, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
        [200, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/preview",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/sites/{siteId}",
        [204, 204, 403, 403, 403, 403, 204, 204, 401],
    ),
    // OpenAPI specifications: by organization role (docs/permissions.md, "OpenAPI
    // specification actions").
    (
        "GET /v1/orgs/{organizationId}/openapi",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/openapi",
        [201, 201, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/openapi/{specSlug}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/openapi/{specSlug}",
        [200, 200, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/openapi/{specSlug}",
        [200, 200, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/openapi/{specSlug}",
        [204, 204, 403, 403, 403, 403, 204, 204, 401],
    ),
    // Conversations: ingested by who may create content, seen and triaged by editors
    // (docs/permissions.md, "Conversation actions").
    (
        "GET /v1/orgs/{organizationId}/conversations",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/conversations",
        [204, 204, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/conversations/{conversationId}",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/conversations-issues",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/conversations-issues/{issueId}",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/conversations-clusters",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    (
        "PATCH /v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
        [200, 200, 200, 200, 403, 403, 403, 404, 401],
    ),
    // Translations and the glossary: by organization role (docs/permissions.md,
    // "Translations").
    (
        "GET /v1/orgs/{organizationId}/translations",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/translations",
        [201, 201, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/translations/{translationId}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/translations/{translationId}",
        [200, 200, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "POST /v1/orgs/{organizationId}/translations/{translationId}/run",
        [204, 204, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "DELETE /v1/orgs/{organizationId}/translations/{translationId}",
        [204, 204, 403, 403, 403, 403, 204, 204, 401],
    ),
    (
        "GET /v1/orgs/{organizationId}/translations-glossary",
        [200, 200, 200, 200, 200, 200, 403, 404, 401],
    ),
    (
        "PUT /v1/orgs/{organizationId}/translations-glossary",
        [204, 204, 403, 403, 403, 403, 403, 404, 401],
    ),
    // Integrations: a private one, seen by its owner's members and guests, managed by its
    // admins; its installation, seen by who may list installations (docs/permissions.md,
    // "Integrations").
    (
        "GET /v1/integrations/{integrationName}",
        [200, 200, 200, 200, 200, 200, 200, 404, 401],
    ),
    (
        "POST /v1/integrations/{integrationName}",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "PUT /v1/integrations/{integrationName}/dev",
        [204, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    // Rendering: whoever sees the integration and the space of the context (a guest sees the
    // integration but not the space).
    (
        "POST /v1/integrations/{integrationName}/render",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "GET /v1/integrations/{integrationName}/events",
        [200, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "POST /v1/integrations/{integrationName}/installations",
        [201, 403, 403, 403, 403, 403, 403, 404, 401],
    ),
    (
        "GET /v1/integrations/{integrationName}/installations/{installationId}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PATCH /v1/integrations/{integrationName}/installations/{installationId}",
        [200, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "DELETE /v1/integrations/{integrationName}/installations/{installationId}",
        [204, 403, 403, 403, 403, 403, 204, 204, 401],
    ),
    // Spaces: by the role on the space, here the organization role (docs/permissions.md,
    // "Space and collection actions").
    (
        "GET /v1/spaces/{spaceId}",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    // A PDF export: whoever reads the space (the typesetting is a job; these only make it).
    (
        "GET /v1/spaces/{spaceId}/pdf",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "GET /v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf",
        [200, 200, 200, 200, 200, 200, 404, 404, 401],
    ),
    (
        "PATCH /v1/spaces/{spaceId}",
        [200, 403, 403, 403, 403, 403, 404, 404, 401],
    ),
    (
        "POST /v1/spaces/{spaceId}/comments",
        [200, 200, 200, 200, 200, 403, 404, 404, 401],
    ),
    (
        "POST /v1/spaces/{spaceId}/change-requests",
        [201, 201, 201, 201, 403, 403, 404, 404, 401],
    ),
    (
        "POST /v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews",
        [201, 201, 201, 403, 403, 403, 404, 404, 401],
    ),
    // Last: joining makes the guest a member.
    (
        "POST /v1/orgs/{organizationId}/invites/{inviteId}",
        [200, 200, 200, 200, 200, 200, 200, 200, 401],
    ),
];

#[tokio::test]
async fn every_role_gets_the_expected_status_for_every_operation() {
    let w = world().await;
    let mut failures = Vec::new();
    for (op, expected) in MATRIX {
        for (caller, want) in expected.iter().enumerate() {
            let got = w.run(op, caller).await;
            if got != *want {
                failures.push(format!("{op} as {}: expected {want}, got {got}", ROLES[caller]));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "permission matrix mismatches:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn permissions_objects_agree_with_what_the_server_allows() {
    let w = world().await;
    let org = &w.org;
    for (caller, role) in ROLES.iter().enumerate() {
        if *role == "anonymous" || *role == "outsider" {
            continue;
        }
        let user = &w.callers[caller];
        let org_json = w.app.get(user, &format!("/v1/orgs/{org}")).await.expect(200);
        let p = &org_json["permissions"];
        let allowed = |status: u16| (200..300).contains(&status);
        let checks: Vec<(&str, bool, u16)> = vec![
            (
                "view",
                p["view"].as_bool().unwrap(),
                w.run("GET /v1/orgs/{organizationId}", caller).await,
            ),
            (
                "admin",
                p["admin"].as_bool().unwrap(),
                w.run("PATCH /v1/orgs/{organizationId}", caller).await,
            ),
            (
                "listMembers",
                p["listMembers"].as_bool().unwrap(),
                w.run("GET /v1/orgs/{organizationId}/members", caller).await,
            ),
            (
                "listTeams",
                p["listTeams"].as_bool().unwrap(),
                w.run("GET /v1/orgs/{organizationId}/teams", caller).await,
            ),
            (
                "createContent",
                p["createContent"].as_bool().unwrap(),
                w.call(
                    caller,
                    "POST",
                    &format!("/v1/orgs/{org}/spaces"),
                    Some(json!({"title": "x"})),
                )
                .await,
            ),
        ];
        for (name, promised, status) in checks {
            assert_eq!(
                promised,
                allowed(status),
                "{role}: org permissions.{name} is {promised} but the server answered {status}"
            );
        }
        // Teams: permissions.admin says whether a rename goes through.
        let team = w.app.get(user, &format!("/v1/orgs/{org}/teams/{}", w.team)).await;
        if team.status == 200 {
            let promised = team.body["permissions"]["admin"].as_bool().unwrap();
            let status = w
                .run("PATCH /v1/orgs/{organizationId}/teams/{teamId}", caller)
                .await;
            assert_eq!(promised, allowed(status), "{role}: team permissions.admin");
        }
        // Sites: view, edit and admin against reading, changing and the visitor key.
        let site = w.app.get(user, &format!("/v1/orgs/{org}/sites/{}", w.site)).await;
        if site.status == 200 {
            let sp = &site.body["permissions"];
            for (name, op) in [
                ("view", "GET /v1/orgs/{organizationId}/sites/{siteId}"),
                ("edit", "PATCH /v1/orgs/{organizationId}/sites/{siteId}"),
                (
                    "admin",
                    "GET /v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
                ),
            ] {
                let status = w.run(op, caller).await;
                assert_eq!(
                    sp[name].as_bool().unwrap(),
                    allowed(status),
                    "{role}: site permissions.{name}"
                );
            }
        } else {
            assert_eq!(*role, "guest", "only guests do not see sites");
        }
        // OpenAPI specifications: view and edit against reading and changing one.
        let spec = w
            .app
            .get(user, &format!("/v1/orgs/{org}/openapi/{}", w.spec))
            .await;
        if spec.status == 200 {
            let sp = &spec.body["permissions"];
            for (name, op) in [
                ("view", "GET /v1/orgs/{organizationId}/openapi/{specSlug}"),
                ("edit", "PATCH /v1/orgs/{organizationId}/openapi/{specSlug}"),
            ] {
                let status = w.run(op, caller).await;
                assert_eq!(
                    sp[name].as_bool().unwrap(),
                    allowed(status),
                    "{role}: spec permissions.{name}"
                );
            }
        } else {
            assert_eq!(*role, "guest", "only guests do not see specifications");
        }
        // Translations: view and edit against reading and changing one.
        let translation = w
            .app
            .get(user, &format!("/v1/orgs/{org}/translations/{}", w.translation))
            .await;
        if translation.status == 200 {
            let tp = &translation.body["permissions"];
            for (name, op) in [
                (
                    "view",
                    "GET /v1/orgs/{organizationId}/translations/{translationId}",
                ),
                (
                    "edit",
                    "PUT /v1/orgs/{organizationId}/translations/{translationId}",
                ),
            ] {
                let status = w.run(op, caller).await;
                assert_eq!(
                    tp[name].as_bool().unwrap(),
                    allowed(status),
                    "{role}: translation permissions.{name}"
                );
            }
        } else {
            assert_eq!(*role, "guest", "only guests do not see translations");
        }
        // Spaces: every permission against the operation it promises.
        let space = w.app.get(user, &format!("/v1/spaces/{}", w.space)).await;
        if space.status != 200 {
            assert_eq!(
                *role, "guest",
                "only guests lack access to a space with default levels"
            );
            continue;
        }
        let sp = &space.body["permissions"];
        assert_eq!(sp["view"], true);
        let s = &w.space;
        let status = w
            .call(
                caller,
                "PATCH",
                &format!("/v1/spaces/{s}"),
                Some(json!({"title": "Space"})),
            )
            .await;
        assert_eq!(
            sp["admin"].as_bool().unwrap(),
            allowed(status),
            "{role}: space permissions.admin"
        );
        let body = json!({"body": {"markdown": "Hi"}});
        let status = w
            .call(caller, "POST", &format!("/v1/spaces/{s}/comments"), Some(body))
            .await;
        assert_eq!(
            sp["comment"].as_bool().unwrap(),
            allowed(status),
            "{role}: space permissions.comment"
        );
        let status = w
            .call(
                caller,
                "POST",
                &format!("/v1/spaces/{s}/change-requests"),
                Some(json!({})),
            )
            .await;
        assert_eq!(
            sp["edit"].as_bool().unwrap(),
            allowed(status),
            "{role}: space permissions.edit"
        );
        // Review and merge a change request the owner prepared.
        let cr = w
            .app
            .post(&w.owner, &format!("/v1/spaces/{s}/change-requests"), json!({}))
            .await
            .expect(201);
        let cr = cr["id"].as_str().unwrap();
        let review = Some(json!({"status": "approved"}));
        let status = w
            .call(
                caller,
                "POST",
                &format!("/v1/spaces/{s}/change-requests/{cr}/reviews"),
                review,
            )
            .await;
        assert_eq!(
            sp["review"].as_bool().unwrap(),
            allowed(status),
            "{role}: space permissions.review"
        );
        let status = w
            .call(
                caller,
                "POST",
                &format!("/v1/spaces/{s}/change-requests/{cr}/merge"),
                None,
            )
            .await;
        assert_eq!(
            sp["merge"].as_bool().unwrap(),
            allowed(status),
            "{role}: space permissions.merge"
        );
        let expected = match *role {
            "admin" => [true, true, true, true, true],
            "create" | "review" => [false, true, true, true, true],
            "edit" => [false, true, true, false, true],
            "comment" => [false, true, false, false, false],
            _ => [false, false, false, false, false],
        };
        let got = ["admin", "comment", "edit", "review", "merge"].map(|k| sp[k].as_bool().unwrap());
        assert_eq!(got, expected, "{role}: space permissions");
    }
}
