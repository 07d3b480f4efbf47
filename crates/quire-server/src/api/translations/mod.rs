//! Translations (the spec's "Translations" table) and GitBook's glossary they use: create,
//! change the instructions, run, delete, and the glossary's entries
//! (`quire_store::translations`, `docs/translations.md`).

pub mod wire;

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::paging::{List, Paging};
use quire_store::permissions::{org, translation};
use quire_store::translations::glossary::{self, Operation, Terms};
use quire_store::translations::{self, NewTranslation};
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use self::wire::{
    GlossaryEntryJson, TranslationJson, glossary_entry_json, translation_json, translation_path,
};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{GlossaryEntryPath, OrgPath, TranslationPath};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_translations, create_translation))
        .routes(routes!(get_translation, update_translation, delete_translation))
        .routes(routes!(run_translation))
        .routes(routes!(list_glossary, update_glossary))
        .routes(routes!(get_glossary_entry))
}

const TAG: &str = "Translations";

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/translations",
    tag = TAG,
    summary = "List the translations of an organization",
    params(OrgPath, Paging),
    responses((status = 200, description = "The translations, oldest first.", body = List<TranslationJson>)),
    security(("token" = ["space:content:read"]))
)]
async fn list_translations(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<TranslationJson>>> {
    let list = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            translations::list(c, &org, &paging)
        })
        .await?;
    Ok(axum::Json(list.map(|t| {
        translation_json(&app.urls, &t.translation, t.standing)
    })))
}

