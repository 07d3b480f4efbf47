//! A site's structure: sections, section groups and site spaces, their lists (in reading order,
//! keyset-paged on each item's path of order keys) and moves; `external_links` adds the fourth
//! kind with these helpers.

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use quire_store::StoreResult;
use quire_store::paging::{List, Paging};
use quire_store::patch::Patch;
use quire_store::permissions::site;
use quire_store::sites::order::{Kind, Position, Ref};
use quire_store::sites::structure::{self as st, ShownSiteSpace, Written};
use quire_store::sites::{ExternalLink, Group, Section, SiteKey};
use quire_store::validate;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::wire::{self, ExternalLinkJson, GroupJson, ItemJson, SectionJson, SiteSpaceJson};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::extract::{Json, Path, QueryOf};
use crate::paths::{
    SitePath, SiteSectionGroupPath, SiteSectionGroupSectionPath, SiteSectionPath, SiteSpacePath,
};
use crate::state::App;

pub fn routes() -> OpenApiRouter<App> {
    OpenApiRouter::default()
        .routes(routes!(list_sections, create_section))
        .routes(routes!(update_section, delete_section))
        .routes(routes!(move_section))
        .routes(routes!(list_groups, create_group))
        .routes(routes!(update_group, delete_group))
        .routes(routes!(add_section_to_group))
        .routes(routes!(remove_section_from_group))
        .routes(routes!(move_group))
        .routes(routes!(list_site_spaces, create_site_space))
        .routes(routes!(update_site_space, delete_site_space))
        .routes(routes!(move_site_space))
        .routes(routes!(sort_structure))
}

/// One page of a site's items of a kind, as `page` (one of the store's lists of a site's
/// structure) takes it from the site as the caller sees it.
async fn list<T: ItemJson>(
    app: App,
    caller: Caller,
    path: SitePath,
    page: impl FnOnce(&st::SiteView) -> StoreResult<List<T>>,
) -> ApiResult<axum::Json<List<T::Json>>> {
    let view = app
        .db
        .read_as::<site::View, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::view(c, site.into_inner(), &caller.user_id)
        })
        .await?;
    let items = page(&view)?;
    Ok(axum::Json(wire::list_json(&app.urls, &view, items)))
}

/// `spaceId`, `template` and `pageId` as GitBook's client sends them when adding content: an
/// existing space's id, no template, no custom home page. A new space made with the site space
/// (`spaceId: null`), a template, and a custom home page are not built: refused, never dropped.
fn existing_space(
    space_id: Option<String>,
    template: Option<&serde_json::Value>,
    page_id: Option<&str>,
) -> ApiResult<String> {
    if template.is_some_and(|t| !t.is_null()) {
        return Err(ApiError::bad_request(
            "`template`: quire does not make spaces from templates; pass the `spaceId` of an existing space",
        ));
    }
    no_custom_home(page_id)?;
    space_id.ok_or_else(|| {
        ApiError::bad_request(
            "`spaceId`: a new space is not made here; create it (POST /v1/orgs/{organizationId}/spaces) and pass its id",
        )
    })
}

fn no_custom_home(page_id: Option<&str>) -> ApiResult<()> {
    match page_id {
        Some(page) => Err(ApiError::bad_request(format!(
            "`pageId` {page:?}: a custom home page is not supported; a site space opens on its space's first page (send null or leave it out)"
        ))),
        None => Ok(()),
    }
}

pub(super) fn check_icon(icon: Option<&String>) -> ApiResult<()> {
    if let Some(i) = icon {
        validate::name("icon", i, st::ICON_MAX)?;
    }
    Ok(())
}

/// The value a patch sets, if it sets one.
pub(super) fn set(patch: &Patch<String>) -> Option<&String> {
    match patch {
        Patch::Value(v) => Some(v),
        Patch::Absent | Patch::Null => None,
    }
}

/// 201 with a new item, and where it is.
pub(super) fn created<T: ItemJson>(
    app: &App,
    path: &SitePath,
    written: &Written<T>,
) -> impl IntoResponse + use<T> {
    let location = app.urls.api(&format!(
        "/orgs/{}/sites/{}/{}/{}",
        path.organization_id,
        path.site_id,
        T::COLLECTION,
        written.item.id()
    ));
    let json = wire::written_json(&app.urls, written);
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        axum::Json(json),
    )
}

