//! `quire-bench gen`: fills a running quire server through its public API and writes the ids
//! it made to a dataset file for the load driver.
//!
//! Members need users, which only an administrator makes: they are created with `quire admin
//! user create` and `quire admin token create` run as subprocesses on the server's storage,
//! then join the organizations through invite links.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::{StreamExt, TryStreamExt, stream};
use serde_json::{Value, json};

use crate::dataset::{Dataset, SearchWords, Summary};
use crate::text::{self, Rng};

/// How much to make.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// The dataset: 3 organizations, 300 spaces, a 10,000-page space, 2,000 change
    /// requests, 20,000 comments and replies, 50 members.
    Full,
    /// A tiny dataset for smoke tests.
    Small,
}

struct Plan {
    /// Spaces per organization; the big space is the first of the first organization.
    spaces_per_org: Vec<usize>,
    pages: usize,
    top_pages: usize,
    children_per_top: usize,
    page_bytes: usize,
    big_crs: usize,
    big_crs_merged: usize,
    other_crs: usize,
    other_crs_merged_percent: u64,
    big_comments: usize,
    big_replies: usize,
    other_comments: usize,
    other_replies: usize,
    resolved_percent: u64,
    /// Members, and how many of them join each organization (all join the first).
    members: usize,
    members_per_org: Vec<usize>,
    list_limit: usize,
}

impl Plan {
    fn of(scale: Scale) -> Plan {
        match scale {
            Scale::Full => Plan {
                spaces_per_org: vec![200, 60, 40],
                pages: 10_000,
                top_pages: 20,
                children_per_top: 20,
                page_bytes: 2048,
                big_crs: 400,
                big_crs_merged: 100,
                other_crs: 1600,
                other_crs_merged_percent: 50,
                big_comments: 12_000,
                big_replies: 6_000,
                other_comments: 1_500,
                other_replies: 500,
                resolved_percent: 10,
                members: 50,
                members_per_org: vec![50, 20, 10],
                list_limit: 100,
            },
            Scale::Small => Plan {
                spaces_per_org: vec![5],
                pages: 200,
                top_pages: 5,
                children_per_top: 3,
                page_bytes: 2048,
                big_crs: 10,
                big_crs_merged: 4,
                other_crs: 10,
                other_crs_merged_percent: 50,
                big_comments: 80,
                big_replies: 10,
                other_comments: 8,
                other_replies: 2,
                resolved_percent: 10,
                members: 5,
                members_per_org: vec![5],
                list_limit: 1,
            },
        }
    }
}

/// How to run `quire admin` on the server's storage, to make members.
#[derive(Clone, Debug)]
pub struct Admin {
    pub quire_bin: PathBuf,
    pub data_dir: Option<PathBuf>,
    pub database_url: Option<String>,
}

