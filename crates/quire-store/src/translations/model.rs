//! A translation as stored, and as loaded for a caller (with their standing in its
//! organization, which decides what they may do: `permissions::TranslationAction`).

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{
    Action, Authorized, Standing, TranslationAction, role_forbidden, translation_allows,
};

crate::wire_enum! {
    /// Where a translation's latest run is. GitBook's enum stops at `completed`; a run that
    /// could not finish is `failed`, with `error` (docs/gitbook-deviations.md).
    pub enum Status {
        Pending = "pending",
        Running = "running",
        Completed = "completed",
        Failed = "failed",
    }
}

/// Counts over the runs (GitBook's `stats`, durations in seconds on the wire).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub runs: i64,
    pub total_words: i64,
    pub total_pages: i64,
    pub total_duration_ms: i64,
    pub latest_duration_ms: i64,
    pub latest_pages: i64,
    pub latest_words: i64,
    /// Pages of the latest run left as they were: their source had not changed.
    pub latest_skipped: i64,
}

#[derive(Clone, Debug)]
pub struct Translation {
    pub id: String,
    pub org_id: String,
    pub source_space_id: String,
    pub source_language: String,
    pub language: String,
    /// The instructions document, as given.
    pub instructions: serde_json::Value,
    pub target_space_id: Option<String>,
    pub result_revision: Option<String>,
    pub status: Status,
    pub error: Option<String>,
    pub stats: Stats,
    /// Target pages of the latest run that a person edited since the run before, whose source
    /// changed: left as they are, for someone to review.
    pub needs_review: Vec<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::columns! {
    /// The columns [`Translation::from_row`] reads, with the table aliased `t`.
    pub struct TranslationCols of "translations" {
        id: "t.id",
        org_id: "t.organization_id",
        source_space_id: "t.source_space_id",
        source_language: "t.source_language",
        language: "t.language",
        instructions: "t.instructions",
        target_space_id: "t.target_space_id",
        result_revision: "t.result_revision",
        status: "t.status",
        error: "t.error",
        runs: "t.runs",
        total_words: "t.total_words",
        total_pages: "t.total_pages",
        total_duration_ms: "t.total_duration_ms",
        latest_duration_ms: "t.latest_duration_ms",
        latest_pages: "t.latest_pages",
        latest_words: "t.latest_words",
        latest_skipped: "t.latest_skipped",
        latest_review: "t.latest_review",
        created_at: "t.created_at",
        updated_at: "t.updated_at",
    }
}

crate::columns! {
    /// The caller's membership of the translation's organization, after its [`TranslationCols`].
    struct CallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

const T: TranslationCols = TranslationCols::AT;
const CALLER: CallerCols = CallerCols::at(TranslationCols::COUNT);

impl Translation {
    pub fn from_row(row: &Row) -> Result<Translation, DbError> {
        let id: String = row.col(T.id)?;
        let instructions: String = row.col(T.instructions)?;
        let instructions = serde_json::from_str(&instructions)
            .map_err(|e| DbError::stored(format_args!("instructions of translation {id:?}"), e))?;
        let review: String = row.col(T.latest_review)?;
        let needs_review = serde_json::from_str(&review)
            .map_err(|e| DbError::stored(format_args!("pages to review of translation {id:?}"), e))?;
        Ok(Translation {
            org_id: row.col(T.org_id)?,
            source_space_id: row.col(T.source_space_id)?,
            source_language: row.col(T.source_language)?,
            language: row.col(T.language)?,
            instructions,
            target_space_id: row.col(T.target_space_id)?,
            result_revision: row.col(T.result_revision)?,
            status: row.col(T.status)?,
            error: row.col(T.error)?,
            stats: Stats {
                runs: row.col(T.runs)?,
                total_words: row.col(T.total_words)?,
                total_pages: row.col(T.total_pages)?,
                total_duration_ms: row.col(T.total_duration_ms)?,
                latest_duration_ms: row.col(T.latest_duration_ms)?,
                latest_pages: row.col(T.latest_pages)?,
                latest_words: row.col(T.latest_words)?,
                latest_skipped: row.col(T.latest_skipped)?,
            },
            needs_review,
            created_at: row.col(T.created_at)?,
            updated_at: row.col(T.updated_at)?,
            id,
        })
    }
}

/// What names a translation: its organization and its id (both are in every path).
#[derive(Clone, Debug)]
pub struct TranslationKey {
    pub org_id: String,
    pub translation_id: String,
}

/// A translation with the caller's standing in its organization. Only this module's loaders
/// make one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TranslationFor {
    pub translation: Translation,
    pub standing: Standing,
}

impl TranslationFor {
    pub fn allows(&self, action: TranslationAction) -> bool {
        translation_allows(self.standing, action)
    }

    /// Proof that the caller may do `A`: 404 when they cannot see the translation, 403 when
    /// the action is not allowed.
    pub fn authorize<A: Action<TranslationAction>>(self) -> StoreResult<Authorized<TranslationFor, A>> {
        if !self.allows(TranslationAction::View) {
            return Err(not_found(&self.translation.id));
        }
        if !self.allows(A::ACTION) {
            return Err(role_forbidden(
                A::ACTION.describe(),
                A::ACTION.needed(),
                &format!("in the organization of translation {:?}", self.translation.id),
                self.standing.role(),
            ));
        }
        Ok(Authorized::granted(self))
    }

    pub(crate) fn listed(translation: Translation, standing: Standing) -> TranslationFor {
        TranslationFor {
            translation,
            standing,
        }
    }
}

pub fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("translation {id:?} not found"))
}

/// Loads a translation the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, key: &TranslationKey, user_id: &str) -> StoreResult<TranslationFor> {
    let sql = format!(
        "SELECT {}, {} FROM translations t
         LEFT JOIN members m ON m.organization_id = t.organization_id AND m.user_id = ?3
         WHERE t.organization_id = ?1 AND t.id = ?2",
        TranslationCols::SQL,
        CallerCols::SQL
    );
    let row = c.query_opt(
        &sql,
        crate::params![key.org_id.clone(), key.translation_id.clone(), user_id],
    )?;
    let found = match row {
        Some(row) => {
            let translation = Translation::from_row(&row)?;
            let member: Option<String> = row.col(CALLER.member)?;
            let standing = Standing::from_member_columns(
                member.as_deref(),
                row.col(CALLER.disabled)?,
                row.col(CALLER.role)?,
            );
            Some(TranslationFor {
                translation,
                standing,
            })
        }
        None => None,
    };
    match found {
        Some(t) if t.allows(TranslationAction::View) => Ok(t),
        _ => Err(not_found(&key.translation_id)),
    }
}

/// Loads a translation by id, whoever asks (the run job).
pub fn load_by_id(c: &mut dyn Conn, id: &str) -> Result<Option<Translation>, DbError> {
    let sql = format!(
        "SELECT {} FROM translations t WHERE t.id = ?1",
        TranslationCols::SQL
    );
    c.query_opt(&sql, crate::params![id])?
        .map(|row| Translation::from_row(&row))
        .transpose()
}
