//! The cross-organization sweep: every operation the router serves, called by a user of another
//! organization (a valid token, no standing in the victim's organization) with the ids of the
//! victim's real resources in the path, answers like the same call with unknown ids: 404 with the
//! JSON error envelope (a DELETE: 204 with no content), nothing of the victim's in the body, and
//! nothing changed.
//!
//! The list of operations is read from the router itself (its `Debug` output names every path
//! and the methods it accepts), so a route added later fails
//! [`the_sweep_covers_every_route_of_the_router`] until it has a row in [`SWEEP`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::support::{TestApp, TestUser};

/// A 1x1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// What an outsider may get from an operation.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    /// The victim's resource is invisible: 404, as for unknown ids.
    Hidden,
    /// The operation is not about any organization's resources (the caller's own user, its own
    /// organizations, health and metrics): answered, checked for the victim's data.
    Own,
    /// The user directory: another user's public profile (`GET /v1/users/{userId}`), without
    /// the email of a user the caller shares no organization with.
    PublicProfile,
    /// The path carries a bearer capability (an invite link's id): whoever holds the link may
    /// see the invite, and joining is the link's purpose. Read only; joining is not called.
    Capability,
    /// Served to anyone, with or without a token, for what it is for: a SAML provider's
    /// metadata (its identity provider fetches it) and the start of a sign-in (a redirect to the
    /// identity provider). Answered with success.
    Public,
    /// Served to anyone, and what an outsider can send is refused (400 or 401) and changes
    /// nothing: the ACS takes only a response its identity provider signed, and a session's
    /// token page only a session's cookie.
    Refused,
    /// Not called: joining the organization through the invite link would make the outsider an
    /// insider for the rest of the sweep (the permission matrix covers it).
    NotCalled,
}

use Expect::*;

