--------------------------------------------------------------------------
-- Regressions along a series
--
-- A series is one implementation family (kbench_implementations.name: its
-- revisions, e.g. versions, share it; a run whose implementation is not in
-- the catalog stands for its digest) in one cohort (workload, protocol,
-- environment), its competing runs ordered by (observed_at, digest).  Liger
-- publishes one implementation revision per provider and puts the release in
-- each run's metadata.labels.liger_version, which is the point's version.
--------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION kbench_run_version(run_digest text) RETURNS text
	LANGUAGE sql STABLE
	RETURN (SELECT coalesce(i.version, r.manifest #>> '{metadata,labels,liger_version}', r.manifest #>> '{metadata,labels,version}')
	          FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	         WHERE r.digest = run_digest);
COMMENT ON FUNCTION kbench_run_version(text) IS 'the version a run measured: its implementation''s projectRevision.version, else its metadata.labels.liger_version or .version';

CREATE OR REPLACE VIEW kbench_series AS
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       coalesce(i.name, r.implementation_digest) AS implementation,
       r.implementation_digest,
       coalesce(i.version, r.manifest #>> '{metadata,labels,liger_version}', r.manifest #>> '{metadata,labels,version}') AS version,
       row_number() OVER (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest)
                          ORDER BY r.observed_at, r.digest) AS point,
       r.digest AS run_digest, r.observed_at, r.primary_ns, r.p20_ns, r.p80_ns, r.raw_samples_ns IS NOT NULL AS has_raw_samples
  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_series IS 'competing runs as points of series: (workload, protocol, environment, implementation name), ordered by observed_at';

-- The points of the series that the filters select (NULL: any).  With
-- implementations named, their runs are read by the implementation index
-- alone (OFFSET 0 keeps the other filters out of that scan): the planner
-- otherwise ANDs it with the bitmaps of the protocol and environment indexes,
-- which hold half the history each (two devices, two passes: 500,000 entries
-- each at 1M runs, 167 ms of a 210 ms query for 2,500 points), so the query
-- grew with the history instead of with the family.  With a workload named
-- as well (one cohort's regressions), the workload index is the narrow one:
-- that branch reads by both, as the planner chooses, since fencing it behind
-- the implementation's whole history made a one-cohort query 6-8x slower at
-- 10M runs (140 -> 897-1,118 ms).
CREATE OR REPLACE FUNCTION _kernelindex.points(impls text[], ops text[], protos text[], envs text[], only_raw boolean, wls text[] DEFAULT NULL)
	RETURNS TABLE (wd text, pd text, ed text, fam text, rd text, oa timestamptz, x float8, raw bigint[])
	LANGUAGE sql STABLE AS $$
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest),
	       r.digest, r.observed_at, r.primary_ns::float8, r.raw_samples_ns
	  FROM (SELECT r0.* FROM kbench_runs r0 WHERE impls IS NOT NULL AND wls IS NULL AND r0.implementation_digest = ANY (impls) OFFSET 0) r
	  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	   AND (NOT only_raw OR r.raw_samples_ns IS NOT NULL)
	   AND (wls IS NULL OR r.workload_digest = ANY (wls))
	UNION ALL
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest),
	       r.digest, r.observed_at, r.primary_ns::float8, r.raw_samples_ns
	  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE (impls IS NULL OR wls IS NOT NULL) AND (impls IS NULL OR r.implementation_digest = ANY (impls))
	   AND r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	   AND (NOT only_raw OR r.raw_samples_ns IS NOT NULL)
	   AND (wls IS NULL OR r.workload_digest = ANY (wls))
$$;

-- percent: the point against the median of the previous w points; flagged
-- when slower by more than thr percent (and by min_change percent).
CREATE OR REPLACE FUNCTION _kernelindex.flags_percent(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF _kernelindex.flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, base, (x - base) / base * 100, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k)
	  FROM (SELECT p.*, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	               _kernelindex.median(array_agg(p.x::bigint) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) AS base,
	               count(*) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING) AS k
	          FROM _kernelindex.points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) q
	 WHERE k >= 1 AND base > 0 AND (x - base) / base * 100 > thr AND (x - base) / base * 100 >= min_change
$$;

