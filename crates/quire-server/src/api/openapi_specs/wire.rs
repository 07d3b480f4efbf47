//! OpenAPI specifications as answered: GitBook's `OpenAPISpec` with the caller's `permissions`,
//! `OpenAPISpecVersion`, `OpenAPISpecContent` and `OpenAPISpecRawContent`.

use quire_store::clock;
use quire_store::openapi::{
    ErrorCode, ProcessError, ProcessingState, Spec, SpecVisibility, Version, VersionContent,
};
use quire_store::permissions::{SpecAction, Standing, spec_allows};
use serde::Serialize;

use crate::urls::Urls;

/// The API path of a specification.
pub fn spec_path(spec: &Spec) -> String {
    format!("/orgs/{}/openapi/{}", spec.org_id, spec.slug)
}

/// Where anyone reads the latest content of a public specification (with no token).
fn public_content_url(urls: &Urls, spec: &Spec) -> Option<String> {
    (spec.visibility == SpecVisibility::Public)
        .then(|| urls.api(&format!("{}/versions/latest/content", spec_path(spec))))
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OpenAPISpec)]
#[serde(rename_all = "camelCase")]
pub struct SpecJson {
    #[schema(value_type = String, example = "openapi-spec")]
    pub object: &'static str,
    pub id: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    pub slug: String,
    /// The URL the description is fetched from; absent for one given as text.
    #[serde(rename = "sourceURL", skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    pub processing_state: ProcessingState,
    pub visibility: SpecVisibility,
    /// The id of the latest version; absent until one is processed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_version: Option<String>,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub last_processed_at: Option<i64>,
    /// Why the last processing failed; absent when it succeeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_process_error_code: Option<ErrorCode>,
    /// What the last processing found wrong (the first ones).
    #[schema(value_type = Vec<Object>)]
    pub last_processed_errors: Vec<ProcessError>,
    /// How many errors the last processing found in all.
    pub last_processed_error_count: i64,
    pub permissions: SpecPermissions,
    pub urls: SpecUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SpecPermissions {
    pub view: bool,
    pub edit: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SpecUrls {
    /// The specification in the API.
    pub location: String,
    /// quire has no application page for a specification: the API's.
    pub app: String,
    /// Where anyone reads its latest content; only for a public specification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
}

pub fn spec_json(urls: &Urls, spec: &Spec, standing: Standing) -> SpecJson {
    let location = urls.api(&spec_path(spec));
    SpecJson {
        object: "openapi-spec",
        id: spec.id.clone(),
        created_at: spec.created_at,
        updated_at: spec.updated_at,
        slug: spec.slug.clone(),
        source_url: spec.source_url.clone(),
        processing_state: spec.state,
        visibility: spec.visibility,
        last_version: spec.last_version.clone(),
        last_processed_at: spec.last_processed_at,
        last_process_error_code: spec.last_error_code,
        last_processed_errors: spec.last_errors.clone(),
        last_processed_error_count: spec.last_error_count,
        permissions: SpecPermissions {
            view: spec_allows(standing, SpecAction::View),
            edit: spec_allows(standing, SpecAction::Edit),
        },
        urls: SpecUrls {
            app: location.clone(),
            location,
            published: public_content_url(urls, spec),
        },
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OpenAPISpecVersion)]
#[serde(rename_all = "camelCase")]
pub struct VersionJson {
    #[schema(value_type = String, example = "openapi-spec-version")]
    pub object: &'static str,
    pub id: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    /// Where the version's description was fetched from; for one given as text, where the API
    /// gives its text.
    pub url: String,
    pub urls: VersionUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct VersionUrls {
    /// The version in the API.
    pub location: String,
}

fn version_location(urls: &Urls, spec: &Spec, version: &Version) -> String {
    urls.api(&format!("{}/versions/{}", spec_path(spec), version.id))
}

/// The URL a version came from: its source URL, or the API's for a text source.
fn version_url(urls: &Urls, spec: &Spec, version: &Version) -> String {
    version
        .url
        .clone()
        .unwrap_or_else(|| format!("{}/content", version_location(urls, spec, version)))
}

pub fn version_json(urls: &Urls, spec: &Spec, version: &Version) -> VersionJson {
    VersionJson {
        object: "openapi-spec-version",
        id: version.id.clone(),
        created_at: version.created_at,
        url: version_url(urls, spec, version),
        urls: VersionUrls {
            location: version_location(urls, spec, version),
        },
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OpenAPISpecContent)]
pub struct ContentJson {
    /// The description's files, the entry file first (GitBook's renderer's `Filesystem`:
    /// `{dir, filename, isEntrypoint, references, specification}` each).
    #[schema(value_type = Vec<Object>)]
    pub filesystem: Box<serde_json::value::RawValue>,
    /// The spec's name for `urls.source`.
    pub url: String,
    pub urls: ContentUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ContentUrls {
    pub source: String,
    /// Where anyone may read the description: its source URL, or quire's for one given as text;
    /// null for a private specification.
    pub public: Option<String>,
}

pub fn content_json(urls: &Urls, spec: &Spec, content: VersionContent) -> Result<ContentJson, String> {
    let source = version_url(urls, spec, &content.version);
    let public = (spec.visibility == SpecVisibility::Public).then(|| match &content.version.url {
        Some(url) => url.clone(),
        None => urls.api(&format!("{}/versions/latest/content/raw", spec_path(spec))),
    });
    let filesystem = serde_json::value::RawValue::from_string(content.filesystem)
        .map_err(|e| format!("stored filesystem of OpenAPI spec {:?}: {e}", spec.slug))?;
    Ok(ContentJson {
        filesystem,
        url: source.clone(),
        urls: ContentUrls { source, public },
    })
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = OpenAPISpecRawContent)]
pub struct RawContentJson {
    /// The entry file's text, exactly as fetched or given.
    pub text: String,
    /// `json` or `yaml`.
    #[schema(example = "yaml")]
    pub format: String,
}
