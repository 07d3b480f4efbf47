-- The counts a space shows move off the space row (issue 30). Migration 0006 kept them on it,
-- updated by triggers: every comment or change request written locked its space's row until
-- commit, so the writers of one space queued behind each other's commits (402 comments/s on
-- one space against 1,301/s on sixteen), and the row, locked for keys by every insert's
-- foreign key check while the trigger updated it, filled with multixacts that every later
-- read of the space had to resolve (search fell from 6,155 to 2,366 requests/s after a burst).
--
-- Now each space has up to 16 rows of deltas, one per shard; a write adds to the shard of its
-- database session (pg_backend_pid() % 16), so concurrent writers rarely meet on a row, and
-- nothing locks the space row. A read sums the space's shards, an index range read of at most
-- 16 rows. The table has no foreign key to spaces: one would lock the space row again. Its
-- rows go with their space when the space is purged (spaces::lifecycle). SQLite keeps the same
-- table with one shard (it has one writer at a time), so both engines read counts the same way.

CREATE TABLE space_counts (
    space_id TEXT NOT NULL,
    shard SMALLINT NOT NULL,
    open_comments BIGINT NOT NULL DEFAULT 0,
    comments_total BIGINT NOT NULL DEFAULT 0,
    change_requests_total BIGINT NOT NULL DEFAULT 0,
    change_requests_open BIGINT NOT NULL DEFAULT 0,
    change_requests_draft BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (space_id, shard)
);

INSERT INTO space_counts (space_id, shard, open_comments, comments_total, change_requests_total,
                          change_requests_open, change_requests_draft)
SELECT id, 0, open_comments, comments_total, change_requests_total, change_requests_open,
       change_requests_draft
FROM spaces
WHERE open_comments <> 0 OR comments_total <> 0 OR change_requests_total <> 0;

CREATE FUNCTION quire_count_space(space TEXT, open_comments BIGINT, comments_total BIGINT,
                                  change_requests_total BIGINT, change_requests_open BIGINT,
                                  change_requests_draft BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO space_counts AS c (space_id, shard, open_comments, comments_total,
                                   change_requests_total, change_requests_open, change_requests_draft)
    VALUES (space, pg_backend_pid() % 16, open_comments, comments_total, change_requests_total,
            change_requests_open, change_requests_draft)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = c.open_comments + EXCLUDED.open_comments,
        comments_total = c.comments_total + EXCLUDED.comments_total,
        change_requests_total = c.change_requests_total + EXCLUDED.change_requests_total,
        change_requests_open = c.change_requests_open + EXCLUDED.change_requests_open,
        change_requests_draft = c.change_requests_draft + EXCLUDED.change_requests_draft;
$$;

CREATE OR REPLACE FUNCTION quire_count_comments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.change_request_id IS NULL THEN
        PERFORM quire_count_space(OLD.space_id, -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END), -1, 0, 0, 0);
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.change_request_id IS NULL THEN
        PERFORM quire_count_space(NEW.space_id, CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END, 1, 0, 0, 0);
    END IF;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION quire_count_change_requests() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM quire_count_space(OLD.space_id, 0, 0, -1,
                                  -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END),
                                  -(CASE WHEN OLD.status = 'draft' THEN 1 ELSE 0 END));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM quire_count_space(NEW.space_id, 0, 0, 1,
                                  CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END,
                                  CASE WHEN NEW.status = 'draft' THEN 1 ELSE 0 END);
    END IF;
    RETURN NULL;
END
$$;

ALTER TABLE spaces
    DROP COLUMN open_comments,
    DROP COLUMN comments_total,
    DROP COLUMN change_requests_total,
    DROP COLUMN change_requests_open,
    DROP COLUMN change_requests_draft;
