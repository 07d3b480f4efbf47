//! OpenAPI specifications: an organization's API descriptions, each named by a slug, given by a
//! URL (fetched, and fetched again every `Settings::openapi_refresh_ms`) or as text, processed
//! by a durable job (`process`) into versions. `docs/openapi-specs.md` describes the rules;
//! `docs/permissions.md` ("OpenAPI specifications") who may do what.

pub mod model;
pub mod pages;
pub mod process;

pub use model::{
    ErrorCode, ProcessError, ProcessingState, Spec, SpecFor, SpecKey, SpecVisibility, Version,
    VersionContent, load_visible, not_found,
};

use crate::db::{Args, Conn};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::orgs::OrgFor;
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, SpecAction, org, require_org, spec, spec_allows};
use crate::{clock, ids, jobs, params};

/// The longest slug (GitBook's `OpenAPISpecSlug`).
pub const SLUG_MAX: usize = 100;
/// The longest text given as a source: the limit of one file of a description.
pub const TEXT_MAX: usize = quire_openapi::limits::MAX_FILE_BYTES;
/// How many versions of one specification are kept; older ones go as new ones come.
pub const VERSIONS_KEPT: i64 = 20;
/// How many specifications one organization may have: each given by URL is fetched again every
/// refresh interval.
pub const MAX_SPECS: i64 = 500;

/// Where a specification's description comes from, checked already.
#[derive(Clone, Debug)]
pub enum Source {
    Url(String),
    Text(String),
}