/// Every operation of the router with what an outsider may get. Checked against the router by
/// [`the_sweep_covers_every_route_of_the_router`].
const SWEEP: &[(&str, &str, Expect)] = &[
    ("GET", "/", Own),
    ("GET", "/healthz", Own),
    ("GET", "/readyz", Own),
    ("GET", "/metrics", Own),
    ("GET", "/v1/openapi.json", Own),
    ("GET", "/blobs/{spaceId}/{hash}/{name}", Hidden),
    ("GET", "/pdfs/{exportId}/{name}", Hidden),
    // URL lookups: the victim's share-link site and its space, by their URLs.
    ("GET", "/v1/urls/published", Hidden),
    ("POST", "/v1/urls/published", Hidden),
    ("GET", "/v1/urls/content", Hidden),
    // Users and organizations.
    ("GET", "/v1/user", Own),
    // The caller's own tokens; another user's token id is as unknown as any.
    ("GET", "/v1/user/tokens", Own),
    ("GET", "/v1/user/tokens/{tokenId}", Hidden),
    ("DELETE", "/v1/user/tokens/{tokenId}", Hidden),
    ("GET", "/v1/users/{userId}", PublicProfile),
    ("GET", "/v1/orgs", Own),
    ("POST", "/v1/orgs", Own),
    ("GET", "/v1/orgs/{organizationId}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}", Hidden),
    ("POST", "/v1/orgs/{organizationId}/join", Hidden),
    ("GET", "/v1/email-domains/{emailDomain}/orgs", Own),
    ("GET", "/v1/orgs/{organizationId}/agent-instructions", Hidden),
    ("PUT", "/v1/orgs/{organizationId}/agent-instructions", Hidden),
    // Members.
    ("GET", "/v1/orgs/{organizationId}/members", Hidden),
    ("GET", "/v1/orgs/{organizationId}/members/{userId}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}/members/{userId}", Hidden),
    ("DELETE", "/v1/orgs/{organizationId}/members/{userId}", Hidden),
    ("POST", "/v1/orgs/{organizationId}/members/{userId}/sso", Hidden),
    ("GET", "/v1/orgs/{organizationId}/members/{userId}/teams", Hidden),
    ("GET", "/v1/orgs/{organizationId}/members/{userId}/spaces", Hidden),
    ("POST", "/v1/orgs/{organizationId}/ping", Hidden),
    // Teams.
    ("GET", "/v1/orgs/{organizationId}/teams", Hidden),
    ("PUT", "/v1/orgs/{organizationId}/teams", Hidden),
    ("GET", "/v1/orgs/{organizationId}/teams/{teamId}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}/teams/{teamId}", Hidden),
    ("DELETE", "/v1/orgs/{organizationId}/teams/{teamId}", Hidden),
    ("GET", "/v1/orgs/{organizationId}/teams/{teamId}/members", Hidden),
    ("PUT", "/v1/orgs/{organizationId}/teams/{teamId}/members", Hidden),
    (
        "PUT",
        "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/teams/{teamId}/members/{userId}",
        Hidden,
    ),
    // Invites.
    ("GET", "/v1/orgs/{organizationId}/link-invites", Hidden),
    ("POST", "/v1/orgs/{organizationId}/link-invites", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/link-invites/{inviteId}",
        Capability,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/link-invites/{inviteId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/link-invites/{inviteId}",
        Hidden,
    ),
    ("POST", "/v1/orgs/{organizationId}/invites/{inviteId}", NotCalled),
    // Single sign-on. A provider's metadata is public (an identity provider fetches it): whoever
    // holds the provider's id may read it.
    ("GET", "/v1/orgs/{organizationId}/saml", Hidden),
    ("POST", "/v1/orgs/{organizationId}/saml", Hidden),
    ("GET", "/v1/orgs/{organizationId}/saml/{samlProviderId}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}/saml/{samlProviderId}", Hidden),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/saml/{samlProviderId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/metadata",
        Public,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/start",
        Public,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/saml/{samlProviderId}/acs",
        Refused,
    ),
    ("GET", "/v1/orgs/{organizationId}/sso", Hidden),
    ("GET", "/v1/orgs/{organizationId}/sessions", Hidden),
    ("DELETE", "/v1/orgs/{organizationId}/sessions/{sessionId}", Hidden),
    // The browser's own session: none for a token's holder.
    ("GET", "/session", Public),
    ("POST", "/session/token", Refused),
    ("POST", "/session/sign-out", Public),
    // Collections.
    ("GET", "/v1/orgs/{organizationId}/collections", Hidden),
    ("POST", "/v1/orgs/{organizationId}/collections", Hidden),
    ("GET", "/v1/collections/{collectionId}", Hidden),
    ("PATCH", "/v1/collections/{collectionId}", Hidden),
    ("DELETE", "/v1/collections/{collectionId}", Hidden),
    ("GET", "/v1/collections/{collectionId}/spaces", Hidden),
    ("POST", "/v1/collections/{collectionId}/move", Hidden),
    ("POST", "/v1/collections/{collectionId}/transfer", Hidden),
    ("POST", "/v1/collections/{collectionId}/permissions", Hidden),
    ("GET", "/v1/collections/{collectionId}/permissions/users", Hidden),
    ("GET", "/v1/collections/{collectionId}/permissions/teams", Hidden),
    (
        "PATCH",
        "/v1/collections/{collectionId}/permissions/users/{userId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/collections/{collectionId}/permissions/users/{userId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/collections/{collectionId}/permissions/teams/{teamId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/collections/{collectionId}/permissions/teams/{teamId}",
        Hidden,
    ),
    // Spaces.
    ("GET", "/v1/orgs/{organizationId}/spaces", Hidden),
    ("POST", "/v1/orgs/{organizationId}/spaces", Hidden),
    ("GET", "/v1/spaces/{spaceId}", Hidden),
    ("PATCH", "/v1/spaces/{spaceId}", Hidden),
    ("DELETE", "/v1/spaces/{spaceId}", Hidden),
    ("POST", "/v1/spaces/{spaceId}/duplicate", Hidden),
    ("POST", "/v1/spaces/{spaceId}/restore", Hidden),
    ("POST", "/v1/spaces/{spaceId}/move", Hidden),
    ("POST", "/v1/spaces/{spaceId}/transfer", Hidden),
    ("POST", "/v1/spaces/{spaceId}/permissions", Hidden),
    ("GET", "/v1/spaces/{spaceId}/permissions/users", Hidden),
    ("GET", "/v1/spaces/{spaceId}/permissions/teams", Hidden),
    ("PATCH", "/v1/spaces/{spaceId}/permissions/users/{userId}", Hidden),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/permissions/users/{userId}",
        Hidden,
    ),
    ("PATCH", "/v1/spaces/{spaceId}/permissions/teams/{teamId}", Hidden),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/permissions/teams/{teamId}",
        Hidden,
    ),
    // Content of main, of a revision, of a change request.
    ("GET", "/v1/spaces/{spaceId}/content", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/pages", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/files", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/files/{fileId}", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/page/{pageId}", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/path/{*pagePath}", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/content/reusable-contents/{reusableContentId}",
        Hidden,
    ),
    ("POST", "/v1/spaces/{spaceId}/content/template", Hidden),
    ("GET", "/v1/spaces/{spaceId}/revisions/{revisionId}", Hidden),
    ("GET", "/v1/spaces/{spaceId}/revisions/{revisionId}/pages", Hidden),
    ("GET", "/v1/spaces/{spaceId}/revisions/{revisionId}/files", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/files/{fileId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/path/{*pagePath}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/reusable-contents/{reusableContentId}/document",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/page/{pageId}/document",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/revisions/{revisionId}/changes",
        Hidden,
    ),
    ("GET", "/v1/spaces/{spaceId}/documents/{documentId}", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
        Hidden,
    ),
    ("GET", "/v1/spaces/{spaceId}/pdf", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/pdf",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/pages",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/path/{*pagePath}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/reusable-contents/{reusableContentId}",
        Hidden,
    ),
    // Links.
    ("GET", "/v1/spaces/{spaceId}/links", Hidden),
    ("GET", "/v1/spaces/{spaceId}/content/page/{pageId}/links", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/content/page/{pageId}/backlinks",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/content/files/{fileId}/backlinks",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/links",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/page/{pageId}/backlinks",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/content/files/{fileId}/backlinks",
        Hidden,
    ),
    // Change requests.
    ("GET", "/v1/orgs/{organizationId}/change-requests", Hidden),
    ("GET", "/v1/spaces/{spaceId}/change-requests", Hidden),
    ("POST", "/v1/spaces/{spaceId}/change-requests", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/merge",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/update",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/changes",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/contributors",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/requested-reviewers/{userId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/reviews/{reviewId}",
        Hidden,
    ),
    // Comments on a space and on a change request.
    ("GET", "/v1/spaces/{spaceId}/comments", Hidden),
    ("POST", "/v1/spaces/{spaceId}/comments", Hidden),
    ("GET", "/v1/spaces/{spaceId}/comments/{commentId}", Hidden),
    ("PUT", "/v1/spaces/{spaceId}/comments/{commentId}", Hidden),
    ("DELETE", "/v1/spaces/{spaceId}/comments/{commentId}", Hidden),
    ("GET", "/v1/spaces/{spaceId}/comments/{commentId}/replies", Hidden),
    (
        "POST",
        "/v1/spaces/{spaceId}/comments/{commentId}/replies",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    (
        "PUT",
        "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    ("GET", "/v1/spaces/{spaceId}/commenters", Hidden),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
        Hidden,
    ),
    (
        "PUT",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies",
        Hidden,
    ),
    (
        "POST",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    (
        "PUT",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/comments/{commentId}/replies/{commentReplyId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/commenters",
        Hidden,
    ),
    // Docs sites: the victim's site is published with share-link visibility, so its
    // published view needs a key the outsider does not have.
    ("GET", "/v1/orgs/{organizationId}/sites", Hidden),
    ("POST", "/v1/orgs/{organizationId}/sites", Hidden),
    // OpenAPI specifications (a private one: its latest content is hidden too).
    ("GET", "/v1/orgs/{organizationId}/openapi", Hidden),
    ("POST", "/v1/orgs/{organizationId}/openapi", Hidden),
    ("GET", "/v1/orgs/{organizationId}/openapi/{specSlug}", Hidden),
    ("PUT", "/v1/orgs/{organizationId}/openapi/{specSlug}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}/openapi/{specSlug}", Hidden),
    ("DELETE", "/v1/orgs/{organizationId}/openapi/{specSlug}", Hidden),
    // Conversations, their issues and clusters.
    ("GET", "/v1/orgs/{organizationId}/conversations", Hidden),
    ("POST", "/v1/orgs/{organizationId}/conversations", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/conversations/{conversationId}",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/conversations-issues", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/conversations-issues/{issueId}",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/conversations-clusters", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/conversations-clusters/{clusterId}",
        Hidden,
    ),
    // Translations and the glossary.
    ("GET", "/v1/orgs/{organizationId}/translations", Hidden),
    ("POST", "/v1/orgs/{organizationId}/translations", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/translations/{translationId}",
        Hidden,
    ),
    (
        "PUT",
        "/v1/orgs/{organizationId}/translations/{translationId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/translations/{translationId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/translations/{translationId}/run",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/translations-glossary", Hidden),
    ("PUT", "/v1/orgs/{organizationId}/translations-glossary", Hidden),
    (
        "GET",
        "/v1/orgs/{organizationId}/translations-glossary/{glossaryEntryId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/latest/content/raw",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/openapi/{specSlug}/versions/{versionId}/content",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/sites/{siteId}", Hidden),
    ("PATCH", "/v1/orgs/{organizationId}/sites/{siteId}", Hidden),
    ("DELETE", "/v1/orgs/{organizationId}/sites/{siteId}", Hidden),
    ("POST", "/v1/orgs/{organizationId}/sites/{siteId}/publish", Hidden),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/unpublish",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/published",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/structure",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema",
        Hidden,
    ),
    (
        "PUT",
        "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/adaptive-schema/template-conditions",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/publishing/auth/regenerate",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/publishing/preview",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/structure/sort",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/external-links",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/external-links/{siteExternalLinkId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/external-links/{siteExternalLinkId}",
        Hidden,
    ),
    (
        "PUT",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/customization",
        Hidden,
    ),
    (
        "PUT",
        "/v1/orgs/{organizationId}/sites/{siteId}/customization",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/share-links",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/share-links",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/share-links/{shareLinkId}",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/sites/{siteId}/sections", Hidden),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/sections",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/move",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
        Hidden,
    ),
    (
        "PUT",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/customization",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
        Hidden,
    ),
    (
        "POST",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects",
        Hidden,
    ),
    (
        "GET",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/orgs/{organizationId}/sites/{siteId}/redirects/{siteRedirectId}",
        Hidden,
    ),
    ("GET", "/v1/orgs/{organizationId}/sites/{siteId}/redirect", Hidden),
    // Integrations: the victim's is private, so invisible; the list holds only what the caller
    // may see. A name is global: publishing under the victim's name with an empty body is
    // refused before any lookup, as for an unknown name.
    ("GET", "/v1/integrations", Own),
    ("GET", "/v1/integrations/{integrationName}", Hidden),
    ("POST", "/v1/integrations/{integrationName}", Hidden),
    ("DELETE", "/v1/integrations/{integrationName}", Hidden),
    (
        "GET",
        "/v1/integrations/{integrationName}/assets/{assetHash}",
        Hidden,
    ),
    ("GET", "/v1/integrations/{integrationName}/events", Hidden),
    (
        "GET",
        "/v1/integrations/{integrationName}/events/{eventId}",
        Hidden,
    ),
    ("PUT", "/v1/integrations/{integrationName}/dev", Hidden),
    ("POST", "/v1/integrations/{integrationName}/render", Hidden),
    ("DELETE", "/v1/integrations/{integrationName}/dev", Hidden),
    ("GET", "/v1/integrations/{integrationName}/spaces", Hidden),
    ("GET", "/v1/integrations/{integrationName}/sites", Hidden),
    ("GET", "/v1/integrations/{integrationName}/installations", Hidden),
    ("POST", "/v1/integrations/{integrationName}/installations", Hidden),
    (
        "GET",
        "/v1/integrations/{integrationName}/installations/{installationId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/integrations/{integrationName}/installations/{installationId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/integrations/{integrationName}/installations/{installationId}",
        Hidden,
    ),
    (
        "POST",
        "/v1/integrations/{integrationName}/installations/{installationId}/tokens",
        Hidden,
    ),
    (
        "GET",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces",
        Hidden,
    ),
    (
        "POST",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces",
        Hidden,
    ),
    (
        "GET",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/integrations/{integrationName}/installations/{installationId}/spaces/{spaceId}",
        Hidden,
    ),
    (
        "GET",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites",
        Hidden,
    ),
    (
        "POST",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites",
        Hidden,
    ),
    (
        "GET",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
        Hidden,
    ),
    (
        "PATCH",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
        Hidden,
    ),
    (
        "DELETE",
        "/v1/integrations/{integrationName}/installations/{installationId}/sites/{siteId}",
        Hidden,
    ),
    // Search.
    ("GET", "/v1/spaces/{spaceId}/search", Hidden),
    ("GET", "/v1/orgs/{organizationId}/search", Hidden),
];

/// Every (method, path) the router serves, read from its `Debug` output (axum has no public
/// way to list routes). HEAD, which axum answers for every GET, is left out.
pub(crate) fn router_routes(app: &TestApp) -> BTreeSet<(String, String)> {
    let state = app.server().clone();
    let dump = format!("{:?}", quire_server::router::router(state));
    // `Router { path_router: PathRouter { routes: {RouteId(n): MethodRouter(MethodRouter { ...,
    // allow_header: Bytes(b"GET,HEAD") }), ...}, node: Node { paths: {RouteId(n): "/path", ...} } },
    // fallback_router: ... }`
    let main = dump
        .split_once("path_router: PathRouter { routes: {")
        .and_then(|(_, rest)| rest.split_once(", fallback_router:"))
        .map(|(main, _)| main)
        .expect("the router's Debug output has changed shape: update router_routes");
    let (routes, paths) = main
        .split_once("node: Node { paths: {")
        .expect("the router's Debug output has changed shape: update router_routes");
    let route_id = |s: &str| -> Option<(String, String)> {
        let (id, rest) = s.split_once(')')?;
        Some((id.to_string(), rest.to_string()))
    };
    let mut methods: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for chunk in routes.split("RouteId(").skip(1) {
        let (id, rest) = route_id(chunk).expect("route id");
        // `any(...)`: an integration's public endpoint, the script's and not an operation.
        if rest.starts_with(": MethodRouter(MethodRouter { get: None, head: None, delete: None, options: None, patch: None, post: None, put: None, trace: None, connect: None, fallback: Service(")
            && rest.contains("allow_header: Skip")
        {
            methods.insert(id, Vec::new());
            continue;
        }
        let allow = rest
            .split_once("allow_header: Bytes(b\"")
            .and_then(|(_, a)| a.split_once('"'))
            .map(|(a, _)| a.to_string())
            .unwrap_or_else(|| panic!("route {id}: no allow header in {rest}"));
        methods.insert(
            id,
            allow
                .split(',')
                .filter(|m| *m != "HEAD")
                .map(str::to_string)
                .collect(),
        );
    }
    let mut out = BTreeSet::new();
    for chunk in paths.split("RouteId(").skip(1) {
        let (id, rest) = route_id(chunk).expect("route id");
        let path = rest
            .split('"')
            .nth(1)
            .unwrap_or_else(|| panic!("route {id}: no path in {rest}"));
        for m in methods
            .get(&id)
            .unwrap_or_else(|| panic!("route {id} has no methods"))
        {
            out.insert((m.clone(), path.to_string()));
        }
    }
    assert!(out.len() > 50, "too few routes read from the router: {out:?}");
    out
}

#[tokio::test]
async fn the_sweep_covers_every_route_of_the_router() {
    let app = TestApp::start().await;
    let served = router_routes(&app);
    let swept: BTreeSet<(String, String)> = SWEEP
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    assert_eq!(swept.len(), SWEEP.len(), "a route is listed twice in SWEEP");
    let missing: Vec<_> = served.difference(&swept).collect();
    let stale: Vec<_> = swept.difference(&served).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "the outsider sweep must list exactly the routes served.\nserved but not swept (add them \
         to SWEEP): {missing:#?}\nswept but not served (remove them): {stale:#?}"
    );
}

/// The victim organization and its resources, all made by its admin.
struct Victim {
    owner: TestUser,
    /// Path parameter → the id (or value) of a real resource of the victim.
    params: BTreeMap<&'static str, String>,
    /// Strings that must never reach an outsider: titles, texts, emails, names and every id of
    /// the victim (ids are allowed back only where the request's path names them).
    secrets: BTreeSet<String>,
    /// Owner-readable URLs whose answers make the snapshot.
    snapshot_paths: Vec<String>,
}

fn id(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_string()
}

/// A random token for a secret text, so that a leak cannot match anything by chance.
fn secret(label: &str) -> String {
    format!("{label}{}", quire_server::ids::random_base62(12))
}

async fn victim(app: &TestApp) -> Victim {
    let owner = app.user("VictimOwner").await;
    let domain = format!("{}.example.org", secret("victim").to_lowercase());
    let member = app
        .user_with_email("VictimMember", &format!("member@{domain}"))
        .await;
    let org_title = secret("VictimOrg");
    let org = app.org(&owner, &org_title).await;
    app.patch(
        &owner,
        &format!("/v1/orgs/{org}"),
        json!({"emailDomains": [domain]}),
    )
    .await
    .expect(200);
    let instructions = secret("Instructions");
    app.put(
        &owner,
        &format!("/v1/orgs/{org}/agent-instructions"),
        json!({"instructions": {"object": "document", "data": {}, "nodes": [
            {"object": "block", "type": "paragraph", "data": {}, "nodes": [
                {"object": "text", "leaves": [{"object": "leaf", "text": instructions, "marks": []}]}
            ]}
        ]}}),
    )
    .await
    .expect(200);
    app.add_member(&owner, &org, &member, Some("review")).await;
    let team_title = secret("Team");
    let team = id(&app
        .put(
            &owner,
            &format!("/v1/orgs/{org}/teams"),
            json!({"title": team_title}),
        )
        .await
        .expect(201));
    app.put(
        &owner,
        &format!("/v1/orgs/{org}/teams/{team}/members"),
        json!({"add": [member.id]}),
    )
    .await
    .expect(204);
    let invite = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/link-invites"),
            json!({"role": "read"}),
        )
        .await
        .expect(201));
    let collection_title = secret("Collection");
    let collection = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/collections"),
            json!({"title": collection_title}),
        )
        .await
        .expect(201));
    let space_title = secret("Space");
    let space = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/spaces"),
            json!({"title": space_title, "parent": collection, "empty": true}),
        )
        .await
        .expect(201));
    for target in [
        format!("/v1/spaces/{space}/permissions"),
        format!("/v1/collections/{collection}/permissions"),
    ] {
        app.post(
            &owner,
            &target,
            json!({"role": "edit", "users": [member.id], "teams": [team]}),
        )
        .await
        .expect(204);
    }
    // Main content: a page linking a file, written through a change request and merged.
    let subject = secret("Subject");
    let first = id(&app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": subject}),
        )
        .await
        .expect(201));
    let page_text = secret("PageText");
    let file_name = format!("{}.png", secret("file").to_lowercase());
    let written = app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests/{first}/content?compat=false"),
            json!({"changes": [
                {"operation": "insert_files", "files": [{"ref": "img", "name": file_name, "contentType": "image/png", "base64": PNG}]},
                {"operation": "insert_page", "ref": "guide", "title": "Guide",
                 "document": {"markdown": format!("# Guide\n\n{page_text}\n\n![Logo](./img)\n")}},
            ]}),
        )
        .await
        .expect(200);
    let page = id(&written["changes"][0]["page"]);
    let file = id(&written["insertedFiles"][0]);
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{first}/merge"),
        json!({}),
    )
    .await
    .expect(200);
    let revision = app
        .get(&owner, &format!("/v1/spaces/{space}/content"))
        .await
        .expect(200);
    let revision = id(&revision);
    let plain = app
        .get(&owner, &format!("/v1/spaces/{space}/content/page/{page}"))
        .await
        .expect(200);
    let document = plain["documentId"].as_str().expect("documentId").to_string();
    let page_path = plain["path"].as_str().expect("path").to_string();
    let files = app
        .get(&owner, &format!("/v1/spaces/{space}/content/files/{file}"))
        .await
        .expect(200);
    // The download URL: /blobs/{spaceId}/{hash}/{name}?ct=..&e=..&s=..
    let download = files["downloadURL"].as_str().expect("downloadURL").to_string();
    let blob_path = download
        .split_once("/blobs/")
        .map(|(_, p)| p.split('?').next().unwrap_or_default().to_string())
        .expect("a /blobs/ URL");
    let mut blob = blob_path.splitn(3, '/').skip(1);
    let hash = blob.next().expect("hash").to_string();
    // An open change request with its own content, comments, a requested reviewer and a review.
    let cr_subject = secret("OpenSubject");
    let cr = id(&app
        .post(
            &owner,
            &format!("/v1/spaces/{space}/change-requests"),
            json!({"subject": cr_subject, "status": "open"}),
        )
        .await
        .expect(201));
    let cr_text = secret("CrText");
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/content"),
        json!({"changes": [{"operation": "update_page", "page": page,
                             "document": {"markdown": format!("# Guide\n\n{cr_text}\n")}}]}),
    )
    .await
    .expect(200);
    app.post(
        &owner,
        &format!("/v1/spaces/{space}/change-requests/{cr}/requested-reviewers"),
        json!({"users": [member.id]}),
    )
    .await
    .expect(200);
    let review = id(&app
        .post(
            &member,
            &format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
            json!({"status": "approved"}),
        )
        .await
        .expect(201));
    let comment_text = secret("Comment");
    let reply_text = secret("Reply");
    let mut comment_ids = Vec::new();
    for base in [
        format!("/v1/spaces/{space}/comments"),
        format!("/v1/spaces/{space}/change-requests/{cr}/comments"),
    ] {
        let comment = app
            .post(
                &owner,
                &base,
                json!({"body": {"markdown": comment_text}, "page": page}),
            )
            .await;
        assert!(comment.status == 200 || comment.status == 201, "{}", comment.body);
        let comment = id(&comment.body);
        let reply = app
            .post(
                &member,
                &format!("{base}/{comment}/replies"),
                json!({"body": {"markdown": reply_text}}),
            )
            .await;
        assert!(reply.status == 200 || reply.status == 201, "{}", reply.body);
        comment_ids.push((comment, id(&reply.body)));
    }
    // Both comment routes get the same ids: the space's comment is used under the change
    // request too, which a correct server refuses in any case.
    let (comment, reply) = comment_ids[0].clone();
    // A docs site: a section showing the space, in a group, a share link; published, for
    // holders of a share key only.
    let site_title = secret("Site");
    let site = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites"),
            json!({"title": site_title, "visibility": "share-link"}),
        )
        .await
        .expect(201));
    let section = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites/{site}/sections"),
            json!({"spaceId": space, "title": secret("Section")}),
        )
        .await
        .expect(201);
    let site_space = id(&section["siteSpaces"][0]);
    let section = id(&section);
    let section_group = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites/{site}/section-groups"),
            json!({"title": secret("Group"), "sections": [section]}),
        )
        .await
        .expect(201));
    let share_link = app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites/{site}/share-links"),
            json!({"name": "Reviewers"}),
        )
        .await
        .expect(201);
    let share_key = share_link["key"].as_str().expect("share key").to_string();
    let share_link = id(&share_link);
    app.post(&owner, &format!("/v1/orgs/{org}/sites/{site}/publish"), json!({}))
        .await
        .expect(200);
    let external_link = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites/{site}/external-links"),
            json!({"title": secret("Link"), "url": "https://example.com/status"}),
        )
        .await
        .expect(201));
    let redirect = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/sites/{site}/redirects"),
            json!({"source": "/old", "destination": {"kind": "site-section", "siteSectionId": section}}),
        )
        .await
        .expect(201));
    let tokens = app.get(&owner, "/v1/user/tokens").await.expect(200);
    let token = id(&tokens["items"][0]);
    let mut params = BTreeMap::new();
    params.insert("organizationId", org.clone());
    params.insert("spaceId", space.clone());
    params.insert("collectionId", collection.clone());
    params.insert("teamId", team.clone());
    params.insert("userId", member.id.clone());
    params.insert("inviteId", invite.clone());
    params.insert("changeRequestId", cr.clone());
    params.insert("pageId", page.clone());
    params.insert("pagePath", page_path);
    params.insert("fileId", file.clone());
    params.insert("commentId", comment);
    params.insert("commentReplyId", reply);
    params.insert("reviewId", review.clone());
    params.insert("tokenId", token);
    params.insert("revisionId", revision.clone());
    params.insert("documentId", document.clone());
    // The victim has no reusable content (nothing in the API creates one): an unknown id.
    params.insert("reusableContentId", quire_server::ids::new_id());
    params.insert("emailDomain", domain.clone());
    params.insert("hash", hash.clone());
    params.insert("name", file_name.clone());
    // A PDF export of the victim's space (its link's signature is what an outsider lacks).
    let pdf = app
        .get(&owner, &format!("/v1/spaces/{space}/pdf"))
        .await
        .expect(200);
    let export = pdf["url"]
        .as_str()
        .and_then(|url| url.split("/pdfs/").nth(1))
        .and_then(|rest| rest.split('/').next())
        .expect("a /pdfs/ URL")
        .to_string();
    params.insert("exportId", export);
    let saml_provider = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/saml"),
            // Active, and signing in at this server's own /healthz, so that following the
            // start URL's redirect stays here.
            json!({
                "label": "Okta",
                "ssoURL": format!("http://{}/healthz", app.addr()),
                "entityID": "https://idp.example.com/metadata",
                "certificate": include_str!("fixtures/saml/idp-cert.pem"),
            }),
        )
        .await
        .expect(201));
    params.insert("samlProviderId", saml_provider);
    // No session is the victim's (only a sign-in opens one): any id is as unknown as another.
    params.insert("sessionId", "victimsession".to_string());
    params.insert("siteId", site.clone());
    params.insert("siteSectionId", section.clone());
    params.insert("siteSectionGroupId", section_group.clone());
    params.insert("siteSpaceId", site_space.clone());
    params.insert("shareLinkId", share_link.clone());
    params.insert("siteRedirectId", redirect.clone());
    params.insert("siteExternalLinkId", external_link.clone());
    let integration = victim_integration(app, &owner, &org, &space, &site).await;
    params.insert("integrationName", integration.name.clone());
    params.insert("installationId", integration.installation.clone());
    params.insert("eventId", integration.event.clone());
    params.insert("assetHash", integration.icon.clone());
    let (spec_slug, spec_version, spec_title) = victim_spec(app, &owner, &org).await;
    params.insert("specSlug", spec_slug);
    params.insert("versionId", spec_version);
    let translation = id(&app
        .post(
            &owner,
            &format!("/v1/orgs/{org}/translations"),
            json!({"source": {"space": space, "language": "en"}, "language": "fr"}),
        )
        .await
        .expect(201));
    params.insert("translationId", translation);
    app.put(
        &owner,
        &format!("/v1/orgs/{org}/translations-glossary"),
        json!({"operations": [{"type": "insert", "translations": {"en": "victim term", "fr": "terme"}}]}),
    )
    .await
    .expect(204);
    let glossary = app
        .get(&owner, &format!("/v1/orgs/{org}/translations-glossary"))
        .await
        .expect(200);
    params.insert("glossaryEntryId", id(&glossary["items"][0]));
    let conversation_subject = secret("VictimConversation");
    app.post(
        &owner,
        &format!("/v1/orgs/{org}/conversations"),
        json!({"id": "victim-conversation", "subject": conversation_subject,
               "parts": [{"type": "message", "role": "user", "body": "How do I export pages to Salesforce?"}]}),
    )
    .await
    .expect(204);
    crate::conversations::settled(app, &owner, &org).await;
    let issue = app
        .get(&owner, &format!("/v1/orgs/{org}/conversations-issues"))
        .await
        .expect(200);
    params.insert("conversationId", "victim-conversation".to_string());
    params.insert("issueId", id(&issue["items"][0]["issue"]));
    params.insert(
        "clusterId",
        issue["items"][0]["issue"]["cluster"]
            .as_str()
            .unwrap()
            .to_string(),
    );
    let mut secrets: BTreeSet<String> = [
        spec_title,
        org_title,
        conversation_subject,
        instructions,
        team_title,
        collection_title,
        space_title,
        subject,
        page_text,
        file_name,
        cr_subject,
        cr_text,
        comment_text,
        reply_text,
        member.email.clone(),
        owner.email.clone(),
        owner.id.clone(),
        first,
        hash,
        domain,
        site_title,
        share_key,
    ]
    .into_iter()
    .collect();
    secrets.extend(params.values().cloned());
    for (c, r) in &comment_ids {
        secrets.insert(c.clone());
        secrets.insert(r.clone());
    }
    secrets.remove(&params["reusableContentId"]);
    let snapshot_paths = vec![
        format!("/v1/integrations/{}", integration.name),
        format!(
            "/v1/integrations/{}/installations/{}",
            integration.name, integration.installation
        ),
        format!(
            "/v1/integrations/{}/installations/{}/spaces",
            integration.name, integration.installation
        ),
        format!(
            "/v1/integrations/{}/installations/{}/sites",
            integration.name, integration.installation
        ),
        format!("/v1/orgs/{org}"),
        format!("/v1/orgs/{org}/agent-instructions"),
        format!("/v1/orgs/{org}/members"),
        format!("/v1/orgs/{org}/members/{}", member.id),
        format!("/v1/orgs/{org}/members/{}/teams", member.id),
        format!("/v1/orgs/{org}/members/{}/spaces", member.id),
        format!("/v1/orgs/{org}/teams"),
        format!("/v1/orgs/{org}/teams/{team}/members"),
        format!("/v1/orgs/{org}/link-invites"),
        format!("/v1/orgs/{org}/saml"),
        format!("/v1/orgs/{org}/collections"),
        format!("/v1/orgs/{org}/spaces"),
        format!("/v1/orgs/{org}/change-requests"),
        format!("/v1/collections/{collection}"),
        format!("/v1/collections/{collection}/spaces"),
        format!("/v1/collections/{collection}/permissions/users"),
        format!("/v1/collections/{collection}/permissions/teams"),
        format!("/v1/spaces/{space}"),
        format!("/v1/spaces/{space}/permissions/users"),
        format!("/v1/spaces/{space}/permissions/teams"),
        format!("/v1/spaces/{space}/content"),
        format!("/v1/spaces/{space}/content/files"),
        format!("/v1/spaces/{space}/content/page/{page}?format=markdown"),
        format!("/v1/spaces/{space}/change-requests"),
        format!("/v1/spaces/{space}/change-requests/{cr}"),
        format!("/v1/spaces/{space}/change-requests/{cr}/content/page/{page}?format=markdown"),
        format!("/v1/spaces/{space}/change-requests/{cr}/requested-reviewers"),
        format!("/v1/spaces/{space}/change-requests/{cr}/reviews"),
        format!("/v1/spaces/{space}/comments"),
        format!("/v1/spaces/{space}/change-requests/{cr}/comments"),
        format!("/v1/spaces/{space}/comments/{}/replies", comment_ids[0].0),
        format!(
            "/v1/spaces/{space}/change-requests/{cr}/comments/{}/replies",
            comment_ids[1].0
        ),
        format!("/v1/spaces/{space}/links"),
        format!("/v1/orgs/{org}/openapi"),
        format!(
            "/v1/orgs/{org}/openapi/{}/versions/latest/content",
            params["specSlug"]
        ),
        "/v1/user/tokens".to_string(),
        format!("/v1/orgs/{org}/translations/{}", params["translationId"]),
        format!("/v1/orgs/{org}/translations-glossary"),
        format!("/v1/orgs/{org}/conversations"),
        format!("/v1/orgs/{org}/conversations/victim-conversation"),
        format!("/v1/orgs/{org}/conversations-issues"),
        format!("/v1/orgs/{org}/conversations-clusters"),
    ];
    Victim {
        owner,
        params,
        secrets,
        snapshot_paths,
    }
}

