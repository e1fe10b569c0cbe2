-- Continuous benchmarking: alert rules and alerts kept as runs land, change
-- points, acknowledging and suppressing, the CI gate, the sweep queue's
-- checks.  Runs after catalog.sql: the Liger history was imported there,
-- with the default rules watching.  (The worker's part: test/suites/continuous.sh.)
-- Everything after the first query is rolled back at the end, so that the
-- tests after this one see the catalog as catalog.sql left it.

SELECT name, family, operation, mode, device, method, window_size, threshold, min_change_pct, confirm, enabled
  FROM kbench_alert_rules ORDER BY id;
\set ON_ERROR_ROLLBACK on
BEGIN;

--------------------------------------------------------------------------
-- Alerts on the Liger history
--------------------------------------------------------------------------

-- Liger's CSV has no series across releases, but 189 series hold two runs of
-- the same release: default-percent flagged each second run slower by more
-- than 5%, as it landed, and nothing else
SELECT count(*) AS repeated_series FROM (
  SELECT 1 FROM kbench_series s
   GROUP BY s.workload_digest, s.protocol_digest, s.environment_digest, s.implementation
  HAVING count(*) = 2 AND count(DISTINCT s.version) = 1) x;
-- (one of those arrives out of time order in the CSV: the later run lands first
-- and is judged again when the earlier one lands)
SELECT ru.name AS rule, a.status, count(*) AS alerts, min(a.change_pct) > 5 AS all_above_5pct,
       bool_and(cardinality(a.runs) = 1) AS one_point_each, bool_and(a.compared = 1) AS against_one_run
  FROM kbench_alerts a JOIN kbench_alert_rules ru ON ru.id = a.rule_id GROUP BY 1, 2 ORDER BY 1, 2;
-- the same runs as kbench_regressions' percent method flags on demand
SELECT count(*) AS in_both,
       (SELECT count(*) FROM kbench_regressions(NULL, method => 'percent')) AS regressions,
       (SELECT count(*) FROM kbench_alerts) AS alerts
  FROM kbench_alerts a JOIN kbench_regressions(NULL, method => 'percent') r ON r.run_digest = a.run_digest;
-- the largest
SELECT status, rule, workload, mode, device, previous_version, version, value_ns, baseline_ns,
       round(change_pct::numeric, 1) AS change_pct, points
  FROM kbench_alert_status ORDER BY change_pct DESC, id LIMIT 5;
-- the operations and devices of the alerts by their short names
SELECT DISTINCT operation_key, device_key FROM kbench_alert_status ORDER BY 1, 2;

--------------------------------------------------------------------------
-- Change points on synthetic series
--------------------------------------------------------------------------

-- 200 points per series, 1% noise (Box-Muller over md5 hashes: the same
-- numbers on every run), 5% steps: flat; one step up at point 101; two steps
-- up at 61 and 141; one step down at 101.
SELECT digest AS proto FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkProtocol",
  "metadata": {"name": "continuous-test-backward"},
  "spec": {"harness": {"name": "continuous-test"}, "measurement": {"timer": "cuda_event", "primaryStatistic": "median"},
           "comparability": {"family": "continuous_test", "notes": "Made up for the continuous test."}}}'::jsonb) \gset
SELECT digest AS env FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment",
  "metadata": {"name": "continuous-test-gpu"},
  "spec": {"hardware": {"vendor": "nvidia", "product": "NVIDIA B200", "architecture": "sm_100"}, "software": {}}}'::jsonb) \gset
SELECT digest AS impl FROM kbench_ingest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ImplementationRevision",
  "metadata": {"name": "continuous-kernel"},
  "spec": {"projectRevision": {"version": "1.0"}, "operation": {"specDigest": "sha256:6666666666666666666666666666666666666666666666666666666666666666"},
           "callable": {"language": "cuda"}, "support": {"hardwareArchitectures": ["sm_100"], "dtypes": ["fp32"]},
           "licensing": {"declared": "MIT", "concluded": "MIT"}}}'::jsonb) \gset
