//! The event outbox: every change a reader or an integration cares about leaves one row in
//! `events`, written by [`record`] inside the transaction that makes the change. The event then
//! commits exactly when the change does: a rolled-back or retried transaction leaves no event
//! and no duplicate, and a committed change never lacks its event, which delivering events from
//! anywhere outside the transaction could not promise.
//!
//! `integrations::fanout` reads the table: each row becomes the integration events of the
//! installations it concerns, once. The payload structs in this module are the list of kinds and their payloads:
//! each implements [`Payload`], which names its [`Kind`], so an event's kind always matches its
//! payload, and the outbox stores what the struct serializes
//! (docs/decisions/0018-event-outbox.md says why there is an outbox).

use serde::Serialize;

use crate::change_requests::Status;
use crate::db::{Conn, DbError};
use crate::permissions::Role;
use crate::{clock, ids, params};

/// The payload of one kind of event: the ids a consumer needs without reading anything else
/// (camelCase, as GitBook's events). Sealed: the structs below are every payload there is.
pub trait Payload: Serialize + std::fmt::Debug + sealed::Sealed {
    const KIND: Kind;
}

mod sealed {
    pub trait Sealed {}
}

/// Declares the kinds of event, each with its wire name and its payload struct (defined
/// below): the one list of kinds there is.
macro_rules! kinds {
    ($($(#[$doc:meta])* $name:ident = $wire:literal,)+) => {
        /// What happened. The names follow GitBook's integration event types
        /// (`space_content_updated` is GitBook's own): snake_case, subject first.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Kind {
            $($(#[$doc])* $name,)+
        }

        impl Kind {
            pub const ALL: &[Kind] = &[$(Kind::$name),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Kind::$name => $wire,)+
                }
            }
        }

        $(
            impl sealed::Sealed for $name<'_> {}
            impl Payload for $name<'_> {
                const KIND: Kind = Kind::$name;
            }
        )+
    };
}

kinds! {
    SpaceCreated = "space_created",
    SpaceDeleted = "space_deleted",
    SpaceRestored = "space_restored",
    /// Main moved to a new revision (a merge, a template applied to main, an import).
    SpaceContentUpdated = "space_content_updated",
    ChangeRequestCreated = "change_request_created",
    /// A change request went between draft, open and archived.
    ChangeRequestStatusUpdated = "change_request_status_updated",
    ChangeRequestMerged = "change_request_merged",
    CommentPosted = "comment_posted",
    CommentReplyPosted = "comment_reply_posted",
    MemberAdded = "member_added",
    MemberRemoved = "member_removed",
    SiteCreated = "site_created",
    SiteDeleted = "site_deleted",
    SitePublished = "site_published",
    SiteUnpublished = "site_unpublished",
    OpenApiSpecCreated = "openapi_spec_created",
    /// Its source or visibility changed.
    OpenApiSpecUpdated = "openapi_spec_updated",
    OpenApiSpecDeleted = "openapi_spec_deleted",
    /// Processing stored a new version (the description's text changed).
    OpenApiSpecVersionCreated = "openapi_spec_version_created",
    /// An integration was published (its first version or a new one).
    IntegrationPublished = "integration_published",
    IntegrationUnpublished = "integration_unpublished",
    /// An integration was installed in the organization.
    IntegrationInstalled = "integration_installed",
    IntegrationUninstalled = "integration_uninstalled",
    TranslationCreated = "translation_created",
    /// Its instructions changed.
    TranslationUpdated = "translation_updated",
    TranslationDeleted = "translation_deleted",
    /// A run ended: completed (its target space has a new revision) or failed.
    TranslationRunFinished = "translation_run_finished",
    /// A conversation was ingested, new or again (its analysis follows).
    ConversationIngested = "conversation_ingested",
    /// A docs team set a cluster of conversation issues open or resolved, or a change request
    /// that references it was merged.
    ConversationsClusterStatusUpdated = "conversations_cluster_status_updated",
}

// serde writes a struct's fields in declaration order: each struct keeps the order its keys were
// stored in before payloads had types, so that old and new rows read alike.

