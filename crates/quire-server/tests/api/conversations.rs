//! Conversations: a generated corpus with known topics, some answered by the documentation and
//! some not. Answered questions make no issue; each unanswered topic makes one cluster, the same
//! whatever order the conversations come in; the weekly pulse counts the conversations' dates;
//! ingesting again replaces a conversation without duplicating its issues; bad bodies are 400s
//! that name the field; clusters are resolved by merging a change request that references them.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::search::{new_space, write_main};
use crate::support::{TestApp, TestUser};

/// A server that runs no jobs of its own: the tests run the queue themselves (`drain`).
async fn app() -> TestApp {
    TestApp::start_with(&["--no-jobs"]).await
}

async fn drain(app: &TestApp) {
    while quire_store::worker::run_one(app.server()).await.unwrap() {}
}

/// Waits, on a server that runs its own jobs, until every conversation of the organization is
/// processed and every issue clustered: woken by the server's writes, bounded by a minute.
pub(crate) async fn settled(app: &TestApp, user: &TestUser, org: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let changed = app.db.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let conversations = app
            .get(user, &format!("/v1/orgs/{org}/conversations?limit=1000"))
            .await
            .expect(200);
        let issues = app
            .get(user, &format!("/v1/orgs/{org}/conversations-issues?limit=1000"))
            .await
            .expect(200);
        let processed = conversations["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["processedAt"].is_string());
        let clustered = issues["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["issue"]["cluster"].is_string());
        if processed && clustered {
            return;
        }
        tokio::time::timeout_at(deadline, changed)
            .await
            .expect("conversations analysed and clustered within a minute");
    }
}

/// The documentation: three topics it answers.
async fn docs(app: &TestApp, owner: &TestUser, org: &str) -> String {
    let space = new_space(app, owner, org, "Help center").await;
    write_main(
        app,
        owner,
        &space,
        vec![json!([
            {"operation": "insert_page", "title": "Resetting your password",
             "document": {"markdown": "To reset the password of your account, open your profile settings and choose Reset password. A reset link is emailed to you.\n"}},
            {"operation": "insert_page", "title": "Inviting members",
             "document": {"markdown": "Invite new members to your organization from the Members page. Each invitation is sent by email, and you can add them to a team.\n"}},
            {"operation": "insert_page", "title": "Custom domains",
             "document": {"markdown": "Connect a custom domain to your site from its domain settings, then add a CNAME record at your DNS provider.\n"}}
        ])],
    )
    .await;
    space
}

/// Questions of topics the documentation answers.
const ANSWERED: [&[&str]; 3] = [
    &[
        "How do I reset my password?",
        "I need to reset my password, the link expired.",
        "Can you help me reset the password of my account?",
    ],
    &[
        "How can I invite members to my organization?",
        "Is there a way to invite new members?",
        "I want to invite members of my team to the organization.",
    ],
    &[
        "How do I connect a custom domain?",
        "Can I use a custom domain for my site?",
        "Where do I add the CNAME record for a custom domain?",
    ],
];

/// Questions of topics it does not.
const UNANSWERED: [&[&str]; 3] = [
    &[
        "How do I export my pages to Salesforce?",
        "Can I export data into Salesforce?",
        "Is there an export to Salesforce?",
        "Why does the Salesforce export fail?",
    ],
    &[
        "Does the mobile app have dark mode?",
        "How can I turn on dark mode in the mobile app?",
        "Is dark mode coming to the mobile app?",
        "Dark mode in the mobile app is not working.",
    ],
    &[
        "Where can I download invoices as PDF?",
        "How do I get a PDF invoice?",
        "I need PDF invoices for accounting.",
        "Can invoices be downloaded as PDF files?",
    ],
];

/// A conversation asking `question` (with greetings and an agent's reply that are not
/// questions of the user), dated `days_ago`.
fn conversation(id: &str, question: &str, days_ago: i64) -> Value {
    let date = quire_store::clock::format_ms(quire_store::clock::now_ms() - days_ago * 24 * 3600 * 1000);
    json!({
        "id": id,
        "subject": format!("Conversation {id}"),
        "metadata": {"url": format!("https://support.example.com/c/{id}"), "attributes": {"plan": "pro"}, "createdAt": date},
        "parts": [
            {"type": "message", "role": "user", "body": format!("Hello! {question} Thanks a lot.")},
            {"type": "message", "role": "agent", "body": "How can I help you today? Let me check the documentation."},
            {"type": "message", "role": "assistant", "body": "Did you try the settings page?"}
        ]
    })
}

/// The corpus: (conversation, topic) where topic is `a<i>` for answered ones and `u<i>` for
/// unanswered ones.
fn corpus() -> Vec<(Value, String)> {
    let mut out = Vec::new();
    for (t, questions) in ANSWERED.iter().enumerate() {
        for (q, question) in questions.iter().enumerate() {
            out.push((
                conversation(&format!("a{t}-{q}"), question, (t * 3 + q) as i64),
                format!("a{t}"),
            ));
        }
    }
    for (t, questions) in UNANSWERED.iter().enumerate() {
        for (q, question) in questions.iter().enumerate() {
            let id = format!("u{t}-{q}");
            out.push((
                conversation(&id, question, (t * 7 + q * 5) as i64),
                format!("u{t}"),
            ));
        }
    }
    out
}

async fn ingest(app: &TestApp, user: &TestUser, org: &str, body: Value) {
    app.post(user, &format!("/v1/orgs/{org}/conversations"), body)
        .await
        .expect(204);
}

async fn all(app: &TestApp, user: &TestUser, path: &str) -> Vec<Value> {
    let mut items = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let sep = if path.contains('?') { '&' } else { '?' };
        let url = match &next {
            Some(page) => format!("{path}{sep}limit=5&page={page}"),
            None => format!("{path}{sep}limit=5"),
        };
        let list = app.get(user, &url).await.expect(200);
        items.extend(list["items"].as_array().unwrap().iter().cloned());
        match list["next"]["page"].as_str() {
            Some(page) => next = Some(page.to_string()),
            None => return items,
        }
    }
}