CREATE FUNCTION pg_temp.noise(tag text, i int) RETURNS float8 LANGUAGE sql IMMUTABLE
	RETURN sqrt(-2 * ln((('x' || substr(md5(tag || ':' || i || ':u'), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0))
	       * cos(2 * pi() * (('x' || substr(md5(tag || ':' || i || ':v'), 1, 8))::bit(32)::bigint + 0.5) / 4294967296.0);
CREATE TEMP TABLE synth AS
SELECT s.series, i, (1e6 * (1 + 0.01 * pg_temp.noise('continuous ' || s.series, i))
                     * CASE WHEN i > s.step1 THEN s.factor ELSE 1 END
                     * CASE WHEN i > s.step2 THEN s.factor ELSE 1 END)::bigint AS ns,
       'sha256:' || encode(sha256(convert_to('continuous ' || s.series, 'UTF8')), 'hex') AS workload_digest
  FROM (VALUES ('flat', 1000, 1000, 1.0), ('step', 100, 1000, 1.05), ('two-steps', 60, 140, 1.05),
               ('faster', 100, 1000, 0.95)) s(series, step1, step2, factor),
       generate_series(1, 200) i;
-- a rule of each method for this family (the default rules watch too)
SELECT name, family, method, window_size, threshold, confirm
  FROM kbench_alert_rule('synthetic-zscore', 'zscore', implementation => 'continuous-kernel');
SELECT name, method, window_size, threshold
  FROM kbench_alert_rule('synthetic-ttest', 'ttest', implementation => 'continuous-kernel', environment => 'B200', mode => 'backward');
-- the runs land one by one, oldest first: every alert is opened incrementally
SELECT count(*) AS ingested FROM (SELECT * FROM synth ORDER BY i, series) s,
  kbench_ingest(jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
    'metadata', jsonb_build_object('name', 'continuous-' || series || '-' || i),
    'spec', jsonb_build_object('implementationDigest', :'impl', 'workloadDigest', workload_digest,
      'protocolDigest', :'proto', 'environmentDigest', :'env', 'status', 'passed',
      'observedAt', to_char((timestamptz '2025-01-01 00:00:00+00' + i * interval '1 hour') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
      'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', ns)))));
CREATE TEMP VIEW synth_points AS
SELECT s.series, s.i, r.digest FROM synth s JOIN kbench_runs r ON r.name = 'continuous-' || s.series || '-' || s.i;

-- kbench_change_points: every 5% step at its first point, the means on either
-- side, nothing on the flat series
SELECT s.series, c.point, c.direction, round(c.before_ns) AS before_ns, round(c.after_ns) AS after_ns, c.change_pct,
       c.points_before, c.points_after, c.version, c.device
  FROM kbench_change_points('continuous-kernel') c JOIN synth_points s ON s.digest = c.run_digest
 ORDER BY s.series, c.point;
-- pass and operation_key beside the protocol (the synthetic workload's
-- operation is not in the catalog: it has no short name, NULL)
SELECT DISTINCT operation_key IS NULL AS no_operation_key, pass, protocol FROM kbench_change_points('continuous-kernel');
-- the same through kbench_segment on the bare numbers, with other settings
SELECT series, kbench_segment(array_agg(ns::float8 ORDER BY i)) AS default_settings,
       kbench_segment(array_agg(ns::float8 ORDER BY i), penalty => 1000) AS penalty_1000,
       kbench_segment(array_agg(ns::float8 ORDER BY i), min_change_pct => 6) AS steps_over_6pct
  FROM synth GROUP BY series ORDER BY series;
-- flat series stay flat: 200 more noise series of 200 points, nothing found
SELECT count(*) FILTER (WHERE cardinality(cps) > 0) AS flat_series_with_a_change FROM (
  SELECT kbench_segment(array_agg(1e6 * (1 + 0.01 * pg_temp.noise('flat ' || k, i)) ORDER BY i)) AS cps
    FROM generate_series(1, 200) k, generate_series(1, 200) i GROUP BY k) x;
-- a constant series, a single step without noise, too few points
SELECT kbench_segment(array_fill(5.0::float8, ARRAY[40])) AS constant,
       kbench_segment(array_fill(5.0::float8, ARRAY[20]) || array_fill(6.0::float8, ARRAY[20])) AS clean_step,
       kbench_segment('{1, 2, 3}') AS short, kbench_segment('{}') AS empty;

-- the alerts the runs opened as they landed: the change-point rule at each
-- step's first point (found once 5 points of the new level were in), zscore
-- and ttest at or just after it; nothing on the flat and the faster series
SELECT s.series, ru.name AS rule, a.status, s.i AS at_point, cardinality(a.runs) AS points,
       (SELECT min(p.i) FROM synth_points p WHERE p.digest = ANY (a.runs)) AS first_flagged,
       round(a.baseline_ns) AS baseline_ns, round(a.change_pct::numeric, 1) AS change_pct
  FROM kbench_alerts a JOIN kbench_alert_rules ru ON ru.id = a.rule_id JOIN synth_points s ON s.digest = a.run_digest
 ORDER BY s.series, ru.name, s.i;
SELECT a.* FROM kbench_alerts a JOIN synth_points s ON s.digest = a.run_digest WHERE s.series IN ('flat', 'faster');

-- a rule made after the history: nothing until kbench_alert_scan replays it
SELECT name, method, threshold FROM kbench_alert_rule('synthetic-percent-3', 'percent', implementation => 'continuous-kernel',
                                                     threshold => 3, window_size => 20);
SELECT count(*) FROM kbench_alerts WHERE rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'synthetic-percent-3');
SELECT kbench_alert_scan('synthetic-percent-3') AS opened;
SELECT s.series, s.i AS at_point, cardinality(a.runs) AS points FROM kbench_alerts a JOIN synth_points s ON s.digest = a.run_digest
 WHERE a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'synthetic-percent-3') ORDER BY 1, 2;
