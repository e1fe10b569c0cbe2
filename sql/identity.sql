-- Identity: RFC 8785 canonical text, manifest digests, normalization, validation.
-- Test data is read relative to the repository root, where pg_regress runs.

-- RFC 8785 numbers: ECMAScript Number::toString after a trip through double
SELECT kbench_canonical('[-0, 5e-324, 1e21, 1e-7, 9007199254740992, 9007199254740993]'::json);
SELECT kbench_canonical('[1.0, 1, 1e0, 0.1, 0.10000000000000001, 123456789012345678901, 1e20, 999999999999999999999]'::json);
SELECT kbench_canonical('[0.000001, 0.0000001, 1.5e300, -1.5e-300, 4.35, 0.000010048658277929109, 1e-323, 2.2250738585072014e-308]'::json);
SELECT kbench_canonical('[123e-20, 9.007199254740993e15, 1.7976931348623157e308, 100, -123.456, 0.3]'::text);
-- jsonb keeps numeric text; canonical output goes through double all the same
SELECT kbench_canonical('{"a": 1.000, "b": 0.10000000000000001, "c": -0.0}'::jsonb);

-- strings: escapes, control characters, non-ASCII written as itself
SELECT kbench_canonical('"\u0000\u0001\u001f\b\t\n\f\r\"\\/\u007f é € 😀 \u2028"'::text);
SELECT kbench_canonical('["\ud83d\ude00", "\u00e9"]'::text);

-- member order: UTF-16 code units, not bytes and not jsonb's shorter-first order
SELECT kbench_canonical('{"b": 1, "a": 2, "aa": 3, "A": 4, "": 5}'::json);
SELECT kbench_canonical('{"\ufb01": 1, "\ud83d\ude00": 2}'::json);  -- U+1F600 (D83D DE00) sorts before U+FB01
SELECT kbench_canonical('{"\ue000": 1, "\ud800\udc00": 2, "\uffff": 3, "z": 4}'::text);
SELECT kbench_canonical('{"zz": 1, "z": {"b": [3, {"y": 1, "x": 2}], "a": null}, "t": true, "f": false}'::jsonb);

-- the pinned SoftwareProject vector (IDENTITY.md section 6)
SELECT kbench_canonical(json_build_object('apiVersion', 'kernelindex.dev/v1alpha1', 'kind', 'SoftwareProject',
       'spec', json_build_object('name', 'Vector Project', 'repository', 'https://example.invalid/vector/project')));
SELECT kbench_digest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "SoftwareProject",
       "metadata": {"name": "vector-project"},
       "spec": {"name": "Vector Project", "repository": "https://example.invalid/vector/project"}}'::json)
  = 'sha256:bea60af06f12216679b113d6624c5293d59bef2104ccc27cd33c992d124e039d' AS vector_ok;
-- metadata never changes identity
SELECT kbench_digest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "SoftwareProject",
       "metadata": {"name": "another-name", "title": "Another title", "labels": {"team": "x"}},
       "spec": {"repository": "https://example.invalid/vector/project", "name": "Vector Project"}}'::jsonb);

-- the three seed documents: protocol and environment digest to what each run names
\set seed000 `cat test/data/seeds/000_04bb0f8f111ec531.json`
\set seed002 `cat test/data/seeds/002_72c93d8bf667ae74.json`
\set seed004 `cat test/data/seeds/004_5d22a04506fce857.json`
CREATE TEMP TABLE seeds (name text, doc json);
INSERT INTO seeds VALUES ('000', :'seed000'), ('002', :'seed002'), ('004', :'seed004');
SELECT name, (kbench_run_digests(doc)).*,
       (kbench_run_digests(doc)).protocol_digest = doc->'run'->'spec'->>'protocolDigest' AS protocol_ok,
       (kbench_run_digests(doc)).environment_digest = doc->'run'->'spec'->>'environmentDigest' AS environment_ok
  FROM seeds ORDER BY name;
SELECT count(*) AS problems FROM seeds, kbench_validate_run(doc);
-- a run naming the wrong protocol is caught, with both digests in the message
SELECT * FROM kbench_validate_run(jsonb_set(:'seed004'::jsonb, '{run,spec,protocolDigest}',
       '"sha256:a79eaf4df66c97c6adc1fb2d09df78682155d1ea86652ae0b70199875bde7747"'));
