-- PDF exports (`pdf`): one row per revision, starting page, `only` and typesetting version,
-- which the export job typesets once and every later request reuses while it is kept.
CREATE TABLE pdf_exports (
    id TEXT PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    revision_id TEXT NOT NULL,
    -- The page the PDF starts at; '' for the whole space.
    page_id TEXT NOT NULL,
    -- 1 when only that page is typeset, not its children.
    only_page BIGINT NOT NULL,
    -- The version of the typesetting (`pdf::TYPESETTING`): a newer one typesets again.
    typesetting BIGINT NOT NULL,
    -- The change request the revision is of (NULL: main), for the PDF's name.
    change_request_id TEXT,
    -- 'pending', 'ready' or 'failed'.
    state TEXT NOT NULL,
    -- The PDF's bytes in the space's blobs (ready).
    hash TEXT,
    size BIGINT,
    pages BIGINT,
    -- Why the content could not be typeset (failed).
    error TEXT,
    created_at BIGINT NOT NULL,
    -- The last request for it: exports nobody asked for in the retention are removed.
    requested_at BIGINT NOT NULL,
    finished_at BIGINT,
    UNIQUE (space_id, revision_id, page_id, only_page, typesetting)
);
CREATE INDEX pdf_exports_by_request ON pdf_exports (requested_at);
