#!/usr/bin/env bash
# digests.sh: the time of every API that takes a digest or a prefix of one
# (issue 31 item 1) on a history of N runs, old and new side by side, in a
# throwaway cluster.  Not a test (test/t/007_digest_plans.pl reads the plans).
#   bench/digests.sh [--runs N]              N runs (default 1,000,000)
#   KI_BENCH_SKIP_SETUP=1 bench/digests.sh   use what is installed
#   KI_PGBIN=/path/to/bin bench/digests.sh   another PostgreSQL 15
#
# The history is made by generate_series straight into the tables (no
# manifests through kbench_ingest: minimal {"synthetic": true} ones), with
# the records and alerts triggers disabled for the load (the statement-level
# triggers would check a million runs at once; nothing here reads the
# records but kbench_record_history_of, which is timed for its lookup of the
# cohort): 25 operations x 10 workloads, 4 implementations per operation
# (100) plus 20 that only runs name (a tenth of the runs), 2 protocols, 2
# environments.  Then ANALYZE.
#
# "new" is the installed code; "old" is what the resolvers ran before issue
# 31 (starts_with(digest, prefix), the arms joined by OR: copied below as
# pg_temp functions and statements) on the same tables with the
# text_pattern_ops indexes dropped in a transaction that is rolled back
# (what 0.2.0 had; under C.UTF-8 the primary key serves no prefix).  Each
# time is the best of 3 calls, warm, measured in the server (clock_timestamp
# around EXECUTE).
set -euo pipefail
cd "$(dirname "$0")/.."
N=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) N=$2; shift 2 ;;
    *) echo "usage: bench/digests.sh [--runs N]" >&2; exit 2 ;;
  esac
done
[ -n "${KI_BENCH_SKIP_SETUP:-}" ] || bin/setup.sh >/dev/null
source bin/pgcluster.sh
[ -z "${KI_PGBIN:-}" ] || PGBIN=$KI_PGBIN
ki_cluster_start "shared_buffers = '1GB'" "work_mem = '64MB'" "maintenance_work_mem = '512MB'" \
                 "max_wal_size = '8GB'" "checkpoint_timeout = '30min'"
trap ki_cluster_stop EXIT
export PATH="$PGBIN:$PATH"
psql -X -q -c "CREATE DATABASE bench"
export PGDATABASE=bench
psql -X -q -c "CREATE EXTENSION kernelindex"
echo "== $N runs ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores)"
start=$(date +%s.%N)
psql -X -q -v ON_ERROR_STOP=1 -v n="$N" <<'SQL'
SET synchronous_commit = off;
INSERT INTO kbench_operations (digest, name, family, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('bench op ' || o, 'UTF8')), 'hex'), 'bench-op-' || lpad(o::text, 2, '0'), 'bench',
       '{"synthetic": true}', 'bench'
  FROM generate_series(1, 25) o;
INSERT INTO kbench_workloads (digest, kind, name, operation_digest, operation_resolved, axes, dtypes, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('bench wl ' || o || ' ' || w, 'UTF8')), 'hex'), 'WorkloadCase',
       'bench-op-' || lpad(o::text, 2, '0') || '-hidden' || (512 * w),
       'sha256:' || encode(sha256(convert_to('bench op ' || o, 'UTF8')), 'hex'), true,
       jsonb_build_object('rows', 4096, 'hidden', 512 * w), '{fp32}', '{"synthetic": true}', 'bench'
  FROM generate_series(1, 25) o, generate_series(1, 10) w;
INSERT INTO kbench_implementations (digest, name, operation_digest, operation_resolved, language, version, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('bench impl ' || o || ' ' || f, 'UTF8')), 'hex'),
       'bench-op-' || lpad(o::text, 2, '0') || '-impl-' || f,
       'sha256:' || encode(sha256(convert_to('bench op ' || o, 'UTF8')), 'hex'), true, 'cuda', '1.0', '{"synthetic": true}', 'bench'
  FROM generate_series(1, 25) o, generate_series(0, 3) f;
INSERT INTO kbench_protocols (digest, family, harness, timer, primary_statistic, name, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('bench protocol ' || m, 'UTF8')), 'hex'), 'bench', 'bench', 'cuda_events', 'median',
       'bench-protocol-' || m, '{"synthetic": true}', 'bench'
  FROM unnest('{forward,backward}'::text[]) m;
INSERT INTO kbench_environments (digest, vendor, product, architecture, name, manifest, source)
SELECT 'sha256:' || encode(sha256(convert_to('bench env ' || e, 'UTF8')), 'hex'), 'nvidia', e, 'sm_90',
       'bench-' || lower(replace(e, ' ', '-')), '{"synthetic": true}', 'bench'
  FROM unnest('{NVIDIA H100,NVIDIA H200}'::text[]) e;
