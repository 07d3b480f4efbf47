//! The `conversations` phase (`docs/conversations.md`): support conversations ingested,
//! analysed (the questions the documentation does not answer become issues) and clustered, the
//! issue's budget being "ingesting 10,000 conversations (a bench data set made by the
//! generator) analyses and clusters them in under 60 s on this machine; adding one more updates
//! the clusters in under 1 s".
//!
//! In order, with the administrator's token:
//!
//! 1. **setup**: a fresh organization (`POST /v1/orgs`) and in it a docs space of one page per
//!    [`DOCUMENTED`] topic (a few paragraphs made of the topic's keywords and neutral filler),
//!    written through one change request, merged;
//! 2. **generate** ([`generate`], from a fixed seed): [`CONVERSATIONS_FULL`] conversations
//!    ([`CONVERSATIONS_SMALL`] with `--scale small`), ids `bench-{n}`: a user message (a
//!    greeting, one question, for [`TWO_QUESTIONS_PERCENT`]% of them two of different topics, a
//!    sign-off) and an agent's reply, dated over the past [`WEEKS`] weeks. A question is about a
//!    documented topic [`DOCUMENTED_PERCENT`]% of the time, else about one of the
//!    [`UNDOCUMENTED`] topics, whose keywords are in no page. The generator's topic of each
//!    question is kept to judge what the server found;
//! 3. **ingest**: every conversation `POST /v1/orgs/{org}/conversations` (204), at
//!    [`INGEST_CONNECTIONS`] connections. T0 is just before the first POST;
//! 4. **all**: every [`POLL`] until done: no conversation left to analyse (`count` of
//!    `GET .../conversations?processed=false`) and the clusters' `stats.issues` summing to the
//!    issues' `count`. T1 is the first answer that shows it: T1 − T0 against
//!    [`ALL_BUDGET_MS`]. Not done after [`GIVE_UP`], the phase fails with how far it got. Then
//!    the issues and clusters are read back (every page) and judged ([`judge`]);
//! 5. **one more**: conversation [`ONE_ID`] asking an undocumented topic's question, from just
//!    before its POST until it is processed and done again (every [`ONE_POLL`]), against
//!    [`ONE_BUDGET_MS`].

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conn::Conn;
use crate::dataset::Dataset;
use crate::load::FamilyResult;
use crate::text::Rng;

/// Conversations ingested at full scale, and with `--scale small`.
pub const CONVERSATIONS_FULL: usize = 10_000;
pub const CONVERSATIONS_SMALL: usize = 1_000;
/// Requests in flight while ingesting.
pub const INGEST_CONNECTIONS: usize = 16;
/// Questions about a documented topic, in percent (the others are about undocumented ones).
pub const DOCUMENTED_PERCENT: u64 = 60;
/// Conversations asking two questions (of different topics), in percent.
pub const TWO_QUESTIONS_PERCENT: u64 = 10;
/// The conversations' dates spread over this many past weeks.
pub const WEEKS: u64 = 16;
/// Budgets: from just before the first POST to done, and for one more conversation.
pub const ALL_BUDGET_MS: f64 = 60_000.0;
pub const ONE_BUDGET_MS: f64 = 1_000.0;
/// How often progress is read while the data set is analysed, and after the one more.
pub const POLL: Duration = Duration::from_millis(250);
pub const ONE_POLL: Duration = Duration::from_millis(20);
/// Not done by then (from T0, and from the one more's POST), the phase fails.
pub const GIVE_UP: Duration = Duration::from_secs(600);
pub const ONE_GIVE_UP: Duration = Duration::from_secs(60);
/// The family name of the ingest's figures.
pub const INGEST: &str = "conversations-ingest";
/// The id of the one more conversation.
pub const ONE_ID: &str = "bench-one";
/// Items per page when reading the lists back (the API's maximum).
const LIST_LIMIT: usize = 1000;
/// Seeds of the data set and of the one more conversation.
const SEED: u64 = 16_000;
const ONE_SEED: u64 = 16_001;
/// How often a progress line is printed while waiting.
const REPORT_EVERY: Duration = Duration::from_secs(10);
/// Examples kept of each kind of surprise.
const EXAMPLES: usize = 3;

