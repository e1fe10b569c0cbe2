--------------------------------------------------------------------------
-- The charts
--------------------------------------------------------------------------

-- Whether the extension itself provides an object (a relation or function by
-- its regclass / regprocedure text): the charts draw change points and alerts
-- (issue 16) when a version provides them, and never use an object of the
-- same name that a role created in the extension's schema.
CREATE OR REPLACE FUNCTION kbench_chart_has(kind text, name text) RETURNS boolean
	LANGUAGE sql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension x ON x.oid = d.refobjid
	                WHERE x.extname = 'kernelindex' AND d.deptype = 'e'
	                  AND d.classid = CASE kind WHEN 'relation' THEN 'pg_catalog.pg_class'::pg_catalog.regclass
	                                            WHEN 'function' THEN 'pg_catalog.pg_proc'::pg_catalog.regclass END
	                  AND d.objid = CASE kind WHEN 'relation' THEN pg_catalog.to_regclass(name)::pg_catalog.oid
	                                          WHEN 'function' THEN pg_catalog.to_regprocedure(name)::pg_catalog.oid END);
COMMENT ON FUNCTION kbench_chart_has(text, text) IS 'whether the extension itself provides a relation or function of that name (what the charts draw beyond regressions)';

-- An implementation's short label: the provider part of its title
-- ('Cross-entropy loss · Liger' -> 'Liger'), else its name.
CREATE OR REPLACE FUNCTION kbench_chart_label(implementation text) RETURNS text
	LANGUAGE sql STABLE PARALLEL SAFE SET search_path = pg_catalog, @extschema@, pg_temp
	RETURN coalesce((SELECT nullif(split_part(i.manifest #>> '{metadata,title}', ' · ', 2), '')
	                   FROM kbench_implementations i WHERE i.name = implementation OR i.digest = implementation
	                  ORDER BY i.digest LIMIT 1),
	                CASE WHEN implementation ~ '^sha256:' THEN left(implementation, 19) || '…' ELSE implementation END);
-- A chart that draws no point because of what its arguments name says why
-- (issue 29), as the analytics do (_kernelindex.say_empty): the chart's own
-- empty sentence, what the names resolved to and where their runs are.
CREATE OR REPLACE FUNCTION _kernelindex.chart_empty(fn text, spec jsonb, sides jsonb, selection text) RETURNS boolean
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(spec->'series', '[]')) sr,
	                         jsonb_array_elements(CASE WHEN jsonb_typeof(sr->'points') = 'array' THEN sr->'points' ELSE '[]' END) pt
	            WHERE coalesce(sr->>'style', '') <> 'roof' AND jsonb_typeof(pt->'x') = 'number' AND jsonb_typeof(pt->'y') = 'number') THEN
		RETURN false;
	END IF;
	PERFORM _kernelindex.say_empty(fn, rtrim(regexp_replace(coalesce(spec->>'empty', 'nothing to draw'), '^(.)', lower(left(spec->>'empty', 1))), '.'),
	                               coalesce(sides, '[]'), selection);
	RETURN true;
END $$;

COMMENT ON FUNCTION kbench_chart_label(text) IS 'the short label charts give an implementation (its title''s provider part, else its name)';

