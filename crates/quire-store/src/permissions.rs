//! The permission model: roles, what each caller is to an organization, and the one function per
//! resource kind that decides whether an action is allowed. The `permissions` objects of the
//! API are computed from these same functions, so what a response promises is what the server
//! then allows. `docs/permissions.md` is the table.

use serde::{Deserialize, Serialize};

use crate::db::FromValue;
use crate::error::StoreError;

/// Roles, weakest to strongest, so that `>=` reads "at least".
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
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

    /// Parses a role given by a client, naming the field when it is unknown.
    pub fn parse_field(field: &str, text: &str) -> Result<Role, StoreError> {
        Role::parse(text).ok_or_else(|| {
            StoreError::invalid(format!(
                "`{field}` must be one of admin, create, review, edit, comment, read, not {text:?}"
            ))
        })
    }
}

/// A stored role: a role the server does not know is a decode error, never a weaker role or a
/// guest. NULL (a guest) reads as `Option<Role>`.
impl FromValue for Role {
    fn from_value(value: &crate::db::Value) -> Result<Role, String> {
        match value {
            crate::db::Value::Text(text) => {
                Role::parse(text).ok_or_else(|| format!("expected a role, found {text:?}"))
            }
            other => Err(format!("expected a role, found {other:?}")),
        }
    }
}