-- zscore: the point against the mean of the previous w points (at least
-- least(w, 10)), in units of the noise sigma estimated from their successive
-- differences (von Neumann: sqrt(mean((x[i] - x[i-1])^2) / 2)), which an
-- earlier step inside the window barely inflates; flagged when z > thr.
CREATE OR REPLACE FUNCTION _kernelindex.flags_zscore(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF _kernelindex.flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, m, z, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k, 'mean_ns', round(m::numeric, 1), 'sigma_ns', round(sd::numeric, 1))
	  FROM (SELECT q.*, CASE WHEN sd > 0 THEN (x - m) / sd WHEN x > m THEN 'Infinity'::float8 ELSE 0 END AS z
	          FROM (SELECT d.*, row_number() OVER s AS n, lag(d.rd) OVER s AS prev,
	                       -- numeric: its moving aggregates have an inverse transition, so a
	                       -- sliding window costs O(1) per point instead of O(w)
	                       (avg(d.x::numeric) OVER f)::float8 AS m, count(*) OVER f AS k,
	                       sqrt((avg(d.d2::numeric) OVER (s ROWS BETWEEN w - 1 PRECEDING AND 1 PRECEDING))::float8 / 2) AS sd
	                  FROM (SELECT p.*, (p.x - lag(p.x) OVER (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) ^ 2 AS d2
	                          FROM _kernelindex.points(impls, ops, protos, envs, false, wls) p) d
	                WINDOW s AS (PARTITION BY d.wd, d.pd, d.ed, d.fam ORDER BY d.oa, d.rd),
	                       f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q) q2
	 WHERE k >= least(w, 10) AND z > thr AND (x - m) / m * 100 >= min_change
$$;

-- ttest: the point against the two-sided conf-level Student-t prediction
-- interval for one new observation from the previous w points (at least
-- least(w, 8)): mean +- t(df = k - 1) * sd * sqrt(1 + 1/k); flagged above it.
CREATE OR REPLACE FUNCTION _kernelindex.flags_ttest(impls text[], ops text[], protos text[], envs text[], w int, conf float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF _kernelindex.flag LANGUAGE sql STABLE AS $$
	WITH tq AS MATERIALIZED (
		SELECT df, kbench_t_quantile((1 + conf) / 2, df) AS t FROM generate_series(greatest(least(w, 8) - 1, 1), w - 1) df
	)
	SELECT wd, pd, ed, fam, rd, n, prev, x, m, (x - m) / (sd * sqrt(1 + 1.0 / k)), tq.t,
	       kbench_t_sf((x - m) / (sd * sqrt(1 + 1.0 / k)), (k - 1)::int), k::int,
	       jsonb_build_object('window', k, 'mean_ns', round(m::numeric, 1), 'stddev_ns', round(sd::numeric, 1),
	                          'upper_ns', round((m + tq.t * sd * sqrt(1 + 1.0 / k))::numeric, 1), 'confidence', conf)
	  FROM (SELECT p.*, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	               (avg(p.x::numeric) OVER f)::float8 AS m, (stddev_samp(p.x::numeric) OVER f)::float8 AS sd,
	               count(*) OVER f AS k
	          FROM _kernelindex.points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	  JOIN tq ON tq.df = q.k - 1
	 WHERE k >= least(w, 8) AND sd > 0 AND x > m + tq.t * sd * sqrt(1 + 1.0 / k) AND (x - m) / m * 100 >= min_change
$$;

-- mwu: among the runs with raw samples, a run's samples against the pooled
-- samples of the previous w such runs; flagged when the one-sided
-- Mann-Whitney p-value is below alpha.
CREATE OR REPLACE FUNCTION _kernelindex.flags_mwu(impls text[], ops text[], protos text[], envs text[], w int, alpha float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF _kernelindex.flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, bm, t.z, alpha, t.p_value, k::int,
	       jsonb_build_object('window', k, 'u', t.u, 'n_current', cardinality(raw), 'n_baseline', cardinality(base))
	  FROM (SELECT q1.*, _kernelindex.median(base) AS bm
	          FROM (SELECT q.*, CASE WHEN w = 1 THEN q.prev_raw
	                                 ELSE ARRAY(SELECT e::bigint FROM jsonb_array_elements(q.base_j) a,
	                                                                  jsonb_array_elements_text(a) e) END AS base
	                  FROM (SELECT p.wd, p.pd, p.ed, p.fam, p.rd, p.x, p.raw, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	                               count(*) OVER f AS k, lag(p.raw) OVER s AS prev_raw,
	                               CASE WHEN w > 1 THEN jsonb_agg(p.raw) OVER f END AS base_j
	                          FROM _kernelindex.points(impls, ops, protos, envs, true, wls) p
	                        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	                               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	                 WHERE q.k >= 1) q1) q2
	  CROSS JOIN LATERAL kbench_mann_whitney(raw, base) t
	 WHERE bm > 0 AND t.p_value < alpha AND (x - bm) / bm * 100 >= min_change
$$;

-- Reading the series is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_series TO PUBLIC;
-- What users name, resolved once for the series functions (errors as
-- kbench_regressions raises them): kbench_regressions, kbench_change_points,
-- kbench_alert_rule and the gate read the series they select through it.
CREATE OR REPLACE FUNCTION _kernelindex.series_filter(implementation text, operation text, mode text, environment text, in_workload text,
                                      OUT impls text[], OUT ops text[], OUT protos text[], OUT envs text[], OUT wls text[])
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
BEGIN
	IF operation IS NOT NULL THEN
		ops := _kernelindex.resolve_operation(operation);
	END IF;
	IF implementation IS NOT NULL THEN
		impls := _kernelindex.resolve_implementation(ops, implementation);
		impls := ARRAY(SELECT DISTINCT i.digest FROM kbench_implementations i
		                WHERE i.digest = ANY (impls)
		                   OR i.name IN (SELECT j.name FROM kbench_implementations j WHERE j.digest = ANY (impls)));
		IF impls = '{}' THEN
			impls := _kernelindex.resolve_implementation(ops, implementation);
		END IF;
	END IF;
	protos := _kernelindex.resolve_protocols(mode);
	envs := _kernelindex.resolve_environments(environment);
	IF in_workload IS NOT NULL THEN
		SELECT array_agg(w.digest) INTO wls FROM kbench_workloads w WHERE w.name = in_workload OR w.digest = in_workload;
		IF wls IS NULL THEN
			RAISE EXCEPTION 'unknown workload "%"', in_workload USING ERRCODE = 'undefined_object',
				DETAIL = 'No workload in the catalog has that name or digest.';
		END IF;
	END IF;
END $$;
-- STABLE, read-only: PUBLIC's kbench_regressions (and the analytics) call it
-- under the caller's rights; 0.2.0 revoked it, so the grant is explicit.
GRANT EXECUTE ON FUNCTION _kernelindex.series_filter(text, text, text, text, text) TO PUBLIC;

-- Regressions of an implementation family (or of every family of an
-- operation, or of the whole catalog) along each series.  Flagged points at
-- most least(window, 20) points apart are one regression (a window that
-- straddles a step keeps flagging for a while): its first point is reported,
-- with how many points were flagged.  Only runs of at least persistence
-- consecutive flagged points count (default 2 for ttest, whose 99% interval
-- leaves 0.5% of flat points out; 1 otherwise).  operation_key: the
-- operation's short name; pass: the timed pass (forward, backward, full) of
-- protocol (not "operation" and "mode": those name the arguments).
CREATE OR REPLACE FUNCTION kbench_regressions(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
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
	-- what the arguments name (_kernelindex.series_filter raises the errors)
	SELECT f.impls, f.ops, f.protos, f.envs, f.wls INTO impls, ops, protos, envs, wls
	  FROM _kernelindex.series_filter(implementation, operation, mode, environment, in_workload) f;

	RETURN QUERY
	WITH f AS (
		SELECT * FROM _kernelindex.flags_percent(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'percent'
		UNION ALL
		SELECT * FROM _kernelindex.flags_zscore(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'zscore'
		UNION ALL
		SELECT * FROM _kernelindex.flags_ttest(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'ttest'
		UNION ALL
		SELECT * FROM _kernelindex.flags_mwu(impls, ops, protos, envs, w, thr, min_change_pct, wls) WHERE m = 'mwu'
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
	       _kernelindex.op_key(o.name), kbench_protocol_mode(p.name)
	  FROM s
	  JOIN kbench_runs r ON r.digest = s.run_digest
	  LEFT JOIN kbench_workloads wl ON wl.digest = s.workload_digest
	  LEFT JOIN kbench_operations o ON o.digest = wl.operation_digest
	  LEFT JOIN kbench_protocols p ON p.digest = s.protocol_digest
	  LEFT JOIN kbench_environments e ON e.digest = s.environment_digest
	 ORDER BY s.family, 2, 3, 4, r.observed_at, s.run_digest;
	-- never silently empty because of a name (issue 29): when the names
	-- select no point of any series, say what they resolved to (no
	-- regression among points that exist needs no word)
	IF NOT FOUND AND num_nonnulls(implementation, operation, mode, environment, in_workload) > 0
	   AND NOT EXISTS (SELECT 1 FROM _kernelindex.points(impls, ops, protos, envs, false, wls)) THEN
		PERFORM _kernelindex.say_empty('kbench_regressions', 'no point of any series is in the selection',
			CASE WHEN impls IS NOT NULL
			     THEN jsonb_build_array(jsonb_build_object('role', 'implementation', 'typed', implementation, 'digests', to_jsonb(impls))) ELSE '[]' END,
			nullif(concat_ws(' ', operation, mode, 'on ' || environment, 'in ' || in_workload), ''));
	END IF;
END $$;
COMMENT ON FUNCTION kbench_regressions(text, text, text, text, text, int, float8, float8, int, text) IS 'flagged slowdowns along each series (implementation family in one cohort): percent (window 10, 5%), zscore (window 100, z > 5), ttest (last 64, 0.99 prediction interval), mwu (raw samples, alpha 0.001)';