/// The clusters as sets of conversation ids, from the issues list.
async fn grouping(app: &TestApp, user: &TestUser, org: &str) -> BTreeSet<BTreeSet<String>> {
    let issues = all(app, user, &format!("/v1/orgs/{org}/conversations-issues")).await;
    let mut by_cluster: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for item in issues {
        let cluster = item["issue"]["cluster"]
            .as_str()
            .expect("every issue is clustered")
            .to_string();
        by_cluster
            .entry(cluster)
            .or_default()
            .insert(item["conversation"]["id"].as_str().unwrap().to_string());
    }
    by_cluster.into_values().collect()
}

#[tokio::test]
async fn unanswered_topics_make_one_cluster_each_in_any_order() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let corpus = corpus();
    let expected: BTreeSet<BTreeSet<String>> = (0..UNANSWERED.len())
        .map(|t| {
            corpus
                .iter()
                .filter(|(_, topic)| *topic == format!("u{t}"))
                .map(|(c, _)| c["id"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    let mut groupings = Vec::new();
    let mut descriptions = Vec::new();
    // In order; reversed; interleaved by a fixed permutation; and one at a time, clustering
    // after each.
    let orders: Vec<Vec<usize>> = vec![
        (0..corpus.len()).collect(),
        (0..corpus.len()).rev().collect(),
        (0..corpus.len()).map(|i| (i * 5 + 3) % corpus.len()).collect(),
    ];
    for order in &orders {
        assert_eq!(
            order.iter().collect::<BTreeSet<_>>().len(),
            corpus.len(),
            "a permutation"
        );
    }
    for (n, order) in orders.iter().enumerate() {
        let org = app.org(&owner, &format!("Support {n}")).await;
        docs(&app, &owner, &org).await;
        let one_at_a_time = n == 2;
        for &i in order {
            ingest(&app, &owner, &org, corpus[i].0.clone()).await;
            if one_at_a_time {
                drain(&app).await;
            }
        }
        drain(&app).await;
        // Answered questions made no issue.
        let issues = all(&app, &owner, &format!("/v1/orgs/{org}/conversations-issues")).await;
        for item in &issues {
            let id = item["conversation"]["id"].as_str().unwrap();
            assert!(id.starts_with('u'), "an answered question made an issue: {item}");
            assert!(item["issue"]["coverage"].as_i64().unwrap() < 70, "{item}");
        }
        let titles: Vec<&Value> = issues.iter().map(|i| &i["issue"]["title"]).collect();
        assert_eq!(
            issues.len(),
            corpus.iter().filter(|(_, t)| t.starts_with('u')).count(),
            "order {n}: {titles:?}"
        );
        let grouping = grouping(&app, &owner, &org).await;
        assert_eq!(grouping, expected, "order {n}");
        groupings.push(grouping);
        // Every conversation is processed.
        let conversations = all(&app, &owner, &format!("/v1/orgs/{org}/conversations")).await;
        assert_eq!(conversations.len(), corpus.len());
        assert!(
            conversations.iter().all(|c| c["processedAt"].is_string()),
            "{conversations:?}"
        );
        // The clusters, with their counts; labels are one of their questions.
        let clusters = all(&app, &owner, &format!("/v1/orgs/{org}/conversations-clusters")).await;
        assert_eq!(clusters.len(), UNANSWERED.len());
        let mut described: Vec<(String, String)> = clusters
            .iter()
            .map(|k| {
                (
                    k["label"].as_str().unwrap().to_string(),
                    k["summary"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        described.sort();
        descriptions.push(described);
        for cluster in &clusters {
            assert_eq!(cluster["object"], "issues-cluster");
            assert_eq!(cluster["status"], "open");
            assert_eq!(cluster["stats"]["issues"], 4);
            assert_eq!(cluster["stats"]["conversations"], 4);
            assert_eq!(cluster["sources"], json!({"api": 4}));
            // The label is a question of the cluster's own topic.
            let label = cluster["label"].as_str().unwrap();
            let id = cluster["id"].as_str().unwrap();
            let members = all(
                &app,
                &owner,
                &format!("/v1/orgs/{org}/conversations-issues?cluster={id}"),
            )
            .await;
            let conversation = members[0]["conversation"]["id"].as_str().unwrap();
            let topic: usize = conversation[1..2].parse().unwrap();
            assert!(
                UNANSWERED[topic].contains(&label),
                "label {label:?} of topic {topic}"
            );
            assert!(
                cluster["summary"]
                    .as_str()
                    .unwrap()
                    .starts_with("4 unanswered questions from 4 conversations")
            );
        }
    }
    // The same clusters, down to their labels and summaries, whatever the order.
    assert!(groupings.windows(2).all(|w| w[0] == w[1]));
    assert!(descriptions.windows(2).all(|w| w[0] == w[1]), "{descriptions:#?}");
    // Each label is a question of its own cluster's topic.
    for (label, _) in &descriptions[0] {
        assert_eq!(
            UNANSWERED.iter().filter(|t| t.contains(&label.as_str())).count(),
            1
        );
    }
}

#[tokio::test]
async fn the_weekly_pulse_counts_conversations_by_their_week() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Pulse").await;
    docs(&app, &owner, &org).await;
    let now = quire_store::clock::now_ms();
    let days = [0i64, 1, 7, 8, 9, 30, 76, 200];
    for (i, d) in days.iter().enumerate() {
        let q = UNANSWERED[2][i % 4];
        ingest(&app, &owner, &org, conversation(&format!("p{i}"), q, *d)).await;
    }
    drain(&app).await;
    let clusters = all(&app, &owner, &format!("/v1/orgs/{org}/conversations-clusters")).await;
    assert_eq!(clusters.len(), 1, "{clusters:?}");
    let pulse: Vec<i64> = clusters[0]["weeklyPulse"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    // Weeks from Monday (UTC): the last is the current one.
    let week = |at: i64| quire_store::conversations::clusters::week_start(at);
    let mut expected = vec![0i64; 12];
    for d in days {
        let at = now - d * 24 * 3600 * 1000;
        let back = (week(now) - week(at)) / (7 * 24 * 3600 * 1000);
        if back < 12 {
            expected[11 - back as usize] += 1;
        }
    }
    assert_eq!(pulse, expected);
    assert_eq!(
        pulse.iter().sum::<i64>(),
        7,
        "the conversation of 200 days ago is outside"
    );
    assert_eq!(clusters[0]["stats"]["conversations"], 8);
}

/// The issues of conversation `c1`: (title, id), by title.
async fn issues_of_c1(app: &TestApp, owner: &TestUser, org: &str) -> Vec<(String, String)> {
    let list = app
        .get(
            owner,
            &format!("/v1/orgs/{org}/conversations-issues?conversation=c1"),
        )
        .await
        .expect(200);
    let mut ids: Vec<(String, String)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["issue"]["title"].as_str().unwrap().to_string(),
                i["issue"]["id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn ingesting_again_replaces_without_duplicating_issues() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Again").await;
    docs(&app, &owner, &org).await;
    let body = conversation(
        "c1",
        "How do I export my pages to Salesforce? Does the mobile app have dark mode?",
        2,
    );
    ingest(&app, &owner, &org, body.clone()).await;
    let pending = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations/c1"))
        .await
        .expect(200);
    assert!(pending["conversation"]["processedAt"].is_null(), "{pending}");
    let waiting = |processed: &str| format!("/v1/orgs/{org}/conversations?processed={processed}");
    assert_eq!(app.get(&owner, &waiting("false")).await.expect(200)["count"], 1);
    assert_eq!(app.get(&owner, &waiting("true")).await.expect(200)["count"], 0);
    app.get(&owner, &waiting("maybe")).await.expect(400);
    drain(&app).await;
    assert_eq!(app.get(&owner, &waiting("false")).await.expect(200)["count"], 0);
    assert_eq!(app.get(&owner, &waiting("true")).await.expect(200)["count"], 1);
    let first = issues_of_c1(&app, &owner, &org).await;
    assert_eq!(first.len(), 2, "{first:?}");
    // The same conversation again: the same issues, with their ids.
    ingest(&app, &owner, &org, body.clone()).await;
    drain(&app).await;
    assert_eq!(issues_of_c1(&app, &owner, &org).await, first);
    // Changed: the question no longer asked is gone, the one still asked keeps its id, a new
    // one is added.
    let mut changed = conversation(
        "c1",
        "Does the mobile app have dark mode? Where can I download invoices as PDF?",
        2,
    );
    changed["subject"] = json!("Changed");
    ingest(&app, &owner, &org, changed).await;
    drain(&app).await;
    let after = issues_of_c1(&app, &owner, &org).await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(
        after.contains(&first[0]),
        "dark mode keeps its issue: {after:?} {first:?}"
    );
    assert!(after.iter().any(|(t, _)| t.contains("invoices")));
    assert!(!after.iter().any(|(t, _)| t.contains("Salesforce")));
    let detail = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations/c1"))
        .await
        .expect(200);
    assert_eq!(detail["conversation"]["subject"], "Changed");
    assert_eq!(detail["parts"].as_array().unwrap().len(), 3);
    assert_eq!(detail["parts"][0]["type"], "message");
    assert_eq!(detail["parts"][0]["role"], "user");
    assert_eq!(detail["metadata"]["attributes"], json!({"plan": "pro"}));
    assert_eq!(detail["metadata"]["url"], "https://support.example.com/c/c1");
    assert_eq!(
        detail["conversation"]["urls"]["source"],
        "https://support.example.com/c/c1"
    );
    assert!(detail["conversation"]["processedAt"].is_string());
    // One conversation, and the clusters count each issue once.
    let list = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations"))
        .await
        .expect(200);
    assert_eq!(list["count"], 1);
    let clusters = all(&app, &owner, &format!("/v1/orgs/{org}/conversations-clusters")).await;
    assert_eq!(
        clusters
            .iter()
            .map(|k| k["stats"]["issues"].as_i64().unwrap())
            .sum::<i64>(),
        2
    );
    // An issue by id, with its conversation and the closest pages found.
    let (_, id) = &after[0];
    let item = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations-issues/{id}"))
        .await
        .expect(200);
    assert_eq!(item["issue"]["object"], "conversation-issue");
    assert_eq!(item["issue"]["conversation"], "c1");
    assert_eq!(item["conversation"]["id"], "c1");
    assert!(item["issue"]["summary"].as_str().unwrap().contains("Changed"));
}

#[tokio::test]
async fn closest_pages_are_linked_from_a_partly_answered_question() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Partial").await;
    let space = docs(&app, &owner, &org).await;
    // Another organization documents it fully: its pages are not this one's documentation.
    let other = app.org(&owner, "Elsewhere").await;
    let elsewhere = new_space(&app, &owner, &other, "Ops").await;
    write_main(
        &app,
        &owner,
        &elsewhere,
        vec![json!([{"operation": "insert_page", "title": "Kubernetes",
                     "document": {"markdown": "Reset the password of a Kubernetes cluster with kubectl.\n"}}])],
    )
    .await;
    // Two of its four terms are in "Resetting your password": not answered, but close.
    ingest(
        &app,
        &owner,
        &org,
        conversation("x", "How do I reset the password of a Kubernetes cluster?", 1),
    )
    .await;
    drain(&app).await;
    let list = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations-issues"))
        .await
        .expect(200);
    assert_eq!(list["count"], 1, "{list}");
    let issue = &list["items"][0]["issue"];
    assert_eq!(issue["coverage"], 50, "{issue}");
    assert_eq!(issue["pages"][0]["space"], space.as_str());
    assert_eq!(issue["pages"][0]["title"], "Resetting your password");
    assert_eq!(issue["pages"][0]["coverage"], 50);
    assert!(
        issue["pages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["space"] == space.as_str()),
        "{issue}"
    );
    let page = issue["pages"][0]["urls"]["location"].as_str().unwrap();
    let path = page.split("/v1/").nth(1).unwrap();
    app.get(&owner, &format!("/v1/{path}")).await.expect(200);
}

#[tokio::test]
async fn bad_bodies_are_refused_naming_the_field_and_store_nothing() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Strict").await;
    let good = conversation("ok", "How do I export my pages to Salesforce?", 0);
    // Each case changes one place of a good body: (JSON pointer, value, what the 400 names).
    let cases: Vec<(&str, Value, &str)> = vec![
        ("/parts/1/role", json!("robot"), "parts[1].role"),
        ("/parts/0/type", json!("note"), "parts[0].type"),
        ("/id", json!("has/slash"), "`id`"),
        ("/id", json!("x".repeat(129)), "`id`"),
        ("/parts", json!([]), "`parts`"),
        (
            "/parts",
            json!(
                (0..501)
                    .map(|_| json!({"type": "message", "role": "user", "body": "hi"}))
                    .collect::<Vec<_>>()
            ),
            "`parts`",
        ),
        ("/parts/0/body", json!("a".repeat(32 * 1024 + 1)), "parts[0].body"),
        (
            "/parts",
            json!(
                (0..9)
                    .map(|_| json!({"type": "message", "role": "user", "body": "b".repeat(30_000)}))
                    .collect::<Vec<_>>()
            ),
            "parts[8].body",
        ),
        ("/metadata/url", json!("javascript:alert(1)"), "metadata.url"),
        ("/metadata/createdAt", json!("yesterday"), "metadata.createdAt"),
        ("/subject", json!("s".repeat(501)), "subject"),
        (
            "/metadata/attributes",
            json!(
                (0..51)
                    .map(|i| (format!("k{i}"), json!("v")))
                    .collect::<serde_json::Map<_, _>>()
            ),
            "metadata.attributes",
        ),
        ("/parts/0/role", json!(7), "role"),
    ];
    for (pointer, value, field) in cases {
        let mut body = good.clone();
        *body.pointer_mut(pointer).unwrap() = value;
        let message = app
            .post(&owner, &format!("/v1/orgs/{org}/conversations"), body)
            .await
            .expect_error(400);
        assert!(message.contains(field), "{field}: {message}");
    }
    let list = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations"))
        .await
        .expect(200);
    assert_eq!(list["count"], 0);
    ingest(&app, &owner, &org, good).await;
    // Absent ones are 404s.
    for path in [
        "conversations/nope",
        "conversations-issues/nope",
        "conversations-clusters/nope",
    ] {
        app.get(&owner, &format!("/v1/orgs/{org}/{path}"))
            .await
            .expect(404);
    }
    // Bad filters are 400s.
    for query in ["sort=title", "status=closed", "order=up"] {
        app.get(&owner, &format!("/v1/orgs/{org}/conversations-clusters?{query}"))
            .await
            .expect(400);
    }
}

#[tokio::test]
async fn lists_filter_sort_and_page() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Lists").await;
    docs(&app, &owner, &org).await;
    for (body, _) in corpus() {
        ingest(&app, &owner, &org, body).await;
    }
    drain(&app).await;
    // Conversations, newest first, paged; by source.
    let conversations = all(&app, &owner, &format!("/v1/orgs/{org}/conversations")).await;
    assert_eq!(conversations.len(), corpus().len());
    let ids: BTreeSet<&str> = conversations.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids.len(),
        conversations.len(),
        "no conversation twice across pages"
    );
    assert_eq!(
        all(&app, &owner, &format!("/v1/orgs/{org}/conversations?source=api"))
            .await
            .len(),
        corpus().len()
    );
    assert!(
        all(
            &app,
            &owner,
            &format!("/v1/orgs/{org}/conversations?source=intercom")
        )
        .await
        .is_empty()
    );
    // Issues of a cluster, and of a conversation.
    let clusters = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters?sort=issues&order=asc"),
    )
    .await;
    assert_eq!(clusters.len(), 3);
    for cluster in &clusters {
        let id = cluster["id"].as_str().unwrap();
        let issues = all(
            &app,
            &owner,
            &format!("/v1/orgs/{org}/conversations-issues?cluster={id}"),
        )
        .await;
        assert_eq!(issues.len(), 4);
        assert!(issues.iter().all(|i| i["issue"]["cluster"] == id));
        let one = app
            .get(&owner, &format!("/v1/orgs/{org}/conversations-clusters/{id}"))
            .await
            .expect(200);
        assert_eq!(one["label"], cluster["label"]);
    }
    let of_one = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-issues?conversation=u1-2"),
    )
    .await;
    assert_eq!(of_one.len(), 1);
    // Sorted by creation, both ways.
    let asc = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters?sort=createdAt&order=asc"),
    )
    .await;
    let desc = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters?sort=createdAt"),
    )
    .await;
    let mut reversed: Vec<&Value> = desc.iter().map(|k| &k["id"]).collect();
    reversed.reverse();
    assert_eq!(asc.iter().map(|k| &k["id"]).collect::<Vec<_>>(), reversed);
}

