//! Conversations, issues and clusters as stored.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::db::{DbError, Row};

crate::wire_enum! {
    /// Who wrote a part of a conversation.
    pub enum Role {
        User = "user",
        Assistant = "assistant",
        Agent = "agent",
    }
}

crate::wire_enum! {
    /// Where a docs team is with a cluster: `resolved` when they set it so, or when a change
    /// request that references it is merged.
    pub enum ClusterStatus {
        Open = "open",
        Resolved = "resolved",
    }
}

/// A message of a conversation (the only kind of part there is: `type` is `message`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    pub role: Role,
    pub body: String,
}

/// A conversation as last ingested.
#[derive(Clone, Debug)]
pub struct Conversation {
    pub org_id: String,
    pub id: String,
    pub subject: Option<String>,
    /// Who sent it: the integration whose installation ingested it, else `api`.
    pub source: String,
    /// Where the conversation is in the support tool (`metadata.url`).
    pub source_url: Option<String>,
    pub attributes: BTreeMap<String, String>,
    /// The conversation's own date (`metadata.createdAt`, else its first ingest).
    pub started_at: i64,
    pub created_at: i64,
    pub ingested_at: i64,
    pub processed_at: Option<i64>,
}

crate::columns! {
    /// The columns [`Conversation::from_row`] reads, with the table aliased `cv`.
    pub struct ConversationCols of "conversations" {
        org_id: "cv.organization_id",
        id: "cv.id",
        subject: "cv.subject",
        source: "cv.source",
        source_url: "cv.source_url",
        attributes: "cv.attributes",
        started_at: "cv.started_at",
        created_at: "cv.created_at",
        ingested_at: "cv.ingested_at",
        processed_at: "cv.processed_at",
    }
}

impl Conversation {
    pub fn from_row(row: &Row) -> Result<Conversation, DbError> {
        Conversation::from_row_at(row, ConversationCols::AT)
    }

    pub fn from_row_at(row: &Row, at: ConversationCols) -> Result<Conversation, DbError> {
        let id: String = row.col(at.id)?;
        let attributes: String = row.col(at.attributes)?;
        let attributes = serde_json::from_str(&attributes)
            .map_err(|e| DbError::stored(format_args!("attributes of conversation {id:?}"), e))?;
        Ok(Conversation {
            org_id: row.col(at.org_id)?,
            subject: row.col(at.subject)?,
            source: row.col(at.source)?,
            source_url: row.col(at.source_url)?,
            attributes,
            started_at: row.col(at.started_at)?,
            created_at: row.col(at.created_at)?,
            ingested_at: row.col(at.ingested_at)?,
            processed_at: row.col(at.processed_at)?,
            id,
        })
    }
}

/// A conversation with its parts.
#[derive(Clone, Debug)]
pub struct ConversationDetail {
    pub conversation: Conversation,
    pub parts: Vec<Part>,
}

/// A page the analysis found closest to a question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosePage {
    pub space: String,
    pub page: String,
    pub title: String,
    /// The share of the question's key terms its best section has, in percent.
    pub coverage: i64,
}

/// A question of a conversation that the documentation does not answer well.
#[derive(Clone, Debug)]
pub struct Issue {
    pub id: String,
    pub org_id: String,
    pub conversation_id: String,
    pub title: String,
    pub summary: String,
    pub pages: Vec<ClosePage>,
    /// The best share of the question's key terms any section had, in percent.
    pub coverage: i64,
    pub cluster_id: Option<String>,
    pub created_at: i64,
}

crate::columns! {
    /// The columns [`Issue::from_row`] reads, with the table aliased `i`.
    pub struct IssueCols of "conversation_issues" {
        id: "i.id",
        org_id: "i.organization_id",
        conversation_id: "i.conversation_id",
        title: "i.title",
        summary: "i.summary",
        pages: "i.pages",
        coverage: "i.coverage",
        cluster_id: "i.cluster_id",
        created_at: "i.created_at",
    }
}

impl Issue {
    pub fn from_row(row: &Row) -> Result<Issue, DbError> {
        const I: IssueCols = IssueCols::AT;
        let id: String = row.col(I.id)?;
        let pages: String = row.col(I.pages)?;
        let pages = serde_json::from_str(&pages)
            .map_err(|e| DbError::stored(format_args!("pages of conversation issue {id:?}"), e))?;
        Ok(Issue {
            org_id: row.col(I.org_id)?,
            conversation_id: row.col(I.conversation_id)?,
            title: row.col(I.title)?,
            summary: row.col(I.summary)?,
            pages,
            coverage: row.col(I.coverage)?,
            cluster_id: row.col(I.cluster_id)?,
            created_at: row.col(I.created_at)?,
            id,
        })
    }
}

/// An issue with the conversation it came from (the items of issue lists).
#[derive(Clone, Debug)]
pub struct IssueItem {
    pub issue: Issue,
    pub conversation: Conversation,
}

/// How many change requests reference a cluster, by where they are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tasks {
    pub total: i64,
    /// Drafts.
    pub backlog: i64,
    /// Open.
    pub started: i64,
    /// Merged.
    pub completed: i64,
    /// Archived.
    pub cancelled: i64,
}

/// A group of alike issues.
#[derive(Clone, Debug)]
pub struct Cluster {
    pub id: String,
    pub org_id: String,
    pub label: String,
    pub summary: String,
    pub icon: String,
    pub status: ClusterStatus,
    pub issues: i64,
    pub conversations: i64,
    /// Conversations by source.
    pub sources: BTreeMap<String, i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Conversations of each of the past 12 weeks (Mondays, UTC), oldest first.
    pub weekly_pulse: Vec<i64>,
    pub tasks: Tasks,
}

crate::columns! {
    /// The columns [`Cluster::from_row`] reads, with the table aliased `k`.
    pub struct ClusterCols of "conversation_clusters" {
        id: "k.id",
        org_id: "k.organization_id",
        label: "k.label",
        summary: "k.summary",
        icon: "k.icon",
        status: "k.status",
        issues: "k.issues",
        conversations: "k.conversations",
        sources: "k.sources",
        created_at: "k.created_at",
        updated_at: "k.updated_at",
    }
}

impl Cluster {
    /// The stored row; the pulse and the tasks are read apart (`clusters::complete`).
    pub fn from_row(row: &Row) -> Result<Cluster, DbError> {
        const K: ClusterCols = ClusterCols::AT;
        let id: String = row.col(K.id)?;
        let sources: String = row.col(K.sources)?;
        let sources = serde_json::from_str(&sources)
            .map_err(|e| DbError::stored(format_args!("sources of cluster {id:?}"), e))?;
        Ok(Cluster {
            org_id: row.col(K.org_id)?,
            label: row.col(K.label)?,
            summary: row.col(K.summary)?,
            icon: row.col(K.icon)?,
            status: row.col(K.status)?,
            issues: row.col(K.issues)?,
            conversations: row.col(K.conversations)?,
            sources,
            created_at: row.col(K.created_at)?,
            updated_at: row.col(K.updated_at)?,
            weekly_pulse: Vec::new(),
            tasks: Tasks::default(),
            id,
        })
    }
}
