-- Docs sites (issue 20): the site's settings on its row, its sections, section groups and site
-- spaces with their order keys (fractional, as `siblings`), share links and redirects.
-- Portable between SQLite and PostgreSQL: TEXT, BIGINT (Unix ms, booleans 0/1), JSON as TEXT.

ALTER TABLE sites ADD COLUMN type TEXT NOT NULL DEFAULT 'basic';
ALTER TABLE sites ADD COLUMN visibility TEXT NOT NULL DEFAULT 'public';
ALTER TABLE sites ADD COLUMN published BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN hostname TEXT;
ALTER TABLE sites ADD COLUMN basename TEXT;
ALTER TABLE sites ADD COLUMN proxy TEXT;
ALTER TABLE sites ADD COLUMN adaptive_enabled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sites ADD COLUMN agents_context TEXT NOT NULL DEFAULT 'included';
-- The default section, and the default site space of the root (a site without sections).
ALTER TABLE sites ADD COLUMN default_section_id TEXT;
ALTER TABLE sites ADD COLUMN default_site_space_id TEXT;
-- The adaptive schema as given (JSON), validated by quire-adaptive before it is stored.
ALTER TABLE sites ADD COLUMN adaptive_schema TEXT;
ALTER TABLE sites ADD COLUMN adaptive_schema_updated_at BIGINT;
-- The HS256 key visitor tokens are signed with (visitor-auth), rotated by regenerate.
ALTER TABLE sites ADD COLUMN visitor_key TEXT NOT NULL DEFAULT '';
ALTER TABLE sites ADD COLUMN customization TEXT;
ALTER TABLE sites ADD COLUMN customization_updated_at BIGINT;
ALTER TABLE sites ADD COLUMN updated_at BIGINT NOT NULL DEFAULT 0;

-- Sections and section groups share one order per parent (a group, or the root when NULL).
CREATE TABLE site_section_groups (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    parent_id TEXT,
    title TEXT NOT NULL,
    icon TEXT,
    position TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX site_section_groups_site ON site_section_groups (site_id);

CREATE TABLE site_sections (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    group_id TEXT,
    title TEXT NOT NULL,
    description TEXT,
    path TEXT NOT NULL,
    icon TEXT,
    condition TEXT,
    default_site_space_id TEXT,
    position TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX site_sections_site ON site_sections (site_id);

-- A space shown by a site, in a section or at the root (section_id NULL).
CREATE TABLE site_spaces (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    section_id TEXT,
    space_id TEXT NOT NULL,
    path TEXT NOT NULL,
    condition TEXT,
    customization TEXT,
    customization_updated_at BIGINT,
    position TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX site_spaces_site ON site_spaces (site_id);
CREATE INDEX site_spaces_space ON site_spaces (space_id);

-- A share link's key is its secret: whoever has it reads a share-link site.
CREATE TABLE site_share_links (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    share_key TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL DEFAULT '',
    active BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL
);
CREATE INDEX site_share_links_site ON site_share_links (site_id, created_at, id);

CREATE TABLE site_redirects (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    destination TEXT NOT NULL,
    permanent BIGINT NOT NULL DEFAULT 0,
    capture_wildcard BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT,
    UNIQUE (site_id, source)
);
