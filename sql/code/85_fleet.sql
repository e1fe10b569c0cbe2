-- Fleet: the functions and views of `kbench agent` (docs/FLEET.md); the
-- tables are sql/schema/85_fleet.sql.

REVOKE ALL ON kbench_agents, kbench_agent_devices, kbench_agent_sessions FROM PUBLIC;
GRANT SELECT ON kbench_agents, kbench_agent_devices TO PUBLIC;

-- Raises while a role that is not a superuser may create objects in the
-- extension's schema: agents claim nothing then, as workers (src/security.c).
CREATE OR REPLACE FUNCTION _kernelindex.require_safe_schema() RETURNS void
	AS 'MODULE_PATHNAME', 'kbench__require_safe_schema' LANGUAGE C VOLATILE;

-- Takes a cancel kbench_wait left in shared memory for a job no worker runs.
CREATE OR REPLACE FUNCTION _kernelindex.take_pending_cancel(job_id bigint) RETURNS boolean
	AS 'MODULE_PATHNAME', 'kbench__take_pending_cancel' LANGUAGE C VOLATILE STRICT;

-- kernelindex.agent_lease in seconds (30 when the library is not loaded).
CREATE OR REPLACE FUNCTION _kernelindex.agent_lease() RETURNS double precision
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT coalesce(extract(epoch FROM current_setting('kernelindex.agent_lease', true)::interval)::float8, 30)
$$;

-- kernelindex.agent_devices_per_role and kernelindex.agent_devices (64 and
-- 1024 when the library is not loaded): how many devices agents may
-- register, per role (all its agent names together) and in all.
CREATE OR REPLACE FUNCTION _kernelindex.agent_device_limits(OUT per_role int, OUT total int)
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT coalesce(nullif(current_setting('kernelindex.agent_devices_per_role', true), '')::int, 64),
	       coalesce(nullif(current_setting('kernelindex.agent_devices', true), '')::int, 1024)
$$;

-- What the run of a job names, from the kernels library (src/fleet.c):
-- the workload's and operation's digests, the operation's plain C
-- implementation manifest and the job's built-in C or CUDA implementation
-- manifest on device (NULL for another implementation).
CREATE OR REPLACE FUNCTION _kernelindex.job_manifests(operation text, mode text, workload text, implementation text,
	device text, OUT workload_digest text, OUT operation_digest text, OUT cpu_implementation text,
	OUT implementation_manifest text)
	AS 'MODULE_PATHNAME', 'kbench__job_manifests' LANGUAGE C STABLE;

-- The job whose run this backend stores now (kbench_agent_finish, the
-- worker), reset at the end of the transaction: a confirmation rerun is
-- judged by its job (sql/code/52_confirmations.sql).  The setter is not for
-- PUBLIC (sql/code/90_privileges.sql: a volatile internal function).
CREATE OR REPLACE FUNCTION _kernelindex.set_storing_job(job_id bigint) RETURNS void
	AS 'MODULE_PATHNAME', 'kbench__set_storing_job' LANGUAGE C VOLATILE;
CREATE OR REPLACE FUNCTION _kernelindex.storing_job() RETURNS bigint
	AS 'MODULE_PATHNAME', 'kbench__storing_job' LANGUAGE C VOLATILE;

-- Why an agent GPU's product name is refused, or NULL when it is fine.
-- The rule (docs/FLEET.md): 1 to 200 characters, no control character, and
-- its class (_kernelindex.device_class: "cuda:" and the product without
-- "NVIDIA ") begins, after "cuda:", with a letter, and its first word is
-- not "cpu" or "cuda".  So no class is ever "cuda:0" or "cuda:cpu" or
-- "cuda:cuda-0": a name of the in-server workers' devices ("cpu",
-- "cuda:N") never reaches an agent.
CREATE OR REPLACE FUNCTION _kernelindex.device_product_error(product text) RETURNS text
	LANGUAGE sql IMMUTABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT CASE
	  WHEN product IS NULL OR product = '' THEN 'it is empty'
	  WHEN length(product) > 200 THEN 'it is longer than 200 characters'
	  WHEN product ~ '[[:cntrl:]]' THEN 'it holds a control character'
	  WHEN substr(_kernelindex.device_class('cuda:0', product), 6) !~ '^[A-Za-z]'
	    THEN format('its class %s does not begin with a letter after "cuda:"', _kernelindex.device_class('cuda:0', product))
	  WHEN lower(split_part(substr(_kernelindex.device_class('cuda:0', product), 6), '-', 1)) IN ('cpu', 'cuda')
	    THEN format('its class %s names an in-server worker''s device', _kernelindex.device_class('cuda:0', product))
	  END
