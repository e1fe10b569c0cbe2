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

-- The claim sets phase: 84_fleet_jobs_claim.sql (a link to sql/31_claim.sql).

-- kbench_run takes max_minutes (a new argument: a new signature).
DROP FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean);
-- (made by 82_compare_run.sql, a link to sql/31_run.sql)

-- kbench__job_progress and kbench_job_status (phase, elapsed, remaining:
-- new last columns): 83_job_status.sql, a link to sql/31_job_status.sql.
