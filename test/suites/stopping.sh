#!/usr/bin/env bash
# stopping.sh: adaptive stopping (issue 27 item 3, docs/KERNELS.md, Stopping),
# on the fake CUDA backend (test/fake_cuda), whose KBENCH_FAKE_CUDA_TIMES
# reports chosen sample times, so that no check depends on the machine:
#   - a quiet GPU (every sample 50 us) stops by the noise rule, not a cap,
#     and is not unstable;
#   - a GPU whose samples jitter at random (10-50 us, stdev/mean about 35%)
#     never settles: it stops at the maximum time, is marked unstable, and
#     its manifest says so (metadata.labels.stop_rule, sourceNative.metrics
#     noise_stdrel and unstable), the composite still valid in the core;
#   - --fixed (the protocol's "adaptive": false) takes the do_bench count and
#     says "fixed"; the protocol digest differs from the adaptive one; kbench
#     compare's runs are fixed counts under that protocol;
#   - through a server: both runs ingested into one cohort, the unstable
#     (faster) run leads kbench_records and is marked unstable there; a bad
#     protocol setting is refused.
# Prints TAP lines.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH="${KI_PGBIN:-/usr/lib/postgresql/15/bin}:$PATH"
source bin/pgcluster.sh
source test/lib/tap.sh
PY=/usr/bin/python3
command -v $PY >/dev/null || PY=python3

if make -s -C kernels NVCC= libkbench.a kbench fake-cuda >/tmp/stopping-build.$$ 2>&1; then
	echo "ok - kernels/, kbench and the fake CUDA backend build"
else
	echo "not ok - kernels/ builds"; sed 's/^/# /' /tmp/stopping-build.$$; rm -f /tmp/stopping-build.$$; exit 1
