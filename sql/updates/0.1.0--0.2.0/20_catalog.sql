-- 0.2.0, catalog (issue 10 items 3-6, the .zst of 7; issue 11 items 3-5):
-- the set-based store, append-only for the owner too, U+0000 refused,
-- the record history dumped and kept per statement, .zst read by libzstd.

-- The store: one INSERT per kind (22_store.sql, a link to sql/22_store.sql) replaces kbench__store.
DROP FUNCTION kbench__store(text, text, jsonb, text, bigint[]);

-- Append-only for everyone short of a superuser disabling triggers: the
-- functions are 19_append_only.sql (a link to sql/19_append_only.sql); the
-- tables that had no guard in 0.1.0 get their triggers here.
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_measurements
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_source_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_projects FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_serving_manifests FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_source_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_operations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_workloads FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_implementations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_protocols FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_environments FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_projects FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_serving_manifests FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_source_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();

-- kbench_retract, kbench_supersede and kbench__withdraw (lossless export:
-- retractions and supersessions go out and come back): 80_first_hour.sql
-- drops the 0.1.0 functions, 81_withdrawal.sql (a link to
-- sql/20_withdrawal.sql) makes them.


-- kbench_export_catalog: 53_export.sql (a link to sql/20_export.sql), after
-- all it reads.


-- .zst read by libzstd, no shell (0.1.0's was plpgsql).  A three-line C
-- declaration, repeated here rather than split from the other imports of
-- sql/20_catalog.sql into a part of its own.
CREATE OR REPLACE FUNCTION kbench_import_catalog(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_file' LANGUAGE C VOLATILE;


-- Records and history, per statement: 0.1.0's per-row trigger goes, and
-- 21_records.sql (a link to sql/39_records_insert.sql) makes the function
-- and the per-statement trigger.
DROP TRIGGER records ON kbench_runs;


SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');
