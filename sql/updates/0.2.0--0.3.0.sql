-- kernelindex modfile 0.2.0 -> 0.3.0: what the code (sql/code/, re-run by
-- every update script) cannot express: new columns and indexes, data
-- migrations, DROPs.  The Makefile puts it between the modfiles before it
-- (from older releases) and sql/code/ (docs/UPGRADES.md).
-- A DROP of a 0.2.0 function says IF EXISTS: from 0.1.0, the modfiles run
-- one after the other and 0.2.0's code never ran.  No function body here.

-- Issue 24 (trust at the boundaries): a job queued with no device
-- (kbench_run picked an in-server worker's device) is never an agent's; the
-- claim that reads it is _kernelindex.claim (sql/code/30_runner.sql).
ALTER TABLE kbench_jobs ADD COLUMN worker_only boolean NOT NULL DEFAULT false;

-- The staging table becomes a logged table, emptied by DELETE (issue 24):
-- PostgreSQL 15 cannot recover from a crash that follows an unlogged
-- table's TRUNCATE rolled back ("could not create file ...: File exists"),
-- and 0.2.0 truncated this one after each staged import.  Lines staged and
-- not yet imported are kept (sql/schema/20_catalog.sql).
ALTER TABLE kbench_import_staging SET LOGGED;

-- Reproductions are linked by the system only (issue 24, item 3): the
-- link function that took any job and any run goes; the link keeps the
-- job's owner (who sees its id and status in kbench_reproductions).  The
-- functions and the view are sql/code/45_reproductions.sql; the column
-- privileges sql/code/90_privileges.sql.
DROP FUNCTION IF EXISTS _kernelindex.link_reproduction(text, bigint);
ALTER TABLE kbench_reproduction_jobs ADD COLUMN owner name;
UPDATE kbench_reproduction_jobs l SET owner = j.owner FROM kbench_jobs j WHERE j.id = l.job_id AND l.owner IS NULL;

-- Issue 24: an import's rejections are read only by the role that ran it,
-- kbench_admin and pg_read_all_data.  Imports before 0.3.0 name no role
-- (NULL): their rejections are kbench_admin's.  The trigger that marks new
-- ones and the row-level policy: sql/code/20_import_rejections.sql.
ALTER TABLE kbench_imports ADD COLUMN imported_by name;
ALTER TABLE kbench_import_rejections ADD COLUMN imported_by name;

-- Digest prefixes by index (issue 31): _kernelindex.resolve_run reads a range of
-- this index instead of every run (sql/schema/20_catalog.sql makes it on install).
CREATE INDEX kbench_runs_digest_prefix_idx ON kbench_runs (digest text_pattern_ops);
-- ... and every other digest a user names (issue 31, sql/code/37_resolve.sql);
-- the runs' implementation index becomes text_pattern_ops (equality as before,
-- and the prefix range of an implementation that is not in the catalog)
CREATE INDEX kbench_operations_digest_prefix_idx ON kbench_operations (digest text_pattern_ops);
CREATE INDEX kbench_workloads_digest_prefix_idx ON kbench_workloads (digest text_pattern_ops);
CREATE INDEX kbench_workloads_lower_name_idx ON kbench_workloads (lower(name));
CREATE INDEX kbench_implementations_digest_prefix_idx ON kbench_implementations (digest text_pattern_ops);
CREATE INDEX kbench_protocols_digest_prefix_idx ON kbench_protocols (digest text_pattern_ops);
CREATE INDEX kbench_environments_digest_prefix_idx ON kbench_environments (digest text_pattern_ops);
DROP INDEX kbench_runs_implementation_digest_idx;
CREATE INDEX kbench_runs_implementation_digest_idx ON kbench_runs (implementation_digest text_pattern_ops);

-- The agents' device names, indexed (_kernelindex.agent_names, sql/prelude/), and
-- an agent's running jobs (sql/schema/85_fleet.sql makes them on install).
CREATE INDEX kbench_agent_devices_names_idx ON kbench_agent_devices
	USING gin (_kernelindex.agent_names(agent, device, class, position = 0));
CREATE INDEX kbench_jobs_agent_running_idx ON kbench_jobs (agent) WHERE status = 'running';

-- Measured ceilings (issue 27, item 5; sql/schema/43_roofline.sql makes it on install).
CREATE TABLE kbench_environment_probes (
	environment_digest text PRIMARY KEY CHECK (environment_digest ~ '^sha256:[0-9a-f]{64}$'),
	device text NOT NULL,                 -- as probed: cpu, cuda:N
	probed_at timestamptz NOT NULL DEFAULT now(),
	bandwidth_bytes_per_s float8 CHECK (bandwidth_bytes_per_s > 0),
	flops_fp32 float8 CHECK (flops_fp32 > 0),
	flops_tf32 float8 CHECK (flops_tf32 > 0),
	flops_bf16 float8 CHECK (flops_bf16 > 0),
	flops_fp16 float8 CHECK (flops_fp16 > 0),
	flops_fp8 float8 CHECK (flops_fp8 > 0),
	probe jsonb NOT NULL CHECK (jsonb_typeof(probe) = 'object')
);
COMMENT ON TABLE kbench_environment_probes IS 'measured ceilings per environment (kbench probe): sustained bandwidth and FLOP rates, NULL where not measured';
SELECT pg_catalog.pg_extension_config_dump('kbench_environment_probes', '');

-- A user's operations registered from SQL (issue 26 item 4; sql/schema/35_operations.sql
-- makes it on install, src/operations.c writes it).
CREATE TABLE kbench_registered_operations (
	name text PRIMARY KEY,               -- the definition's "name"
	definition text NOT NULL,            -- the definition file's text (kernels/ops/defs' format)
	definition_digest text NOT NULL,     -- sha256:<hex> of it
	reference_source text,               -- reference.file's text; NULL: a function of kbench_reference.py
	reference_file text,                 -- where it was read
	reference_digest text,               -- sha256:<hex> of it
	source_file text NOT NULL,           -- the definition's file, resolved
	registered_by name NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	CHECK ((reference_source IS NULL) = (reference_digest IS NULL) AND (reference_source IS NULL) = (reference_file IS NULL))
);
SELECT pg_catalog.pg_extension_config_dump('kbench_registered_operations', '');

-- jsd's backward pass (issue 26 item 3): the kernels registry's formulas for
-- kbench's own operations (sql/schema/43_roofline.sql seeds them on install)
-- replace 0.2.0's seeded rows, jsd backward's "as forward" among them; the
-- rows users added (seeded = false) are left as they are.
-- _kernelindex.registry_costs() is in sql/prelude/00_schema_functions.sql.
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded)
	SELECT operation, mode, bytes, flops, compute, note, true
	  FROM jsonb_to_recordset(_kernelindex.registry_costs())
	       AS c(operation text, mode text, bytes text, flops text, compute text, note text)
	ON CONFLICT (operation, mode) DO UPDATE
	   SET bytes = excluded.bytes, flops = excluded.flops, compute = excluded.compute, note = excluded.note
	 WHERE kbench_operation_costs.seeded;