/// The space to translate and its language.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SourceInput {
    /// A space of the organization the caller can read.
    space: String,
    /// The language the space is written in (GitBook's `TranslationLanguage`).
    language: String,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateTranslation {
    source: SourceInput,
    /// The language to translate into; not the source's.
    language: String,
    /// Instructions for the translator (a rich document, at most 64 KiB of JSON).
    #[schema(value_type = Option<Object>)]
    instructions: Option<serde_json::Value>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/translations",
    tag = TAG,
    summary = "Create a translation of a space into another language",
    description = "The translation is `pending` until it is run (`POST .../run`); its first run creates the target space in the source's collection.",
    params(OrgPath),
    request_body = CreateTranslation,
    responses((status = 201, description = "The translation.", body = TranslationJson, headers(("Location" = String, description = "The translation's URL.")))),
    security(("token" = ["space:content:write"]))
)]
async fn create_translation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    Json(body): Json<CreateTranslation>,
) -> ApiResult<impl IntoResponse> {
    translations::check_language("source.language", &body.source.language)?;
    translations::check_language("language", &body.language)?;
    let new = NewTranslation {
        source_space: body.source.space,
        source_language: body.source.language,
        language: body.language,
        instructions: translations::check_instructions(body.instructions)?,
    };
    let created = app
        .db
        .write_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            translations::create(c, &org, &caller.user_id, &new)
        })
        .await?;
    let location = app.urls.api(&translation_path(&created.translation));
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(translation_json(
            &app.urls,
            &created.translation,
            created.standing,
        )),
    ))
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/translations/{translationId}",
    tag = TAG,
    summary = "Get a translation with its status and stats",
    params(TranslationPath),
    responses((status = 200, description = "The translation.", body = TranslationJson)),
    security(("token" = ["space:content:read"]))
)]
async fn get_translation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<TranslationPath>,
) -> ApiResult<axum::Json<TranslationJson>> {
    let t = app
        .db
        .read_as::<translation::View, _>(caller.user_id.clone(), path.translation(), |_, t| {
            Ok(t.into_inner())
        })
        .await?;
    Ok(axum::Json(translation_json(
        &app.urls,
        &t.translation,
        t.standing,
    )))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateTranslation {
    /// Instructions for the translator (a rich document, at most 64 KiB of JSON).
    #[schema(value_type = Object)]
    instructions: serde_json::Value,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/translations/{translationId}",
    tag = TAG,
    summary = "Replace a translation's instructions",
    description = "The next run uses them; pages translated already are translated again only when their source changes.",
    params(TranslationPath),
    request_body = UpdateTranslation,
    responses((status = 200, description = "The translation.", body = TranslationJson)),
    security(("token" = ["space:content:write"]))
)]
async fn update_translation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<TranslationPath>,
    Json(body): Json<UpdateTranslation>,
) -> ApiResult<axum::Json<TranslationJson>> {
    let instructions = translations::check_instructions(Some(body.instructions))?;
    let t = app
        .db
        .write_as::<translation::Edit, _>(caller.user_id.clone(), path.translation(), move |c, t| {
            translations::update(c, &t, &caller.user_id, &instructions)
        })
        .await?;
    Ok(axum::Json(translation_json(
        &app.urls,
        &t.translation,
        t.standing,
    )))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/translations/{translationId}",
    tag = TAG,
    summary = "Delete a translation",
    description = "The target space stays, and is no longer updated.",
    params(TranslationPath),
    responses((status = 204, description = "The translation is gone (or never was).")),
    security(("token" = ["space:content:write"]))
)]
async fn delete_translation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<TranslationPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<translation::Edit, _>(caller.user_id.clone(), path.translation(), move |c, t| {
            translations::delete(c, &t, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/translations/{translationId}/run",
    tag = TAG,
    summary = "Run a translation",
    description = "Queues a run that acts as the caller: it translates the pages whose source changed since the last run into the target space, through a change request it merges. Asked while a run is under way, another follows it. 400 when no translator is configured.",
    params(TranslationPath),
    responses((status = 204, description = "The run is queued.")),
    security(("token" = ["space:content:write"]))
)]
async fn run_translation(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<TranslationPath>,
) -> ApiResult<StatusCode> {
    let store = app.store.clone();
    app.db
        .write_as::<translation::Edit, _>(caller.user_id.clone(), path.translation(), move |c, t| {
            translations::request_run(&store, c, &t, &caller.user_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct GlossaryQuery {
    /// Order the entries by their term in this language (entries without one last); default:
    /// oldest first.
    order_by: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/translations-glossary",
    tag = TAG,
    summary = "List the organization's glossary",
    params(OrgPath, Paging, GlossaryQuery),
    responses((status = 200, description = "The entries.", body = List<GlossaryEntryJson>)),
    security(("token" = ["space:content:read"]))
)]
async fn list_glossary(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    QueryOf(paging): QueryOf<Paging>,
    QueryOf(query): QueryOf<GlossaryQuery>,
) -> ApiResult<axum::Json<List<GlossaryEntryJson>>> {
    if let Some(language) = &query.order_by {
        translations::check_language("orderBy", language)?;
    }
    let list = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            glossary::list(c, &org, &paging, query.order_by.as_deref())
        })
        .await?;
    Ok(axum::Json(list.map(|e| glossary_entry_json(&app.urls, &e))))
}

/// One change to the glossary.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum OperationInput {
    Insert {
        #[schema(value_type = Object)]
        translations: Terms,
    },
    Update {
        id: String,
        #[schema(value_type = Object)]
        translations: Terms,
    },
    Delete {
        id: String,
    },
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct UpdateGlossary {
    /// At most 500, applied in order, all or none.
    operations: Vec<OperationInput>,
}

#[utoipa::path(
    put,
    path = "/v1/orgs/{organizationId}/translations-glossary",
    tag = TAG,
    summary = "Insert, update and delete glossary entries",
    params(OrgPath),
    request_body = UpdateGlossary,
    responses((status = 204, description = "The operations are applied.")),
    security(("token" = ["space:content:write"]))
)]
async fn update_glossary(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<OrgPath>,
    Json(body): Json<UpdateGlossary>,
) -> ApiResult<StatusCode> {
    let mut operations = Vec::with_capacity(body.operations.len());
    for op in body.operations {
        operations.push(match op {
            OperationInput::Insert { translations } => {
                glossary::check_terms(&translations)?;
                Operation::Insert(translations)
            }
            OperationInput::Update { id, translations } => {
                glossary::check_terms(&translations)?;
                Operation::Update(id, translations)
            }
            OperationInput::Delete { id } => Operation::Delete(id),
        });
    }
    if operations.len() > glossary::MAX_OPERATIONS {
        return Err(ApiError::bad_request(format!(
            "`operations` takes at most {} operations",
            glossary::MAX_OPERATIONS
        )));
    }
    app.db
        .write_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            glossary::apply(c, &org, &operations)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/translations-glossary/{glossaryEntryId}",
    tag = TAG,
    summary = "Get a glossary entry",
    params(GlossaryEntryPath),
    responses((status = 200, description = "The entry.", body = GlossaryEntryJson)),
    security(("token" = ["space:content:read"]))
)]
async fn get_glossary_entry(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<GlossaryEntryPath>,
) -> ApiResult<axum::Json<GlossaryEntryJson>> {
    let id = path.glossary_entry_id;
    let e = app
        .db
        .read_as::<org::View, _>(caller.user_id.clone(), path.organization_id, move |c, org| {
            glossary::get(c, &org, &id)
        })
        .await?;
    Ok(axum::Json(glossary_entry_json(&app.urls, &e)))
}
