-- Reproductions: what the export says about a reproduced run, and the
-- links the system records (the table: sql/schema/45_reproductions.sql).

CREATE OR REPLACE FUNCTION kbench_reproduction_marks(run_digest text) RETURNS jsonb
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM kbench_reproductions v WHERE v.reported_run = run_digest AND v.verified;
	RETURN CASE WHEN n > 0 THEN jsonb_build_object('reproducedByKernelindex', true, 'independentReplicationCount', n)
	            ELSE '{}'::jsonb END;
END $$;
COMMENT ON FUNCTION kbench_reproduction_marks(text) IS 'what the catalog export adds to a run that kbench reproduced: reproducedByKernelindex, independentReplicationCount';
-- Reproduction (issue 14): kbench_reproduce(run_digest, device) queues the
-- reported run's workload with the same implementation, where it is
-- available here; kbench_reproductions lists every reproduction with the
-- ratio of the two medians and its tier: "verified" when its own run, another
-- run than the reported one, passed its check on the same WorkloadCase on the
-- same device class, "re-run elsewhere" on another device class.  The
-- catalog export marks a verified run (kbench_reproduction_marks).  The
-- functions and the view are below.

-- The request that reproduces a run: the kbench operation of its workload's
-- OperationSpec, the mode its protocol names, its variable axes and dtype,
-- and the implementation available here: a registered one with the same
-- digest, kbench's own (cpu, cuda, cuda/vN), a built-in python one
-- (kbench-python-<impl>-..., by the provider its callable names, or
-- Liger's CSV rows liger-bench-<op>-<impl>, with impl one of the
-- operation's built-in python implementations: huggingface, torch, liger,
-- or one of Liger's other providers for it, e.g. torch_compile for
-- embedding).  NULLs where there is none.
CREATE OR REPLACE FUNCTION _kernelindex.reproduction_request(run_digest text,
	OUT operation text, OUT mode text, OUT workload jsonb, OUT implementation text)
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT o->>'name', kbench_protocol_mode(p.name),
	       (SELECT jsonb_object_agg(a, w.axes->a) FROM jsonb_array_elements_text(o->'axes') a)
	         || jsonb_build_object('dtype', _kernelindex.float_dtype(w.dtypes)),
	       coalesce(
	         (SELECT g.name FROM kbench_registered_implementations g
	           WHERE g.implementation_digest = r.implementation_digest AND g.operation = o->>'name'
	           ORDER BY g.name LIMIT 1),
	         -- kbench's own, by the names the registry gives them (kb_impl_resolve)
	         (SELECT k->>'implementation' FROM jsonb_array_elements(o->'implementations') k
	           WHERE k->>'name' = i.name),
	         -- a Liger run by the provider its externalId names (tiled_geglu/full/deepspeed_tiled/...):
	         -- the import gives some providers one ImplementationRevision (deepspeed_tiled's is
	         -- huggingface's, its spec being the same), so the run says which it was, not the name
	         (SELECT b FROM jsonb_array_elements_text(o->'pythonImplementations') b
	           WHERE b = CASE WHEN r.manifest->'spec'->'sourceNative'->>'source' = 'liger-kernel-bench'
	                          THEN split_part(r.manifest->'spec'->'sourceNative'->>'externalId', '/', 3) END
	              OR (i.name LIKE 'kbench-python-%' AND split_part(i.manifest->'spec'->'callable'->>'symbol', '.', 1) = b)
	              OR i.name LIKE 'liger-bench-%-' || _kernelindex.slug(b)
	           ORDER BY b = CASE WHEN r.manifest->'spec'->'sourceNative'->>'source' = 'liger-kernel-bench'
	                             THEN split_part(r.manifest->'spec'->'sourceNative'->>'externalId', '/', 3) END DESC NULLS LAST,
	                    length(b) DESC LIMIT 1))
	  FROM kbench_runs r
	  JOIN kbench_workloads w ON w.digest = r.workload_digest
	  JOIN kbench_protocols p ON p.digest = r.protocol_digest
	  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	  -- one operation: tiled_swiglu's OperationSpec is swiglu's (the digest covers the spec), so
	  -- the one the run names (a Liger run's externalId, a kbench run's callable), else the first
	  LEFT JOIN LATERAL (SELECT o FROM jsonb_array_elements(kbench_registry()->'operations') o
	                      WHERE o->>'operationDigest' = w.operation_digest
	                      ORDER BY o->>'name' IN (split_part(r.manifest->'spec'->'sourceNative'->>'externalId', '/', 1),
	                                              split_part(i.manifest->'spec'->'callable'->>'symbol', '.', 2)) DESC NULLS LAST,
	                               o->>'name' LIMIT 1) ops ON true
	 WHERE r.digest = run_digest
$$;
REVOKE ALL ON FUNCTION _kernelindex.reproduction_request(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION _kernelindex.reproduction_request(text) TO kbench_user;
-- PUBLIC reads the public facts, not whose job it is (sql/code/90_privileges.sql)
REVOKE ALL ON kbench_reproduction_jobs FROM PUBLIC;
CREATE OR REPLACE FUNCTION _kernelindex.queue_reproduction(run_digest text, device text) RETURNS bigint
	AS 'MODULE_PATHNAME', 'kbench__queue_reproduction' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION _kernelindex.queue_reproduction(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION _kernelindex.queue_reproduction(text, text) TO kbench_user;

-- The job's run, kept beside the link when the job finishes (the worker or
-- the agent storing it); never the reported run itself.
CREATE OR REPLACE FUNCTION _kernelindex.reproduction_finished() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	UPDATE kbench_reproduction_jobs SET reproduced_run = NEW.run_digest
	 WHERE job_id = NEW.id AND reproduced_run IS NULL AND reported_run <> NEW.run_digest;
	RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.reproduction_finished() FROM PUBLIC;
CREATE OR REPLACE TRIGGER reproduction_finished AFTER UPDATE OF run_digest ON kbench_jobs
	FOR EACH ROW WHEN (NEW.run_digest IS NOT NULL) EXECUTE FUNCTION _kernelindex.reproduction_finished();

-- Reproduce a reported run here: returns the job id.
--   SELECT kbench_reproduce('sha256:c18a...', 'cpu');
CREATE OR REPLACE FUNCTION kbench_reproduce(run_digest text, device text DEFAULT NULL) RETURNS bigint
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
#variable_conflict use_variable
DECLARE
	q record;
	impl text;
BEGIN
	run_digest := _kernelindex.resolve_run(run_digest);
	SELECT i.name INTO impl FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.digest = run_digest;
	IF NOT FOUND THEN
		RAISE EXCEPTION USING ERRCODE = 'no_data_found', MESSAGE = format('no run %s in the catalog', run_digest);
	END IF;
	SELECT * INTO q FROM _kernelindex.reproduction_request(run_digest);
	IF q.operation IS NULL OR q.mode IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
			MESSAGE = format('run %s is not of an operation and mode that kbench runs', run_digest),
			HINT = 'kbench_device_operations lists what kbench runs.';
	END IF;
	IF q.implementation IS NULL THEN
		RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
			MESSAGE = format('the implementation of run %s (%s) is not available here', run_digest, coalesce(impl, 'not in the catalog')),
			HINT = 'kbench reproduces its own implementations, huggingface, torch, liger, Liger''s other providers for the operations Liger benchmarks them with, and registered implementations with the same digest.';
	END IF;
	RETURN _kernelindex.queue_reproduction(run_digest, device);
END $$;
REVOKE ALL ON FUNCTION kbench_reproduce(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_reproduce(text, text) TO kbench_user;

-- Every reproduction: the reported run, the one measured here, the ratio of
-- their medians (here / reported: above 1 is slower here), verified and
-- tier.  tier: pending (the job has not finished), verified (its run passed
-- its check on the same WorkloadCase on the same device class), re-run
-- elsewhere (the same, on another device class: not verified), not
-- reproduced (its run failed, or the job ended without one).  job_id and
-- job_status are shown to the job's owner (and to kbench_admin and
-- pg_read_all_data, who see every job), NULL to everyone else: which run
-- was reproduced, by which run, and the verdict are public, as runs are.
CREATE OR REPLACE VIEW kbench_reproductions AS
	SELECT l.reported_run, ri.name AS reported_implementation, w.name AS workload,
	       kbench_protocol_mode(rp.name) AS mode, re.product AS reported_on, r.median_ns AS reported_median_ns,
	       CASE WHEN s.visible THEN l.job_id END AS job_id, CASE WHEN s.visible THEN j.status END AS job_status,
	       l.reproduced_run,
	       x.status AS reproduced_status, xe.product AS reproduced_on, x.median_ns AS reproduced_median_ns,
	       x.median_ns::float8 / nullif(r.median_ns, 0) AS ratio,
	       coalesce(t.tier = 'verified', false) AS verified,
	       l.requested_at,
	       (SELECT _kernelindex.op_key(o.name) FROM kbench_operations o WHERE o.digest = w.operation_digest) AS operation_key,
	       _kernelindex.device_key(re) AS reported_device_key, _kernelindex.device_key(xe) AS reproduced_device_key,
	       t.tier
	  FROM kbench_reproduction_jobs l
	  JOIN kbench_runs r ON r.digest = l.reported_run
	  LEFT JOIN kbench_implementations ri ON ri.digest = r.implementation_digest
	  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
	  LEFT JOIN kbench_protocols rp ON rp.digest = r.protocol_digest
	  LEFT JOIN kbench_environments re ON re.digest = r.environment_digest
	  LEFT JOIN kbench_jobs j ON j.id = l.job_id
	  LEFT JOIN kbench_runs x ON x.digest = l.reproduced_run AND x.digest <> l.reported_run
	  LEFT JOIN kbench_environments xe ON xe.digest = x.environment_digest
	  CROSS JOIN LATERAL (SELECT coalesce(j.owner, l.owner) = current_user
	                             OR pg_has_role(current_user, 'pg_read_all_data', 'USAGE')
	                             OR pg_has_role(current_user, 'kbench_admin', 'USAGE') AS visible) s
	  CROSS JOIN LATERAL (SELECT CASE
	         WHEN x.digest IS NULL THEN CASE WHEN j.status IN ('queued', 'running') THEN 'pending' ELSE 'not reproduced' END
	         WHEN x.status = 'passed' AND x.workload_digest = r.workload_digest
	              THEN CASE WHEN _kernelindex.device_key(xe) = _kernelindex.device_key(re) THEN 'verified' ELSE 're-run elsewhere' END
	         ELSE 'not reproduced' END AS tier) t;
GRANT SELECT ON kbench_reproductions TO PUBLIC;
