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
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key,
       -- beside the datasheet, the measured ceiling (kbench_environment_probes; NULL: not probed)
       mc.bandwidth_bytes_per_s AS measured_bandwidth_bytes_per_s,
       mpk.measured_flops AS measured_peak_flops,
       100 * c.bytes / (r.primary_ns * 1e-9) / mc.bandwidth_bytes_per_s AS pct_measured_bandwidth,
       100 * c.flops / (r.primary_ns * 1e-9) / mpk.measured_flops AS pct_measured_flops,
       mpk.measured_floor_ns,
       100 * mpk.measured_floor_ns / r.primary_ns AS pct_of_measured_roofline,
       r.primary_ns / nullif(1e9 * greatest(c.bytes / (d).peak_bandwidth_bytes_per_s, coalesce(c.flops / pk.peak_flops, 0)), 0)
         AS x_datasheet,
       r.primary_ns / nullif(mpk.measured_floor_ns, 0) AS x_measured_ceiling,
       CASE WHEN mc.environment_digest IS NULL THEN 'not probed: SELECT kbench_probe(device) on the host of this environment'
            WHEN mc.bandwidth_bytes_per_s IS NULL THEN 'the probe of this environment measured no bandwidth' END AS ceiling_note
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
  LEFT JOIN kbench_environment_probes mc ON mc.environment_digest = r.environment_digest
  CROSS JOIN LATERAL (SELECT CASE WHEN c.compute = 'vector' THEN mc.flops_fp32
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'bf16' THEN mc.flops_bf16
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'fp16' THEN mc.flops_fp16
                                  WHEN _kernelindex.float_dtype(w.dtypes) LIKE 'fp8%' THEN mc.flops_fp8
                                  WHEN _kernelindex.float_dtype(w.dtypes) = 'tf32' THEN mc.flops_tf32
                                  ELSE mc.flops_fp32 END AS measured_flops) mpk0
  -- the measured floor: NULL without a measured bandwidth (greatest() would skip the NULL);
  -- a FLOP rate the probe did not measure bounds nothing, as a datasheet rate left NULL
  CROSS JOIN LATERAL (SELECT mpk0.measured_flops,
                             CASE WHEN mc.bandwidth_bytes_per_s IS NOT NULL
                                  THEN 1e9 * greatest(c.bytes / mc.bandwidth_bytes_per_s, coalesce(c.flops / mpk0.measured_flops, 0))
                             END AS measured_floor_ns) mpk
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_roofline IS 'competing runs with achieved bytes/s and FLOP/s from kbench_operation_costs, against their device''s datasheet peaks (kbench_devices) and measured ceilings (kbench_environment_probes): x_datasheet and x_measured_ceiling';

-- What the runs themselves show a device can do: the best bandwidth and FLOP
-- rate any competing run achieved on it, beside the datasheet peak.
CREATE OR REPLACE VIEW kbench_device_observed AS
SELECT environment, device, count(*) AS runs,
       max(achieved_bytes_per_s) AS best_bytes_per_s, max(pct_peak_bandwidth) AS best_pct_peak_bandwidth,
       max(achieved_flops_per_s) AS best_flops_per_s,
       (array_agg(run_digest ORDER BY achieved_bytes_per_s DESC))[1] AS best_bandwidth_run,
       max(peak_bandwidth_bytes_per_s) AS peak_bandwidth_bytes_per_s,
       max(measured_bandwidth_bytes_per_s) AS measured_bandwidth_bytes_per_s,
       max(pct_measured_bandwidth) AS best_pct_measured_bandwidth
  FROM kbench_roofline
 GROUP BY environment, device;
COMMENT ON VIEW kbench_device_observed IS 'per environment, the best achieved bandwidth and FLOP rate over all runs with costs, beside the datasheet peak and the measured ceiling';

-- Reading the roofline is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_roofline, kbench_device_observed TO PUBLIC;

--------------------------------------------------------------------------
-- Measured ceilings (issue 27, item 5; docs/KERNELS.md "Measured ceilings")
--------------------------------------------------------------------------

-- The probe of a device in this backend (kernels/probe.c): jsonb with the
-- environment's digest and manifest; measure = false gives those alone.
CREATE OR REPLACE FUNCTION _kernelindex.probe_device(device text, bytes bigint DEFAULT NULL, measure boolean DEFAULT true)
	RETURNS jsonb AS 'MODULE_PATHNAME', 'kbench__probe_device' LANGUAGE C VOLATILE;
REVOKE ALL ON FUNCTION _kernelindex.probe_device(text, bigint, boolean) FROM PUBLIC;

-- Store a probe: the object `kbench probe --json` prints (a host without a
-- database: copy it here) or _kernelindex.probe_device gives.  Once per
-- environment: an environment already probed keeps its row (returned)
-- unless replace.  A figure must be a positive number or absent (NULL: not
-- measured); none is made up.
CREATE OR REPLACE FUNCTION kbench_probe_store(probe jsonb, replace boolean DEFAULT false) RETURNS kbench_environment_probes
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	row kbench_environment_probes;
	k text;
	fig jsonb;