impl Admin {
    /// Runs `quire admin ARGS` (on a blocking thread) and returns what it printed.
    async fn run(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = std::process::Command::new(&self.quire_bin);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("QUIRE_") {
                cmd.env_remove(key);
            }
        }
        cmd.arg("admin");
        if let Some(dir) = &self.data_dir {
            cmd.arg("--data-dir").arg(dir);
        }
        if let Some(url) = &self.database_url {
            cmd.arg("--database-url").arg(url);
        }
        cmd.args(args);
        let bin = self.quire_bin.display().to_string();
        let joined = args.join(" ");
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| format!("cannot run {bin}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "quire admin {joined}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}

pub struct GenArgs {
    pub url: String,
    pub token: String,
    pub scale: Scale,
    pub admin: Option<Admin>,
    pub concurrency: usize,
}

/// A small JSON client over reqwest that retries transient failures.
#[derive(Clone)]
struct Api {
    client: reqwest::Client,
    base: String,
    retries: Arc<AtomicUsize>,
}

/// The answer of the router for a route that does not exist.
struct NoRoute;

impl Api {
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let mut attempt = 0;
        loop {
            let mut req = self
                .client
                .request(method.clone(), format!("{}{path}", self.base))
                .bearer_auth(token);
            if let Some(b) = body {
                req = req.json(b);
            }
            let result = async {
                let resp = req.send().await.map_err(|e| e.to_string())?;
                let status = resp.status().as_u16();
                let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
                let value = if bytes.is_empty() {
                    Value::Null
                } else {
                    serde_json::from_slice(&bytes)
                        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()))
                };
                Ok::<_, String>((status, value))
            }
            .await;
            let transient = match &result {
                Err(_) => true,
                Ok((status, _)) => *status == 503 || *status == 500 || *status == 429,
            };
            if transient && attempt < 4 {
                attempt += 1;
                self.retries.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
                continue;
            }
            return result.map_err(|e| format!("{method} {path}: {e}"));
        }
    }

    /// Calls and requires a 2xx answer; a missing route is told apart.
    async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<&Value>,
    ) -> Result<Result<Value, NoRoute>, String> {
        let (status, value) = self.call(method.clone(), path, token, body).await?;
        if (200..300).contains(&status) {
            return Ok(Ok(value));
        }
        let message = value["error"]["message"].as_str().unwrap_or_default();
        if (status == 404 || status == 405)
            && (message.starts_with("no route for") || message.contains("is not allowed on"))
        {
            return Ok(Err(NoRoute));
        }
        Err(format!("{method} {path}: {status} {value}"))
    }

    async fn post(&self, path: &str, token: &str, body: &Value) -> Result<Value, String> {
        match self.send(reqwest::Method::POST, path, token, Some(body)).await? {
            Ok(v) => Ok(v),
            Err(NoRoute) => Err(format!("POST {path}: the server has no such route")),
        }
    }

    async fn get(&self, path: &str, token: &str) -> Result<Value, String> {
        match self.send(reqwest::Method::GET, path, token, None).await? {
            Ok(v) => Ok(v),
            Err(NoRoute) => Err(format!("GET {path}: the server has no such route")),
        }
    }
}

