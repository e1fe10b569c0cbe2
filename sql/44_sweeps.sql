--------------------------------------------------------------------------
-- Sweeps
--------------------------------------------------------------------------

-- Latency along one axis: for each implementation (and environment, dtype
-- and the other axes' values), its best competing run at each value of the
-- axis.
CREATE FUNCTION kbench_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                             implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               median_ns bigint, p20_ns bigint, p80_ns bigint, run_digest text, observed_at timestamptz)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := kbench__resolve_operation(operation);
	protos text[];
	envs text[];
	impls text[];
	known text;
BEGIN
	IF mode IS NULL THEN
		RAISE EXCEPTION 'a mode is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Use forward, backward or full.';
	END IF;
	protos := kbench__resolve_protocols(mode);
	envs := kbench__resolve_environments(environment);
	IF implementation IS NOT NULL THEN
		impls := kbench__resolve_implementation(ops, implementation);
	END IF;
	SELECT string_agg(DISTINCT k, ', ' ORDER BY k) INTO known
	  FROM kbench_workloads w, jsonb_object_keys(coalesce(w.axes, '{}')) k WHERE w.operation_digest = ANY (ops);
	IF axis IS NULL OR NOT EXISTS (SELECT 1 FROM kbench_workloads w WHERE w.operation_digest = ANY (ops) AND w.axes ? axis) THEN
		RAISE EXCEPTION 'unknown axis "%" for operation "%"', axis, operation USING ERRCODE = 'undefined_object',
			DETAIL = format('The operation''s workloads have the axes %s.', coalesce(known, '(none)'));
	END IF;
	RETURN QUERY
	SELECT (w.axes ->> axis)::numeric, coalesce(i.name, b.implementation_digest), concat_ws(' ', e.product, e.form_factor),
	       kbench__float_dtype(w.dtypes), w.axes - axis,
	       coalesce(r.median_ns, r.primary_ns), r.p20_ns, r.p80_ns, b.run_digest, b.observed_at
	  FROM kbench_cohort_bests b
	  JOIN kbench_workloads w ON w.digest = b.workload_digest
	  JOIN kbench_runs r ON r.digest = b.run_digest
	  LEFT JOIN kbench_implementations i ON i.digest = b.implementation_digest
	  LEFT JOIN kbench_environments e ON e.digest = b.environment_digest
	 WHERE w.operation_digest = ANY (ops) AND w.axes ? axis
	   AND b.protocol_digest = ANY (protos)
	   AND (envs IS NULL OR b.environment_digest = ANY (envs))
	   AND (impls IS NULL OR b.implementation_digest = ANY (impls))
	 ORDER BY 3, 2, 4, kbench__axes_key(w.axes - axis), 1;
END $$;
COMMENT ON FUNCTION kbench_sweep(text, text, text, text, text) IS 'latency along one axis of an operation''s workloads: per implementation, device, dtype and fixed axes, the best run''s median, p20 and p80 at each value';