BEGIN
	IF probe IS NULL OR jsonb_typeof(probe) <> 'object' OR coalesce(probe->>'environment_digest', '') !~ '^sha256:[0-9a-f]{64}$' THEN
		RAISE EXCEPTION 'a probe is a JSON object with an environment_digest' USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is what kbench probe --json prints.', HINT = 'Run kbench probe --json --device DEVICE on the host.';
	END IF;
	FOREACH k IN ARRAY ARRAY['copy_bytes_per_s', 'triad_bytes_per_s', 'fma_flops_per_s', 'gemm_tf32_flops_per_s',
	                         'gemm_bf16_flops_per_s', 'gemm_fp16_flops_per_s', 'gemm_fp8_flops_per_s'] LOOP
		fig := probe -> k;
		IF fig IS NOT NULL AND jsonb_typeof(fig) <> 'null' AND NOT (jsonb_typeof(fig) = 'number' AND fig::text::float8 > 0) THEN
			RAISE EXCEPTION 'probe figure % must be a positive number or absent, got %', k, fig USING ERRCODE = 'invalid_parameter_value',
				DETAIL = 'A figure that was not measured is left out (NULL), never made up.';
		END IF;
	END LOOP;
	INSERT INTO kbench_environment_probes AS p (environment_digest, device, bandwidth_bytes_per_s, flops_fp32, flops_tf32,
	                                            flops_bf16, flops_fp16, flops_fp8, probe)
	VALUES (probe->>'environment_digest', coalesce(probe->>'device', '?'),
	        nullif(greatest(coalesce((probe->>'copy_bytes_per_s')::float8, 0), coalesce((probe->>'triad_bytes_per_s')::float8, 0)), 0),
	        (probe->>'fma_flops_per_s')::float8, (probe->>'gemm_tf32_flops_per_s')::float8, (probe->>'gemm_bf16_flops_per_s')::float8,
	        (probe->>'gemm_fp16_flops_per_s')::float8, (probe->>'gemm_fp8_flops_per_s')::float8, probe - 'environment')
	ON CONFLICT (environment_digest) DO UPDATE
	   SET device = excluded.device, probed_at = now(), bandwidth_bytes_per_s = excluded.bandwidth_bytes_per_s,
	       flops_fp32 = excluded.flops_fp32, flops_tf32 = excluded.flops_tf32, flops_bf16 = excluded.flops_bf16,
	       flops_fp16 = excluded.flops_fp16, flops_fp8 = excluded.flops_fp8, probe = excluded.probe
	 WHERE replace
	RETURNING * INTO row;
	IF row.environment_digest IS NULL THEN
		SELECT * INTO row FROM kbench_environment_probes p WHERE p.environment_digest = kbench_probe_store.probe->>'environment_digest';
	END IF;
	RETURN row;
END $$;
COMMENT ON FUNCTION kbench_probe_store(jsonb, boolean) IS 'store a device probe (kbench probe --json) as its environment''s measured ceilings; once per environment unless replace';

-- Probe a device of this server (cpu, cuda:N) and store its ceilings, once
-- per environment: an environment probed already is returned as stored,
-- without measuring, unless refresh.  It runs in this session for a few
-- seconds; run it while the device is idle (the probe records the load).
CREATE OR REPLACE FUNCTION kbench_probe(device text DEFAULT 'cpu', refresh boolean DEFAULT false, bytes bigint DEFAULT NULL)
	RETURNS kbench_environment_probes
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	row kbench_environment_probes;
	env text;
BEGIN
	IF device IS NULL THEN
		RAISE EXCEPTION 'a device is required' USING ERRCODE = 'null_value_not_allowed', HINT = 'Use cpu or cuda:N.';
	END IF;
	-- the device's environment first (nothing measured): probed already?
	env := _kernelindex.probe_device(kbench_probe.device, NULL, false)->>'environment_digest';
	SELECT * INTO row FROM kbench_environment_probes p WHERE p.environment_digest = env;
	IF FOUND AND NOT refresh THEN
		RETURN row;
	END IF;
	RETURN kbench_probe_store(_kernelindex.probe_device(kbench_probe.device, kbench_probe.bytes, true), refresh);
END $$;
COMMENT ON FUNCTION kbench_probe(text, boolean, bigint) IS 'measure a device''s ceilings (kbench probe) and store them with its environment, once per environment unless refresh';

GRANT SELECT ON kbench_environment_probes TO PUBLIC;
REVOKE ALL ON FUNCTION kbench_probe_store(jsonb, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION kbench_probe(text, boolean, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION kbench_probe_store(jsonb, boolean) TO kbench_admin;
GRANT EXECUTE ON FUNCTION kbench_probe(text, boolean, bigint) TO kbench_admin;
