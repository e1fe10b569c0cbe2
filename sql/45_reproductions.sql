-- Reproduction (issue 14): kbench_reproduce(run_digest, device) queues the
-- reported run's workload with the same implementation, where it is
-- available here; kbench_reproductions lists every reproduction with the
-- ratio of the two medians and its tier: "verified" when its own run, another
-- run than the reported one, passed its check on the same WorkloadCase on the
-- same device class, "re-run elsewhere" on another device class.  The
-- catalog export marks a verified run (kbench_reproduction_marks).  The
-- functions and the view are in sql/45_reproductions_link.sql (0.3.0).

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

-- Which job reproduces which run.  Written by the system only: the link by
-- kbench__queue_reproduction (src/queue.c) with the job it queued, the job's
-- run by kbench__reproduction_finished when the job finishes (issue 24).
CREATE TABLE kbench_reproduction_jobs (
	job_id bigint PRIMARY KEY,           -- kbench_jobs.id (no FK: finished jobs are pruned)
	reported_run text NOT NULL,          -- kbench_runs.digest of the run reproduced
	reproduced_run text,                 -- the job's run, kept when the job row is pruned
	requested_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	owner name                           -- the job's owner, kept when the job row is pruned
);
CREATE INDEX ON kbench_reproduction_jobs (reported_run);
-- PUBLIC reads the public facts, not whose job it is (sql/90_privileges.sql)
REVOKE ALL ON kbench_reproduction_jobs FROM PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('kbench_reproduction_jobs', '');
