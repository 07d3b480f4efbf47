//! The analysis of a conversation (the `conversation_analyse` job, one per conversation,
//! queued by each ingest): the questions its users asked (`quire_content::conversations`),
//! each searched for in the organization's documentation with quire's search, and judged by
//! how much of the question the best sections found cover. A question the documentation does
//! not answer well becomes an issue, with the closest pages found.

use std::collections::{BTreeMap, HashMap};

use quire_content::conversations::{self as text, Question};
use serde::Deserialize;

use super::model::{ClosePage, Role};
use super::{ConversationDetail, clusters, load_detail};
use crate::db::fulltext::SECTIONS_PER_KEY;
use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::search::any_term::{self, Section};
use crate::{Store, clock, ids, jobs, params};

pub const ANALYSE_JOB: &str = "conversation_analyse";

/// A question is answered when some section found holds at least this share of its key terms.
pub const ANSWERED_COVERAGE: f64 = 0.7;
/// Sections read from the search of each question, best first.
pub const SECTIONS_SEARCHED: i64 = 20;
/// Closest pages kept with an issue.
pub const CLOSE_PAGES: usize = 3;
/// Most questions taken from one conversation.
pub const MAX_QUESTIONS: usize = 20;
/// Longest issue title, in characters.
pub const MAX_TITLE_CHARS: usize = 120;

fn job_key(org_id: &str, conversation_id: &str) -> String {
    format!("conversation-analyse:{org_id}:{conversation_id}")
}

/// Queues the conversation's analysis now; an analysis already queued is moved to now, and
/// one under way is run again after it (it reads the version it analyses).
pub(crate) fn schedule(c: &mut dyn Conn, org_id: &str, conversation_id: &str, now: i64) -> StoreResult<()> {
    let payload = serde_json::json!({"organization": org_id, "conversation": conversation_id});
    jobs::enqueue(
        c,
        ANALYSE_JOB,
        &payload,
        now,
        Some(&job_key(org_id, conversation_id)),
    )
}

#[derive(Deserialize)]
struct Payload {
    organization: String,
    conversation: String,
}

/// A question the documentation does not answer well.
#[derive(Clone, Debug)]
struct Unanswered {
    key: String,
    title: String,
    summary: String,
    terms: Vec<String>,
    pages: Vec<ClosePage>,
    coverage: i64,
}

/// What an analysis found in one version of a conversation.
struct Analysis {
    version: i64,
    issues: Vec<Unanswered>,
}

pub async fn run(store: &Store, payload: &serde_json::Value) -> StoreResult<Option<i64>> {
    let p =
        Payload::deserialize(payload).map_err(|e| StoreError::internal(format!("analysis payload: {e}")))?;
    let (org_id, conversation_id) = (p.organization.clone(), p.conversation.clone());
    let analysis = store
        .db
        .read_blocking(move |c| analyse(c, &org_id, &conversation_id))
        .await?;
    let Some(analysis) = analysis else {
        return Ok(None);
    };
    store
        .db
        .write(move |c| record(c, &p.organization, &p.conversation, &analysis))
        .await?;
    Ok(None)
}

/// The version of the conversation read, and its unanswered questions; None when it is gone.
fn analyse(c: &mut dyn Conn, org_id: &str, conversation_id: &str) -> StoreResult<Option<Analysis>> {
    let Some((detail, version)) = load_detail(c, org_id, conversation_id)? else {
        return Ok(None);
    };
    let questions = questions_of(&detail);
    let spaces = any_term::spaces_of(c, org_id)?;
    let mut issues = Vec::new();
    for question in questions {
        let sections = any_term::sections(c, org_id, &spaces, &question.terms, SECTIONS_SEARCHED)?;
        let judged = judge(&question, &sections);
        if judged.best >= ANSWERED_COVERAGE {
            continue;
        }
        let pages = close_pages(c, &judged.pages)?;
        issues.push(unanswered(&detail, &question, &judged, pages));
    }
    Ok(Some(Analysis { version, issues }))
}

/// The questions of the conversation's `user` messages, each once, at most [`MAX_QUESTIONS`].
fn questions_of(detail: &ConversationDetail) -> Vec<Question> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for part in detail.parts.iter().filter(|p| p.role == Role::User) {
        for question in text::questions(&part.body) {
            if out.len() >= MAX_QUESTIONS {
                return out;
            }
            if seen.insert(question.terms.join(" ")) {
                out.push(question);
            }
        }
    }
    out
}

/// How well the sections found cover a question: the best share of its terms in one section,
/// and each page's best, best first.
struct Judged {
    best: f64,
    /// (space, page, coverage), best first.
    pages: Vec<(String, String, f64)>,
}

fn judge(question: &Question, sections: &[Section]) -> Judged {
    let mut best = 0.0f64;
    let mut pages: Vec<(String, String, f64)> = Vec::new();
    for section in sections {
        let covered = text::coverage(&question.terms, &section.text);
        best = best.max(covered);
        match pages
            .iter_mut()
            .find(|(s, p, _)| *s == section.space && *p == section.page)
        {
            Some(page) => page.2 = page.2.max(covered),
            None => pages.push((section.space.clone(), section.page.clone(), covered)),
        }
    }
    // Stable: pages of equal coverage keep the search's order.
    pages.sort_by(|a, b| b.2.total_cmp(&a.2));
    Judged { best, pages }
}

