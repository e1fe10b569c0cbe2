-- Issue 13, "a user's first hour" (branch first): the 0.1.0 objects whose
-- result type or arguments changed in 0.2.0 cannot be replaced in place;
-- they are dropped here and made by the links 81_*.sql from their parts
-- (each body written once, there):
--   81_bench.sql -> sql/31_bench.sql, 81_speedup.sql -> sql/40_speedup_report.sql,
--   81_withdrawal.sql -> sql/20_withdrawal.sql.
-- The objects redefined with the same result type are CREATE OR REPLACE in
-- their parts, linked the same way: 81_cohorts.sql -> sql/38_cohorts_runs.sql
-- (kbench_cohort_of, kbench_cohort_runs, kbench_cohorts), 81_roofline.sql ->
-- sql/43_roofline_runs.sql (kbench_workload_cost, kbench_roofline); the job
-- list is 83_job_status.sql, after 82_compare.sql adds the columns it reads.
-- The resolvers are 37_resolve.sql (37_first_hour_resolve.sql, a link to it,
-- runs before 50_continuous.sql, whose views use them); kbench_reproduce is
-- new in 0.2.0: 42_reproductions.sql (a link) makes it.

-- Retraction and supersession return the digest, not the whole run row, and
-- take a digest prefix.
DROP FUNCTION kbench_retract(text, text);
DROP FUNCTION kbench_supersede(text, text, text);

-- kbench_bench: timeout and retry as kbench_run's, times in ns (median_ns,
-- p20_ns, p80_ns as in kbench_job_status), wait defaults to the job's timeout.
DROP PROCEDURE kbench_bench(text, text, jsonb, text, text, jsonb, interval, bigint, text, text,
	double precision, double precision, double precision, bigint, double precision, text, text);

-- kbench_speedup and kbench_speedup_summary with operation NULL: every
-- operation where both sides exist, with its operation_key and pass (new
-- last columns).
DROP FUNCTION kbench_speedup_summary(text, text, text, text, text);
DROP FUNCTION kbench_speedup(text, text, text, text, text);
