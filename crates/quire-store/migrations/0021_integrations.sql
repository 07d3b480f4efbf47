-- Integrations (issue 42): published integrations, their installations on organizations, the
-- spaces and sites an installation is enabled on, and the events delivered to them.
-- Portable between SQLite and PostgreSQL: TEXT, BIGINT (Unix ms, booleans 0/1), JSON as TEXT.

-- An integration is named globally (`name`) and owned by one organization. `definition` holds
-- what quire stores and answers but never queries (blocks, content sources, configurations,
-- external links, the content security policy) as JSON. `secrets` and `signing_secret` are
-- sealed with the key of `QUIRE_SECRETS_KEY` (integrations::secrets); `icon`, `preview_images`
-- and `script` are hashes of blobs stored under the integration (`integration-<id>`).
-- The dev tunnel and the webhook each keep when they started failing and when they were
-- disabled for failing a day (integrations::delivery).
CREATE TABLE integrations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    version BIGINT NOT NULL,
    runtime TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    summary TEXT,
    visibility TEXT NOT NULL,
    target TEXT NOT NULL,
    scopes TEXT NOT NULL,
    categories TEXT NOT NULL,
    has_blocks BIGINT NOT NULL,
    has_content_sources BIGINT NOT NULL,
    block_domains TEXT NOT NULL,
    definition TEXT NOT NULL,
    icon TEXT,
    preview_images TEXT NOT NULL,
    script TEXT NOT NULL,
    secrets TEXT,
    signing_secret TEXT NOT NULL,
    webhook_url TEXT,
    webhook_failing_since BIGINT,
    webhook_disabled_at BIGINT,
    dev_tunnel_url TEXT,
    dev_all BIGINT NOT NULL,
    dev_failing_since BIGINT,
    dev_disabled_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE INDEX integrations_by_owner ON integrations (organization_id);
CREATE INDEX integrations_by_creation ON integrations (created_at, id);

-- One installation per integration and organization.
CREATE TABLE integration_installations (
    id TEXT PRIMARY KEY,
    integration_id TEXT NOT NULL REFERENCES integrations (id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    space_selection TEXT NOT NULL,
    site_selection TEXT NOT NULL,
    configuration TEXT NOT NULL,
    external_ids TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (integration_id, organization_id)
);

CREATE INDEX integration_installations_by_integration
    ON integration_installations (integration_id, created_at, id);
CREATE INDEX integration_installations_by_org ON integration_installations (organization_id);

CREATE TABLE integration_space_installations (
    installation_id TEXT NOT NULL REFERENCES integration_installations (id) ON DELETE CASCADE,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    configuration TEXT NOT NULL,
    external_ids TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (installation_id, space_id)
);

CREATE INDEX integration_space_installations_by_space ON integration_space_installations (space_id);
CREATE INDEX integration_space_installations_by_creation
    ON integration_space_installations (installation_id, created_at, space_id);

CREATE TABLE integration_site_installations (
    installation_id TEXT NOT NULL REFERENCES integration_installations (id) ON DELETE CASCADE,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    status TEXT NOT NULL,
    configuration TEXT NOT NULL,
    external_ids TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (installation_id, site_id)
);

CREATE INDEX integration_site_installations_by_site ON integration_site_installations (site_id);
CREATE INDEX integration_site_installations_by_creation
    ON integration_site_installations (installation_id, created_at, site_id);

-- An event for one installation of an integration, made from an outbox row (`source_id`, the
-- outbox event's id: fanning out twice makes no second event) or by an installation change.
-- `status`: pending until delivered (success) or given up (failed). `attempts` counts the
-- deliveries tried. No foreign keys: events outlive uninstalls, as their trace is the record.
CREATE TABLE integration_events (
    id TEXT PRIMARY KEY,
    integration_id TEXT NOT NULL,
    installation_id TEXT,
    organization_id TEXT NOT NULL,
    source_id TEXT,
    type TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    completed_at BIGINT,
    UNIQUE (source_id, installation_id)
);

CREATE INDEX integration_events_by_integration ON integration_events (integration_id, created_at, id);

-- An event's trace: one line per step of its delivery, in order.
CREATE TABLE integration_event_logs (
    event_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    timestamp BIGINT NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (event_id, seq)
);

-- The outbox's consumer: an event is fanned out to integrations once (`dispatched_at`). What
-- was recorded before integrations existed has nobody to go to.
ALTER TABLE events ADD COLUMN dispatched_at BIGINT;
UPDATE events SET dispatched_at = created_at;
CREATE INDEX events_undispatched ON events (seq) WHERE dispatched_at IS NULL;