impl From<Role> for crate::db::Value {
    fn from(role: Role) -> crate::db::Value {
        crate::db::Value::Text(role.as_str().to_string())
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

    /// The standing a `LEFT JOIN members` row gives: `member` is the joined row's user id (None:
    /// no membership), `disabled` its flag, `role` its role (None for a guest).
    pub fn from_member_columns(member: Option<&str>, disabled: Option<bool>, role: Option<Role>) -> Standing {
        match member {
            Some(_) if disabled != Some(true) => Standing::from_membership(Some(role)),
            _ => Standing::Outsider,
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
    /// See ingested conversations, the issues found in them and their clusters, and set a
    /// cluster's status: the docs team's work, which editing is.
    TriageConversations,
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

impl OrgAction {
    /// The weakest organization role that may do this; None for `View`, which any member or
    /// guest may do.
    pub fn needed(self) -> Option<Role> {
        use OrgAction::*;
        match self {
            View => None,
            Admin | ViewBilling | InstallIntegration => Some(Role::Admin),
            CreateContent | CreateOpenApiSpec | IngestConversations => Some(Role::Create),
            TriageConversations => Some(Role::Edit),
            ListMembers | ListTeams | ListIntegrations | ListInstallations | ReadAgentInstructions => {
                Some(Role::Read)
            }
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        use OrgAction::*;
        match self {
            View => "seeing the organization",
            Admin => "changing the organization's settings, members or invites",
            CreateContent => "creating spaces and collections",
            CreateOpenApiSpec => "creating OpenAPI specifications",
            IngestConversations => "ingesting conversations",
            TriageConversations => {
                "seeing conversations, their issues and clusters, or setting a cluster's status"
            }
            ListMembers => "listing members",
            ListTeams => "listing teams",
            ListIntegrations => "listing integrations",
            ListInstallations => "listing integration installations",
            InstallIntegration => "installing integrations",
            ViewBilling => "seeing billing",
            ReadAgentInstructions => "reading agent instructions",
        }
    }
}

/// The one decision for organization actions.
pub fn org_allows(standing: Standing, action: OrgAction) -> bool {
    match action.needed() {
        None => standing.is_member(),
        Some(role) => standing.at_least(role),
    }
}

/// 404 when the organization is invisible to the caller, 403 when visible but the action is not
/// allowed: no existence leaks.
pub fn require_org(standing: Standing, action: OrgAction, what: &str) -> Result<(), StoreError> {
    if !org_allows(standing, OrgAction::View) {
        return Err(StoreError::not_found(format!("organization {what:?} not found")));
    }
    if !org_allows(standing, action) {
        let needed = action.needed().unwrap_or(Role::Read);
        return Err(role_forbidden(
            action.describe(),
            needed,
            &format!("in organization {what:?}"),
            standing.role(),
        ));
    }
    Ok(())
}

/// The message of a 403 refused for want of a role, naming the role needed and the caller's in
/// the API's words: "reviewing change requests needs the `review` role or a stronger one on
/// space "x"; your role there is `edit`". `place` says where, with its preposition.
pub fn role_refusal(doing: &str, needed: Role, place: &str, has: Option<Role>) -> String {
    let has = match has {
        Some(role) => format!("your role there is `{}`", role.as_str()),
        None => "you have no role there (a guest sees only what is shared with them)".to_string(),
    };
    let stronger = if needed == Role::Admin {
        ""
    } else {
        " or a stronger one"
    };
    format!(
        "{doing} needs the `{}` role{stronger} {place}; {has}",
        needed.as_str()
    )
}

/// A 403 with [`role_refusal`]'s message.
pub fn role_forbidden(doing: &str, needed: Role, place: &str, has: Option<Role>) -> StoreError {
    StoreError::forbidden(role_refusal(doing, needed, place, has))
}

/// Actions on a team.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TeamAction {
    /// See the team and its members.
    View,
    /// Rename or delete the team, add and remove its members.
    Manage,
}

/// The one decision for team actions: organization admins and the team's owners manage it.
pub fn team_allows(standing: Standing, owns_team: bool, action: TeamAction) -> bool {
    match action {
        TeamAction::View => org_allows(standing, OrgAction::ListTeams),
        TeamAction::Manage => standing.at_least(Role::Admin) || (owns_team && standing.is_member()),
    }
}

/// Actions on an organization membership.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberAction {
    View,
    ChangeRole,
    /// Remove the member: admins remove anyone, members may leave.
    Remove,
    MarkSso,
}

impl MemberAction {
    /// The weakest organization role that may do this to another member.
    pub fn needed(self) -> Role {
        match self {
            MemberAction::View => Role::Read,
            MemberAction::ChangeRole | MemberAction::Remove | MemberAction::MarkSso => Role::Admin,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            MemberAction::View => "seeing another member",
            MemberAction::ChangeRole => "changing a member's role",
            MemberAction::Remove => "removing another member",
            MemberAction::MarkSso => "marking a member as signed in with SSO",
        }
    }
}

/// The one decision for membership actions; `is_self` when the caller is that member.
pub fn member_allows(standing: Standing, is_self: bool, action: MemberAction) -> bool {
    // Members see their own membership and may leave, whatever their role.
    let as_self =
        is_self && standing.is_member() && matches!(action, MemberAction::View | MemberAction::Remove);
    as_self || standing.at_least(action.needed())
}

/// The default access of organization members to a space or collection: inherited from the
/// parent (`"inherit"`), a role, or none (`null`: only explicit grants give access).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultLevel {
    Inherit,
    Role(Role),
    NoAccess,
}

/// The stored column: 'inherit', a role, or NULL; anything else is a decode error.
impl FromValue for DefaultLevel {
    fn from_value(value: &crate::db::Value) -> Result<DefaultLevel, String> {
        match value {
            crate::db::Value::Null => Ok(DefaultLevel::NoAccess),
            crate::db::Value::Text(text) if text == "inherit" => Ok(DefaultLevel::Inherit),
            other => Role::from_value(other)
                .map(DefaultLevel::Role)
                .map_err(|_| format!("expected a role, \"inherit\" or NULL, found {other:?}")),
        }
    }
}

impl DefaultLevel {
    pub fn to_column(self) -> Option<&'static str> {
        match self {
            DefaultLevel::Inherit => Some("inherit"),
            DefaultLevel::Role(r) => Some(r.as_str()),
            DefaultLevel::NoAccess => None,
        }
    }

    /// Parses `defaultLevel` from a request: a role, `"inherit"`, or null.
    pub fn parse(value: &serde_json::Value) -> Result<DefaultLevel, StoreError> {
        match value {
            serde_json::Value::Null => Ok(DefaultLevel::NoAccess),
            serde_json::Value::String(s) if s == "inherit" => Ok(DefaultLevel::Inherit),
            serde_json::Value::String(s) => Role::parse(s).map(DefaultLevel::Role).ok_or_else(|| {
                StoreError::invalid(format!(
                    "`defaultLevel` must be a role (admin, create, review, edit, comment, read), \"inherit\" or null, not {s:?}"
                ))
            }),
            other => Err(StoreError::invalid(format!(
                "`defaultLevel` must be a role, \"inherit\" or null, not {other}"
            ))),
        }
    }

    /// `defaultLevel` of a PATCH: absent keeps it (None); `null` is a value (no default access).
    pub fn parse_patch(
        value: &crate::patch::Patch<serde_json::Value>,
    ) -> Result<Option<DefaultLevel>, StoreError> {
        match value {
            crate::patch::Patch::Absent => Ok(None),
            crate::patch::Patch::Null => Ok(Some(DefaultLevel::NoAccess)),
            crate::patch::Patch::Value(v) => DefaultLevel::parse(v).map(Some),
        }
    }

    /// The wire value: the role, `"inherit"`, or null.
    pub fn to_json(self) -> serde_json::Value {
        self.to_column()
            .map_or(serde_json::Value::Null, |s| serde_json::Value::String(s.into()))
    }
}

/// What decides a caller's role on a space or collection: their standing in the organization,
/// the strongest role granted to them (or their teams) on the item or any collection above it,
/// and the default levels from the item up to the top of the organization.
#[derive(Clone, Debug)]
pub struct ContentAccess<'a> {
    pub standing: Standing,
    pub granted: Option<Role>,
    /// Default levels of the item, then of each collection above it, nearest first.
    pub defaults: &'a [DefaultLevel],
}

