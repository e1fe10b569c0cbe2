#!/usr/bin/env bash
# pgmajors.sh: kernelindex on the PostgreSQL majors beside Debian 12's 15 (README,
# "PostgreSQL versions, packages and where things go"): for each of $KI_PGMAJORS the
# server built from Debian's source package (tools/pgmajor_build.sh: cached outside the
# clone, in /var/cache/kernelindex/pgNN; built once per machine, which takes long: see the
# README), copied into build/pgNN; the extension compiled against it with -Werror in a
# copy of the checkout (build/pgNN-ext, so that the checkout's own objects, compiled for
# 15, stay) and installed there; then in that copy `make installcheck` (pg_regress and the
# isolation specs), the worker's Perl test (test/t/001_runner.pl) and the upgrade and
# security suites (upgrade.sh, security.sh) on that server.  Every TAP line is prefixed with "pgNN: ".
#
# On by default: KI_PGMAJORS (default "17 18") names the majors; set it empty
# (KI_PGMAJORS= bin/test.sh) to skip them, which is counted as a skip.  A fresh machine
# builds both servers first (about 3 minutes each on an idle 2-core machine, README);
# later clones on the same machine reuse the cache.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
JOBS=$(nproc 2>/dev/null || echo 2)
KI_PGMAJORS=${KI_PGMAJORS-17 18}
if [ -z "$KI_PGMAJORS" ]; then
  echo "ok - # SKIP needs=pg17,pg18 KI_PGMAJORS is set empty (unset, it runs 17 and 18; tools/pgmajor_build.sh builds the servers once)"
  exit 0
fi
for need in bison flex; do
  command -v "$need" >/dev/null || { echo "ok - # SKIP needs=$need PostgreSQL from source (bin/setup.sh installs it)"; exit 0; }
done
source_files() {  # as tools/pgbundle_build.sh: what git tracks or would track
  if [ -e .git ]; then git ls-files -z --cached --others --exclude-standard
  else local g; g=$(mktemp -d) && git init -q --bare "$g" && git --git-dir="$g" --work-tree=. ls-files -z --others --exclude-standard; rm -rf "$g"; fi
}
# the suites read released versions' install scripts from this clone's history
GIT_DIR_ABS=$(git rev-parse --absolute-git-dir 2>/dev/null || true)
mkdir -p "$ROOT/build"
make -s -C kernels -j"$JOBS" libkbench.a >/dev/null 2>&1
for major in $KI_PGMAJORS; do
  t0=$SECONDS
  bin=$(nice bash tools/pgmajor_build.sh "$major" "$ROOT/build/pg$major" 2>"$ROOT/build/pg$major.build.log" | tail -1)
  if [ ! -x "$bin/pg_config" ]; then
    echo "not ok - pg$major: PostgreSQL $major built from Debian's source package"; tail -20 "$ROOT/build/pg$major.build.log" | sed 's/^/# /'
    continue
  fi
  echo "ok - pg$major: PostgreSQL $("$bin/pg_config" --version | sed 's/PostgreSQL //') ($(cut -d' ' -f1 "$bin/../.stamp")) from Debian's source package, in $((SECONDS - t0)) s$(grep -q 'cached in' "$ROOT/build/pg$major.build.log" && echo ' (cached)')"
  ext=$ROOT/build/pg$major-ext
  mkdir -p "$ext"
  source_files | sort -z >"$ext.files"
  tar --null -T "$ext.files" -cf - | tar -xf - -C "$ext"
  # objects of another PostgreSQL build are not reused
  cmp -s "$bin/../.stamp" "$ext/.pgstamp" 2>/dev/null || (cd "$ext" && find . -name '*.o' -path './src/*' -delete)
  cp "$bin/../.stamp" "$ext/.pgstamp"
  mk=(PG_CONFIG="$bin/pg_config" KBENCH_LIB="$ROOT/kernels/libkbench.a" -o "$ROOT/kernels/libkbench.a")
  if (cd "$ext" && nice make -s -j"$JOBS" "${mk[@]}" >make.log 2>&1 && make -s "${mk[@]}" install >>make.log 2>&1); then
    echo "ok - pg$major: kernelindex builds with -Wall -Wextra -Werror and installs"
  else
    echo "not ok - pg$major: kernelindex builds with -Werror"; grep -E 'error|warning' "$ext/make.log" | head -20 | sed 's/^/# /'
    continue
  fi
  chmod -R a+rX "$ROOT/build/pg$major"
  (
    cd "$ext" || exit 1
    export KI_PGBIN=$bin PATH=$bin:$PATH GIT_DIR=$GIT_DIR_ABS
    as_owner=()
    if [ "$(id -u)" -eq 0 ]; then chmod -R a+rwX test; as_owner=(runuser -u postgres -- env "PATH=$PATH"); fi
    "${as_owner[@]}" make -s "${mk[@]}" installcheck TAP_TESTS= >regress.log 2>&1
    rc=$?
    # pg_regress of 15 prints "test NAME ... ok", of 16 and later TAP ("ok 1 - NAME  12 ms")
    sed -nE 's/^(test| )?[[:space:]]*([a-z_0-9]+)[[:space:]]+\.\.\. ok.*/ok - installcheck \2/p
      s/^(test| )?[[:space:]]*([a-z_0-9]+)[[:space:]]+\.\.\. FAILED.*/not ok - installcheck \2/p
      s/^(ok|not ok)[[:space:]]+[0-9]+[[:space:]]+[-+][[:space:]]+([a-z_0-9]+).*/\1 - installcheck \2/p' regress.log
    grep -qE '\.\.\. ok|^ok[[:space:]]+[0-9]+' regress.log || echo "not ok - installcheck ran no test (status $rc)"
    [ "$rc" -eq 0 ] || { echo "not ok - installcheck exited with status $rc"; head -100 test/regression.diffs test/isolation_output/regression.diffs 2>/dev/null | sed 's/^/# /'; }
    # a part that ran no check fails (a server built without TAP support once made the
    # worker's Perl test print nothing, and nothing was counted)
    "${as_owner[@]}" make -s "${mk[@]}" prove_installcheck PROVE_TESTS=test/t/001_runner.pl PROVE_FLAGS=-v >runner.log 2>&1
    rc=$?
    sed -nE 's/^(ok|not ok) [0-9]+( - |$)/\1 - runner: /p; /^#/p' runner.log
    grep -qE '^ok [0-9]+' runner.log || { echo "not ok - runner: the worker's Perl test ran no check (status $rc)"; tail -5 runner.log | sed 's/^/# /'; }
    if [ "$rc" -ne 0 ]; then
      echo "not ok - runner: prove exited with status $rc"
      # why: what the script printed that is not TAP (a die says where), then its log's end
      grep -vE '^(ok|not ok) [0-9]+|^#|^[[:space:]]*$' runner.log | head -20 | sed 's/^/# /'
      tail -40 test/t/tmp_check/log/regress_log_001_runner 2>/dev/null | sed 's/^/# /'
    fi
    for s in upgrade security; do
      bash "test/suites/$s.sh" >"$s.log" 2>&1
      rc=$?
      sed -nE "s/^(ok|not ok)( - |$)/\1 - $s: /p; /^#/p" "$s.log"
      grep -qE '^ok' "$s.log" || echo "not ok - $s: the suite ran no check (status $rc)"
      [ "$rc" -eq 0 ] || echo "not ok - $s: the suite exited with status $rc"
    done
  ) | sed -E "s/^(not ok|ok) - /\1 - pg$major: /"
  echo "# pg$major: $((SECONDS - t0)) s in all"
done
