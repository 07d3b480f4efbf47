//! The one error type of the API and its JSON envelope:
//! `{"error": {"code": <status>, "message": "<human text>"}}`, used by every non-2xx response.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::db::{DbError, RetryHint};
use quire_store::{ErrorKind, StoreError};

#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// The database error behind a 5xx, logged but never shown to the client.
    source: Option<DbError>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            source: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, message)
    }

    /// Content over one of `quire_content::limits`: 413 for its size, else 400, naming the
    /// field, the limit and the value.
    pub fn over_limit(field: &str, limit: &quire_content::limits::LimitError) -> ApiError {
        let status = if limit.is_size() {
            StatusCode::PAYLOAD_TOO_LARGE
        } else {
            StatusCode::BAD_REQUEST
        };
        ApiError::new(status, format!("`{field}`: {limit}"))
    }

    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// Whether this error wraps a database unique-constraint violation.
    pub fn is_unique_violation(&self) -> bool {
        matches!(self.source, Some(DbError::Unique(_)))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

/// The one place where the domain's errors become statuses.
impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> ApiError {
        let status = match e.kind {
            ErrorKind::Invalid => StatusCode::BAD_REQUEST,
            ErrorKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorKind::Forbidden => StatusCode::FORBIDDEN,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Conflict => StatusCode::CONFLICT,
            ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        };
        // A fault's own words go to the log; the client gets the envelope's generic message.
        let (message, source) = match (e.kind, e.source) {
            (ErrorKind::Internal, None) => {
                tracing::error!(error = %e.message, "internal error");
                ("internal server error".to_string(), None)
            }
            (_, source) => (e.message, source),
        };
        ApiError {
            status,
            message,
            source,
        }
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> ApiError {
        StoreError::from(e).into()
    }
}

impl RetryHint for ApiError {
    fn is_retryable(&self) -> bool {
        self.source.as_ref().is_some_and(RetryHint::is_retryable)
    }
}

/// The body of every error answer: `{"error": {"code": 404, "message": "..."}}`.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorEnvelope<'a> {
    error: ErrorBody<'a>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody<'a> {
    /// The HTTP status, repeated.
    code: u16,
    /// What went wrong, for a person: names the parameter or field at fault.
    message: &'a str,
}

/// The JSON body of an error response, for the layers that build responses themselves.
pub fn error_response(status: StatusCode, message: &str) -> Response {
    let body = serde_json::to_vec(&ErrorEnvelope {
        error: ErrorBody {
            code: status.as_u16(),
            message,
        },
    })
    .unwrap_or_else(|_| b"{\"error\":{\"code\":500,\"message\":\"internal server error\"}}".to_vec());
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if status == StatusCode::SERVICE_UNAVAILABLE || status == StatusCode::TOO_MANY_REQUESTS {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Some(source) = &self.source {
            tracing::error!(error = %source, status = self.status.as_u16(), "request failed");
        } else if self.status.is_server_error() {
            tracing::error!(message = %self.message, status = self.status.as_u16(), "request failed");
        }
        error_response(self.status, &self.message)
    }
}