/// A space was created, or duplicated from another.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceCreated<'a> {
    pub space_id: &'a str,
    /// Its main revision.
    pub revision_id: Option<&'a str>,
    /// Its collection.
    pub parent: Option<&'a str>,
    /// The space it is a copy of; absent for a new space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duplicate_of: Option<&'a str>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceDeleted<'a> {
    pub space_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceRestored<'a> {
    pub space_id: &'a str,
}

/// Main moved from `previous_revision_id` to `revision_id`.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpaceContentUpdated<'a> {
    pub space_id: &'a str,
    pub revision_id: &'a str,
    pub previous_revision_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestCreated<'a> {
    pub space_id: &'a str,
    pub change_request_id: &'a str,
    pub number: i64,
    pub status: Status,
    /// Main's revision, where the change request starts.
    pub revision_initial: Option<&'a str>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestStatusUpdated<'a> {
    pub space_id: &'a str,
    pub change_request_id: &'a str,
    pub number: i64,
    pub status: Status,
    pub previous_status: Status,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeRequestMerged<'a> {
    pub space_id: &'a str,
    pub change_request_id: &'a str,
    pub number: i64,
    /// Main's new revision.
    pub revision_id: &'a str,
    /// The change request's revision that was merged.
    pub change_request_revision_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommentPosted<'a> {
    pub space_id: &'a str,
    /// Null for a comment on main.
    pub change_request_id: Option<&'a str>,
    pub comment_id: &'a str,
    #[serde(flatten)]
    pub on: CommentOn<'a>,
    /// The revision the comment points into.
    pub revision_id: &'a str,
}

/// Where a comment was posted: a field of its own in the payload, `pageId` or `reviewId`.
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum CommentOn<'a> {
    /// A comment posted on its own: on a page, or on no page (null).
    Page {
        #[serde(rename = "pageId")]
        page_id: Option<&'a str>,
    },
    /// The comment of a change request's review.
    Review {
        #[serde(rename = "reviewId")]
        review_id: &'a str,
    },
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommentReplyPosted<'a> {
    pub space_id: &'a str,
    /// Null for a comment on main.
    pub change_request_id: Option<&'a str>,
    pub comment_id: &'a str,
    pub reply_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberAdded<'a> {
    pub user_id: &'a str,
    /// Null for a guest.
    pub role: Option<Role>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberRemoved<'a> {
    pub user_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteCreated<'a> {
    pub site_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteDeleted<'a> {
    pub site_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SitePublished<'a> {
    pub site_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteUnpublished<'a> {
    pub site_id: &'a str,
}

/// An OpenAPI specification was created.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiSpecCreated<'a> {
    pub spec_id: &'a str,
    pub slug: &'a str,
}

/// An OpenAPI specification's source or visibility changed.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiSpecUpdated<'a> {
    pub spec_id: &'a str,
    pub slug: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiSpecDeleted<'a> {
    pub spec_id: &'a str,
    pub slug: &'a str,
}

/// Processing stored a new version of an OpenAPI specification.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenApiSpecVersionCreated<'a> {
    pub spec_id: &'a str,
    pub slug: &'a str,
    pub version_id: &'a str,
}

/// An integration was published in its owner organization.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationPublished<'a> {
    pub integration_id: &'a str,
    pub name: &'a str,
    pub version: i64,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationUnpublished<'a> {
    pub integration_id: &'a str,
    pub name: &'a str,
}

/// An integration was installed in the event's organization.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationInstalled<'a> {
    pub integration_id: &'a str,
    pub installation_id: &'a str,
    pub name: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IntegrationUninstalled<'a> {
    pub integration_id: &'a str,
    pub installation_id: &'a str,
    pub name: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranslationCreated<'a> {
    pub translation_id: &'a str,
    pub source_space_id: &'a str,
    pub language: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranslationUpdated<'a> {
    pub translation_id: &'a str,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranslationDeleted<'a> {
    pub translation_id: &'a str,
}

