-- OpenAPI specifications of an organization (issue 41) and the versions processing stored. A
-- specification is named by its slug in its organization. Its source is a URL fetched by the
-- `openapi_process` job, or a text given with the request (`source_text`). `generation` moves
-- on every new source, so that a job still running on the old one drops its result.
-- A version keeps the entry file's text as given (`raw_text`) and the processed filesystem
-- (GitBook's array of files, as JSON); `content_hash` is the hash of every file's text, so a
-- refresh that fetched the same bytes stores nothing.
CREATE TABLE openapi_specs (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    slug TEXT NOT NULL,
    source_url TEXT,
    source_text TEXT,
    visibility TEXT NOT NULL,
    processing_state TEXT NOT NULL,
    generation BIGINT NOT NULL,
    last_version_id TEXT,
    last_processed_at BIGINT,
    last_error_code TEXT,
    last_errors TEXT,
    last_error_count BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (organization_id, slug)
);

CREATE INDEX openapi_specs_by_org ON openapi_specs (organization_id, created_at, id);

CREATE TABLE openapi_spec_versions (
    id TEXT PRIMARY KEY,
    spec_id TEXT NOT NULL REFERENCES openapi_specs (id) ON DELETE CASCADE,
    url TEXT,
    content_hash TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    raw_format TEXT NOT NULL,
    filesystem TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX openapi_spec_versions_by_spec ON openapi_spec_versions (spec_id, created_at, id);

-- Which spaces' main content has computed pages generated from which specification (by slug,
-- as the page names it): kept with main by `main_revision::main_changed`, read when a
-- specification gets a new version, to generate those spaces' pages again.
CREATE TABLE openapi_computed_pages (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    spec_slug TEXT NOT NULL,
    PRIMARY KEY (space_id, spec_slug)
);

CREATE INDEX openapi_computed_pages_by_spec ON openapi_computed_pages (organization_id, spec_slug);
