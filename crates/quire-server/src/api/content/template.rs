//! `POST /v1/spaces/{spaceId}/content/template`: a built-in template applied to main or to a
//! change request (`quire_store::templates`).

use axum::extract::State;
use axum::http::StatusCode;
use quire_store::change_requests;
use quire_store::permissions::space;
use quire_store::spaces;
use quire_store::templates::{self, TemplateRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorEnvelope};
use crate::extract::{Json, Path};
use crate::paths::SpacePath;
use crate::state::App;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyTemplate {
    #[serde(flatten)]
    template: Value,
    change_request_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/spaces/{spaceId}/content/template",
    tag = "Space content",
    summary = "Apply a template to a space's main content",
    params(SpacePath),
    request_body(
        content = Object,
        description = "The template to apply (as `template` of a new space: `{\"template\": \"...\"}` or \
                       an OpenAPI template), with an optional `changeRequestId` to apply it there instead of main."
    ),
    responses(
        (status = 204, description = "The template is applied."),
        (status = 409, description = "The content changed meanwhile: retry.", body = ErrorEnvelope),
    ),
    security(("token" = ["space:content:write"]))
)]
pub async fn apply_template(
    caller: Caller,
    State(app): State<App>,
    Path(SpacePath { space_id }): Path<SpacePath>,
    Json(body): Json<ApplyTemplate>,
) -> ApiResult<StatusCode> {
    let mut template_value = body.template;
    if let Some(map) = template_value.as_object_mut() {
        map.remove("changeRequestId");
    }
    let template = TemplateRequest::parse(template_value, "body")?;
    let store = app.store.clone();
    app.db
        .write(move |c| {
            let space = spaces::load_active(c, &space_id, &caller.user_id)?.authorize::<space::Edit>()?;
            match &body.change_request_id {
                Some(cr_id) => change_requests::apply_template(
                    c,
                    &store.content,
                    &space,
                    cr_id,
                    &template,
                    &caller.user_id,
                ),
                None => {
                    templates::apply_to_main(c, &store.content, &space.space.id, &template, &caller.user_id)
                }
            }
        })
        .await
        .map_err(ApiError::from)?;
    Ok(StatusCode::CREATED)
}
