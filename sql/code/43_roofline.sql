-- Roofline: devices and costs (tables and seeds: sql/schema/43_roofline.sql),
-- a workload's cost, the roofline view, what devices showed.

-- The device row of an environment.
CREATE OR REPLACE FUNCTION kbench_device_of(environment_digest text) RETURNS kbench_devices
	LANGUAGE sql STABLE
	RETURN (SELECT d FROM kbench_environments e JOIN kbench_devices d ON d.product = e.product
	                  AND (d.form_factor = e.form_factor OR d.form_factor IS NULL)
	         WHERE e.digest = environment_digest
	         ORDER BY d.form_factor IS NULL LIMIT 1);
COMMENT ON FUNCTION kbench_device_of(text) IS 'the kbench_devices row of an environment: same product and form factor, else the product''s row without one';

-- Evaluate a cost expression for a workload's axes (and dtype_bytes).
CREATE OR REPLACE FUNCTION kbench_cost_eval(expr text, axes jsonb, dtype_bytes int) RETURNS float8
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE PARALLEL SAFE AS $$
DECLARE
	sql text := ' ' || expr || ' ';
	id text;
	v jsonb;
	result float8;
BEGIN
	IF NOT _kernelindex.cost_expression_ok(expr) THEN
		RAISE EXCEPTION 'invalid cost expression "%"', expr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A cost expression is made of axis names, dtype_bytes, numbers, + - * /, parentheses, least() and greatest().';
	END IF;
	FOR id IN SELECT DISTINCT m[1] FROM regexp_matches(expr, '([a-z_][a-z_0-9]*)', 'g') m LOOP
		CONTINUE WHEN id IN ('least', 'greatest') AND expr ~ ('(^|[^a-z_0-9])' || id || ' *\(');
		IF id = 'dtype_bytes' THEN
			IF dtype_bytes IS NULL THEN
				RETURN NULL;
			END IF;
			v := to_jsonb(dtype_bytes);
		ELSE
			v := axes -> id;
		END IF;
		IF v IS NULL OR jsonb_typeof(v) <> 'number' THEN
			RAISE EXCEPTION 'unknown axis "%" in cost expression "%"', id, expr USING ERRCODE = 'undefined_object',
				DETAIL = format('The workload''s axes are %s.', coalesce((SELECT string_agg(k, ', ' ORDER BY k) FROM jsonb_object_keys(axes) k), 'none'));
		END IF;
		sql := regexp_replace(sql, '([^a-z_0-9])' || id || '(?![a-z_0-9])', '\1' || (v::text)::float8::text || '::float8', 'g');
	END LOOP;
	EXECUTE 'SELECT (' || sql || ')::float8' INTO result;
	RETURN result;
END $$;
COMMENT ON FUNCTION kbench_cost_eval(text, jsonb, int) IS 'value of a kbench_operation_costs expression for a workload''s axes';

-- Reading the devices and the costs is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_devices, kbench_operation_costs TO PUBLIC;
-- The bytes and FLOPs of one call of a workload's pass, when its operation
-- has costs.
CREATE OR REPLACE FUNCTION kbench_workload_cost(workload_digest text, mode text, OUT bytes float8, OUT flops float8, OUT compute text)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	c record;
	w record;
BEGIN
	SELECT wl.axes, wl.dtypes, o.name INTO w FROM kbench_workloads wl JOIN kbench_operations o ON o.digest = wl.operation_digest
	 WHERE wl.digest = workload_digest;
	IF NOT FOUND THEN
		-- a digest prefix or a name; an unknown workload is an error (_kernelindex.resolve_workload)
		SELECT wl.axes, wl.dtypes, o.name INTO w FROM kbench_workloads wl JOIN kbench_operations o ON o.digest = wl.operation_digest
		 WHERE wl.digest = _kernelindex.resolve_workload(workload_digest);
		IF NOT FOUND THEN
			RETURN;
		END IF;
	END IF;
	SELECT * INTO c FROM kbench_operation_costs k WHERE k.operation = _kernelindex.op_key(w.name) AND k.mode = kbench_workload_cost.mode;
	IF NOT FOUND THEN
		RETURN;
	END IF;
	bytes := kbench_cost_eval(c.bytes, w.axes, _kernelindex.dtype_bytes(_kernelindex.float_dtype(w.dtypes)));
	flops := kbench_cost_eval(c.flops, w.axes, _kernelindex.dtype_bytes(_kernelindex.float_dtype(w.dtypes)));
	compute := c.compute;
