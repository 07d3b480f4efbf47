//! A collection as stored, and as loaded for a caller.

use crate::access::AccessContext;
use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::permissions::{
    Action, Authorized, CollectionAction, DefaultLevel, Role, Standing, collection_allows,
};

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

crate::columns! {
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

crate::columns! {
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
}

/// A collection with the caller's role on it. Only this crate's loaders make one
/// (`non_exhaustive`).
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    pub fn require(&self, action: CollectionAction) -> StoreResult<()> {
        if !self.allows(CollectionAction::View) {
            return Err(not_found(&self.collection.id));
        }
        if !self.allows(action) {
            return Err(crate::permissions::role_forbidden(
                action.describe(),
                action.needed(),
                &format!("on collection {:?}", self.collection.id),
                self.role,
            ));
        }
        Ok(())
    }
}

impl CollectionFor {
    /// Proof that the caller may do `A` (`permissions::collection::Admin`, ...), or 404 / 403
    /// as [`CollectionFor::require`].
    pub fn authorize<A: Action<CollectionAction>>(self) -> StoreResult<Authorized<CollectionFor, A>> {
        self.require(A::ACTION)?;
        Ok(Authorized::granted(self))
    }

    /// A collection of a list, with the role the list's access context gives on it.
    pub(crate) fn listed(collection: Collection, role: Option<Role>, standing: Standing) -> CollectionFor {
        CollectionFor {
            collection,
            role,
            standing,
        }
    }
}

pub fn not_found(id: &str) -> StoreError {
    StoreError::not_found(format!("collection {id:?} not found"))
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
    let standing = Standing::from_member_columns(
        member.as_deref(),
        row.col(CALLER.disabled)?,
        row.col(CALLER.role)?,
    );
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
pub fn load_visible(c: &mut dyn Conn, collection_id: &str, user_id: &str) -> StoreResult<CollectionFor> {
    match load_for(c, collection_id, user_id)? {
        Some(col) if col.allows(CollectionAction::View) => Ok(col),
        _ => Err(not_found(collection_id)),
    }
}
