#!/usr/bin/env bash
# test/mutate.sh: do the tests catch bugs?  Each mutation below is a small
# deliberate bug (one sed expression on one file).  In a scratch copy of
# this working tree, with a private PostgreSQL (tools/pg_sandbox.sh), each
# is applied alone, built and installed, and the suite that should catch it
# is run (a suite of test/suites, installcheck, or a Perl test of test/t
# named NNN_name.pl): "caught" when that suite reports a failure, "NOT CAUGHT" when it
# passes with the bug in.  The file is restored before the next one.
#
#   test/mutate.sh [NAME...]      (default: every mutation; about 35 minutes on a loaded 2-core machine)
#
# Not part of bin/test.sh or .ci/run (it is slow): run it before resolving an
# issue that touches the code it covers.  Exit status 0 only when every
# mutation was caught (and the unmutated suites pass first).  Prints a table.
#
# env: MUTATE_DIR  keep the scratch copy and its PostgreSQL there (reused by the next run);
#      MUTATE_BASE=0  skip running the suites unmutated first (only right after a run that did);
#      MUTATE_SUITE_S (default 1800): a suite still running after it has failed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
# the whole script is one block, read before it runs: editing this file during a run is safe
{

# name | file | sed expression | suite (with any environment) | what the bug is
MUTATIONS=$(cat <<'EOF'
dup_over_16|core/json_parse.c|s/return &sorted\[i\]->key;/return NULL;/|core|objects of more than 16 members never report a duplicate
measurements_delete|sql/code/20_catalog.sql|/CREATE OR REPLACE TRIGGER append_only BEFORE DELETE ON kbench_measurements/d|guards|the DELETE trigger on kbench_measurements dropped
supersession_undone|sql/code/19_append_only.sql|s/IF OLD.superseded_by IS NOT NULL/IF false AND OLD.superseded_by IS NOT NULL/|guards|a supersession no longer permanent
ln_check_self|kernels/ops/layer_norm.c|s/kb_cmp_tol(&m, "y", ref, got, tol, H);/kb_cmp_tol(\&m, "y", got, got, tol, H);/|gate|ln_check compares y with itself
expf_short_series|kernels/ops/cpu_rows.h|s/p = 1.0f \/ 5040.0f;/p = 0.0f;/|kernels|kb_expf's Taylor series loses its degree-7 term
ce_cpu_grad_target|kernels/ops/megatron_cross_entropy.c|s/gz\[t\] = (kb_expf(z\[t\] - lse) - 1.0f) \* g;/gz[t] = kb_expf(z[t] - lse) * g;/|kernels|the CPU cross entropy's gradient forgets the target's -1
ln_cpu_bf16_store|kernels/ops/cpu_rows.h|s/h\[j\] = kb_f2bf(buf\[j\]);/h[j] = kb_f2bf(buf[0]);/|kernels|a bf16 row written by a CPU implementation repeats its first value
probe_null_device|src/registry.c|s/^\tif (PG_ARGISNULL(0))$/\tif (false)/|fuzz_sql|_kernelindex.probe_device(NULL) reads a NULL text (the server crashes)
path_index_as_key|core/json_parse.c|s/^\tif (p->key)$/\tif (1)/|core|a path's index rendered as an empty key (spec.tensors.shape instead of spec.tensors[12].shape[0])
ln_eps|kernels/ops/layer_norm.c|s/rs = 1.0f \/ sqrtf(v + (float) LN_EPS);/rs = 1.0f \/ sqrtf(v + 1e-5f);/|kernels|CPU LayerNorm eps 1e-5 instead of 1e-6
gate_half|kernels/run.c|s/res->correctness.matched_ratio < 1.0/res->correctness.matched_ratio < 0.5/|gate|a run fails only when under half of the values match
notify_passed_only|src/worker_jobs.c|s/"SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j",/"SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j WHERE $2 = 'passed'",/|guards|only passed jobs notify
kbench_not_in_bindir|Makefile|s/ln -s '\$(pkglibdir)\/'\$\$p/true/|packaging|make install no longer links kbench into PostgreSQL's bindir
kbench_argv0_dir|kernels/host.c|s/if (strchr(info.dli_fname, '\/') == NULL)/if (false)/|packaging|kbench found on PATH looks for its harness beside argv[0], not its real path
claim_no_skip_locked|sql/code/30_runner.sql|s/ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)/ORDER BY id LIMIT 1)/|guards|FOR UPDATE SKIP LOCKED removed from the claim
deadline_5x|src/worker_request.c|s/(int64_t) (job->timeout_ms \* 1e6)/(int64_t) (job->timeout_ms * 5e6)/|guards|the worker's deadline is 5x the job's timeout
retraction_undone|sql/code/19_append_only.sql|s/IF OLD.retracted_at IS NOT NULL/IF false AND OLD.retracted_at IS NOT NULL/|guards|a retraction no longer permanent
truncate_runs|sql/code/20_catalog.sql|/CREATE OR REPLACE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_runs/d|guards|TRUNCATE kbench_runs allowed
claim_no_attempt|sql/code/30_runner.sql|s/attempts = attempts + 1, progress = 0/attempts = attempts, progress = 0/|guards|a claim does not count the attempt
no_check|kernels/run.c|s/if (st == KB_PASSED \&\& req->check)/if (st == KB_PASSED \&\& req->check \&\& 0)/|gate|the correctness check never runs
jsd_loss_self|kernels/ops/jsd.c|s/kb_cmp_tol(&m, "loss", nr == T ? &total_ref : &total_rows, &total_got, &tt, 1);/kb_cmp_tol(\&m, "loss", \&total_got, \&total_got, \&tt, 1);/|gate|jsd's check compares the loss with itself
ce_loss_self|kernels/ops/megatron_cross_entropy.c|s/kb_cmp_tol(&m, "loss", &loss, &gl, &tl, 1);/kb_cmp_tol(\&m, "loss", \&gl, \&gl, \&tl, 1);/|gate|megatron_cross_entropy's check compares the loss with itself
incorrect_job_passes|src/worker_request.c|s/^\t\tcase KB_PASSED:$/\t\tcase KB_PASSED:\n\t\tcase KB_INCORRECT_NUMERICAL:/|gate|the worker files an incorrect_numerical run's job as passed
utf8_overlong|core/json_parse.c|s/if (c >= 0xC2 \&\& c <= 0xDF)/if (c >= 0xC0 \&\& c <= 0xDF)/|core|overlong 2-byte UTF-8 accepted
unsorted_large_objects|core/json_canon.c|s/qsort(order, n, sizeof(ki_member \*), member_cmp);/(void) 0;/|FUZZ_SECONDS=30 fuzz|the canonical writer leaves objects of more than 16 members unsorted
guc_only_preloaded|src/init.c|s/? PGC_POSTMASTER : PGC_SIGHUP;/? PGC_POSTMASTER : PGC_POSTMASTER;/|no_preload|kernelindex.database defined the preloaded way without the preload
unchecked_competes|kernels/request.c|s/\t\treturn "incomplete_evidence";/\t\treturn kb_status_name(r->status);/|gate|a run with "check": false is filed as passed and competes
cancel_queued_silent|src/job_cancel.c|s/" SELECT pg_catalog.pg_notify('kbench_jobs', '') FROM j",/" SELECT pg_catalog.pg_notify('kbench_nobody', '') FROM j",/|guards|cancelling a queued job notifies no listener
catalog_written_as_caller|src/catalog_writer.c|s/SetUserIdAndSecContext(owner, w->save_sec/SetUserIdAndSecContext(w->save_userid, w->save_sec/|security|ingests and imports write the catalog with the caller's rights
catalog_writer_unsafe_schema|src/catalog_writer.c|s/if (w->save_userid != owner \&\& !ki_schema_is_safe(\&why))/if (false \&\& !ki_schema_is_safe(\&why))/|security|the owner writes for a role while others may create in the schema
worker_wrong_digest|src/worker_jobs.c|s/KI_KIND_BENCHMARK_PROTOCOL, res->protocol_digest,/KI_KIND_BENCHMARK_PROTOCOL, res->environment_digest,/|001_runner.pl|the worker files kb_run's protocol under another digest
memory_digest_no_length|sql/schema/15_memory.sql|s/ AND length(workload_digest) = 71//|memory|a memory observation's workload digest may have 65 digits
ab_min_samples|kernels/measure.c|s/m->nrep < m->pr.min_samples ? m->pr.min_samples :/m->nrep < 1 ? 1 :/|compare|the minimum of 10 samples is not applied
ab_flush_fixed|kernels/cache.c|s/: (KB_CPU_FLUSH_FACTOR \* kb_cpu_cache_bytes(NULL) + 63) \/ 64 \* 64;/: (int64_t) 256 << 20;/|compare|the CPU flush is a fixed 256 MiB again
ab_failed_done|src/worker_jobs.c|s/bool\t\tdone = strcmp(status, "passed") == 0;/bool\t\tdone = true;/|compare|a failed or canceled job is filed as done with progress 1
ab_unpaired|kernels/stats.c|s/rb\[k\] = b\[i\];/rb[k] = b[(i + 1) % n];/|compare|the bootstrap resamples B's rounds apart from A's
digest_prefix_full_only|sql/code/37_resolve.sql|s/\[0-9a-f\]{12,64}/[0-9a-f]{64}/g|docs|a run or workload named by 12+ hex digits of its digest is refused (the documented prefixes)
device_words_exact|sql/code/37_resolve.sql|s/WHERE w <@ (_kernelindex.words/WHERE w = (_kernelindex.words/|docs|a device is found only by all of its words ('A100' no longer names the A100)
cli_range_unchecked|kernels/cli/main.c|s/if (\*v < s->min /if (*v < s->min - 1e300 /|kernels|kbench --rep-ms -5 accepted (only the upper bound checked)
agent_lease_ignored|sql/code/85_fleet.sql|s/AND a.heartbeat_at < clock_timestamp() - make_interval(secs => _kernelindex.agent_lease())/AND false/|KI_FLEET_JOBS=40 fleet|a silent agent's job is never recovered
agent_no_spool|kernels/agent/job.c|s/if (kb_spool_write(kb_agent.spool_dir, \&end) == 0)/if (0 \&\& kb_spool_write(kb_agent.spool_dir, \&end) == 0)/|KI_FLEET_JOBS=40 fleet|a result finished while the server is down is dropped
agent_cancel_ignored|sql/code/85_fleet.sql|s/RETURNING j.cancel_requested INTO cancel;/RETURNING false INTO cancel;/|KI_FLEET_JOBS=40 fleet|a heartbeat does not carry kbench_cancel to the agent
agent_finish_no_lease|sql/code/85_fleet.sql|s/WHERE k.id = job_id AND k.attempts = attempt AND k.status = 'running' AND k.agent = kbench_agent_finish.name/WHERE k.id = job_id/|fleet_trust|an agent may finish a job it does not hold the lease of
agent_result_unchecked|sql/code/85_fleet.sql|s/why := _kernelindex.agent_result_error(j, kbench_agent_finish.name, r);/why := NULL;/|fleet_trust|an agent's result is stored without comparing it with the job
agent_run_replayed|sql/code/85_fleet.sql|s/IF EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = kbench_digest(run)) THEN/IF false THEN/|fleet_trust|an agent may send back a stored run as its job's new one
agent_product_unchecked|sql/code/85_fleet.sql|s/AND _kernelindex.device_product_error(e->>'product') IS NOT NULL/AND false/|fleet_trust|a GPU whose product is "0" registers as class cuda:0, a worker's device
agent_claims_worker_only|sql/code/30_runner.sql|s/AND (p_agent IS NULL OR (comparison IS NULL AND NOT worker_only))/AND (p_agent IS NULL OR comparison IS NULL)/|fleet_trust|an agent claims a job queued with no device
confirmation_by_pid|sql/code/52_confirmations.sql|s/WHERE k.verdict IS NULL AND k.job_id = _kernelindex.storing_job() AND j.status = 'running' LOOP/WHERE k.verdict IS NULL AND j.status = 'running' AND j.worker_pid = pg_backend_pid() LOOP/|fleet_trust|a confirmation rerun matched by the pid its claimer gave
agent_devices_unlimited|sql/code/85_fleet.sql|s/IF mine + n > lim.per_role THEN/IF false THEN/|fleet_trust|an agent role registers any number of devices
agent_route_unindexed|sql/schema/85_fleet.sql|s/USING gin (_kernelindex.agent_names(agent, device, class, position = 0));/USING gin ((ARRAY[class]));/|fleet_trust|the route's lookup of an agent device name reads every device
budget_by_time|bench/device.sh|s/\[ "\$N" -gt "\${MAX_ROWS:-1000}" \]/[ "$N" -gt "$((${MAX_ROWS:-1000} + 1))" ]/|fault|device.sh times one row more than MAX_ROWS
cost_one_pass|kernels/cost.c|s/op->cost_bytes\[cs->mode\]/op->cost_bytes[0]/|costs|kbench evaluates the forward bytes formula for every pass
v1_renamed|kernels/impl_name.c|s/if (id->cuda \&\& id->variant > 1)/if (id->cuda \&\& id->variant >= 1)/|kernels|cuda (v1) named as a variant, kbench-<op>-cuda-v1: its digests would change
builtin_names_apart|kernels/python/kbench_builtin.py|s/if name not in ("huggingface", "torch", "liger"):/if name not in ("huggingface", "liger"):/|kernels|kbench_builtin.py accepts other built-in python implementations than kbench lists (impl_name.c)
writer_comma_after_key|core/json_write.c|/^ki_jw_key/,/^}/s/w->need_comma = false;/w->need_comma = true;/|core|the manifest writer puts a comma after a key
definer_path_public|sql/code/90_privileges.sql|s/SET search_path = pg_catalog, %I, pg_temp'/SET search_path = pg_catalog, %I, public, pg_temp'/|security|the rule pins SECURITY DEFINER and trigger functions to a search_path with public in it
internal_schema_no_usage|sql/code/90_privileges.sql|s/^GRANT USAGE ON SCHEMA _kernelindex TO PUBLIC;/SELECT 1;/|security|PUBLIC has no USAGE on _kernelindex: the analytics it runs cannot reach the internals
internal_schema_create|sql/code/90_privileges.sql|s/^GRANT USAGE ON SCHEMA _kernelindex TO PUBLIC;/GRANT USAGE, CREATE ON SCHEMA _kernelindex TO PUBLIC;/|security|any role may create functions in _kernelindex, beside the owner's
internal_schema_adopted|sql/prelude/00_internal_schema.sql|s/^CREATE SCHEMA IF NOT EXISTS _kernelindex;/DO $s$ BEGIN IF to_regnamespace('_kernelindex') IS NULL THEN CREATE SCHEMA _kernelindex; END IF; END $s$;/|upgrade|a schema _kernelindex that a user made before the install or update is adopted: the extension's internals land in a schema the user owns
bare_name_in_c|src/job_cancel.c|s/" finished_at = pg_catalog.clock_timestamp(), error = 'canceled before it started'"/" finished_at = clock_timestamp(), error = 'canceled before it started'"/|security|SQL built in C calls clock_timestamp() by a bare name
upgrade_missing_index|sql/updates/0.2.0--0.3.0.sql|/^CREATE INDEX kbench_jobs_agent_running_idx/d|upgrade|the 0.2.0--0.3.0 modfile misses one statement (the index of an agent's running jobs): an updated database differs from a fresh one
update_script_no_code|Makefile|s/^\t  cat $(SQL_CODE); } > $@.tmp/\t  true; } > $@.tmp/|upgrade_scripts|an update script is built without the code files
store_runs_no_conflict|sql/code/22_store.sql|s/^\t\tON CONFLICT DO NOTHING RETURNING digest, manifest->'spec'->'measurements' AS measurements),/\t\tRETURNING digest, manifest->'spec'->'measurements' AS measurements),/|catalog_store|the store's runs INSERT without ON CONFLICT DO NOTHING (a run stored again fails)
records_per_row|sql/code/39_records.sql|s/FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.records_after_insert();/FOR EACH ROW EXECUTE FUNCTION _kernelindex.records_after_insert();/|catalog_store|the records kept by a trigger per row instead of per statement
export_no_raw_samples|sql/code/20_export.sql|s/THEN jsonb_build_object('rawSamplesNs', to_jsonb(r.raw_samples_ns)) ELSE/THEN '{}' ELSE/|catalog_store|the export drops the runs' raw samples
export_no_retractions|sql/code/20_export.sql|s/CASE WHEN r.retracted_at IS NOT NULL$/CASE WHEN false AND r.retracted_at IS NOT NULL/|catalog_store|the export drops retractions
changepoint_shifted|src/continuous.c|s/out\[i\] = Int32GetDatum(cps\[i\] + 1);/out[i] = Int32GetDatum(cps[i] + 2);/|installcheck|change points reported one point late (kbench_segment, kbench_change_points)
alert_not_notified|sql/code/51_alerts.sql|s/SELECT pg_notify('kbench_alerts', json_build_object/SELECT pg_notify('kbench_alerts_nobody', json_build_object/|continuous|an opened alert notifies no listener of kbench_alerts
memory_mib_decimal|src/liger/liger_map.c|s/double\t\tb = mib \* 1048576.0;/double\t\tb = mib * 1e6;/|memory|Liger's memory MiB turned into bytes as MiB x 10^6
harness_error_ignored|kernels/child.c|s/return kb_ext_fail(be, KBC_ERROR, "%s: %s", kb_ext_label(\&x->cs), line + 4);/return KBC_OK;/|byo|an outside implementation's "err" answer taken as ok (the harness's result not checked)
chart_unescaped|sql/code/61_chart.sql|s/kbench_svg_escape(coalesce(s.sr->>'name', ''))/coalesce(s.sr->>'name', '')/|charts|a chart writes a series name into SVG unescaped
distill_temperature|kernels/ops/distill_jsd_loss.c|/^dj_cpu(/,/^}/s/^\t\t\tzs\[v\] = a;$/\t\t\tzs[v] = a \/ 2;/|kernels|the CPU distill_jsd_loss takes the student's logits at temperature 2
distill_hard_weight|kernels/ops/distill_jsd_loss.c|/^dj_cpu(/,/^}/s/loss = ((float) DJ_WEIGHT_HARD \*/loss = ((float) 0.49 */|kernels|the CPU distill_jsd_loss weighs the hard loss 0.49, not 0.5 (the old rtol 1e-2 let it pass)
staging_not_per_role|src/catalog_import.c|s/kbench_import_staging WHERE staged_by = $1 ORDER BY n"/kbench_import_staging ORDER BY n"/|security|a staged catalog import takes every role's staged lines, not only the caller's
digest_prefix_no_index|sql/schema/20_catalog.sql|/^CREATE INDEX kbench_runs_digest_prefix_idx/d|installcheck|a digest prefix read by scanning every run (no pattern index on kbench_runs.digest: starts_with is only a filter under C.UTF-8)
digest_prefix_filter|sql/code/37_resolve.sql|s/WHERE p IS NOT NULL AND digest ~>=~ p AND digest ~<~ (p || 'g') AND starts_with(digest, p)) o;/WHERE p IS NOT NULL AND starts_with(lower(digest), p)) o;/|007_digest_plans.pl|an operation's digest prefix read by a filter over every operation (no index serves it)
implementation_runs_prefix_scan|sql/code/37_resolve.sql|s/WHERE r.implementation_digest ~>=~ p AND r.implementation_digest ~<~ (p || 'g')$/WHERE substr(r.implementation_digest, 1, length(p)) = p/|007_digest_plans.pl|an implementation known only from runs found by reading every run (no index range)
implementations_no_prefix_index|sql/schema/20_catalog.sql|/^CREATE INDEX kbench_implementations_digest_prefix_idx/d|007_digest_plans.pl|an implementation's digest prefix read by scanning every implementation (no pattern index)
store_custom_plans|sql/code/22_store.sql|s/ SET plan_cache_mode = force_generic_plan AS \$\$/ AS $$/|008_store_plans.pl|the store functions planned again at every call (custom plans win on cost for ever)
report_no_row_cap|sql/code/65_report.sql|s/FILTER (WHERE k <= max_rows)//|charts|the report's speedups and regressions tables show every row (576 speedup rows on the whole catalog)
repro_other_device_verified|sql/code/45_reproductions.sql|s/THEN CASE WHEN _kernelindex.device_key(xe) = _kernelindex.device_key(re) THEN 'verified'/THEN CASE WHEN true THEN 'verified'/|security|a reproduction on another device class verifies the run (and the export marks it)
repro_job_id_shown|sql/code/45_reproductions.sql|s/CASE WHEN s.visible THEN l.job_id END AS job_id/l.job_id AS job_id/|security|kbench_reproductions shows every role the job ids of others' reproductions
repro_table_public|sql/code/90_privileges.sql|s/^GRANT SELECT (reported_run, reproduced_run, requested_at) ON kbench_reproduction_jobs TO PUBLIC;/GRANT SELECT ON kbench_reproduction_jobs TO PUBLIC;/|security|PUBLIC reads the job ids and owners of reproductions from the table
alerts_copy_by_text|sql/code/52_confirmations.sql|s/IF _kernelindex.copying_into(TG_RELID) THEN/IF current_query() ILIKE 'copy kbench_runs%' THEN/|continuous|the alert trigger skips runs by the query's text (COPY kbench_runs TO STDOUT; SELECT kbench_ingest(...))
alerts_restore_checked|sql/code/52_confirmations.sql|s/IF _kernelindex.copying_into(TG_RELID) THEN/IF false THEN/|006_dump.pl|a restore's COPY FROM into kbench_runs is checked against the rules again
suppress_90_days|sql/code/51_alerts.sql|s/until > now() + interval '90 days'/until > now() + interval '900 days'/|continuous|a suppression may last longer than 90 days
acknowledge_infinity|sql/code/51_alerts.sql|s/IF until IS NOT NULL AND NOT isfinite(until) THEN/IF false THEN/|continuous|until => 'infinity' is accepted
suppress_anyones|sql/code/51_alerts.sql|s/IF NOT pg_has_role(session_user, 'kbench_admin', 'MEMBER')/IF false AND NOT pg_has_role(session_user, 'kbench_admin', 'MEMBER')/|continuous|a kbench_user suppresses alerts on other roles' runs
liger_null|src/liger_import.c|/not STRICT (source may be NULL)/{n;s/if (PG_ARGISNULL(0))/if (false)/}|FUZZ_SQL_ONLY=kbench_import_liger fuzz_sql|kbench_import_liger(NULL) and kbench_import_liger_file(NULL) read a null pointer (SIGSEGV)
staging_truncate|src/catalog_import.c|s/"DELETE FROM %s.kbench_import_staging WHERE staged_by = $1"/"TRUNCATE %s.kbench_import_staging"/|003_crash_recovery.pl|a staged import empties the staging table by TRUNCATE (and takes other roles' staged lines with it)
staging_unlogged|sql/schema/20_catalog.sql|s/^CREATE TABLE kbench_import_staging (/CREATE UNLOGGED TABLE kbench_import_staging (/|003_crash_recovery.pl|the staging table is unlogged again (a crash empties it)
markdown_device_raw|sql/code/53_gate.sql|s/coalesce(_kernelindex.markdown_cell(a.device), '')/coalesce(a.device, '')/|security|kbench_summary_markdown writes a device name raw (HTML, row breaks, pipes, links)
rejection_quote_whole|src/import.h|s/^#define KI_QUOTE_MAX 200$/#define KI_QUOTE_MAX 100000/|security|an import rejection quotes its line's content untruncated (up to the 1000-character cap of a reason)
rejections_public|sql/code/20_import_rejections.sql|s/USING (imported_by = current_user OR pg_catalog.pg_has_role(current_user, 'pg_read_all_data'/USING (true OR pg_catalog.pg_has_role(current_user, 'pg_read_all_data'/|security|every role reads every import's rejection reasons
queue_unlocked|src/queue.c|s/LockAcquire(\&tag, ExclusiveLock, false, nowait)/LockAcquire(\&tag, ShareLock, false, nowait)/|installcheck|kbench_run takes the queue's lock in a mode that does not exclude another kbench_run (concurrent sessions pass the limits)
queue_stale_snapshot|src/queue.c|s/PushActiveSnapshot(GetLatestSnapshot());/PushActiveSnapshot(GetTransactionSnapshot());/|installcheck|kbench_run counts the queue in a REPEATABLE READ transaction's old snapshot
impl_path_unchecked|kernels/impl_source.c|s/^\tif (directory)$/\tif (false \&\& directory)/|byo|a registered file's path is not checked at a run (symbolic links followed, the allowed directory not required)
impl_digest_unchecked|kernels/impl_source.c|s/if (ok \&\& expected \&\& strcmp(expected, src->digest) != 0)/if (false \&\& ok \&\& expected)/|byo|a registered file's content is not compared with the digest recorded at registration
harness_clock_looked_up|kernels/python/kbench_harness.py|s/^    clock = _monotonic_ns$/    clock = lambda: time.monotonic_ns()/|byo|the harness looks its clock up in the time module at timing time (an implementation can replace it)
parent_clock_unchecked|kernels/backend_child.c|s/if (x->timed >= MIN_TIMED \&\& 2 \* x->unaccounted > x->timed)/if (false \&\& x->timed >= MIN_TIMED)/|byo|kbench does not check the child's reported times against its own clock around each round trip
sibling_recovered|src/worker_recovery.c|s/" OR (j.worker_pid = %d AND/" OR (false AND j.worker_pid = %d AND/|002_supervise.pl|a starting worker recovers the live jobs of its sibling on the same device
finish_unconditional|src/worker_jobs.c|s/ WHERE id = \$1 AND attempts = \$8 AND worker_pid = \$9 AND status = 'running' AND agent IS NULL"/ WHERE id = $1 AND agent IS NULL"/|002_supervise.pl|a worker's finish overwrites a job that is no longer its attempt
postmaster_death_ignored|src/worker_request.c|s/return !PostmasterIsAlive();/return 0;/|002_supervise.pl|a worker whose postmaster died runs its job (and child) to the end
sweep_group_only|kernels/child.c|s/for (int pass = 0; pass < 200; pass++)/for (int pass = 0; pass < 0; pass++)/|002_supervise.pl|only the child's process group is killed: a daemon it started (setsid) outlives the job
guard_last_call_only|kernels/measure.c|s/^\tif (!g .*!m->req->check)$/\tif (m->guard)/|byo|no timed call is checked: the check reads only the outputs of the last call (issue 27)
guard_inputs_fixed|kernels/measure.c|s/^\tif (!g .*k == g->current)$/\tif (m->guard)/|byo|the timed calls all run on the same inputs (no rotation of the input sets)
guard_harness_keeps_inputs|kernels/python/kbench_harness.py|s/ctx.inputs\[t\["name"\]\].copy_(src)/pass/|byo|the python harness does not pass the next input set to the implementation (an honest one then fails its checked calls)
overhead_unreported|kernels/measure.c|s/m->res->call_overhead_ns = ns;/m->res->call_overhead_ns = 0;/|byo|kbench's round trip per call to a child is not reported in the run
output_unbounded|kernels/impl_int.h|s/#define KB_EXT_OUTPUT_CAP ((size_t) 1 << 20)/#define KB_EXT_OUTPUT_CAP ((size_t) 1 << 34)/|002_supervise.pl|all of a child's output is kept (16 GiB cap)
job_status_raw_median|sql/code/37_job_status.sql|s/kbench_format_ns(r.median_ns) AS median/r.median_ns::text AS median/|installcheck|kbench_job_status shows the median in raw ns, not for people (issue 29 item 2)
near_hint_any_letters|sql/code/37_resolve.sql|s/AND score \* 2 >= (SELECT count(\*) FROM g)//|installcheck|"did you mean" offers names that share any three letters (kbench_check('no-such-kernel') offered continuous-kernel)
check_nested_context|sql/code/53_gate.sql|s/PERFORM _kernelindex.series_filter(implementation, operation, mode, environment, NULL);/NULL;/|installcheck|kbench_check's argument errors raised from the resolvers three calls down (ten lines of context)
roofline_empty_blames_cost|sql/code/63_chart_roofline.sql|s/IF nsel = 0 THEN/IF false THEN/|charts|an empty roofline selection blames a missing cost formula
resolver_no_datasheet_names|sql/code/37_resolve.sql|s/(kbench_device_of(e.digest)).name/NULL::text/|installcheck|'H100 SXM5' (the docs' spelling, a kbench_devices name) is an unknown environment
chart_units_raw|sql/code/61_chart.sql|s/IF yunit IS NOT NULL AND yticks IS NOT NULL THEN/IF false THEN/|charts|a time axis labels its ticks as plain numbers of µs again (1M, 1.36M: issue 29)
chart_colours_cycle|sql/code/61_chart.sql|s/ELSE jsonb_build_array(k % 8, k \/ 8) END/ELSE jsonb_build_array(k % 8, 0) END/|charts|past eight series the colours repeat with the same dash pattern and shape (series 1 and 9 look alike)
chart_labels_unplaced|sql/code/61_chart.sql|s/CONTINUE WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(placed) b/CONTINUE WHEN false AND EXISTS (SELECT 1 FROM jsonb_array_elements(placed) b/|charts|a label is placed without looking at those placed before it (labels overlap)
chart_time_no_date|sql/code/61_chart.sql|s/IF xmax - xmin > 172800 THEN step := greatest(step, 86400); END IF;/NULL;/|charts|a time axis over days ticks twice a day with the time of day (issue 29: hours, no date)
chart_time_first_no_date|sql/code/61_chart.sql|s/WHEN k = 0 OR floor((x0 + k \* step) \/ 86400)/WHEN floor((x0 + k * step) \/ 86400)/|charts|a time axis under a day shows the time of day without its date
chart_no_panels|sql/code/61_chart.sql|s/IF (SELECT count(DISTINCT coalesce(sr->>'panel', '')) FROM/IF false AND (SELECT count(DISTINCT coalesce(sr->>'panel', '')) FROM/|charts|CPU and GPU runs drawn in one panel (CPU points decades above the GPU lines)
chart_empty_silent|sql/code/62_charts.sql|s/^\tIF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(spec->'series', '\[\]')) sr,$/\tIF true OR EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(spec->'series', '[]')) sr,/|charts|a chart drawn empty because of a name says nothing (no NOTICE)
memory_ratio_silent|sql/code/45_memory_analytics.sql|s/PERFORM _kernelindex.say_empty('kbench_memory_ratio',/PERFORM _kernelindex.say_empty(NULL,/|charts|kbench_memory_ratio's NOTICE does not name it
regressions_silent|sql/code/42_regressions.sql|s/IF NOT FOUND AND num_nonnulls(implementation, operation, mode, environment, in_workload) > 0/IF false/|charts|kbench_regressions empty because of a name says nothing
register_no_role_check|sql/code/35_implementations.sql|s/IF NOT pg_catalog.pg_has_role(current_user, 'kbench_admin', 'USAGE') THEN/IF false THEN/|byo|registering without kbench_admin gives PostgreSQL's bare permission error, not the role needed
register_entry_unchecked|kernels/impl.c|s/if (!kb_ext_entry_defined(kind, \&src, path, symbol, err, errlen))/if (false \&\& !kb_ext_entry_defined(kind, \&src, path, symbol, err, errlen))/|byo|a registration accepts an entry whose file defines no such function (it fails only when run)
register_python_prefix|kernels/entry_check.c|s/if (starts_word(p + k, m - k, name))/if (strncmp(p + k, name, strlen(name)) == 0 || starts_word(p + k, m - k, name))/|byo|a python function whose name only begins with the entry's name is taken for it (goo for good)
device_hint_lists_unserved|src/queue.c|s/errhint("Name one of those; kbench_agent_status lists the agents and the device classes they serve.")/errhint("kbench_agent_status lists the agents and the device classes they serve (cpu, cuda:H200); agent:NAME names one.")/|installcheck|kbench_run's unknown-device hint names cuda:H200 whether or not anything serves it, and not the live agents' classes
provider_local_runs_unnamed|sql/code/37_resolve.sql|/OR (name LIKE 'kbench-python-%' AND/d|identity|'huggingface' names only Liger's imported implementation, not the runs measured here by the built-in one
same_code_not_joined|sql/code/37_resolve.sql|s/RETURN _kernelindex.same_code(found);/RETURN found;/|identity|the same library registered in SQL and run through the CLI are two implementations
speedup_silently_empty|sql/code/40_speedup.sql|s/IF NOT any_row THEN/IF false THEN/|identity|kbench_speedup answers nothing without saying why when the names resolve but share no cohort
fill_ignores_cancel|kernels/fill.c|s/if (be->req \&\& kb_req_stopping(be->req))/if (false)/|cancel|a cancel does not reach a job while it generates its inputs (it runs on to the measurement, seconds later)
describe_roles_swapped|kernels/manifests.c|s/out\[i\].role = p.is_output\[i\] ? "output" : p.init\[i\] != KB_INIT_NONE ? "input" : "scratch";/out[i].role = p.init[i] != KB_INIT_NONE ? "input" : "output";/|kernels|kbench describe calls every tensor kbench does not generate an output (forward's dx, backward's y)
bf16_cpu_baseline_queued|kernels/impl.c|s/static const char \*const bf16_cpu_refused\[\] = {"layer_norm", "distill_jsd_loss"};/static const char *const bf16_cpu_refused[] = {"none"};/|kernels|huggingface's LayerNorm in bf16 on the CPU is queued and fails its own check instead of being refused with the reason
peak_counts_scratch|kernels/run.c|s/res->peak_memory_bytes = kb_call_io_bytes(\&s->c, \&s->plan) + s->c.ws_bytes;/res->peak_memory_bytes = kb_call_bytes(\&s->c);/|kernels|kbench's own runs count every tensor they allocate in peak memory (scratch too), unlike the other kinds
version_gate_open|src/extension.c|s/return strcmp(v, KI_VERSION) == 0;/return true;/|version_gate|the library serves a database still on an older version (no error, the worker claims its jobs)
version_gate_log_each_look|src/worker_jobs.c|s/if (strcmp(skipped, installed) != 0)/if (true)/|version_gate|the worker logs a line at every look at a database that is not updated
stop_noise_never|kernels/measure.c|s/if (nsamples >= 2 \&\& stdrel <= pr->noise_target)/if (false \&\& stdrel <= pr->noise_target)/|stopping|adaptive stopping's noise rule never stops a run
stop_time_never|kernels/measure.c|s/if (elapsed_ms >= max_ms)/if (false \&\& elapsed_ms >= max_ms)/|stopping|adaptive stopping never stops at the maximum time
unstable_unset|kernels/measure.c|s/s->unstable = m->stop_rule \&\&/s->unstable = 0 \&\& m->stop_rule \&\&/|stopping|a run stopped by a cap is not marked unstable
records_unstable|sql/code/56_ranking.sql|s/_kernelindex.run_unstable(r.manifest) AS unstable/false AS unstable/|stopping|kbench_records does not mark unstable runs
opdef_ref_self|kernels/python/kbench_harness.py|s/return kbench_reference.compare(ref, got,/return kbench_reference.compare(got, got,/|operations|the check of an operation defined as data compares the outputs with themselves
opdef_unreturned|kernels/python/kbench_reference.py|s/        if name not in returned:/        if False:/|operations|an output the implementation did not return is not reported as such
opdef_no_grads|kernels/python/kbench_reference.py|s/if mode != "forward" and grads_of:/if False:/|operations|the python reference computes no gradients
opdef_suggest|kernels/registry.c|s/best <= 4/best < 0/|operations|the unknown-operation error suggests no name
utf8_fourth_unchecked|core/json_parse.c|s/^\t\t\t(s\[3\] \& 0xC0) != 0x80)$/\t\t\t(s[2] \& 0xC0) != 0x80)/|core|a 4-byte UTF-8 sequence's fourth byte is not checked (F0 90 80 41 accepted; issue 28, generated)
path_key_all_hex|core/json_parse.c|/^ki_path_key(/,/^}/s/if (c < 0x20)/if (1)/|core|an error path writes every byte of a bracketed key as \u00XX (issue 28, generated)
exponent_digit_unchecked|core/json_parse.c|/^\tif (q < end \&\& (\*q == 'e' || \*q == 'E'))$/,/invalid number/s/if (q >= end || !(\*q >= '0' \&\& \*q <= '9'))/if (q >= end)/|core|an exponent without a digit accepted ([1e], 1e+x; issue 28, generated)
nul_word_unescaped|core/json_canon.c|s/if (word_needs_escape(w))/if (w)/|core|the canonical writer copies eight NUL characters in a row unescaped (issue 28, generated)
memory_summary_min_is_max|sql/code/45_memory_analytics.sql|s/kbench_geomean(s.memory_ratio), min(s.memory_ratio),/kbench_geomean(s.memory_ratio), max(s.memory_ratio),/|memory|kbench_memory_ratio_summary's min_memory_ratio is the greatest ratio (issue 28, generated)
sample_rows_no_last|kernels/ops/common.c|s/^\tout\[n++\] = rows - 1;$/\tout[n++] = rows \/ 2;/|gate|the sampled check reads a middle row instead of the last (a wrong last row of a large output passes; issue 28)
ce_rows_by_batch|kernels/ops/megatron_cross_entropy.c|/^ce_check(/,/^}/s/^\tint64_t\t\tN = c->ax\[0\] \* c->ax\[1\],$/\tint64_t\t\tN = c->ax[1] * c->ax[1],/|gate|megatron_cross_entropy's check counts batch x batch rows, not seq x batch (its last rows never read; issue 28, generated)
ce_tol_no_spread|kernels/ops/megatron_cross_entropy.c|s/spread = fmax(spread, mx - z\[j\]);/spread = fmin(spread, mx - z[j]);/|kernels|megatron_cross_entropy's tolerance leaves out the logits' spread (a tighter bound than its derivation; issue 28, generated)
dj_tol_worst_logit_min|kernels/ops/distill_jsd_loss.c|s/E = fmax(E, fmax(kb_gamma(ks)/E = fmin(E, fmax(kb_gamma(ks)/|kernels|distill_jsd_loss's bound keeps no logit's error (fmin from 0; issue 28, generated)
dj_tol_spread_one_side|kernels/ops/distill_jsd_loss.c|s/spread = fmax(spread, fmax(ms - zs\[j\]/spread = fmax(spread, fmin(ms - zs[j]/|kernels|distill_jsd_loss's spread takes the smaller of the student's and the teacher's (issue 28, generated)
opdef_liger_url|kernels/ops/defs/rms_norm.json|s/"liger_kernel": "rms_norm"/"liger_kernel": "rmsnorm"/|operations|rms_norm's OperationSpec names another source script than the Liger import (its WorkloadCase digest differs)
unstable_opens_alert|sql/code/51_alerts.sql|s/^\t\tCONTINUE WHEN c.unstable;/\t\tCONTINUE WHEN false;/|stopping|an unstable run opens an alert on its own
unstable_gives_verdict|sql/code/51_alerts.sql|s/^\tIF _kernelindex.run_unstable(run.manifest) THEN/\tIF false THEN/|stopping|an unstable confirmation rerun confirms or refutes its alert
measured_floor_zero|sql/code/43_roofline.sql|s/CASE WHEN mc.bandwidth_bytes_per_s IS NOT NULL/CASE WHEN true/|installcheck|a run whose environment was never probed gets a measured floor of 0 instead of NULL
probe_store_replaces|sql/code/43_roofline.sql|s/^\t WHERE replace$/\t WHERE true/|installcheck|a second probe of an environment overwrites the first (not once per environment)
probe_zero_figures|kernels/probe.c|s/\tif (v > 0)$/\tif (v >= 0)/|kernels|a probe figure not measured is printed as 0 instead of left out
opdef_case_only|kernels/workload.c|s/if (!(op->def \&\& op->def->case_only\[i\]))/if (1)/|operations|group_norm's channels_per_group kept in its OperationSpec (its WorkloadCase digest differs from the Liger import's)
cost_floor_div|core/cost_expr.c|s/v = floor(v \/ factor(e));/v = v \/ factor(e);/|core|// divides without flooring
opdef_sparsemax_tau|kernels/python/kbench_reference.py|s/tau = (cs.gather(-1, support - 1) - 1) \/ support/tau = cs.gather(-1, support - 1) \/ support/|operations|sparsemax's reference threshold without the - 1 (its rows no longer sum to one)
guard_data_op_unchecked|kernels/measure.c|s/\t\tif (!kb_opdef_checkable(m->be))$/\t\tif (1)/|KI_OPS=none operations|the timed calls of an operation defined as data are not checked (a replayed rms_norm answer passes)
guard_child_set0|kernels/python/kbench_harness.py|s/v = current.get(t\["name"\], views.get(t\["name"\]))/v = views.get(t["name"])/|KI_OPS=none operations|the python child checks every call against input set 0 (an rms_norm that ignores the rotation passes)
op_file_replaces_builtin|kernels/opdef.c|s/else if (kb_find_op(op->name))/else if (0)/|KI_OPS=none operations|a definition loaded with --op-file may take a built-in operation's name
op_file_reference_ignored|kernels/python/kbench_harness.py|s/if "source" not in ref_cfg:/if True:/|KI_OPS=none operations|a user's reference file is not used: the check looks the function up in kbench_reference.py
opdef_orpo_log_odds|kernels/python/kbench_reference.py|s/log_odds = (c - r) - (torch.log1p(-torch.exp(c)) - torch.log1p(-torch.exp(r)))/log_odds = c - r/|KI_OPS=fused_linear_orpo_loss operations|ORPO's reference log odds without the log1p(-p) terms (a log-probability ratio, not an odds ratio)
opdef_simpo_gamma|kernels/python/kbench_reference.py|s/pref = -torch.nn.functional.logsigmoid(PREF_BETA \* (c - r) - SIMPO_GAMMA)/pref = -torch.nn.functional.logsigmoid(PREF_BETA * (c - r))/|KI_OPS=fused_linear_simpo_loss operations|SimPO's reference without its margin gamma (a CPO loss on average log-probabilities)
opdef_cpo_average|kernels/python/kbench_reference.py|s/c, r, nll = _preference_logps(inputs, False)/c, r, nll = _preference_logps(inputs, True)/|KI_OPS=fused_linear_cpo_loss operations|CPO's reference on average log-probabilities instead of summed ones
opdef_grpo_shift|kernels/python/kbench_reference.py|s/z = inputs\["logits"\]\[:, :-1\]/z = inputs["logits"][:, 1:]/|KI_OPS=fused_linear_grpo_loss_token operations|GRPO's reference takes each completion token's log-probability from the logit after it, not before it (dlogits in the wrong positions)
opdef_sparsemax_unsure_all|kernels/python/kbench_reference.py|s/^SPARSEMAX_UNSURE = 1e-4$/SPARSEMAX_UNSURE = 1e9/|KI_OPS=none operations|every sparsemax row is left out of the dx comparison (a wrong gradient passes)
opdef_loss_grad|kernels/python/kbench_reference.py|s/total = total + sum(v.sum() for k, v in out.items() if k not in has_up)/total = total/|operations|a loss (an output without upstream) is not differentiated: cross_entropy's reference has no dlogits
opdef_rope_sign|kernels/python/kbench_reference.py|s/return x \* cos + torch.cat(\[-x\[..., h:\], x\[..., :h\]\], -1) \* sin/return x * cos + torch.cat([x[..., h:], -x[..., :h]], -1) * sin/|operations|rope's reference rotates by -angle (rotate_half's sign flipped)
opdef_mta_premask|kernels/python/kbench_reference.py|s/p = normalize(s.masked_fill(~causal, float("-inf")))/p = normalize(s)/|KI_OPS=multi_token_attention operations|multi-token attention's reference normalizes every column (no causal mask before the softmax or sparsemax)
opdef_sparse_mta_softmax|kernels/python/kbench_reference.py|s/return _mta(inputs, lambda z: sparsemax({"x": z}, scalars)\["y"\])/return _mta(inputs, lambda z: torch.softmax(z, dim=-1))/|KI_OPS=sparse_multi_token_attention operations|sparse multi-token attention's reference normalizes with softmax instead of sparsemax
opdef_neighborhood_dilation|kernels/python/kbench_reference.py|s/return (d.abs() <= (kernel_size \/\/ 2) \* dilation) \& (d % dilation == 0)/return d.abs() <= (kernel_size \/\/ 2) * dilation/|KI_OPS=fused_neighborhood_attention operations|neighborhood attention's reference attends to every key within the dilated reach (the dilation's gaps left in)
opdef_moe_weights|kernels/python/kbench_reference.py|s/y = y.index_add(0, tok, (a @ w2\[e\].T) \* wts\[tok, route\]\[:, None\])/y = y.index_add(0, tok, a @ w2[e].T)/|KI_OPS=fused_moe operations|fused MoE's reference leaves out the routing weights (each expert's output added unweighted)
opdef_kto_ignore|kernels/python/kbench_reference.py|s/keep = tgt != KTO_IGNORE/keep = tgt >= 0/|KI_OPS=kto_loss operations|KTO's reference keeps the targets equal to ignore_index 42 in each sequence's average log-probability
opdef_llama4_rope_sign|kernels/python/kbench_reference.py|s/re \* sin + im \* cos\]/re * sin - im * cos]/|operations|llama4_rope's reference is not a rotation (the imaginary part's sign flipped)
opdef_kl_div_sum|kernels/python/kbench_reference.py|s/torch.nn.functional.kl_div(lp, t, reduction="batchmean")/torch.nn.functional.kl_div(lp, t, reduction="sum")/|KI_OPS=kl_div operations|kl_div's reference summed over the rows, not averaged (reduction sum for batchmean)
opdef_tvd_no_half|kernels/python/kbench_reference.py|s/((p - q).abs().sum() \/ 2 \/ p.shape\[0\])/((p - q).abs().sum() \/ p.shape[0])/|KI_OPS=tvd operations|tvd's reference without its half (the L1 distance, not the total variation)
opdef_embedding_row0|kernels/python/kbench_reference.py|s/inputs\["weight"\]\[inputs\["input_ids"\].long()\]/inputs["weight"][inputs["input_ids"].long().clamp(max=0)]/|operations|embedding's reference gathers row 0 for every id
opdef_megatron_rms_norm_eps|kernels/ops/defs/megatron_rms_norm.json|s/"value": 1e-06/"value": 1e-05/|operations|megatron_rms_norm with eps 1e-5, not the 1e-6 of Liger's script (its WorkloadCase digest differs from the Liger import's)
opdef_rope_hidden_in_op|kernels/ops/defs/rope.json|s/"max": 1048576, "in_operation": false}/"max": 1048576}/|operations|rope's hidden kept in its OperationSpec (its WorkloadCase digest differs from the Liger import's)
opdef_megatron_swiglu_glu|kernels/python/kbench_reference.py|s/torch.nn.functional.silu(y\[..., :half\])/torch.sigmoid(y[..., :half])/|KI_OPS=megatron_swiglu operations|megatron_swiglu's reference a sigmoid GLU (sigmoid(gate) * up), not silu(gate) * up
opdef_tiled_swiglu_ref|kernels/ops/defs/tiled_swiglu.json|s/"python": "swiglu"/"python": "geglu"/|KI_OPS=tiled_swiglu operations|tiled_swiglu checked against geglu's reference (tanh gelu for silu)
opdef_flce_sum|kernels/python/kbench_reference.py|s/loss = torch.nn.functional.cross_entropy(logits, target, reduction="mean")/loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")/|KI_OPS=fused_linear_cross_entropy operations|fused_linear_cross_entropy's reference sums the loss over tokens instead of averaging it
opdef_fljsd_beta|kernels/python/kbench_reference.py|s/log_m = torch.log((1 - beta) \* ls.exp() + beta \* lt.exp())/log_m = torch.log(beta * ls.exp() + (1 - beta) * lt.exp())/|KI_OPS=fused_linear_jsd operations|fused_linear_jsd's reference mixes M with the weights swapped (beta P_s + (1 - beta) P_t: the same loss at Liger's beta 0.5, not at others)
opdef_distill_cosine_weights|kernels/python/kbench_reference.py|s/hard + scalars\["weight_soft_loss"\] \* soft/hard + scalars["weight_hard_loss"] * soft/|KI_OPS=distill_cosine_loss operations|distill_cosine_loss's reference weights the soft term with weight_hard_loss (a copy-paste slip: the same loss at Liger's equal weights, not at others)
regop_never_reloads|src/operations.c|s/strcmp(loaded, fp.data) != 0)/false)/|registered_ops|a backend's registry keeps what it loaded first: another session's unregistration and a re-registration are not seen
regop_reference_anywhere|kernels/opdef.c|s/kb_ext_read_source(rpath, directory, NULL, \&ref/kb_ext_read_source(rpath, NULL, NULL, \&ref/|registered_ops|a registered definition's reference.file is read from anywhere (a server file's bytes end up in the table)
regop_reference_fn_unchecked|kernels/opdef.c|s/else if (!kb_ext_entry_defined(KB_EXT_PYTHON/else if (0 \&\& !kb_ext_entry_defined(KB_EXT_PYTHON/|registered_ops|a reference function its file does not define is accepted at registration (it fails only at the first run)
regop_not_listed|sql/code/85_fleet.sql|s/ OR o ? 'definition';$/;/|registered_ops|kbench_device_operations lists no operation defined as data (a registered one included)
regop_costs_kept|src/operations.c|s/DELETE FROM %s.kbench_operation_costs WHERE operation = \$1 AND NOT seeded/DELETE FROM %s.kbench_operation_costs WHERE false AND operation = $1/|registered_ops|unregistering an operation leaves its cost rows behind
regop_builtin_baseline|kernels/parse.c|s/impl \&\& cs->op->def \&\& cs->op->def->added \&\& i < kb_builtin_python_count/impl \&\& cs->op->def \&\& false \&\& i < kb_builtin_python_count/|registered_ops|a user's operation accepts a built-in baseline name (torch, huggingface): it is queued and fails only in the child
regop_nul_taken|kernels/opdef.c|s/: memchr(bytes, '\\0', n) ? "not text/: memchr(bytes, '\\0', 0) ? "not text/|registered_ops|a definition or reference.file holding a NUL byte is taken (parsed up to the NUL) instead of refused as not text
regop_mib_exclusive|kernels/opdef.c|s/return n > OP_FILE_MAX ? "over 1 MiB"/return n >= OP_FILE_MAX ? "over 1 MiB"/|registered_ops|a definition of exactly 1 MiB is refused as over 1 MiB
agent_data_op_undescribed|src/fleet.c|s/if (kb_describe(\&req, \&res) != KB_PASSED \&\& impl)/if (kb_describe(\&req, \&res) != KB_PASSED \&\& false)/|fleet|the server cannot describe an agent's job of an operation defined as data (no cpu implementation): its result is refused
check_ignores_cancel|kernels/ops/common.c|s/if (be->req \&\& kb_req_stopping(be->req))/if (0)/|cancel|a cancel does not reach a check against the float64 reference: the job checks to its end and passes
jsd_backward_no_softmax|kernels/ops/jsd.c|s/g \* (d - expf(x) \* sf)/g * (d - 0 * expf(x) * sf)/|kernels|the CPU jsd backward returns grad_loss * grad_input, leaving out log_softmax's exp(x) * rowsum term
jsd_backward_no_grad_loss|kernels/ops/jsd.c|s/g \* (d - expf(x) \* sf)/(d - expf(x) * sf) + 0 * g/|kernels|the CPU jsd backward ignores the upstream gradient grad_loss (as if it were 1)
jsd_backward_check_self|kernels/ops/jsd.c|s/kb_cmp_tol(m, "grad_logits", dz, got, tdz, V);/kb_cmp_tol(m, "grad_logits", got, got, tdz, V);/|kernels|jsd backward's check compares grad_logits with itself
torch_jsd_backward_no_log_softmax|kernels/python/kbench_builtin.py|s/st\["loss"\] = loss_of(z.log_softmax(-1))\[0\]/st["loss"] = loss_of(z)[0]/|kernels|the torch/liger jsd backward baselines skip log_softmax (their gradient is grad_input, not grad_logits)
readback_marks_none|kernels/backend_child.c|s/x->plan->not_returned\[i\] = 1;/x->plan->not_returned[i] = 0;/|kernels|a python implementation's readback marks no output as not returned (a total-only jsd is checked against an unwritten row_loss)
jsd_total_only_self|kernels/ops/jsd.c|s/kb_cmp_tol(&m, "loss", &total_ref, &total_got, &tt, 1);/kb_cmp_tol(\&m, "loss", \&total_got, \&total_got, \&tt, 1);/|kernels|jsd's check of a total without row_loss compares the total with itself
jsd_rows_unchecked|kernels/ops/jsd.c|s/kb_cmp_tol(&m, "row_loss", &lr, &lg, &tl, 1);/(void) lg;/|kernels|jsd's check no longer compares returned per-row losses
jsd_missing_grad_passes|kernels/ops/jsd.c|s/kb_cmp_missing(&m, "grad_input");/(void) 0;/|kernels|jsd passes an implementation that returns no grad_input
distill_total_only_self|kernels/ops/distill_jsd_loss.c|s/kb_cmp_tol(&m, "loss", &total, &got, &tt, 1);/kb_cmp_tol(\&m, "loss", \&got, \&got, \&tt, 1);/|kernels|distill_jsd_loss's check compares the total loss with itself
distill_tokens_unchecked|kernels/ops/distill_jsd_loss.c|s/kb_cmp_tol(&m, "token_loss", &lr, &lg, &tl, 1);/(void) lg;/|kernels|distill_jsd_loss's check no longer compares returned per-token losses
upgrade_costs_stale|sql/updates/0.2.0--0.3.0.sql|/^-- jsd's backward pass (issue 26 item 3)/,$d|upgrade|the 0.2.0 -> 0.3.0 update keeps 0.2.0's seeded cost formulas (jsd backward "as forward"; judged by hand: the released versions need this clone's history)
opdef_dyt_no_alpha|kernels/python/kbench_reference.py|s/torch.tanh(inputs\["alpha"\] \* inputs\["x"\])/torch.tanh(inputs["x"])/|KI_OPS=dyt operations|dyt's reference leaves alpha out (tanh(x), not tanh(alpha x): y and every gradient wrong, dalpha zero)
opdef_poly_norm_global|kernels/python/kbench_reference.py|s/return u \* torch.rsqrt((u \* u).mean(-1, keepdim=True) + eps)/return u * torch.rsqrt((u * u).mean() + eps)/|KI_OPS=poly_norm operations|poly_norm's reference normalizes each power over the whole tensor, not over each row's hidden values
opdef_mrope_hw_swapped|kernels/python/kbench_reference.py|s/\[0\] \* st + \[1\] \* shw + \[2\] \* shw/[0] * st + [2] * shw + [1] * shw/|KI_OPS=qwen2vl_mrope operations|qwen2vl_mrope's reference gives the height section the width positions and the width section the height ones
opdef_mrope_theta|kernels/ops/defs/qwen2vl_mrope.json|s/"rope_theta", "dtype": "fp32", "value": 1000000}/"rope_theta", "dtype": "fp32", "value": 10000}/|KI_OPS=qwen2vl_mrope operations|qwen2vl_mrope defined with rope_theta 1e4 (Llama's base) instead of the 1e6 of Liger's script's Qwen2VLTextConfig
provider_any_operation|kernels/impl_name.c|s/if (strcmp(name, kb_providers\[i\].name) == 0 \&\& strcmp(op, kb_providers\[i\].op) == 0)/if (strcmp(name, kb_providers[i].name) == 0)/|KI_OPS=embedding providers|a provider is taken for any operation (torch_compile for layer_norm), not refused at queue time
provider_not_builtin|kernels/impl_name.c|s/^\tif (kb_provider_name(impl))$/\tif (false)/|KI_OPS=embedding providers|the providers are not built-in names to the extension (kbench_run looks them up as registered; a registration may take one)
provider_uncompiled|kernels/python/kbench_providers.py|s/compiled = torch.compile(m)/compiled = m/|KI_OPS=embedding providers|torch_compile runs the torch baseline uncompiled
provider_resolve_prefix|sql/code/37_resolve.sql|s/AND _kernelindex.slug(split_part(manifest->'spec'->'callable'->>'symbol', '.', 1)) = _kernelindex.slug(implementation))/AND starts_with(replace(name, '_', '-'), concat('kbench-python-', _kernelindex.slug(implementation))))/|KI_OPS=embedding providers|a provider resolves by name prefix ('torch' takes torch_compile's runs too)
provider_reproduce_three|sql/code/45_reproductions.sql|s/FROM jsonb_array_elements_text(o->'pythonImplementations') b/FROM unnest(ARRAY['huggingface', 'torch', 'liger']) b/|KI_OPS=embedding providers|a Liger run of another provider is not reproduced by that provider
provider_unlisted|kernels/list.c|s/if (strcmp(kb_providers\[i\].op, op->name) == 0)/if (0)/|kernels|the registry lists no operation's providers (kbench list --json, kbench_device_operations)
provider_table_differs|kernels/python/kbench_providers.py|s/"tiled_geglu": "DeepSpeed's TiledMLP algorithm/"geglu": "DeepSpeed's TiledMLP algorithm/|kernels|kbench_providers.py serves deepspeed_tiled for another operation than kernels/impl_name.c
provider_library_unchecked|kernels/python/kbench_providers.py|s/^    if lib:$/    if False:/|KI_OPS=megatron_swiglu providers|a provider's missing library fails as a bare import error, not saying which library and how the provider is built
provider_deepspeed_offset|kernels/python/kbench_providers.py|s/offset += n/offset += 0/|KI_OPS=tiled_swiglu providers|deepspeed_tiled's backward writes every shard's dx into the first shard's slice
provider_reproduce_by_name|sql/code/45_reproductions.sql|s/THEN split_part(r.manifest->'spec'->'sourceNative'->>'externalId', '\/', 3) END/THEN NULL END/|KI_OPS=tiled_swiglu providers|a Liger run is reproduced by the provider its implementation's name says (deepspeed_tiled's runs by huggingface), not the one its externalId names
reproduce_first_operation|sql/code/45_reproductions.sql|s/ORDER BY o->>'name' IN (/ORDER BY NULL IN (/|KI_OPS=tiled_swiglu providers|a run of an operation whose OperationSpec another shares (tiled_swiglu, swiglu) is reproduced as the first of them by name, not the one the run names
liger_fused_add_rms_norm_module|kernels/python/kbench_builtin_defs.py|s/from liger_kernel.transformers.fused_add_rms_norm import LigerFusedAddRMSNorm/from liger_kernel.transformers.rms_norm import LigerFusedAddRMSNorm/|KI_OPS=fused_add_rms_norm liger_standins|the liger fused_add_rms_norm imports LigerFusedAddRMSNorm from liger_kernel.transformers.rms_norm, where Liger has no such class
liger_geglu_as_swiglu|kernels/python/kbench_builtin_defs.py|s/m = (LigerSwiGLUMLP if act_name == "silu" else LigerGEGLUMLP)(_Cfg())/m = LigerSwiGLUMLP(_Cfg())/|KI_OPS=geglu liger_standins|the liger geglu builds Liger's SwiGLU MLP
liger_kl_div_mean|kernels/python/kbench_builtin_defs.py|s/loss_fn = LigerKLDIVLoss(reduction="batchmean")/loss_fn = LigerKLDIVLoss(reduction="mean")/|KI_OPS=kl_div liger_standins|the liger kl_div is built with reduction mean, not batchmean
liger_mta_not_sparse|kernels/python/kbench_builtin_defs.py|s/dilation=1, groups=1, bias=True, sparse=sparse)/dilation=1, groups=1, bias=True, sparse=False)/|KI_OPS=sparse_multi_token_attention liger_standins|the liger sparse_multi_token_attention builds Liger's softmax multi-token attention
liger_kto_summed_logps|kernels/python/kbench_builtin_defs.py|s/use_ref_model=True, average_log_prob=True)/use_ref_model=True)/|KI_OPS=kto_loss liger_standins|the liger kto_loss keeps Liger's default average_log_prob False (each sequence's log-probabilities summed, not averaged as the definition's)
EOF
)

# --generate / --quick: mutations made by test/mutate_gen.py instead of the table above
MODE=hand; SEED=1; SAMPLE=40; GEN_FILES=()
case "${1:-}" in
  --generate|--quick)
    MODE=${1#--}; shift
    while [ $# -gt 0 ]; do
      case "$1" in
        --seed) SEED=$2; shift 2 ;;
        --sample) SAMPLE=$2; shift 2 ;;
        *) GEN_FILES+=("$1"); shift ;;
      esac
    done ;;
esac
[ "$MODE" = hand ] || set --
# --quick: the mutable files the last commit touched (against its first parent), else (none, or no
# history) a sample over core/ (the identity core: its unit tests are fast and exact, so a commit that
# changed no source, a note or a test, is judged in seconds by mutations whose survivors are real gaps)
QUICK_FALLBACK=0
if [ "$MODE" = quick ] && [ ${#GEN_FILES[@]} -eq 0 ]; then
  mapfile -t GEN_FILES < <(git diff --name-only HEAD^1 HEAD 2>/dev/null | xargs -r python3 test/mutate_gen.py mutable)
  if [ ${#GEN_FILES[@]} -eq 0 ]; then
    QUICK_FALLBACK=1
    mapfile -t GEN_FILES < <(git ls-files core/'*.c' | xargs -r python3 test/mutate_gen.py mutable)
  fi
fi
for want in "$@"; do
  if ! grep -q "^$want|" <<<"$MUTATIONS"; then
    echo "mutate.sh: unknown mutation '$want'; known: $(cut -d'|' -f1 <<<"$MUTATIONS" | tr '\n' ' ')" >&2
    exit 2
  fi
done
# The scratch copy holds the files git would (no .git, no build/): the PostgreSQL that the
# bundle is built against (tools/pgbundle_build.sh, used by the fault suite) stays in this
# checkout's build/ cache, built once, instead of being fetched and compiled in every copy.
export KI_PGBUNDLE_CACHE=${KI_PGBUNDLE_CACHE:-$ROOT/build}
WORK=${MUTATE_DIR:-$(mktemp -d /tmp/kernelindex-mutate.XXXXXX)}
mkdir -p "$WORK"
chmod 755 "$WORK"
echo "# scratch copy and PostgreSQL in $WORK"
mkdir -p "$WORK/repo"
if [ "$MODE" = hand ]; then
  git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$WORK/repo" 2>/dev/null
else
  # (the generated modes also take this tree's build outputs, times kept: when it is built, as in
  # CI after bin/setup.sh, the scratch copy's first build is an install, not a compilation)
  git ls-files -co --exclude-standard -z | xargs -0 cp -a --parents -t "$WORK/repo" 2>/dev/null
  git ls-files -oi --exclude-standard -z -- core kernels src sql '*.so' |
    grep -zvE '^(test/|build/|third_party/)' | xargs -0 -r cp -a --parents -t "$WORK/repo" 2>/dev/null
fi
[ -d "$WORK/pg" ] || bash tools/pg_sandbox.sh "$WORK/pg" >/dev/null
export KI_PGBIN=$WORK/pg/usr/lib/postgresql/15/bin PATH=$WORK/pg/usr/lib/postgresql/15/bin:$PATH
cd "$WORK/repo" || exit 1
chmod -R a+rX "$WORK"

build() { make -s NVCC= >/dev/null 2>&1 && make -s -C kernels NVCC= >/dev/null 2>&1 && make -s NVCC= install >/dev/null 2>&1; }
suite() { # "ENV=... name": run it; 0 when it passed.  "installcheck": make installcheck (pg_regress
  # and the isolation specs, as bin/test.sh runs it: as postgres when root); "NNN_name.pl": the Perl
  # test test/t/NNN_name.pl (make prove_installcheck, as postgres when root)
  local spec=$1 name env=() log=$2 rc part
  read -ra words <<<"$spec"
  name=${words[-1]}; env=("${words[@]:0:${#words[@]}-1}")
  if [[ "$name" == *+* ]]; then   # "a+b": both, in turn, into one log (failed when either failed)
    : >"$log"; rc=0
    for part in ${name//+/ }; do
      suite "${env[*]} $part" "$log.$part" || rc=1
      cat "$log.$part" >>"$log"; rm -f "$log.$part"
    done
    return $rc
  fi
  local as=()
  if [ "$name" = installcheck ]; then
    [ "$(id -u)" -eq 0 ] && { chmod -R a+rwX test 2>/dev/null; as=(runuser -u postgres -- env "PATH=$PATH"); }
    env "${env[@]}" timeout "${MUTATE_SUITE_S:-1800}" "${as[@]}" make -s installcheck TAP_TESTS= >"$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "not ok - installcheck did not finish within ${MUTATE_SUITE_S:-1800} s" >>"$log"
    grep -E '\.\.\. FAILED' "$log" | sed 's/^/not ok - installcheck: /' >>"$log"
  elif [[ "$name" == *.pl ]]; then
    # (the fake GPU built first, where root may write kernels/; prove -v prints "not ok N - ...")
    make -s -C kernels NVCC= fake-cuda >/dev/null 2>&1
    [ "$(id -u)" -eq 0 ] && { chmod -R a+rwX test 2>/dev/null; as=(runuser -u postgres -- env "PATH=$PATH"); }
    env "${env[@]}" timeout "${MUTATE_SUITE_S:-1800}" "${as[@]}" make -s prove_installcheck PROVE_TESTS="test/t/$name" PROVE_FLAGS=-v >"$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "not ok - the test did not finish within ${MUTATE_SUITE_S:-1800} s" >>"$log"
    [ "$rc" != 0 ] && ! grep -qE '^not ok' "$log" && echo "not ok - test/t/$name exited with status $rc" >>"$log"
  else
    # a suite that does not end (a mutation that makes a statement take hours) fails
    env "${env[@]}" timeout "${MUTATE_SUITE_S:-1800}" bash "test/suites/$name.sh" >"$log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "not ok - the suite did not finish within ${MUTATE_SUITE_S:-1800} s" >>"$log"
  fi
  [ "$rc" = 0 ] && ! grep -qE '^not ok' "$log"
}

# The generated modes (test/mutate_gen.py makes the mutations; test/mutate_equivalent.txt lists
# the survivors that are equivalent, by id, with the reason).
#   --generate: SAMPLE mutations (seed SEED) of GEN_FILES (default every mutable file); a table,
#     then the score per file and per layer; exit 0 when every survivor is listed as equivalent.
#   --quick: TAP lines for bin/test.sh; at most QUICK_MAX (6) mutations whose estimated cost
#     (EST below, seconds on this 2-core machine, a rebuild included) fits QUICK_BUDGET_S (180).
#     MUTATE_BASELINE=FILE (bin/test.sh writes it): lines "SUITE SECONDS passed|failed" of the
#     unmutated suites in the same run; a suite not in it is run unmutated here first.  A mutation
#     whose suite fails unmutated is not judged (a comment line: that failure is counted where the
#     suite ran); one that does not build is caught (by the build); one whose suite overruns
#     3 x its unmutated time + 60 s is caught (the unmutated suite passed).
est1() { case "$1" in core) echo 25 ;; kernels) echo 35 ;; liger_standins) echo 10 ;; installcheck) echo 170 ;; *) echo 120 ;; esac; }
est() { local t=0 part name=${1##* }; for part in ${name//+/ }; do t=$((t + $(est1 "$part"))); done; echo $t; }
# "KEY SECONDS RESULT" of MUTATE_BASELINE for KEY; for "a+b", of its parts together (every part
# there; the seconds summed; passed when each passed); nothing when it has not got them all
baseline_line() {
  local key=$1 part line t=0 res=passed s r
  [ -n "${MUTATE_BASELINE:-}" ] && [ -r "$MUTATE_BASELINE" ] || return 1
  for part in ${key//+/ }; do
    line=$(grep -m1 "^$part " "$MUTATE_BASELINE") || return 1
    read -r _ s r <<<"$line"
    t=$((t + s)); [ "$r" = passed ] || res=failed
  done
  echo "$key $t $res"
}
declare -A BASE_S BASE_OK
DIRTY=0
base_of() { # suite spec: its unmutated result (run here unless MUTATE_BASELINE has it)
  local spec=$1 key=${1##* } t0 line
  [ -n "${BASE_OK[$key]:-}" ] && return
  if line=$(baseline_line "$key"); then
    read -r _ BASE_S[$key] BASE_OK[$key] <<<"$line"
    return
  fi
  # (the file of the last mutation is restored but not yet built: build before judging the
  # unmutated suite, or it runs on the last mutation's library)
  [ "$DIRTY" = 1 ] && { build; DIRTY=0; }
  t0=$SECONDS
  if MUTATE_SUITE_S=1800 suite "$spec" "$WORK/base-$key.log"; then BASE_OK[$key]=passed; else BASE_OK[$key]=failed; fi
  BASE_S[$key]=$((SECONDS - t0))
  echo "# suite $spec unmutated: ${BASE_OK[$key]} in ${BASE_S[$key]} s"
}
generated() {
  local list n=0 caught=0 bybuild=0 survived=0 equiv=0 unjudged=0 spent=0 t_start=$SECONDS
  local id line file spec orig new key res reason
  local equivalents=$ROOT/test/mutate_equivalent.txt
  if [ "$MODE" = quick ]; then
    list=$(python3 test/mutate_gen.py list --seed "$SEED" --sample 40 "${GEN_FILES[@]}")
    [ "$QUICK_FALLBACK" = 1 ] && echo "# the last commit touched no mutable source: a sample over core/ (seed $SEED)"
  else
    list=$(python3 test/mutate_gen.py list --seed "$SEED" --sample "$SAMPLE" "${GEN_FILES[@]+"${GEN_FILES[@]}"}")
    echo "# $(wc -l <<<"$list") generated mutations, seed $SEED"
  fi
  declare -A fk fn lk ln
  local rows=()
  while IFS=$'\t' read -r id line file spec orig new; do
    [ -n "$id" ] || continue
    key=${spec##* }
    reason=$(grep -F -m1 "$id |" "$equivalents" 2>/dev/null | sed 's/^[^|]*| *//')
    if [ "$MODE" = quick ]; then
      [ "$n" -ge "${QUICK_MAX:-6}" ] && break
      local cost; cost=$(est "$spec")
      [ -z "${BASE_OK[$key]:-}" ] && ! baseline_line "$key" >/dev/null && cost=$((cost * 2))
      [ -n "$reason" ] && cost=0
      [ $((spent + cost)) -gt "${QUICK_BUDGET_S:-180}" ] && continue
      spent=$((spent + cost))
    fi
    n=$((n + 1))
    if [ -n "$reason" ]; then
      res=equivalent; equiv=$((equiv + 1))
    else
      base_of "$spec"
      if [ "${BASE_OK[$key]}" != passed ]; then
        res=unjudged; unjudged=$((unjudged + 1))
      else
        cp "$file" "$WORK/orig"
        python3 test/mutate_gen.py apply "$id"
        if cmp -s "$file" "$WORK/orig"; then res=unjudged; unjudged=$((unjudged + 1))
        elif ! build; then res=build; bybuild=$((bybuild + 1))
        elif MUTATE_SUITE_S=$((3 * ${BASE_S[$key]:-600} + 60)) suite "$spec" "$WORK/gen.log"; then res=survived; survived=$((survived + 1))
        else res=caught; caught=$((caught + 1))
        fi
        cp "$WORK/orig" "$file"; touch "$file"; DIRTY=1
      fi
    fi
    local what="$id (line $line: $(sed -E 's/^(\\t| )+//' <<<"$new" | cut -c1-90))"
    if [ "$MODE" = quick ]; then
      case $res in
        caught) echo "ok - mutation $what caught by $key: $(grep -m1 -E '^not ok' "$WORK/gen.log" | cut -c1-80)" ;;
        build) echo "ok - mutation $what caught by the build (it does not compile or install)" ;;
        survived) echo "not ok - mutation $what survived $key (kill it with a test, or list it in test/mutate_equivalent.txt with the reason)" ;;
        equivalent) echo "ok - mutation $id listed as equivalent (not run): $reason" ;;
        unjudged) echo "# mutation $what not judged: suite $key fails unmutated (counted where it ran)" ;;
      esac
    else
      rows+=("| $id | $line | $key | $res | $(sed -E 's/^(\\t| )+//' <<<"$new" | cut -c1-80 | sed 's/|/\\|/g') |")
      echo "${rows[-1]}"
      local l; l=$(python3 -c 'import sys; sys.path.insert(0, "test"); import mutate_gen; print(mutate_gen.layer_of(sys.argv[1]))' "$file")
      if [ "$res" = caught ] || [ "$res" = build ]; then fk[$file]=$((${fk[$file]:-0} + 1)); lk[$l]=$((${lk[$l]:-0} + 1)); fi
      if [ "$res" != unjudged ] && [ "$res" != equivalent ]; then fn[$file]=$((${fn[$file]:-0} + 1)); ln[$l]=$((${ln[$l]:-0} + 1)); fi
    fi
  done <<<"$list"
  build
  if [ "$MODE" = quick ]; then
    echo "# quick mutations: $n in $((SECONDS - t_start)) s: $caught caught by a suite, $bybuild by the build, $survived survived, $equiv equivalent, $unjudged not judged"
    return 0
  fi
  echo
  echo "| file | caught / judged |"; echo "| --- | --- |"
  for file in $(printf '%s\n' "${!fn[@]}" | sort); do echo "| $file | ${fk[$file]:-0} / ${fn[$file]} |"; done
  echo
  echo "| layer | caught / judged | score |"; echo "| --- | --- | --- |"
  for l in core kernels src sql python; do
    [ -n "${ln[$l]:-}" ] && echo "| $l | ${lk[$l]:-0} / ${ln[$l]} | $((100 * ${lk[$l]:-0} / ${ln[$l]}))% |"
  done
  echo
  echo "$n mutations (seed $SEED) in $((SECONDS - t_start)) s: $caught caught by a suite, $bybuild by the build, $survived survived, $equiv equivalent (listed), $unjudged not judged"
  [ "$survived" -eq 0 ]
}

if [ "$MODE" = quick ]; then
  # (an unmutated tree that does not build here fails bin/test.sh's own build, not this)
  build || { echo "# quick mutations not run: the scratch copy does not build"; exit 0; }
  generated; rc=$?
  [ -z "${MUTATE_DIR:-}" ] && rm -rf "$WORK"
  exit $rc
fi
build || { echo "not ok - the scratch copy builds"; exit 1; }
if [ "$MODE" = generate ]; then
  generated; rc=$?
  [ -z "${MUTATE_DIR:-}" ] && rm -rf "$WORK"
  exit $rc
fi
# The mutations asked for (default: all), and the suites they need.
names=(); specs=()
while IFS='|' read -r name _ _ spec _; do
  if [ $# -eq 0 ] || [[ " $* " == *" $name "* ]]; then
    names+=("$name")
    [[ " ${specs[*]+${specs[*]//[ =]/_}} " == *" ${spec//[ =]/_} "* ]] || specs+=("$spec")
  fi
done <<<"$MUTATIONS"
# The suites must pass on the unmutated code first.
[ "${MUTATE_BASE:-1}" = 0 ] && specs=()
for spec in "${specs[@]+"${specs[@]}"}"; do
  if ! suite "$spec" "$WORK/base-${spec##* }.log"; then
    echo "not ok - suite $spec fails without any mutation:"; grep '^not ok' "$WORK/base-${spec##* }.log" | head -5
    exit 1
  fi
  echo "# suite $spec passes unmutated"
done

caught=0; missed=0; rows=()
while IFS='|' read -r name file expr spec what; do
  [[ " ${names[*]} " == *" $name "* ]] || continue
  cp "$file" "$WORK/orig"
  sed -i -e "$expr" "$file"
  if cmp -s "$file" "$WORK/orig"; then
    result="NOT APPLIED (the sed expression matched nothing)"; missed=$((missed + 1))
  elif ! build; then
    result="NOT CAUGHT (does not build: not a useful mutation)"; missed=$((missed + 1))
  elif suite "$spec" "$WORK/$name.log"; then
    result="NOT CAUGHT"; missed=$((missed + 1))
  else
    result="caught: $(grep -m1 -E '^not ok' "$WORK/$name.log" | cut -c1-110)"; caught=$((caught + 1))
  fi
  cp "$WORK/orig" "$file"
  touch "$file"
  rows+=("$(printf '| %-24s | %-36s | %-12s | %s |' "$name" "$file" "${spec##* }" "$result")")
  echo "${rows[-1]}"
done <<<"$MUTATIONS"
build

echo
echo "| mutation | file | suite | result |"
echo "| --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo
echo "$caught caught, $missed not caught"
[ -z "${MUTATE_DIR:-}" ] && rm -rf "$WORK"
[ "$missed" -eq 0 ]
exit
}