/// Deletes an item: 204, also when it never was.
pub(super) async fn delete(
    app: App,
    caller: Caller,
    site: SiteKey,
    kind: Kind,
    id: String,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), site, move |c, site| {
            st::delete(c, &site, kind, &id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The body of a move, as the store takes it.
trait MoveBody {
    fn into_move(self) -> ApiResult<st::Move>;
}

/// Moves an item and answers it as moved.
async fn move_item<T: ItemJson + Send + 'static>(
    app: App,
    caller: Caller,
    site: SiteKey,
    id: String,
    to: st::Move,
) -> ApiResult<axum::Json<T::Json>> {
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), site, move |c, site| {
            st::move_item::<T>(c, &site, &caller.user_id, &id, &to)
        })
        .await?;
    Ok(axum::Json(wire::written_json(&app.urls, &written)))
}

/// Which side of a sibling: `{before}` or `{after}`, exactly one. Each kind's move names its
/// siblings by a pointer of its own shape.
fn position<P: Into<Ref>>(before: Option<P>, after: Option<P>) -> ApiResult<Position> {
    match (before, after) {
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "`position` takes `before` or `after`, not both",
        )),
        (Some(b), None) => Ok(Position::Before(b.into())),
        (None, Some(a)) => Ok(Position::After(a.into())),
        (None, None) => Err(ApiError::bad_request(
            "`position` needs `before` or `after`, naming a sibling",
        )),
    }
}

/// A move before or after a sibling, within the item's level; without a position, to the end
/// of it (as GitBook's client sends "move to the end").
fn beside<P: Into<Ref>>(at: Option<(Option<P>, Option<P>)>) -> ApiResult<st::Move> {
    Ok(st::Move {
        position: at.map(|(before, after)| position(before, after)).transpose()?,
        parent: Patch::Absent,
    })
}

// Sections.