/// The effective role on a space or collection: organization admins administer everything; other
/// members get the strongest of their grants and their organization role limited by the nearest
/// default level that is not `inherit` (none when it is null); guests get only their grants.
pub fn content_role(access: &ContentAccess<'_>) -> Option<Role> {
    let by_default = match access.standing {
        Standing::Outsider => return None,
        Standing::Member(Role::Admin) => return Some(Role::Admin),
        Standing::Guest => None,
        Standing::Member(role) => match access.defaults.iter().find(|d| **d != DefaultLevel::Inherit) {
            None => Some(role),
            Some(DefaultLevel::Role(level)) => Some(role.min(*level)),
            Some(_) => None,
        },
    };
    by_default.max(access.granted)
}

/// Actions on a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpaceAction {
    /// Read the space and its content.
    View,
    Comment,
    /// Write content: change requests and their content.
    Edit,
    Review,
    Merge,
    /// Change settings, delete, restore, move, manage access and invite links.
    Admin,
    TriggerGitSync,
    InstallIntegration,
}

impl SpaceAction {
    /// The weakest role that may do this (on a live space; see [`space_allows`] for locked and
    /// deleted ones).
    pub fn needed(self) -> Role {
        match self {
            SpaceAction::View => Role::Read,
            SpaceAction::Comment => Role::Comment,
            SpaceAction::Edit | SpaceAction::Merge | SpaceAction::TriggerGitSync => Role::Edit,
            SpaceAction::Review => Role::Review,
            SpaceAction::Admin | SpaceAction::InstallIntegration => Role::Admin,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            SpaceAction::View => "reading the space",
            SpaceAction::Comment => "commenting",
            SpaceAction::Edit => "editing content and change requests",
            SpaceAction::Review => "reviewing change requests",
            SpaceAction::Merge => "merging change requests",
            SpaceAction::Admin => "changing the space's settings, access or invite links",
            SpaceAction::TriggerGitSync => "triggering a Git sync",
            SpaceAction::InstallIntegration => "installing integrations",
        }
    }

    /// Whether the action changes content, which a locked space refuses whatever the role.
    fn changes_content(self) -> bool {
        matches!(
            self,
            SpaceAction::Edit | SpaceAction::Merge | SpaceAction::TriggerGitSync
        )
    }
}

/// Facts about a space that limit actions whatever the role.
#[derive(Clone, Copy, Debug, Default)]
pub struct SpaceState {
    pub locked: bool,
    pub deleted: bool,
}

/// The one decision for space actions. A locked space refuses every content change; a deleted
/// space only lets its admins see and restore it.
pub fn space_allows(role: Option<Role>, state: SpaceState, action: SpaceAction) -> bool {
    let Some(role) = role else { return false };
    if state.deleted {
        return role >= Role::Admin && matches!(action, SpaceAction::View | SpaceAction::Admin);
    }
    role >= action.needed() && !(state.locked && action.changes_content())
}

/// Actions on a collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectionAction {
    View,
    /// Create spaces and collections inside it.
    Create,
    /// Change, delete, move, transfer it; manage its access and invite links.
    Admin,
}

