#!/usr/bin/env bash
# pg_sandbox.sh DIR: a private copy of this machine's PostgreSQL 15 (server,
# client programs, PGXS and headers) under DIR, so that several working
# copies can each `make install` and run their tests without overwriting
# one another's extension.  PostgreSQL finds its share/ and lib/ relative to
# its binaries, so the copy works where it lies.  Then:
#   export KI_PGBIN=DIR/usr/lib/postgresql/15/bin PATH=DIR/usr/lib/postgresql/15/bin:$PATH
# and bin/test.sh, the suites and `make install` use it.
set -euo pipefail
dir=${1:?usage: tools/pg_sandbox.sh DIR}
mkdir -p "$dir/usr/lib/postgresql" "$dir/usr/share/postgresql" "$dir/usr/include"
cp -a /usr/lib/postgresql/15 "$dir/usr/lib/postgresql/"
cp -a /usr/share/postgresql/15 "$dir/usr/share/postgresql/"
cp -a /usr/include/postgresql "$dir/usr/include/"
chmod -R a+rX "$dir"
echo "export KI_PGBIN=$dir/usr/lib/postgresql/15/bin PATH=$dir/usr/lib/postgresql/15/bin:\$PATH"