/// The victim's private integration, installed in its organization and enabled on its space
/// and site.
struct VictimIntegration {
    name: String,
    installation: String,
    /// One of its events.
    event: String,
    /// The hash of its icon.
    icon: String,
}

async fn victim_integration(
    app: &TestApp,
    owner: &TestUser,
    org: &str,
    space: &str,
    site: &str,
) -> VictimIntegration {
    let name = format!("victim-{}", quire_server::ids::random_base62(8).to_lowercase());
    let published = app
        .post(
            owner,
            &format!("/v1/integrations/{name}"),
            json!({"organization": org, "title": "Victim app", "description": "", "script": "x",
                   "scopes": ["space:content:read"], "visibility": "private", "icon": PNG}),
        )
        .await
        .expect(200);
    let icon = published["urls"]["icon"]
        .as_str()
        .and_then(|u| u.rsplit('/').next())
        .expect("an icon URL")
        .to_string();
    let installation = id(&app
        .post(
            owner,
            &format!("/v1/integrations/{name}/installations"),
            json!({"organization": org}),
        )
        .await
        .expect(201));
    let base = format!("/v1/integrations/{name}/installations/{installation}");
    app.post(owner, &format!("{base}/spaces"), json!({"space": space}))
        .await
        .expect(201);
    app.post(owner, &format!("{base}/sites"), json!({"site": site}))
        .await
        .expect(201);
    let events = app
        .get(owner, &format!("/v1/integrations/{name}/events"))
        .await
        .expect(200);
    let event = id(&events["items"][0]);
    VictimIntegration {
        name,
        installation,
        event,
        icon,
    }
}

