-- kernels' side of 0.2.0 (issue 11): one name per concept, cost formulas
-- defined once.

-- (kbench_device_operations, which lists kbench's own implementations as
-- the registry names them, is replaced by 85_fleet.sql.)

-- The cost formulas of kbench's own operations are written once, in the
-- kernels registry; kbench_operation_costs' seeded rows for them come from
-- there (sql/43_roofline.sql), here as in a fresh install.
CREATE FUNCTION kbench__registry_costs() RETURNS jsonb
	AS 'MODULE_PATHNAME', 'kbench__registry_costs' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION kbench__registry_costs() IS 'the cost formulas of the kernels registry (kbench''s own operations), as kbench evaluates them: one object per operation and pass';
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded)
	SELECT operation, mode, bytes, flops, compute, note, true
	  FROM jsonb_to_recordset(kbench__registry_costs())
	       AS c(operation text, mode text, bytes text, flops text, compute text, note text)
	ON CONFLICT (operation, mode) DO UPDATE
	   SET bytes = excluded.bytes, flops = excluded.flops, compute = excluded.compute, note = excluded.note
	 WHERE kbench_operation_costs.seeded;
