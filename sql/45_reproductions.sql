-- Reproduction (issue 14): kbench_reproduce(run_digest, device) queues the
-- reported run's workload with the same implementation, where it is
-- available here; kbench_reproductions lists every reproduction with the
-- ratio of the two medians, the "verified" tier: a reproduction verifies a
-- run when its own run passed its check on the same WorkloadCase.  The
-- catalog export marks a verified run (kbench_reproduction_marks).

-- The request that reproduces a run: the kbench operation of its workload's
-- OperationSpec, the mode its protocol names, its variable axes and dtype,
-- and the implementation available here: a registered one with the same
-- digest, kbench's own (cpu, cuda, cuda/vN), a built-in python one
-- (kbench-python-<impl>-..., or Liger's CSV rows liger-bench-<op>-<impl>
-- with impl huggingface, torch or liger).  NULLs where there is none.
CREATE FUNCTION kbench__reproduction_request(run_digest text,
	OUT operation text, OUT mode text, OUT workload jsonb, OUT implementation text)
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT o->>'name', kbench_protocol_mode(p.name),
	       (SELECT jsonb_object_agg(a, w.axes->a) FROM jsonb_array_elements_text(o->'axes') a)
	         || jsonb_build_object('dtype', kbench__float_dtype(w.dtypes)),
	       coalesce(
	         (SELECT g.name FROM kbench_registered_implementations g
	           WHERE g.implementation_digest = r.implementation_digest AND g.operation = o->>'name'
	           ORDER BY g.name LIMIT 1),
	         -- kbench's own, by the names the registry gives them (kb_impl_resolve)
	         (SELECT k->>'implementation' FROM jsonb_array_elements(o->'implementations') k
	           WHERE k->>'name' = i.name),
	         substring(i.name FROM '^(?:kbench-python-|liger-bench-.*-)(huggingface|torch|liger)(?:-.*)?$'))
	  FROM kbench_runs r
	  JOIN kbench_workloads w ON w.digest = r.workload_digest
	  JOIN kbench_protocols p ON p.digest = r.protocol_digest
	  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	  LEFT JOIN LATERAL (SELECT o FROM jsonb_array_elements(kbench_registry()->'operations') o
	                      WHERE o->>'operationDigest' = w.operation_digest) ops ON true
	 WHERE r.digest = run_digest
