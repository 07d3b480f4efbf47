-- Versioned content: content-addressed objects (page documents and tree buckets), revisions and
-- change requests. File bytes live in the object store, under their space.

CREATE TABLE objects (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (space_id, hash)
);

CREATE TABLE revisions (
    id TEXT PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    -- edits, merge, update or rollback (GitBook's revision types).
    kind TEXT NOT NULL,
    -- JSON array of parent revision ids.
    parents TEXT NOT NULL,
    -- The stored tree root (see quire_content::buckets).
    root TEXT NOT NULL,
    -- The change request this revision belongs to; NULL for main.
    change_request_id TEXT,
    -- Merge revisions: the change request merged.
    merged_from TEXT,
    created_by TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX revisions_space ON revisions (space_id, created_at);

CREATE TABLE change_requests (
    id TEXT PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    number BIGINT NOT NULL,
    status TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    description TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    revision_initial TEXT NOT NULL,
    revision TEXT NOT NULL,
    revision_merged_ancestor TEXT,
    revision_merged TEXT,
    merged_by TEXT,
    merged_at BIGINT,
    agent_task_id TEXT,
    -- JSON list of the conflicts left by an update, until resolved.
    conflicts TEXT,
    UNIQUE (space_id, number)
);
CREATE INDEX change_requests_space ON change_requests (space_id, status, number);
CREATE INDEX change_requests_creator ON change_requests (created_by);

-- Who wrote content in each change request, and when last.
CREATE TABLE change_request_contributors (
    change_request_id TEXT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL,
    first_at BIGINT NOT NULL,
    last_at BIGINT NOT NULL,
    edits BIGINT NOT NULL DEFAULT 1,
    PRIMARY KEY (change_request_id, user_id)
);
CREATE INDEX change_request_contributors_user ON change_request_contributors (user_id);
