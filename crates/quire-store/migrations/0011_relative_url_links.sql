-- A link kept as a relative path (`../nope.md`, a target an import could not resolve) is now a
-- broken link, where it was indexed as an external URL with status ok. Spaces with URL links are
-- indexed again at start (`content::derived::catch_up`), which sets their `broken` flags anew.
DELETE FROM content_indexes WHERE space_id IN (SELECT DISTINCT space_id FROM link_refs WHERE kind = 'url');