-- Sweep: one operation and pass (and device), a metric against one axis: a
-- line per implementation (and device, dtype, other axes' values), each
-- implementation's best run per value, with its spread as a band (the 95%
-- interval of the median when the run kept raw samples, else p20..p80).
-- metric: time (µs), bandwidth (GB/s) or flops (TFLOP/s) from the cost
-- formulas, peak_memory (MiB, from the runs' peak_memory measurements).
-- Runs made here (source 'kbench') are drawn thick with filled markers.
CREATE OR REPLACE FUNCTION kbench_chart_sweep(operation text, mode text, axis text, environment text DEFAULT NULL,
                                   metric text DEFAULT 'time', implementation text DEFAULT NULL)
	RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	m text := CASE lower(metric) WHEN 'memory' THEN 'peak_memory' WHEN 'latency' THEN 'time' ELSE lower(metric) END;
	spec jsonb;
	unit text;
	memj jsonb;
	-- the CPU environments' device names: CPU and GPU runs go to separate panels
	cpus text[] := ARRAY(SELECT concat_ws(' ', e.product, e.form_factor) FROM kbench_environments e WHERE _kernelindex.is_cpu(e));
BEGIN
	IF m IS NULL OR m NOT IN ('time', 'bandwidth', 'flops', 'peak_memory') THEN
		RAISE EXCEPTION 'unknown chart metric "%"', metric USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Use time, bandwidth, flops or peak_memory.';
	END IF;
	unit := CASE m WHEN 'time' THEN 'median time' WHEN 'bandwidth' THEN 'achieved bandwidth (GB/s)'
	               WHEN 'flops' THEN 'achieved TFLOP/s' ELSE 'peak memory (MiB)' END;
	-- Peak memory: from kbench_memory_sweep when this version has it (issue 15:
	-- memory imported without a latency, such as Liger's memory rows, and the
	-- runs' peak_memory measurements), else from the runs' measurements alone.
	IF m = 'peak_memory' AND kbench_chart_has('function', '@extschema@.kbench_memory_sweep(text, text, text, text, text)') THEN
		EXECUTE $q$
			SELECT coalesce(jsonb_agg(jsonb_build_object('ours', coalesce(r.source = 'kbench', false), 'impl', s.implementation_name,
			                                             'device', s.device, 'dtype', s.dtype, 'fixed', s.fixed_axes, 'x', s.axis_value,
			                                             'y', s.peak_bytes / 1048576.0, 'lo', s.p20_bytes / 1048576.0, 'hi', s.p80_bytes / 1048576.0,
			                                             'ref', coalesce(left(r.digest, 19) || '…', s.ref))), '[]')
			  FROM @extschema@.kbench_memory_sweep($1, $2, $3, $4, $5) s
			  LEFT JOIN @extschema@.kbench_runs r ON r.digest = s.ref
		$q$ INTO memj USING operation, mode, axis, environment, implementation;
	END IF;
	WITH raw AS (
	SELECT coalesce(r.source = 'kbench', false) AS ours, s.implementation_name AS impl, s.device, s.dtype, s.fixed_axes AS fixed,
	       s.axis_value AS x, r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL AS has_ci,
	       CASE m WHEN 'time' THEN s.median_ns / 1e3 WHEN 'bandwidth' THEN c.bytes / nullif(s.median_ns, 0)
	              WHEN 'flops' THEN c.flops / nullif(s.median_ns, 0) / 1e3 ELSE mem.bytes / 1048576.0 END AS y,
	       CASE m WHEN 'time' THEN sp.low_ns / 1e3 WHEN 'bandwidth' THEN c.bytes / nullif(sp.high_ns, 0) WHEN 'flops' THEN c.flops / nullif(sp.high_ns, 0) / 1e3 END AS lo,
	       CASE m WHEN 'time' THEN sp.high_ns / 1e3 WHEN 'bandwidth' THEN c.bytes / nullif(sp.low_ns, 0) WHEN 'flops' THEN c.flops / nullif(sp.low_ns, 0) / 1e3 END AS hi,
	       format('%s · %s=%s · %s %s%s: %s; %s %s; run %s (%s)', kbench_chart_label(s.implementation_name), axis, s.axis_value, s.device, s.dtype,
	              CASE WHEN s.fixed_axes <> '{}' THEN ' ' || s.fixed_axes::text ELSE '' END,
	              CASE m WHEN 'time' THEN 'median ' || kbench_svg_duration(s.median_ns, 'ns')
	                     WHEN 'bandwidth' THEN kbench_svg_number(c.bytes / nullif(s.median_ns, 0)) || ' GB/s'
	                     WHEN 'flops' THEN kbench_svg_number(c.flops / nullif(s.median_ns, 0) / 1e3) || ' TFLOP/s'
	                     ELSE kbench_svg_number(mem.bytes / 1048576.0) || ' MiB peak' END,
	              CASE WHEN r.raw_samples_ns IS NOT NULL AND r.ci95_low_ns IS NOT NULL THEN '95% interval of the median' ELSE 'p20–p80' END,
	              kbench_svg_duration(sp.low_ns, 'ns') || '–' || kbench_svg_duration(sp.high_ns, 'ns'),
	              left(s.run_digest, 19) || '…', coalesce(r.source, 'unknown source')) AS title
	  FROM kbench_sweep(operation, mode, axis, environment, implementation) s
	  JOIN kbench_runs r ON r.digest = s.run_digest
	  CROSS JOIN LATERAL kbench_run_spread(r) sp
	  LEFT JOIN LATERAL (SELECT wc.bytes, wc.flops FROM kbench_protocols p, kbench_workload_cost(r.workload_digest, kbench_protocol_mode(p.name)) wc
	                      WHERE p.digest = r.protocol_digest AND m IN ('bandwidth', 'flops')) c ON true
	  -- peak memory, without kbench_memory_sweep: the run's own peak_memory measurement
	  LEFT JOIN LATERAL (SELECT max(ms.value) AS bytes FROM kbench_measurements ms
	                      WHERE ms.run_digest = r.digest AND ms.metric = 'peak_memory' AND m = 'peak_memory') mem ON true
	 WHERE memj IS NULL
	UNION ALL
	SELECT mj.ours, mj.impl, mj.device, mj.dtype, mj.fixed, mj.x, false, mj.y, mj.lo, mj.hi,
	       format('%s · %s=%s · %s %s%s: %s MiB peak%s; %s', kbench_chart_label(mj.impl), axis, mj.x, mj.device, mj.dtype,
	              CASE WHEN mj.fixed <> '{}' THEN ' ' || mj.fixed::text ELSE '' END, kbench_svg_number(mj.y),
	              CASE WHEN mj.lo IS NOT NULL THEN format(' (p20–p80 %s–%s MiB)', kbench_svg_number(mj.lo), kbench_svg_number(mj.hi)) ELSE '' END, mj.ref)
	  FROM jsonb_to_recordset(memj) AS mj(ours boolean, impl text, device text, dtype text, fixed jsonb, x numeric, y float8, lo float8, hi float8, ref text)
	), v AS (
		SELECT * FROM raw WHERE y > 0 AND y < 'Infinity'::float8
	), n AS (
		SELECT count(DISTINCT device) AS nd, count(DISTINCT dtype) AS nt, count(DISTINCT fixed) AS nf, min(fixed::text)::jsonb AS fixed1,
		       coalesce(bool_or(has_ci), false) AS bool_or_raw FROM v
	), rows AS (
		-- a line per implementation (its legend entry) under a heading per
		-- device, dtype and other axes' values where they vary (the group),
		-- in a panel for the GPUs and one for the CPUs when both ran
		SELECT kbench_chart_label(impl) || CASE WHEN ours THEN ' (ours)' ELSE '' END AS k,
		       nullif(concat_ws(' · ', CASE WHEN nd > 1 THEN device END, CASE WHEN nt > 1 THEN dtype END,
		                        CASE WHEN nf > 1 THEN (SELECT string_agg(key || '=' || value, ' ' ORDER BY key) FROM jsonb_each_text(fixed)) END), '') AS grp,
		       CASE WHEN device = ANY (cpus) THEN 'CPU' ELSE 'GPU' END AS panel, v.*
		  FROM v, n
	), sub AS (
		SELECT concat_ws(' · ', (SELECT string_agg(DISTINCT dtype, ', ') FROM v),
		                 (SELECT string_agg(key || '=' || value, ' ' ORDER BY key) FROM n, jsonb_each_text(n.fixed1) WHERE n.nf = 1),
		                 CASE WHEN m = 'peak_memory' AND memj IS NOT NULL THEN 'the lowest peak per implementation and value; band: p20–p80 of the calls'
		                      WHEN m = 'peak_memory' THEN NULL WHEN (SELECT bool_or_raw FROM n) THEN 'band: p20–p80, or the median''s 95% CI where raw samples were kept'
		                      ELSE 'band: each run''s p20–p80' END) AS rest
	)
	SELECT jsonb_build_object(
	         'title', format('%s %s: %s against %s', (SELECT o.name FROM kbench_operations o WHERE o.digest = (_kernelindex.resolve_operation(operation))[1]),
	                         mode, CASE m WHEN 'time' THEN 'time' WHEN 'bandwidth' THEN 'bandwidth' WHEN 'flops' THEN 'FLOP rate' ELSE 'peak memory' END, axis),
	         'subtitle', concat_ws(' · ', (SELECT string_agg(DISTINCT device, ', ') FROM v), (SELECT rest FROM sub)),
	         'panel_subtitles', (SELECT jsonb_object_agg(panel, concat_ws(' · ', devs, (SELECT rest FROM sub)))
	                               FROM (SELECT panel, string_agg(DISTINCT device, ', ') AS devs FROM rows GROUP BY panel) q),
	         'empty', CASE WHEN m = 'peak_memory' THEN 'No run of this selection carries a peak_memory measurement.'
	                       ELSE format('No competing run of %s %s%s along %s%s.', operation, mode, coalesce(' on ' || environment, ''), axis,
	                                   CASE WHEN m IN ('bandwidth', 'flops') THEN ' with a cost formula (kbench_operation_costs)' ELSE '' END) END,
	         'x', jsonb_build_object('label', axis, 'kind', 'number',
	                                 'ticks', (SELECT jsonb_agg(jsonb_build_object('v', x, 'label', CASE WHEN x = trunc(x) AND abs(x) < 1e6 THEN trunc(x)::text ELSE kbench_svg_number(x::float8) END) ORDER BY x)
	                                             FROM (SELECT DISTINCT x FROM v) q)),
	         'y', jsonb_build_object('label', unit, 'unit', CASE WHEN m = 'time' THEN 'µs' END),
	         'series', coalesce((SELECT jsonb_agg(jsonb_build_object('name', k, 'group', grp, 'panel', panel, 'style', CASE WHEN ours THEN 'ours' ELSE 'imported' END,
	                                                                 'points', pts) ORDER BY panel DESC, grp, ours, k)
	                               FROM (SELECT k, grp, panel, ours, jsonb_agg(jsonb_build_object('x', x, 'y', y, 'lo', lo, 'hi', hi, 'title', title) ORDER BY x) AS pts
	                                       FROM rows GROUP BY k, grp, panel, ours) q), '[]'))
	  INTO spec;
	-- drawn empty: say why (kbench_sweep has said it for the latencies)
	IF m <> 'time' OR memj IS NOT NULL THEN
		PERFORM _kernelindex.chart_empty('kbench_chart_sweep', spec,
			CASE WHEN implementation IS NOT NULL
			     THEN jsonb_build_array(jsonb_build_object('role', 'implementation', 'typed', implementation,
			                                               'digests', to_jsonb(_kernelindex.resolve_implementation(_kernelindex.resolve_operation(operation), implementation)))) END,
			nullif(concat_ws(' on ', mode, environment), ''));
	END IF;
	RETURN kbench_chart(spec);
END $$;
COMMENT ON FUNCTION kbench_chart_sweep(text, text, text, text, text, text) IS 'SVG: an operation''s pass along one axis, a line and spread band per implementation (metric: time, bandwidth, flops, peak_memory)';

-- Series: one implementation family in one workload (per pass and device)
-- over its points in time order, the regressions kbench_regressions finds
-- (method, default percent) marked.
CREATE OR REPLACE FUNCTION kbench_chart_series(implementation text, workload text, mode text DEFAULT NULL, environment text DEFAULT NULL,
                                    method text DEFAULT 'percent')
	RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	wd text;
	wname text;
	op text;
	opname text;
	fam text;
	protos text[] := _kernelindex.resolve_protocols(mode);
	envs text[] := _kernelindex.resolve_environments(environment);
	spec jsonb;
	marks jsonb;
	impls text[];
BEGIN
	IF workload IS NULL THEN
		RAISE EXCEPTION 'a workload is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name one by its name or digest, e.g. liger-layer-norm-hidden4096-rows4096-fp32.';
	END IF;
	SELECT w.digest, w.operation_digest, o.name, w.name INTO wd, op, opname, wname
	  FROM kbench_workloads w LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
	 WHERE w.name = workload OR w.digest = workload ORDER BY w.digest LIMIT 1;
	IF wd IS NULL THEN
		RAISE EXCEPTION 'unknown workload "%"', workload USING ERRCODE = 'undefined_object',
			DETAIL = 'No workload in the catalog has that name or digest.',
			HINT = 'List them with SELECT name FROM kbench_workloads ORDER BY 1.';
	END IF;
	impls := _kernelindex.resolve_implementation(ARRAY[op], implementation);
	SELECT min(i.name) INTO fam FROM kbench_implementations i WHERE i.digest = ANY (impls);
	fam := coalesce(fam, implementation);
	-- no point: nothing to mark (and kbench_regressions would say so too)
	IF NOT EXISTS (SELECT 1 FROM kbench_series s WHERE s.workload_digest = wd AND s.implementation = fam
	                  AND (protos IS NULL OR s.protocol_digest = ANY (protos)) AND (envs IS NULL OR s.environment_digest = ANY (envs))) THEN
		spec := jsonb_build_object('title', format('%s · %s', kbench_chart_label(fam), wname),
		                           'empty', format('No competing run of %s in %s%s%s.', fam, wname, coalesce(' (' || mode || ')', ''), coalesce(' on ' || environment, '')),
		                           'x', jsonb_build_object('label', 'point (version, date)'), 'y', jsonb_build_object('label', 'median time'));
		PERFORM _kernelindex.chart_empty('kbench_chart_series', spec,
			jsonb_build_array(jsonb_build_object('role', 'implementation', 'typed', implementation, 'digests', to_jsonb(impls))),
			nullif(concat_ws(' on ', mode, environment), ''));
		RETURN kbench_chart(spec);
	END IF;
	-- regressions, at their point of their series; then change points and
	-- alerts when this version provides them (issue 16).
	WITH pts AS (
		SELECT s.run_digest, s.point, s.primary_ns FROM kbench_series s
		 WHERE s.workload_digest = wd AND s.implementation = fam
		   AND (protos IS NULL OR s.protocol_digest = ANY (protos)) AND (envs IS NULL OR s.environment_digest = ANY (envs))
	)
	SELECT coalesce(jsonb_agg(jsonb_build_object('x', pts.point, 'y', g.value_ns / 1e3, 'kind', 'regression', 'env', g.environment_digest,
	                                             'label', format('+%s%% %s', round(g.change_pct::numeric, 1), kbench_protocol_mode(g.protocol)),
	                                             'title', format('%s %s: %s against a baseline of %s (+%s%%, %s, %s %s)', g.device, kbench_protocol_mode(g.protocol),
	                                                             kbench_svg_duration(g.value_ns, 'ns'), kbench_svg_duration(g.baseline_ns, 'ns'),
	                                                             round(g.change_pct::numeric, 1), g.flagged_by, g.points, CASE WHEN g.points = 1 THEN 'point' ELSE 'points' END))
	                           ORDER BY g.device, g.protocol, pts.point), '[]') INTO marks
	  FROM kbench_regressions(fam, opname, mode, environment, method, in_workload => wd) g
	  JOIN pts ON pts.run_digest = g.run_digest;
	IF kbench_chart_has('function', '@extschema@.kbench_change_points(text, text, text, text, text, double precision, integer, double precision)') THEN
		EXECUTE $q$
			SELECT coalesce(jsonb_agg(jsonb_build_object('x', s.point, 'y', c.after_ns / 1e3, 'kind', 'change point', 'env', s.environment_digest,
			                          'label', format('%s%s%% %s', CASE WHEN c.change_pct >= 0 THEN '+' ELSE '' END, round(c.change_pct::numeric, 1),
			                                          @extschema@.kbench_protocol_mode(c.protocol)),
			                          'title', format('%s %s: a step from %s to %s (%s%s%%)', c.device, c.protocol,
			                                          @extschema@.kbench_svg_duration(c.before_ns, 'ns'), @extschema@.kbench_svg_duration(c.after_ns, 'ns'),
			                                          CASE WHEN c.change_pct >= 0 THEN '+' ELSE '' END, round(c.change_pct::numeric, 1)))
			                 ORDER BY c.device, c.protocol, s.point), '[]')
			  FROM @extschema@.kbench_change_points($1, $2, $3, $4, $5) c
			  JOIN @extschema@.kbench_series s ON s.run_digest = c.run_digest AND s.implementation = $1
			$q$ INTO spec USING fam, opname, mode, environment, wd;
		marks := marks || spec;
	END IF;
	IF kbench_chart_has('relation', '@extschema@.kbench_alert_status') THEN
		EXECUTE $q$
			SELECT coalesce(jsonb_agg(jsonb_build_object('x', s.point, 'y', a.value_ns / 1e3, 'kind', 'alert', 'env', a.environment_digest,
			                          'label', format('alert %s: %s', a.id, a.status),
			                          'title', format('alert %s (%s, %s): %s, %s%s%%', a.id, a.status, a.method,
			                                          @extschema@.kbench_svg_duration(a.value_ns, 'ns'),
			                                          CASE WHEN a.change_pct >= 0 THEN '+' ELSE '' END, round(a.change_pct::numeric, 1)))
			                 ORDER BY a.id), '[]')
			  FROM @extschema@.kbench_alert_status a
			  JOIN @extschema@.kbench_series s ON s.run_digest = a.run_digest AND s.implementation = a.family
			 WHERE a.workload_digest = $2 AND a.family = $1
			   AND ($3 IS NULL OR a.protocol_digest = ANY ($3)) AND ($4 IS NULL OR a.environment_digest = ANY ($4))
			$q$ INTO spec USING fam, wd, protos, envs;
		marks := marks || spec;
	END IF;
	WITH s AS (
		SELECT s.*, concat_ws(' ', e.product, e.form_factor) AS device, kbench_protocol_mode(p.name) AS pass, sp.low_ns, sp.high_ns,
		       CASE WHEN _kernelindex.is_cpu(e) THEN 'CPU' ELSE 'GPU' END AS panel
		  FROM kbench_series s
		  JOIN kbench_runs r ON r.digest = s.run_digest
		  CROSS JOIN LATERAL kbench_run_spread(r) sp
		  LEFT JOIN kbench_environments e ON e.digest = s.environment_digest
		  LEFT JOIN kbench_protocols p ON p.digest = s.protocol_digest
		 WHERE s.workload_digest = wd AND s.implementation = fam
		   AND (protos IS NULL OR s.protocol_digest = ANY (protos)) AND (envs IS NULL OR s.environment_digest = ANY (envs))
	)
	SELECT jsonb_build_object(
	         'title', format('%s · %s', kbench_chart_label(fam), wname),
	         'subtitle', concat_ws(' · ', (SELECT string_agg(DISTINCT device, ', ') FROM s), fam, 'runs in time order', 'regressions: ' || lower(method)),
	         'empty', format('No competing run of %s in %s%s%s.', fam, wname, coalesce(' (' || mode || ')', ''), coalesce(' on ' || environment, '')),
	         'x', jsonb_build_object('label', 'point (version, date)', 'kind', 'index',
	                                 'ticks', (SELECT jsonb_agg(jsonb_build_object('v', point, 'label', concat_ws(' ', '#' || point, version,
	                                                                               to_char(observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD'))) ORDER BY point)
	                                             FROM (SELECT DISTINCT ON (point) point, version, observed_at FROM s ORDER BY point, device, pass) q)),
	         'y', jsonb_build_object('label', 'median time', 'unit', 'µs'),
	         -- a line per pass, under a heading per device when there are more,
	         -- the CPUs' in a panel of their own
	         'series', coalesce((SELECT jsonb_agg(jsonb_build_object('name', coalesce(pass, '?'), 'panel', panel,
	                                                                 'group', CASE WHEN (SELECT count(DISTINCT device) FROM s) > 1 THEN device END,
	                                                                 'points', pts) ORDER BY panel DESC, device, pass)
	                               FROM (SELECT device, pass, panel, jsonb_agg(jsonb_build_object('x', point, 'y', primary_ns / 1e3, 'lo', low_ns / 1e3, 'hi', high_ns / 1e3,
	                                                  'title', format('#%s %s %s: %s (%s–%s); run %s', point, coalesce(version, ''),
	                                                                  to_char(observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), kbench_svg_duration(primary_ns, 'ns'),
	                                                                  kbench_svg_duration(low_ns, 'ns'), kbench_svg_duration(high_ns, 'ns'), left(run_digest, 19) || '…'))
	                                                  ORDER BY point) AS pts
	                                       FROM s GROUP BY device, pass, panel) q), '[]'),
	         'marks', (SELECT coalesce(jsonb_agg((m - 'env') || jsonb_build_object('panel', CASE WHEN _kernelindex.is_cpu(e) THEN 'CPU' ELSE 'GPU' END) ORDER BY n), '[]')
	                     FROM jsonb_array_elements(marks) WITH ORDINALITY q(m, n) LEFT JOIN kbench_environments e ON e.digest = m->>'env'))
	  INTO spec;
	RETURN kbench_chart(spec);
END $$;
COMMENT ON FUNCTION kbench_chart_series(text, text, text, text, text) IS 'SVG: an implementation family''s series in one workload (per pass and device), its regressions marked';

-- Record timeline: a workload's leaders (per pass and device) over time, from
-- kbench_record_history: a step line, each step a new leader.
CREATE OR REPLACE FUNCTION kbench_chart_records(workload text, mode text DEFAULT NULL, environment text DEFAULT NULL)
	RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	wd text;
	wname text;
	protos text[] := _kernelindex.resolve_protocols(mode);
	envs text[] := _kernelindex.resolve_environments(environment);
	spec jsonb;
BEGIN
	IF workload IS NULL THEN
		RAISE EXCEPTION 'a workload is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'Name one by its name or digest, e.g. liger-layer-norm-hidden4096-rows4096-fp32.';
	END IF;
	SELECT w.digest, w.name INTO wd, wname FROM kbench_workloads w WHERE w.name = workload OR w.digest = workload ORDER BY w.digest LIMIT 1;
	IF wd IS NULL THEN
		RAISE EXCEPTION 'unknown workload "%"', workload USING ERRCODE = 'undefined_object',
			DETAIL = 'No workload in the catalog has that name or digest.',
			HINT = 'List them with SELECT name FROM kbench_workloads ORDER BY 1.';
	END IF;
	WITH h AS (
		SELECT h.*, concat_ws(' ', e.product, e.form_factor) AS device, kbench_protocol_mode(p.name) AS pass,
		       coalesce(i.name, h.implementation_digest) AS impl, CASE WHEN _kernelindex.is_cpu(e) THEN 'CPU' ELSE 'GPU' END AS panel
		  FROM kbench_record_history h
		  LEFT JOIN kbench_environments e ON e.digest = h.environment_digest
		  LEFT JOIN kbench_protocols p ON p.digest = h.protocol_digest
		  LEFT JOIN kbench_implementations i ON i.digest = h.implementation_digest
		 WHERE h.workload_digest = wd AND (protos IS NULL OR h.protocol_digest = ANY (protos))
		   AND (envs IS NULL OR h.environment_digest = ANY (envs))
	)
	SELECT jsonb_build_object(
	         'title', format('Records of %s', wname),
	         'empty', format('No record in %s%s%s yet.', wname, coalesce(' (' || mode || ')', ''), coalesce(' on ' || environment, '')),
	         'x', jsonb_build_object('label', 'when the leading run was observed (UTC)', 'kind', 'time'),
	         'y', jsonb_build_object('label', 'leader''s time', 'unit', 'µs'),
	         'subtitle', concat_ws(' · ', (SELECT string_agg(DISTINCT device, ', ') FROM h), 'each step a new leader; hover a point for the run'),
	         'series', coalesce((SELECT jsonb_agg(jsonb_build_object('name', coalesce(pass, '?'), 'panel', panel,
	                                                                 'group', CASE WHEN (SELECT count(DISTINCT device) FROM h) > 1 THEN device END,
	                                                                 'step', true, 'points', pts, 'label_end', last_label) ORDER BY panel DESC, device, pass)
	                               FROM (SELECT device, pass, panel,
	                                            jsonb_agg(jsonb_build_object('x', extract(epoch FROM at)::float8, 'y', primary_ns / 1e3,
	                                                      'title', format('%s %s: %s, %s%s; run %s', to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), cause,
	                                                                      kbench_chart_label(impl), kbench_svg_duration(primary_ns, 'ns'),
	                                                                      CASE WHEN previous_primary_ns IS NOT NULL THEN format(' (was %s)', kbench_svg_duration(previous_primary_ns, 'ns')) ELSE '' END,
	                                                                      left(run_digest, 19) || '…'))
	                                                      ORDER BY id) FILTER (WHERE run_digest IS NOT NULL) AS pts,
	                                            kbench_chart_label((array_agg(impl ORDER BY id DESC) FILTER (WHERE run_digest IS NOT NULL))[1]) AS last_label
	                                       FROM h GROUP BY device, pass, panel) q WHERE pts IS NOT NULL), '[]'),
	         'marks', (SELECT coalesce(jsonb_agg(jsonb_build_object('x', extract(epoch FROM at)::float8, 'kind', 'note', 'label', cause, 'panel', panel,
	                                                                'title', format('%s %s: the leader %s was withdrawn', device, pass, left(previous_run_digest, 19) || '…'))
	                                             ORDER BY id), '[]')
	                     FROM h WHERE cause IN ('retracted', 'superseded')))
	  INTO spec;
	PERFORM _kernelindex.chart_empty('kbench_chart_records', spec, NULL, nullif(concat_ws(' on ', mode, environment), ''));
	RETURN kbench_chart(spec);
END $$;
COMMENT ON FUNCTION kbench_chart_records(text, text, text) IS 'SVG: a workload''s leaders (per pass and device) over time, from kbench_record_history';
