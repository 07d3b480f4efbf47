//! The error of every storage and domain function: what went wrong, in the terms a caller acts
//! on, without HTTP. The API maps each [`ErrorKind`] to a status in one place
//! (`quire_server::error`), so the domain never picks status codes.

use crate::db::{DbError, RetryHint};

/// What a caller does about an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The input is malformed or breaks a rule; the message names the field.
    Invalid,
    /// The input is over a size limit (a body, a file, a quota).
    TooLarge,
    /// The caller may see the resource but not do this to it.
    Forbidden,
    /// The resource does not exist, or the caller may not know that it does.
    NotFound,
    /// The resource's state forbids this now (a merged change request, a taken slug).
    Conflict,
    /// A transient failure: retrying shortly may succeed.
    Unavailable,
    /// A fault of the server or its data; logged, never explained to the caller.
    Internal,
}

#[derive(Debug)]
pub struct StoreError {
    pub kind: ErrorKind,
    pub message: String,
    /// The database error behind the failure, logged but never shown to the client.
    pub source: Option<DbError>,
}

pub type StoreResult<T> = Result<T, StoreError>;

impl StoreError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> StoreError {
        StoreError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub fn invalid(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::Invalid, message)
    }

    pub fn too_large(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::TooLarge, message)
    }

    pub fn forbidden(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::Forbidden, message)
    }

    pub fn not_found(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::Conflict, message)
    }

    /// A transient failure (a file store that does not answer, bytes being collected): the
    /// caller is told to retry shortly.
    pub fn unavailable(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::Unavailable, message)
    }

    /// Content over one of `quire_content::limits`: too large for its size, else invalid,
    /// naming the field, the limit and the value.
    pub fn over_limit(field: &str, limit: &quire_content::limits::LimitError) -> StoreError {
        let kind = if limit.is_size() {
            ErrorKind::TooLarge
        } else {
            ErrorKind::Invalid
        };
        StoreError::new(kind, format!("`{field}`: {limit}"))
    }

    /// A fault: `message` is for the log (the caller is told only that the server failed).
    pub fn internal(message: impl Into<String>) -> StoreError {
        StoreError::new(ErrorKind::Internal, message)
    }

    /// Stored data that does not decode: the message names the row, for the log.
    pub fn corrupt(what: &str, row: &str, error: impl std::fmt::Display) -> StoreError {
        StoreError::internal(format!("stored {what} of {row} does not decode: {error}"))
    }

    /// Whether this error wraps a database unique-constraint violation.
    pub fn is_unique_violation(&self) -> bool {
        matches!(self.source, Some(DbError::Unique(_)))
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{:?}: {} ({source})", self.kind, self.message),
            None => write!(f, "{:?}: {}", self.kind, self.message),
        }
    }
}

impl std::error::Error for StoreError {}

/// A database error as callers see it: busy and deadline errors are transient, the rest faults.
impl From<DbError> for StoreError {
    fn from(e: DbError) -> StoreError {
        let (kind, message) = match e {
            DbError::Busy(_) | DbError::Retry(_) => {
                (ErrorKind::Unavailable, "the database is busy, retry shortly")
            }
            DbError::Deadline => (
                ErrorKind::Unavailable,
                "the request ran past its deadline and was stopped: nothing was written, retry shortly",
            ),
            _ => (ErrorKind::Internal, "internal server error"),
        };
        StoreError {
            kind,
            message: message.into(),
            source: Some(e),
        }
    }
}

impl RetryHint for StoreError {
    fn is_retryable(&self) -> bool {
        self.source.as_ref().is_some_and(RetryHint::is_retryable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_errors_keep_their_class() {
        let busy = StoreError::from(DbError::Busy("locked".into()));
        assert_eq!(busy.kind, ErrorKind::Unavailable);
        assert!(busy.is_retryable());
        let unique = StoreError::from(DbError::Unique("spaces.slug".into()));
        assert_eq!(unique.kind, ErrorKind::Internal);
        assert!(unique.is_unique_violation() && !unique.is_retryable());
        // What the client is told never carries the database's text.
        assert!(!unique.message.contains("spaces.slug"));
    }
}
