-- The store's plans do not depend on how big the catalog was when they were
-- made (sql/code/22_store.sql, issue 31 item 2): in a database of its own,
-- where the first store is planned over empty tables, no manifest stored,
-- new or already there, reads a table that grows with history by a
-- sequential scan.  A generic plan made over an empty kbench_runs once
-- probed "already stored?" by a hash anti join over a scan of every run,
-- and kept it.  Counted by the transaction's own statistics.
SELECT current_database() AS regress_db \gset
-- (UTF-8 whatever the cluster's default: a test below counts characters)
CREATE DATABASE kbench_store_plans TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C';
\c kbench_store_plans
SET client_min_messages = warning;
CREATE EXTENSION kernelindex;
\set seed000 `cat test/data/seeds/000_04bb0f8f111ec531.json`
\set seed002 `cat test/data/seeds/002_72c93d8bf667ae74.json`
\set wl `cat test/data/spec-examples/workload-case.json`
\set op `cat test/data/spec-examples/operation-spec.json`
-- the sequential scans since base, of the tables that grow with history
-- (pg_stat_xact_user_tables holds what this backend has not reported yet,
-- earlier transactions' included: base is taken in the same transaction)
CREATE TEMP TABLE base (relname name, seq_scan bigint);
CREATE VIEW scans AS
  SELECT coalesce(string_agg(x.relname || ' ' || (x.seq_scan - coalesce(b.seq_scan, 0)), ', ' ORDER BY x.relname), 'none') AS sequential_scans
    FROM pg_stat_xact_user_tables x LEFT JOIN base b ON b.relname = x.relname
   WHERE x.seq_scan > coalesce(b.seq_scan, 0)
     AND x.relname IN ('kbench_runs', 'kbench_measurements', 'kbench_workloads', 'kbench_implementations',
                       'kbench_protocols', 'kbench_environments', 'kbench_operations', 'kbench_projects',
                       'kbench_serving_manifests', 'kbench_cohort_bests', 'kbench_record_history');
CREATE VIEW snapshot AS SELECT relname, seq_scan FROM pg_stat_xact_user_tables;
-- the first store, planned over empty tables
BEGIN;
DELETE FROM base; INSERT INTO base SELECT * FROM snapshot;
SELECT kind, inserted FROM kbench_ingest(:'seed000'::jsonb) ORDER BY kind;
SELECT * FROM scans;
COMMIT;
-- a new run of the same protocol and environment
BEGIN;
DELETE FROM base; INSERT INTO base SELECT * FROM snapshot;
SELECT kind, inserted FROM kbench_ingest(:'seed002'::jsonb) ORDER BY kind;
SELECT * FROM scans;
COMMIT;
-- all of it already there: the protocol and the environment are found by one
-- call (src/store.c's drop_known), their kinds' functions are not called
SET track_functions = 'pl';
BEGIN;
DELETE FROM base; INSERT INTO base SELECT * FROM snapshot;
SELECT kind, inserted FROM kbench_ingest(:'seed000'::jsonb) ORDER BY kind;
SELECT * FROM scans;
SELECT funcname, calls FROM pg_stat_xact_user_functions WHERE schemaname = '_kernelindex' AND funcname LIKE 'store%' ORDER BY funcname;
COMMIT;
RESET track_functions;
-- an operation and a workload: the references waiting for them resolved
BEGIN;
DELETE FROM base; INSERT INTO base SELECT * FROM snapshot;
SELECT kind, inserted FROM kbench_ingest(:'op'::jsonb) ORDER BY kind;
SELECT kind, inserted FROM kbench_ingest(:'wl'::jsonb) ORDER BY kind;
SELECT * FROM scans;
COMMIT;
-- the serving kinds, one by one (a single kind: no probe, store_serving's
-- own "already stored?" by index): each new one stored beside the others,
-- each known one not again
\set ssr `cat test/data/spec-examples/serving-stack-revision.json`
\set sc `cat test/data/spec-examples/serving-configuration.json`
\set sw `cat test/data/spec-examples/serving-workload.json`
\set sr `cat test/data/spec-examples/serving-run.json`
BEGIN;
DELETE FROM base; INSERT INTO base SELECT * FROM snapshot;
SELECT kind, inserted FROM kbench_ingest(:'ssr'::jsonb);
SELECT kind, inserted FROM kbench_ingest(:'sc'::jsonb);
SELECT kind, inserted FROM kbench_ingest(:'sw'::jsonb);
SELECT kind, inserted FROM kbench_ingest(:'sr'::jsonb);
SELECT kind, inserted FROM kbench_ingest(:'sc'::jsonb);
SELECT * FROM scans;
COMMIT;
SELECT kind, count(*) FROM kbench_serving_manifests GROUP BY kind ORDER BY kind;
-- a run met twice in one import, its raw samples with one copy only: the
-- run is stored once, with them, whichever copy brought them (issue 28 item 5)
\set seed004 `cat test/data/seeds/004_5d22a04506fce857.json`
INSERT INTO kbench_import_staging (line)
SELECT jsonb_build_object('table', 'benchmark_runs',
                          'row', jsonb_build_object('manifest', :'seed004'::jsonb,
                                                    'runDigest', kbench_digest((:'seed004'::jsonb)->'run')) || r)::text
  FROM (VALUES (1, '{}'::jsonb), (2, '{"rawSamplesNs": [7000, 7100, 7200]}')) v(n, r) ORDER BY n;
SELECT lines, inserted, present, rejected FROM kbench_import_catalog_staged();
SELECT raw_samples_ns FROM kbench_runs WHERE digest = kbench_digest((:'seed004'::jsonb)->'run');
-- the other way round: a run of another day, raw samples with the first copy
\set seed004b `cat test/data/seeds/004_5d22a04506fce857.json`
SELECT jsonb_set(:'seed004b'::jsonb, '{run,spec,observedAt}', '"2026-06-16T00:00:00.000Z"') AS seed004b \gset
INSERT INTO kbench_import_staging (line)
SELECT jsonb_build_object('table', 'benchmark_runs',
                          'row', jsonb_build_object('manifest', :'seed004b'::jsonb,
                                                    'runDigest', kbench_digest((:'seed004b'::jsonb)->'run')) || r)::text
  FROM (VALUES (1, '{"rawSamplesNs": [8000, 8100]}'::jsonb), (2, '{}')) v(n, r) ORDER BY n;
SELECT lines, inserted, present, rejected FROM kbench_import_catalog_staged();
SELECT raw_samples_ns FROM kbench_runs WHERE digest = kbench_digest((:'seed004b'::jsonb)->'run');
-- a rejection quotes at most 200 characters of what the line claims: a
-- digest claim of 150 two-byte characters (300 bytes) whole, one of 500
-- whole, cut at 200 with how many were left out
INSERT INTO kbench_import_staging (line)
SELECT jsonb_build_object('table', 'benchmark_runs',
                          'row', jsonb_build_object('manifest', :'seed004'::jsonb, 'runDigest', c))::text
  FROM (VALUES (1, repeat('é', 150)), (2, repeat('x', 500))) v(n, c) ORDER BY n;
SELECT lines, inserted, present, rejected FROM kbench_import_catalog_staged();
SELECT line, position(repeat('é', 150) IN reason) > 0 AS whole,
       reason LIKE '%says ' || repeat('x', 200) || '... (300 more characters) but%' AS cut
  FROM kbench_import_rejections WHERE import_id = (SELECT max(import_id) FROM kbench_import_rejections) ORDER BY line;
\c :regress_db
DROP DATABASE kbench_store_plans;