SELECT kbench_run_digests(jsonb_set(:'seed000'::jsonb, '{environment,spec,hardware,product}', '"NVIDIA H200"'));
SELECT * FROM kbench_validate_run('{"run": {}, "extra": 1}'::json);

-- the spec examples chain after set-like normalization
\set ex_op `cat test/data/spec-examples/operation-spec.json`
\set ex_wl `cat test/data/spec-examples/workload-case.json`
\set ex_suite `cat test/data/spec-examples/workload-suite.json`
\set ex_impl `cat test/data/spec-examples/implementation-revision.json`
\set ex_proto `cat test/data/spec-examples/benchmark-protocol.json`
\set ex_env `cat test/data/spec-examples/execution-environment.json`
\set ex_run `cat test/data/spec-examples/benchmark-run.json`
SELECT kbench_digest(:'ex_impl'::json) = :'ex_run'::json->'spec'->>'implementationDigest' AS run_names_implementation,
       kbench_digest(:'ex_wl'::json) = :'ex_run'::json->'spec'->>'workloadDigest' AS run_names_workload,
       kbench_digest(:'ex_proto'::json) = :'ex_run'::json->'spec'->>'protocolDigest' AS run_names_protocol,
       kbench_digest(:'ex_env'::json) = :'ex_run'::json->'spec'->>'environmentDigest' AS run_names_environment,
       kbench_digest(:'ex_op'::json) = :'ex_wl'::json->'spec'->>'operationSpecDigest' AS workload_names_operation,
       kbench_digest(:'ex_op'::json) = :'ex_suite'::json->'spec'->>'operationSpecDigest' AS suite_names_operation,
       kbench_digest(:'ex_op'::json) = :'ex_impl'::json->'spec'->'operation'->>'specDigest' AS implementation_names_operation;
-- without normalization the implementation would not chain: its support lists are unsorted
SELECT 'sha256:' || encode(sha256(convert_to(kbench_canonical(
         json_build_object('apiVersion', j->'apiVersion', 'kind', j->'kind', 'spec', j->'spec')), 'UTF8')), 'hex')
       = :'ex_run'::json->'spec'->>'implementationDigest' AS unnormalized_chains
  FROM (SELECT :'ex_impl'::json AS j) s;
SELECT kbench_normalize(:'ex_impl'::json)->'spec'->'support' AS normalized_support;
-- every other example is valid too
\set ex_sp `cat test/data/spec-examples/software-project.json`
\set ex_mr `cat test/data/spec-examples/model-revision.json`
\set ex_ssr `cat test/data/spec-examples/serving-stack-revision.json`
\set ex_sc `cat test/data/spec-examples/serving-configuration.json`
\set ex_sw `cat test/data/spec-examples/serving-workload.json`
\set ex_sr `cat test/data/spec-examples/serving-run.json`
SELECT j->>'kind' AS kind, (SELECT count(*) FROM kbench_validate(j)) AS problems, length(kbench_digest(j)) AS digest_length
  FROM unnest(ARRAY[:'ex_op', :'ex_wl', :'ex_suite', :'ex_impl', :'ex_proto', :'ex_env', :'ex_run',
                    :'ex_sp', :'ex_mr', :'ex_ssr', :'ex_sc', :'ex_sw', :'ex_sr']::json[]) AS j ORDER BY 1;

-- each invalid example is rejected for its own reason
\set bad_duration `cat test/data/spec-examples/invalid/ambiguous-duration.json`
\set bad_digest `cat test/data/spec-examples/invalid/bad-digest.json`
\set bad_unknown `cat test/data/spec-examples/invalid/unknown-field.json`
\set bad_dup `cat test/data/spec-examples/invalid/duplicate-key.json`
SELECT * FROM kbench_validate(:'bad_duration'::json);
SELECT * FROM kbench_validate(:'bad_digest'::json);
SELECT * FROM kbench_validate(:'bad_unknown'::json);
SELECT * FROM kbench_validate(:'bad_dup'::json);
SELECT kbench_digest(:'bad_duration'::json);
SELECT kbench_digest(:'bad_digest'::json);
SELECT kbench_digest(:'bad_unknown'::json);
SELECT kbench_digest(:'bad_dup'::json);
SELECT kbench_digest(:'bad_dup'::text);
-- jsonb has already lost the duplicate: it keeps the last one and the manifest is valid
SELECT kbench_normalize(:'bad_dup'::jsonb)->'spec';

