//! A space as stored, and as loaded for a caller.

use crate::access::AccessContext;
use crate::db::{Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::merge_rules::MergeRules;
use crate::permissions::{
    Action, Authorized, DefaultLevel, Role, SpaceAction, SpaceState, Standing, space_allows,
};

#[derive(Clone, Debug)]
pub struct Space {
    pub id: String,
    pub org_id: String,
    pub parent: Option<String>,
    pub title: String,
    pub emoji: Option<String>,
    pub icon_url: Option<String>,
    pub visibility: Visibility,
    pub edit_mode: EditMode,
    pub language: Option<String>,
    pub default_level: DefaultLevel,
    pub merge_rules: MergeRules,
    pub position: String,
    pub revision: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub deleted_at: Option<i64>,
    pub counters: Counters,
}

/// Counts shown on a space, kept exact by triggers in the transactions that move them, as
/// deltas in `space_counts` (one row per space and shard, migration 0013): writers of a space
/// add to their session's shard instead of locking the space row, and a read sums at most 16
/// rows of an index.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    pub comments: i64,
    pub change_requests: i64,
    pub change_requests_open: i64,
    pub change_requests_draft: i64,
    /// Comments on the space itself (not on its change requests), open or resolved.
    pub comments_total: i64,
}

crate::wire_enum! {
    /// Who may read a space's published content.
    pub enum Visibility {
        Public = "public",
        Unlisted = "unlisted",
        ShareLink = "share-link",
        VisitorAuth = "visitor-auth",
        InCollection = "in-collection",
        Private = "private",
    }
}

crate::wire_enum! {
    /// Whether a space's content may change (`locked`: not until an admin sets it `live`).
    pub enum EditMode {
        Live = "live",
        Locked = "locked",
    }
}

crate::columns! {
    /// The columns [`Space::from_row`] reads, with the table aliased `s`.
    pub struct SpaceCols of "spaces" {
        id: "s.id",
        org_id: "s.organization_id",
        parent: "s.parent_id",
        title: "s.title",
        emoji: "s.emoji",
        icon_url: "s.icon_url",
        visibility: "s.visibility",
        edit_mode: "s.edit_mode",
        language: "s.language",
        default_level: "s.default_level",
        merge_rules: "s.merge_rules",
        position: "s.position",
        revision: "s.revision_id",
        created_at: "s.created_at",
        updated_at: "s.updated_at",
        deleted_at: "s.deleted_at",
        comments: "(SELECT CAST(coalesce(sum(k.open_comments), 0) AS BIGINT) FROM space_counts k WHERE k.space_id = s.id)",
        change_requests: "(SELECT CAST(coalesce(sum(k.change_requests_total), 0) AS BIGINT) FROM space_counts k WHERE k.space_id = s.id)",
        change_requests_open: "(SELECT CAST(coalesce(sum(k.change_requests_open), 0) AS BIGINT) FROM space_counts k WHERE k.space_id = s.id)",
        change_requests_draft: "(SELECT CAST(coalesce(sum(k.change_requests_draft), 0) AS BIGINT) FROM space_counts k WHERE k.space_id = s.id)",
        comments_total: "(SELECT CAST(coalesce(sum(k.comments_total), 0) AS BIGINT) FROM space_counts k WHERE k.space_id = s.id)",
    }
}

crate::columns! {
    /// The caller's membership of the space's organization, selected after its [`SpaceCols`].
    struct SpaceCallerCols of "members" {
        member: "m.user_id",
        role: "m.role",
        disabled: "m.disabled",
    }
}

const SPACE: SpaceCols = SpaceCols::AT;
const CALLER: SpaceCallerCols = SpaceCallerCols::at(SpaceCols::COUNT);
/// The caller's grants in the organization, built per dialect by `access::grants_column`.
const GRANTS: crate::db::Col = crate::columns::extra("grants", "grants", CALLER.end());

/// The columns [`Space::from_row`] reads, with the table aliased `s`.
pub fn columns() -> &'static str {
    SpaceCols::SQL
}

impl Space {
    pub fn from_row(row: &Row) -> Result<Space, DbError> {
        let id: String = row.col(SPACE.id)?;
        let merge_rules: String = row.col(SPACE.merge_rules)?;
        let merge_rules = MergeRules::from_json_text(&merge_rules)
            .map_err(|e| DbError::stored(format_args!("merge rules of space {id:?}"), e))?;
        Ok(Space {
            id,
            org_id: row.col(SPACE.org_id)?,
            parent: row.col(SPACE.parent)?,
            title: row.col(SPACE.title)?,
            emoji: row.col(SPACE.emoji)?,
            icon_url: row.col(SPACE.icon_url)?,
            visibility: row.col(SPACE.visibility)?,
            edit_mode: row.col(SPACE.edit_mode)?,
            language: row.col(SPACE.language)?,
            default_level: row.col(SPACE.default_level)?,
            merge_rules,
            position: row.col(SPACE.position)?,
            revision: row.col(SPACE.revision)?,
            created_at: row.col(SPACE.created_at)?,
            updated_at: row.col(SPACE.updated_at)?,
            deleted_at: row.col(SPACE.deleted_at)?,
            counters: Counters {
                comments: row.col(SPACE.comments)?,
                change_requests: row.col(SPACE.change_requests)?,
                change_requests_open: row.col(SPACE.change_requests_open)?,
                change_requests_draft: row.col(SPACE.change_requests_draft)?,
                comments_total: row.col(SPACE.comments_total)?,
            },
        })
    }

