-- Runner: kbench_run queues, the CPU worker runs, kbench_wait returns the job.
-- (The cluster preloads kernelindex with kernelindex.database = contrib_regression.)
-- Timings vary from run to run: only what is deterministic is shown.

SELECT device, product FROM kbench_workers;
SELECT operation, implementation, implementations, modes, dtypes FROM kbench_device_operations WHERE implementation IS NOT NULL ORDER BY operation;
-- the operations defined as data too, with no kbench implementation of their own: python ones run them
SELECT operation, implementation, implementations, other_implementations, modes FROM kbench_device_operations
 WHERE operation IN ('rms_norm', 'kl_div') ORDER BY operation;

-- queue, run, wait: the seed workload of layer_norm backward, on the CPU
SELECT kbench_run('layer_norm', 'backward', '{"rows": 4096, "hidden": 4096, "dtype": "fp32"}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0, "max_samples": 3}') AS job \gset
SELECT status, run_status, attempts, error, run_digest IS NOT NULL AS has_run, progress
  FROM kbench_wait(:job, '5 minutes');
-- the run is in the catalog, in the same workload (cohort) as Liger's reported seed run
SELECT r.status, r.samples BETWEEN 1 AND 3 AS samples_ok, cardinality(r.raw_samples_ns) = r.samples AS raw_kept,
       r.median_ns > 0 AS timed, r.unresolved, r.source,
       r.workload_digest = 'sha256:c18a03ab80eee5adfcd97f582de99ab98c459be25807cde44b48ac623ad3af23' AS liger_seed_workload,
       r.manifest->'spec'->'correctness'->>'comparator' AS comparator,
       (r.manifest->'spec'->'correctness'->>'matchedRatio')::float8 AS matched_ratio
  FROM kbench_runs r JOIN kbench_jobs j ON j.run_digest = r.digest WHERE j.id = :job;
SELECT e.vendor IS NOT NULL AS cpu_described, e.architecture IS NOT NULL AS has_architecture, p.timer, w.axes, i.language
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
  JOIN kbench_environments e ON e.digest = r.environment_digest
  JOIN kbench_protocols p ON p.digest = r.protocol_digest
  JOIN kbench_workloads w ON w.digest = r.workload_digest
  JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE j.id = :job;
-- the six manifests the worker stored as the kernels library wrote them
-- (validated there, not again): each holds its digest and validates
SELECT count(*) AS manifests, count(*) FILTER (WHERE kbench_digest(x.manifest) = x.digest) AS digests_hold,
       count(*) FILTER (WHERE NOT EXISTS (SELECT FROM kbench_validate(x.manifest))) AS valid
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest
  JOIN kbench_workloads w ON w.digest = r.workload_digest
 CROSS JOIN LATERAL (SELECT r.digest, r.manifest
            UNION ALL SELECT digest, manifest FROM kbench_protocols WHERE digest = r.protocol_digest
            UNION ALL SELECT digest, manifest FROM kbench_environments WHERE digest = r.environment_digest
            UNION ALL SELECT digest, manifest FROM kbench_workloads WHERE digest = r.workload_digest
            UNION ALL SELECT digest, manifest FROM kbench_implementations WHERE digest = r.implementation_digest
            UNION ALL SELECT digest, manifest FROM kbench_operations WHERE digest = w.operation_digest) x
 WHERE j.id = :job;

-- the job's protocol settings reached its run (src/protocol.c): the run's
-- protocol says them (warm-up, seed and check: at the end)
SELECT p.manifest->'spec'->'comparability'->>'notes' LIKE '%repetition 1 ms%at most 3 samples; a 0-byte buffer%' AS settings_applied
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_protocols p ON p.digest = r.protocol_digest
 WHERE j.id = :job;
-- the one-statement form
CALL kbench_bench('jsd', 'forward', '{"tokens": 32, "vocab": 1000, "dtype": "fp32"}',
                  protocol => '{"warmup_ms": 1, "rep_ms": 2, "flush_bytes": 0}') \gset
\echo :status :run_status
SELECT :samples > 0 AS sampled, :median_ns > 0 AS timed, :'run_digest' IN (SELECT digest FROM kbench_runs) AS stored;

-- bad requests: each refused with a clear error, and no job left behind
SELECT count(*) AS jobs_before FROM kbench_jobs \gset
SELECT kbench_run('softmaxx', 'forward', '{"rows": 8}');
SELECT kbench_run('layer_norm', 'sideways', '{"rows": 64, "hidden": 64}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64, "depth": 2}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": -64, "hidden": 64}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 0, "hidden": 64}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": "wide"}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64, "dtype": "fp8"}');
SELECT kbench_run('layer_norm', 'backward', '[64, 64]');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 1000000, "hidden": 1000000, "dtype": "fp32"}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', implementation => 'triton');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', implementation => 'cuda/v2');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', device => 'cuda:7');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', protocol => '{"warmup": 1}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', protocol => '{"rep_ms": -1}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', protocol => '{"check": "yes"}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', protocol => '{"warmup_ms": "5"}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', protocol => '{"max_samples": [3]}');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', timeout => '-1 s');
SELECT kbench_run('layer_norm', 'backward', '{"rows": 64, "hidden": 64}', timeout => '1 month');
SELECT kbench_run(NULL, 'backward', '{"rows": 64, "hidden": 64}');
SELECT count(*) = :jobs_before AS no_job_left_behind FROM kbench_jobs;

