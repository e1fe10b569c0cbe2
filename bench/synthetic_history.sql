-- synthetic_history.sql: a synthetic history of 1,000,000 runs (or 4,000 x
-- :points: psql -v points=2500 makes 10,000,000) for timing the analytics
-- (bench/analytics.sh).
--
-- Shortcut: the runs go straight into kbench_runs with plausible typed
-- columns and a minimal manifest ({"kind": "BenchmarkRun", "metadata":
-- {"name": ...}, "synthetic": true}); real manifests through kbench_ingest
-- would take hours for a million runs and time nothing the analytics read.
-- The records trigger is disabled during the load and kbench_rebuild_records()
-- derives the bests and the history afterwards; the alerts trigger too (one
-- statement of 1,000,000 runs would be checked against the rules at once).
--
-- Shape: 25 operations x 10 workloads x 2 protocols (forward, backward) x 2
-- environments = 1,000 cohorts; 4 implementation families per operation,
-- each in 5 versions (a new version every points/5); 250 points per series
-- by default: 1,000 x 4 x 250 = 1,000,000 runs.  Noise 1% (hash-based,
-- deterministic), a 10% step in one family of every operation (impl-1) at
-- 3/5 of the points (150 of 250).  The runs of bench-op-01-impl-1 on its
-- first workload (1,000 of 1,000,000) also keep 64 raw samples each (for the
-- mwu timing).

\set ON_ERROR_STOP on
\if :{?points}
\else
\set points 250
\endif
SET synchronous_commit = off;

CREATE TEMP TABLE b_ops AS
SELECT o, 'sha256:' || encode(sha256(convert_to('bench op ' || o, 'UTF8')), 'hex') AS digest,
       'bench-op-' || lpad(o::text, 2, '0') AS name
  FROM generate_series(1, 25) o;
INSERT INTO kbench_operations (digest, name, family, manifest, source)
SELECT digest, name, 'bench', jsonb_build_object('kind', 'OperationSpec', 'metadata', jsonb_build_object('name', name), 'synthetic', true), 'bench'
  FROM b_ops;

CREATE TEMP TABLE b_wl AS
SELECT o.o, w, 'sha256:' || encode(sha256(convert_to('bench wl ' || o.o || ' ' || w, 'UTF8')), 'hex') AS digest,
       o.name || '-rows4096-hidden' || (512 * w) || '-fp32' AS name, o.digest AS op_digest,
       jsonb_build_object('rows', 4096, 'hidden', 512 * w) AS axes
  FROM b_ops o, generate_series(1, 10) w;
INSERT INTO kbench_workloads (digest, kind, name, operation_digest, operation_resolved, axes, dtypes, manifest, source)
SELECT digest, 'WorkloadCase', name, op_digest, true, axes, '{fp32}',
       jsonb_build_object('kind', 'WorkloadCase', 'metadata', jsonb_build_object('name', name), 'synthetic', true), 'bench'
  FROM b_wl;

CREATE TEMP TABLE b_impl AS
SELECT o.o, f, v, 'sha256:' || encode(sha256(convert_to('bench impl ' || o.o || ' ' || f || ' ' || v, 'UTF8')), 'hex') AS digest,
       o.name || '-impl-' || f AS name, o.digest AS op_digest
  FROM b_ops o, generate_series(0, 3) f, generate_series(1, 5) v;
INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version, manifest, source)
SELECT digest, name, op_digest, true, 'cuda', v || '.0',
       jsonb_build_object('kind', 'ImplementationRevision', 'metadata', jsonb_build_object('name', name), 'synthetic', true), 'bench'
  FROM b_impl;

CREATE TEMP TABLE b_proto AS
SELECT m, 'sha256:' || encode(sha256(convert_to('bench protocol ' || m, 'UTF8')), 'hex') AS digest, 'bench-protocol-' || m AS name
  FROM unnest('{forward,backward}'::text[]) m;
INSERT INTO kbench_protocols (digest, family, harness, timer, primary_statistic, name, manifest, source)
SELECT digest, 'bench', 'bench', 'cuda_events', 'median', name,
       jsonb_build_object('kind', 'BenchmarkProtocol', 'metadata', jsonb_build_object('name', name), 'synthetic', true), 'bench'
  FROM b_proto;

CREATE TEMP TABLE b_env AS
SELECT e, 'sha256:' || encode(sha256(convert_to('bench env ' || e, 'UTF8')), 'hex') AS digest, e AS product
  FROM unnest('{NVIDIA H100,NVIDIA H200}'::text[]) e;
INSERT INTO kbench_environments (digest, vendor, product, architecture, name, manifest, source)
SELECT digest, 'nvidia', product, 'sm_90', 'bench-' || lower(replace(product, ' ', '-')),
       jsonb_build_object('kind', 'ExecutionEnvironment', 'metadata', jsonb_build_object('name', product), 'synthetic', true), 'bench'
  FROM b_env;

BEGIN;
ALTER TABLE kbench_runs DISABLE TRIGGER records;
ALTER TABLE kbench_runs DISABLE TRIGGER alerts;    -- the history is bulk-loaded, not landing (bench/continuous.sh)
-- 4,000 x :points runs, series by series in time order
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, p20_ns, p80_ns, samples, source,
                         external_id, name, manifest, raw_samples_ns)
SELECT 'sha256:' || md5(k) || md5(k || '/2'),
       i.digest, w.digest, p.digest, e.digest, 'passed',
       timestamptz '2024-01-01 00:00:00+00' + (x.pt * interval '1 day') + (w.w * interval '1 minute'),
       'median', ns, ns, (ns * 0.995)::bigint, (ns * 1.005)::bigint, 64, 'bench', k, k,
       jsonb_build_object('kind', 'BenchmarkRun', 'metadata', jsonb_build_object('name', k), 'synthetic', true),
       CASE WHEN w.o = 1 AND w.w = 1 AND fam = 1 THEN
            ARRAY(SELECT (100000 * 1.1 * CASE WHEN pt >= :points * 3 / 5 THEN 1.1 ELSE 1 END
                          * (1 + 0.01 * ((('x' || substr(md5(k || s), 1, 8))::bit(32)::bigint / 4294967296.0) - 0.5) * 3.4))::bigint
                    FROM generate_series(1, 64) s) END
  FROM b_wl w
  CROSS JOIN b_proto p
  CROSS JOIN b_env e
  CROSS JOIN generate_series(0, 3) fam
  CROSS JOIN LATERAL (SELECT pt, 'bench/' || w.o || '/' || w.w || '/' || p.m || '/' || e.e || '/' || fam || '/' || pt AS k,
                             (100000 * w.w * (1 + fam * 0.1) * (1 + 0.01 * ((('x' || substr(md5(w.digest || p.m || e.e || fam || pt), 1, 8))::bit(32)::bigint / 4294967296.0) - 0.5) * 3.4)
                              * CASE WHEN fam = 1 AND pt >= :points * 3 / 5 THEN 1.1 ELSE 1 END)::bigint AS ns
                        FROM generate_series(1, :points) pt) x
  JOIN b_impl i ON i.o = w.o AND i.f = fam AND i.v = 1 + (x.pt - 1) / (:points / 5);
ALTER TABLE kbench_runs ENABLE TRIGGER records;
ALTER TABLE kbench_runs ENABLE TRIGGER alerts;
SELECT * FROM kbench_rebuild_records();
COMMIT;
VACUUM ANALYZE kbench_runs;
ANALYZE kbench_cohort_bests;
ANALYZE kbench_record_history;
ANALYZE kbench_workloads;
ANALYZE kbench_implementations;
SELECT count(*) AS runs FROM kbench_runs;
