-- kernelindex modfile 0.1.0 -> 0.2.0: what the code (sql/code/, re-run by
-- every update script) cannot express: renames, new tables and columns,
-- data migrations, and the DROPs of the 0.1.0 functions whose arguments or
-- result type changed (the code makes them again).  The Makefile puts it,
-- with the modfiles after it, between sql/prelude/ and sql/code/ in
-- kernelindex--0.1.0--VERSION.sql (docs/UPGRADES.md).  The
-- tables new in 0.2.0 are made here as 0.2.0 made them; later modfiles
-- change them as they changed.  No function body here.

-- The roles (0.2.0: kbench_admin, kbench_user, kbench_agent).
-- Roles.  Roles belong to the cluster, not to a database, so they are made
-- only when missing: a second database installing the extension, or one
-- updating it, finds them and goes on.  DROP EXTENSION leaves them.
--   kbench_user   queue, wait for and cancel one's own jobs
--   kbench_admin  everything kbench_user may, plus cancel anyone's job,
--                 prune, import from server files, register code to run
-- PUBLIC reads the catalog and the analytics.  docs/SQL.md, "Roles".
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_user') THEN
    CREATE ROLE kbench_user NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_admin') THEN
    CREATE ROLE kbench_admin NOLOGIN;
  END IF;
  IF NOT pg_catalog.pg_has_role('kbench_admin', 'kbench_user', 'MEMBER') THEN
    GRANT kbench_user TO kbench_admin;
  END IF;
END
$roles$;

-- The role of agents (a login role per agent host is made a member of it):
-- only the kbench_agent_* functions below, no table rights.  Cluster-wide,
-- made only when missing, like sql/05_roles.sql.
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_agent') THEN
    CREATE ROLE kbench_agent NOLOGIN;
  END IF;
END
$roles$;

-- One name per concept (docs/ARCHITECTURE.md, "Layout and names"): no
-- function shares its name with a type, a table or a view.  Renaming keeps
-- each object's OID, so the functions and views that use them follow;
-- bodies kept as text (plpgsql, $$...$$) are written with the new names
-- where they are made.  The renames come before the code that names the new names
-- (_kernelindex.run_columns returns kbench_run_row).
--
-- kbench_run is the function that queues a job; the typed shape of a run
-- (and, alike, of a protocol and an environment) is a *_row type.
ALTER TYPE kbench_run RENAME TO kbench_run_row;
ALTER TYPE kbench_protocol RENAME TO kbench_protocol_row;
ALTER TYPE kbench_environment RENAME TO kbench_environment_row;

-- kbench_workers is the view; the function under it is an internal helper,
-- STABLE as it writes nothing (PUBLIC, who reads the view, runs it), in
-- the internal schema (made by sql/prelude/00_internal_schema.sql, which
-- runs before this modfile and so does not move it).
ALTER FUNCTION kbench_workers() SET SCHEMA _kernelindex;
ALTER FUNCTION _kernelindex.kbench_workers() RENAME TO workers;
ALTER FUNCTION _kernelindex.workers() STABLE;
-- (The view kbench_workers itself is replaced by sql/code/85_fleet.sql:
-- workers and agents.)

-- kbench_memory_records (the view) beside kbench_memory_records_of(operation,
-- mode, environment) is new in 0.2.0: made under its name by the code.

-- 0.2.0, catalog (issue 10 items 3-6, the .zst of 7; issue 11 items 3-5):
-- the set-based store, append-only for the owner too, U+0000 refused,
-- the record history dumped and kept per statement, .zst read by libzstd.

-- The store: one INSERT per kind (sql/code/22_store.sql) replaces kbench__store.
DROP FUNCTION _kernelindex.store(text, text, jsonb, text, bigint[]);

-- Append-only for everyone short of a superuser disabling triggers: the
-- triggers of the tables that had no guard in 0.1.0 are made by the code
-- (sql/code/19_append_only.sql, sql/code/20_catalog.sql: CREATE OR REPLACE TRIGGER).

