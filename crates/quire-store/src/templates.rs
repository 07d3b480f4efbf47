//! Built-in content templates (`POST /v1/spaces/{spaceId}/content/template`, `template` when
//! creating a space or a change request): pages added after the existing ones, on main or in a
//! change request (`change_requests::apply_template`).
//!
//! | id | pages | `params.contentRefs` |
//! |---|---|---|
//! | `blank` | one empty page | none |
//! | `getting-started` | Introduction, Quickstart, FAQ | `cover` (file or url): cover of the introduction; `support` (url): linked from the FAQ |
//! | `api-reference` | Overview, Authentication, Errors, and an Endpoints group | `openapi` (openapi): the specification the overview links to |
//! | `knowledge-base` | Guides and Reference groups, Troubleshooting | none |
//! | `changelog` | Changelog | none |

use std::collections::HashMap;
use std::sync::Arc;

use quire_content::changes::{self, BatchContext, Change};
use quire_content::document::ContentRef;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::content::store::{self, ContentCache, NewRevision, StoredTree};
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::{clock, ids};

/// The ids of the built-in templates.
pub const TEMPLATES: &[&str] = &[
    "blank",
    "getting-started",
    "api-reference",
    "knowledge-base",
    "changelog",
];

/// A template to apply, validated.
#[derive(Debug, Clone)]
pub struct TemplateRequest {
    id: String,
    refs: HashMap<String, ContentRef>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    id: String,
    #[serde(default)]
    params: Option<RawParams>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawParams {
    #[serde(default)]
    content_refs: HashMap<String, Value>,
}

/// The content references each template takes, and the kinds each accepts.
fn accepted(template: &str) -> &'static [(&'static str, &'static [&'static str])] {
    match template {
        "getting-started" => &[("cover", &["file", "url"]), ("support", &["url"])],
        "api-reference" => &[("openapi", &["openapi"])],
        _ => &[],
    }
}

impl TemplateRequest {
    pub fn parse(value: Value, field: &str) -> StoreResult<TemplateRequest> {
        let raw: Raw = serde_json::from_value(value)
            .map_err(|e| StoreError::invalid(format!("invalid `{field}`: {e}")))?;
        if !TEMPLATES.contains(&raw.id.as_str()) {
            return Err(StoreError::invalid(format!(
                "unknown template {:?}: quire has {}",
                raw.id,
                TEMPLATES.join(", ")
            )));
        }
        let mut refs = HashMap::new();
        for (name, value) in raw.params.unwrap_or_default().content_refs {
            let Some((_, kinds)) = accepted(&raw.id).iter().find(|(n, _)| *n == name) else {
                return Err(StoreError::invalid(format!(
                    "template {:?} takes no content reference {name:?}",
                    raw.id
                )));
            };
            let r = ContentRef::from_value(&value).ok_or_else(|| {
                StoreError::invalid(format!("`contentRefs.{name}` is not a content reference"))
            })?;
            if !kinds.contains(&r.kind()) {
                return Err(StoreError::invalid(format!(
                    "`contentRefs.{name}` must be of kind {}, not {}",
                    kinds.join(" or "),
                    r.kind()
                )));
            }
            refs.insert(name, r);
        }
        Ok(TemplateRequest { id: raw.id, refs })
    }

    fn page(title: &str, markdown: &str) -> Value {
        json!({"operation": "insert_page", "title": title, "document": {"markdown": markdown}})
    }

