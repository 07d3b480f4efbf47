//! Docs sites: structure and its exact order, defaults, adaptive schema and conditions, the
//! published view by visibility (share keys, visitor tokens), validation and permissions.

use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::TestApp;
use crate::support::site::{SiteBuilder, id, ids, page, visitor_key, visitor_token, visitor_token_expiring};
use crate::support::snapshot::{Stable, assert_shape};

#[tokio::test]
async fn sections_groups_and_site_spaces_keep_an_exact_order() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    // Sections Alpha, Beta and Gamma, each of its own space.
    let built = SiteBuilder::new(&app, &owner)
        .section("Alpha", "One")
        .section("Beta", "Two")
        .section("Gamma", "Three")
        .unpublished()
        .build()
        .await;
    let base = built.base.clone();
    let mut spaces = built.spaces.clone();
    spaces.push(new_space(&app, &owner, &built.org, "Four").await);
    let mut stable = built.stable(&app, &owner);
    stable.name(&spaces[3], "[space-4]");
    assert_shape!("sections_created", stable, json!(built.added));
    let sections = ids(&built.added);
    let (a, b, c) = (sections[0].clone(), sections[1].clone(), sections[2].clone());
    let listed = app.walk(&owner, &format!("{base}/sections"), 2).await;
    assert_eq!(ids(&listed), vec![a.clone(), b.clone(), c.clone()]);
    // Each as it was created: Alpha, the first, is the default.
    assert_eq!(listed, built.added);

    // Four site spaces in section Alpha: its own, then three more.
    let first = id(&listed[0]["siteSpaces"][0]);
    let mut alpha = vec![first.clone()];
    let mut added = Vec::new();
    for s in &spaces[1..] {
        let ss = app
            .post(
                &owner,
                &format!("{base}/site-spaces"),
                json!({"spaceId": s, "sectionId": a}),
            )
            .await
            .expect(201);
        stable.name(&id(&ss), &format!("[alpha-{}]", alpha.len() + 1));
        alpha.push(id(&ss));
        added.push(ss);
    }
    assert_shape!("site_spaces_added_to_a_section", stable, json!(added));
    let alpha_order = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .filter(|i| i["section"] == a.as_str())
            .map(id)
            .collect()
    };
    let mv = |ss: &str, side: &str, other: &str| {
        (
            format!("{base}/site-spaces/{ss}/move"),
            json!({"position": {side: {"type": "site-space", "siteSpace": other}}}),
        )
    };
    let expected_after = [
        (3, "before", 0, vec![3, 0, 1, 2]),
        (0, "after", 2, vec![3, 1, 2, 0]),
        (1, "before", 3, vec![1, 3, 2, 0]),
        (0, "before", 2, vec![1, 3, 0, 2]),
    ];
    let mut moves = Vec::new();
    for (item, side, other, order) in expected_after {
        let (path, body) = mv(&alpha[item], side, &alpha[other]);
        moves.push(app.post(&owner, &path, body).await.expect(200));
        let listed = app.walk(&owner, &format!("{base}/site-spaces"), 3).await;
        let want: Vec<String> = order.iter().map(|i| alpha[*i].clone()).collect();
        assert_eq!(alpha_order(&listed), want, "after moving {item} {side} {other}");
        let section = app.get(&owner, &format!("{base}/sections")).await.expect(200);
        assert_eq!(ids(section["items"][0]["siteSpaces"].as_array().unwrap()), want);
    }
    // Each move answers the site space it moved.
    assert_shape!("site_spaces_moved", stable, json!(moves));
    // The section's default stayed its first site space, wherever it moved.
    let defaults = app
        .get(&owner, &format!("{base}/site-spaces?default=true"))
        .await
        .expect(200);
    assert!(ids(defaults["items"].as_array().unwrap()).contains(&first));

    // Bad positions: itself, a non-sibling, another kind, both sides; an absent item.
    let gamma_ss =
        id(&app.get(&owner, &format!("{base}/sections")).await.expect(200)["items"][2]["siteSpaces"][0]);
    let (path, body) = mv(&alpha[0], "before", &alpha[0]);
    app.post(&owner, &path, body).await.expect_error(400);
    let (path, body) = mv(&alpha[0], "before", &gamma_ss);
    let message = app.post(&owner, &path, body).await.expect_error(400);
    assert!(message.contains("not a sibling"), "{message}");
    app.post(
        &owner,
        &format!("{base}/site-spaces/{}/move", alpha[0]),
        json!({"position": {"before": {"type": "site-section", "siteSpace": alpha[1]}}}),
    )
    .await
    .expect_error(400);
    app.post(
        &owner,
        &format!("{base}/site-spaces/{}/move", alpha[0]),
        json!({"position": {"before": {"type": "site-space", "siteSpace": alpha[1]}, "after": {"type": "site-space", "siteSpace": alpha[2]}}}),
    )
    .await
    .expect_error(400);
    let (path, body) = mv("nosuchsitespace00000", "before", &alpha[0]);
    app.post(&owner, &path, body).await.expect_error(404);

    // Paths: checked, and unique among the sections of the site.
    for bad in ["", "a b", "a/b", &"x".repeat(101)] {
        let message = app
            .patch(&owner, &format!("{base}/sections/{a}"), json!({"path": bad}))
            .await
            .expect_error(400);
        assert!(message.contains("`path`"), "{message}");
    }
    let message = app
        .patch(&owner, &format!("{base}/sections/{a}"), json!({"path": "beta"}))
        .await
        .expect_error(400);
    assert!(message.contains("already"), "{message}");
    let renamed = app
        .patch(
            &owner,
            &format!("{base}/sections/{a}"),
            json!({"path": "first", "description": "Start here"}),
        )
        .await
        .expect(200);
    assert_shape!("section_renamed", stable, renamed);
    // A cursor of one list is refused by another.
    let page = app
        .get(&owner, &format!("{base}/sections?limit=1"))
        .await
        .expect(200);
    let cursor = page["next"]["page"].as_str().unwrap().to_string();
    app.get(&owner, &format!("{base}/site-spaces?page={cursor}"))
        .await
        .expect_error(400);

    // Sections: Gamma before Alpha.
    let moved = app
        .post(
            &owner,
            &format!("{base}/sections/{c}/move"),
            json!({"position": {"before": {"type": "site-section", "siteSection": a}}}),
        )
        .await
        .expect(200);
    assert_shape!("section_moved", stable, moved);
    let listed = app.walk(&owner, &format!("{base}/sections"), 1).await;
    assert_eq!(ids(&listed), vec![c.clone(), a.clone(), b.clone()]);
    app.post(
        &owner,
        &format!("{base}/sections/{c}/move"),
        json!({"position": {"before": {"type": "site-section", "siteSection": c}}}),
    )
    .await
    .expect_error(400);
    app.post(
        &owner,
        &format!("{base}/sections/nosuchsection0000000/move"),
        json!({"position": {"before": {"type": "site-section", "siteSection": c}}}),
    )
    .await
    .expect_error(404);

    // A group holding Alpha and Beta, at the end of the root: Gamma, then the group.
    let group = app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "Guides", "sections": [a, b]}),
        )
        .await
        .expect(201);
    let g = id(&group);
    stable.name(&g, "[group-guides]");
    assert_shape!("section_group_created", stable, group);
    // Beta before Alpha inside the group.
    app.post(
        &owner,
        &format!("{base}/sections/{b}/move"),
        json!({"position": {"before": {"type": "site-section", "siteSection": a}}}),
    )
    .await
    .expect(200);
    let listed = app.walk(&owner, &format!("{base}/sections"), 2).await;
    assert_eq!(ids(&listed), vec![c.clone(), b.clone(), a.clone()]);
    assert_shape!("sections_some_in_a_group", stable, json!(listed));
    // Gamma is not a sibling of Alpha any more.
    app.post(
        &owner,
        &format!("{base}/sections/{c}/move"),
        json!({"position": {"before": {"type": "site-section", "siteSection": a}}}),
    )
    .await
    .expect_error(400);
    // The group before Gamma: a group moves among sections and groups of its level.
    app.post(
        &owner,
        &format!("{base}/section-groups/{g}/move"),
        json!({"position": {"before": {"type": "site-section", "id": c}}}),
    )
    .await
    .expect(200);
    let structure = app.get(&owner, &format!("{base}/structure")).await.expect(200);
    assert_shape!("structure_of_sections_and_a_group", stable, structure);
    let top: Vec<String> = structure["structure"]
        .as_array()
        .unwrap()
        .iter()
        .map(id)
        .collect();
    assert_eq!(top, vec![g.clone(), c.clone()]);
    let listed = app.walk(&owner, &format!("{base}/sections"), 5).await;
    assert_eq!(ids(&listed), vec![b.clone(), a.clone(), c.clone()]);
    // Site spaces follow the sections' reading order.
    let listed = app.walk(&owner, &format!("{base}/site-spaces"), 2).await;
    assert_eq!(listed.len(), 6);
    assert_eq!(listed[0]["section"], b.as_str());
    assert_eq!(listed[5]["section"], c.as_str());

    // Nesting: a group inside the group; the outer one cannot move into it.
    let inner = id(&app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "Inner", "parent": g}),
        )
        .await
        .expect(201));
    stable.name(&inner, "[group-inner]");
    let message = app
        .post(
            &owner,
            &format!("{base}/section-groups/{g}/move"),
            json!({"parent": inner}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("inside it"), "{message}");
    app.post(
        &owner,
        &format!("{base}/section-groups/{g}/move"),
        json!({"parent": g}),
    )
    .await
    .expect_error(400);
    let groups = app.walk(&owner, &format!("{base}/section-groups"), 1).await;
    assert_eq!(ids(&groups), vec![g.clone(), inner.clone()]);
    assert_shape!("section_groups_nested", stable, json!(groups));

    // Adding a section to a group and taking it out are idempotent.
    for _ in 0..2 {
        let group = app
            .post(
                &owner,
                &format!("{base}/section-groups/{inner}/sections"),
                json!({"sectionId": c}),
            )
            .await
            .expect(200);
        // Both times the same answer: the one snapshot.
        assert_shape!("section_group_with_a_section_added", stable, group);
    }
    for _ in 0..2 {
        app.delete(&owner, &format!("{base}/section-groups/{inner}/sections/{c}"))
            .await
            .expect(204);
    }
    app.delete(&owner, &format!("{base}/section-groups/{inner}/sections/{a}"))
        .await
        .expect(204);
    let section = app.get(&owner, &format!("{base}/sections")).await.expect(200);
    let gamma = section["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == c.as_str())
        .unwrap()
        .clone();
    assert_eq!(
        gamma["sectionGroup"],
        g.as_str(),
        "out of Inner, into Inner's parent"
    );
    // Deleting the group moves what it held up, in its place.
    app.delete(&owner, &format!("{base}/section-groups/{g}"))
        .await
        .expect(204);
    app.delete(&owner, &format!("{base}/section-groups/{g}"))
        .await
        .expect(204);
    let listed = app.walk(&owner, &format!("{base}/sections"), 5).await;
    assert!(
        listed
            .iter()
            .all(|s| s.get("sectionGroup").is_none_or(|g| g == inner.as_str()))
    );
    assert_eq!(listed.len(), 3);
}

#[tokio::test]
async fn defaults_are_picked_again_and_spaces_that_leave_take_their_site_spaces() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Docs").await;
    let other_org = app.org(&owner, "Elsewhere").await;
    let mut stable = Stable::new(&app);
    stable.user(&owner, "owner");
    stable.name(&org, "[org]");
    stable.name(&other_org, "[other-org]");
    let mut spaces = Vec::new();
    for t in ["One", "Two", "Three", "Four"] {
        let space = new_space(&app, &owner, &org, t).await;
        stable.name(&space, &format!("[space-{}]", spaces.len() + 1));
        spaces.push(space);
    }
    let created = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites"),
            json!({"title": "Handbook", "spaces": spaces}),
        )
        .await
        .expect(201);
    let site = id(&created);
    stable.name(&site, "[site]");
    assert_shape!("site_created_with_spaces", stable, created);
    let base = format!("/v1/orgs/{org}/sites/{site}");
    let all = app.walk(&owner, &format!("{base}/site-spaces"), 10).await;
    assert_eq!(all.len(), 4);
    let space_of: Vec<String> = all.iter().map(|s| id(&s["space"])).collect();
    assert_eq!(space_of, spaces);
    for (n, ss) in all.iter().enumerate() {
        stable.name(&id(ss), &format!("[site-space-{}]", n + 1));
    }
    assert_shape!("site_spaces_of_a_new_site", stable, json!(all));
    let defaults = app
        .get(&owner, &format!("{base}/site-spaces?default=true"))
        .await
        .expect(200);
    assert_eq!(ids(defaults["items"].as_array().unwrap()), vec![id(&all[0])]);
    let others = app
        .get(&owner, &format!("{base}/site-spaces?default=false"))
        .await
        .expect(200);
    assert_eq!(others["count"], 3);
    let structure = app.get(&owner, &format!("{base}/structure")).await.expect(200);
    assert_shape!("structure_of_site_spaces", stable, structure);

    // Removing the default picks the next one in order.
    app.delete(&owner, &format!("{base}/site-spaces/{}", id(&all[0])))
        .await
        .expect(204);
    app.delete(&owner, &format!("{base}/site-spaces/{}", id(&all[0])))
        .await
        .expect(204);
    let defaults = app
        .get(&owner, &format!("{base}/site-spaces?default=true"))
        .await
        .expect(200);
    assert_eq!(ids(defaults["items"].as_array().unwrap()), vec![id(&all[1])]);
    // The default can be set, to a site space of this site only.
    let site_json = app
        .patch(&owner, &base, json!({"defaultSiteSpace": id(&all[3])}))
        .await
        .expect(200);
    assert_shape!("site_with_a_default_site_space_set", stable, site_json);
    let defaults = app
        .get(&owner, &format!("{base}/site-spaces?default=true"))
        .await
        .expect(200);
    assert_eq!(ids(defaults["items"].as_array().unwrap()), vec![id(&all[3])]);
    let other_site = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites"),
            json!({"title": "Other", "spaces": [spaces[0]]}),
        )
        .await
        .expect(201);
    let foreign = app
        .get(
            &owner,
            &format!("/v1/orgs/{org}/sites/{}/site-spaces", id(&other_site)),
        )
        .await
        .expect(200);
    let message = app
        .patch(
            &owner,
            &base,
            json!({"defaultSiteSpace": id(&foreign["items"][0])}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("defaultSiteSpace"), "{message}");
    app.patch(
        &owner,
        &base,
        json!({"defaultSiteSection": "nosuchsection0000000"}),
    )
    .await
    .expect_error(400);

    // Deleting the default's space removes its site space and picks the next default.
    app.delete(&owner, &format!("/v1/spaces/{}", spaces[3]))
        .await
        .expect(204);
    let left = app.walk(&owner, &format!("{base}/site-spaces"), 10).await;
    assert_eq!(ids(&left), vec![id(&all[1]), id(&all[2])]);
    assert_eq!(left[0]["default"], true);
    assert_eq!(app.get(&owner, &base).await.expect(200)["siteSpaces"], 2);
    // Transferring a space to another organization does the same.
    app.post(
        &owner,
        &format!("/v1/spaces/{}/transfer", spaces[1]),
        json!({"organization": other_org}),
    )
    .await
    .expect(200);
    let left = app.walk(&owner, &format!("{base}/site-spaces"), 10).await;
    assert_eq!(ids(&left), vec![id(&all[2])]);
    assert_eq!(left[0]["default"], true);
    // So does transferring the collection a space is in.
    let collection = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": "Box"}),
        )
        .await
        .expect(201));
    let boxed = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": "Boxed", "parent": collection, "empty": true}),
        )
        .await
        .expect(201));
    app.post(&owner, &format!("{base}/site-spaces"), json!({"spaceId": boxed}))
        .await
        .expect(201);
    assert_eq!(
        app.walk(&owner, &format!("{base}/site-spaces"), 10).await.len(),
        2
    );
    app.post(
        &owner,
        &format!("/v1/collections/{collection}/transfer"),
        json!({"organization": other_org}),
    )
    .await
    .expect(200);
    let left = app.walk(&owner, &format!("{base}/site-spaces"), 10).await;
    assert_eq!(ids(&left), vec![id(&all[2])]);
    // A site filtered by space.
    let by_space = app
        .get(&owner, &format!("/v1/orgs/{org}/sites?space={}", spaces[2]))
        .await
        .expect(200);
    assert_eq!(ids(by_space["items"].as_array().unwrap()), vec![site.clone()]);
}

