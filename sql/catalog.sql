-- Catalog: ingest, idempotency, unresolved references, append-only rules,
-- the Liger and catalog imports checked digest by digest, export round trip.

\set seed000 `cat test/data/seeds/000_04bb0f8f111ec531.json`
\set seed002 `cat test/data/seeds/002_72c93d8bf667ae74.json`
\set seed004 `cat test/data/seeds/004_5d22a04506fce857.json`

-- the seeds: stored with their workload and implementation unresolved
SELECT * FROM kbench_ingest(:'seed000'::json) ORDER BY kind;
SELECT kind, inserted FROM kbench_ingest(:'seed002'::jsonb) ORDER BY kind;
SELECT kind, inserted FROM kbench_ingest(:'seed004'::text, 'seed') ORDER BY kind;
-- idempotent: the same content adds nothing
SELECT kind, inserted FROM kbench_ingest(:'seed000'::json) ORDER BY kind;
SELECT count(*) AS runs, (SELECT count(*) FROM kbench_protocols) AS protocols,
       (SELECT count(*) FROM kbench_environments) AS environments FROM kbench_runs;
SELECT external_id, status, primary_statistic, primary_ns, p20_ns, p80_ns, unresolved
  FROM kbench_runs ORDER BY external_id;
-- consistent: each run's protocol and environment are the stored ones
SELECT count(*) AS consistent FROM kbench_runs r
  JOIN kbench_protocols p ON p.digest = r.protocol_digest
  JOIN kbench_environments e ON e.digest = r.environment_digest;
SELECT product, form_factor, architecture, vendor FROM kbench_environments;
SELECT family, timer, primary_statistic, name FROM kbench_protocols ORDER BY name;
-- the typed shapes, straight from a manifest
SELECT (kbench_run_of('x', kbench_normalize((:'seed004'::jsonb)->'run'))).median_ns,
       (kbench_environment_of('y', kbench_normalize((:'seed004'::jsonb)->'environment'))).product;

-- a single manifest: an operation, then a workload naming an operation not (yet) there
\set ex_op `cat test/data/spec-examples/operation-spec.json`
\set ex_wl `cat test/data/spec-examples/workload-case.json`
SELECT kind, inserted FROM kbench_ingest(:'ex_wl'::json);
SELECT name, operation_resolved, axes, dtypes FROM kbench_workloads;
SELECT kind, inserted FROM kbench_ingest(:'ex_op'::json);
SELECT name, operation_resolved FROM kbench_workloads;

-- invalid documents are refused and nothing is stored
SELECT * FROM kbench_ingest('{"kind": "BenchmarkRun"}'::json);
SELECT * FROM kbench_ingest(jsonb_set(:'seed000'::jsonb, '{run,spec,protocolDigest}', '"sha256:0000000000000000000000000000000000000000000000000000000000000000"'));
SELECT * FROM kbench_ingest('{"run": 1, "protocol": 2, "environment": 3}'::json);
SELECT * FROM kbench_ingest('{"a": 1, "a": 2}'::text);
SELECT count(*) AS runs FROM kbench_runs;

-- append-only: identity never changes, runs are never deleted
UPDATE kbench_runs SET primary_ns = 1 WHERE external_id LIKE 'layer_norm%';
UPDATE kbench_runs SET manifest = '{}' WHERE external_id LIKE 'layer_norm%';
UPDATE kbench_environments SET product = 'NVIDIA H200';
UPDATE kbench_operations SET family = 'x';
DELETE FROM kbench_runs;
TRUNCATE kbench_runs;
DELETE FROM kbench_protocols;
-- retraction and supersession keep the row and say why
-- (they return the digest of the run withdrawn, named by its digest or a unique prefix)
SELECT kbench_retract(substr(digest, 8, 16), 'clock throttled during the run') = digest AS returns_digest
  FROM kbench_runs WHERE external_id LIKE 'layer_norm%';
SELECT retraction_reason FROM kbench_runs WHERE external_id LIKE 'layer_norm%';
SELECT kbench_retract(digest, 'again') FROM kbench_runs WHERE external_id LIKE 'layer_norm%';
UPDATE kbench_runs SET retracted_at = NULL, retraction_reason = NULL WHERE external_id LIKE 'layer_norm%';
SELECT kbench_retract(digest, ' ') FROM kbench_runs WHERE external_id LIKE 'megatron%';
SELECT kbench_retract('sha256:nope', 'x');
SELECT kbench_retract('sha256:0123456789ab', 'x');
SELECT kbench_retract(NULL, 'x');
SELECT kbench_supersede(a.digest, b.digest, 'rerun with a fixed harness') = a.digest AS superseded
  FROM kbench_runs a, kbench_runs b WHERE a.external_id LIKE 'megatron%' AND b.external_id LIKE 'distill%';
