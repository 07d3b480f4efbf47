//! Conversations: support conversations an organization ingests (idempotent by the id its sender
//! gives), the questions in them that the organization's documentation does not answer (issues,
//! found by the `conversation_analyse` job: `analyse`), and those issues grouped by likeness
//! (clusters, recomputed by the `conversation_clusters` job: `clusters`). `docs/conversations.md`
//! describes the rules; `docs/permissions.md` ("Conversations") who may do what.

pub mod analyse;
pub mod clusters;
pub mod model;

use std::collections::{BTreeMap, BTreeSet};

pub use model::{
    ClosePage, Cluster, ClusterStatus, Conversation, ConversationDetail, Issue, IssueItem, Part, Role, Tasks,
};
use serde::{Deserialize, Serialize};

use crate::db::{Args, Conn, Dialect};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::orgs::OrgFor;
use crate::paging::{KeyOrder, List, Order, Page, Paging};
use crate::permissions::{Authorized, org};
use crate::{clock, params};
use model::{ConversationCols, IssueCols};

/// How many conversations one organization may hold.
pub const MAX_CONVERSATIONS: i64 = 100_000;
/// Longest conversation id, in characters.
pub const MAX_ID_CHARS: usize = 128;
pub const MAX_SUBJECT_CHARS: usize = 500;
pub const MAX_URL_CHARS: usize = 2048;
pub const MAX_ATTRIBUTES: usize = 50;
pub const MAX_ATTRIBUTE_KEY_CHARS: usize = 100;
pub const MAX_ATTRIBUTE_VALUE_CHARS: usize = 1000;
/// Most parts (messages) of one conversation.
pub const MAX_PARTS: usize = 500;
/// Largest body of one part, in bytes.
pub const MAX_PART_BYTES: usize = 32 * 1024;
/// Largest sum of the bodies of a conversation's parts, in bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// A conversation to ingest, as sent (checked by [`NewConversation::check`]).
#[derive(Clone, Debug, Default)]
pub struct Input {
    pub id: String,
    pub subject: Option<String>,
    pub url: Option<String>,
    pub attributes: Option<BTreeMap<String, String>>,
    /// `metadata.createdAt` as sent.
    pub created_at: Option<String>,
    pub parts: Vec<InputPart>,
}

/// A part as sent.
#[derive(Clone, Debug, Default)]
pub struct InputPart {
    pub kind: String,
    pub role: String,
    pub body: String,
}

/// A conversation to ingest, checked.
#[derive(Clone, Debug)]
pub struct NewConversation {
    pub id: String,
    pub subject: Option<String>,
    pub url: Option<String>,
    pub attributes: BTreeMap<String, String>,
    pub created_at: Option<i64>,
    pub parts: Vec<Part>,
}

fn too_long(field: &str, max: usize, unit: &str) -> StoreError {
    StoreError::invalid(format!("`{field}` is longer than {max} {unit}"))
}

fn check_chars(field: &str, value: &str, max: usize) -> StoreResult<()> {
    if value.chars().count() > max {
        return Err(too_long(field, max, "characters"));
    }
    Ok(())
}

/// Whether `id` can name a conversation: it is a path segment of the API.
fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

