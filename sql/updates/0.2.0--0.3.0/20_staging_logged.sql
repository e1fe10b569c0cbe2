-- The staging table becomes a logged table, emptied by DELETE (issue 24):
-- PostgreSQL 15 cannot recover from a crash that follows an unlogged
-- table's TRUNCATE rolled back ("could not create file ...: File exists"),
-- and 0.2.0 truncated this one after each staged import.  Lines staged and
-- not yet imported are kept (sql/20_catalog.sql).
ALTER TABLE kbench_import_staging SET LOGGED;