/// A subject of questions: a verb and three nouns, its four keywords.
#[derive(Clone, Copy, Debug)]
pub struct Topic {
    pub title: &'static str,
    pub verb: &'static str,
    pub nouns: [&'static str; 3],
}

impl Topic {
    /// Its four keywords (the tests check the pages and questions against them).
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn keywords(&self) -> [&'static str; 4] {
        [self.verb, self.nouns[0], self.nouns[1], self.nouns[2]]
    }
}

const fn topic(title: &'static str, verb: &'static str, nouns: [&'static str; 3]) -> Topic {
    Topic { title, verb, nouns }
}

/// Topics the docs space has a page on.
pub const DOCUMENTED: [Topic; 20] = [
    topic(
        "Exporting invoices",
        "export",
        ["invoices", "spreadsheet", "ledger"],
    ),
    topic(
        "Resetting passwords",
        "reset",
        ["password", "mailbox", "recovery"],
    ),
    topic(
        "Inviting teammates",
        "invite",
        ["teammates", "workspace", "seats"],
    ),
    topic(
        "Connecting Slack",
        "connect",
        ["slack", "channel", "notifications"],
    ),
    topic("Custom domains", "configure", ["domain", "dns", "certificate"]),
    topic(
        "Two-factor authentication",
        "enable",
        ["authenticator", "phone", "codes"],
    ),
    topic("Billing plans", "upgrade", ["subscription", "plan", "billing"]),
    topic(
        "Importing from Confluence",
        "import",
        ["confluence", "markdown", "attachments"],
    ),
    topic("Webhooks", "register", ["webhook", "endpoint", "payload"]),
    topic("API tokens", "rotate", ["token", "scopes", "expiry"]),
    topic("Single sign-on", "setup", ["saml", "okta", "provider"]),
    topic("Search and filters", "filter", ["search", "results", "tags"]),
    topic("Page history", "restore", ["revision", "history", "snapshot"]),
    topic(
        "Comments and mentions",
        "resolve",
        ["comments", "thread", "mention"],
    ),
    topic("Permissions", "grant", ["permission", "editor", "viewer"]),
    topic("Themes and branding", "customize", ["theme", "colors", "logo"]),
    topic("Translations", "translate", ["language", "locale", "glossary"]),
    topic("Analytics", "track", ["analytics", "visitors", "pageviews"]),
    topic("Offline access", "download", ["offline", "pdf", "archive"]),
    topic("Git sync", "sync", ["github", "repository", "branch"]),
];

/// Topics no page mentions: none of their keywords (nor a word starting like one) is in the
/// docs space.
pub const UNDOCUMENTED: [Topic; 20] = [
    topic("Jira migration", "migrate", ["jira", "tickets", "sprints"]),
    topic("Newsletters", "schedule", ["newsletter", "digest", "bulletin"]),
    topic("Event badges", "print", ["badges", "lanyard", "attendees"]),
    topic("Refunds", "cancel", ["refund", "voucher", "coupon"]),
    topic("Secrets vault", "encrypt", ["vault", "secrets", "keystore"]),
    topic("Audio devices", "pair", ["bluetooth", "earbuds", "microphone"]),
    topic("Math formulas", "render", ["katex", "equations", "mathjax"]),
    topic("Podcast captions", "caption", ["podcast", "audio", "subtitles"]),
    topic("Maps", "geocode", ["addresses", "maps", "coordinates"]),
    topic("Payouts", "wire", ["stripe", "payouts", "currency"]),
    topic("Kiosk mode", "lock", ["kiosk", "tablet", "screensaver"]),
    topic("Zapier", "automate", ["zapier", "triggers", "recipes"]),
    topic("Accessibility", "toggle", ["dyslexia", "braille", "narrator"]),
    topic("Mobile app", "install", ["android", "iphone", "widget"]),
    topic("Inventory", "tally", ["warehouse", "barcodes", "pallets"]),
    topic("Appointments", "book", ["appointments", "calendar", "reminders"]),
    topic("Chatbot", "train", ["chatbot", "utterances", "personas"]),
    topic("Shipping", "ship", ["parcels", "couriers", "tariffs"]),
    topic("Webinars", "stream", ["webinar", "livestream", "bandwidth"]),
    topic("Legal documents", "redact", ["clauses", "notary", "affidavits"]),
];

/// Every topic: the documented ones first, so that a topic number below
/// `DOCUMENTED.len()` is documented.
pub fn topic_of(n: usize) -> &'static Topic {
    let documented = DOCUMENTED.len();
    if n < documented {
        &DOCUMENTED[n]
    } else {
        &UNDOCUMENTED[(n - documented) % UNDOCUMENTED.len()]
    }
}

pub fn is_documented(n: usize) -> bool {
    n < DOCUMENTED.len()
}

pub const TOPICS: usize = DOCUMENTED.len() + UNDOCUMENTED.len();

/// Neutral sentences of the pages: no topic's keyword, nor a word starting like an undocumented
/// one (a test checks it).
const FILLER: &[&str] = &[
    "Changes apply to every member of the organization.",
    "Only owners and administrators see this option.",
    "Your changes are saved as soon as you confirm.",
    "It usually takes a few seconds.",
    "You can undo this at any moment.",
    "Read the rest of this guide for the details.",
    "Ask an administrator if the option is greyed out.",
    "Nothing else needs to change.",
];

const GREETINGS: &[&str] = &["Hi there!", "Hello!", "Good morning.", "Hey!", "Hi team!"];
const SIGN_OFFS: &[&str] = &["Thanks!", "Thank you.", "Cheers.", ""];
const REPLIES: &[&str] = &[
    "Thanks for reaching out, let me look into it.",
    "Let me check with the team and come back to you.",
    "Good catch, I am forwarding this to our specialists.",
];
const PLANS: &[&str] = &["free", "pro", "enterprise"];
const CHANNELS: &[&str] = &["chat", "email"];

/// One page of the docs space: the topic's four keywords in every part, with filler.
pub fn page_markdown(rng: &mut Rng, t: &Topic) -> String {
    let [n0, n1, n2] = t.nouns;
    let v = t.verb;
    let mut filler = |count: usize| {
        (0..count)
            .map(|_| FILLER[rng.below(FILLER.len())])
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "# {title}\n\n\
         This page explains how to {v} {n0}, and how {n1} and {n2} fit in. {f0}\n\n\
         ## Before you start\n\n\
         You need access to {n0} before you {v} anything; {n1} and {n2} must be set up too. {f1}\n\n\
         ## Step by step\n\n\
         1. Open the {n0} settings.\n\
         2. Choose {n1}.\n\
         3. Select {v} and confirm {n2}.\n\n\
         {f2}\n\n\
         ## Troubleshooting\n\n\
         If {n1} does not {v} as expected, check {n0} and {n2} first. {f3}\n",
        title = t.title,
        f0 = filler(2),
        f1 = filler(1),
        f2 = filler(2),
        f3 = filler(1)
    )
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A question about `t`, in one of four phrasings sharing most of its keywords.
pub fn question(rng: &mut Rng, t: &Topic) -> String {
    let i = rng.below(t.nouns.len());
    let j = (i + 1 + rng.below(t.nouns.len() - 1)) % t.nouns.len();
    let (b, c) = (t.nouns[i], t.nouns[j]);
    match rng.below(4) {
        0 => format!("How do I {} {b}?", t.verb),
        1 => format!("Is there a way to {} the {b}?", t.verb),
        2 => format!("{} is not working with {c}.", capitalized(b)),
        _ => format!("Can I {} {b} into {c}?", t.verb),
    }
}

/// A question of a generated conversation and the topic it is about.
#[derive(Clone, Debug, PartialEq)]
pub struct Asked {
    pub text: String,
    pub topic: usize,
}

/// A generated conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Generated {
    pub id: String,
    pub subject: String,
    /// How long before the ingest it took place, seconds.
    pub age_s: u64,
    pub questions: Vec<Asked>,
    pub greeting: &'static str,
    pub sign_off: &'static str,
    pub reply: &'static str,
    pub plan: &'static str,
    pub channel: &'static str,
}

impl Generated {
    /// The user's message: the greeting, the questions, the sign-off, a line each.
    pub fn message(&self) -> String {
        let questions: Vec<&str> = self.questions.iter().map(|q| q.text.as_str()).collect();
        let mut lines = vec![self.greeting.to_string(), questions.join(" ")];
        if !self.sign_off.is_empty() {
            lines.push(self.sign_off.to_string());
        }
        lines.join("\n")
    }

    /// The ingest request's body, dated from `now`.
    pub fn body(&self, now: time::OffsetDateTime) -> Result<Value, String> {
        let at = now - time::Duration::seconds(i64::try_from(self.age_s).unwrap_or(0));
        let at = at
            .replace_nanosecond(0)
            .map_err(|e| e.to_string())?
            .format(&time::format_description::well_known::Rfc3339)
            .map_err(|e| e.to_string())?;
        let n = self.id.trim_start_matches("bench-");
        Ok(json!({
            "id": self.id,
            "subject": self.subject,
            "metadata": {
                "url": format!("https://support.example.com/t/{n}"),
                "attributes": {"plan": self.plan, "channel": self.channel},
                "createdAt": at,
            },
            "parts": [
                {"type": "message", "role": "user", "body": self.message()},
                {"type": "message", "role": "agent", "body": self.reply},
            ],
        }))
    }

    /// Every question is about a documented topic.
    pub fn documented(&self) -> bool {
        self.questions.iter().all(|q| is_documented(q.topic))
    }
}

/// A topic: documented [`DOCUMENTED_PERCENT`]% of the time.
fn pick_topic(rng: &mut Rng) -> usize {
    if rng.chance(DOCUMENTED_PERCENT) {
        rng.below(DOCUMENTED.len())
    } else {
        DOCUMENTED.len() + rng.below(UNDOCUMENTED.len())
    }
}

fn conversation(rng: &mut Rng, id: String, two: bool, first: Option<usize>) -> Generated {
    let first = first.unwrap_or_else(|| pick_topic(rng));
    let mut questions = vec![Asked {
        text: question(rng, topic_of(first)),
        topic: first,
    }];
    if two {
        let mut second = pick_topic(rng);
        while second == first {
            second = pick_topic(rng);
        }
        questions.push(Asked {
            text: question(rng, topic_of(second)),
            topic: second,
        });
    }
    Generated {
        id,
        subject: topic_of(first).title.to_string(),
        age_s: rng.next_u64() % (WEEKS * 7 * 24 * 3600),
        questions,
        greeting: GREETINGS[rng.below(GREETINGS.len())],
        sign_off: SIGN_OFFS[rng.below(SIGN_OFFS.len())],
        reply: REPLIES[rng.below(REPLIES.len())],
        plan: PLANS[rng.below(PLANS.len())],
        channel: CHANNELS[rng.below(CHANNELS.len())],
    }
}

/// The data set: `n` conversations `bench-1` to `bench-{n}`, the same for the same seed.
pub fn generate(n: usize, seed: u64) -> Vec<Generated> {
    let mut rng = Rng::new(seed);
    (1..=n)
        .map(|i| {
            let two = rng.chance(TWO_QUESTIONS_PERCENT);
            conversation(&mut rng, format!("bench-{i}"), two, None)
        })
        .collect()
}

/// The one more conversation: one question of an undocumented topic, asked now.
pub fn one_more() -> Generated {
    let mut rng = Rng::new(ONE_SEED);
    let topic = DOCUMENTED.len() + rng.below(UNDOCUMENTED.len());
    let mut g = conversation(&mut rng, ONE_ID.to_string(), false, Some(topic));
    g.age_s = 0;
    g
}

/// Conversations made at a dataset's scale.
pub fn conversations_for(scale: &str) -> usize {
    if scale == "small" {
        CONVERSATIONS_SMALL
    } else {
        CONVERSATIONS_FULL
    }
}

/// What the server showed at one moment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    /// Conversations not analysed yet.
    pub unprocessed: u64,
    /// The issues' `count`, and the sum of the clusters' `stats.issues` (None when not read:
    /// while conversations are left to analyse, only their count is read).
    pub issues: Option<u64>,
    pub clustered: Option<u64>,
    pub clusters: Option<u64>,
}

