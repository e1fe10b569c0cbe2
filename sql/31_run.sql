--------------------------------------------------------------------------
-- kbench_run: queue a benchmark job (src/queue.c) in kbench_jobs
-- (sql/30_runner.sql).  Its arguments changed in 0.2.0 (max_minutes): the
-- upgrade drops 0.1.0's function (82_compare.sql) and runs this part
-- through the link sql/updates/0.1.0--0.2.0/82_compare_run.sql.
--------------------------------------------------------------------------

-- Queue a benchmark.  The workload names the operation's axes and its dtype:
--   SELECT kbench_run('layer_norm', 'backward', '{"rows": 4096, "hidden": 4096, "dtype": "fp32"}');
-- device NULL picks the best device a worker serves (the first GPU, else the
-- CPU).  protocol overrides the timing protocol: {"warmup_ms": 25,
-- "rep_ms": 100, "flush_bytes": 268435456 (a GPU's; the CPU's is twice its
-- largest cache), "max_samples": 100000, "min_samples": 10, "seed": 0,
-- "check": true}.  Returns the job id; the job runs once the transaction
-- commits.  Bad requests are refused here, with no job left behind.  A job
-- estimated to take over 2 minutes gets a NOTICE with the estimate;
-- max_minutes refuses one estimated to take longer (docs/KERNELS.md,
-- "Estimates").
CREATE FUNCTION kbench_run(operation text, mode text, workload jsonb,
	implementation text DEFAULT NULL, device text DEFAULT NULL, protocol jsonb DEFAULT '{}',
	timeout interval DEFAULT NULL, retry boolean DEFAULT false, max_minutes float8 DEFAULT NULL)
	RETURNS bigint AS 'MODULE_PATHNAME', 'kbench_run' LANGUAGE C VOLATILE;
-- Enqueueing is for the roles it is granted to.
REVOKE ALL ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) FROM PUBLIC;
