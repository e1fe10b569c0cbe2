--------------------------------------------------------------------------
-- The job list: kbench_job_status over kbench_jobs (sql/schema/30_runner.sql)
-- and the workers' progress.  Each release gives the view new last columns
-- (CREATE OR REPLACE keeps the others).  After sql/code/36_units.sql: it
-- reads kbench_format_ns.
--------------------------------------------------------------------------

-- Where the running jobs are, from the workers' shared memory: phase,
-- progress (0..1) and the seconds expected to remain (NULL until the
-- five-call estimate is known).  Only the jobs the caller may see
-- (row-level security on kbench_jobs, read as the caller).  STABLE: it
-- writes nothing, so the view's readers (PUBLIC) may execute it.
CREATE OR REPLACE FUNCTION _kernelindex.job_progress(OUT job_id bigint, OUT phase text, OUT progress real, OUT rest_s float8)
	RETURNS SETOF record AS 'MODULE_PATHNAME', 'kbench__job_progress' LANGUAGE C STABLE;
-- The job list, at a glance: what runs where, how far along, what came out.
-- security_invoker: the caller's row-level security applies (their own jobs).
-- phase: queued, setup, warm-up, sampling, checking, storing, done (a job
-- that failed or was canceled keeps the phase it stopped in, and its
-- progress); elapsed: since it started (NULL while queued); remaining: the
-- worker's estimate while it runs (the queue-time estimate until the
-- worker has one, and while queued), NULL once finished.  The last
-- columns say what ran for people: shape (the workload's axes and dtype),
-- implementation (the run's implementation, else the one asked for) and
-- implementation_kind (built-in or registered), median, p20, p80 as text
-- (kbench_format_ns; the _ns columns stay exact) and tolerance_ratio (the
-- worst error over its tolerance, pass <= 1) to 3 significant digits.
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
	       END AS remaining,
	       -- 0.3.0 (issue 29): what ran, for people
	       x.shape, x.implementation, x.implementation_kind,
	       kbench_format_ns(r.median_ns) AS median, kbench_format_ns(r.p20_ns) AS p20, kbench_format_ns(r.p80_ns) AS p80,
	       CASE WHEN x.ratio IS NULL THEN NULL
	            WHEN x.ratio = 0 OR abs(x.ratio) = 'Infinity'::float8 OR x.ratio = 'NaN'::float8 THEN x.ratio::numeric
	            ELSE round(x.ratio::numeric, 2 - floor(log(abs(x.ratio)))::int) END AS tolerance_ratio
	  FROM kbench_jobs j
	  LEFT JOIN _kernelindex.job_progress() w ON w.job_id = j.id
	  LEFT JOIN kbench_runs r ON r.digest = j.run_digest
	  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	  CROSS JOIN LATERAL (SELECT
	       -- the workload's axes, then its dtype: rows=4096 hidden=4096 fp32
	       concat_ws(' ', (SELECT string_agg(a.key || '=' || a.value, ' ' ORDER BY a.n)
	                         FROM jsonb_each_text(j.workload) WITH ORDINALITY a(key, value, n) WHERE a.key <> 'dtype'),
	                 j.workload->>'dtype') AS shape,
	       -- the implementation that ran (the run's name), else the one asked for
	       coalesce(i.name, j.implementation, 'kbench (the device''s own)') AS implementation,
	       -- built-in: kbench's own (no implementation given, cuda/vN) or huggingface, torch,
	       -- liger, Liger's other providers; registered: a name from kbench_register_implementation
	       CASE WHEN EXISTS (SELECT 1 FROM kbench_registered_implementations g
	                          WHERE g.name = j.implementation AND g.operation = j.operation)
	            THEN 'registered' ELSE 'built-in' END AS implementation_kind,
	       (r.manifest->'spec'->'sourceNative'->'metrics'->>'tolerance_ratio')::float8 AS ratio) x
	 ORDER BY j.id DESC;
GRANT SELECT ON kbench_job_status TO PUBLIC;