impl NewConversation {
    /// Checks a conversation as sent; a 400 names the first field at fault.
    pub fn check(input: Input) -> StoreResult<NewConversation> {
        if input.id.chars().count() > MAX_ID_CHARS || !valid_id(&input.id) {
            return Err(StoreError::invalid(format!(
                "`id` must be 1 to {MAX_ID_CHARS} letters, digits, '-', '_', '.' or ':', starting with a letter or digit, not {:?}",
                input.id.chars().take(MAX_ID_CHARS + 1).collect::<String>()
            )));
        }
        if let Some(subject) = &input.subject {
            check_chars("subject", subject, MAX_SUBJECT_CHARS)?;
        }
        if let Some(url) = &input.url {
            check_chars("metadata.url", url, MAX_URL_CHARS)?;
            let parsed = url::Url::parse(url).ok();
            if !parsed.is_some_and(|u| matches!(u.scheme(), "http" | "https")) {
                return Err(StoreError::invalid(format!(
                    "`metadata.url` must be an http or https URL, not {url:?}"
                )));
            }
        }
        let attributes = input.attributes.unwrap_or_default();
        if attributes.len() > MAX_ATTRIBUTES {
            return Err(StoreError::invalid(format!(
                "`metadata.attributes` has {} entries, more than the {MAX_ATTRIBUTES} allowed",
                attributes.len()
            )));
        }
        for (key, value) in &attributes {
            check_chars("metadata.attributes", key, MAX_ATTRIBUTE_KEY_CHARS)?;
            check_chars(
                &format!("metadata.attributes.{key}"),
                value,
                MAX_ATTRIBUTE_VALUE_CHARS,
            )?;
        }
        let created_at = match &input.created_at {
            None => None,
            Some(text) => Some(clock::parse_rfc3339(text).ok_or_else(|| {
                StoreError::invalid(format!(
                    "`metadata.createdAt` must be an ISO 8601 date-time, not {text:?}"
                ))
            })?),
        };
        if input.parts.is_empty() {
            return Err(StoreError::invalid("`parts` must hold at least one message"));
        }
        if input.parts.len() > MAX_PARTS {
            return Err(StoreError::invalid(format!(
                "`parts` has {} entries, more than the {MAX_PARTS} allowed",
                input.parts.len()
            )));
        }
        let mut total = 0;
        let mut parts = Vec::with_capacity(input.parts.len());
        for (i, part) in input.parts.into_iter().enumerate() {
            if part.kind != "message" {
                return Err(StoreError::invalid(format!(
                    "`parts[{i}].type` must be \"message\", not {:?}",
                    part.kind
                )));
            }
            let Some(role) = Role::parse(&part.role) else {
                return Err(StoreError::invalid(format!(
                    "`parts[{i}].role` must be one of user, assistant, agent, not {:?}",
                    part.role
                )));
            };
            if part.body.len() > MAX_PART_BYTES {
                return Err(too_long(&format!("parts[{i}].body"), MAX_PART_BYTES, "bytes"));
            }
            total += part.body.len();
            if total > MAX_BODY_BYTES {
                return Err(StoreError::invalid(format!(
                    "`parts` hold more than {MAX_BODY_BYTES} bytes of bodies (at `parts[{i}].body`)"
                )));
            }
            parts.push(Part {
                role,
                body: part.body,
            });
        }
        Ok(NewConversation {
            id: input.id,
            subject: input.subject,
            url: input.url,
            attributes,
            created_at,
            parts,
        })
    }
}

/// `text` cut to `max` characters, ending with '…' when it was longer.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Who sends conversations as `caller`: the integration whose installation's bot it is, else
/// `api`.
fn source_of(c: &mut dyn Conn, org_id: &str, caller: &str) -> StoreResult<String> {
    let Some(installation) = caller.strip_prefix("bot-") else {
        return Ok("api".to_string());
    };
    let name: Option<String> = c.query_scalar(
        "SELECT ig.name FROM integration_installations ins
         JOIN integrations ig ON ig.id = ins.integration_id
         WHERE ins.id = ?1 AND ins.organization_id = ?2",
        params![installation, org_id],
    )?;
    Ok(name.unwrap_or_else(|| "api".to_string()))
}

/// Ingests a conversation: new, or again by its id (then it replaces what was sent before and
/// is analysed again). Its analysis is queued.
pub fn ingest(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::IngestConversations>,
    caller: &str,
    new: &NewConversation,
) -> StoreResult<()> {
    let org_id = &org.org.id;
    let source = source_of(c, org_id, caller)?;
    let now = clock::now_ms();
    let existing: Option<i64> = c.query_scalar(
        "SELECT started_at FROM conversations WHERE organization_id = ?1 AND id = ?2",
        params![org_id.as_str(), new.id.as_str()],
    )?;
    let parts = serde_json::to_string(&new.parts).map_err(|e| StoreError::internal(e.to_string()))?;
    let attributes =
        serde_json::to_string(&new.attributes).map_err(|e| StoreError::internal(e.to_string()))?;
    match existing {
        None => {
            let count: i64 = c
                .query_scalar(
                    "SELECT count(*) FROM conversations WHERE organization_id = ?1",
                    params![org_id.as_str()],
                )?
                .unwrap_or(0);
            if count >= MAX_CONVERSATIONS {
                return Err(StoreError::invalid(format!(
                    "an organization holds at most {MAX_CONVERSATIONS} conversations"
                )));
            }
            c.execute(
                "INSERT INTO conversations (organization_id, id, subject, source, source_url, attributes, parts,
                                            started_at, created_at, ingested_at, version)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9, 1)",
                params![
                    org_id.as_str(),
                    new.id.as_str(),
                    new.subject.clone(),
                    source.as_str(),
                    new.url.clone(),
                    attributes,
                    parts,
                    new.created_at.unwrap_or(now),
                    now
                ],
            )?;
        }
        Some(started_at) => {
            c.execute(
                "UPDATE conversations SET subject = ?3, source = ?4, source_url = ?5, attributes = ?6, parts = ?7,
                        started_at = ?8, ingested_at = ?9, processed_at = NULL, version = version + 1
                 WHERE organization_id = ?1 AND id = ?2",
                params![
                    org_id.as_str(),
                    new.id.as_str(),
                    new.subject.clone(),
                    source.as_str(),
                    new.url.clone(),
                    attributes,
                    parts,
                    new.created_at.unwrap_or(started_at),
                    now
                ],
            )?;
        }
    }
    analyse::schedule(c, org_id, &new.id, now)?;
    let payload = events::ConversationIngested {
        conversation_id: &new.id,
        source: &source,
        again: existing.is_some(),
    };
    events::record(c, Event::in_org(org_id, &new.id, Some(caller), payload))?;
    Ok(())
}

