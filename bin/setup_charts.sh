#!/usr/bin/env bash
# setup_charts.sh: what drawing and checking the charts needs (Debian 12):
# xmllint (libxml2-utils), rsvg-convert (librsvg2-bin), headless Chromium and
# the DejaVu fonts the charts name.  Installs what is missing; idempotent.
# Used by test/suites/charts.sh and tools/make_report_pictures.sh (bin/setup.sh
# does not need them: the extension itself draws with no outside program).
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in libxml2-utils librsvg2-bin chromium fonts-dejavu-core python3; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup_charts: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
