//! A collection as answered, with the caller's `permissions` on it.

use quire_store::collections::{Collection, CollectionFor};
use quire_store::permissions::{CollectionAction, Role, collection_allows};
use serde::Serialize;

use crate::urls::Urls;

/// The wire object of a collection as its caller sees it.
pub fn collection_json(urls: &Urls, col: &CollectionFor) -> CollectionJson {
    with_role(urls, &col.collection, col.role)
}

/// The wire object of a collection for a caller with `role` on it.
pub fn with_role(urls: &Urls, collection: &Collection, role: Option<Role>) -> CollectionJson {
    let allows = |action| collection_allows(role, action);
    CollectionJson {
        object: "collection",
        id: collection.id.clone(),
        title: collection.title.clone(),
        description: collection.description.clone(),
        organization: collection.org_id.clone(),
        parent: collection.parent.clone(),
        default_level: collection.default_level.to_json(),
        urls: CollectionUrls {
            location: urls.api(&format!("/collections/{}", collection.id)),
            app: urls.app(&format!("/o/{}/c/{}", collection.org_id, collection.id)),
        },
        permissions: CollectionPermissions {
            view: allows(CollectionAction::View),
            admin: allows(CollectionAction::Admin),
            view_invite_links: allows(CollectionAction::Admin),
            create: allows(CollectionAction::Create),
        },
    }
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub organization: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub default_level: serde_json::Value,
    pub urls: CollectionUrls,
    pub permissions: CollectionPermissions,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct CollectionUrls {
    pub location: String,
    pub app: String,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionPermissions {
    pub view: bool,
    pub admin: bool,
    pub view_invite_links: bool,
    pub create: bool,
}
