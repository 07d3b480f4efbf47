//! Change requests: branches of a space's content that merge back. Creating, reading, listing
//! (`list`) and updating them here; writing their content (`content`), merging them into main
//! and updating them with main (`merge`), reviews and requested reviewers (`reviews`), and who
//! contributed (`contributors`).

pub mod content;
pub mod contributors;
pub mod list;
pub mod merge;
pub mod model;
pub mod reviews;

pub use model::{ChangeRequest, ChangeRequestCols, Status, load};

use crate::content::store::ContentCache;
use crate::db::{Conn, for_update};
use crate::error::{StoreError, StoreResult};
use crate::events::{self, Event};
use crate::permissions::{Authorized, Role, space};
use crate::spaces::{self, SpaceFor};
use crate::templates::{self, TemplateRequest};
use crate::users::WithUsers;
use crate::{clock, ids, params};

pub const SUBJECT_MAX: usize = 100;

/// Change requests with the users they name (creators, mergers).
pub fn with_users(c: &mut dyn Conn, crs: Vec<ChangeRequest>) -> StoreResult<WithUsers<Vec<ChangeRequest>>> {
    let ids: Vec<String> = crs
        .iter()
        .flat_map(|cr| std::iter::once(cr.created_by.clone()).chain(cr.merged_by.clone()))
        .collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    WithUsers::load(c, crs, &ids)
}

/// One change request with the users it names.
pub fn one_with_users(c: &mut dyn Conn, cr: ChangeRequest) -> StoreResult<WithUsers<ChangeRequest>> {
    let found = with_users(c, vec![cr])?;
    let value = found
        .value
        .into_iter()
        .next()
        .ok_or_else(|| StoreError::internal("nothing rendered"))?;
    Ok(WithUsers {
        value,
        users: found.users,
    })
}

/// A new change request: its subject (checked already), its first status (draft or open), and
/// what it comes from.
#[derive(Clone, Debug, Default)]
pub struct NewChangeRequest {
    pub subject: String,
    pub status: Option<Status>,
    pub agent_task_id: Option<String>,
    pub conversations_issues_cluster: Option<String>,
    pub template: Option<TemplateRequest>,
}

/// Creates a change request starting at the space's main revision, with a template's pages
/// when one is given.
pub fn create(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: &Authorized<SpaceFor, space::Edit>,
    caller: &str,
    new: &NewChangeRequest,
) -> StoreResult<WithUsers<ChangeRequest>> {
    let space_id = &space.space.id;
    let status = new.status.unwrap_or(Status::Draft);
    if let Some(cluster) = &new.conversations_issues_cluster {
        crate::conversations::check_reference(c, &space.space.org_id, cluster)?;
    }
    let base = space
        .space
        .revision
        .clone()
        .ok_or_else(|| StoreError::internal("the space has no content revision"))?;
    let number: i64 = c
        .query_scalar(
            "UPDATE spaces SET change_request_seq = change_request_seq + 1 WHERE id = ?1 RETURNING change_request_seq",
            params![space_id.clone()],
        )?
        .ok_or_else(|| spaces::not_found(space_id))?;
    let id = ids::new_id();
    let now = clock::now_ms();
    c.execute(
        "INSERT INTO change_requests (id, space_id, number, status, subject, created_by, created_at, updated_at,
                                      revision_initial, revision, agent_task_id, conversations_issues_cluster)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?8, ?9, ?10)",
        params![
            id.clone(),
            space_id.clone(),
            number,
            status,
            new.subject.clone(),
            caller,
            now,
            base,
            new.agent_task_id.clone(),
            new.conversations_issues_cluster.clone()
        ],
    )?;
    if let Some(template) = &new.template {
        let cr = model::load(c, space_id, &id)?;
        write_template(c, cache, &cr, template, caller)?;
    }
    let payload = events::ChangeRequestCreated {
        space_id,
        change_request_id: &id,
        number,
        status,
        revision_initial: space.space.revision.as_deref(),
    };
    let org = &space.space.org_id;
    let event = Event::in_space(org, space_id, &id, Some(caller), payload);
    events::record(c, event)?;
    let cr = model::load(c, space_id, &id)?;
    one_with_users(c, cr)
}

/// A change request of a space the caller can see, with the users it names.
pub fn get(c: &mut dyn Conn, space: &SpaceFor, cr_id: &str) -> StoreResult<WithUsers<ChangeRequest>> {
    let cr = model::load(c, &space.space.id, cr_id)?;
    one_with_users(c, cr)
}

