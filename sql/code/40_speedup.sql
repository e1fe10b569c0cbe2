--------------------------------------------------------------------------
-- Speedup against a named baseline
--------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION _kernelindex.geomean_step(state float8[], x float8) RETURNS float8[]
	LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
	IF x IS NULL THEN
		RETURN state;
	END IF;
	IF x <= 0 OR x = 'Infinity'::float8 OR x = 'NaN'::float8 THEN
		RAISE EXCEPTION 'kbench_geomean needs positive finite values, got %', x USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN ARRAY[state[1] + ln(x), state[2] + 1];
END $$;

CREATE OR REPLACE FUNCTION _kernelindex.geomean_combine(a float8[], b float8[]) RETURNS float8[]
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN ARRAY[a[1] + b[1], a[2] + b[2]];

CREATE OR REPLACE FUNCTION _kernelindex.geomean_final(state float8[]) RETURNS float8
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
	RETURN CASE WHEN state[2] > 0 THEN exp(state[1] / state[2]) END;

CREATE OR REPLACE AGGREGATE kbench_geomean(float8) (
	SFUNC = _kernelindex.geomean_step,
	STYPE = float8[],
	INITCOND = '{0,0}',
	COMBINEFUNC = _kernelindex.geomean_combine,
	FINALFUNC = _kernelindex.geomean_final,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE kbench_geomean(float8) IS 'geometric mean of positive values (NULLs ignored; NULL when there are none)';
-- The rows of kbench_speedup for resolved digests (below).
CREATE OR REPLACE FUNCTION _kernelindex.speedup_rows(ops text[], base text[], cand text[], protos text[], envs text[])
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_run text, baseline_median_ns bigint,
	               candidate_implementation text, candidate_run text, candidate_median_ns bigint,
	               speedup float8, operation_key text, pass text)
	LANGUAGE sql STABLE SET search_path = @extschema@, pg_temp AS $$
	WITH wl AS (
		SELECT w.digest, w.name, w.axes, w.dtypes FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)
	), best AS (
		SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base))
		       b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base) AS is_base,
		       b.implementation_digest, b.run_digest, coalesce(r.median_ns, r.primary_ns) AS median_ns
		  FROM kbench_cohort_bests b
		  JOIN wl ON wl.digest = b.workload_digest
		  JOIN kbench_runs r ON r.digest = b.run_digest
		 WHERE (b.implementation_digest = ANY (base) OR b.implementation_digest = ANY (cand))
		   AND (protos IS NULL OR b.protocol_digest = ANY (protos))
		   AND (envs IS NULL OR b.environment_digest = ANY (envs))
		 ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base),
		          b.primary_ns, b.observed_at, b.run_digest
	)
	SELECT wl.name, wl.axes, _kernelindex.float_dtype(wl.dtypes), p.name,
	       concat_ws(' ', e.product, e.form_factor),
	       bi.name, bb.run_digest, bb.median_ns, ci.name, cb.run_digest, cb.median_ns,
	       bb.median_ns::float8 / cb.median_ns,
	       (SELECT _kernelindex.op_key(o.name) FROM kbench_operations o WHERE o.digest = ops[1]),
	       kbench_protocol_mode(p.name)
	  FROM best bb
	  JOIN best cb ON cb.workload_digest = bb.workload_digest AND cb.protocol_digest = bb.protocol_digest
	              AND cb.environment_digest = bb.environment_digest AND NOT cb.is_base
	  JOIN wl ON wl.digest = bb.workload_digest
	  LEFT JOIN kbench_protocols p ON p.digest = bb.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = bb.environment_digest
	  LEFT JOIN kbench_implementations bi ON bi.digest = bb.implementation_digest
	  LEFT JOIN kbench_implementations ci ON ci.digest = cb.implementation_digest
	 WHERE bb.is_base
	 ORDER BY 5, 4, 3, _kernelindex.axes_key(wl.axes), 1
$$;

-- Per workload of an operation (and per mode and environment), the baseline's
-- and the candidate's best competing runs in the same cohort, their medians and
-- speedup = baseline median / candidate median (above 1: the candidate is faster).
-- A name is every implementation it resolves to (_kernelindex.resolve_implementation:
-- 'huggingface' is Liger's imported history and the runs measured here), each
-- row naming the one that ran.  An empty answer says why in a NOTICE (what
-- the names resolved to and where their runs are).
-- operation NULL: every operation where both sides resolve, the others
-- skipped (an error only when no operation has both).  pass: the timed pass
-- (forward, backward, full) of protocol; operation_key: the operation's short
-- name.  (Not "mode" and "operation": those name the arguments.)
CREATE OR REPLACE FUNCTION _kernelindex.speedup(operation text, baseline text, candidate text,
                               mode text, environment text, quiet boolean)
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_run text, baseline_median_ns bigint,
	               candidate_implementation text, candidate_run text, candidate_median_ns bigint,
	               speedup float8, operation_key text, pass text)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[];
	base text[];
	cand text[];
	protos text[] := _kernelindex.resolve_protocols(mode);
	envs text[] := _kernelindex.resolve_environments(environment);
	op text;
	both_found int := 0;
	any_row boolean := false;
	all_base text[] := '{}';
	all_cand text[] := '{}';
