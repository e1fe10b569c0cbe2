-- Analytics: cohorts, records and their history, speedups, regressions,
-- roofline and sweeps.  Runs after catalog.sql: the catalog already holds
-- the seeds (one retracted, one superseded), the Liger import and a slice of
-- the public catalog.

\set csv `cat data/liger/all_benchmark_data.csv`
SELECT inserted, present FROM kbench_import_liger(:'csv');   -- all there already

-- the records follow every run ingested so far: one best per cohort and
-- implementation, and each cohort's latest history entry is its leader
SELECT count(*) AS bests,
       count(*) = (SELECT count(*) FROM (SELECT DISTINCT workload_digest, protocol_digest, environment_digest,
                                                         implementation_digest FROM kbench_cohort_runs) x) AS complete
  FROM kbench_cohort_bests;
SELECT count(*) AS cohorts, count(*) FILTER (WHERE h.run_digest = r.run_digest) AS history_agrees
  FROM kbench_records r
  CROSS JOIN LATERAL (SELECT run_digest FROM kbench_record_history h
                       WHERE (h.workload_digest, h.protocol_digest, h.environment_digest)
                           = (r.workload_digest, r.protocol_digest, r.environment_digest)
                       ORDER BY id DESC LIMIT 1) h
 WHERE r.leader;
SELECT cause, count(*) FROM kbench_record_history GROUP BY 1 ORDER BY 1;

--------------------------------------------------------------------------
-- Cohorts and records on the Liger history
--------------------------------------------------------------------------

SELECT workload, mode, product, form_factor, runs, implementations
  FROM kbench_cohorts WHERE operation = 'liger-layer-norm' AND mode = 'backward'
 ORDER BY _kernelindex.axes_key(axes);
-- LayerNorm backward on the H100: who leads at each size, by how much
SELECT axes->>'hidden' AS hidden, implementation, primary_ns, low_ns, high_ns, rank, leader, ties_leader, vs_leader
  FROM kbench_records WHERE operation = 'liger-layer-norm' AND mode = 'backward' AND product = 'NVIDIA H100'
 ORDER BY (axes->>'hidden')::int, rank, implementation;
-- cohorts where a runner-up is within noise of the leader
SELECT operation, mode, count(*) AS tied_runners_up
  FROM kbench_records WHERE ties_leader GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2 LIMIT 5;
-- the seed's cohort: the huggingface seed led, was retracted (catalog.sql),
-- and the Liger import brought a new leader
SELECT h.cause, i.name AS implementation, h.primary_ns, h.previous_primary_ns,
       CASE WHEN h.run_digest IS NOT NULL THEN h.at END AS at   -- else the retraction's time
  FROM kbench_record_history_of(kbench_cohort_of('sha256:f7a72ed4975b5f193ea219959408ec96b6b7a492e89de799fbcb9c4bcabab96a')) h
  LEFT JOIN kbench_implementations i ON i.digest = h.implementation_digest
 ORDER BY h.id;

--------------------------------------------------------------------------
-- Speedup against a baseline
--------------------------------------------------------------------------

