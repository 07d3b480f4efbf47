//! What every operation on a resource starts with, once: open the transaction, load the resource
//! as the caller sees it (404 when they cannot), and prove the action the operation needs (403
//! naming the role when they may not). [`Db::read_as`] and [`Db::write_as`] do the three steps
//! and hand the domain function its proof, [`Authorized`]; the action type names the resource
//! (`site::Manage` acts on a [`SiteFor`]), so a handler writes
//! `db.write_as::<site::Manage, _>(user_id, key, move |c, site| domain_fn(c, &site, ..))`.
//! The user id is taken by value, so that the closure may move the caller it came from.

use crate::collections::{self, CollectionFor};
use crate::db::{Conn, Db};
use crate::error::StoreResult;
use crate::integrations::{InstallationFor, InstallationKey, IntegrationFor};
use crate::members::{MemberKey, Membership};
use crate::openapi::{self, SpecFor, SpecKey};
use crate::orgs::{self, OrgFor};
use crate::permissions::{
    Authorized, collection, installation, integration, member, org, site, space, spec, team, translation,
};
use crate::sites::{self, SiteFor};
use crate::spaces::{self, SpaceFor};
use crate::teams::{self, TeamFor};
use crate::translations::{self, TranslationFor, TranslationKey};

/// A resource that is loaded for a caller by its key, and is there only if they may see it.
pub trait Visible: Sized + Send + 'static {
    /// What names one: an id, or the ids of its path when it lives under a parent.
    type Key: Send + 'static;

    /// The resource as the caller sees it, or 404.
    fn load_visible(c: &mut dyn Conn, key: &Self::Key, user_id: &str) -> StoreResult<Self>;
}

/// An action type (`site::Manage`, `space::Merge`, ...) with the resource it acts on.
pub trait ActionOn: Sized + 'static {
    type Resource: Visible;

    /// The resource's own permission check for this action.
    fn authorize(resource: Self::Resource) -> StoreResult<Authorized<Self::Resource, Self>>;
}

/// The key of `A`'s resource.
pub type KeyOf<A> = <<A as ActionOn>::Resource as Visible>::Key;

impl Db {
    /// Reads as `user_id`: loads `A`'s resource by `key`, proves `A` on it and runs `f` with
    /// the proof, in one read (see [`Db::read`] for where it runs).
    pub async fn read_as<A: ActionOn, T: Send + 'static>(
        &self,
        user_id: String,
        key: KeyOf<A>,
        f: impl FnOnce(&mut dyn Conn, Authorized<A::Resource, A>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.read(move |c| {
            let resource = authorized::<A>(c, &key, &user_id)?;
            f(c, resource)
        })
        .await
    }

    /// [`Db::read_as`] on the blocking pool, for reads that do real work (lists that render,
    /// search).
    pub async fn read_blocking_as<A: ActionOn, T: Send + 'static>(
        &self,
        user_id: String,
        key: KeyOf<A>,
        f: impl FnOnce(&mut dyn Conn, Authorized<A::Resource, A>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.read_blocking(move |c| {
            let resource = authorized::<A>(c, &key, &user_id)?;
            f(c, resource)
        })
        .await
    }

    /// [`Db::read_as`] in a write transaction. The resource is loaded and checked again on
    /// every attempt (a write may be retried), so the proof is never older than the
    /// transaction that uses it.
    pub async fn write_as<A: ActionOn, T: Send + 'static>(
        &self,
        user_id: String,
        key: KeyOf<A>,
        mut f: impl FnMut(&mut dyn Conn, Authorized<A::Resource, A>) -> StoreResult<T> + Send + 'static,
    ) -> StoreResult<T> {
        self.write(move |c| {
            let resource = authorized::<A>(c, &key, &user_id)?;
            f(c, resource)
        })
        .await
    }
}

/// Loads `A`'s resource as `user_id` sees it and proves `A` on it, inside a transaction the
/// caller already holds.
pub fn authorized<A: ActionOn>(
    c: &mut dyn Conn,
    key: &KeyOf<A>,
    user_id: &str,
) -> StoreResult<Authorized<A::Resource, A>> {
    A::authorize(A::Resource::load_visible(c, key, user_id)?)
}

impl Visible for OrgFor {
    /// The organization's id.
    type Key = String;

