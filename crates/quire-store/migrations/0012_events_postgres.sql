-- The event outbox: what changed that a reader or an integration cares about, one row per
-- event, written in the transaction of the change itself (see src/events.rs). Nothing reads it
-- yet; event delivery will.
--
-- No foreign keys: an event outlives what it names (a purged space, a removed member), and a
-- foreign key would make every event share-lock its organization's row, the hot parent row
-- the "no hot rows" rule warns about (pgbench: ~10,200 inserts/s, ~850/s with a parent update).

CREATE TABLE events (
    -- The order events were recorded in, and a consumer's cursor. An identity column draws
    -- from a sequence, which needs no lock: concurrent writers never wait on a counter row.
    -- Numbers are drawn before commit, so an event may become visible after one with a larger
    -- number: a consumer must read behind the oldest transaction still running (see
    -- docs/decisions/0018-event-outbox.md).
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- The event's public identifier (random, like every id quire shows).
    id TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL,
    -- The space the event is about; NULL for organization events (members).
    space_id TEXT,
    -- space_created, space_content_updated, change_request_merged, ... (events::Kind)
    kind TEXT NOT NULL,
    -- The id of what the event is about: a space, change request, comment, reply or user.
    subject_id TEXT NOT NULL,
    -- The user who did it; NULL for the command line (`quire admin import`).
    actor_id TEXT,
    -- JSON: the ids a consumer needs without reading anything else.
    payload TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
-- An organization's events in order (delivery reads them per organization from a cursor).
CREATE INDEX events_org ON events (organization_id, seq);