/// A private OpenAPI specification of the victim, given as text, once processed: its slug, its
/// version and the secret title in its content.
async fn victim_spec(app: &TestApp, owner: &TestUser, org: &str) -> (String, String, String) {
    let title = secret("SpecTitle");
    let text = json!({"openapi": "3.1.0", "info": {"title": title, "version": "1"}, "paths": {}}).to_string();
    let slug = "victim-api";
    app.post(
        owner,
        &format!("/v1/orgs/{org}/openapi"),
        json!({"slug": slug, "source": {"text": text}}),
    )
    .await
    .expect(201);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let spec = app
            .get(owner, &format!("/v1/orgs/{org}/openapi/{slug}"))
            .await
            .expect(200);
        if let Some(version) = spec["lastVersion"].as_str() {
            return (slug.to_string(), version.to_string(), title);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the victim's spec was never processed: {spec}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

impl Victim {
    /// What the owner reads, with the download URLs' expiry (rounded to the hour) cut off.
    async fn snapshot(&self, app: &TestApp) -> Vec<(String, Value)> {
        fn strip(v: &mut Value) {
            match v {
                Value::String(s) if s.contains("/blobs/") => {
                    if let Some((url, _)) = s.split_once('?') {
                        *s = url.to_string();
                    }
                }
                Value::Array(items) => items.iter_mut().for_each(strip),
                Value::Object(fields) => fields.values_mut().for_each(strip),
                _ => {}
            }
        }
        let mut out = Vec::new();
        for path in &self.snapshot_paths {
            let mut body = app.get(&self.owner, path).await.expect(200);
            strip(&mut body);
            out.push((path.clone(), body));
        }
        out
    }
}

/// The path with every `{param}` (and `{*param}`) filled from `values`.
fn fill(route: &str, values: &BTreeMap<&'static str, String>) -> String {
    route
        .split('/')
        .map(
            |seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => {
                    let name = name.trim_start_matches('*');
                    values
                        .get(name)
                        .unwrap_or_else(|| panic!("no value for {{{name}}} in {route}: add it to the victim"))
                        .clone()
                }
                None => seg.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// Values of the same shapes as the victim's, naming nothing.
fn unknown_params(real: &BTreeMap<&'static str, String>) -> BTreeMap<&'static str, String> {
    real.iter()
        .map(|(k, v)| {
            let fake = match *k {
                "emailDomain" => "nobody-here.example.net".to_string(),
                "pagePath" => "no/such/page".to_string(),
                "name" => "nothing.png".to_string(),
                // A valid slug: an invalid one is refused (400) before anything is looked up.
                "specSlug" => format!("no-such-{}", quire_server::ids::random_base62(8).to_lowercase()),
                "integrationName" => {
                    format!("no-such-{}", quire_server::ids::random_base62(8).to_lowercase())
                }
                "hash" | "documentId" | "assetHash" => {
                    // Same length and alphabet (hex digests).
                    let mut s = quire_server::ids::random_base62(v.len()).to_lowercase();
                    s = s
                        .chars()
                        .map(|c| if c.is_ascii_hexdigit() { c } else { 'a' })
                        .collect();
                    s
                }
                _ => quire_server::ids::random_base62(v.len().max(20)),
            };
            (*k, fake)
        })
        .collect()
}

/// A body a caller with the rights would send, so that the request gets past parsing.
fn plausible_body(method: &str, route: &str, outsider: &TestUser, outsider_org: &str) -> Option<Value> {
    if method == "GET" || method == "DELETE" {
        return None;
    }
    let pwned = || json!({"body": {"markdown": "pwned"}});
    let tail = route.rsplit('/').next().unwrap_or_default();
    let installations = route.contains("/installations/");
    let body = match (method, tail) {
        ("POST", "installations") => json!({"organization": outsider_org}),
        ("PATCH", "{installationId}") => json!({"configuration": {"pwned": true}}),
        ("POST", "spaces") if installations => json!({"space": outsider_org}),
        ("POST", "sites") if installations => json!({"site": outsider_org}),
        ("PATCH", "{spaceId}" | "{siteId}") if installations => json!({"configuration": {"pwned": true}}),
        ("PUT", "dev") => json!({"tunnelUrl": "https://example.com/pwned"}),
        ("POST", "orgs") | ("PUT", "teams") => json!({"title": "Pwned"}),
        ("PATCH", "{organizationId}") => json!({"title": "Pwned", "inviteLinks": true}),
        ("PUT", "agent-instructions") => {
            json!({"instructions": {"object": "document", "data": {}, "nodes": []}})
        }
        ("PATCH", "{userId}") if route.contains("/permissions/") => json!({"role": "admin"}),
        ("PATCH", "{teamId}") if route.contains("/permissions/") => json!({"role": "admin"}),
        ("PATCH", "{userId}") => json!({"role": "admin"}),
        ("PATCH", "{teamId}") => json!({"title": "Pwned"}),
        ("PUT", "members") => json!({"add": [outsider.id]}),
        ("PUT", "{userId}") => json!({}),
        ("POST", "link-invites") | ("PATCH", "{inviteId}") => json!({"role": "admin"}),
        ("POST", "saml") | ("PATCH", "{samlProviderId}") => {
            json!({"label": "Pwned", "ssoURL": "https://example.com/pwned"})
        }
        ("POST", "collections") | ("PATCH", "{collectionId}") => json!({"title": "Pwned"}),
        ("POST", "sites") | ("PATCH", "{siteId}") => json!({"title": "Pwned"}),
        ("POST", "openapi") => json!({"slug": "pwned", "source": {"text": "openapi: 3.1.0"}}),
        ("PUT", "{specSlug}") => json!({"source": {"text": "openapi: 3.1.0"}}),
        ("PATCH", "{specSlug}") => json!({"visibility": "public"}),
        ("POST", "translations") => {
            json!({"source": {"space": outsider_org, "language": "en"}, "language": "fr"})
        }
        ("PUT", "{translationId}") => {
            json!({"instructions": {"object": "document", "data": {}, "nodes": []}})
        }
        ("POST", "conversations") => {
            json!({"id": "pwned", "parts": [{"type": "message", "role": "user", "body": "Pwned?"}]})
        }
        ("PATCH", "{clusterId}") => json!({"status": "resolved"}),
        ("PUT", "translations-glossary") => {
            json!({"operations": [{"type": "insert", "translations": {"en": "pwned"}}]})
        }
        ("POST", "sections") if route.contains("/section-groups/") => json!({"sectionId": "x"}),
        ("POST", "sections") => json!({"spaceId": outsider_org, "title": "Pwned"}),
        ("POST", "move") if route.contains("/sections/") => {
            json!({"position": {"before": {"type": "site-section", "siteSection": "x"}}})
        }
        ("POST", "move") if route.contains("/site-spaces/") => {
            json!({"position": {"before": {"type": "site-space", "siteSpace": "x"}}})
        }
        ("POST", "site-spaces") => json!({"spaceId": outsider_org}),
        ("POST", "section-groups") | ("PATCH", "{siteSectionGroupId}") => json!({"title": "Pwned"}),
        ("PATCH", "{siteSectionId}") => json!({"title": "Pwned"}),
        ("PATCH", "{siteSpaceId}") => json!({"path": "pwned"}),
        ("POST", "share-links") | ("PATCH", "{shareLinkId}") => json!({"name": "Pwned"}),
        ("POST", "redirects") => {
            json!({"source": "/pwned", "destination": {"kind": "external", "url": "https://example.com"}})
        }
        ("PATCH", "{siteRedirectId}") => json!({"source": "/pwned"}),
        ("POST", "external-links") => json!({"title": "Pwned", "url": "https://example.com/pwned"}),
        ("PATCH", "{siteExternalLinkId}") => json!({"title": "Pwned"}),
        ("PUT", "adaptive-schema") => {
            json!({"jsonSchema": {"type": "object", "properties": {}, "additionalProperties": false}})
        }
        ("POST", "spaces") | ("PATCH", "{spaceId}") => json!({"title": "Pwned"}),
        ("POST", "move") => json!({"parent": null}),
        ("POST", "transfer") => json!({"organization": outsider_org}),
        ("POST", "permissions") => json!({"role": "admin", "users": [outsider.id]}),
        ("POST", "change-requests") => json!({"subject": "Pwned"}),
        ("PATCH", "{changeRequestId}") => json!({"subject": "Pwned", "status": "open"}),
        ("POST", "content") => json!({"changes": [
            {"operation": "insert_page", "title": "Pwned", "document": {"markdown": "# Pwned"}}
        ]}),
        ("POST", "template") => json!({"id": "blank"}),
        ("POST", "requested-reviewers") => json!({"users": [outsider.id]}),
        ("POST", "reviews") => json!({"status": "approved"}),
        ("POST", "comments") | ("POST", "replies") => pwned(),
        ("PUT", "{commentId}") | ("PUT", "{commentReplyId}") => pwned(),
        _ => json!({}),
    };
    Some(body)
}

/// The ids of `values` in `text` replaced by their names, so that answers about different ids
/// can be compared.
fn normalize(text: &str, values: &BTreeMap<&'static str, String>) -> String {
    let mut out = text.to_string();
    // Longer values first, so that a value containing another is replaced whole.
    let mut pairs: Vec<_> = values.iter().collect();
    pairs.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (k, v) in pairs {
        out = out.replace(v.as_str(), &format!("<{k}>"));
    }
    out
}

#[tokio::test]
async fn an_outsider_learns_nothing_and_changes_nothing_in_another_organization() {
    let app = TestApp::start().await;
    let victim = victim(&app).await;
    let outsider = app.user("Outsider").await;
    let outsider_org = app.org(&outsider, "Outsider's own").await;
    let before = victim.snapshot(&app).await;
    let unknown = unknown_params(&victim.params);

    let mut failures = Vec::new();
    for (method, route, expect) in SWEEP {
        if *expect == NotCalled {
            continue;
        }
        // Searches need a query to get past parsing, resolving a redirect a source, and
        // URL lookups, the URL of the victim's site or space.
        let base = app.server().urls.base();
        let query = match *route {
            r if r.ends_with("/search") => "?query=guide".to_string(),
            r if r.ends_with("/redirect") => "?source=/old".to_string(),
            "/v1/urls/published" => format!("?url={base}/s/{{siteId}}/"),
            "/v1/urls/content" => format!("?url={base}/o/{{organizationId}}/s/{{spaceId}}"),
            _ => String::new(),
        };
        let real_path = fill(&format!("{route}{query}"), &victim.params);
        let fake_path = fill(&format!("{route}{query}"), &unknown);
        // Ids the path names may come back (in an error message naming them).
        let named: BTreeSet<&String> = victim
            .params
            .values()
            .filter(|v| real_path.contains(v.as_str()))
            .collect();
        let mut bodies = vec![plausible_body(method, route, &outsider, &outsider_org)];
        if *expect == Hidden && bodies[0].as_ref().is_some_and(|b| b != &json!({})) {
            bodies.push(Some(json!({})));
        }
        for body in bodies {
            let what = format!(
                "{method} {route} with body {}",
                body.as_ref().map_or("none".to_string(), Value::to_string)
            );
            let real = app
                .request(method, Some(&outsider.token), &real_path, body.clone())
                .await;
            let text = real.body.to_string();
            for s in &victim.secrets {
                if !named.contains(s) && text.contains(s.as_str()) {
                    failures.push(format!("{what}: the answer contains {s:?}: {text}"));
                }
            }
            match expect {
                Hidden => {
                    let fake = app
                        .request(method, Some(&outsider.token), &fake_path, body.clone())
                        .await;
                    let envelope = real.body["error"]["code"] == real.status
                        && real.body["error"]["message"]
                            .as_str()
                            .is_some_and(|m| !m.is_empty());
                    let empty_204 = real.status == 204 && real.body.is_null();
                    if !envelope && !empty_204 {
                        failures.push(format!(
                            "{what}: {} without the error envelope: {text}",
                            real.status
                        ));
                    }
                    // A plausible body must reach the lookup: 404. An empty one may be refused
                    // earlier (400), as long as real and unknown ids are answered alike. A
                    // DELETE answers 204, as the spec says of a DELETE of what does not exist
                    // (docs/decisions/0075-delete-answers-204.md), likewise only as for unknown
                    // ids, and the snapshot below shows that nothing was deleted.
                    let plausible = body.as_ref().is_none_or(|b| b != &json!({}));
                    let allowed = match (method, plausible) {
                        (&"DELETE", _) => real.status == 204,
                        (_, true) => real.status == 404,
                        (_, false) => matches!(real.status, 400 | 404),
                    };
                    if !allowed {
                        failures.push(format!(
                            "{what}: expected 404 (DELETE: 204), got {}: {text}",
                            real.status
                        ));
                    }
                    let (real_norm, fake_norm) = (
                        normalize(&real.body["error"].to_string(), &victim.params),
                        normalize(&fake.body["error"].to_string(), &unknown),
                    );
                    if real.status != fake.status || real_norm != fake_norm {
                        failures.push(format!(
                            "{what}: real ids answer differently from unknown ids (an existence leak): \
                             {} {real_norm} vs {} {fake_norm}",
                            real.status, fake.status
                        ));
                    }
                }
                Own => {
                    if !(200..300).contains(&real.status) {
                        failures.push(format!("{what}: expected success, got {}: {text}", real.status));
                    }
                }
                PublicProfile => {
                    if real.status != 200 || real.body.get("email").is_some() {
                        failures.push(format!(
                            "{what}: expected the profile without email, got {}: {text}",
                            real.status
                        ));
                    }
                }
                Capability | Public => {
                    if real.status != 200 {
                        failures.push(format!("{what}: expected 200, got {}: {text}", real.status));
                    }
                }
                Refused => {
                    if !matches!(real.status, 400 | 401) {
                        failures.push(format!(
                            "{what}: expected 400 or 401, got {}: {text}",
                            real.status
                        ));
                    }
                }
                NotCalled => unreachable!(),
            }
        }
    }
    // The member's standing and the victim's resources are as they were.
    let after = victim.snapshot(&app).await;
    for ((path, b), (_, a)) in before.iter().zip(after.iter()) {
        if a != b {
            failures.push(format!("the owner's {path} changed:\nbefore: {b}\nafter: {a}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} outsider failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