END $$;
COMMENT ON FUNCTION kbench_workload_cost(text, text) IS 'bytes moved and FLOPs done by one call of a workload''s pass (kbench_operation_costs), and which peak bounds the FLOPs';

-- Every competing run whose operation has costs: achieved bandwidth and FLOP
-- rate, and how close it is to its device's peaks and roofline.
CREATE OR REPLACE VIEW kbench_roofline AS
SELECT r.digest AS run_digest, o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       _kernelindex.float_dtype(w.dtypes) AS dtype, i.name AS implementation,
       concat_ws(' ', e.product, e.form_factor) AS environment, (d).name AS device,
       r.primary_ns, c.bytes, c.flops, c.flops / nullif(c.bytes, 0) AS arithmetic_intensity,
       round(c.bytes / (r.primary_ns * 1e-9)) AS achieved_bytes_per_s,       -- whole bytes/s, FLOP/s
       round(c.flops / (r.primary_ns * 1e-9)) AS achieved_flops_per_s,
       (d).peak_bandwidth_bytes_per_s,
       pk.peak_flops,
       100 * c.bytes / (r.primary_ns * 1e-9) / (d).peak_bandwidth_bytes_per_s AS pct_peak_bandwidth,
       100 * c.flops / (r.primary_ns * 1e-9) / pk.peak_flops AS pct_peak_flops,
       CASE WHEN (d).name IS NULL OR pk.peak_flops IS NULL THEN NULL
            WHEN c.flops / nullif(c.bytes, 0) < pk.peak_flops / (d).peak_bandwidth_bytes_per_s THEN 'memory'
            ELSE 'compute' END AS bound,
       1e9 * greatest(c.bytes / (d).peak_bandwidth_bytes_per_s, coalesce(c.flops / pk.peak_flops, 0)) AS floor_ns,
       100 * 1e9 * greatest(c.bytes / (d).peak_bandwidth_bytes_per_s, coalesce(c.flops / pk.peak_flops, 0)) / r.primary_ns AS pct_of_roofline,
       r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key
  FROM kbench_runs r
  JOIN kbench_workloads w ON w.digest = r.workload_digest
  JOIN kbench_operations o ON o.digest = w.operation_digest
  JOIN kbench_protocols p ON p.digest = r.protocol_digest
  JOIN kbench_operation_costs k ON k.operation = _kernelindex.op_key(o.name) AND k.mode = kbench_protocol_mode(p.name)
  CROSS JOIN LATERAL kbench_workload_cost(r.workload_digest, k.mode) c
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
  CROSS JOIN LATERAL (SELECT kbench_device_of(r.environment_digest) AS d) dv
  CROSS JOIN LATERAL (SELECT CASE WHEN c.compute = 'vector' THEN (d).peak_flops_fp32
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'bf16' THEN (d).peak_flops_bf16
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'fp16' THEN (d).peak_flops_fp16
                                  WHEN _kernelindex.float_dtype(w.dtypes) LIKE 'fp8%' THEN (d).peak_flops_fp8
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'tf32' THEN (d).peak_flops_tf32
                                  ELSE (d).peak_flops_fp32 END AS peak_flops) pk
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_roofline IS 'competing runs with achieved bytes/s and FLOP/s from kbench_operation_costs, against their device''s peaks (kbench_devices)';

-- What the runs themselves show a device can do: the best bandwidth and FLOP
-- rate any competing run achieved on it, beside the datasheet peak.
CREATE OR REPLACE VIEW kbench_device_observed AS
SELECT environment, device, count(*) AS runs,
       max(achieved_bytes_per_s) AS best_bytes_per_s, max(pct_peak_bandwidth) AS best_pct_peak_bandwidth,
       max(achieved_flops_per_s) AS best_flops_per_s,
       (array_agg(run_digest ORDER BY achieved_bytes_per_s DESC))[1] AS best_bandwidth_run,
       max(peak_bandwidth_bytes_per_s) AS peak_bandwidth_bytes_per_s
  FROM kbench_roofline
 GROUP BY environment, device;
COMMENT ON VIEW kbench_device_observed IS 'per environment, the best achieved bandwidth and FLOP rate over all runs with costs, beside the datasheet peak';

-- Reading the roofline is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_roofline, kbench_device_observed TO PUBLIC;
