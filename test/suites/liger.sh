#!/usr/bin/env bash
# liger.sh: the Liger-Kernel CSV mapping (src/liger).  Builds
# test/liger/liger_test and runs it on Liger's all_benchmark_data.csv against
# the published expectation (one JSON line per imported row) and the three
# seed documents.  Prints TAP; exits non-zero on any failure.
#
# Data comes from the repository (data/liger, test/data/seeds) and, where a
# checkout lacks it, from the shared folder beside the repository
# (../shared/data/liger, ../shared/seeds), or from $KI_SHARED.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
shared=${KI_SHARED:-$root/../shared}
cc=${CC:-cc}

pick() {	# first existing path
	for p in "$@"; do
		if [ -e "$p" ]; then echo "$p"; return 0; fi
	done
	echo "liger suite: none of $* exists" >&2
	echo "not ok 1 - liger test data present"
	exit 1
}
csv=$(pick data/liger/all_benchmark_data.csv "$shared/data/liger/all_benchmark_data.csv")
expected_zst=$(pick data/liger/kernelindex_expected.jsonl.zst "$shared/data/liger/kernelindex_expected.jsonl.zst")
seeds=$(pick test/data/seeds "$shared/seeds")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zstd -q -dc "$expected_zst" > "$tmp/expected.jsonl"

make -s -C core CC="$cc" || exit 1
$cc -std=c11 -Wall -Wextra -Werror -O2 -Icore -Isrc/liger \
	-o "$tmp/liger_test" test/liger/liger_test.c src/liger/*.c core/build/libkicore.a -lcrypto -lm

"$tmp/liger_test" "$csv" "$tmp/expected.jsonl" "$seeds"
