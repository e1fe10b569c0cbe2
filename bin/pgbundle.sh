#!/usr/bin/env bash
# pgbundle.sh: start and stop the PostgreSQL of a bundle (tools/pgbundle_build.sh makes
# one in build/pgbundle; the bundle carries a copy of this script in its bin/) on a host
# that has no PostgreSQL of its own: the GPU machine, where commands run as root.
#
#   pgbundle.sh start [postgresql.conf line...]   initdb (if needed), start, CREATE EXTENSION
#   pgbundle.sh stop                                 fast shutdown; the run folder is kept (logs)
#   pgbundle.sh psql [psql args...]                  the bundle's psql, connected
#   pgbundle.sh env                                  export lines for clients (PGHOST, ..., PSQL)
# env: KI_BUNDLE     the bundle folder (default: the folder above this script's bin/, when it
#                    is one, else build/pgbundle of the checkout)
#      KI_BUNDLE_RUN the run folder: data/, the socket, server.log (default /tmp/kernelindex-bundle)
#      KI_DEVICES    kernelindex.devices (default cuda:0: one GPU worker and no CPU worker)
#      KI_BUNDLE_USER who runs the server when started as root (default postgres if that user
#                    exists, else nobody); PostgreSQL refuses to run as root
#
# The server gets a scrubbed environment (env -i): TZ=UTC, LANG=C, HOME, PATH and
# LD_LIBRARY_PATH of the caller without any entry holding a PostgreSQL (postgres, pg_ctl,
# libpq), and the caller's KBENCH_*, CUDA_VISIBLE_DEVICES and PYTHONPATH.  It listens on a
# Unix socket in the run folder only, trust authentication, fsync off; the workers connect to
# the database 'postgres', where the extension is created.  When the bundle is not readable by
# the server's user where it lies (a root-only checkout), it is copied into the run folder.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${KI_BUNDLE:-}" ]; then
	if [ -x "$here/postgres" ]; then KI_BUNDLE=$(dirname "$here"); else KI_BUNDLE=$(dirname "$here")/build/pgbundle; fi
fi
B=$KI_BUNDLE
RUN=${KI_BUNDLE_RUN:-/tmp/kernelindex-bundle}
DEVICES=${KI_DEVICES:-cuda:0}
die() { echo "pgbundle: $*" >&2; exit 1; }
[ -x "$B/bin/postgres" ] || die "no bundle in $B (tools/pgbundle_build.sh makes one)"

if [ "$(id -u)" -eq 0 ]; then
	user=${KI_BUNDLE_USER:-$(id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody)}
	uid=$(id -u "$user") && gid=$(id -g "$user") || die "no user $user"
	if command -v setpriv >/dev/null 2>&1; then
		as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups -- "$@"; }
	else
		as_user() { runuser -u "$user" -- "$@"; }
	fi
else
	user=$(id -un)
	as_user() { "$@"; }
fi

# PATH or LD_LIBRARY_PATH without the entries that hold a PostgreSQL
scrub() {
	local out="" d
	local IFS=:
	for d in $1; do
		[ -n "$d" ] || continue
		case "$d" in *postgres*|*pgsql*) continue ;; esac
		[ -e "$d/postgres" ] || [ -e "$d/pg_ctl" ] || compgen -G "$d/libpq.so*" >/dev/null && continue
		out=${out:+$out:}$d
	done
	printf '%s' "$out"
}
server_env() {
	local v
	printf '%s\0' "PATH=$(scrub "${PATH:-/usr/bin:/bin}")" "HOME=$RUN" TZ=UTC LANG=C LC_ALL=C
	[ -n "${LD_LIBRARY_PATH:-}" ] && printf '%s\0' "LD_LIBRARY_PATH=$(scrub "$LD_LIBRARY_PATH")"
	for v in $(compgen -e); do
		case "$v" in KBENCH_*|CUDA_VISIBLE_DEVICES|PYTHONPATH) printf '%s\0' "$v=${!v}" ;; esac
	done
}
run_scrubbed() { # command...: as the server's user, in the scrubbed environment
	local -a e
	mapfile -d '' e < <(server_env)
	as_user env -i "${e[@]}" "$@"
}
bin() { # the bundle as the server's user sees it (a copy in the run folder if need be)
	if [ -f "$RUN/bundle/bin/postgres" ]; then echo "$RUN/bundle"; else echo "$B"; fi
}
psql_() { env -i PATH=/usr/bin:/bin TZ=UTC LANG=C "$(bin)/bin/psql" -X -h "$RUN" -p 5432 -U postgres -d postgres "$@"; }

