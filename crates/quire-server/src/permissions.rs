//! The permission model: roles, what each caller is to an organization, and the one function per
//! resource kind that decides whether an action is allowed. The `permissions` objects of the
//! API are computed from these same functions, so what a response promises is what the server
//! then allows. `docs/permissions.md` is the table.

use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// Roles, weakest to strongest, so that `>=` reads "at least".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Read,
    Comment,
    Edit,
    Review,
    Create,
    Admin,
}

impl Role {
    pub const ALL: [Role; 6] = [
        Role::Admin,
        Role::Create,
        Role::Review,
        Role::Edit,
        Role::Comment,
        Role::Read,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Comment => "comment",
            Role::Edit => "edit",
            Role::Review => "review",
            Role::Create => "create",
            Role::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// Parses a stored role column (NULL for guests).
    pub fn from_column(value: Option<String>) -> Option<Role> {
        value.as_deref().and_then(Role::parse)
    }

    /// Parses a role given by a client, naming the field when it is unknown.
    pub fn parse_field(field: &str, text: &str) -> Result<Role, ApiError> {
        Role::parse(text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "`{field}` must be one of admin, create, review, edit, comment, read, not {text:?}"
            ))
        })
    }
}

/// What the caller is to an organization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Standing {
    /// Not a member: the organization is invisible.
    Outsider,
    /// A member whose role is null: sees only what is shared with them.
    Guest,
    Member(Role),
}

impl Standing {
    /// From the caller's membership row: None when there is none, Some(None) for a guest.
    pub fn from_membership(membership: Option<Option<Role>>) -> Standing {
        match membership {
            None => Standing::Outsider,
            Some(None) => Standing::Guest,
            Some(Some(role)) => Standing::Member(role),
        }
    }

    pub fn role(self) -> Option<Role> {
        match self {
            Standing::Member(role) => Some(role),
            _ => None,
        }
    }

    pub fn is_member(self) -> bool {
        !matches!(self, Standing::Outsider)
    }

    pub fn at_least(self, role: Role) -> bool {
        self.role().is_some_and(|r| r >= role)
    }
}

/// Actions on an organization and its people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrgAction {
    /// See the organization (members and guests).
    View,
    /// Change settings, members' roles, invites, SSO; see billing.
    Admin,
    /// Create spaces and collections.
    CreateContent,
    CreateOpenApiSpec,
    IngestConversations,
    /// List members and see their profiles.
    ListMembers,
    ListTeams,
    ListIntegrations,
    ListInstallations,
    InstallIntegration,
    ViewBilling,
    /// Read the organization's agent instructions.
    ReadAgentInstructions,
}

/// The one decision for organization actions.
pub fn org_allows(standing: Standing, action: OrgAction) -> bool {
    use OrgAction::*;
    match action {
        View => standing.is_member(),
        Admin | ViewBilling | InstallIntegration => standing.at_least(Role::Admin),
        CreateContent | CreateOpenApiSpec | IngestConversations => standing.at_least(Role::Create),
        ListMembers | ListTeams | ListIntegrations | ListInstallations | ReadAgentInstructions => {
            standing.at_least(Role::Read)
        }
    }
}

/// 404 when the organization is invisible to the caller, 403 when visible but the action is not
/// allowed: no existence leaks.
pub fn require_org(standing: Standing, action: OrgAction, what: &str) -> Result<(), ApiError> {
    if !org_allows(standing, OrgAction::View) {
        return Err(ApiError::not_found(format!("organization {what:?} not found")));
    }
    if !org_allows(standing, action) {
        return Err(ApiError::forbidden(format!(
            "your role in organization {what:?} does not allow this ({action:?})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_order_and_parse() {
        assert!(Role::Admin > Role::Create);
        assert!(Role::Create > Role::Review);
        assert!(Role::Review > Role::Edit);
        assert!(Role::Edit > Role::Comment);
        assert!(Role::Comment > Role::Read);
        for r in Role::ALL {
            assert_eq!(Role::parse(r.as_str()), Some(r));
        }
        assert_eq!(Role::parse("owner"), None);
    }

    #[test]
    fn guests_see_but_do_not_list() {
        assert!(org_allows(Standing::Guest, OrgAction::View));
        assert!(!org_allows(Standing::Guest, OrgAction::ListMembers));
        assert!(!org_allows(Standing::Outsider, OrgAction::View));
        assert!(org_allows(Standing::Member(Role::Read), OrgAction::ListMembers));
        assert!(!org_allows(
            Standing::Member(Role::Edit),
            OrgAction::CreateContent
        ));
        assert!(org_allows(
            Standing::Member(Role::Create),
            OrgAction::CreateContent
        ));
        assert!(org_allows(Standing::Member(Role::Admin), OrgAction::Admin));
    }
}
