#!/usr/bin/env bash
# pgbundle_build.sh: a self-contained PostgreSQL 15 with kernelindex in it, for a
# host that has no PostgreSQL (the GPU machine the device tool lends), built into
# git-ignored folders:
#
#   build/pgbundle-src  Debian's source package of postgresql-15 (apt-get source with a
#                       private deb-src list: /etc/apt is not touched) and the build tree
#   build/pgbundle-dev  `make install` of the parts built (headers and PGXS included):
#                       what the extension is compiled against
#   build/pgbundle-ext  a copy of this checkout's sources, the extension built there
#                       against build/pgbundle-dev
#   build/pgbundle      THE BUNDLE, what travels: postgres, initdb, pg_ctl, psql, libpq,
#                       plpgsql, dict_snowball, share/, kernelindex.so (and the libraries beyond glibc
#                       it needs: libcrypto, libzstd; found through its RUNPATH $ORIGIN), libkbench_cuda.so
#                       when kernels/ built it, and bin/pgbundle.sh to start and stop it
#
# PostgreSQL is built --without-icu (ICU's data library alone is ~30 MB), readline, zlib,
# LLVM, lz4, zstd, OpenSSL and NLS: it needs only glibc.  Its programs find libpq through
# RUNPATH $ORIGIN/../lib and their share/ and lib/ relative to their own place, so the
# folder can be moved anywhere.  The PostgreSQL part is cached: it is rebuilt only when
# the version or the configure flags below change (the stamp in build/pgbundle-dev);
# the extension is rebuilt and reinstalled every time (seconds).
#
#   tools/pgbundle_build.sh          build (or refresh) build/pgbundle; prints its size
# env: KI_BUNDLE (default build/pgbundle), KI_PGBUNDLE_CACHE (default build/, see below),
#      JOBS (default nproc)
# Needs: network to deb.debian.org (the first time), a C compiler, make, bzip2, git.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# Debian 12's own archive: bookworm's postgresql-15 (the security archive's newer
# source is not served by the mirror this was written against).
DEB_VERSION=15.18-0+deb12u1
PG_VERSION=${DEB_VERSION%%-*}
# KI_PGBUNDLE_CACHE: where the source and the PostgreSQL build live; a folder
# that outlives the checkout (a CI runner's cache) saves the first build of every fresh clone.
# PostgreSQL is relocatable, so the build serves any checkout; a lock serialises builders.
# Default: /var/cache/kernelindex when it can be written (fresh clones on one machine, CI's
# included, then build PostgreSQL once), else build/ of this checkout.
if [ -z "${KI_PGBUNDLE_CACHE:-}" ]; then
	if mkdir -p /var/cache/kernelindex 2>/dev/null && [ -w /var/cache/kernelindex ]; then
		KI_PGBUNDLE_CACHE=/var/cache/kernelindex
	else
		KI_PGBUNDLE_CACHE=$ROOT/build
	fi
fi
CACHE=$KI_PGBUNDLE_CACHE
SRC=$CACHE/pgbundle-src
DEV=$CACHE/pgbundle-dev
EXT=$ROOT/build/pgbundle-ext
B=${KI_BUNDLE:-$ROOT/build/pgbundle}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
CONFIGURE=(--without-icu --without-readline --without-zlib --without-llvm --without-lz4 --without-zstd
	--without-openssl --without-gssapi --without-ldap --without-pam --without-systemd --disable-nls
	--disable-rpath)
# '\$$ORIGIN': configure writes it into Makefile.global, make turns '$$' into '$', the
# shell drops the backslash: the linker gets the literal $ORIGIN.
PG_LDFLAGS='-Wl,-rpath,\$$ORIGIN/../lib'
say() { echo "pgbundle: $*"; }

# ------------------------------------------------------------------ the source
fetch() {
	local tarball=$SRC/postgresql-15_$PG_VERSION.orig.tar.bz2
	[ -f "$tarball" ] && return 0
	mkdir -p "$SRC/apt/lists/partial" "$SRC/apt/cache/archives/partial"
	echo 'deb-src http://deb.debian.org/debian bookworm main' >"$SRC/apt/sources.list"
	local o=(-o "Dir::Etc::SourceList=$SRC/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
		-o "Dir::State::Lists=$SRC/apt/lists" -o "Dir::Cache=$SRC/apt/cache" -o APT::Sandbox::User=root)
	say "fetching postgresql-15 $DEB_VERSION (apt-get source, a private deb-src list)"
	apt-get -qq "${o[@]}" update
	# apt checks the files against the signed Sources index
	(cd "$SRC" && apt-get -qq "${o[@]}" source --download-only "postgresql-15=$DEB_VERSION")
	[ -f "$tarball" ] || { say "no $tarball after apt-get source"; exit 1; }
}

