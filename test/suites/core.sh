#!/usr/bin/env bash
# core.sh: C unit tests of the identity core, the number writer against
# Node.js (when present), and every manifest of the catalog export.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test/bin
CC=${CC:-cc}
CFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wdeclaration-after-statement -O2 -Icore"
# the core as every user links it: core/Makefile's library (and its portable variant)
make -s -C core CC="$CC" && make -s -C core CC="$CC" VARIANT=portable || exit 1
$CC $CFLAGS test/unit/core_test.c core/build/libkicore.a -lcrypto -lm -o test/bin/core_test || exit 1
$CC $CFLAGS test/unit/catalog_check.c core/build/libkicore.a -lcrypto -lm -o test/bin/catalog_check || exit 1
$CC $CFLAGS test/unit/core_test.c core/build/portable/libkicore.a -lm -o test/bin/core_test_portable || exit 1

test/bin/core_test || echo "not ok - core_test exited with status $?"
echo "# the same tests with the portable sha256 (KI_NO_OPENSSL)"
portable=$(test/bin/core_test_portable); rc=$?
printf '%s\n' "$portable" | sed -e 's/^\(ok\|not ok\) [0-9]* - /\1 - portable build: /' | grep -E '^(ok|not ok) - portable build: (sha256|SoftwareProject)'
[ "$rc" = 0 ] && echo "ok - the portable build's unit tests all pass and it exits 0" ||
  echo "not ok - the portable build (KI_NO_OPENSSL) exited with status $rc: $(printf '%s\n' "$portable" | grep -c '^not ok') failed"

if command -v node >/dev/null 2>&1; then
  n=200000
  test/bin/core_test --numbers $n | node -e '
    const lines = require("fs").readFileSync(0, "utf8").trim().split("\n");
    let bad = 0;
    for (const l of lines) {
      const [src, ours] = l.split(" ");
      const js = JSON.stringify(Number(src));
      if (js !== ours) { if (bad++ < 10) console.error("mismatch", src, "node", js, "ours", ours); }
    }
    console.log((bad ? "not ok" : "ok") + " - number writer equals JavaScript on " + lines.length + " doubles (" + bad + " differ)");'
else
  echo "ok - # SKIP needs=node number writer differential check against JavaScript"
fi

zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | test/bin/catalog_check
