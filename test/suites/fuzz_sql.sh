#!/usr/bin/env bash
# fuzz_sql.sh: every function, aggregate and procedure of the extension (listed
# from pg_proc through pg_depend: nothing is hand-listed; trigger functions
# excepted, they cannot be called) called with NULLs, empty and 1 MB strings,
# deep JSON, extreme numbers (0, -1, 2^31, 2^63-1, -2^63), NaN and infinities,
# JSON of the wrong type, odd intervals, timestamps and arrays (2-D, lower
# bounds other than 1, NULL elements), by four roles: the superuser (every
# call), a kbench_admin, a kbench_user and a role with no grants (a short set
# each: all NULL, the base call, each argument NULL alone and alone, a few
# random calls), one session a role.  Errors are expected; crashes are not:
# after each batch (one function, one role) the session is still connected (a
# crash ends every backend) and the postmaster's pid is unchanged; at the end
# no process was "terminated by signal" and the server answers.  A crash names
# its call (the markers test/lib/fuzz_sql.py writes), the server restarts and
# the fuzzing goes on.  One TAP line a function.
# The calls are fixed by count and a seed (test/lib/fuzz_sql.py; FUZZ_SQL_SEED,
# default 24; FUZZ_SQL_RANDOM random calls a function, default 12), not by
# the clock.  The server preloads the library with kernelindex.devices = none:
# the shared memory, the queue and every C path are there, but no worker runs
# a job, so nothing the fuzzer queues runs long; the jobs queued are
# cancelled after each batch.  statement_timeout = 1s (the fuzzing sessions')
# only turns a call that waits (kbench_bench on a job no worker takes) or takes
# long (a window of 2^31 points) into an error; the summary names them.
# FUZZ_SQL_ONLY=REGEX fuzzes only the functions whose signature matches.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'fuzz'" "kernelindex.devices = 'none'" \
  "log_min_messages = log" "log_min_error_statement = panic" ||
  { echo "not ok - the cluster starts"; exit 1; }
TMP=$(mktemp -d /tmp/kernelindex-fuzzsql.XXXXXX); chmod 755 "$TMP"
trap 'ki_cluster_stop; rm -rf "$TMP"' EXIT
LOG=$KI_CLUSTER_DIR/server.log
export PGDATABASE=fuzz
q() { psql -X -At -q -c "$1" 2>&1; }
createdb fuzz && q "CREATE EXTENSION kernelindex" >/dev/null || { echo "not ok - the extension is created"; exit 1; }
# something to find (kept small: the analytics read all of it at each call): the first 80 lines
# of the Liger history, one job queued and cancelled
head -81 data/liger/all_benchmark_data.csv >"$TMP/liger.csv"; chmod a+r "$TMP/liger.csv"
q "SELECT lines FROM kbench_import_liger(pg_read_file('$TMP/liger.csv'))" >/dev/null
q "SELECT kbench_cancel(kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}'))" >/dev/null
q "CREATE ROLE fuzz_admin LOGIN IN ROLE kbench_admin; CREATE ROLE fuzz_user LOGIN IN ROLE kbench_user;
   CREATE ROLE fuzz_nobody LOGIN" >/dev/null
ROLES="postgres fuzz_admin fuzz_user fuzz_nobody"

# the extension's routines: oid, kind, name, signature, variadic, then each argument of a call as type:mode
psql -X -At -F $'\t' -q >"$TMP/functions.tsv" <<'SQL'
SELECT p.oid, p.prokind, quote_ident(n.nspname) || '.' || quote_ident(p.proname), p.oid::regprocedure::text,
       p.provariadic <> 0,
       coalesce((SELECT string_agg(format_type(t, NULL) || ':' || m::text, E'\t' ORDER BY i)
                 FROM unnest(coalesce(p.proallargtypes, p.proargtypes::oid[]),
                             coalesce(p.proargmodes, array_fill('i'::"char", ARRAY[p.pronargs]))) WITH ORDINALITY a(t, m, i)
                 WHERE m IN ('i', 'b', 'v') OR (m = 'o' AND p.prokind = 'p')), '')
FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid AND e.extname = 'kernelindex'
WHERE p.prorettype <> 'trigger'::regtype AND p.prorettype <> 'event_trigger'::regtype
ORDER BY p.proname, p.oid::regprocedure::text;
SQL
total=$(wc -l <"$TMP/functions.tsv")
nc=$(q "SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_extension e ON d.refobjid = e.oid AND e.extname = 'kernelindex' WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')")
[ "$total" -gt 100 ] && [ "$nc" -gt 20 ] && echo "ok - the fuzzer lists the extension's routines from pg_proc: $total ($nc in C)" ||
  echo "not ok - the fuzzer lists the extension's routines from pg_proc (got $total, $nc in C)"
python3 test/lib/fuzz_sql.py "$TMP" "${FUZZ_SQL_SEED:-24}" <"$TMP/functions.tsv" ||
  { echo "not ok - test/lib/fuzz_sql.py writes the calls"; exit 1; }

