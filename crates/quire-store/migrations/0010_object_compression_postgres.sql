-- Documents are stored as JSON text; PostgreSQL compresses large values (TOAST) with pglz by
-- default, which took 430 ms to store the 25 MB document of a page at the content limits, inside
-- the write transaction of a merge. lz4 takes 200 ms (about storing it uncompressed) and keeps
-- most of the saving (6.5 MB against pglz's 5.5 MB). Servers built without lz4 keep pglz.
-- Values already stored keep their compression until rewritten.
DO $$
BEGIN
    ALTER TABLE objects ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available: objects stay compressed with pglz';
END
$$;