-- .zst read by libzstd, no shell: kbench_import_catalog(path) is a C
-- declaration now (sql/code/20_catalog.sql replaces 0.1.0's plpgsql).

-- Records and history, per statement: 0.1.0's per-row trigger goes; the code
-- (sql/code/39_records.sql) makes the function and the per-statement trigger.
DROP TRIGGER records ON kbench_runs;

SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');

-- 0.2.0: what each import did with memory observations (below),
-- counted in kbench_imports (sql/schema/20_catalog.sql).
ALTER TABLE kbench_imports
	ADD COLUMN memory_inserted bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_present bigint NOT NULL DEFAULT 0,
	ADD COLUMN memory_rejected bigint NOT NULL DEFAULT 0;

-- The tables new in 0.2.0, as 0.2.0 made them.

-- Memory observations: peak device memory measured beside a timing, kept
-- where a BenchmarkRun cannot hold it (a run must carry a latency).
--
-- Today they come from Liger-Kernel's CSV (metric_name = memory: the
-- quantiles of torch.cuda.max_memory_allocated() after the timed pass, in
-- MiB; docs/LIGER.md, "Memory rows") and name the same operation, workload,
-- implementation, protocol and environment digests as the speed rows of the
-- same kernel, provider, pass, sizes and GPU.  Runs kernelindex makes carry
-- their peak memory as a run measurement (peak_memory, bytes) instead; the
-- memory analytics read both (sql/45_memory_analytics.sql).
--
-- Append-only like the rest of the catalog: rows are added by the Liger
-- import and the catalog import (src/memory.c), never changed or deleted,
-- and they travel in kbench_export_catalog() as "memory_observations" rows.
-- (This part comes before sql/20_catalog.sql because the export reads it.)

CREATE TABLE kbench_memory_observations (
	source text NOT NULL,                 -- who measured: 'liger-kernel-bench'
	external_id text NOT NULL,            -- the source's identity of the measurement (as a run's sourceNative.externalId)
	operation_digest text NOT NULL,
	workload_digest text NOT NULL,
	implementation_digest text NOT NULL,
	protocol_digest text NOT NULL,        -- the timed pass the memory was measured on
	environment_digest text NOT NULL,
	pass text NOT NULL,                   -- forward, backward or full
	p50_bytes bigint NOT NULL,            -- the median peak, in bytes
	p20_bytes bigint,                     -- the spread, when the source gives one
	p80_bytes bigint,
	liger_version text,                   -- the Liger-Kernel release that ran
	observed_at timestamptz NOT NULL,     -- milliseconds at most
	source_line bigint,                   -- the physical line of the CSV it came from
	ingested_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (source, external_id),
	-- digests: 'sha256:' and 64 hex digits, said as [0-9a-f]+ and a length of 71
	-- (the bounded repetition [0-9a-f]{64} costs PostgreSQL's regex engine ~15 us a value)
	CHECK (operation_digest ~ '^sha256:[0-9a-f]+$' AND length(operation_digest) = 71
	       AND workload_digest ~ '^sha256:[0-9a-f]+$' AND length(workload_digest) = 71
	       AND implementation_digest ~ '^sha256:[0-9a-f]+$' AND length(implementation_digest) = 71
	       AND protocol_digest ~ '^sha256:[0-9a-f]+$' AND length(protocol_digest) = 71
	       AND environment_digest ~ '^sha256:[0-9a-f]+$' AND length(environment_digest) = 71),
	CHECK (pass IN ('forward', 'backward', 'full')),
	CHECK (p50_bytes > 0 AND p20_bytes > 0 AND p80_bytes > 0),
	CHECK ((p20_bytes IS NULL) = (p80_bytes IS NULL)),
	CHECK (source <> '' AND external_id <> ''),
	CHECK (date_trunc('milliseconds', observed_at) = observed_at),
	CHECK (source_line > 0)
);
CREATE INDEX ON kbench_memory_observations (workload_digest, protocol_digest, environment_digest, implementation_digest);
CREATE INDEX ON kbench_memory_observations (operation_digest);
COMMENT ON TABLE kbench_memory_observations IS 'peak device memory measured beside a timing (Liger''s memory rows), in bytes, with the digests of what was measured; append-only';

