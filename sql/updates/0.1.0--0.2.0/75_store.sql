-- 0.2.0, the one ingest path (issue 11, items 3 and 4): the cohort index of
-- kbench_runs also orders each implementation's runs in time, so that the
-- alert checks (sql/50_continuous.sql) read a family's runs before and after
-- a landed one as ranges (sql/20_catalog.sql).
DROP INDEX kbench_runs_workload_digest_protocol_digest_environment_dig_idx;
CREATE INDEX ON kbench_runs (workload_digest, protocol_digest, environment_digest, implementation_digest, observed_at, digest);

-- The staging table: not WAL-logged, lines not compressed (sql/20_catalog.sql).
ALTER TABLE kbench_import_staging SET UNLOGGED;
ALTER TABLE kbench_import_staging ALTER COLUMN line SET STORAGE EXTERNAL;
