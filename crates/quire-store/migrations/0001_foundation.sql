-- Foundation: users, tokens, organizations, members, teams, invites, jobs.
-- Portable between SQLite and PostgreSQL: TEXT, BIGINT (timestamps are Unix milliseconds,
-- booleans 0/1), JSON kept as TEXT.

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE users (
    id TEXT PRIMARY KEY,
    email TEXT NOT NULL UNIQUE,
    display_name TEXT NOT NULL,
    photo_url TEXT,
    -- Lowercased, accent-folded display name and email, for member search on both engines.
    search_text TEXT NOT NULL DEFAULT '',
    email_verified BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    secret_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL DEFAULT '',
    label TEXT,
    created_at BIGINT NOT NULL,
    expires_at BIGINT
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    type TEXT NOT NULL DEFAULT 'business',
    use_case TEXT,
    community_type TEXT,
    email_domains TEXT NOT NULL DEFAULT '[]',
    hostname TEXT UNIQUE,
    custom_hostname TEXT,
    default_role TEXT,
    default_content_site TEXT,
    sso BIGINT NOT NULL DEFAULT 0,
    ai BIGINT NOT NULL DEFAULT 0,
    invite_links BIGINT NOT NULL DEFAULT 1,
    logo_url TEXT,
    merge_rules TEXT NOT NULL DEFAULT '{"type":"none"}',
    agent_instructions TEXT,
    agent_instructions_updated_at BIGINT,
    agent_instructions_updated_by TEXT
);

-- The lookup side of organizations.email_domains (kept in the same transaction).
CREATE TABLE organization_email_domains (
    domain TEXT NOT NULL,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    PRIMARY KEY (domain, organization_id)
);

CREATE TABLE members (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT,
    disabled BIGINT NOT NULL DEFAULT 0,
    sso BIGINT NOT NULL DEFAULT 0,
    joined_at BIGINT NOT NULL,
    last_seen_at BIGINT,
    PRIMARY KEY (organization_id, user_id)
);
CREATE INDEX members_user ON members (user_id, joined_at);
CREATE INDEX members_joined ON members (organization_id, joined_at, user_id);
CREATE INDEX members_seen ON members (organization_id, last_seen_at, user_id);

CREATE TABLE teams (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    -- Lowercased, accent-folded title, for the case-insensitive title filter on both engines.
    search_title TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX teams_org ON teams (organization_id, created_at, id);

CREATE TABLE team_members (
    team_id TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role TEXT NOT NULL DEFAULT 'member',
    added_at BIGINT NOT NULL,
    PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user ON team_members (user_id);

CREATE TABLE invite_links (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    -- organization, space or collection; target_id names the space or collection.
    target_kind TEXT NOT NULL DEFAULT 'organization',
    target_id TEXT,
    role TEXT,
    created_by TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX invite_links_org ON invite_links (organization_id, created_at, id);

-- Docs sites: only what organization settings refer to for now.
CREATE TABLE sites (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX sites_org ON sites (organization_id, created_at, id);

-- Durable background work: leased, retried with backoff, shared by every process.
CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    dedupe_key TEXT UNIQUE,
    run_at BIGINT NOT NULL,
    lease_until BIGINT,
    attempts BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX jobs_due ON jobs (run_at);
