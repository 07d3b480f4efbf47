//! PDF exports (GitBook's `getSpacePDF` and `getChangeRequestPDF`): the operation checks that
//! the caller may read the space, makes or finds the export (`quire_store::pdf`), and answers a
//! signed URL good for an hour. The URL serves the PDF once typeset; until then it waits a few
//! seconds for it (`--pdf-wait`, 8 s by default: a one-page PDF takes well under a second, so most clients get the
//! PDF at their first request), then answers 202 with `Retry-After`.

use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use quire_store::pdf::{self, Export, ExportState, Scope};
use quire_store::permissions::space;
use quire_store::reads::{Source, open_space};
use serde::{Deserialize, Serialize};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{Path, QueryOf};
use crate::paths::{ChangeRequestPath, PdfExportPath, SpacePath};
use crate::state::App;
use crate::{clock, signing};

/// How long a PDF link works (GitBook's: an hour).
const URL_LIFETIME_SECS: i64 = 3600;
/// How often a waiting request looks again when no write of this process wakes it (the
/// typesetting may run in another process).
const LOOK_AGAIN: Duration = Duration::from_millis(250);
/// What a 202 asks the client to wait, in seconds.
const RETRY_AFTER_SECS: u64 = 2;
/// The longest file name a PDF is served with, in characters (without `.pdf`).
const MAX_NAME_CHARS: usize = 96;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(get_space_pdf))
        .routes(routes!(get_change_request_pdf))
        .routes(routes!(download_pdf))
}

/// What a PDF is of, beyond its revision.
#[derive(Deserialize, Debug, Clone, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PdfQuery {
    /// Generate a PDF only for the provided page (not its children). Needs `page`.
    #[serde(default, deserialize_with = "crate::extract::flag")]
    #[param(value_type = Option<bool>)]
    only: Option<bool>,
    /// ID of a specific page to generate a PDF for: that page and its children.
    page: Option<String>,
}

/// Where the PDF is.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct PdfUrl {
    /// Temporary URL of the PDF. The URL works for 1 h.
    pub url: String,
}

/// Get a temporary URL to download a space or page as PDF
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/pdf",
    tag = "Space content",
    summary = "Get a temporary URL to download a space or page as PDF",
    params(SpacePath, PdfQuery),
    responses((status = 200, description = "URL of the PDF of the space's main content.", body = PdfUrl)),
    security(("token" = ["space:content:read"]))
)]
async fn get_space_pdf(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    QueryOf(query): QueryOf<PdfQuery>,
) -> ApiResult<axum::Json<PdfUrl>> {
    export(app, caller, space_id, Source::Main, query).await
}

/// Get a temporary URL to download a change request's content as PDF
#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf",
    tag = "Change requests",
    summary = "Get a temporary URL to download a change request's content as PDF",
    params(ChangeRequestPath, PdfQuery),
    responses((status = 200, description = "URL of the PDF of the change request's content.", body = PdfUrl)),
    security(("token" = ["space:content:read"]))
)]
async fn get_change_request_pdf(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id,
    }): Path<ChangeRequestPath>,
    QueryOf(query): QueryOf<PdfQuery>,
) -> ApiResult<axum::Json<PdfUrl>> {
    export(
        app,
        caller,
        space_id,
        Source::ChangeRequest(change_request_id),
        query,
    )
    .await
}

async fn export(
    app: App,
    caller: Caller,
    space_id: String,
    source: Source,
    query: PdfQuery,
) -> ApiResult<axum::Json<PdfUrl>> {
    if query.only == Some(true) && query.page.is_none() {
        return Err(ApiError::bad_request(
            "`only` needs `page`: the page the PDF is only of",
        ));
    }
    let space = app
        .spaces
        .load_active(&app.db, &space_id, &caller.user_id)
        .await?;
    let authorized = space.clone().authorize::<space::View>()?;
    let content = app.clone();
    let (export, name) = app
        .db
        .write(move |c| {
            let opened = open_space(c, &content.content, space.clone(), &source)?;
            let tree = &opened.stored.tree;
            let title = match &query.page {
                Some(page) => match tree.pages.get(page) {
                    Some(entry) => entry.title.clone(),
                    None => {
                        return Err(ApiError::not_found(format!(
                            "page {page:?} not found in this revision"
                        )));
                    }
                },
                None => opened.space.space.title.clone(),
            };
            let scope = Scope {
                revision_id: opened.stored.id().to_string(),
                change_request_id: opened.change_request.as_ref().map(|cr| cr.id.clone()),
                page_id: query.page.clone(),
                only: query.only == Some(true),
            };
            let export = pdf::request(c, &authorized, &scope, clock::now_ms())?;
            Ok::<_, ApiError>((export, file_name(&title)))
        })
        .await?;
    let expires = clock::now_ms() / 1000 + URL_LIFETIME_SECS;
    Ok(axum::Json(PdfUrl {
        url: download_url(&app, &export.id, &name, expires),
    }))
}

