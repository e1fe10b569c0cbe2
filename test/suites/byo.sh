#!/usr/bin/env bash
# byo.sh: implementations other than kbench's own (issue 14), on the CPU,
# through the background worker: the huggingface LayerNorm backward at the
# seed's shape lands in the seed's workload with a passed check; torch's
# jsd; a registered python file and a registered C library run; a wrong one
# gives incorrect_numerical; one that raises, crashes, hangs or writes
# garbage on the protocol gives a failed run and leaves the worker healthy;
# registration is for kbench_admin only, from the allowed directory; a
# missing interpreter is refused at queue time; every run carries
# peak_memory; a registered file swapped, changed or reached through a
# symbolic link after registration does not run (issue 24); code that
# replaces the clocks, or a child whose answers lie about the time, does not
# get a fake median (issue 24).  Needs Debian's python3-torch
# (/usr/bin/python3).  TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
PY=/usr/bin/python3
source test/lib/tap.sh
require_torch "$PY"
source bin/pgcluster.sh
IMPL_DIR=$(mktemp -d /tmp/kbench-byo.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$IMPL_DIR"' EXIT
chmod 755 "$IMPL_DIR"
cp test/byo/impls.py "$IMPL_DIR/"
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Ikernels -o "$IMPL_DIR/libln.so" test/byo/ln_lib.c -lm ||
  { echo "not ok - the test library builds"; exit 1; }
mkdir "$IMPL_DIR/elsewhere" && cp test/byo/impls.py "$IMPL_DIR/elsewhere/"
chmod -R a+rX "$IMPL_DIR"
OUTSIDE=$(mktemp -d /tmp/kbench-byo-outside.XXXXXX); cp test/byo/impls.py "$OUTSIDE/"; chmod -R a+rX "$OUTSIDE"
trap 'ki_cluster_stop; rm -rf "$IMPL_DIR" "$OUTSIDE"' EXIT

ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" "kernelindex.python = '$PY'" \
                 "kernelindex.implementation_directory = '$IMPL_DIR'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
qe() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1" 2>&1; }
T0=$(date +%s)
section() { echo "# $(( $(date +%s) - T0 )) s: $1"; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
SMALL='{"rows": 64, "hidden": 256, "dtype": "fp32"}'

wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE state = 'idle'" 30 || echo "# the worker did not start"
# run a job to its end: RES="status run_status", JOB its id
run() {
  JOB=$(q "SELECT kbench_run($1)") || { RES="queue-error"; JOB=0; return; }
  wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" "${2:-120}" || { RES="still-running"; return; }
  RES=$(q "SELECT status || ' ' || coalesce(run_status::text, '-') FROM kbench_jobs WHERE id = $JOB")
}
worker_pid() { q "SELECT pid FROM kbench_workers WHERE device = 'cpu'"; }
# after ALTER SYSTEM and pg_reload_conf(): until a new session has the setting (the postmaster
# reread the file), not a fixed sleep; a new session is what queues the next job
reloaded() { q "SELECT pg_reload_conf()" >/dev/null; wait_for "SELECT current_setting('$1') = '$2'" 30 || echo "# $1 not reloaded"; }
# until no process matches (pgrep -f) or at most $2 seconds: how many are left
left_after() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do [ "$(pgrep -xc -f "$1")" = 0 ] && break; sleep 0.1; done
  pgrep -xc -f "$1"
}

section "acceptance"
# --- THE acceptance test: huggingface LayerNorm backward at the seed's shape, in the seed's workload
seed=test/data/seeds/004_5d22a04506fce857.json
q "SELECT count(*) FROM kbench_ingest(pg_read_file('$(pwd)/$seed')::json)" >/dev/null 2>&1 ||
  psql -X -q -v ON_ERROR_STOP=1 -c "SELECT kbench_ingest(\$j\$$(cat $seed)\$j\$::json)" >/dev/null
pid0=$(worker_pid)
run "'layer_norm', 'backward', '{\"rows\": 4096, \"hidden\": 4096, \"dtype\": \"fp32\"}', implementation => 'huggingface', protocol => '$TINY'" 300
ok "$RES" "passed passed" "huggingface LayerNorm backward 4096x4096 fp32 runs through the CPU worker and passes its check"
hf=$JOB
ok "$(q "SELECT implementation_kind || ' ' || implementation FROM kbench_job_status WHERE id = $hf")" \
   "built-in $(q "SELECT i.name FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE j.id = $hf")" \
   "kbench_job_status names the built-in huggingface implementation that ran, and says it is built-in (issue 29)"
ok "$(q "SELECT r.workload_digest = s.workload_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest, kbench_runs s WHERE j.id = $hf AND s.name LIKE 'liger-layer-norm-backward-huggingface-%'")" t \
   "its run names the seed's WorkloadCase digest"
ok "$(q "SELECT i.name || ' ' || i.language FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE j.id = $hf")" \
   "kbench-python-huggingface-layer-norm python" "its ImplementationRevision is the python huggingface baseline"
ok "$(q "SELECT i.manifest->'spec'->'buildVariants'->0->'requirements' ? 'torch' FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest JOIN kbench_implementations i ON i.digest = r.implementation_digest WHERE j.id = $hf")" t \
   "the revision records the torch version the child imported"
ok "$(q "SELECT m.value > 3 * 4096 * 4096 * 4 FROM kbench_jobs j JOIN kbench_measurements m ON m.run_digest = j.run_digest WHERE j.id = $hf AND m.metric = 'peak_memory' AND m.unit = 'bytes'")" t \
   "the python run carries peak_memory in bytes (x, dy, dx at least)"

section "jsd"
# --- torch jsd, and a CPU builtin's peak_memory: every tensor and the workspace
run "'jsd', 'forward', '{\"tokens\": 32, \"vocab\": 512, \"dtype\": \"fp32\"}', implementation => 'torch', protocol => '$TINY'"
ok "$RES" "passed passed" "torch jsd forward runs through the worker and passes"
run "'layer_norm', 'backward', '$SMALL', protocol => '$TINY'"
cpu_run=$(q "SELECT run_digest FROM kbench_jobs WHERE id = $JOB")
ok "$(q "SELECT m.value FROM kbench_jobs j JOIN kbench_measurements m ON m.run_digest = j.run_digest WHERE j.id = $JOB AND m.metric = 'peak_memory'")" \
   "$(( (3*64*256 + 4*256) * 4 + 2*256*8 ))" "a cpu run's peak_memory is by the one rule (issue 29): its inputs (x, weight, bias, dy), the outputs compared (dx, dweight, dbias) and its workspace (dw, db partial sums in double), in bytes"

# --- bf16 baselines on the CPU (issue 29 item 9): pass under the derived tolerance, or refused when queued
out=$(qe "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 64, \"hidden\": 256, \"dtype\": \"bf16\"}', implementation => 'huggingface', protocol => '$TINY')")
has "$out" "layer_norm's huggingface baseline in bf16 on the CPU misses kbench's derived tolerance" \
   "huggingface's LayerNorm in bf16 on the CPU is refused at queue time, with the reason"
has "$out" "run it in fp32 on the CPU" "... and the way out"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status = 'queued'")" 0 "... and nothing is queued"
run "'rms_norm', 'forward', '{\"rows\": 64, \"hidden\": 256, \"dtype\": \"bf16\"}', implementation => 'huggingface', protocol => '$TINY'"
ok "$RES" "passed passed" "huggingface's RMSNorm in bf16 on the CPU passes under the derived tolerance"
run "'layer_norm', 'forward', '{\"rows\": 64, \"hidden\": 256, \"dtype\": \"bf16\"}', protocol => '$TINY'"
ok "$RES" "passed passed" "kbench's own LayerNorm in bf16 on the CPU passes"

section "registration"
# --- registration: kbench_admin only, from the allowed directory
q "CREATE ROLE byo_user LOGIN; GRANT kbench_user TO byo_user; CREATE ROLE byo_admin LOGIN; GRANT kbench_admin TO byo_admin;
   GRANT EXECUTE ON FUNCTION kbench_run(text, text, jsonb, text, text, jsonb, interval, boolean, float8) TO kbench_user" >/dev/null
out=$(psql -X -At -q -v VERBOSITY=verbose -U byo_user -c "SELECT kbench_register_implementation('mine', 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" 'ERROR:  42501: permission denied to register code: role "byo_user" is not a member of kbench_admin' "a kbench_user cannot register code: 42501, and the error names the role needed"
has "$out" "HINT:  A superuser (or an admin of kbench_admin) grants it: GRANT kbench_admin TO byo_user;" "and its hint gives the GRANT that lets them (issue 29)"
out=$(psql -X -At -q -U byo_user -c "SELECT _kernelindex.register_implementation('mine', 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "permission denied for function register_implementation" "the registration behind it is still EXECUTE for kbench_admin only"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('mine', 'layer_norm', 'python:$OUTSIDE/impls.py:good')" 2>&1)
has "$out" "is not under kernelindex.implementation_directory" "code outside kernelindex.implementation_directory is refused"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('mine', 'layer_norm', 'python:$IMPL_DIR/elsewhere/../../$(basename "$OUTSIDE")/impls.py:good')" 2>&1)
has "$out" "is not under kernelindex.implementation_directory" "a path that leaves the directory through .. is refused"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('huggingface', 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "is the name of a built-in implementation" "a built-in name cannot be registered"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('mine', 'layer_norm', 'perl:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "must be python:/dir/file.py:function or library:/dir/libx.so:symbol" "an entry of another kind is refused"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('Mine!', 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "must be lower-case letters" "a name that cannot be a manifest name is refused"
reg() { psql -X -At -q -v ON_ERROR_STOP=1 -U byo_admin -c "SELECT kbench_register_implementation('$1', 'layer_norm', '$2', '1.0')" 2>&1; }
d_py=$(reg my-ln "python:$IMPL_DIR/impls.py:good")
case "$d_py" in sha256:*) echo "ok - kbench_admin registers a python file";; *) echo "not ok - kbench_admin registers a python file"; echo "# $d_py";; esac
ok "$(q "SELECT manifest->'spec'->'source'->>'contentDigest' = 'sha256:$(sha256sum "$IMPL_DIR/impls.py" | cut -d' ' -f1)' AND manifest->'spec'->'callable'->>'language' = 'python' AND version = '1.0' FROM kbench_implementations WHERE digest = '$d_py'")" t \
   "its ImplementationRevision records the file's sha256, the language and the version"
d_c=$(reg my-ln-c "library:$IMPL_DIR/libln.so:ln_good")
for n in wrong:wrong raises:raises crashes:crashes hangs:hangs garbage:garbage; do reg "py-${n%%:*}" "python:$IMPL_DIR/impls.py:${n#*:}" >/dev/null; done
reg c-wrong "library:$IMPL_DIR/libln.so:ln_wrong" >/dev/null; reg c-crash "library:$IMPL_DIR/libln.so:ln_crash" >/dev/null
reg c-hang "library:$IMPL_DIR/libln.so:ln_hang" >/dev/null
ok "$(q "SELECT count(*) FROM kbench_registered_implementations WHERE registered_by = 'byo_admin'")" 10 "ten implementations registered"
ok "$(q "SELECT other_implementations FROM kbench_device_operations WHERE device = 'cpu' AND operation = 'layer_norm'")" \
   "{huggingface,torch,liger,c-crash,c-hang,c-wrong,my-ln,my-ln-c,py-crashes,py-garbage,py-hangs,py-raises,py-wrong}" \
   "kbench_device_operations lists the built-in python implementations and the registered ones beside kbench's own"
ok "$(q "SELECT count(*) FROM kbench_device_operations WHERE operation = 'jsd' AND other_implementations <> '{huggingface,torch,liger}'")" 0 \
   "... and only the built-in ones for an operation nothing is registered for"

section "registered runs"
# --- registered code runs through the worker
run "'layer_norm', 'backward', '$SMALL', implementation => 'my-ln', protocol => '$TINY'"
ok "$RES" "passed passed" "a registered python file runs through the worker and passes"
ok "$(q "SELECT implementation_kind || ' ' || (implementation IS NOT NULL) || ' ' || shape FROM kbench_job_status WHERE id = $JOB")" \
   "registered true rows=64 hidden=256 fp32" "kbench_job_status says the job ran registered code, and its shape (issue 29)"
ok "$(q "SELECT r.implementation_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" "$d_py" \
   "its run names the registered revision"
run "'layer_norm', 'backward', '$SMALL', implementation => 'my-ln-c', protocol => '$TINY'"
ok "$RES" "passed passed" "a registered C library runs through the worker and passes"
ok "$(q "SELECT r.implementation_digest FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" "$d_c" \
   "its run names the registered library's revision"
run "'layer_norm', 'forward', '$SMALL', implementation => 'my-ln-c', protocol => '$TINY'"
ok "$RES" "passed passed" "the C library's forward (y, mean, rstd) passes too"
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-wrong', protocol => '$TINY'"
ok "$RES" "failed incorrect_numerical" "a wrong python implementation gives incorrect_numerical"
run "'layer_norm', 'backward', '$SMALL', implementation => 'c-wrong', protocol => '$TINY'"
ok "$RES" "failed incorrect_numerical" "a wrong C library gives incorrect_numerical"

section "swapped after registration"
# --- issue 24: a registered file is checked at every run, not once: opened without following a symbolic
# link anywhere on its path, under kernelindex.implementation_directory, with the sha256 recorded at
# registration; what runs is the bytes so checked.  Each attack below happens after registration.
for d in sw_dir sw_file sw_link sw_edit; do mkdir "$IMPL_DIR/$d" && cp test/byo/impls.py "$IMPL_DIR/$d/"; done
mkdir "$IMPL_DIR/sw_lib" "$IMPL_DIR/sw_libdir" && cp "$IMPL_DIR/libln.so" "$IMPL_DIR/sw_lib/" && cp "$IMPL_DIR/libln.so" "$IMPL_DIR/sw_libdir/"
# outside the directory: the same impls.py and libln.so (only the path check tells them apart), and code
# that leaves a mark when it runs
cp "$IMPL_DIR/libln.so" "$OUTSIDE/"
{ cat test/byo/impls.py; echo "open('$OUTSIDE/python-ran', 'w').close()"; } > "$OUTSIDE/evil.py"
printf '#include <stdio.h>\n__attribute__((constructor)) static void mark(void) { FILE *f = fopen("%s/library-ran", "w"); if (f) fclose(f); }\n' "$OUTSIDE" > "$OUTSIDE/mark.c"
cc -std=c11 -O2 -fPIC -shared -Ikernels -o "$OUTSIDE/libevil.so" test/byo/ln_lib.c "$OUTSIDE/mark.c" -lm
chmod -R a+rwX "$IMPL_DIR" "$OUTSIDE"
for d in sw_dir sw_file sw_link sw_edit; do reg "${d//_/-}" "python:$IMPL_DIR/$d/impls.py:good" >/dev/null; done
reg sw-lib "library:$IMPL_DIR/sw_lib/libln.so:ln_good" >/dev/null; reg sw-libdir "library:$IMPL_DIR/sw_libdir/libln.so:ln_good" >/dev/null
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-dir', protocol => '$TINY'"
ok "$RES" "passed passed" "a registered file runs as registered (before the attacks)"
# 1. the file's directory swapped for a symbolic link to a directory outside (holding the same file)
mv "$IMPL_DIR/sw_dir" "$IMPL_DIR/sw_dir.orig" && ln -s "$OUTSIDE" "$IMPL_DIR/sw_dir"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-dir', protocol => '$TINY'"
ok "${RES%% *}" failed "a registered file's directory swapped for a symbolic link to outside the directory: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "registered implementation 'sw-dir' does not run: $IMPL_DIR/sw_dir is a symbolic link now" \
    "... naming the implementation and the component that is a link"
# 2. the file swapped (renamed over) for another one that would leave a mark
cp "$OUTSIDE/evil.py" "$IMPL_DIR/sw_file/.new" && mv "$IMPL_DIR/sw_file/.new" "$IMPL_DIR/sw_file/impls.py"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-file', protocol => '$TINY'"
ok "${RES%% *}" failed "a registered file swapped for another: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "registered implementation 'sw-file' does not run: the content of $IMPL_DIR/sw_file/impls.py changed since it was registered ($(q "SELECT i.manifest->'spec'->'source'->>'contentDigest' FROM kbench_registered_implementations g JOIN kbench_implementations i ON i.digest = g.implementation_digest WHERE g.name = 'sw-file'") registered, sha256:$(sha256sum "$OUTSIDE/evil.py" | cut -d' ' -f1) now)" \
    "... naming both digests"
ok "$([ -e "$OUTSIDE/python-ran" ] && echo ran || echo no)" no "... and the swapped-in code did not run"
# 3. a symbolic link inside the tree, in the file's place, to a file outside (the same bytes)
rm "$IMPL_DIR/sw_link/impls.py" && ln -s "$OUTSIDE/impls.py" "$IMPL_DIR/sw_link/impls.py"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-link', protocol => '$TINY'"
ok "${RES%% *}" failed "a registered file replaced by a symbolic link to a file outside: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "$IMPL_DIR/sw_link/impls.py is a symbolic link now" "... saying so"
# 4. the content changed in place
echo "# changed after registration" >> "$IMPL_DIR/sw_edit/impls.py"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-edit', protocol => '$TINY'"
ok "${RES%% *}" failed "a registered file changed in place: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "the content of $IMPL_DIR/sw_edit/impls.py changed since it was registered" "... saying so"
reg sw-edit "python:$IMPL_DIR/sw_edit/impls.py:good" >/dev/null
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-edit', protocol => '$TINY'"
ok "$RES" "passed passed" "registered again, the changed file runs"
# in a comparison too (A's and B's entries resolved one after the other): both as registered, then a B swapped
c=$(q "SELECT kbench_compare('layer_norm', 'backward', '$SMALL', 'sw-edit', 'my-ln-c', rounds => 3, protocol => '$TINY', device => 'cpu')")
JOB=$(q "SELECT job_id FROM kbench_comparisons WHERE id = $c")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" 120
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $JOB")" passed "a comparison of two registered implementations, as registered, runs"
c=$(q "SELECT kbench_compare('layer_norm', 'backward', '$SMALL', 'my-ln-c', 'sw-link', rounds => 3, protocol => '$TINY', device => 'cpu')")
JOB=$(q "SELECT job_id FROM kbench_comparisons WHERE id = $c")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" 120
has "$(q "SELECT status || ' ' || error FROM kbench_jobs WHERE id = $JOB")" "registered implementation 'sw-link' does not run: $IMPL_DIR/sw_link/impls.py is a symbolic link now" \
    "a comparison whose B was replaced by a symbolic link after registration fails, saying so"
# a C library: overwritten in place by one that would leave a mark, and its directory swapped for a link
cat "$OUTSIDE/libevil.so" > "$IMPL_DIR/sw_lib/libln.so"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-lib', protocol => '$TINY'"
ok "${RES%% *}" failed "a registered C library overwritten after registration: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "registered implementation 'sw-lib' does not run: the content of $IMPL_DIR/sw_lib/libln.so changed since it was registered" "... saying so"
ok "$([ -e "$OUTSIDE/library-ran" ] && echo ran || echo no)" no "... and the swapped-in library was not loaded"
mv "$IMPL_DIR/sw_libdir" "$IMPL_DIR/sw_libdir.orig" && ln -s "$OUTSIDE" "$IMPL_DIR/sw_libdir"
run "'layer_norm', 'backward', '$SMALL', implementation => 'sw-libdir', protocol => '$TINY'"
has "$RES $(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "registered implementation 'sw-libdir' does not run: $IMPL_DIR/sw_libdir is a symbolic link now" \
    "a registered C library's directory swapped for a symbolic link: the job fails, saying so"
# the directory is the one allowed now: code registered from a directory no longer allowed does not run
q "ALTER SYSTEM SET kernelindex.implementation_directory = '$IMPL_DIR/elsewhere'" && reloaded kernelindex.implementation_directory "$IMPL_DIR/elsewhere"
run "'layer_norm', 'backward', '$SMALL', implementation => 'my-ln', protocol => '$TINY'"
has "$RES $(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "failed" "registered code outside the directory allowed now: the job fails"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "$IMPL_DIR/impls.py is not under kernelindex.implementation_directory ($IMPL_DIR/elsewhere) now" "... saying so"
q "ALTER SYSTEM RESET kernelindex.implementation_directory" && reloaded kernelindex.implementation_directory "$IMPL_DIR"

section "clocks"
# --- issue 24: an implementation that replaces the clocks (time.monotonic_ns, time.perf_counter_ns, ...)
# and sleeps 0.2 s a call does not get a 1 ns median: the harness bound its clock before importing it
reg py-clock "python:$IMPL_DIR/impls.py:patches_clock" >/dev/null
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-clock', protocol => '$TINY'"
ok "$RES" "passed passed" "an implementation that replaces the time module's clocks runs"
ok "$(q "SELECT median_ns >= 200000000 FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" t \
   "... and its median is the real time of its calls (at least the 0.2 s each sleeps), not what its clocks said"

section "failures"
# --- failures end the child, never the worker
pid=$(worker_pid)
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-raises', protocol => '$TINY'"
ok "$RES" "failed runtime_error" "a python implementation that raises gives a failed run"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "RuntimeError: deliberate failure in the implementation (impls.py:" "with the exception and where it was raised"
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-crashes', protocol => '$TINY'"
ok "$RES" "failed runtime_error" "a python implementation that crashes gives a failed run"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "the python child was killed by signal 11" "saying how it died"
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-garbage', protocol => '$TINY'"
ok "$RES" "failed runtime_error" "a python implementation that writes garbage on the protocol gives a failed run"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "answered something that is not the protocol" "saying so"
run "'layer_norm', 'backward', '$SMALL', implementation => 'c-crash', protocol => '$TINY'"
ok "$RES" "failed runtime_error" "a C library that crashes gives a failed run"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "the library child was killed by signal 11" "saying how it died"
run "'layer_norm', 'backward', '$SMALL', implementation => 'py-hangs', protocol => '$TINY', timeout => '4 seconds'"
ok "$RES" "timeout timeout" "a python implementation that hangs is stopped at the job's timeout"
run "'layer_norm', 'backward', '$SMALL', implementation => 'c-hang', protocol => '$TINY', timeout => '4 seconds'"
ok "$RES" "timeout timeout" "a C library that hangs is stopped at the job's timeout"
has "$(q "SELECT error FROM kbench_jobs WHERE id = $JOB")" "did not answer 'call' within" "saying the child did not answer and was killed"
JOB=$(q "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'py-hangs', protocol => '$TINY', timeout => '60 seconds')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $JOB" 30
sleep 2
q "SELECT kbench_cancel($JOB)" >/dev/null
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" 20
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $JOB")" canceled "cancelling a job whose child hangs in a call cancels it at once"
ok "$(worker_pid)" "$pid" "the worker that ran all of them is the same live process"
run "'layer_norm', 'backward', '$SMALL', implementation => 'my-ln', protocol => '$TINY'"
ok "$RES" "passed passed" "and it runs the next job"
for ((i = 0; i < 100; i++)); do [ "$(ps -o pid= --ppid "$pid" | wc -l)" = 0 ] && break; sleep 0.1; done
ok "$(ps -o pid= --ppid "$pid" | wc -l | tr -d ' ')" 0 "no child process is left behind"

section "queue-time"
# --- queue-time errors
has "$(qe "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'nobody')")" \
    "unknown implementation 'nobody': not built in" "an unknown implementation is refused at queue time"
has "$(qe "SELECT kbench_run('jsd', 'forward', '{\"tokens\": 8, \"vocab\": 8}', implementation => 'my-ln')")" \
    "not registered for jsd" "a registered name is for its operation only"
q "ALTER SYSTEM SET kernelindex.python = '/nonexistent/python3'" && reloaded kernelindex.python /nonexistent/python3
has "$(qe "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'huggingface')")" \
    "the python interpreter '/nonexistent/python3' is not executable" "a missing interpreter is refused at queue time"
q "ALTER SYSTEM RESET kernelindex.python" && reloaded kernelindex.python "$PY"

section "reproduction"
# --- reproduction: the seed's huggingface H100 run (from Liger's CSV) re-run here on the CPU: kept with its
# ratio as re-run elsewhere, not verified, not marked in the export (issue 24: only the same device class verifies)
q "SELECT count(*) FROM kbench_import_liger(pg_read_file('$(pwd)/data/liger/all_benchmark_data.csv'))" >/dev/null
seed_run=$(q "SELECT digest FROM kbench_runs WHERE name LIKE 'liger-layer-norm-backward-huggingface-nvidia-h100%' AND workload_digest = 'sha256:c18a03ab80eee5adfcd97f582de99ab98c459be25807cde44b48ac623ad3af23'")
ok "$(q "SELECT implementation || ' ' || mode || ' ' || workload::text FROM _kernelindex.reproduction_request('$seed_run')")" \
   'huggingface backward {"rows": 4096, "dtype": "fp32", "hidden": 4096}' "the seed run's reproduction: huggingface, backward, its axes and dtype"
JOB=$(q "SELECT kbench_reproduce('$seed_run', 'cpu')")
section "reproduction queued"
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" 300
ok "$(q "SELECT tier || ' ' || verified || ' ' || reproduced_status || ' ' || (ratio = reproduced_median_ns::float8 / reported_median_ns) || ' ' || reported_implementation FROM kbench_reproductions WHERE job_id = $JOB")" \
   "re-run elsewhere false passed true liger-bench-layer-norm-huggingface" "kbench_reproduce runs the seed's huggingface LayerNorm here: re-run elsewhere (H100 -> cpu), with the ratio of the medians"
ok "$(q "SELECT operation_key || ' ' || reported_device_key || ' ' || reproduced_device_key FROM kbench_reproductions WHERE job_id = $JOB")" \
   "layer_norm h100 cpu" "kbench_reproductions names the operation and both devices by their short names"
section "reproduction ran"
ok "$(q "SELECT count(*) FROM kbench_export_catalog() r(row) WHERE r.row::jsonb->'row' ? 'reproducedByKernelindex'")" \
   0 "the export marks no run: a re-run on another device class does not verify"
JOB=$(psql -X -At -q -v ON_ERROR_STOP=1 -U byo_user -c "SELECT kbench_reproduce('$cpu_run', 'cpu')" 2>&1)
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $JOB" 60
ok "$(q "SELECT verified || ' ' || j.owner FROM kbench_reproductions v JOIN kbench_jobs j ON j.id = v.job_id WHERE v.job_id = $JOB")" "true byo_user" \
   "a kbench_user reproduces a kbench cpu run: its own job, verified"
ok "$(q "SELECT r.row::jsonb->'row'->>'reproducedByKernelindex' || ' ' || (r.row::jsonb->'row'->>'independentReplicationCount') FROM kbench_export_catalog() r(row) WHERE r.row::jsonb->>'table' = 'benchmark_runs' AND r.row::jsonb->'row'->>'runDigest' = '$cpu_run'")" \
   "true 1" "the export marks the cpu run reproduced on the cpu"
has "$(qe "SELECT kbench_reproduce('sha256:0000000000000000000000000000000000000000000000000000000000000000')")" \
    "no run sha256:0000000000000000000000000000000000000000000000000000000000000000 in the catalog" "reproducing an unknown run is refused"
has "$(qe "SELECT _kernelindex.link_reproduction('$seed_run', 1)")" "does not exist" \
    "no function links a job of the caller's choosing to a run (security.sh tries it)"
# every operation and mode of Liger's CSV runs now (jsd's backward since issue 26 item 3): a jsd
# backward run maps to a request kbench runs (not queued here: Liger's shapes take hours on a CPU)
jsdb=$(q "SELECT r.digest FROM kbench_runs r JOIN kbench_implementations i ON i.digest = r.implementation_digest
           WHERE r.name LIKE 'liger-jsd-backward-%' AND i.name LIKE 'liger-bench-jsd-liger%' LIMIT 1")
ok "$(q "SELECT operation || ' ' || mode || ' ' || implementation || ' ' || (workload->>'vocab') FROM _kernelindex.reproduction_request('$jsdb')")" \
   "jsd backward liger 128256" "a Liger jsd backward run maps to kbench's jsd backward, liger, its workload"
# every provider of Liger's CSV has a kbench name now (issue 26 item 3, docs/OPERATIONS.md "Liger's
# other providers"): a run of Megatron's fused cross-entropy maps to a request of megatron-fused
# (not queued here: it needs megatron.core, and Liger's shapes take hours on a CPU)
unrun=$(q "SELECT r.digest FROM kbench_runs r JOIN kbench_implementations i ON i.digest = r.implementation_digest
            WHERE i.name LIKE 'liger-bench-megatron-cross-entropy-megatron-fused%' LIMIT 1")
ok "$([ -n "$unrun" ] && echo yes)" yes "the Liger import has a run of Megatron's fused cross-entropy (provider megatron-fused)"
ok "$(q "SELECT operation || ' ' || implementation FROM _kernelindex.reproduction_request('$unrun')")" \
   "megatron_cross_entropy megatron-fused" "a Liger megatron-fused run maps to kbench's megatron-fused provider"
# what kbench does not run: the manifest spec's example run (test/data/spec-examples), of an
# OperationSpec kbench has no definition of; its reproduction is refused, saying so
for f in software-project operation-spec workload-case implementation-revision benchmark-protocol execution-environment benchmark-run; do
  q "SELECT kbench_ingest(\$j\$$(cat test/data/spec-examples/$f.json)\$j\$::json)" >/dev/null
done
foreign=$(q "SELECT r.digest FROM kbench_runs r JOIN kbench_workloads w ON w.digest = r.workload_digest JOIN kbench_operations o ON o.digest = w.operation_digest WHERE o.name = 'rmsnorm-h4096' LIMIT 1")
has "$(qe "SELECT kbench_reproduce('$foreign', 'cpu')")" "is not of an operation and mode that kbench runs" \
    "a run of an operation kbench does not run is refused, saying so"

section "cli"
# --- the kbench CLI: --impl python:file.py:fn, library:..., --python
kb=kernels/kbench
out=$($kb run layer_norm backward rows=32 hidden=64 --impl python:test/byo/impls.py:good --python $PY --rep-ms 1 --warmup-ms 1 --flush-bytes 0 2>&1)
has "$out" "layer_norm backward: passed" "kbench run --impl python:file.py:fn --python runs a python file"
out=$($kb run layer_norm backward rows=32 hidden=64 --impl library:$IMPL_DIR/libln.so:ln_good --rep-ms 1 --warmup-ms 1 --flush-bytes 0 2>&1)
has "$out" "layer_norm backward: passed" "kbench run --impl library:libx.so:symbol runs a C library"
out=$(PYTHONPATH=test/byo/fake_liger $kb run layer_norm backward rows=32 hidden=64 --impl liger --python $PY --rep-ms 1 --warmup-ms 1 --flush-bytes 0 --json 2>&1)
ok "$(printf '%s' "$out" | $PY -c 'import json, sys; d = json.load(sys.stdin); i = d["implementation"]; print(d["status"], i["metadata"]["name"], i["spec"]["projectRevision"]["version"], i["spec"]["buildVariants"][0]["requirements"]["liger_kernel"], "liger_kernel_commit" in i["spec"]["buildVariants"][0]["requirements"])' 2>&1)" \
   "passed kbench-python-liger-layer-norm 0.0.0-kbench-test 0.0.0-kbench-test False" "liger runs when liger_kernel is importable, its version recorded (a stand-in module here)"
out=$($kb run layer_norm backward rows=32 hidden=64 --impl liger --python $PY --flush-bytes 0 2>&1)
has "$out" "ModuleNotFoundError: No module named 'liger_kernel'" "liger without liger_kernel: a failed run saying so"
out=$($kb run layer_norm backward rows=32 hidden=64 --impl huggingface --python /nonexistent/python3 2>&1); rc=$?
has "$out $rc" "is not executable; set kernelindex.python (kbench --python) to one that has torch, e.g. /usr/bin/python3 2" "kbench --python with a missing interpreter: a clear error, exit 2"
# bad entries and bad implementations, each with its error
kbe() { $kb run layer_norm backward rows=8 hidden=16 --rep-ms 1 --warmup-ms 1 --flush-bytes 0 --python $PY "$@" 2>&1; }
has "$(kbe --impl python:test/byo/nothere.py:fn)" "cannot find test/byo/nothere.py" "--impl with a missing file"
has "$(kbe --impl python:test/byo/impls.py)" "write python:file.py:function or library:libx.so:symbol" "--impl without a function"
has "$(kbe --impl python:test/byo/impls.py:1abc)" "'1abc' is not a function name" "--impl with a bad function name"
has "$(kbe --impl python:test/byo/impls.py:nothere)" "impls.py has no function nothere" "a function the file does not define"
has "$(kbe --impl python:test/byo/impls.py:not_callable)" "the factory returned 'int', not a callable step" "a factory that returns no step"
has "$(kbe --impl python:test/byo/impls.py:returns_list)" "the step returned 'list'; it must return a dict of output tensors by name" "a step that returns no dict"
has "$(kbe --impl python:test/byo/impls.py:bad_name)" "the step returned 'dz', which is not an output of layer_norm" "an output name the operation does not have"
has "$(kbe --impl python:test/byo/impls.py:writes_input)" "the step returned 'x', which is not an output of layer_norm" "an input returned as an output"
has "$(kbe --impl python:test/byo/impls.py:bad_shape)" "output 'dx' has 16 elements, kbench expects 128 (8 x 16)" "an output of the wrong size"
has "$(kbe --impl library:$IMPL_DIR/libln.so:nothere)" "libln.so does not export nothere" "a library symbol that does not exist"
printf 'int f(void *c);\nint f(void *c) { (void) c; return 0; }\n' > "$IMPL_DIR/noabi.c"
cc -shared -fPIC -o "$IMPL_DIR/libnoabi.so" "$IMPL_DIR/noabi.c"
has "$(kbe --impl library:$IMPL_DIR/libnoabi.so:f)" "does not export kbench_impl_abi (KBENCH_IMPL_EXPORT_ABI in kbench_impl.h)" "a library without the ABI version"
has "$(kbe --impl library:$IMPL_DIR/libln.so:ln_good --device cuda:0)" "library implementations run on the cpu device in this version" "a library on a cuda device"
has "$(qe "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'python')")" "implementation 'python' needs an entry (python:/dir/file.py:function)" "implementation 'python' without an entry, from SQL"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'python:$IMPL_DIR/nothere.py:f')" 2>&1)
has "$out" "could not resolve the entry's file" "registering a file that does not exist"
# a registration reads the entry's file for the function it names, without running it (issue 29 item 5)
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'python:$IMPL_DIR/impls.py:no_such_function')" 2>&1)
has "$out" "impls.py defines no 'no_such_function' at its top level" "registering a python function the file does not define is refused"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'python:$IMPL_DIR/impls.py:goo')" 2>&1)
has "$out" "defines no 'goo'" "... a prefix of a function's name is not that function"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'library:$IMPL_DIR/libln.so:ln_missing')" 2>&1)
has "$out" "libln.so exports no function 'ln_missing'" "registering a symbol the library does not export is refused"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'library:$IMPL_DIR/libln.so:calloc')" 2>&1)
has "$out" "exports no function 'calloc'" "... a function the library only calls (undefined in it) is not one it exports"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'library:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "is not a 64-bit ELF shared library" "registering a file that is no shared library as a library is refused"
ok "$(q "SELECT count(*) FROM kbench_registered_implementations WHERE name = 'x'")" 0 "... and none of them registered anything"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'no_such_op', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "unknown operation 'no_such_op'" "registering for an unknown operation"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'python:impls.py:good')" 2>&1)
has "$out" "must be an absolute path" "registering a relative path"
out=$(psql -X -At -q -U byo_admin -c "SELECT kbench_register_implementation(NULL, 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "name, operation and entry must not be null" "registering with a null argument"
q "ALTER SYSTEM SET kernelindex.implementation_directory = ''" && reloaded kernelindex.implementation_directory ""
out=$(psql -X -At -q -v VERBOSITY=verbose -U byo_admin -c "SELECT kbench_register_implementation('x', 'layer_norm', 'python:$IMPL_DIR/impls.py:good')" 2>&1)
has "$out" "ERROR:  42501: registering code is disabled on this server" "registration without kernelindex.implementation_directory is refused"
has "$out" "SHOW kernelindex.implementation_directory until it has the value" "and its hint gives the commands that set it, and how to see it in this session"
# the docs' commands (docs/BYO.md), in one session: ALTER SYSTEM and pg_reload_conf() as statements
# of their own, then SHOW until the session applied the reload (between statements), then register
# in the same session; a bounded poll (600 x 0.1 s), not a fixed wait
{ echo "ALTER SYSTEM SET kernelindex.implementation_directory = '$IMPL_DIR';"
  echo "SELECT pg_reload_conf() AS reloaded \\gset"
  for _ in $(seq 1 600); do
    echo "SELECT current_setting('kernelindex.implementation_directory') = '$IMPL_DIR' AS seen \\gset"
    echo "\\if :seen"; echo "SELECT 'seen by the session that reloaded';"
    echo "SELECT kbench_register_implementation('reloaded', 'layer_norm', 'python:$IMPL_DIR/impls.py:good') IS NOT NULL AS registered;"
    echo "\\q"; echo "\\endif"; echo "SELECT pg_sleep(0.1) \\gset"
  done; } >"$IMPL_DIR/reload.sql"
out=$(psql -X -At -q -v ON_ERROR_STOP=1 -f "$IMPL_DIR/reload.sql" 2>&1)
ok "$out" "seen by the session that reloaded
t" "ALTER SYSTEM + pg_reload_conf(): the same session sees the directory from a later statement, and registers (docs/BYO.md)"
q "ALTER SYSTEM SET kernelindex.implementation_directory = ''" && reloaded kernelindex.implementation_directory ""
q "ALTER SYSTEM RESET kernelindex.implementation_directory" && reloaded kernelindex.implementation_directory "$IMPL_DIR"
out=$(kbe --impl python:test/byo/impls.py:spawns)
has "$out" "the python child was killed by signal 11" "a child that starts a process and crashes gives a failed run"
ok "$(left_after 'sleep 4242' 10)" 0 "and the process it started is gone with it (its process group is killed)"
out=$(kbe --impl python:test/byo/impls.py:leaves_a_process)
has "$out" "layer_norm backward: passed" "an implementation that leaves a process running passes"
ok "$(left_after 'sleep 4343' 10)" 0 "and the process it left is gone when the run ends"
# issue 24: kbench's own clock around each 'time' round trip; a child whose answers say 1 ns for calls that
# take 0.1 s (a harness whose writer was replaced: test/byo/lying_harness.py) has its samples refused
out=$(KBENCH_HARNESS=test/byo/lying_harness.py $kb run layer_norm backward rows=8 hidden=16 --impl python:test/byo/impls.py:sleeps \
      --python $PY --rep-ms 1 --warmup-ms 0 --flush-bytes 0 --max-samples 5 2>&1)
has "$out" "runtime_error - estimate: the python child's reported times do not account for the time kbench measured around them: in 5 of 5 timed calls" \
    "a child that reports 1 ns for calls of 0.1 s (its answers rewritten) fails: kbench's clock disagrees"
out=$(kbe --impl python:test/byo/impls.py:slow_reset --max-samples 12)
has "$out" "layer_norm backward: passed" "a step whose untimed reset takes 0.1 s is not taken for a lie (the reset has its own round trip)"

section "cheats (issue 27)"
# --- each cheat, in python and as a C library, must not end as a passed run, nor reach kbench_records: kbench
# cycles input sets through the timed calls and checks calls drawn at random the moment they return
# (kernels/measure.c, the guard); the honest ones pass with the same protocol
GUARD='{"warmup_ms": 0, "rep_ms": 5, "flush_bytes": 0, "max_samples": 40}'
for n in replays ignores_inputs first_call_only every_other_call finishes_later; do reg "cheat-py-$n" "python:$IMPL_DIR/impls.py:$n" >/dev/null; done
for n in replay ignores first_only every_other late; do reg "cheat-c-$n" "library:$IMPL_DIR/libln.so:ln_$n" >/dev/null; done
for impl in my-ln my-ln-c; do
  run "'layer_norm', 'backward', '$SMALL', implementation => '$impl', protocol => '$GUARD'"
  ok "$RES" "passed passed" "the honest $impl passes with the protocol the cheats are run with"
  ok "$(q "SELECT (r.manifest->'spec'->'sourceNative'->'metrics'->>'input_sets')::int = 4
                  AND (r.manifest->'spec'->'sourceNative'->'metrics'->>'checked_calls')::int BETWEEN 1 AND 16
                  AND (r.manifest->'spec'->'sourceNative'->'metrics'->>'call_overhead_ns')::bigint > 0
             FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")" t \
     "... and its run records the input sets, the calls checked and kbench's round trip per call"
done
for impl in cheat-py-replays cheat-py-ignores_inputs cheat-py-first_call_only cheat-py-every_other_call cheat-py-finishes_later \
            cheat-c-replay cheat-c-ignores cheat-c-first_only cheat-c-every_other cheat-c-late; do
  run "'layer_norm', 'backward', '$SMALL', implementation => '$impl', protocol => '$GUARD'"
  ok "$RES" "failed incorrect_numerical" "the cheat $impl gives incorrect_numerical"
  msg=$(q "SELECT coalesce(j.error, '') || ' ' || coalesce(r.manifest->'metadata'->>'description', '')
             FROM kbench_jobs j LEFT JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $JOB")
  has "$msg" "differs from the float64 reference for its own inputs" "... naming the timed call: $(echo "$msg" | grep -o 'timed call [0-9]* (input set [0-9] of 4)' | head -1)"
  ok "$(q "SELECT count(*) FROM kbench_records r JOIN kbench_jobs j ON j.run_digest = r.run_digest WHERE j.id = $JOB")" 0 \
     "... and is not in kbench_records"
done
