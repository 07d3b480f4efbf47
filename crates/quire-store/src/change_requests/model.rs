//! A change request as stored.

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};

#[derive(Clone, Debug)]
pub struct ChangeRequest {
    pub id: String,
    pub space_id: String,
    pub org_id: String,
    pub number: i64,
    pub status: Status,
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

crate::wire_enum! {
    /// Where a change request is in its life.
    pub enum Status {
        Draft = "draft",
        Open = "open",
        Archived = "archived",
        Merged = "merged",
    }
}

impl Status {
    /// Whether content may still be written to it.
    pub fn is_writable(self) -> bool {
        matches!(self, Status::Draft | Status::Open)
    }
}

crate::columns! {
    /// The columns [`ChangeRequest::from_row`] reads, with `change_requests cr` joined to
    /// `spaces s` (see [`FROM`]).
    pub struct ChangeRequestCols of "change_requests" {
        id: "cr.id",
        space_id: "cr.space_id",
        org_id: "s.organization_id",
        number: "cr.number",
        status: "cr.status",
        subject: "cr.subject",
        description: "cr.description",
        created_by: "cr.created_by",
        created_at: "cr.created_at",
        updated_at: "cr.updated_at",
        revision_initial: "cr.revision_initial",
        revision: "cr.revision",
        revision_merged_ancestor: "cr.revision_merged_ancestor",
        revision_merged: "cr.revision_merged",
        merged_by: "cr.merged_by",
        merged_at: "cr.merged_at",
        conflicts: "cr.conflicts",
        space_revision: "s.revision_id",
        comments: "(SELECT count(*) FROM comments x WHERE x.change_request_id = cr.id AND x.status = 'open')",
        issues_cluster: "cr.conversations_issues_cluster",
    }
}

/// The columns [`ChangeRequest::from_row`] reads.
pub const COLUMNS: &str = ChangeRequestCols::SQL;
const C: ChangeRequestCols = ChangeRequestCols::AT;

/// The FROM clause matching [`COLUMNS`].
pub const FROM: &str = "change_requests cr JOIN spaces s ON s.id = cr.space_id";

impl ChangeRequest {
    /// The conflicts recorded by its last update, as stored (a JSON list); an error, not
    /// none, when they cannot be read.
    pub fn stored_conflicts(&self) -> Result<Option<Vec<serde_json::Value>>, DbError> {
        self.conflicts
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    DbError::stored(format_args!("conflicts of change request {:?}", self.id), e)
                })
            })
            .transpose()
    }

    /// The description as stored (a JSON document), if any; an error when it cannot be read.
    pub fn stored_description(&self) -> Result<Option<serde_json::Value>, DbError> {
        self.description
            .as_deref()
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    DbError::stored(format_args!("description of change request {:?}", self.id), e)
                })
            })
            .transpose()
    }

    pub fn from_row(row: &Row) -> Result<ChangeRequest, DbError> {
        Ok(ChangeRequest {
            id: row.col(C.id)?,
            space_id: row.col(C.space_id)?,
            org_id: row.col(C.org_id)?,
            number: row.col(C.number)?,
            status: row.col(C.status)?,
            subject: row.col(C.subject)?,
            description: row.col(C.description)?,
            created_by: row.col(C.created_by)?,
            created_at: row.col(C.created_at)?,
            updated_at: row.col(C.updated_at)?,
            revision_initial: row.col(C.revision_initial)?,
            revision: row.col(C.revision)?,
            revision_merged_ancestor: row.col(C.revision_merged_ancestor)?,
            revision_merged: row.col(C.revision_merged)?,
            merged_by: row.col(C.merged_by)?,
            merged_at: row.col(C.merged_at)?,
            conflicts: row.col(C.conflicts)?,
            space_revision: row.col(C.space_revision)?,
            comments: row.col(C.comments)?,
            issues_cluster: row.col(C.issues_cluster)?,
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
        self.status != Status::Merged
            && self
                .space_revision
                .as_deref()
                .is_some_and(|r| r != self.base_revision())
    }

    pub fn is_writable(&self) -> bool {
        self.status.is_writable()
    }
}

/// Loads a change request of a space by id or by number.
pub fn load(c: &mut dyn Conn, space_id: &str, id_or_number: &str) -> StoreResult<ChangeRequest> {
    let number: i64 = id_or_number.parse().unwrap_or(-1);
    let sql =
        format!("SELECT {COLUMNS} FROM {FROM} WHERE cr.space_id = ?1 AND (cr.id = ?2 OR cr.number = ?3)");
    c.query_opt(&sql, crate::params![space_id, id_or_number, number])?
        .map(|r| ChangeRequest::from_row(&r))
        .transpose()?
        .ok_or_else(|| {
            StoreError::not_found(format!("change request {id_or_number:?} not found in this space"))
        })
}
