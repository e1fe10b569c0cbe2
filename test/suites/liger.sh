#!/usr/bin/env bash
# Liger-Kernel CSV mapping: build test/liger/liger_test and run it against the
# upstream CSV and the published expectation (shared/ sits beside the repo).
# Run from the repository root; exits non-zero on any failure.
set -euo pipefail

root=$(pwd)
shared=${KI_SHARED:-$root/../shared}
csv=$shared/data/liger/all_benchmark_data.csv
expected_zst=$shared/data/liger/kernelindex_expected.jsonl.zst
seeds=$shared/seeds
cc=${CC:-cc}

for f in "$csv" "$expected_zst" "$seeds"; do
	if [ ! -e "$f" ]; then
		echo "liger suite: missing $f" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zstd -q -dc "$expected_zst" > "$tmp/expected.jsonl"

$cc -std=c11 -Wall -Wextra -Werror -O2 -Isrc/core -Isrc/liger \
	-o "$tmp/liger_test" test/liger/liger_test.c src/core/*.c src/liger/*.c -lcrypto -lm

"$tmp/liger_test" "$csv" "$tmp/expected.jsonl" "$seeds"
