-- One resolver (issue 13): what users name resolves the same everywhere, in
-- any case; digest prefixes of 12+ hex digits; ambiguous and unknown names
-- are errors (candidates, nearest names), never an empty result or NULL.
\set VERBOSITY default
\set csv `cat data/liger/all_benchmark_data.csv`
SELECT lines FROM kbench_import_liger(:'csv');

-- operations: short name, catalog name, any case, digest prefix
SELECT cardinality(_kernelindex.resolve_operation('layer_norm')) AS short,
       _kernelindex.resolve_operation('layer_norm') = _kernelindex.resolve_operation('liger-layer-norm') AS catalog_name,
       _kernelindex.resolve_operation('Layer-Norm') = _kernelindex.resolve_operation('LAYER_NORM') AS any_case,
       _kernelindex.resolve_operation((SELECT substr(digest, 8, 12) FROM kbench_operations WHERE name = 'liger-layer-norm'))
         = _kernelindex.resolve_operation('layer_norm') AS prefix;
SELECT _kernelindex.resolve_operation('layer_nrm');
SELECT _kernelindex.resolve_operation('');
SELECT _kernelindex.resolve_operation(NULL);

-- devices: vendor and brand words optional, any case
SELECT _kernelindex.resolve_environments('RTX 3090') = _kernelindex.resolve_environments('NVIDIA GeForce RTX 3090') AS rtx_3090,
       _kernelindex.resolve_environments('3090') = _kernelindex.resolve_environments('geforce rtx 3090') AS just_3090,
       _kernelindex.resolve_environments('h100') = _kernelindex.resolve_environments('NVIDIA H100') AS h100,
       cardinality(_kernelindex.resolve_environments('H100 80GB HBM3')) AS one_form_factor,
       _kernelindex.resolve_environments(NULL) IS NULL AS null_is_any;
-- issue 29: the docs' own spelling (docs/ANALYTICS.md: 'H100 SXM5', the
-- kbench_devices row's name) names the 80GB HBM3 form factor
SELECT _kernelindex.resolve_environments('H100 SXM5') = _kernelindex.resolve_environments('H100 80GB HBM3') AS sxm5_is_80gb_hbm3,
       _kernelindex.resolve_environments('h100 sxm5 80gb') = _kernelindex.resolve_environments('H100 80GB HBM3') AS in_any_case;
SELECT _kernelindex.resolve_environments('RTX');
SELECT _kernelindex.resolve_environments('nvidia');
SELECT _kernelindex.resolve_environments('H300');
SELECT _kernelindex.resolve_environments(' ');
SELECT _kernelindex.resolve_environments('cpu');   -- no CPU run in this catalog yet

-- modes and implementations, any case
SELECT _kernelindex.resolve_protocols('Backward') = _kernelindex.resolve_protocols('backward') AS mode_case,
       _kernelindex.resolve_implementation(_kernelindex.resolve_operation('layer_norm'), 'HuggingFace')
         = _kernelindex.resolve_implementation(_kernelindex.resolve_operation('layer_norm'), 'huggingface') AS impl_case;
SELECT _kernelindex.resolve_protocols('backwards');
SELECT _kernelindex.resolve_implementation(_kernelindex.resolve_operation('layer_norm'), 'tritonx');

-- the same names in the functions that take them
SELECT count(*) > 0 AS rows FROM kbench_speedup('LAYER_NORM', 'HuggingFace', 'Liger', 'Backward', 'h100');

-- runs: a digest or a unique prefix of 12+ hex digits, with or without sha256:
SELECT kbench_cohort_of(substr(digest, 1, 19)) = kbench_cohort_of(digest) AS with_sha256,
       kbench_cohort_of(substr(digest, 8, 16)) = kbench_cohort_of(digest) AS bare_hex,
       kbench_cohort_of(upper(substr(digest, 8, 16))) = kbench_cohort_of(digest) AS upper_case
  FROM kbench_runs ORDER BY digest LIMIT 1;