-- LayerNorm backward, Liger against Transformers on the H100, at every hidden
-- size (hidden 4096's Transformers run is the retracted seed: no pair there)
SELECT axes->>'hidden' AS hidden, baseline_median_ns, candidate_median_ns, round(speedup::numeric, 3) AS speedup
  FROM kbench_speedup('layer_norm', 'huggingface', 'liger', 'backward', 'NVIDIA H100');
-- the provider's title and the full names resolve alike
SELECT count(*) FROM kbench_speedup('liger-layer-norm', 'Transformers', 'liger-bench-layer-norm-liger', 'backward', 'H100');
SELECT protocol, device, dtype, workloads, round(geomean_speedup::numeric, 3) AS geomean,
       round(min_speedup::numeric, 3) AS min, round(max_speedup::numeric, 3) AS max
  FROM kbench_speedup_summary('layer_norm', 'huggingface', 'liger');
-- against PyTorch
SELECT protocol, device, workloads, round(geomean_speedup::numeric, 2) AS geomean
  FROM kbench_speedup_summary('distill_jsd_loss', 'torch', 'liger');
-- the geometric mean
SELECT kbench_geomean(x) FROM unnest(ARRAY[1, 4, 16, NULL]::float8[]) x;
SELECT kbench_geomean(x) FROM unnest(ARRAY[]::float8[]) x;

--------------------------------------------------------------------------
-- Liger versions that got slower on the same GPU and workload
--------------------------------------------------------------------------

-- The CSV measures each (GPU, workload, pass) under one Liger release, some
-- twice: the series below compare reruns.  The percent method (default window
-- 10) against the previous run, flagged above 50%:
SELECT family, count(*) AS flagged, max(change_pct) AS worst_pct
  FROM kbench_regressions(NULL, method => 'percent', threshold => 50)
 GROUP BY 1 ORDER BY 1;
SELECT workload, protocol, device, previous_version, version, value_ns, baseline_ns, change_pct
  FROM kbench_regressions('liger-bench-fused-add-rms-norm-liger-fused-add-rms-norm', method => 'percent', threshold => 50)
 ORDER BY change_pct DESC LIMIT 3;
SELECT workload, previous_version, version, value_ns, baseline_ns, change_pct
  FROM kbench_regressions('torch', 'megatron_swiglu', 'backward', 'H100', 'percent', threshold => 10);
-- the operation's short name and the timed pass beside the protocol
SELECT DISTINCT operation_key, pass, protocol
  FROM kbench_regressions('torch', 'megatron_swiglu', 'backward', 'H100', 'percent', threshold => 10);
-- with the default threshold (5%) the Liger kernel on the same series
SELECT workload, protocol, version, change_pct
  FROM kbench_regressions('liger', 'megatron_swiglu', method => 'percent');

--------------------------------------------------------------------------
-- Hand-made cohorts: records, ties, history on ingest, withdrawal
--------------------------------------------------------------------------

SELECT digest AS proto FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkProtocol",
  "metadata": {"name": "analytics-test-protocol-forward"},
  "spec": {"harness": {"name": "analytics test"}, "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
           "comparability": {"family": "analytics_test", "notes": "Made up for the analytics test."}}}'::jsonb) \gset
SELECT digest AS env FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment",
  "metadata": {"name": "analytics-test-h200"},
  "spec": {"hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"}, "software": {}}}'::jsonb) \gset

-- runs with chosen medians and spreads, naming made-up workload and
-- implementation digests (stored unresolved)
CREATE FUNCTION pg_temp.run(impl text, median bigint, p20 bigint, p80 bigint, day int, wl text DEFAULT 'cohort-x',
                             proto text DEFAULT :'proto', env text DEFAULT :'env') RETURNS jsonb
	LANGUAGE sql AS $$
	SELECT jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
	  'metadata', jsonb_build_object('name', 'analytics-' || wl || '-' || impl || '-' || day),
	  'spec', jsonb_build_object(
	    'implementationDigest', 'sha256:' || encode(sha256(convert_to('impl ' || impl, 'UTF8')), 'hex'),
	    'workloadDigest', 'sha256:' || encode(sha256(convert_to('workload ' || wl, 'UTF8')), 'hex'),
	    'protocolDigest', proto, 'environmentDigest', env, 'status', 'passed',
	    'observedAt', to_char((timestamptz '2026-01-01 00:00:00+00' + day * interval '1 day') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
	    'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', median)),
	    'measurements', jsonb_build_array(
	      jsonb_build_object('metric', 'latency', 'unit', 'ns', 'statistic', 'p20', 'value', p20),
	      jsonb_build_object('metric', 'latency', 'unit', 'ns', 'statistic', 'p80', 'value', p80))))