$$;

-- The class of a device, from what the kernels library says of it:
-- "cpu", or "cuda:" and the product without "NVIDIA ", each run of other
-- characters than letters, digits and "." as one "-" ("NVIDIA H100 80GB
-- HBM3": cuda:H100-80GB-HBM3).
CREATE OR REPLACE FUNCTION _kernelindex.device_class(device text, product text) RETURNS text
	LANGUAGE sql IMMUTABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT CASE WHEN device = 'cpu' THEN 'cpu'
	            ELSE 'cuda:' || coalesce(nullif(btrim(regexp_replace(regexp_replace(coalesce(product, ''), '^\s*NVIDIA\s+', ''),
	                                                         '[^A-Za-z0-9.]+', '-', 'g'), '-'), ''), 'unknown') END
$$;

-- Does an agent serve a job's device?  Then the local device it would run
-- on (the first such), else NULL.  kbench_run routes with it.
CREATE OR REPLACE FUNCTION _kernelindex.agent_route(p_device text) RETURNS text
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	SELECT d.device FROM kbench_agent_devices d JOIN kbench_agents a ON a.name = d.agent
	 WHERE _kernelindex.agent_names(d.agent, d.device, d.class, d.position = 0) @> ARRAY[p_device]
	 ORDER BY a.stopped_at IS NOT NULL, a.heartbeat_at DESC, d.position LIMIT 1
$$;

-- Recover the jobs of agents that stopped heartbeating: no heartbeat for
-- kernelindex.agent_lease (counted from the server's start too, so that
-- agents have a full lease to come back after a restart).  As the worker's
-- recovery: a job past its timeout ends as timeout, one that may retry is
-- re-queued, the others fail with the reason.  Claimers call it; returns
-- how many jobs it recovered.
CREATE OR REPLACE FUNCTION _kernelindex.recover_agent_jobs() RETURNS bigint
	LANGUAGE sql SET search_path = @extschema@, pg_temp AS $$
	WITH lost AS (
		SELECT j.id, j.started_at + j.timeout < clock_timestamp() AS overdue, a.host, a.pid AS agent_pid,
		       clock_timestamp() - a.heartbeat_at AS silent
		  FROM kbench_jobs j JOIN kbench_agents a ON a.name = j.agent
		 WHERE j.status = 'running'
		   AND a.heartbeat_at < clock_timestamp() - make_interval(secs => _kernelindex.agent_lease())
		   AND pg_postmaster_start_time() < clock_timestamp() - make_interval(secs => _kernelindex.agent_lease())
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
		                  j.agent, l.agent_pid, l.host, date_trunc('second', l.silent), _kernelindex.agent_lease(),
		                  CASE WHEN j.retries_left > 0 THEN '; re-queued for its retry' ELSE '' END) END,
		       worker_pid = NULL, cancel_requested = false
		  FROM lost l WHERE j.id = l.id
		RETURNING j.status)
	SELECT count(*) FROM done
$$;

-- The agent of a name, checked against the calling role; raises unless
-- the role registered the name (or is kbench_admin) and, when session is
-- given, the session is the name's latest.
CREATE OR REPLACE FUNCTION _kernelindex.agent_check(p_name text, p_session bigint) RETURNS kbench_agents
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
CREATE OR REPLACE FUNCTION kbench_agent_register(name text, host text, pid int, version text, devices jsonb,
	served text[] DEFAULT NULL, OUT session bigint, OUT lease_s double precision)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	p_name ALIAS FOR name;
	old kbench_agents;
	n int;
	bad record;
	lim record;
	mine bigint;
	total bigint;