/// Checks a slug against the spec's pattern `^[a-z0-9]+(?:-[a-z0-9]+)*$`.
pub fn check_slug(slug: &str) -> StoreResult<()> {
    let valid = !slug.is_empty()
        && slug.len() <= SLUG_MAX
        && slug.split('-').all(|part| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
    if valid {
        Ok(())
    } else {
        Err(StoreError::invalid(format!(
            "`slug` must be lowercase letters and digits in words joined by single hyphens \
             (^[a-z0-9]+(?:-[a-z0-9]+)*$), at most {SLUG_MAX} characters; {slug:?} is not"
        )))
    }
}

/// Checks a source URL: absolute http or https, at most 2,048 characters (the spec's limit of a
/// version's `url`, `validate::url`'s). Whether its
/// address may be fetched is the outbound policy's to say, when it is fetched.
pub fn check_url(raw: &str) -> StoreResult<()> {
    crate::validate::url("source.url", raw).map(drop)
}

/// Checks a text source: not empty, at most [`TEXT_MAX`] bytes.
pub fn check_text(text: &str) -> StoreResult<()> {
    if text.trim().is_empty() {
        return Err(StoreError::invalid("`source.text` is empty"));
    }
    if text.len() > TEXT_MAX {
        return Err(StoreError::invalid(format!(
            "`source.text` is {} bytes, more than the {TEXT_MAX} allowed",
            text.len()
        )));
    }
    Ok(())
}

/// The specifications of an organization the caller sees, oldest first.
pub fn list(c: &mut dyn Conn, org: &OrgFor, paging: &Paging) -> StoreResult<List<SpecFor>> {
    let page = Page::new(paging, format!("openapi:{}", org.org.id))?;
    require_org(org.standing, crate::permissions::OrgAction::View, &org.org.id)?;
    if !spec_allows(org.standing, SpecAction::View) {
        // A guest sees no specification: 403 on the list, as on the list of sites.
        return Err(crate::permissions::role_forbidden(
            SpecAction::View.describe(),
            SpecAction::View.needed(),
            &format!("in organization {:?}", org.org.id),
            org.standing.role(),
        ));
    }
    let mut args = Args::default();
    let filter = format!(" WHERE t.organization_id = {}", args.arg(org.org.id.clone()));
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM openapi_specs t{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!("SELECT {} FROM openapi_specs t{filter}", model::SpecCols::SQL);
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (t.created_at, t.id) > ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(" ORDER BY t.created_at, t.id LIMIT {}", args.arg(page.fetch()));
    let standing = org.standing;
    let specs = c
        .query(&sql, args.values())?
        .iter()
        .map(|r| Ok(SpecFor::listed(Spec::from_row(r)?, standing)))
        .collect::<Result<Vec<_>, crate::db::DbError>>()?;
    Ok(page.finish(specs, u64::try_from(count).unwrap_or(0), |s| {
        (s.spec.created_at, s.spec.id.clone())
    }))
}

/// Creates a specification; 400 when the slug is taken.
pub fn create(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::CreateOpenApiSpec>,
    caller: &str,
    slug: &str,
    source: &Source,
) -> StoreResult<SpecFor> {
    let key = SpecKey {
        org_id: org.org.id.clone(),
        slug: slug.to_string(),
    };
    if model::load_by_slug(c, &key)?.is_some() {
        return Err(StoreError::invalid(format!(
            "an OpenAPI specification with slug {slug:?} exists in this organization"
        )));
    }
    insert(c, org, caller, slug, source)
}

/// Replaces the source of the specification of `slug`, or creates it when there is none;
/// true when it was created.
pub fn put(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::CreateOpenApiSpec>,
    caller: &str,
    slug: &str,
    source: &Source,
) -> StoreResult<(SpecFor, bool)> {
    let key = SpecKey {
        org_id: org.org.id.clone(),
        slug: slug.to_string(),
    };
    // Editing a specification needs the role that creates one (`SpecAction::Edit`), which the
    // proof on the organization already holds.
    let Some(existing) = model::load_by_slug(c, &key)? else {
        return Ok((insert(c, org, caller, slug, source)?, true));
    };
    let now = clock::now_ms();
    let (url, text) = split(source);
    c.execute(
        "UPDATE openapi_specs SET source_url = ?2, source_text = ?3, processing_state = ?4,
             generation = generation + 1, updated_at = ?5 WHERE id = ?1",
        params![existing.id.clone(), url, text, ProcessingState::Pending, now],
    )?;
    process::schedule(c, &existing.id, now)?;
    let payload = events::OpenApiSpecUpdated {
        spec_id: &existing.id,
        slug,
    };
    events::record(c, Event::in_org(&key.org_id, &existing.id, Some(caller), payload))?;
    Ok((load_visible(c, &key, caller)?, false))
}

fn split(source: &Source) -> (Option<String>, Option<String>) {
    match source {
        Source::Url(url) => (Some(url.clone()), None),
        Source::Text(text) => (None, Some(text.clone())),
    }
}

fn insert(
    c: &mut dyn Conn,
    org: &Authorized<OrgFor, org::CreateOpenApiSpec>,
    caller: &str,
    slug: &str,
    source: &Source,
) -> StoreResult<SpecFor> {
    let count: i64 = c
        .query_scalar(
            "SELECT count(*) FROM openapi_specs WHERE organization_id = ?1",
            params![org.org.id.clone()],
        )?
        .unwrap_or(0);
    if count >= MAX_SPECS {
        return Err(StoreError::invalid(format!(
            "an organization has at most {MAX_SPECS} OpenAPI specifications"
        )));
    }
    let id = ids::new_id();
    let now = clock::now_ms();
    let (url, text) = split(source);
    c.execute(
        "INSERT INTO openapi_specs (id, organization_id, slug, source_url, source_text, visibility,
             processing_state, generation, last_error_count, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 1, 0, ?8, ?8)",
        params![
            id.clone(),
            org.org.id.clone(),
            slug,
            url,
            text,
            SpecVisibility::Private,
            ProcessingState::Pending,
            now
        ],
    )?;
    process::schedule(c, &id, now)?;
    let payload = events::OpenApiSpecCreated { spec_id: &id, slug };
    events::record(c, Event::in_org(&org.org.id, &id, Some(caller), payload))?;
    let key = SpecKey {
        org_id: org.org.id.clone(),
        slug: slug.to_string(),
    };
    load_visible(c, &key, caller)
}

/// Sets who may read the specification's latest content.
pub fn set_visibility(
    c: &mut dyn Conn,
    spec: &Authorized<SpecFor, spec::Edit>,
    caller: &str,
    visibility: SpecVisibility,
) -> StoreResult<SpecFor> {
    let s = &spec.spec;
    c.execute(
        "UPDATE openapi_specs SET visibility = ?2, updated_at = ?3 WHERE id = ?1",
        params![s.id.clone(), visibility, clock::now_ms()],
    )?;
    let payload = events::OpenApiSpecUpdated {
        spec_id: &s.id,
        slug: &s.slug,
    };
    events::record(c, Event::in_org(&s.org_id, &s.id, Some(caller), payload))?;
    let key = SpecKey {
        org_id: s.org_id.clone(),
        slug: s.slug.clone(),
    };
    load_visible(c, &key, caller)
}

/// Deletes a specification with its versions, and its processing job.
pub fn delete(c: &mut dyn Conn, spec: &Authorized<SpecFor, spec::Edit>, caller: &str) -> StoreResult<()> {
    let s = &spec.spec;
    c.execute(
        "DELETE FROM openapi_spec_versions WHERE spec_id = ?1",
        params![s.id.clone()],
    )?;
    c.execute("DELETE FROM openapi_specs WHERE id = ?1", params![s.id.clone()])?;
    jobs::cancel(c, &process::job_key(&s.id))?;
    // Pages generated from it go.
    pages::spec_changed(c, &s.org_id, &s.slug)?;
    let payload = events::OpenApiSpecDeleted {
        spec_id: &s.id,
        slug: &s.slug,
    };
    events::record(c, Event::in_org(&s.org_id, &s.id, Some(caller), payload))?;
    Ok(())
}

/// The versions of a specification, newest first.
pub fn versions(
    c: &mut dyn Conn,
    spec: &Authorized<SpecFor, spec::View>,
    paging: &Paging,
) -> StoreResult<List<Version>> {
    let page = Page::new(paging, format!("openapi-versions:{}", spec.spec.id))?;
    let mut args = Args::default();
    let filter = format!(" WHERE v.spec_id = {}", args.arg(spec.spec.id.clone()));
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM openapi_spec_versions v{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!(
        "SELECT {} FROM openapi_spec_versions v{filter}",
        model::VersionCols::SQL
    );
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (v.created_at, v.id) < ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(
        " ORDER BY v.created_at DESC, v.id DESC LIMIT {}",
        args.arg(page.fetch())
    );
    let versions = c
        .query(&sql, args.values())?
        .iter()
        .map(Version::from_row)
        .collect::<Result<Vec<_>, crate::db::DbError>>()?;
    Ok(page.finish(versions, u64::try_from(count).unwrap_or(0), |v| {
        (v.created_at, v.id.clone())
    }))
}

/// Which version a path names: the latest, or one by id.
#[derive(Clone, Debug)]
pub enum Which {
    Latest,
    Id(String),
}

fn version_not_found(spec: &Spec, which: &Which) -> StoreError {
    match which {
        Which::Latest => StoreError::not_found(format!(
            "OpenAPI specification {:?} has no version yet (processing: {})",
            spec.slug,
            spec.state.as_str()
        )),
        Which::Id(id) => StoreError::not_found(format!(
            "OpenAPI specification {:?} has no version {id:?}",
            spec.slug
        )),
    }
}

/// The id a [`Which`] names, for `spec`.
fn version_id<'a>(spec: &'a Spec, which: &'a Which) -> StoreResult<&'a str> {
    match which {
        Which::Latest => spec
            .last_version
            .as_deref()
            .ok_or_else(|| version_not_found(spec, which)),
        Which::Id(id) => Ok(id),
    }
}

/// A version of a specification.
pub fn version(
    c: &mut dyn Conn,
    spec: &Authorized<SpecFor, spec::View>,
    which: &Which,
) -> StoreResult<Version> {
    let s = &spec.spec;
    let id = version_id(s, which)?;
    let sql = format!(
        "SELECT {} FROM openapi_spec_versions v WHERE v.id = ?1 AND v.spec_id = ?2",
        model::VersionCols::SQL
    );
    c.query_opt(&sql, params![id, s.id.clone()])?
        .map(|row| Version::from_row(&row))
        .transpose()?
        .ok_or_else(|| version_not_found(s, which))
}

/// A version's content.
pub fn content(
    c: &mut dyn Conn,
    spec: &Authorized<SpecFor, spec::View>,
    which: &Which,
) -> StoreResult<VersionContent> {
    content_of(c, &spec.spec, which)
}

/// The latest content of a public specification, for anyone (no token, or a token of another
/// organization): 404 alike for an absent or a private one.
pub fn public_content(c: &mut dyn Conn, key: &SpecKey) -> StoreResult<(Spec, VersionContent)> {
    match model::load_by_slug(c, key)? {
        Some(s) if s.visibility == SpecVisibility::Public => {
            let content = content_of(c, &s, &Which::Latest)?;
            Ok((s, content))
        }
        _ => Err(not_found(&key.slug)),
    }
}

fn content_of(c: &mut dyn Conn, s: &Spec, which: &Which) -> StoreResult<VersionContent> {
    let id = version_id(s, which)?;
    let sql = format!(
        "SELECT {}, v.filesystem, v.raw_text, v.raw_format FROM openapi_spec_versions v
         WHERE v.id = ?1 AND v.spec_id = ?2",
        model::VersionCols::SQL
    );
    let row = c
        .query_opt(&sql, params![id, s.id.clone()])?
        .ok_or_else(|| version_not_found(s, which))?;
    let at = model::VersionCols::COUNT;
    Ok(VersionContent {
        version: Version::from_row(&row)?,
        filesystem: row.get(at)?,
        raw_text: row.get(at + 1)?,
        raw_format: row.get(at + 2)?,
    })
}
