//! Clusters of issues (the `conversation_clusters` job, one per organization, queued by every
//! analysis that changed issues): all of the organization's issues are grouped again
//! (`quire_content::conversations::cluster`: connected components of TF-IDF likeness), so the
//! groups depend only on which issues there are, never on the order conversations came in. Each
//! group keeps the id (and the status) of the cluster that held most of its issues before.
//!
//! Runs and analyses are ordered so that no analysis is missed: a run starts by taking its
//! job's dedupe key off its own row under an exclusive lock that analyses take shared, so an
//! analysis either committed before the run reads the issues, or queues a new run. Runs are
//! numbered as they start, and a run stores its groups only if no later-started run stored
//! its own.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use quire_content::conversations::{self as text, Item, Weights};
use serde::Deserialize;

use super::model::{Cluster, ClusterStatus, Tasks};
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::{Store, clock, ids, jobs, params};

pub const CLUSTER_JOB: &str = "conversation_clusters";
/// The icon of clusters (a GitBook icon name).
pub const ICON: &str = "circle-question";
/// Weeks of the weekly pulse (about three months).
pub const PULSE_WEEKS: usize = 12;
/// Longest cluster label, in characters.
pub const MAX_LABEL_CHARS: usize = 80;
/// Ids per statement when issues move between clusters.
const CHUNK: usize = 500;

const WEEK_MS: i64 = 7 * 24 * 3600 * 1000;
const DAY_MS: i64 = 24 * 3600 * 1000;

fn job_key(org_id: &str) -> String {
    format!("conversation-clusters:{org_id}")
}

/// Queues a clustering of the organization, unless one is queued already (it will read the
/// issues this transaction writes).
pub(crate) fn schedule(c: &mut dyn Conn, org_id: &str, now: i64) -> StoreResult<()> {
    let payload = serde_json::json!({"organization": org_id});
    jobs::enqueue_once(c, CLUSTER_JOB, &payload, now, &job_key(org_id))
}

#[derive(Deserialize)]
struct Payload {
    organization: String,
}

/// An issue as clustering reads it.
struct Member {
    id: String,
    /// Names the issue by what it is, its conversation and its question, rather than by its
    /// random id: ties in clustering are broken by this, so labels do not depend on ids.
    key: String,
    terms: Vec<String>,
    title: String,
    conversation: String,
    source: String,
    cluster: Option<String>,
}

/// An existing cluster as clustering reads it.
struct Existing {
    created_at: i64,
    label: String,
    summary: String,
    issues: i64,
    conversations: i64,
    sources: String,
}

/// A group to store.
struct Group {
    id: Option<String>,
    members: Vec<usize>,
    label: String,
    summary: String,
    conversations: i64,
    sources: BTreeMap<String, i64>,
}

pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let p = Payload::deserialize(payload)
        .map_err(|e| StoreError::internal(format!("clustering payload: {e}")))?;
    let org_id = p.organization;
    let start_org = org_id.clone();
    let number = store.db.write(move |c| start(c, &start_org)).await?;
    let read_org = org_id.clone();
    // Grouped on the blocking thread that read the issues: at the limits it is seconds of CPU.
    let (members, existing, groups) = store
        .db
        .read_blocking(move |c| {
            let (members, existing) = read(c, &read_org)?;
            let groups = group(&members, &existing)?;
            Ok::<_, StoreError>((members, existing, groups))
        })
        .await?;
    store
        .db
        .write(move |c| write(c, &org_id, number, &members, &existing, &groups))
        .await?;
    Ok(None)
}

/// Starts a run: later analyses queue a new one; the run's number.
fn start(c: &mut dyn Conn, org_id: &str) -> StoreResult<i64> {
    super::lock(c, org_id, false)?;
    c.execute(
        "UPDATE jobs SET dedupe_key = NULL WHERE dedupe_key = ?1 AND lease_until IS NOT NULL",
        params![job_key(org_id)],
    )?;
    c.execute(
        "INSERT INTO conversation_clusterings (organization_id, started, written) VALUES (?1, 0, 0)
         ON CONFLICT (organization_id) DO NOTHING",
        params![org_id],
    )?;
    let number: Option<i64> = c.query_scalar(
        "UPDATE conversation_clusterings SET started = started + 1 WHERE organization_id = ?1 RETURNING started",
        params![org_id],
    )?;
    number.ok_or_else(|| StoreError::internal("clustering run without its row"))
}