BEGIN
	PERFORM _kernelindex.require_safe_schema();
	IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$' THEN
		RAISE EXCEPTION 'invalid agent name "%"', p_name USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'An agent name is 1 to 63 letters, digits, ".", "_" or "-", beginning with a letter or digit.';
	END IF;
	IF devices IS NULL OR jsonb_typeof(devices) <> 'array' THEN
		RAISE EXCEPTION 'devices must be a JSON array' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Give what kbench devices --json prints.';
	END IF;
	-- each GPU's product gives its class: refused unless it is a clear name
	-- that no in-server worker's device has (_kernelindex.device_product_error)
	SELECT e->>'name' AS name, e->>'product' AS product, _kernelindex.device_product_error(e->>'product') AS why INTO bad
	  FROM jsonb_array_elements(devices) e
	 WHERE jsonb_typeof(e) = 'object' AND (served IS NULL OR e->>'name' = ANY (served)) AND e->>'name' ~ '^cuda:[0-9]+$'
	   AND _kernelindex.device_product_error(e->>'product') IS NOT NULL
	 LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'agent "%": the product name % of device % is refused: %', p_name,
			coalesce(quote_literal(bad.product), 'NULL'), bad.name, bad.why USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A GPU''s product name is 1 to 200 characters without control characters; its class (cuda: and the product without "NVIDIA ", other characters than letters, digits and "." as "-") begins with a letter after "cuda:", and its first word is not cpu or cuda, so that it never names an in-server worker''s device.',
			HINT = 'The product is what the CUDA driver reports (kbench devices --json).';
	END IF;
	-- the limits on registered devices: per role, and in all (one registration at a time)
	LOCK TABLE kbench_agent_devices IN SHARE ROW EXCLUSIVE MODE;
	SELECT count(*) INTO n FROM jsonb_array_elements(devices) e
	 WHERE jsonb_typeof(e) = 'object' AND (served IS NULL OR e->>'name' = ANY (served))
	   AND (e->>'name' = 'cpu' OR e->>'name' ~ '^cuda:[0-9]+$');
	lim := _kernelindex.agent_device_limits();
	SELECT count(*) FILTER (WHERE a.role = session_user), count(*) INTO mine, total
	  FROM kbench_agent_devices d JOIN kbench_agents a ON a.name = d.agent WHERE d.agent <> p_name;
	IF mine + n > lim.per_role THEN
		RAISE EXCEPTION 'agent "%" would bring the devices registered by role % to %, over kernelindex.agent_devices_per_role (%)',
			p_name, session_user, mine + n, lim.per_role USING ERRCODE = 'configuration_limit_exceeded',
			DETAIL = format('The agents of role %s register %s devices besides this one''s %s.', session_user, mine, n),
			HINT = 'Serve fewer devices (kbench agent --devices), stop agent names no longer used, or ask an administrator to raise kernelindex.agent_devices_per_role.';
	END IF;
	IF total + n > lim.total THEN
		RAISE EXCEPTION 'agent "%" would bring the devices registered by all agents to %, over kernelindex.agent_devices (%)',
			p_name, total + n, lim.total USING ERRCODE = 'configuration_limit_exceeded',
			DETAIL = format('The other agents register %s devices; this one %s.', total, n),
			HINT = 'Serve fewer devices, remove agents no longer used, or ask an administrator to raise kernelindex.agent_devices.';
	END IF;
	SELECT * INTO old FROM kbench_agents a WHERE a.name = p_name FOR UPDATE;
	IF FOUND THEN
		PERFORM _kernelindex.agent_check(p_name, NULL);
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
	SELECT p_name, e->>'name', _kernelindex.device_class(e->>'name', e->>'product'), coalesce(e->>'product', 'CPU'), e,
	       (row_number() OVER (ORDER BY e->>'name' = 'cpu', o) - 1)::int
	  FROM jsonb_array_elements(devices) WITH ORDINALITY x(e, o)
	 WHERE jsonb_typeof(e) = 'object' AND (served IS NULL OR e->>'name' = ANY (served))
	   AND (e->>'name' = 'cpu' OR e->>'name' ~ '^cuda:[0-9]+$');
	GET DIAGNOSTICS n = ROW_COUNT;
	IF n = 0 THEN
		RAISE EXCEPTION 'agent "%" has no device to serve', p_name USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Serve cpu or cuda:N devices that kbench devices lists.';
	END IF;
	SELECT a.session INTO session FROM kbench_agents a WHERE a.name = p_name;
	lease_s := _kernelindex.agent_lease();
