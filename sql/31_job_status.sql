--------------------------------------------------------------------------
-- The workers' progress for the job list (kbench_job_status,
-- sql/37_job_status.sql).  sql/updates/0.1.0--0.2.0/83_job_status.sql is
-- a link to this part.
--------------------------------------------------------------------------

-- Where the running jobs are, from the workers' shared memory: phase,
-- progress (0..1) and the seconds expected to remain (NULL until the
-- five-call estimate is known).  Only the jobs the caller may see
-- (row-level security on kbench_jobs, read as the caller).  STABLE: it
-- writes nothing, so the view's readers (PUBLIC) may execute it.
CREATE FUNCTION kbench__job_progress(OUT job_id bigint, OUT phase text, OUT progress real, OUT rest_s float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench__job_progress' LANGUAGE C STABLE;

-- The view itself: sql/37_job_status.sql (after kbench_format_ns).
