#!/usr/bin/env bash
# packaging.sh: how kernelindex reaches a PostgreSQL user.
#  1. `make install` puts kbench and kbench-agent into PostgreSQL's bindir (links to the
#     programs in pkglibdir), and kbench found on PATH, run from elsewhere, finds its
#     python harness beside its real self;
#  2. META.json (PGXN) agrees with kernelindex.control, and `make dist`'s archive builds
#     and installs (DESTDIR) in a temporary folder, away from the checkout;
#  3. `dpkg-buildpackage -us -uc -b` on that archive makes postgresql-15-kernelindex with
#     the extension, its SQL, kbench (and libkbench_cuda.so where nvcc is); the package is
#     extracted (dpkg -x, not dpkg -i: the machine's PostgreSQL is left as it is) over a
#     private copy of the machine's PostgreSQL 15 (tools/pg_sandbox.sh), where a fresh
#     cluster creates the extension and runs a CPU job through the worker.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source test/lib/tap.sh
T=$(mktemp -d /tmp/kernelindex-packaging.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
have_nvcc() { command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; }

# 1. kbench on PATH after make install (bin/setup.sh ran it)
bindir=$(pg_config --bindir); pkglib=$(pg_config --pkglibdir)
ok "$(readlink "$bindir/kbench")" "$pkglib/kbench" "make install: kbench in PostgreSQL's bindir, a link to the program in pkglibdir"
ok "$(cd "$T" && env -i PATH="$bindir:/usr/bin:/bin" sh -c 'command -v kbench && kbench devices' 2>&1 | head -2 | tr '\n' ' ')" "$bindir/kbench cpu " \
   "kbench is on PATH with the server's programs and runs from any directory"
out=$(cd "$T" && env -i PATH="$bindir:/usr/bin:/bin" kbench run layer_norm backward rows=32 hidden=64 --impl "python:$ROOT/test/byo/impls.py:good" \
      --python /usr/bin/python3 --rep-ms 1 --warmup-ms 1 --flush-bytes 0 2>&1)
case "$out" in *"layer_norm backward: passed"*) echo "ok - kbench run from PATH finds its python harness in pkglibdir (through its real path)";;
  *) echo "not ok - kbench run from PATH finds its python harness"; echo "$out" | sed 's/^/# /';; esac
if [ -f kernels/kbench-agent ]; then
  ok "$(readlink "$bindir/kbench-agent")" "$pkglib/kbench-agent" "make install: kbench-agent beside it"
fi

# 2. PGXN: META.json and make dist
ok "$(python3 -c 'import json; m = json.load(open("META.json")); print(m["name"], m["version"], m["provides"]["kernelindex"]["version"], m["meta-spec"]["version"])' 2>&1)" \
   "kernelindex $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control) $(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control) 1.0.0" \
   "META.json is valid JSON and its versions are kernelindex.control's"
ver=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
zip=$(make -s dist 2>&1 | tail -1)
ok "$zip $(unzip -Z1 "kernelindex-$ver.zip" 2>/dev/null | grep -c -e '^kernelindex-'"$ver"'/META.json$' -e '^kernelindex-'"$ver"'/kernelindex.control$' -e '^kernelindex-'"$ver"'/debian/rules$')" \
   "kernelindex-$ver.zip 3" "make dist: kernelindex-$ver.zip with META.json, the control file and debian/ under kernelindex-$ver/"
mv "kernelindex-$ver.zip" "$T/"
(cd "$T" && unzip -q "kernelindex-$ver.zip")
src=$T/kernelindex-$ver
ok "$(find "$src" -name '*.o' -o -name '*.so' -o -name .git | wc -l)" 0 "the archive holds sources only"
# the CUDA backend is left to the package build below (NVCC=): this checks the sources are all there
if (cd "$src" && make -s -j2 NVCC= >"$T/dist-build.log" 2>&1 && make -s NVCC= DESTDIR="$T/stage" install >>"$T/dist-build.log" 2>&1); then
  ok "$(ls "$T/stage$pkglib/kernelindex.so" "$T/stage$pkglib/kbench" "$T/stage$(pg_config --sharedir)/extension/kernelindex--$ver.sql" 2>/dev/null | wc -l) $(readlink "$T/stage$bindir/kbench")" \
     "3 $pkglib/kbench" "the archive builds (-Werror) and installs away from the checkout: kernelindex.so, the SQL, kbench and its link"
else
  echo "not ok - the archive builds and installs"; tail -20 "$T/dist-build.log" | sed 's/^/# /'
fi
(cd "$src" && make -s clean NVCC= >/dev/null 2>&1)

# 3. the Debian package, built from the archive as a fresh machine would
if ! command -v dpkg-buildpackage >/dev/null || ! command -v pg_buildext >/dev/null || ! command -v dh >/dev/null; then
  echo "ok - # SKIP needs=dpkg-buildpackage,pg_buildext,dh the Debian package (bin/setup.sh installs debhelper, postgresql-server-dev-all)"
  exit 0
