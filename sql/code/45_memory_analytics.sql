-- Memory analytics (docs/ANALYTICS.md, "Memory"): peak device memory per
-- cohort, beside the timings.
--
-- Two sources of peak memory, read together:
--   * memory observations (kbench_memory_observations: Liger's memory rows,
--     the median of max_memory_allocated() over its calls, in bytes);
--   * runs that carry a peak_memory measurement in bytes (runs kernelindex
--     makes), when the run competes (passed, not retracted, not superseded).
-- Both name a workload, protocol and environment digest: the cohort, as for
-- timings.  Peak memory is deterministic for most kernels, so implementations
-- are ranked on the value itself (equal bytes share a rank), not on a spread.

-- Every peak memory value with its cohort and what names it.
CREATE OR REPLACE VIEW kbench_memory AS
SELECT m.workload_digest, m.protocol_digest, m.environment_digest,
       m.operation_digest,                -- the workload's own (checked when it is stored)
       o.name AS operation, m.pass AS mode, w.name AS workload, w.axes,
       _kernelindex.float_dtype(w.dtypes) AS dtype, e.product, e.form_factor,
       m.implementation_digest, i.name AS implementation,
       'observation'::text AS origin, m.source || '/' || m.external_id AS ref,
       m.p50_bytes AS peak_bytes, m.p20_bytes, m.p80_bytes, m.observed_at,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key
  FROM kbench_memory_observations m
  LEFT JOIN kbench_workloads w ON w.digest = m.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = m.operation_digest
  LEFT JOIN kbench_environments e ON e.digest = m.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = m.implementation_digest
UNION ALL
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       w.operation_digest, o.name, kbench_protocol_mode(p.name), w.name, w.axes,
       _kernelindex.float_dtype(w.dtypes), e.product, e.form_factor,
       r.implementation_digest, i.name,
       'run', r.digest,
       pm.bytes, NULL::bigint, NULL::bigint, r.observed_at,
       _kernelindex.op_key(o.name), _kernelindex.device_key(e)
  FROM kbench_runs r
  -- per run, so that a query about one operation reads only its runs' measurements
  CROSS JOIN LATERAL (SELECT round(x.value)::bigint AS bytes FROM kbench_measurements x
                       WHERE x.run_digest = r.digest AND x.metric = 'peak_memory' AND x.unit = 'bytes'
                         AND x.value >= 0 AND x.value < 9.2e18
                       ORDER BY x.ordinal LIMIT 1) pm
  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE kbench_competes(r);
COMMENT ON VIEW kbench_memory IS 'every peak memory value in bytes: memory observations (origin observation) and competing runs'' peak_memory measurements (origin run), with their cohort and names';

