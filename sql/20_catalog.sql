-- Catalog: content-addressed, append-only tables of manifests (src/catalog.c).
--
-- Every row is keyed by its manifest's digest and holds the normalized
-- manifest (jsonb) beside typed columns for what is filtered and ranked.
-- Everything enters through kbench_ingest() (or the imports, which call the
-- same code); identity columns never change and runs are never deleted.

CREATE TYPE kbench_status AS ENUM (
	'passed', 'incorrect_shape', 'incorrect_dtype', 'incorrect_numerical',
	'compile_error', 'runtime_error', 'timeout', 'resource_exceeded',
	'invalid_reference', 'policy_violation', 'suspected_reward_hack',
	'incomplete_evidence', 'revoked');

-- The typed shape of a run, a protocol and an environment: what the tables
-- store beside the manifest, and what kbench_run_of() & co. return.  (The
-- _row names leave kbench_run to the function that queues a job.)
CREATE TYPE kbench_run_row AS (
	digest text,
	implementation_digest text,
	workload_digest text,
	protocol_digest text,
	environment_digest text,
	status kbench_status,
	observed_at timestamptz,
	primary_statistic text,
	primary_ns bigint,          -- the primary statistic in integer ns, when it is a time
	median_ns bigint,
	mean_ns bigint,
	min_ns bigint,
	max_ns bigint,
	mad_ns bigint,
	p20_ns bigint,
	p80_ns bigint,
	ci95_low_ns bigint,
	ci95_high_ns bigint,
	samples bigint,
	source text,                -- sourceNative.source
	external_id text            -- sourceNative.externalId
);

CREATE TYPE kbench_protocol_row AS (
	digest text,
	family text,                -- comparability.family
	harness text,
	timer text,
	primary_statistic text,
	warmup_ns bigint
);

CREATE TYPE kbench_environment_row AS (
	digest text,
	vendor text,
	product text,
	architecture text,
	form_factor text,
	memory_bytes bigint,
	driver text,
	cuda_toolkit text
);

-- A duration statistic of latencyNs as bigint ns.
CREATE FUNCTION kbench__ns(jsonb) RETURNS bigint
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN CASE WHEN jsonb_typeof($1) = 'number' THEN round(($1)::numeric)::bigint END;

-- A latency measurement of a run's measurements list, converted to ns.
CREATE FUNCTION kbench__measurement_ns(spec jsonb, statistic text) RETURNS bigint
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT round((m->>'value')::numeric * CASE m->>'unit'
	                WHEN 'ns' THEN 1 WHEN 'us' THEN 1e3 WHEN 'ms' THEN 1e6 WHEN 's' THEN 1e9 END)::bigint
	          FROM jsonb_array_elements(CASE WHEN jsonb_typeof(spec->'measurements') = 'array'
	                                         THEN spec->'measurements' ELSE '[]' END) m
	         WHERE m->>'statistic' = statistic AND m->>'unit' IN ('ns', 'us', 'ms', 's')
	           AND m->>'metric' IN ('latency', 'time', 'duration', 'score', 'runtime')
	         LIMIT 1);

-- The typed run of a normalized BenchmarkRun manifest.
CREATE FUNCTION kbench_run_of(digest text, manifest jsonb) RETURNS kbench_run_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT ROW(
		digest,
		s->>'implementationDigest', s->>'workloadDigest', s->>'protocolDigest', s->>'environmentDigest',
		(s->>'status')::kbench_status,
		(s->>'observedAt')::timestamptz,
		ps,
		coalesce(kbench__ns(l->ps), kbench__measurement_ns(s, ps),
		         CASE WHEN ps IS NULL THEN coalesce(kbench__ns(l->'median'), kbench__ns(l->'mean')) END),
		kbench__ns(l->'median'), kbench__ns(l->'mean'), kbench__ns(l->'minimum'), kbench__ns(l->'maximum'),
		kbench__ns(l->'mad'),
		coalesce(kbench__measurement_ns(s, 'p20'), kbench__ns(l->'p05')),
		coalesce(kbench__measurement_ns(s, 'p80'), kbench__ns(l->'p95')),
		kbench__ns(l->'confidence95'->0), kbench__ns(l->'confidence95'->1),
		(s->'timing'->>'samples')::bigint,
		s->'sourceNative'->>'source', s->'sourceNative'->>'externalId')::kbench_run_row
	   FROM (SELECT manifest->'spec' AS s, manifest->'spec'->'timing'->'latencyNs' AS l,
	                coalesce(manifest->'spec'->'timing'->>'primaryStatistic',
	                         manifest->'spec'->'measurements'->0->>'statistic') AS ps) x);

