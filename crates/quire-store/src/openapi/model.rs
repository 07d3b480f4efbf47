//! An OpenAPI specification as stored, its versions, and the specification as loaded for a caller.

use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{Action, Authorized, SpecAction, Standing, role_forbidden, spec_allows};

crate::wire_enum! {
    /// Who may read the specification's latest content.
    pub enum SpecVisibility {
        Private = "private",
        Public = "public",
    }
}

crate::wire_enum! {
    /// GitBook's processing states: queued, running, done (a failure is `complete` with
    /// `lastProcessErrorCode` set; GitBook's enum has no failed state).
    pub enum ProcessingState {
        Pending = "pending",
        Progress = "progress",
        Complete = "complete",
    }
}

crate::wire_enum! {
    /// GitBook's processing error codes (`OpenAPISpecProcessingErrorCode`); the finer cause is
    /// the `code` of each of `lastProcessedErrors`.
    pub enum ErrorCode {
        FetchTimeout = "FETCH_TIMEOUT",
        FetchError = "FETCH_ERROR",
        ParseError = "PARSE_ERROR",
    }
}

/// One of `lastProcessedErrors`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProcessError {
    pub message: String,
    pub code: String,
}

#[derive(Clone, Debug)]
pub struct Spec {
    pub id: String,
    pub org_id: String,
    pub slug: String,
    /// None for a specification given as text.
    pub source_url: Option<String>,
    pub visibility: SpecVisibility,
    pub state: ProcessingState,
    pub generation: i64,
    pub last_version: Option<String>,
    pub last_processed_at: Option<i64>,
    pub last_error_code: Option<ErrorCode>,
    pub last_errors: Vec<ProcessError>,
    /// How many errors the last processing found (`lastProcessedErrors` keeps the first ones).
    pub last_error_count: i64,
    pub created_at: i64,
    pub updated_at: i64,
}

crate::columns! {
    /// The columns [`Spec::from_row`] reads, with the table aliased `t`.
    pub struct SpecCols of "openapi_specs" {
        id: "t.id",
        org_id: "t.organization_id",
        slug: "t.slug",
        source_url: "t.source_url",
        visibility: "t.visibility",
        state: "t.processing_state",
        generation: "t.generation",
        last_version: "t.last_version_id",
        last_processed_at: "t.last_processed_at",
        last_error_code: "t.last_error_code",
        last_errors: "t.last_errors",
        last_error_count: "t.last_error_count",
        created_at: "t.created_at",
        updated_at: "t.updated_at",
    }
}

crate::columns! {
    /// The caller's membership of the specification's organization, after its [`SpecCols`].
    struct SpecCallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

const SPEC: SpecCols = SpecCols::AT;
const CALLER: SpecCallerCols = SpecCallerCols::at(SpecCols::COUNT);

impl Spec {
    pub fn from_row(row: &Row) -> Result<Spec, DbError> {
        let errors: Option<String> = row.col(SPEC.last_errors)?;
        let id: String = row.col(SPEC.id)?;
        let last_errors = match errors {
            None => Vec::new(),
            Some(text) => serde_json::from_str(&text)
                .map_err(|e| DbError::stored(format_args!("errors of OpenAPI spec {id:?}"), e))?,
        };
        Ok(Spec {
            org_id: row.col(SPEC.org_id)?,
            slug: row.col(SPEC.slug)?,
            source_url: row.col(SPEC.source_url)?,
            visibility: row.col(SPEC.visibility)?,
            state: row.col(SPEC.state)?,
            generation: row.col(SPEC.generation)?,
            last_version: row.col(SPEC.last_version)?,
            last_processed_at: row.col(SPEC.last_processed_at)?,
            last_error_code: row.col(SPEC.last_error_code)?,
            last_errors,
            last_error_count: row.col(SPEC.last_error_count)?,
            created_at: row.col(SPEC.created_at)?,
            updated_at: row.col(SPEC.updated_at)?,
            id,
        })
    }
}

/// What names a specification: its organization and its slug (both are in every path).
#[derive(Clone, Debug)]
pub struct SpecKey {
    pub org_id: String,
    pub slug: String,
}

/// A specification with the caller's standing in its organization. Only this crate's loaders
/// make one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SpecFor {
    pub spec: Spec,
    pub standing: Standing,
}

impl SpecFor {
    pub fn allows(&self, action: SpecAction) -> bool {
        spec_allows(self.standing, action)
    }

