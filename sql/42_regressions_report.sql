-- kbench_regressions: the regressions along each series, by one of the four
-- scoring methods of 42_regressions.sql.  (Its own file: the 0.2.0 upgrade
-- drops the 0.1.0 function, whose result had no operation_key and pass, and
-- creates this one from this file.)

-- Regressions of an implementation family (or of every family of an
-- operation, or of the whole catalog) along each series.  Flagged points at
-- most least(window, 20) points apart are one regression (a window that
-- straddles a step keeps flagging for a while): its first point is reported,
-- with how many points were flagged.  Only runs of at least persistence
-- consecutive flagged points count (default 2 for ttest, whose 99% interval
-- leaves 0.5% of flat points out; 1 otherwise).  operation_key: the
-- operation's short name; pass: the timed pass (forward, backward, full) of
-- protocol (not "operation" and "mode": those name the arguments).
CREATE FUNCTION kbench_regressions(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                   environment text DEFAULT NULL, method text DEFAULT 'zscore',
                                   window_size int DEFAULT NULL, threshold float8 DEFAULT NULL,
                                   min_change_pct float8 DEFAULT 1, persistence int DEFAULT NULL,
                                   in_workload text DEFAULT NULL)
	RETURNS TABLE (family text, workload text, protocol text, device text,
	               run_digest text, observed_at timestamptz, version text,
	               previous_run_digest text, previous_version text,
	               flagged_by text, value_ns float8, baseline_ns float8, change_pct float8,
	               statistic float8, critical float8, p_value float8, compared int, points bigint, detail jsonb,
	               workload_digest text, protocol_digest text, environment_digest text,
	               operation_key text, pass text)
	-- jit off: the four methods' plans are costed as if all ran, which crosses
	-- jit_above_cost and spent ~100 ms compiling a 10,000-point query that runs in ~100 ms
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp SET jit = off STABLE AS $$
#variable_conflict use_column
DECLARE
	m text := lower(method);
	w int;
	lo int;
	persist int;
	wls text[];
	thr float8;
	ops text[];
	impls text[];
	protos text[];
	envs text[];
