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
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::db::Conn;
use crate::error::ApiResult;
use crate::extract::{FromQuery, Query, param};
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

fn format(q: &Query) -> ApiResult<BodyFormat> {
    Ok(match q.one_of("format", &["markdown", "document"], "markdown")? {
        "document" => BodyFormat::Document,
        _ => BodyFormat::Markdown,
    })
}

/// `format` of the comment bodies in an answer.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CommentFormat {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
}

impl FromQuery for CommentFormat {
    fn from_query(q: &Query) -> ApiResult<CommentFormat> {
        Ok(CommentFormat { format: format(q)? })
    }
}

/// The query of the comments lists.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListCommentsQuery {
    /// The direction of the order by time.
    #[param(inline, value_type = Option<Order>)]
    order: Order,
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
    /// `all` (the default), `open` or `resolved`.
    #[param(value_type = Option<String>)]
    status: &'static str,
    /// Only the comments on this page (an id).
    #[param(rename = "targetPage")]
    page_filter: Option<String>,
    /// Only the comments of these users (ids, repeated or comma-separated).
    #[param(value_type = Option<Vec<String>>, style = Form, explode = true)]
    authors: Vec<String>,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for ListCommentsQuery {
    fn from_query(q: &Query) -> ApiResult<ListCommentsQuery> {
        Ok(ListCommentsQuery {
            order: q.order()?,
            format: format(q)?,
            status: q.one_of("status", &["all", "open", "resolved"], "all")?,
            page_filter: q.str("targetPage").filter(|s| !s.is_empty()).map(str::to_string),
            authors: q.all("authors"),
            paging: Paging::from_query(q)?,
        })
    }
}

/// The query of the replies lists.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RepliesQuery {
    /// The format of bodies: `markdown` (the default) or `document`.
    #[param(value_type = Option<String>)]
    format: BodyFormat,
    #[param(ignore)]
    paging: Paging,
}

impl FromQuery for RepliesQuery {
    fn from_query(q: &Query) -> ApiResult<RepliesQuery> {
        Ok(RepliesQuery {
            format: format(q)?,
            paging: Paging::from_query(q)?,
        })
    }
}
