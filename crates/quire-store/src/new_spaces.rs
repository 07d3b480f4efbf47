//! Spaces that start with content: creating one (with an untitled page, empty, or from a
//! template) and duplicating one (its content, file bytes and grants). Both write the space's
//! first main revision, so they sit above `main_revision` (and `spaces`, the record, below).

use crate::Store;
use crate::collections::require_create_in;
use crate::content::store::ContentCache;
use crate::db::Conn;
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::siblings::{self, Kind};
use crate::spaces::{self, EditMode, SpaceFor, TITLE_MAX, Visibility};
use crate::templates::{self, TemplateRequest};
use crate::{clock, ids, params};

/// A new space, its fields checked already.
#[derive(Clone, Debug)]
pub struct NewSpace {
    pub title: String,
    pub emoji: Option<String>,
    pub icon: Option<String>,
    pub parent: Option<String>,
    pub language: Option<String>,
    pub edit_mode: EditMode,
    pub visibility: Visibility,
    /// No first page (a template's pages come instead when there is one).
    pub empty: bool,
    pub template: Option<TemplateRequest>,
}

/// Creates a space in `org_id` (in `new.parent`, which the caller may create content in), with
/// its first revision; answers it as the caller sees it.
pub fn create(
    c: &mut dyn Conn,
    cache: &ContentCache,
    caller: &str,
    org_id: &str,
    new: &NewSpace,
) -> StoreResult<SpaceFor> {
    require_create_in(c, org_id, new.parent.as_deref(), caller)?;
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO spaces (id, organization_id, parent_id, title, emoji, icon_url, visibility, edit_mode,
                             language, position, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, '', ?10, ?10)",
        params![
            id.clone(),
            org_id,
            new.parent.clone(),
            new.title.clone(),
            new.emoji.clone(),
            new.icon.clone(),
            new.visibility,
            new.edit_mode,
            new.language.clone(),
            now
        ],
    )?;
    siblings::place(c, org_id, new.parent.as_deref(), (Kind::Space, &id), None)?;
    let empty = new.empty || new.template.is_some();
    crate::main_revision::init::init_space(c, cache, &id, empty, caller)?;
    if let Some(template) = &new.template {
        templates::apply_to_main(c, cache, &id, template, caller)?;
    }
    let space = spaces::load_visible(c, &id, caller)?;
    let payload = events::SpaceCreated {
        space_id: &id,
        revision_id: space.space.revision.as_deref(),
        parent: new.parent.as_deref(),
        duplicate_of: None,
    };
    let event = Event::space(org_id, &id, Some(caller), payload);
    events::record(c, event)?;
    Ok(space)
}

/// Duplicates a space the caller can see into the same place, with its content as it is now,
/// its file bytes and its grants; answers the copy as the caller sees it.
pub async fn duplicate(store: &Store, caller: &str, space_id: &str) -> StoreResult<SpaceFor> {
    // The copy gets the content of the source's revision as it is now; its file bytes are
    // copied first, so the new space never references bytes it does not have. Who may create
    // the copy, and whether its bytes fit in the storage quotas, is checked before any byte is
    // copied, and again in the transaction that creates it.
    let store2 = store.clone();
    let (user, space_id) = (caller.to_string(), space_id.to_string());
    let id = ids::new_id();
    let new_id = id.clone();
    let quotas = crate::files::Quotas::of(&store.settings);
    let (source, revision, blobs) = store
        .db
        .read_blocking(move |c| {
            let source = spaces::load_visible(c, &space_id, &user)?;
            if source.space.deleted_at.is_some() {
                return Err(StoreError::invalid(
                    "a deleted space cannot be duplicated: restore it first",
                ));
            }
            require_create_in(c, &source.space.org_id, source.space.parent.as_deref(), &user)?;
            let revision = source
                .space
                .revision
                .clone()
                .ok_or_else(|| StoreError::internal("space without revision"))?;
            let tree = crate::content::store::load_tree(c, &store2.content, &space_id, &revision)?;
            let blobs: Vec<(String, u64)> = tree
                .tree
                .files
                .values()
                .map(|f| (f.blob.clone(), f.size))
                .collect();
            let bytes = blobs.iter().map(|(_, size)| size).sum();
            crate::files::check_room(c, &quotas, &new_id, &source.space.org_id, bytes)?;
            Ok::<_, StoreError>((source, revision, blobs))
        })
        .await?;
    let created = create_copy(store, caller, &source, &revision, &id, &blobs).await;
    match created {
        Ok(space) => Ok(space),
        Err(e) => {
            // The copy does not exist: its bytes go too (best effort; nothing references them).
            if let Err(cleanup) = store.blobs.delete_space(&id).await {
                tracing::warn!(space = %id, error = %cleanup, "cannot remove the bytes of a failed duplicate");
            }
            Err(e)
        }
    }
}

/// Copies the source's file bytes to the new space `id`, then creates it with the source's
/// content and grants.
async fn create_copy(
    store: &Store,
    caller: &str,
    source: &SpaceFor,
    revision: &str,
    id: &str,
    blobs: &[(String, u64)],
) -> StoreResult<SpaceFor> {
    for (blob, _) in blobs {
        store.blobs.copy(&source.space.id, id, blob).await?;
    }
    let (store2, source, revision, id, blobs, user) = (
        store.clone(),
        source.clone(),
        revision.to_string(),
        id.to_string(),
        blobs.to_vec(),
        caller.to_string(),
    );
    let quotas = crate::files::Quotas::of(&store.settings);
    store
        .db
        .write(move |c| {
            let s = &source.space;
            require_create_in(c, &s.org_id, s.parent.as_deref(), &user)?;
            let now = clock::now_ms();
            let title: String = format!("{} (copy)", s.title).chars().take(TITLE_MAX).collect();
            c.execute(
                "INSERT INTO spaces (id, organization_id, parent_id, title, emoji, icon_url, visibility, edit_mode,
                                     language, default_level, merge_rules, position, created_at, updated_at)
                 SELECT ?2, organization_id, parent_id, ?3, emoji, icon_url, visibility, edit_mode, language,
                        default_level, merge_rules, '', ?4, ?4
                 FROM spaces WHERE id = ?1",
                params![s.id.clone(), id.clone(), title, now],
            )?;
            c.execute(
                "INSERT INTO grants (organization_id, target_kind, target_id, user_id, team_id, role, created_at)
                 SELECT organization_id, target_kind, ?2, user_id, team_id, role, ?3 FROM grants WHERE target_id = ?1",
                params![s.id.clone(), id.clone(), now],
            )?;
            crate::main_revision::init::copy_content(c, &store2.content, &s.id, &revision, &id, &user)?;
            crate::files::reserve(c, &quotas, &id, &s.org_id, &blobs, now)?;
            let after = siblings::Pointer { kind: Kind::Space, space: Some(s.id.clone()), collection: None };
            let position = siblings::Position { before: None, after: Some(after) };
            siblings::place(c, &s.org_id, s.parent.as_deref(), (Kind::Space, &id), Some(&position))?;
            let copy = spaces::load_visible(c, &id, &user)?;
            let payload = events::SpaceCreated {
                space_id: &id,
                revision_id: copy.space.revision.as_deref(),
                parent: s.parent.as_deref(),
                duplicate_of: Some(&s.id),
            };
            let event = Event::space(&s.org_id, &id, Some(&user), payload);
            events::record(c, event)?;
            Ok(copy)
        })
        .await
}