BEGIN
	IF m IS NULL OR m NOT IN ('percent', 'zscore', 'ttest', 'mwu') THEN
		RAISE EXCEPTION 'unknown regression method "%"', method USING ERRCODE = 'invalid_parameter_value',
			HINT = 'Use percent, zscore, ttest or mwu.';
	END IF;
	persist := coalesce(persistence, CASE m WHEN 'ttest' THEN 2 ELSE 1 END);
	IF persist < 1 THEN
		RAISE EXCEPTION 'persistence must be 1 or more, got %', persist USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'It is how many flagged points a regression needs (default 2 for ttest, 1 otherwise).';
	END IF;
	w := coalesce(window_size, CASE m WHEN 'percent' THEN 10 WHEN 'zscore' THEN 100 WHEN 'ttest' THEN 64 ELSE 1 END);
	thr := coalesce(threshold, CASE m WHEN 'percent' THEN 5 WHEN 'zscore' THEN 5 WHEN 'ttest' THEN 0.99 ELSE 0.001 END);
	lo := CASE m WHEN 'zscore' THEN 2 WHEN 'ttest' THEN 3 ELSE 1 END;
	IF w < lo OR w > 10000 THEN
		RAISE EXCEPTION 'window must be between % and 10000 for method %, got %', lo, m, w
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'The window is how many earlier points of the series the point is compared with.';
	END IF;
	IF m IN ('percent', 'zscore') AND NOT (thr > 0 AND thr < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'threshold must be a positive number for method %, got %', m, thr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = CASE m WHEN 'percent' THEN 'It is the slowdown in percent that is flagged (default 5).'
			                ELSE 'It is the z-score above which a point is flagged (default 5).' END;
	END IF;
	IF m IN ('ttest', 'mwu') AND NOT (thr > 0 AND thr < 1) THEN
		RAISE EXCEPTION 'threshold must lie strictly between 0 and 1 for method %, got %', m, thr USING ERRCODE = 'invalid_parameter_value',
			DETAIL = CASE m WHEN 'ttest' THEN 'It is the prediction interval''s confidence level (default 0.99).'
			                ELSE 'It is the significance level of the one-sided test (default 0.001).' END;
	END IF;
	IF min_change_pct IS NULL OR NOT (min_change_pct >= 0 AND min_change_pct < 'Infinity'::float8) THEN
		RAISE EXCEPTION 'min_change_pct must be a number of percent, 0 or more, got %', coalesce(min_change_pct::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
			DETAIL = 'A flagged point must also be slower than its baseline by this much (default 1).';
	END IF;
	IF operation IS NOT NULL THEN
		ops := kbench__resolve_operation(operation);
	END IF;
	IF implementation IS NOT NULL THEN
		impls := kbench__resolve_implementation(ops, implementation);
		impls := ARRAY(SELECT DISTINCT i.digest FROM kbench_implementations i
		                WHERE i.digest = ANY (impls)
		                   OR i.name IN (SELECT j.name FROM kbench_implementations j WHERE j.digest = ANY (impls)));
	END IF;
	protos := kbench__resolve_protocols(mode);
	envs := kbench__resolve_environments(environment);
	IF in_workload IS NOT NULL THEN
		-- one cohort family: only that workload's series
		SELECT array_agg(w.digest) INTO wls FROM kbench_workloads w WHERE w.name = in_workload OR w.digest = in_workload;
		IF wls IS NULL THEN
			RAISE EXCEPTION 'unknown workload "%"', in_workload USING ERRCODE = 'undefined_object',
				DETAIL = 'No workload in the catalog has that name or digest.';
		END IF;
	END IF;

	RETURN QUERY
	WITH f AS (
		SELECT * FROM kbench__flags_percent(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'percent'
		UNION ALL
		SELECT * FROM kbench__flags_zscore(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'zscore'
		UNION ALL
		SELECT * FROM kbench__flags_ttest(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'ttest'
		UNION ALL
		SELECT * FROM kbench__flags_mwu(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'mwu'
	), g0 AS (
		SELECT f.*, f.point - row_number() OVER (PARTITION BY f.workload_digest, f.protocol_digest, f.environment_digest, f.family
		                                         ORDER BY f.point) AS stretch
		  FROM f
	), g1 AS (          -- points in runs of at least persist consecutive flagged points
		SELECT g0.* FROM (SELECT g0.*, count(*) OVER (PARTITION BY g0.workload_digest, g0.protocol_digest, g0.environment_digest,
		                                                          g0.family, g0.stretch) AS stretch_len FROM g0) g0
		 WHERE g0.stretch_len >= persist
	), g2 AS (
		SELECT g1.*, CASE WHEN g1.point - lag(g1.point) OVER (PARTITION BY g1.workload_digest, g1.protocol_digest,
		                                                      g1.environment_digest, g1.family ORDER BY g1.point) <= least(w, 20)
		                  THEN 0 ELSE 1 END AS starts
		  FROM g1
	), g AS (
		SELECT g2.*, sum(g2.starts) OVER (PARTITION BY g2.workload_digest, g2.protocol_digest, g2.environment_digest, g2.family
		                                  ORDER BY g2.point) AS episode
		  FROM g2
	), s AS (
		SELECT DISTINCT ON (g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode)
		       g.*, count(*) OVER (PARTITION BY g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode) AS n
		  FROM g
		 ORDER BY g.workload_digest, g.protocol_digest, g.environment_digest, g.family, g.episode, g.point
	)
	SELECT s.family, wl.name, p.name, concat_ws(' ', e.product, e.form_factor),
	       s.run_digest, r.observed_at, kbench_run_version(s.run_digest),
	       s.previous_run_digest, kbench_run_version(s.previous_run_digest),
	       m, s.value_ns, s.baseline_ns, round(((s.value_ns - s.baseline_ns) / s.baseline_ns * 100)::numeric, 2)::float8,
	       s.statistic, s.critical, s.p_value, s.compared, s.n, s.detail,
	       s.workload_digest, s.protocol_digest, s.environment_digest,
	       kbench__op_key(o.name), kbench_protocol_mode(p.name)
	  FROM s
	  JOIN kbench_runs r ON r.digest = s.run_digest
	  LEFT JOIN kbench_workloads wl ON wl.digest = s.workload_digest
	  LEFT JOIN kbench_operations o ON o.digest = wl.operation_digest
	  LEFT JOIN kbench_protocols p ON p.digest = s.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = s.environment_digest
	 ORDER BY s.family, 2, 3, 4, r.observed_at, s.run_digest;
END $$;
COMMENT ON FUNCTION kbench_regressions(text, text, text, text, text, int, float8, float8, int, text) IS 'flagged slowdowns along each series (implementation family in one cohort): percent (window 10, 5%), zscore (window 100, z > 5), ttest (last 64, 0.99 prediction interval), mwu (raw samples, alpha 0.001)';
