-- Full-text search over the current content of each space, and the links of that content. Both
-- derive from the space's main revision and are rewritten, page by page, in the transaction that
-- moves main (src/content/derived.rs), so they are never stale and every process sees the same.

-- Which revision of a space the derived tables describe.
CREATE TABLE content_indexes (
    space_id TEXT PRIMARY KEY REFERENCES spaces (id) ON DELETE CASCADE,
    revision_id TEXT NOT NULL
);

-- The pages of each space that search shows, each with a number: the rows of a page's
-- sections are numbered `key * 1024 + position`, so ranking groups matches by page from the
-- index alone, without reading a row per match.
CREATE TABLE search_pages (
    key INTEGER PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    page_id TEXT NOT NULL,
    UNIQUE (space_id, page_id)
);

-- What search shows of a hit: the page's own fields (position 0: title and description) and
-- each section of its document (positions 1 to 1023: heading and text).
CREATE TABLE search_sections (
    id INTEGER PRIMARY KEY,
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    anchor TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX search_sections_space ON search_sections (space_id);

-- The index, keyed by the rowid of search_sections. It holds the folded text
-- (quire_content::search_text) and no copy of it; `space` is the lowercased space id, so a
-- search of one space only reads that space's rows.
CREATE VIRTUAL TABLE search_fts USING fts5 (
    space, title, body,
    content = '',
    contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER search_sections_unindex AFTER DELETE ON search_sections BEGIN
    DELETE FROM search_fts WHERE rowid = old.id;
END;

-- The outgoing references of each page of main: one row per page and distinct target.
CREATE TABLE link_refs (
    space_id TEXT NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    page_id TEXT NOT NULL,
    -- Identifies the target (`page:<id>`, `anchor:<page>#<anchor>`, `file:<id>`, `url:<url>`,
    -- with `@<space>` for another space): the sort and grouping key of link lists.
    target_key TEXT NOT NULL,
    -- page, anchor, file or url.
    kind TEXT NOT NULL,
    -- Set when the reference names another space.
    target_space TEXT,
    -- The page (page and anchor references) or file referenced.
    target_id TEXT,
    anchor TEXT,
    url TEXT,
    -- 1 when the page embeds the target (images, files) rather than refers to it.
    depends INTEGER NOT NULL,
    -- 1 when the target is absent from the revision.
    broken INTEGER NOT NULL,
    PRIMARY KEY (space_id, page_id, target_key)
);
CREATE INDEX link_refs_target ON link_refs (space_id, target_key);
CREATE INDEX link_refs_target_id ON link_refs (space_id, target_id, page_id);
