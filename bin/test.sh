#!/usr/bin/env bash
# test.sh: every test of kernelindex on a fresh Debian 12 machine.
# Installs what is missing, builds, installs, starts a throwaway PostgreSQL
# and runs: the pg_regress suite (test/sql, expected/), and every suite
# script in test/suites/ (C unit tests, CLI, worker and import tests), each
# of which prints TAP lines "ok ..." / "not ok ...".  Ends with the line
# "N passed, N failed".  Exit status 0 only when nothing failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
bash bin/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
LOG=$(mktemp -d /tmp/kernelindex-test.XXXXXX)
trap 'ki_cluster_stop; rm -rf "$LOG"' EXIT
passed=0; failed=0

# 1. pg_regress
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'contrib_regression'"
chmod -R a+rwX test 2>/dev/null || true
make -s installcheck >"$LOG/regress.log" 2>&1
rc=$?
cat "$LOG/regress.log"
p=$(grep -cE '^(test| )\s*\S+\s+\.\.\. ok' "$LOG/regress.log" || true)
f=$(grep -cE '\.\.\. FAILED' "$LOG/regress.log" || true)
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
[ "$f" -gt 0 ] && [ -f test/regression.diffs ] && head -200 test/regression.diffs
passed=$((passed + p)); failed=$((failed + f))
ki_cluster_stop

# 2. suites (each gets a fresh cluster in $PGHOST etc. if it asks for one)
for s in test/suites/*.sh; do
  [ -f "$s" ] || continue
  name=$(basename "$s" .sh)
  echo "== suite $name"
  bash "$s" >"$LOG/$name.log" 2>&1
  rc=$?
  cat "$LOG/$name.log"
  p=$(grep -cE '^ok( |$)' "$LOG/$name.log" || true)
  f=$(grep -cE '^not ok( |$)' "$LOG/$name.log" || true)
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - suite $name exited with status $rc"; f=1
  fi
  passed=$((passed + p)); failed=$((failed + f))
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
