//! Translations as answered: GitBook's `Translation` (with `error` and the pages to review
//! besides) and `GlossaryEntry`.

use quire_store::clock;
use quire_store::permissions::{Standing, TranslationAction, translation_allows};
use quire_store::translations::glossary::{Entry, Terms};
use quire_store::translations::{Status, Translation};
use serde::Serialize;

use crate::urls::Urls;

/// The API path of a translation.
pub fn translation_path(t: &Translation) -> String {
    format!("/orgs/{}/translations/{}", t.org_id, t.id)
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = Translation)]
#[serde(rename_all = "camelCase")]
pub struct TranslationJson {
    #[schema(value_type = String, example = "translation")]
    pub object: &'static str,
    pub id: String,
    /// `pending` (a run is queued), `running`, `completed` or `failed` (see `error`).
    pub status: Status,
    pub source: SourceJson,
    pub language: String,
    /// The instructions given to the translator (a rich document).
    #[schema(value_type = Object)]
    pub instructions: serde_json::Value,
    /// The target space and its revision after the latest run that completed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<ResultJson>,
    /// Why the latest run failed; absent unless `status` is `failed` (or a queued run follows
    /// one that failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Target pages of the latest run that a person edited and whose source changed: left as
    /// they are, for someone to review.
    pub pages_to_review: Vec<String>,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    pub stats: StatsJson,
    pub permissions: TranslationPermissions,
    pub urls: TranslationUrls,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct SourceJson {
    pub space: String,
    pub language: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ResultJson {
    pub space: String,
    pub revision: String,
    pub language: String,
}

/// Counts over the runs; durations in seconds.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatsJson {
    pub runs: i64,
    /// Words sent to the translator over all runs (text the translation memory held is not
    /// sent again).
    pub total_words: i64,
    /// Distinct pages translated over all runs.
    pub total_pages: i64,
    pub total_duration: i64,
    pub latest_run_duration: i64,
    /// Pages the latest run translated.
    pub latest_pages: i64,
    pub latest_words: i64,
    /// Pages the latest run left as they were, their source unchanged since the run before.
    pub latest_skipped_pages: i64,
    /// Pages the latest run did not overwrite because a person edited them (`pagesToReview`).
    pub latest_pages_to_review: i64,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TranslationPermissions {
    pub view: bool,
    pub edit: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TranslationUrls {
    /// The translation in the API.
    pub location: String,
}

fn seconds(ms: i64) -> i64 {
    (ms + 500) / 1000
}

pub fn translation_json(urls: &Urls, t: &Translation, standing: Standing) -> TranslationJson {
    let s = &t.stats;
    TranslationJson {
        object: "translation",
        id: t.id.clone(),
        status: t.status,
        source: SourceJson {
            space: t.source_space_id.clone(),
            language: t.source_language.clone(),
        },
        language: t.language.clone(),
        instructions: t.instructions.clone(),
        result: match (&t.target_space_id, &t.result_revision) {
            (Some(space), Some(revision)) => Some(ResultJson {
                space: space.clone(),
                revision: revision.clone(),
                language: t.language.clone(),
            }),
            _ => None,
        },
        error: t.error.clone().filter(|_| t.status != Status::Completed),
        pages_to_review: t.needs_review.clone(),
        created_at: t.created_at,
        updated_at: t.updated_at,
        stats: StatsJson {
            runs: s.runs,
            total_words: s.total_words,
            total_pages: s.total_pages,
            total_duration: seconds(s.total_duration_ms),
            latest_run_duration: seconds(s.latest_duration_ms),
            latest_pages: s.latest_pages,
            latest_words: s.latest_words,
            latest_skipped_pages: s.latest_skipped,
            latest_pages_to_review: i64::try_from(t.needs_review.len()).unwrap_or(i64::MAX),
        },
        permissions: TranslationPermissions {
            view: translation_allows(standing, TranslationAction::View),
            edit: translation_allows(standing, TranslationAction::Edit),
        },
        urls: TranslationUrls {
            location: urls.api(&translation_path(t)),
        },
    }
}

#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = GlossaryEntry)]
#[serde(rename_all = "camelCase")]
pub struct GlossaryEntryJson {
    #[schema(value_type = String, example = "glossary-entry")]
    pub object: &'static str,
    pub id: String,
    /// The term in each of its languages.
    #[schema(value_type = Object)]
    pub translations: Terms,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub created_at: i64,
    #[schema(value_type = String, format = DateTime)]
    #[serde(with = "clock::ts")]
    pub updated_at: i64,
    pub urls: TranslationUrls,
}

pub fn glossary_entry_json(urls: &Urls, e: &Entry) -> GlossaryEntryJson {
    GlossaryEntryJson {
        object: "glossary-entry",
        id: e.id.clone(),
        translations: e.translations.clone(),
        created_at: e.created_at,
        updated_at: e.updated_at,
        urls: TranslationUrls {
            location: urls.api(&format!("/orgs/{}/translations-glossary/{}", e.org_id, e.id)),
        },
    }
}