/// The closest pages with their titles (the text of each page's own fields in the index).
fn close_pages(c: &mut dyn Conn, pages: &[(String, String, f64)]) -> StoreResult<Vec<ClosePage>> {
    let pages = &pages[..pages.len().min(CLOSE_PAGES)];
    if pages.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = Args::default();
    let list = args.list(pages.iter().map(|p| p.1.as_str()));
    let rows = c.query(
        &format!(
            "SELECT p.space_id, p.page_id, s.title FROM search_pages p
             JOIN search_sections s ON s.id = p.key * {SECTIONS_PER_KEY}
             WHERE p.page_id IN ({list})"
        ),
        args.values(),
    )?;
    let mut titles = HashMap::new();
    for row in rows {
        let (space, page, title): (String, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        titles.insert((space, page), title);
    }
    Ok(pages
        .iter()
        .map(|(space, page, coverage)| ClosePage {
            title: titles
                .get(&(space.clone(), page.clone()))
                .cloned()
                .unwrap_or_default(),
            space: space.clone(),
            page: page.clone(),
            coverage: percent(*coverage),
        })
        .collect())
}

fn percent(share: f64) -> i64 {
    // A share is within 0..=1, so this is within 0..=100.
    (share * 100.0).round() as i64
}

fn unanswered(
    detail: &ConversationDetail,
    question: &Question,
    judged: &Judged,
    pages: Vec<ClosePage>,
) -> Unanswered {
    let coverage = percent(judged.best);
    let mut summary = match &detail.conversation.subject {
        Some(subject) if !subject.trim().is_empty() => {
            format!(
                "Asked in “{}”: {}",
                super::cut(subject.trim(), 120),
                question.text
            )
        }
        _ => format!("Asked: {}", question.text),
    };
    // No page titles here: the pages are shown apart, to those who may see their spaces.
    if pages.is_empty() {
        summary += " The documentation has nothing on it.";
    } else {
        summary += &format!(" The closest documentation covers {coverage}% of it.");
    }
    Unanswered {
        key: question.terms.join(" "),
        title: super::cut(&question.text, MAX_TITLE_CHARS),
        summary,
        terms: question.terms.clone(),
        pages,
        coverage,
    }
}

/// Records what an analysis found, if the conversation is still the version it read: issues
/// asked again keep their id, new ones are added, those no longer asked are removed; the
/// conversation is processed. When the issues changed, the organization's clustering is queued.
fn record(c: &mut dyn Conn, org_id: &str, conversation_id: &str, analysis: &Analysis) -> StoreResult<()> {
    let version: Option<i64> = c.query_scalar(
        "SELECT version FROM conversations WHERE organization_id = ?1 AND id = ?2",
        params![org_id, conversation_id],
    )?;
    if version != Some(analysis.version) {
        // Gone, or ingested again: the analysis of the new version is queued.
        return Ok(());
    }
    // Before a clustering run starts, every analysis that changed issues has either committed
    // or will queue another run (`clusters::run`).
    super::lock(c, org_id, true)?;
    let mut existing: BTreeMap<String, String> = BTreeMap::new();
    for row in c.query(
        "SELECT question_key, id FROM conversation_issues WHERE organization_id = ?1 AND conversation_id = ?2",
        params![org_id, conversation_id],
    )? {
        existing.insert(row.get(0)?, row.get(1)?);
    }
    let now = clock::now_ms();
    let mut changed = false;
    for issue in &analysis.issues {
        let pages = serde_json::to_string(&issue.pages).map_err(|e| StoreError::internal(e.to_string()))?;
        match existing.remove(&issue.key) {
            Some(id) => {
                c.execute(
                    "UPDATE conversation_issues SET title = ?2, summary = ?3, terms = ?4, pages = ?5, coverage = ?6
                     WHERE id = ?1",
                    params![
                        id,
                        issue.title.as_str(),
                        issue.summary.as_str(),
                        issue.terms.join(" "),
                        pages,
                        issue.coverage
                    ],
                )?;
            }
            None => {
                changed = true;
                c.execute(
                    "INSERT INTO conversation_issues (id, organization_id, conversation_id, question_key, title, summary,
                                                      terms, pages, coverage, created_at)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                    params![
                        ids::new_id(),
                        org_id,
                        conversation_id,
                        issue.key.as_str(),
                        issue.title.as_str(),
                        issue.summary.as_str(),
                        issue.terms.join(" "),
                        pages,
                        issue.coverage,
                        now
                    ],
                )?;
            }
        }
    }
    if !existing.is_empty() {
        changed = true;
        let mut args = Args::default();
        let list = args.list(existing.values().map(String::as_str));
        c.execute(
            &format!("DELETE FROM conversation_issues WHERE id IN ({list})"),
            args.values(),
        )?;
    }
    c.execute(
        "UPDATE conversations SET processed_at = ?3 WHERE organization_id = ?1 AND id = ?2",
        params![org_id, conversation_id, now],
    )?;
    if changed {
        clusters::schedule(c, org_id, now)?;
    }
    Ok(())
}