type Snapshot = (Vec<Member>, HashMap<String, Existing>);

fn read(c: &mut dyn Conn, org_id: &str) -> StoreResult<Snapshot> {
    let mut members = Vec::new();
    for row in c.query(
        "SELECT i.id, i.terms, i.title, i.conversation_id, cv.source, i.cluster_id, i.question_key
         FROM conversation_issues i
         JOIN conversations cv ON cv.organization_id = i.organization_id AND cv.id = i.conversation_id
         WHERE i.organization_id = ?1",
        params![org_id],
    )? {
        let terms: String = row.get(1)?;
        let conversation: String = row.get(3)?;
        let question: String = row.get(6)?;
        members.push(Member {
            key: format!("{conversation}\u{1f}{question}"),
            id: row.get(0)?,
            terms: terms
                .split(' ')
                .filter(|t| !t.is_empty())
                .map(str::to_string)
                .collect(),
            title: row.get(2)?,
            conversation,
            source: row.get(4)?,
            cluster: row.get(5)?,
        });
    }
    let mut existing = HashMap::new();
    for row in c.query(
        "SELECT id, created_at, label, summary, issues, conversations, sources
         FROM conversation_clusters WHERE organization_id = ?1",
        params![org_id],
    )? {
        existing.insert(
            row.get::<String>(0)?,
            Existing {
                created_at: row.get(1)?,
                label: row.get(2)?,
                summary: row.get(3)?,
                issues: row.get(4)?,
                conversations: row.get(5)?,
                sources: row.get(6)?,
            },
        );
    }
    Ok((members, existing))
}

/// Groups the issues and gives each group its cluster: the existing cluster holding most of
/// its issues, biggest groups first (ties: the older cluster, then the smaller id); a group
/// left without one gets a new cluster.
fn group(members: &[Member], existing: &HashMap<String, Existing>) -> StoreResult<Vec<Group>> {
    let items: Vec<Item<'_>> = members
        .iter()
        .map(|m| Item {
            id: &m.key,
            terms: &m.terms,
        })
        .collect();
    let weights = Weights::new(&items);
    let components = text::cluster(&items).map_err(StoreError::internal)?;
    let mut order: Vec<usize> = (0..components.len()).collect();
    // Components come sorted by their first id, so this order depends on the issues only.
    order.sort_by_key(|&g| std::cmp::Reverse(components[g].len()));
    let mut claimed = BTreeSet::new();
    let mut groups: Vec<Group> = Vec::with_capacity(components.len());
    for g in order {
        let component = &components[g];
        let mut held: BTreeMap<&str, usize> = BTreeMap::new();
        for &i in component {
            if let Some(cluster) = members[i].cluster.as_deref()
                && existing.contains_key(cluster)
                && !claimed.contains(cluster)
            {
                *held.entry(cluster).or_default() += 1;
            }
        }
        let id = held
            .into_iter()
            .max_by(|a, b| {
                a.1.cmp(&b.1)
                    .then_with(|| existing[b.0].created_at.cmp(&existing[a.0].created_at))
                    .then_with(|| b.0.cmp(a.0))
            })
            .map(|(id, _)| id.to_string());
        if let Some(id) = &id {
            claimed.insert(id.clone());
        }
        groups.push(describe(members, &items, &weights, component, id));
    }
    Ok(groups)
}