SELECT kbench_alert_scan('synthetic-percent-3') AS opened_again;
SELECT kbench_alert_rule_drop('synthetic-percent-3');

--------------------------------------------------------------------------
-- Acknowledge, suppress, and the CI gate
--------------------------------------------------------------------------

-- the gate fails with SQLSTATE KB001 while an alert is open or confirmed
CREATE FUNCTION pg_temp.gate(impl text DEFAULT NULL, op text DEFAULT NULL, mode text DEFAULT NULL, env text DEFAULT NULL)
	RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	RETURN kbench_check(impl, op, mode, env);
EXCEPTION WHEN SQLSTATE 'KB001' THEN
	RETURN 'SQLSTATE ' || SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT pg_temp.gate('continuous-kernel');
SELECT pg_temp.gate('continuous-kernel', mode => 'forward');    -- no series of that mode
SELECT pg_temp.gate(op => 'fused_add_rms_norm', env => 'H100');
SELECT kbench_check('continuous-kernel', mode => 'forward');
-- (alert ids masked: they depend on what the tests before this one imported)
SELECT regexp_replace(kbench_summary_markdown('continuous-kernel'), '^\| [0-9]+ \|', '| N |', 'gn') AS summary;

-- acknowledging needs a reason; suppressing needs a reason and an expiry
SELECT id AS alert FROM kbench_alerts a JOIN synth_points s ON s.digest = a.run_digest
 WHERE s.series = 'step' AND a.rule_id = (SELECT id FROM kbench_alert_rules WHERE name = 'default-changepoint') \gset
SELECT kbench_alert_acknowledge(:alert, NULL);
SELECT kbench_alert_acknowledge(:alert, '  ');
SELECT kbench_alert_suppress(:alert, 'known', NULL);
SELECT kbench_alert_suppress(:alert, 'known', now() - interval '1 day');
-- a suppression lapses within 90 days: never 'infinity' (issue 24)
SELECT kbench_alert_suppress(:alert, 'known', 'infinity');
SELECT kbench_alert_suppress(:alert, 'known', now() + interval '91 days');
SELECT kbench_alert_acknowledge(-1, 'no such alert');
SELECT kbench_alert_acknowledge(NULL, 'no alert');
SELECT status, reason, until IS NULL AS for_good, changed_by = session_user AS by_me
  FROM kbench_alert_acknowledge(:alert, 'the 5% step is the new accumulation order (PR 42)');
