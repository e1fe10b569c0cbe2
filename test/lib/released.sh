# released.sh: the released versions an upgrade starts from.
#   source test/lib/released.sh
#   ki_released_versions      every released version but the current one, oldest first
#   ki_install_released V     make V's install script available to CREATE EXTENSION ... VERSION 'V'
# A version is released either by its install script as shipped
# (sql/released/kernelindex--V.sql, installed by `make install`) or by a
# commit (sql/released/RELEASES: "V COMMIT", also tagged V): its install
# script is that commit's sql/NN_*.sql parts in name order, as its Makefile
# built it, read from the git history and written into the server's
# extension directory for the test (it is not shipped).
ki_released_versions() {
  local cur
  cur=$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" kernelindex.control)
  { ls sql/released/ | sed -n 's/^kernelindex--\([0-9.]*\)\.sql$/\1/p'
    sed -n 's/^\([0-9][0-9.]*\) [0-9a-f]*$/\1/p' sql/released/RELEASES; } | grep -vxF "$cur" | sort -uV
}

ki_install_released() {
  local v=$1 commit dest f
  [ -f "sql/released/kernelindex--$v.sql" ] && return 0
  commit=$(sed -n "s/^${v//./\\.} \([0-9a-f]*\)$/\1/p" sql/released/RELEASES)
  [ -n "$commit" ] || { echo "# no release $v in sql/released/RELEASES" >&2; return 1; }
  git cat-file -e "$commit^{commit}" 2>/dev/null || { echo "# commit $commit of $v is not in this clone's history" >&2; return 1; }
  dest="$(pg_config --sharedir)/extension/kernelindex--$v.sql"
  : >"$dest" || return 1
  for f in $(git ls-tree --name-only "$commit" sql/ | grep -E '^sql/[0-9][0-9]_[^/]*\.sql$' | LC_ALL=C sort); do
    git show "$commit:$f" >>"$dest" || return 1
  done
  chmod a+r "$dest"
}