-- Per cohort, each implementation's lowest peak memory, ranked: rank 1 uses
-- the least memory (equal bytes share a rank); vs_leader is peak / the
-- leader's peak.  The names a cohort determines (operation, mode, workload,
-- dtype, device) are in the DISTINCT ON and PARTITION BY lists too: it
-- changes no group, and lets a filter on them reach the tables before the
-- ranking (WHERE operation = ... reads only that operation's values).
CREATE OR REPLACE VIEW kbench_memory_records AS
SELECT b.workload_digest, b.protocol_digest, b.environment_digest, b.operation_digest,
       b.operation, b.mode, b.workload, b.axes, b.dtype, b.product, b.form_factor,
       b.implementation_digest, b.implementation, b.origin, b.ref,
       b.peak_bytes, round(b.peak_bytes / 1048576.0, 3) AS peak_mib, b.p20_bytes, b.p80_bytes, b.observed_at,
       b.operation_key, b.device_key,
       rank() OVER (PARTITION BY b.workload_digest, b.protocol_digest, b.environment_digest,
                                 b.operation_digest, b.operation, b.mode, b.workload, b.dtype, b.product, b.form_factor
                    ORDER BY b.peak_bytes) AS rank,
       first_value(b.ref) OVER cohort = b.ref AS leader,
       round(b.peak_bytes::numeric / nullif(first_value(b.peak_bytes) OVER cohort, 0), 3) AS vs_leader
  FROM (SELECT DISTINCT ON (m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest,
                            m.operation_digest, m.operation, m.mode, m.workload, m.dtype, m.product, m.form_factor) m.*
          FROM kbench_memory m
         ORDER BY m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest,
                  m.operation_digest, m.operation, m.mode, m.workload, m.dtype, m.product, m.form_factor,
                  m.peak_bytes, m.observed_at, m.ref) b
WINDOW cohort AS (PARTITION BY b.workload_digest, b.protocol_digest, b.environment_digest,
                               b.operation_digest, b.operation, b.mode, b.workload, b.dtype, b.product, b.form_factor
                  ORDER BY b.peak_bytes, b.observed_at, b.ref);
COMMENT ON VIEW kbench_memory_records IS 'per cohort, each implementation''s lowest peak memory in bytes, ranked (rank 1: least memory; equal bytes share a rank)';

-- The same for one operation (by name, short name or digest), mode and
-- device, as the other analytics name them.  The filters are on the view's
-- partition keys, so they reach the tables before the ranking.
CREATE OR REPLACE FUNCTION kbench_memory_records_of(operation text, mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS SETOF kbench_memory_records
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	ops text[] := _kernelindex.resolve_operation(operation);
	protos text[] := _kernelindex.resolve_protocols(mode);
	envs text[] := _kernelindex.resolve_environments(environment);
BEGIN
	RETURN QUERY
	SELECT r.* FROM kbench_memory_records r
	 WHERE r.operation_digest = ANY (ops)
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	 ORDER BY r.product, r.form_factor, r.mode, r.dtype, _kernelindex.axes_key(r.axes), r.workload, r.rank, r.implementation;
END $$;
COMMENT ON FUNCTION kbench_memory_records_of(text, text, text) IS 'kbench_memory_records of one operation (name, short name or digest), optionally one mode and device';

-- Per workload (and protocol, device) where both have peak memory: the
-- baseline's and the candidate's lowest peak, memory_ratio = candidate /
-- baseline (below 1: the candidate needs less memory), and beside it the
-- speedup of the same cohort as kbench_speedup() computes it (baseline
-- median / candidate median), when both are timed there too.
CREATE OR REPLACE FUNCTION kbench_memory_ratio(operation text, baseline text, candidate text,
                                    mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (workload text, axes jsonb, dtype text, protocol text, device text,
	               baseline_implementation text, baseline_ref text, baseline_peak_bytes bigint,
	               candidate_implementation text, candidate_ref text, candidate_peak_bytes bigint,
	               memory_ratio float8, speedup float8)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
#variable_conflict use_column
DECLARE
	ops text[] := _kernelindex.resolve_operation(operation);
	base text[] := _kernelindex.resolve_implementation(ops, baseline, 'baseline');
	cand text[] := _kernelindex.resolve_implementation(ops, candidate, 'candidate');
	protos text[] := _kernelindex.resolve_protocols(mode);
	envs text[] := _kernelindex.resolve_environments(environment);
BEGIN
	RETURN QUERY
	WITH mem AS (
		SELECT DISTINCT ON (m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base))
		       m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base) AS is_base,
		       m.implementation_digest, m.ref, m.peak_bytes
		  FROM kbench_memory m
		 WHERE m.operation_digest = ANY (ops)
		   AND (m.implementation_digest = ANY (base) OR m.implementation_digest = ANY (cand))
		   AND (protos IS NULL OR m.protocol_digest = ANY (protos))
		   AND (envs IS NULL OR m.environment_digest = ANY (envs))
		 ORDER BY m.workload_digest, m.protocol_digest, m.environment_digest, m.implementation_digest = ANY (base),
		          m.peak_bytes, m.observed_at, m.ref
	), timed AS (
		SELECT DISTINCT ON (b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base))
		       b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base) AS is_base,
		       coalesce(r.median_ns, r.primary_ns) AS median_ns
		  FROM kbench_cohort_bests b
		  JOIN kbench_runs r ON r.digest = b.run_digest
		 WHERE (b.implementation_digest = ANY (base) OR b.implementation_digest = ANY (cand))
		   AND b.workload_digest IN (SELECT mem.workload_digest FROM mem)
		 ORDER BY b.workload_digest, b.protocol_digest, b.environment_digest, b.implementation_digest = ANY (base),
		          b.primary_ns, b.observed_at, b.run_digest
	)
	SELECT w.name, w.axes, _kernelindex.float_dtype(w.dtypes), p.name, concat_ws(' ', e.product, e.form_factor),
	       bi.name, bm.ref, bm.peak_bytes, ci.name, cm.ref, cm.peak_bytes,
	       cm.peak_bytes::float8 / nullif(bm.peak_bytes, 0),
	       bt.median_ns::float8 / nullif(ct.median_ns, 0)
	  FROM mem bm
	  JOIN mem cm ON cm.workload_digest = bm.workload_digest AND cm.protocol_digest = bm.protocol_digest
	             AND cm.environment_digest = bm.environment_digest AND NOT cm.is_base
	  LEFT JOIN timed bt ON bt.workload_digest = bm.workload_digest AND bt.protocol_digest = bm.protocol_digest
	                    AND bt.environment_digest = bm.environment_digest AND bt.is_base
	  LEFT JOIN timed ct ON ct.workload_digest = bm.workload_digest AND ct.protocol_digest = bm.protocol_digest
	                    AND ct.environment_digest = bm.environment_digest AND NOT ct.is_base
	  LEFT JOIN kbench_workloads w ON w.digest = bm.workload_digest
	  LEFT JOIN kbench_protocols p ON p.digest = bm.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = bm.environment_digest
	  LEFT JOIN kbench_implementations bi ON bi.digest = bm.implementation_digest
	  LEFT JOIN kbench_implementations ci ON ci.digest = cm.implementation_digest
	 WHERE bm.is_base
	 ORDER BY 5, 4, 3, _kernelindex.axes_key(w.axes), 1;
	IF NOT FOUND THEN
		-- never silently empty (issue 29): what the names resolved to, where their runs are
		PERFORM _kernelindex.say_empty('kbench_memory_ratio',
			'no workload has a peak memory of both the baseline and the candidate in one cohort (the same pass and device)',
			jsonb_build_array(jsonb_build_object('role', 'baseline', 'typed', baseline, 'digests', to_jsonb(base)),
			                  jsonb_build_object('role', 'candidate', 'typed', candidate, 'digests', to_jsonb(cand))),
			nullif(concat_ws(' on ', mode, environment), ''));
	END IF;
