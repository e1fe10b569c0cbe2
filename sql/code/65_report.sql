--------------------------------------------------------------------------
-- The report: one self-contained HTML page
--------------------------------------------------------------------------
-- One HTML page (inline CSS and SVG, no script, no external asset) of the
-- history, or of one operation and/or device, that stays readable on the
-- whole public catalog (issue 29: up to 260 implementations of one operation
-- on one device, 636,000 pairs): what it holds first, then the charts (a sweep per
-- operation, a roofline per device, the series of the largest regressions,
-- the record timelines of the cohorts with the longest history), then the
-- tables, each summarised where it would be long, with the query that gives
-- it in full beside it: the leaders per operation, pass and device (the three
-- that lead most cohorts, and how many more); the speedups (every pair where
-- an operation, pass and device has at most six implementations; where it
-- has more, the fastest of each cohort against the cohort's median
-- implementation); the largest regressions and the open alerts; the caller's
-- recent jobs.
CREATE OR REPLACE FUNCTION kbench_report(operation text DEFAULT NULL, environment text DEFAULT NULL, title text DEFAULT 'kernelindex report',
                                         max_charts int DEFAULT 60)
	RETURNS text LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp
	SET extra_float_digits = 1 AS $$
#variable_conflict use_column
DECLARE
	ops text[];
	envs text[] := _kernelindex.resolve_environments(environment);
	h text;
	sec text;
	rec record;
	n int := 0;
	total bigint;
	regs jsonb;
	-- rows a table shows before it says how many more there are
	max_rows constant int := 200;
	-- implementations of one operation, pass and device up to which the
	-- speedups list every pair (at most 30 rows)
	pair_limit constant int := 6;
	call text;