    fn load_visible(c: &mut dyn Conn, org_id: &String, user_id: &str) -> StoreResult<OrgFor> {
        orgs::load_visible(c, org_id, user_id)
    }
}

impl Visible for SpaceFor {
    /// The space's id.
    type Key = String;

    fn load_visible(c: &mut dyn Conn, space_id: &String, user_id: &str) -> StoreResult<SpaceFor> {
        spaces::load_visible(c, space_id, user_id)
    }
}

impl Visible for CollectionFor {
    /// The collection's id.
    type Key = String;

    fn load_visible(c: &mut dyn Conn, collection_id: &String, user_id: &str) -> StoreResult<CollectionFor> {
        collections::load_visible(c, collection_id, user_id)
    }
}

impl Visible for SiteFor {
    type Key = sites::SiteKey;

    fn load_visible(c: &mut dyn Conn, key: &sites::SiteKey, user_id: &str) -> StoreResult<SiteFor> {
        sites::load_visible(c, &key.org_id, &key.site_id, user_id)
    }
}

impl Visible for SpecFor {
    type Key = SpecKey;

    fn load_visible(c: &mut dyn Conn, key: &SpecKey, user_id: &str) -> StoreResult<SpecFor> {
        openapi::load_visible(c, key, user_id)
    }
}

impl Visible for TranslationFor {
    type Key = TranslationKey;

    fn load_visible(c: &mut dyn Conn, key: &TranslationKey, user_id: &str) -> StoreResult<TranslationFor> {
        translations::load_visible(c, key, user_id)
    }
}

impl Visible for IntegrationFor {
    /// The integration's name.
    type Key = String;

    fn load_visible(c: &mut dyn Conn, name: &String, user_id: &str) -> StoreResult<IntegrationFor> {
        crate::integrations::model::load_visible(c, name, user_id)
    }
}

impl Visible for InstallationFor {
    type Key = InstallationKey;

    fn load_visible(c: &mut dyn Conn, key: &InstallationKey, user_id: &str) -> StoreResult<InstallationFor> {
        crate::integrations::model::load_installation(c, key, user_id)
    }
}

impl Visible for TeamFor {
    type Key = teams::TeamKey;

    fn load_visible(c: &mut dyn Conn, key: &teams::TeamKey, user_id: &str) -> StoreResult<TeamFor> {
        let org = orgs::load_visible(c, &key.org_id, user_id)?;
        teams::load(c, org, &key.team_id, user_id)
    }
}

impl Visible for Membership {
    type Key = MemberKey;

    fn load_visible(c: &mut dyn Conn, key: &MemberKey, user_id: &str) -> StoreResult<Membership> {
        let org = orgs::load_visible(c, &key.org_id, user_id)?;
        Membership::load(org, user_id, &key.user_id)
    }
}

/// Declares which resource each action type acts on, through that resource's `authorize`.
macro_rules! acts_on {
    ($resource:ty: $($action:ty),+ $(,)?) => {$(
        impl ActionOn for $action {
            type Resource = $resource;

            fn authorize(resource: $resource) -> StoreResult<Authorized<$resource, Self>> {
                resource.authorize::<Self>()
            }
        }
    )+};
}

acts_on!(OrgFor:
    org::View, org::Admin, org::CreateContent, org::CreateOpenApiSpec, org::IngestConversations,
    org::TriageConversations, org::ListMembers, org::ListTeams, org::ListIntegrations, org::ListInstallations,
    org::InstallIntegration, org::ViewBilling, org::ReadAgentInstructions,
);
acts_on!(SpaceFor:
    space::View, space::Comment, space::Edit, space::Review, space::Merge, space::Admin,
    space::TriggerGitSync, space::InstallIntegration,
);
acts_on!(CollectionFor: collection::View, collection::Create, collection::Admin);
acts_on!(SiteFor: site::View, site::Manage, site::Admin);
acts_on!(TeamFor: team::View, team::Manage);
acts_on!(SpecFor: spec::View, spec::Edit);
acts_on!(TranslationFor: translation::View, translation::Edit);
acts_on!(IntegrationFor: integration::View, integration::Admin);
acts_on!(InstallationFor: installation::View, installation::Manage, installation::Token);
acts_on!(Membership: member::View, member::ChangeRole, member::Remove, member::MarkSso);