fn id_of(v: &Value, what: &str) -> Result<String, String> {
    v["id"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: no id in {v}"))
}

/// Runs `f` on every item with at most `n` at once; results in item order.
async fn each<T, R, F, Fut>(items: Vec<T>, n: usize, f: F) -> Result<Vec<R>, String>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R, String>>,
{
    stream::iter(items.into_iter().map(f))
        .buffered(n.max(1))
        .try_collect()
        .await
}

/// One page of the big space's layout: its parent (an index into the layout).
struct Slot {
    parent: Option<usize>,
    /// 1 for top-level pages.
    #[cfg_attr(not(test), allow(dead_code))]
    depth: usize,
}

/// The big space's tree in depth-first order (parents before children): `top` pages, each
/// with `children` pages, and the rest spread evenly as their children: three levels.
fn layout(total: usize, top: usize, children: usize) -> Vec<Slot> {
    let mids = top * children;
    let leaves = total.saturating_sub(top + mids);
    let mut out = Vec::with_capacity(total);
    let mut mid_index = 0;
    for _ in 0..top {
        let t = out.len();
        out.push(Slot {
            parent: None,
            depth: 1,
        });
        for _ in 0..children {
            let m = out.len();
            out.push(Slot {
                parent: Some(t),
                depth: 2,
            });
            let n = leaves / mids.max(1) + usize::from(mid_index < leaves % mids.max(1));
            for _ in 0..n {
                out.push(Slot {
                    parent: Some(m),
                    depth: 3,
                });
            }
            mid_index += 1;
        }
    }
    out.truncate(total);
    out
}

struct Clock {
    start: Instant,
    step: Instant,
    steps: Vec<(String, f64)>,
}

impl Clock {
    fn lap(&mut self, name: &str, what: String) {
        let secs = self.step.elapsed().as_secs_f64();
        eprintln!("gen: {name}: {what} in {secs:.1} s");
        self.steps.push((name.to_string(), secs));
        self.step = Instant::now();
    }
}

pub async fn generate(args: GenArgs) -> Result<Dataset, String> {
    let plan = Plan::of(args.scale);
    let api = Api {
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(300))
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|e| e.to_string())?,
        base: args.url.trim_end_matches('/').to_string(),
        retries: Arc::new(AtomicUsize::new(0)),
    };
    let token = args.token.clone();
    let n = args.concurrency;
    let mut summary = Summary::default();
    let mut clock = Clock {
        start: Instant::now(),
        step: Instant::now(),
        steps: Vec::new(),
    };
    api.get("/v1/user", &token)
        .await
        .map_err(|e| format!("the token does not work: {e}"))?;

    // Organizations.
    let mut orgs = Vec::new();
    for i in 0..plan.spaces_per_org.len() {
        let org = api
            .post(
                "/v1/orgs",
                &token,
                &json!({"title": format!("Bench org {}", i + 1)}),
            )
            .await?;
        orgs.push(id_of(&org, "organization")?);
    }
    summary.orgs = orgs.len();
    clock.lap("orgs", format!("{} organizations", orgs.len()));

    // Members: users and tokens by `quire admin`, then invite links.
    let member_tokens = match &args.admin {
        Some(admin) => make_members(&api, &token, admin, &orgs, &plan, n).await?,
        None => {
            summary
                .skipped
                .push("members: no access to `quire admin` (pass --data-dir or --database-url)".into());
            Vec::new()
        }
    };
    summary.members = member_tokens.len();
    clock.lap("members", format!("{} members", member_tokens.len()));

    // Spaces: the big one first (empty), then the rest with their first page.
    let big = api
        .post(
            &format!("/v1/orgs/{}/spaces", orgs[0]),
            &token,
            &json!({"title": "Big handbook", "empty": true}),
        )
        .await?;
    let big_space = id_of(&big, "space")?;
    let mut wanted = Vec::new();
    for (o, count) in plan.spaces_per_org.iter().enumerate() {
        let skip_big = usize::from(o == 0);
        for i in skip_big..*count {
            wanted.push((orgs[o].clone(), format!("Space {} of org {}", i + 1, o + 1)));
        }
    }
    let others = each(wanted, n, |(org, title)| {
        let (api, token) = (api.clone(), token.clone());
        async move {
            let s = api
                .post(
                    &format!("/v1/orgs/{org}/spaces"),
                    &token,
                    &json!({"title": title}),
                )
                .await?;
            id_of(&s, "space")
        }
    })
    .await?;
    let mut spaces = vec![big_space.clone()];
    spaces.extend(others.iter().cloned());
    summary.spaces = spaces.len();
    clock.lap("spaces", format!("{} spaces", spaces.len()));

    // The big space's pages.
    let (pages, markdown_bytes, links) = import_pages(&api, &token, &big_space, &plan).await?;
    summary.pages_big_space = pages.len();
    summary.markdown_bytes = markdown_bytes;
    summary.links = links;
    clock.lap(
        "pages",
        format!(
            "{} pages ({:.1} MB of markdown, {links} links) in one change request, merged",
            pages.len(),
            markdown_bytes as f64 / 1e6
        ),
    );

    // Change requests.
    let (made, merged) = change_requests(&api, &token, &big_space, &pages, &others, &plan, n).await?;
    summary.change_requests = made;
    summary.change_requests_merged = merged;
    summary.change_requests_open = made - merged;
    clock.lap(
        "change requests",
        format!("{made} change requests, {merged} merged"),
    );

    // Comments and replies.
    let writers = if member_tokens.is_empty() {
        vec![token.clone()]
    } else {
        member_tokens.clone()
    };
    let comments = comments(&api, &token, &writers, &big_space, &pages, &others, &plan, n).await?;
    let mut commented_pages = Vec::new();
    match &comments {
        Some(c) => {
            summary.comments = c.comments;
            summary.replies = c.replies;
            summary.comments_resolved = c.resolved;
            commented_pages = c.pages.clone();
            clock.lap(
                "comments",
                format!(
                    "{} comments, {} replies, {} resolved",
                    c.comments, c.replies, c.resolved
                ),
            );
        }
        None => {
            summary
                .skipped
                .push("comments: the server has no comment routes".into());
            clock.lap("comments", "skipped: the server has no comment routes".into());
        }
    }
    let retries = api.retries.load(Ordering::Relaxed);
    if retries > 0 {
        summary.skipped.push(format!(
            "{retries} requests retried after 5xx or transport errors"
        ));
    }
    summary.steps = clock.steps.clone();
    summary.seconds = clock.start.elapsed().as_secs_f64();
    eprintln!("gen: done in {:.1} s", summary.seconds);
    let list_org_spaces = plan.spaces_per_org[0];
    Ok(Dataset {
        scale: match args.scale {
            Scale::Full => "full".into(),
            Scale::Small => "small".into(),
        },
        url: args.url.clone(),
        admin_token: token,
        members_everywhere: plan
            .members_per_org
            .iter()
            .copied()
            .min()
            .unwrap_or(0)
            .min(member_tokens.len()),
        member_tokens,
        list_org: orgs[0].clone(),
        list_org_spaces,
        orgs,
        spaces,
        big_space,
        pages,
        commented_pages,
        comments: comments.is_some(),
        big_space_comments: comments.as_ref().map(|c| c.big_comments).unwrap_or(0),
        list_limit: plan.list_limit,
        search: SearchWords {
            one_word: text::SEARCH_ONE_WORD.into(),
            two_words: text::SEARCH_TWO_WORDS.into(),
            prefix: text::SEARCH_PREFIX.into(),
        },
        summary,
    })
}

