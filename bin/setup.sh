#!/usr/bin/env bash
# setup.sh: install what is missing (Debian 12), build and install kernelindex.
# Idempotent; safe to run again.  Used by bin/demo.sh and bin/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
# python3-torch: Debian's /usr/bin/python3 with torch, for python implementations (docs/BYO.md);
# clang: the fuzzer (test/suites/fuzz.sh); libpq-dev: kbench agent (kernels/agent, docs/FLEET.md)
# postgresql-15-cron: the nightly sweep recipe (test/suites/cron.sh, docs/ANALYTICS.md); debhelper,
# postgresql-server-dev-all: the Debian package (debian/, test/suites/packaging.sh); bison, flex,
# debian-keyring, curl: PostgreSQL 17 and 18 from Debian's sources (tools/pgmajor_build.sh); libipc-run-perl:
# the server tests in Perl (test/t, `make prove_installcheck`; PostgreSQL::Test::Cluster comes with
# postgresql-client-15)
for p in build-essential postgresql-15 postgresql-client-15 postgresql-server-dev-15 postgresql-contrib libssl-dev zstd libzstd-dev python3-torch clang libpq-dev \
	postgresql-15-cron debhelper postgresql-server-dev-all bison flex debian-keyring curl libipc-run-perl; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
# A private PostgreSQL (tools/pg_sandbox.sh) made before pg_cron was installed gets its files.
if [ -n "${KI_PGBIN:-}" ] && [ -f /usr/lib/postgresql/15/lib/pg_cron.so ] && [ ! -f "$(pg_config --pkglibdir)/pg_cron.so" ]; then
  cp /usr/lib/postgresql/15/lib/pg_cron.so "$(pg_config --pkglibdir)/"
  cp /usr/share/postgresql/15/extension/pg_cron* "$(pg_config --sharedir)/extension/"
fi
jobs=$(nproc 2>/dev/null || echo 2)
make -s -j"$jobs" >/dev/null
if [ -f kernels/Makefile ] && [ -z "${KI_SKIP_KERNELS:-}" ]; then make -s -C kernels -j"$jobs" >/dev/null; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO make -s install >/dev/null
echo "setup: kernelindex built and installed into $(pg_config --pkglibdir)"