-- suppress every other alert of the family for a week: the gate passes
SELECT count(*) AS suppressed FROM kbench_alerts a,
  kbench_alert_suppress(a.id, 'noise in the lab this week', now() + interval '7 days') s
 WHERE a.family = 'continuous-kernel' AND a.status = 'open';
SELECT pg_temp.gate('continuous-kernel');
SELECT status, count(*) FROM kbench_alert_status WHERE family = 'continuous-kernel' GROUP BY 1 ORDER BY 1;
-- a suppression that lapsed counts as open again
UPDATE kbench_alerts SET until = now() - interval '1 second' WHERE id = (
  SELECT max(id) FROM kbench_alerts WHERE family = 'continuous-kernel' AND status = 'suppressed');
SELECT status, recorded_status, count(*) FROM kbench_alert_status WHERE family = 'continuous-kernel' GROUP BY 1, 2 ORDER BY 1, 2;
SELECT pg_temp.gate('continuous-kernel') LIKE 'SQLSTATE KB001: kbench_check: 1 regression alert (0 confirmed)' AS fails_again;
-- only alerts opened since a time
SELECT kbench_check('continuous-kernel', since => now() + interval '1 day');
SELECT kbench_summary_markdown('continuous-kernel', since => now() + interval '1 day') AS summary;
-- the gate's own argument errors are kbench_regressions'
SELECT kbench_check('no-such-kernel');
-- issue 29: a name near one in the catalog is offered, an unrelated one is
-- not, and the error comes from kbench_check itself (one line of context)
SELECT kbench_check('my-kernel');
SELECT kbench_check('continous-kernel');
SELECT kbench_check(environment => 'Z80');
SELECT kbench_check(mode => 'sideways');

--------------------------------------------------------------------------
-- Ranking by the difference
--------------------------------------------------------------------------

-- a cohort of four: b's spread overlaps a's but the 95% interval of b - a
-- (3000 -+ sqrt(2000^2 + 2000^2) = 172..5828) excludes zero: strictly slower
-- now, tied under the overlap rule; c is within noise of a by both rules
CREATE FUNCTION pg_temp.rrun(impl text, median bigint, p20 bigint, p80 bigint) RETURNS jsonb LANGUAGE sql AS $$
	SELECT jsonb_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'BenchmarkRun',
	  'metadata', jsonb_build_object('name', 'ranking-' || impl),
	  'spec', jsonb_build_object(
	    'implementationDigest', 'sha256:' || encode(sha256(convert_to('ranking ' || impl, 'UTF8')), 'hex'),
	    'workloadDigest', 'sha256:' || encode(sha256('ranking workload'::bytea), 'hex'),
	    'protocolDigest', 'sha256:' || encode(sha256('ranking protocol'::bytea), 'hex'),
	    'environmentDigest', 'sha256:' || encode(sha256('ranking environment'::bytea), 'hex'), 'status', 'passed',
	    'observedAt', '2026-01-01T00:00:00Z',
	    'timing', jsonb_build_object('primaryStatistic', 'median', 'latencyNs', jsonb_build_object('median', median)),
	    'measurements', jsonb_build_array(
	      jsonb_build_object('metric', 'latency', 'unit', 'ns', 'statistic', 'p20', 'value', p20),
	      jsonb_build_object('metric', 'latency', 'unit', 'ns', 'statistic', 'p80', 'value', p80))))
$$;
SELECT count(*) FROM (VALUES ('a', 100000, 98000, 102000), ('b', 103000, 101000, 105000), ('c', 101000, 99000, 103000),
                             ('d', 110000, 109000, 111000)) v(impl, m, lo, hi),
  kbench_ingest(pg_temp.rrun(v.impl, v.m, v.lo, v.hi)) i;
