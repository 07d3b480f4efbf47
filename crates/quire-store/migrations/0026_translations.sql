-- Translations (issue 46): a translated copy of a source space, kept in sync by runs of the
-- `translation_run` job. The target space is made by the first run, in the source's collection.
-- `run_seq` moves each time a run is asked for; a run records its result only while it is still
-- the latest asked for (`rerun`: asked while one was running, so that one goes again at its
-- end). `status` is pending, running, completed or failed (`error` says why).
CREATE TABLE translations (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    source_space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    source_language TEXT NOT NULL,
    language TEXT NOT NULL,
    instructions TEXT NOT NULL,
    target_space_id TEXT REFERENCES spaces (id) ON DELETE SET NULL,
    result_revision TEXT,
    status TEXT NOT NULL,
    error TEXT,
    rerun BIGINT NOT NULL DEFAULT 0,
    run_by TEXT,
    run_started_at BIGINT,
    -- Failed steps of the run under way, for its backoff.
    failures BIGINT NOT NULL DEFAULT 0,
    runs BIGINT NOT NULL DEFAULT 0,
    total_words BIGINT NOT NULL DEFAULT 0,
    total_pages BIGINT NOT NULL DEFAULT 0,
    total_duration_ms BIGINT NOT NULL DEFAULT 0,
    latest_duration_ms BIGINT NOT NULL DEFAULT 0,
    latest_pages BIGINT NOT NULL DEFAULT 0,
    latest_words BIGINT NOT NULL DEFAULT 0,
    latest_skipped BIGINT NOT NULL DEFAULT 0,
    latest_review TEXT NOT NULL DEFAULT '[]',
    -- Words sent to the translator by the run under way (they count once it completes).
    run_words BIGINT NOT NULL DEFAULT 0,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX translations_by_org ON translations (organization_id, created_at, id);
CREATE INDEX translations_by_source ON translations (source_space_id);
CREATE INDEX translations_by_target ON translations (target_space_id);

-- The pages a translation wrote: the source page's fingerprint when it was translated (a page
-- whose source fingerprint is unchanged is skipped), and the target page's as written (one that
-- differs now was edited by a person, and is not overwritten).
CREATE TABLE translation_pages (
    translation_id TEXT NOT NULL REFERENCES translations (id) ON DELETE CASCADE,
    page_id TEXT NOT NULL,
    source_fingerprint TEXT NOT NULL,
    target_fingerprint TEXT NOT NULL,
    PRIMARY KEY (translation_id, page_id)
);

-- The translation memory: each segment of source text translated (by the hash of its text),
-- so that a run sends the translator only what it has not translated yet, and a run cut short
-- goes on where it stopped. Kept to the segments the latest run used.
CREATE TABLE translation_segments (
    translation_id TEXT NOT NULL REFERENCES translations (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    translated TEXT NOT NULL,
    PRIMARY KEY (translation_id, hash)
);

-- The organization's glossary (GitBook's `GlossaryEntry`): a term in several languages
-- (`translations`, a JSON object of language code to term). A run gives the translator the
-- entries that have both its source and its target language.
CREATE TABLE translation_glossary (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    translations TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX translation_glossary_by_org ON translation_glossary (organization_id, created_at, id);