END $$;

-- A heartbeat: the agent lives, and how far its job is.  Returns whether
-- the job is to stop (kbench_cancel) and the lease in seconds.
CREATE OR REPLACE FUNCTION kbench_agent_heartbeat(name text, session bigint, job_id bigint DEFAULT NULL,
	attempt int DEFAULT NULL, progress real DEFAULT NULL, OUT cancel boolean, OUT lease_s double precision)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
BEGIN
	PERFORM _kernelindex.agent_check(name, session);
	UPDATE kbench_agents a SET heartbeat_at = clock_timestamp() WHERE a.name = kbench_agent_heartbeat.name;
	cancel := false;
	IF job_id IS NOT NULL THEN
		UPDATE kbench_jobs j SET progress = coalesce(kbench_agent_heartbeat.progress, j.progress)
		 WHERE j.id = job_id AND j.attempts = attempt AND j.status = 'running' AND j.agent = kbench_agent_heartbeat.name
		RETURNING j.cancel_requested INTO cancel;
		-- a job no longer this agent's (recovered, or canceled while gone) stops too, and one
		-- whose kbench_wait was cancelled (kept in the server's shared memory)
		cancel := coalesce(cancel, true) OR _kernelindex.take_pending_cancel(job_id);
	END IF;
	lease_s := _kernelindex.agent_lease();
END $$;

-- Claim the oldest queued job for one of the agent's devices, through the
-- workers' _kernelindex.claim, after recovering the jobs of agents gone silent.
-- Returns the job, the local device to run it on, and for a registered
-- implementation its entry and version.
CREATE OR REPLACE FUNCTION kbench_agent_claim(name text, session bigint, pid int,
	OUT id bigint, OUT attempt int, OUT operation text, OUT mode text, OUT workload text,
	OUT implementation text, OUT protocol text, OUT timeout_ms double precision, OUT device text,
	OUT entry text, OUT impl_version text)
	RETURNS SETOF record
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	names text[];
	claimed kbench_jobs;
BEGIN
	PERFORM _kernelindex.agent_check(name, session);
	PERFORM _kernelindex.require_safe_schema();
	UPDATE kbench_agents a SET heartbeat_at = clock_timestamp() WHERE a.name = kbench_agent_claim.name;
	-- an agent runs one job at a time and claims only when it runs none: a
	-- job still running under its name lost its claim's answer (the
	-- connection broke as it committed), and goes back to the queue
	UPDATE kbench_jobs o SET status = 'queued', started_at = NULL, worker_pid = NULL, agent = NULL,
	       cancel_requested = false,
	       error = format('the agent %s lost its claim of the job (its connection broke); re-queued', o.agent)
	 WHERE o.status = 'running' AND o.agent = kbench_agent_claim.name;
	PERFORM _kernelindex.recover_agent_jobs();
	SELECT array_agg(n) INTO names FROM kbench_agent_devices d,
	       unnest(_kernelindex.agent_names(d.agent, d.device, d.class, d.position = 0)) n
	 WHERE d.agent = kbench_agent_claim.name;
	SELECT * INTO claimed FROM _kernelindex.claim(names, pid, kbench_agent_claim.name);
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
	 WHERE d.agent = kbench_agent_claim.name AND claimed.device = ANY (_kernelindex.agent_names(d.agent, d.device, d.class, d.position = 0))
	 ORDER BY d.position LIMIT 1;
	SELECT g.entry, g.version INTO entry, impl_version FROM kbench_registered_implementations g
	 WHERE g.name = claimed.implementation AND g.operation = claimed.operation;
	RETURN NEXT;
