-- The roofline chart (kbench_chart_roofline), drawn by kbench_chart
-- (sql/code/61_chart.sql).

-- Roofline: one device, every competing run with a cost formula as a point
-- (arithmetic intensity, achieved FLOP/s), the device's roofs (bandwidth x
-- intensity up to the fp32 vector peak, and up to the matrix peak of each
-- dtype whose runs are bound by it); each point's title says how many times
-- its roofline floor the run took, against the datasheet and against the
-- measured ceiling (kbench_environment_probes; 'not probed' without one).
CREATE OR REPLACE FUNCTION kbench_chart_roofline(environment text, operation text DEFAULT NULL, mode text DEFAULT NULL)
	RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	envs text[];
	ops text[];
	protos text[] := _kernelindex.resolve_protocols(mode);
	dev kbench_devices;
	ndev int;
	devnames text;
	spec jsonb;
	roofs jsonb;
	peaks jsonb;
	amin float8;
	amax float8;
	skipped bigint;
	nsel bigint;
	held text;
BEGIN
	IF environment IS NULL THEN
		RAISE EXCEPTION 'an environment is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name a device, e.g. ''NVIDIA H100 80GB HBM3'' or ''A100''.';
	END IF;
	envs := _kernelindex.resolve_environments(environment);
	IF operation IS NOT NULL THEN
		ops := _kernelindex.resolve_operation(operation);
	END IF;
	-- ambiguity is the resolver's alone (issue 29: 'H100' means the same here as
	-- in kbench_speedup); a selection over several datasheet rows (H100 SXM5
	-- and PCIe) draws its runs without roofs, and the subtitle says why
	SELECT count(DISTINCT (kbench_device_of(e)).name), string_agg(DISTINCT (kbench_device_of(e)).name, ', ')
	  INTO ndev, devnames FROM unnest(envs) e;
	IF ndev = 1 THEN
		SELECT d.* INTO dev FROM unnest(envs) e, kbench_device_of(e) d WHERE d.name IS NOT NULL ORDER BY d.name LIMIT 1;
	END IF;
	WITH r AS (
		SELECT * FROM kbench_roofline r
		 WHERE r.environment_digest = ANY (envs) AND (protos IS NULL OR r.protocol_digest = ANY (protos))
		   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	)
	SELECT min(arithmetic_intensity) FILTER (WHERE achieved_flops_per_s > 0 AND arithmetic_intensity > 0),
	       max(arithmetic_intensity) FILTER (WHERE achieved_flops_per_s > 0 AND arithmetic_intensity > 0),
	       count(*) FILTER (WHERE NOT (achieved_flops_per_s > 0 AND arithmetic_intensity > 0)),
	       -- the matrix peaks the runs are bound by (one pass over kbench_roofline, whose
	       -- cost formulas are what a roofline costs)
	       coalesce(jsonb_agg(DISTINCT jsonb_build_object('k', dtype || ' matrix', 'peak', peak_flops))
	                  FILTER (WHERE peak_flops IS NOT NULL AND peak_flops <> dev.peak_flops_fp32), '[]'),
	       jsonb_build_object(
	         'title', format('Roofline of %s%s', (SELECT string_agg(DISTINCT concat_ws(' ', e.product, e.form_factor), ', ') FROM kbench_environments e
	                                                     WHERE e.digest = ANY (envs)), coalesce(' · ' || kbench_chart_roofline.operation, '')
	                         || coalesce(' · ' || kbench_chart_roofline.mode, '')),
	         'subtitle', concat_ws(' · ', CASE WHEN ndev > 1 THEN format('no roofs: the runs are on %s (name one, e.g. ''%s'')', devnames, split_part(devnames, ', ', 1))
	                                            WHEN dev.name IS NULL THEN 'no datasheet peaks for this device (add a row to kbench_devices)'
	                                            ELSE format('%s: %s B/s, %s FLOP/s fp32', dev.name, kbench_svg_number(dev.peak_bandwidth_bytes_per_s),
	                                                        kbench_svg_number(dev.peak_flops_fp32)) END,
	                               CASE WHEN count(*) FILTER (WHERE measured_floor_ns IS NOT NULL) = 0 THEN 'measured ceiling: not probed (kbench_probe)'
	                                    ELSE format('measured ceiling: %s B/s', kbench_svg_number(max(measured_bandwidth_bytes_per_s))) END,
	                               'a point per run',
	                               CASE WHEN count(*) FILTER (WHERE NOT (achieved_flops_per_s > 0 AND arithmetic_intensity > 0)) > 0
	                                    THEN format('%s without FLOPs not drawn', count(*) FILTER (WHERE NOT (achieved_flops_per_s > 0 AND arithmetic_intensity > 0))) END),
	         'empty', format('No competing run on %s%s has a cost formula (kbench_operation_costs).', kbench_chart_roofline.environment,
	                          coalesce(' of ' || kbench_chart_roofline.operation, '')),
	         'x', jsonb_build_object('label', 'arithmetic intensity (FLOP/byte)', 'log', true),
	         'y', jsonb_build_object('label', 'achieved FLOP/s', 'log', true),
	         'series', coalesce((SELECT jsonb_agg(jsonb_build_object('name', k, 'line', false, 'points', pts,
	                                                                 'group', CASE WHEN ops IS NULL THEN 'runs by operation' ELSE 'runs by implementation' END) ORDER BY k)
	                               FROM (SELECT CASE WHEN ops IS NULL THEN _kernelindex.op_key(r.operation) ELSE kbench_chart_label(r.implementation) END AS k,
	                                            jsonb_agg(jsonb_build_object('x', r.arithmetic_intensity, 'y', r.achieved_flops_per_s,
	                                                      'title', format('%s %s %s %s · %s: %s FLOP/B, %s FLOP/s, %s B/s; %s the roofline floor (%s%% of the roofline, %s-bound; x datasheet); %s',
	                                                                      r.operation, r.mode, (SELECT string_agg(key || '=' || value, ' ' ORDER BY key) FROM jsonb_each_text(r.axes)), r.dtype,
	                                                                      kbench_chart_label(r.implementation), kbench_svg_number(r.arithmetic_intensity),
	                                                                      kbench_svg_number(r.achieved_flops_per_s), kbench_svg_number(r.achieved_bytes_per_s),
	                                                                      CASE WHEN r.pct_of_roofline > 0 THEN round((100 / r.pct_of_roofline)::numeric, 2) || '×' ELSE '?' END,
	                                                                      round(r.pct_of_roofline::numeric, 1), coalesce(r.bound, '?'),
	                                                                      CASE WHEN r.x_measured_ceiling > 0 THEN round(r.x_measured_ceiling::numeric, 2) || '× the measured ceiling''s floor'
	                                                                           ELSE 'x measured ceiling: not probed' END))
	                                                      ORDER BY r.arithmetic_intensity, r.run_digest) AS pts
	                                       FROM r WHERE r.achieved_flops_per_s > 0 AND r.arithmetic_intensity > 0 GROUP BY 1) q), '[]'))
	  INTO amin, amax, skipped, peaks, spec
	  FROM r;
	IF dev.name IS NOT NULL AND amin IS NOT NULL THEN
		-- the roofs over the points' range, a factor of 3 wider each side
		SELECT jsonb_agg(jsonb_build_object('name', format('roof %s: %s B/s × intensity, %s FLOP/s', k, kbench_svg_number(dev.peak_bandwidth_bytes_per_s),
		                                                   kbench_svg_number(peak)), 'style', 'roof',
		                                    'label_end', format('%s: %s FLOP/s', k, kbench_svg_number(peak)), 'group', 'roofs',
		                                    'points', jsonb_build_array(
		                                      jsonb_build_object('x', amin / 3, 'y', least(dev.peak_bandwidth_bytes_per_s * amin / 3, peak)),
		                                      jsonb_build_object('x', greatest(amin / 3, least(amax * 3, peak / dev.peak_bandwidth_bytes_per_s)),
		                                                         'y', least(dev.peak_bandwidth_bytes_per_s * greatest(amin / 3, least(amax * 3, peak / dev.peak_bandwidth_bytes_per_s)), peak)),
		                                      jsonb_build_object('x', amax * 3, 'y', least(dev.peak_bandwidth_bytes_per_s * amax * 3, peak))))
		                 ORDER BY peak)
		  INTO roofs
		  FROM (SELECT DISTINCT k, peak FROM (
		          SELECT 'fp32' AS k, dev.peak_flops_fp32 AS peak
		          UNION ALL
		          SELECT e->>'k', (e->>'peak')::float8 FROM jsonb_array_elements(peaks) e) q
		         WHERE peak > 0) q2;
		spec := jsonb_set(spec, '{series}', coalesce(roofs, '[]') || (spec->'series'));
	END IF;
	IF amin IS NULL THEN
		-- nothing to draw: an empty selection is not a missing cost formula;
		-- say so, and what the device does hold
		SELECT count(*) INTO nsel FROM kbench_runs r
		 WHERE r.environment_digest = ANY (envs) AND (protos IS NULL OR r.protocol_digest = ANY (protos))
		   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)));
		IF nsel = 0 THEN
			SELECT string_agg(format('%s %s (%s runs)', k, coalesce(m, '?'), n), ', ' ORDER BY n DESC, k, m) INTO held
			  FROM (SELECT _kernelindex.op_key(o.name) AS k, kbench_protocol_mode(p.name) AS m, count(*) AS n
			          FROM kbench_runs r
			          JOIN kbench_workloads w ON w.digest = r.workload_digest
			          JOIN kbench_operations o ON o.digest = w.operation_digest
			          LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
			         WHERE r.environment_digest = ANY (envs)
			         GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 8) q;
			spec := jsonb_set(spec, '{empty}', to_jsonb(format('The selection is empty: no run%s%s on %s is in the catalog. On %s it holds (most runs first, up to 8): %s.',
			                  coalesce(' of ' || kbench_chart_roofline.operation, ''), coalesce(' (' || kbench_chart_roofline.mode || ')', ''),
			                  environment, environment, coalesce(held, 'no run'))));
		END IF;
		PERFORM _kernelindex.chart_empty('kbench_chart_roofline', spec, NULL,
			nullif(concat_ws(' ', kbench_chart_roofline.operation, kbench_chart_roofline.mode, 'on ' || environment), ''));
	END IF;
	RETURN kbench_chart(spec);
END $$;
COMMENT ON FUNCTION kbench_chart_roofline(text, text, text) IS 'SVG: one device''s runs (arithmetic intensity, achieved FLOP/s) under its roofs; each point''s title gives its multiple of the roofline floor';
