#!/usr/bin/env bash
# standby.sh: read scale on a hot standby (docs/FLEET.md, "Replicas").  A
# primary and a streaming standby on this machine (pg_basebackup -R, as the
# postgres user, private socket directories under /tmp); the Liger history
# imported on the primary and replayed; then on the standby:
#   - the record, regression and speedup queries give the primary's rows;
#   - every function PUBLIC may execute (the read functions, listed from the
#     catalog) is called with sample arguments and every view is read: none
#     may fail for being on a standby (a write, a temporary table, a
#     sequence, a cache).  Other errors (a sample argument that does not
#     fit) are listed as comments.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
SB=$(mktemp -d /tmp/kernelindex-standby.XXXXXX)
chmod 755 "$SB"
[ "$(id -u)" -eq 0 ] && chown postgres "$SB"
stop_standby() { ki_as_owner pg_ctl -D "$SB/data" -m immediate -w stop >/dev/null 2>&1; rm -rf "$SB"; }
trap 'stop_standby; ki_cluster_stop' EXIT
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the primary starts"; exit 1; }
PRIMARY=$KI_CLUSTER_DIR
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
qs() { psql -X -At -q -v ON_ERROR_STOP=1 -h "$SB" -c "$1"; }
source test/lib/tap.sh
CSV="$(pwd)/data/liger/all_benchmark_data.csv"
chmod a+r "$CSV" 2>/dev/null

# the standby: a base backup of the primary that follows it
if ki_as_owner pg_basebackup -h "$PRIMARY" -p 5432 -U postgres -D "$SB/data" -R -X stream >"$SB/basebackup.log" 2>&1; then
  echo "ok - pg_basebackup -R copies the primary"
else
  echo "not ok - pg_basebackup -R copies the primary"; sed 's/^/# /' "$SB/basebackup.log"; exit 1
fi
echo "unix_socket_directories = '$SB'" | ki_as_owner tee -a "$SB/data/postgresql.conf" >/dev/null
if ! ki_as_owner pg_ctl -D "$SB/data" -l "$SB/server.log" -w start >/dev/null; then
  echo "not ok - the standby starts"; sed 's/^/# /' "$SB/server.log"; exit 1
fi
ok "$(qs "SELECT pg_is_in_recovery()")" t "the standby is in recovery (hot standby)"

# the history on the primary, then wait for the standby to replay it
q "SELECT count(*) FROM kbench_import_liger(pg_read_file('$CSV'))" >/dev/null || echo "not ok - the Liger history imports on the primary"
q "SELECT kbench_run('layer_norm', 'forward', jsonb_build_object('rows', 8 + g, 'hidden', 8),
     protocol => '{\"warmup_ms\": 0, \"rep_ms\": 0.01, \"flush_bytes\": 0, \"max_samples\": 3}') FROM generate_series(1, 3) g" >/dev/null
for i in $(seq 1 600); do
  [ "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" = 0 ] && break
  sleep 0.1