SELECT kbench_supersede(a.digest, a.digest, 'x') FROM kbench_runs a WHERE a.external_id LIKE 'distill%';
SELECT kbench_supersede(a.digest, 'sha256:missing', 'x') FROM kbench_runs a WHERE a.external_id LIKE 'distill%';
SELECT kbench_supersede(a.digest, 'sha256:0123456789abcdef', 'x') FROM kbench_runs a WHERE a.external_id LIKE 'distill%';
SELECT count(*) AS runs, count(retracted_at) AS retracted, count(superseded_by) AS superseded FROM kbench_runs;

-- the Liger-Kernel CSV: 1,649 speed rows, 799 memory rows skipped and counted
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT lines, inserted, present, skipped, rejected FROM kbench_import_liger(:'csv');
SELECT lines, inserted, present, skipped, rejected FROM kbench_import_liger(:'csv');  -- again: nothing new
SELECT reason, count(*) FROM kbench_import_rejections r JOIN kbench_imports i ON i.id = r.import_id
 WHERE i.kind = 'liger' GROUP BY 1 ORDER BY 1;
-- the seeds' workloads and implementations have arrived
SELECT external_id, unresolved FROM kbench_runs WHERE source = 'liger-kernel-bench' AND external_id IN (
  'megatron_cross_entropy/backward/liger/nvidia-h100-80gb-hbm3/batch4-seq2048-vocab131072-bf16/2026-06-15-22-13-03',
  'layer_norm/backward/huggingface/nvidia-h100-80gb-hbm3/hidden4096-rows4096-fp32/2025-07-17-18-18-18') ORDER BY 1;
