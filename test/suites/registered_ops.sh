#!/usr/bin/env bash
# registered_ops.sh: a user's own operation registered from SQL (issue 26
# item 4, src/operations.c, docs/OPERATIONS.md "Registering an operation"),
# through the CPU worker: kbench_register_operation (kbench_admin only, from
# kernelindex.implementation_directory) stores the definition and its
# reference with their sha256; the operation then queues, runs and passes
# with a registered implementation, in the WorkloadCase digest that
# `kbench describe --op-file` gives; a wrong implementation fails; every bad
# definition of test/operations/user/bad_defs.py is refused naming its field
# and leaves nothing behind; files outside the directory, or reached through
# a symbolic link, are refused; the registry of a backend follows
# transactions (a rolled-back registration is gone, another session's
# commit is seen, an unregistered operation is unknown again); what runs is
# the reference as registered, not the file as it is later; kbench_bench,
# kbench_sweep_run, kbench_compare and kbench_reproduce work for it and for a
# built-in operation defined as data (issue 26 item 5).  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
KB=kernels/kbench
source test/lib/tap.sh
require_torch "$PY"
source bin/pgcluster.sh
UD=test/operations/user
DIR=$(mktemp -d /tmp/kbench-regop.XXXXXX)
OUTSIDE=$(mktemp -d /tmp/kbench-regop-outside.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$DIR" "$OUTSIDE"' EXIT
cp $UD/affine.json $UD/affine_ref.py $UD/affine_impl.py "$DIR/"
mkdir "$DIR/bad"
cp $UD/affine_ref.py "$OUTSIDE/"
chmod -R a+rwX "$DIR" "$OUTSIDE"

ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.python = '$PY'" \
                 "kernelindex.implementation_directory = '$DIR'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
qe() { psql -X -At -q -v ON_ERROR_STOP=1 "$@" 2>&1; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
WL='{"rows": 64, "cols": 32, "dtype": "fp32"}'
q "CREATE ROLE op_user LOGIN; GRANT kbench_user TO op_user; CREATE ROLE op_admin LOGIN; GRANT kbench_admin TO op_admin" >/dev/null
admin() { qe -U op_admin -c "$1"; }
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
run() {
  JOB=$(q "SELECT kbench_run($1)") || { RES="queue-error"; JOB=0; return; }
  wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" "${2:-120}" || { RES="still-running"; return; }
  RES=$(q "SELECT status || ' ' || coalesce(run_status::text, '-') FROM kbench_jobs WHERE id = $JOB")
}

echo "# before registration the operation is unknown"
out=$(qe -c "SELECT kbench_run('affine', 'forward', '$WL', implementation => 'torch')")
has "$out" "unknown operation 'affine'" "an operation nobody registered is refused at queue time"

echo "# who may register"
out=$(qe -U op_user -v VERBOSITY=verbose -c "SELECT kbench_register_operation('$DIR/affine.json')")
has "$out" "42501" "a role outside kbench_admin may not register an operation (insufficient_privilege)"
has "$out" "GRANT kbench_admin TO op_user" "... and the hint gives the GRANT that lets it"
out=$(qe -U op_user -c "SELECT _kernelindex.register_operation('$DIR/affine.json')")
has "$out" "permission denied for function register_operation" "the registration behind the front is EXECUTE for kbench_admin only"
out=$(qe -U op_user -c "INSERT INTO kbench_registered_operations (name, definition, definition_digest, source_file, registered_by) VALUES ('x', '{}', 'sha256:0', '/x', 'op_user')")
has "$out" "permission denied for table kbench_registered_operations" "nobody writes the table but the registration"
ok "$(qe -U op_user -c "SELECT count(*) FROM kbench_registered_operations")" 0 "everyone reads it (nothing registered yet)"

echo "# where from"
out=$(admin "SELECT kbench_register_operation('$OUTSIDE/affine_ref.py')")
has "$out" "is not under kernelindex.implementation_directory" "a definition outside the directory is refused"
out=$(admin "SELECT kbench_register_operation('affine.json')")
has "$out" "must be absolute" "a relative path is refused"
sed "s|\"affine_ref.py\"|\"$OUTSIDE/affine_ref.py\"|" $UD/affine.json > "$DIR/bad/outside_ref.json"
out=$(admin "SELECT kbench_register_operation('$DIR/bad/outside_ref.json')")
has "$out" "is not under kernelindex.implementation_directory" "a reference.file outside the directory is refused (its bytes would be stored)"
ln -s "$OUTSIDE/affine_ref.py" "$DIR/bad/linked_ref.py"
sed 's/"affine_ref.py"/"linked_ref.py"/' $UD/affine.json > "$DIR/bad/linked.json"
out=$(admin "SELECT kbench_register_operation('$DIR/bad/linked.json')")
has "$out" "symbolic link" "a reference.file reached through a symbolic link is refused"
echo "# what is not text, or over 1 MiB, is refused before it is parsed (SQL and kbench --op-file alike)"
printf '{"name": "affine",\0 "x": 1}' > "$DIR/bad/nul.json"
{ cat $UD/affine.json; head -c 1048577 /dev/zero | tr '\0' ' '; } > "$DIR/bad/big.json"
cp $UD/affine_ref.py "$DIR/bad/nul_ref.py"; printf '\0' >> "$DIR/bad/nul_ref.py"
sed 's/"affine_ref.py"/"nul_ref.py"/' $UD/affine.json > "$DIR/bad/nulref.json"
{ cat $UD/affine_ref.py; head -c 1048577 /dev/zero | tr '\0' '#'; } > "$DIR/bad/big_ref.py"
sed 's/"affine_ref.py"/"big_ref.py"/' $UD/affine.json > "$DIR/bad/bigref.json"
chmod a+r "$DIR"/bad/*
for c in "nul|the definition $DIR/bad/nul.json is not text (it holds a NUL byte)|the definition '$DIR/bad/nul.json' is not text (it holds a NUL byte)" \
         "big|the definition $DIR/bad/big.json is over 1 MiB|the definition '$DIR/bad/big.json' is over 1 MiB" \
         "nulref|reference.file $DIR/bad/nul_ref.py is not text (it holds a NUL byte)|reference.file '$DIR/bad/nul_ref.py' is not text (it holds a NUL byte)" \
         "bigref|reference.file $DIR/bad/big_ref.py is over 1 MiB|reference.file '$DIR/bad/big_ref.py' is over 1 MiB"; do
  IFS='|' read -r f sql cli <<<"$c"
  has "$(admin "SELECT kbench_register_operation('$DIR/bad/$f.json')")" "$sql" "kbench_register_operation refuses $f.json: $sql"
  has "$($KB --op-file "$DIR/bad/$f.json" list 2>&1)" "$cli" "kbench --op-file refuses $f.json: $cli"
done
# exactly 1 MiB is taken (the bound is inclusive): the definition padded with spaces to 1,048,576 bytes
{ cat $UD/affine.json; head -c $((1048576 - $(stat -c %s $UD/affine.json))) /dev/zero | tr '\0' ' '; } > "$DIR/bad/mib.json"
cp $UD/affine_ref.py "$DIR/bad/"
has "$($KB --op-file "$DIR/bad/mib.json" list 2>&1)" "affine " "a definition of exactly 1 MiB is taken (kbench --op-file lists it)"
ok "$(q "SELECT count(*) FROM kbench_registered_operations")" 0 "nothing was registered by the refusals"

echo "# every bad definition is refused, naming the field, and leaves nothing"
cp $UD/affine_ref.py "$DIR/bad/"
n=0
while IFS='|' read -r f want; do
  case "$f" in
    # the same faults, as a registration reads files: under the directory, without a symbolic link
    */reference_file_missing.json) want="cannot open $DIR/bad/no_such_ref.py: No such file or directory";;
    */reference_function_missing.json)
      sed -i "s|\"file\": \"[^\"]*\"|\"file\": \"$DIR/bad/affine_ref.py\"|" "$f"
      want="reference.python: $DIR/bad/affine_ref.py defines no 'affinez' at its top level";;
  esac
  out=$(admin "SELECT kbench_register_operation('$f')"); n=$((n + 1))
  has "$out" "$want" "kbench_register_operation refuses a definition $(basename "$f" .json | tr _ ' '): $want"