SELECT substr(name, 9) AS impl, r.primary_ns, r.low_ns, r.high_ns, r.rank, r.leader, r.ties_leader, r.diff_low_ns, r.diff_high_ns,
       r.overlap_rank, r.overlap_ties_leader, r.vs_leader
  FROM kbench_records r JOIN kbench_runs x ON x.digest = r.run_digest
 WHERE r.workload_digest = 'sha256:' || encode(sha256('ranking workload'::bytea), 'hex') ORDER BY r.primary_ns;
SELECT cardinality(tied_implementations) AS tied, cardinality(overlap_tied_implementations) AS tied_by_overlap
  FROM kbench_leaders WHERE workload_digest = 'sha256:' || encode(sha256('ranking workload'::bytea), 'hex');
-- on the Liger history: fewer ties than by overlap, never more
SELECT count(*) FILTER (WHERE ties_leader) AS ties, count(*) FILTER (WHERE overlap_ties_leader) AS overlap_ties,
       count(*) FILTER (WHERE ties_leader AND NOT overlap_ties_leader) AS new_ties
  FROM kbench_records;

--------------------------------------------------------------------------
-- Paired A/B: the verdict from rounds, by the statistics the worker uses
-- (kernels/stats.c through kbench_paired_ratio; the worker's part is in
-- test/suites/compare.sh)
--------------------------------------------------------------------------

-- 8 rounds each: B 10% slower (1% noise); the same (1% noise); B 10% faster;
-- B 2% slower in 3% noise
SELECT c, round(x.a_median_ns) AS a_median_ns, round(x.b_median_ns) AS b_median_ns,
       round(x.ratio::numeric, 4) AS ratio, round(x.ratio_low::numeric, 4) AS low, round(x.ratio_high::numeric, 4) AS high, x.verdict
  FROM (VALUES (1, 1.10, 0.01), (2, 1.0, 0.01), (3, 0.90, 0.01), (4, 1.02, 0.03)) v(c, f, noise),
       kbench_paired_ratio(ARRAY(SELECT 1e6 * (1 + noise * pg_temp.noise('ab ' || c, 2 * k - 1)) FROM generate_series(1, 8) k ORDER BY k),
                           ARRAY(SELECT 1e6 * f * (1 + noise * pg_temp.noise('ab ' || c, 2 * k)) FROM generate_series(1, 8) k ORDER BY k)) x
 ORDER BY c;
-- the same rounds, the same interval (a fixed generator); a wider same_pct
SELECT (SELECT ratio_low FROM kbench_paired_ratio('{10, 11, 12, 10, 11}', '{11, 12, 12, 11, 12}'))
     = (SELECT ratio_low FROM kbench_paired_ratio('{10, 11, 12, 10, 11}', '{11, 12, 12, 11, 12}')) AS deterministic,
       (kbench_paired_ratio('{10, 11, 12, 10, 11}', '{11, 12, 12, 11, 12}', same_pct => 20)).verdict AS within_20_pct;
-- a comparison row as the worker leaves it, read back
INSERT INTO kbench_comparisons (id, operation, mode, workload, a, b, device, protocol, rounds, same_pct, job_id, owner,
                                a_run, b_run, call_order, calls_per_block, a_round_ns, b_round_ns, a_median_ns, b_median_ns,
                                ratio, ratio_low, ratio_high, verdict, finished_at)
SELECT 901, 'layer_norm', 'forward', '{}', 'a', 'b', 'cpu', '{}', 3, 2, 900001, current_user,
       'sha256:' || repeat('a', 64), 'sha256:' || repeat('b', 64), 'ABABAB', 3, '{10, 11, 12}', '{20, 21, 22}',
       x.a_median_ns, x.b_median_ns, x.ratio, x.ratio_low, x.ratio_high, x.verdict, now()
  FROM kbench_paired_ratio('{10, 11, 12}', '{20, 21, 22}') x;
