//! Loads what decides a caller's access to the spaces and collections of one organization, and
//! applies [`permissions::content_role`] to it, for single items and, as SQL filters, for lists.
//! Both paths derive from the same grants and default levels, so a list shows exactly the items
//! a direct read would allow.

use std::collections::{HashMap, HashSet};

use crate::db::{Args, Conn, DbError, Dialect};
use crate::params;
use crate::permissions::{ContentAccess, DefaultLevel, Role, Standing, content_role};

/// Deepest collection nesting followed; deeper chains (which quire never creates) are cut.
const MAX_DEPTH: usize = 64;

crate::columns! {
    /// A collection as a node of the tree that roles are inherited through.
    struct NodeCols of "collections" {
        id: "id",
        parent: "parent_id",
        default_level: "default_level",
    }
}

crate::columns! {
    /// A grant to the caller or one of their teams.
    struct GrantCols of "grants" {
        kind: "target_kind",
        target: "target_id",
        role: "role",
    }
}

const NODE: NodeCols = NodeCols::AT;
const GRANT: GrantCols = GrantCols::AT;

#[derive(Clone, Debug)]
struct CollectionNode {
    parent: Option<String>,
    default_level: DefaultLevel,
}

/// A caller's access inputs in one organization.
#[derive(Clone, Debug)]
pub struct AccessContext {
    pub standing: Standing,
    collections: HashMap<String, CollectionNode>,
    /// Strongest role granted to the caller or their teams, by target id.
    grants: HashMap<String, Role>,
    /// Targets of those grants that are spaces.
    space_grants: HashSet<String>,
}

impl AccessContext {
    /// For an organization admin or an outsider nothing else matters.
    fn bare(standing: Standing) -> AccessContext {
        AccessContext {
            standing,
            collections: HashMap::new(),
            grants: HashMap::new(),
            space_grants: HashSet::new(),
        }
    }

    fn needs_inputs(standing: Standing) -> bool {
        !matches!(standing, Standing::Outsider | Standing::Member(Role::Admin))
    }

    /// Loads every collection of the organization: for lists.
    pub fn for_org(
        c: &mut dyn Conn,
        org_id: &str,
        user_id: &str,
        standing: Standing,
    ) -> Result<AccessContext, DbError> {
        let mut ctx = AccessContext::bare(standing);
        if !Self::needs_inputs(standing) {
            return Ok(ctx);
        }
        for row in c.query(
            &format!(
                "SELECT {} FROM collections WHERE organization_id = ?1",
                NodeCols::SQL
            ),
            params![org_id],
        )? {
            ctx.collections.insert(
                row.col(NODE.id)?,
                CollectionNode {
                    parent: row.col(NODE.parent)?,
                    default_level: row.col(NODE.default_level)?,
                },
            );
        }
        ctx.load_grants(c, org_id, user_id)?;
        Ok(ctx)
    }

    /// Loads only the collections above `parent`: for one space or collection.
    pub fn for_item(
        c: &mut dyn Conn,
        org_id: &str,
        user_id: &str,
        standing: Standing,
        parent: Option<&str>,
    ) -> Result<AccessContext, DbError> {
        let mut ctx = Self::for_item_with_grants(c, standing, parent, None)?;
        if Self::needs_inputs(standing) {
            ctx.load_grants(c, org_id, user_id)?;
        }
        Ok(ctx)
    }

