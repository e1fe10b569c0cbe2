#!/usr/bin/env bash
# pgmajor_build.sh MAJOR [DEST]: PostgreSQL MAJOR (17 or 18; 15 works too) built from
# Debian's source package, for testing kernelindex on the majors that Debian 12 does
# not ship (README, "Supported PostgreSQL versions").  The source comes from Debian's
# archive through a private deb-src list (/etc/apt is not touched): trixie for 17,
# unstable for 18, bookworm for 15.  The build is cached OUTSIDE the clone:
#
#   $KI_PGMAJOR_CACHE/pgMAJOR/src      the source package and the build tree
#   $KI_PGMAJOR_CACHE/pgMAJOR/install  `make -C src install`: server, client programs,
#                                      PGXS, pg_regress and pg_isolation_regress
#                                      (default cache: /var/cache/kernelindex)
#
# A fresh clone on the same machine reuses it (rebuilt only when the Debian version
# or the configure flags change: the stamp in install/.stamp); a lock serialises
# builders.  With DEST the pristine build is copied to DEST (rsync-like: removed and
# copied again), a sandbox of the checkout's own where `make install` may write
# without touching the cache or another checkout (PostgreSQL finds its share/ and
# lib/ relative to its binaries, libpq through RUNPATH $ORIGIN/../lib).
# Prints the bin directory of the result on its last line.
#
# env: KI_PGMAJOR_CACHE, KI_PG<MAJOR>_DEB (a Debian version to pin, e.g. 17.6-0+deb13u1;
#      default: the newest in the suite), JOBS (default nproc).  Runs under nice.
# Needs: network to deb.debian.org the first time, a C compiler, make, bison, flex, perl.
set -euo pipefail
major=${1:?usage: tools/pgmajor_build.sh MAJOR [DEST]}
dest=${2:-}
case "$major" in
	15) suite=bookworm ;;
	16) suite=bookworm-backports ;;  # not tested; here for completeness
	17) suite=trixie ;;
	18) suite=unstable ;;
	*) echo "pgmajor: no Debian suite known for PostgreSQL $major" >&2; exit 2 ;;
esac
CACHE=${KI_PGMAJOR_CACHE:-/var/cache/kernelindex}/pg$major
SRC=$CACHE/src
INST=$CACHE/install
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
# as tools/pgbundle_build.sh: nothing beyond glibc; relocatable
CONFIGURE=(--without-icu --without-readline --without-zlib --without-llvm --without-lz4 --without-zstd
	--without-openssl --without-gssapi --without-ldap --without-pam --without-systemd --disable-nls
	--disable-rpath --enable-tap-tests)
PG_LDFLAGS='-Wl,-rpath,\$$ORIGIN/../lib'
say() { echo "pgmajor $major: $*" >&2; }
pin_var=KI_PG${major}_DEB
pin=${!pin_var:-}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9

