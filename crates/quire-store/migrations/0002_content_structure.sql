-- Collections, spaces and the access grants on them.

CREATE TABLE collections (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    parent_id TEXT REFERENCES collections (id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    description TEXT,
    -- 'inherit', a role, or NULL (members get no access by default).
    default_level TEXT DEFAULT 'inherit',
    -- Fractional order key among the siblings (spaces and collections) of one parent.
    position TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX collections_org ON collections (organization_id, created_at, id);
CREATE INDEX collections_parent ON collections (organization_id, parent_id, position);

CREATE TABLE spaces (
    id TEXT PRIMARY KEY,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    parent_id TEXT REFERENCES collections (id) ON DELETE SET NULL,
    title TEXT NOT NULL,
    emoji TEXT,
    icon_url TEXT,
    visibility TEXT NOT NULL DEFAULT 'private',
    edit_mode TEXT NOT NULL DEFAULT 'live',
    language TEXT,
    default_level TEXT DEFAULT 'inherit',
    merge_rules TEXT NOT NULL DEFAULT '{"type":"inherit"}',
    position TEXT NOT NULL,
    revision_id TEXT,
    change_request_seq BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    deleted_at BIGINT
);
CREATE INDEX spaces_org ON spaces (organization_id, deleted_at, created_at, id);
CREATE INDEX spaces_parent ON spaces (parent_id, deleted_at, position);

-- Access granted to a user or a team on a space or a collection.
CREATE TABLE grants (
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    target_kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    user_id TEXT REFERENCES users (id) ON DELETE CASCADE,
    team_id TEXT REFERENCES teams (id) ON DELETE CASCADE,
    role TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (target_id, user_id),
    UNIQUE (target_id, team_id)
);
CREATE INDEX grants_user ON grants (user_id, organization_id);
CREATE INDEX grants_team ON grants (team_id);