$$;
REVOKE ALL ON FUNCTION kbench__reproduction_request(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench__reproduction_request(text) TO kbench_user;

-- Which job reproduces which run; written only by kbench__link_reproduction.
CREATE TABLE kbench_reproduction_jobs (
	job_id bigint PRIMARY KEY,           -- kbench_jobs.id (no FK: finished jobs are pruned)
	reported_run text NOT NULL,          -- kbench_runs.digest of the run reproduced
	reproduced_run text,                 -- the job's run, kept when the job row is pruned
	requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX ON kbench_reproduction_jobs (reported_run);
REVOKE ALL ON kbench_reproduction_jobs FROM PUBLIC;
GRANT SELECT ON kbench_reproduction_jobs TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('kbench_reproduction_jobs', '');

-- Link a job to the run it reproduces, after checking that the job asks
-- for exactly what the run's reproduction is: no job can pose as another
-- run's reproduction.
CREATE FUNCTION kbench__link_reproduction(p_run text, p_job bigint) RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM kbench_jobs j, kbench__reproduction_request(p_run) q
	                WHERE j.id = p_job AND j.operation = q.operation AND j.mode = q.mode
	                  AND j.workload = q.workload AND j.implementation IS NOT DISTINCT FROM q.implementation) THEN
		RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
			MESSAGE = format('job %s does not reproduce run %s', p_job, p_run);
	END IF;
	INSERT INTO kbench_reproduction_jobs (job_id, reported_run) VALUES (p_job, p_run);
END $$;
REVOKE ALL ON FUNCTION kbench__link_reproduction(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench__link_reproduction(text, bigint) TO kbench_user;

-- The job's run, kept beside the link when the job finishes.
CREATE FUNCTION kbench__reproduction_finished() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	UPDATE kbench_reproduction_jobs SET reproduced_run = NEW.run_digest WHERE job_id = NEW.id;
	RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION kbench__reproduction_finished() FROM PUBLIC;
CREATE TRIGGER reproduction_finished AFTER UPDATE OF run_digest ON kbench_jobs
	FOR EACH ROW WHEN (NEW.run_digest IS NOT NULL) EXECUTE FUNCTION kbench__reproduction_finished();

-- Reproduce a reported run here: returns the job id.
--   SELECT kbench_reproduce('sha256:c18a...', 'cpu');
CREATE FUNCTION kbench_reproduce(run_digest text, device text DEFAULT NULL) RETURNS bigint
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
#variable_conflict use_variable
DECLARE
	q record;
	impl text;
	job bigint;
BEGIN
	run_digest := kbench__resolve_run(run_digest);
	SELECT i.name INTO impl FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.digest = run_digest;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('no run %s in the catalog', run_digest);
	END IF;
	SELECT * INTO q FROM kbench__reproduction_request(run_digest);
	IF q.operation IS NULL OR q.mode IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
			MESSAGE = format('run %s is not of an operation and mode that kbench runs', run_digest),
			HINT = 'kbench_device_operations lists what kbench runs.';
	END IF;
	IF q.implementation IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
			MESSAGE = format('the implementation of run %s (%s) is not available here', run_digest, coalesce(impl, 'not in the catalog')),
			HINT = 'kbench reproduces its own implementations, huggingface, torch, liger, and registered implementations with the same digest.';
	END IF;
	job := kbench_run(q.operation, q.mode, q.workload, q.implementation, device);
	PERFORM kbench__link_reproduction(run_digest, job);
	RETURN job;
END $$;
REVOKE ALL ON FUNCTION kbench_reproduce(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_reproduce(text, text) TO kbench_user;

-- Every reproduction: the reported run, the one measured here, the ratio of
-- their medians (here / reported: above 1 is slower here), and verified:
-- the reproduction passed its check on the same WorkloadCase.
CREATE VIEW kbench_reproductions AS
	SELECT l.reported_run, ri.name AS reported_implementation, w.name AS workload,
	       kbench_protocol_mode(rp.name) AS mode, re.product AS reported_on, r.median_ns AS reported_median_ns,
	       l.job_id, j.status AS job_status, coalesce(l.reproduced_run, j.run_digest) AS reproduced_run,
	       x.status AS reproduced_status, xe.product AS reproduced_on, x.median_ns AS reproduced_median_ns,
	       x.median_ns::float8 / nullif(r.median_ns, 0) AS ratio,
	       coalesce(x.status = 'passed' AND x.workload_digest = r.workload_digest, false) AS verified,
	       l.requested_at,
	       (SELECT kbench__op_key(o.name) FROM kbench_operations o WHERE o.digest = w.operation_digest) AS operation_key,
	       kbench__device_key(re) AS reported_device_key, kbench__device_key(xe) AS reproduced_device_key
	  FROM kbench_reproduction_jobs l
	  JOIN kbench_runs r ON r.digest = l.reported_run
	  LEFT JOIN kbench_implementations ri ON ri.digest = r.implementation_digest
	  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
	  LEFT JOIN kbench_protocols rp ON rp.digest = r.protocol_digest
	  LEFT JOIN kbench_environments re ON re.digest = r.environment_digest
	  LEFT JOIN kbench_jobs j ON j.id = l.job_id
	  LEFT JOIN kbench_runs x ON x.digest = coalesce(l.reproduced_run, j.run_digest)
	  LEFT JOIN kbench_environments xe ON xe.digest = x.environment_digest;
GRANT SELECT ON kbench_reproductions TO PUBLIC;