impl Progress {
    pub fn done(&self) -> bool {
        self.unprocessed == 0 && self.issues.is_some() && self.issues == self.clustered
    }

    pub fn describe(&self) -> String {
        let opt = |v: Option<u64>| v.map_or_else(|| "?".to_string(), |v| v.to_string());
        format!(
            "{} conversations left to analyse, {} issues, {} of them in {} clusters",
            self.unprocessed,
            opt(self.issues),
            opt(self.clustered),
            opt(self.clusters)
        )
    }
}

/// An issue as read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IssueRow {
    pub id: String,
    pub title: String,
    pub conversation: String,
    pub cluster: Option<String>,
    pub coverage: i64,
}

/// A cluster as read back.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClusterRow {
    pub id: String,
    pub label: String,
    pub issues: u64,
    pub conversations: u64,
    pub pulse: u64,
}

/// How the issues of one undocumented topic were grouped.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicSpread {
    pub topic: String,
    /// Questions asked about it, issues made of them, clusters they fall into (issues without
    /// a cluster not counted).
    pub questions: usize,
    pub issues: usize,
    pub clusters: usize,
    /// The cluster holding most of them, and their share in it.
    pub main_cluster: Option<String>,
    pub main_share: f64,
}

/// One cluster, with the topics of its issues.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterSummary {
    pub label: String,
    /// Its `stats`, and its issues as listed.
    pub issues: u64,
    pub conversations: u64,
    pub listed: usize,
    /// The topic of most of its listed issues, and their share.
    pub topic: String,
    /// The topic of the question its label is ("-" when the label is no question asked).
    pub label_topic: String,
    pub majority_share: f64,
    pub topics: usize,
    /// Its weekly pulse's sum (the past 12 weeks; the data set spans 16).
    pub pulse: u64,
}

/// What the issues and clusters tell against the generator's topics.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Quality {
    pub conversations: usize,
    /// Conversations whose questions are all about documented topics, and those of them that
    /// made no issue.
    pub documented_conversations: usize,
    pub documented_answered: usize,
    /// The same per question.
    pub documented_questions: usize,
    pub documented_questions_answered: usize,
    /// Questions about undocumented topics, and those that made an issue.
    pub undocumented_questions: usize,
    pub undocumented_with_issue: usize,
    /// Issues listed: from undocumented topics, from documented ones, matching no question
    /// asked.
    pub issues: usize,
    pub issues_undocumented: usize,
    pub issues_documented: usize,
    pub issues_unmatched: usize,
    /// Issues without a cluster.
    pub unclustered: usize,
    pub clusters: usize,
    /// Clusters whose `stats.issues` is not the number of issues listed with them.
    pub stats_mismatches: usize,
    /// Per undocumented topic, in topic order.
    pub topics: Vec<TopicSpread>,
    /// Over the undocumented topics with issues in a cluster (None when no issue is listed with
    /// a cluster).
    pub clusters_per_topic_mean: Option<f64>,
    pub clusters_per_topic_worst: usize,
    pub worst_topic: String,
    /// Issue-weighted share of each cluster's issues from its majority topic (None when no issue
    /// is listed with a cluster).
    pub purity: Option<f64>,
    /// Clusters holding issues of more than one topic.
    pub mixed_clusters: usize,
    /// Clusters whose label (their most central question) is a question of another topic than
    /// most of their issues.
    pub mislabelled: usize,
    /// Clusters whose label another cluster has too: the same question in two clusters, which
    /// cannot be (issues with the same terms are always joined).
    pub duplicate_labels: usize,
    /// The largest clusters, by issues.
    pub largest: Vec<ClusterSummary>,
    /// A few examples of each surprise.
    pub examples: Vec<String>,
}

impl Quality {
    /// Share of the documented conversations that made no issue.
    pub fn answered_recall(&self) -> Option<f64> {
        share(self.documented_answered, self.documented_conversations)
    }

    /// Share of the issues that came from undocumented topics.
    pub fn precision(&self) -> Option<f64> {
        share(self.issues_undocumented, self.issues)
    }

    /// Share of the undocumented questions that made an issue.
    pub fn detected(&self) -> Option<f64> {
        share(self.undocumented_with_issue, self.undocumented_questions)
    }
}

