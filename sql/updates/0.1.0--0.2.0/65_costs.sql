-- kernels' side of 0.2.0 (issue 11): one name per concept, cost formulas
-- defined once.

-- (kbench_device_operations, which lists kbench's own implementations as
-- the registry names them, is replaced by 85_fleet.sql.)

-- The cost formulas of kbench's own operations are written once, in the
-- kernels registry; kbench_operation_costs' seeded rows for them come from
-- there (sql/43_roofline.sql), here as in a fresh install.
-- kbench__registry_costs() is 64_registry_costs.sql (a link to
-- sql/43_registry_costs.sql).  Unlike the fresh install's INSERT, this one
-- meets 0.1.0's seeded rows: it updates them (ON CONFLICT), and leaves
-- the rows users added (seeded = false) as they are.
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops, compute, note, seeded)
	SELECT operation, mode, bytes, flops, compute, note, true
	  FROM jsonb_to_recordset(kbench__registry_costs())
	       AS c(operation text, mode text, bytes text, flops text, compute text, note text)
	ON CONFLICT (operation, mode) DO UPDATE
	   SET bytes = excluded.bytes, flops = excluded.flops, compute = excluded.compute, note = excluded.note
	 WHERE kbench_operation_costs.seeded;
