#!/usr/bin/env bash
# test.sh: every test of kernelindex on a fresh Debian 12 machine.
# Installs what is missing, builds, installs, and runs: `make installcheck`
# (pg_regress over sql/*.sql and expected/, and the isolation specs of
# specs/, each on a temporary instance of its own with the library
# preloaded, see the Makefile), the server tests in Perl (test/t/*.pl on
# PostgreSQL::Test::Cluster, `make prove_installcheck`, one at a time), and
# every suite script in test/suites/ (C unit tests, CLI, import tests, the
# fuzzer), each of which prints TAP lines "ok ..." / "not ok ...", then a few
# generated mutations of what the last commit changed (test/mutate.sh --quick).  Ends with
# the line "N passed, N failed, N skipped".  Exit status 0 only when nothing
# failed.
#
# Skips: a suite skips a test only when this machine lacks what it needs,
# and says so: "ok - # SKIP needs=CMD[,CMD] what was not run".  A skip is
# counted apart from the passes; a skip whose CMD is installed here (it
# could have run) and a skip that names no need are failures.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
bash bin/setup.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
LOG=$(mktemp -d /tmp/kernelindex-test.XXXXXX)
chmod 755 "$LOG"
trap 'rm -rf "$LOG"' EXIT
passed=0; failed=0; skipped=0

# Is CMD available here?  (nvcc is looked for where the CUDA toolkit puts it.)
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/local/cuda/bin/$1" ]; }

# Count the TAP lines of a log: adds to passed, failed and skipped.
tally() {
  local line needs cap could
  while IFS= read -r line; do
    case "$line" in
      "not ok"|"not ok "*) failed=$((failed + 1)) ;;
      "ok"|"ok "*)
        if printf '%s' "$line" | grep -qiE '#[[:space:]]*skip'; then
          needs=$(printf '%s' "$line" | sed -nE 's/.*#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]+needs=([A-Za-z0-9_.,+-]+).*/\1/p')
          could=""
          for cap in ${needs//,/ }; do have "$cap" && could="$could $cap"; done
          if [ -z "$needs" ]; then
            echo "not ok - a skip that does not say what it needs: $line"; failed=$((failed + 1))
          elif [ -n "$could" ]; then
            echo "not ok - skipped though$could is installed here: $line"; failed=$((failed + 1))
          else
            skipped=$((skipped + 1))
          fi
        else
          passed=$((passed + 1))
        fi ;;
    esac
  done
}

# 1. make installcheck: pg_regress and the isolation specs, each on its own
#    temporary instance (PostgreSQL refuses root: then as postgres).  The Perl
#    tests, which installcheck also runs (TAP_TESTS), are counted apart (2.).
as_owner=()
if [ "$(id -u)" -eq 0 ]; then
  chmod -R a+rwX test 2>/dev/null || true
  as_owner=(runuser -u postgres -- env "PATH=$PATH")
fi
t0=$SECONDS
"${as_owner[@]}" make -s installcheck TAP_TESTS= >"$LOG/regress.log" 2>&1
rc=$?
cat "$LOG/regress.log"
p=$(grep -cE '^(test| )\s*\S+\s+\.\.\. ok' "$LOG/regress.log" || true)
f=$(grep -cE '\.\.\. FAILED' "$LOG/regress.log" || true)
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "not ok - make installcheck exited with status $rc"; f=1; fi
if [ "$p" -eq 0 ] && [ "$f" -eq 0 ]; then echo "not ok - make installcheck ran no test"; f=1; fi
for d in test/regression.diffs test/isolation_output/regression.diffs; do
  [ "$f" -gt 0 ] && [ -f "$d" ] && head -200 "$d"
done
passed=$((passed + p)); failed=$((failed + f))
# (each suite's unmutated result and time, for test/mutate.sh --quick in 4.)
echo "installcheck $((SECONDS - t0)) $([ "$f" -eq 0 ] && echo passed || echo failed)" >"$LOG/baseline"

# 2. the server tests in Perl, each one `make prove_installcheck` (as postgres when root),
#    its TAP lines ("ok 3 - ...", prove -v) counted as a suite's are.  A test that dies or
#    plans wrongly (prove exits non-zero and no "not ok" line says why) is one failure.
#    The fake GPU some of them use is built here first, where root may write kernels/.
make -s -C kernels NVCC= fake-cuda >"$LOG/fake-cuda.log" 2>&1 || cat "$LOG/fake-cuda.log"
for t in test/t/[0-9][0-9][0-9]_*.pl; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .pl)
  echo "== tap $name"
  "${as_owner[@]}" make -s prove_installcheck PROVE_TESTS="$t" PROVE_FLAGS=-v >"$LOG/$name.log" 2>&1
  rc=$?
  cat "$LOG/$name.log"
  f0=$failed
  # (prove's own lines, such as the bare "ok" after a file's plan, are not tests)
  tally < <(grep -E '^(not )?ok [0-9]+' "$LOG/$name.log") >"$LOG/$name.tally"
  cat "$LOG/$name.tally"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq "$f0" ]; then
    echo "not ok - $t exited with status $rc (it died or planned wrongly)"; failed=$((failed + 1))
    tail -30 "test/t/tmp_check/log/regress_log_$name" 2>/dev/null | sed 's/^/# /'
  fi
done

# 3. suites (each starts a cluster of its own if it needs one)
for s in test/suites/*.sh; do
  [ -f "$s" ] || continue
  name=$(basename "$s" .sh)
  echo "== suite $name"
  t0=$SECONDS
  bash "$s" >"$LOG/$name.log" 2>&1
  rc=$?
  cat "$LOG/$name.log"
  f0=$failed
  tally <"$LOG/$name.log" >"$LOG/$name.tally"
  cat "$LOG/$name.tally"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq "$f0" ]; then
    echo "not ok - suite $name exited with status $rc"; failed=$((failed + 1))
  fi
  # (a suite that printed a "not ok" line or exited non-zero failed unmutated)
  echo "$name $((SECONDS - t0)) $([ "$rc" -eq 0 ] && ! grep -qE '^not ok' "$LOG/$name.log" && echo passed || echo failed)" >>"$LOG/baseline"
done

# 4. generated mutations of what the last commit changed (test/mutate.sh --quick, docs/TESTING.md):
#    a few minutes, deterministic; "not ok" only for a mutation that survived its suite and is not
#    listed in test/mutate_equivalent.txt.  Its suites' unmutated results come from 1. and 3.
#    (a mutation whose suite failed there is not judged); an exit status without a "not ok" line
#    (the scratch copy could not be made) is reported, not counted.
echo "== mutate --quick"
MUTATE_BASELINE="$LOG/baseline" bash test/mutate.sh --quick >"$LOG/mutate.log" 2>&1
rc=$?
cat "$LOG/mutate.log"
tally < <(grep -E '^(not )?ok - mutation ' "$LOG/mutate.log") >"$LOG/mutate.tally"
cat "$LOG/mutate.tally"
[ "$rc" -ne 0 ] && echo "# test/mutate.sh --quick exited with status $rc (not counted: no mutation survived)"

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
