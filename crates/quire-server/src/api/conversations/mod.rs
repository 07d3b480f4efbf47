//! Conversations (the spec's "Conversations" table): ingest, the conversations, the issues found
//! in them and their clusters, plus a cluster by id and its status
//! (`quire_store::conversations`, `docs/conversations.md`).

pub mod wire;

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::conversations::{
    self, ClusterListing, ClusterSort, ClusterStatus, ConversationFilter, Input, InputPart, IssueFilter,
    NewConversation,
};
use quire_store::paging::{List, Order, Paging};
use quire_store::permissions::org;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::wire::{
    ClusterJson, ConversationDetailJson, ConversationJson, IssueItemJson, cluster_json, conversation_json,
    detail_json, issue_item_json,
};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{ConversationIssuePath, ConversationPath, ConversationsClusterPath, OrgPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_conversations, ingest_conversation))
        .routes(routes!(get_conversation))
        .routes(routes!(list_issues))
        .routes(routes!(get_issue))
        .routes(routes!(list_clusters))
        .routes(routes!(get_cluster, update_cluster))
}

const TAG: &str = "Conversations";

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ConversationsQuery {
    /// Only the conversations of this source (`api`, or an integration's name).
    source: Option<String>,
    /// `true`: only those whose analysis ended; `false`: only those still to be analysed.
    #[param(value_type = Option<bool>)]
    processed: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations",
    tag = TAG,
    summary = "List the organization's ingested conversations, newest first",
    params(OrgPath, Paging, ConversationsQuery),
    responses((status = 200, description = "The conversations.", body = List<ConversationJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_conversations(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
    QueryOf(query): QueryOf<ConversationsQuery>,
) -> ApiResult<axum::Json<List<ConversationJson>>> {
    let processed = match query.processed.as_deref() {
        None => None,
        Some("true") => Some(true),
        Some("false") => Some(false),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "`processed` must be true or false, not {other:?}"
            )));
        }
    };
    let wanted = ConversationFilter {
        source: query.source,
        processed,
    };
    let list = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::list(c, &org, &wanted, &paging),
        )
        .await?;
    Ok(axum::Json(list.map(|cv| conversation_json(&app.urls, &cv))))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct IngestMetadata {
    /// The conversation in the support tool (an http or https URL).
    url: Option<String>,
    /// At most 50 string values.
    attributes: Option<BTreeMap<String, String>>,
    /// When the conversation took place (ISO 8601); the weekly pulse of clusters counts by it.
    #[serde(rename = "createdAt")]
    created_at: Option<String>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct IngestPart {
    /// `message`.
    #[serde(rename = "type")]
    kind: String,
    /// `user`, `assistant` or `agent`; questions are taken from the users' messages.
    role: String,
    /// At most 32 KiB (256 KiB for all parts together).
    body: String,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct IngestConversation {
    /// The conversation's id in the sender's system: ingesting the same id again replaces it.
    id: String,
    metadata: Option<IngestMetadata>,
    subject: Option<String>,
    /// 1 to 500 messages.
    parts: Vec<IngestPart>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/conversations",
    tag = TAG,
    summary = "Ingest a conversation",
    description = "Idempotent by `id`: a conversation ingested again replaces the earlier one and is analysed again. The analysis (questions the documentation does not answer, then clusters) runs in the background; `processedAt` is set when it ends.",
    params(OrgPath),
    request_body = IngestConversation,
    responses((status = 204, description = "Ingested; its analysis is queued.")),
    security(("token" = ["conversations:ingest"]))
)]
async fn ingest_conversation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    Json(body): Json<IngestConversation>,
) -> ApiResult<StatusCode> {
    let metadata = body.metadata.unwrap_or(IngestMetadata {
        url: None,
        attributes: None,
        created_at: None,
    });
    let input = Input {
        id: body.id,
        subject: body.subject,
        url: metadata.url,
        attributes: metadata.attributes,
        created_at: metadata.created_at,
        parts: body
            .parts
            .into_iter()
            .map(|p| InputPart {
                kind: p.kind,
                role: p.role,
                body: p.body,
            })
            .collect(),
    };
    let new = NewConversation::check(input)?;
    app.db
        .write_as::<org::IngestConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::ingest(c, &org, &caller.user_id, &new),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations/{conversationId}",
    tag = TAG,
    summary = "Get a conversation with its messages",
    params(ConversationPath),
    responses((status = 200, description = "The conversation.", body = ConversationDetailJson)),
    security(("token" = ["org:read"]))
)]
async fn get_conversation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ConversationPath>,
) -> ApiResult<axum::Json<ConversationDetailJson>> {
    let id = path.conversation_id;
    let detail = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::get(c, &org, &id),
        )
        .await?;
    Ok(axum::Json(detail_json(&app.urls, &detail)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct IssuesQuery {
    /// Only the issues of this cluster.
    cluster: Option<String>,
    /// Only the issues of this conversation.
    conversation: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations-issues",
    tag = TAG,
    summary = "List the questions the documentation does not answer, newest first",
    params(OrgPath, Paging, IssuesQuery),
    responses((status = 200, description = "The issues with their conversations.", body = List<IssueItemJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_issues(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
    QueryOf(query): QueryOf<IssuesQuery>,
) -> ApiResult<axum::Json<List<IssueItemJson>>> {
    let filter = IssueFilter {
        cluster: query.cluster,
        conversation: query.conversation,
    };
    let list = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::issues(c, &org, &caller.user_id, &filter, &paging),
        )
        .await?;
    Ok(axum::Json(list.map(|item| issue_item_json(&app.urls, &item))))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations-issues/{issueId}",
    tag = TAG,
    summary = "Get an issue with its conversation",
    params(ConversationIssuePath),
    responses((status = 200, description = "The issue.", body = IssueItemJson)),
    security(("token" = ["org:read"]))
)]
async fn get_issue(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ConversationIssuePath>,
) -> ApiResult<axum::Json<IssueItemJson>> {
    let id = path.issue_id;
    let item = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::issue(c, &org, &caller.user_id, &id),
        )
        .await?;
    Ok(axum::Json(issue_item_json(&app.urls, &item)))
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ClustersQuery {
    /// `desc` (the default) or `asc`.
    #[param(inline, value_type = Option<Order>)]
    #[serde(default)]
    order: Order,
    /// `updatedAt` (the default), `createdAt` or `issues`.
    sort: Option<String>,
    /// Only the clusters of this status: `open` or `resolved`.
    status: Option<String>,
}

fn cluster_status(field: &str, text: &str) -> Result<ClusterStatus, ApiError> {
    ClusterStatus::parse(text)
        .ok_or_else(|| ApiError::bad_request(format!("`{field}` must be open or resolved, not {text:?}")))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations-clusters",
    tag = TAG,
    summary = "List the clusters of issues",
    params(OrgPath, Paging, ClustersQuery),
    responses((status = 200, description = "The clusters.", body = List<ClusterJson>)),
    security(("token" = ["org:read"]))
)]
async fn list_clusters(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
    QueryOf(query): QueryOf<ClustersQuery>,
) -> ApiResult<axum::Json<List<ClusterJson>>> {
    let sort = match query.sort.as_deref() {
        None => ClusterSort::UpdatedAt,
        Some(text) => ClusterSort::parse(text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`sort` must be updatedAt, createdAt or issues, not {text:?}"
            ))
        })?,
    };
    let status = query
        .status
        .as_deref()
        .map(|s| cluster_status("status", s))
        .transpose()?;
    let listing = ClusterListing {
        sort,
        order: query.order,
        status,
    };
    let list = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::list_clusters(c, &org, listing, &paging),
        )
        .await?;
    Ok(axum::Json(list.map(|k| cluster_json(&app.urls, &k))))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
    tag = TAG,
    summary = "Get a cluster of issues",
    params(ConversationsClusterPath),
    responses((status = 200, description = "The cluster.", body = ClusterJson)),
    security(("token" = ["org:read"]))
)]
async fn get_cluster(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ConversationsClusterPath>,
) -> ApiResult<axum::Json<ClusterJson>> {
    let id = path.cluster_id;
    let cluster = app
        .db
        .read_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::cluster(c, &org, &id),
        )
        .await?;
    Ok(axum::Json(cluster_json(&app.urls, &cluster)))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateCluster {
    /// `open` or `resolved`.
    status: String,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
    tag = TAG,
    summary = "Set a cluster open or resolved",
    params(ConversationsClusterPath),
    request_body = UpdateCluster,
    responses((status = 200, description = "The cluster.", body = ClusterJson)),
    security(("token" = ["org:write"]))
)]
async fn update_cluster(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<ConversationsClusterPath>,
    Json(body): Json<UpdateCluster>,
) -> ApiResult<axum::Json<ClusterJson>> {
    let status = cluster_status("status", &body.status)?;
    let id = path.cluster_id;
    let cluster = app
        .db
        .write_as::<org::TriageConversations, _>(
            caller.user_id.clone(),
            path.organization_id,
            move |c, org| conversations::set_status(c, &org, &caller.user_id, &id, status),
        )
        .await?;
    Ok(axum::Json(cluster_json(&app.urls, &cluster)))
}
