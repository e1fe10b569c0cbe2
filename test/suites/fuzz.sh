#!/usr/bin/env bash
# fuzz.sh: the identity fuzzer (test/fuzz) for a bounded time in CI:
# FUZZ_SECONDS (default 60) of libFuzzer with ASan and UBSan over the parser,
# the canonical writer, the validator and the digest, checking the
# properties listed in test/fuzz/fuzz_identity.c (fixed point, member order
# and whitespace, duplicates, number round trip).  Its corpus starts afresh
# from the spec examples, the seeds and catalog lines each time.
set -uo pipefail
cd "$(dirname "$0")/../.."
if ! command -v clang >/dev/null 2>&1; then
  echo "ok - # SKIP needs=clang the identity fuzzer"; exit 0
fi
secs=${FUZZ_SECONDS:-60}
tmp=$(mktemp -d /tmp/kernelindex-fuzz.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
FUZZ_CORPUS=$tmp/corpus FUZZ_FINDINGS=$tmp/findings bash test/fuzz/run.sh "$secs" >"$tmp/log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log")
if [ "$rc" = 0 ] && [ -n "$runs" ] && [ "$runs" -gt 0 ] && [ -z "$(ls -A "$tmp/findings")" ]; then
  echo "ok - the identity fuzzer ran $secs s ($runs inputs): no crash, every property held"
else
  echo "not ok - the identity fuzzer (exit $rc, $(ls "$tmp/findings" | head -3 | tr '\n' ' '))"
  sed 's/^/# /' "$tmp/log" | tail -40
  for f in "$tmp"/findings/*; do [ -f "$f" ] && echo "# input: $(head -c 300 "$f" | od -An -c | head -5 | tr -s ' ')"; done
fi
