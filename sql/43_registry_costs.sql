--------------------------------------------------------------------------
-- The cost formulas of the kernels registry (kernels/ops/<op>.c), as kbench
-- evaluates them; 43_roofline.sql seeds kbench_operation_costs from them.
-- New in 0.2.0: sql/updates/0.1.0--0.2.0/64_registry_costs.sql is a link
-- to this part.
--------------------------------------------------------------------------

CREATE FUNCTION kbench__registry_costs() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench__registry_costs' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION kbench__registry_costs() IS 'the cost formulas of the kernels registry (kbench''s own operations), as kbench evaluates them: one object per operation and pass';