-- cancel: a job cancelled before its transaction commits never runs
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}') AS queued_job \gset
SELECT kbench_cancel(:queued_job);
COMMIT;
SELECT status, error, started_at IS NULL AS never_started FROM kbench_jobs WHERE id = :queued_job;
SELECT kbench_cancel(:queued_job);
SELECT kbench_cancel(-1);
SELECT * FROM kbench_wait(-1);

-- retention: finished jobs older than kernelindex.history_retention go; their runs stay
UPDATE kbench_jobs SET finished_at = finished_at - interval '30 days' WHERE id IN (:job, :queued_job);
SELECT kbench_prune_jobs();
SELECT count(*) AS jobs_left FROM kbench_jobs WHERE id IN (:job, :queued_job);
SELECT count(*) AS run_kept FROM kbench_runs r
 WHERE r.workload_digest = 'sha256:c18a03ab80eee5adfcd97f582de99ab98c459be25807cde44b48ac623ad3af23' AND r.source = 'kbench';
SELECT kbench_prune_jobs('1 hour');

-- a full queue refuses new jobs
ALTER SYSTEM SET kernelindex.queue_limit = 2;
SELECT pg_reload_conf();
-- until this session has it (not a fixed sleep: a loaded machine rereads the file later)
\set ECHO none
\set wait_tries 0
\set setting kernelindex.queue_limit
\set want 2
\i sql/include/wait_setting.sql
\set ECHO all
BEGIN;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}') IS NOT NULL AS queued;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}') IS NOT NULL AS queued;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}');
ROLLBACK;
ALTER SYSTEM RESET kernelindex.queue_limit;
SELECT pg_reload_conf();

-- privileges: queueing needs kbench_user (the one documented grant); users
-- see their own jobs; everyone reads the catalog
CREATE ROLE kbench_alice;
CREATE ROLE kbench_bob;
SET ROLE kbench_alice;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}');
RESET ROLE;
GRANT kbench_user TO kbench_alice, kbench_bob;
SET ROLE kbench_alice;
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}',
                  protocol => '{"warmup_ms": 0, "rep_ms": 1, "flush_bytes": 0}') AS alice_job \gset
SELECT status FROM kbench_wait(:alice_job, '60 s');
SELECT count(*) AS alice_sees, bool_and(owner = 'kbench_alice') AS only_her_own FROM kbench_jobs;
SELECT count(*) AS alice_sees_in_status FROM kbench_job_status;
INSERT INTO kbench_jobs (operation, mode, workload, device, timeout, owner) VALUES ('x', 'y', '{}', 'cpu', '1 s', 'kbench_alice');
RESET ROLE;
SET ROLE kbench_bob;
SELECT count(*) AS bob_sees FROM kbench_jobs;
SELECT kbench_cancel(:alice_job);
SELECT count(*) AS bob_sees_in_status FROM kbench_job_status;
SELECT count(*) > 0 AS bob_reads_runs FROM kbench_runs;
SELECT count(*) > 0 AS bob_reads_records FROM kbench_leaders;
RESET ROLE;
GRANT pg_read_all_data TO kbench_bob;
SET ROLE kbench_bob;
SELECT count(*) > 1 AS bob_sees_all FROM kbench_jobs;
RESET ROLE;
REVOKE pg_read_all_data FROM kbench_bob;
REVOKE kbench_user FROM kbench_alice, kbench_bob;
DROP ROLE kbench_bob;
DROP ROLE kbench_alice;

-- warm-up, seed and check reach the run too: an unchecked job (last, as it
-- adds a job)
SELECT kbench_run('layer_norm', 'forward', '{"rows": 8, "hidden": 8}',
                  protocol => '{"warmup_ms": 1, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 2, "seed": 7, "check": false}') AS unchecked_job \gset
SELECT status, run_status FROM kbench_wait(:unchecked_job, '5 minutes');
SELECT (p.manifest->'spec'->'measurement'->>'warmupDuration')::bigint AS warmup_ns,
       p.manifest->'spec'->'comparability'->>'notes' LIKE '%at most 2 samples; a 0-byte buffer%set 0 seed 7, %' AS seeded
  FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_protocols p ON p.digest = r.protocol_digest
 WHERE j.id = :unchecked_job;
-- every setting's default and bounds, as docs/SQL.md's table states them (docs.sh reads the table
-- against pg_settings on a running server too)
SELECT name, boot_val, min_val, max_val, unit, context FROM pg_settings WHERE name LIKE 'kernelindex.%' ORDER BY name;