/// The changes of an update of a change request, checked already (absent: unchanged).
#[derive(Clone, Debug, Default)]
pub struct Changes {
    pub subject: Option<String>,
    /// Never `merged`.
    pub status: Option<Status>,
    /// The description as stored (a JSON document's text); Some(None) removes it.
    pub description: Option<Option<String>>,
    /// The conversations issues cluster referenced; Some(None) removes the reference.
    pub issues_cluster: Option<Option<String>>,
}

/// Changes a change request's subject, description or status (not a content change, so
/// allowed on locked spaces too, to callers who may edit); a merged one no longer changes.
pub fn update(
    c: &mut dyn Conn,
    space: &SpaceFor,
    caller: &str,
    cr_id: &str,
    changes: &Changes,
) -> StoreResult<WithUsers<ChangeRequest>> {
    let space_id = &space.space.id;
    // Changing a change request's subject or status is not a content change, so it is
    // allowed on locked spaces too.
    if space.role < Some(Role::Edit) {
        return Err(crate::permissions::role_forbidden(
            "changing a change request",
            Role::Edit,
            &format!("on space {space_id:?}"),
            space.role,
        ));
    }
    let cr = model::load(c, space_id, cr_id)?;
    if cr.status == Status::Merged {
        return Err(StoreError::conflict(format!(
            "change request #{} is merged and can no longer change",
            cr.number
        )));
    }
    let subject = changes.subject.clone().unwrap_or(cr.subject.clone());
    let status = changes.status.unwrap_or(cr.status);
    let description = changes.description.clone().unwrap_or(cr.description.clone());
    let cluster = changes
        .issues_cluster
        .clone()
        .unwrap_or(cr.issues_cluster.clone());
    if let Some(Some(id)) = &changes.issues_cluster {
        crate::conversations::check_reference(c, &space.space.org_id, id)?;
    }
    c.execute(
        "UPDATE change_requests SET subject = ?2, status = ?3, description = ?4, updated_at = ?5,
                conversations_issues_cluster = ?6
         WHERE id = ?1",
        params![
            cr.id.clone(),
            subject,
            status,
            description,
            clock::now_ms(),
            cluster
        ],
    )?;
    if status != cr.status {
        let payload = events::ChangeRequestStatusUpdated {
            space_id,
            change_request_id: &cr.id,
            number: cr.number,
            status,
            previous_status: cr.status,
        };
        let org = &space.space.org_id;
        let event = Event::in_space(org, space_id, &cr.id, Some(caller), payload);
        events::record(c, event)?;
    }
    let cr = model::load(c, space_id, &cr.id)?;
    one_with_users(c, cr)
}

/// Loads a change request for writing, locked against concurrent writers on PostgreSQL, and
/// refuses merged and archived ones.
pub fn lock(c: &mut dyn Conn, space_id: &str, cr_id: &str) -> StoreResult<ChangeRequest> {
    let cr = model::load(c, space_id, cr_id)?;
    let lock = format!("SELECT id FROM change_requests WHERE id = ?1{}", for_update(c));
    c.query(&lock, params![cr.id.clone()])?;
    // Read again under the lock: another writer may have moved it meanwhile.
    writable(model::load(c, space_id, &cr.id)?)
}

/// The change request, unless it is merged or archived (409).
pub fn writable(cr: ChangeRequest) -> StoreResult<ChangeRequest> {
    if !cr.is_writable() {
        return Err(StoreError::conflict(format!(
            "change request #{} is {}: its content can no longer change",
            cr.number, cr.status
        )));
    }
    Ok(cr)
}

/// Applies a template as a new revision of a writable change request of the space.
pub fn apply_template(
    c: &mut dyn Conn,
    cache: &ContentCache,
    space: &Authorized<SpaceFor, space::Edit>,
    cr_id: &str,
    template: &TemplateRequest,
    user_id: &str,
) -> StoreResult<()> {
    let cr = lock(c, &space.space.id, cr_id)?;
    write_template(c, cache, &cr, template, user_id)
}

fn write_template(
    c: &mut dyn Conn,
    cache: &ContentCache,
    cr: &ChangeRequest,
    template: &TemplateRequest,
    user_id: &str,
) -> StoreResult<()> {
    let written = templates::write_for_change_request(
        c,
        cache,
        &cr.space_id,
        (&cr.id, &cr.revision),
        template,
        user_id,
    )?;
    c.execute(
        "UPDATE change_requests SET revision = ?2, updated_at = ?3 WHERE id = ?1",
        params![cr.id.clone(), written.id(), clock::now_ms()],
    )?;
    contributors::record(c, &cr.id, user_id)
}
