#!/usr/bin/env bash
# bundle.sh: the PostgreSQL bundle for the GPU host (tools/pgbundle_build.sh, bin/pgbundle.sh)
# is self-contained before any GPU time is spent on it.  Builds it (or refreshes the
# extension in a cached one; the first build is timed), then: every ELF file of it
# resolves its libraries inside the bundle or among the base system libraries, none from
# a PostgreSQL of this machine; it fits the device tool's carry; started from its folder
# with a scrubbed environment (env -i, a PATH that holds no PostgreSQL and no
# LD_LIBRARY_PATH) its processes map nothing of this machine's PostgreSQL; a CPU job runs
# through its worker; it stops.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
source test/lib/tap.sh
B=$ROOT/build/pgbundle
T=$(mktemp -d /tmp/kernelindex-bundle-test.XXXXXX)
chmod 755 "$T"
export KI_BUNDLE_RUN=$T/run
# what the scrubbed caller may run: a few base tools, no PostgreSQL
mkdir -p "$T/path"
for t in bash env sh cat sed awk grep head tail mkdir rm cp chmod chown id tee sleep mktemp dirname ls tr cut \
	setpriv test compgen; do
	p=$(command -v "$t" 2>/dev/null) && [ "${p#/}" != "$p" ] && ln -sf "$p" "$T/path/$t"
done
scrubbed() { env -i PATH="$T/path" HOME="$T" KI_BUNDLE="$B" KI_BUNDLE_RUN="$KI_BUNDLE_RUN" "$@"; }
cleanup() {
	[ -d "$KI_BUNDLE_RUN/data" ] && scrubbed KI_DEVICES=cpu bash bin/pgbundle.sh stop >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

# ------------------------------------------------------------------ build
cached=$([ -f "${KI_PGBUNDLE_CACHE:-/var/cache/kernelindex}/pgbundle-dev/.stamp" ] || [ -f build/pgbundle-dev/.stamp ] && echo "cached PostgreSQL" || echo "PostgreSQL from source, first build")
t0=$SECONDS
if out=$(bash tools/pgbundle_build.sh 2>&1); then
	echo "ok - tools/pgbundle_build.sh builds the bundle ($cached: $((SECONDS - t0)) s)"
	printf '%s\n' "$out" | sed 's/^/# /'
else
	echo "not ok - tools/pgbundle_build.sh builds the bundle"
	printf '%s\n' "$out" | tail -30 | sed 's/^/# /'
	exit 1
fi

# ------------------------------------------------------------------ self-contained files
size=$(du -sb "$B" | cut -f1)
echo "# bundle: $size bytes ($(du -sb "$B/bin" | cut -f1) bin, $(du -sb "$B/lib" | cut -f1) lib, $(du -sb "$B/share" | cut -f1) share)"
ok "$([ "$size" -lt $((40 * 1024 * 1024)) ] && echo small)" small \
	"the bundle is under 40 MiB (the device tool carries 64 MiB in all, Liger's 3 MB and the checkout included)"
ok "$(ls "$B/bin" | tr '\n' ' ')" "initdb pg_ctl pgbundle.sh postgres psql " "the bundle has postgres, initdb, pg_ctl, psql and its start script"
ok "$(cd "$B/lib/postgresql" && ls kernelindex.so plpgsql.so dict_snowball.so 2>&1 | tr '\n' ' ')" \
	"dict_snowball.so kernelindex.so plpgsql.so " "... the extension, PL/pgSQL and the snowball dictionaries"
ok "$(ls "$B/share/postgresql/extension/" | grep -c '^kernelindex')" \
	"$(($(ls sql/updates/*--*.sql | wc -l) + 2))" \
	"... kernelindex.control and every install and upgrade script"
# every ELF: its libraries resolve, inside the bundle or among the base system libraries
base='^(linux-vdso|/lib64/ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+\.so|libgcc_s\.so)'
bad=""
nelf=0
while IFS= read -r f; do
	head -c 4 "$f" | grep -q 'ELF' || continue
	nelf=$((nelf + 1))
	while read -r lib arrow path _; do
		[ "$arrow" = "=>" ] || { path=$lib; }
		case "$path" in
		"$B"/*) ;;
		not) bad="$bad $(basename "$f"):$lib(not found)" ;;
		*) # outside the bundle: only the base libraries, and for libkbench_cuda.so CUDA's own
			if ! [[ "$lib" =~ $base ]] && ! { [ "$(basename "$f")" = libkbench_cuda.so ] && [[ "$lib" =~ ^libcublas ]]; }; then
				bad="$bad $(basename "$f"):$lib=>$path"
			fi ;;
		esac
	done < <(env -i PATH=/usr/bin:/bin ldd "$f" 2>/dev/null | sed 's/^\s*//; s/ (0x[0-9a-f]*)$//')
done < <(find "$B" -type f)
ok "$nelf ${bad:-none}" "$nelf none" \
	"every ELF file of the bundle resolves its libraries inside it or among glibc's and the C++ runtime's (ldd, no LD_LIBRARY_PATH)"
ok "$(grep -rl --include='*.so*' -e /usr/lib/postgresql -e /opt/pg- "$B" 2>/dev/null | head -3)" "" \
	"... and no file of it names this machine's PostgreSQL"

# ------------------------------------------------------------------ start, scrubbed
ok "$(scrubbed sh -c 'command -v postgres pg_ctl psql initdb pg_config' | wc -l)" 0 "the scrubbed PATH finds no PostgreSQL program"
out=$(scrubbed KI_DEVICES=cpu bash "$B/bin/pgbundle.sh" start 2>&1)
rc=$?
ok "$rc" 0 "bin/pgbundle.sh (the bundle's copy) starts the server with the preload and CREATE EXTENSION, env -i"
printf '%s\n' "$out" | sed 's/^/# /'
[ "$rc" = 0 ] || { tail -20 "$KI_BUNDLE_RUN/server.log" 2>/dev/null | sed 's/^/# /'; exit 1; }
P=$B/bin/psql
q() { scrubbed "$P" -X -At -q -h "$KI_BUNDLE_RUN" -U postgres -d postgres -v ON_ERROR_STOP=1 -c "$1"; }
ok "$(q "SELECT split_part(version(), ' ', 2) || ' ' || current_setting('shared_preload_libraries')")" "15.18 kernelindex" \
	"the server is the bundle's PostgreSQL 15.18, kernelindex preloaded"
for ((i = 0; i < 150; i++)); do
	[ "$(q "SELECT count(*) FROM kbench_workers WHERE device = 'cpu' AND state = 'idle'" 2>/dev/null)" = 1 ] && break
	sleep 0.2
done
pm=$(head -1 "$KI_BUNDLE_RUN/data/postmaster.pid")
wpid=$(q "SELECT pid FROM kbench_workers WHERE device = 'cpu'")
ok "$([ -n "$wpid" ] && [ -d "/proc/$wpid" ] && echo yes)" yes "the CPU worker runs"
# what the postmaster and the worker map: the bundle's files, nothing of this machine's PostgreSQL
maps() { awk '$6 ~ /^\// {print $6}' "/proc/$1/maps" 2>/dev/null | sort -u; }
ok "$( (maps "$pm"; maps "$wpid") | grep -cE '^/usr/lib/postgresql|^/usr/share/postgresql|^/opt/pg-')" 0 \
	"/proc/PID/maps of the postmaster and the worker: nothing from /usr/lib/postgresql or a private copy"
ok "$(maps "$pm" | grep -c "^$B/bin/postgres$") $(maps "$wpid" | grep -c "^$B/lib/postgresql/kernelindex.so$")" "1 1" \
	"... the postmaster runs the bundle's postgres, the worker maps the bundle's kernelindex.so"
ok "$(tr '\0' '\n' <"/proc/$pm/environ" | grep -E '^(PATH|LD_LIBRARY_PATH)=' | grep -cE 'postgres|pg-gpu')" 0 \
	"the server's environment names no PostgreSQL on PATH or LD_LIBRARY_PATH"

out=$(scrubbed KI_DEVICES=cpu bash "$B/bin/pgbundle.sh" start 2>&1)
ok "$? $out $([ -d "/proc/$pm" ] && echo alive)" "1 pgbundle: a server already runs in $KI_BUNDLE_RUN (pgbundle.sh stop first) alive" \
	"a second start is refused and leaves the running server alone"

# a CPU job through the worker
j=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 8, \"hidden\": 8, \"dtype\": \"fp32\"}', device => 'cpu',
      protocol => '{\"warmup_ms\": 0, \"rep_ms\": 0.01, \"flush_bytes\": 0, \"max_samples\": 3}')")