BEGIN
	IF max_charts IS NULL OR max_charts < 0 OR max_charts > 1000 THEN
		RAISE EXCEPTION 'max_charts must lie between 0 and 1000, got %', coalesce(max_charts::text, 'NULL') USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF operation IS NOT NULL THEN
		ops := _kernelindex.resolve_operation(operation);
	END IF;
	-- the arguments as a call would write them, for "the full table" notes
	call := concat_ws(', ', coalesce(quote_literal(kbench_report.operation), 'NULL'), 
	                  CASE WHEN kbench_report.environment IS NOT NULL THEN 'environment => ' || quote_literal(kbench_report.environment) END);
	h := '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
	  || '<title>' || kbench_svg_escape(title) || '</title><style>'
	  || 'body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:24px auto;max-width:1100px;color:#111;padding:0 16px}'
	  || 'h1{font-size:26px}h2{font-size:20px;margin-top:36px;border-bottom:1px solid #ccc}h3{font-size:15px}'
	  || 'table{border-collapse:collapse;font-size:13px;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}'
	  || 'th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}'
	  || 'figure{margin:16px 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:12px;color:#555}'
	  || '.muted{color:#666}.bad{color:#b03000}.good{color:#006040}</style></head><body>'
	  || '<h1>' || kbench_svg_escape(title) || '</h1>'
	  || '<p><a href="#charts">Charts</a> · <a href="#leaders">Leaders</a> · <a href="#speedups">Speedups</a> · '
	  || '<a href="#regressions">Regressions and alerts</a> · <a href="#jobs">Recent jobs</a></p>';

	-- What the selection holds.
	WITH c AS (
		SELECT cr.*, r.source FROM kbench_cohort_runs cr JOIN kbench_runs r ON r.digest = cr.run_digest
		 WHERE (ops IS NULL OR cr.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
		   AND (envs IS NULL OR cr.environment_digest = ANY (envs))
	)
	SELECT format('<p>%s competing runs (%s imported, %s measured here) of %s operations on %s devices in %s cohorts, observed %s to %s%s.</p>',
	              count(*), count(*) FILTER (WHERE coalesce(source, '') <> 'kbench'), count(*) FILTER (WHERE source = 'kbench'),
	              count(DISTINCT operation), count(DISTINCT environment_digest),
	              count(DISTINCT (workload_digest, protocol_digest, environment_digest)),
	              coalesce(to_char(min(observed_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD'), '–'), coalesce(to_char(max(observed_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD'), '–'),
	              concat(CASE WHEN kbench_report.operation IS NOT NULL THEN '; operation ' || kbench_svg_escape(kbench_report.operation) END,
	                     CASE WHEN kbench_report.environment IS NOT NULL THEN '; device ' || kbench_svg_escape(kbench_report.environment) END))
	  INTO sec FROM c;
	h := h || sec;

	-- The regressions, computed once: the series charts and the table read them.
	SELECT coalesce(jsonb_agg(to_jsonb(g)), '[]') INTO regs
	  FROM kbench_regressions(NULL, kbench_report.operation, NULL, kbench_report.environment, 'percent') g;

	-- Charts.
	h := h || '<h2 id="charts">Charts</h2><p class="muted">Hover a point, line or mark for its numbers.</p>';
	n := 0;
	-- our runs beside the history: per operation and pass measured here, a sweep
	-- over every device along the axis with the most values
	FOR rec IN
		WITH mine AS (
			SELECT DISTINCT cr.operation, cr.mode FROM kbench_cohort_runs cr JOIN kbench_runs r ON r.digest = cr.run_digest
			 WHERE r.source = 'kbench' AND cr.mode IS NOT NULL
			   AND (ops IS NULL OR cr.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
			   AND (envs IS NULL OR cr.environment_digest = ANY (envs))
		), c AS (
			SELECT cr.operation, cr.mode, a.key AS axis, count(DISTINCT a.value) AS nvals
			  FROM kbench_cohort_runs cr JOIN mine USING (operation, mode), jsonb_each(cr.axes) a
			 WHERE jsonb_typeof(a.value) = 'number'
			 GROUP BY 1, 2, 3
		)
		SELECT DISTINCT ON (operation, mode) operation, mode, axis FROM c WHERE nvals > 1 ORDER BY operation, mode, nvals DESC, axis
	LOOP
		EXIT WHEN n >= max_charts;
		h := h || '<figure>' || kbench_chart_sweep(rec.operation, rec.mode, rec.axis, environment)
		       || '<figcaption>' || kbench_svg_escape(format('Runs made here beside the history: kbench_chart_sweep(%L, %L, %L%s)', rec.operation, rec.mode, rec.axis,
		                 coalesce(', ' || quote_literal(environment), ''))) || '</figcaption></figure>';
		n := n + 1;
	END LOOP;
	-- a roofline per device with runs that have costs
	FOR rec IN SELECT DISTINCT r.environment_digest, r.environment FROM kbench_roofline r
	            WHERE (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	              AND (envs IS NULL OR r.environment_digest = ANY (envs)) AND r.device IS NOT NULL
	            ORDER BY r.environment, r.environment_digest LOOP
		EXIT WHEN n >= max_charts;
		h := h || '<figure>' || kbench_chart_roofline(rec.environment_digest, operation)
		       || '<figcaption>' || kbench_svg_escape(format('kbench_chart_roofline(%L%s)', rec.environment, coalesce(', ' || quote_literal(operation), ''))) || '</figcaption></figure>';
		n := n + 1;
	END LOOP;
	-- the series of the four largest regressions
	FOR rec IN SELECT q.family, q.workload, q.workload_digest FROM (
	             SELECT DISTINCT ON (g.family, g.workload_digest) g.family, g.workload, g.workload_digest, g.change_pct
	               FROM jsonb_to_recordset(regs) AS g(family text, workload text, workload_digest text, change_pct float8)
	              ORDER BY g.family, g.workload_digest, g.change_pct DESC) q
	            ORDER BY q.change_pct DESC, q.family, q.workload LIMIT 4 LOOP
		EXIT WHEN n >= max_charts;
		h := h || '<figure>' || kbench_chart_series(rec.family, rec.workload_digest, NULL, environment)
		       || '<figcaption>' || kbench_svg_escape(format('kbench_chart_series(%L, %L%s)', rec.family, rec.workload, coalesce(', environment => ' || quote_literal(environment), ''))) || '</figcaption></figure>';
		n := n + 1;
	END LOOP;
	-- the record timelines of the workloads whose leaders changed most often
	FOR rec IN SELECT w.name, h2.workload_digest, count(*) AS changes
	             FROM kbench_record_history h2 JOIN kbench_workloads w ON w.digest = h2.workload_digest
	            WHERE (ops IS NULL OR w.operation_digest = ANY (ops)) AND (envs IS NULL OR h2.environment_digest = ANY (envs))
	            GROUP BY 1, 2 ORDER BY 3 DESC, 1 LIMIT 3 LOOP
		EXIT WHEN n >= max_charts;
		h := h || '<figure>' || kbench_chart_records(rec.workload_digest, NULL, environment)
		       || '<figcaption>' || kbench_svg_escape(format('kbench_chart_records(%L%s)', rec.name, coalesce(', environment => ' || quote_literal(environment), ''))) || '</figcaption></figure>';
		n := n + 1;
	END LOOP;
	-- a sweep per operation: its pass, device and axis with the most runs
	FOR rec IN
		WITH c AS (
			SELECT cr.operation, cr.mode, cr.environment_digest, concat_ws(' ', cr.product, cr.form_factor) AS dev, a.key AS axis,
			       count(DISTINCT a.value) AS nvals, count(*) AS runs
			  FROM kbench_cohort_runs cr, jsonb_each(cr.axes) a
			 WHERE jsonb_typeof(a.value) = 'number' AND cr.mode IS NOT NULL
			   AND (ops IS NULL OR cr.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
			   AND (envs IS NULL OR cr.environment_digest = ANY (envs))
			 GROUP BY 1, 2, 3, 4, 5
		)
		SELECT DISTINCT ON (operation) operation, mode, environment_digest, dev, axis FROM c WHERE nvals > 1
		 ORDER BY operation, nvals DESC, runs DESC, mode, dev, axis
	LOOP
		EXIT WHEN n >= max_charts;
		h := h || '<figure>' || kbench_chart_sweep(rec.operation, rec.mode, rec.axis, rec.environment_digest)
		       || '<figcaption>' || kbench_svg_escape(format('kbench_chart_sweep(%L, %L, %L, %L)', rec.operation, rec.mode, rec.axis, rec.dev)) || '</figcaption></figure>';
		n := n + 1;
	END LOOP;
	IF n = 0 THEN
		h := h || '<p>No chart: the selection holds no data to draw.</p>';
	END IF;

	-- Leaders per operation, pass and device: the three implementations that
	-- lead most cohorts, and how many others lead some.
	SELECT coalesce(string_agg(format('<tr><td>%s</td><td>%s</td><td>%s</td><td class="n">%s</td><td>%s</td></tr>',
	                                  kbench_svg_escape(op), kbench_svg_escape(pass), kbench_svg_escape(dev), cohorts,
	                                  leaders || CASE WHEN nlead > 3 THEN format(' <span class="muted">and %s more</span>', nlead - 3) ELSE '' END),
	                           '' ORDER BY op, pass, dev), ''),
	       count(*)
	  INTO sec, total
	  FROM (SELECT op, pass, dev, sum(led) AS cohorts, count(*) AS nlead,
	               string_agg(format('%s %s%s', kbench_svg_escape(kbench_chart_label(impl)), led,
	                                 CASE WHEN shared > 0 THEN format(' <span class="muted">(%s shared)</span>', shared) ELSE '' END), ', ' ORDER BY led DESC, impl)
	                 FILTER (WHERE rank <= 3) AS leaders
	          FROM (SELECT q.*, row_number() OVER (PARTITION BY op, pass, dev ORDER BY led DESC, impl) AS rank
	                  FROM (SELECT l.operation AS op, l.mode AS pass, concat_ws(' ', l.product, l.form_factor) AS dev, coalesce(l.implementation, l.implementation_digest) AS impl,
	                               count(*) AS led, count(*) FILTER (WHERE cardinality(l.tied_implementations) > 0) AS shared
	                          FROM kbench_leaders l
	                         WHERE (ops IS NULL OR l.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	                           AND (envs IS NULL OR l.environment_digest = ANY (envs))
	                         GROUP BY 1, 2, 3, 4) q) q1
	         GROUP BY op, pass, dev) q2;
	h := h || '<h2 id="leaders">Leaders per operation and device</h2>'
	       || '<p class="muted">For each operation, pass and device: how many cohorts (workloads) each implementation leads (the three that lead most); "shared": another implementation''s spread overlaps the leader''s. Every cohort''s leader: <code>SELECT * FROM kbench_leaders</code>.</p>'
	       || CASE WHEN sec = '' THEN '<p>No cohort in this selection.</p>'
	               ELSE '<table><tr><th>operation</th><th>pass</th><th>device</th><th>cohorts</th><th>leaders</th></tr>' || sec || '</table>' END;

	-- Speedups.  Where an operation, pass and device has at most pair_limit
	-- implementations: every pair in the cohorts it shares; where it has
	-- more, the fastest of each cohort against the cohort's median.
	WITH b AS (
		SELECT cb.workload_digest, cb.protocol_digest, cb.environment_digest, coalesce(i.name, cb.implementation_digest) AS impl,
		       coalesce(r.median_ns, r.primary_ns)::float8 AS med, o.name AS op, kbench_protocol_mode(p.name) AS pass,
		       concat_ws(' ', e.product, e.form_factor) AS dev
		  FROM kbench_cohort_bests cb
		  JOIN kbench_runs r ON r.digest = cb.run_digest
		  JOIN kbench_workloads w ON w.digest = cb.workload_digest
		  JOIN kbench_operations o ON o.digest = w.operation_digest
		  LEFT JOIN kbench_protocols p ON p.digest = cb.protocol_digest
		  LEFT JOIN kbench_environments e ON e.digest = cb.environment_digest
		  LEFT JOIN kbench_implementations i ON i.digest = cb.implementation_digest
		 WHERE (ops IS NULL OR w.operation_digest = ANY (ops)) AND (envs IS NULL OR cb.environment_digest = ANY (envs))
		   AND coalesce(r.median_ns, r.primary_ns) > 0
	), g AS (
		SELECT op, pass, dev, count(DISTINCT impl) AS nimpl FROM b GROUP BY 1, 2, 3
	), pairs AS (
		SELECT a.op, a.pass, a.dev, kbench_chart_label(a.impl) AS fast, kbench_chart_label(z.impl) AS base, count(*) AS cohorts,
		       kbench_geomean(z.med / a.med) AS gm, min(z.med / a.med) AS lo, max(z.med / a.med) AS hi
		  FROM b a JOIN g ON g.op = a.op AND g.pass IS NOT DISTINCT FROM a.pass AND g.dev = a.dev AND g.nimpl <= pair_limit
		  JOIN b z ON z.workload_digest = a.workload_digest AND z.protocol_digest = a.protocol_digest
		          AND z.environment_digest = a.environment_digest AND z.impl <> a.impl
		 GROUP BY 1, 2, 3, a.impl, z.impl
	), field AS (
		SELECT b.op, b.pass, b.dev, min(b.med) AS best, percentile_cont(0.5) WITHIN GROUP (ORDER BY b.med) AS mid,
		       (array_agg(b.impl ORDER BY b.med, b.impl))[1] AS winner
		  FROM b JOIN g ON g.op = b.op AND g.pass IS NOT DISTINCT FROM b.pass AND g.dev = b.dev AND g.nimpl > pair_limit
		 GROUP BY b.op, b.pass, b.dev, b.workload_digest, b.protocol_digest, b.environment_digest
		HAVING count(*) > 1
	), s AS (
		SELECT op, pass, dev, fast, base, cohorts, gm, lo, hi, false AS summarised FROM pairs WHERE gm > 1 OR (gm = 1 AND fast < base)
		UNION ALL
		SELECT f.op, f.pass, f.dev,
		       'the fastest of each cohort (most often ' || kbench_chart_label(mode() WITHIN GROUP (ORDER BY f.winner)) || ')',
		       format('the median of its %s implementations', max(g.nimpl)), count(*), kbench_geomean(f.mid / f.best), min(f.mid / f.best), max(f.mid / f.best), true
		  FROM field f JOIN g ON g.op = f.op AND g.pass IS NOT DISTINCT FROM f.pass AND g.dev = f.dev
		 GROUP BY f.op, f.pass, f.dev
	), numbered AS (
		-- the many-implementation groups first, then the pairs with the most
		-- cohorts behind them
		SELECT s.*, row_number() OVER (ORDER BY summarised DESC, cohorts DESC, op, pass, dev, gm DESC, fast, base) AS k,
		       count(*) OVER () AS all_rows FROM s
	)
	SELECT coalesce(string_agg(format('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n">%s×</td><td class="n">%s–%s×</td><td class="n">%s</td></tr>',
	                                  kbench_svg_escape(op), kbench_svg_escape(pass), kbench_svg_escape(dev), kbench_svg_escape(fast),
	                                  kbench_svg_escape(base), round(gm::numeric, 2), round(lo::numeric, 2), round(hi::numeric, 2), cohorts),
	                           '' ORDER BY k) FILTER (WHERE k <= max_rows), ''),
	       coalesce(max(all_rows), 0)
	  INTO sec, total
	  FROM numbered;
	h := h || '<h2 id="speedups">Speedups</h2>'
	       || format('<p class="muted">Geometric mean over the cohorts both implementations ran of the baseline''s median over the faster one''s. '
	                 || 'Where an operation, pass and device has more than %s implementations (first), the fastest of each cohort against the cohort''s median implementation; then the pairs with the most cohorts. '
	                 || 'Any pair in full: <code>SELECT * FROM kbench_speedup_summary(operation, baseline, candidate)</code>.</p>', pair_limit)
	       || CASE WHEN sec = '' THEN '<p>No two implementations share a cohort in this selection.</p>'
	               ELSE '<table><tr><th>operation</th><th>pass</th><th>device</th><th>faster</th><th>than (baseline)</th><th>geomean</th><th>range</th><th>cohorts</th></tr>' || sec || '</table>'
	                    || CASE WHEN total > max_rows THEN format('<p class="muted">The first %s of %s rows.</p>', max_rows, total) ELSE '' END END;

	-- Regressions (kbench_regressions, percent, computed once for the table and
	-- the series charts, above) and alerts: the largest first.
	SELECT coalesce(string_agg(format('<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n bad">+%s%%</td><td class="n">%s → %s</td><td>%s</td></tr>',
	                                  kbench_svg_escape(kbench_chart_label(family)), kbench_svg_escape(workload), kbench_svg_escape(kbench_protocol_mode(protocol)),
	                                  kbench_svg_escape(device), round(change_pct::numeric, 1), kbench_format_ns(baseline_ns::bigint), kbench_format_ns(value_ns::bigint),
	                                  kbench_svg_escape(coalesce(version, ''))), '' ORDER BY k) FILTER (WHERE k <= max_rows), ''),
	       count(*)
	  INTO sec, n
	  FROM (SELECT g.*, row_number() OVER (ORDER BY change_pct DESC, family, workload, protocol, device) AS k
	          FROM jsonb_to_recordset(regs) AS g(family text, workload text, protocol text, device text, change_pct float8,
	                                             baseline_ns float8, value_ns float8, version text)) g;
	h := h || '<h2 id="regressions">Regressions and alerts</h2>'
	       || format('<p class="muted">%s regressions flagged by kbench_regressions(method =&gt; ''percent''): a run more than 5%% slower than the median of the previous 10 in its series%s. '
	                 || 'In full: <code>SELECT * FROM kbench_regressions(NULL, %s, method =&gt; ''percent'')</code>.</p>',
	                 n, CASE WHEN n > max_rows THEN format('; the %s largest', max_rows) ELSE '' END, kbench_svg_escape(call))
	       || CASE WHEN sec = '' THEN '<p>None.</p>'
	               ELSE '<table><tr><th>implementation</th><th>workload</th><th>pass</th><th>device</th><th>change</th><th>baseline → run</th><th>version</th></tr>' || sec || '</table>' END
	       ;
	-- Saved alerts (issue 16), when this version keeps them.
	IF kbench_chart_has('relation', '@extschema@.kbench_alert_status') THEN
		EXECUTE $q$
			SELECT coalesce(string_agg(format('<tr><td class="n">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n bad">%s%%</td><td>%s</td></tr>',
			                                  a.id, @extschema@.kbench_svg_escape(a.status), @extschema@.kbench_svg_escape(@extschema@.kbench_chart_label(a.family)),
			                                  @extschema@.kbench_svg_escape(a.workload), @extschema@.kbench_svg_escape(a.mode), @extschema@.kbench_svg_escape(a.device),
			                                  round(a.change_pct::numeric, 1), @extschema@.kbench_svg_escape(a.method)), '' ORDER BY a.id DESC), ''),
			       count(*)
			  FROM (SELECT * FROM @extschema@.kbench_alert_status a
			         WHERE a.status IN ('open', 'confirmed')
			           AND ($1 IS NULL OR a.workload_digest IN (SELECT w.digest FROM @extschema@.kbench_workloads w WHERE w.operation_digest = ANY ($1)))
			           AND ($2 IS NULL OR a.environment_digest = ANY ($2))
			         ORDER BY a.id DESC LIMIT 50) a
			$q$ INTO sec, n USING ops, envs;
		h := h || format('<h3>Open alerts</h3><p class="muted">%s open or confirmed alerts shown (at most 50, latest first; kbench_alert_status).</p>', n)
		       || CASE WHEN sec = '' THEN '' ELSE '<table><tr><th>alert</th><th>status</th><th>implementation</th><th>workload</th><th>pass</th><th>device</th><th>change</th><th>method</th></tr>' || sec || '</table>' END;
	ELSE
		h := h || '<p class="muted">Saved alerts: not in this version.</p>';
	END IF;

	-- Recent jobs (the caller's, as row security lets them see): what ran,
	-- where, and how fast, in units people read.
	SELECT coalesce(string_agg(format('<tr><td class="n">%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n">%s</td><td>%s</td></tr>',
	                                  j.id, kbench_svg_escape(j.operation), kbench_svg_escape(j.mode), kbench_svg_escape(j.workload::text),
	                                  kbench_svg_escape(coalesce(j.implementation, 'built-in')), kbench_svg_escape(j.device),
	                                  CASE WHEN j.status IN ('failed', 'timeout') THEN '<span class="bad">' || j.status || '</span>' ELSE j.status END,
	                                  to_char(j.queued_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),
	                                  coalesce(kbench_format_ns((extract(epoch FROM j.finished_at - j.started_at) * 1e9)::bigint), ''),
	                                  kbench_svg_escape(coalesce(left(j.error, 120), 'median ' || kbench_format_ns(r.median_ns::bigint), ''))), '' ORDER BY j.id DESC), '')
	  INTO sec
	  FROM (SELECT * FROM kbench_jobs j ORDER BY j.id DESC LIMIT 20) j LEFT JOIN kbench_runs r ON r.digest = j.run_digest
	 WHERE (ops IS NULL OR _kernelindex.op_key(j.operation) IN (SELECT _kernelindex.op_key(o.name) FROM kbench_operations o WHERE o.digest = ANY (ops)));
	h := h || '<h2 id="jobs">Recent jobs</h2>'
	       || CASE WHEN sec = '' THEN '<p>No job (that you may see) has run here.</p>'
	               ELSE '<table><tr><th>job</th><th>operation</th><th>pass</th><th>workload</th><th>implementation</th><th>device</th><th>status</th><th>queued (UTC)</th><th>ran</th><th>result</th></tr>' || sec || '</table>' END;

	RETURN h || '<p class="muted">Made by kbench_report() from the database''s own rows; the same rows give the same page.</p></body></html>';
END $$;
COMMENT ON FUNCTION kbench_report(text, text, text, int) IS 'one self-contained HTML page (inline CSS and SVG, no script): a summary, the charts, then leaders, speedups, regressions, recent jobs, each long table summarised with the query that gives it in full';