done
lsn=$(q "SELECT pg_current_wal_lsn()")
for i in $(seq 1 1200); do
  [ "$(qs "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" = t ] && break
  sleep 0.1
done
ok "$(qs "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn")" t "the standby replayed the primary's history"
runs=$(q "SELECT count(*) FROM kbench_runs")
ok "$(qs "SELECT count(*) FROM kbench_runs")" "$runs" "the standby has the primary's $runs runs"

# the same answers on both
same() {
  local a b
  a=$(q "SELECT s::text FROM ($1) s ORDER BY 1" 2>&1 | md5sum); b=$(qs "SELECT s::text FROM ($1) s ORDER BY 1" 2>&1 | md5sum)
  local n; n=$(qs "SELECT count(*) FROM ($1) s" 2>&1)
  if [ "$a" = "$b" ] && [ "${n:-0}" -gt 0 ] 2>/dev/null; then echo "ok - $2 ($n rows, as on the primary)"
  else echo "not ok - $2 (primary and standby differ, or no rows: $n)"; qs "$1" 2>&1 | head -3 | sed 's/^/# /'; fi
}
impl=$(q "SELECT implementation FROM kbench_records GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
op=$(q "SELECT operation FROM kbench_records WHERE implementation = '$impl' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
other=$(q "SELECT implementation FROM kbench_records WHERE operation = '$op' AND implementation <> '$impl' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
same "SELECT * FROM kbench_records" "kbench_records on the standby"
same "SELECT * FROM kbench_regressions(NULL, method => 'percent')" "kbench_regressions over every implementation on the standby"
same "SELECT * FROM kbench_speedup('$op', '$other', '$impl')" "kbench_speedup('$op', '$other', '$impl') on the standby"
same "SELECT * FROM kbench_speedup_summary('$op', '$other', '$impl')" "kbench_speedup_summary on the standby"
same "SELECT kbench_chart_sweep('layer_norm', 'backward', 'hidden', 'NVIDIA H100 80GB HBM3')" "kbench_chart_sweep on the standby"
ok "$(qs "SELECT length(kbench_report()) > 10000")" t "kbench_report on the standby"

# every read function and view, from the catalog
out=$(psql -X -q -h "$SB" -v ON_ERROR_STOP=1 -v "op=$op" -v "impl=$impl" -v "other=$other" 2>&1 <<'SQL'
\set QUIET on
SELECT set_config('kbench.op', :'op', false), set_config('kbench.impl', :'impl', false),
       set_config('kbench.other', :'other', false) \gset
DO $check$
DECLARE
	f record;
	args text;
	run text := (SELECT digest FROM kbench_runs ORDER BY digest LIMIT 1);
	manifest text := (SELECT manifest::text FROM kbench_runs ORDER BY digest LIMIT 1);
	env text := (SELECT environment_digest FROM kbench_records LIMIT 1);
	op text := current_setting('kbench.op');
	impl text := current_setting('kbench.impl');
	other text := current_setting('kbench.other');
	state text;
	msg text;
	n_ok int := 0;
	n_other int := 0;
	n_bad int := 0;
BEGIN
	FOR f IN
		SELECT 'function' AS kind, format('%I.%I', n.nspname, p.proname) AS name, p.oid::regprocedure::text AS sig,
		       p.pronargs - p.pronargdefaults AS nreq, p.proargtypes, p.proargnames
		  FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid JOIN pg_namespace n ON n.oid = p.pronamespace
		 WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'kernelindex')
		   AND p.prokind = 'f' AND p.prorettype NOT IN ('trigger'::regtype, 'internal'::regtype)
		   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a
		                                     WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))
		UNION ALL
		SELECT 'view', format('%I.%I', n.nspname, c.relname), c.relname, 0, NULL, NULL
		  FROM pg_depend d JOIN pg_class c ON c.oid = d.objid JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e' AND c.relkind IN ('v', 'm')
		   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'kernelindex')
		 ORDER BY 1, 3
	LOOP
		IF f.kind = 'function' THEN
			SELECT coalesce(string_agg(
			         CASE WHEN t IN ('text'::regtype, 'name'::regtype) THEN quote_literal(
			                CASE WHEN a ~ 'digest|^run|^a$|^b$|^reported|^reference' THEN run
			                     WHEN a ~ 'operation|^op$' THEN op
			                     WHEN a ~ 'baseline' THEN other
			                     WHEN a ~ 'candidate|implementation|^impl' THEN impl
			                     WHEN a ~ 'mode' THEN 'forward'
			                     WHEN a ~ 'environment|device' THEN env
			                     WHEN a ~ 'kind' THEN 'records'
			                     ELSE op END) || '::' || t::text
			              WHEN t IN ('json'::regtype, 'jsonb'::regtype) THEN quote_literal(manifest) || '::' || t::text
			              WHEN t IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype,
			                         'float4'::regtype, 'float8'::regtype) THEN '1::' || t::text
			              WHEN t = 'bool'::regtype THEN 'false'
			              WHEN t = 'interval'::regtype THEN '''1 day''::interval'
			              WHEN t = 'timestamptz'::regtype THEN 'now()'
			              WHEN t = 'text[]'::regtype THEN 'ARRAY[' || quote_literal(run) || ']'
			              ELSE 'NULL::' || t::text END, ', ' ORDER BY i), '')
			  INTO args
			  FROM unnest(f.proargtypes::regtype[], coalesce(f.proargnames, '{}'::text[])) WITH ORDINALITY x(t, a, i)
			 WHERE i <= f.nreq;
		END IF;
		BEGIN
			IF f.kind = 'function' THEN
				EXECUTE format('SELECT count(*) FROM %s(%s)', f.name, args);
			ELSE
				EXECUTE format('SELECT count(*) FROM %s', f.name);
			END IF;
			n_ok := n_ok + 1;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
			IF state IN ('25006', '0A000', '55000', '25P02', '42P16') OR msg ~* 'recovery|read-only|standby' THEN
				n_bad := n_bad + 1;
				RAISE NOTICE 'not ok - % % on the standby: % (%)', f.kind, f.sig, msg, state;
			ELSE
				n_other := n_other + 1;
				RAISE NOTICE '# % %: % (%)', f.kind, f.sig, msg, state;
			END IF;
		END;
	END LOOP;
	RAISE NOTICE 'counts % % %', n_ok, n_other, n_bad;
END
$check$;
SQL
)
printf '%s\n' "$out" | sed -n 's/^NOTICE:  \(not ok - .*\)$/\1/p; s/^NOTICE:  \(# .*\)$/\1/p'
counts=$(printf '%s\n' "$out" | sed -n 's/^NOTICE:  counts //p')
read -r n_ok n_other n_bad <<<"${counts:-0 0 -1}"
ok "$n_bad" 0 "no read function or view fails on the standby ($n_ok ran, $n_other refused their sample arguments)"
[ "${n_ok:-0}" -gt 50 ] && echo "ok - more than 50 read functions and views ran on the standby" ||
  { echo "not ok - more than 50 read functions and views ran on the standby ($n_ok)"; printf '%s\n' "$out" | grep -v '^NOTICE' | head -5 | sed 's/^/# /'; }
ok "$(qs "SELECT count(*) FROM kbench_workers WHERE state <> 'stopped'")" 0 "no worker runs on the standby"