impl CollectionAction {
    /// The weakest role that may do this.
    pub fn needed(self) -> Role {
        match self {
            CollectionAction::View => Role::Read,
            CollectionAction::Create => Role::Create,
            CollectionAction::Admin => Role::Admin,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            CollectionAction::View => "reading the collection",
            CollectionAction::Create => "creating spaces and collections in it",
            CollectionAction::Admin => "changing, moving or deleting the collection or its access",
        }
    }
}

/// The one decision for collection actions.
pub fn collection_allows(role: Option<Role>, action: CollectionAction) -> bool {
    role.is_some_and(|role| role >= action.needed())
}

/// Actions on a docs site. Sites have no grants of their own: the caller's organization role
/// decides (`docs/permissions.md`, "Docs sites").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SiteAction {
    /// See the site, its structure, schema, customization and share links.
    View,
    /// Create, change, publish, unpublish and delete sites; change their structure, adaptive
    /// schema, customization, share links and redirects.
    Manage,
    /// See and rotate the visitor-auth signing key; install integrations.
    Admin,
}

impl SiteAction {
    /// The weakest organization role that may do this.
    pub fn needed(self) -> Role {
        match self {
            SiteAction::View => Role::Read,
            SiteAction::Manage => Role::Create,
            SiteAction::Admin => Role::Admin,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            SiteAction::View => "seeing docs sites",
            SiteAction::Manage => "creating, changing, publishing or deleting docs sites",
            SiteAction::Admin => "managing a docs site's visitor authentication",
        }
    }
}

/// The one decision for docs site actions: members by their organization role; guests and
/// outsiders see no site.
pub fn site_allows(standing: Standing, action: SiteAction) -> bool {
    standing.at_least(action.needed())
}

/// Actions on an OpenAPI specification. Specifications have no grants: the caller's
/// organization role decides, as for sites (`docs/permissions.md`, "OpenAPI specifications").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecAction {
    /// See the specification, its versions and their content.
    View,
    /// Replace its source, change its visibility, delete it: the role that creates one
    /// (`createOpenAPISpec`).
    Edit,
}

impl SpecAction {
    /// The weakest organization role that may do this.
    pub fn needed(self) -> Role {
        match self {
            SpecAction::View => Role::Read,
            SpecAction::Edit => Role::Create,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            SpecAction::View => "seeing OpenAPI specifications",
            SpecAction::Edit => "changing or deleting OpenAPI specifications",
        }
    }
}

/// The one decision for OpenAPI specification actions: members by their organization role;
/// guests and outsiders see none (a public one's latest content is readable by anyone, which
/// is not an action on it: `openapi::public_content`).
pub fn spec_allows(standing: Standing, action: SpecAction) -> bool {
    standing.at_least(action.needed())
}

/// Actions on a translation and on the glossary translations use. Translations have no
/// grants: the caller's organization role decides, as for OpenAPI specifications
/// (`docs/permissions.md`, "Translations"). A run acts on the spaces as the member who asked
/// for it, so what it reads and writes is checked again as them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TranslationAction {
    /// See the translation, its status and stats, and the glossary.
    View,
    /// Change its instructions, run it, delete it, edit the glossary: the role that creates
    /// content (a run creates the target space).
    Edit,
}

impl TranslationAction {
    /// The weakest organization role that may do this.
    pub fn needed(self) -> Role {
        match self {
            TranslationAction::View => Role::Read,
            TranslationAction::Edit => Role::Create,
        }
    }

    /// What the action is, in the API's words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            TranslationAction::View => "seeing translations",
            TranslationAction::Edit => "changing, running or deleting translations",
        }
    }
}

/// The one decision for translation actions: members by their organization role; guests and
/// outsiders see none.
pub fn translation_allows(standing: Standing, action: TranslationAction) -> bool {
    standing.at_least(action.needed())
}

/// Actions on an integration. Its owner organization's admins manage it; anyone signed in sees
/// a public or unlisted one, only the owner's members a private one (`docs/permissions.md`,
/// "Integrations").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntegrationAction {
    /// See the integration.
    View,
    /// Publish it again, unpublish it, set its dev tunnel, read its events and installations,
    /// make installation tokens: what GitBook lets the integration itself do.
    Admin,
}

impl IntegrationAction {
    /// The weakest role in the owner organization that may do this (None: any caller, for a
    /// public or unlisted integration).
    pub fn needed(self) -> Option<Role> {
        match self {
            IntegrationAction::View => None,
            IntegrationAction::Admin => Some(Role::Admin),
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            IntegrationAction::View => "seeing the integration",
            IntegrationAction::Admin => "publishing, unpublishing or developing the integration",
        }
    }
}