    /// The template as a batch of changes.
    fn changes(&self) -> StoreResult<Vec<Change>> {
        let url = |name: &str| match self.refs.get(name) {
            Some(ContentRef::Url { url }) => Some(url.clone()),
            _ => None,
        };
        let mut pages = Vec::new();
        match self.id.as_str() {
            "blank" => pages.push(Self::page("Untitled", "")),
            "getting-started" => {
                let mut intro = Self::page(
                    "Introduction",
                    "Welcome! This space explains what the product does and how to start.\n\n## Where to go next\n\n* [Quickstart](./quickstart.md)\n* [FAQ](./faq.md)\n",
                );
                intro["ref"] = json!("introduction");
                if let Some(cover) = self.refs.get("cover") {
                    intro["cover"] = json!({"ref": cover.to_value(), "yPos": 0});
                }
                let mut quickstart = Self::page(
                    "Quickstart",
                    "Get up and running in a few minutes.\n\n## Install\n\nDescribe the installation.\n\n## First steps\n\nDescribe the first task.\n",
                );
                quickstart["ref"] = json!("quickstart");
                let support = url("support").map_or(String::new(), |u| {
                    format!("\n## Still stuck?\n\n[Contact support]({u}).\n")
                });
                let mut faq = Self::page(
                    "FAQ",
                    &format!(
                        "Answers to common questions.\n\n## Where do I start?\n\nRead the [introduction](./introduction.md).\n{support}"
                    ),
                );
                faq["ref"] = json!("faq");
                pages.extend([intro, quickstart, faq]);
            }
            "api-reference" => {
                let spec = match self.refs.get("openapi") {
                    Some(ContentRef::OpenApi { spec }) => {
                        format!("\nThe OpenAPI specification is `{spec}`.\n")
                    }
                    _ => String::new(),
                };
                pages.push(Self::page(
                    "Overview",
                    &format!("What the API does, its base URL and versioning.\n{spec}"),
                ));
                pages.push(Self::page("Authentication", "How to get and send credentials.\n"));
                pages.push(Self::page("Errors", "Error format and codes.\n"));
                pages.push(json!({"operation": "insert_page", "type": "group", "title": "Endpoints"}));
            }
            "knowledge-base" => {
                pages.push(
                    json!({"operation": "insert_page", "type": "group", "title": "Guides", "ref": "guides"}),
                );
                pages.push(json!({"operation": "insert_page", "title": "How-to template", "into": "guides",
                                  "document": {"markdown": "## Goal\n\n## Steps\n\n1. First step\n2. Second step\n"}}));
                pages.push(json!({"operation": "insert_page", "type": "group", "title": "Reference", "ref": "reference"}));
                pages.push(
                    json!({"operation": "insert_page", "title": "Glossary", "into": "reference",
                                  "document": {"markdown": "Terms and their meaning.\n"}}),
                );
                pages.push(Self::page("Troubleshooting", "Known problems and their fixes.\n"));
            }
            _ => pages.push(Self::page("Changelog", "What changed, newest first.\n")),
        }
        pages
            .into_iter()
            .map(|p| {
                Change::from_json(p).map_err(|e| StoreError::internal(format!("template {}: {e}", self.id)))
            })
            .collect()
    }
}

/// Applies a template on top of `base`, returning the new tree and its documents.
fn apply(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    base: &store::StoredTree,
    template: &TemplateRequest,
) -> StoreResult<changes::BatchOutcome> {
    let mut new_id = ids::new_id;
    let mut new_key = || ids::random_base62(12);
    let files = HashMap::new();
    // A document that cannot be read fails the template instead of passing for an empty page.
    let loader = store::Loader::new(c, cache, space_id);
    let document = |hash: &str| loader.document(hash);
    let mut ctx = BatchContext {
        now: clock::now_ms(),
        new_id: &mut new_id,
        new_key: &mut new_key,
        document: &document,
        base: &base.tree,
        revision: &|_| None,
        files: &files,
    };
    let outcome = changes::apply_batch(&base.tree, template.changes()?, &mut ctx);
    loader
        .finish(outcome)?
        .map_err(|e| StoreError::internal(e.to_string()))
}

/// Applies a template on top of a change request's revision `revision`, as the change
/// request's new revision; the caller points the change request at it
/// (`change_requests::apply_template`).
pub fn write_for_change_request(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    change_request: (&str, &str),
    template: &TemplateRequest,
    user_id: &str,
) -> StoreResult<Arc<StoredTree>> {
    let (cr_id, revision) = change_request;
    let base = store::load_tree(c, cache, space_id, revision)?;
    let outcome = apply(c, cache, space_id, &base, template)?;
    store::write_revision(
        c,
        cache,
        NewRevision {
            space_id,
            kind: "edits",
            parents: vec![revision.to_string()],
            change_request: Some(cr_id),
            merged_from: None,
            created_by: Some(user_id),
        },
        Some(&base),
        outcome.tree,
        &outcome.documents,
    )
}

/// Applies a template as a new revision of main.
pub fn apply_to_main(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space_id: &str,
    template: &TemplateRequest,
    user_id: &str,
) -> StoreResult<()> {
    let main = crate::main_revision::lock_main(c, space_id)?;
    let base = store::load_tree(c, cache, space_id, &main)?;
    let outcome = apply(c, cache, space_id, &base, template)?;
    let written = store::write_revision(
        c,
        cache,
        NewRevision {
            space_id,
            kind: "edits",
            parents: vec![main.clone()],
            change_request: None,
            merged_from: None,
            created_by: Some(user_id),
        },
        Some(&base),
        outcome.tree,
        &outcome.documents,
    )?;
    crate::main_revision::advance(c, cache, space_id, &main, written.id(), user_id)
}
