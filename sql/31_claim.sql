--------------------------------------------------------------------------
-- The claim: how a queued job (sql/30_runner.sql) passes to a worker or an
-- agent.  The one-device form is 0.1.0's, redefined (CREATE OR REPLACE);
-- the upgrade runs this part as it is, after the job columns it sets are
-- added (sql/updates/0.1.0--0.2.0/84_fleet_jobs_claim.sql is a link to it).
--------------------------------------------------------------------------

-- Claim the oldest queued job of any of the devices for a worker or an
-- agent: the one place jobs change hands.  A worker gives its device
-- (kbench__claim('cuda:0', pid) below) and its pid; an agent (kbench_agent_claim,
-- sql/85_fleet.sql) the names its devices answer to, its pid and its name.
-- FOR UPDATE SKIP LOCKED lets concurrent claimers take different jobs
-- without waiting on each other (test/specs/claim.spec).  An agent never
-- takes a paired A/B job (it runs in a worker: kb_compare) nor a job queued
-- with no device (worker_only: kbench_run picked a worker's device).
-- (PL/pgSQL, whose body is not checked against the table when it is made:
-- the 0.1.0 -> 0.2.0 upgrade makes it before 0.3.0 adds worker_only.)
CREATE OR REPLACE FUNCTION kbench__claim(p_devices text[], p_pid int, p_agent text DEFAULT NULL) RETURNS SETOF kbench_jobs
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	j kbench_jobs;
BEGIN
	UPDATE kbench_jobs SET status = 'running', started_at = clock_timestamp(), worker_pid = p_pid,
	       attempts = attempts + 1, progress = 0, phase = 'setup', agent = p_agent, cancel_requested = false
	 WHERE id = (SELECT id FROM kbench_jobs WHERE status = 'queued' AND device = ANY (p_devices)
	                AND (p_agent IS NULL OR (comparison IS NULL AND NOT worker_only))
	              ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
	RETURNING * INTO j;
	IF FOUND THEN
		RETURN NEXT j;
	END IF;
END $$;
REVOKE ALL ON FUNCTION kbench__claim(text[], int, text) FROM PUBLIC;
-- The in-server worker's form, one device (as 0.1.0's, which a worker of
-- this library still finds before ALTER EXTENSION ... UPDATE).
CREATE OR REPLACE FUNCTION kbench__claim(p_device text, p_pid int) RETURNS SETOF kbench_jobs
	LANGUAGE sql SET search_path = @extschema@, pg_temp AS $$
	SELECT * FROM kbench__claim(ARRAY[p_device], p_pid, NULL)
$$;
REVOKE ALL ON FUNCTION kbench__claim(text, int) FROM PUBLIC;
