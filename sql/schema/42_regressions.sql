-- Regressions: the type the scoring functions return (sql/code/42_regressions.sql).

-- A flagged point of a series, as the scoring functions return it.
CREATE TYPE _kernelindex.flag AS (
	workload_digest text,
	protocol_digest text,
	environment_digest text,
	family text,
	run_digest text,
	point bigint,
	previous_run_digest text,
	value_ns float8,
	baseline_ns float8,
	statistic float8,
	critical float8,
	p_value float8,
	compared int,
	detail jsonb
);