apt_o=(-o "Dir::Etc::SourceList=$SRC/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o "Dir::State::Lists=$SRC/apt/lists" -o "Dir::Cache=$SRC/apt/cache" -o APT::Sandbox::User=root)

# the Debian version to build: the pin, or the one already built, or the suite's newest
want=$pin
if [ -z "$want" ] && [ -f "$INST/.stamp" ]; then want=$(cut -d' ' -f1 "$INST/.stamp"); fi
if [ -z "$want" ]; then
	mkdir -p "$SRC/apt/lists/partial" "$SRC/apt/cache/archives/partial"
	echo "deb-src http://deb.debian.org/debian $suite main" >"$SRC/apt/sources.list"
	say "reading $suite's Sources index (private deb-src list)"
	apt-get -qq "${apt_o[@]}" update
	want=$(apt-cache "${apt_o[@]}" showsrc "postgresql-$major" | sed -n 's/^Version: //p' | sort -V | tail -1)
	[ -n "$want" ] || { say "no postgresql-$major source in $suite"; exit 1; }
fi
stamp="$want ${CONFIGURE[*]} $PG_LDFLAGS"
if [ -f "$INST/.stamp" ] && [ "$(cat "$INST/.stamp")" = "$stamp" ]; then
	say "Debian $want: cached in $INST"
else
	t0=$SECONDS
	up=${want%%-*}; up=${up#*:}
	tarball=$(ls "$SRC"/postgresql-"${major}"_"$up".orig.tar.* 2>/dev/null | head -1 || true)
	if [ -z "$tarball" ]; then
		mkdir -p "$SRC/apt/lists/partial" "$SRC/apt/cache/archives/partial"
		echo "deb-src http://deb.debian.org/debian $suite main" >"$SRC/apt/sources.list"
		[ -n "$(ls "$SRC/apt/lists" 2>/dev/null | grep -v partial)" ] || apt-get -qq "${apt_o[@]}" update
		say "fetching postgresql-$major $want (apt-get source, checked against the signed index)"
		if ! (cd "$SRC" && apt-get -qq "${apt_o[@]}" source --download-only "postgresql-$major=$want"); then
			# The mirror's index can name a version its pool does not serve yet (trixie's
			# 17.12 here): the previous point release, still in the pool, fetched by hand and
			# checked as dscverify would: the .dsc's OpenPGP signature against Debian's
			# developers' keyring (debian-keyring), the files against the .dsc's SHA-256 sums.
			fb_var=KI_PG${major}_FALLBACK
			case "$major" in 17) fb_default=17.11-0+deb13u1 ;; 18) fb_default=18.6-3 ;; *) fb_default= ;; esac
			want=${!fb_var:-$fb_default}
			[ -n "$want" ] || { say "apt-get source failed and no fallback version is known"; exit 1; }
			up=${want%%-*}; up=${up#*:}
			stamp="$want ${CONFIGURE[*]} $PG_LDFLAGS"
			say "not served: falling back to $want from the pool, verified with gpgv and sha256sum"
			[ -f /usr/share/keyrings/debian-keyring.gpg ] || { say "needs debian-keyring (apt-get install debian-keyring)"; exit 1; }
			pool=http://deb.debian.org/debian/pool/main/p/postgresql-$major
			dsc=postgresql-${major}_${want}.dsc
			curl -fsS -o "$SRC/$dsc" "$pool/${dsc//+/%2b}"
			gpgv --keyring /usr/share/keyrings/debian-keyring.gpg "$SRC/$dsc" 2>"$SRC/gpgv.log" ||
				{ cat "$SRC/gpgv.log" >&2; say "the signature of $dsc does not verify"; exit 1; }
			sed -n '/^Checksums-Sha256:/,/^[^ ]/p' "$SRC/$dsc" | awk 'NF == 3 {print $1 "  " $3}' >"$SRC/sums"
			while read -r _ f; do
				case "$f" in *.orig.tar.*) curl -fsS -o "$SRC/$f" "$pool/${f//+/%2b}" ;; esac
			done <"$SRC/sums"
			(cd "$SRC" && grep 'orig.tar' sums | sha256sum -c --quiet -) || { say "checksum mismatch"; exit 1; }
		fi
		tarball=$(ls "$SRC"/postgresql-"${major}"_"$up".orig.tar.* | head -1)
	fi
	tree=$SRC/postgresql-$up
	rm -rf "$INST"
	# An interrupted build of the same version and flags goes on where it stopped (make is
	# incremental); otherwise the tree is unpacked afresh.  doc/src/sgml/ref stays: psql's
	# sql_help.h is made from it (17 and later ship no generated files; bison and flex too).
	if [ -d "$tree" ] && [ "$(cat "$SRC/.tree-stamp" 2>/dev/null)" = "$stamp" ]; then
		say "resuming the build in $tree"
	else
		rm -rf "$tree" "$SRC/.tree-stamp"
		tar -xf "$tarball" -C "$SRC" --exclude="postgresql-$up/contrib"
		(cd "$tree" && nice ./configure -q --prefix="$INST" "${CONFIGURE[@]}" LDFLAGS="$PG_LDFLAGS" CFLAGS='-O2' >"$SRC/configure.log" 2>&1) ||
			{ tail -30 "$SRC/configure.log" >&2; exit 1; }
		echo "$stamp" >"$SRC/.tree-stamp"
		say "configured in $((SECONDS - t0)) s"
	fi
	# contrib stays out but for contrib/spi: src/test/regress (pg_regress, which PGXS's
	# installcheck runs) makes its refint and autoinc modules
	[ -d "$tree/contrib/spi" ] || tar -xf "$tarball" -C "$SRC" "postgresql-$up/contrib/spi" "postgresql-$up/contrib/contrib-global.mk"
	# the generated headers first, alone: parallel makes of subdirectories race on them
	nice make -s -C "$tree/src/backend" generated-headers >"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log" >&2; exit 1; }
	nice make -s -j"$JOBS" -C "$tree/src" >>"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log" >&2; exit 1; }
	say "compiled in $((SECONDS - t0)) s"
	nice make -s -C "$tree/src" install >>"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log" >&2; exit 1; }
	# the Perl test modules (PostgreSQL::Test::Cluster) into pgxs: test/t/*.pl run on this server
	nice make -s -C "$tree/src/test/perl" install >>"$SRC/make.log" 2>&1 || { tail -30 "$SRC/make.log" >&2; exit 1; }
	echo "$stamp" >"$INST/.stamp"
	echo "$((SECONDS - t0))" >"$INST/.build_seconds"
	rm -rf "$tree" "$SRC/.tree-stamp"
	say "Debian $want built and installed into $INST in $((SECONDS - t0)) s"
fi
bin=$INST/bin
if [ -n "$dest" ]; then
	if ! cmp -s "$INST/.stamp" "$dest/.stamp" 2>/dev/null; then
		rm -rf "$dest"
		mkdir -p "$(dirname "$dest")"
		cp -a "$INST" "$dest"
	fi
	chmod -R a+rX "$dest"
	bin=$dest/bin
fi
echo "$bin"
