# attacks.sh: counting attacks and bad inputs, for the suites that try them
# (test/suites/security.sh; others may source it and add theirs).
#   source test/lib/attacks.sh
#   attack "what was tried" "$got" "$expected"   # held when got = expected
#   attack_refused ROLE SQLSTATE "SQL" ["what"]  # refused with that SQLSTATE
#   bad_input ROLE SQLSTATE "SQL" ["what"]       # the same, counted as bad input
#   attacks_summary                              # the counts, and one TAP line
# Each prints one TAP line.  An attack is counted as held only when the
# check it names passed; a bad input only when it failed with the expected
# SQLSTATE and a lower-case message.  psql connects as ROLE (trust
# authentication on the test cluster's socket).
KI_ATTACKS=${KI_ATTACKS:-0}
KI_ATTACKS_HELD=${KI_ATTACKS_HELD:-0}
KI_BAD_INPUTS=${KI_BAD_INPUTS:-0}
KI_BAD_INPUTS_REFUSED=${KI_BAD_INPUTS_REFUSED:-0}

attack() {
  KI_ATTACKS=$((KI_ATTACKS + 1))
  if [ "$2" = "$3" ]; then
    KI_ATTACKS_HELD=$((KI_ATTACKS_HELD + 1))
    echo "ok - attack held: $1"
  else
    echo "not ok - attack got through: $1 (got '$2', expected '$3')"
  fi
}

# _refused KIND ROLE SQLSTATE SQL WHAT: SQL as ROLE fails with SQLSTATE and a lower-case message
_refused() {
  local kind=$1 role=$2 state=$3 sql=$4 what=$5 out
  if [ "$kind" = attack ]; then KI_ATTACKS=$((KI_ATTACKS + 1)); else KI_BAD_INPUTS=$((KI_BAD_INPUTS + 1)); fi
  out=$(psql -X -q -At -U "$role" -v VERBOSITY=verbose -c "$sql" 2>&1)
  # a here-string, not a pipe: grep -q stops early, and pipefail would count the writer's SIGPIPE
  if grep -qE "^ERROR:  $state: [a-z]" <<<"$out"; then
    if [ "$kind" = attack ]; then
      KI_ATTACKS_HELD=$((KI_ATTACKS_HELD + 1)); echo "ok - attack refused ($state): $what"
    else
      KI_BAD_INPUTS_REFUSED=$((KI_BAD_INPUTS_REFUSED + 1)); echo "ok - bad input refused ($state): $what"
    fi
  else
    echo "not ok - $kind not refused with $state: $what"
    printf '%s\n' "$out" | head -5 | sed 's/^/#   /'
  fi
}
# bad_input ROLE SQLSTATE SQL [WHAT]: a malformed argument
bad_input() { _refused input "$1" "$2" "$3" "${4:-$3}"; }
# attack_refused ROLE SQLSTATE SQL [WHAT]: something the role has no right to do
attack_refused() { _refused attack "$1" "$2" "$3" "${4:-$3}"; }

attacks_summary() {
  echo "# attacks tried: $KI_ATTACKS, held: $KI_ATTACKS_HELD; bad inputs tried: $KI_BAD_INPUTS, refused: $KI_BAD_INPUTS_REFUSED"
  if [ "$KI_ATTACKS_HELD" -eq "$KI_ATTACKS" ] && [ "$KI_BAD_INPUTS_REFUSED" -eq "$KI_BAD_INPUTS" ]; then
    echo "ok - none of the $KI_ATTACKS attacks and $KI_BAD_INPUTS bad inputs got through"
  else
    echo "not ok - $((KI_ATTACKS - KI_ATTACKS_HELD)) of $KI_ATTACKS attacks and $((KI_BAD_INPUTS - KI_BAD_INPUTS_REFUSED)) of $KI_BAD_INPUTS bad inputs got through"
  fi
}
