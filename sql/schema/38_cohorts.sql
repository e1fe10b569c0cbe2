--------------------------------------------------------------------------
-- Cohorts
--------------------------------------------------------------------------

CREATE TYPE kbench_cohort AS (
	workload_digest text,
	protocol_digest text,
	environment_digest text
);
COMMENT ON TYPE kbench_cohort IS 'the comparison key: workload (operation, sizes, dtypes, correctness policy), protocol and environment digests';