done < <($PY $UD/bad_defs.py "$DIR/bad")
chmod -R a+rX "$DIR"
ok "$([ $n -ge 20 ] && echo many)" many "the bad definitions were all tried ($n)"
ok "$(q "SELECT count(*) FROM kbench_registered_operations") $(q "SELECT count(*) FROM kbench_operation_costs WHERE operation = 'affine'")" "0 0" \
   "nothing half-registered remains: no row, no cost"

echo "# a rolled-back registration is gone from the backend that made it"
out=$(qe -U op_admin <<EOF
BEGIN;
SELECT kbench_register_operation('$DIR/affine.json');
SELECT count(*) FROM kbench_device_operations WHERE operation = 'affine';
ROLLBACK;
SELECT count(*) FROM kbench_device_operations WHERE operation = 'affine';
SELECT kbench_run('affine', 'forward', '$WL', implementation => 'torch');
EOF
)
has "$(echo "$out" | head -3 | tr '\n' ' ')" "affine 1 0" "inside the transaction the operation is listed; after ROLLBACK the same session lists it no more"
has "$out" "unknown operation 'affine'" "... and refuses to queue it"

echo "# registered"
ok "$(admin "SELECT kbench_register_operation('$DIR/affine.json')")" affine "kbench_admin registers affine.json; the name is returned"
ok "$(q "SELECT definition_digest = 'sha256:$(sha256sum $DIR/affine.json | cut -c1-64)' AND reference_digest = 'sha256:$(sha256sum $DIR/affine_ref.py | cut -c1-64)' AND source_file = '$DIR/affine.json' AND reference_file = '$DIR/affine_ref.py' AND registered_by = 'op_admin' FROM kbench_registered_operations WHERE name = 'affine'")" t \
   "the row records both files' sha256, where they were read and who registered them"
