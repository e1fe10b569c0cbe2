--------------------------------------------------------------------------
-- Sweeps
--------------------------------------------------------------------------

-- Latency along one axis: for each implementation (and environment, dtype
-- and the other axes' values), its best competing run at each value of the
-- axis.
CREATE OR REPLACE FUNCTION kbench_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                             implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               median_ns bigint, p20_ns bigint, p80_ns bigint, run_digest text, observed_at timestamptz)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := _kernelindex.resolve_operation(operation);
	protos text[];
	envs text[];
	impls text[];
	known text;
BEGIN
	IF mode IS NULL THEN
		RAISE EXCEPTION 'a mode is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Use forward, backward or full.';
	END IF;
	protos := _kernelindex.resolve_protocols(mode);
	envs := _kernelindex.resolve_environments(environment);
	IF implementation IS NOT NULL THEN
		impls := _kernelindex.resolve_implementation(ops, implementation);
	END IF;
	SELECT string_agg(DISTINCT k, ', ' ORDER BY k) INTO known
	  FROM kbench_workloads w, jsonb_object_keys(coalesce(w.axes, '{}')) k WHERE w.operation_digest = ANY (ops);
	IF axis IS NULL OR NOT EXISTS (SELECT 1 FROM kbench_workloads w WHERE w.operation_digest = ANY (ops) AND w.axes ? axis) THEN
		RAISE EXCEPTION 'unknown axis "%" for operation "%"', axis, operation USING ERRCODE = 'undefined_object',
			DETAIL = format('The operation''s workloads have the axes %s.', coalesce(known, '(none)'));
	END IF;
	RETURN QUERY
	SELECT (w.axes ->> axis)::numeric, coalesce(i.name, b.implementation_digest), concat_ws(' ', e.product, e.form_factor),
	       _kernelindex.float_dtype(w.dtypes), w.axes - axis,
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
	 ORDER BY 3, 2, 4, _kernelindex.axes_key(w.axes - axis), 1;
	IF NOT FOUND THEN
		-- never silently empty (issue 29): what the names resolved to, where the runs are
		PERFORM _kernelindex.say_empty('kbench_sweep', format('no run of %s along "%s" in the selection', operation, axis),
			CASE WHEN impls IS NOT NULL
			     THEN jsonb_build_array(jsonb_build_object('role', 'implementation', 'typed', implementation, 'digests', to_jsonb(impls))) ELSE '[]' END,
			nullif(concat_ws(' on ', mode, environment), ''));
	END IF;
END $$;
COMMENT ON FUNCTION kbench_sweep(text, text, text, text, text) IS 'latency along one axis of an operation''s workloads: per implementation, device, dtype and fixed axes, the best run''s median, p20 and p80 at each value';



--------------------------------------------------------------------------
-- Sweeps: the cartesian product of axis values queued in one call
--------------------------------------------------------------------------

-- grid: {"rows": [1024, 4096], "hidden": [256, 512, 1024], "dtype": "fp32"}
-- (a scalar is one value).  implementations: NULL for the device's own, or
-- a list.  One kbench_run per combination; returns the job ids in order.
CREATE OR REPLACE FUNCTION kbench_sweep_run(operation text, mode text, grid jsonb, implementations text[] DEFAULT NULL,
                                 device text DEFAULT NULL, protocol jsonb DEFAULT '{}')
	RETURNS SETOF bigint
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	combos jsonb[] := ARRAY['{}'::jsonb];
	k text;
	v jsonb;
	vals jsonb;
	impl text;
	wl jsonb;
	nimpl int := coalesce(cardinality(implementations), 1);
BEGIN
	IF grid IS NULL OR jsonb_typeof(grid) <> 'object' OR grid = '{}' THEN
		RAISE EXCEPTION 'grid must be a JSON object of axis values' USING ERRCODE = 'invalid_parameter_value',
			HINT = 'For example {"rows": [1024, 4096], "hidden": [256, 512], "dtype": "fp32"}.';
	END IF;
	IF implementations = '{}' OR array_position(implementations, NULL) IS NOT NULL THEN
		RAISE EXCEPTION 'implementations must be NULL or a list of names' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'An empty list or a NULL element would queue nothing for it.';
	END IF;
	FOR k, vals IN SELECT e.key, e.value FROM jsonb_each(grid) e ORDER BY e.key LOOP
		IF jsonb_typeof(vals) <> 'array' THEN
			vals := jsonb_build_array(vals);
		END IF;
		IF jsonb_array_length(vals) = 0 THEN
			RAISE EXCEPTION 'axis "%" of the grid has no values', k USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF cardinality(combos) * jsonb_array_length(vals) * nimpl > 10000 THEN
			RAISE EXCEPTION 'the sweep has more than 10000 jobs' USING ERRCODE = 'program_limit_exceeded',
				DETAIL = 'A sweep queues one job per combination of axis values and implementation.';
		END IF;
		combos := ARRAY(SELECT c || jsonb_build_object(k, x) FROM unnest(combos) WITH ORDINALITY AS u(c, i),
		                       jsonb_array_elements(vals) WITH ORDINALITY AS a(x, j) ORDER BY u.i, a.j);
	END LOOP;
	FOREACH impl IN ARRAY coalesce(implementations, ARRAY[NULL::text]) LOOP
		FOREACH wl IN ARRAY combos LOOP
			RETURN NEXT kbench_run(operation, mode, wl, impl, device, protocol);
		END LOOP;
	END LOOP;
END $$;
COMMENT ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) IS 'queue the cartesian product of a grid of axis values (and implementations); returns the job ids';
REVOKE ALL ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_sweep_run(text, text, jsonb, text[], text, jsonb) TO kbench_user;
