-- Conversations (issue 47): support conversations an organization ingests, the questions in them
-- that its documentation does not answer (issues), and those issues grouped by likeness
-- (clusters). `docs/conversations.md` describes the analysis and the clustering.

-- A conversation as last ingested, by the id its sender gave it. `version` moves at every
-- ingest: an analysis records its issues only for the version it read. `started_at` is the
-- conversation's own date (`metadata.createdAt`, else its first ingest), which the weekly
-- pulse of clusters counts by.
CREATE TABLE conversations (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    subject TEXT,
    source TEXT NOT NULL,
    source_url TEXT,
    attributes TEXT NOT NULL,
    parts TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    ingested_at BIGINT NOT NULL,
    processed_at BIGINT,
    version BIGINT NOT NULL,
    PRIMARY KEY (organization_id, id)
);
CREATE INDEX conversations_by_date ON conversations (organization_id, created_at, id);
CREATE INDEX conversations_by_source ON conversations (organization_id, source, created_at, id);

-- A question of a conversation that the documentation does not answer well. `question_key`
-- (its key terms) keeps an issue's id when the conversation is analysed again and still asks
-- it. `pages` are the closest pages found (JSON), `coverage` the best share of the question's
-- terms a section had, in percent.
CREATE TABLE conversation_issues (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    question_key TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    terms TEXT NOT NULL,
    pages TEXT NOT NULL,
    coverage BIGINT NOT NULL,
    cluster_id TEXT,
    created_at BIGINT NOT NULL,
    UNIQUE (organization_id, conversation_id, question_key)
);
CREATE INDEX conversation_issues_by_date ON conversation_issues (organization_id, created_at, id);
CREATE INDEX conversation_issues_by_cluster ON conversation_issues (cluster_id, created_at, id);

-- Issues grouped by likeness; recomputed from all of an organization's issues by the
-- `conversation_clusters` job, which keeps a cluster's id (and the status a docs team set) for
-- the group that holds most of its issues. `issues`, `conversations` and `sources` are counts
-- as of that job.
CREATE TABLE conversation_clusters (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    label TEXT NOT NULL,
    summary TEXT NOT NULL,
    icon TEXT NOT NULL,
    status TEXT NOT NULL,
    issues BIGINT NOT NULL,
    conversations BIGINT NOT NULL,
    sources TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX conversation_clusters_by_updated ON conversation_clusters (organization_id, updated_at, id);
CREATE INDEX conversation_clusters_by_created ON conversation_clusters (organization_id, created_at, id);
CREATE INDEX conversation_clusters_by_issues ON conversation_clusters (organization_id, issues, id);

-- The clustering runs of an organization: `started` numbers each run as it starts, `written`
-- is the number of the run whose groups are stored, so that a run that read older issues never
-- overwrites a newer one's.
CREATE TABLE conversation_clusterings (
    organization_id TEXT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    started BIGINT NOT NULL,
    written BIGINT NOT NULL
);