DATA=$KI_CLUSTER_DIR/data
pm=$(head -1 "$DATA/postmaster.pid")
# after each batch, inside the session: is the postmaster the one that started?
check() { echo "test \"\$(head -1 '$DATA/postmaster.pid')\" = '$pm' || echo 'POSTMASTER CHANGED' >&2" >"$TMP/check.sh"; }
check
if [ -n "${FUZZ_SQL_ONLY:-}" ]; then awk -F'\t' -v re="$FUZZ_SQL_ONLY" '$2 ~ re' "$TMP/index.tsv" >"$TMP/todo.tsv"
else cp "$TMP/index.tsv" "$TMP/todo.tsv"; fi
fuzzed=$(wc -l <"$TMP/todo.tsv")
# script ROLE FROM: the batches (one a function) from the FROM-th on, as ROLE makes them; the
# markers (\warn) go to stderr with the errors, in order.  The superuser makes every call; the
# other roles the short set (fuzz_sql.py): all NULL, the base call, each argument NULL alone and
# alone, a few random calls.
script() {
  local role=$1 from=$2 i=0 oid sig nfull nshort
  while IFS=$'\t' read -r oid sig nfull nshort; do
    i=$((i + 1)); [ "$i" -lt "$from" ] && continue
    echo "\\warn FN $i"
    case $role in postgres) cat "$TMP/$oid.sql" ;; *) cat "$TMP/$oid.short.sql" ;; esac
    echo "\\warn END $i"
    # nothing the batch queued is left for a later call to wait for
    echo "SELECT count(kbench_cancel(id)) FROM kbench_jobs WHERE status IN ('queued', 'running');"
    echo "\\! sh $TMP/check.sh"
  done <"$TMP/todo.tsv"
}
declare -A bad
calls=0; crashed=0; timeouts=0
for role in $ROLES; do
  from=1
  while :; do
    script "$role" "$from" >"$TMP/script.sql"
    PGOPTIONS="-c statement_timeout=1s" psql -X -q -U "$role" -v ON_ERROR_STOP=0 -f "$TMP/script.sql" >/dev/null 2>"$TMP/err" </dev/null
    rc=$?
    cat "$TMP/err" >>"$TMP/err.all"
    last=$(grep -E '^FN [0-9]+$' "$TMP/err" | tail -1 | cut -d' ' -f2)
    if [ "$rc" -ge 2 ] || grep -q 'POSTMASTER CHANGED' "$TMP/err"; then
      # the connection was lost: the batch that was running crashed the server
      call=$(grep -E '^CALL [0-9]+$' "$TMP/err" | tail -1 | cut -d' ' -f2)
      IFS=$'\t' read -r oid sig _ _ < <(sed -n "${last:-1}p" "$TMP/todo.tsv")
      case $role in postgres) file=$TMP/$oid.sql ;; *) file=$TMP/$oid.short.sql ;; esac
      bad[$last]="${bad[$last]:-}; as $role, call ${call:-?}: $(sed -n "$((2 * ${call:-0}))p" "$file" | cut -c1-300)"
      bad[$last]="${bad[$last]} ($(grep -E 'terminated by signal' "$LOG" | tail -1 | sed 's/.*\(terminated by signal [0-9]*\).*/\1/'))"
      crashed=$((crashed + 1))
      # the server restarts after a crash (restart_after_crash); a cluster that stays down is started
      wait_for "SELECT true" 60 ||
        { ki_as_owner pg_ctl -D "$DATA" -l "$LOG" -w -t 120 start >/dev/null 2>&1; wait_for "SELECT true" 60; }
      pm=$(head -1 "$DATA/postmaster.pid" 2>/dev/null); check
      from=$((${last:-1} + 1))
      [ "$from" -le "$fuzzed" ] && continue
    fi
    break
  done
done
i=0
while IFS=$'\t' read -r oid sig nfull nshort; do
  i=$((i + 1))
  calls=$((calls + nfull + 3 * nshort))
  if [ -z "${bad[$i]:-}" ]; then
    echo "ok - fuzz $sig: $nfull calls by the superuser, $nshort by each of a kbench_admin, a kbench_user and a role with no grants, the server stays up"
  else echo "not ok - fuzz $sig: the server crashed${bad[$i]}"; fi
done <"$TMP/todo.tsv"
timeouts=$(grep -c 'canceling statement due to statement timeout' "$TMP/err.all")
slow=$(awk '/^FN [0-9]+$/ {f = $2} /canceling statement due to statement timeout/ {print f}' "$TMP/err.all" | sort -un |
  while read -r n; do sed -n "${n}p" "$TMP/todo.tsv" | cut -f2 | sed 's/(.*//'; done | sort -u | tr '\n' ' ')
ok "$(q "SELECT true")" t "after $calls calls of $fuzzed routines: the server answers"
ok "$(head -1 "$DATA/postmaster.pid") $(grep -cE 'terminated by signal' "$LOG")" "$pm 0" \
  "... the postmaster is the one that started (pid $pm) and no process was terminated by a signal"
echo "# fuzz_sql: $fuzzed routines, $calls calls, $crashed crashed the server; $timeouts calls stopped by statement_timeout, in: $slow"