SELECT pg_catalog.pg_extension_config_dump('kbench_memory_observations', '');

-- Implementations other than kbench's own (src/implementations.c,
-- kernels/impl*.c, docs/BYO.md).  kbench_run(..., implementation => ...)
-- takes 'huggingface', 'torch' or 'liger' (built-in python implementations,
-- run by the python harness with kernelindex.python) or a name registered
-- here by kbench_admin, for code under kernelindex.implementation_directory;
-- the worker runs it in a child process, under kbench's protocol.

CREATE TABLE kbench_registered_implementations (
	name text NOT NULL,
	operation text NOT NULL,
	entry text NOT NULL,                 -- python:/dir/file.py:function or library:/dir/libx.so:symbol
	language text NOT NULL,              -- python or c
	version text,                        -- as given at registration (projectRevision.version)
	implementation_digest text NOT NULL, -- kbench_implementations.digest of the file as registered
	registered_by name NOT NULL,
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, operation)
);
SELECT pg_catalog.pg_extension_config_dump('kbench_registered_implementations', '');

-- Which job reproduces which run; written only by _kernelindex.link_reproduction.
CREATE TABLE kbench_reproduction_jobs (
	job_id bigint PRIMARY KEY,           -- kbench_jobs.id (no FK: finished jobs are pruned)
	reported_run text NOT NULL,          -- kbench_runs.digest of the run reproduced
	reproduced_run text,                 -- the job's run, kept when the job row is pruned
	requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ON kbench_reproduction_jobs (reported_run);
SELECT pg_catalog.pg_extension_config_dump('kbench_reproduction_jobs', '');

--------------------------------------------------------------------------
-- Alert rules and alerts
--------------------------------------------------------------------------

-- A rule watches the series it selects (NULL: any) with one method.
CREATE TABLE kbench_alert_rules (
	id serial PRIMARY KEY,
	name text NOT NULL UNIQUE,
	family text,                          -- kbench_implementations.name (or a digest not in the catalog)
	operation text,                       -- kbench_operations.name
	mode text,                            -- forward, backward, full, or a protocol's name or digest
	device text,                          -- as kbench_regressions' environment: product, product and form factor, name, digest
	workload_digest text,                 -- one cohort family: its workload
	method text NOT NULL CHECK (method IN ('percent', 'zscore', 'ttest', 'changepoint')),
	window_size int NOT NULL CHECK (window_size BETWEEN 1 AND 1000),
	threshold float8 NOT NULL,
	min_change_pct float8 NOT NULL DEFAULT 1 CHECK (min_change_pct >= 0),
	persistence int NOT NULL DEFAULT 1 CHECK (persistence BETWEEN 1 AND 100), -- flagged points in a row to alert
	confirm boolean NOT NULL DEFAULT true, -- queue a confirmation rerun when an alert opens
	enabled boolean NOT NULL DEFAULT true,
	seeded boolean NOT NULL DEFAULT false,
	created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE kbench_alert_rules IS 'what series to watch (family, operation, mode, device, workload; NULL: any) and how: percent, zscore, ttest or changepoint';

-- The default rules, on every series: a 5% slowdown against the median of
-- the previous 10 points, and a step of more than 3% among the last 50.  They
-- only alert (confirm = false): a server does not start rerunning anything
-- nobody asked for; rules made with kbench_alert_rule() confirm by default.
INSERT INTO kbench_alert_rules (name, method, window_size, threshold, min_change_pct, confirm, seeded) VALUES
	('default-percent', 'percent', 10, 5, 1, false, true),
	('default-changepoint', 'changepoint', 50, 3, 1, false, true);

-- An alert: one episode of a rule flagging one series.  runs are the
-- flagged points folded into it (a window straddling a step keeps flagging
-- for a while); run_digest is the first (for changepoint: where the new
-- segment starts).
CREATE TABLE kbench_alerts (
	id bigserial PRIMARY KEY,
	rule_id int NOT NULL,                 -- kbench_alert_rules.id (no FK: a dump restores in any order)
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	family text NOT NULL,
	run_digest text NOT NULL,
	previous_run_digest text,
	last_run_digest text NOT NULL,
	runs text[] NOT NULL,
	method text NOT NULL,
	value_ns float8 NOT NULL,
	baseline_ns float8,
	change_pct float8,
	statistic float8,
	critical float8,
	compared int,
	status text NOT NULL DEFAULT 'open'
		CHECK (status IN ('open', 'acknowledged', 'suppressed', 'confirmed', 'refuted')),
	verdict text CHECK (verdict IN ('confirmed', 'refuted')),   -- the confirmation rerun's
	reason text,                          -- why it was acknowledged or suppressed
	until timestamptz,                    -- when the acknowledgement or suppression lapses
	changed_by name,
	opened_at timestamptz NOT NULL DEFAULT now(),
	changed_at timestamptz,
	UNIQUE (rule_id, workload_digest, protocol_digest, environment_digest, family, run_digest)
);
CREATE INDEX ON kbench_alerts (workload_digest, protocol_digest, environment_digest, family);
CREATE INDEX ON kbench_alerts (status);
COMMENT ON TABLE kbench_alerts IS 'alerts: one per rule and episode of a series, open / acknowledged / suppressed / confirmed / refuted';

-- The confirmation rerun of an alert: the job queued, then its verdict.
CREATE TABLE kbench_alert_confirmations (
	alert_id bigint PRIMARY KEY,          -- kbench_alerts.id
	job_id bigint,                        -- kbench_jobs.id; NULL when none could be queued (error says why)
	queued_at timestamptz NOT NULL DEFAULT now(),
	run_digest text,                      -- the rerun's run
	value_ns float8,
	change_pct float8,                    -- the rerun against the alert's baseline
	verdict text CHECK (verdict IN ('confirmed', 'refuted')),
	judged_at timestamptz,
	error text
);
CREATE INDEX ON kbench_alert_confirmations (job_id) WHERE verdict IS NULL;
COMMENT ON TABLE kbench_alert_confirmations IS 'confirmation reruns queued when alerts opened, and their verdicts';

SELECT pg_catalog.pg_extension_config_dump('kbench_alert_rules', 'WHERE NOT seeded');
SELECT pg_catalog.pg_extension_config_dump('kbench_alert_rules_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alerts', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alerts_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_alert_confirmations', '');

-- A series' points in time order within a cohort: the checks read the
-- points before a new run (and after it, for runs landing out of order)
-- along it, across the cohort's families, instead of every run of the cohort.
CREATE INDEX kbench_runs_cohort_time_idx ON kbench_runs (workload_digest, protocol_digest, environment_digest, observed_at, digest);

--------------------------------------------------------------------------
-- Paired A/B comparisons
--------------------------------------------------------------------------

-- A comparison: ONE job that times A and B interleaved on one device
-- (kernels/compare.c): both sides set up with the same inputs (the
-- protocol's seed), warmed up, then rounds of a block of A's calls and a
-- block of B's, the cache flushed before every timed call.  The worker
-- stores both runs (each with its raw samples) and fills in the result in
-- the transaction that finishes the job.
CREATE TABLE kbench_comparisons (
	id bigserial PRIMARY KEY,
	operation text NOT NULL,
	mode text NOT NULL,
	workload jsonb NOT NULL,
	a text,                               -- implementation A (NULL: the device's own)
	b text,
	device text NOT NULL,
	protocol jsonb NOT NULL,
	rounds int NOT NULL CHECK (rounds BETWEEN 3 AND 1000),
	same_pct float8 NOT NULL CHECK (same_pct > 0),
	job_id bigint NOT NULL,               -- the one job that times both (kbench_jobs.id)
	owner name NOT NULL,
	queued_at timestamptz NOT NULL DEFAULT now(),
	-- stored by the worker with the two runs:
	a_run text,                           -- kbench_runs.digest of A's run
	b_run text,
	call_order text,                      -- the blocks as they ran, one letter each: 'ABAB...'
	calls_per_block int,                  -- timed calls in each block
	a_round_ns float8[],                  -- each round's median, A's
	b_round_ns float8[],
	a_median_ns float8,                   -- the median of the rounds' medians
	b_median_ns float8,
	ratio float8,                         -- b_median_ns / a_median_ns
	ratio_low float8,                     -- its 95% interval (bootstrap over rounds)
	ratio_high float8,
	verdict text CHECK (verdict IN ('faster', 'slower', 'same', 'ambiguous')),
	finished_at timestamptz
);
CREATE INDEX ON kbench_comparisons (job_id);
COMMENT ON TABLE kbench_comparisons IS 'paired A/B comparisons: one job times A and B in alternating blocks on one device';
-- Written by kbench_compare (as the extension's owner) and the worker;
-- everyone reads them.
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_comparisons_id_seq', '');

CREATE TABLE kbench_agents (
	name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
	role name NOT NULL,                  -- the login role that registered the name; only it may use it
	host text NOT NULL,
	pid int NOT NULL,                    -- the agent's process id on its host
	version text NOT NULL,               -- kbench's release
	session bigint NOT NULL,             -- new at each registration: an older process of the name is refused
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	stopped_at timestamptz               -- set when it stopped cleanly
);
CREATE SEQUENCE kbench_agent_sessions;

CREATE TABLE kbench_agent_devices (
	agent text NOT NULL REFERENCES kbench_agents (name) ON DELETE CASCADE,
	device text NOT NULL,                -- the agent's own name for it: "cpu", "cuda:0"
	class text NOT NULL,                 -- what a job names to reach any such device: "cpu", "cuda:H200"
	product text,
	description jsonb NOT NULL,          -- what `kbench devices --json` says of it (the CPU's environment)
	position int NOT NULL,               -- its order on the agent: GPUs first, then the CPU
	PRIMARY KEY (agent, device)
);
SELECT pg_catalog.pg_extension_config_dump('kbench_agents', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_agent_devices', '');

-- kernels' side of 0.2.0 (issue 11): one name per concept, cost formulas
-- defined once.

-- (kbench_device_operations, which lists kbench's own implementations as
-- the registry names them, is replaced by sql/code/85_fleet.sql.)

-- The cost formulas of kbench's own operations are written once, in the
-- kernels registry; kbench_operation_costs' seeded rows for them come from
-- there (sql/schema/43_roofline.sql), here as in a fresh install.
-- _kernelindex.registry_costs() is in sql/prelude/00_schema_functions.sql, which
-- runs before the modfiles.  Unlike the fresh install's INSERT, this one
-- meets 0.1.0's seeded rows: it updates them (ON CONFLICT), and leaves
-- the rows users added (seeded = false) as they are.
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded)
	SELECT operation, mode, bytes, flops, compute, note, true
	  FROM jsonb_to_recordset(_kernelindex.registry_costs())
	       AS c(operation text, mode text, bytes text, flops text, compute text, note text)
	ON CONFLICT (operation, mode) DO UPDATE
	   SET bytes = excluded.bytes, flops = excluded.flops, compute = excluded.compute, note = excluded.note
	 WHERE kbench_operation_costs.seeded;

-- 0.2.0, the one ingest path (issue 11, items 3 and 4): the cohort index of
-- kbench_runs also orders each implementation's runs in time, so that the
-- alert checks (sql/code/51_alerts.sql) read a family's runs before and after
-- a landed one as ranges (sql/schema/20_catalog.sql).
DROP INDEX kbench_runs_workload_digest_protocol_digest_environment_dig_idx;
CREATE INDEX ON kbench_runs (workload_digest, protocol_digest, environment_digest, implementation_digest, observed_at, digest);

-- The staging table: not WAL-logged, lines not compressed (sql/schema/20_catalog.sql).
ALTER TABLE kbench_import_staging SET UNLOGGED;
ALTER TABLE kbench_import_staging ALTER COLUMN line SET STORAGE EXTERNAL;

-- Issue 13, "a user's first hour": the 0.1.0 objects whose result type or
-- arguments changed in 0.2.0 cannot be replaced in place; they are dropped
-- here and the code makes them again (sql/code/20_withdrawal.sql,
-- 31_bench.sql, 40_speedup.sql).  The objects redefined with the same
-- result type are CREATE OR REPLACE in the code.

-- Retraction and supersession return the digest, not the whole run row, and
-- take a digest prefix.
DROP FUNCTION kbench_retract(text, text);
DROP FUNCTION kbench_supersede(text, text, text);

-- kbench_bench: timeout and retry as kbench_run's, times in ns (median_ns,
-- p20_ns, p80_ns as in kbench_job_status), wait defaults to the job's timeout.
DROP PROCEDURE kbench_bench(text, text, jsonb, text, text, jsonb, interval, bigint, text, text,
	double precision, double precision, double precision, bigint, double precision, text, text);

-- kbench_speedup and kbench_speedup_summary with operation NULL: every
-- operation where both sides exist, with its operation_key and pass (new
-- last columns).
DROP FUNCTION kbench_speedup_summary(text, text, text, text, text);
DROP FUNCTION kbench_speedup(text, text, text, text, text);

-- 0.2.0: the runner's paired A/B jobs, progress phases and queue-time
-- estimates (sql/schema/30_runner.sql; kbench_comparisons is below, kbench_compare in
-- sql/code/55_comparisons.sql).

-- Jobs: the phase a job is in (or stopped in), the queue-time estimate, and
-- a paired comparison's parameters.  Jobs that finished before 0.2.0 have
-- no recorded phase (NULL), except that a passed one is done.
ALTER TABLE kbench_jobs ADD COLUMN phase text DEFAULT 'queued'
	CHECK (phase IN ('queued', 'setup', 'warm-up', 'sampling', 'checking', 'storing', 'done'));
ALTER TABLE kbench_jobs ADD COLUMN estimate_s float8;
ALTER TABLE kbench_jobs ADD COLUMN comparison jsonb;
UPDATE kbench_jobs SET phase = CASE status WHEN 'passed' THEN 'done' WHEN 'running' THEN 'setup' END
 WHERE status <> 'queued';

-- kbench_run takes max_minutes (a new argument: a new signature).
DROP FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean);
-- (made by sql/code/30_runner.sql)

-- 0.2.0, issue 18 (fleet): the job table's columns for agents
-- (sql/schema/30_runner.sql); the agents' tables are below.
ALTER TABLE kbench_jobs ADD COLUMN agent text;
ALTER TABLE kbench_jobs ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;

-- kbench_regressions gains operation_key and pass (issue 13: every result
-- names the operation by its short name and the timed pass).  A function's
-- result type cannot change in place: the 0.1.0 one is dropped, and
-- the code (sql/code/42_regressions.sql) creates the new one.
DROP FUNCTION kbench_regressions(text, text, text, text, text, int, float8, float8, int, text);

-- Staged lines are marked with the role that staged them, and each caller of
-- kbench_import_catalog_staged imports only its own (two admins staging at
-- once no longer import each other's lines).  Lines staged under 0.1.0 and
-- never imported are dropped: the table is unlogged scratch space.
TRUNCATE kbench_import_staging;
ALTER TABLE kbench_import_staging ADD COLUMN staged_by name NOT NULL DEFAULT CURRENT_USER;