/// A translation run ended; `revision` is the target space's new main revision when it
/// completed.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TranslationRunFinished<'a> {
    pub translation_id: &'a str,
    pub status: &'a str,
    pub target_space_id: Option<&'a str>,
    pub revision: Option<&'a str>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationIngested<'a> {
    pub conversation_id: &'a str,
    pub source: &'a str,
    /// Whether it was ingested before (and is analysed again).
    pub again: bool,
}

/// `changeRequestId` names the merged change request that resolved the cluster.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationsClusterStatusUpdated<'a> {
    pub cluster_id: &'a str,
    pub status: &'a str,
    pub change_request_id: Option<&'a str>,
}

/// One event to record; its kind is its payload's.
#[derive(Debug)]
pub struct Event<'a, P: Payload> {
    pub organization: &'a str,
    /// The space it happened in; None for organization events (members, sites).
    pub space: Option<&'a str>,
    /// What the event is about: the space, change request, comment, reply, user or site.
    pub subject: &'a str,
    /// Who did it; None for the command line.
    pub actor: Option<&'a str>,
    pub payload: P,
}

impl<'a, P: Payload> Event<'a, P> {
    pub fn kind(&self) -> Kind {
        P::KIND
    }

    /// An event about a space itself.
    pub fn space(organization: &'a str, space: &'a str, actor: Option<&'a str>, payload: P) -> Self {
        Event {
            organization,
            space: Some(space),
            subject: space,
            actor,
            payload,
        }
    }

    /// An event about something in a space (a change request, a comment, a reply).
    pub fn in_space(
        organization: &'a str,
        space: &'a str,
        subject: &'a str,
        actor: Option<&'a str>,
        payload: P,
    ) -> Self {
        Event {
            organization,
            space: Some(space),
            subject,
            actor,
            payload,
        }
    }

    /// An event about a docs site.
    pub fn site(organization: &'a str, site: &'a str, actor: Option<&'a str>, payload: P) -> Self {
        Event {
            organization,
            space: None,
            subject: site,
            actor,
            payload,
        }
    }

    /// An event about something of an organization outside spaces (an OpenAPI specification).
    pub fn in_org(organization: &'a str, subject: &'a str, actor: Option<&'a str>, payload: P) -> Self {
        Event {
            organization,
            space: None,
            subject,
            actor,
            payload,
        }
    }

    /// An event about an organization's member `user`.
    pub fn member(organization: &'a str, user: &'a str, actor: Option<&'a str>, payload: P) -> Self {
        Event {
            organization,
            space: None,
            subject: user,
            actor,
            payload,
        }
    }
}

/// Records `event` in the transaction `c` is in. Call it from the transaction that makes the
/// change, never from a separate one.
pub fn record<P: Payload>(c: &mut dyn Conn, event: Event<'_, P>) -> Result<(), DbError> {
    let payload = serde_json::to_string(&event.payload).map_err(|e| {
        DbError::Other(format!(
            "cannot write the payload of a {} event: {e}",
            P::KIND.as_str()
        ))
    })?;
    c.execute(
        "INSERT INTO events (id, organization_id, space_id, kind, subject_id, actor_id, payload, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            ids::new_id(),
            event.organization,
            event.space,
            P::KIND.as_str(),
            event.subject,
            event.actor,
            payload,
            clock::now_ms()
        ],
    )?;
    Ok(())
}