$$;
SELECT i.kind, i.inserted FROM kbench_ingest(pg_temp.run('a', 100000, 98000, 103000, 1)) i;   -- the first leader
SELECT i.kind, i.inserted FROM kbench_ingest(pg_temp.run('b', 102000, 101000, 104000, 2)) i;   -- overlaps a
SELECT i.kind, i.inserted FROM kbench_ingest(pg_temp.run('c', 110000, 108000, 112000, 3)) i;   -- clearly slower
SELECT i.kind, i.inserted FROM kbench_ingest(pg_temp.run('b', 103000, 101000, 105000, 4)) i;   -- b again, not its best
-- d keeps raw samples, so its 95% interval of the median is its spread
-- (104500..105500, clear of a), not its wide p20..p80 (99000..111000)
-- a run stored as given (digest and raw samples chosen here), through the store
CREATE FUNCTION pg_temp.store(kind text, digest text, manifest jsonb, source text, raw bigint[]) RETURNS boolean
	LANGUAGE sql AS $$ SELECT EXISTS (SELECT FROM _kernelindex.store_runs(ARRAY[digest], ARRAY[manifest], ARRAY[source], ARRAY[raw::text])) $$;
SELECT pg_temp.store('BenchmarkRun', 'sha256:' || encode(sha256('analytics d'::bytea), 'hex'),
       jsonb_set(jsonb_set(pg_temp.run('d', 105000, 99000, 111000, 5), '{spec,timing,latencyNs,confidence95}', '[104500, 105500]'),
                 '{spec,timing,samples}', '5'),
       'analytics test', ARRAY[99000, 104000, 105000, 106000, 111000]::bigint[]) AS stored;
CREATE TEMP VIEW cohort_x AS
SELECT right(r.implementation_digest, 4) AS impl, r.primary_ns, r.low_ns, r.high_ns, r.rank, r.leader, r.ties_leader, r.vs_leader
  FROM kbench_records r WHERE r.workload_digest = 'sha256:' || encode(sha256('workload cohort-x'::bytea), 'hex')
 ORDER BY r.rank, r.primary_ns;
SELECT right(encode(sha256(convert_to('impl ' || x, 'UTF8')), 'hex'), 4) AS impl, x AS name FROM unnest('{a,b,c,d}'::text[]) x;
SELECT * FROM cohort_x;
-- a faster a: a new leader, recorded on ingest; b no longer overlaps
SELECT i.kind, i.inserted FROM kbench_ingest(pg_temp.run('a', 95000, 94000, 96000, 6)) i;
SELECT * FROM cohort_x;
-- the faster run is retracted: a's earlier run leads again
SELECT kbench_retract(digest, 'thermal throttling') = digest AS retracted FROM kbench_runs WHERE name = 'analytics-cohort-x-a-6';
-- a's first run is superseded (by c's, for the test): b leads
SELECT kbench_supersede(a.digest, c.digest, 'rerun') = a.digest AS superseded
  FROM kbench_runs a, kbench_runs c WHERE a.name = 'analytics-cohort-x-a-1' AND c.name = 'analytics-cohort-x-c-3';
SELECT * FROM cohort_x;
SELECT h.cause, right(h.implementation_digest, 4) AS impl, h.primary_ns, h.previous_primary_ns, h.at
  FROM kbench_record_history_of(kbench_cohort_of((SELECT digest FROM kbench_runs WHERE name = 'analytics-cohort-x-c-3'))) h
 ORDER BY h.id;
-- the last run of a cohort withdrawn: the cohort has no leader, and the next run is first again
SELECT i.inserted FROM kbench_ingest(pg_temp.run('e', 50000, 50000, 50000, 7, 'cohort-y')) i;
SELECT kbench_retract(digest, 'wrong inputs') = digest AS retracted FROM kbench_runs WHERE name = 'analytics-cohort-y-e-7';
SELECT i.inserted FROM kbench_ingest(pg_temp.run('f', 60000, 59000, 61000, 8, 'cohort-y')) i;
SELECT h.cause, h.primary_ns, h.previous_primary_ns FROM kbench_record_history_of(kbench_cohort_of(
  (SELECT digest FROM kbench_runs WHERE name = 'analytics-cohort-y-f-8'))) h ORDER BY h.id;