async fn make_members(
    api: &Api,
    token: &str,
    admin: &Admin,
    orgs: &[String],
    plan: &Plan,
    n: usize,
) -> Result<Vec<String>, String> {
    // A random tag keeps emails unique when gen runs twice on one database.
    let tag = format!("{:x}", Rng::new(now_nanos()).next_u64() & 0xffff_ffff);
    let indexes: Vec<usize> = (0..plan.members).collect();
    // Subprocesses: a few at a time (each opens the database).
    let tokens = each(indexes, n.min(4), |i| {
        let admin = admin.clone();
        let email = format!("member{i}-{tag}@bench.example.com");
        async move {
            admin
                .run(&[
                    "user",
                    "create",
                    "--email",
                    &email,
                    "--name",
                    &format!("Member {i}"),
                ])
                .await?;
            admin.run(&["token", "create", "--email", &email]).await
        }
    })
    .await?;
    for (o, org) in orgs.iter().enumerate() {
        let count = plan
            .members_per_org
            .get(o)
            .copied()
            .unwrap_or(0)
            .min(tokens.len());
        if count == 0 {
            continue;
        }
        let invite = api
            .post(
                &format!("/v1/orgs/{org}/link-invites"),
                token,
                &json!({"role": "edit"}),
            )
            .await?;
        let invite = id_of(&invite, "invite")?;
        each(tokens[..count].to_vec(), n, |member| {
            let (api, path) = (api.clone(), format!("/v1/orgs/{org}/invites/{invite}"));
            async move { api.post(&path, &member, &json!({})).await.map(drop) }
        })
        .await?;
    }
    Ok(tokens)
}