/// The one decision for integration actions: `owner` is the caller's standing in the
/// integration's owner organization; `listed` whether it is public or unlisted.
pub fn integration_allows(owner: Standing, listed: bool, action: IntegrationAction) -> bool {
    match action.needed() {
        None => listed || owner.is_member(),
        Some(role) => owner.at_least(role),
    }
}

/// Actions on an installation of an integration in an organization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallationAction {
    /// See it and its spaces and sites: members of its organization who may list
    /// installations, and the integration's admins.
    View,
    /// Configure it, enable it on spaces and sites, uninstall it: its organization's admins
    /// (who installed it) and the integration's admins (GitBook lets an integration configure
    /// its installations).
    Manage,
    /// Make a token of the installation: the integration's admins only (GitBook: "authenticated
    /// as the integration").
    Token,
}

impl InstallationAction {
    pub fn describe(self) -> &'static str {
        match self {
            InstallationAction::View => "seeing the integration's installation",
            InstallationAction::Manage => "configuring or uninstalling the integration's installation",
            InstallationAction::Token => "making tokens of the integration's installation",
        }
    }
}

/// The one decision for installation actions: `org` is the caller's standing in the
/// installation's organization, `integration_admin` whether they administer the integration.
pub fn installation_allows(org: Standing, integration_admin: bool, action: InstallationAction) -> bool {
    match action {
        InstallationAction::View => integration_admin || org_allows(org, OrgAction::ListInstallations),
        InstallationAction::Manage => integration_admin || org_allows(org, OrgAction::InstallIntegration),
        InstallationAction::Token => integration_admin,
    }
}

/// Proof that the caller may do the action `A` to `T`, a resource as loaded for them (an
/// organization, a collection, a space). Only this crate's permission checks make one (each
/// resource's `authorize`), so a domain function that takes `&Authorized<SpaceFor,
/// space::Merge>` cannot be called without the check having passed, for that resource and
/// that action: the HTTP layer can load a resource and ask, but not make the proof itself
/// (the pattern of lldap's access-control handlers). It derefs to the resource.
pub struct Authorized<T, A> {
    resource: T,
    action: std::marker::PhantomData<fn() -> A>,
}

impl<T, A> Authorized<T, A> {
    /// Made by a permission check that passed, never elsewhere.
    pub(crate) fn granted(resource: T) -> Authorized<T, A> {
        Authorized {
            resource,
            action: std::marker::PhantomData,
        }
    }

    pub fn into_inner(self) -> T {
        self.resource
    }
}

impl<T, A> std::ops::Deref for Authorized<T, A> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.resource
    }
}

impl<T: std::fmt::Debug, A> std::fmt::Debug for Authorized<T, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Authorized").field(&self.resource).finish()
    }
}

/// An action as a type, for [`Authorized`]: `space::Merge` is [`SpaceAction::Merge`].
pub trait Action<Kind> {
    const ACTION: Kind;
}

