-- Fleet: `kbench agent` processes on GPU hosts without a database
-- (kernels/agent/, docs/FLEET.md).  An agent connects over libpq as a role
-- that is a member of kbench_agent, registers itself and its devices,
-- claims jobs through _kernelindex.claim (the in-server worker's claim),
-- heartbeats while it lives, and stores results through kbench_ingest.
-- Everything an agent does goes through the SECURITY DEFINER functions
-- below: kbench_agent has no right on any table.
--
-- The functions and views: sql/code/85_fleet.sql; _kernelindex.agent_names,
-- which an index here calls: sql/prelude/.
--
-- Routing: a job's device is what kbench_run was given.  Besides the
-- in-server workers' "cpu" and "cuda:N", it may name
--   a device class   "cpu", "cuda:H200" (an agent GPU whose class is
--                    cuda:H200, or begins with "cuda:H200-")
--   a named agent    "agent:gpu-07" (its best device), "agent:gpu-07/cuda:1"
-- An agent claims the jobs whose device is one of the names of its devices
-- (_kernelindex.agent_names).  A job whose agent stops heartbeating is recovered
-- after kernelindex.agent_lease (_kernelindex.recover_agent_jobs) as a worker's
-- job is when the worker dies: re-queued when it may retry, else failed.

-- The role of agents (a login role per agent host is made a member of it):
-- only the kbench_agent_* functions below, no table rights.  Cluster-wide,
-- made only when missing, like sql/schema/05_roles.sql.
DO $roles$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'kbench_agent') THEN
    CREATE ROLE kbench_agent NOLOGIN;
  END IF;
END
$roles$;

CREATE TABLE IF NOT EXISTS kbench_agents (
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
CREATE SEQUENCE IF NOT EXISTS kbench_agent_sessions;

CREATE TABLE IF NOT EXISTS kbench_agent_devices (
	agent text NOT NULL REFERENCES kbench_agents (name) ON DELETE CASCADE,
	device text NOT NULL,                -- the agent's own name for it: "cpu", "cuda:0"
	class text NOT NULL,                 -- what a job names to reach any such device: "cpu", "cuda:H200"
	product text,
	description jsonb NOT NULL,          -- what `kbench devices --json` says of it (the CPU's environment)
	position int NOT NULL,               -- its order on the agent: GPUs first, then the CPU
	PRIMARY KEY (agent, device)
);
SELECT pg_catalog.pg_extension_config_dump('kbench_agents', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_agent_devices', '');

-- The names each device answers to, indexed: kbench_run's route
-- (_kernelindex.agent_route) finds its device without reading every device; the
-- running jobs of an agent (kbench_workers, kbench_agent_status) too.
CREATE INDEX IF NOT EXISTS kbench_agent_devices_names_idx ON kbench_agent_devices
	USING gin (_kernelindex.agent_names(agent, device, class, position = 0));
CREATE INDEX IF NOT EXISTS kbench_jobs_agent_running_idx ON kbench_jobs (agent) WHERE status = 'running';