fn share(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Shown in place of a topic for an issue that matches no question asked.
const UNMATCHED: &str = "(no question asked)";
/// Clusters shown in [`Quality::largest`].
const LARGEST: usize = 10;

/// The question of `g` an issue's title is: the same text, or its beginning when the server
/// cut it ('…').
fn asked_index(g: &Generated, title: &str) -> Option<usize> {
    g.questions.iter().position(|q| q.text == title).or_else(|| {
        let stem = title.strip_suffix('…')?;
        g.questions.iter().position(|q| q.text.starts_with(stem))
    })
}

/// Judges the issues and clusters read back against the generator's topics.
pub fn judge(generated: &[Generated], issues: &[IssueRow], clusters: &[ClusterRow]) -> Quality {
    let mut q = Quality {
        conversations: generated.len(),
        issues: issues.len(),
        clusters: clusters.len(),
        ..Quality::default()
    };
    let by_id: HashMap<&str, &Generated> = generated.iter().map(|g| (g.id.as_str(), g)).collect();
    // (conversation, question index) of each issue, and its topic.
    let mut asked_with_issue: HashSet<(&str, usize)> = HashSet::new();
    let mut conversations_with_issue: HashSet<&str> = HashSet::new();
    let mut topic_of_issue: Vec<Option<usize>> = Vec::with_capacity(issues.len());
    let mut examples_documented = Vec::new();
    let mut examples_unmatched = Vec::new();
    for issue in issues {
        conversations_with_issue.insert(issue.conversation.as_str());
        let found = by_id
            .get(issue.conversation.as_str())
            .and_then(|g| asked_index(g, &issue.title).map(|i| (g.id.as_str(), i, g.questions[i].topic)));
        match found {
            Some((id, i, topic)) => {
                asked_with_issue.insert((id, i));
                if is_documented(topic) {
                    q.issues_documented += 1;
                    if examples_documented.len() < EXAMPLES {
                        examples_documented.push(format!(
                            "documented topic \"{}\" made an issue: \"{}\" ({}, coverage {}%)",
                            topic_of(topic).title,
                            issue.title,
                            issue.conversation,
                            issue.coverage
                        ));
                    }
                } else {
                    q.issues_undocumented += 1;
                }
                topic_of_issue.push(Some(topic));
            }
            None => {
                q.issues_unmatched += 1;
                if examples_unmatched.len() < EXAMPLES {
                    examples_unmatched.push(format!(
                        "an issue matches no question asked: \"{}\" ({})",
                        issue.title, issue.conversation
                    ));
                }
                topic_of_issue.push(None);
            }
        }
    }
    let mut examples_missed = Vec::new();
    let mut questions_per_topic = vec![0usize; TOPICS];
    for g in generated {
        if g.documented() {
            q.documented_conversations += 1;
            if !conversations_with_issue.contains(g.id.as_str()) {
                q.documented_answered += 1;
            }
        }
        for (i, asked) in g.questions.iter().enumerate() {
            questions_per_topic[asked.topic % TOPICS] += 1;
            let has_issue = asked_with_issue.contains(&(g.id.as_str(), i));
            if is_documented(asked.topic) {
                q.documented_questions += 1;
                if !has_issue {
                    q.documented_questions_answered += 1;
                }
            } else {
                q.undocumented_questions += 1;
                if has_issue {
                    q.undocumented_with_issue += 1;
                } else if examples_missed.len() < EXAMPLES {
                    examples_missed.push(format!(
                        "undocumented topic \"{}\" answered (no issue): \"{}\" ({})",
                        topic_of(asked.topic).title,
                        asked.text,
                        g.id
                    ));
                }
            }
        }
    }

    // Clusters: the topics of their listed issues.
    let mut per_cluster: BTreeMap<&str, BTreeMap<Option<usize>, usize>> = BTreeMap::new();
    let mut per_topic: BTreeMap<usize, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut topic_issues = vec![0usize; TOPICS];
    for (issue, topic) in issues.iter().zip(&topic_of_issue) {
        if let Some(t) = topic {
            topic_issues[*t % TOPICS] += 1;
        }
        let Some(cluster) = issue.cluster.as_deref() else {
            q.unclustered += 1;
            continue;
        };
        *per_cluster.entry(cluster).or_default().entry(*topic).or_default() += 1;
        if let Some(t) = topic {
            *per_topic.entry(*t).or_default().entry(cluster).or_default() += 1;
        }
    }
    let name = |t: &Option<usize>| t.map_or(UNMATCHED, |t| topic_of(t).title);
    // The topic of each question text asked (a label is one, maybe cut with '…').
    let mut question_topic: HashMap<&str, usize> = HashMap::new();
    for g in generated {
        for asked in &g.questions {
            question_topic.insert(asked.text.as_str(), asked.topic);
        }
    }
    let label_topic = |label: &str| -> Option<usize> {
        question_topic.get(label).copied().or_else(|| {
            let stem = label.strip_suffix('…')?;
            generated
                .iter()
                .flat_map(|g| &g.questions)
                .find(|q| q.text.starts_with(stem))
                .map(|q| q.topic)
        })
    };
    let mut label_counts: HashMap<&str, usize> = HashMap::new();
    for c in clusters {
        *label_counts.entry(c.label.as_str()).or_default() += 1;
    }
    let mut labels_shown: HashSet<&str> = HashSet::new();
    let mut examples_labels = Vec::new();
    let mut majority_total = 0usize;
    let mut clustered_total = 0usize;
    let mut summaries = Vec::new();
    let mut examples_mixed = Vec::new();
    for c in clusters {
        let topics = per_cluster.get(c.id.as_str());
        let listed: usize = topics.map_or(0, |t| t.values().sum());
        if u64::try_from(listed).ok() != Some(c.issues) {
            q.stats_mismatches += 1;
        }
        // The majority: most issues, then the first topic.
        let majority = topics.and_then(|t| {
            t.iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(topic, n)| (*topic, *n))
        });
        let (topic, most) = majority.unwrap_or((None, 0));
        majority_total += most;
        clustered_total += listed;
        let count = topics.map_or(0, BTreeMap::len);
        if count > 1 {
            q.mixed_clusters += 1;
            if examples_mixed.len() < EXAMPLES
                && let Some(t) = topics
            {
                let parts: Vec<String> = t.iter().map(|(k, n)| format!("{n} \"{}\"", name(k))).collect();
                examples_mixed.push(format!(
                    "cluster \"{}\" mixes topics: {}",
                    c.label,
                    parts.join(", ")
                ));
            }
        }
        let labelled = label_topic(&c.label);
        if listed > 0 && topic.is_some() && labelled != topic {
            q.mislabelled += 1;
            if examples_labels.len() < EXAMPLES {
                examples_labels.push(format!(
                    "cluster labelled \"{}\" (a question of \"{}\") holds {most} of its {listed} issues from \"{}\"",
                    c.label,
                    name(&labelled),
                    name(&topic)
                ));
            }
        }
        let same_label = label_counts.get(c.label.as_str()).copied().unwrap_or(0);
        if same_label > 1 {
            q.duplicate_labels += 1;
            // One example per label.
            if examples_labels.len() < EXAMPLES && labels_shown.insert(c.label.as_str()) {
                examples_labels.push(format!(
                    "{same_label} clusters are labelled \"{}\" ({} issues in this one)",
                    c.label, c.issues
                ));
            }
        }
        summaries.push(ClusterSummary {
            label: c.label.clone(),
            label_topic: labelled.map_or_else(|| "-".to_string(), |t| topic_of(t).title.to_string()),
            issues: c.issues,
            conversations: c.conversations,
            listed,
            topic: if listed == 0 {
                "-".into()
            } else {
                name(&topic).to_string()
            },
            majority_share: share(most, listed).unwrap_or(0.0),
            topics: count,
            pulse: c.pulse,
        });
    }
    // Issues listed with a cluster the clusters list does not have count too.
    for (id, topics) in &per_cluster {
        if !clusters.iter().any(|c| c.id == *id) {
            majority_total += topics.values().copied().max().unwrap_or(0);
            clustered_total += topics.values().sum::<usize>();
        }
    }
    q.purity = share(majority_total, clustered_total);
    summaries.sort_by(|a, b| b.issues.cmp(&a.issues).then_with(|| a.label.cmp(&b.label)));
    summaries.truncate(LARGEST);
    q.largest = summaries;

    let labels: HashMap<&str, &str> = clusters
        .iter()
        .map(|c| (c.id.as_str(), c.label.as_str()))
        .collect();
    let mut examples_split = Vec::new();
    for (u, t) in UNDOCUMENTED.iter().enumerate() {
        let n = DOCUMENTED.len() + u;
        let spread = per_topic.get(&n);
        let clustered: usize = spread.map_or(0, |s| s.values().sum());
        let main = spread.and_then(|s| {
            s.iter()
                .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
                .map(|(id, k)| (id.to_string(), *k))
        });
        let clusters = spread.map_or(0, BTreeMap::len);
        if clusters > 1 && examples_split.len() < EXAMPLES {
            let labels: Vec<String> = spread
                .into_iter()
                .flatten()
                .filter(|(id, _)| main.as_ref().is_none_or(|(m, _)| m != *id))
                .take(2)
                .map(|(id, k)| {
                    let label = labels.get(id).copied().unwrap_or(id);
                    format!("{k} in \"{label}\"")
                })
                .collect();
            examples_split.push(format!(
                "topic \"{}\" split into {clusters} clusters: {} in its main one, {}",
                t.title,
                main.as_ref().map_or(0, |(_, k)| *k),
                labels.join(", ")
            ));
        }
        q.topics.push(TopicSpread {
            topic: t.title.to_string(),
            questions: questions_per_topic[n],
            issues: topic_issues[n],
            clusters,
            main_share: main
                .as_ref()
                .and_then(|(_, k)| share(*k, clustered))
                .unwrap_or(0.0),
            main_cluster: main.map(|(id, _)| id),
        });
    }
    let with_issues: Vec<&TopicSpread> = q.topics.iter().filter(|t| t.clusters > 0).collect();
    if !with_issues.is_empty() {
        q.clusters_per_topic_mean =
            Some(with_issues.iter().map(|t| t.clusters as f64).sum::<f64>() / with_issues.len() as f64);
        if let Some(worst) = with_issues.iter().max_by_key(|t| t.clusters) {
            q.clusters_per_topic_worst = worst.clusters;
            q.worst_topic = worst.topic.clone();
        }
    }
    q.examples = examples_missed
        .into_iter()
        .chain(examples_documented)
        .chain(examples_split)
        .chain(examples_mixed)
        .chain(examples_labels)
        .chain(examples_unmatched)
        .collect();
    q
}

