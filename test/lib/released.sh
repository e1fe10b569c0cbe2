# released.sh: the released versions an upgrade starts from.
#   source test/lib/released.sh
#   ki_released_versions      every released version but the current one, oldest first
#   ki_install_released V     make V's install script available to CREATE EXTENSION ... VERSION 'V'
# A release is a git tag named by its version (0.1.0, 0.2.0, ...) on the
# commit that shipped it.  Its install script is not kept in the tree (it
# is not shipped either): it is built from the tag's own files by the tag's
# own Makefile (`make sql/kernelindex--V.sql`, which concatenated
# sql/NN_*.sql up to 0.2.0 and is prelude + schema + code since 0.3.0), in a
# scratch folder, and written into the server's extension directory for the
# test.  A fresh `git clone` has the tags; a shallow one needs
# `git fetch --tags --unshallow`.
ki_released_versions() {
  local cur
  cur=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
  git tag -l | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | grep -vxF "$cur" | sort -V
}

ki_install_released() {
  local v=$1 tmp dest rc=0
  git cat-file -e "refs/tags/$v^{commit}" 2>/dev/null ||
    { echo "# no tag $v in this clone (git fetch --tags)" >&2; return 1; }
  dest="$(pg_config --sharedir)/extension/kernelindex--$v.sql"
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/kernelindex-release-$v.XXXXXX") || return 1
  git archive "refs/tags/$v" Makefile kernelindex.control sql | tar -x -C "$tmp" &&
    make -s -C "$tmp" "sql/kernelindex--$v.sql" >/dev/null &&
    cp "$tmp/sql/kernelindex--$v.sql" "$dest" && chmod a+r "$dest" || rc=1
  rm -rf "$tmp"
  return $rc
}
