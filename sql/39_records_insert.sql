--------------------------------------------------------------------------
-- Records, kept on insert: the trigger that updates kbench_cohort_bests and
-- kbench_record_history (sql/39_records.sql) once per statement.  0.1.0's
-- trigger ran per row: the upgrade drops it (20_catalog.sql) and runs this
-- part through the link sql/updates/0.1.0--0.2.0/21_records.sql, hence
-- CREATE OR REPLACE for the function.
--------------------------------------------------------------------------

-- After runs are inserted (one statement of the store: kbench_ingest, the
-- imports, the runner): update each implementation's best in its cohort
-- and append to the record history every run that beats the cohort's
-- leader (lower primary_ns; on a tie the earlier run, then the smaller
-- digest, keeps the lead).  Runs are taken in the order they arrive, so a
-- statement gives the history that inserting its runs one by one would.
-- Once per statement: the whole Liger CSV costs a few statements, not one
-- call per run.  The cohorts touched are locked (advisory transaction
-- locks on 64 buckets of cohorts, taken in order, so a transaction holds
-- at most 64) before their leaders are read, so two transactions storing
-- the first runs of a new cohort at once give one 'first'.
-- A restore (pg_dump keeps the history) loads the history before the runs:
-- no restored run beats the leader the history ends with, so the restore
-- adds nothing to it.
CREATE OR REPLACE FUNCTION kbench__records_after_insert() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp SET work_mem = '64MB' AS $$
BEGIN
	PERFORM pg_catalog.pg_advisory_xact_lock(27497, k)
	   FROM (SELECT DISTINCT pg_catalog.hashtext(n.workload_digest || n.protocol_digest || n.environment_digest) & 63 AS k
	           FROM kbench_new_runs n
	          WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL) c
	  ORDER BY k;
	INSERT INTO kbench_cohort_bests AS b (workload_digest, protocol_digest, environment_digest, implementation_digest,
	                                      run_digest, primary_ns, low_ns, high_ns, observed_at)
	SELECT DISTINCT ON (n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest)
	       n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest,
	       n.digest, n.primary_ns, sp.low_ns, sp.high_ns, n.observed_at
	  FROM kbench_new_runs n CROSS JOIN LATERAL kbench_run_spread(n) sp
	 WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL
	 ORDER BY n.workload_digest, n.protocol_digest, n.environment_digest, n.implementation_digest,
	          n.primary_ns, n.observed_at, n.digest
	ON CONFLICT (workload_digest, protocol_digest, environment_digest, implementation_digest) DO UPDATE
	   SET run_digest = excluded.run_digest, primary_ns = excluded.primary_ns, low_ns = excluded.low_ns,
	       high_ns = excluded.high_ns, observed_at = excluded.observed_at
	 WHERE (excluded.primary_ns, excluded.observed_at, excluded.run_digest) < (b.primary_ns, b.observed_at, b.run_digest);
	WITH c AS (
		-- the competing runs in arrival order, each with its place in key order
		SELECT n.*, row_number() OVER (PARTITION BY n.workload_digest, n.protocol_digest, n.environment_digest
		                               ORDER BY n.primary_ns, n.observed_at, n.digest) AS place
		  FROM (SELECT row_number() OVER () AS arrival, n.workload_digest, n.protocol_digest, n.environment_digest,
		               n.implementation_digest, n.digest, n.primary_ns, n.observed_at, n.status, n.retracted_at, n.superseded_by
		          FROM kbench_new_runs n) n
		 WHERE n.status = 'passed' AND n.retracted_at IS NULL AND n.superseded_by IS NULL AND n.primary_ns IS NOT NULL),
	-- a run leads when it beats the leader and every run of the statement before it
	rec AS (
		SELECT c.*, l.run_digest AS leader_digest, l.primary_ns AS leader_ns
		  FROM (SELECT c.*, min(c.place) OVER (PARTITION BY c.workload_digest, c.protocol_digest, c.environment_digest
		                                       ORDER BY c.arrival ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS best_before
		          FROM c) c
		  LEFT JOIN LATERAL (
		        SELECT h.run_digest, h.primary_ns, h.at FROM kbench_record_history h
		         WHERE h.workload_digest = c.workload_digest AND h.protocol_digest = c.protocol_digest
		           AND h.environment_digest = c.environment_digest
		         ORDER BY h.id DESC LIMIT 1) l ON true
		 WHERE (c.best_before IS NULL OR c.place < c.best_before)
		   AND (l.run_digest IS NULL OR (c.primary_ns, c.observed_at, c.digest) < (l.primary_ns, l.at, l.run_digest)))
	INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
	                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
	SELECT r.workload_digest, r.protocol_digest, r.environment_digest, r.digest, r.implementation_digest, r.primary_ns,
	       p.digest, p.ns, r.observed_at, CASE WHEN p.digest IS NULL THEN 'first' ELSE 'faster' END
	  FROM (SELECT r.*,
	               lag(r.digest) OVER w AS prev_digest, lag(r.primary_ns) OVER w AS prev_ns,
	               row_number() OVER w AS k
	          FROM rec r
	        WINDOW w AS (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest ORDER BY r.arrival)) r
	 CROSS JOIN LATERAL (SELECT CASE WHEN r.k = 1 THEN r.leader_digest ELSE r.prev_digest END AS digest,
	                            CASE WHEN r.k = 1 THEN r.leader_ns ELSE r.prev_ns END AS ns) p
	 ORDER BY r.arrival;
	RETURN NULL;
END $$;

CREATE TRIGGER records AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS kbench_new_runs
	FOR EACH STATEMENT EXECUTE FUNCTION kbench__records_after_insert();