-- a run that did not pass never competes
SELECT i.inserted FROM kbench_ingest(jsonb_set(pg_temp.run('g', 1000, 1000, 1000, 9, 'cohort-y'), '{spec,status}', '"incorrect_numerical"')) i;
SELECT count(*) AS history_rows FROM kbench_record_history_of(kbench_cohort_of(
  (SELECT digest FROM kbench_runs WHERE name = 'analytics-cohort-y-f-8')));

--------------------------------------------------------------------------
-- Regression methods on synthetic series
--------------------------------------------------------------------------

-- 200 points per series, noise 1% (Box-Muller over md5 hashes: the same
-- numbers on every run), one implementation family in two versions.
SELECT i.digest AS impl1 FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ImplementationRevision",
  "metadata": {"name": "synthetic-kernel"},
  "spec": {"projectRevision": {"version": "1.0"}, "operation": {"specDigest": "sha256:5555555555555555555555555555555555555555555555555555555555555555"},
           "callable": {"language": "cuda"}, "support": {"hardwareArchitectures": ["sm_90"], "dtypes": ["fp32"]},
           "licensing": {"declared": "MIT", "concluded": "MIT"}}}'::jsonb) i \gset
SELECT i.digest AS impl2 FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ImplementationRevision",
  "metadata": {"name": "synthetic-kernel"},
  "spec": {"projectRevision": {"version": "2.0"}, "operation": {"specDigest": "sha256:5555555555555555555555555555555555555555555555555555555555555555"},
           "callable": {"language": "cuda"}, "support": {"hardwareArchitectures": ["sm_90"], "dtypes": ["fp32"]},
           "licensing": {"declared": "MIT", "concluded": "MIT"}}}'::jsonb) i \gset