/// What the phase measured.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ConversationsResult {
    /// The organization made for the phase and its docs space.
    pub org: String,
    pub space: String,
    pub pages: usize,
    pub markdown_bytes: usize,
    pub setup_seconds: f64,
    /// Conversations generated (and of them, those asking two questions), and ingested (204).
    pub conversations: usize,
    pub two_questions: usize,
    pub ingested: usize,
    /// The POSTs at [`INGEST_CONNECTIONS`] connections, from T0 to the last answer.
    pub ingest: Option<FamilyResult>,
    pub ingest_seconds: f64,
    /// From T0 to the first answer showing nothing left to analyse, and to done (T1).
    pub analysed_ms: Option<f64>,
    pub all_ms: Option<f64>,
    pub polls: usize,
    /// Not done after [`GIVE_UP`].
    pub timed_out: bool,
    /// The last progress read: at done, or when giving up.
    pub last: Option<Progress>,
    /// The issues and clusters read back after done, judged.
    pub quality: Option<Quality>,
    /// The one more conversation: its topic, its question, from its POST to done with it
    /// processed, the issues it made and the cluster of the first.
    pub one_topic: String,
    pub one_question: String,
    pub one_ms: Option<f64>,
    pub one_polls: usize,
    pub one_issues: usize,
    pub one_cluster: Option<String>,
    /// Whether that cluster is the one holding most of its topic's issues before it came.
    pub one_joined_topic: Option<bool>,
    /// The server has no conversation routes: nothing measured.
    pub endpoint_missing: bool,
    /// Why the phase stopped early.
    pub failure: Option<String>,
    /// Peak resident set of the server during the phase, MB (set by `run`).
    pub peak_rss_mb: f64,
}

impl ConversationsResult {
    /// Conversations ingested per second.
    pub fn ingest_rate(&self) -> f64 {
        if self.ingest_seconds > 0.0 {
            self.ingested as f64 / self.ingest_seconds
        } else {
            0.0
        }
    }

    /// Every conversation ingested, analysed and clustered within [`ALL_BUDGET_MS`].
    pub fn all_within_budget(&self) -> bool {
        self.conversations > 0
            && self.ingested == self.conversations
            && !self.timed_out
            && self.all_ms.is_some_and(|t| t <= ALL_BUDGET_MS)
    }

    pub fn one_within_budget(&self) -> bool {
        self.one_ms.is_some_and(|t| t <= ONE_BUDGET_MS)
    }
}

/// Runs the phase against the server at `addr` with the dataset's administrator; errors of the
/// phase itself are in `failure`.
pub async fn run(addr: SocketAddr, data: &Dataset) -> ConversationsResult {
    let mut out = ConversationsResult::default();
    if let Err(e) = steps(addr, data, &mut out).await {
        eprintln!("conversations: {e}");
        out.failure = Some(e);
    }
    out
}

async fn steps(addr: SocketAddr, data: &Dataset, out: &mut ConversationsResult) -> Result<(), String> {
    let token = data.admin_token.as_str();
    let mut conn = Conn::new(addr)?;

    // 1. The organization and its docs.
    let started = Instant::now();
    let org = call(
        &mut conn,
        "POST",
        "/v1/orgs",
        token,
        Some(&json!({"title": "Bench support"})),
    )
    .await?;
    out.org = id(&org, "organization")?;
    let org = out.org.clone();
    let probe_path = format!("/v1/orgs/{org}/conversations-clusters?limit=1");
    let probe = conn.get(&probe_path, token).await?;
    if probe.no_route() {
        out.endpoint_missing = true;
        return Err("the server has no conversation routes".into());
    }
    if !probe.ok() {
        return Err(format!("GET {probe_path}: {}", probe.describe()));
    }
    write_docs(&mut conn, token, out).await?;
    out.setup_seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "conversations: organization {org}, space {} of {} pages ({:.1} KB of markdown), merged, in {:.1} s",
        out.space,
        out.pages,
        out.markdown_bytes as f64 / 1e3,
        out.setup_seconds
    );

    // 2. The data set.
    let generated = generate(conversations_for(&data.scale), SEED);
    out.conversations = generated.len();
    out.two_questions = generated.iter().filter(|g| g.questions.len() > 1).count();
    let now = time::OffsetDateTime::now_utc();
    let bodies = generated
        .iter()
        .map(|g| g.body(now))
        .collect::<Result<Vec<_>, _>>()?;

    // 3. Ingest.
    eprintln!(
        "conversations: ingesting {} conversations at {INGEST_CONNECTIONS} connections",
        bodies.len()
    );
    let (t0, ingest) = ingest(addr, token, &org, bodies).await?;
    out.ingest_seconds = ingest.seconds;
    out.ingested = usize::try_from(ingest.requests).unwrap_or(usize::MAX);
    eprintln!(
        "conversations: {} ingested in {:.1} s ({:.0}/s), {} errors",
        out.ingested,
        out.ingest_seconds,
        out.ingest_rate(),
        ingest.errors
    );
    print_one(&ingest);
    out.ingest = Some(ingest);

    // 4. Until done.
    let last = wait_all(&mut conn, token, &org, t0, out).await?;
    out.last = Some(last.clone());
    if out.timed_out {
        return Err(format!(
            "not done {} s after the first POST: {}",
            GIVE_UP.as_secs(),
            last.describe()
        ));
    }
    eprintln!(
        "conversations: done {:.1} s after the first POST (all analysed after {:.1} s): {}",
        out.all_ms.unwrap_or(0.0) / 1000.0,
        out.analysed_ms.unwrap_or(0.0) / 1000.0,
        last.describe()
    );
    let issues = read_issues(&mut conn, token, &org, None).await?;
    let clusters = read_clusters(&mut conn, token, &org).await?;
    let quality = judge(&generated, &issues, &clusters);
    let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0));
    eprintln!(
        "conversations: {} issues in {} clusters; answered recall {}, precision {}, clusters per \
         undocumented topic {} (worst {}), purity {}",
        quality.issues,
        quality.clusters,
        pct(quality.answered_recall()),
        pct(quality.precision()),
        quality
            .clusters_per_topic_mean
            .map_or_else(|| "-".into(), |m| format!("{m:.2}")),
        quality.clusters_per_topic_worst,
        pct(quality.purity)
    );
    let topics = quality.topics.clone();
    out.quality = Some(quality);

    // 5. One more.
    let one = one_more();
    out.one_topic = topic_of(one.questions[0].topic).title.to_string();
    out.one_question = one.questions[0].text.clone();
    let body = one.body(time::OffsetDateTime::now_utc())?;
    let path = format!("/v1/orgs/{org}/conversations");
    let started = Instant::now();
    let a = conn.post(&path, token, &body).await?;
    if !a.ok() {
        return Err(format!("POST {path} ({ONE_ID}): {}", a.describe()));
    }
    let one_path = format!("/v1/orgs/{org}/conversations/{ONE_ID}");
    let last = loop {
        let tick = Instant::now();
        out.one_polls += 1;
        let a = conn.get(&one_path, token).await?;
        if !a.ok() {
            return Err(format!("GET {one_path}: {}", a.describe()));
        }
        if a.json()["conversation"]["processedAt"].is_string() {
            let p = progress(&mut conn, token, &org, true).await?;
            if p.done() {
                out.one_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
                break p;
            }
        }
        if started.elapsed() > ONE_GIVE_UP {
            let p = progress(&mut conn, token, &org, true).await?;
            out.last = Some(p.clone());
            return Err(format!(
                "{ONE_ID} not processed and clustered {} s after its POST: {}",
                ONE_GIVE_UP.as_secs(),
                p.describe()
            ));
        }
        tokio::time::sleep(ONE_POLL.saturating_sub(tick.elapsed())).await;
    };
    out.last = Some(last);
    let made = read_issues(&mut conn, token, &org, Some(ONE_ID)).await?;
    out.one_issues = made.len();
    out.one_cluster = made.first().and_then(|i| i.cluster.clone());
    let main = topics
        .iter()
        .find(|t| t.topic == out.one_topic)
        .and_then(|t| t.main_cluster.clone());
    out.one_joined_topic = match (&out.one_cluster, main) {
        (Some(c), Some(m)) => Some(*c == m),
        _ => None,
    };
    eprintln!(
        "conversations: one more ({:?}, topic \"{}\"): done {:.0} ms after its POST; {} issue(s), {}",
        out.one_question,
        out.one_topic,
        out.one_ms.unwrap_or(0.0),
        out.one_issues,
        match out.one_joined_topic {
            Some(true) => "joined its topic's cluster",
            Some(false) => "NOT in its topic's cluster",
            None => "no cluster to compare",
        }
    );
    Ok(())
}

