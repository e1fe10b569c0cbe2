#!/usr/bin/env bash
# supervise.sh: the workers' supervision of each other and of the processes
# they start (issue 24): two workers on one device (kernelindex.devices lists
# cuda:0 twice, the fake CUDA backend of test/fake_cuda), one restarting
# beside the other's long job, which keeps running and ends once, passed,
# its retry intact; a job ended by someone else while it runs is not
# overwritten by its worker; the postmaster killed with SIGKILL while a
# library implementation's child runs a long call: the worker and the child
# are gone within seconds, the cluster restarts and the job is not filed as
# passed; a library implementation that leaves a daemon (setsid and a double
# fork) leaves nothing behind; one that prints 300 MiB does not grow the
# worker's memory and its job ends with the truncated output.  Every wait is
# a bounded poll.  Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
has() { case "$1" in *"$2"*) echo "ok - $3";; *) echo "not ok - $3"; printf '%s\n' "$1" | head -c 600 | sed 's/^/# /'; echo;; esac; }

if ! make -s -C kernels NVCC= fake-cuda >/tmp/supervise-build.$$ 2>&1; then
  echo "not ok - the fake CUDA backend builds"; sed 's/^/# /' /tmp/supervise-build.$$; rm -f /tmp/supervise-build.$$; exit 1
fi
rm -f /tmp/supervise-build.$$
DIR=$(mktemp -d /tmp/kernelindex-supervise.XXXXXX)
chmod 755 "$DIR"
trap '[ -n "${KEEP_LOG:-}" ] && cp "$KI_CLUSTER_DIR/server.log" "$KEEP_LOG"; ki_cluster_stop; rm -rf "$DIR"' EXIT
cp kernels/build/libkbench_fake_cuda.so "$DIR/"
cc -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -Ikernels -o "$DIR/libln.so" test/byo/ln_lib.c -lm ||
  { echo "not ok - the test library builds"; exit 1; }
echo ok >"$DIR/mode"; : >"$DIR/hold"
chmod -R a+rX "$DIR"; chmod 644 "$DIR/mode" "$DIR/hold"
# the postmaster inherits these (the fake's mode file, read at every open; its hold file, which
# stops a call while it names it; ln_slow's sleep, in s)
export KBENCH_CUDA_LIB=$DIR/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=@$DIR/mode KBENCH_FAKE_CUDA_HOLD=$DIR/hold KB_SLOW_S=40
# ln_daemon's sleeper: a number of this run's (one a failed run left behind does not count here)
export KB_DAEMON_S=$((3000 + RANDOM % 1000))

start() {
  ki_as_owner "$PGBIN/pg_ctl" -D "$KI_CLUSTER_DIR/data" -l "$KI_CLUSTER_DIR/server.log" -w -t 60 start >/dev/null 2>&1
}
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu, cuda:0, cuda:0'" "kernelindex.implementation_directory = '$DIR'" \
                 "log_min_messages = log" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
TINY='{"warmup_ms": 0, "rep_ms": 0.01, "flush_bytes": 0, "max_samples": 3}'
SMALL='{"rows": 8, "hidden": 16, "dtype": "fp32"}'
wait_for "SELECT count(*) = 3 FROM kbench_workers WHERE state = 'idle' AND pid IS NOT NULL" 60 || echo "# the workers did not start"
q "CREATE ROLE sup_admin LOGIN; GRANT kbench_admin TO sup_admin" >/dev/null
reg() { psql -X -At -q -v ON_ERROR_STOP=1 -U sup_admin -c "SELECT kbench_register_implementation('$1', 'layer_norm', 'library:$DIR/libln.so:$2', '1.0')" 2>&1; }
for r in c-slow:ln_slow c-daemon:ln_daemon c-flood:ln_flood; do
  case "$(reg "${r%%:*}" "${r#*:}")" in sha256:*) ;; *) echo "not ok - kbench_admin registers ${r#*:}: $(reg "${r%%:*}" "${r#*:}")";; esac
done
cpu_pid() { q "SELECT pid FROM kbench_workers WHERE device = 'cpu'"; }
# until no process matches (pgrep -f) or at most $2 seconds: how many are left
left_after() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do [ "$(pgrep -xc -f "$1")" = 0 ] && break; sleep 0.1; done
  pgrep -xc -f "$1"
}

# ---------------------------------------------------------------- two workers on one device (defect 5)
ok "$(q "SELECT count(*) FROM kbench_workers WHERE device = 'cuda:0' AND pid IS NOT NULL")" 2 \
  "kernelindex.devices lists cuda:0 twice: two workers serve it"
# A long job with a retry runs in one of them (held in its timed calls until the test lets it go) ...
echo time_one >"$DIR/hold"
long=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:0', protocol => '$TINY', retry => true)")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $long" 30
w1=$(q "SELECT worker_pid FROM kbench_jobs WHERE id = $long")
retries=$(q "SELECT retries_left FROM kbench_jobs WHERE id = $long")
# ... while the other gets a kernel that never finishes: it times out, exits, and the postmaster starts a new one
echo hang >"$DIR/mode"
w2=$(q "SELECT pid FROM kbench_workers WHERE device = 'cuda:0' AND pid <> $w1")
hang=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cuda:0', protocol => '$TINY', timeout => '2 seconds')")
wait_for "SELECT status = 'timeout' FROM kbench_jobs WHERE id = $hang" 30
echo ok >"$DIR/mode"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE device = 'cuda:0' AND state = 'idle' AND pid IS NOT NULL AND pid NOT IN ($w1, $w2)" 30 ||
  echo "# the sibling was not restarted"
