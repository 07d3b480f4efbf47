//! A change request as stored and as sent.

use std::collections::HashMap;

use serde::Serialize;

use crate::clock;
use crate::db::{Conn, DbError, Row};
use crate::error::{ApiError, ApiResult};
use crate::urls::Urls;
use crate::users::{User, UserJson};

#[derive(Clone, Debug)]
pub struct ChangeRequest {
    pub id: String,
    pub space_id: String,
    pub org_id: String,
    pub number: i64,
    pub status: String,
    pub subject: String,
    pub description: Option<String>,
    pub created_by: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub revision_initial: String,
    pub revision: String,
    pub revision_merged_ancestor: Option<String>,
    pub revision_merged: Option<String>,
    pub merged_by: Option<String>,
    pub merged_at: Option<i64>,
    pub conflicts: Option<String>,
    /// The space's current main revision, to tell whether the change request is outdated.
    pub space_revision: Option<String>,
    pub comments: i64,
    pub issues_cluster: Option<String>,
}

/// The columns [`ChangeRequest::from_row`] reads, with `change_requests cr` joined to `spaces s`.
pub const COLUMNS: &str = "cr.id, cr.space_id, s.organization_id, cr.number, cr.status, cr.subject, cr.description,
     cr.created_by, cr.created_at, cr.updated_at, cr.revision_initial, cr.revision, cr.revision_merged_ancestor,
     cr.revision_merged, cr.merged_by, cr.merged_at, cr.conflicts, s.revision_id,
     (SELECT count(*) FROM comments x WHERE x.change_request_id = cr.id AND x.status = 'open'),
     cr.conversations_issues_cluster";

pub const CR_COLUMNS: usize = 20;

/// The FROM clause matching [`COLUMNS`].
pub const FROM: &str = "change_requests cr JOIN spaces s ON s.id = cr.space_id";

impl ChangeRequest {
    /// The conflicts recorded by its last update, as stored (a JSON list); an error, not
    /// none, when they cannot be read.
    pub fn stored_conflicts(&self) -> Result<Option<Vec<serde_json::Value>>, crate::error::ApiError> {
        self.conflicts
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    crate::error::ApiError::internal(format!(
                        "change request {}: unreadable conflicts: {e}",
                        self.id
                    ))
                })
            })
            .transpose()
    }

    pub fn from_row(row: &Row) -> Result<ChangeRequest, DbError> {
        Ok(ChangeRequest {
            id: row.get(0)?,
            space_id: row.get(1)?,
            org_id: row.get(2)?,
            number: row.get(3)?,
            status: row.get(4)?,
            subject: row.get(5)?,
            description: row.get(6)?,
            created_by: row.get(7)?,
            created_at: row.get(8)?,
            updated_at: row.get(9)?,
            revision_initial: row.get(10)?,
            revision: row.get(11)?,
            revision_merged_ancestor: row.get(12)?,
            revision_merged: row.get(13)?,
            merged_by: row.get(14)?,
            merged_at: row.get(15)?,
            conflicts: row.get(16)?,
            space_revision: row.get(17)?,
            comments: row.get(18)?,
            issues_cluster: row.get(19)?,
        })
    }

    /// The main revision this change request is based on: the last one brought in by `update`,
    /// else the one it started from.
    pub fn base_revision(&self) -> &str {
        self.revision_merged_ancestor
            .as_deref()
            .unwrap_or(&self.revision_initial)
    }

    /// True exactly when main has moved past the revision the change request is based on.
    pub fn outdated(&self) -> bool {
        self.status != "merged"
            && self
                .space_revision
                .as_deref()
                .is_some_and(|r| r != self.base_revision())
    }

    pub fn is_writable(&self) -> bool {
        matches!(self.status.as_str(), "draft" | "open")
    }

    pub fn location(&self, urls: &Urls) -> String {
        urls.api(&format!("/spaces/{}/change-requests/{}", self.space_id, self.id))
    }

    /// The wire object; `users` holds the creator and merger.
    pub fn to_json(&self, urls: &Urls, users: &HashMap<String, User>) -> ChangeRequestJson {
        let user = |id: &str| {
            users
                .get(id)
                .map(|u| u.to_json(urls, true))
                .unwrap_or_else(|| deleted_user(urls, id))
        };
        ChangeRequestJson {
            object: "change-request",
            id: self.id.clone(),
            number: self.number,
            status: self.status.clone(),
            subject: self.subject.clone(),
            description: self
                .description
                .as_deref()
                .and_then(|d| serde_json::from_str(d).ok()),
            created_by: user(&self.created_by),
            created_at: self.created_at,
            updated_at: self.updated_at,
            merged_by: self.merged_by.as_deref().map(user),
            merged_at: self.merged_at,
            space: self.space_id.clone(),
            revision: self.revision.clone(),
            revision_initial: self.revision_initial.clone(),
            revision_merged_ancestor: self.revision_merged_ancestor.clone(),
            revision_merged: self.revision_merged.clone(),
            comments: self.comments,
            outdated: self.outdated(),
            conflicts: self
                .conflicts
                .as_deref()
                .and_then(|c| serde_json::from_str(c).ok()),
            conversations_issues_cluster: self.issues_cluster.clone(),
            urls: ChangeRequestUrls {
                app: urls.app(&format!(
                    "/o/{}/s/{}/~/changes/{}",
                    self.org_id, self.space_id, self.number
                )),
                location: self.location(urls),
            },
        }
    }
}

/// A user who no longer exists, shown by id.
fn deleted_user(urls: &Urls, id: &str) -> UserJson {
    User {
        id: id.to_string(),
        email: String::new(),
        display_name: "Deleted user".into(),
        photo_url: None,
    }
    .to_json(urls, false)
}

/// Loads a change request of a space by id or by number.
pub fn load(c: &mut dyn Conn, space_id: &str, id_or_number: &str) -> ApiResult<ChangeRequest> {
    let number: i64 = id_or_number.parse().unwrap_or(-1);
    let sql =
        format!("SELECT {COLUMNS} FROM {FROM} WHERE cr.space_id = ?1 AND (cr.id = ?2 OR cr.number = ?3)");
    c.query_opt(&sql, crate::params![space_id, id_or_number, number])?
        .map(|r| ChangeRequest::from_row(&r))
        .transpose()?
        .ok_or_else(|| {
            ApiError::not_found(format!("change request {id_or_number:?} not found in this space"))
        })
}

#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestJson {
    pub object: &'static str,
    pub id: String,
    pub number: i64,
    pub status: String,
    pub subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<serde_json::Value>,
    pub created_by: UserJson,
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_by: Option<UserJson>,
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

#[derive(Serialize, Debug)]
pub struct ChangeRequestUrls {
    pub app: String,
    pub location: String,
}
