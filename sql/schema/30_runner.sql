-- Runner: benchmark jobs queued from SQL and run by background workers
-- (src/queue.c, src/worker_*.c).  Workers start with the server when
-- kernelindex is in shared_preload_libraries: one for the CPU backend and one
-- per visible GPU.

CREATE TABLE kbench_jobs (
	id bigserial PRIMARY KEY,
	operation text NOT NULL,
	mode text NOT NULL,
	workload jsonb NOT NULL,             -- in the operation's axis names, with "dtype"
	implementation text,                 -- NULL: the device's own ("cpu" or "cuda")
	device text NOT NULL,                -- "cpu" or "cuda:N"
	protocol jsonb NOT NULL DEFAULT '{}',-- warmup_ms, rep_ms, flush_bytes, max_samples, seed, check
	timeout interval NOT NULL,
	retries_left int NOT NULL DEFAULT 0, -- re-queue this many times when a worker dies under it
	owner name NOT NULL,
	status text NOT NULL DEFAULT 'queued'
		CHECK (status IN ('queued', 'running', 'passed', 'failed', 'timeout', 'canceled')),
	run_status kbench_status,            -- the run's own status when one was measured
	run_digest text,                     -- kbench_runs.digest of the result
	progress real,                       -- 0..1 while running (see kbench_workers for live values)
	attempts int NOT NULL DEFAULT 0,
	worker_pid int,
	error text,
	queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	started_at timestamptz,
	finished_at timestamptz,
	-- where the job is (kbench_job_status shows the live value): a failed,
	-- timed-out or canceled job keeps the phase it stopped in; NULL for jobs
	-- that finished before phases were recorded
	phase text DEFAULT 'queued'
		CHECK (phase IN ('queued', 'setup', 'warm-up', 'sampling', 'checking', 'storing', 'done')),
	estimate_s float8,                   -- what kbench_run estimated the job to take, in seconds
	comparison jsonb,                    -- a paired A/B job (kbench_compare): {"b", "rounds", "same_pct", "id"}
	agent text,                          -- the kbench agent that claimed it (sql/85_fleet.sql); NULL: a worker
	cancel_requested boolean NOT NULL DEFAULT false, -- kbench_cancel asked the agent running it to stop
	worker_only boolean NOT NULL DEFAULT false       -- queued with no device: only an in-server worker claims it
);
CREATE INDEX ON kbench_jobs (device, id) WHERE status = 'queued';
CREATE INDEX ON kbench_jobs (status) WHERE status IN ('queued', 'running');
CREATE INDEX ON kbench_jobs (finished_at);
CREATE INDEX ON kbench_jobs (owner);

-- A user sees their own jobs; members of pg_read_all_data see every job
-- (and kbench_admin: sql/code/90_privileges.sql sets the policy's final form).
ALTER TABLE kbench_jobs ENABLE ROW LEVEL SECURITY;
CREATE POLICY kbench_jobs_visible ON kbench_jobs FOR SELECT
	USING (owner = current_user OR pg_has_role(current_user, 'pg_read_all_data', 'USAGE'));
SELECT pg_catalog.pg_extension_config_dump('kbench_jobs', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_jobs_id_seq', '');
