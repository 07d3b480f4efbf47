//! An organization member as stored.

use crate::db::{Conn, DbError, Row};
use crate::permissions::Role;
use crate::users::{User, UserCols};

#[derive(Clone, Debug)]
pub struct Member {
    pub user: User,
    pub role: Option<Role>,
    pub disabled: bool,
    pub sso: bool,
    pub joined_at: i64,
    pub last_seen_at: Option<i64>,
    pub teams: i64,
    pub spaces: i64,
}

crate::columns! {
    /// The columns [`Member::from_row`] reads after the user's, with `members m` in the query.
    pub struct MemberCols of "members" {
        role: "m.role",
        disabled: "m.disabled",
        sso: "m.sso",
        joined_at: "m.joined_at",
        last_seen_at: "m.last_seen_at",
        teams: "(SELECT count(*) FROM team_members tm JOIN teams t ON t.id = tm.team_id
                 WHERE t.organization_id = m.organization_id AND tm.user_id = m.user_id)",
        spaces: "(SELECT count(*) FROM grants g JOIN spaces s ON s.id = g.target_id
                  WHERE g.user_id = m.user_id AND g.organization_id = m.organization_id
                    AND g.target_kind = 'space' AND s.deleted_at IS NULL)",
    }
}

const USER: UserCols = UserCols::AT;
const MEMBER: MemberCols = MemberCols::at(UserCols::COUNT);

/// Where columns selected after [`select_columns`] start.
pub const MEMBER_END: usize = MEMBER.end();

/// The columns [`Member::from_row`] reads, with `members m` and `users u` in the query.
pub fn select_columns() -> String {
    format!("{}, {}", UserCols::SQL, MemberCols::SQL)
}

/// The SELECT of the members of the organization whose id is `org`.
pub fn select(org: &str) -> String {
    format!(
        "SELECT {} FROM members m JOIN users u ON u.id = m.user_id WHERE m.organization_id = {org}",
        select_columns()
    )
}

impl Member {
    pub fn from_row(row: &Row) -> Result<Member, DbError> {
        Ok(Member {
            user: User::from_row(row, USER)?,
            role: row.col(MEMBER.role)?,
            disabled: row.col(MEMBER.disabled)?,
            sso: row.col(MEMBER.sso)?,
            joined_at: row.col(MEMBER.joined_at)?,
            last_seen_at: row.col(MEMBER.last_seen_at)?,
            teams: row.col(MEMBER.teams)?,
            spaces: row.col(MEMBER.spaces)?,
        })
    }
}

pub fn load(c: &mut dyn Conn, org_id: &str, user_id: &str) -> Result<Option<Member>, DbError> {
    let sql = format!("{} AND m.user_id = ?2", select("?1"));
    c.query_opt(&sql, crate::params![org_id, user_id])?
        .map(|r| Member::from_row(&r))
        .transpose()
}