/// A file name from a title: what file systems refuse becomes `-`, at most
/// [`MAX_NAME_CHARS`] characters, then `.pdf`.
fn file_name(title: &str) -> String {
    let cleaned: String = title
        .chars()
        .map(|c| {
            if c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') {
                '-'
            } else {
                c
            }
        })
        .take(MAX_NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim().trim_matches('.');
    if cleaned.is_empty() {
        "export.pdf".to_string()
    } else {
        format!("{cleaned}.pdf")
    }
}

/// What a PDF link signs.
fn link_message(export_id: &str, name: &str, expires: i64) -> String {
    format!("pdf\n{export_id}\n{name}\n{expires}")
}

fn download_url(app: &App, export_id: &str, name: &str, expires: i64) -> String {
    let signature = signing::sign(&app.signing_key, &link_message(export_id, name, expires));
    format!(
        "{}/pdfs/{export_id}/{}?e={expires}&s={signature}",
        app.urls.base(),
        crate::files::path_segment(name)
    )
}

/// The query of a PDF link. A missing or malformed part is an invalid link (404).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PdfLinkQuery {
    /// When the link expires, in Unix seconds.
    #[param(required = true)]
    #[serde(rename = "e", default)]
    expires: Option<String>,
    /// The signature of the link.
    #[param(required = true)]
    #[serde(rename = "s", default)]
    signature: Option<String>,
}

/// The answer while the PDF is being typeset.
#[derive(Serialize, Debug, utoipa::ToSchema)]
pub struct PdfPending {
    /// `pending`.
    pub state: &'static str,
    pub message: String,
}

#[utoipa::path(
    get,
    path = "/pdfs/{exportId}/{name}",
    tag = "Space content",
    summary = "Download a PDF by its signed URL",
    params(PdfExportPath, PdfLinkQuery),
    responses(
        (status = 200, description = "The PDF.", content_type = "application/pdf", body = Vec<u8>),
        (status = 202, description = "The PDF is being typeset: ask again after `Retry-After` seconds.", body = PdfPending),
        (status = 404, description = "The link is invalid or has expired.", body = ErrorEnvelope),
        (status = 422, description = "The content could not be typeset.", body = ErrorEnvelope),
    ),
    security(())
)]
async fn download_pdf(
    State(app): State<App>,
    Path(PdfExportPath { export_id, name }): Path<PdfExportPath>,
    QueryOf(PdfLinkQuery { expires, signature }): QueryOf<PdfLinkQuery>,
) -> ApiResult<Response> {
    let expires = expires.and_then(|e| e.parse::<i64>().ok()).unwrap_or(0);
    let signature = signature.unwrap_or_default();
    let holds = expires >= clock::now_ms() / 1000
        && signing::verify(
            &app.signing_key,
            &link_message(&export_id, &name, expires),
            &signature,
        );
    if !holds {
        return Err(ApiError::not_found("this PDF link is invalid or has expired"));
    }
    let deadline = tokio::time::Instant::now() + app.settings.pdf_wait;
    loop {
        // Asked for before the read, so that a write between the read and the wait wakes it.
        let changed = app.db.changed();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let id = export_id.clone();
        let export = app
            .db
            .read(move |c| pdf::load(c, &id))
            .await?
            .ok_or_else(|| ApiError::not_found("this PDF link is invalid or has expired"))?;
        match export.state {
            ExportState::Ready => {
                if let Some(response) = serve(&app, &export, &name).await? {
                    return Ok(response);
                }
            }
            ExportState::Failed => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    format!(
                        "the PDF could not be typeset: {}",
                        export.error.as_deref().unwrap_or("no reason was recorded")
                    ),
                ));
            }
            ExportState::Pending => {}
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(pending());
        }
        let nap = LOOK_AGAIN.min(deadline - now);
        tokio::select! {
            () = &mut changed => {}
            () = tokio::time::sleep(nap) => {}
        }
    }
}

/// The PDF's bytes; None when they are gone (pruned while the row was asked for again), after
/// scheduling the export to be typeset again.
async fn serve(app: &App, export: &Export, name: &str) -> ApiResult<Option<Response>> {
    let hash = export.hash.clone().unwrap_or_default();
    let blob = match app.blobs.get(&export.space_id, &hash).await {
        Ok(blob) => blob,
        Err(e) if e.kind == quire_store::error::ErrorKind::NotFound => {
            let id = export.id.clone();
            app.db
                .write(move |c| pdf::retypeset(c, &id, clock::now_ms()))
                .await?;
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let size = blob.meta.size;
    let stream = blob
        .into_stream()
        .map(|chunk| chunk.map_err(std::io::Error::other));
    let mut response = Body::from_stream(stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/pdf"));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600, immutable"),
    );
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    if let Some(v) = crate::files::inline_disposition(name) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    Ok(Some(response))
}

fn pending() -> Response {
    let body = PdfPending {
        state: "pending",
        message: format!("the PDF is being typeset: ask again in {RETRY_AFTER_SECS} s"),
    };
    let mut response = (StatusCode::ACCEPTED, axum::Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
