# tap.sh: what the suites share for TAP output and waiting.
#   source test/lib/tap.sh    (from the repository's root, where every suite runs)
#   ok GOT EXPECTED "what"    one TAP line: ok when GOT = EXPECTED, else not ok with both
#   wait_for "SQL" SECONDS    poll a SQL boolean (psql, the PG* variables) every 0.1 s, at
#                             most SECONDS * 10 times; 0 once it is true, 1 if it never was
#   has GOT PART "what"       ok when GOT contains PART, else not ok with GOT as # lines
#   only OP                   true when KI_OPS is unset or names OP (a suite run for a few operations)
#   require_torch PY          PY imports torch, or the suite ends with one not ok saying how to get it
ok() { if [ "$1" = "$2" ]; then echo "ok - $3"; else echo "not ok - $3 (got '$1', expected '$2')"; fi; }

wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ "$(psql -X -At -q -c "$1" 2>/dev/null)" = "t" ] && return 0
    sleep 0.1
  done
  return 1
}

has() { case "$1" in *"$2"*) echo "ok - $3";; *) echo "not ok - $3"; printf '%s\n' "$1" | sed 's/^/# /';; esac; }

only() { [ -z "${KI_OPS:-}" ] || case " ${KI_OPS//,/ } " in *" $1 "*) ;; *) return 1;; esac; }

require_torch() {
  "$1" -c 'import torch' 2>/dev/null && return 0
  echo "not ok - $1 imports torch (apt-get install python3-torch; bin/setup.sh installs it)"
  exit 1
}
