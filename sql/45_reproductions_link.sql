-- Reproductions as the system records them (issue 24, item 3), over the
-- table of sql/45_reproductions.sql; CREATE OR REPLACE, so that the upgrade
-- from 0.2.0 runs this part as it is (sql/updates/0.2.0--0.3.0/41_*.sql).
--
-- A reproduction is another run, by another job, of the same workload: the
-- job kbench_reproduce queues, linked to the run it reproduces by
-- kbench__queue_reproduction (src/queue.c: as the extension's owner, with the
-- job that call queued), its run added by the system when it finishes.  No
-- function takes a job and a run to link.  It verifies the reported run only
-- on the same device class (kbench__device_key); on another one it is kept,
-- with its ratio, as "re-run elsewhere", and the export does not mark it.

CREATE OR REPLACE FUNCTION kbench__queue_reproduction(run_digest text, device text) RETURNS bigint
	AS 'MODULE_PATHNAME', 'kbench__queue_reproduction' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION kbench__queue_reproduction(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench__queue_reproduction(text, text) TO kbench_user;

-- The job's run, kept beside the link when the job finishes (the worker or
-- the agent storing it); never the reported run itself.
CREATE OR REPLACE FUNCTION kbench__reproduction_finished() RETURNS trigger
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	UPDATE kbench_reproduction_jobs SET reproduced_run = NEW.run_digest
	 WHERE job_id = NEW.id AND reproduced_run IS NULL AND reported_run <> NEW.run_digest;
	RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION kbench__reproduction_finished() FROM PUBLIC;
CREATE OR REPLACE TRIGGER reproduction_finished AFTER UPDATE OF run_digest ON kbench_jobs
	FOR EACH ROW WHEN (NEW.run_digest IS NOT NULL) EXECUTE FUNCTION kbench__reproduction_finished();

-- Reproduce a reported run here: returns the job id.
--   SELECT kbench_reproduce('sha256:c18a...', 'cpu');
CREATE OR REPLACE FUNCTION kbench_reproduce(run_digest text, device text DEFAULT NULL) RETURNS bigint
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
#variable_conflict use_variable
DECLARE
	q record;
	impl text;
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
	RETURN kbench__queue_reproduction(run_digest, device);
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
	       (SELECT kbench__op_key(o.name) FROM kbench_operations o WHERE o.digest = w.operation_digest) AS operation_key,
	       kbench__device_key(re) AS reported_device_key, kbench__device_key(xe) AS reproduced_device_key,
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
	              THEN CASE WHEN kbench__device_key(xe) = kbench__device_key(re) THEN 'verified' ELSE 're-run elsewhere' END
	         ELSE 'not reproduced' END AS tier) t;
GRANT SELECT ON kbench_reproductions TO PUBLIC;
