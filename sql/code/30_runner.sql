-- Runner: rights on the job table (sql/schema/30_runner.sql), the claim and
-- kbench_run (src/queue.c, src/worker_*.c).

REVOKE ALL ON kbench_jobs FROM PUBLIC;
GRANT SELECT ON kbench_jobs TO PUBLIC;

-- The claim (_kernelindex.claim) and queueing a job (kbench_run): below.

-- The queue-time estimate's past call (src/estimate.c): the latest of the
-- implementation's best passed runs of the workload in the environment (one
-- a protocol), read from kbench_cohort_bests by its primary key: the
-- workload's few cohorts, not every run of it (a workload benchmarked every
-- night has thousands).  NULL when there is none.
CREATE OR REPLACE FUNCTION _kernelindex.past_call_ns(workload text, implementation text, environment text) RETURNS float8
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT b.primary_ns::float8 FROM kbench_cohort_bests b
	 WHERE b.workload_digest = $1 AND b.implementation_digest = $2 AND b.environment_digest = $3 AND b.primary_ns > 0
	 ORDER BY b.observed_at DESC LIMIT 1
$$;

-- Delete finished jobs older than the retention (kernelindex.history_retention
-- when not given); their runs stay in the catalog.  The CPU worker calls it
-- once a minute.  Returns how many job rows went.
CREATE OR REPLACE FUNCTION kbench_prune_jobs(older_than interval DEFAULT NULL) RETURNS bigint
	LANGUAGE sql SET search_path = @extschema@, pg_temp AS $$
	WITH gone AS (
		DELETE FROM kbench_jobs
		 WHERE status NOT IN ('queued', 'running')
		   AND finished_at < clock_timestamp() - coalesce(older_than,
		         current_setting('kernelindex.history_retention', true)::interval, interval '7 days')
		RETURNING 1)
	SELECT count(*) FROM gone
$$;
REVOKE ALL ON FUNCTION kbench_prune_jobs(interval) FROM PUBLIC;


-- Wait for a job to finish (or the timeout) and return it.  Cancelling the
-- waiting statement (Ctrl-C, statement_timeout) cancels the job, when the
-- caller may cancel it.
CREATE OR REPLACE FUNCTION kbench_wait(job_id bigint, timeout interval DEFAULT '10 minutes')
	RETURNS kbench_jobs AS 'MODULE_PATHNAME', 'kbench_wait' LANGUAGE C VOLATILE STRICT;

