-- kernels' side of 0.2.0 (issue 11): one name per concept, cost formulas
-- defined once.

-- kbench's own implementations are named by the registry
-- (kbench_registry()->'operations'->'implementations', from kb_impl_resolve):
-- the view lists them instead of spelling 'cuda/' || variant itself.
CREATE OR REPLACE VIEW kbench_device_operations AS
	SELECT w.device, w.product, o->>'name' AS operation,
	       ARRAY(SELECT jsonb_array_elements_text(o->'modes')) AS modes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'axes')) AS axes,
	       ARRAY(SELECT jsonb_array_elements_text(o->'dtypes')) AS dtypes,
	       CASE WHEN w.device = 'cpu' THEN 'cpu' ELSE 'cuda' END AS implementation,
	       -- what kbench_run's implementation argument accepts there ('cuda/v2': a kernel variant),
	       -- as the registry names kbench's own implementations (kb_impl_resolve)
	       ARRAY(SELECT i->>'implementation' FROM jsonb_array_elements(o->'implementations') i
	              WHERE i->>'device' = CASE WHEN w.device = 'cpu' THEN 'cpu' ELSE 'cuda' END) AS implementations
	  FROM kbench__workers() w, jsonb_array_elements(kbench_registry()->'operations') o
	 WHERE o->'implementations' @> jsonb_build_array(jsonb_build_object('device',
	         CASE WHEN w.device = 'cpu' THEN 'cpu' ELSE 'cuda' END));

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