BEGIN
	IF operation IS NULL THEN
		IF baseline IS NULL OR candidate IS NULL THEN
			RAISE EXCEPTION 'a baseline and a candidate are required' USING ERRCODE = 'null_value_not_allowed';
		END IF;
		FOR op IN SELECT DISTINCT _kernelindex.op_key(o.name) FROM kbench_operations o
		           WHERE EXISTS (SELECT 1 FROM kbench_implementations i WHERE i.operation_digest = o.digest) ORDER BY 1 LOOP
			BEGIN
				ops := _kernelindex.resolve_operation(op);
				base := _kernelindex.resolve_implementation(ops, baseline, 'baseline');
				cand := _kernelindex.resolve_implementation(ops, candidate, 'candidate');
			EXCEPTION WHEN undefined_object OR ambiguous_parameter THEN
				CONTINUE;            -- this operation lacks one side: skipped
			END;
			both_found := both_found + 1;
			all_base := all_base || base;
			all_cand := all_cand || cand;
			RETURN QUERY SELECT * FROM _kernelindex.speedup_rows(ops, base, cand, protos, envs);
			any_row := any_row OR FOUND;
		END LOOP;
		IF both_found = 0 THEN
			RAISE EXCEPTION 'no operation has both "%" and "%"', baseline, candidate USING ERRCODE = 'undefined_object',
				HINT = 'Name providers as the catalog does (huggingface, torch, liger) or implementation names.';
		END IF;
	ELSE
		ops := _kernelindex.resolve_operation(operation);
		all_base := _kernelindex.resolve_implementation(ops, baseline, 'baseline');
		all_cand := _kernelindex.resolve_implementation(ops, candidate, 'candidate');
		RETURN QUERY SELECT * FROM _kernelindex.speedup_rows(ops, all_base, all_cand, protos, envs);
		any_row := FOUND;
	END IF;
	IF NOT any_row AND NOT quiet AND all_base @> all_cand AND all_cand @> all_base THEN
		-- one implementation under two names (_kernelindex.code_key): never ranked against itself
		RAISE NOTICE 'kbench_speedup: "%" and "%" are one implementation (the same code), never compared with itself', baseline, candidate
			USING DETAIL = format('Both are %s.', (SELECT string_agg(DISTINCT i.name, ', ') FROM kbench_implementations i WHERE i.digest = ANY (all_base))),
			      HINT = 'Name another implementation as the baseline or the candidate.';
	ELSIF NOT any_row AND NOT quiet THEN
		PERFORM _kernelindex.say_empty('kbench_speedup',
			'no workload has runs of both the baseline and the candidate in one cohort (the same pass and device)',
			jsonb_build_array(jsonb_build_object('role', 'baseline', 'typed', baseline, 'digests', to_jsonb(all_base)),
			                  jsonb_build_object('role', 'candidate', 'typed', candidate, 'digests', to_jsonb(all_cand))),
			nullif(concat_ws(' on ', mode, environment), ''));
	END IF;
END $$;
-- kbench_speedup is the internal one, saying why when empty; callers that
-- go through many operations (kbench_compare_providers) call it quiet and
-- say it once.
CREATE OR REPLACE FUNCTION kbench_speedup(operation text, baseline text, candidate text,
                               mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_run text, baseline_median_ns bigint,
	               candidate_implementation text, candidate_run text, candidate_median_ns bigint,
	               speedup float8, operation_key text, pass text)
	LANGUAGE sql STABLE AS $$
	SELECT * FROM _kernelindex.speedup(operation, baseline, candidate, mode, environment, false)
$$;
COMMENT ON FUNCTION kbench_speedup(text, text, text, text, text) IS 'per workload (and protocol, device): baseline and candidate best medians in one cohort and speedup = baseline / candidate';

-- The geometric mean of the speedups along each sweep: one row per protocol,
-- device and dtype (and operation, when operation is NULL: every operation).
CREATE OR REPLACE FUNCTION kbench_speedup_summary(operation text, baseline text, candidate text,
                                       mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (protocol text, device text, dtype text, workloads bigint,
	               geomean_speedup float8, min_speedup float8, max_speedup float8, operation_key text, pass text)
	LANGUAGE sql STABLE AS $$
	SELECT s.protocol, s.device, s.dtype, count(*), kbench_geomean(s.speedup), min(s.speedup), max(s.speedup),
	       s.operation_key, s.pass
	  FROM kbench_speedup(operation, baseline, candidate, mode, environment) s
	 GROUP BY s.operation_key, s.pass, 1, 2, 3 ORDER BY s.operation_key, 2, 1, 3
$$;
COMMENT ON FUNCTION kbench_speedup_summary(text, text, text, text, text) IS 'geometric mean, min and max of kbench_speedup() per protocol, device and dtype';
