//! Comments and replies on spaces and on change requests (`quire_store::comments`): post, list
//! with filters, read, edit, resolve, react, delete; and the people who commented. Each
//! operation exists for a space (`space.rs`) and for a change request (`change_request.rs`);
//! the two share one handler, in `comment.rs` or `reply.rs`.

mod change_request;
mod comment;
mod reply;
mod space;
pub mod wire;

use quire_store::comments::Opened;
use quire_store::paging::{Order, Paging};
use quire_store::{change_requests, spaces};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::db::Conn;
use crate::error::ApiResult;
use crate::extract::param;
use crate::paths::RouteIds;
use crate::state::App;
use change_request::*;
pub(crate) use comment::*;
pub(crate) use reply::*;
use space::*;
use wire::BodyFormat;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_space_comments, post_space_comment))
        .routes(routes!(
            get_space_comment,
            update_space_comment,
            delete_space_comment
        ))
        .routes(routes!(list_space_comment_replies, post_space_comment_reply))
        .routes(routes!(
            get_space_comment_reply,
            update_space_comment_reply,
            delete_space_comment_reply
        ))
        .routes(routes!(list_space_commenters))
        .routes(routes!(list_change_request_comments, post_change_request_comment))
        .routes(routes!(
            get_change_request_comment,
            update_change_request_comment,
            delete_change_request_comment
        ))
        .routes(routes!(
            list_change_request_comment_replies,
            post_change_request_comment_reply
        ))
        .routes(routes!(
            get_change_request_comment_reply,
            update_change_request_comment_reply,
            delete_change_request_comment_reply
        ))
        .routes(routes!(list_change_request_commenters))
}

/// The place a comment route names: the space's own comments, or a change request's.
fn open(c: &mut dyn Conn, params: &RouteIds, caller: &str) -> ApiResult<Opened> {
    let space_id = param(params, "spaceId")?;
    let space = spaces::load_active(c, space_id, caller)?;
    Ok(match params.get("changeRequestId") {
        Some(cr_id) => {
            let cr = change_requests::load(c, space_id, cr_id)?;
            Opened::on_change_request(space, &cr.id, &cr.revision)
        }
        None => Opened::on_space(space),
    })
}

/// `format` of the comment bodies in an answer.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommentFormat {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    format: BodyFormat,
}

/// The query of the comments lists.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListCommentsQuery {
    /// The direction of the order by time.
    #[param(inline, value_type = Option<Order>)]
    #[serde(default)]
    order: Order,
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    format: BodyFormat,
    /// `all` (the default), `open` or `resolved`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    status: CommentStatus,
    /// Only the comments on this page (an id).
    #[serde(rename = "targetPage")]
    page_filter: Option<String>,
    /// Only the comments of these users (ids, repeated or comma-separated).
    #[param(value_type = Option<Vec<String>>, style = Form, explode = true)]
    #[serde(default, deserialize_with = "crate::extract::list")]
    authors: Vec<String>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

/// `status` of the comments lists.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CommentStatus {
    #[default]
    All,
    Open,
    Resolved,
}

impl CommentStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CommentStatus::All => "all",
            CommentStatus::Open => "open",
            CommentStatus::Resolved => "resolved",
        }
    }
}

/// The query of the replies lists.
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RepliesQuery {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    #[serde(default)]
    format: BodyFormat,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}