#[tokio::test]
async fn a_merged_change_request_resolves_the_cluster_it_references() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Tasks").await;
    let space = docs(&app, &owner, &org).await;
    for (i, q) in UNANSWERED[0].iter().enumerate() {
        ingest(&app, &owner, &org, conversation(&format!("s{i}"), q, 0)).await;
    }
    drain(&app).await;
    let clusters = all(&app, &owner, &format!("/v1/orgs/{org}/conversations-clusters")).await;
    assert_eq!(clusters.len(), 1);
    let cluster = clusters[0]["id"].as_str().unwrap().to_string();
    // A change request referencing another organization's cluster, or none, is refused.
    let other = app.org(&owner, "Elsewhere").await;
    let refused = app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Nope", "conversationsIssuesCluster": "not-a-cluster"}),
        )
        .await
        .expect_error(400);
    assert!(refused.contains("conversationsIssuesCluster"), "{refused}");
    let _ = other;
    // Two change requests address it: one archived, one merged.
    let archived = app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Try"}),
        )
        .await
        .expect(201);
    let archived = archived["id"].as_str().unwrap();
    app.patch(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{archived}"),
        json!({"conversationsIssuesCluster": cluster, "status": "archived"}),
    )
    .await
    .expect(200);
    let cr = app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": "Document the Salesforce export", "conversationsIssuesCluster": cluster}),
        )
        .await
        .expect(201);
    assert_eq!(cr["conversationsIssuesCluster"], cluster.as_str());
    let cr = cr["id"].as_str().unwrap().to_string();
    let listed = app
        .get(
            &owner,
            &format!(
                "/v1/spaces/{space}/change-requests?status=archived&conversationsIssuesCluster={cluster}"
            ),
        )
        .await
        .expect(200);
    assert_eq!(listed["count"], 1);
    let one = app
        .get(
            &owner,
            &format!("/v1/orgs/{org}/conversations-clusters/{cluster}"),
        )
        .await
        .expect(200);
    assert_eq!(one["stats"]["tasksTotal"], 2);
    assert_eq!(one["stats"]["tasksBacklog"], 1);
    assert_eq!(one["stats"]["tasksCancelled"], 1);
    assert_eq!(one["status"], "open");
    // The docs team sets it resolved and open again; then the merge resolves it.
    let resolved = app
        .patch(
            &owner,
            &format!("/v1/orgs/{org}/conversations-clusters/{cluster}"),
            json!({"status": "resolved"}),
        )
        .await
        .expect(200);
    assert_eq!(resolved["status"], "resolved");
    let open = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters?status=open"),
    )
    .await;
    assert!(open.is_empty());
    app.patch(
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters/{cluster}"),
        json!({"status": "open"}),
    )
    .await
    .expect(200);
    app.patch(
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters/{cluster}"),
        json!({"status": "gone"}),
    )
    .await
    .expect(400);
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [{"operation": "insert_page", "title": "Salesforce export", "document": {"markdown": "Export pages to Salesforce from the Export menu."}}]}),
    )
    .await
    .expect(200);
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let one = app
        .get(
            &owner,
            &format!("/v1/orgs/{org}/conversations-clusters/{cluster}"),
        )
        .await
        .expect(200);
    assert_eq!(one["status"], "resolved");
    assert_eq!(one["stats"]["tasksCompleted"], 1);
    let resolved = all(
        &app,
        &owner,
        &format!("/v1/orgs/{org}/conversations-clusters?status=resolved"),
    )
    .await;
    assert_eq!(resolved.len(), 1);
    // Now documented: the same question asked again makes no issue.
    ingest(&app, &owner, &org, conversation("s-new", UNANSWERED[0][0], 0)).await;
    drain(&app).await;
    let issues = app
        .get(
            &owner,
            &format!("/v1/orgs/{org}/conversations-issues?conversation=s-new"),
        )
        .await
        .expect(200);
    assert_eq!(issues["count"], 0, "{issues}");
}

