//! The event outbox: every change a reader or an integration cares about leaves one row in
//! `events`, written by [`record`] inside the transaction that makes the change. The event then
//! commits exactly when the change does: a rolled-back or retried transaction leaves no event
//! and no duplicate, and a committed change never lacks its event, which delivering events from
//! anywhere outside the transaction could not promise.
//!
//! Nothing reads the table yet; event delivery (the integrations issue) will, per organization
//! in `seq` order. Kinds and payloads: docs/decisions/0018-event-outbox.md.

use serde_json::Value as Json;

use crate::db::{Conn, DbError};
use crate::{clock, ids, params};

/// What happened. The names follow GitBook's integration event types (`space_content_updated`
/// is GitBook's own): snake_case, subject first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    SpaceCreated,
    SpaceDeleted,
    SpaceRestored,
    /// Main moved to a new revision (a merge, a template applied to main, an import).
    SpaceContentUpdated,
    ChangeRequestCreated,
    /// A change request went between draft, open and archived.
    ChangeRequestStatusUpdated,
    ChangeRequestMerged,
    CommentPosted,
    CommentReplyPosted,
    MemberAdded,
    MemberRemoved,
    SiteCreated,
    SiteDeleted,
    SitePublished,
    SiteUnpublished,
}

impl Kind {
    pub const ALL: &[Kind] = &[
        Kind::SpaceCreated,
        Kind::SpaceDeleted,
        Kind::SpaceRestored,
        Kind::SpaceContentUpdated,
        Kind::ChangeRequestCreated,
        Kind::ChangeRequestStatusUpdated,
        Kind::ChangeRequestMerged,
        Kind::CommentPosted,
        Kind::CommentReplyPosted,
        Kind::MemberAdded,
        Kind::MemberRemoved,
        Kind::SiteCreated,
        Kind::SiteDeleted,
        Kind::SitePublished,
        Kind::SiteUnpublished,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::SpaceCreated => "space_created",
            Kind::SpaceDeleted => "space_deleted",
            Kind::SpaceRestored => "space_restored",
            Kind::SpaceContentUpdated => "space_content_updated",
            Kind::ChangeRequestCreated => "change_request_created",
            Kind::ChangeRequestStatusUpdated => "change_request_status_updated",
            Kind::ChangeRequestMerged => "change_request_merged",
            Kind::CommentPosted => "comment_posted",
            Kind::CommentReplyPosted => "comment_reply_posted",
            Kind::MemberAdded => "member_added",
            Kind::MemberRemoved => "member_removed",
            Kind::SiteCreated => "site_created",
            Kind::SiteDeleted => "site_deleted",
            Kind::SitePublished => "site_published",
            Kind::SiteUnpublished => "site_unpublished",
        }
    }
}

/// One event to record.
#[derive(Debug)]
pub struct Event<'a> {
    pub kind: Kind,
    pub organization: &'a str,
    /// The space it happened in; None for organization events (members).
    pub space: Option<&'a str>,
    /// What the event is about: the space, change request, comment, reply or user.
    pub subject: &'a str,
    /// Who did it; None for the command line.
    pub actor: Option<&'a str>,
    /// The ids a consumer needs without reading anything else (camelCase, as GitBook's events).
    pub payload: Json,
}

impl<'a> Event<'a> {
    /// An event about a space itself.
    pub fn space(
        kind: Kind,
        organization: &'a str,
        space: &'a str,
        actor: Option<&'a str>,
        payload: Json,
    ) -> Self {
        Event {
            kind,
            organization,
            space: Some(space),
            subject: space,
            actor,
            payload,
        }
    }

    /// An event about something in a space (a change request, a comment, a reply).
    pub fn in_space(
        kind: Kind,
        organization: &'a str,
        space: &'a str,
        subject: &'a str,
        actor: Option<&'a str>,
        payload: Json,
    ) -> Self {
        Event {
            kind,
            organization,
            space: Some(space),
            subject,
            actor,
            payload,
        }
    }

    /// An event about a docs site.
    pub fn site(
        kind: Kind,
        organization: &'a str,
        site: &'a str,
        actor: Option<&'a str>,
        payload: Json,
    ) -> Self {
        Event {
            kind,
            organization,
            space: None,
            subject: site,
            actor,
            payload,
        }
    }

    /// An event about an organization's member `user`.
    pub fn member(
        kind: Kind,
        organization: &'a str,
        user: &'a str,
        actor: Option<&'a str>,
        payload: Json,
    ) -> Self {
        Event {
            kind,
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
pub fn record(c: &mut dyn Conn, event: Event<'_>) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO events (id, organization_id, space_id, kind, subject_id, actor_id, payload, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            ids::new_id(),
            event.organization,
            event.space,
            event.kind.as_str(),
            event.subject,
            event.actor,
            event.payload.to_string(),
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
    use super::Kind;

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
}
