-- GitBook's external links: items of a site's structure beside its sections and section groups
-- (at the root, or in a group) that open a URL outside the site.
CREATE TABLE site_external_links (
    id TEXT PRIMARY KEY,
    site_id TEXT NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    group_id TEXT,
    title TEXT NOT NULL,
    description TEXT,
    icon TEXT,
    url TEXT NOT NULL,
    condition TEXT,
    draft BIGINT NOT NULL DEFAULT 0,
    position TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX site_external_links_site ON site_external_links (site_id);
