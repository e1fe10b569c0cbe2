--------------------------------------------------------------------------
-- kbench_bench: one statement that queues a job, commits and waits for it.
-- Its arguments changed in 0.2.0 (retry, wait, times in ns): the
-- 0.1.0--0.2.0 modfile drops 0.1.0's procedure.
--------------------------------------------------------------------------

-- Queue a job, commit, wait for it and return the result in one statement:
--   CALL kbench_bench('layer_norm', 'backward', '{"rows": 64, "hidden": 256, "dtype": "fp32"}');
-- timeout and retry are kbench_run's; wait is how long to wait for the job
-- (NULL: its timeout, or kernelindex.job_timeout, and as long again for the
-- queue).  Times in ns, as in every SQL column; tolerance_ratio is the
-- worst error over its tolerance, the figure the check passes on (<= 1).
-- (A procedure, so that the job is committed before the wait; not inside an
-- explicit transaction block.)
CREATE OR REPLACE PROCEDURE kbench_bench(operation text, mode text, workload jsonb,
	implementation text DEFAULT NULL, device text DEFAULT NULL, protocol jsonb DEFAULT '{}',
	timeout interval DEFAULT NULL, retry boolean DEFAULT false, wait interval DEFAULT NULL,
	INOUT job_id bigint DEFAULT NULL, INOUT status text DEFAULT NULL, INOUT run_status text DEFAULT NULL,
	INOUT median_ns bigint DEFAULT NULL, INOUT p20_ns bigint DEFAULT NULL,
	INOUT p80_ns bigint DEFAULT NULL, INOUT samples bigint DEFAULT NULL,
	INOUT tolerance_ratio double precision DEFAULT NULL, INOUT run_digest text DEFAULT NULL,
	INOUT error text DEFAULT NULL)
	LANGUAGE plpgsql AS $$
DECLARE
	j @extschema@.kbench_jobs;
BEGIN
	IF wait < interval '0' THEN
		RAISE EXCEPTION 'wait must not be negative' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- names are qualified: a procedure that commits cannot SET search_path
	job_id := @extschema@.kbench_run(operation, mode, workload, implementation, device, protocol, timeout, retry);
	COMMIT;
	j := @extschema@.kbench_wait(job_id, coalesce(wait, 2 * coalesce(timeout,
	         coalesce(pg_catalog.current_setting('kernelindex.job_timeout', true)::interval, interval '10 minutes'))));
	status := j.status;
	run_status := j.run_status;
	run_digest := j.run_digest;
	error := j.error;
	-- the figure the check passes or fails on: the worst error over its tolerance (pass <= 1)
	SELECT r.median_ns, r.p20_ns, r.p80_ns, r.samples,
	       (r.manifest->'spec'->'sourceNative'->'metrics'->>'tolerance_ratio')::float8
	  INTO median_ns, p20_ns, p80_ns, samples, tolerance_ratio
	  FROM @extschema@.kbench_runs r WHERE r.digest = j.run_digest;
END $$;
REVOKE ALL ON PROCEDURE kbench_bench(text, text, jsonb, text, text, jsonb, interval, boolean, interval, bigint, text, text,
	bigint, bigint, bigint, bigint, double precision, text, text) FROM PUBLIC;