fi
rm -f /tmp/stopping-build.$$
FAKE=$(mktemp -d /tmp/kernelindex-stopping.XXXXXX)
chmod 755 "$FAKE"
trap 'ki_cluster_stop; rm -rf "$FAKE"' EXIT
cp kernels/build/libkbench_fake_cuda.so "$FAKE/"
export KBENCH_CUDA_LIB=$FAKE/libkbench_fake_cuda.so KBENCH_FAKE_CUDA=ok
KB=kernels/kbench
CASE=(layer_norm forward rows=64 hidden=256 --device cuda:0 --warmup-ms 1 --rep-ms 20 --flush-bytes 65536)
field() { $PY -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1"; }

# a quiet GPU: the noise rule stops it (stdev/mean 0 <= 0.5%), before any cap
quiet=$(KBENCH_FAKE_CUDA_TIMES=steady timeout 120 $KB run "${CASE[@]}" --manifests --json); rc=$?
ok "$rc $(field "d['status'], d['summary']['stop_rule'], d['summary']['unstable'], d['summary']['noise_stdrel']" <<<"$quiet")" \
  "0 ('passed', 'noise_target', False, 0)" "a quiet fake GPU (every sample 50 us) stops by the noise rule and is not unstable"
ok "$(field "d['composite']['run']['metadata']['labels']['stop_rule'], d['composite']['run']['spec']['sourceNative']['metrics']['unstable']" <<<"$quiet")" \
  "('noise_target', 0)" "... its run manifest says so: metadata.labels.stop_rule, sourceNative.metrics.unstable"

# a jittery GPU: never settles; stops at the maximum time, unstable
noisy=$(KBENCH_FAKE_CUDA_TIMES=jitter timeout 120 $KB run "${CASE[@]}" --manifests --json); rc=$?
ok "$rc $(field "d['status'], d['summary']['stop_rule'], d['summary']['unstable'], d['summary']['noise_stdrel'] > 0.2" <<<"$noisy")" \
  "0 ('passed', 'max_time', True, True)" "a jittery fake GPU (samples 10-50 us at random) stops at the maximum time, flagged unstable"
ok "$(field "d['composite']['run']['metadata']['labels']['stop_rule'], d['composite']['run']['spec']['sourceNative']['metrics']['unstable'], d['composite']['run']['spec']['sourceNative']['metrics']['noise_stdrel'] > 0.2, d['composite']['run']['spec']['timing']['samples'] > 10" <<<"$noisy")" \
  "('max_time', 1, True, True)" "... its manifest records the rule, the flag, the noise reached, and more samples than the minimum"
ok "$(field "d['digests']['protocol']" <<<"$quiet")" "$(field "d['digests']['protocol']" <<<"$noisy")" \
  "the quiet and the jittery runs share one protocol (the rule is the run's, not the protocol's)"
has_notes=$(field "'Adaptive stop' in d['composite']['protocol']['spec']['comparability']['notes']" <<<"$quiet")
ok "$has_notes" True "the protocol's notes describe the stop rule"

# --fixed: the do_bench count, no more; another protocol
fixed=$(KBENCH_FAKE_CUDA_TIMES=jitter timeout 120 $KB run "${CASE[@]}" --fixed --manifests --json); rc=$?
ok "$rc $(field "d['summary']['stop_rule'], d['summary']['unstable']" <<<"$fixed")" "0 ('fixed', False)" \
  "--fixed (adaptive false): the repetition count from rep_ms, stop rule 'fixed', never unstable"
ok "$(field "d['digests']['protocol'] != '$(field "d['digests']['protocol']" <<<"$quiet")'" <<<"$fixed")" True \
  "... and another protocol digest than the adaptive one"
cmp=$(timeout 120 $KB compare layer_norm forward rows=64 hidden=256 --device cuda:0 --a cuda --b cuda --rounds 3 --warmup-ms 1 --rep-ms 20 --flush-bytes 65536 --json)
ok "$(field "d['a']['composite']['run']['spec']['protocolDigest'] == '$(field "d['digests']['protocol']" <<<"$fixed")', d['a']['composite']['run']['metadata']['labels']['stop_rule']" <<<"$cmp")" "(True, 'fixed')" \
  "kbench compare's paired rounds are fixed counts, and their protocol says so (the --fixed digest)"
out=$(timeout 60 $KB run "${CASE[@]}" --noise-target-pct 0 2>&1); rc=$?
ok "$rc $(grep -c 'noise-target-pct must be a number from' <<<"$out")" "2 1" "kbench refuses --noise-target-pct 0 (the table's range)"

# ---------------------------------------------------------------- the server
ki_cluster_start "shared_preload_libraries = 'kernelindex'" "kernelindex.database = 'kbench'" \
                 "kernelindex.devices = 'cpu'" || { echo "not ok - the cluster starts"; exit 1; }
createdb kbench && psql -X -q -d kbench -c "CREATE EXTENSION kernelindex" || { echo "not ok - extension created"; exit 1; }
export PGDATABASE=kbench
q() { psql -X -At -q -v ON_ERROR_STOP=1 -c "$1"; }
ingest() {
	local j=$1
	for k in operation workload implementation composite; do
		field "json.dumps(d['$k'])" <<<"$j" >"$FAKE/doc.json"
		chmod 644 "$FAKE/doc.json"
		q "SELECT count(*) FROM kbench_ingest(pg_read_file('$FAKE/doc.json')::json)" >/dev/null || echo "# ingest of $k failed"
	done
}
ingest "$quiet"
ingest "$noisy"
QD=$(field "d['digests']['run']" <<<"$quiet")
ND=$(field "d['digests']['run']" <<<"$noisy")
ok "$(q "SELECT count(*) || ' ' || bool_and(status = 'passed') || ' ' || (min(primary_ns) FILTER (WHERE digest = '$ND') < min(primary_ns) FILTER (WHERE digest = '$QD')) || ' ' || count(DISTINCT (workload_digest, protocol_digest, environment_digest, implementation_digest)) FROM kbench_runs")" \
  "2 true true 1" "both runs stored, passed, one cohort and implementation: the unstable one is the faster"
ok "$(q "SELECT run_digest || ' ' || unstable FROM kbench_records")" "$ND true" \
  "kbench_records marks the unstable run: the implementation's best, the leader, flagged unstable"
ok "$(q "SELECT count(*) FROM kbench_records WHERE NOT unstable")" 0 \
  "... so a reader who takes only settled runs (WHERE NOT unstable) sees no record here"
# ---------------------------------------------------------------- unstable runs and alerts
# The rule (docs/ANALYTICS.md, Alert rules): an unstable run never opens an
# alert on its own (flagged, it only folds into an open one), and an unstable
# confirmation rerun gives no verdict (the alert stays open).  The series so
# far: the quiet run (50 us) and the noisy one (10-50 us).  A slower unstable
# run (100-140 us at random) is flagged by the percent rule but opens nothing;
# a settled slower run (120 us) opens the alert.
q "SELECT kbench_alert_rule('unstable-test', 'percent', window_size => 2, threshold => 5, confirm => false)" >/dev/null
slow_u=$(KBENCH_FAKE_CUDA_TIMES=jitter:100000:140000 timeout 120 $KB run "${CASE[@]}" --manifests --json)
ok "$(field "d['summary']['unstable'], d['summary']['stop_rule']" <<<"$slow_u")" "(True, 'max_time')" "a slower jittery run (100-140 us) is unstable"
ingest "$slow_u"
SU=$(field "d['digests']['run']" <<<"$slow_u")
ok "$(q "SELECT count(*) FROM kbench_regressions(NULL, method => 'percent', window_size => 2) WHERE run_digest = '$SU'") $(q "SELECT count(*) FROM kbench_alerts WHERE '$SU' = ANY (runs)")" "1 0" \
  "the unstable slower run is a regression by the percent rule, but opens no alert on its own"
slow_s=$(KBENCH_FAKE_CUDA_TIMES=steady:120000 timeout 120 $KB run "${CASE[@]}" --manifests --json)
ingest "$slow_s"
SS=$(field "d['digests']['run']" <<<"$slow_s")
ok "$(field "d['summary']['unstable']" <<<"$slow_s") $(q "SELECT count(*) FROM kbench_alerts a JOIN kbench_alert_rules r ON r.id = a.rule_id WHERE r.name = 'unstable-test' AND a.run_digest = '$SS'")" "False 1" \
  "a settled slower run (120 us) opens the alert"
AID=$(q "SELECT a.id FROM kbench_alerts a JOIN kbench_alert_rules r ON r.id = a.rule_id WHERE r.name = 'unstable-test' AND a.run_digest = '$SS'")
q "INSERT INTO kbench_alert_confirmations (alert_id) VALUES ($AID)" >/dev/null
q "SELECT _kernelindex.judge_confirmation(c, r) FROM kbench_alert_confirmations c, kbench_runs r WHERE c.alert_id = $AID AND r.digest = '$SU'" >/dev/null
ok "$(q "SELECT coalesce(c.verdict, 'none') || ' ' || a.status || ' ' || (c.error LIKE '%unstable%') FROM kbench_alerts a JOIN kbench_alert_confirmations c ON c.alert_id = a.id WHERE a.id = $AID")" \
  "none open true" "an unstable confirmation rerun gives no verdict: the alert stays open, and the confirmation says why"
q "SELECT _kernelindex.judge_confirmation(c, r) FROM kbench_alert_confirmations c, kbench_runs r WHERE c.alert_id = $AID AND r.digest = '$SS'" >/dev/null
ok "$(q "SELECT c.verdict || ' ' || a.status FROM kbench_alerts a JOIN kbench_alert_confirmations c ON c.alert_id = a.id WHERE a.id = $AID")" \
  "confirmed confirmed" "a settled rerun as slow gives the verdict (confirmed)"

out=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 4, \"hidden\": 8}', protocol => '{\"adaptive\": 1}')" 2>&1)
ok "$(grep -c 'protocol setting "adaptive" must be true or false' <<<"$out")" 1 "kbench_run refuses a protocol whose adaptive is not a boolean"
out=$(q "SELECT kbench_run('layer_norm', 'forward', '{\"rows\": 4, \"hidden\": 8}', protocol => '{\"max_ms\": 0}')" 2>&1)
ok "$(grep -c 'protocol setting "max_ms" is out of range' <<<"$out")" 1 "kbench_run refuses max_ms 0"

