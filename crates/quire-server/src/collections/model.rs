//! A collection as stored and as sent.

use serde::Serialize;

use crate::db::{Conn, DbError, Row};
use crate::error::ApiError;
use crate::urls::Urls;
use quire_store::access::AccessContext;
use quire_store::permissions::{CollectionAction, DefaultLevel, Role, Standing, collection_allows};

#[derive(Clone, Debug)]
pub struct Collection {
    pub id: String,
    pub org_id: String,
    pub parent: Option<String>,
    pub title: String,
    pub description: Option<String>,
    pub default_level: DefaultLevel,
    pub position: String,
    pub created_at: i64,
}

quire_store::columns! {
    /// The columns [`Collection::from_row`] reads, with the table aliased `c`.
    pub struct CollectionCols of "collections" {
        id: "c.id",
        org_id: "c.organization_id",
        parent: "c.parent_id",
        title: "c.title",
        description: "c.description",
        default_level: "c.default_level",
        position: "c.position",
        created_at: "c.created_at",
    }
}

quire_store::columns! {
    /// The caller's membership of the collection's organization, after its [`CollectionCols`].
    struct CollectionCallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

/// The columns [`Collection::from_row`] reads, with the table aliased `c`.
pub const COLUMNS: &str = CollectionCols::SQL;
const COLLECTION: CollectionCols = CollectionCols::AT;
const CALLER: CollectionCallerCols = CollectionCallerCols::at(CollectionCols::COUNT);

impl Collection {
    pub fn from_row(row: &Row) -> Result<Collection, DbError> {
        Ok(Collection {
            id: row.col(COLLECTION.id)?,
            org_id: row.col(COLLECTION.org_id)?,
            parent: row.col(COLLECTION.parent)?,
            title: row.col(COLLECTION.title)?,
            description: row.col(COLLECTION.description)?,
            default_level: row.col(COLLECTION.default_level)?,
            position: row.col(COLLECTION.position)?,
            created_at: row.col(COLLECTION.created_at)?,
        })
    }

    pub fn to_json(&self, urls: &Urls, role: Option<Role>) -> CollectionJson {
        let allows = |action| collection_allows(role, action);
        CollectionJson {
            object: "collection",
            id: self.id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            organization: self.org_id.clone(),
            parent: self.parent.clone(),
            default_level: self.default_level.to_json(),
            urls: CollectionUrls {
                location: urls.api(&format!("/collections/{}", self.id)),
                app: urls.app(&format!("/o/{}/c/{}", self.org_id, self.id)),
            },
            permissions: CollectionPermissions {
                view: allows(CollectionAction::View),
                admin: allows(CollectionAction::Admin),
                view_invite_links: allows(CollectionAction::Admin),
                create: allows(CollectionAction::Create),
            },
        }
    }
}

/// A collection with the caller's role on it.
#[derive(Clone, Debug)]
pub struct CollectionFor {
    pub collection: Collection,
    pub role: Option<Role>,
    pub standing: Standing,
}

impl CollectionFor {
    pub fn allows(&self, action: CollectionAction) -> bool {
        collection_allows(self.role, action)
    }

    /// Fails with 404 when the caller cannot see the collection, 403 when the action is not
    /// allowed.
    pub fn require(&self, action: CollectionAction) -> Result<(), ApiError> {
        if !self.allows(CollectionAction::View) {
            return Err(not_found(&self.collection.id));
        }
        if !self.allows(action) {
            return Err(quire_store::permissions::role_forbidden(
                action.describe(),
                action.needed(),
                &format!("on collection {:?}", self.collection.id),
                self.role,
            )
            .into());
        }
        Ok(())
    }

    pub fn to_json(&self, urls: &Urls) -> CollectionJson {
        self.collection.to_json(urls, self.role)
    }
}

pub fn not_found(id: &str) -> ApiError {
    ApiError::not_found(format!("collection {id:?} not found"))
}

/// Loads a collection with the caller's role on it; None when it does not exist.
pub fn load_for(
    c: &mut dyn Conn,
    collection_id: &str,
    user_id: &str,
) -> Result<Option<CollectionFor>, DbError> {
    let sql = format!(
        "SELECT {}, {} FROM collections c
         LEFT JOIN members m ON m.organization_id = c.organization_id AND m.user_id = ?2
         WHERE c.id = ?1",
        CollectionCols::SQL,
        CollectionCallerCols::SQL
    );
    let Some(row) = c.query_opt(&sql, crate::params![collection_id, user_id])? else {
        return Ok(None);
    };
    let collection = Collection::from_row(&row)?;
    let member: Option<String> = row.col(CALLER.member)?;
    let disabled: Option<bool> = row.col(CALLER.disabled)?;
    let standing = match member {
        Some(_) if disabled != Some(true) => Standing::from_membership(Some(row.col(CALLER.role)?)),
        _ => Standing::Outsider,
    };
    let ctx = AccessContext::for_item(
        c,
        &collection.org_id,
        user_id,
        standing,
        collection.parent.as_deref(),
    )?;
    let role = ctx.collection_role_with(
        &collection.id,
        collection.default_level,
        collection.parent.as_deref(),
    );
    Ok(Some(CollectionFor {
        collection,
        role,
        standing,
    }))
}

/// Loads a collection the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, collection_id: &str, user_id: &str) -> Result<CollectionFor, ApiError> {
    match load_for(c, collection_id, user_id)? {
        Some(col) if col.allows(CollectionAction::View) => Ok(col),
        _ => Err(not_found(collection_id)),
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
