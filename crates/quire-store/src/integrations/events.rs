//! Integration events: one row per event and installation, with its delivery's status and its
//! trace, one log line per step. Made by the fan-out of the outbox (`fanout`) and by
//! installation changes (`installation_setup`, ...); delivered by the `integration_deliver`
//! job (`delivery`), which every event gets when it is made, in the same transaction.

use serde_json::{Map, Value as Json};

use super::model::{EventStatus, IntegrationFor};
use crate::db::{Args, Conn, DbError, Row};
use crate::error::{StoreError, StoreResult};
use crate::paging::{List, Page, Paging};
use crate::permissions::{Authorized, integration};
use crate::{clock, ids, params};

/// An event to make: its type and the fields of its payload besides `eventId`, `type` and
/// `installationId`.
#[derive(Clone, Debug)]
pub struct NewEvent<'a> {
    pub integration_id: &'a str,
    pub installation_id: Option<&'a str>,
    pub organization_id: &'a str,
    /// The outbox event it comes from: an event is made once per source and installation.
    pub source_id: Option<&'a str>,
    pub kind: &'static str,
    pub fields: Map<String, Json>,
}

/// Makes an event and schedules its delivery; None when it exists already (the fan-out ran
/// twice over its source).
pub fn create(c: &mut dyn Conn, event: NewEvent<'_>) -> Result<Option<String>, DbError> {
    let id = ids::new_id();
    let mut payload = Map::new();
    payload.insert("eventId".into(), Json::String(id.clone()));
    payload.insert("type".into(), Json::String(event.kind.into()));
    if let Some(installation) = event.installation_id {
        payload.insert("installationId".into(), Json::String(installation.into()));
    }
    payload.extend(event.fields);
    let now = clock::now_ms();
    let inserted = c.execute(
        "INSERT INTO integration_events (id, integration_id, installation_id, organization_id, source_id,
             type, payload, status, attempts, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', 0, ?8)
         ON CONFLICT (source_id, installation_id) DO NOTHING",
        params![
            id.clone(),
            event.integration_id,
            event.installation_id,
            event.organization_id,
            event.source_id,
            event.kind,
            Json::Object(payload).to_string(),
            now
        ],
    )?;
    if inserted == 0 {
        return Ok(None);
    }
    log(c, &id, Level::Debug, &format!("{} event made", event.kind))?;
    super::delivery::schedule(c, &id, now)?;
    Ok(Some(id))
}

crate::wire_enum! {
    /// The level of a trace line (GitBook's `IntegrationEventLog.level`).
    pub enum Level {
        Debug = "debug",
        Info = "info",
        Warn = "warn",
        Error = "error",
    }
}

/// Appends a line to an event's trace.
pub fn log(c: &mut dyn Conn, event_id: &str, level: Level, message: &str) -> Result<(), DbError> {
    c.execute(
        "INSERT INTO integration_event_logs (event_id, seq, timestamp, level, message)
         VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM integration_event_logs WHERE event_id = ?1), ?2, ?3, ?4)",
        params![event_id, clock::now_ms(), level.as_str(), message],
    )?;
    Ok(())
}

/// An event as stored.
#[derive(Clone, Debug)]
pub struct Event {
    pub id: String,
    pub integration_id: String,
    pub installation_id: Option<String>,
    pub organization_id: String,
    pub kind: String,
    pub payload: Json,
    pub status: EventStatus,
    pub attempts: i64,
    pub created_at: i64,
}

crate::columns! {
    /// The columns [`Event::from_row`] reads, with the table aliased `e`.
    pub struct EventCols of "integration_events" {
        id: "e.id",
        integration_id: "e.integration_id",
        installation_id: "e.installation_id",
        organization_id: "e.organization_id",
        kind: "e.type",
        payload: "e.payload",
        status: "e.status",
        attempts: "e.attempts",
        created_at: "e.created_at",
    }
}

const E: EventCols = EventCols::AT;

impl Event {
    pub fn from_row(row: &Row) -> Result<Event, DbError> {
        Ok(Event {
            id: row.col(E.id)?,
            integration_id: row.col(E.integration_id)?,
            installation_id: row.col(E.installation_id)?,
            organization_id: row.col(E.organization_id)?,
            kind: row.col(E.kind)?,
            payload: row.col(E.payload)?,
            status: row.col(E.status)?,
            attempts: row.col(E.attempts)?,
            created_at: row.col(E.created_at)?,
        })
    }
}

/// Loads an event by id, whoever asks (delivery).
pub fn load(c: &mut dyn Conn, id: &str) -> Result<Option<Event>, DbError> {
    c.query_opt(
        &format!(
            "SELECT {} FROM integration_events e WHERE e.id = ?1",
            EventCols::SQL
        ),
        params![id],
    )?
    .map(|r| Event::from_row(&r))
    .transpose()
}

/// One line of a trace.
#[derive(Clone, Debug)]
pub struct LogLine {
    pub message: String,
    pub timestamp: i64,
    pub level: Level,
}

/// The integration's events, newest first.
pub fn list(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    paging: &Paging,
) -> StoreResult<List<Event>> {
    let page = Page::new(paging, format!("integration-events:{}", found.integration.id))?;
    let mut args = Args::default();
    let filter = format!(
        " WHERE e.integration_id = {}",
        args.arg(found.integration.id.clone())
    );
    let count: i64 = c
        .query_scalar(
            &format!("SELECT count(*) FROM integration_events e{filter}"),
            args.values(),
        )?
        .unwrap_or(0);
    let mut sql = format!("SELECT {} FROM integration_events e{filter}", EventCols::SQL);
    if let Some((created, id)) = page.after::<(i64, String)>()? {
        sql += &format!(
            " AND (e.created_at, e.id) < ({}, {})",
            args.arg(created),
            args.arg(id)
        );
    }
    sql += &format!(
        " ORDER BY e.created_at DESC, e.id DESC LIMIT {}",
        args.arg(page.fetch())
    );
    let events = c
        .query(&sql, args.values())?
        .iter()
        .map(Event::from_row)
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok(page.finish(events, u64::try_from(count).unwrap_or(0), |e| {
        (e.created_at, e.id.clone())
    }))
}

/// At most this many trace lines are answered (the oldest ones); an event has at most a line
/// or two per attempt, and attempts are bounded.
pub const TRACE_MAX: i64 = 500;

/// One of the integration's events with its trace; 404 when it is not the integration's.
pub fn get(
    c: &mut dyn Conn,
    found: &Authorized<IntegrationFor, integration::Admin>,
    event_id: &str,
) -> StoreResult<(Event, Vec<LogLine>)> {
    let event = load(c, event_id)?
        .filter(|e| e.integration_id == found.integration.id)
        .ok_or_else(|| StoreError::not_found(format!("event {event_id:?} not found")))?;
    let logs = c
        .query(
            "SELECT message, timestamp, level FROM integration_event_logs WHERE event_id = ?1
             ORDER BY seq LIMIT ?2",
            params![event_id, TRACE_MAX],
        )?
        .iter()
        .map(|r| {
            Ok(LogLine {
                message: r.get(0)?,
                timestamp: r.get(1)?,
                level: r.get(2)?,
            })
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    Ok((event, logs))
}
