//! Conversations as answered: the spec's `Conversation`, conversation detail,
//! `ConversationIssue` (with the closest pages found) and issues cluster (with its `status`).
//! GitBook's published schema has none of them.

use std::collections::BTreeMap;

use quire_store::clock;
use quire_store::conversations::{
    ClosePage, Cluster, ClusterStatus, Conversation, ConversationDetail, Issue, IssueItem, Role,
};
use serde::Serialize;

use crate::urls::Urls;

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Conversation)]
#[serde(rename_all = "camelCase")]
pub struct ConversationJson {
    #[schema(value_type = String, example = "conversation")]
    pub object: &'static str,
    /// The id its sender gave it.
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The conversation's date (`metadata.createdAt`, else when it was first ingested).
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    /// When its latest analysis ended; absent while it is being analysed.
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub processed_at: Option<i64>,
    /// Who sent it: the integration whose installation ingested it, else `api`.
    pub source: String,
    pub urls: ConversationUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ConversationUrls {
    pub location: String,
    /// The conversation in the support tool (`metadata.url`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

pub fn conversation_json(urls: &Urls, cv: &Conversation) -> ConversationJson {
    ConversationJson {
        object: "conversation",
        id: cv.id.clone(),
        subject: cv.subject.clone(),
        created_at: cv.started_at,
        processed_at: cv.processed_at,
        source: cv.source.clone(),
        urls: ConversationUrls {
            location: urls.api(&format!("/orgs/{}/conversations/{}", cv.org_id, cv.id)),
            source: cv.source_url.clone(),
        },
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationDetail)]
pub struct ConversationDetailJson {
    pub conversation: ConversationJson,
    pub parts: Vec<PartJson>,
    pub metadata: MetadataJson,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationPart)]
pub struct PartJson {
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "message")]
    pub kind: &'static str,
    pub role: Role,
    pub body: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationMetadata)]
#[serde(rename_all = "camelCase")]
pub struct MetadataJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    pub attributes: BTreeMap<String, String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
}

pub fn detail_json(urls: &Urls, detail: &ConversationDetail) -> ConversationDetailJson {
    let cv = &detail.conversation;
    ConversationDetailJson {
        conversation: conversation_json(urls, cv),
        parts: detail
            .parts
            .iter()
            .map(|p| PartJson {
                kind: "message",
                role: p.role,
                body: p.body.clone(),
            })
            .collect(),
        metadata: MetadataJson {
            url: cv.source_url.clone(),
            attributes: cv.attributes.clone(),
            created_at: cv.started_at,
        },
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationIssue)]
#[serde(rename_all = "camelCase")]
pub struct IssueJson {
    #[schema(value_type = String, example = "conversation-issue")]
    pub object: &'static str,
    pub id: String,
    /// The question, as the user asked it.
    pub title: String,
    pub summary: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    /// When its conversation was last ingested.
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub ingested_at: i64,
    /// The conversation's id.
    pub conversation: String,
    /// The cluster's id; absent until the issue is clustered (moments after its analysis).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The best share of the question's key terms that a section of the documentation holds,
    /// in percent (a question is answered from 70).
    pub coverage: i64,
    /// The closest pages found, closest first.
    pub pages: Vec<ClosePageJson>,
    pub urls: IssueUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct IssueUrls {
    pub location: String,
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationIssuePage)]
pub struct ClosePageJson {
    pub space: String,
    pub page: String,
    pub title: String,
    /// The share of the question's key terms its best section holds, in percent.
    pub coverage: i64,
    pub urls: IssueUrls,
}

fn close_page_json(urls: &Urls, page: &ClosePage) -> ClosePageJson {
    ClosePageJson {
        space: page.space.clone(),
        page: page.page.clone(),
        title: page.title.clone(),
        coverage: page.coverage,
        urls: IssueUrls {
            location: urls.api(&format!("/spaces/{}/content/page/{}", page.space, page.page)),
        },
    }
}

pub fn issue_json(urls: &Urls, issue: &Issue, conversation: &Conversation) -> IssueJson {
    IssueJson {
        object: "conversation-issue",
        id: issue.id.clone(),
        title: issue.title.clone(),
        summary: issue.summary.clone(),
        created_at: issue.created_at,
        ingested_at: conversation.ingested_at,
        conversation: issue.conversation_id.clone(),
        cluster: issue.cluster_id.clone(),
        coverage: issue.coverage,
        pages: issue.pages.iter().map(|p| close_page_json(urls, p)).collect(),
        urls: IssueUrls {
            location: urls.api(&format!(
                "/orgs/{}/conversations-issues/{}",
                issue.org_id, issue.id
            )),
        },
    }
}

/// An item of issue lists, and the answer for one issue.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationIssueItem)]
pub struct IssueItemJson {
    pub issue: IssueJson,
    pub conversation: ConversationJson,
}

pub fn issue_item_json(urls: &Urls, item: &IssueItem) -> IssueItemJson {
    IssueItemJson {
        issue: issue_json(urls, &item.issue, &item.conversation),
        conversation: conversation_json(urls, &item.conversation),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = ConversationIssuesCluster)]
#[serde(rename_all = "camelCase")]
pub struct ClusterJson {
    #[schema(value_type = String, example = "issues-cluster")]
    pub object: &'static str,
    pub id: String,
    /// The cluster's most central question.
    pub label: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    /// When its issues or its status last changed.
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    /// A GitBook icon name.
    pub icon: String,
    pub summary: String,
    /// `open`, or `resolved` (set by the docs team, or by merging a change request that
    /// references the cluster).
    pub status: ClusterStatus,
    /// Conversations of each of the past 12 weeks (weeks from Monday, UTC), oldest first; the
    /// last is the current week.
    pub weekly_pulse: Vec<i64>,
    /// Conversations by source.
    pub sources: BTreeMap<String, i64>,
    pub stats: ClusterStatsJson,
    pub urls: ClusterUrls,
}

/// Counts of the cluster's issues and conversations, and of the change requests that reference
/// it (tasks): drafts are the backlog, open ones started, merged ones completed, archived ones
/// cancelled.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatsJson {
    pub issues: i64,
    pub conversations: i64,
    pub tasks_total: i64,
    pub tasks_backlog: i64,
    pub tasks_started: i64,
    pub tasks_completed: i64,
    pub tasks_cancelled: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ClusterUrls {
    pub location: String,
    pub app: String,
}

pub fn cluster_json(urls: &Urls, k: &Cluster) -> ClusterJson {
    ClusterJson {
        object: "issues-cluster",
        id: k.id.clone(),
        label: k.label.clone(),
        created_at: k.created_at,
        updated_at: k.updated_at,
        icon: k.icon.clone(),
        summary: k.summary.clone(),
        status: k.status,
        weekly_pulse: k.weekly_pulse.clone(),
        sources: k.sources.clone(),
        stats: ClusterStatsJson {
            issues: k.issues,
            conversations: k.conversations,
            tasks_total: k.tasks.total,
            tasks_backlog: k.tasks.backlog,
            tasks_started: k.tasks.started,
            tasks_completed: k.tasks.completed,
            tasks_cancelled: k.tasks.cancelled,
        },
        urls: ClusterUrls {
            location: urls.api(&format!("/orgs/{}/conversations-clusters/{}", k.org_id, k.id)),
            app: urls.app(&format!("/o/{}/conversations/clusters/{}", k.org_id, k.id)),
        },
    }
}