/// Where the previous page of a list ended: the sort key and id of its last item.
#[derive(Serialize, Deserialize)]
struct After(i64, String);

/// Which conversations a list holds.
#[derive(Clone, Debug, Default)]
pub struct ConversationFilter {
    pub source: Option<String>,
    /// Only those whose analysis ended (true) or is still to come (false).
    pub processed: Option<bool>,
}

/// The conversations of an organization, newest first.
pub fn list(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    wanted: &ConversationFilter,
    paging: &Paging,
) -> StoreResult<List<Conversation>> {
    let org_id = org.org.id.as_str();
    let page = Page::new(
        paging,
        format!(
            "conversations:{org_id}:{:?}:{:?}",
            wanted.source, wanted.processed
        ),
    )?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE cv.organization_id = {}", args.arg(org_id));
    if let Some(source) = &wanted.source {
        filter += &format!(" AND cv.source = {}", args.arg(source.as_str()));
    }
    match wanted.processed {
        Some(true) => filter += " AND cv.processed_at IS NOT NULL",
        Some(false) => filter += " AND cv.processed_at IS NULL",
        None => {}
    }
    crate::paging::by_key(
        c,
        &page,
        ("conversations cv", ConversationCols::SQL),
        (filter, args),
        &KeyOrder::descending("cv.created_at"),
        Conversation::from_row,
        |cv| (cv.created_at, cv.id.clone()),
    )
}

pub fn conversation_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("conversation {id:?} not found"))
}

/// A conversation with its parts, or 404.
pub fn get(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    id: &str,
) -> StoreResult<ConversationDetail> {
    let found = load_detail(c, &org.org.id, id)?;
    found
        .map(|(detail, _)| detail)
        .ok_or_else(|| conversation_not_found(id))
}

/// A conversation with its parts and its version (which moves at each ingest), whoever asks
/// (the analysis).
pub(crate) fn load_detail(
    c: &mut dyn Conn,
    org_id: &str,
    id: &str,
) -> StoreResult<Option<(ConversationDetail, i64)>> {
    let sql = format!(
        "SELECT {}, cv.parts, cv.version FROM conversations cv WHERE cv.organization_id = ?1 AND cv.id = ?2",
        ConversationCols::SQL
    );
    let Some(row) = c.query_opt(&sql, params![org_id, id])? else {
        return Ok(None);
    };
    let conversation = Conversation::from_row(&row)?;
    let parts: String = row.get(ConversationCols::COUNT)?;
    let parts = serde_json::from_str(&parts)
        .map_err(|e| crate::db::DbError::stored(format_args!("parts of conversation {id:?}"), e))?;
    let version = row.get(ConversationCols::COUNT + 1)?;
    Ok(Some((ConversationDetail { conversation, parts }, version)))
}

/// Which issues a list holds.
#[derive(Clone, Debug, Default)]
pub struct IssueFilter {
    pub cluster: Option<String>,
    pub conversation: Option<String>,
}

/// The issues of an organization with their conversations, newest first; of their closest
/// pages, those in spaces the caller can view.
pub fn issues(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    caller: &str,
    filter: &IssueFilter,
    paging: &Paging,
) -> StoreResult<List<IssueItem>> {
    let org_id = org.org.id.as_str();
    let page = Page::new(
        paging,
        format!(
            "conversation-issues:{org_id}:{:?}:{:?}",
            filter.cluster, filter.conversation
        ),
    )?;
    let mut args = Args::default();
    let mut sql = format!(" WHERE i.organization_id = {}", args.arg(org_id));
    if let Some(cluster) = &filter.cluster {
        sql += &format!(" AND i.cluster_id = {}", args.arg(cluster.as_str()));
    }
    if let Some(conversation) = &filter.conversation {
        sql += &format!(" AND i.conversation_id = {}", args.arg(conversation.as_str()));
    }
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM conversation_issues i{sql}"),
            args.values(),
        )?
        .unwrap_or(0);
    if let Some(After(at, id)) = page.after::<After>()? {
        sql += &format!(" AND (i.created_at, i.id) < ({}, {})", args.arg(at), args.arg(id));
    }
    let sql = format!(
        "{} {sql} ORDER BY i.created_at DESC, i.id DESC LIMIT {}",
        issue_select(),
        args.arg(page.fetch())
    );
    let rows = c
        .query(&sql, args.values())?
        .iter()
        .map(issue_item)
        .collect::<Result<Vec<_>, _>>()?;
    let mut list = page.finish(rows, u64::try_from(count).unwrap_or(0), |item| {
        After(item.issue.created_at, item.issue.id.clone())
    });
    only_visible_pages(c, org, caller, &mut list.items)?;
    Ok(list)
}

