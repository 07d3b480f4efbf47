//! Integrations as answered: GitBook's `Integration` (with the caller's `permissions` and the
//! owner organization), `IntegrationInstallation`, `IntegrationSpaceInstallation` /
//! `IntegrationSiteInstallation`, `IntegrationEvent` and its trace.

use quire_store::clock;
use quire_store::integrations::bindings::{Binding, On};
use quire_store::integrations::events::{Event, Level, LogLine};
use quire_store::integrations::{
    EventStatus, Installation, InstallationStatus, Integration, IntegrationFor, Selection, Target, Visibility,
};
use quire_store::permissions::IntegrationAction;
use serde::Serialize;
use serde_json::Value as Json;

use crate::api::orgs::wire::OrgJson;
use crate::urls::Urls;

pub fn integration_path(name: &str) -> String {
    format!("/integrations/{name}")
}

pub fn installation_path(name: &str, installation: &str) -> String {
    format!("/integrations/{name}/installations/{installation}")
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Integration)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationJson {
    #[schema(value_type = String, example = "integration")]
    pub object: &'static str,
    pub name: String,
    pub version: i64,
    pub title: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// URLs of the preview images.
    pub preview_images: Vec<String>,
    pub target: Target,
    /// Always false: quire verifies no integration.
    pub verified: bool,
    pub visibility: Visibility,
    pub scopes: Vec<String>,
    pub categories: Vec<String>,
    #[schema(value_type = Vec<Object>)]
    pub blocks: Json,
    #[schema(value_type = Vec<Object>)]
    pub content_sources: Json,
    #[schema(value_type = Object)]
    pub configurations: Json,
    #[schema(value_type = Vec<Object>)]
    pub external_links: Json,
    pub owner: OrgJson,
    pub urls: IntegrationUrls,
    pub permissions: IntegrationPermissions,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_security_policy: Option<Json>,
    /// The secret deliveries are signed with: in the answer to a publish only, for the
    /// integration's admins (`docs/integrations.md`, "Verifying a delivery").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationUrls {
    pub location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
    pub app: String,
    pub assets: String,
    pub public_endpoint: String,
    pub public_content_endpoint: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct IntegrationPermissions {
    pub admin: bool,
}

fn asset_url(urls: &Urls, name: &str, hash: &str) -> String {
    urls.api(&format!("{}/assets/{hash}", integration_path(name)))
}

pub fn integration_json(urls: &Urls, found: &IntegrationFor, owner: OrgJson) -> IntegrationJson {
    let i: &Integration = &found.integration;
    let field = |key: &str, empty: Json| match i.definition.get(key) {
        Some(value) if !value.is_null() => value.clone(),
        _ => empty,
    };
    let location = urls.api(&integration_path(&i.name));
    IntegrationJson {
        object: "integration",
        name: i.name.clone(),
        version: i.version,
        title: i.title.clone(),
        description: i.description.clone(),
        summary: i.summary.clone(),
        preview_images: i
            .preview_images
            .iter()
            .map(|h| asset_url(urls, &i.name, h))
            .collect(),
        target: i.target,
        verified: false,
        visibility: i.visibility,
        scopes: i.scopes.clone(),
        categories: i.categories.clone(),
        blocks: field("blocks", Json::Array(Vec::new())),
        content_sources: field("contentSources", Json::Array(Vec::new())),
        configurations: field("configurations", Json::Object(Default::default())),
        external_links: field("externalLinks", Json::Array(Vec::new())),
        owner,
        urls: IntegrationUrls {
            icon: i.icon.as_ref().map(|h| asset_url(urls, &i.name, h)),
            app: urls.app(&format!("/integrations/{}", i.name)),
            assets: urls.api(&format!("{}/assets", integration_path(&i.name))),
            // quire serves an integration's pages from its own origin (GitBook has a second
            // one): the content endpoint is the public endpoint.
            public_endpoint: urls.api(&super::runtime::endpoint_path(&i.name, None, None)),
            public_content_endpoint: urls.api(&super::runtime::endpoint_path(&i.name, None, None)),
            location,
        },
        permissions: IntegrationPermissions {
            admin: found.allows(IntegrationAction::Admin),
        },
        content_security_policy: i
            .definition
            .get("contentSecurityPolicy")
            .filter(|v| !v.is_null())
            .cloned(),
        signing_secret: None,
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = IntegrationInstallation)]
#[serde(rename_all = "camelCase")]
pub struct InstallationJson {
    pub id: String,
    pub status: InstallationStatus,
    #[serde(rename = "space_selection")]
    pub space_selection: Selection,
    #[serde(rename = "site_selection")]
    pub site_selection: Selection,
    /// How many spaces it is enabled on.
    pub spaces: i64,
    #[schema(value_type = Object)]
    pub configuration: Json,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    pub urls: InstallationUrls,
    pub external_ids: Vec<String>,
    pub target: InstallationTarget,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstallationUrls {
    pub location: String,
    pub app: String,
    pub public_endpoint: String,
    pub public_content_endpoint: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct InstallationTarget {
    /// The organization it is installed in.
    pub organization: String,
}

pub fn installation_json(urls: &Urls, name: &str, i: &Installation) -> InstallationJson {
    let location = urls.api(&installation_path(name, &i.id));
    InstallationJson {
        id: i.id.clone(),
        status: i.status,
        space_selection: i.space_selection,
        site_selection: i.site_selection,
        spaces: i.spaces,
        configuration: i.configuration.clone(),
        created_at: i.created_at,
        updated_at: i.updated_at,
        urls: InstallationUrls {
            app: urls.app(&format!("/integrations/{name}/installations/{}", i.id)),
            public_endpoint: urls.api(&super::runtime::endpoint_path(name, Some(&i.id), None)),
            public_content_endpoint: urls.api(&super::runtime::endpoint_path(name, Some(&i.id), None)),
            location,
        },
        external_ids: i.external_ids.clone(),
        target: InstallationTarget {
            organization: i.org_id.clone(),
        },
    }
}

/// A space or site installation: `space` or `site` holds the id, or the object when the list
/// was asked `extended`.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = IntegrationSpaceInstallation)]
#[serde(rename_all = "camelCase")]
pub struct BindingJson {
    pub integration: String,
    pub installation: String,
    pub status: InstallationStatus,
    #[schema(value_type = Object)]
    pub configuration: Json,
    pub external_ids: Vec<String>,
    pub urls: BindingUrls,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub space: Option<Json>,
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub site: Option<Json>,
}

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingUrls {
    pub location: String,
    pub public_endpoint: String,
    pub public_content_endpoint: String,
}

/// `target` is the space's or site's id, or its object (extended lists).
pub fn binding_json(urls: &Urls, name: &str, on: On, b: &Binding, target: Json) -> BindingJson {
    let location = urls.api(&format!(
        "{}/{}s/{}",
        installation_path(name, &b.installation_id),
        on.noun(),
        b.target
    ));
    BindingJson {
        integration: name.to_string(),
        installation: b.installation_id.clone(),
        status: b.status,
        configuration: b.configuration.clone(),
        external_ids: b.external_ids.clone(),
        urls: BindingUrls {
            public_endpoint: urls.api(&super::runtime::endpoint_path(
                name,
                Some(&b.installation_id),
                Some((on, &b.target)),
            )),
            public_content_endpoint: urls.api(&super::runtime::endpoint_path(
                name,
                Some(&b.installation_id),
                Some((on, &b.target)),
            )),
            location,
        },
        space: (on == On::Space).then(|| target.clone()),
        site: (on == On::Site).then_some(target),
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = IntegrationEvent)]
#[serde(rename_all = "camelCase")]
pub struct EventJson {
    pub id: String,
    pub integration_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub installation_id: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    /// What was (or is to be) delivered.
    #[schema(value_type = Object)]
    pub payload: Json,
    pub status: EventStatus,
    /// How many deliveries were tried.
    pub attempts: i64,
}

pub fn event_json(e: &Event) -> EventJson {
    EventJson {
        id: e.id.clone(),
        integration_id: e.integration_id.clone(),
        installation_id: e.installation_id.clone(),
        created_at: e.created_at,
        payload: e.payload.clone(),
        status: e.status,
        attempts: e.attempts,
    }
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct EventDetailJson {
    pub event: EventJson,
    pub trace: TraceJson,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TraceJson {
    pub logs: Vec<LogJson>,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LogJson {
    pub message: String,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub timestamp: i64,
    pub level: Level,
}

pub fn event_detail_json(e: &Event, logs: &[LogLine]) -> EventDetailJson {
    EventDetailJson {
        event: event_json(e),
        trace: TraceJson {
            logs: logs
                .iter()
                .map(|l| LogJson {
                    message: l.message.clone(),
                    timestamp: l.timestamp,
                    level: l.level,
                })
                .collect(),
        },
    }
}