    /// As [`AccessContext::for_item`], with the caller's grants already read by the query that
    /// loaded the item, through [`grants_column`].
    pub fn for_item_with_grants(
        c: &mut dyn Conn,
        standing: Standing,
        parent: Option<&str>,
        grants: Option<&str>,
    ) -> Result<AccessContext, DbError> {
        let mut ctx = AccessContext::bare(standing);
        if !Self::needs_inputs(standing) {
            return Ok(ctx);
        }
        if let Some(parent) = parent {
            let rows = c.query(
                &format!(
                    "WITH RECURSIVE chain (id, parent_id, default_level, depth) AS (
                         SELECT id, parent_id, default_level, 0 FROM collections WHERE id = ?1
                         UNION ALL
                         SELECT p.id, p.parent_id, p.default_level, chain.depth + 1
                         FROM collections p JOIN chain ON p.id = chain.parent_id
                         WHERE chain.depth < ?2
                     )
                     SELECT {} FROM chain",
                    NodeCols::SQL
                ),
                params![parent, MAX_DEPTH],
            )?;
            for row in rows {
                ctx.collections.insert(
                    row.col(NODE.id)?,
                    CollectionNode {
                        parent: row.col(NODE.parent)?,
                        default_level: row.col(NODE.default_level)?,
                    },
                );
            }
        }
        for item in grants.unwrap_or("").split(' ').filter(|i| !i.is_empty()) {
            let mut parts = item.splitn(3, ':');
            let (Some(kind), Some(target), Some(role)) = (parts.next(), parts.next(), parts.next()) else {
                return Err(DbError::stored(
                    "a grant",
                    format!("{item:?} is not kind:target:role"),
                ));
            };
            let role = Role::parse(role).ok_or_else(|| {
                DbError::stored(
                    format_args!("the grant on {kind} {target:?}"),
                    format!("unknown role {role:?}"),
                )
            })?;
            ctx.add_grant(kind, target.to_string(), role);
        }
        Ok(ctx)
    }

    fn load_grants(&mut self, c: &mut dyn Conn, org_id: &str, user_id: &str) -> Result<(), DbError> {
        let rows = c.query(
            &format!(
                "SELECT {} FROM grants
             WHERE organization_id = ?1
               AND (user_id = ?2 OR team_id IN (SELECT team_id FROM team_members WHERE user_id = ?2))",
                GrantCols::SQL
            ),
            params![org_id, user_id],
        )?;
        for row in rows {
            let kind: String = row.col(GRANT.kind)?;
            self.add_grant(&kind, row.col(GRANT.target)?, row.col(GRANT.role)?);
        }
        Ok(())
    }

    fn add_grant(&mut self, kind: &str, target: String, role: Role) {
        if kind == "space" {
            self.space_grants.insert(target.clone());
        }
        let entry = self.grants.entry(target).or_insert(Role::Read);
        *entry = (*entry).max(role);
    }

    /// The collections from `start` upwards.
    fn chain<'a>(
        &'a self,
        start: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a str, &'a CollectionNode)> + 'a {
        let mut next = start;
        let mut depth = 0;
        std::iter::from_fn(move || {
            let id = next?;
            depth += 1;
            if depth > MAX_DEPTH {
                return None;
            }
            let (key, node) = self.collections.get_key_value(id)?;
            next = node.parent.as_deref();
            Some((key.as_str(), node))
        })
    }

    /// Role on an item with the given id, own default level and parent collection.
    fn role_of(&self, id: &str, default_level: DefaultLevel, parent: Option<&str>) -> Option<Role> {
        let mut defaults = vec![default_level];
        let mut granted = self.grants.get(id).copied();
        for (cid, node) in self.chain(parent) {
            defaults.push(node.default_level);
            granted = granted.max(self.grants.get(cid).copied());
        }
        content_role(&ContentAccess {
            standing: self.standing,
            granted,
            defaults: &defaults,
        })
    }

    pub fn space_role(
        &self,
        space_id: &str,
        default_level: DefaultLevel,
        parent: Option<&str>,
    ) -> Option<Role> {
        self.role_of(space_id, default_level, parent)
    }

    /// Role on a collection (which must be loaded: see [`AccessContext::for_item`]).
    pub fn collection_role(&self, collection_id: &str) -> Option<Role> {
        let node = self.collections.get(collection_id);
        match node {
            Some(node) => self.role_of(collection_id, node.default_level, node.parent.as_deref()),
            // Admins and outsiders load no collections: their role does not depend on them.
            None => self.role_of(collection_id, DefaultLevel::Inherit, None),
        }
    }

    /// Role on a collection whose row is at hand (when the context was loaded for its parent).
    pub fn collection_role_with(
        &self,
        collection_id: &str,
        default_level: DefaultLevel,
        parent: Option<&str>,
    ) -> Option<Role> {
        self.role_of(collection_id, default_level, parent)
    }

    /// An SQL condition (starting with ` AND`) keeping the spaces, aliased `s`, the caller can
    /// view. Needs a context made by [`AccessContext::for_org`]. Agrees with [`Self::space_role`].
    pub fn visible_spaces_sql(&self, args: &mut Args) -> String {
        match self.standing {
            Standing::Member(Role::Admin) => return String::new(),
            Standing::Outsider => return " AND 1 = 0".to_string(),
            _ => {}
        }
        // Collections from which spaces inherit a grant, or (for members) a default role.
        let mut granted_in = Vec::new();
        let mut default_in = Vec::new();
        for id in self.collections.keys() {
            if self.chain(Some(id)).any(|(cid, _)| self.grants.contains_key(cid)) {
                granted_in.push(id.clone());
            }
            if let Standing::Member(_) = self.standing {
                let resolved = self
                    .chain(Some(id))
                    .map(|(_, n)| n.default_level)
                    .find(|d| *d != DefaultLevel::Inherit);
                if !matches!(resolved, Some(DefaultLevel::NoAccess)) {
                    default_in.push(id.clone());
                }
            }
        }
        let mut clauses = vec![
            format!("s.id IN ({})", args.list(self.space_grants.iter().cloned())),
            format!("s.parent_id IN ({})", args.list(granted_in)),
        ];
        if let Standing::Member(_) = self.standing {
            let roles = args.list(Role::ALL.iter().map(|r| r.as_str()));
            clauses.push(format!(
                "s.default_level IN ({roles}) OR (s.default_level = 'inherit' AND (s.parent_id IS NULL OR s.parent_id IN ({})))",
                args.list(default_in)
            ));
        }
        format!(" AND ({})", clauses.join(" OR "))
    }

    /// An SQL condition keeping the collections, aliased `c`, the caller can view.
    pub fn visible_collections_sql(&self, args: &mut Args) -> String {
        match self.standing {
            Standing::Member(Role::Admin) => String::new(),
            Standing::Outsider => " AND 1 = 0".to_string(),
            _ => {
                let visible: Vec<String> = self
                    .collections
                    .keys()
                    .filter(|id| self.collection_role(id).is_some())
                    .cloned()
                    .collect();
                format!(" AND c.id IN ({})", args.list(visible))
            }
        }
    }
}

/// The grants of a user and their teams in an organization as one text column, so that the
/// query loading an item also loads its caller's grants: one round trip instead of two, which
/// on PostgreSQL is most of a point read's cost. Items are `kind:target:role` separated by
/// spaces (ids and roles never contain either), NULL when there are none. `org` is an SQL
/// expression, `user` the placeholder of the user's id.
pub fn grants_column(dialect: Dialect, org: &str, user: &str) -> String {
    let aggregate = match dialect {
        Dialect::Sqlite => "group_concat",
        Dialect::Postgres => "string_agg",
    };
    format!(
        "(SELECT {aggregate}(g.target_kind || ':' || g.target_id || ':' || g.role, ' ') FROM grants g
          WHERE g.organization_id = {org}
            AND (g.user_id = {user} OR g.team_id IN (SELECT team_id FROM team_members WHERE user_id = {user})))"
    )
}