END $$;

-- Why an agent's result is not the run of its job, or NULL when it is.  j
-- is the job (leased by agent), result what `kbench run --json` prints.
-- The run must name the manifests the result carries (their digests), and
-- they must be the job's: its workload and operation (the digests the
-- kernels library gives for the job's request), its implementation (a
-- registered one: the registered revision; a built-in one: its name), its
-- protocol (kbench's, for the job's mode and device kind, warm-up, seed
-- and sample limit as the job asked) and the agent's registered device as
-- environment (vendor, product and architecture).  A run already stored is
-- no new measurement.  The checks read the result only: nothing is stored.
CREATE OR REPLACE FUNCTION _kernelindex.agent_result_error(j kbench_jobs, agent text, result jsonb) RETURNS text
	LANGUAGE plpgsql STABLE SET search_path = @extschema@, pg_temp AS $$
DECLARE
	run jsonb := result->'composite'->'run';
	prot jsonb := result->'composite'->'protocol';
	env jsonb := result->'composite'->'environment';
	wl jsonb := result->'workload';
	impl jsonb := result->'implementation';
	d kbench_agent_devices;
	x record;
	g kbench_registered_implementations;
	kind text;
	slug text;
	want text;
	have jsonb;
BEGIN
	IF jsonb_typeof(run) IS DISTINCT FROM 'object' OR jsonb_typeof(prot) IS DISTINCT FROM 'object'
	   OR jsonb_typeof(env) IS DISTINCT FROM 'object' OR jsonb_typeof(wl) IS DISTINCT FROM 'object'
	   OR jsonb_typeof(impl) IS DISTINCT FROM 'object' THEN
		RETURN 'it lacks the run, protocol, environment, workload or implementation manifest (kbench run --json prints them all)';
	END IF;
	IF run->'spec'->>'workloadDigest' IS DISTINCT FROM kbench_digest(wl)
	   OR run->'spec'->>'implementationDigest' IS DISTINCT FROM kbench_digest(impl)
	   OR run->'spec'->>'protocolDigest' IS DISTINCT FROM kbench_digest(prot)
	   OR run->'spec'->>'environmentDigest' IS DISTINCT FROM kbench_digest(env) THEN
		RETURN 'its run names other workload, implementation, protocol or environment manifests than the result carries';
	END IF;
	IF EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = kbench_digest(run)) THEN
		RETURN format('its run %s is stored already: a job''s run is a new measurement', kbench_digest(run));
	END IF;
	-- the device the job runs on, as the claim chose it
	SELECT * INTO d FROM kbench_agent_devices v
	 WHERE v.agent = agent_result_error.agent
	   AND _kernelindex.agent_names(v.agent, v.device, v.class, v.position = 0) @> ARRAY[j.device]
	 ORDER BY v.position LIMIT 1;
	IF NOT FOUND THEN
		RETURN format('the agent has no device that serves the job''s device %s', j.device);
	END IF;
	kind := CASE WHEN d.device = 'cpu' THEN 'cpu' ELSE 'cuda' END;
	-- the environment: the agent's registered device
	have := env->'spec'->'hardware';
	IF kind = 'cpu' THEN
		IF (have->>'vendor', have->>'product', have->>'architecture') IS DISTINCT FROM
		   (d.description->'environment'->'spec'->'hardware'->>'vendor', d.description->'environment'->'spec'->'hardware'->>'product',
		    d.description->'environment'->'spec'->'hardware'->>'architecture') THEN
			RETURN format('its environment (%s) is not the agent''s device %s (%s)', coalesce(have->>'product', '?'), d.device, d.product);
		END IF;
	ELSIF (have->>'vendor', have->>'product', have->>'architecture') IS DISTINCT FROM
	      ('nvidia', d.product, d.description->>'architecture') THEN
		RETURN format('its environment (%s) is not the agent''s device %s (%s)', coalesce(have->>'product', '?'), d.device, d.product);
	END IF;
	-- the operation and workload
	SELECT * INTO x FROM _kernelindex.job_manifests(j.operation, j.mode, j.workload::text, j.implementation, d.device);
	IF x.workload_digest IS NULL THEN
		RETURN format('the server''s kernels library cannot describe the job (%s %s %s)', j.operation, j.mode, j.workload);
	END IF;
	IF kbench_digest(wl) <> x.workload_digest OR wl->'spec'->>'operationSpecDigest' IS DISTINCT FROM x.operation_digest THEN
		RETURN format('its workload (%s) is not the job''s (%s %s)', coalesce(wl->'metadata'->>'name', '?'), j.operation, j.workload);
	END IF;
	-- the implementation
	-- the operation's slug (an operation defined as data has no cpu implementation to read it from)
	slug := coalesce(substring(x.cpu_implementation::jsonb->'metadata'->>'name' FROM '^kbench-(.*)-cpu$'),
	                 (SELECT o->>'slug' FROM jsonb_array_elements(kbench_registry()->'operations') o
	                   WHERE o->>'name' = j.operation));
	SELECT * INTO g FROM kbench_registered_implementations r WHERE r.name = j.implementation AND r.operation = j.operation;
	IF FOUND THEN
		IF kbench_digest(impl) <> g.implementation_digest THEN
			RETURN format('its implementation is not the revision of %s registered for %s', j.implementation, j.operation);
		END IF;
	ELSE
		want := CASE WHEN x.implementation_manifest IS NOT NULL THEN x.implementation_manifest::jsonb->'metadata'->>'name'
		             -- a built-in python one: huggingface, torch, liger, or one of Liger's other providers for its operation
		             WHEN j.implementation = ANY (_kernelindex.builtin_python_implementations(j.operation))
		               THEN format('kbench-python-%s-%s', j.implementation, slug) END;
		IF want IS NULL OR impl->'metadata'->>'name' IS DISTINCT FROM want
		   OR impl->'spec'->'operation'->>'specDigest' IS DISTINCT FROM x.operation_digest THEN
			RETURN format('its implementation (%s) is not the job''s (%s on %s)', coalesce(impl->'metadata'->>'name', '?'),
			              coalesce(j.implementation, kind), d.device);
		END IF;
	END IF;
	-- the protocol: kbench's, for the job's operation, mode and device kind, as the job asked
	IF prot->'metadata'->>'name' IS DISTINCT FROM format('kbench-%s-%s-%s', kind, slug, j.mode)
	   OR prot->'spec'->'harness'->>'name' IS DISTINCT FROM 'kbench'
	   OR (jsonb_typeof(j.protocol->'warmup_ms') = 'number' AND (j.protocol->>'warmup_ms')::numeric > 0   -- 0: kbench's default
	         AND (prot->'spec'->'measurement'->>'warmupDuration')::numeric
	         IS DISTINCT FROM round((j.protocol->>'warmup_ms')::numeric * 1000000))
	   OR (jsonb_typeof(j.protocol->'seed') = 'number' AND position(format('seed %s)', j.protocol->>'seed')
	         IN coalesce(prot->'spec'->'comparability'->>'notes', '')) = 0)
	   OR (jsonb_typeof(j.protocol->'max_samples') = 'number' AND (j.protocol->>'max_samples')::numeric > 0
	         AND jsonb_typeof(run->'spec'->'timing'->'samples') = 'number'
	         AND (run->'spec'->'timing'->>'samples')::numeric > (j.protocol->>'max_samples')::numeric) THEN
		RETURN format('its protocol (%s) is not the job''s (%s %s on %s, %s)', coalesce(prot->'metadata'->>'name', '?'),
		              j.operation, j.mode, kind, j.protocol);
	END IF;
	RETURN NULL;