SELECT count(*) FILTER (WHERE cardinality(unresolved) > 0) AS unresolved_runs FROM kbench_runs;
-- digest by digest, and manifest by manifest, against what KernelIndex publishes.
-- Runs compare whole; a few operations, workloads and implementations share a
-- spec (so a digest) with different metadata across Liger kernels, and the
-- catalog keeps the first metadata it saw: those compare without metadata
-- (test/suites/liger.sh compares every row's six manifests whole).
CREATE TEMP TABLE expected (line jsonb);
\copy expected FROM PROGRAM 'zstd -dc data/liger/kernelindex_expected.jsonl.zst' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
SELECT count(*) AS expected_rows,
       count(r.digest) AS runs_found,
       count(*) FILTER (WHERE r.manifest = e.line->'run') AS runs_equal,
       count(*) FILTER (WHERE r.protocol_digest = e.line->'digests'->>'protocol'
                          AND r.environment_digest = e.line->'digests'->>'environment'
                          AND r.workload_digest = e.line->'digests'->>'workload'
                          AND r.implementation_digest = e.line->'digests'->>'implementation') AS references_equal,
       count(*) FILTER (WHERE w.manifest - 'metadata' = (e.line->'workload') - 'metadata'
                          AND i.manifest - 'metadata' = (e.line->'implementation') - 'metadata'
                          AND o.manifest - 'metadata' = (e.line->'operation') - 'metadata'
                          AND p.manifest = e.line->'protocol' AND v.manifest = e.line->'environment') AS manifests_equal
  FROM expected e
  LEFT JOIN kbench_runs r ON r.digest = e.line->'digests'->>'run'
  LEFT JOIN kbench_workloads w ON w.digest = e.line->'digests'->>'workload'
  LEFT JOIN kbench_implementations i ON i.digest = e.line->'digests'->>'implementation'
  LEFT JOIN kbench_operations o ON o.digest = e.line->'digests'->>'operation'
  LEFT JOIN kbench_protocols p ON p.digest = e.line->'digests'->>'protocol'
  LEFT JOIN kbench_environments v ON v.digest = e.line->'digests'->>'environment';
-- a CSV that is not Liger's
SELECT * FROM kbench_import_liger('a,b,c
1,2,3');
-- Made-up rows (an imaginary GPU, a short line, a 0.1 ms LayerNorm on an H100) go to a database
-- of their own: the catalog is append-only, and in this one they would become history that
-- the analytics tests read as a real Liger release.
SELECT current_database() AS regress_db \gset
CREATE DATABASE kbench_made_up;
\c kbench_made_up
SET client_min_messages = warning;
CREATE EXTENSION kernelindex;
SELECT lines, inserted, skipped, rejected FROM kbench_import_liger(
'kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version
layer_norm,liger,forward,speed,ms,N,hidden size,1024,0.1,0.1,0.1,"{""M"": 4096, ""dtype"": ""torch.float32"", ""eps"": 1e-06}",Imaginary GPU 9000,2026-01-01 00:00:00,0.9.0
layer_norm,liger,forward,speed,ms
layer_norm,liger,forward,speed,ms,N,hidden size,1024,0.1,0.1,0.1,"{""M"": 4096, ""dtype"": ""torch.float32"", ""eps"": 1e-06}",NVIDIA H100 80GB HBM3,2026-01-01 00:00:00,0.9.0');
SELECT line, reason, skipped FROM kbench_import_rejections WHERE import_id = (SELECT max(id) FROM kbench_imports) ORDER BY line;
\c :regress_db
DROP DATABASE kbench_made_up;

-- a slice of the public catalog export: every line stored, digests as published
\copy kbench_import_staging (line) FROM PROGRAM 'zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | head -3000' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
SELECT lines, inserted, present, skipped, rejected FROM kbench_import_catalog_staged('catalog slice');
CREATE TEMP TABLE slice (line jsonb);
\copy slice FROM PROGRAM 'zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | head -3000' WITH (FORMAT csv, QUOTE E'\x01', DELIMITER E'\x02')
SELECT line->>'table' AS table_name, count(*) AS lines,
       count(*) FILTER (WHERE coalesce(line->'row'->>'semanticDigest', line->'row'->>'workloadDigest',
                                       line->'row'->>'implementationDigest', line->'row'->>'runDigest') IN (
         SELECT digest FROM kbench_operations UNION ALL SELECT digest FROM kbench_workloads
         UNION ALL SELECT digest FROM kbench_implementations UNION ALL SELECT digest FROM kbench_runs)) AS digests_found
  FROM slice GROUP BY 1 ORDER BY 1;

-- an export with broken lines: each reported with its line and reason, the rest imported
INSERT INTO kbench_import_staging (line) VALUES
  ((SELECT line::text FROM slice WHERE line->>'table' = 'operations' LIMIT 1)),
  ('{"table": "operations", "row": {"semanticDigest": "sha256:00"'),
  ('{"table": "operations", "row": {"semanticDigest": "x", "manifest": {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "Banana", "metadata": {"name": "b"}, "spec": {}}}}'),
  (jsonb_set((SELECT line FROM slice WHERE line->>'table' = 'operations' LIMIT 1), '{row,semanticDigest}',
             '"sha256:1111111111111111111111111111111111111111111111111111111111111111"')::text),
  ('{"table": "mystery", "row": {}}'),
  ('[1, 2]'),
  (jsonb_set((SELECT line FROM slice WHERE line->>'table' = 'operations' LIMIT 1), '{row,manifest,spec,bogus}', 'true')::text),
  (NULL);
SELECT lines, inserted, present, skipped, rejected FROM kbench_import_catalog_staged('broken');
SELECT line, reason FROM kbench_import_rejections WHERE import_id = (SELECT max(id) FROM kbench_imports) ORDER BY line;
SELECT count(*) AS staging_left FROM kbench_import_staging;

-- export: re-importing it finds everything present and nothing to reject
CREATE TEMP TABLE exported AS SELECT * FROM kbench_export_catalog() AS line;
INSERT INTO kbench_import_staging (line) SELECT line FROM exported;
SELECT lines = (SELECT count(*) FROM exported) AS all_lines, inserted, rejected,
       present = (SELECT count(*) FROM exported) AS all_present
  FROM kbench_import_catalog_staged('re-export');
SELECT count(*) FILTER (WHERE line::jsonb->>'table' = 'benchmark_runs') = (SELECT count(*) FROM kbench_runs) AS every_run_exported
  FROM exported;

-- bad arguments to the import and ingest functions
SELECT * FROM kbench_ingest(NULL::json);
SELECT * FROM kbench_ingest('[1, 2]'::json);
SELECT * FROM kbench_import_catalog('/nonexistent/catalog.jsonl');
SELECT * FROM kbench_import_liger_file('/nonexistent/all_benchmark_data.csv');
SELECT * FROM kbench_import_liger('');
SELECT lines, inserted, rejected FROM kbench_import_liger(
'kernel_name,kernel_provider,kernel_operation_mode,metric_name,metric_unit,x_name,x_label,x_value,y_value_50,y_value_20,y_value_80,extra_benchmark_config_str,gpu_name,timestamp,liger_version
layer_norm,liger,forward,speed,ms,N,hidden size,1024,0.1,0.1,0.1,"{""M"": 4096');
SELECT line, reason FROM kbench_import_rejections WHERE import_id = (SELECT max(id) FROM kbench_imports) ORDER BY line;
