-- Cohorts: the cohort of a run and the cohort views; the type kbench_cohort
-- is sql/schema/38_cohorts.sql.

CREATE OR REPLACE FUNCTION kbench_cohort_of(run_digest text) RETURNS kbench_cohort
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp STABLE AS $$
DECLARE
	c kbench_cohort;
BEGIN
	-- a digest or a unique prefix of it (_kernelindex.resolve_run); an unknown run is an error
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest INTO c
	  FROM kbench_runs r WHERE r.digest = _kernelindex.resolve_run(run_digest);
	RETURN c;
END $$;
COMMENT ON FUNCTION kbench_cohort_of(text) IS 'the cohort (comparison key) of a run';

-- Every competing run with its cohort and what names it.
CREATE OR REPLACE VIEW kbench_cohort_runs AS
SELECT r.workload_digest, r.protocol_digest, r.environment_digest,
       o.name AS operation, kbench_protocol_mode(p.name) AS mode, w.name AS workload, w.axes,
       _kernelindex.float_dtype(w.dtypes) AS dtype,
       e.product, e.form_factor,
       r.implementation_digest, i.name AS implementation, i.version,
       r.digest AS run_digest, r.observed_at, r.primary_statistic, r.primary_ns, r.p20_ns, r.p80_ns,
       (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns,
       _kernelindex.op_key(o.name) AS operation_key, _kernelindex.device_key(e) AS device_key
  FROM kbench_runs r
  LEFT JOIN kbench_workloads w ON w.digest = r.workload_digest
  LEFT JOIN kbench_operations o ON o.digest = w.operation_digest
  LEFT JOIN kbench_protocols p ON p.digest = r.protocol_digest
  LEFT JOIN kbench_environments e ON e.digest = r.environment_digest
  LEFT JOIN kbench_implementations i ON i.digest = r.implementation_digest
 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL;
COMMENT ON VIEW kbench_cohort_runs IS 'competing runs (passed, unretracted, not superseded) with their cohort key and names';

CREATE OR REPLACE VIEW kbench_cohorts AS
SELECT workload_digest, protocol_digest, environment_digest, operation, mode, workload, axes, dtype,
       product, form_factor,
       count(*) AS runs, count(DISTINCT implementation_digest) AS implementations,
       min(observed_at) AS first_observed_at, max(observed_at) AS last_observed_at,
       operation_key, device_key
  FROM kbench_cohort_runs
 GROUP BY workload_digest, protocol_digest, environment_digest, operation, mode, workload, axes, dtype, product, form_factor,
          operation_key, device_key;
COMMENT ON VIEW kbench_cohorts IS 'comparison cohorts (workload, protocol, environment) with how many competing runs and implementations they hold';

-- Reading the cohorts is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_cohort_runs, kbench_cohorts TO PUBLIC;
