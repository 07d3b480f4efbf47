//! Typed path parameters: one struct per path shape, named after what the path ends on. Their
//! fields carry the spec's parameter names (`{spaceId}` is `space_id`), so a handler reads
//! `path.space_id` instead of a position or a string key, and the OpenAPI document describes
//! each parameter from the same struct. Used through [`crate::extract::Path`], whose rejection
//! is the JSON error envelope.

use serde::Deserialize;
use utoipa::IntoParams;

/// Declares path structs: each derives `Deserialize` (camelCase, as the route templates spell
/// the names) and `IntoParams` (in: path), so the document and the extractor cannot disagree.
macro_rules! path_structs {
    ($(
        $(#[$meta:meta])*
        $name:ident { $($(#[$field_meta:meta])* $field:ident),+ $(,)? }
    )+) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, Deserialize, IntoParams)]
        #[serde(rename_all = "camelCase")]
        #[into_params(parameter_in = Path)]
        pub struct $name {
            $($(#[$field_meta])* pub $field: String,)+
        }
    )+};
}

path_structs! {
    /// `/v1/orgs/{organizationId}/openapi/{specSlug}`.
    OpenApiSpecPath {
        /// The id of the organization.
        organization_id,
        /// The slug of the OpenAPI specification.
        spec_slug,
    }
    /// `/v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}`.
    OpenApiSpecVersionPath {
        /// The id of the organization.
        organization_id,
        /// The slug of the OpenAPI specification.
        spec_slug,
        /// The id of the version.
        version_id,
    }
    /// `/v1/orgs/{organizationId}`.
    OrgPath {
        /// The id of the organization.
        organization_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}`.
    SitePath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}`.
    SiteSectionPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the site section.
        site_section_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}`.
    SiteSectionGroupPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the section group.
        site_section_group_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}`.
    SiteSectionGroupSectionPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the section group.
        site_section_group_id,
        /// The id of the site section.
        site_section_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}`.
    SiteSpacePath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the site space.
        site_space_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/external-links/{siteExternalLinkId}`.
    SiteExternalLinkPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the external link.
        site_external_link_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}`.
    SiteRedirectPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the redirect.
        site_redirect_id,
    }
    /// `/v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}`.
    SiteShareLinkPath {
        /// The id of the organization.
        organization_id,
        /// The id of the site.
        site_id,
        /// The id of the share link.
        share_link_id,
    }
    /// `/v1/orgs/{organizationId}/members/{userId}`.
    OrgMemberPath {
        /// The id of the organization.
        organization_id,
        /// The id of the member (a user id).
        user_id,
    }
    /// `/v1/orgs/{organizationId}/teams/{teamId}`.
    TeamPath {
        /// The id of the organization.
        organization_id,
        /// The id of the team.
        team_id,
    }
    /// `/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}`.
    TeamMemberPath {
        /// The id of the organization.
        organization_id,
        /// The id of the team.
        team_id,
        /// The id of the member (a user id).
        user_id,
    }
    /// `/v1/orgs/{organizationId}/saml/{samlProviderId}` and the routes under it.
    SamlProviderPath {
        /// The id of the organization.
        organization_id,
        /// The id of the SAML provider.
        saml_provider_id,
    }
    /// `/v1/orgs/{organizationId}/sessions/{sessionId}`.
    SessionPath {
        /// The id of the organization.
        organization_id,
        /// The id of the session.
        session_id,
    }
    /// `/v1/orgs/{organizationId}/link-invites/{inviteId}`, `/v1/orgs/{organizationId}/invites/{inviteId}`.
    InvitePath {
        /// The id of the organization.
        organization_id,
        /// The id of the invite link.
        invite_id,
    }
    /// `/v1/email-domains/{emailDomain}/orgs`.
    EmailDomainPath {
        /// An email domain (`example.com`).
        email_domain,
    }
    /// `/v1/users/{userId}`.
    UserPath {
        /// The id of the user.
        user_id,
    }
    /// `/v1/user/tokens/{tokenId}`.
    TokenPath {
        /// The id of the token (not its secret).
        token_id,
    }
    /// `/v1/collections/{collectionId}`.
    CollectionPath {
        /// The id of the collection.
        collection_id,
    }
    /// `/v1/collections/{collectionId}/permissions/users/{userId}`.
    CollectionUserPath {
        /// The id of the collection.
        collection_id,
        /// The id of the user.
        user_id,
    }
    /// `/v1/collections/{collectionId}/permissions/teams/{teamId}`.
    CollectionTeamPath {
        /// The id of the collection.
        collection_id,
        /// The id of the team.
        team_id,
    }
    /// `/v1/spaces/{spaceId}`.
    SpacePath {
        /// The id of the space.
        space_id,
    }
    /// `/v1/spaces/{spaceId}/permissions/users/{userId}`.
    SpaceUserPath {
        /// The id of the space.
        space_id,
        /// The id of the user.
        user_id,
    }
    /// `/v1/spaces/{spaceId}/permissions/teams/{teamId}`.
    SpaceTeamPath {
        /// The id of the space.
        space_id,
        /// The id of the team.
        team_id,
    }
    /// `/v1/spaces/{spaceId}/documents/{documentId}`.
    DocumentPath {
        /// The id of the space.
        space_id,
        /// The id of the document (its content hash).
        document_id,
    }
    /// `/v1/spaces/{spaceId}/content/files/{fileId}`.
    FilePath {
        /// The id of the space.
        space_id,
        /// The id of the file.
        file_id,
    }
    /// `/v1/spaces/{spaceId}/content/page/{pageId}`.
    PagePath {
        /// The id of the space.
        space_id,
        /// The id of the page.
        page_id,
    }
    /// `/v1/spaces/{spaceId}/content/path/{pagePath}`.
    PageByPathPath {
        /// The id of the space.
        space_id,
        /// The path of the page (`getting-started/install`).
        page_path,
    }
    /// `/v1/spaces/{spaceId}/content/reusable-contents/{reusableContentId}`.
    ReusableContentPath {
        /// The id of the space.
        space_id,
        /// The id of the reusable content.
        reusable_content_id,
    }
    /// `/v1/spaces/{spaceId}/revisions/{revisionId}`.
    RevisionPath {
        /// The id of the space.
        space_id,
        /// The id of the revision.
        revision_id,
    }
    /// `/v1/spaces/{spaceId}/revisions/{revisionId}/files/{fileId}`.
    RevisionFilePath {
        /// The id of the space.
        space_id,
        /// The id of the revision.
        revision_id,
        /// The id of the file.
        file_id,
    }
    /// `/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}`.
    RevisionPagePath {
        /// The id of the space.
        space_id,
        /// The id of the revision.
        revision_id,
        /// The id of the page.
        page_id,
    }
    /// `/v1/spaces/{spaceId}/revisions/{revisionId}/path/{pagePath}`.
    RevisionPageByPathPath {
        /// The id of the space.
        space_id,
        /// The id of the revision.
        revision_id,
        /// The path of the page (`getting-started/install`).
        page_path,
    }
    /// `/v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}`.
    RevisionReusableContentPath {
        /// The id of the space.
        space_id,
        /// The id of the revision.
        revision_id,
        /// The id of the reusable content.
        reusable_content_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}`.
    ChangeRequestPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers/{userId}`.
    ChangeRequestUserPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the user.
        user_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews/{reviewId}`.
    ReviewPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the review.
        review_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}`.
    ChangeRequestFilePath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the file.
        file_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}`.
    ChangeRequestPagePath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the page.
        page_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/path/{pagePath}`.
    ChangeRequestPageByPathPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The path of the page (`getting-started/install`).
        page_path,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/reusable-contents/{reusableContentId}`.
    ChangeRequestReusableContentPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the reusable content.
        reusable_content_id,
    }
    /// `/v1/spaces/{spaceId}/comments/{commentId}`.
    CommentPath {
        /// The id of the space.
        space_id,
        /// The id of the comment.
        comment_id,
    }
    /// `/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}`.
    ReplyPath {
        /// The id of the space.
        space_id,
        /// The id of the comment.
        comment_id,
        /// The id of the reply.
        comment_reply_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}`.
    ChangeRequestCommentPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the comment.
        comment_id,
    }
    /// `/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}`.
    ChangeRequestReplyPath {
        /// The id of the space.
        space_id,
        /// The id of the change request.
        change_request_id,
        /// The id of the comment.
        comment_id,
        /// The id of the reply.
        comment_reply_id,
    }
    /// `/blobs/{spaceId}/{hash}/{name}`: a file's signed download URL.
    BlobPath {
        /// The id of the space.
        space_id,
        /// The content hash of the file's bytes.
        hash,
        /// The file's name.
        name,
    }
    /// `/pdfs/{exportId}/{name}`: a PDF export's signed download URL.
    PdfExportPath {
        /// The id of the export.
        export_id,
        /// The PDF's file name.
        name,
    }
}

/// The ids a route names, for the handlers that serve several routes (content read from main,
/// a revision or a change request; comments of a space or of a change request). Each route's
/// operation extracts its own path struct and converts it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteIds {
    pub space_id: String,
    pub revision_id: Option<String>,
    pub change_request_id: Option<String>,
    pub page_id: Option<String>,
    pub file_id: Option<String>,
    pub page_path: Option<String>,
    pub reusable_content_id: Option<String>,
    pub comment_id: Option<String>,
    pub comment_reply_id: Option<String>,
}

impl RouteIds {
    /// The id named by its path parameter (`"spaceId"`).
    pub fn get(&self, name: &str) -> Option<&str> {
        match name {
            "spaceId" => Some(&self.space_id),
            "revisionId" => self.revision_id.as_deref(),
            "changeRequestId" => self.change_request_id.as_deref(),
            "pageId" => self.page_id.as_deref(),
            "fileId" => self.file_id.as_deref(),
            "pagePath" => self.page_path.as_deref(),
            "reusableContentId" => self.reusable_content_id.as_deref(),
            "commentId" => self.comment_id.as_deref(),
            "commentReplyId" => self.comment_reply_id.as_deref(),
            _ => None,
        }
    }
}

macro_rules! route_ids {
    ($($name:ident { $($field:ident),* })+) => {$(
        impl From<$name> for RouteIds {
            fn from(path: $name) -> RouteIds {
                RouteIds {
                    space_id: path.space_id,
                    $($field: Some(path.$field),)*
                    ..RouteIds::default()
                }
            }
        }
    )+};
}

route_ids! {
    SpacePath {}
    FilePath { file_id }
    PagePath { page_id }
    PageByPathPath { page_path }
    ReusableContentPath { reusable_content_id }
    RevisionPath { revision_id }
    RevisionFilePath { revision_id, file_id }
    RevisionPagePath { revision_id, page_id }
    RevisionPageByPathPath { revision_id, page_path }
    RevisionReusableContentPath { revision_id, reusable_content_id }
    ChangeRequestPath { change_request_id }
    ChangeRequestFilePath { change_request_id, file_id }
    ChangeRequestPagePath { change_request_id, page_id }
    ChangeRequestPageByPathPath { change_request_id, page_path }
    ChangeRequestReusableContentPath { change_request_id, reusable_content_id }
    CommentPath { comment_id }
    ReplyPath { comment_id, comment_reply_id }
    ChangeRequestCommentPath { change_request_id, comment_id }
    ChangeRequestReplyPath { change_request_id, comment_id, comment_reply_id }
}

/// The site a path names, as [`quire_store::visible`] loads it (`db.read_as::<site::X, _>`).
macro_rules! site_keys {
    ($($name:ident)+) => {$(
        impl $name {
            pub fn site(&self) -> quire_store::sites::SiteKey {
                quire_store::sites::SiteKey {
                    org_id: self.organization_id.clone(),
                    site_id: self.site_id.clone(),
                }
            }
        }
    )+};
}

site_keys! {
    SitePath SiteSectionPath SiteSectionGroupPath SiteSectionGroupSectionPath SiteSpacePath
    SiteExternalLinkPath SiteRedirectPath SiteShareLinkPath
}

/// The OpenAPI specification a path names (`db.read_as::<spec::X, _>`).
macro_rules! spec_keys {
    ($($name:ident)+) => {$(
        impl $name {
            pub fn spec(&self) -> quire_store::openapi::SpecKey {
                quire_store::openapi::SpecKey {
                    org_id: self.organization_id.clone(),
                    slug: self.spec_slug.clone(),
                }
            }
        }
    )+};
}

spec_keys! { OpenApiSpecPath OpenApiSpecVersionPath }

path_structs! {
    /// `/v1/orgs/{organizationId}/translations/{translationId}`.
    TranslationPath {
        /// The id of the organization.
        organization_id,
        /// The id of the translation.
        translation_id,
    }
    /// `/v1/orgs/{organizationId}/translations-glossary/{glossaryEntryId}`.
    GlossaryEntryPath {
        /// The id of the organization.
        organization_id,
        /// The id of the glossary entry.
        glossary_entry_id,
    }
}

path_structs! {
    /// `/v1/orgs/{organizationId}/conversations/{conversationId}`.
    ConversationPath {
        /// The id of the organization.
        organization_id,
        /// The id the conversation was ingested with.
        conversation_id,
    }
    /// `/v1/orgs/{organizationId}/conversations-issues/{issueId}`.
    ConversationIssuePath {
        /// The id of the organization.
        organization_id,
        /// The id of the issue.
        issue_id,
    }
    /// `/v1/orgs/{organizationId}/conversations-clusters/{clusterId}`.
    ConversationsClusterPath {
        /// The id of the organization.
        organization_id,
        /// The id of the cluster.
        cluster_id,
    }
}

impl TranslationPath {
    /// The translation the path names (`db.read_as::<translation::X, _>`).
    pub fn translation(&self) -> quire_store::translations::TranslationKey {
        quire_store::translations::TranslationKey {
            org_id: self.organization_id.clone(),
            translation_id: self.translation_id.clone(),
        }
    }
}

path_structs! {
    /// `/v1/integrations/{integrationName}`.
    IntegrationPath {
        /// The name of the integration.
        integration_name,
    }
    /// `/v1/integrations/{integrationName}/events/{eventId}`.
    IntegrationEventPath {
        /// The name of the integration.
        integration_name,
        /// The id of the event.
        event_id,
    }
    /// `/v1/integrations/{integrationName}/assets/{assetHash}`.
    IntegrationAssetPath {
        /// The name of the integration.
        integration_name,
        /// The hash of the icon or preview image.
        asset_hash,
    }
    /// `/v1/integrations/{integrationName}/installations/{installationId}`.
    InstallationPath {
        /// The name of the integration.
        integration_name,
        /// The id of the installation.
        installation_id,
    }
    /// `/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}`.
    InstallationSpacePath {
        /// The name of the integration.
        integration_name,
        /// The id of the installation.
        installation_id,
        /// The id of the space.
        space_id,
    }
    /// `/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}`.
    InstallationSitePath {
        /// The name of the integration.
        integration_name,
        /// The id of the installation.
        installation_id,
        /// The id of the site.
        site_id,
    }
}

/// The installation a path names (`db.read_as::<installation::X, _>`).
macro_rules! installation_keys {
    ($($name:ident)+) => {$(
        impl $name {
            pub fn installation(&self) -> quire_store::integrations::InstallationKey {
                quire_store::integrations::InstallationKey {
                    integration: self.integration_name.clone(),
                    installation_id: self.installation_id.clone(),
                }
            }
        }
    )+};
}

installation_keys! { InstallationPath InstallationSpacePath InstallationSitePath }

/// The team a path names (`db.read_as::<team::X, _>`).
macro_rules! team_keys {
    ($($name:ident)+) => {$(
        impl $name {
            pub fn team(&self) -> quire_store::teams::TeamKey {
                quire_store::teams::TeamKey {
                    org_id: self.organization_id.clone(),
                    team_id: self.team_id.clone(),
                }
            }
        }
    )+};
}

team_keys! { TeamPath TeamMemberPath }
