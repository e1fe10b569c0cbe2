#!/usr/bin/env bash
# run.sh: build the identity fuzzer (libFuzzer, ASan, UBSan) and run it.
#   test/fuzz/run.sh [seconds]      (default 300)
# The corpus (FUZZ_CORPUS, default test/fuzz/corpus) starts from the spec
# examples, the seeds and catalog lines; findings (crash-*, leak-*,
# timeout-*) land in FUZZ_FINDINGS (default test/fuzz/findings/).  Exits
# non-zero when the fuzzer finds a crash or a broken property.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-300}
out=test/fuzz/build
corpus=${FUZZ_CORPUS:-test/fuzz/corpus}
findings=${FUZZ_FINDINGS:-test/fuzz/findings}
mkdir -p "$out" "$corpus" "$findings"
make -s -C core CC=clang VARIANT=fuzz
clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Icore test/fuzz/fuzz_identity.c core/build/fuzz/libkicore.a -lcrypto -lm -o "$out/fuzz_identity"
if [ -z "$(ls -A "$corpus")" ]; then
  i=0
  for f in test/data/spec-examples/*.json test/data/spec-examples/invalid/*.json test/data/seeds/*.json; do
    cp "$f" "$corpus/seed-$i"; i=$((i + 1))
  done
  zstd -dc data/kernelindex/catalog-2026-08-16-0022af0b.jsonl.zst | awk 'NR % 400 == 0' |
    while IFS= read -r line; do i=$((i + 1)); printf '%s' "$line" > "$corpus/line-$i"; done
fi
"$out/fuzz_identity" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" 2>&1 | tail -25