/// Drops the closest pages of spaces the caller cannot view (one statement for all).
fn only_visible_pages(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    caller: &str,
    items: &mut [IssueItem],
) -> StoreResult<()> {
    let spaces: BTreeSet<&str> = items
        .iter()
        .flat_map(|i| i.issue.pages.iter().map(|p| p.space.as_str()))
        .collect();
    if spaces.is_empty() {
        return Ok(());
    }
    let access = crate::access::AccessContext::for_org(c, &org.org.id, caller, org.standing)?;
    let mut args = Args::default();
    let list = args.list(spaces.iter().copied());
    let org_arg = args.arg(org.org.id.as_str());
    let visible = access.visible_spaces_sql(&mut args);
    let sql = format!(
        "SELECT s.id FROM spaces s WHERE s.id IN ({list}) AND s.organization_id = {org_arg} AND s.deleted_at IS NULL{visible}"
    );
    let mut seen = BTreeSet::new();
    for row in c.query(&sql, args.values())? {
        seen.insert(row.get::<String>(0)?);
    }
    for item in items {
        item.issue.pages.retain(|p| seen.contains(&p.space));
    }
    Ok(())
}

/// The SELECT of issues with their conversations, up to its WHERE.
fn issue_select() -> String {
    format!(
        "SELECT {}, {} FROM conversation_issues i
         JOIN conversations cv ON cv.organization_id = i.organization_id AND cv.id = i.conversation_id",
        IssueCols::SQL,
        ConversationCols::SQL
    )
}

fn issue_item(row: &crate::db::Row) -> Result<IssueItem, crate::db::DbError> {
    Ok(IssueItem {
        issue: Issue::from_row(row)?,
        conversation: Conversation::from_row_at(row, ConversationCols::at(IssueCols::COUNT))?,
    })
}

pub fn issue_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("conversation issue {id:?} not found"))
}

/// An issue with its conversation, or 404 (its closest pages as [`issues`] shows them).
pub fn issue(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    caller: &str,
    id: &str,
) -> StoreResult<IssueItem> {
    let sql = format!("{} WHERE i.organization_id = ?1 AND i.id = ?2", issue_select());
    let Some(row) = c.query_opt(&sql, params![org.org.id.as_str(), id])? else {
        return Err(issue_not_found(id));
    };
    let mut items = [issue_item(&row)?];
    only_visible_pages(c, org, caller, &mut items)?;
    let [item] = items;
    Ok(item)
}

crate::wire_enum! {
    /// What clusters are listed by.
    pub enum ClusterSort {
        UpdatedAt = "updatedAt",
        CreatedAt = "createdAt",
        Issues = "issues",
    }
}

impl ClusterSort {
    fn column(self) -> &'static str {
        match self {
            ClusterSort::UpdatedAt => "k.updated_at",
            ClusterSort::CreatedAt => "k.created_at",
            ClusterSort::Issues => "k.issues",
        }
    }

    fn key(self, cluster: &Cluster) -> i64 {
        match self {
            ClusterSort::UpdatedAt => cluster.updated_at,
            ClusterSort::CreatedAt => cluster.created_at,
            ClusterSort::Issues => cluster.issues,
        }
    }
}

/// How clusters are listed.
#[derive(Clone, Copy, Debug)]
pub struct ClusterListing {
    pub sort: ClusterSort,
    pub order: Order,
    pub status: Option<ClusterStatus>,
}

