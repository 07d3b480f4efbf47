-- PostgreSQL only (lz4 compression of stored documents); SQLite stores them as they are.
SELECT 1;