#[tokio::test]
async fn who_may_ingest_and_who_may_see() {
    let app = app().await;
    let owner = app.user("Owner").await;
    let org = app.org(&owner, "Roles").await;
    let mut users = Vec::new();
    for role in ["create", "edit", "read"] {
        let user = app.user(role).await;
        app.add_member(&owner, &org, &user, Some(role)).await;
        users.push(user);
    }
    let outsider = app.user("Outsider").await;
    let body = conversation("r1", "How do I export my pages to Salesforce?", 0);
    let path = format!("/v1/orgs/{org}/conversations");
    app.post(&users[0], &path, body.clone()).await.expect(204);
    app.post(&users[1], &path, body.clone()).await.expect(403);
    app.post(&users[2], &path, body.clone()).await.expect(403);
    app.post(&outsider, &path, body.clone()).await.expect(404);
    app.get(&users[1], &path).await.expect(200);
    app.get(&users[1], &format!("{path}/r1")).await.expect(200);
    app.get(&users[2], &path).await.expect(403);
    app.get(&users[2], &format!("{path}/r1")).await.expect(403);
    app.get(&outsider, &path).await.expect(404);
    // The organization says who may ingest.
    let seen = app.get(&users[0], &format!("/v1/orgs/{org}")).await.expect(200);
    assert_eq!(seen["permissions"]["ingestConversations"], true);
    let seen = app.get(&users[1], &format!("/v1/orgs/{org}")).await.expect(200);
    assert_eq!(seen["permissions"]["ingestConversations"], false);
}