fi
# the machine's PATH, not the private PostgreSQL's: pg_buildext builds for /usr/lib/postgresql/15
if (cd "$src" && env PATH="/usr/local/cuda/bin:/usr/sbin:/usr/bin:/sbin:/bin" dpkg-buildpackage -us -uc -b >"$T/deb-build.log" 2>&1); then
  echo "ok - dpkg-buildpackage -us -uc -b builds the package"
else
  echo "not ok - dpkg-buildpackage -us -uc -b builds the package"; tail -30 "$T/deb-build.log" | sed 's/^/# /'; exit 0
fi
deb=$(ls "$T"/postgresql-15-kernelindex_"$ver"_*.deb 2>/dev/null | head -1)
ok "$(basename "${deb:-none}" | sed 's/_[^_]*\.deb$//')" "postgresql-15-kernelindex_$ver" "the package is postgresql-15-kernelindex $ver"
list=$(dpkg-deb -c "$deb" | awk '{print $6 $7 $8}')
for f in /usr/lib/postgresql/15/lib/kernelindex.so /usr/share/postgresql/15/extension/kernelindex.control \
         "/usr/share/postgresql/15/extension/kernelindex--$ver.sql" /usr/share/postgresql/15/extension/kernelindex--0.2.0--$ver.sql \
         /usr/lib/postgresql/15/lib/kbench /usr/lib/postgresql/15/lib/kernelindex_python/kbench_harness.py \
         "/usr/lib/postgresql/15/bin/kbench->../lib/kbench"; do
  printf '%s\n' "$list" | grep -qxF ".$f" && echo "ok - the package holds $f" || echo "not ok - the package holds $f"
done
cuda=$(printf '%s\n' "$list" | grep -c 'libkbench_cuda.so$')
if have_nvcc; then ok "$cuda" 1 "nvcc is here: the package holds libkbench_cuda.so"; else ok "$cuda" 0 "no nvcc here: the package has no libkbench_cuda.so"; fi
dpkg-deb -e "$deb" "$T/control"
ok "$(grep -c 'update-alternatives --install /usr/bin/kbench kbench /usr/lib/postgresql/15/bin/kbench 15' "$T/control/postinst" 2>/dev/null)" 1 \
   "its postinst puts kbench on PATH (/usr/bin/kbench, an alternative per major)"
ok "$(dpkg-deb -f "$deb" Depends | grep -c 'postgresql-15')" 1 "it depends on postgresql-15"

# the package's files over a private copy of PostgreSQL 15, a fresh cluster: the smoke test
bash tools/pg_sandbox.sh "$T/pg" >/dev/null
dpkg -x "$deb" "$T/root"
cp -a "$T/root/usr/lib/postgresql/15/lib/." "$T/pg/usr/lib/postgresql/15/lib/"
cp -a "$T/root/usr/lib/postgresql/15/bin/." "$T/pg/usr/lib/postgresql/15/bin/"
cp -a "$T/root/usr/share/postgresql/15/extension/." "$T/pg/usr/share/postgresql/15/extension/"
chmod -R a+rX "$T"
out=$(
  export KI_PGBIN=$T/pg/usr/lib/postgresql/15/bin
  source bin/pgcluster.sh
  trap 'ki_cluster_stop' EXIT
  ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'postgres'" "kernelindex.devices = 'cpu'" >/dev/null || { echo "cluster did not start"; exit 1; }
  "$KI_PGBIN/psql" -X -At -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION kernelindex" -c "SELECT 'version ' || extversion FROM pg_extension WHERE extname = 'kernelindex'" 2>&1
  job=$("$KI_PGBIN/psql" -X -At -q -v ON_ERROR_STOP=1 -c "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8, \"dtype\": \"fp32\"}', protocol => '{\"warmup_ms\": 0, \"rep_ms\": 0.01, \"flush_bytes\": 0, \"max_samples\": 3}')" 2>&1)
  PATH=$KI_PGBIN:$PATH wait_for "SELECT status NOT IN ('queued', 'running') FROM kbench_jobs WHERE id = ${job:-0}" 60
  "$KI_PGBIN/psql" -X -At -q -c "SELECT 'job ' || status || ' ' || (run_digest IS NOT NULL) FROM kbench_jobs WHERE id = ${job:-0}" 2>&1
)
case "$out" in *"version $ver"*) echo "ok - the packaged extension: CREATE EXTENSION kernelindex in a fresh cluster";;
  *) echo "not ok - the packaged extension: CREATE EXTENSION"; echo "$out" | sed 's/^/# /';; esac
case "$out" in *"job passed true"*) echo "ok - the packaged worker runs a CPU job and records its run";;
  *) echo "not ok - the packaged worker runs a CPU job"; echo "$out" | sed 's/^/# /';; esac
ok "$(cd "$T" && env -i PATH="$T/pg/usr/lib/postgresql/15/bin:/usr/bin:/bin" kbench devices 2>&1 | head -1)" cpu "the packaged kbench runs from the server's bindir (its link)"
