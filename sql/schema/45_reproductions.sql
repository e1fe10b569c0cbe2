-- Reproductions (the functions and the view: sql/code/45_reproductions.sql).

-- Which job reproduces which run.  Written by the system only: the link by
-- _kernelindex.queue_reproduction (src/queue.c) with the job it queued, the job's
-- run by _kernelindex.reproduction_finished when the job finishes (issue 24).
CREATE TABLE kbench_reproduction_jobs (
	job_id bigint PRIMARY KEY,           -- kbench_jobs.id (no FK: finished jobs are pruned)
	reported_run text NOT NULL,          -- kbench_runs.digest of the run reproduced
	reproduced_run text,                 -- the job's run, kept when the job row is pruned
	requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	owner name                           -- the job's owner, kept when the job row is pruned
);
CREATE INDEX ON kbench_reproduction_jobs (reported_run);
SELECT pg_catalog.pg_extension_config_dump('kbench_reproduction_jobs', '');
