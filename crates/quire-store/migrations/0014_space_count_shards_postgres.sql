-- A write adds to the counts shard of its connection (`quire.shard`, set by quire on each
-- pooled connection to a number no other connection of its pool has), instead of
-- pg_backend_pid() % 16: with 16 pooled connections, backend ids collided on about a third of
-- the shards, and two writers of one space on one shard wait for each other's commit. A
-- session without the setting (psql, another tool) falls back to its backend id.

CREATE OR REPLACE FUNCTION quire_count_space(space TEXT, open_comments BIGINT, comments_total BIGINT,
                                             change_requests_total BIGINT, change_requests_open BIGINT,
                                             change_requests_draft BIGINT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO space_counts AS c (space_id, shard, open_comments, comments_total,
                                   change_requests_total, change_requests_open, change_requests_draft)
    VALUES (space,
            COALESCE(NULLIF(current_setting('quire.shard', true), '')::int, pg_backend_pid()) % 16,
            open_comments, comments_total, change_requests_total, change_requests_open,
            change_requests_draft)
    ON CONFLICT (space_id, shard) DO UPDATE SET
        open_comments = c.open_comments + EXCLUDED.open_comments,
        comments_total = c.comments_total + EXCLUDED.comments_total,
        change_requests_total = c.change_requests_total + EXCLUDED.change_requests_total,
        change_requests_open = c.change_requests_open + EXCLUDED.change_requests_open,
        change_requests_draft = c.change_requests_draft + EXCLUDED.change_requests_draft;
$$;
