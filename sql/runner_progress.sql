-- Runner: where a job is (phase, elapsed, remaining) and what it will cost
-- before it runs (the queue-time estimate, its NOTICE and max_minutes).
-- The phases of a running job are observed through the worker, by events,
-- in test/suites/compare.sh.  Estimates here come from the cost model alone
-- (workloads no earlier run measured; no flush), so they are the same on
-- every machine.

-- job ids from here on do not depend on the tests before this one
SELECT setval('kbench_jobs_id_seq', 5000) IS NOT NULL AS renumbered;

-- a finished job: done, progress 1, elapsed, nothing remaining; its estimate kept
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 24}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0}') AS job \gset
SELECT status, phase, progress FROM kbench_wait(:job, '5 minutes');
SELECT phase, progress, elapsed IS NOT NULL AS has_elapsed, elapsed = run_time AS elapsed_is_run_time,
       remaining IS NULL AS nothing_remaining, samples >= 10 AS ten_samples_at_least
  FROM kbench_job_status WHERE id = :job;
SELECT estimate_s > 0 AS estimated FROM kbench_jobs WHERE id = :job;
-- what ran, for people (issue 29 item 2): the operation, the shape, the
-- implementation (kbench's own here: built-in), human times and the ratio
-- to 3 significant digits
SELECT operation, mode, shape, implementation, implementation_kind, device,
       median = kbench_format_ns(median_ns) AND median ~ '^[0-9.]+ (ns|µs|ms|s)$' AS human_median,
       p20 = kbench_format_ns(p20_ns) AND p80 = kbench_format_ns(p80_ns) AS human_p20_p80,
       length(trim(leading '0' FROM replace(tolerance_ratio::text, '.', ''))) <= 3 AS ratio_3_digits,
       abs(tolerance_ratio - (SELECT (r.manifest->'spec'->'sourceNative'->'metrics'->>'tolerance_ratio')::numeric
                                FROM kbench_runs r WHERE r.digest = s.run_digest)) <= tolerance_ratio * 0.005 AS ratio_rounded
  FROM kbench_job_status s WHERE id = :job;

-- a queued job (not committed, so no worker sees it): queued, no elapsed
-- time, its estimate as the time remaining; canceled, it stays queued with
-- no progress (not a progress of 1)
BEGIN;
SELECT kbench_run('layer_norm', 'backward', '{"rows": 4095, "hidden": 4096, "dtype": "fp32"}',
                  protocol => '{"flush_bytes": 0}') AS queued \gset
SELECT status, phase, progress, elapsed, round(extract(epoch FROM remaining)::numeric, 1) AS remaining_s
  FROM kbench_job_status WHERE id = :queued;
SELECT kbench_cancel(:queued);
SELECT status, phase, progress, elapsed, remaining FROM kbench_job_status WHERE id = :queued;
ROLLBACK;

-- an estimate over 2 minutes: a NOTICE with it (the seed shape on the CPU,
-- but one row fewer, so that no past run gives the time of a call: 5
-- minutes of repetitions at the cost model's 504 ms a call)
BEGIN;
SELECT kbench_run('layer_norm', 'backward', '{"rows": 4095, "hidden": 4096, "dtype": "fp32"}',
                  protocol => '{"flush_bytes": 0, "rep_ms": 300000}') IS NOT NULL AS queued;
ROLLBACK;
-- max_minutes refuses it up front, with the estimate; a short one passes
SELECT kbench_run('layer_norm', 'backward', '{"rows": 4095, "hidden": 4096, "dtype": "fp32"}',
                  protocol => '{"flush_bytes": 0, "rep_ms": 300000}', max_minutes => 1);
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 40}', protocol => '{"flush_bytes": 0}',
                  max_minutes => 1) IS NOT NULL AS queued;
ROLLBACK;
-- a paired comparison is estimated as its two sides together
SELECT kbench_compare('layer_norm', 'backward', '{"rows": 4095, "hidden": 4096, "dtype": "fp32"}', 'cpu', 'cpu',
                      protocol => '{"flush_bytes": 0, "rep_ms": 20000}', max_minutes => 0.5);
-- bad values
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', max_minutes => 0);
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', max_minutes => -1);
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', max_minutes => 'NaN');
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '{"min_samples": 0}');
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '{"min_samples": 2.5}');
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '{"cuda_graph": true}');
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '{"cuda_graph": 1}');
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', protocol => '{"cuda_graph": false}') IS NOT NULL AS queued_per_call;
ROLLBACK;
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'cpu', 'cuda');
SELECT kbench_compare('layer_norm', 'forward', '{"rows": 8, "hidden": 8}', 'triton', 'cpu');

-- a run with fewer than 10 samples says so: the NOTICE of kbench_wait, the run's description
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 56}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0, "max_samples": 4}') AS few \gset
SELECT status FROM kbench_wait(:few, '5 minutes');
SELECT r.samples, r.manifest->'metadata'->>'description' AS description
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = :few;
-- the protocol says the minimum and the flush scaled to the CPU's cache
SELECT p.manifest->'spec'->'comparability'->>'notes' LIKE '%at least 10 and at most 100000 samples%' AS says_minimum
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_protocols p ON p.digest = r.protocol_digest
 WHERE j.id = :job;

-- the queue-time estimate of a workload measured before takes its call's
-- time from the latest of its cohorts' bests (_kernelindex.past_call_ns):
-- two cohorts of one shape, in cache, then flushed before every call (a
-- call some times slower), the second the one that counts
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 72}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0}') AS warm \gset
SELECT status FROM kbench_wait(:warm, '5 minutes');
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 72}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1}') AS cold \gset
SELECT status FROM kbench_wait(:cold, '5 minutes');
SELECT r2.protocol_digest <> r1.protocol_digest AS two_cohorts, r2.primary_ns <> r1.primary_ns AS told_apart,
       _kernelindex.past_call_ns(r2.workload_digest, r2.implementation_digest, r2.environment_digest) = r2.primary_ns AS the_latest
  FROM kbench_jobs j1 JOIN kbench_runs r1 ON r1.digest = j1.run_digest,
       kbench_jobs j2 JOIN kbench_runs r2 ON r2.digest = j2.run_digest
 WHERE j1.id = :warm AND j2.id = :cold;