ok "$(q "SELECT definition = pg_read_file('$DIR/affine.json') AND reference_source = pg_read_file('$DIR/affine_ref.py') FROM kbench_registered_operations")" t \
   "and their texts, byte for byte"
ok "$(q "SELECT string_agg(mode || ':' || flops, ' ' ORDER BY mode) FROM kbench_operation_costs WHERE operation = 'affine'")" \
   "backward:4 * rows * cols forward:2 * rows * cols full:6 * rows * cols" "its cost texts are the roofline's (kbench_operation_costs)"
ok "$(q "SELECT count(*) > 0 FROM kbench_device_operations WHERE operation = 'affine'")" t "kbench_device_operations lists the registered operation"
out=$(qe -c "SELECT kbench_run('affine', 'forward', '$WL', implementation => 'huggingface')")
has "$out" "affine has no built-in 'huggingface' implementation: it is a user's operation" \
  "a built-in baseline name is refused at queue time for a registered operation (kbench's baselines are for its own definitions)"
out=$(admin "SELECT kbench_register_implementation('affine-honest', 'affine', 'python:$DIR/affine_impl.py:honest', '1')")
has "$out" "sha256:" "an implementation of it registers (its ImplementationRevision names the registered OperationSpec)"
admin "SELECT kbench_register_implementation('affine-no-bias', 'affine', 'python:$DIR/affine_impl.py:no_bias', '1')" >/dev/null

echo "# it runs through the worker, in the digest kbench --op-file gives"
for m in forward backward full; do
  run "'affine', '$m', '$WL', implementation => 'affine-honest', protocol => '$TINY'"
  ok "$RES" "passed passed" "the registered affine $m runs through the CPU worker and passes its float64 reference"
done
want=$($KB describe affine full rows=64 cols=32 dtype=fp32 --impl python:$DIR/affine_impl.py:honest --op-file $DIR/affine.json --json 2>/dev/null |
       $PY -c 'import json,sys; d=json.load(sys.stdin)["digests"]; print(d["workload"], d["operation"])' 2>/dev/null)
ok "$(q "SELECT r.workload_digest || ' ' || (w.manifest::jsonb->'spec'->>'operationSpecDigest') FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_workloads w ON w.digest = r.workload_digest WHERE j.id = $JOB")" "$want" \
   "its run's WorkloadCase and OperationSpec digests are kbench describe --op-file's"
run "'affine', 'backward', '$WL', implementation => 'affine-no-bias', protocol => '$TINY'"
ok "$RES" "failed incorrect_numerical" "a wrong implementation of the registered operation fails its check"

echo "# the other entry points work for operations defined as data (issue 26 item 5): kbench_bench, kbench_sweep_run, kbench_compare, kbench_reproduce"
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CALL kbench_bench('affine', 'full', '$WL', implementation => 'affine-honest', protocol => '$TINY')" | cut -d'|' -f2,3)" "passed|passed" \
   "kbench_bench runs the registered operation and waits for it"
ok "$(psql -X -At -q -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "CALL kbench_bench('rms_norm', 'backward', '{\"rows\": 32, \"hidden\": 64}', implementation => 'torch', protocol => '$TINY')" | cut -d'|' -f2,3)" "passed|passed" \
   "kbench_bench runs a built-in operation defined as data (rms_norm, torch)"
jobs=$(q "SELECT string_agg(j::text, ',') FROM kbench_sweep_run('affine', 'forward', '{\"rows\": [16, 32], \"cols\": [8]}', ARRAY['affine-honest'], protocol => '$TINY') j")
wait_for "SELECT count(*) = 0 FROM kbench_jobs WHERE id IN ($jobs) AND status IN ('queued', 'running')" 180
ok "$(q "SELECT count(*) FILTER (WHERE status = 'passed') || ' of ' || count(*) FROM kbench_jobs WHERE id IN ($jobs)")" "2 of 2" \
   "kbench_sweep_run queues the registered operation's grid and every job passes"
