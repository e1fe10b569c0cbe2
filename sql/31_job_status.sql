--------------------------------------------------------------------------
-- The job list: kbench_job_status over kbench_jobs (sql/30_runner.sql) and
-- the workers' progress.  0.2.0 gave the view new last columns: CREATE OR
-- REPLACE, so that the upgrade runs this part as it is, after the columns
-- it reads are added (sql/updates/0.1.0--0.2.0/83_job_status.sql is a link
-- to it).
--------------------------------------------------------------------------

-- Where the running jobs are, from the workers' shared memory: phase,
-- progress (0..1) and the seconds expected to remain (NULL until the
-- five-call estimate is known).  Only the jobs the caller may see
-- (row-level security on kbench_jobs, read as the caller).  STABLE: it
-- writes nothing, so the view's readers (PUBLIC) may execute it.
CREATE FUNCTION kbench__job_progress(OUT job_id bigint, OUT phase text, OUT progress real, OUT rest_s float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench__job_progress' LANGUAGE C STABLE;

-- The job list, at a glance: what runs where, how far along, what came out.
-- security_invoker: the caller's row-level security applies (their own jobs).
-- phase: queued, setup, warm-up, sampling, checking, storing, done (a job
-- that failed or was canceled keeps the phase it stopped in, and its
-- progress); elapsed: since it started (NULL while queued); remaining: the
-- worker's estimate while it runs (the queue-time estimate until the
-- worker has one, and while queued), NULL once finished.
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
GRANT SELECT ON kbench_job_status TO PUBLIC;