ok "$(q "SELECT status || ' ' || run_status FROM kbench_wait($j, '60 s')")" "passed passed" "a CPU job queued with kbench_run passes through the bundle's worker"
ok "$(q "SELECT count(*) FROM kbench_jobs j JOIN kbench_runs r ON r.digest = j.run_digest WHERE j.id = $j AND r.median_ns > 0")" 1 \
	"... and its run is in kbench_runs"
ok "$(q "SELECT count(*) > 0 FROM kbench_export_catalog() l WHERE l LIKE '%BenchmarkRun%'")" t "... and in the catalog export"

out=$(scrubbed bash "$B/bin/pgbundle.sh" stop 2>&1)
rc=$?
alive() { [ -d "/proc/$1" ] && ! grep -q '^State:\s*Z' "/proc/$1/status" 2>/dev/null; }  # a zombie is gone
for ((i = 0; i < 300; i++)); do alive "$pm" || break; sleep 0.1; done  # until gone, at most 30 s
ok "$rc:$(alive "$pm" && echo running || echo gone)" "0:gone" "bin/pgbundle.sh stop stops the server"
out=$(scrubbed bash "$B/bin/pgbundle.sh" bogus 2>&1)
ok "$?:$(printf '%s' "$out" | grep -c 'pgbundle.sh start')" "2:1" "bin/pgbundle.sh with an unknown command says how to use it, exit 2"
out=$(env -i PATH="$T/path" KI_BUNDLE="$T/nothing" bash bin/pgbundle.sh start 2>&1)
ok "$? $out" "1 pgbundle: no bundle in $T/nothing (tools/pgbundle_build.sh makes one)" "bin/pgbundle.sh refuses a folder without a bundle"
mkdir -p "$T/precious"
out=$(env -i PATH="$T/path" KI_BUNDLE="$B" KI_BUNDLE_RUN="$T/precious" bash bin/pgbundle.sh start 2>&1)
ok "$? $out $([ -d "$T/precious" ] && echo kept)" \
	"1 pgbundle: $T/precious exists and is not a run folder of pgbundle.sh; remove it or set KI_BUNDLE_RUN kept" \
	"bin/pgbundle.sh never removes a run folder it did not make"