SELECT kbench_cohort_of('sha256:f7a72ed4...');
SELECT kbench_cohort_of('sha256:000000000000');
SELECT kbench_cohort_of('sha256:0000000000000000000000000000000000000000000000000000000000000000');
SELECT kbench_cohort_of(NULL);
SELECT kbench_cohort_of('layer-norm-run');
-- ... by index (issue 31): a whole digest is a primary-key probe and a prefix
-- a range of kbench_runs_digest_prefix_idx, never a read of every run: the
-- pages a call touches (EXPLAIN's buffer counts, which include the work done
-- inside the function) stay a few dozen (about 30 here); reading every run of
-- the Liger history by the primary key with a filter is over 200
CREATE FUNCTION pg_temp.pages_of(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE j json;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ' || query INTO j;
	RETURN (j->0->'Plan'->>'Shared Hit Blocks')::int + (j->0->'Plan'->>'Shared Read Blocks')::int;
END $$;
SELECT digest AS d FROM kbench_runs ORDER BY digest OFFSET 100 LIMIT 1 \gset
SELECT _kernelindex.resolve_run(:'d') = :'d' AS whole, _kernelindex.resolve_run(substr(:'d', 8, 14)) = :'d' AS prefix,
       _kernelindex.resolve_run(upper(substr(:'d', 1, 40))) = :'d' AS upper_prefix;
SELECT pg_temp.pages_of(format('SELECT _kernelindex.resolve_run(%L)', :'d')) < 100 AS whole_by_index,
       pg_temp.pages_of(format('SELECT _kernelindex.resolve_run(%L)', substr(:'d', 8, 14))) < 100 AS prefix_by_index,
       pg_temp.pages_of(format('SELECT kbench_cohort_of(%L)', :'d')) < 100 AS cohort_of_by_index;

-- workloads: digest, prefix or name; unknown is an error, not an empty row
SELECT (kbench_workload_cost('liger-layer-norm-hidden4096-rows4096-fp32', 'backward')).bytes > 0 AS by_name,
       (kbench_workload_cost(substr(digest, 1, 20), 'backward')).bytes > 0 AS by_prefix
  FROM kbench_workloads WHERE name = 'liger-layer-norm-hidden4096-rows4096-fp32';
SELECT * FROM kbench_workload_cost('sha256:...workload', 'backward');
SELECT * FROM kbench_workload_cost('no-such-workload', 'backward');

-- kbench_run takes catalog names and any case too (refused here for the device, not the names)
SELECT kbench_run('Liger-Layer-Norm', 'BACKWARD', '{"rows": 8, "hidden": 8, "dtype": "fp32"}', device => 'CUDA:7');
SELECT kbench_run('liger-layer-norm', 'backward', '{"rows": 8, "hidden": 8, "dtype": "fp32"}', implementation => 'NoSuchImpl');
SELECT kbench_run('Liger-Layer-Norm', 'BACKWARD', '{"rows": 8, "hidden": 8, "dtype": "fp32"}', implementation => 'CPU', device => ' CPU ',
                  protocol => '{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}') AS job \gset
SELECT operation, mode, device FROM kbench_jobs WHERE id = :job;
SELECT status FROM kbench_wait(:job, '5 minutes');

-- across operations (issue 13 item 5): operation NULL compares every operation
-- where both providers exist, skipping the others
SELECT operation_key, count(*) AS workloads FROM kbench_speedup(NULL, 'huggingface', 'liger', 'backward', 'H100')
 GROUP BY 1 ORDER BY 1;
SELECT operation_key, protocol, device, workloads FROM kbench_speedup_summary(NULL, 'huggingface', 'liger', 'backward', 'H100 80GB HBM3')
 ORDER BY 1, 2, 3;
SELECT * FROM kbench_speedup(NULL, 'huggingface', 'no-such-provider');

-- a provider with no operation named: its implementation of every operation
-- (the HINT that suggested 'liger' no longer points at a refused name)
SELECT cardinality(_kernelindex.resolve_implementation(NULL, 'liger')) > 10 AS liger_everywhere,
       cardinality(_kernelindex.resolve_implementation(NULL, 'Liger')) = cardinality(_kernelindex.resolve_implementation(NULL, 'liger')) AS any_case;
SELECT count(*) > 0 AS rows FROM kbench_regressions('liger', mode => 'backward', environment => 'h100', method => 'percent');
SELECT _kernelindex.resolve_implementation(NULL, 'ligr');
-- devices are the short names the views carry
SELECT DISTINCT device_key FROM kbench_cohorts WHERE product IN ('NVIDIA H100', 'NVIDIA GeForce RTX 3090') ORDER BY 1;
SELECT count(*) > 0 AS rows FROM kbench_records WHERE operation_key = 'layer_norm' AND device_key = 'h100' AND mode = 'backward';
-- kbench_format_ns: one duration for people
SELECT kbench_format_ns(850), kbench_format_ns(12345), kbench_format_ns(4567890), kbench_format_ns(1234567890),
       kbench_format_ns(150000000000), kbench_format_ns(NULL);
-- same_code keeps the digests it is given that the catalog does not hold (an
-- implementation known only from runs), after the catalog's own, in the
-- order given: a run-only digest is never dropped from a comparison's side
SELECT d[cardinality(d) - 1:] = ARRAY['sha256:' || repeat('f', 64), 'sha256:' || repeat('e', 64)] AS run_only_kept_last,
       k = ANY (d) AS known_kept
  FROM (SELECT min(digest) AS k FROM kbench_implementations WHERE name = 'liger-bench-layer-norm-liger') i,
       LATERAL (SELECT _kernelindex.same_code(ARRAY['sha256:' || repeat('f', 64), k, 'sha256:' || repeat('e', 64)]) AS d) s;
SELECT _kernelindex.same_code(ARRAY['sha256:' || repeat('0', 64)]) = ARRAY['sha256:' || repeat('0', 64)] AS alone_kept;