    pub fn state(&self) -> SpaceState {
        SpaceState {
            locked: self.edit_mode == EditMode::Locked,
            deleted: self.deleted_at.is_some(),
        }
    }
}

/// A space with the caller's role on it. Only this crate's loaders make one
/// (`non_exhaustive`), so holding one means the caller's role was computed from the database.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SpaceFor {
    pub space: Space,
    pub role: Option<Role>,
}

impl SpaceFor {
    pub fn allows(&self, action: SpaceAction) -> bool {
        space_allows(self.role, self.space.state(), action)
    }
}

/// Loads one space with the caller's role on it; None when it does not exist.
pub fn load_for(c: &mut dyn Conn, space_id: &str, user_id: &str) -> Result<Option<SpaceFor>, DbError> {
    let sql = format!(
        "SELECT {}, {}, {} FROM spaces s
         LEFT JOIN members m ON m.organization_id = s.organization_id AND m.user_id = ?2
         WHERE s.id = ?1",
        SpaceCols::SQL,
        SpaceCallerCols::SQL,
        crate::access::grants_column(c.dialect(), "s.organization_id", "?2")
    );
    let Some(row) = c.query_opt(&sql, crate::params![space_id, user_id])? else {
        return Ok(None);
    };
    let space = Space::from_row(&row)?;
    let member: Option<String> = row.col(CALLER.member)?;
    let standing = Standing::from_member_columns(
        member.as_deref(),
        row.col(CALLER.disabled)?,
        row.col(CALLER.role)?,
    );
    let grants: Option<String> = row.col(GRANTS)?;
    let ctx = AccessContext::for_item_with_grants(c, standing, space.parent.as_deref(), grants.as_deref())?;
    let role = role_in(&ctx, &space);
    Ok(Some(SpaceFor { space, role }))
}

/// Loads a space the caller may see, or 404.
pub fn load_visible(c: &mut dyn Conn, space_id: &str, user_id: &str) -> StoreResult<SpaceFor> {
    visible(space_id, load_for(c, space_id, user_id)?)
}

/// Loads a space the caller may see that is not deleted, or 404: everything but the space's own
/// record (and its restore) is gone while it is deleted.
pub fn load_active(c: &mut dyn Conn, space_id: &str, user_id: &str) -> StoreResult<SpaceFor> {
    active(load_visible(c, space_id, user_id)?)
}

/// The space `space_id` as loaded, if the caller may see it; 404 otherwise.
pub fn visible(space_id: &str, loaded: Option<SpaceFor>) -> StoreResult<SpaceFor> {
    match loaded {
        Some(space) if space.allows(SpaceAction::View) => Ok(space),
        _ => Err(not_found(space_id)),
    }
}

/// A visible space unless it is deleted.
pub fn active(space: SpaceFor) -> StoreResult<SpaceFor> {
    if space.space.deleted_at.is_some() {
        return Err(not_found(&space.space.id));
    }
    Ok(space)
}

pub fn not_found(space_id: &str) -> StoreError {
    StoreError::not_found(format!("space {space_id:?} not found"))
}

impl SpaceFor {
    /// Fails with 404 when the caller cannot see the space, 403 when the action is not allowed.
    pub fn require(&self, action: SpaceAction) -> StoreResult<()> {
        if !self.allows(SpaceAction::View) {
            return Err(not_found(&self.space.id));
        }
        if self.allows(action) {
            return Ok(());
        }
        let unlocked = SpaceState {
            locked: false,
            ..self.space.state()
        };
        if self.space.state().locked && space_allows(self.role, unlocked, action) {
            return Err(StoreError::forbidden(format!(
                "space {:?} is locked: its content cannot be changed until an admin sets editMode to live",
                self.space.id
            )));
        }
        Err(crate::permissions::role_forbidden(
            action.describe(),
            action.needed(),
            &format!("on space {:?}", self.space.id),
            self.role,
        ))
    }
}

impl SpaceFor {
    /// Proof that the caller may do `A` (`permissions::space::Merge`, ...), or 404 / 403 as
    /// [`SpaceFor::require`].
    pub fn authorize<A: Action<SpaceAction>>(self) -> StoreResult<Authorized<SpaceFor, A>> {
        self.require(A::ACTION)?;
        Ok(Authorized::granted(self))
    }

    /// This space as loaded for another caller role (a member's spaces shown with the
    /// caller's permissions).
    pub(crate) fn with_role(self, role: Option<Role>) -> SpaceFor {
        SpaceFor { role, ..self }
    }
}

/// The role a context gives on a space.
pub fn role_in(ctx: &AccessContext, space: &Space) -> Option<Role> {
    ctx.space_role(&space.id, space.default_level, space.parent.as_deref())
}

/// Runs a query selecting [`columns`] and pairs each space with the role `ctx` gives on it.
pub fn query_with_roles(
    c: &mut dyn Conn,
    sql: &str,
    params: &[crate::db::Value],
    ctx: &AccessContext,
) -> Result<Vec<SpaceFor>, DbError> {
    c.query(sql, params)?
        .iter()
        .map(|r| {
            let space = Space::from_row(r)?;
            let role = role_in(ctx, &space);
            Ok(SpaceFor { space, role })
        })
        .collect()
}
