#!/usr/bin/env bash
# liger_checkout.sh: third_party/Liger-Kernel (git-ignored), the part of a Liger-Kernel
# checkout that a GPU run needs: src/ (the liger_kernel package that bench/liger_time.py
# and the python implementations import), benchmark/scripts/ (Liger's own benchmark
# scripts, to read beside bench/liger_time.py) and LICENSE -- about 3.3 MB, against
# ~12.6 MB for the whole tree, so it fits the device tool's 64 MiB carry beside the bundle.
# Nothing of it is committed here.
#
#   tools/liger_checkout.sh [SOURCE [REV]]
#     SOURCE: a git repository, URL or path (a bare mirror too);
#             default https://github.com/linkedin/Liger-Kernel
#     REV:    default the source's HEAD
# Writes third_party/Liger-Kernel/COMMIT (the commit and its date).
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCE=${1:-https://github.com/linkedin/Liger-Kernel}
REV=${2:-HEAD}
DEST=third_party/Liger-Kernel
if [ -d "$SOURCE" ]; then
	GIT=(git --git-dir="$(cd "$SOURCE" && git rev-parse --absolute-git-dir)")
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	git clone -q --bare --depth 1 --filter=blob:none "$SOURCE" "$tmp/liger.git"
	GIT=(git --git-dir="$tmp/liger.git")
fi
commit=$("${GIT[@]}" rev-parse "$REV^{commit}")
rm -rf "$DEST"
mkdir -p "$DEST"
"${GIT[@]}" archive "$commit" src benchmark/scripts LICENSE | tar -x -C "$DEST"
echo "$commit $("${GIT[@]}" log -1 --format=%cI "$commit")" >"$DEST/COMMIT"
echo "liger_checkout: $DEST at $(cat "$DEST/COMMIT"), $(du -sb "$DEST" | cut -f1) bytes"