/// The clusters of an organization, with their pulse and tasks.
pub fn list_clusters(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    listing: ClusterListing,
    paging: &Paging,
) -> StoreResult<List<Cluster>> {
    let org_id = org.org.id.as_str();
    let ClusterListing { sort, order, status } = listing;
    let page = Page::new(
        paging,
        format!(
            "conversation-clusters:{org_id}:{}:{}:{:?}",
            sort.as_str(),
            order.name(),
            status.map(ClusterStatus::as_str)
        ),
    )?;
    let mut args = Args::default();
    let mut filter = format!(" WHERE k.organization_id = {}", args.arg(org_id));
    if let Some(status) = status {
        filter += &format!(" AND k.status = {}", args.arg(status));
    }
    let key = KeyOrder {
        expr: sort.column(),
        descending: order == Order::Desc,
    };
    let mut list = crate::paging::by_key(
        c,
        &page,
        ("conversation_clusters k", model::ClusterCols::SQL),
        (filter, args),
        &key,
        Cluster::from_row,
        |k| (sort.key(k), k.id.clone()),
    )?;
    clusters::complete(c, org_id, &mut list.items, clock::now_ms())?;
    Ok(list)
}

pub fn cluster_not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("conversations issues cluster {id:?} not found"))
}

/// One cluster with its pulse and tasks, or 404.
pub fn cluster(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    id: &str,
) -> StoreResult<Cluster> {
    load_cluster(c, &org.org.id, id)?.ok_or_else(|| cluster_not_found(id))
}

fn load_cluster(c: &mut dyn Conn, org_id: &str, id: &str) -> StoreResult<Option<Cluster>> {
    let sql = format!(
        "SELECT {} FROM conversation_clusters k WHERE k.organization_id = ?1 AND k.id = ?2",
        model::ClusterCols::SQL
    );
    let Some(row) = c.query_opt(&sql, params![org_id, id])? else {
        return Ok(None);
    };
    let mut found = vec![Cluster::from_row(&row)?];
    clusters::complete(c, org_id, &mut found, clock::now_ms())?;
    Ok(found.pop())
}

/// Sets a cluster open or resolved.
pub fn set_status(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::TriageConversations>,
    caller: &str,
    id: &str,
    status: ClusterStatus,
) -> StoreResult<Cluster> {
    change_status(c, &org.org.id, id, status, caller, None)?;
    cluster(c, org, id)
}

/// Moves a cluster to `status`, recording the event when it was elsewhere (`change_request`:
/// the merged change request that resolved it).
fn change_status(
    c: &mut dyn Conn,
    org_id: &str,
    cluster_id: &str,
    status: ClusterStatus,
    actor: &str,
    change_request: Option<&str>,
) -> StoreResult<()> {
    let changed = c.execute(
        "UPDATE conversation_clusters SET status = ?3, updated_at = ?4
         WHERE organization_id = ?1 AND id = ?2 AND status <> ?3",
        params![org_id, cluster_id, status, clock::now_ms()],
    )?;
    if changed > 0 {
        let payload = events::ConversationsClusterStatusUpdated {
            cluster_id,
            status: status.as_str(),
            change_request_id: change_request,
        };
        events::record(c, Event::in_org(org_id, cluster_id, Some(actor), payload))?;
    }
    Ok(())
}

/// A cluster a change request may reference: one of the space's organization, or 400.
pub fn check_reference(c: &mut dyn Conn, org_id: &str, cluster_id: &str) -> StoreResult<()> {
    let found = c.exists(
        "SELECT 1 FROM conversation_clusters WHERE organization_id = ?1 AND id = ?2",
        params![org_id, cluster_id],
    )?;
    if found {
        Ok(())
    } else {
        Err(StoreError::invalid(format!(
            "`conversationsIssuesCluster` {cluster_id:?} is not a cluster of this organization's conversation issues"
        )))
    }
}

/// Marks the cluster a merged change request references as resolved, in the merge's
/// transaction.
pub(crate) fn resolved_by_merge(
    c: &mut dyn Conn,
    org_id: &str,
    cluster_id: &str,
    change_request_id: &str,
    user: &str,
) -> StoreResult<()> {
    change_status(
        c,
        org_id,
        cluster_id,
        ClusterStatus::Resolved,
        user,
        Some(change_request_id),
    )
}

/// Takes the PostgreSQL advisory lock that orders an organization's analyses (shared) before
/// the start of a clustering run (exclusive: see `clusters::run`), for the transaction `c` is
/// in (SQLite has one writer).
pub(crate) fn lock(c: &mut dyn Conn, org_id: &str, shared: bool) -> StoreResult<()> {
    if c.dialect() == Dialect::Postgres {
        let function = if shared {
            "pg_advisory_xact_lock_shared"
        } else {
            "pg_advisory_xact_lock"
        };
        let key = crate::db::advisory_key(&format!("quire-conversations:{org_id}"));
        c.query(&format!("SELECT {function}(?1)"), params![key])?;
    }
    Ok(())
}
