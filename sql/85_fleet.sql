-- Fleet: `kbench agent` processes on GPU hosts without a database
-- (kernels/agent/, docs/FLEET.md).  An agent connects over libpq as a role
-- that is a member of kbench_agent, registers itself and its devices,
-- claims jobs through kbench__claim (the in-server worker's claim),
-- heartbeats while it lives, and stores results through kbench_ingest.
-- Everything an agent does goes through the SECURITY DEFINER functions
-- below: kbench_agent has no right on any table.
--
-- Routing: a job's device is what kbench_run was given.  Besides the
-- in-server workers' "cpu" and "cuda:N", it may name
--   a device class   "cpu", "cuda:H200" (an agent GPU whose class is
--                    cuda:H200, or begins with "cuda:H200-")
--   a named agent    "agent:gpu-07" (its best device), "agent:gpu-07/cuda:1"
-- An agent claims the jobs whose device is one of the names of its devices
-- (kbench__agent_names).  A job whose agent stops heartbeating is recovered
-- after kernelindex.agent_lease (kbench__recover_agent_jobs) as a worker's
-- job is when the worker dies: re-queued when it may retry, else failed.

-- The role of agents (a login role per agent host is made a member of it):
-- only the kbench_agent_* functions below, no table rights.  Cluster-wide,
-- made only when missing, like sql/05_roles.sql.
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_agent') THEN
    CREATE ROLE kbench_agent NOLOGIN;
  END IF;
END
$roles$;

CREATE TABLE kbench_agents (
	name text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
	role name NOT NULL,                  -- the login role that registered the name; only it may use it
	host text NOT NULL,
	pid int NOT NULL,                    -- the agent's process id on its host
	version text NOT NULL,               -- kbench's release
	session bigint NOT NULL,             -- new at each registration: an older process of the name is refused
	registered_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	stopped_at timestamptz               -- set when it stopped cleanly
);
CREATE SEQUENCE kbench_agent_sessions;

CREATE TABLE kbench_agent_devices (
	agent text NOT NULL REFERENCES kbench_agents (name) ON DELETE CASCADE,
	device text NOT NULL,                -- the agent's own name for it: "cpu", "cuda:0"
	class text NOT NULL,                 -- what a job names to reach any such device: "cpu", "cuda:H200"
	product text,
	description jsonb NOT NULL,          -- what `kbench devices --json` says of it (the CPU's environment)
	position int NOT NULL,               -- its order on the agent: GPUs first, then the CPU
	PRIMARY KEY (agent, device)
);
REVOKE ALL ON kbench_agents, kbench_agent_devices, kbench_agent_sessions FROM PUBLIC;
GRANT SELECT ON kbench_agents, kbench_agent_devices TO PUBLIC;
SELECT pg_catalog.pg_extension_config_dump('kbench_agents', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_agent_devices', '');

-- Raises while a role that is not a superuser may create objects in the
-- extension's schema: agents claim nothing then, as workers (src/security.c).
CREATE FUNCTION kbench__require_safe_schema() RETURNS void
	AS 'MODULE_PATHNAME', 'kbench__require_safe_schema' LANGUAGE C VOLATILE;

-- Takes a cancel kbench_wait left in shared memory for a job no worker runs.
CREATE FUNCTION kbench__take_pending_cancel(job_id bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'kbench__take_pending_cancel' LANGUAGE C VOLATILE STRICT;

-- kernelindex.agent_lease in seconds (30 when the library is not loaded).
CREATE FUNCTION kbench__agent_lease() RETURNS double precision
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT coalesce(extract(epoch FROM current_setting('kernelindex.agent_lease', true)::interval)::float8, 30)
$$;

-- The class of a device, from what the kernels library says of it:
-- "cpu", or "cuda:" and the product without "NVIDIA ", each run of other
-- characters than letters, digits and "." as one "-" ("NVIDIA H100 80GB
-- HBM3": cuda:H100-80GB-HBM3).
CREATE FUNCTION kbench__device_class(device text, product text) RETURNS text
	LANGUAGE sql IMMUTABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT CASE WHEN device = 'cpu' THEN 'cpu'
	            ELSE 'cuda:' || coalesce(nullif(btrim(regexp_replace(regexp_replace(coalesce(product, ''), '^\s*NVIDIA\s+', ''),
	                                                         '[^A-Za-z0-9.]+', '-', 'g'), '-'), ''), 'unknown') END
$$;

-- Every device name a job may give to reach one device of an agent: its
-- class and each prefix of it that ends before a "-" (cuda:H100 reaches
-- cuda:H100-80GB-HBM3), "agent:NAME/DEVICE", and "agent:NAME" for the
-- agent's first device.
CREATE FUNCTION kbench__agent_names(agent text, device text, class text, first boolean) RETURNS text[]
	LANGUAGE sql IMMUTABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT ARRAY(SELECT DISTINCT n FROM (
		SELECT class AS n
		UNION ALL
		SELECT array_to_string((string_to_array(class, '-'))[1:k], '-')
		  FROM generate_series(1, array_length(string_to_array(class, '-'), 1)) k
		UNION ALL
		SELECT 'agent:' || agent || '/' || device
		UNION ALL
		SELECT 'agent:' || agent WHERE first) s ORDER BY n)
$$;

-- Does an agent serve a job's device?  Then the local device it would run
-- on (the first such), else NULL.  kbench_run routes with it.
CREATE FUNCTION kbench__agent_route(p_device text) RETURNS text
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT d.device FROM kbench_agent_devices d JOIN kbench_agents a ON a.name = d.agent
	 WHERE p_device = ANY (kbench__agent_names(d.agent, d.device, d.class, d.position = 0))
	 ORDER BY a.stopped_at IS NOT NULL, a.heartbeat_at DESC, d.position LIMIT 1
$$;

-- Recover the jobs of agents that stopped heartbeating: no heartbeat for
-- kernelindex.agent_lease (counted from the server's start too, so that
-- agents have a full lease to come back after a restart).  As the worker's
-- recovery: a job past its timeout ends as timeout, one that may retry is
-- re-queued, the others fail with the reason.  Claimers call it; returns
-- how many jobs it recovered.
CREATE FUNCTION kbench__recover_agent_jobs() RETURNS bigint
	LANGUAGE sql SET search_path = @extschema@, pg_temp AS $$
	WITH lost AS (
		SELECT j.id, j.started_at + j.timeout < clock_timestamp() AS overdue, a.host, a.pid AS agent_pid,
		       clock_timestamp() - a.heartbeat_at AS silent
		  FROM kbench_jobs j JOIN kbench_agents a ON a.name = j.agent
		 WHERE j.status = 'running'
		   AND a.heartbeat_at < clock_timestamp() - make_interval(secs => kbench__agent_lease())
		   AND pg_postmaster_start_time() < clock_timestamp() - make_interval(secs => kbench__agent_lease())
		   FOR UPDATE OF j SKIP LOCKED),
	done AS (
		UPDATE kbench_jobs j SET
		       status = CASE WHEN j.cancel_requested THEN 'canceled' WHEN l.overdue THEN 'timeout'
		                     WHEN j.retries_left > 0 THEN 'queued' ELSE 'failed' END,
		       retries_left = CASE WHEN l.overdue THEN j.retries_left ELSE greatest(j.retries_left - 1, 0) END,
		       finished_at = CASE WHEN j.retries_left > 0 AND NOT l.overdue AND NOT j.cancel_requested THEN NULL
		                          ELSE clock_timestamp() END,
		       error = CASE WHEN j.cancel_requested THEN
		           format('canceled while its agent %s (pid %s on %s) was gone', j.agent, l.agent_pid, l.host)
		         WHEN l.overdue THEN
		           format('stopped after the job''s timeout of %s: the agent %s (pid %s on %s) stopped heartbeating',
		                  j.timeout, j.agent, l.agent_pid, l.host)
		         ELSE format('the agent %s (pid %s on %s) stopped heartbeating while running the job: no heartbeat for %s (kernelindex.agent_lease is %s s)%s',
		                  j.agent, l.agent_pid, l.host, date_trunc('second', l.silent), kbench__agent_lease(),
		                  CASE WHEN j.retries_left > 0 THEN '; re-queued for its retry' ELSE '' END) END,
		       worker_pid = NULL, cancel_requested = false
		  FROM lost l WHERE j.id = l.id
		RETURNING j.status)
	SELECT count(*) FROM done
$$;

-- The agent of a name, checked against the calling role; raises unless
-- the role registered the name (or is kbench_admin) and, when session is
-- given, the session is the name's latest.
CREATE FUNCTION kbench__agent_check(p_name text, p_session bigint) RETURNS kbench_agents
	LANGUAGE plpgsql STABLE SET search_path = @extschema@, pg_temp AS $$
DECLARE
	a kbench_agents;
BEGIN
	SELECT * INTO a FROM kbench_agents WHERE name = p_name;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'agent "%" is not registered', p_name USING ERRCODE = 'no_data_found',
			HINT = 'An agent registers itself when it starts (kbench agent).';
	END IF;
	IF a.role <> session_user AND NOT pg_has_role(session_user, 'kbench_admin', 'USAGE') THEN
		RAISE EXCEPTION 'agent "%" belongs to role %', p_name, a.role USING ERRCODE = 'insufficient_privilege',
			DETAIL = 'Only the role that registered an agent name may use it.';
	END IF;
	IF p_session IS NOT NULL AND a.session <> p_session THEN
		RAISE EXCEPTION 'agent "%" was registered again by another process (pid % on %)', p_name, a.pid, a.host
			USING ERRCODE = 'object_not_in_prerequisite_state',
			HINT = 'Two agents may not share a name; this one must stop.';
	END IF;
	RETURN a;
END $$;

-- Register an agent and its devices (what `kbench devices --json` printed,
-- those in served or all when served is NULL).  The jobs that an earlier
-- process of the name left running are recovered at once, as the worker
-- recovers its device's jobs when it starts.  Returns the new session and
-- the lease in seconds.
CREATE FUNCTION kbench_agent_register(name text, host text, pid int, version text, devices jsonb,
	served text[] DEFAULT NULL, OUT session bigint, OUT lease_s double precision)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	p_name ALIAS FOR name;
	old kbench_agents;
	n int;
BEGIN
	PERFORM kbench__require_safe_schema();
	IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$' THEN
		RAISE EXCEPTION 'invalid agent name "%"', p_name USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'An agent name is 1 to 63 letters, digits, ".", "_" or "-", beginning with a letter or digit.';
	END IF;
	IF devices IS NULL OR jsonb_typeof(devices) <> 'array' THEN
		RAISE EXCEPTION 'devices must be a JSON array' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Give what kbench devices --json prints.';
	END IF;
	SELECT * INTO old FROM kbench_agents a WHERE a.name = p_name FOR UPDATE;
	IF FOUND THEN
		PERFORM kbench__agent_check(p_name, NULL);
		UPDATE kbench_jobs j SET
		       status = CASE WHEN j.retries_left > 0 THEN 'queued' ELSE 'failed' END,
		       retries_left = greatest(j.retries_left - 1, 0),
		       finished_at = CASE WHEN j.retries_left > 0 THEN NULL ELSE clock_timestamp() END,
		       error = format('the agent %s (pid %s on %s) stopped while running the job: it was killed or its host restarted%s',
		                      j.agent, old.pid, old.host, CASE WHEN j.retries_left > 0 THEN '; re-queued for its retry' ELSE '' END),
		       worker_pid = NULL, cancel_requested = false
		 WHERE j.status = 'running' AND j.agent = p_name;
		UPDATE kbench_agents a SET host = kbench_agent_register.host, pid = kbench_agent_register.pid,
		       version = kbench_agent_register.version, session = nextval('kbench_agent_sessions'),
		       registered_at = clock_timestamp(), heartbeat_at = clock_timestamp(), stopped_at = NULL
		 WHERE a.name = p_name;
		DELETE FROM kbench_agent_devices d WHERE d.agent = p_name;
	ELSE
		INSERT INTO kbench_agents (name, role, host, pid, version, session)
		VALUES (p_name, session_user, kbench_agent_register.host, kbench_agent_register.pid,
		        kbench_agent_register.version, nextval('kbench_agent_sessions'));
	END IF;
	INSERT INTO kbench_agent_devices (agent, device, class, product, description, position)
	SELECT p_name, e->>'name', kbench__device_class(e->>'name', e->>'product'), coalesce(e->>'product', 'CPU'), e,
	       (row_number() OVER (ORDER BY e->>'name' = 'cpu', o) - 1)::int
	  FROM jsonb_array_elements(devices) WITH ORDINALITY x(e, o)
	 WHERE (served IS NULL OR e->>'name' = ANY (served)) AND (e->>'name' = 'cpu' OR e->>'name' ~ '^cuda:[0-9]+$');
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		RAISE EXCEPTION 'agent "%" has no device to serve', p_name USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Serve cpu or cuda:N devices that kbench devices lists.';
	END IF;
	SELECT a.session INTO session FROM kbench_agents a WHERE a.name = p_name;
	lease_s := kbench__agent_lease();
END $$;

-- A heartbeat: the agent lives, and how far its job is.  Returns whether
-- the job is to stop (kbench_cancel) and the lease in seconds.
CREATE FUNCTION kbench_agent_heartbeat(name text, session bigint, job_id bigint DEFAULT NULL,
	attempt int DEFAULT NULL, progress real DEFAULT NULL, OUT cancel boolean, OUT lease_s double precision)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
BEGIN
	PERFORM kbench__agent_check(name, session);
	UPDATE kbench_agents a SET heartbeat_at = clock_timestamp() WHERE a.name = kbench_agent_heartbeat.name;
	cancel := false;
	IF job_id IS NOT NULL THEN
		UPDATE kbench_jobs j SET progress = coalesce(kbench_agent_heartbeat.progress, j.progress)
		 WHERE j.id = job_id AND j.attempts = attempt AND j.status = 'running' AND j.agent = kbench_agent_heartbeat.name
		RETURNING j.cancel_requested INTO cancel;
		-- a job no longer this agent's (recovered, or canceled while gone) stops too, and one
		-- whose kbench_wait was cancelled (kept in the server's shared memory)
		cancel := coalesce(cancel, true) OR kbench__take_pending_cancel(job_id);
	END IF;
	lease_s := kbench__agent_lease();
END $$;

-- Claim the oldest queued job for one of the agent's devices, through the
-- workers' kbench__claim, after recovering the jobs of agents gone silent.
-- Returns the job, the local device to run it on, and for a registered
-- implementation its entry and version.
CREATE FUNCTION kbench_agent_claim(name text, session bigint, pid int,
	OUT id bigint, OUT attempt int, OUT operation text, OUT mode text, OUT workload text,
	OUT implementation text, OUT protocol text, OUT timeout_ms double precision, OUT device text,
	OUT entry text, OUT impl_version text)
	RETURNS SETOF record
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	names text[];
	claimed kbench_jobs;
BEGIN
	PERFORM kbench__agent_check(name, session);
	PERFORM kbench__require_safe_schema();
	UPDATE kbench_agents a SET heartbeat_at = clock_timestamp() WHERE a.name = kbench_agent_claim.name;
	-- an agent runs one job at a time and claims only when it runs none: a
	-- job still running under its name lost its claim's answer (the
	-- connection broke as it committed), and goes back to the queue
	UPDATE kbench_jobs o SET status = 'queued', started_at = NULL, worker_pid = NULL, agent = NULL,
	       cancel_requested = false,
	       error = format('the agent %s lost its claim of the job (its connection broke); re-queued', o.agent)
	 WHERE o.status = 'running' AND o.agent = kbench_agent_claim.name;
	PERFORM kbench__recover_agent_jobs();
	SELECT array_agg(n) INTO names FROM kbench_agent_devices d,
	       unnest(kbench__agent_names(d.agent, d.device, d.class, d.position = 0)) n
	 WHERE d.agent = kbench_agent_claim.name;
	SELECT * INTO claimed FROM kbench__claim(names, pid, kbench_agent_claim.name);
	IF claimed.id IS NULL THEN
		RETURN;
	END IF;
	id := claimed.id;
	attempt := claimed.attempts;
	operation := claimed.operation;
	mode := claimed.mode;
	workload := claimed.workload::text;
	implementation := claimed.implementation;
	protocol := claimed.protocol::text;
	timeout_ms := extract(epoch FROM claimed.timeout)::float8 * 1000;
	SELECT d.device INTO device FROM kbench_agent_devices d
	 WHERE d.agent = kbench_agent_claim.name AND claimed.device = ANY (kbench__agent_names(d.agent, d.device, d.class, d.position = 0))
	 ORDER BY d.position LIMIT 1;
	SELECT g.entry, g.version INTO entry, impl_version FROM kbench_registered_implementations g
	 WHERE g.name = claimed.implementation AND g.operation = claimed.operation;
	RETURN NEXT;
END $$;

-- Store what a job produced (what `kbench run --json` prints: its
-- manifests and kept raw samples, through kbench_ingest) and finish the
-- job, in one transaction.  session NULL: a result kept on the agent's disk
-- while the server was away, stored by a later process of the agent.  The
-- run is stored even when the job is no longer the agent's (recovered
-- meanwhile); returns whether the job was finished.
CREATE FUNCTION kbench_agent_finish(name text, session bigint, job_id bigint, attempt int, status text,
	result json DEFAULT NULL, error text DEFAULT NULL)
	RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	v_digest text;
	v_run_status kbench_status;
	v_done boolean;
BEGIN
	PERFORM kbench__agent_check(name, session);
	IF status IS NULL OR status NOT IN ('passed', 'failed', 'timeout', 'canceled') THEN
		RAISE EXCEPTION 'invalid job status "%"', status USING ERRCODE = 'invalid_parameter_value',
			HINT = 'A job ends passed, failed, timeout or canceled.';
	END IF;
	IF result IS NOT NULL THEN
		SELECT i.digest INTO v_digest FROM kbench_ingest(result, 'kbench') i WHERE i.kind = 'BenchmarkRun';
		SELECT r.status INTO v_run_status FROM kbench_runs r WHERE r.digest = v_digest;
	END IF;
	WITH f AS (
		UPDATE kbench_jobs j SET status = kbench_agent_finish.status, run_status = v_run_status,
		       run_digest = v_digest, error = kbench_agent_finish.error, finished_at = clock_timestamp(), progress = 1,
		       cancel_requested = false
		 WHERE j.id = job_id AND j.attempts = attempt AND j.status = 'running' AND j.agent = kbench_agent_finish.name
		RETURNING j.id)
	SELECT count(*) = 1 INTO v_done FROM f;
	IF v_done THEN
		PERFORM pg_notify('kbench_jobs', '');
	END IF;
	RETURN v_done;
END $$;

-- An agent that stops (SIGTERM) puts its running job back in the queue, as
-- a worker does at a server shutdown, and says it stopped.
CREATE FUNCTION kbench_agent_stop(name text, session bigint, job_id bigint DEFAULT NULL, attempt int DEFAULT NULL)
	RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
BEGIN
	PERFORM kbench__agent_check(name, session);
	UPDATE kbench_jobs j SET status = 'queued', started_at = NULL, worker_pid = NULL, cancel_requested = false,
	       error = format('interrupted: the agent %s stopped; re-queued', j.agent)
	 WHERE j.id = job_id AND j.attempts = attempt AND j.status = 'running' AND j.agent = kbench_agent_stop.name;
	UPDATE kbench_agents a SET stopped_at = clock_timestamp() WHERE a.name = kbench_agent_stop.name;
END $$;

-- The agents: where they run, their last heartbeat, whether they are
-- alive (a heartbeat within the lease), and how many jobs each runs.
CREATE VIEW kbench_agent_status AS
	SELECT a.name, a.role, a.host, a.pid, a.version, a.registered_at, a.heartbeat_at,
	       CASE WHEN a.stopped_at IS NOT NULL THEN 'stopped'
	            WHEN a.heartbeat_at < clock_timestamp() - make_interval(secs => kbench__agent_lease()) THEN 'lost'
	            ELSE 'alive' END AS state,
	       (SELECT count(*) FROM kbench_jobs j WHERE j.agent = a.name AND j.status = 'running') AS running_jobs,
	       ARRAY(SELECT d.device || '=' || d.class FROM kbench_agent_devices d WHERE d.agent = a.name ORDER BY d.position)
	         AS devices
	  FROM kbench_agents a;
GRANT SELECT ON kbench_agent_status TO PUBLIC;

-- kbench_workers: the in-server workers (from shared memory) and the
-- agents' devices together, with what each runs.  As for a worker, a
-- running job's id, progress and start show only to those who may see the
-- job (its owner, kbench_admin, pg_read_all_data).
CREATE OR REPLACE VIEW kbench_workers AS
	SELECT w.pid, w.device, w.product, w.state, w.job_id, w.progress, w.started_at,
	       'worker'::text AS kind, NULL::text AS host, NULL::timestamptz AS heartbeat_at
	  FROM kbench__workers() w
	UNION ALL
	SELECT a.pid, 'agent:' || a.name || '/' || d.device, d.product,
	       CASE WHEN a.stopped_at IS NOT NULL THEN 'stopped'
	            WHEN a.heartbeat_at < clock_timestamp() - make_interval(secs => kbench__agent_lease()) THEN 'lost'
	            WHEN j.id IS NOT NULL THEN 'running' ELSE 'idle' END,
	       CASE WHEN j.visible THEN j.id END, CASE WHEN j.visible THEN j.progress END,
	       CASE WHEN j.visible THEN j.started_at END,
	       'agent', a.host, a.heartbeat_at
	  FROM kbench_agents a
	  JOIN kbench_agent_devices d ON d.agent = a.name
	  LEFT JOIN LATERAL (
		SELECT j.id, j.progress, j.started_at,
		       j.owner = current_user OR pg_has_role(current_user, 'pg_read_all_data', 'USAGE')
		         OR pg_has_role(current_user, 'kbench_admin', 'USAGE') AS visible
		  FROM kbench_jobs j
		 WHERE j.agent = a.name AND j.status = 'running'
		   AND j.device = ANY (kbench__agent_names(a.name, d.device, d.class, d.position = 0))
		 ORDER BY j.id LIMIT 1) j ON true;
GRANT SELECT ON kbench_workers TO PUBLIC;

-- The operations each device can run: every device of kbench_workers (the
-- workers' and the agents'), the kernels' registry for each.
-- implementations: kbench's own there, as kbench_run's implementation
-- argument takes them ('cuda/v2': a kernel variant; kb_impl_resolve names
-- them); other_implementations: the built-in python ones (huggingface,
-- torch, liger: run by the python harness where torch, and for liger
-- liger_kernel, can be imported) and those registered for the operation
-- (kbench_registered_implementations).  kind: worker or agent.
-- (CREATE OR REPLACE: in an update it replaces 0.1.0's view, whose columns
-- come first here too.)
CREATE OR REPLACE VIEW kbench_device_operations AS
	SELECT w.device, w.product, o->>'name' AS operation,
	       ARRAY(SELECT jsonb_array_elements_text(o->'modes')) AS modes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'axes')) AS axes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'dtypes')) AS dtypes,
	       d.kind AS implementation,
	       ARRAY(SELECT i->>'implementation' FROM jsonb_array_elements(o->'implementations') i
	              WHERE i->>'device' = d.kind) AS implementations,
	       w.kind,
	       ARRAY(SELECT jsonb_array_elements_text(o->'pythonImplementations'))
	         || ARRAY(SELECT r.name FROM kbench_registered_implementations r
	                   WHERE kbench__op_key(r.operation) = o->>'name' ORDER BY r.name COLLATE "C") AS other_implementations
	  FROM kbench_workers w
	  CROSS JOIN LATERAL (SELECT CASE WHEN w.device = 'cpu' OR w.device LIKE 'agent:%/cpu' THEN 'cpu' ELSE 'cuda' END AS kind) d
	  CROSS JOIN LATERAL jsonb_array_elements(kbench_registry()->'operations') o
	 WHERE o->'implementations' @> jsonb_build_array(jsonb_build_object('device', d.kind));
GRANT SELECT ON kbench_device_operations TO PUBLIC;