fn now_nanos() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Writes the big space's pages into one change request, 50 per batch (the API's maximum),
/// then merges it. Returns the page ids in layout order, the markdown bytes and link count.
async fn import_pages(
    api: &Api,
    token: &str,
    space: &str,
    plan: &Plan,
) -> Result<(Vec<String>, usize, usize), String> {
    let slots = layout(plan.pages, plan.top_pages, plan.children_per_top);
    let cr = api
        .post(
            &format!("/v1/spaces/{space}/change-requests"),
            token,
            &json!({"subject": format!("Import {} pages", slots.len())}),
        )
        .await?;
    let cr = id_of(&cr, "change request")?;
    let path = format!("/v1/spaces/{space}/change-requests/{cr}/content?compat=false");
    let mut ids: Vec<Option<String>> = vec![None; slots.len()];
    let mut rng = Rng::new(42);
    let (mut bytes, mut links) = (0, 0);
    let target = |ids: &[Option<String>], j: usize| match &ids[j] {
        Some(id) => format!("/pages/{id}"),
        None => format!("./p{j}.md"),
    };
    for start in (0..slots.len()).step_by(50) {
        let end = (start + 50).min(slots.len());
        let mut changes = Vec::with_capacity(end - start);
        for (i, slot) in slots.iter().enumerate().take(end).skip(start) {
            let title = text::title(&mut rng, i + 1);
            let mut page_links = Vec::new();
            if let Some(p) = slot.parent {
                page_links.push(("the parent page".to_string(), target(&ids, p)));
            }
            // Two links to earlier pages anywhere in the space.
            for _ in 0..2 {
                if i > 0 {
                    let j = rng.below(i);
                    page_links.push((format!("page {}", j + 1), target(&ids, j)));
                }
            }
            links += page_links.len();
            let md = text::page_markdown(&mut rng, &title, &page_links, plan.page_bytes);
            bytes += md.len();
            let mut change = json!({
                "operation": "insert_page",
                "ref": format!("p{i}"),
                "title": title,
                "document": {"markdown": md},
            });
            if let Some(p) = slot.parent {
                change["into"] = json!(ids[p].clone().unwrap_or_else(|| format!("p{p}")));
            }
            changes.push(change);
        }
        let resp = api.post(&path, token, &json!({"changes": changes})).await?;
        for change in resp["changes"].as_array().into_iter().flatten() {
            let index = change["ref"]
                .as_str()
                .and_then(|r| r.strip_prefix('p'))
                .and_then(|r| r.parse::<usize>().ok());
            if let (Some(index), Some(id)) = (index, change["page"]["id"].as_str())
                && let Some(slot) = ids.get_mut(index)
            {
                *slot = Some(id.to_string());
            }
        }
        if start % 1000 == 0 && start > 0 {
            eprintln!("gen: pages: {end} written");
        }
    }
    let ids: Vec<String> = ids
        .into_iter()
        .enumerate()
        .map(|(i, id)| id.ok_or_else(|| format!("page p{i} was not reported created")))
        .collect::<Result<_, _>>()?;
    let merged = api
        .post(
            &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
            token,
            &json!({}),
        )
        .await?;
    if merged["result"] != "merge" {
        return Err(format!("merging the import did not merge: {merged}"));
    }
    Ok((ids, bytes, links))
}