# ------------------------------------------------------------------ PostgreSQL
build_pg() {
	local stamp="$DEB_VERSION ${CONFIGURE[*]} $PG_LDFLAGS"
	if [ -f "$DEV/.stamp" ] && [ "$(cat "$DEV/.stamp")" = "$stamp" ]; then
		say "PostgreSQL $PG_VERSION: cached in $DEV"
		return 0
	fi
	fetch
	local t0=$SECONDS tree=$SRC/postgresql-$PG_VERSION
	rm -rf "$tree" "$DEV"
	tar -xjf "$SRC/postgresql-15_$PG_VERSION.orig.tar.bz2" -C "$SRC" \
		--exclude="postgresql-$PG_VERSION/doc/src" --exclude="postgresql-$PG_VERSION/contrib"
	say "unpacked in $((SECONDS - t0)) s"
	(cd "$tree" && ./configure -q --prefix="$DEV" "${CONFIGURE[@]}" LDFLAGS="$PG_LDFLAGS" CFLAGS='-O2' >"$SRC/configure.log" 2>&1) ||
		{ tail -30 "$SRC/configure.log"; exit 1; }
	say "configured in $((SECONDS - t0)) s"
	# the generated headers first, alone: parallel makes of subdirectories race on them
	make -s -C "$tree/src/backend" generated-headers >"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log"; exit 1; }
	local d
	for d in backend backend/snowball pl/plpgsql interfaces/libpq bin/initdb bin/pg_ctl bin/psql bin/pg_config; do
		make -s -j"$JOBS" -C "$tree/src/$d" >>"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log"; exit 1; }
	done
	say "compiled in $((SECONDS - t0)) s"
	for d in backend backend/snowball pl/plpgsql interfaces/libpq bin/initdb bin/pg_ctl bin/psql bin/pg_config \
		timezone include makefiles port common; do
		make -s -C "$tree/src/$d" install >>"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log"; exit 1; }
	done
	make -s -C "$tree/src" install-local >>"$SRC/make.log" 2>&1 && make -s -C "$tree/config" install >>"$SRC/make.log" 2>&1 ||
		{ tail -30 "$SRC/make.log"; exit 1; }
	echo "$stamp" >"$DEV/.stamp"
	say "PostgreSQL $PG_VERSION built and installed into $DEV in $((SECONDS - t0)) s"
}

# ------------------------------------------------------------------ the extension
# The checkout's files, NUL-separated: what git tracks or would track (.gitignore honoured).
# A copy without .git (test/mutate.sh's scratch copy, an unpacked archive) lists the same files
# through an empty repository of its own, every file there being untracked.
source_files() {
	if [ -e .git ]; then
		git ls-files -z --cached --others --exclude-standard
	else
		local g rc
		g=$(mktemp -d /tmp/kernelindex-lsfiles.XXXXXX) && git init -q --bare "$g" || return 1
		git --git-dir="$g" --work-tree=. ls-files -z --others --exclude-standard
		rc=$?
		rm -rf "$g"
		return $rc
	fi
}
build_ext() {
	local t0=$SECONDS
	# libkbench.a (plain C, no PostgreSQL) and, where nvcc is, libkbench_cuda.so: built in
	# place, shared with the checkout's own build
	make -s -C kernels -j"$JOBS" >/dev/null
	# the copy is refreshed, not remade: unchanged files keep their times (tar), so make
	# recompiles only what changed; files no longer in the checkout are removed
	# objects compiled against another PostgreSQL build are not reused
	cmp -s "$DEV/.stamp" "$EXT/.pgstamp" 2>/dev/null || rm -rf "$EXT"
	mkdir -p "$EXT"
	cp "$DEV/.stamp" "$EXT/.pgstamp"
	source_files | sort -z >"$EXT.files"
	tar --null -T "$EXT.files" -cf - | tar -xf - -C "$EXT"
	(cd "$EXT" && find . -type f ! -name '*.o' ! -name '*.so' ! -name make.log ! -name .pgstamp ! -path './stage/*' ! -path './sql/kernelindex--*' \
		-printf '%P\0' | sort -z | comm -z -23 - "$EXT.files" | xargs -0 -r rm -f)
	rm -rf "$EXT/stage"
	# -o: the checkout's libkbench.a is taken as it is (not rebuilt in the copy)
	local mk=(PG_CONFIG="$DEV/bin/pg_config" KBENCH_LIB="$ROOT/kernels/libkbench.a" -o "$ROOT/kernels/libkbench.a"
		LDFLAGS_SL='-Wl,-rpath,\$$ORIGIN')
	make -s -C "$EXT" -j"$JOBS" "${mk[@]}" >"$EXT/make.log" 2>&1 || { tail -30 "$EXT/make.log"; exit 1; }
	make -s -C "$EXT" "${mk[@]}" DESTDIR="$EXT/stage" install >>"$EXT/make.log" 2>&1 || { tail -30 "$EXT/make.log"; exit 1; }
	say "kernelindex built against PostgreSQL $PG_VERSION in $((SECONDS - t0)) s"
}

