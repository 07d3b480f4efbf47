-- File bytes: which blobs each space stores (for storage quotas and for collecting bytes that
-- nothing references), and which revisions introduced a reference to them.

CREATE TABLE file_blobs (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    size BIGINT NOT NULL,
    -- The last upload of these bytes, or the last batch that committed a reference to them
    -- (Unix ms): collection waits the file retention after it.
    touched_at BIGINT NOT NULL,
    -- 1 once a revision of main or of a merged change request references them: those revisions
    -- stay forever, so the bytes are never collected and never checked again.
    pinned BIGINT NOT NULL DEFAULT 0,
    -- Set while a collection removes the bytes: uploads of the same bytes are refused until it
    -- has finished, so that they never race the deletion.
    collecting_at BIGINT,
    PRIMARY KEY (space_id, hash)
);
CREATE INDEX file_blobs_unpinned ON file_blobs (pinned, touched_at);

-- A revision that introduced a file hash (one its base revision did not have). Every file of a
-- revision was introduced by it or by a revision it derives from, of main or of its own change
-- request, so a hash is referenced by a reachable revision when one of these rows is.
CREATE TABLE file_refs (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    revision_id TEXT NOT NULL,
    -- The revision's change request; NULL on main.
    change_request_id TEXT,
    PRIMARY KEY (space_id, hash, revision_id)
);

-- A database without revisions has nothing to index; others are indexed by the first
-- collection (see file_blobs::backfill).
INSERT INTO settings (key, value) SELECT 'file_refs_complete', '1' WHERE NOT EXISTS (SELECT 1 FROM revisions);