CREATE FUNCTION pg_temp.noise(tag text, i int) RETURNS float8 LANGUAGE sql IMMUTABLE
	RETURN sqrt(-2 * ln((('x' || substr(md5(tag || ':' || i || ':u'), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0))
	       * cos(2 * pi() * (('x' || substr(md5(tag || ':' || i || ':v'), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0);
CREATE TEMP TABLE synth AS
SELECT s.series, i, (1e6 * (1 + 0.01 * pg_temp.noise(s.series, i))
                     * CASE WHEN i > s.step1 THEN s.factor ELSE 1 END
                     * CASE WHEN i > s.step2 THEN s.factor ELSE 1 END)::bigint AS ns
  FROM (VALUES ('flat', 1000, 1000, 1.0), ('step', 100, 1000, 1.10), ('faster', 100, 1000, 0.90),
               ('two-steps', 60, 140, 1.10)) s(series, step1, step2, factor),
       generate_series(1, 200) i;
SELECT series, count(*), min(ns), max(ns) FROM synth GROUP BY 1 ORDER BY 1;
SELECT count(*) AS ingested FROM synth,
  kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
    'metadata', jsonb_build_object('name', 'synthetic-' || series || '-' || i),
    'spec', jsonb_build_object(
      'implementationDigest', CASE WHEN i <= 100 THEN :'impl1' ELSE :'impl2' END,
      'workloadDigest', 'sha256:' || encode(sha256(convert_to('synthetic ' || series, 'UTF8')), 'hex'),
      'protocolDigest', :'proto', 'environmentDigest', :'env', 'status', 'passed',
      'observedAt', to_char((timestamptz '2025-01-01 00:00:00+00' + i * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
      'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', ns)))));
CREATE TEMP VIEW synthetic_names AS
SELECT 'sha256:' || encode(sha256(convert_to('synthetic ' || x, 'UTF8')), 'hex') AS workload_digest, x AS series
  FROM unnest('{flat,step,faster,two-steps}'::text[]) x;
-- the series: one family over both versions
SELECT implementation, version, count(*), min(point), max(point) FROM kbench_series
 WHERE workload_digest = (SELECT workload_digest FROM synthetic_names WHERE series = 'step') GROUP BY 1, 2 ORDER BY 2;
-- each method with its defaults: nothing on the flat and the faster series,
-- the planted 10% steps found at their first point
SELECT n.series, m.method, r.previous_version, r.version, r.value_ns::bigint, round(r.baseline_ns) AS baseline_ns,
       round(r.change_pct::numeric, 1) AS change_pct, round(r.statistic::numeric, 2) AS statistic,
       round(r.critical::numeric, 3) AS critical, r.p_value < 1e-6 AS tiny_p, r.compared, r.points,
       (SELECT s.i FROM synth s WHERE s.series = n.series AND s.ns = r.value_ns) AS at_point
  FROM unnest('{percent,zscore,ttest}'::text[]) m(method)
  CROSS JOIN LATERAL kbench_regressions('synthetic-kernel', method => m.method) r
  JOIN synthetic_names n ON n.workload_digest = r.workload_digest
 ORDER BY n.series, m.method, r.observed_at;
SELECT count(*) AS flat_flags FROM unnest('{percent,zscore,ttest}'::text[]) m(method),
  kbench_regressions('synthetic-kernel', method => m.method) r
 WHERE r.workload_digest IN (SELECT workload_digest FROM synthetic_names WHERE series IN ('flat', 'faster'));
-- what a method reports beside the statistic
SELECT detail FROM kbench_regressions(:'impl1', method => 'ttest')
 WHERE workload_digest = (SELECT workload_digest FROM synthetic_names WHERE series = 'step');
-- without the persistence rule the t-test's 99% interval leaves single noisy points out
SELECT n.series, count(*) AS single_points FROM kbench_regressions('synthetic-kernel', method => 'ttest', persistence => 1) r
  JOIN synthetic_names n USING (workload_digest) WHERE r.points = 1 GROUP BY 1 ORDER BY 1;
-- a tighter z-score threshold and a shorter window still flag nothing flat
SELECT count(*) FROM kbench_regressions('synthetic-kernel', method => 'zscore', window_size => 20, threshold => 4.5)
 WHERE workload_digest = (SELECT workload_digest FROM synthetic_names WHERE series = 'flat');

-- Mann-Whitney U on raw samples: 30 runs of 40 samples, +10% from run 21
-- (stored the way the runner stores them, raw samples beside the manifest)
SELECT count(*) AS stored FROM (
  SELECT pg_temp.store('BenchmarkRun', 'sha256:' || encode(sha256(convert_to('mwu ' || series || i, 'UTF8')), 'hex'),
           jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
             'metadata', jsonb_build_object('name', 'mwu-' || series || '-' || i),
             'spec', jsonb_build_object('implementationDigest', :'impl2',
               'workloadDigest', 'sha256:' || encode(sha256(convert_to('mwu ' || series, 'UTF8')), 'hex'),
               'protocolDigest', :'proto', 'environmentDigest', :'env', 'status', 'passed',
               'observedAt', to_char((timestamptz '2025-06-01 00:00:00+00' + i * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
               'timing', jsonb_build_object('primaryStatistic', 'median', 'samples', 40,
                                            'latencyNs', jsonb_build_object('median', _kernelindex.median(samples)::bigint)))),
           'analytics test', samples)
    FROM (SELECT series, i, array_agg((1e6 * (1 + 0.01 * pg_temp.noise(series || i, k))
                                        * CASE WHEN series = 'step' AND i > 20 THEN 1.1 ELSE 1 END)::bigint ORDER BY k) AS samples
            FROM unnest('{flat,step}'::text[]) series, generate_series(1, 30) i, generate_series(1, 40) k
           GROUP BY 1, 2) x) y;
SELECT right(r.run_digest, 8) AS run, r.change_pct, round(r.statistic::numeric, 2) AS z, r.p_value < 1e-9 AS tiny_p, r.points,
       r.detail->'n_current' AS n_current, r.detail->'n_baseline' AS n_baseline
  FROM kbench_regressions('synthetic-kernel', method => 'mwu') r ORDER BY r.observed_at;
SELECT right(digest, 8) AS run_21 FROM kbench_runs WHERE name = 'mwu-step-21';
-- pooling the 5 previous runs' samples
SELECT count(*), min(r.detail->>'n_baseline') FROM kbench_regressions('synthetic-kernel', method => 'mwu', window_size => 5) r;
-- the test itself
SELECT u, round(z::numeric, 3) AS z, round(p_value::numeric, 4) AS p FROM kbench_mann_whitney('{1,2,3}', '{4,5,6}');
SELECT u, round(z::numeric, 3) AS z, round(p_value::numeric, 4) AS p FROM kbench_mann_whitney('{4,5,6,7}', '{1,2,3}');
SELECT u, z, p_value FROM kbench_mann_whitney('{5,5}', '{5,5}');
-- the distributions behind it
SELECT round(kbench_t_quantile(0.995, df)::numeric, 3) AS t, df FROM unnest('{1,2,3,10,63,5000}'::int[]) df;
SELECT round(kbench_t_sf(2.0, 10)::numeric, 5) AS p_t, round(kbench_normal_sf(1.96)::numeric, 5) AS p_z,
       round(kbench_normal_quantile(0.975)::numeric, 5) AS z;

--------------------------------------------------------------------------
-- Roofline
--------------------------------------------------------------------------

SELECT name, product, form_factor, peak_bandwidth_bytes_per_s / 1e12 AS tb_per_s, peak_flops_bf16 / 1e12 AS bf16_tflops
  FROM kbench_devices ORDER BY name;
SELECT e.product, e.form_factor, (kbench_device_of(e.digest)).name AS device FROM kbench_environments e ORDER BY 1, 2;
-- LayerNorm on the H100: bytes per call, achieved bandwidth, share of the peak
SELECT mode, axes->>'hidden' AS hidden, right(implementation, 11) AS impl, bytes::bigint, primary_ns,
       round((achieved_bytes_per_s / 1e9)::numeric, 1) AS gb_per_s, round(pct_peak_bandwidth::numeric, 1) AS pct_peak,
       bound, round(floor_ns::numeric) AS floor_ns, round(pct_of_roofline::numeric, 1) AS pct_of_roofline
  FROM kbench_roofline WHERE operation = 'liger-layer-norm' AND environment = 'NVIDIA H100 80GB HBM3'
   AND axes->>'hidden' IN ('1024', '16384')
 ORDER BY mode, (axes->>'hidden')::int, impl;
-- a GEMM-bound one: the tensor-core peak of its dtype applies
SELECT axes->>'tokens' AS tokens, right(implementation, 5) AS impl, round((achieved_flops_per_s / 1e12)::numeric, 1) AS tflops,
       round(pct_peak_flops::numeric, 1) AS pct_peak, bound
  FROM kbench_roofline WHERE operation = 'liger-distill-jsd-loss' AND mode = 'forward'
 ORDER BY (axes->>'tokens')::int, impl;
SELECT * FROM kbench_workload_cost((SELECT digest FROM kbench_workloads WHERE name = 'liger-megatron-cross-entropy-batch4-seq2048-vocab131072-bf16'), 'backward');
SELECT environment, device, runs, round(best_pct_peak_bandwidth::numeric, 1) AS best_pct_peak_bandwidth
  FROM kbench_device_observed ORDER BY 1;
-- Measured ceilings (issue 27, item 5).  Nothing probed yet: the measured
-- columns are NULL and say so, never a made-up figure
SELECT count(*) AS runs, count(measured_floor_ns) AS measured_floors, count(x_measured_ceiling) AS measured_multiples,
       min(ceiling_note) AS note
  FROM kbench_roofline;
SELECT environment_digest AS h100 FROM kbench_roofline
 WHERE operation = 'liger-layer-norm' AND environment = 'NVIDIA H100 80GB HBM3' ORDER BY run_digest LIMIT 1 \gset
BEGIN;
-- a probe by hand: 2.95 TB/s copy (2.5 triad: the better is kept), 50 TFLOP/s fp32, 700 bf16; no fp8 (NULL)
SELECT device, bandwidth_bytes_per_s, flops_fp32, flops_bf16, flops_fp8
  FROM kbench_probe_store(jsonb_build_object('device', 'cuda:0', 'environment_digest', :'h100', 'copy_bytes_per_s', 2.95e12,
                                             'triad_bytes_per_s', 2.5e12, 'fma_flops_per_s', 50e12, 'gemm_bf16_flops_per_s', 700e12));
-- once per environment: a second probe keeps the first unless replace
SELECT bandwidth_bytes_per_s FROM kbench_probe_store(jsonb_build_object('environment_digest', :'h100', 'copy_bytes_per_s', 1e12));
SELECT count(*) AS probes FROM kbench_environment_probes;
-- LayerNorm on the probed H100 environment: the measured floor is bytes / 2.95e12 s, by hand
SELECT mode, axes->>'hidden' AS hidden, right(implementation, 11) AS impl, bytes::bigint, primary_ns,
       round(floor_ns::numeric) AS floor_ns, round(measured_floor_ns::numeric) AS measured_floor_ns,
       round((bytes / 2.95e12 * 1e9)::numeric) AS by_hand,
       round(x_datasheet::numeric, 3) AS x_datasheet, round((primary_ns / (bytes / 3.35e12 * 1e9))::numeric, 3) AS x_datasheet_by_hand,
       round(x_measured_ceiling::numeric, 3) AS x_measured, round((primary_ns / (bytes / 2.95e12 * 1e9))::numeric, 3) AS x_measured_by_hand,
       round(pct_measured_bandwidth::numeric, 1) AS pct_measured_bw, ceiling_note
  FROM kbench_roofline WHERE operation = 'liger-layer-norm' AND environment_digest = :'h100' AND axes->>'hidden' = '1024'
 ORDER BY mode, impl, primary_ns LIMIT 4;
-- every probed run: the measured floor is greatest(bytes / 2.95e12, FLOPs / the measured rate of its compute) s
SELECT count(*) AS probed_runs,
       count(*) FILTER (WHERE abs(r.measured_floor_ns - 1e9 * greatest(r.bytes / 2.95e12,
                                  r.flops / CASE WHEN k.compute = 'tensor' AND r.dtype = 'bf16' THEN 700e12
                                                 WHEN k.compute = 'tensor' AND (r.dtype IN ('fp16', 'tf32') OR r.dtype LIKE 'fp8%')
                                                 THEN 'Infinity'::float8 ELSE 50e12 END)) <= 1e-9 * r.measured_floor_ns) AS by_hand,
       count(*) FILTER (WHERE r.ceiling_note IS NULL) AS without_note
  FROM kbench_roofline r JOIN kbench_operation_costs k ON k.operation = r.operation_key AND k.mode = r.mode
 WHERE r.environment_digest = :'h100';
SELECT environment, round(best_pct_peak_bandwidth::numeric, 1) AS best_pct_peak_bandwidth,
       measured_bandwidth_bytes_per_s, round(best_pct_measured_bandwidth::numeric, 1) AS best_pct_measured_bandwidth
  FROM kbench_device_observed ORDER BY 1;
ROLLBACK;
-- the CPU of this server, probed in the session (small arrays): positive figures, stored once
BEGIN;
SELECT device, bandwidth_bytes_per_s > 0 AS bandwidth, flops_fp32 > 0 AS fma, flops_bf16 IS NULL AS no_gemm,
       (probe->>'threads')::int >= 1 AS threads, (probe->>'copy_bytes_per_s_1t')::float8 > 0 AS one_thread
  FROM kbench_probe('cpu', bytes => 1048576);
SELECT p1.probe = p2.probe AS measured_once
  FROM kbench_environment_probes p1, kbench_probe('cpu', bytes => 1048576) p2 WHERE p1.device = 'cpu';
SELECT count(*) AS cpu_probes FROM kbench_environment_probes WHERE device = 'cpu';
ROLLBACK;
SELECT kbench_probe_store('{"environment_digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000", "copy_bytes_per_s": -1}');
SELECT kbench_probe_store('{"device": "cpu"}');
SELECT kbench_probe('gpu');
SELECT operation, count(*) FILTER (WHERE mode = 'forward') AS forward, count(*) FILTER (WHERE mode = 'backward') AS backward,
       count(*) FILTER (WHERE mode = 'full') AS full
  FROM kbench_operation_costs GROUP BY 1 ORDER BY 1;
SELECT kbench_cost_eval('dtype_bytes * (2 * rows * hidden + 2 * hidden) + 8 * rows', '{"rows": 4096, "hidden": 4096}', 4);
SELECT kbench_cost_eval('least(rows, hidden) * 2', '{"rows": 10, "hidden": 4096}', 2);
SELECT kbench_cost_eval('rows * width', '{"rows": 10, "hidden": 4096}', 2);
SELECT kbench_cost_eval('rows; DROP TABLE kbench_runs', '{"rows": 10}', 2);
SELECT kbench_cost_eval('pg_sleep(1)', '{"rows": 10}', 2);
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops) VALUES ('x', 'forward', 'rows::text', '1');
INSERT INTO kbench_operation_costs (operation, mode, bytes, flops) VALUES ('x', 'sideways', 'rows', '1');

--------------------------------------------------------------------------
-- Sweeps
--------------------------------------------------------------------------

SELECT axis_value, right(implementation_name, 11) AS impl, device, fixed_axes, median_ns, p20_ns, p80_ns
  FROM kbench_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100');
SELECT axis_value, device, median_ns FROM kbench_sweep('cross_entropy', 'forward', 'vocab', implementation => 'liger');

--------------------------------------------------------------------------
-- What users can get wrong
--------------------------------------------------------------------------

SELECT * FROM kbench_speedup('no_such_op', 'huggingface', 'liger');
SELECT count(DISTINCT operation_key) > 1 AS across_operations FROM kbench_speedup(NULL, 'huggingface', 'liger');
SELECT * FROM kbench_speedup('layer_norm', 'nobody', 'liger');
SELECT * FROM kbench_speedup('layer_norm', 'huggingface', 'nobody');
SELECT count(*) AS no_pairs FROM kbench_speedup('layer_norm', 'huggingface', 'liger', 'backward', 'NVIDIA B200');
SELECT * FROM kbench_speedup('layer_norm', 'huggingface', 'liger', 'sideways');
SELECT * FROM kbench_speedup('layer_norm', 'huggingface', 'liger', 'backward', 'TPU v5');
SELECT * FROM kbench_sweep('layer_norm', 'backward', 'width');
SELECT * FROM kbench_sweep('layer_norm', NULL, 'hidden');
SELECT * FROM kbench_regressions('nobody');
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'magic');
SELECT * FROM kbench_regressions('synthetic-kernel', method => NULL);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'zscore', window_size => 1);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'ttest', window_size => 2);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'percent', window_size => 100000);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'zscore', threshold => -1);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'percent', threshold => 'NaN');
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'ttest', threshold => 1.5);
SELECT * FROM kbench_regressions('synthetic-kernel', method => 'mwu', threshold => 0);
SELECT * FROM kbench_regressions('synthetic-kernel', min_change_pct => -1);
SELECT * FROM kbench_regressions('synthetic-kernel', persistence => 0);
SELECT * FROM kbench_regressions('synthetic-kernel', in_workload => 'no-such-workload');
SELECT kbench_geomean(x) FROM unnest(ARRAY[1, 0]::float8[]) x;
SELECT kbench_t_quantile(1, 5);
SELECT kbench_t_sf(1, 0);

--------------------------------------------------------------------------
-- Rebuilding the derived tables from the runs gives the same bests
--------------------------------------------------------------------------

CREATE TEMP TABLE bests_before AS SELECT * FROM kbench_cohort_bests;
SELECT bests = (SELECT count(*) FROM bests_before) AS same_count, history > 0 AS has_history FROM kbench_rebuild_records();
SELECT count(*) AS differences FROM (
  (SELECT * FROM bests_before EXCEPT SELECT * FROM kbench_cohort_bests)
  UNION ALL
  (SELECT * FROM kbench_cohort_bests EXCEPT SELECT * FROM bests_before)) d;
