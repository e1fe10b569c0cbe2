-- Continuous benchmarking (docs/ANALYTICS.md, "Continuous benchmarking"),
-- one subject a file: change points (here), alert rules and alerts kept as
-- runs land (51_alerts.sql), confirmation reruns (52), the CI gate and its
-- Markdown summary (53), paired A/B comparisons (55), ranking by the
-- difference (56); sweeps queued in one call are 44_sweeps.sql.  The
-- arithmetic is C (src/continuous.c).

--------------------------------------------------------------------------
-- Change points
--------------------------------------------------------------------------

-- Segment a series into steps: PELT under a Gaussian mean-shift cost, the
-- noise sigma from the median absolute successive difference, a penalty per
-- segment in units of sigma^2 (default 3 ln n), segments of at least
-- min_size points, steps under min_change_pct merged away.  Returns the
-- 1-based first point of every segment but the first.
CREATE OR REPLACE FUNCTION kbench_segment(series_values float8[], penalty float8 DEFAULT NULL, min_size int DEFAULT 5,
                               min_change_pct float8 DEFAULT 1)
	RETURNS int[] AS 'MODULE_PATHNAME', 'kbench_segment' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION kbench_segment(float8[], float8, int, float8) IS 'change points of a series (PELT, penalty 3 ln n in noise variances, min segment 5, steps under 1% merged): the first point of each new segment';

-- One new point against the previous points of its series, as an alert
-- rule's method says (src/continuous.c).
CREATE OR REPLACE FUNCTION _kernelindex.judge(method text, series float8[], threshold float8, min_change_pct float8,
                              window_size int, persistence int,
                              OUT flagged boolean, OUT baseline_ns float8, OUT statistic float8, OUT critical float8,
                              OUT compared int, OUT change_at int)
	AS 'MODULE_PATHNAME', 'kbench__judge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
REVOKE ALL ON FUNCTION _kernelindex.judge(text, float8[], float8, float8, int, int) FROM PUBLIC;

-- The mean of v[a:b] (1-based, inclusive).
CREATE OR REPLACE FUNCTION _kernelindex.slice_mean(v float8[], a int, b int) RETURNS float8
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN (SELECT avg(x) FROM unnest(v[a:b]) x);

-- The steps of each series (an implementation family in one cohort) that the
-- filters select: where each new segment starts, the means before and after.
-- operation_key, pass: the operation's short name and the timed pass, as
-- kbench_regressions gives them.
CREATE OR REPLACE FUNCTION kbench_change_points(implementation text, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                     environment text DEFAULT NULL, in_workload text DEFAULT NULL,
                                     penalty float8 DEFAULT NULL, min_size int DEFAULT 5, min_change_pct float8 DEFAULT 1)
	RETURNS TABLE (family text, workload text, protocol text, device text,
	               point int, run_digest text, observed_at timestamptz, version text, previous_version text,
	               before_ns float8, after_ns float8, change_pct float8, direction text,
	               points_before int, points_after int,
	               workload_digest text, protocol_digest text, environment_digest text,
	               operation_key text, pass text)
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp SET jit = off STABLE AS $$
#variable_conflict use_column
DECLARE
	f record;
BEGIN
	IF implementation IS NULL AND operation IS NULL AND in_workload IS NULL THEN
		RAISE EXCEPTION 'an implementation, an operation or a workload is required' USING ERRCODE = 'null_value_not_allowed',
			HINT = 'For example kbench_change_points(''liger'', ''layer_norm'').';
	END IF;
	PERFORM kbench_segment('{}', penalty, min_size, min_change_pct);   -- the arguments' checks
	f := _kernelindex.series_filter(implementation, operation, mode, environment, in_workload);
	IF f.ops IS NOT NULL THEN
		-- the operation as its workloads: an index scan of their runs, not a semi-join over every run
		f.wls := ARRAY(SELECT w.digest FROM kbench_workloads w
		                WHERE w.operation_digest = ANY (f.ops) AND (f.wls IS NULL OR w.digest = ANY (f.wls)));
		f.ops := NULL;
	END IF;
	RETURN QUERY
	WITH s AS (
		SELECT p.wd, p.pd, p.ed, p.fam, array_agg(p.x ORDER BY p.oa, p.rd) AS xs, array_agg(p.rd ORDER BY p.oa, p.rd) AS rds,
		       array_agg(p.oa ORDER BY p.oa, p.rd) AS oas
		  FROM _kernelindex.points(f.impls, f.ops, f.protos, f.envs, false, f.wls) p
		 GROUP BY p.wd, p.pd, p.ed, p.fam
	), c AS (
		SELECT s.*, cp.pt, cp.k, cps
		  FROM s CROSS JOIN LATERAL (SELECT kbench_segment(s.xs, penalty, min_size, min_change_pct) AS cps) g
		  CROSS JOIN LATERAL unnest(g.cps) WITH ORDINALITY AS cp(pt, k)
	), m AS (
		SELECT c.*, coalesce(c.cps[c.k - 1], 1) AS a, coalesce(c.cps[c.k + 1], cardinality(c.xs) + 1) AS b FROM c
	)
	SELECT m.fam, wl.name, pr.name, concat_ws(' ', e.product, e.form_factor),
	       m.pt, m.rds[m.pt], m.oas[m.pt], kbench_run_version(m.rds[m.pt]), kbench_run_version(m.rds[m.pt - 1]),
	       _kernelindex.slice_mean(m.xs, m.a, m.pt - 1), _kernelindex.slice_mean(m.xs, m.pt, m.b - 1),
	       round(((_kernelindex.slice_mean(m.xs, m.pt, m.b - 1) / _kernelindex.slice_mean(m.xs, m.a, m.pt - 1) - 1) * 100)::numeric, 2)::float8,
	       CASE WHEN _kernelindex.slice_mean(m.xs, m.pt, m.b - 1) > _kernelindex.slice_mean(m.xs, m.a, m.pt - 1) THEN 'slower' ELSE 'faster' END,
	       m.pt - m.a, m.b - m.pt, m.wd, m.pd, m.ed, _kernelindex.op_key(o.name), kbench_protocol_mode(pr.name)
	  FROM m
	  LEFT JOIN kbench_workloads wl ON wl.digest = m.wd
	  LEFT JOIN kbench_operations o ON o.digest = wl.operation_digest
	  LEFT JOIN kbench_protocols pr ON pr.digest = m.pd
	  LEFT JOIN kbench_environments e ON e.digest = m.ed
	 ORDER BY m.fam, wl.name, pr.name, 4, m.pt;
END $$;
COMMENT ON FUNCTION kbench_change_points(text, text, text, text, text, float8, int, float8) IS 'steps along each series (implementation family in one cohort): PELT change points with the means before and after';
REVOKE ALL ON FUNCTION _kernelindex.slice_mean(float8[], int, int) FROM PUBLIC;
