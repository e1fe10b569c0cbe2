# tap.sh: what the suites share for TAP output and waiting.
#   source test/lib/tap.sh    (from the repository's root, where every suite runs)
#   ok GOT EXPECTED "what"    one TAP line: ok when GOT = EXPECTED, else not ok with both
#   wait_for "SQL" SECONDS    poll a SQL boolean (psql, the PG* variables) every 0.1 s, at
#                             most SECONDS * 10 times; 0 once it is true, 1 if it never was
ok() { if [ "$1" = "$2" ]; then echo "ok - $3"; else echo "not ok - $3 (got '$1', expected '$2')"; fi; }

wait_for() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ "$(psql -X -At -q -c "$1" 2>/dev/null)" = "t" ] && return 0
    sleep 0.1
  done
  return 1
}