#[tokio::test]
async fn adaptive_schema_and_conditions_are_checked() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .section("Guides", "One")
        .unpublished()
        .build()
        .await;
    let stable = built.stable(&app, &owner);
    let base = built.base.clone();
    app.get(&owner, &format!("{base}/adaptive-schema"))
        .await
        .expect_error(404);
    let object_claim = json!({"jsonSchema": {
        "type": "object",
        "properties": {"account": {"type": "object", "properties": {}}},
        "additionalProperties": false
    }});
    let message = app
        .put(&owner, &format!("{base}/adaptive-schema"), object_claim)
        .await
        .expect_error(400);
    assert!(message.contains("jsonSchema.properties.account"), "{message}");
    app.get(&owner, &format!("{base}/adaptive-schema"))
        .await
        .expect_error(404);
    let schema = json!({"jsonSchema": {
        "type": "object",
        "properties": {
            "isBeta": {"type": "boolean", "description": "In the beta"},
            "plan": {"type": "string", "enum": ["free", "pro"]}
        },
        "additionalProperties": false
    }});
    let stored = app
        .put(&owner, &format!("{base}/adaptive-schema"), schema)
        .await
        .expect(200);
    assert_shape!("adaptive_schema_stored", stable, stored);
    let got = app
        .get(&owner, &format!("{base}/adaptive-schema"))
        .await
        .expect(200);
    assert_eq!(got["jsonSchema"], stored["jsonSchema"]);
    let templates = app
        .get(&owner, &format!("{base}/adaptive-schema/template-conditions"))
        .await
        .expect(200);
    // One a boolean claim, one a value of an enum.
    assert_shape!("template_conditions", stable, templates);

    let section = id(&built.added[0]);
    let section_path = format!("{base}/sections/{section}");
    let message = app
        .patch(
            &owner,
            &section_path,
            json!({"condition": "visitor.claims.plann == \"pro\""}),
        )
        .await
        .expect_error(400);
    assert!(
        message.contains("unknown claim \"plann\" at column 1"),
        "{message}"
    );
    let message = app
        .patch(
            &owner,
            &section_path,
            json!({"condition": "visitor.claims.isBeta &"}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("column 23"), "{message}");
    let set = app
        .patch(
            &owner,
            &section_path,
            json!({"condition": "visitor.claims.isBeta"}),
        )
        .await
        .expect(200);
    // Unset keeps it; null removes it.
    let kept = app
        .patch(&owner, &section_path, json!({"title": "Guide"}))
        .await
        .expect(200);
    let removed = app
        .patch(&owner, &section_path, json!({"condition": null}))
        .await
        .expect(200);
    assert_shape!(
        "section_condition_set_kept_removed",
        stable,
        json!([set, kept, removed])
    );
    let ss = id(&removed["siteSpaces"][0]);
    let message = app
        .patch(
            &owner,
            &format!("{base}/site-spaces/{ss}"),
            json!({"condition": "visitor.claims.unsigned.x"}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("column"), "{message}");
    let set = app
        .patch(
            &owner,
            &format!("{base}/site-spaces/{ss}"),
            json!({"condition": "visitor.claims.plan == \"pro\""}),
        )
        .await
        .expect(200);
    assert_shape!("site_space_with_a_condition", stable, set);
}

#[tokio::test]
async fn published_follows_visibility_claims_share_links_and_visitor_tokens() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let visitor = app.user("Visitor").await;
    app.org(&visitor, "Visitor's own").await;
    let built = SiteBuilder::new(&app, &owner)
        .section("Open", "One")
        .section("Beta", "Two")
        .section("Also", "Three")
        .unpublished()
        .build()
        .await;
    let mut stable = built.stable(&app, &owner);
    let (site, base) = (built.site.clone(), built.base.clone());
    let sections = ids(&built.added);
    app.put(
        &owner,
        &format!("{base}/adaptive-schema"),
        json!({"jsonSchema": {"type": "object", "properties": {"isBeta": {"type": "boolean"}}, "additionalProperties": false}}),
    )
    .await
    .expect(200);
    app.patch(
        &owner,
        &format!("{base}/sections/{}", sections[1]),
        json!({"condition": "visitor.claims.isBeta == true"}),
    )
    .await
    .expect(200);
    let group = app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "Pair", "sections": [sections[0], sections[1]]}),
        )
        .await
        .expect(201);
    stable.name(&id(&group), "[group-pair]");
    app.patch(&owner, &base, json!({"adaptiveContent": {"enabled": true}}))
        .await
        .expect(200);
    let published_path = format!("{base}/published");
    // Not published yet: nobody reads it.
    app.get(&owner, &published_path).await.expect_error(404);
    let live = app
        .post(&owner, &format!("{base}/publish"), json!({}))
        .await
        .expect(200);
    assert_shape!("site_published", stable, live);

    let key = visitor_key(&app, &owner, &base).await;
    stable.name(&key, "[visitor-key]");
    let sections_seen = |body: &Value| -> Vec<String> {
        let mut out = Vec::new();
        for item in body["structure"]["structure"].as_array().unwrap() {
            if item["object"] == "site-section-group" {
                out.extend(ids(item["children"].as_array().unwrap()));
            } else {
                out.push(id(item));
            }
        }
        out
    };
    let anonymous = app.get(&visitor, &published_path).await.expect(200);
    // The group went to the end of the root: Also, then the group's Open (and Beta).
    assert_eq!(
        sections_seen(&anonymous),
        vec![sections[2].clone(), sections[0].clone()]
    );
    // No scripts; the site as a visitor without a role sees it; each site space's space
    // with its revision.
    assert_shape!("published_to_an_anonymous_visitor", stable, anonymous);
    let beta = visitor_token(&key, &site, json!({"isBeta": true}));
    let seen = app
        .get(&visitor, &format!("{published_path}?visitorAuthToken={beta}"))
        .await
        .expect(200);
    assert_eq!(
        sections_seen(&seen),
        vec![sections[2].clone(), sections[0].clone(), sections[1].clone()]
    );
    let not_beta = visitor_token(&key, &site, json!({"isBeta": false}));
    let seen = app
        .get(&visitor, &format!("{published_path}?visitorAuthToken={not_beta}"))
        .await
        .expect(200);
    assert_eq!(sections_seen(&seen).len(), 2);
    // Refused tokens: another key, expired, another audience.
    for bad in [
        visitor_token("not-the-site-key", &site, json!({"isBeta": true})),
        visitor_token_expiring(&key, &site, -600, json!({"isBeta": true})),
        visitor_token(&key, "another-site", json!({"isBeta": true})),
        "not.a.token".to_string(),
    ] {
        app.get(&visitor, &format!("{published_path}?visitorAuthToken={bad}"))
            .await
            .expect_error(404);
    }

    // Visitor-auth: only with a token, and not after the key is rotated.
    app.patch(&owner, &base, json!({"visibility": "visitor-auth"}))
        .await
        .expect(200);
    app.get(&visitor, &published_path).await.expect_error(404);
    app.get(&visitor, &format!("{published_path}?visitorAuthToken={beta}"))
        .await
        .expect(200);
    let rotated = app
        .post(&owner, &format!("{base}/publishing/auth/regenerate"), json!({}))
        .await
        .expect(200);
    let new_key = rotated["privateKey"].as_str().unwrap();
    assert_ne!(new_key, key);
    stable.name(new_key, "[new-visitor-key]");
    assert_shape!("publishing_auth_regenerated", stable, rotated);
    app.get(&visitor, &format!("{published_path}?visitorAuthToken={beta}"))
        .await
        .expect_error(404);

    // Share links: without, with, deactivated and revoked keys.
    app.patch(&owner, &base, json!({"visibility": "share-link"}))
        .await
        .expect(200);
    app.get(&visitor, &published_path).await.expect_error(404);
    let link = app
        .post(
            &owner,
            &format!("{base}/share-links"),
            json!({"name": "Reviewers"}),
        )
        .await
        .expect(201);
    let share_key = link["key"].as_str().unwrap().to_string();
    stable.name(&share_key, "[share-key]");
    stable.name(&id(&link), "[share-link]");
    // Its published URL carries the key.
    assert_shape!("share_link_created", stable, link);
    let with_key = format!("{published_path}?shareKey={share_key}");
    app.get(&visitor, &with_key).await.expect(200);
    app.get(&visitor, &format!("{published_path}?shareKey=wrong{share_key}"))
        .await
        .expect_error(404);
    let link_path = format!("{base}/share-links/{}", id(&link));
    let off = app
        .patch(&owner, &link_path, json!({"active": false}))
        .await
        .expect(200);
    assert_shape!("share_link_deactivated", stable, off);
    app.get(&visitor, &with_key).await.expect_error(404);
    app.patch(&owner, &link_path, json!({"active": true}))
        .await
        .expect(200);
    app.get(&visitor, &with_key).await.expect(200);
    let links = app.get(&owner, &format!("{base}/share-links")).await.expect(200);
    assert_eq!(links["count"], 1);
    // GitBook's `search`: by name or key, case-insensitive; a documented parameter is honoured.
    app.post(
        &owner,
        &format!("{base}/share-links"),
        json!({"name": "Partners 100%"}),
    )
    .await
    .expect(201);
    let found = |q: &str| {
        let path = format!("{base}/share-links?search={q}");
        let owner = owner.clone();
        let app = &app;
        async move {
            let list = app.get(&owner, &path).await.expect(200);
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(found("review").await, ["Reviewers"]);
    assert_eq!(found(&share_key[..12]).await, ["Reviewers"], "by its key");
    assert_eq!(
        found("100%25").await,
        ["Partners 100%"],
        "`%` is a character, not a wildcard"
    );
    assert!(found("nobody").await.is_empty());
    assert_eq!(found("").await.len(), 2, "an empty search is none");
    app.delete(&owner, &link_path).await.expect(204);
    app.delete(&owner, &link_path).await.expect(204);
    app.get(&visitor, &with_key).await.expect_error(404);

    // In-collection: members with a role only.
    app.patch(&owner, &base, json!({"visibility": "in-collection"}))
        .await
        .expect(200);
    app.get(&visitor, &published_path).await.expect_error(404);
    app.get(&owner, &published_path).await.expect(200);

    // Unpublished: gone for everyone.
    app.patch(&owner, &base, json!({"visibility": "public"}))
        .await
        .expect(200);
    app.get(&visitor, &published_path).await.expect(200);
    let down = app
        .post(&owner, &format!("{base}/unpublish"), json!({}))
        .await
        .expect(200);
    assert_shape!("site_unpublished", stable, down);
    app.get(&visitor, &published_path).await.expect_error(404);
}

#[tokio::test]
async fn customization_is_validated_and_published() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .empty_space("One")
        .unpublished()
        .build()
        .await;
    let stable = built.stable(&app, &owner);
    let base = built.base.clone();
    // Nothing set: every block GitBook has, with the reader's defaults, and no `updatedAt`.
    let defaults = app
        .get(&owner, &format!("{base}/customization"))
        .await
        .expect(200);
    assert_shape!("customization_defaults", stable, defaults);
    // What GET answers can be put back as it is (a GitBook client's read-modify-write).
    let mut round = defaults.clone();
    round["feedback"]["enabled"] = json!(true);
    round["trademark"]["enabled"] = json!(true);
    round["pagination"]["enabled"] = json!(false);
    let put_back = app
        .put(&owner, &format!("{base}/customization"), round.clone())
        .await
        .expect(200);
    let mut without_time = put_back.clone();
    without_time.as_object_mut().unwrap().remove("updatedAt");
    assert_eq!(without_time, round);
    assert!(put_back["updatedAt"].is_string());
    let again = app
        .put(&owner, &format!("{base}/customization"), put_back.clone())
        .await
        .expect(200);
    assert_eq!(again["pagination"], json!({"enabled": false}));
    let good = json!({
        "title": "Handbook",
        "styling": {"theme": "clean", "primaryColor": {"light": "#336699", "dark": "#fff"}},
        "header": {"logo": {"light": "https://example.com/l.png", "dark": "https://example.com/d.png"},
                   "links": [{"title": "Home", "to": {"kind": "url", "url": "https://example.com"}}]},
        "footer": {"groups": [{"title": "More", "links": [{"title": "Blog", "to": {"kind": "url", "url": "https://example.com/blog"}}]}],
                   "copyright": "© Example"},
        "announcement": {"enabled": true, "message": "New!", "style": "info"},
        "themes": {"default": "dark", "toggeable": false}
    });
    let stored = app
        .put(&owner, &format!("{base}/customization"), good.clone())
        .await
        .expect(200);
    // As given, with the time it was stored.
    assert_shape!("customization_stored", stable, stored);
    for (bad, field) in [
        (
            json!({"styling": {"primaryColor": {"light": "blue", "dark": "#fff"}}}),
            "styling.primaryColor.light",
        ),
        (
            json!({"header": {"links": [{"title": "x", "to": {"kind": "url", "url": "ftp://x"}}]}}),
            "header.links[0].to.url",
        ),
        (
            json!({"themes": {"default": "sepia", "toggeable": true}}),
            "themes.default",
        ),
        (json!({"colour": "#fff"}), "colour"),
        (json!({"title": "a\u{7}b"}), "title"),
        (
            json!({"styling": {"font": {"id": "f", "custom": true, "fontFamily": "Mine", "fontFaces": []}}}),
            "styling.font",
        ),
        (json!({"styling": {"font": "Comic Sans"}}), "styling.font"),
        (json!({"localizedTitle": {"klingon": "Qapla"}}), "localizedTitle"),
        (
            json!({"footer": {"groups": [{"title": "G", "links": [{"title": "x", "to": {"kind": "nope"}}]}]}}),
            "footer.groups[0].links[0].to",
        ),
        (
            json!({"favicon": {"emoji": "1f600", "icon": {"light": "https://x.org/a.png", "dark": "https://x.org/a.png"}}}),
            "favicon",
        ),
        (json!({"ai": {"mode": "oracle"}}), "ai.mode"),
    ] {
        let message = app
            .put(&owner, &format!("{base}/customization"), bad)
            .await
            .expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    let ss = id(&built.added[0]);
    let own_path = format!("{base}/site-spaces/{ss}/customization");
    // A site space reads the site's until it has an override of its own.
    let inherited = app.get(&owner, &own_path).await.expect(200);
    assert_eq!(
        inherited["themes"],
        json!({"default": "dark", "toggeable": false})
    );
    assert_eq!(inherited["title"], "Handbook");
    let own = app
        .put(
            &owner,
            &own_path,
            json!({"themes": {"default": "light", "toggeable": true}}),
        )
        .await
        .expect(200);
    assert_eq!(own["themes"]["default"], "light");
    assert_eq!(own["title"], "Handbook", "the rest is the site's");
    // PATCH: a JSON merge patch of the override; null gives a field back to the site.
    let patched = app
        .patch(
            &owner,
            &own_path,
            json!({"title": "Variant", "pagination": {"enabled": false}}),
        )
        .await
        .expect(200);
    assert_eq!(
        (patched["title"].clone(), patched["pagination"].clone()),
        (json!("Variant"), json!({"enabled": false}))
    );
    let reset = app
        .patch(&owner, &own_path, json!({"title": null, "pagination": null}))
        .await
        .expect(200);
    assert_eq!(reset["title"], "Handbook");
    assert_eq!(
        reset["themes"]["default"], "light",
        "what the patch left alone stays"
    );
    let message = app
        .patch(&owner, &own_path, json!({"styling": {"corners": "wavy"}}))
        .await
        .expect_error(400);
    assert!(message.contains("corners"), "{message}");
    // DELETE: 204 when an override went, and when there was none; the site's again.
    let scratch = id(&app
        .post(
            &owner,
            &format!("{base}/site-spaces"),
            json!({"spaceId": built.spaces[0]}),
        )
        .await
        .expect(201));
    let scratch_path = format!("{base}/site-spaces/{scratch}/customization");
    app.patch(&owner, &scratch_path, json!({"title": "Scratch"}))
        .await
        .expect(200);
    assert_eq!(app.delete(&owner, &scratch_path).await.status, 204);
    assert_eq!(app.delete(&owner, &scratch_path).await.status, 204);
    assert_eq!(
        app.get(&owner, &scratch_path).await.expect(200)["title"],
        "Handbook"
    );
    app.delete(&owner, &format!("{base}/site-spaces/{scratch}"))
        .await
        .expect(204);
    app.post(&owner, &format!("{base}/publish"), json!({}))
        .await
        .expect(200);
    let published = app.get(&owner, &format!("{base}/published")).await.expect(200);
    // The site's customization (dark by default), and the site space's own (light).
    assert_shape!("published_with_customizations", stable, published);
}

#[tokio::test]
async fn sites_are_validated_and_guarded() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let creator = app.user("Creator").await;
    let reader = app.user("Reader").await;
    let outsider = app.user("Outsider").await;
    app.org(&outsider, "Outsider's own").await;
    let org = app.org(&owner, "Docs").await;
    app.add_member(&owner, &org, &creator, Some("create")).await;
    app.add_member(&owner, &org, &reader, Some("read")).await;
    let sites_path = format!("/v1/orgs/{org}/sites");
    let created = app
        .post(
            &creator,
            &sites_path,
            json!({"title": "Handbook", "visibility": "unlisted"}),
        )
        .await
        .expect(201);
    let site = id(&created);
    let mut stable = Stable::new(&app);
    stable.name(&org, "[org]");
    stable.name(&site, "[site]");
    // A basic site, unpublished; its creator may change it but is not its admin.
    assert_shape!("site_created_by_a_creator", stable, created);
    let base = format!("{sites_path}/{site}");

    // Validation: each a 400 naming the field, nothing changed.
    for (body, field) in [
        (json!({"title": "x"}), "title"),
        (json!({"title": "a\u{1}b"}), "title"),
        (json!({"title": 5}), "title"),
        (json!({"colour": "red"}), "colour"),
        (json!({"visibility": "secret"}), "visibility"),
        (json!({"hostname": "example.com"}), "hostname"),
        (json!({"hostname": "Docs.Example.com"}), "hostname"),
        (json!({"proxy": "example.com"}), "proxy"),
        (json!({"proxy": "https://example.com/docs"}), "proxy"),
        (json!({"basename": ""}), "basename"),
        (json!({"adaptiveContent": {"enabled": "yes"}}), "adaptiveContent"),
    ] {
        let message = app.patch(&owner, &base, body).await.expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    app.post(
        &owner,
        &sites_path,
        json!({"title": "Ok", "spaces": ["nosuchspace000000000"]}),
    )
    .await
    .expect_error(400);
    let unchanged = app.get(&owner, &base).await.expect(200);
    assert_eq!(unchanged["title"], "Handbook");
    let updated = app
        .patch(
            &owner,
            &base,
            json!({"title": "Guide", "hostname": "docs.example.com", "proxy": "example.com/docs", "basename": "api", "agentsContext": "excluded"}),
        )
        .await
        .expect(200);
    assert_shape!("site_updated", stable, updated);
    // Null clears the proxy; the basename stays.
    let cleared = app.patch(&owner, &base, json!({"proxy": null})).await.expect(200);
    assert_shape!("site_with_its_proxy_cleared", stable, cleared);

    // Filters: title, published.
    app.post(&owner, &sites_path, json!({"title": "Other"}))
        .await
        .expect(201);
    let found = app
        .get(&reader, &format!("{sites_path}?title=guid"))
        .await
        .expect(200);
    assert_eq!(ids(found["items"].as_array().unwrap()), vec![site.clone()]);
    assert_eq!(
        app.get(&reader, &format!("{sites_path}?published=true"))
            .await
            .expect(200)["count"],
        0
    );
    assert_eq!(
        app.get(&reader, &format!("{sites_path}?published=false"))
            .await
            .expect(200)["count"],
        2
    );
    let all = app.walk(&reader, &sites_path, 1).await;
    assert_eq!(all.len(), 2);

    // A reader sees but cannot create, change, publish or delete.
    let seen = app.get(&reader, &base).await.expect(200);
    assert_shape!("site_seen_by_a_reader", stable, seen);
    app.post(&reader, &sites_path, json!({"title": "Mine"}))
        .await
        .expect_error(403);
    app.patch(&reader, &base, json!({"title": "Mine"}))
        .await
        .expect_error(403);
    app.post(&reader, &format!("{base}/publish"), json!({}))
        .await
        .expect_error(403);
    app.delete(&reader, &base).await.expect_error(403);
    app.get(&reader, &format!("{base}/publishing/auth"))
        .await
        .expect_error(403);
    // A creator publishes; only admins see the visitor key.
    app.post(&creator, &format!("{base}/publish"), json!({}))
        .await
        .expect(200);
    app.get(&creator, &format!("{base}/publishing/auth"))
        .await
        .expect_error(403);
    // An outsider learns nothing.
    let hidden = app.get(&outsider, &base).await.expect_error(404);
    let unknown = app
        .get(&outsider, &format!("{sites_path}/nosuchsite0000000000"))
        .await
        .expect_error(404);
    assert_eq!(
        hidden.replace(&site, "X"),
        unknown.replace("nosuchsite0000000000", "X")
    );
    app.get(&outsider, &sites_path).await.expect_error(404);
    // A site of one organization is not found under another.
    let other = app.org(&owner, "Other").await;
    app.get(&owner, &format!("/v1/orgs/{other}/sites/{site}"))
        .await
        .expect_error(404);

    // Deleting: 204, then 404 on reads, and 204 again (what the caller can see).
    app.delete(&creator, &base).await.expect(204);
    app.get(&owner, &base).await.expect_error(404);
}

#[tokio::test]
async fn redirects_resolve_the_exact_source_then_the_longest_wildcard() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let reader = app.user("Reader").await;
    let built = SiteBuilder::new(&app, &owner)
        .section("Alpha", "One")
        .unpublished()
        .build()
        .await;
    app.add_member(&owner, &built.org, &reader, Some("read")).await;
    let mut stable = built.stable(&app, &owner);
    let base = built.base.clone();
    // The section's path is its title's slug.
    assert_shape!("section_for_redirects", stable, built.added[0]);
    let ss = id(&built.added[0]["siteSpaces"][0]);
    let section = id(&built.added[0]);
    let redirects = format!("{base}/redirects");
    let mut created = Vec::new();
    for (name, body) in [
        (
            "[redirect-old]",
            json!({"source": "/old", "destination": {"kind": "site-section", "siteSectionId": section}}),
        ),
        (
            "[redirect-docs]",
            json!({"source": "/docs/*", "captureWildcard": true, "permanent": true,
                   "destination": {"kind": "external", "url": "https://example.com/new"}}),
        ),
        (
            "[redirect-docs-api]",
            json!({"source": "/docs/api/*", "destination": {"kind": "site-space", "siteSpaceId": ss}}),
        ),
    ] {
        let redirect = app.post(&owner, &redirects, body).await.expect(201);
        stable.name(&id(&redirect), name);
        created.push(redirect);
    }
    // Temporary and without a captured wildcard unless said otherwise.
    assert_shape!("redirects_created", stable, json!(created));
    // GitBook's `search`, `orderBy` and `draft`, honoured, and paged in that order.
    let sources = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["source"].as_str().unwrap().to_string())
            .collect()
    };
    let listed = app
        .get(&owner, &format!("{redirects}?search=DOCS"))
        .await
        .expect(200);
    // Creation order; two made in the same millisecond are ordered by id.
    let mut matching: Vec<&Value> = created
        .iter()
        .filter(|r| r["source"].as_str().unwrap().starts_with("/docs"))
        .collect();
    matching.sort_by_key(|r| (r["createdAt"].as_str().unwrap(), id(r)));
    let expected: Vec<&str> = matching.iter().map(|r| r["source"].as_str().unwrap()).collect();
    assert_eq!(sources(&listed), expected);
    let by_source = app
        .get(&owner, &format!("{redirects}?orderBy=source&limit=2"))
        .await
        .expect(200);
    assert_eq!(sources(&by_source), ["/docs/*", "/docs/api/*"]);
    let next = by_source["next"]["page"].as_str().unwrap();
    let rest = app
        .get(&owner, &format!("{redirects}?orderBy=source&limit=2&page={next}"))
        .await
        .expect(200);
    assert_eq!(sources(&rest), ["/old"]);
    let newest = app
        .get(&owner, &format!("{redirects}?orderBy=createdAt"))
        .await
        .expect(200);
    let oldest = app.get(&owner, &redirects).await.expect(200);
    let mut reversed = sources(&oldest);
    reversed.reverse();
    assert_eq!(sources(&newest), reversed);
    let message = app
        .get(&owner, &format!("{redirects}?orderBy=popularity"))
        .await
        .expect_error(400);
    assert!(message.contains("orderBy"), "{message}");
    let drafts = app
        .get(&owner, &format!("{redirects}?draft=true"))
        .await
        .expect(200);
    assert_eq!(drafts["count"], 0, "every redirect is live");
    assert_eq!(
        app.get(&owner, &format!("{redirects}?draft=false"))
            .await
            .expect(200)["count"],
        3
    );
    let old = created[0].clone();
    app.post(
        &owner,
        &redirects,
        json!({"source": "/old", "destination": {"kind": "external", "url": "https://example.com"}}),
    )
    .await
    .expect_error(409);
    for (body, field) in [
        (
            json!({"source": "/a*b", "destination": {"kind": "external", "url": "https://e.com"}}),
            "source",
        ),
        (
            json!({"source": "/x", "destination": {"kind": "external", "url": "ftp://e.com"}}),
            "destination.url",
        ),
        (
            json!({"source": "/x", "destination": {"kind": "site-section", "siteSectionId": "nosuchsection0000000"}}),
            "siteSectionId",
        ),
        (
            json!({"source": "/x", "destination": {"kind": "site-page", "siteSpaceId": ss, "pageId": "p"}}),
            "destination",
        ),
    ] {
        let message = app.post(&owner, &redirects, body).await.expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    app.post(
        &reader,
        &redirects,
        json!({"source": "/r", "destination": {"kind": "external", "url": "https://e.com"}}),
    )
    .await
    .expect_error(403);

    let resolve = |source: &str| format!("{base}/redirect?source={source}");
    let mut found = Vec::new();
    for source in ["/old", "/docs/guide/x", "/docs/api/ref"] {
        found.push(app.get(&reader, &resolve(source)).await.expect(200));
    }
    // `/old` exactly, to the section's URL; `/docs/guide/x` by `/docs/*`, its wildcard
    // captured; `/docs/api/ref` by the longer `/docs/api/*`, to the site space's URL.
    assert_shape!("redirects_resolved", stable, json!(found));
    app.get(&reader, &resolve("/nothing")).await.expect_error(404);
    app.get(&reader, &resolve("nothing")).await.expect_error(400);
    app.get(&reader, &format!("{base}/redirect"))
        .await
        .expect_error(400);

    let all = app.walk(&reader, &redirects, 2).await;
    assert_eq!(all.len(), 3);
    let one = format!("{redirects}/{}", id(&old));
    assert_eq!(app.get(&reader, &one).await.expect(200), old);
    let moved = app
        .patch(&owner, &one, json!({"source": "/older"}))
        .await
        .expect(200);
    assert_shape!("redirect_moved", stable, moved);
    app.get(&reader, &resolve("/old")).await.expect_error(404);
    app.patch(&owner, &one, json!({"source": "/docs/*"}))
        .await
        .expect_error(409);
    app.delete(&owner, &one).await.expect(204);
    app.delete(&owner, &one).await.expect(204);
    app.get(&reader, &one).await.expect_error(404);

    // To a page: by its id in a site space, or by its path in a space the site shows (stored
    // as the page); resolved to the page's URL under the site space.
    write_main(
        &app,
        &owner,
        &built.spaces[0],
        vec![json!([page("Guide", "# Guide\n\nRead me.\n")])],
    )
    .await;
    let pages = app
        .get(&owner, &format!("/v1/spaces/{}/content/pages", built.spaces[0]))
        .await
        .expect(200);
    let (page_id, page_path) = (
        id(&pages["pages"][0]),
        pages["pages"][0]["path"].as_str().unwrap().to_string(),
    );
    let to_page = app
        .post(
            &owner,
            &redirects,
            json!({"source": "/to-page", "destination": {"kind": "site-page", "siteSpaceId": ss, "pageId": page_id}}),
        )
        .await
        .expect(201);
    assert_eq!(to_page["destination"]["kind"], "site-page");
    let by_path = app
        .post(
            &owner,
            &redirects,
            json!({"source": "/by-path", "destination": {"kind": "path", "spaceId": built.spaces[0], "path": page_path}}),
        )
        .await
        .expect(201);
    assert_eq!(
        by_path["destination"],
        json!({"kind": "site-page", "siteSpaceId": ss, "pageId": page_id}),
        "stored as the page"
    );
    let section_path = built.added[0]["path"].as_str().unwrap().to_string();
    let ss_path = built.added[0]["siteSpaces"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let resolved = app.get(&reader, &resolve("/by-path")).await.expect(200);
    assert!(
        resolved["target"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/{section_path}/{ss_path}/{page_path}")),
        "{resolved}"
    );
    for (destination, field) in [
        (
            json!({"kind": "site-page", "siteSpaceId": ss, "pageId": "nope"}),
            "destination.pageId",
        ),
        (
            json!({"kind": "path", "spaceId": built.spaces[0], "path": "no/such/page"}),
            "destination.path",
        ),
        (
            json!({"kind": "path", "spaceId": "elsewhere", "path": page_path}),
            "destination.spaceId",
        ),
    ] {
        let message = app
            .post(
                &owner,
                &redirects,
                json!({"source": "/bad", "destination": destination}),
            )
            .await
            .expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    for made in [&to_page, &by_path] {
        app.delete(&owner, &format!("{redirects}/{}", id(made)))
            .await
            .expect(204);
    }

    // GitBook's bulk write: by source, each its own result, one refused not stopping the rest.
    let bulk = app
        .put(
            &owner,
            &redirects,
            json!({"redirects": [
                {"source": "/bulk", "destination": {"kind": "external", "url": "https://example.com/b"}},
                {"source": "/docs/*", "permanent": false, "destination": {"kind": "external", "url": "https://example.com/d"}},
                {"source": "/missing", "destination": null},
                {"source": "/draft", "intent": "draft", "destination": {"kind": "external", "url": "https://example.com/x"}},
                {"source": "/bulk", "destination": null}
            ]}),
        )
        .await
        .expect(200);
    let statuses: Vec<&str> = bulk["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["created", "updated", "error", "error", "deleted"],
        "{bulk}"
    );
    assert_eq!(bulk["results"][1]["id"], created[1]["id"]);
    let docs = app
        .get(&owner, &format!("{redirects}/{}", id(&created[1])))
        .await
        .expect(200);
    assert_eq!(docs["permanent"], false);
    assert_eq!(docs["destination"]["url"], "https://example.com/d");
    assert_eq!(
        app.get(&owner, &redirects).await.expect(200)["count"],
        2,
        "/bulk made, then removed"
    );
    app.put(&owner, &redirects, json!({"redirects": []}))
        .await
        .expect_error(400);
    let message = app
        .put(
            &owner,
            &redirects,
            json!({"redirects": [
                {"source": "/fine", "destination": {"kind": "external", "url": "https://example.com/f"}},
                {"source": "no-slash", "destination": {"kind": "external", "url": "https://example.com/n"}}
            ]}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("redirects[1].source"), "{message}");
    assert_eq!(
        app.get(&owner, &redirects).await.expect(200)["count"],
        2,
        "nothing written"
    );
    app.put(
        &reader,
        &redirects,
        json!({"redirects": [{"source": "/r", "destination": null}]}),
    )
    .await
    .expect_error(403);
}

/// What GitBook's client sends when it builds a site's structure: titled, draft and hidden site
/// spaces, sections made in (and moved between) groups, groups moved by their parent, moves
/// without a position; and what quire does not build, refused by name.
#[tokio::test]
async fn the_structure_takes_what_gitbooks_client_sends() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .space("One", json!([page("Home", "# Home\n\nWelcome.\n")]))
        .basename("handbook")
        .build()
        .await;
    let base = built.base.clone();
    let two = new_space(&app, &owner, &built.org, "Two").await;
    write_main(
        &app,
        &owner,
        &two,
        vec![json!([page("Changes", "# Changes\n\nNew.\n")])],
    )
    .await;
    let three = new_space(&app, &owner, &built.org, "Three").await;

    // A titled variant, made as a draft with GitBook's defaults for the rest.
    let draft = app
        .post(
            &owner,
            &format!("{base}/site-spaces"),
            json!({"spaceId": two, "title": "Version two", "draft": true, "pageId": null}),
        )
        .await
        .expect(201);
    assert_eq!(
        (
            draft["title"].clone(),
            draft["draft"].clone(),
            draft["hidden"].clone()
        ),
        (json!("Version two"), json!(true), json!(false))
    );
    let published_path = format!("{base}/published");
    let shown = |p: &Value| -> Vec<String> {
        p["structure"]["structure"]
            .as_array()
            .unwrap()
            .iter()
            .map(|ss| ss["title"].as_str().unwrap().to_string())
            .collect()
    };
    let published = app.get(&owner, &published_path).await.expect(200);
    assert_eq!(shown(&published), ["One"], "a draft is not live");
    let live = app
        .patch(
            &owner,
            &format!("{base}/site-spaces/{}", id(&draft)),
            json!({"draft": false, "hidden": true}),
        )
        .await
        .expect(200);
    assert_eq!(
        (live["draft"].clone(), live["hidden"].clone()),
        (json!(false), json!(true))
    );
    let published = app.get(&owner, &published_path).await.expect(200);
    assert_eq!(shown(&published), ["One", "Version two"], "live once made live");
    // Hidden: served, but not offered by the reader's variant menu.
    let (status, _, home) = app.get_raw(&owner, "/s/handbook/", &[]).await;
    assert_eq!(status, 200);
    assert!(
        !String::from_utf8_lossy(&home).contains("Version two"),
        "hidden from the navigation"
    );
    let (status, _, page) = app
        .get_raw(
            &owner,
            &format!("/s/handbook/{}/", live["path"].as_str().unwrap()),
            &[],
        )
        .await;
    assert_eq!(status, 200, "still served");
    assert!(
        String::from_utf8_lossy(&page).contains("Version two"),
        "named by its own title"
    );

    // Sections made in a group and moved out of it; a group moved by its parent.
    let outer = app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "Outer", "draft": false}),
        )
        .await
        .expect(201);
    let inner = app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "Inner"}),
        )
        .await
        .expect(201);
    let section = app
        .post(
            &owner,
            &format!("{base}/sections"),
            json!({"spaceId": three, "title": "Guides", "siteSectionGroupId": id(&outer), "draft": false}),
        )
        .await
        .expect(201);
    assert_eq!(section["sectionGroup"], id(&outer));
    let nested = app
        .patch(
            &owner,
            &format!("{base}/section-groups/{}", id(&inner)),
            json!({"parentSectionGroupId": id(&outer)}),
        )
        .await
        .expect(200);
    assert_eq!(nested["sectionGroup"], id(&outer));
    let out = app
        .patch(
            &owner,
            &format!("{base}/sections/{}", id(&section)),
            json!({"siteSectionGroupId": null}),
        )
        .await
        .expect(200);
    assert!(out["sectionGroup"].is_null(), "{out}");
    let back = app
        .patch(
            &owner,
            &format!("{base}/sections/{}", id(&section)),
            json!({"siteSectionGroupId": id(&inner)}),
        )
        .await
        .expect(200);
    assert_eq!(back["sectionGroup"], id(&inner));
    let message = app
        .patch(
            &owner,
            &format!("{base}/sections/{}", id(&section)),
            json!({"siteSectionGroupId": "nope"}),
        )
        .await
        .expect_error(400);
    assert!(message.contains("siteSectionGroupId"), "{message}");
    // A move without a position goes to the end of its level.
    app.patch(
        &owner,
        &format!("{base}/section-groups/{}", id(&inner)),
        json!({"parentSectionGroupId": null}),
    )
    .await
    .expect(200);
    let moved = app
        .post(
            &owner,
            &format!("{base}/section-groups/{}/move", id(&outer)),
            json!({}),
        )
        .await
        .expect(200);
    let groups = app
        .get(&owner, &format!("{base}/section-groups"))
        .await
        .expect(200);
    let titles: Vec<&str> = groups["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles.last(), Some(&"Outer"), "{titles:?}");
    assert_eq!(moved["id"], outer["id"]);

    // `PATCH .../structure/sort`: any kind, by its type and id.
    let sort = format!("{base}/structure/sort");
    let sorted = app
        .patch(
            &owner,
            &sort,
            json!({"item": {"type": "site-section-group", "id": id(&outer)},
                   "position": {"before": {"type": "site-section-group", "id": id(&inner)}}}),
        )
        .await
        .expect(200);
    assert_eq!(
        (sorted["object"].clone(), sorted["id"].clone()),
        (json!("site-section-group"), outer["id"].clone())
    );
    let groups = app
        .get(&owner, &format!("{base}/section-groups"))
        .await
        .expect(200);
    let titles: Vec<&str> = groups["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Outer", "Inner"]);
    let to_end = app
        .patch(
            &owner,
            &sort,
            json!({"item": {"type": "site-space", "id": id(&draft)}}),
        )
        .await
        .expect(200);
    assert_eq!(to_end["object"], "site-space");
    let message = app
        .patch(
            &owner,
            &sort,
            json!({"item": {"type": "site-external-link", "id": "x"}}),
        )
        .await
        .expect_error(404);
    assert!(message.contains("external link"), "{message}");
    app.patch(&owner, &sort, json!({"item": {"type": "page", "id": "x"}}))
        .await
        .expect_error(400);

    // What quire does not build is refused by name, and nothing is made.
    for (body, field) in [
        (json!({"spaceId": two, "pageId": "somepage"}), "pageId"),
        (json!({"spaceId": null, "title": "New"}), "spaceId"),
        (
            json!({"spaceId": null, "template": {"kind": "blank"}}),
            "template",
        ),
    ] {
        let message = app
            .post(&owner, &format!("{base}/site-spaces"), body)
            .await
            .expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    let count = app.get(&owner, &format!("{base}/site-spaces")).await.expect(200)["count"].clone();
    assert_eq!(count, 3);
}