END $$;
COMMENT ON FUNCTION kbench_memory_ratio(text, text, text, text, text) IS 'per workload (and protocol, device): baseline and candidate lowest peak memory in one cohort, memory_ratio = candidate / baseline, and the speedup of the same cohort';

-- The geometric mean of the memory ratios (and of the speedups beside them)
-- along each sweep: one row per protocol, device and dtype.
CREATE OR REPLACE FUNCTION kbench_memory_ratio_summary(operation text, baseline text, candidate text,
                                            mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS TABLE (protocol text, device text, dtype text, workloads bigint,
	               geomean_memory_ratio float8, min_memory_ratio float8, max_memory_ratio float8,
	               geomean_speedup float8)
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
	SELECT s.protocol, s.device, s.dtype, count(*), kbench_geomean(s.memory_ratio), min(s.memory_ratio),
	       max(s.memory_ratio), kbench_geomean(s.speedup)
	  FROM kbench_memory_ratio(operation, baseline, candidate, mode, environment) s
	 GROUP BY 1, 2, 3 ORDER BY 2, 1, 3
$$;
COMMENT ON FUNCTION kbench_memory_ratio_summary(text, text, text, text, text) IS 'geometric mean, min and max of kbench_memory_ratio() per protocol, device and dtype, with the geometric mean speedup';

-- Peak memory along one axis (what kbench_sweep() is for latency): per
-- implementation, device, dtype and the other axes' values, the lowest peak
-- at each value of the axis.
CREATE OR REPLACE FUNCTION kbench_memory_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                                    implementation text DEFAULT NULL)
	RETURNS TABLE (axis_value numeric, implementation_name text, device text, dtype text, fixed_axes jsonb,
	               peak_bytes bigint, p20_bytes bigint, p80_bytes bigint, ref text, observed_at timestamptz)
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
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
	SELECT (r.axes ->> axis)::numeric, coalesce(r.implementation, r.implementation_digest),
	       concat_ws(' ', r.product, r.form_factor), r.dtype, r.axes - axis,
	       r.peak_bytes, r.p20_bytes, r.p80_bytes, r.ref, r.observed_at
	  FROM kbench_memory_records_of(operation, mode, environment) r
	 WHERE r.axes ? axis
	   AND (impls IS NULL OR r.implementation_digest = ANY (impls))
	 ORDER BY 3, 2, 4, _kernelindex.axes_key(r.axes - axis), 1;
END $$;
COMMENT ON FUNCTION kbench_memory_sweep(text, text, text, text, text) IS 'peak memory along one axis of an operation''s workloads: per implementation, device, dtype and fixed axes, the lowest peak (bytes) at each value';

GRANT SELECT ON kbench_memory, kbench_memory_records TO PUBLIC;
