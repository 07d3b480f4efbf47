//! A SAML provider as answered (GitBook's `OrganizationSAMLProvider`), with what quire shows
//! an identity provider's administrator: its entity id, ACS URL and the start URL.

use quire_store::clock;
use quire_store::permissions::{Role, Standing};
use quire_store::saml::Provider;
use quire_store::saml::metadata::ServiceProvider;
use quire_store::sessions::Session;
use serde::Serialize;

use crate::api::teams::{TeamJson, team_json};
use crate::api::users::{UserJson, user_json};
use crate::urls::Urls;

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SamlProviderJson {
    object: &'static str,
    id: String,
    label: String,
    /// The identity provider's sign-in URL ('' until set).
    #[serde(rename = "ssoURL")]
    sso_url: String,
    /// The identity provider's entity id ('' until set).
    #[serde(rename = "entityID")]
    entity_id: String,
    /// Its signing certificate, PEM ('' until set).
    certificate: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_team: Option<TeamJson>,
    /// The role of the people it signs in; null: guests.
    default_role: Option<Role>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    created_at: i64,
    /// `active` when the entity id, sign-in URL and certificate are set; `pending` otherwise.
    status: &'static str,
    service: ServiceJson,
    urls: LocationJson,
}

/// What to paste into the identity provider.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ServiceJson {
    /// Where the identity provider posts its responses.
    #[serde(rename = "acsURL")]
    acs_url: String,
    /// Where a sign-in with this provider starts.
    #[serde(rename = "startURL")]
    start_url: String,
    /// quire's entity id for this provider: its metadata's URL.
    #[serde(rename = "entityID")]
    entity_id: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct LocationJson {
    location: String,
}

/// One entry of the organization's sign-in choices (GitBook's `OrganizationSSOProviderLogin`).
#[derive(Serialize, utoipa::ToSchema)]
pub struct SsoLoginJson {
    id: String,
    label: String,
    #[serde(rename = "startURL")]
    start_url: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SsoLoginsJson {
    pub items: Vec<SsoLoginJson>,
}

/// The API path of a provider, under which its metadata, start and ACS routes live.
fn provider_path(p: &Provider) -> String {
    format!("/orgs/{}/saml/{}", p.org_id, p.id)
}

/// The service provider quire is for `p`.
pub fn service_provider(urls: &Urls, p: &Provider) -> ServiceProvider {
    let path = provider_path(p);
    ServiceProvider {
        entity_id: urls.api(&format!("{path}/metadata")),
        acs_url: urls.api(&format!("{path}/acs")),
    }
}

fn start_url(urls: &Urls, p: &Provider) -> String {
    urls.api(&format!("{}/start", provider_path(p)))
}

/// `standing` is the caller's in the provider's organization, for its default team.
pub fn provider_json(urls: &Urls, p: &Provider, standing: Standing) -> SamlProviderJson {
    let sp = service_provider(urls, p);
    SamlProviderJson {
        object: "saml-provider",
        id: p.id.clone(),
        label: p.label.clone(),
        sso_url: p.sso_url.clone(),
        entity_id: p.entity_id.clone(),
        certificate: p.certificate.clone(),
        default_team: p.default_team.as_ref().map(|t| team_json(t, standing)),
        default_role: p.default_role,
        created_at: p.created_at,
        status: if p.is_active() { "active" } else { "pending" },
        service: ServiceJson {
            acs_url: sp.acs_url,
            start_url: start_url(urls, p),
            entity_id: sp.entity_id,
        },
        urls: LocationJson {
            location: urls.api(&provider_path(p)),
        },
    }
}

pub fn login_json(urls: &Urls, p: &Provider) -> SsoLoginJson {
    SsoLoginJson {
        id: p.id.clone(),
        label: p.label.clone(),
        start_url: start_url(urls, p),
    }
}

/// A browser session (a quire extension: GitBook's API has none).
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionJson {
    object: &'static str,
    id: String,
    /// Who it signs in.
    user: UserJson,
    /// The provider that signed them in (absent once deleted).
    #[serde(skip_serializing_if = "Option::is_none")]
    saml_provider: Option<String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    expires_at: i64,
}

pub fn session_json(urls: &Urls, s: &Session) -> SessionJson {
    SessionJson {
        object: "session",
        id: s.id.clone(),
        user: user_json(urls, &s.user, true),
        saml_provider: s.provider_id.clone(),
        created_at: s.created_at,
        expires_at: s.expires_at,
    }
}