#[tokio::test]
async fn external_links_sit_beside_sections_and_open_from_the_reader() {
    let app = TestApp::start().await;
    let owner = app.user("Owner").await;
    let built = SiteBuilder::new(&app, &owner)
        .space("One", json!([page("Home", "# Home\n\nWelcome.\n")]))
        .basename("linked")
        .build()
        .await;
    let base = built.base.clone();
    let links = format!("{base}/external-links");
    let status_link =
        json!({"title": "Status", "url": "https://status.example.com/now", "description": "Is it up?"});

    // A link sits beside sections: a site of site spaces only has nowhere to put it. Its first
    // section takes the site spaces of the root in.
    let message = app
        .post(&owner, &links, status_link.clone())
        .await
        .expect_error(400);
    assert!(message.contains("no sections"), "{message}");
    let two = new_space(&app, &owner, &built.org, "Two").await;
    app.post(
        &owner,
        &format!("{base}/sections"),
        json!({"spaceId": two, "title": "Guides"}),
    )
    .await
    .expect(201);

    let made = app.post(&owner, &links, status_link.clone()).await;
    assert_eq!(made.status, 201);
    let link = made.body.clone();
    assert!(
        made.headers["location"]
            .to_str()
            .unwrap()
            .ends_with(&format!("{links}/{}", id(&link))),
        "{:?}",
        made.headers["location"]
    );
    assert_eq!(
        (
            link["object"].clone(),
            link["title"].clone(),
            link["url"].clone(),
            link["description"].clone(),
            link["draft"].clone(),
            link.get("sectionGroup").cloned()
        ),
        (
            json!("site-external-link"),
            json!("Status"),
            json!("https://status.example.com/now"),
            json!("Is it up?"),
            json!(false),
            None
        )
    );
    // Bad input names its field and makes nothing.
    for (body, field) in [
        (
            json!({"title": "Status", "url": "ftp://status.example.com"}),
            "url",
        ),
        (json!({"title": "Status", "url": "/relative"}), "url"),
        (json!({"title": "S", "url": "https://example.com"}), "title"),
        (
            json!({"title": "Status", "url": "https://example.com", "parent": "nope"}),
            "parent",
        ),
        (
            json!({"title": "Status", "url": "https://example.com", "condition": "visitor.claims.x =="}),
            "condition",
        ),
    ] {
        let message = app.post(&owner, &links, body).await.expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }

    // The structure holds it at the root, after the sections; the reader shows it as a tab.
    let structure_path = format!("{base}/structure");
    let kinds = |structure: &Value| -> Vec<String> {
        structure["structure"]
            .as_array()
            .unwrap()
            .iter()
            .map(|item| item["object"].as_str().unwrap().to_string())
            .collect()
    };
    let structure = app.get(&owner, &structure_path).await.expect(200);
    assert_eq!(kinds(&structure), ["site-section", "site-external-link"]);
    let (status, _, home) = app.get_raw(&owner, "/s/linked/", &[]).await;
    assert_eq!(status, 200);
    let home = String::from_utf8_lossy(&home).into_owned();
    assert!(
        home.contains(
            r#"<a href="https://status.example.com/now" class="external" rel="noopener">Status</a>"#
        ),
        "the link is a tab of the section bar"
    );

    // Sorted before the first section, then moved into a group (its `children`, not its
    // deprecated `sections`), then back out when the group goes.
    let first_section = structure["structure"][0]["id"].as_str().unwrap().to_string();
    let sorted = app
        .patch(
            &owner,
            &format!("{base}/structure/sort"),
            json!({"item": {"type": "site-external-link", "id": id(&link)},
                   "position": {"before": {"type": "site-section", "id": first_section}}}),
        )
        .await
        .expect(200);
    assert_eq!(sorted["object"], "site-external-link");
    let structure = app.get(&owner, &structure_path).await.expect(200);
    assert_eq!(kinds(&structure), ["site-external-link", "site-section"]);
    let group = app
        .post(
            &owner,
            &format!("{base}/section-groups"),
            json!({"title": "More"}),
        )
        .await
        .expect(201);
    let link_path = format!("{links}/{}", id(&link));
    let moved = app
        .patch(
            &owner,
            &link_path,
            json!({"parent": id(&group), "icon": "signal"}),
        )
        .await
        .expect(200);
    assert_eq!(
        (moved["sectionGroup"].clone(), moved["icon"].clone()),
        (group["id"].clone(), json!("signal"))
    );
    let groups = app
        .get(&owner, &format!("{base}/section-groups"))
        .await
        .expect(200);
    let in_group = &groups["items"][0];
    assert_eq!(in_group["children"][0]["id"], link["id"]);
    assert_eq!(in_group["sections"], json!([]));
    app.delete(&owner, &format!("{base}/section-groups/{}", id(&group)))
        .await
        .expect(204);
    let structure = app.get(&owner, &structure_path).await.expect(200);
    assert_eq!(
        kinds(&structure),
        ["site-section", "site-external-link"],
        "the group's link takes the group's place"
    );

    // `Prefer: return=minimal` answers 204; a draft is not live; DELETE is 204 twice.
    let minimal = app
        .request_with(
            "PATCH",
            Some(&owner.token),
            &link_path,
            Some(json!({"draft": true, "description": null})),
            &[("prefer", "return=minimal")],
        )
        .await;
    assert_eq!(minimal.status, 204);
    assert_eq!(minimal.headers["preference-applied"], "return=minimal");
    let drafted = app.get(&owner, &structure_path).await.expect(200);
    let drafted = drafted["structure"][1].clone();
    assert_eq!(
        (drafted["draft"].clone(), drafted.get("description").cloned()),
        (json!(true), None)
    );
    let published = app.get(&owner, &format!("{base}/published")).await.expect(200);
    assert_eq!(
        kinds(&published["structure"]),
        ["site-section"],
        "a draft link is not live"
    );
    let (_, _, home) = app.get_raw(&owner, "/s/linked/", &[]).await;
    assert!(!String::from_utf8_lossy(&home).contains("status.example.com"));
    app.delete(&owner, &link_path).await.expect(204);
    app.delete(&owner, &link_path).await.expect(204);
    app.patch(&owner, &link_path, json!({"title": "Gone"}))
        .await
        .expect_error(404);
    let structure = app.get(&owner, &structure_path).await.expect(200);
    assert_eq!(kinds(&structure), ["site-section"]);
}