ALTER TABLE kbench_runs DISABLE TRIGGER records;
ALTER TABLE kbench_runs DISABLE TRIGGER alerts;
-- run i: operation o = i % 25, workload w, protocol, environment, and
-- implementation f of o (or, for a tenth of the runs, one of 20 that only runs name)
INSERT INTO kbench_runs (digest, implementation_digest, workload_digest, protocol_digest, environment_digest, status,
                         observed_at, primary_statistic, primary_ns, median_ns, p20_ns, p80_ns, samples, source,
                         external_id, name, manifest)
SELECT 'sha256:' || md5('bench run ' || i) || md5('bench run ' || i || '/2'),
       CASE WHEN i % 10 = 9 THEN 'sha256:' || md5('bench runs-only impl ' || i / 10 % 20) || md5('bench runs-only impl ' || i / 10 % 20 || '/2')
            ELSE 'sha256:' || encode(sha256(convert_to('bench impl ' || (i % 25 + 1) || ' ' || (i / 25 % 4), 'UTF8')), 'hex') END,
       'sha256:' || encode(sha256(convert_to('bench wl ' || (i % 25 + 1) || ' ' || (i / 100 % 10 + 1), 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('bench protocol ' || CASE WHEN i / 1000 % 2 = 0 THEN 'forward' ELSE 'backward' END, 'UTF8')), 'hex'),
       'sha256:' || encode(sha256(convert_to('bench env ' || CASE WHEN i / 2000 % 2 = 0 THEN 'NVIDIA H100' ELSE 'NVIDIA H200' END, 'UTF8')), 'hex'),
       'passed', timestamptz '2024-01-01 00:00:00+00' + i * interval '1 minute', 'median', 100000 + i % 997, 100000 + i % 997,
       99000 + i % 997, 101000 + i % 997, 64, 'bench', 'run' || i, 'bench-run-' || i, '{"synthetic": true}'
  FROM generate_series(1, :n) i;
ALTER TABLE kbench_runs ENABLE TRIGGER records;
ALTER TABLE kbench_runs ENABLE TRIGGER alerts;
VACUUM ANALYZE;
SQL
echo "loaded in $(printf '%.0f' "$(echo "$(date +%s.%N) - $start" | bc -l)") s"

psql -X -q -At -F ' | ' -v ON_ERROR_STOP=1 <<'SQL'
-- best of 3 calls of one statement, in ms
CREATE FUNCTION pg_temp.ms(q text) RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; best float8; i int;
BEGIN
	FOR i IN 1..3 LOOP
		t0 := clock_timestamp();
		EXECUTE q;
		best := least(best, extract(epoch FROM clock_timestamp() - t0) * 1000);
	END LOOP;
	RETURN round(best::numeric, 3);
END $$;
-- the resolvers before issue 31 (sql/code/37_resolve.sql on main before it)
CREATE FUNCTION pg_temp.old_resolve_run(run text) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE found text[]; p text := _kernelindex.digest_prefix(run);
BEGIN
	SELECT array_agg(digest ORDER BY digest) INTO found
	  FROM (SELECT digest FROM kbench_runs WHERE starts_with(digest, p) ORDER BY digest LIMIT 6) r;
	RETURN found[1];
END $$;
CREATE FUNCTION pg_temp.old_cohort_of(run text) RETURNS kbench_cohort LANGUAGE plpgsql STABLE AS $$
DECLARE c kbench_cohort;
BEGIN
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest INTO c
	  FROM kbench_runs r WHERE r.digest = pg_temp.old_resolve_run(run);
	RETURN c;
END $$;
SELECT digest AS run, substr(digest, 8, 16) AS run_prefix FROM kbench_runs WHERE name = 'bench-run-777777' OR name = 'bench-run-777' ORDER BY length(name) DESC LIMIT 1 \gset
SELECT substr('sha256:' || md5('bench runs-only impl 7') || md5('bench runs-only impl 7/2'), 8, 16) AS ri_prefix \gset
SELECT substr(digest, 8, 16) AS op_prefix FROM kbench_operations WHERE name = 'bench-op-07' \gset
SELECT substr(digest, 8, 16) AS impl_prefix FROM kbench_implementations WHERE name = 'bench-op-07-impl-2' \gset
SELECT substr(digest, 8, 16) AS wl_prefix FROM kbench_workloads WHERE name = 'bench-op-07-hidden1536' \gset
SELECT substr(digest, 8, 16) AS env_prefix FROM kbench_environments WHERE product = 'NVIDIA H200' \gset
SELECT substr(digest, 8, 16) AS proto_prefix FROM kbench_protocols WHERE name = 'bench-protocol-backward' \gset
CREATE TEMP TABLE t (api text, ord int, old_ms numeric, new_ms numeric);
INSERT INTO t (api, ord, new_ms) VALUES
 ('resolve_run(whole digest)', 1, pg_temp.ms(format('SELECT _kernelindex.resolve_run(%L)', :'run'))),
 ('resolve_run(16-digit prefix)', 2, pg_temp.ms(format('SELECT _kernelindex.resolve_run(%L)', :'run_prefix'))),
 ('kbench_cohort_of(whole digest)', 3, pg_temp.ms(format('SELECT kbench_cohort_of(%L)', :'run'))),
 ('kbench_record_history_of(kbench_cohort_of(digest))', 4, pg_temp.ms(format('SELECT * FROM kbench_record_history_of(kbench_cohort_of(%L))', :'run'))),
 ('kbench_run_version(whole digest)', 5, pg_temp.ms(format('SELECT kbench_run_version(%L)', :'run'))),
 ('resolve_implementation(runs-only, prefix)', 6, pg_temp.ms(format('SELECT _kernelindex.resolve_implementation(NULL, %L)', :'ri_prefix'))),
 ('resolve_implementation(catalog, prefix)', 7, pg_temp.ms(format('SELECT _kernelindex.resolve_implementation(NULL, %L)', :'impl_prefix'))),
 ('resolve_operation(prefix)', 8, pg_temp.ms(format('SELECT _kernelindex.resolve_operation(%L)', :'op_prefix'))),
 ('resolve_workload(prefix)', 9, pg_temp.ms(format('SELECT _kernelindex.resolve_workload(%L)', :'wl_prefix'))),
 ('resolve_environments(prefix)', 10, pg_temp.ms(format('SELECT _kernelindex.resolve_environments(%L)', :'env_prefix'))),
 ('resolve_protocols(prefix)', 11, pg_temp.ms(format('SELECT _kernelindex.resolve_protocols(%L)', :'proto_prefix')));
-- old: the statements of before, without the pattern indexes (rolled back)
BEGIN;
DROP INDEX kbench_runs_digest_prefix_idx, kbench_runs_implementation_digest_idx, kbench_operations_digest_prefix_idx,
	kbench_workloads_digest_prefix_idx, kbench_implementations_digest_prefix_idx, kbench_protocols_digest_prefix_idx,
	kbench_environments_digest_prefix_idx, kbench_workloads_lower_name_idx;
UPDATE t SET old_ms = CASE ord
 WHEN 1 THEN pg_temp.ms(format('SELECT pg_temp.old_resolve_run(%L)', :'run'))
 WHEN 2 THEN pg_temp.ms(format('SELECT pg_temp.old_resolve_run(%L)', :'run_prefix'))
 WHEN 3 THEN pg_temp.ms(format('SELECT pg_temp.old_cohort_of(%L)', :'run'))
 WHEN 4 THEN pg_temp.ms(format('SELECT * FROM kbench_record_history_of(pg_temp.old_cohort_of(%L))', :'run'))
 WHEN 5 THEN pg_temp.ms(format('SELECT kbench_run_version(%L)', :'run'))
 WHEN 6 THEN pg_temp.ms(format('SELECT array_agg(DISTINCT implementation_digest) FROM kbench_runs WHERE starts_with(implementation_digest, %L)',
                               'sha256:' || :'ri_prefix'))
 WHEN 7 THEN pg_temp.ms(format('SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) FROM kbench_implementations'
                               ' WHERE digest = %1$L OR lower(name) = %1$L OR starts_with(digest, %2$L)', :'impl_prefix', 'sha256:' || :'impl_prefix'))
 WHEN 8 THEN pg_temp.ms(format('SELECT array_agg(digest ORDER BY digest), array_agg(DISTINCT name) FROM kbench_operations'
                               ' WHERE digest = %1$L OR lower(name) = %1$L OR starts_with(digest, %2$L)', :'op_prefix', 'sha256:' || :'op_prefix'))
 WHEN 9 THEN pg_temp.ms(format('SELECT array_agg(digest ORDER BY digest) FROM (SELECT digest FROM kbench_workloads'
                               ' WHERE lower(name) = %1$L OR starts_with(digest, %2$L) ORDER BY digest LIMIT 6) w', :'wl_prefix', 'sha256:' || :'wl_prefix'))
 WHEN 10 THEN pg_temp.ms(format('SELECT array_agg(digest ORDER BY digest) FROM kbench_environments WHERE digest = %1$L OR starts_with(digest, %2$L)',
                                :'env_prefix', 'sha256:' || :'env_prefix'))
 WHEN 11 THEN pg_temp.ms(format('SELECT array_agg(digest ORDER BY digest) FROM kbench_protocols WHERE lower(name) = %1$L OR digest = %1$L OR starts_with(digest, %2$L)',
                                :'proto_prefix', 'sha256:' || :'proto_prefix'))
 END;
\echo api | old ms | new ms | old/new
SELECT api, old_ms, new_ms, CASE WHEN new_ms > 0 THEN round(old_ms / new_ms, 1) END FROM t ORDER BY ord;
ROLLBACK;
SQL