/// The organization a space belongs to, for writers that know only the space.
pub fn organization_of_space(c: &mut dyn Conn, space_id: &str) -> Result<String, DbError> {
    c.query_scalar(
        "SELECT organization_id FROM spaces WHERE id = ?1",
        params![space_id],
    )?
    .ok_or_else(|| DbError::Other(format!("space {space_id:?} has no row to record an event for")))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value as Json, json};

    use super::*;

    #[test]
    fn kind_names_are_distinct_snake_case() {
        let mut names: Vec<&str> = Kind::ALL.iter().map(|k| k.as_str()).collect();
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'))
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Kind::ALL.len());
    }

    /// The payload's kind and the text `record` stores.
    fn stored<P: Payload>(payload: P) -> (Kind, String) {
        (P::KIND, serde_json::to_string(&payload).unwrap())
    }

    /// Each payload is the JSON the outbox stored before payloads had types, key order included
    /// (serde_json keeps a `json!` object's order in this workspace).
    #[test]
    fn payloads_serialize_to_their_shapes() {
        let cases: Vec<((Kind, String), Json)> = vec![
            (
                stored(SpaceCreated {
                    space_id: "s1",
                    revision_id: Some("r1"),
                    parent: None,
                    duplicate_of: None,
                }),
                json!({"spaceId": "s1", "revisionId": "r1", "parent": null}),
            ),
            (
                stored(SpaceCreated {
                    space_id: "s2",
                    revision_id: Some("r2"),
                    parent: Some("c1"),
                    duplicate_of: Some("s1"),
                }),
                json!({"spaceId": "s2", "revisionId": "r2", "parent": "c1", "duplicateOf": "s1"}),
            ),
            (stored(SpaceDeleted { space_id: "s1" }), json!({"spaceId": "s1"})),
            (stored(SpaceRestored { space_id: "s1" }), json!({"spaceId": "s1"})),
            (
                stored(SpaceContentUpdated {
                    space_id: "s1",
                    revision_id: "r2",
                    previous_revision_id: "r1",
                }),
                json!({"spaceId": "s1", "revisionId": "r2", "previousRevisionId": "r1"}),
            ),
            (
                stored(ChangeRequestCreated {
                    space_id: "s1",
                    change_request_id: "cr1",
                    number: 3,
                    status: Status::Draft,
                    revision_initial: Some("r1"),
                }),
                json!({"spaceId": "s1", "changeRequestId": "cr1", "number": 3, "status": "draft",
                       "revisionInitial": "r1"}),
            ),
            (
                stored(ChangeRequestStatusUpdated {
                    space_id: "s1",
                    change_request_id: "cr1",
                    number: 3,
                    status: Status::Open,
                    previous_status: Status::Draft,
                }),
                json!({"spaceId": "s1", "changeRequestId": "cr1", "number": 3, "status": "open",
                       "previousStatus": "draft"}),
            ),
            (
                stored(ChangeRequestMerged {
                    space_id: "s1",
                    change_request_id: "cr1",
                    number: 3,
                    revision_id: "r3",
                    change_request_revision_id: "r2",
                }),
                json!({"spaceId": "s1", "changeRequestId": "cr1", "number": 3, "revisionId": "r3",
                       "changeRequestRevisionId": "r2"}),
            ),
            (
                stored(CommentPosted {
                    space_id: "s1",
                    change_request_id: None,
                    comment_id: "co1",
                    on: CommentOn::Page { page_id: Some("p1") },
                    revision_id: "r1",
                }),
                json!({"spaceId": "s1", "changeRequestId": null, "commentId": "co1", "pageId": "p1",
                       "revisionId": "r1"}),
            ),
            (
                stored(CommentPosted {
                    space_id: "s1",
                    change_request_id: Some("cr1"),
                    comment_id: "co2",
                    on: CommentOn::Page { page_id: None },
                    revision_id: "r2",
                }),
                json!({"spaceId": "s1", "changeRequestId": "cr1", "commentId": "co2", "pageId": null,
                       "revisionId": "r2"}),
            ),
            (
                stored(CommentPosted {
                    space_id: "s1",
                    change_request_id: Some("cr1"),
                    comment_id: "co3",
                    on: CommentOn::Review { review_id: "rv1" },
                    revision_id: "r2",
                }),
                json!({"spaceId": "s1", "changeRequestId": "cr1", "commentId": "co3", "reviewId": "rv1",
                       "revisionId": "r2"}),
            ),
            (
                stored(CommentReplyPosted {
                    space_id: "s1",
                    change_request_id: None,
                    comment_id: "co1",
                    reply_id: "re1",
                }),
                json!({"spaceId": "s1", "changeRequestId": null, "commentId": "co1", "replyId": "re1"}),
            ),
            (
                stored(MemberAdded {
                    user_id: "u1",
                    role: Some(Role::Admin),
                }),
                json!({"userId": "u1", "role": "admin"}),
            ),
            (
                stored(MemberAdded {
                    user_id: "u2",
                    role: None,
                }),
                json!({"userId": "u2", "role": null}),
            ),
            (stored(MemberRemoved { user_id: "u1" }), json!({"userId": "u1"})),
            (stored(SiteCreated { site_id: "st1" }), json!({"siteId": "st1"})),
            (stored(SiteDeleted { site_id: "st1" }), json!({"siteId": "st1"})),
            (stored(SitePublished { site_id: "st1" }), json!({"siteId": "st1"})),
            (
                stored(SiteUnpublished { site_id: "st1" }),
                json!({"siteId": "st1"}),
            ),
            (
                stored(OpenApiSpecCreated {
                    spec_id: "os1",
                    slug: "pets",
                }),
                json!({"specId": "os1", "slug": "pets"}),
            ),
            (
                stored(OpenApiSpecUpdated {
                    spec_id: "os1",
                    slug: "pets",
                }),
                json!({"specId": "os1", "slug": "pets"}),
            ),
            (
                stored(OpenApiSpecDeleted {
                    spec_id: "os1",
                    slug: "pets",
                }),
                json!({"specId": "os1", "slug": "pets"}),
            ),
            (
                stored(OpenApiSpecVersionCreated {
                    spec_id: "os1",
                    slug: "pets",
                    version_id: "v1",
                }),
                json!({"specId": "os1", "slug": "pets", "versionId": "v1"}),
            ),
            (
                stored(IntegrationPublished {
                    integration_id: "in1",
                    name: "notifier",
                    version: 2,
                }),
                json!({"integrationId": "in1", "name": "notifier", "version": 2}),
            ),
            (
                stored(IntegrationUnpublished {
                    integration_id: "in1",
                    name: "notifier",
                }),
                json!({"integrationId": "in1", "name": "notifier"}),
            ),
            (
                stored(IntegrationInstalled {
                    integration_id: "in1",
                    installation_id: "is1",
                    name: "notifier",
                }),
                json!({"integrationId": "in1", "installationId": "is1", "name": "notifier"}),
            ),
            (
                stored(IntegrationUninstalled {
                    integration_id: "in1",
                    installation_id: "is1",
                    name: "notifier",
                }),
                json!({"integrationId": "in1", "installationId": "is1", "name": "notifier"}),
            ),
            (
                stored(TranslationCreated {
                    translation_id: "tr1",
                    source_space_id: "s1",
                    language: "fr",
                }),
                json!({"translationId": "tr1", "sourceSpaceId": "s1", "language": "fr"}),
            ),
            (
                stored(TranslationUpdated {
                    translation_id: "tr1",
                }),
                json!({"translationId": "tr1"}),
            ),
            (
                stored(TranslationDeleted {
                    translation_id: "tr1",
                }),
                json!({"translationId": "tr1"}),
            ),
            (
                stored(TranslationRunFinished {
                    translation_id: "tr1",
                    status: "completed",
                    target_space_id: Some("s2"),
                    revision: Some("r1"),
                }),
                json!({"translationId": "tr1", "status": "completed", "targetSpaceId": "s2", "revision": "r1"}),
            ),
            (
                stored(ConversationIngested {
                    conversation_id: "c1",
                    source: "api",
                    again: false,
                }),
                json!({"conversationId": "c1", "source": "api", "again": false}),
            ),
            (
                stored(ConversationsClusterStatusUpdated {
                    cluster_id: "cl1",
                    status: "resolved",
                    change_request_id: Some("cr1"),
                }),
                json!({"clusterId": "cl1", "status": "resolved", "changeRequestId": "cr1"}),
            ),
        ];
        let mut kinds = Vec::new();
        for ((kind, text), expected) in cases {
            assert_eq!(text, expected.to_string(), "{}", kind.as_str());
            kinds.push(kind);
        }
        kinds.dedup();
        assert_eq!(kinds, Kind::ALL, "every kind, each with its own payload");
    }
}