ok "$(q "SELECT count(*) FROM kbench_workers WHERE device = 'cuda:0' AND pid NOT IN ($w1, $w2)")" 1 \
  "the sibling timed out on a kernel that never finishes, exited and was restarted beside the long job"
ok "$(q "SELECT status || ' ' || worker_pid || ' ' || attempts || ' ' || retries_left FROM kbench_jobs WHERE id = $long")" "running $w1 1 $retries" \
  "... its recovery left the live sibling's job alone: still running in the same worker, first attempt, retry intact"
: >"$DIR/hold"
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $long" 90
ok "$(q "SELECT status || ' ' || worker_pid || ' ' || attempts || ' ' || retries_left FROM kbench_jobs WHERE id = $long")" "passed $w1 1 $retries" \
  "... and it ends once, passed, in that worker, with its retry intact"

# A job that someone else ends while its worker runs it (as a recovery would): the worker does not overwrite it.
runs=$(q "SELECT count(*) FROM kbench_runs")
job=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8}', device => 'cpu', protocol => '{\"warmup_ms\": 0, \"rep_ms\": 3000, \"flush_bytes\": 0}')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
q "UPDATE kbench_jobs SET status = 'failed', error = 'ended by another', finished_at = clock_timestamp() WHERE id = $job"
wait_for "SELECT count(*) = 1 FROM kbench_workers WHERE device = 'cpu' AND state = 'idle'" 60
ok "$(q "SELECT status || ' ' || error FROM kbench_jobs WHERE id = $job") $(q "SELECT count(*) - $runs FROM kbench_runs")" \
  "failed ended by another 0" "a job ended by another while its worker ran it keeps that end; the worker's run is not stored"
has "$(cat "$KI_CLUSTER_DIR/server.log")" "does not record the end (passed) of job $job: it is no longer this worker's attempt" \
  "... and the worker logs why"

# ---------------------------------------------------------------- implementations' processes (defect 12)
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-daemon', device => 'cpu', protocol => '$TINY')")
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 60
ok "$(q "SELECT status FROM kbench_jobs WHERE id = $job")" passed "a library implementation that leaves a daemon (setsid, double fork) passes"
ok "$(left_after "sleep $KB_DAEMON_S" 10)" 0 "... and the daemon is gone once the job ended (out of its process group and session)"

# 300 MiB on stdout: what the worker keeps of it is bounded.  Its memory: resident plus the
# in-memory files (memfds) it holds open, sampled while the job runs.
wp=$(cpu_pid)
mem() {
  local rss files=0 f
  rss=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$wp/status") || return 1
  for f in /proc/$wp/fd/*; do
    case "$(readlink "$f")" in /memfd:*) files=$((files + $(stat -L -c %s "$f" 2>/dev/null || echo 0)));; esac
  done
  echo $((rss + files))
}
base=$(mem); peak=$base
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-flood', device => 'cpu', protocol => '$TINY')")
for ((i = 0; i < 1200 && ${job:-0} > 0; i++)); do
  m=$(mem 2>/dev/null) && [ "${m:-0}" -gt "$peak" ] && peak=$m
  [ "$(q "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job")" = t ] && break
  sleep 0.1
done
echo "# the worker's memory: $((base >> 20)) MiB before, at most $((peak >> 20)) MiB while the child printed 300 MiB"
ok "$(( base > 0 && (peak - base) < (64 << 20) ))" 1 "an implementation that prints 300 MiB grows the worker's memory by less than 64 MiB"
err=$(q "SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job")
has "$err" "failed: runtime_error: prepare: c-flood: ln_flood returned 1: flooded on purpose; its stderr ends: [output truncated: 314572818 bytes written, the last 1048576 kept] xxx" \
  "... and its job ends with the truncated output, noted"
case "$err" in *"xx the flood is over") echo "ok - ... whose end is the end of what it printed";;
  *) echo "not ok - ... whose end is the end of what it printed"; echo "# ${err: -80}";; esac

# ---------------------------------------------------------------- the postmaster dies (defect 9)
job=$(q "SELECT kbench_run('layer_norm', 'backward', '$SMALL', implementation => 'c-slow', device => 'cpu', protocol => '$TINY', timeout => '10 minutes')")
wait_for "SELECT status = 'running' FROM kbench_jobs WHERE id = $job" 30
wp=$(q "SELECT worker_pid FROM kbench_jobs WHERE id = $job")
child=
for ((i = 0; i < 300; i++)); do child=$(pgrep -P "$wp" | head -1); [ -n "$child" ] && break; sleep 0.1; done
ok "$([ -n "$child" ] && echo yes)" yes "a library implementation's child runs a long call"
kill -9 "$(head -1 "$KI_CLUSTER_DIR/data/postmaster.pid")"
for ((i = 0; i < 300; i++)); do kill -0 "$wp" 2>/dev/null || kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
ok "$(kill -0 "$wp" 2>/dev/null && echo worker) $(kill -0 "$child" 2>/dev/null && echo child)" " " \
  "the postmaster killed with SIGKILL: the orphaned worker and its child are gone within seconds"
start; ok "$?" 0 "the cluster restarts (no shared memory block still in use)"
wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = $job" 60
has "$(q "SELECT status || ': ' || error FROM kbench_jobs WHERE id = $job")" "failed: the worker for cpu (pid $wp) stopped while running the job" \
  "... and the job is not filed as passed by the orphan: the new worker recovers it"
ok "$(q "SELECT count(*) FROM kbench_jobs WHERE status IN ('queued', 'running')")" 0 "nothing left queued or running"