INSERT INTO kbench_jobs (id, operation, mode, workload, device, timeout, owner, status, run_status, run_digest, comparison)
VALUES (900001, 'layer_norm', 'forward', '{}', 'cpu', '1 minute', current_user, 'passed', 'passed', 'sha256:' || repeat('a', 64),
        '{"id": 901, "b": "b", "rounds": 3, "same_pct": 2}');
SELECT id, status, rounds_done, a_median_ns, b_median_ns, round(ratio::numeric, 4) AS ratio, verdict, call_order, job_id
  FROM kbench_comparison(901);
-- a comparison whose job is still running: no verdict yet
INSERT INTO kbench_comparisons (id, operation, mode, workload, a, b, device, protocol, rounds, same_pct, job_id, owner)
VALUES (902, 'layer_norm', 'forward', '{}', 'a', 'b', 'cpu', '{}', 3, 2, 900002, current_user);
INSERT INTO kbench_jobs (id, operation, mode, workload, device, timeout, owner, status, comparison)
VALUES (900002, 'layer_norm', 'forward', '{}', 'cpu', '1 minute', current_user, 'running', '{"id": 902}');
SELECT status, rounds_done, verdict FROM kbench_comparison(902);
-- across every operation of two providers, in one call, from the history:
-- Liger against Transformers (huggingface), per operation, pass and device
SELECT operation, count(*) AS passes_x_devices, sum(workloads) AS workloads,
       round(kbench_geomean(geomean_speedup)::numeric, 2) AS geomean_speedup,
       sum(candidate_faster) AS liger_faster, sum(baseline_faster) AS huggingface_faster, sum(within_noise) AS within_noise
  FROM kbench_compare_providers('huggingface', 'liger') GROUP BY 1 ORDER BY 1;
SELECT operation, protocol, device, workloads, round(geomean_speedup::numeric, 3) AS geomean, candidate_faster, baseline_faster, within_noise
  FROM kbench_compare_providers('huggingface', 'liger', 'backward', 'H100') WHERE operation = 'liger-layer-norm';
-- short names beside the catalog's: operation_key and the timed pass
SELECT DISTINCT operation, operation_key, protocol, pass
  FROM kbench_compare_providers('huggingface', 'liger', environment => 'H100') WHERE operation_key IN ('layer_norm', 'swiglu')
 ORDER BY 1, 3;
SELECT * FROM kbench_compare_providers('huggingface', 'nobody');
SELECT * FROM kbench_compare_providers(NULL, 'liger');
SELECT * FROM kbench_compare_providers('huggingface', 'liger', 'sideways');

--------------------------------------------------------------------------
-- Bad rules and bad requests
--------------------------------------------------------------------------