/// The docs space: one page per documented topic, in one change request, merged.
async fn write_docs(conn: &mut Conn, token: &str, out: &mut ConversationsResult) -> Result<(), String> {
    let space = call(
        conn,
        "POST",
        &format!("/v1/orgs/{}/spaces", out.org),
        token,
        Some(&json!({"title": "Help center", "empty": true})),
    )
    .await?;
    out.space = id(&space, "space")?;
    let space = out.space.clone();
    let crs = format!("/v1/spaces/{space}/change-requests");
    let cr = call(
        conn,
        "POST",
        &crs,
        token,
        Some(&json!({"subject": "Help center pages"})),
    )
    .await?;
    let cr = id(&cr, "change request")?;
    let mut rng = Rng::new(SEED);
    let changes: Vec<Value> = DOCUMENTED
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let md = page_markdown(&mut rng, t);
            out.markdown_bytes += md.len();
            json!({"operation": "insert_page", "ref": format!("p{i}"), "title": t.title,
                   "document": {"markdown": md}})
        })
        .collect();
    call(
        conn,
        "POST",
        &format!("{crs}/{cr}/content"),
        token,
        Some(&json!({ "changes": changes })),
    )
    .await?;
    out.pages = changes.len();
    let merged = call(
        conn,
        "POST",
        &format!("{crs}/{cr}/merge"),
        token,
        Some(&json!({})),
    )
    .await?;
    if merged["result"] != "merge" {
        return Err(format!("the docs' change request did not merge: {merged}"));
    }
    Ok(())
}

/// Ingests every body at [`INGEST_CONNECTIONS`] connections: T0 (just before the first POST)
/// and the POSTs' figures (204s only; `seconds` from T0 to the last answer).
async fn ingest(
    addr: SocketAddr,
    token: &str,
    org: &str,
    bodies: Vec<Value>,
) -> Result<(Instant, FamilyResult), String> {
    let total = bodies.len();
    let bodies = Arc::new(bodies);
    let next = Arc::new(AtomicUsize::new(0));
    let path = Arc::new(format!("/v1/orgs/{org}/conversations"));
    let token = Arc::new(token.to_string());
    let t0 = Instant::now();
    let handles: Vec<_> = (0..INGEST_CONNECTIONS)
        .map(|_| {
            let (bodies, next, path, token) = (bodies.clone(), next.clone(), path.clone(), token.clone());
            tokio::spawn(async move {
                let mut conn = Conn::new(addr)?;
                let mut hist = new_histogram()?;
                let mut errors: BTreeMap<String, u64> = BTreeMap::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(body) = bodies.get(i) else { break };
                    let sent = Instant::now();
                    match conn.post(&path, &token, body).await {
                        Ok(a) if a.status == 204 => hist.saturating_record(us(sent.elapsed())),
                        Ok(a) => record(&mut errors, a.describe()),
                        Err(e) => record(&mut errors, e),
                    }
                }
                Ok::<_, String>((hist, errors, Instant::now()))
            })
        })
        .collect();
    let mut hist = new_histogram()?;
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    let mut end = t0;
    for h in handles {
        let (h, e, last) = h
            .await
            .map_err(|e| format!("an ingest connection failed: {e}"))??;
        hist.add(&h).map_err(|e| e.to_string())?;
        for (k, v) in e {
            *errors.entry(k).or_default() += v;
        }
        end = end.max(last);
    }
    let result = FamilyResult::measured(
        INGEST,
        format!("POST /v1/orgs/{{org}}/conversations, {total} conversations (204 each)"),
        INGEST_CONNECTIONS,
        &hist,
        errors,
        end.duration_since(t0).as_secs_f64().max(1e-9),
    );
    Ok((t0, result))
}

/// Polls every [`POLL`] until done or [`GIVE_UP`] after `t0`; the last progress read.
async fn wait_all(
    conn: &mut Conn,
    token: &str,
    org: &str,
    t0: Instant,
    out: &mut ConversationsResult,
) -> Result<Progress, String> {
    let mut printed = Instant::now();
    loop {
        let tick = Instant::now();
        out.polls += 1;
        let p = progress(conn, token, org, false).await?;
        let since = t0.elapsed().as_secs_f64() * 1000.0;
        if p.unprocessed == 0 && out.analysed_ms.is_none() {
            out.analysed_ms = Some(since);
        }
        if p.done() {
            out.all_ms = Some(since);
            return Ok(p);
        }
        if t0.elapsed() > GIVE_UP {
            out.timed_out = true;
            // How far it got, every figure read.
            return progress(conn, token, org, true).await;
        }
        if printed.elapsed() >= REPORT_EVERY {
            printed = Instant::now();
            eprintln!(
                "conversations: {:.0} s after the first POST: {}",
                since / 1000.0,
                p.describe()
            );
        }
        tokio::time::sleep(POLL.saturating_sub(tick.elapsed())).await;
    }
}

/// What the server shows now. While conversations are left to analyse only their count is
/// read, unless `full`.
async fn progress(conn: &mut Conn, token: &str, org: &str, full: bool) -> Result<Progress, String> {
    let base = format!("/v1/orgs/{org}");
    let unprocessed = count(
        conn,
        token,
        &format!("{base}/conversations?processed=false&limit=1"),
    )
    .await?;
    let mut p = Progress {
        unprocessed,
        ..Progress::default()
    };
    if unprocessed > 0 && !full {
        return Ok(p);
    }
    p.issues = Some(count(conn, token, &format!("{base}/conversations-issues?limit=1")).await?);
    let clusters = read_all(
        conn,
        token,
        &format!("{base}/conversations-clusters?limit={LIST_LIMIT}"),
    )
    .await?;
    p.clusters = Some(clusters.len() as u64);
    p.clustered = Some(
        clusters
            .iter()
            .map(|c| c["stats"]["issues"].as_u64().unwrap_or(0))
            .sum(),
    );
    Ok(p)
}

/// The `count` of a list.
async fn count(conn: &mut Conn, token: &str, path: &str) -> Result<u64, String> {
    let v = call(conn, "GET", path, token, None).await?;
    v["count"]
        .as_u64()
        .ok_or_else(|| format!("GET {path}: no count in {v}"))
}

/// Every item of a list, following `next.page`.
async fn read_all(conn: &mut Conn, token: &str, base: &str) -> Result<Vec<Value>, String> {
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("{base}&page={}", crate::load::encode(c)),
            None => base.to_string(),
        };
        let mut v = call(conn, "GET", &path, token, None).await?;
        if let Some(page) = v["items"].as_array_mut() {
            items.append(page);
        }
        match v["next"]["page"].as_str() {
            // A cursor that does not move would loop for ever.
            Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_string()),
            _ => break,
        }
    }
    Ok(items)
}

/// The organization's issues (of one conversation, when given).
async fn read_issues(
    conn: &mut Conn,
    token: &str,
    org: &str,
    conversation: Option<&str>,
) -> Result<Vec<IssueRow>, String> {
    let mut base = format!("/v1/orgs/{org}/conversations-issues?limit={LIST_LIMIT}");
    if let Some(c) = conversation {
        base += &format!("&conversation={}", crate::load::encode(c));
    }
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    Ok(read_all(conn, token, &base)
        .await?
        .iter()
        .map(|item| {
            let i = &item["issue"];
            IssueRow {
                id: text(&i["id"]),
                title: text(&i["title"]),
                conversation: text(&i["conversation"]),
                cluster: i["cluster"].as_str().map(str::to_string),
                coverage: i["coverage"].as_i64().unwrap_or(0),
            }
        })
        .collect())
}