END $$;

-- Finish a job: store what it produced (what `kbench run --json` prints:
-- its manifests and kept raw samples, through kbench_ingest) and end the
-- job, in one transaction.  session NULL: a result kept on the agent's disk
-- while the server was away, stored by a later process of the agent
-- before it registers again.  The agent must hold the job's lease: the
-- job is running, on this agent, in this attempt; else nothing is stored
-- and it returns false (the job was recovered meanwhile, or was never
-- this agent's).  The result must be the job's run
-- (_kernelindex.agent_result_error) and a passed job must have one; else it
-- raises and nothing is stored.  Checked first, then stored.
CREATE OR REPLACE FUNCTION kbench_agent_finish(name text, session bigint, job_id bigint, attempt int, status text,
	result json DEFAULT NULL, error text DEFAULT NULL)
	RETURNS boolean
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
DECLARE
	j kbench_jobs;
	r jsonb;
	why text;
	v_digest text;
	v_run_status kbench_status;
BEGIN
	PERFORM _kernelindex.agent_check(name, session);
	IF status IS NULL OR status NOT IN ('passed', 'failed', 'timeout', 'canceled') THEN
		RAISE EXCEPTION 'invalid job status "%"', status USING ERRCODE = 'invalid_parameter_value',
			HINT = 'A job ends passed, failed, timeout or canceled.';
	END IF;
	-- the lease, held until the end of the transaction
	SELECT * INTO j FROM kbench_jobs k
	 WHERE k.id = job_id AND k.attempts = attempt AND k.status = 'running' AND k.agent = kbench_agent_finish.name
	   FOR UPDATE;
	IF NOT FOUND THEN
		RETURN false;
	END IF;
	IF result IS NULL AND status = 'passed' THEN
		RAISE EXCEPTION 'job % cannot pass without its run', job_id USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Send what kbench run --json printed, or end the job failed with the reason.';
	END IF;
	IF result IS NOT NULL THEN
		r := result::jsonb;
		why := _kernelindex.agent_result_error(j, kbench_agent_finish.name, r);
		IF why IS NULL AND (status = 'passed') IS DISTINCT FROM
		   (r->'composite'->'run'->'spec'->>'status' IN ('passed', 'incomplete_evidence')) THEN
			why := format('the job ends %s but its run''s status is %s', status, r->'composite'->'run'->'spec'->>'status');
		END IF;
		IF why IS NOT NULL THEN
			RAISE EXCEPTION 'the result sent for job % attempt % is not the run of the job: %', job_id, attempt, why
				USING ERRCODE = 'invalid_parameter_value',
				DETAIL = format('Job %s: %s %s %s, implementation %s, protocol %s, on %s (agent %s).', j.id, j.operation, j.mode,
				                j.workload, coalesce(j.implementation, 'the device''s own'), j.protocol, j.device, j.agent),
				HINT = 'An agent finishes the job it holds with the run kbench measured for it on its registered device; nothing was stored.';
		END IF;
		-- a confirmation rerun is judged by its job (sql/51_confirmations.sql)
		PERFORM _kernelindex.set_storing_job(j.id);
		SELECT i.digest INTO v_digest FROM kbench_ingest(result, 'kbench') i WHERE i.kind = 'BenchmarkRun';
		PERFORM _kernelindex.set_storing_job(NULL);
		SELECT k.status INTO v_run_status FROM kbench_runs k WHERE k.digest = v_digest;
	END IF;
	UPDATE kbench_jobs k SET status = kbench_agent_finish.status, run_status = v_run_status,
	       run_digest = v_digest, error = kbench_agent_finish.error, finished_at = clock_timestamp(), progress = 1,
	       cancel_requested = false
	 WHERE k.id = j.id;
	PERFORM pg_notify('kbench_jobs', '');
	RETURN true;
END $$;

-- An agent that stops (SIGTERM) puts its running job back in the queue, as
-- a worker does at a server shutdown, and says it stopped.
CREATE OR REPLACE FUNCTION kbench_agent_stop(name text, session bigint, job_id bigint DEFAULT NULL, attempt int DEFAULT NULL)
	RETURNS void
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = @extschema@, pg_temp AS $$
BEGIN
	PERFORM _kernelindex.agent_check(name, session);
	UPDATE kbench_jobs j SET status = 'queued', started_at = NULL, worker_pid = NULL, cancel_requested = false,
	       error = format('interrupted: the agent %s stopped; re-queued', j.agent)
	 WHERE j.id = job_id AND j.attempts = attempt AND j.status = 'running' AND j.agent = kbench_agent_stop.name;
	UPDATE kbench_agents a SET stopped_at = clock_timestamp() WHERE a.name = kbench_agent_stop.name;
END $$;

-- The agents: where they run, their last heartbeat, whether they are
-- alive (a heartbeat within the lease), and how many jobs each runs.
CREATE OR REPLACE VIEW kbench_agent_status AS
	SELECT a.name, a.role, a.host, a.pid, a.version, a.registered_at, a.heartbeat_at,
	       CASE WHEN a.stopped_at IS NOT NULL THEN 'stopped'
	            WHEN a.heartbeat_at < clock_timestamp() - make_interval(secs => _kernelindex.agent_lease()) THEN 'lost'
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
	  FROM _kernelindex.workers() w
	UNION ALL
	SELECT a.pid, 'agent:' || a.name || '/' || d.device, d.product,
	       CASE WHEN a.stopped_at IS NOT NULL THEN 'stopped'
	            WHEN a.heartbeat_at < clock_timestamp() - make_interval(secs => _kernelindex.agent_lease()) THEN 'lost'
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
		   AND j.device = ANY (_kernelindex.agent_names(a.name, d.device, d.class, d.position = 0))
		 ORDER BY j.id LIMIT 1) j ON true;