cmp=$(q "SELECT kbench_compare('affine', 'backward', '$WL', 'affine-honest', 'affine-no-bias', rounds => 3, protocol => '$TINY')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_comparison($cmp)" 180
ok "$(q "SELECT status FROM kbench_comparison($cmp)")" failed "kbench_compare of the registered operation checks both sides: B (no bias) fails it"
cmp=$(q "SELECT kbench_compare('rms_norm', 'forward', '{\"rows\": 32, \"hidden\": 64}', 'torch', 'huggingface', rounds => 3, protocol => '$TINY')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_comparison($cmp)" 180
ok "$(q "SELECT status || ' ' || (a_run IS NOT NULL AND b_run IS NOT NULL) FROM kbench_comparison($cmp)")" "done true" \
   "kbench_compare of a built-in operation defined as data times both sides and stores both runs"
rrun=$(q "SELECT r.digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.operation = 'affine' AND j.status = 'passed' ORDER BY j.id LIMIT 1")
job=$(q "SELECT kbench_reproduce('$rrun', 'cpu')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 180
ok "$(q "SELECT j.status || ' ' || coalesce(x.verified::text, '-') FROM kbench_jobs j LEFT JOIN kbench_reproductions x ON x.job_id = j.id WHERE j.id = $job")" "passed true" \
   "kbench_reproduce re-runs a run of the registered operation on the same device class: verified"

echo "# what runs is the reference as registered"
cat > "$DIR/affine_ref.py" <<'EOF'
def affine(inputs, scalars):
    return {"y": inputs["x"] * inputs["w"]}
EOF
run "'affine', 'forward', '$WL', implementation => 'affine-honest', protocol => '$TINY'"
ok "$RES" "passed passed" "a reference file changed after registration does not reach the runs"
ok "$(admin "SELECT kbench_register_operation('$DIR/affine.json')")" affine "registering it again takes the changed file"
ok "$(q "SELECT reference_digest = 'sha256:$(sha256sum $DIR/affine_ref.py | cut -c1-64)' FROM kbench_registered_operations")" t "... with its new digest"
run "'affine', 'forward', '$WL', implementation => 'affine-honest', protocol => '$TINY'"
ok "$RES" "failed incorrect_numerical" "the worker runs the re-registered reference (it forgot the old one): the honest affine now differs from it"
cp $UD/affine_ref.py "$DIR/"
admin "SELECT kbench_register_operation('$DIR/affine.json')" >/dev/null
run "'affine', 'forward', '$WL', implementation => 'affine-honest', protocol => '$TINY'"
ok "$RES" "passed passed" "registered once more with the right reference, it passes again"

echo "# another session's change is seen without reconnecting"
out=$(qe <<EOF
SELECT count(*) > 0 FROM kbench_device_operations WHERE operation = 'affine';
\! psql -X -At -q -U op_admin -c "SELECT kbench_unregister_operation('affine')"
SELECT count(*) > 0 FROM kbench_device_operations WHERE operation = 'affine';
SELECT kbench_run('affine', 'forward', '$WL', implementation => 'affine-honest');
EOF
)
has "$(echo "$out" | head -3 | tr '\n' ' ')" "t t f" "a session that listed affine no longer does once another unregistered it"
has "$out" "unknown operation 'affine'" "... and refuses to queue it"
ok "$(q "SELECT count(*) FROM kbench_operation_costs WHERE operation = 'affine'")" 0 "unregistering takes its costs out"
ok "$(admin "SELECT kbench_unregister_operation('affine')")" f "unregistering what is not registered says false"
ok "$(q "SELECT count(*) >= 7 FROM kbench_runs r JOIN kbench_jobs j ON j.run_digest = r.digest WHERE j.operation = 'affine'")" t "its runs stay"
out=$(qe -U op_user -c "SELECT kbench_unregister_operation('affine')")
has "$out" "not a member of kbench_admin" "a role outside kbench_admin may not unregister"
out=$(admin "SELECT kbench_register_operation(NULL)")
has "$out" "must not be null" "a NULL path is refused"

echo "# the statement each call keeps (src/kept_plans.c) follows the extension into another schema"
createdb kbench_moved >/dev/null 2>&1
out=$(psql -X -At -q -d kbench_moved 2>&1 <<'SQL'
CREATE SCHEMA first_home;
CREATE EXTENSION kernelindex SCHEMA first_home;
SELECT 'first ' || (jsonb_typeof(first_home.kbench_registry()) IS NOT NULL);
DROP EXTENSION kernelindex CASCADE;
CREATE SCHEMA second_home;
CREATE EXTENSION kernelindex SCHEMA second_home;
SELECT 'second ' || (jsonb_typeof(second_home.kbench_registry()) IS NOT NULL);
SQL
)
ok "$(grep -E '^(first|second) |ERROR' <<<"$out" | tr '\n' ' ')" "first true second true " \
  "one session reads the registered operations after the extension moved to another schema"
dropdb kbench_moved >/dev/null 2>&1