/// Declares one type per action of an action enum, in a module named after the resource.
macro_rules! action_types {
    ($(#[$meta:meta])* $module:ident: $kind:ident { $($action:ident),+ $(,)? }) => {
        $(#[$meta])*
        pub mod $module {
            $(
                #[doc = concat!("[`", stringify!($kind), "::", stringify!($action), "`](super::", stringify!($kind), "::", stringify!($action), ") as a type.")]
                #[derive(Debug)]
                pub enum $action {}

                impl super::Action<super::$kind> for $action {
                    const ACTION: super::$kind = super::$kind::$action;
                }
            )+
        }
    };
}

action_types! {
    /// Organization actions as types.
    org: OrgAction {
        View, Admin, CreateContent, CreateOpenApiSpec, IngestConversations, TriageConversations,
        ListMembers, ListTeams, ListIntegrations, ListInstallations, InstallIntegration, ViewBilling,
        ReadAgentInstructions,
    }
}

action_types! {
    /// Space actions as types.
    space: SpaceAction {
        View, Comment, Edit, Review, Merge, Admin, TriggerGitSync, InstallIntegration,
    }
}

action_types! {
    /// Membership actions as types.
    member: MemberAction { View, ChangeRole, Remove, MarkSso }
}

action_types! {
    /// Team actions as types.
    team: TeamAction { View, Manage }
}

action_types! {
    /// Docs site actions as types.
    site: SiteAction { View, Manage, Admin }
}

action_types! {
    /// OpenAPI specification actions as types.
    spec: SpecAction { View, Edit }
}

action_types! {
    /// Translation actions as types.
    translation: TranslationAction { View, Edit }
}

action_types! {
    /// Integration actions as types.
    integration: IntegrationAction { View, Admin }
}

action_types! {
    /// Installation actions as types.
    installation: InstallationAction { View, Manage, Token }
}

action_types! {
    /// Collection actions as types.
    collection: CollectionAction { View, Create, Admin }
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
    fn content_roles_follow_grants_and_default_levels() {
        use DefaultLevel::{Inherit, NoAccess};
        let level = DefaultLevel::Role;
        let member = |r| Standing::Member(r);
        let role = |standing, granted, defaults: &[DefaultLevel]| {
            content_role(&ContentAccess {
                standing,
                granted,
                defaults,
            })
        };
        assert_eq!(
            role(member(Role::Edit), None, &[Inherit, Inherit]),
            Some(Role::Edit)
        );
        assert_eq!(
            role(member(Role::Edit), None, &[Inherit, level(Role::Read)]),
            Some(Role::Read)
        );
        assert_eq!(
            role(member(Role::Edit), None, &[level(Role::Admin)]),
            Some(Role::Edit)
        );
        assert_eq!(role(member(Role::Edit), None, &[NoAccess]), None);
        assert_eq!(
            role(member(Role::Edit), Some(Role::Comment), &[NoAccess]),
            Some(Role::Comment)
        );
        assert_eq!(
            role(member(Role::Read), Some(Role::Admin), &[]),
            Some(Role::Admin)
        );
        assert_eq!(role(member(Role::Admin), None, &[NoAccess]), Some(Role::Admin));
        assert_eq!(role(Standing::Guest, None, &[Inherit]), None);
        assert_eq!(role(Standing::Guest, Some(Role::Read), &[]), Some(Role::Read));
        assert_eq!(role(Standing::Outsider, Some(Role::Read), &[]), None);
    }

    #[test]
    fn locked_and_deleted_spaces_limit_actions() {
        let locked = SpaceState {
            locked: true,
            deleted: false,
        };
        assert!(!space_allows(Some(Role::Admin), locked, SpaceAction::Edit));
        assert!(!space_allows(Some(Role::Admin), locked, SpaceAction::Merge));
        assert!(space_allows(Some(Role::Admin), locked, SpaceAction::Admin));
        let deleted = SpaceState {
            locked: false,
            deleted: true,
        };
        assert!(space_allows(Some(Role::Admin), deleted, SpaceAction::View));
        assert!(!space_allows(Some(Role::Edit), deleted, SpaceAction::View));
        assert!(space_allows(
            Some(Role::Read),
            SpaceState::default(),
            SpaceAction::View
        ));
        assert!(!space_allows(
            Some(Role::Read),
            SpaceState::default(),
            SpaceAction::Comment
        ));
        assert!(!space_allows(None, SpaceState::default(), SpaceAction::View));
    }

    #[test]
    fn refusals_name_the_role_needed_and_the_callers() {
        assert_eq!(
            role_refusal(
                SpaceAction::Review.describe(),
                SpaceAction::Review.needed(),
                "on space \"s1\"",
                Some(Role::Edit)
            ),
            "reviewing change requests needs the `review` role or a stronger one on space \"s1\"; \
             your role there is `edit`"
        );
        let guest = role_refusal("listing members", Role::Read, "in organization \"o\"", None);
        assert!(guest.contains("you have no role there"), "{guest}");
        let admin = role_refusal(
            "changing a member's role",
            Role::Admin,
            "in organization \"o\"",
            Some(Role::Create),
        );
        assert!(
            admin.starts_with("changing a member's role needs the `admin` role in"),
            "{admin}"
        );
        // What a refusal names is what the decision uses.
        for role in Role::ALL {
            for action in [
                SpaceAction::Comment,
                SpaceAction::Edit,
                SpaceAction::Review,
                SpaceAction::Admin,
            ] {
                assert_eq!(
                    space_allows(Some(role), SpaceState::default(), action),
                    role >= action.needed()
                );
            }
        }
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