SELECT kbench_alert_rule('x', 'magic');
SELECT kbench_alert_rule('x', NULL);
SELECT kbench_alert_rule(NULL);
SELECT kbench_alert_rule('x', 'zscore', window_size => 1);
SELECT kbench_alert_rule('x', 'changepoint', window_size => 5);
SELECT kbench_alert_rule('x', 'percent', window_size => 1001);
SELECT kbench_alert_rule('x', 'percent', threshold => -1);
SELECT kbench_alert_rule('x', 'percent', threshold => 'Infinity');
SELECT kbench_alert_rule('x', 'ttest', threshold => 1);
SELECT kbench_alert_rule('x', min_change_pct => -1);
SELECT kbench_alert_rule('x', 'changepoint', persistence => 2);
SELECT kbench_alert_rule('x', 'ttest', persistence => 0);
SELECT kbench_alert_rule('x', implementation => 'no-such-kernel');
SELECT kbench_alert_rule('x', operation => 'no_such_op');
SELECT kbench_alert_rule('x', environment => 'Z80');
SELECT kbench_alert_rule('x', workload => 'no-such-workload');
SELECT kbench_alert_rule('synthetic-zscore', 'percent');
SELECT kbench_alert_rule_drop('no-such-rule');
SELECT kbench_alert_scan('no-such-rule');
SELECT kbench_change_points(NULL);
SELECT kbench_change_points('continuous-kernel', penalty => 0);
SELECT kbench_change_points('continuous-kernel', min_size => 1);
SELECT kbench_change_points('continuous-kernel', min_change_pct => 'NaN');
SELECT kbench_segment('{1, NULL, 3}');
SELECT kbench_segment('{1, Infinity, 3}');
SELECT kbench_segment('{{1, 2}, {3, 4}}');
SELECT kbench_sweep_run('layer_norm', 'forward', '[]');
SELECT kbench_sweep_run('layer_norm', 'forward', '{}');
SELECT kbench_sweep_run('layer_norm', 'forward', '{"rows": [], "hidden": 8}');
SELECT kbench_sweep_run('layer_norm', 'forward', '{"rows": [8, 16]}', implementations => '{}');
SELECT kbench_sweep_run('layer_norm', 'forward', '{"rows": [8, 16]}', implementations => '{cpu, NULL}');
SELECT kbench_sweep_run('layer_norm', 'forward', jsonb_build_object('rows', (SELECT jsonb_agg(g) FROM generate_series(1, 101) g),
                                                                    'hidden', (SELECT jsonb_agg(g) FROM generate_series(1, 100) g)));
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cpu', rounds => 2);
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cpu', rounds => 1001);
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cpu', rounds => NULL);
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cpu', same_pct => 0);
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cpu', same_pct => NULL);
SELECT kbench_compare('layer_norm', 'forward', NULL, 'cpu', 'cpu');
SELECT * FROM kbench_comparison(-1);
SELECT * FROM kbench_paired_ratio('{1, 2}', '{1}');
SELECT * FROM kbench_paired_ratio('{}', '{}');
SELECT * FROM kbench_paired_ratio('{1, NULL}', '{1, 2}');
SELECT * FROM kbench_paired_ratio('{1, -2}', '{1, 2}');
SELECT * FROM kbench_paired_ratio('{1, Infinity}', '{1, 2}');
SELECT * FROM kbench_paired_ratio('{{1, 2}}', '{{1, 2}}');
SELECT * FROM kbench_paired_ratio(NULL, '{1, 2}');
SELECT * FROM kbench_paired_ratio('{1, 2}', '{1, 2}', same_pct => 100);
SELECT * FROM kbench_paired_ratio('{0, 0}', '{1, 2}');
-- nothing was queued by the refused sweeps and comparisons
SELECT count(*) AS jobs FROM kbench_jobs WHERE id < 900000;

--------------------------------------------------------------------------
-- Privileges
--------------------------------------------------------------------------

SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public,
       has_function_privilege('kbench_user', p.oid, 'EXECUTE') AS kbench_user,
       has_function_privilege('kbench_admin', p.oid, 'EXECUTE') AS kbench_admin
  FROM pg_proc p
 WHERE p.proname IN ('kbench_alert_rule', 'kbench_alert_rule_drop', 'kbench_alert_scan', 'kbench_alert_acknowledge',
                     'kbench_alert_suppress', 'kbench_check', 'kbench_summary_markdown', 'kbench_change_points',
                     'kbench_segment', 'kbench_sweep_run', 'kbench_compare', 'kbench_comparison', 'kbench_paired_ratio', 'alert_check', 'judge', 'queue_confirmation',
                     'alerts_after_insert', 'gate_alerts', 'series_filter')
 ORDER BY 1;
SELECT p.proname FROM pg_proc p
 WHERE p.proname IN ('alerts_after_insert', 'queue_confirmation', 'kbench_alert_rule', 'kbench_check')
   AND NOT EXISTS (SELECT 1 FROM unnest(p.proconfig) c WHERE c LIKE 'search_path=%') AND p.prosecdef;
