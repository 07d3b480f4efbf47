-- The counts a space shows move off the space row into `space_counts`, as on PostgreSQL (see
-- 0013_space_counts_postgres.sql for why). SQLite has one writer at a time, so it needs no
-- shards: every write adds to shard 0. Both engines then read counts with the same SQL.

CREATE TABLE space_counts (
    space_id TEXT NOT NULL,
    shard INTEGER NOT NULL,
    open_comments INTEGER NOT NULL DEFAULT 0,
    comments_total INTEGER NOT NULL DEFAULT 0,
    change_requests_total INTEGER NOT NULL DEFAULT 0,
    change_requests_open INTEGER NOT NULL DEFAULT 0,
    change_requests_draft INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (space_id, shard)
) WITHOUT ROWID;

INSERT INTO space_counts (space_id, shard, open_comments, comments_total, change_requests_total,
                          change_requests_open, change_requests_draft)
SELECT id, 0, open_comments, comments_total, change_requests_total, change_requests_open,
       change_requests_draft
FROM spaces
WHERE open_comments <> 0 OR comments_total <> 0 OR change_requests_total <> 0;

DROP TRIGGER comments_count_insert;
DROP TRIGGER comments_count_delete;
DROP TRIGGER comments_count_update;
DROP TRIGGER change_requests_count_insert;
DROP TRIGGER change_requests_count_delete;
DROP TRIGGER change_requests_count_update;

CREATE TRIGGER comments_count_insert AFTER INSERT ON comments
WHEN NEW.change_request_id IS NULL
BEGIN
    INSERT INTO space_counts (space_id, shard, open_comments, comments_total)
    VALUES (NEW.space_id, 0, CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END, 1)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = open_comments + excluded.open_comments,
        comments_total = comments_total + excluded.comments_total;
END;

CREATE TRIGGER comments_count_delete AFTER DELETE ON comments
WHEN OLD.change_request_id IS NULL
BEGIN
    INSERT INTO space_counts (space_id, shard, open_comments, comments_total)
    VALUES (OLD.space_id, 0, -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END), -1)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = open_comments + excluded.open_comments,
        comments_total = comments_total + excluded.comments_total;
END;

CREATE TRIGGER comments_count_update AFTER UPDATE OF space_id, change_request_id, status ON comments
BEGIN
    INSERT INTO space_counts (space_id, shard, open_comments, comments_total)
    SELECT OLD.space_id, 0, -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END), -1
    WHERE OLD.change_request_id IS NULL
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = open_comments + excluded.open_comments,
        comments_total = comments_total + excluded.comments_total;
    INSERT INTO space_counts (space_id, shard, open_comments, comments_total)
    SELECT NEW.space_id, 0, CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END, 1
    WHERE NEW.change_request_id IS NULL
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = open_comments + excluded.open_comments,
        comments_total = comments_total + excluded.comments_total;
END;

CREATE TRIGGER change_requests_count_insert AFTER INSERT ON change_requests
BEGIN
    INSERT INTO space_counts (space_id, shard, change_requests_total, change_requests_open, change_requests_draft)
    VALUES (NEW.space_id, 0, 1, CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END,
            CASE WHEN NEW.status = 'draft' THEN 1 ELSE 0 END)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        change_requests_total = change_requests_total + excluded.change_requests_total,
        change_requests_open = change_requests_open + excluded.change_requests_open,
        change_requests_draft = change_requests_draft + excluded.change_requests_draft;
END;

CREATE TRIGGER change_requests_count_delete AFTER DELETE ON change_requests
BEGIN
    INSERT INTO space_counts (space_id, shard, change_requests_total, change_requests_open, change_requests_draft)
    VALUES (OLD.space_id, 0, -1, -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END),
            -(CASE WHEN OLD.status = 'draft' THEN 1 ELSE 0 END))
    ON CONFLICT (space_id, shard) DO UPDATE SET
        change_requests_total = change_requests_total + excluded.change_requests_total,
        change_requests_open = change_requests_open + excluded.change_requests_open,
        change_requests_draft = change_requests_draft + excluded.change_requests_draft;
END;

CREATE TRIGGER change_requests_count_update AFTER UPDATE OF space_id, status ON change_requests
BEGIN
    INSERT INTO space_counts (space_id, shard, change_requests_total, change_requests_open, change_requests_draft)
    VALUES (OLD.space_id, 0, -1, -(CASE WHEN OLD.status = 'open' THEN 1 ELSE 0 END),
            -(CASE WHEN OLD.status = 'draft' THEN 1 ELSE 0 END))
    ON CONFLICT (space_id, shard) DO UPDATE SET
        change_requests_total = change_requests_total + excluded.change_requests_total,
        change_requests_open = change_requests_open + excluded.change_requests_open,
        change_requests_draft = change_requests_draft + excluded.change_requests_draft;
    INSERT INTO space_counts (space_id, shard, change_requests_total, change_requests_open, change_requests_draft)
    VALUES (NEW.space_id, 0, 1, CASE WHEN NEW.status = 'open' THEN 1 ELSE 0 END,
            CASE WHEN NEW.status = 'draft' THEN 1 ELSE 0 END)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        change_requests_total = change_requests_total + excluded.change_requests_total,
        change_requests_open = change_requests_open + excluded.change_requests_open,
        change_requests_draft = change_requests_draft + excluded.change_requests_draft;
END;

ALTER TABLE spaces DROP COLUMN open_comments;
ALTER TABLE spaces DROP COLUMN comments_total;
ALTER TABLE spaces DROP COLUMN change_requests_total;
ALTER TABLE spaces DROP COLUMN change_requests_open;
ALTER TABLE spaces DROP COLUMN change_requests_draft;
