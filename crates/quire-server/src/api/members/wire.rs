//! A member of an organization as answered.

use quire_store::clock;
use quire_store::members::Member;
use quire_store::permissions::Role;
use serde::Serialize;

use crate::api::users::{UserJson, user_json};
use crate::urls::Urls;

pub fn member_json(urls: &Urls, member: &Member) -> MemberJson {
    MemberJson {
        object: "member",
        id: member.user.id.clone(),
        role: member.role,
        user: user_json(urls, &member.user, true),
        disabled: member.disabled,
        joined_at: member.joined_at,
        last_seen_at: member.last_seen_at,
        sso: member.sso,
        spaces: member.spaces,
        teams: member.teams,
        sites: 0,
    }
}

#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemberJson {
    pub object: &'static str,
    pub id: String,
    pub role: Option<Role>,
    pub user: UserJson,
    pub disabled: bool,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub joined_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub last_seen_at: Option<i64>,
    pub sso: bool,
    pub spaces: i64,
    pub teams: i64,
    /// quire grants no per-site access, so no member is counted on any site.
    pub sites: i64,
}
