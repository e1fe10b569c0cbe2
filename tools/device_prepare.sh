#!/usr/bin/env bash
# device_prepare.sh: everything the one device call of docs/PERFORMANCE.md carries, made
# here on the CPU, checked, and the call printed.
#
#   tools/device_prepare.sh [LIGER_SOURCE]
#     LIGER_SOURCE: where tools/liger_checkout.sh takes Liger-Kernel from when
#                   third_party/Liger-Kernel is missing (a git repository or URL)
# Rebuilds build/pgbundle (tools/pgbundle_build.sh: the extension and libkbench_cuda.so of
# this checkout), makes third_party/Liger-Kernel if missing, and checks that what travels --
# the checkout's tracked and untracked files that git does not ignore, plus the two carried
# folders -- fits the device tool's 64 MiB.  Exit status 1 when something is missing or too big.
set -uo pipefail
cd "$(dirname "$0")/.."
LIMIT=$((64 * 1024 * 1024))
fail() { echo "device_prepare: $*" >&2; exit 1; }

bash tools/pgbundle_build.sh | tail -1 || fail "the bundle did not build"
[ -f build/pgbundle/lib/postgresql/libkbench_cuda.so ] ||
	fail "build/pgbundle has no libkbench_cuda.so (no nvcc here?): phase 1 would build one on the GPU host"
if [ ! -d third_party/Liger-Kernel/src ]; then
	[ $# -ge 1 ] || fail "third_party/Liger-Kernel is missing: give tools/liger_checkout.sh's SOURCE"
	bash tools/liger_checkout.sh "$1" || fail "tools/liger_checkout.sh failed"
fi
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
bundle=$(du -sb build/pgbundle | cut -f1)
liger=$(du -sb third_party/Liger-Kernel | cut -f1)
total=$((tree + bundle + liger))
printf 'device_prepare: carry %s bytes = checkout %s + build/pgbundle %s + third_party/Liger-Kernel %s (limit %s)\n' \
	"$total" "$tree" "$bundle" "$liger" "$LIMIT"
[ "$total" -lt "$LIMIT" ] || fail "what travels is over the device tool's 64 MiB"
[ -z "$(git status --porcelain 2>/dev/null)" ] ||
	echo "device_prepare: note: uncommitted changes travel too, and build/pgbundle/BUNDLE.txt says so"
cat <<'EOF'
device_prepare: ready.  The call (docs/PERFORMANCE.md):
  device run, carry ["build/pgbundle", "third_party/Liger-Kernel"], timeout_s 570:
  D=$OUT; set -o pipefail; OUT=/tmp/kb RETURN_DIR=$D BUDGET_S=480 bash bench/device.sh cuda:0 2>&1 | tee $D/device.log; tar czf $D/raw.tgz -C /tmp kb
EOF