GRANT SELECT ON kbench_workers TO PUBLIC;

-- The operations each device can run: every device of kbench_workers (the
-- workers' and the agents'), the kernels' registry for each.
-- implementation: kbench's own kind there (cpu, cuda), NULL for an
-- operation defined as data (kernels/ops/defs, or registered: python
-- implementations run it on every device);
-- implementations: kbench's own there, as kbench_run's implementation
-- argument takes them ('cuda/v2': a kernel variant; kb_impl_resolve names
-- them); other_implementations: the built-in python ones (huggingface,
-- torch, liger, and Liger's other providers for the operations Liger
-- benchmarks them with, e.g. torch_compile for embedding: run by the python
-- harness where torch, and the library each needs, can be imported) and
-- those registered for the operation
-- (kbench_registered_implementations).  kind: worker or agent.
-- (CREATE OR REPLACE: in an update it replaces 0.1.0's view, whose columns
-- come first here too.)
CREATE OR REPLACE VIEW kbench_device_operations AS
	WITH reg AS MATERIALIZED (SELECT kbench_registry()->'operations' AS ops)   -- read once, not once per device
	SELECT w.device, w.product, o->>'name' AS operation,
	       ARRAY(SELECT jsonb_array_elements_text(o->'modes')) AS modes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'axes')) AS axes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'dtypes')) AS dtypes,
	       CASE WHEN o->'implementations' @> jsonb_build_array(jsonb_build_object('device', d.kind)) THEN d.kind END AS implementation,
	       ARRAY(SELECT i->>'implementation' FROM jsonb_array_elements(o->'implementations') i
	              WHERE i->>'device' = d.kind) AS implementations,
	       w.kind,
	       ARRAY(SELECT jsonb_array_elements_text(o->'pythonImplementations'))
	         || ARRAY(SELECT r.name FROM kbench_registered_implementations r
	                   WHERE _kernelindex.op_key(r.operation) = o->>'name' ORDER BY r.name COLLATE "C") AS other_implementations
	  FROM kbench_workers w
	  CROSS JOIN LATERAL (SELECT CASE WHEN w.device = 'cpu' OR w.device LIKE 'agent:%/cpu' THEN 'cpu' ELSE 'cuda' END AS kind) d
	  CROSS JOIN reg
	  CROSS JOIN LATERAL jsonb_array_elements(reg.ops) o
	 -- kbench's own implementation there, or an operation defined as data (python implementations only)
	 WHERE o->'implementations' @> jsonb_build_array(jsonb_build_object('device', d.kind)) OR o ? 'definition';
GRANT SELECT ON kbench_device_operations TO PUBLIC;
