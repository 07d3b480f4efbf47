//! A change request as answered.

use std::collections::HashMap;

use quire_store::change_requests::{ChangeRequest, Status};
use quire_store::clock;
use quire_store::db::DbError;
use quire_store::users::{User, WithUsers};
use serde::Serialize;

use crate::api::users::UserJson;
use crate::error::ApiResult;
use crate::urls::Urls;

/// The API URL of a change request.
pub fn location(urls: &Urls, cr: &ChangeRequest) -> String {
    urls.api(&format!("/spaces/{}/change-requests/{}", cr.space_id, cr.id))
}

/// The wire object; `users` holds the creator and merger. An error when the stored
/// description or conflicts do not decode.
pub fn change_request_json(
    urls: &Urls,
    cr: &ChangeRequest,
    users: &HashMap<String, User>,
) -> Result<ChangeRequestJson, DbError> {
    let user = |id: &str| crate::api::users::wire::user_or_deleted(urls, users, id);
    Ok(ChangeRequestJson {
        object: "change-request",
        id: cr.id.clone(),
        number: cr.number,
        status: cr.status,
        subject: cr.subject.clone(),
        description: cr.stored_description()?,
        created_by: user(&cr.created_by),
        created_at: cr.created_at,
        updated_at: cr.updated_at,
        merged_by: cr.merged_by.as_deref().map(user),
        merged_at: cr.merged_at,
        space: cr.space_id.clone(),
        revision: cr.revision.clone(),
        revision_initial: cr.revision_initial.clone(),
        revision_merged_ancestor: cr.revision_merged_ancestor.clone(),
        revision_merged: cr.revision_merged.clone(),
        comments: cr.comments,
        outdated: cr.outdated(),
        conflicts: cr.stored_conflicts()?.map(serde_json::Value::Array),
        conversations_issues_cluster: cr.issues_cluster.clone(),
        urls: ChangeRequestUrls {
            app: urls.app(&format!(
                "/o/{}/s/{}/~/changes/{}",
                cr.org_id, cr.space_id, cr.number
            )),
            location: location(urls, cr),
        },
    })
}

/// A change request loaded with its users, as answered.
pub fn cr_json(urls: &Urls, cr: &WithUsers<ChangeRequest>) -> ApiResult<ChangeRequestJson> {
    Ok(change_request_json(urls, &cr.value, &cr.users)?)
}

/// Change requests loaded with their users, as answered.
pub fn crs_json(urls: &Urls, crs: &WithUsers<Vec<ChangeRequest>>) -> ApiResult<Vec<ChangeRequestJson>> {
    Ok(crs
        .value
        .iter()
        .map(|cr| change_request_json(urls, cr, &crs.users))
        .collect::<Result<_, _>>()?)
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestJson {
    pub object: &'static str,
    pub id: String,
    pub number: i64,
    pub status: Status,
    pub subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<serde_json::Value>,
    pub created_by: UserJson,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<UserJson>,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<i64>,
    pub space: String,
    pub revision: String,
    pub revision_initial: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_merged_ancestor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revision_merged: Option<String>,
    pub comments: i64,
    pub outdated: bool,
    /// quire: the conflicts an update left, until every conflicting page is written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflicts: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conversations_issues_cluster: Option<String>,
    pub urls: ChangeRequestUrls,
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct ChangeRequestUrls {
    pub app: String,
    pub location: String,
}