-- Cancel a queued or running job (your own; kbench_admin: anyone's).
CREATE OR REPLACE FUNCTION kbench_cancel(job_id bigint)
	RETURNS boolean AS 'MODULE_PATHNAME', 'kbench_cancel' LANGUAGE C VOLATILE STRICT;

-- The workers and what they are doing now (from shared memory): the view
-- kbench_workers, over an internal function that writes nothing (STABLE), so
-- PUBLIC, who reads the view and must run the function, may run it.
CREATE OR REPLACE FUNCTION _kernelindex.workers(OUT pid int, OUT device text, OUT product text, OUT state text,
	OUT job_id bigint, OUT progress real, OUT started_at timestamptz)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench_workers' LANGUAGE C STABLE;
-- (The view, workers and agents together: sql/code/85_fleet.sql.)

-- The kernels' registry: operations, their modes, axes, dtypes and
-- implementations (kbench_device_operations, sql/code/85_fleet.sql, reads it).
CREATE OR REPLACE FUNCTION kbench_registry() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench_registry' LANGUAGE C STABLE;
-- The built-in python implementations of an operation (its short name), as
-- the registry lists them: huggingface, torch, liger, then Liger's other
-- providers for the operations Liger benchmarks them with (torch_compile for
-- embedding, megatron-fused for megatron_cross_entropy, ...: kernels/impl_name.c).
CREATE OR REPLACE FUNCTION _kernelindex.builtin_python_implementations(operation text) RETURNS text[]
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT ARRAY(SELECT jsonb_array_elements_text(o->'pythonImplementations')
	               FROM jsonb_array_elements(kbench_registry()->'operations') o WHERE o->>'name' = operation)
$$;
-- Claim the oldest queued job of any of the devices for a worker or an
-- agent: the one place jobs change hands.  A worker gives its device
-- (_kernelindex.claim('cuda:0', pid) below) and its pid; an agent (kbench_agent_claim,
-- sql/code/85_fleet.sql) the names its devices answer to, its pid and its name.
-- FOR UPDATE SKIP LOCKED lets concurrent claimers take different jobs
-- without waiting on each other (specs/claim.spec).  An agent never
-- takes a paired A/B job (it runs in a worker: kb_compare) nor a job queued
-- with no device (worker_only: kbench_run picked a worker's device).
-- (PL/pgSQL, whose body is not checked against the table when it is made:
-- the 0.1.0 -> 0.2.0 upgrade makes it before 0.3.0 adds worker_only.)
CREATE OR REPLACE FUNCTION _kernelindex.claim(p_devices text[], p_pid int, p_agent text DEFAULT NULL) RETURNS SETOF kbench_jobs
	-- a generic plan: the custom plans of the UPDATE were made again at every claim
	-- (0.17 ms of a trivial job's 2-3 in the worker, pg_stat_statements' plans = calls)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
	j kbench_jobs;
BEGIN
	UPDATE kbench_jobs SET status = 'running', started_at = clock_timestamp(), worker_pid = p_pid,
	       attempts = attempts + 1, progress = 0, phase = 'setup', agent = p_agent, cancel_requested = false
	 WHERE id = (SELECT id FROM kbench_jobs WHERE status = 'queued' AND device = ANY (p_devices)
	                AND (p_agent IS NULL OR (comparison IS NULL AND NOT worker_only))
	              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
	RETURNING * INTO j;
	IF FOUND THEN
		RETURN NEXT j;
	END IF;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.claim(text[], int, text) FROM PUBLIC;
-- The in-server worker's form, one device (as 0.1.0's, which a worker of
-- this library still finds before ALTER EXTENSION ... UPDATE).
-- plpgsql, whose statement keeps its plan (a LANGUAGE sql function with SET
-- clauses is parsed and planned at every call).
CREATE OR REPLACE FUNCTION _kernelindex.claim(p_device text, p_pid int) RETURNS SETOF kbench_jobs
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp SET plan_cache_mode = force_generic_plan AS $$
BEGIN
	RETURN QUERY SELECT * FROM _kernelindex.claim(ARRAY[p_device], p_pid, NULL);
END
$$;
REVOKE ALL ON FUNCTION _kernelindex.claim(text, int) FROM PUBLIC;
-- Queue a benchmark.  The workload names the operation's axes and its dtype:
--   SELECT kbench_run('layer_norm', 'backward', '{"rows": 4096, "hidden": 4096, "dtype": "fp32"}');
-- device NULL picks the best device a worker serves (the first GPU, else the
-- CPU).  protocol overrides the timing protocol: {"warmup_ms": 25,
-- "rep_ms": 100, "flush_bytes": 268435456 (a GPU's; the CPU's is twice its
-- largest cache), "max_samples": 100000, "min_samples": 10, "seed": 0,
-- "check": true, "adaptive": true, "noise_target_pct": 0.5 (a GPU's; the
-- CPU's 2), "max_ms": (4x the minimum's time)} (docs/KERNELS.md, Stopping).  Returns the job id; the job runs once the transaction
-- commits.  Bad requests are refused here, with no job left behind.  A job
-- estimated to take over 2 minutes gets a NOTICE with the estimate;
-- max_minutes refuses one estimated to take longer (docs/KERNELS.md,
-- "Estimates").
CREATE OR REPLACE FUNCTION kbench_run(operation text, mode text, workload jsonb,
	implementation text DEFAULT NULL, device text DEFAULT NULL, protocol jsonb DEFAULT '{}',
	timeout interval DEFAULT NULL, retry boolean DEFAULT false, max_minutes float8 DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'kbench_run' LANGUAGE C VOLATILE;
-- Enqueueing is for the roles it is granted to.
REVOKE ALL ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) FROM PUBLIC;
