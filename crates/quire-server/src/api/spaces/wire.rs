//! A space as answered, with the caller's `permissions` on it; the body of a move (of a space
//! or a collection).

use quire_store::clock;
use quire_store::merge_rules::MergeRules;
use quire_store::permissions::{Role, SpaceAction, space_allows};
use quire_store::siblings::Position;
use quire_store::spaces::{EditMode, Space, SpaceFor, Visibility};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ApiResult};
use crate::extract::Patch;

use crate::urls::Urls;

/// The wire object of a space as its caller sees it.
pub fn space_json(urls: &Urls, space: &SpaceFor) -> SpaceJson {
    with_role(urls, &space.space, space.role)
}

/// The wire object of a space for a caller with `role` on it.
pub fn with_role(urls: &Urls, space: &Space, role: Option<Role>) -> SpaceJson {
    let allows = |action| space_allows(role, space.state(), action);
    let published = (space.visibility != Visibility::Private).then(|| urls.app(&format!("/s/{}", space.id)));
    SpaceJson {
        object: "space",
        id: space.id.clone(),
        title: space.title.clone(),
        emoji: space.emoji.clone().unwrap_or_default(),
        visibility: space.visibility,
        created_at: space.created_at,
        updated_at: space.updated_at,
        deleted_at: space.deleted_at,
        edit_mode: space.edit_mode,
        merge_rules: space.merge_rules.clone(),
        urls: SpaceUrls {
            location: urls.api(&format!("/spaces/{}", space.id)),
            app: urls.app(&format!("/o/{}/s/{}", space.org_id, space.id)),
            public: (space.visibility == Visibility::Public)
                .then(|| published.clone())
                .flatten(),
            published,
            icon: space.icon_url.clone(),
        },
        organization: space.org_id.clone(),
        parent: space.parent.clone(),
        language: space.language.clone(),
        revision: space.revision.clone().unwrap_or_default(),
        default_level: space.default_level.to_json(),
        comments: space.counters.comments,
        change_requests: space.counters.change_requests,
        change_requests_open: space.counters.change_requests_open,
        change_requests_draft: space.counters.change_requests_draft,
        permissions: SpacePermissions {
            view: allows(SpaceAction::View),
            access: allows(SpaceAction::View),
            admin: allows(SpaceAction::Admin),
            view_invite_links: allows(SpaceAction::Admin),
            edit: allows(SpaceAction::Edit),
            trigger_git_sync: allows(SpaceAction::TriggerGitSync),
            comment: allows(SpaceAction::Comment),
            merge: allows(SpaceAction::Merge),
            review: allows(SpaceAction::Review),
            install_integration: allows(SpaceAction::InstallIntegration),
        },
    }
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpaceJson {
    pub object: &'static str,
    pub id: String,
    pub title: String,
    pub emoji: String,
    pub visibility: Visibility,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    #[schema(value_type = Option<String>, format = DateTime)]
    #[serde(with = "clock::ts::opt", skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    pub edit_mode: EditMode,
    pub merge_rules: MergeRules,
    pub urls: SpaceUrls,
    pub organization: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub revision: String,
    pub default_level: serde_json::Value,
    pub comments: i64,
    pub change_requests: i64,
    pub change_requests_open: i64,
    pub change_requests_draft: i64,
    pub permissions: SpacePermissions,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
pub struct SpaceUrls {
    pub location: String,
    pub app: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub icon: Option<String>,
}

#[derive(Serialize, Debug, Clone, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpacePermissions {
    pub view: bool,
    pub access: bool,
    pub admin: bool,
    pub view_invite_links: bool,
    pub edit: bool,
    pub trigger_git_sync: bool,
    pub comment: bool,
    pub merge: bool,
    pub review: bool,
    pub install_integration: bool,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Move)]
pub struct MoveBody {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub parent: Patch<String>,
    pub position: Option<Position>,
}

impl MoveBody {
    pub fn check(&self) -> ApiResult<()> {
        if self.parent.is_absent() && self.position.is_none() {
            return Err(ApiError::bad_request("give `parent`, `position` or both"));
        }
        Ok(())
    }
}
