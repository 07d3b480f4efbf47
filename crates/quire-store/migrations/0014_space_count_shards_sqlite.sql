-- PostgreSQL only (see 0014_space_count_shards_postgres.sql): SQLite has one writer at a time
-- and one shard.
SELECT 1;