/// Change requests: on the big space, each edits its own page (some merged at once, the rest
/// left open); on the other spaces, a chain per space (each merged one is based on the latest
/// main, so none conflicts).
async fn change_requests(
    api: &Api,
    token: &str,
    big_space: &str,
    pages: &[String],
    others: &[String],
    plan: &Plan,
    n: usize,
) -> Result<(usize, usize), String> {
    let merged = Arc::new(AtomicUsize::new(0));
    let one = |space: String, page: String, i: usize, merge: bool| {
        let (api, token, merged) = (api.clone(), token.to_string(), merged.clone());
        async move {
            let status = if merge { "draft" } else { "open" };
            let cr = api
                .post(
                    &format!("/v1/spaces/{space}/change-requests"),
                    &token,
                    &json!({"subject": format!("Edit {i}"), "status": status}),
                )
                .await?;
            let cr = id_of(&cr, "change request")?;
            let md = text::page_markdown(&mut Rng::new(i as u64), &format!("Edited {i}"), &[], 600);
            api.post(
                &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
                &token,
                &json!({"changes": [{"operation": "update_page", "page": page, "document": {"markdown": md}}]}),
            )
            .await?;
            if merge {
                let r = api
                    .post(
                        &format!("/v1/spaces/{space}/change-requests/{cr}/merge"),
                        &token,
                        &json!({}),
                    )
                    .await?;
                if r["result"] != "merge" {
                    return Err(format!("change request {cr} did not merge: {r}"));
                }
                merged.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, String>(())
        }
    };
    // The big space: pages spread over the whole tree, one change request each.
    let stride = (pages.len() / plan.big_crs.max(1)).max(1);
    let big: Vec<(usize, String)> = (0..plan.big_crs.min(pages.len()))
        .map(|i| (i, pages[(i * stride + stride / 2) % pages.len()].clone()))
        .collect();
    each(big, n.min(8), |(i, page)| {
        one(big_space.to_string(), page, i, i < plan.big_crs_merged)
    })
    .await?;
    // The other spaces: change requests dealt round-robin, one chain per space.
    let made_big = plan.big_crs.min(pages.len());
    let mut chains: Vec<Vec<usize>> = vec![Vec::new(); others.len()];
    for i in 0..plan.other_crs {
        if let Some(chain) = chains.get_mut(i % others.len().max(1)) {
            chain.push(i);
        }
    }
    let mut rng = Rng::new(7);
    let chains: Vec<(String, Vec<(usize, bool)>)> = others
        .iter()
        .cloned()
        .zip(chains)
        .map(|(s, chain)| {
            let chain = chain
                .into_iter()
                .map(|i| (i, rng.chance(plan.other_crs_merged_percent)))
                .collect();
            (s, chain)
        })
        .collect();
    let done = each(chains, n, |(space, chain)| {
        let (api, token) = (api.clone(), token.to_string());
        let one = &one;
        async move {
            if chain.is_empty() {
                return Ok(0);
            }
            let tree = api
                .get(&format!("/v1/spaces/{space}/content/pages"), &token)
                .await?;
            let page = tree["pages"][0]["id"]
                .as_str()
                .ok_or_else(|| format!("space {space} has no page: {tree}"))?
                .to_string();
            // Merged ones first: each is based on the main the previous one made.
            let mut ordered = chain.clone();
            ordered.sort_by_key(|(_, merge)| !*merge);
            for (i, merge) in &ordered {
                one(space.clone(), page.clone(), made_big + i, *merge).await?;
            }
            Ok::<_, String>(chain.len())
        }
    })
    .await?;
    let total = made_big + done.iter().sum::<usize>();
    Ok((total, merged.load(Ordering::Relaxed)))
}

struct Comments {
    comments: usize,
    big_comments: usize,
    replies: usize,
    resolved: usize,
    pages: Vec<String>,
}

#[allow(clippy::too_many_arguments)]
async fn comments(
    api: &Api,
    admin: &str,
    writers: &[String],
    big_space: &str,
    pages: &[String],
    others: &[String],
    plan: &Plan,
    n: usize,
) -> Result<Option<Comments>, String> {
    let mut rng = Rng::new(99);
    // Targets: (space, page or none, writer).
    let mut targets: Vec<(String, Option<String>, String, String)> = Vec::new();
    let mut commented = BTreeSet::new();
    for i in 0..plan.big_comments {
        let page = rng.pick(pages).cloned();
        if let Some(p) = &page
            && commented.len() < 1000
        {
            commented.insert(p.clone());
        }
        let writer = writers[i % writers.len()].clone();
        targets.push((big_space.to_string(), page, writer, text::comment(&mut rng)));
    }
    // The other spaces are in every organization: their comments and replies are written by
    // the members who joined them all (the first ones), so that none is refused.
    let everywhere = plan.members_per_org.iter().copied().min().unwrap_or(0);
    let shared = &writers[..everywhere.clamp(1, writers.len())];
    for i in 0..plan.other_comments {
        let space = others
            .get(i % others.len().max(1))
            .cloned()
            .unwrap_or_else(|| big_space.to_string());
        let writer = shared[i % shared.len()].clone();
        targets.push((space, None, writer, text::comment(&mut rng)));
    }
    // Probe: does the server have comments at all?
    let Some(first) = targets.first().cloned() else {
        return Ok(None);
    };
    let probe = api
        .send(
            reqwest::Method::POST,
            &format!("/v1/spaces/{}/comments", first.0),
            &first.2,
            Some(&comment_body(&first.1, &first.3)),
        )
        .await?;
    let first_id = match probe {
        Err(NoRoute) => return Ok(None),
        Ok(v) => id_of(&v, "comment")?,
    };
    let rest = targets[1..].to_vec();
    let mut ids = vec![(first.0.clone(), first_id)];
    let made = each(rest, n, |(space, page, writer, body)| {
        let api = api.clone();
        async move {
            let c = api
                .post(
                    &format!("/v1/spaces/{space}/comments"),
                    &writer,
                    &comment_body(&page, &body),
                )
                .await?;
            Ok::<_, String>((space, id_of(&c, "comment")?))
        }
    })
    .await?;
    ids.extend(made);
    // Replies: on the big space's comments, then the others'.
    let (big_ids, other_ids) = ids.split_at(plan.big_comments.min(ids.len()));
    let mut replies = Vec::new();
    for i in 0..plan.big_replies {
        if let Some((s, c)) = rng.pick(big_ids) {
            replies.push((
                s.clone(),
                c.clone(),
                writers[i % writers.len()].clone(),
                text::comment(&mut rng),
            ));
        }
    }
    for i in 0..plan.other_replies {
        if let Some((s, c)) = rng.pick(other_ids) {
            replies.push((
                s.clone(),
                c.clone(),
                shared[i % shared.len()].clone(),
                text::comment(&mut rng),
            ));
        }
    }
    let reply_count = replies.len();
    each(replies, n, |(space, comment, writer, body)| {
        let api = api.clone();
        async move {
            api.post(
                &format!("/v1/spaces/{space}/comments/{comment}/replies"),
                &writer,
                &json!({"body": {"markdown": body}}),
            )
            .await
            .map(drop)
        }
    })
    .await?;
    // Some resolved, so that `status=open` filters.
    let resolve: Vec<(String, String)> = ids
        .iter()
        .filter(|_| rng.chance(plan.resolved_percent))
        .cloned()
        .collect();
    let resolved = resolve.len();
    each(resolve, n, |(space, comment)| {
        let (api, admin) = (api.clone(), admin.to_string());
        async move {
            match api
                .send(
                    reqwest::Method::PUT,
                    &format!("/v1/spaces/{space}/comments/{comment}"),
                    &admin,
                    Some(&json!({"resolved": true})),
                )
                .await?
            {
                Ok(_) => Ok(()),
                Err(NoRoute) => Err("PUT comment: no such route".to_string()),
            }
        }
    })
    .await?;
    Ok(Some(Comments {
        comments: ids.len(),
        big_comments: big_ids.len(),
        replies: reply_count,
        resolved,
        pages: commented.into_iter().collect(),
    }))
}

fn comment_body(page: &Option<String>, body: &str) -> Value {
    let mut v = json!({"body": {"markdown": body}});
    if let Some(p) = page {
        v["page"] = json!(p);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_three_levels_and_parents_first() {
        let slots = layout(10_000, 20, 20);
        assert_eq!(slots.len(), 10_000);
        assert_eq!(slots.iter().filter(|s| s.depth == 1).count(), 20);
        assert_eq!(slots.iter().filter(|s| s.depth == 2).count(), 400);
        assert_eq!(slots.iter().filter(|s| s.depth == 3).count(), 9_580);
        for (i, s) in slots.iter().enumerate() {
            if let Some(p) = s.parent {
                assert!(p < i);
                assert_eq!(slots[p].depth + 1, s.depth);
            }
        }
        let small = layout(200, 5, 3);
        assert_eq!(small.len(), 200);
    }
}