# ------------------------------------------------------------------ the bundle
assemble() {
	local pkglib share lib f
	pkglib=$("$DEV/bin/pg_config" --pkglibdir)
	share=$("$DEV/bin/pg_config" --sharedir)
	lib=$("$DEV/bin/pg_config" --libdir)
	rm -rf "$B"
	mkdir -p "$B/bin" "$B/${lib#"$DEV"/}" "$B/${pkglib#"$DEV"/}" "$B/${share#"$DEV"/}"
	for f in postgres initdb pg_ctl psql; do cp "$DEV/bin/$f" "$B/bin/"; done
	cp -P "$lib"/libpq.so* "$B/${lib#"$DEV"/}/"
	cp "$pkglib/plpgsql.so" "$pkglib/dict_snowball.so" "$B/${pkglib#"$DEV"/}/"
	(cd "$share" && tar -cf - --exclude=./extension .) | tar -xf - -C "$B/${share#"$DEV"/}"
	mkdir -p "$B/${share#"$DEV"/}/extension"
	cp "$share"/extension/plpgsql* "$B/${share#"$DEV"/}/extension/"
	# the extension, as `make install` put it into the stage
	cp -r "$EXT/stage$pkglib"/* "$B/${pkglib#"$DEV"/}/"
	# but not the command-line programs `make install` puts beside it (kbench and kbench-agent
	# link the system's libcrypto and libpq): on the GPU host they run from the checkout's kernels/
	rm -f "$B/${pkglib#"$DEV"/}/kbench" "$B/${pkglib#"$DEV"/}/kbench-agent"
	cp -r "$EXT/stage$share"/extension/* "$B/${share#"$DEV"/}/extension/"
	# what kernelindex.so needs beyond glibc and the C++ runtime (libcrypto, libzstd, ...; ldd
	# lists their own needs too), found beside it through its RUNPATH $ORIGIN
	ldd "$B/${pkglib#"$DEV"/}/kernelindex.so" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
		while read -r name path; do
			case "$name" in libc.so* | libm.so* | libdl.so* | libpthread.so* | librt.so* | libstdc++.so* | libgcc_s.so*) continue ;; esac
			case "$path" in "$B"/*) continue ;; esac
			cp -L "$path" "$B/${pkglib#"$DEV"/}/$name"
		done
	if [ -f kernels/libkbench_cuda.so ]; then cp kernels/libkbench_cuda.so "$B/${pkglib#"$DEV"/}/"; fi
	strip --strip-unneeded "$B"/bin/* "$B/${lib#"$DEV"/}"/libpq.so.* "$B/${pkglib#"$DEV"/}"/*.so* 2>/dev/null || true
	cp bin/pgbundle.sh "$B/bin/pgbundle.sh"
	{
		echo "PostgreSQL $PG_VERSION (Debian source $DEB_VERSION), configure ${CONFIGURE[*]}"
		echo "kernelindex $(sed -n "s/^default_version *= *'\\(.*\\)'/\\1/p" kernelindex.control), commit $(git rev-parse HEAD 2>/dev/null)$([ -z "$(git status --porcelain 2>/dev/null)" ] || echo ' (with uncommitted changes)')"
		echo "libkbench_cuda.so: $([ -f kernels/libkbench_cuda.so ] && echo "built here by $(command -v nvcc)" || echo 'not built here (no nvcc)')"
		echo "layout: bin/ ${lib#"$DEV"/}/ ${pkglib#"$DEV"/}/ ${share#"$DEV"/}/ (PostgreSQL finds them relative to bin/)"
		echo "start and stop: bin/pgbundle.sh (see its header)"
	} >"$B/BUNDLE.txt"
}

t0=$SECONDS
mkdir -p "$CACHE"
exec 9>"$CACHE/pgbundle.lock"
flock 9
build_pg
build_ext
assemble
say "build/pgbundle assembled: $(du -sb "$B" | cut -f1) bytes, $((SECONDS - t0)) s in all"
