# released.sh: the released versions an upgrade starts from.
#   source test/lib/released.sh
#   ki_released_versions      every released version but the current one, oldest first
#   ki_install_released V     make V's install script available to CREATE EXTENSION ... VERSION 'V'
# The released versions are those an update starts from: the V of every
# modfile sql/updates/V--W.sql.  Each has a line "V COMMIT" in
# sql/updates/RELEASES, the commit that shipped it.  Its install script is
# not kept in the tree (it is not shipped either): it is built from that
# commit's own files by that commit's own Makefile (`make
# sql/kernelindex--V.sql`, which concatenated sql/NN_*.sql up to 0.2.0 and
# is prelude + schema + code since 0.3.0), in a scratch folder, and written
# into the server's extension directory for the test.  The commits are on
# main's history, so any full clone has them, tags or not (a clone of one
# branch carries no tags); a shallow clone does not (git fetch --unshallow).
# A tag named V, where there is one, must name the same commit.
ki_released_versions() {
  local f v
  for f in sql/updates/*--*.sql; do
    [ -e "$f" ] || continue
    v=${f##*/}; echo "${v%%--*}"
  done | sort -uV
}

# the commit that shipped V, from sql/updates/RELEASES
ki_release_commit() {
  awk -v v="$1" '$1 == v && NF == 2 { print $2 }' sql/updates/RELEASES 2>/dev/null | head -1
}

ki_install_released() {
  local v=$1 c t tmp dest rc=0
  c=$(ki_release_commit "$v")
  [ -n "$c" ] || { echo "# release $v has no line in sql/updates/RELEASES" >&2; return 1; }
  git cat-file -e "$c^{commit}" 2>/dev/null || {
    echo "# release $v's commit $c is not in this clone$( [ -f "$(git rev-parse --git-dir 2>/dev/null)/shallow" ] && echo ' (a shallow clone: git fetch --unshallow)')" >&2
    return 1; }
  if t=$(git rev-parse -q --verify "refs/tags/$v^{commit}" 2>/dev/null) && [ "$t" != "$c" ]; then
    echo "# tag $v names $t, sql/updates/RELEASES says $c" >&2; return 1
  fi
  dest="$(pg_config --sharedir)/extension/kernelindex--$v.sql"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernelindex-release-$v.XXXXXX") || return 1
  git archive "$c" Makefile kernelindex.control sql | tar -x -C "$tmp" &&
    make -s -C "$tmp" "sql/kernelindex--$v.sql" >/dev/null &&
    cp "$tmp/sql/kernelindex--$v.sql" "$dest" && chmod a+r "$dest" || rc=1
  rm -rf "$tmp"
  return $rc
}
