#!/usr/bin/env bash
# core.sh: C unit tests of the identity core, the number writer against
# Node.js (when present), and every manifest of the catalog export.
set -uo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test/bin
CC=${CC:-cc}
CFLAGS="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wdeclaration-after-statement -O2 -Isrc/core"
$CC $CFLAGS test/unit/core_test.c src/core/*.c -lcrypto -lm -o test/bin/core_test || exit 1
$CC $CFLAGS test/unit/catalog_check.c src/core/*.c -lcrypto -lm -o test/bin/catalog_check || exit 1
$CC $CFLAGS -DKI_NO_OPENSSL test/unit/core_test.c src/core/*.c -lm -o test/bin/core_test_portable || exit 1

test/bin/core_test
echo "# the same tests with the portable sha256 (KI_NO_OPENSSL)"
test/bin/core_test_portable | sed -e 's/^\(ok\|not ok\) [0-9]* - /\1 - portable build: /' | grep -E '^(ok|not ok) - portable build: (sha256|SoftwareProject)'

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
  echo "ok - # SKIP node not installed: number writer differential check"
fi

zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | test/bin/catalog_check