SELECT has_table_privilege('public', 'kbench_alerts', 'SELECT') AS read_alerts,
       has_table_privilege('public', 'kbench_alerts', 'UPDATE') AS update_alerts,
       has_table_privilege('kbench_user', 'kbench_alert_rules', 'INSERT') AS user_inserts_rules,
       has_table_privilege('kbench_user', 'kbench_comparisons', 'INSERT') AS user_inserts_comparisons;
-- a kbench_user writes no comparison itself (kbench_compare writes as the extension's owner)
CREATE ROLE kbench_carol IN ROLE kbench_user;
SET ROLE kbench_carol;
INSERT INTO kbench_comparisons (operation, mode, workload, device, protocol, rounds, same_pct, job_id, owner)
VALUES ('layer_norm', 'forward', '{}', 'cpu', '{}', 3, 2, 1, 'kbench_carol');
UPDATE kbench_comparisons SET verdict = 'faster';
RESET ROLE;

--------------------------------------------------------------------------
-- One statement, many runs
--------------------------------------------------------------------------

-- the synthetic runs again, all 800 in one INSERT statement in random order
-- (as a set-based store would store them), on workloads of their own: the
-- same alerts as when they landed one by one, at the same points, with the
-- same flagged points folded in
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, name, manifest)
SELECT 'sha256:' || encode(sha256(convert_to('bulk ' || series || i, 'UTF8')), 'hex'), :'impl',
       'sha256:' || encode(sha256(convert_to('continuous bulk ' || series, 'UTF8')), 'hex'), :'proto', :'env', 'passed',
       timestamptz '2025-01-01 00:00:00+00' + i * interval '1 hour', 'median', ns, ns, 'bulk-' || series || '-' || i,
       '{"kind": "BenchmarkRun"}'
  FROM synth ORDER BY random();
CREATE TEMP VIEW alert_points AS
SELECT CASE WHEN r.name LIKE 'bulk-%' THEN 'bulk' ELSE 'one by one' END AS landed, split_part(r.name, '-', 2) AS series,
       ru.name AS rule, substring(r.name from '[0-9]+$')::int AS at_point, cardinality(a.runs) AS points, round(a.change_pct::numeric, 3) AS change_pct
  FROM kbench_alerts a JOIN kbench_alert_rules ru ON ru.id = a.rule_id JOIN kbench_runs r ON r.digest = a.run_digest
 WHERE a.family = 'continuous-kernel';
SELECT landed, count(*) AS alerts FROM alert_points GROUP BY 1 ORDER BY 1;
(SELECT series, rule, at_point, points, change_pct FROM alert_points WHERE landed = 'bulk'
 EXCEPT SELECT series, rule, at_point, points, change_pct FROM alert_points WHERE landed = 'one by one')
UNION ALL
(SELECT series, rule, at_point, points, change_pct FROM alert_points WHERE landed = 'one by one'
 EXCEPT SELECT series, rule, at_point, points, change_pct FROM alert_points WHERE landed = 'bulk');


ROLLBACK;
-- changepoint: steps smaller than min_change_pct are merged away before the last change point is
-- read (src/continuous.c, merge_small).  20 points at 100, 20 at 125, 10 at 128.75 (a 3% step),
-- noise of +-0.4% that averages out over every 5 points: with min_change 5 the 3% step is merged,
-- the last change is the 25% one 30 points back, its step (20 x 125 + 10 x 128.75) / 30 = 126.25
-- over 100: 26.25%, flagged; with min_change 0 the 3% step is the last change, not flagged
WITH s AS (SELECT array_agg(CASE WHEN i <= 20 THEN 100 WHEN i <= 40 THEN 125 ELSE 128.75 END
                            * (1 + 0.002 * ((i * 7919) % 5 - 2)) ORDER BY i)::float8[] AS y
             FROM generate_series(1, 50) i)
SELECT m AS min_change_pct, j.flagged, round(j.baseline_ns::numeric, 6) AS baseline, round(j.statistic::numeric, 6) AS step_pct, j.change_at
  FROM s, unnest('{5,0}'::float8[]) m, LATERAL _kernelindex.judge('changepoint', s.y, 10, m, 100, 1) j;
