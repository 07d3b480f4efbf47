-- The redirects a space's import declared (`.gitbook.yaml` `redirects`, issue 40): an old path
-- below the space's place in a site (normalized by quire_content::import_redirects) and the
-- page imported from the file it named. Kept with the space, so they apply in whichever site
-- shows it, after the site's own redirects; an import replaces the space's set. One lookup per
-- request that finds no page: by the primary key.
CREATE TABLE space_import_redirects (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    page_id TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (space_id, source)
);