start() {
	if [ -f "$RUN/data/postmaster.pid" ] && run_scrubbed "$(bin)/bin/pg_ctl" -D "$RUN/data" status >/dev/null 2>&1; then
		die "a server already runs in $RUN (pgbundle.sh stop first)"
	fi
	# the run folder is ours (marked) or new: never remove anything else
	if [ -e "$RUN" ] && ! [ -f "$RUN/.kernelindex-bundle-run" ]; then
		die "$RUN exists and is not a run folder of pgbundle.sh; remove it or set KI_BUNDLE_RUN"
	fi
	rm -rf "$RUN"
	mkdir -p "$RUN" && chmod 755 "$RUN" && : >"$RUN/.kernelindex-bundle-run" && chown "$user" "$RUN" ||
		die "cannot make $RUN"
	if ! as_user "$BASH" -c '[ -x "$1" ] && [ -r "$2" ]' - "$B/bin/postgres" "$B/share/postgresql/postgres.bki" 2>/dev/null; then
		echo "pgbundle: $user cannot read $B; using a copy in $RUN/bundle"
		cp -a "$B" "$RUN/bundle" && chmod -R a+rX "$RUN/bundle" || die "cannot copy the bundle"
	fi
	local P
	P=$(bin)
	run_scrubbed "$P/bin/initdb" -D "$RUN/data" -U postgres -A trust -E UTF8 --locale=C -N >"$RUN/initdb.log" 2>&1 ||
		{ cat "$RUN/initdb.log"; die "initdb failed"; }
	local dsm=posix
	[ -d /dev/shm ] && [ -w /dev/shm ] || dsm=mmap
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$RUN'"
		echo "port = 5432"
		echo "fsync = off"
		echo "dynamic_shared_memory_type = $dsm"
		echo "shared_preload_libraries = 'kernelindex'"
		echo "kernelindex.database = 'postgres'"
		echo "kernelindex.devices = '$DEVICES'"
		echo "log_min_messages = warning"
		local line
		for line in "$@"; do echo "$line"; done
	} | as_user tee -a "$RUN/data/postgresql.conf" >/dev/null
	run_scrubbed "$P/bin/pg_ctl" -D "$RUN/data" -l "$RUN/server.log" -w -t 60 start >/dev/null ||
		{ tail -30 "$RUN/server.log"; die "the server did not start"; }
	psql_ -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION kernelindex" || die "CREATE EXTENSION kernelindex failed"
	echo "pgbundle: PostgreSQL $("$P/bin/postgres" --version | awk '{print $3}') from $P runs as $user in $RUN" \
		"(devices $DEVICES; log $RUN/server.log)"
}

stop() {
	[ -f "$RUN/data/postmaster.pid" ] || { echo "pgbundle: no server in $RUN"; return 0; }
	run_scrubbed "$(bin)/bin/pg_ctl" -D "$RUN/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
		run_scrubbed "$(bin)/bin/pg_ctl" -D "$RUN/data" -m immediate -w -t 30 stop >/dev/null 2>&1 ||
		die "the server in $RUN did not stop"
	echo "pgbundle: stopped (log kept in $RUN/server.log)"
}

case "${1:-}" in
start) shift; start "$@" ;;
stop) stop ;;
psql) shift; psql_ "$@" ;;
env) echo "export PGHOST=$RUN PGPORT=5432 PGUSER=postgres PGDATABASE=postgres PSQL=$(bin)/bin/psql" ;;
*) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
