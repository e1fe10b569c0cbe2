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

CREATE FUNCTION kbench_run_version(run_digest text) RETURNS text
	LANGUAGE sql STABLE
	RETURN (SELECT coalesce(i.version, r.manifest #>> '{metadata,labels,liger_version}', r.manifest #>> '{metadata,labels,version}')
	          FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	         WHERE r.digest = run_digest);
COMMENT ON FUNCTION kbench_run_version(text) IS 'the version a run measured: its implementation''s projectRevision.version, else its metadata.labels.liger_version or .version';

CREATE VIEW kbench_series AS
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

-- A flagged point of a series, as the scoring functions return it.
CREATE TYPE kbench__flag AS (
	workload_digest text,
	protocol_digest text,
	environment_digest text,
	family text,
	run_digest text,
	point bigint,
	previous_run_digest text,
	value_ns float8,
	baseline_ns float8,
	statistic float8,
	critical float8,
	p_value float8,
	compared int,
	detail jsonb
);

-- The points of the series that the filters select (NULL: any).
CREATE FUNCTION kbench__points(impls text[], ops text[], protos text[], envs text[], only_raw boolean, wls text[] DEFAULT NULL)
	RETURNS TABLE (wd text, pd text, ed text, fam text, rd text, oa timestamptz, x float8, raw bigint[])
	LANGUAGE sql STABLE AS $$
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, coalesce(i.name, r.implementation_digest),
	       r.digest, r.observed_at, r.primary_ns::float8, r.raw_samples_ns
	  FROM kbench_runs r LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
	 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	   AND (impls IS NULL OR r.implementation_digest = ANY (impls))
	   AND (ops IS NULL OR r.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (ops)))
	   AND (protos IS NULL OR r.protocol_digest = ANY (protos))
	   AND (envs IS NULL OR r.environment_digest = ANY (envs))
	   AND (NOT only_raw OR r.raw_samples_ns IS NOT NULL)
	   AND (wls IS NULL OR r.workload_digest = ANY (wls))
$$;

-- percent: the point against the median of the previous w points; flagged
-- when slower by more than thr percent (and by min_change percent).
CREATE FUNCTION kbench__flags_percent(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, base, (x - base) / base * 100, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k)
	  FROM (SELECT p.*, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	               kbench__median(array_agg(p.x::bigint) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) AS base,
	               count(*) OVER (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING) AS k
	          FROM kbench__points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) q
	 WHERE k >= 1 AND base > 0 AND (x - base) / base * 100 > thr AND (x - base) / base * 100 >= min_change
$$;

-- zscore: the point against the mean of the previous w points (at least
-- least(w, 10)), in units of the noise sigma estimated from their successive
-- differences (von Neumann: sqrt(mean((x[i] - x[i-1])^2) / 2)), which an
-- earlier step inside the window barely inflates; flagged when z > thr.
CREATE FUNCTION kbench__flags_zscore(impls text[], ops text[], protos text[], envs text[], w int, thr float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, m, z, thr, NULL::float8, k::int,
	       jsonb_build_object('window', k, 'mean_ns', round(m::numeric, 1), 'sigma_ns', round(sd::numeric, 1))
	  FROM (SELECT q.*, CASE WHEN sd > 0 THEN (x - m) / sd WHEN x > m THEN 'Infinity'::float8 ELSE 0 END AS z
	          FROM (SELECT d.*, row_number() OVER s AS n, lag(d.rd) OVER s AS prev,
	                       -- numeric: its moving aggregates have an inverse transition, so a
	                       -- sliding window costs O(1) per point instead of O(w)
	                       (avg(d.x::numeric) OVER f)::float8 AS m, count(*) OVER f AS k,
	                       sqrt((avg(d.d2::numeric) OVER (s ROWS BETWEEN w - 1 PRECEDING AND 1 PRECEDING))::float8 / 2) AS sd
	                  FROM (SELECT p.*, (p.x - lag(p.x) OVER (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd)) ^ 2 AS d2
	                          FROM kbench__points(impls, ops, protos, envs, false, wls) p) d
	                WINDOW s AS (PARTITION BY d.wd, d.pd, d.ed, d.fam ORDER BY d.oa, d.rd),
	                       f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q) q2
	 WHERE k >= least(w, 10) AND z > thr AND (x - m) / m * 100 >= min_change
$$;

-- ttest: the point against the two-sided conf-level Student-t prediction
-- interval for one new observation from the previous w points (at least
-- least(w, 8)): mean +- t(df = k - 1) * sd * sqrt(1 + 1/k); flagged above it.
CREATE FUNCTION kbench__flags_ttest(impls text[], ops text[], protos text[], envs text[], w int, conf float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
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
	          FROM kbench__points(impls, ops, protos, envs, false, wls) p
	        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	  JOIN tq ON tq.df = q.k - 1
	 WHERE k >= least(w, 8) AND sd > 0 AND x > m + tq.t * sd * sqrt(1 + 1.0 / k) AND (x - m) / m * 100 >= min_change
$$;

-- mwu: among the runs with raw samples, a run's samples against the pooled
-- samples of the previous w such runs; flagged when the one-sided
-- Mann-Whitney p-value is below alpha.
CREATE FUNCTION kbench__flags_mwu(impls text[], ops text[], protos text[], envs text[], w int, alpha float8, min_change float8, wls text[] DEFAULT NULL)
	RETURNS SETOF kbench__flag LANGUAGE sql STABLE AS $$
	SELECT wd, pd, ed, fam, rd, n, prev, x, bm, t.z, alpha, t.p_value, k::int,
	       jsonb_build_object('window', k, 'u', t.u, 'n_current', cardinality(raw), 'n_baseline', cardinality(base))
	  FROM (SELECT q1.*, kbench__median(base) AS bm
	          FROM (SELECT q.*, CASE WHEN w = 1 THEN q.prev_raw
	                                 ELSE ARRAY(SELECT e::bigint FROM jsonb_array_elements(q.base_j) a,
	                                                                  jsonb_array_elements_text(a) e) END AS base
	                  FROM (SELECT p.wd, p.pd, p.ed, p.fam, p.rd, p.x, p.raw, row_number() OVER s AS n, lag(p.rd) OVER s AS prev,
	                               count(*) OVER f AS k, lag(p.raw) OVER s AS prev_raw,
	                               CASE WHEN w > 1 THEN jsonb_agg(p.raw) OVER f END AS base_j
	                          FROM kbench__points(impls, ops, protos, envs, true, wls) p
	                        WINDOW s AS (PARTITION BY p.wd, p.pd, p.ed, p.fam ORDER BY p.oa, p.rd),
	                               f AS (s ROWS BETWEEN w PRECEDING AND 1 PRECEDING)) q
	                 WHERE q.k >= 1) q1) q2
	  CROSS JOIN LATERAL kbench_mann_whitney(raw, base) t
	 WHERE bm > 0 AND t.p_value < alpha AND (x - bm) / bm * 100 >= min_change
$$;

-- Reading the series is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_series TO PUBLIC;