-- durations normalize to integer nanoseconds
SELECT kbench_normalize(jsonb_set(:'ex_run'::jsonb, '{spec,timing,latencyNs}',
       '{"median": "0.008 ms", "mean": "8 us", "p95": "8000ns", "minimum": "0.000008 s", "maximum": "8 µs", "confidence95": ["7.5 us", 8500]}'))
       ->'spec'->'timing'->'latencyNs';
SELECT * FROM kbench_validate(jsonb_set(:'ex_run'::jsonb, '{spec,timing,latencyNs}',
       '{"median": "1.5 ns", "mean": "9007199254740992 ns", "p05": "5 ms ", "p95": "5  ms", "mad": -3, "minimum": 1.5}'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_run'::jsonb, '{spec,timing,latencyNs}', '{"p05": 1}'));

-- the rules the schemas cannot say
SELECT * FROM kbench_validate(jsonb_set(:'ex_sp'::jsonb, '{spec,repository}', '"http://example.com/x"'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_sp'::jsonb, '{spec,homepage}', '"HTTPS://Example.com:443/x"'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_sp'::jsonb, '{spec,homepage}', '"https://"'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_sp'::jsonb, '{metadata,sourceRefs}', '[{"url": "ftp://example.com"}]'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_op'::jsonb, '{spec,axes,hidden}', '{"role": "constant", "type": "integer"}'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_op'::jsonb, '{spec,axes,hidden}', '{"role": "derived", "type": "integer"}'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_op'::jsonb, '{spec,inputs,0}', '{"name": "x"}'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_run'::jsonb, '{spec,observedAt}', '"2026-08-01T12:00:00+02:00"'));
SELECT * FROM kbench_validate(jsonb_set(:'ex_run'::jsonb, '{spec,observedAt}', '"2025-02-29T12:00:00Z"'));
SELECT count(*) FROM kbench_validate(jsonb_set(:'ex_run'::jsonb, '{spec,observedAt}', '"2024-02-29T12:00Z"'));

-- every problem at once, in document order, unknown members at any depth
SELECT * FROM kbench_validate('{"apiVersion": "kernelindex.dev/v1alpha2", "kind": "WorkloadCase",
  "metadata": {"name": "Bad Name", "labels": {"Team": "x", "ok": 7}},
  "spec": {"operationSpecDigest": "sha256:00", "axes": {"tokens": 1.5}, "bogus": true,
           "tensors": {"x": {"shape": [], "dtype": "bf16", "data": {"generator": "normal", "seed": -1, "nested": {}}}}}}'::json);
SELECT kbench_digest('{"apiVersion": "kernelindex.dev/v1alpha1", "kind": "SoftwareProject", "metadata": {"name": "x"},
  "spec": {"name": "X", "kind": "company", "packages": [{"ecosystem": "pypi", "name": "x", "version": "1"}]}}'::json);

-- bad input: each raises a clear error with its SQLSTATE
SELECT kbench_digest('{"apiVersion": '::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('{"a": 1} x'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('[1, NaN]'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('[1, Infinity]'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('[1e999]'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_canonical('"\ud800"'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_canonical('"a\qb"'::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('[]'::json);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('{"kind": "Banana"}'::json);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_digest('{"apiVersion": "kernelindex.dev/v1alpha1"}'::json);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_canonical('{"a": {"b": 1, "b": 2}}'::json);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_canonical(repeat('[', 65) || repeat(']', 65));
\echo :LAST_ERROR_SQLSTATE
SELECT length(kbench_canonical(repeat('[', 64) || repeat(']', 64)));
SELECT kbench_canonical(('"' || repeat('x', 1048576) || '"')::text);
\echo :LAST_ERROR_SQLSTATE
SELECT kbench_canonical(('{"a":"' || repeat('x', 1048576) || '"}')::jsonb);
\echo :LAST_ERROR_SQLSTATE
SELECT length(kbench_canonical(('"' || repeat('x', 1048000) || '"')::text));
-- a jsonb number beyond a double (jsonb keeps it as numeric) is refused at its path, as the text
-- form is, not as a failed allocation
SELECT kbench_canonical('{"a": [1, 2e400]}'::jsonb);
SELECT kbench_canonical('{"a": -1e400}'::jsonb);
SELECT kbench_canonical('{"a": 1e-400}'::jsonb);