async fn read_clusters(conn: &mut Conn, token: &str, org: &str) -> Result<Vec<ClusterRow>, String> {
    let base = format!("/v1/orgs/{org}/conversations-clusters?limit={LIST_LIMIT}");
    Ok(read_all(conn, token, &base)
        .await?
        .iter()
        .map(|c| ClusterRow {
            id: c["id"].as_str().unwrap_or_default().to_string(),
            label: c["label"].as_str().unwrap_or_default().to_string(),
            issues: c["stats"]["issues"].as_u64().unwrap_or(0),
            conversations: c["stats"]["conversations"].as_u64().unwrap_or(0),
            pulse: c["weeklyPulse"]
                .as_array()
                .map_or(0, |w| w.iter().filter_map(Value::as_u64).sum()),
        })
        .collect())
}

/// A request that must answer 2xx; its JSON.
async fn call(
    conn: &mut Conn,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> Result<Value, String> {
    let m = http::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
    let a = conn
        .send(m, path, token, body)
        .await
        .map_err(|e| format!("{method} {path}: {e}"))?;
    if !a.ok() {
        return Err(format!("{method} {path}: {}", a.describe()));
    }
    Ok(a.json())
}

fn id(v: &Value, what: &str) -> Result<String, String> {
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {v}"))
}

fn record(errors: &mut BTreeMap<String, u64>, e: String) {
    // Few distinct messages are kept; the rest are counted together.
    let key = if errors.len() < 20 || errors.contains_key(&e) {
        e
    } else {
        "other errors".to_string()
    };
    *errors.entry(key).or_default() += 1;
}

fn us(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

fn new_histogram() -> Result<Histogram<u64>, String> {
    // As the load driver's: microseconds, 1 µs to 10 minutes, 3 significant digits.
    Histogram::new_with_bounds(1, 600_000_000, 3).map_err(|e| e.to_string())
}

fn print_one(r: &FamilyResult) {
    eprint!("{}", crate::load::table(std::slice::from_ref(r)));
}

/// A plain-text summary for the progress output.
pub fn table(r: &ConversationsResult) -> String {
    let mut s = String::new();
    if let Some(i) = &r.ingest {
        s += &crate::load::table(std::slice::from_ref(i));
    }
    let secs = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{:.1} s", v / 1000.0));
    s += &format!(
        "{} of {} conversations ingested in {:.1} s ({:.0}/s); all analysed after {}, done (T_all) after {}; \
         one more: {}\n",
        r.ingested,
        r.conversations,
        r.ingest_seconds,
        r.ingest_rate(),
        secs(r.analysed_ms),
        secs(r.all_ms),
        r.one_ms.map_or_else(|| "-".into(), |v| format!("{v:.0} ms"))
    );
    if let Some(q) = &r.quality {
        let pct = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0));
        s += &format!(
            "{} issues, {} clusters; answered recall {}, precision {}, undocumented questions with an issue \
             {}; clusters per undocumented topic: mean {}, worst {}; purity {}\n",
            q.issues,
            q.clusters,
            pct(q.answered_recall()),
            pct(q.precision()),
            pct(q.detected()),
            q.clusters_per_topic_mean
                .map_or_else(|| "-".into(), |m| format!("{m:.2}")),
            q.clusters_per_topic_worst,
            pct(q.purity)
        );
        for e in &q.examples {
            s += &format!("  {e}\n");
        }
    }
    if let Some(f) = &r.failure {
        s += &format!("FAILED: {f}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first characters of a word every stem of it starts with: quire's stems keep at
    /// least four (a shorter word is its own stem).
    fn stem_prefix(word: &str) -> String {
        word.chars().take(4).collect()
    }

    fn words(text: &str) -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    }

    #[test]
    fn undocumented_keywords_are_in_no_page() {
        let mut rng = Rng::new(SEED);
        let mut page_words: HashSet<String> = HashSet::new();
        for t in &DOCUMENTED {
            page_words.extend(words(&page_markdown(&mut rng, t)));
            page_words.extend(words(t.title));
        }
        for sentence in FILLER {
            page_words.extend(words(sentence));
        }
        for t in &UNDOCUMENTED {
            for k in t.keywords() {
                let prefix = stem_prefix(k);
                let clash: Vec<&String> = page_words.iter().filter(|w| w.starts_with(&prefix)).collect();
                assert!(clash.is_empty(), "{k} ({}) starts like {clash:?}", t.title);
            }
        }
    }

    #[test]
    fn topics_share_no_keyword() {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for n in 0..TOPICS {
            let t = topic_of(n);
            for k in t.keywords() {
                // Documented keywords may share beginnings (their pages answer them); nothing
                // starts like an undocumented one.
                let key = if is_documented(n) {
                    k.to_string()
                } else {
                    stem_prefix(k)
                };
                if let Some(other) = seen.insert(key.clone(), t.title) {
                    panic!("{k} of {} clashes with {other} ({key})", t.title);
                }
            }
        }
        for t in &UNDOCUMENTED {
            for k in t.keywords() {
                for d in &DOCUMENTED {
                    for dk in d.keywords() {
                        assert!(!dk.starts_with(&stem_prefix(k)), "{k} vs {dk}");
                    }
                }
            }
        }
    }

    #[test]
    fn pages_hold_every_keyword_in_every_part() {
        let mut rng = Rng::new(1);
        for t in &DOCUMENTED {
            let md = page_markdown(&mut rng, t);
            for part in md.split("\n## ") {
                let w = words(part);
                for k in t.keywords() {
                    assert!(w.iter().any(|x| x == k), "{k} missing from a part of {}", t.title);
                }
            }
        }
    }

    #[test]
    fn questions_use_the_topics_keywords() {
        let mut rng = Rng::new(3);
        let t = &UNDOCUMENTED[0];
        let mut phrasings = HashSet::new();
        for _ in 0..200 {
            let q = question(&mut rng, t);
            let w = words(&q);
            let keywords = w.iter().filter(|x| t.keywords().contains(&x.as_str())).count();
            assert!((2..=3).contains(&keywords), "{q}");
            assert!(q.ends_with('?') || q.contains("not working"), "{q}");
            phrasings.insert(w[0].clone());
        }
        assert!(phrasings.len() >= 4, "{phrasings:?}");
    }

    #[test]
    fn the_data_set_is_deterministic_and_shaped_as_asked() {
        let a = generate(2000, SEED);
        assert_eq!(a, generate(2000, SEED));
        assert_eq!(a[0].id, "bench-1");
        assert_eq!(a[1999].id, "bench-2000");
        let two = a.iter().filter(|g| g.questions.len() == 2).count();
        assert!((150..250).contains(&two), "{two}");
        for g in a.iter().filter(|g| g.questions.len() == 2) {
            assert_ne!(g.questions[0].topic, g.questions[1].topic);
        }
        let questions: Vec<&Asked> = a.iter().flat_map(|g| &g.questions).collect();
        let documented = questions.iter().filter(|q| is_documented(q.topic)).count();
        let share = documented as f64 / questions.len() as f64;
        assert!((0.55..0.65).contains(&share), "{share}");
        assert!(a.iter().all(|g| g.age_s < WEEKS * 7 * 24 * 3600));
        let body = a[0].body(time::OffsetDateTime::now_utc()).unwrap();
        assert_eq!(body["id"], "bench-1");
        assert_eq!(body["parts"][0]["role"], "user");
        assert_eq!(body["parts"][1]["role"], "agent");
        assert!(
            body["parts"][0]["body"]
                .as_str()
                .unwrap()
                .contains(&a[0].questions[0].text)
        );
        assert!(body["metadata"]["createdAt"].as_str().unwrap().ends_with('Z'));
        let one = one_more();
        assert_eq!(one.id, ONE_ID);
        assert!(!is_documented(one.questions[0].topic));
        assert_eq!(conversations_for("small"), CONVERSATIONS_SMALL);
        assert_eq!(conversations_for("full"), CONVERSATIONS_FULL);
    }

    fn asked(text: &str, topic: usize) -> Asked {
        Asked {
            text: text.into(),
            topic,
        }
    }

    fn conv(id: &str, questions: Vec<Asked>) -> Generated {
        Generated {
            id: id.into(),
            subject: String::new(),
            age_s: 0,
            questions,
            greeting: "Hi!",
            sign_off: "",
            reply: "",
            plan: "pro",
            channel: "chat",
        }
    }

    fn issue(conversation: &str, title: &str, cluster: Option<&str>) -> IssueRow {
        IssueRow {
            id: format!("i-{conversation}-{title}"),
            title: title.into(),
            conversation: conversation.into(),
            cluster: cluster.map(str::to_string),
            coverage: 0,
        }
    }

    fn cluster(id: &str, label: &str, issues: u64) -> ClusterRow {
        ClusterRow {
            id: id.into(),
            label: label.into(),
            issues,
            conversations: issues,
            pulse: 0,
        }
    }

    #[test]
    fn judges_issues_and_clusters_against_the_topics() {
        let (d0, d1) = (0, 1);
        let (u0, u1) = (DOCUMENTED.len(), DOCUMENTED.len() + 1);
        let generated = vec![
            conv("bench-1", vec![asked("How do I export invoices?", d0)]),
            // A documented question the server did not answer.
            conv("bench-2", vec![asked("How do I reset password?", d1)]),
            conv("bench-3", vec![asked("How do I migrate jira?", u0)]),
            conv("bench-4", vec![asked("Can I migrate tickets into sprints?", u0)]),
            // Split from its topic's cluster.
            conv("bench-5", vec![asked("Jira is not working with sprints.", u0)]),
            // Two questions; the undocumented one answered (missed).
            conv(
                "bench-6",
                vec![
                    asked("How do I export ledger?", d0),
                    asked("How do I schedule digest?", u1),
                ],
            ),
            conv(
                "bench-7",
                vec![asked("Is there a way to schedule the newsletter?", u1)],
            ),
        ];
        let issues = vec![
            issue("bench-2", "How do I reset password?", Some("c1")),
            issue("bench-3", "How do I migrate jira?", Some("c1")),
            issue("bench-4", "Can I migrate tickets into sprints?", Some("c1")),
            issue("bench-5", "Jira is not working with sprints.", Some("c2")),
            issue("bench-7", "Is there a way to schedule the…", Some("c3")),
            issue("bench-9", "Where is it?", None),
        ];
        let clusters = vec![
            cluster("c1", "How do I migrate jira?", 3),
            // Labelled with a question of another topic (and one that is in no cluster).
            cluster("c2", "How do I reset password?", 1),
            // The same label as c1, and of another topic than its issue.
            cluster("c3", "How do I migrate jira?", 2),
        ];
        let q = judge(&generated, &issues, &clusters);
        assert_eq!(q.conversations, 7);
        assert_eq!((q.documented_conversations, q.documented_answered), (2, 1));
        assert_eq!((q.documented_questions, q.documented_questions_answered), (3, 2));
        assert_eq!((q.undocumented_questions, q.undocumented_with_issue), (5, 4));
        assert_eq!(
            (
                q.issues,
                q.issues_undocumented,
                q.issues_documented,
                q.issues_unmatched
            ),
            (6, 4, 1, 1)
        );
        assert_eq!(q.answered_recall(), Some(0.5));
        assert!((q.precision().unwrap() - 4.0 / 6.0).abs() < 1e-9);
        assert_eq!((q.unclustered, q.clusters), (1, 3));
        assert_eq!(q.stats_mismatches, 1, "c3 says 2, lists 1");
        assert_eq!(q.topics[0].topic, UNDOCUMENTED[0].title);
        assert_eq!(
            (q.topics[0].questions, q.topics[0].issues, q.topics[0].clusters),
            (3, 3, 2)
        );
        assert_eq!(q.topics[0].main_cluster.as_deref(), Some("c1"));
        assert!((q.topics[0].main_share - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!((q.topics[1].issues, q.topics[1].clusters), (1, 1));
        assert!(
            (q.clusters_per_topic_mean.unwrap() - 1.5).abs() < 1e-9,
            "topics without issues left out"
        );
        assert_eq!(q.clusters_per_topic_worst, 2);
        assert_eq!(q.worst_topic, UNDOCUMENTED[0].title);
        // c1: 2 of 3 from its majority; c2 and c3 pure: 4 of 5.
        assert!((q.purity.unwrap() - 0.8).abs() < 1e-9, "{:?}", q.purity);
        assert_eq!(q.mixed_clusters, 1);
        assert_eq!(q.largest[0].label, "How do I migrate jira?");
        assert_eq!(q.largest[0].topic, UNDOCUMENTED[0].title);
        assert_eq!(q.largest[0].label_topic, UNDOCUMENTED[0].title);
        assert_eq!((q.mislabelled, q.duplicate_labels), (2, 2));
        let all = q.examples.join("\n");
        assert!(
            all.contains("answered (no issue): \"How do I schedule digest?\""),
            "{all}"
        );
        assert!(
            all.contains("made an issue: \"How do I reset password?\""),
            "{all}"
        );
        assert!(all.contains("split into 2 clusters"), "{all}");
        assert!(all.contains("mixes topics"), "{all}");
        assert!(all.contains("matches no question asked"), "{all}");
        assert!(
            all.contains("cluster labelled \"How do I reset password?\" (a question of \"Resetting passwords\") holds 1 of its 1 issues from \"Jira migration\""),
            "{all}"
        );
        assert!(
            all.contains("2 clusters are labelled \"How do I migrate jira?\""),
            "{all}"
        );
        // No issue listed with its cluster: nothing to judge the clusters by.
        let bare: Vec<IssueRow> = issues
            .iter()
            .map(|i| IssueRow {
                cluster: None,
                ..i.clone()
            })
            .collect();
        let q = judge(&generated, &bare, &clusters);
        assert_eq!((q.purity, q.clusters_per_topic_mean), (None, None));
        assert_eq!(q.unclustered, 6);
        assert_eq!(q.stats_mismatches, 3);
        assert_eq!(q.mislabelled, 0, "no majority to compare with");
        assert_eq!(q.duplicate_labels, 2);
    }

    #[test]
    fn budgets_need_everything_ingested_and_done_in_time() {
        let mut r = ConversationsResult {
            conversations: 100,
            ingested: 100,
            ingest_seconds: 2.0,
            all_ms: Some(30_000.0),
            one_ms: Some(400.0),
            ..ConversationsResult::default()
        };
        assert!(r.all_within_budget() && r.one_within_budget());
        assert!((r.ingest_rate() - 50.0).abs() < 1e-9);
        r.ingested = 99;
        assert!(!r.all_within_budget());
        r.ingested = 100;
        r.all_ms = Some(61_000.0);
        assert!(!r.all_within_budget());
        r.one_ms = Some(1_200.0);
        assert!(!r.one_within_budget());
        r.one_ms = None;
        assert!(!r.one_within_budget());
    }

    #[test]
    fn progress_is_done_when_every_issue_is_clustered() {
        let mut p = Progress {
            unprocessed: 3,
            ..Progress::default()
        };
        assert!(!p.done());
        p.unprocessed = 0;
        assert!(!p.done(), "issues not read");
        p.issues = Some(10);
        p.clustered = Some(9);
        assert!(!p.done());
        p.clustered = Some(10);
        assert!(p.done());
    }
}
