//! Who contributed content to a change request.

use axum::extract::State;
use quire_store::change_requests::reviews;
use quire_store::clock;
use quire_store::paging::{List, Paging};
use quire_store::spaces;
use serde::Serialize;

use super::user_json;
use crate::api::users::UserJson;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::extract::{Path, QueryOf};
use crate::paths::ChangeRequestPath;
use crate::state::App;

#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contributor {
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    updated_at: i64,
    count: i64,
    user: UserJson,
    action_type: &'static str,
}

#[utoipa::path(
    get,
    path = "/v1/spaces/{spaceId}/change-requests/{changeRequestId}/contributors",
    tag = "Change requests",
    summary = "List the contributors of a change request",
    params(ChangeRequestPath, Paging),
    responses((status = 200, description = "The contributors.", body = List<Contributor>)),
    security(("token" = ["space:content:read"]))
)]
pub async fn list_contributors(
    caller: Caller,
    State(app): State<App>,
    Path(ChangeRequestPath {
        space_id,
        change_request_id: cr_id,
    }): Path<ChangeRequestPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<Contributor>>> {
    let shown = app
        .db
        .read(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?;
            reviews::contributors(c, &space, &cr_id, &paging)
        })
        .await?;
    let users = shown.users;
    Ok(axum::Json(shown.value.map(|(user, updated_at, count)| {
        Contributor {
            updated_at,
            count,
            user: user_json(&app.urls, &users, &user),
            action_type: "edit",
        }
    })))
}
