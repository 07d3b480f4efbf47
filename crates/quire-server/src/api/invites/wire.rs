//! An invite link as answered: `role` for an organization invite, `level` and the space or
//! collection otherwise.

use quire_store::invites::{InviteView, Opens};
use quire_store::permissions::Role;
use serde::Serialize;

use crate::api::collections::CollectionJson;
use crate::api::spaces::SpaceJson;
use crate::urls::Urls;

/// The wire invite: `role` for an organization invite, `level` and the target otherwise.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteJson {
    object: &'static str,
    id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<Option<Role>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    level: Option<Option<Role>>,
    redundant: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    space: Option<SpaceJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    collection: Option<CollectionJson>,
}

/// An invite as its caller sees it; `redundant` when they already have what it grants.
pub fn invite_json(urls: &Urls, view: &InviteView) -> InviteJson {
    let invite = &view.invite;
    let mut json = InviteJson {
        object: "invite",
        id: invite.id.clone(),
        role: None,
        level: None,
        redundant: view.redundant,
        space: None,
        collection: None,
    };
    match &view.opens {
        Opens::Space(space, role) => {
            json.level = Some(invite.role);
            json.space = Some(crate::api::spaces::wire::with_role(urls, space, *role));
        }
        Opens::Collection(col, role) => {
            json.level = Some(invite.role);
            json.collection = Some(crate::api::collections::wire::with_role(urls, col, *role));
        }
        Opens::Organization => json.role = Some(invite.role),
    }
    json
}