fn describe(
    members: &[Member],
    items: &[Item<'_>],
    weights: &Weights,
    component: &[usize],
    id: Option<String>,
) -> Group {
    let central = component[text::central(items, weights, component)];
    let label = super::cut(&members[central].title, MAX_LABEL_CHARS);
    let mut conversations: BTreeMap<&str, &str> = BTreeMap::new();
    for &i in component {
        conversations.insert(&members[i].conversation, &members[i].source);
    }
    let mut sources: BTreeMap<String, i64> = BTreeMap::new();
    for source in conversations.values() {
        *sources.entry((*source).to_string()).or_default() += 1;
    }
    let issues = component.len();
    let conversation_count = conversations.len();
    // Examples: the central question, then the others by likeness to it (ties by id).
    let mut others: Vec<(f64, &str, &str)> = component
        .iter()
        .filter(|&&i| i != central)
        .map(|&i| {
            (
                weights.similarity(&members[central].terms, &members[i].terms),
                members[i].key.as_str(),
                members[i].title.as_str(),
            )
        })
        .collect();
    others.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut examples = vec![format!(
        "“{}”",
        super::cut(&members[central].title, MAX_LABEL_CHARS)
    )];
    let mut seen: BTreeSet<&str> = BTreeSet::from([members[central].title.as_str()]);
    for (_, _, title) in others {
        if examples.len() >= 3 {
            break;
        }
        if seen.insert(title) {
            examples.push(format!("“{}”", super::cut(title, MAX_LABEL_CHARS)));
        }
    }
    let summary = format!(
        "{issues} unanswered question{} from {conversation_count} conversation{}, such as {}.",
        if issues == 1 { "" } else { "s" },
        if conversation_count == 1 { "" } else { "s" },
        examples.join(", ")
    );
    Group {
        id,
        members: component.to_vec(),
        label,
        summary,
        conversations: i64::try_from(conversation_count).unwrap_or(i64::MAX),
        sources,
    }
}

/// Stores the groups of run `number`, unless a later run stored its own.
fn write(
    c: &mut dyn Conn,
    org_id: &str,
    number: i64,
    members: &[Member],
    existing: &HashMap<String, Existing>,
    groups: &[Group],
) -> StoreResult<()> {
    let written: Option<i64> = c.query_scalar(
        "SELECT written FROM conversation_clusterings WHERE organization_id = ?1",
        params![org_id],
    )?;
    if written.is_some_and(|w| w >= number) {
        return Ok(());
    }
    let now = clock::now_ms();
    let mut kept = BTreeSet::new();
    for group in groups {
        let sources =
            serde_json::to_string(&group.sources).map_err(|e| StoreError::internal(e.to_string()))?;
        let issues = i64::try_from(group.members.len()).unwrap_or(i64::MAX);
        let moved_from = |id: &str| -> Vec<&str> {
            group
                .members
                .iter()
                .filter(|&&i| members[i].cluster.as_deref() != Some(id))
                .map(|&i| members[i].id.as_str())
                .collect()
        };
        let (id, moved) = match &group.id {
            Some(id) => {
                kept.insert(id.as_str());
                let moved = moved_from(id);
                let before = &existing[id];
                let same = moved.is_empty()
                    && before.issues == issues
                    && before.label == group.label
                    && before.summary == group.summary
                    && before.conversations == group.conversations
                    && before.sources == sources;
                if !same {
                    c.execute(
                        "UPDATE conversation_clusters SET label = ?2, summary = ?3, issues = ?4, conversations = ?5,
                                sources = ?6, updated_at = ?7
                         WHERE id = ?1",
                        params![
                            id.as_str(),
                            group.label.as_str(),
                            group.summary.as_str(),
                            issues,
                            group.conversations,
                            sources,
                            now
                        ],
                    )?;
                }
                (id.clone(), moved)
            }
            None => {
                let id = ids::new_id();
                c.execute(
                    "INSERT INTO conversation_clusters (id, organization_id, label, summary, icon, status, issues,
                                                        conversations, sources, created_at, updated_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                    params![
                        id.as_str(),
                        org_id,
                        group.label.as_str(),
                        group.summary.as_str(),
                        ICON,
                        ClusterStatus::Open,
                        issues,
                        group.conversations,
                        sources,
                        now
                    ],
                )?;
                let moved = moved_from(&id);
                (id, moved)
            }
        };
        for chunk in moved.chunks(CHUNK) {
            let mut args = Args::default();
            let cluster = args.arg(id.as_str());
            let list = args.list(chunk.iter().copied());
            c.execute(
                &format!("UPDATE conversation_issues SET cluster_id = {cluster} WHERE id IN ({list})"),
                args.values(),
            )?;
        }
    }
    let gone: Vec<&str> = existing
        .keys()
        .map(String::as_str)
        .filter(|id| !kept.contains(id))
        .collect();
    for chunk in gone.chunks(CHUNK) {
        let mut args = Args::default();
        let list = args.list(chunk.iter().copied());
        c.execute(
            &format!("DELETE FROM conversation_clusters WHERE id IN ({list})"),
            args.values(),
        )?;
    }
    c.execute(
        "UPDATE conversation_clusterings SET written = ?2 WHERE organization_id = ?1",
        params![org_id, number],
    )?;
    Ok(())
}

/// The Monday (00:00 UTC) of the week holding `at` (Unix ms). 1970-01-01 was a Thursday.
pub fn week_start(at: i64) -> i64 {
    let day = at.div_euclid(DAY_MS);
    let monday = day - (day + 3).rem_euclid(7);
    monday * DAY_MS
}

/// Fills in the weekly pulse and the tasks of clusters of one organization: two statements for
/// all of them.
pub(crate) fn complete(
    c: &mut dyn Conn,
    org_id: &str,
    clusters: &mut [Cluster],
    now: i64,
) -> StoreResult<()> {
    if clusters.is_empty() {
        return Ok(());
    }
    let first_week = week_start(now) - WEEK_MS * (PULSE_WEEKS as i64 - 1);
    let mut args = Args::default();
    let org = args.arg(org_id);
    let list = args.list(clusters.iter().map(|k| k.id.as_str()));
    let since = args.arg(first_week);
    let rows = c.query(
        &format!(
            "SELECT DISTINCT i.cluster_id, cv.id, cv.started_at FROM conversation_issues i
             JOIN conversations cv ON cv.organization_id = i.organization_id AND cv.id = i.conversation_id
             WHERE i.organization_id = {org} AND i.cluster_id IN ({list}) AND cv.started_at >= {since}"
        ),
        args.values(),
    )?;
    let mut pulses: HashMap<String, Vec<i64>> = HashMap::new();
    for row in rows {
        let (cluster, started_at): (String, i64) = (row.get(0)?, row.get(2)?);
        let week = usize::try_from((started_at - first_week) / WEEK_MS).unwrap_or(usize::MAX);
        if week < PULSE_WEEKS {
            pulses.entry(cluster).or_insert_with(|| vec![0; PULSE_WEEKS])[week] += 1;
        }
    }
    let mut args = Args::default();
    let org = args.arg(org_id);
    let list = args.list(clusters.iter().map(|k| k.id.as_str()));
    let rows = c.query(
        &format!(
            "SELECT cr.conversations_issues_cluster, cr.status, count(*) FROM change_requests cr
             JOIN spaces s ON s.id = cr.space_id
             WHERE cr.conversations_issues_cluster IN ({list}) AND s.organization_id = {org}
             GROUP BY cr.conversations_issues_cluster, cr.status"
        ),
        args.values(),
    )?;
    let mut tasks: HashMap<String, Tasks> = HashMap::new();
    for row in rows {
        let (cluster, status, n): (String, String, i64) = (row.get(0)?, row.get(1)?, row.get(2)?);
        let t = tasks.entry(cluster).or_default();
        t.total += n;
        match status.as_str() {
            "draft" => t.backlog += n,
            "open" => t.started += n,
            "merged" => t.completed += n,
            "archived" => t.cancelled += n,
            _ => {}
        }
    }
    for cluster in clusters {
        cluster.weekly_pulse = pulses.remove(&cluster.id).unwrap_or_else(|| vec![0; PULSE_WEEKS]);
        cluster.tasks = tasks.remove(&cluster.id).unwrap_or_default();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weeks_start_on_mondays_utc() {
        // 2026-12-07 was a Monday; 2026-12-13 a Sunday.
        let monday = clock::parse_rfc3339("2026-12-07T00:00:00Z").unwrap_or_default();
        let sunday_night = clock::parse_rfc3339("2026-12-13T23:59:59Z").unwrap_or_default();
        let next_monday = clock::parse_rfc3339("2026-12-14T00:00:00Z").unwrap_or_default();
        assert_eq!(week_start(monday), monday);
        assert_eq!(week_start(monday + 1), monday);
        assert_eq!(week_start(sunday_night), monday);
        assert_eq!(week_start(next_monday), next_monday);
        // Before 1970 too.
        let old_monday = clock::parse_rfc3339("1969-12-29T00:00:00Z").unwrap_or_default();
        assert_eq!(week_start(old_monday + 3 * DAY_MS), old_monday);
    }
}
