-- The functions the schema calls before the code exists: a CHECK of
-- kbench_operation_costs, its seed rows, the index of agent device names.
-- CREATE OR REPLACE, run first at install and at every update
-- (docs/UPGRADES.md); each is written here only.

CREATE OR REPLACE FUNCTION _kernelindex.registry_costs() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench__registry_costs' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION _kernelindex.registry_costs() IS 'the cost formulas of the kernels registry (kbench''s own operations), as kbench evaluates them: one object per operation and pass';

-- Whether a cost expression uses only axis names, numbers, + - * /,
-- parentheses and least(a, b) / greatest(a, b) ('dtype_bytes' is the bytes
-- of the workload's float dtype).
CREATE OR REPLACE FUNCTION _kernelindex.cost_expression_ok(expr text) RETURNS boolean
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN expr ~ '^[-+*/(),. a-z_0-9]+$' AND expr !~ '--|/\*' AND expr ~ '[a-z0-9]';

-- Every device name a job may give to reach one device of an agent: its
-- class and each prefix of it that ends before a "-" (cuda:H100 reaches
-- cuda:H100-80GB-HBM3), "agent:NAME/DEVICE", and "agent:NAME" for the
-- agent's first device.
CREATE OR REPLACE FUNCTION _kernelindex.agent_names(agent text, device text, class text, first boolean) RETURNS text[]
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