// `shareKey` is documented, as GitBook has it, but not read: a share key lets a visitor read a
// share-link site, and changes nothing for a member, who sees every item.
#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/sections",
    tag = "Site sections, section groups, site spaces",
    summary = "List the sections of a site",
    params(
        SitePath,
        ("shareKey" = Option<String>, Query, description = "A share key of the site (accepted; members see every item)."),
        Paging
    ),
    responses((status = 200, description = "The sections in reading order.", body = List<SectionJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_sections(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<SectionJson>>> {
    list(app, caller, path, |view| st::sections(view, &paging)).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateSection {
    /// An existing space (null, to make a new one, is refused).
    space_id: Option<String>,
    title: String,
    icon: Option<String>,
    /// The section group to make it in (at its end); the root when absent.
    site_section_group_id: Option<String>,
    /// Made as a draft: not live until made live.
    #[serde(default)]
    draft: bool,
    /// Refused when given: quire makes no space from a template.
    #[schema(value_type = Option<Object>)]
    template: Option<serde_json::Value>,
    /// Null or absent: a custom home page is refused.
    page_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/sections",
    tag = "Site sections, section groups, site spaces",
    summary = "Add a section to a site",
    params(SitePath),
    request_body = CreateSection,
    responses((status = 201, description = "The new section, with a site space for the space.", body = SectionJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_section(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateSection>,
) -> ApiResult<impl IntoResponse> {
    validate::title("title", &body.title, st::SECTION_TITLE_MIN, st::SECTION_TITLE_MAX)?;
    check_icon(body.icon.as_ref())?;
    let space_id = existing_space(body.space_id, body.template.as_ref(), body.page_id.as_deref())?;
    let new = st::NewSection {
        space_id,
        title: body.title,
        icon: body.icon,
        group: body.site_section_group_id,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::create_section(c, &site, &caller.user_id, &new)
        })
        .await?;
    Ok(created(&app, &path, &written))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateSection {
    title: Option<String>,
    path: Option<String>,
    default_site_space: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    condition: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    icon: Patch<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    description: Patch<String>,
    /// Into this section group, at its end; null: to the end of the site's root.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    site_section_group_id: Patch<String>,
    /// true: not live; false: live.
    draft: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Update a site section",
    params(SiteSectionPath),
    request_body = UpdateSection,
    responses((status = 200, description = "The section as updated.", body = SectionJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_section(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSectionPath>,
    Json(body): Json<UpdateSection>,
) -> ApiResult<axum::Json<SectionJson>> {
    if let Some(t) = &body.title {
        validate::title("title", t, st::SECTION_TITLE_MIN, st::SECTION_TITLE_MAX)?;
    }
    if let Some(p) = &body.path {
        st::check_path("path", p)?;
    }
    if let Some(d) = set(&body.description) {
        validate::name("description", d, st::SECTION_DESCRIPTION_MAX)?;
    }
    check_icon(set(&body.icon))?;
    let changes = st::SectionChanges {
        title: body.title,
        path: body.path,
        default_site_space: body.default_site_space,
        condition: body.condition,
        icon: body.icon,
        description: body.description,
        group: body.site_section_group_id,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::update_section(c, &site, &caller.user_id, &path.site_section_id, &changes)
        })
        .await?;
    Ok(axum::Json(wire::written_json(&app.urls, &written)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Delete a site section and its site spaces",
    params(SiteSectionPath),
    responses((status = 204, description = "The section is deleted (or never was).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_section(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSectionPath>,
) -> ApiResult<StatusCode> {
    delete(app, caller, p.site(), Kind::Section, p.site_section_id).await
}

#[derive(Deserialize, utoipa::ToSchema)]
enum SiteSectionType {
    #[serde(rename = "site-section")]
    SiteSection,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SiteSectionPointer {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: SiteSectionType,
    site_section: String,
}

impl From<SiteSectionPointer> for Ref {
    fn from(p: SiteSectionPointer) -> Ref {
        Ref {
            kind: Kind::Section,
            id: p.site_section,
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SiteSectionMovePosition {
    before: Option<SiteSectionPointer>,
    after: Option<SiteSectionPointer>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct MoveSection {
    /// Absent: to the end of the section's level.
    position: Option<SiteSectionMovePosition>,
}

impl MoveBody for MoveSection {
    fn into_move(self) -> ApiResult<st::Move> {
        beside(self.position.map(|p| (p.before, p.after)))
    }
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/sections/{siteSectionId}/move",
    tag = "Site sections, section groups, site spaces",
    summary = "Move a section before or after a sibling section",
    params(SiteSectionPath),
    request_body = MoveSection,
    responses((status = 200, description = "The section as moved.", body = SectionJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn move_section(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSectionPath>,
    Json(body): Json<MoveSection>,
) -> ApiResult<axum::Json<SectionJson>> {
    move_item::<Section>(app, caller, p.site(), p.site_section_id, body.into_move()?).await
}

// Section groups.

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups",
    tag = "Site sections, section groups, site spaces",
    summary = "List the section groups of a site",
    params(SitePath, Paging),
    responses((status = 200, description = "The groups in reading order (depth first).", body = List<GroupJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_groups(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(paging): QueryOf<Paging>,
) -> ApiResult<axum::Json<List<GroupJson>>> {
    list(app, caller, path, |view| st::groups(view, &paging)).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct CreateGroup {
    title: String,
    icon: Option<String>,
    sections: Option<Vec<String>>,
    parent: Option<String>,
    /// Made as a draft: not live (nor what is in it) until made live.
    #[serde(default)]
    draft: bool,
}

fn check_group_title(title: &str) -> ApiResult<()> {
    validate::title("title", title, st::GROUP_TITLE_MIN, st::GROUP_TITLE_MAX)?;
    Ok(())
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups",
    tag = "Site sections, section groups, site spaces",
    summary = "Add a section group to a site",
    params(SitePath),
    request_body = CreateGroup,
    responses((status = 201, description = "The new group.", body = GroupJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_group(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateGroup>,
) -> ApiResult<impl IntoResponse> {
    check_group_title(&body.title)?;
    check_icon(body.icon.as_ref())?;
    let new = st::NewGroup {
        title: body.title,
        icon: body.icon,
        sections: body.sections.unwrap_or_default(),
        parent: body.parent,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::create_group(c, &site, &caller.user_id, &new)
        })
        .await?;
    Ok(created(&app, &path, &written))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateGroup {
    title: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    icon: Patch<String>,
    /// Into this group, at its end; null: to the end of the site's root.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    parent_section_group_id: Patch<String>,
    /// true: not live; false: live.
    draft: Option<bool>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Update a section group",
    params(SiteSectionGroupPath),
    request_body = UpdateGroup,
    responses((status = 200, description = "The group as updated.", body = GroupJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_group(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSectionGroupPath>,
    Json(body): Json<UpdateGroup>,
) -> ApiResult<axum::Json<GroupJson>> {
    if let Some(t) = &body.title {
        check_group_title(t)?;
    }
    check_icon(set(&body.icon))?;
    let changes = st::GroupChanges {
        title: body.title,
        icon: body.icon,
        parent: body.parent_section_group_id,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::update_group(c, &site, &caller.user_id, &path.site_section_group_id, &changes)
        })
        .await?;
    Ok(axum::Json(wire::written_json(&app.urls, &written)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Delete a section group (what it holds moves up in its place)",
    params(SiteSectionGroupPath),
    responses((status = 204, description = "The group is deleted (or never was).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_group(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSectionGroupPath>,
) -> ApiResult<StatusCode> {
    delete(app, caller, p.site(), Kind::Group, p.site_section_group_id).await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AddSection {
    section_id: String,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections",
    tag = "Site sections, section groups, site spaces",
    summary = "Put a section at the end of a group",
    params(SiteSectionGroupPath),
    request_body = AddSection,
    responses((status = 200, description = "The group with the section in it.", body = GroupJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn add_section_to_group(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSectionGroupPath>,
    Json(body): Json<AddSection>,
) -> ApiResult<axum::Json<GroupJson>> {
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            let group = &path.site_section_group_id;
            st::add_to_group(c, &site, &caller.user_id, group, &body.section_id)
        })
        .await?;
    Ok(axum::Json(wire::written_json(&app.urls, &written)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/sections/{siteSectionId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Take a section out of a group",
    params(SiteSectionGroupSectionPath),
    responses((status = 204, description = "The section is no longer in the group (or never was).")),
    security(("token" = ["site:metadata:write"]))
)]
async fn remove_section_from_group(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSectionGroupSectionPath>,
) -> ApiResult<StatusCode> {
    app.db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::remove_from_group(c, &site, &path.site_section_group_id, &path.site_section_id)
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Deserialize, utoipa::ToSchema)]
enum StructureItemType {
    #[serde(rename = "site-section")]
    SiteSection,
    #[serde(rename = "site-section-group")]
    SiteSectionGroup,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SiteSectionGroupPointer {
    #[serde(rename = "type")]
    kind: StructureItemType,
    id: String,
}

impl From<SiteSectionGroupPointer> for Ref {
    fn from(p: SiteSectionGroupPointer) -> Ref {
        let kind = match p.kind {
            StructureItemType::SiteSection => Kind::Section,
            StructureItemType::SiteSectionGroup => Kind::Group,
        };
        Ref { kind, id: p.id }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SiteSectionGroupMovePosition {
    before: Option<SiteSectionGroupPointer>,
    after: Option<SiteSectionGroupPointer>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct MoveGroup {
    position: Option<SiteSectionGroupMovePosition>,
    /// The group to move into (null: the root; absent: where it is).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    parent: Patch<String>,
}

impl MoveBody for MoveGroup {
    /// Without a position, to the end of its level (or of its new parent's).
    fn into_move(self) -> ApiResult<st::Move> {
        Ok(st::Move {
            position: self.position.map(|p| position(p.before, p.after)).transpose()?,
            parent: self.parent,
        })
    }
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/section-groups/{siteSectionGroupId}/move",
    tag = "Site sections, section groups, site spaces",
    summary = "Move a section group before or after a sibling, or into another group",
    params(SiteSectionGroupPath),
    request_body = MoveGroup,
    responses((status = 200, description = "The group as moved.", body = GroupJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn move_group(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSectionGroupPath>,
    Json(body): Json<MoveGroup>,
) -> ApiResult<axum::Json<GroupJson>> {
    move_item::<Group>(app, caller, p.site(), p.site_section_group_id, body.into_move()?).await
}

// Site spaces.

/// `default` and PAGING (`shareKey` is documented with the operation, and not read).
#[derive(Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListSiteSpacesQuery {
    /// `true`: only default site spaces (of the root or of a section); `false`: only the others.
    #[param(value_type = Option<bool>)]
    #[serde(default, deserialize_with = "crate::extract::flag")]
    default: Option<bool>,
    #[param(ignore)]
    #[serde(flatten)]
    paging: Paging,
}

#[utoipa::path(
    get,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces",
    tag = "Site sections, section groups, site spaces",
    summary = "List the site spaces of a site",
    params(
        SitePath,
        ("shareKey" = Option<String>, Query, description = "A share key of the site (accepted; members see every item)."),
        ListSiteSpacesQuery,
        Paging
    ),
    responses((status = 200, description = "The site spaces in reading order: the root's, then each section's.", body = List<SiteSpaceJson>)),
    security(("token" = ["site:metadata:read"]))
)]
async fn list_site_spaces(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    QueryOf(query): QueryOf<ListSiteSpacesQuery>,
) -> ApiResult<axum::Json<List<SiteSpaceJson>>> {
    list(app, caller, path, |view| {
        st::site_spaces(view, query.default, &query.paging)
    })
    .await
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CreateSiteSpace {
    /// An existing space (null, to make a new one, is refused).
    space_id: Option<String>,
    section_id: Option<String>,
    /// The variant's own name; the space's title when absent.
    title: Option<String>,
    /// Made as a draft: not live until made live.
    #[serde(default)]
    draft: bool,
    /// Refused when given: quire makes no space from a template.
    #[schema(value_type = Option<Object>)]
    template: Option<serde_json::Value>,
    /// Null or absent: a custom home page is refused.
    page_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces",
    tag = "Site sections, section groups, site spaces",
    summary = "Add a space to a site",
    params(SitePath),
    request_body = CreateSiteSpace,
    responses((status = 201, description = "The new site space, at the end of its section.", body = SiteSpaceJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn create_site_space(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<CreateSiteSpace>,
) -> ApiResult<impl IntoResponse> {
    if let Some(t) = &body.title {
        validate::title("title", t, st::SITE_SPACE_TITLE_MIN, st::SITE_SPACE_TITLE_MAX)?;
    }
    let new = st::NewSiteSpace {
        space_id: existing_space(body.space_id, body.template.as_ref(), body.page_id.as_deref())?,
        section: body.section_id,
        title: body.title,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::create_site_space(c, &site, &caller.user_id, &new)
        })
        .await?;
    Ok(created(&app, &path, &written))
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UpdateSiteSpace {
    path: Option<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    condition: Patch<String>,
    space_id: Option<String>,
    /// true: served but left out of the site's navigation.
    hidden: Option<bool>,
    /// true: not live; false: live.
    draft: Option<bool>,
    /// Null or absent: a custom home page is refused.
    page_id: Option<String>,
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Update a site space",
    params(SiteSpacePath),
    request_body = UpdateSiteSpace,
    responses((status = 200, description = "The site space as updated.", body = SiteSpaceJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn update_site_space(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SiteSpacePath>,
    Json(body): Json<UpdateSiteSpace>,
) -> ApiResult<axum::Json<SiteSpaceJson>> {
    if let Some(p) = &body.path {
        st::check_path("path", p)?;
    }
    no_custom_home(body.page_id.as_deref())?;
    let changes = st::SiteSpaceChanges {
        path: body.path,
        condition: body.condition,
        space_id: body.space_id,
        hidden: body.hidden,
        draft: body.draft,
    };
    let written = app
        .db
        .write_as::<site::Manage, _>(caller.user_id.clone(), path.site(), move |c, site| {
            st::update_site_space(c, &site, &caller.user_id, &path.site_space_id, &changes)
        })
        .await?;
    Ok(axum::Json(wire::written_json(&app.urls, &written)))
}

#[utoipa::path(
    delete,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}",
    tag = "Site sections, section groups, site spaces",
    summary = "Remove a space from a site",
    params(SiteSpacePath),
    responses((status = 204, description = "The site space is deleted (or never was); the next one becomes the default when it was.")),
    security(("token" = ["site:metadata:write"]))
)]
async fn delete_site_space(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSpacePath>,
) -> ApiResult<StatusCode> {
    delete(app, caller, p.site(), Kind::SiteSpace, p.site_space_id).await
}

#[derive(Deserialize, utoipa::ToSchema)]
enum SiteSpaceType {
    #[serde(rename = "site-space")]
    SiteSpace,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SiteSpacePointer {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: SiteSpaceType,
    site_space: String,
}

impl From<SiteSpacePointer> for Ref {
    fn from(p: SiteSpacePointer) -> Ref {
        Ref {
            kind: Kind::SiteSpace,
            id: p.site_space,
        }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SiteSpaceMovePosition {
    before: Option<SiteSpacePointer>,
    after: Option<SiteSpacePointer>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct MoveSiteSpace {
    /// Absent: to the end of its section.
    position: Option<SiteSpaceMovePosition>,
}

impl MoveBody for MoveSiteSpace {
    fn into_move(self) -> ApiResult<st::Move> {
        beside(self.position.map(|p| (p.before, p.after)))
    }
}

#[utoipa::path(
    post,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/site-spaces/{siteSpaceId}/move",
    tag = "Site sections, section groups, site spaces",
    summary = "Move a site space before or after a sibling site space",
    params(SiteSpacePath),
    request_body = MoveSiteSpace,
    responses((status = 200, description = "The site space as moved.", body = SiteSpaceJson)),
    security(("token" = ["site:metadata:write"]))
)]
async fn move_site_space(
    caller: Caller,
    State(app): State<App>,
    Path(p): Path<SiteSpacePath>,
    Json(body): Json<MoveSiteSpace>,
) -> ApiResult<axum::Json<SiteSpaceJson>> {
    move_item::<ShownSiteSpace>(app, caller, p.site(), p.site_space_id, body.into_move()?).await
}

// The whole structure.

/// An item of any kind, as `PATCH .../structure/sort` names it.
#[derive(Deserialize, utoipa::ToSchema, Clone, Copy, PartialEq)]
enum ItemType {
    #[serde(rename = "site-space")]
    Space,
    #[serde(rename = "site-section")]
    Section,
    #[serde(rename = "site-section-group")]
    Group,
    #[serde(rename = "site-external-link")]
    ExternalLink,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ItemPointer {
    #[serde(rename = "type")]
    kind: ItemType,
    id: String,
}

impl ItemPointer {
    /// The item as the store names it.
    fn into_ref(self) -> Ref {
        let kind = match self.kind {
            ItemType::Space => Kind::SiteSpace,
            ItemType::Section => Kind::Section,
            ItemType::Group => Kind::Group,
            ItemType::ExternalLink => Kind::Link,
        };
        Ref { kind, id: self.id }
    }
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct ItemMovePosition {
    before: Option<ItemPointer>,
    after: Option<ItemPointer>,
}

#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct SortStructure {
    item: ItemPointer,
    /// Before or after a sibling of the item's level; absent: to the end of it.
    position: Option<ItemMovePosition>,
}

/// The item as moved, of whichever kind.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(untagged)]
enum MovedItem {
    SiteSpace(Box<SiteSpaceJson>),
    Section(SectionJson),
    Group(GroupJson),
    Link(ExternalLinkJson),
}

#[utoipa::path(
    patch,
    path = "/v1/orgs/{organizationId}/sites/{siteId}/structure/sort",
    tag = "Site sections, section groups, site spaces",
    summary = "Move a section, section group, external link or site space among its siblings, by its kind and id",
    params(SitePath),
    request_body = SortStructure,
    responses((status = 200, description = "The item as moved.", body = MovedItem)),
    security(("token" = ["site:metadata:write"]))
)]
async fn sort_structure(
    caller: Caller,
    State(app): State<App>,
    Path(path): Path<SitePath>,
    Json(body): Json<SortStructure>,
) -> ApiResult<axum::Json<MovedItem>> {
    let item = body.item.into_ref();
    let position = body
        .position
        .map(|p| {
            position(
                p.before.map(ItemPointer::into_ref),
                p.after.map(ItemPointer::into_ref),
            )
        })
        .transpose()?;
    let to = st::Move {
        position,
        parent: Patch::Absent,
    };
    let (site, id) = (path.site(), item.id);
    let moved = match item.kind {
        Kind::SiteSpace => {
            let moved = move_item::<ShownSiteSpace>(app, caller, site, id, to).await?;
            MovedItem::SiteSpace(Box::new(moved.0))
        }
        Kind::Section => MovedItem::Section(move_item::<Section>(app, caller, site, id, to).await?.0),
        Kind::Group => MovedItem::Group(move_item::<Group>(app, caller, site, id, to).await?.0),
        Kind::Link => MovedItem::Link(move_item::<ExternalLink>(app, caller, site, id, to).await?.0),
    };
    Ok(axum::Json(moved))
}
