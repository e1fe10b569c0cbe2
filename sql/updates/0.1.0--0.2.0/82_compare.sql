-- 0.2.0: the runner's paired A/B jobs, progress phases and queue-time
-- estimates (sql/30_runner.sql; kbench_compare and kbench_comparisons are in
-- the 50_continuous part, linked whole).

-- Jobs: the phase a job is in (or stopped in), the queue-time estimate, and
-- a paired comparison's parameters.  Jobs that finished before 0.2.0 have
-- no recorded phase (NULL), except that a passed one is done.
ALTER TABLE kbench_jobs ADD COLUMN phase text DEFAULT 'queued'
	CHECK (phase IN ('queued', 'setup', 'warm-up', 'sampling', 'checking', 'storing', 'done'));
ALTER TABLE kbench_jobs ADD COLUMN estimate_s float8;
ALTER TABLE kbench_jobs ADD COLUMN comparison jsonb;
UPDATE kbench_jobs SET phase = CASE status WHEN 'passed' THEN 'done' WHEN 'running' THEN 'setup' END
 WHERE status <> 'queued';

CREATE OR REPLACE FUNCTION kbench__claim(p_device text, p_pid int) RETURNS SETOF kbench_jobs
	LANGUAGE sql SET search_path = @extschema@, pg_temp AS $$
	UPDATE kbench_jobs SET status = 'running', started_at = clock_timestamp(), worker_pid = p_pid,
	       attempts = attempts + 1, progress = 0, phase = 'setup'
	 WHERE id = (SELECT id FROM kbench_jobs WHERE status = 'queued' AND device = p_device
	              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
	RETURNING *
$$;

-- kbench_run takes max_minutes (a new argument: a new signature).
DROP FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean);
CREATE FUNCTION kbench_run(operation text, mode text, workload jsonb,
	implementation text DEFAULT NULL, device text DEFAULT NULL, protocol jsonb DEFAULT '{}',
	timeout interval DEFAULT NULL, retry boolean DEFAULT false, max_minutes float8 DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'kbench_run' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) FROM PUBLIC;

CREATE FUNCTION kbench__job_progress(OUT job_id bigint, OUT phase text, OUT progress real, OUT rest_s float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench__job_progress' LANGUAGE C STABLE;

CREATE OR REPLACE VIEW kbench_job_status WITH (security_invoker = true) AS
	SELECT j.id, j.owner, j.operation, j.mode, j.workload, j.device, j.status,
	       coalesce(w.progress, j.progress) AS progress, j.attempts,
	       j.queued_at, j.started_at, j.finished_at,
	       j.finished_at - j.started_at AS run_time,
	       j.run_status, j.run_digest, r.median_ns, r.p20_ns, r.p80_ns, r.samples, j.error,
	       CASE WHEN j.status = 'running' THEN coalesce(w.phase, j.phase) ELSE j.phase END AS phase,
	       CASE WHEN j.status = 'queued' OR j.started_at IS NULL THEN NULL
	            ELSE coalesce(j.finished_at, pg_catalog.clock_timestamp()) - j.started_at END AS elapsed,
	       CASE WHEN j.status = 'queued' THEN pg_catalog.make_interval(secs => j.estimate_s)
	            WHEN j.status = 'running' THEN pg_catalog.make_interval(secs => coalesce(w.rest_s,
	                 greatest(j.estimate_s - extract(epoch FROM pg_catalog.clock_timestamp() - j.started_at)::float8, 0)))
	       END AS remaining
	  FROM kbench_jobs j
	  LEFT JOIN kbench__job_progress() w ON w.job_id = j.id
	  LEFT JOIN kbench_runs r ON r.digest = j.run_digest
	 ORDER BY j.id DESC;
