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
-- family's runs before and after a landed one as ranges of it (sql/code/51_alerts.sql)
CREATE INDEX ON kbench_runs (workload_digest, protocol_digest, environment_digest, implementation_digest, observed_at, digest);
-- text_pattern_ops: equality as before, and a digest prefix's range for the
-- runs of an implementation not in the catalog (_kernelindex.resolve_implementation)
CREATE INDEX kbench_runs_implementation_digest_idx ON kbench_runs (implementation_digest text_pattern_ops);
CREATE INDEX ON kbench_runs (protocol_digest);
CREATE INDEX ON kbench_runs (environment_digest);
CREATE INDEX ON kbench_runs (observed_at);
CREATE INDEX ON kbench_runs (source, external_id);
CREATE INDEX ON kbench_runs (digest) WHERE cardinality(unresolved) > 0;
-- digest prefixes as typed (_kernelindex.resolve_run): a range in byte order
CREATE INDEX kbench_runs_digest_prefix_idx ON kbench_runs (digest text_pattern_ops);
-- ... and of every other digest a user names (sql/code/37_resolve.sql, issue 31)
CREATE INDEX kbench_operations_digest_prefix_idx ON kbench_operations (digest text_pattern_ops);
CREATE INDEX kbench_workloads_digest_prefix_idx ON kbench_workloads (digest text_pattern_ops);
CREATE INDEX kbench_workloads_lower_name_idx ON kbench_workloads (lower(name));
CREATE INDEX kbench_implementations_digest_prefix_idx ON kbench_implementations (digest text_pattern_ops);
CREATE INDEX kbench_protocols_digest_prefix_idx ON kbench_protocols (digest text_pattern_ops);
CREATE INDEX kbench_environments_digest_prefix_idx ON kbench_environments (digest text_pattern_ops);

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
-- is in sql/code/20_import_rejections.sql); the counts are in kbench_imports for all.
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
