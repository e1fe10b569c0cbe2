-- Catalog: the functions and triggers over the tables of
-- sql/schema/20_catalog.sql (src/catalog.c).

-- A duration statistic of latencyNs as bigint ns.
CREATE OR REPLACE FUNCTION _kernelindex.ns(jsonb) RETURNS bigint
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN CASE WHEN jsonb_typeof($1) = 'number' THEN round(($1)::numeric)::bigint END;

-- A latency measurement of a run's measurements list, converted to ns.
CREATE OR REPLACE FUNCTION _kernelindex.measurement_ns(spec jsonb, statistic text) RETURNS bigint
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT round((m->>'value')::numeric * CASE m->>'unit'
	                WHEN 'ns' THEN 1 WHEN 'us' THEN 1e3 WHEN 'ms' THEN 1e6 WHEN 's' THEN 1e9 END)::bigint
	          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(spec->'measurements') = 'array'
	                                         THEN spec->'measurements' ELSE '[]' END) m
	         WHERE m->>'statistic' = statistic AND m->>'unit' IN ('ns', 'us', 'ms', 's')
	           AND m->>'metric' IN ('latency', 'time', 'duration', 'score', 'runtime')
	         LIMIT 1);

-- The typed run of a normalized BenchmarkRun manifest.
CREATE OR REPLACE FUNCTION kbench_run_of(digest text, manifest jsonb) RETURNS kbench_run_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT ROW(
		digest,
		s->>'implementationDigest', s->>'workloadDigest', s->>'protocolDigest', s->>'environmentDigest',
		(s->>'status')::kbench_status,
		(s->>'observedAt')::timestamptz,
		ps,
		coalesce(_kernelindex.ns(l->ps), _kernelindex.measurement_ns(s, ps),
		         CASE WHEN ps IS NULL THEN coalesce(_kernelindex.ns(l->'median'), _kernelindex.ns(l->'mean')) END),
		_kernelindex.ns(l->'median'), _kernelindex.ns(l->'mean'), _kernelindex.ns(l->'minimum'), _kernelindex.ns(l->'maximum'),
		_kernelindex.ns(l->'mad'),
		coalesce(_kernelindex.measurement_ns(s, 'p20'), _kernelindex.ns(l->'p05')),
		coalesce(_kernelindex.measurement_ns(s, 'p80'), _kernelindex.ns(l->'p95')),
		_kernelindex.ns(l->'confidence95'->0), _kernelindex.ns(l->'confidence95'->1),
		(s->'timing'->>'samples')::bigint,
		s->'sourceNative'->>'source', s->'sourceNative'->>'externalId')::kbench_run_row
	   FROM (SELECT manifest->'spec' AS s, manifest->'spec'->'timing'->'latencyNs' AS l,
	                coalesce(manifest->'spec'->'timing'->>'primaryStatistic',
	                         manifest->'spec'->'measurements'->0->>'statistic') AS ps) x);

-- The typed protocol of a normalized BenchmarkProtocol manifest.
CREATE OR REPLACE FUNCTION kbench_protocol_of(digest text, manifest jsonb) RETURNS kbench_protocol_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN ROW(digest, manifest->'spec'->'comparability'->>'family', manifest->'spec'->'harness'->>'name',
	           manifest->'spec'->'measurement'->>'timer', manifest->'spec'->'measurement'->>'primaryStatistic',
	           _kernelindex.ns(manifest->'spec'->'measurement'->'warmupDuration'))::kbench_protocol_row;

-- The typed environment of a normalized ExecutionEnvironment manifest.
CREATE OR REPLACE FUNCTION kbench_environment_of(digest text, manifest jsonb) RETURNS kbench_environment_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN ROW(digest, manifest->'spec'->'hardware'->>'vendor', manifest->'spec'->'hardware'->>'product',
	           manifest->'spec'->'hardware'->>'architecture', manifest->'spec'->'hardware'->>'formFactor',
	           (manifest->'spec'->'hardware'->>'memoryBytes')::bigint,
	           manifest->'spec'->'software'->>'driver', manifest->'spec'->'software'->>'cudaToolkit')::kbench_environment_row;

--------------------------------------------------------------------------
-- Append-only: identity never changes, runs are never deleted.
--------------------------------------------------------------------------

-- The guards (_kernelindex.immutable, _kernelindex.no_delete): sql/code/19_append_only.sql.

CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_runs
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable('unresolved', 'retracted_at', 'retraction_reason', 'superseded_by', 'supersession_reason');
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_workloads
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable('operation_resolved');
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_implementations
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable('operation_resolved');
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_operations
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_projects
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_protocols
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_environments
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_serving_manifests
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_measurements
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_rows
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();
CREATE OR REPLACE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_source_rows
	FOR EACH ROW EXECUTE FUNCTION _kernelindex.immutable();

CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_runs FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_measurements FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_operations FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_workloads FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_implementations FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_protocols FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_environments FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_projects FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_serving_manifests FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_catalog_rows FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_catalog_source_rows FOR EACH ROW EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_runs FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_measurements FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_operations FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_workloads FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_implementations FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_protocols FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_environments FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_projects FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_serving_manifests FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_rows FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();
CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_source_rows FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.no_delete();

-- Retraction and supersession: sql/code/20_withdrawal.sql.

-- Storing: sql/code/22_store.sql (one INSERT per kind, called by src/store.c).

-- Ingest any manifest, or a composite {run, protocol, environment}
-- document: validate, normalize, digest, store.  One row per manifest:
-- its kind, its digest, and whether it was new.  Ingesting the same content
-- again adds nothing.
CREATE OR REPLACE FUNCTION kbench_ingest(json, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;
CREATE OR REPLACE FUNCTION kbench_ingest(jsonb, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;
CREATE OR REPLACE FUNCTION kbench_ingest(text, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;

--------------------------------------------------------------------------
-- Imports and export
--------------------------------------------------------------------------

-- Import what kbench_import_staging holds (see the table's comment), in line
-- order; the staging table is emptied.  Every rejected line is recorded in
-- kbench_import_rejections with its line number and reason.
CREATE OR REPLACE FUNCTION kbench_import_catalog_staged(source text DEFAULT NULL,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_staged' LANGUAGE C VOLATILE;

-- Import a catalog export from a file on the server (.jsonl, or .jsonl.zst
-- read by libzstd; no program is started).  Needs the privileges of
-- pg_read_server_files, as COPY FROM a file does (src/catalog_file.c).
CREATE OR REPLACE FUNCTION kbench_import_catalog(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_file' LANGUAGE C VOLATILE;

-- Import Liger-Kernel's all_benchmark_data.csv, given as text:
--   \set csv `cat all_benchmark_data.csv`
--   SELECT * FROM kbench_import_liger(:'csv');
CREATE OR REPLACE FUNCTION kbench_import_liger(csv text, source text DEFAULT NULL,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_liger' LANGUAGE C VOLATILE;

-- The same from a file on the server (needs pg_read_server_files).
CREATE OR REPLACE FUNCTION kbench_import_liger_file(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record LANGUAGE sql
	RETURN (SELECT r FROM @extschema@.kbench_import_liger(pg_read_file(path), 'liger-kernel-bench') r);

-- The export (kbench_export_catalog): sql/code/20_export.sql.

-- Reading the catalog is for everyone; writing goes through kbench_ingest
-- and the imports, for the roles that own or are granted the tables.
GRANT SELECT ON kbench_operations, kbench_workloads, kbench_projects, kbench_implementations,
	kbench_protocols, kbench_environments, kbench_runs, kbench_measurements, kbench_serving_manifests,
	kbench_imports, kbench_import_rejections TO PUBLIC;