    /// Proof that the caller may do `A` (`permissions::spec::Edit`, ...): 404 when they cannot
    /// see the specification, 403 when the action is not allowed.
    pub fn authorize<A: Action<SpecAction>>(self) -> StoreResult<Authorized<SpecFor, A>> {
        if !self.allows(SpecAction::View) {
            return Err(not_found(&self.spec.slug));
        }
        if !self.allows(A::ACTION) {
            return Err(role_forbidden(
                A::ACTION.describe(),
                A::ACTION.needed(),
                &format!(
                    "in the organization of OpenAPI specification {:?}",
                    self.spec.slug
                ),
                self.standing.role(),
            ));
        }
        Ok(Authorized::granted(self))
    }

    pub(crate) fn listed(spec: Spec, standing: Standing) -> SpecFor {
        SpecFor { spec, standing }
    }
}

pub fn not_found(slug: &str) -> StoreError {
    StoreError::not_found(format!("OpenAPI specification {slug:?} not found"))
}

/// Loads a specification with the caller's standing; None when there is none of that slug.
pub fn load_for(c: &mut dyn Conn, key: &SpecKey, user_id: &str) -> Result<Option<SpecFor>, DbError> {
    let sql = format!(
        "SELECT {}, {} FROM openapi_specs t
         LEFT JOIN members m ON m.organization_id = t.organization_id AND m.user_id = ?3
         WHERE t.organization_id = ?1 AND t.slug = ?2",
        SpecCols::SQL,
        SpecCallerCols::SQL
    );
    let Some(row) = c.query_opt(
        &sql,
        crate::params![key.org_id.clone(), key.slug.clone(), user_id],
    )?
    else {
        return Ok(None);
    };
    let spec = Spec::from_row(&row)?;
    let member: Option<String> = row.col(CALLER.member)?;
    let standing = Standing::from_member_columns(
        member.as_deref(),
        row.col(CALLER.disabled)?,
        row.col(CALLER.role)?,
    );
    Ok(Some(SpecFor { spec, standing }))
}

/// Loads a specification the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, key: &SpecKey, user_id: &str) -> StoreResult<SpecFor> {
    match load_for(c, key, user_id)? {
        Some(spec) if spec.allows(SpecAction::View) => Ok(spec),
        _ => Err(not_found(&key.slug)),
    }
}

/// Loads a specification by id, whoever asks (the processing job).
pub fn load_by_id(c: &mut dyn Conn, spec_id: &str) -> Result<Option<Spec>, DbError> {
    let sql = format!("SELECT {} FROM openapi_specs t WHERE t.id = ?1", SpecCols::SQL);
    c.query_opt(&sql, crate::params![spec_id])?
        .map(|row| Spec::from_row(&row))
        .transpose()
}

/// Loads a specification by slug, whoever asks (the public content of a public one).
pub fn load_by_slug(c: &mut dyn Conn, key: &SpecKey) -> Result<Option<Spec>, DbError> {
    let sql = format!(
        "SELECT {} FROM openapi_specs t WHERE t.organization_id = ?1 AND t.slug = ?2",
        SpecCols::SQL
    );
    c.query_opt(&sql, crate::params![key.org_id.clone(), key.slug.clone()])?
        .map(|row| Spec::from_row(&row))
        .transpose()
}

/// A stored version, without its content.
#[derive(Clone, Debug)]
pub struct Version {
    pub id: String,
    pub spec_id: String,
    /// The URL it was fetched from; None for a specification given as text.
    pub url: Option<String>,
    pub created_at: i64,
}

crate::columns! {
    /// The columns [`Version::from_row`] reads.
    pub struct VersionCols of "openapi_spec_versions" {
        id: "v.id",
        spec_id: "v.spec_id",
        url: "v.url",
        created_at: "v.created_at",
    }
}

impl Version {
    pub fn from_row(row: &Row) -> Result<Version, DbError> {
        const V: VersionCols = VersionCols::AT;
        Ok(Version {
            id: row.col(V.id)?,
            spec_id: row.col(V.spec_id)?,
            url: row.col(V.url)?,
            created_at: row.col(V.created_at)?,
        })
    }
}

/// A version's content: the processed files (GitBook's filesystem, as stored JSON text, handed
/// on without parsing it again) and the entry file's text as given.
#[derive(Clone, Debug)]
pub struct VersionContent {
    pub version: Version,
    pub filesystem: String,
    pub raw_text: String,
    pub raw_format: String,
}