-- The typed protocol of a normalized BenchmarkProtocol manifest.
CREATE FUNCTION kbench_protocol_of(digest text, manifest jsonb) RETURNS kbench_protocol_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN ROW(digest, manifest->'spec'->'comparability'->>'family', manifest->'spec'->'harness'->>'name',
	           manifest->'spec'->'measurement'->>'timer', manifest->'spec'->'measurement'->>'primaryStatistic',
	           kbench__ns(manifest->'spec'->'measurement'->'warmupDuration'))::kbench_protocol_row;

-- The typed environment of a normalized ExecutionEnvironment manifest.
CREATE FUNCTION kbench_environment_of(digest text, manifest jsonb) RETURNS kbench_environment_row
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN ROW(digest, manifest->'spec'->'hardware'->>'vendor', manifest->'spec'->'hardware'->>'product',
	           manifest->'spec'->'hardware'->>'architecture', manifest->'spec'->'hardware'->>'formFactor',
	           (manifest->'spec'->'hardware'->>'memoryBytes')::bigint,
	           manifest->'spec'->'software'->>'driver', manifest->'spec'->'software'->>'cudaToolkit')::kbench_environment_row;

CREATE TABLE kbench_operations (
	digest text PRIMARY KEY,
	name text NOT NULL,                 -- metadata.name
	family text NOT NULL,
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_operations (name);

CREATE TABLE kbench_workloads (
	digest text PRIMARY KEY,
	kind text NOT NULL CHECK (kind IN ('WorkloadCase', 'WorkloadSuite')),
	name text NOT NULL,
	operation_digest text NOT NULL,
	operation_resolved boolean NOT NULL,  -- false until the operation's manifest arrives
	axes jsonb,                           -- {"rows": 4096, "hidden": 4096} for a case
	dtypes text[],
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_workloads (operation_digest);

CREATE TABLE kbench_projects (
	digest text PRIMARY KEY,
	name text NOT NULL,
	repository text,
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE kbench_implementations (
	digest text PRIMARY KEY,
	name text NOT NULL,
	operation_digest text NOT NULL,
	operation_resolved boolean NOT NULL,
	language text,
	version text,                         -- projectRevision.version
	architectures text[],
	dtypes text[],
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_implementations (operation_digest);
CREATE INDEX ON kbench_implementations (name);

CREATE TABLE kbench_protocols (
	digest text PRIMARY KEY,
	family text,
	harness text,
	timer text,
	primary_statistic text,
	warmup_ns bigint,
	name text NOT NULL,
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE kbench_environments (
	digest text PRIMARY KEY,
	vendor text,
	product text,
	architecture text,
	form_factor text,
	memory_bytes bigint,
	driver text,
	cuda_toolkit text,
	name text NOT NULL,
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_environments (vendor, product, architecture);

CREATE TABLE kbench_runs (
	digest text PRIMARY KEY,
	implementation_digest text NOT NULL,
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	status kbench_status NOT NULL,
	observed_at timestamptz NOT NULL,
	primary_statistic text,
	primary_ns bigint,
	median_ns bigint,
	mean_ns bigint,
	min_ns bigint,
	max_ns bigint,
	mad_ns bigint,
	p20_ns bigint,
	p80_ns bigint,
	ci95_low_ns bigint,
	ci95_high_ns bigint,
	samples bigint,
	source text,
	external_id text,
	name text NOT NULL,
	manifest jsonb NOT NULL,
	raw_samples_ns bigint[],              -- when the run was measured here
	-- references whose manifests have not arrived yet:
	-- a subset of {implementation, workload, protocol, environment}
	unresolved text[] NOT NULL DEFAULT '{}',
	retracted_at timestamptz,
	retraction_reason text,
	superseded_by text,
	supersession_reason text,
	ingested_at timestamptz NOT NULL DEFAULT now(),
	CHECK ((retracted_at IS NULL) = (retraction_reason IS NULL)),
	CHECK ((superseded_by IS NULL) = (supersession_reason IS NULL))
);
-- a cohort's runs of one implementation in time order: the alert checks read a
-- family's runs before and after a landed one as ranges of it (sql/50_continuous.sql)
CREATE INDEX ON kbench_runs (workload_digest, protocol_digest, environment_digest, implementation_digest, observed_at, digest);
CREATE INDEX ON kbench_runs (implementation_digest);
CREATE INDEX ON kbench_runs (protocol_digest);
CREATE INDEX ON kbench_runs (environment_digest);
CREATE INDEX ON kbench_runs (observed_at);
CREATE INDEX ON kbench_runs (source, external_id);
CREATE INDEX ON kbench_runs (digest) WHERE cardinality(unresolved) > 0;
-- digest prefixes as typed (kbench__resolve_run): a range in byte order
CREATE INDEX kbench_runs_digest_prefix_idx ON kbench_runs (digest text_pattern_ops);

CREATE TABLE kbench_measurements (
	run_digest text NOT NULL,           -- kbench_runs.digest (no FK, so pg_dump's data order never matters)
	ordinal int NOT NULL,
	metric text NOT NULL,
	unit text NOT NULL,
	statistic text NOT NULL,
	value double precision NOT NULL,
	sample_count bigint,
	PRIMARY KEY (run_digest, ordinal)
);
CREATE INDEX ON kbench_measurements (metric, statistic);

-- The serving kinds (ModelRevision, ServingStackRevision, ServingConfiguration,
-- ServingWorkload, ServingRun) are validated and stored, not yet analysed.
CREATE TABLE kbench_serving_manifests (
	digest text PRIMARY KEY,
	kind text NOT NULL,
	name text NOT NULL,
	manifest jsonb NOT NULL,
	source text,
	ingested_at timestamptz NOT NULL DEFAULT now()
);

-- Rows of a catalog export that carry no manifest of their own (measurements,
-- record events, artifacts, sources, aliases), kept verbatim so that an
-- export re-imports to the same rows: nothing imported is lost.
CREATE TABLE kbench_catalog_rows (
	table_name text NOT NULL,
	row_id text NOT NULL,
	row jsonb NOT NULL,
	ingested_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (table_name, row_id)
);

-- The catalog export's own row for a manifest (its ids, summaries and
-- flags), so an export reproduces it.
CREATE TABLE kbench_catalog_source_rows (
	digest text NOT NULL,
	table_name text NOT NULL,
	row jsonb NOT NULL,
	PRIMARY KEY (table_name, digest)
);

-- Imports and what each one did.
CREATE TABLE kbench_imports (
	id bigserial PRIMARY KEY,
	kind text NOT NULL,                   -- 'catalog' or 'liger'
	source text,
	started_at timestamptz NOT NULL DEFAULT now(),
	finished_at timestamptz,
	lines bigint NOT NULL DEFAULT 0,
	inserted bigint NOT NULL DEFAULT 0,
	present bigint NOT NULL DEFAULT 0,
	skipped bigint NOT NULL DEFAULT 0,
	rejected bigint NOT NULL DEFAULT 0,
	-- the memory observations among them (sql/15_memory.sql): new, already there, rejected
	memory_inserted bigint NOT NULL DEFAULT 0,
	memory_present bigint NOT NULL DEFAULT 0,
	memory_rejected bigint NOT NULL DEFAULT 0,
	imported_by name                      -- the role that ran it (NULL: an import before 0.3.0)
);

-- Why each line was rejected or skipped.  A reason may quote the line (at
-- most 200 characters of it, src/catalog.c), so a row is seen only by the
-- role that ran the import, kbench_admin and pg_read_all_data (the policy
-- is in sql/20_import_rejections.sql); the counts are in kbench_imports for all.
CREATE TABLE kbench_import_rejections (
	import_id bigint NOT NULL,          -- kbench_imports.id
	line bigint NOT NULL,
	reason text NOT NULL,
	skipped boolean NOT NULL DEFAULT false,  -- skipped by rule (e.g. a memory row) rather than rejected
	imported_by name,                   -- kbench_imports.imported_by
	PRIMARY KEY (import_id, line)
);

-- A staging table for client-side imports:
--   \copy kbench_import_staging (line) FROM 'catalog.jsonl' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
-- (the csv options pass each line through untouched), then
--   SELECT * FROM kbench_import_catalog_staged();
-- Lines wait here only until the import reads and deletes them (by DELETE:
-- vacuum takes the space back); not compressed (each line is read back
-- once).  A logged table since 0.3.0: PostgreSQL 15 cannot recover from a
-- crash that follows an unlogged table's TRUNCATE (or creation) rolled back,
-- and staged lines now survive a crash.  staged_by: the role that staged the
-- line (kbench_admin may write only line); each caller imports only its own
-- lines.
CREATE TABLE kbench_import_staging (
	n bigserial,
	line text,
	staged_by name NOT NULL DEFAULT CURRENT_USER
);
ALTER TABLE kbench_import_staging ALTER COLUMN line SET STORAGE EXTERNAL;

--------------------------------------------------------------------------
-- Append-only: identity never changes, runs are never deleted.
--------------------------------------------------------------------------

-- The guards (kbench__immutable, kbench__no_delete): sql/19_append_only.sql.

CREATE TRIGGER immutable BEFORE UPDATE ON kbench_runs
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable('unresolved', 'retracted_at', 'retraction_reason', 'superseded_by', 'supersession_reason');
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_workloads
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable('operation_resolved');
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_implementations
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable('operation_resolved');
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_operations
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_projects
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_protocols
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_environments
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_serving_manifests
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_measurements
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_source_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();

CREATE TRIGGER append_only BEFORE DELETE ON kbench_runs FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_measurements FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_operations FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_workloads FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_implementations FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_protocols FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_environments FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_projects FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_serving_manifests FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_source_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_runs FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_measurements FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_operations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_workloads FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_implementations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_protocols FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_environments FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_projects FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_serving_manifests FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_source_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();

-- Retraction and supersession: sql/20_withdrawal.sql.

-- Storing: sql/22_store.sql (one INSERT per kind, called by src/store.c).

-- Ingest any manifest, or a composite {run, protocol, environment}
-- document: validate, normalize, digest, store.  One row per manifest:
-- its kind, its digest, and whether it was new.  Ingesting the same content
-- again adds nothing.
CREATE FUNCTION kbench_ingest(json, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;
CREATE FUNCTION kbench_ingest(jsonb, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;
CREATE FUNCTION kbench_ingest(text, source text DEFAULT NULL, OUT kind text, OUT digest text, OUT inserted boolean)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_ingest' LANGUAGE C VOLATILE;

-- pg_dump keeps the catalog's contents (the extension's own objects are recreated).
SELECT pg_catalog.pg_extension_config_dump('kbench_operations', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_workloads', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_projects', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_implementations', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_protocols', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_environments', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_runs', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_measurements', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_serving_manifests', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_catalog_rows', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_catalog_source_rows', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_imports', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_import_rejections', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_imports_id_seq', '');

--------------------------------------------------------------------------
-- Imports and export
--------------------------------------------------------------------------

-- Import what kbench_import_staging holds (see the table's comment), in line
-- order; the staging table is emptied.  Every rejected line is recorded in
-- kbench_import_rejections with its line number and reason.
CREATE FUNCTION kbench_import_catalog_staged(source text DEFAULT NULL,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_staged' LANGUAGE C VOLATILE;

-- Import a catalog export from a file on the server (.jsonl, or .jsonl.zst
-- read by libzstd; no program is started).  Needs the privileges of
-- pg_read_server_files, as COPY FROM a file does (src/catalog_file.c).
CREATE FUNCTION kbench_import_catalog(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_file' LANGUAGE C VOLATILE;

-- Import Liger-Kernel's all_benchmark_data.csv, given as text:
--   \set csv `cat all_benchmark_data.csv`
--   SELECT * FROM kbench_import_liger(:'csv');
CREATE FUNCTION kbench_import_liger(csv text, source text DEFAULT NULL,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_liger' LANGUAGE C VOLATILE;

-- The same from a file on the server (needs pg_read_server_files).
CREATE FUNCTION kbench_import_liger_file(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record LANGUAGE sql
	RETURN (SELECT r FROM @extschema@.kbench_import_liger(pg_read_file(path), 'liger-kernel-bench') r);

-- The export (kbench_export_catalog): sql/20_export.sql.

-- Reading the catalog is for everyone; writing goes through kbench_ingest
-- and the imports, for the roles that own or are granted the tables.
GRANT SELECT ON kbench_operations, kbench_workloads, kbench_projects, kbench_implementations,
	kbench_protocols, kbench_environments, kbench_runs, kbench_measurements, kbench_serving_manifests,
	kbench_imports, kbench_import_rejections TO PUBLIC;
