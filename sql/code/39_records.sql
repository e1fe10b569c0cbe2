-- Records: the triggers that keep kbench_cohort_bests and
-- kbench_record_history (sql/schema/39_records.sql).

-- A run whose sampling hit a cap (max_time, max_samples) before its noise
-- settled (kbench's adaptive stopping, docs/KERNELS.md): kbench_records
-- marks it (docs/ANALYTICS.md).  Runs without the flag (older kbench,
-- imports) are not unstable.
CREATE OR REPLACE FUNCTION _kernelindex.run_unstable(manifest jsonb) RETURNS boolean
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN coalesce(manifest #>> '{spec,sourceNative,metrics,unstable}' = '1', false);
COMMENT ON FUNCTION _kernelindex.run_unstable(jsonb) IS 'whether a run manifest says its sampling stopped at a cap before the noise settled (sourceNative.metrics.unstable = 1)';

-- After a run is retracted or superseded: its implementation's best and, if
-- it led its cohort, the cohort's leader are recomputed.
CREATE OR REPLACE FUNCTION _kernelindex.records_after_withdrawal() RETURNS trigger
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	cur record;
	best record;
BEGIN
	IF OLD.status <> 'passed' OR OLD.primary_ns IS NULL OR OLD.retracted_at IS NOT NULL OR OLD.superseded_by IS NOT NULL THEN
		RETURN NULL;                        -- it was not competing
	END IF;
	IF EXISTS (SELECT 1 FROM kbench_cohort_bests b
	            WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
	              AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest
	              AND b.run_digest = OLD.digest) THEN
		SELECT r.digest, r.primary_ns, (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns, r.observed_at INTO best
		  FROM kbench_runs r
		 WHERE r.workload_digest = OLD.workload_digest AND r.protocol_digest = OLD.protocol_digest
		   AND r.environment_digest = OLD.environment_digest AND r.implementation_digest = OLD.implementation_digest
		   AND r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
		 ORDER BY r.primary_ns, r.observed_at, r.digest LIMIT 1;
		IF FOUND THEN
			UPDATE kbench_cohort_bests b SET run_digest = best.digest, primary_ns = best.primary_ns, low_ns = best.low_ns,
			       high_ns = best.high_ns, observed_at = best.observed_at
			 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
			   AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest;
		ELSE
			DELETE FROM kbench_cohort_bests b
			 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
			   AND b.environment_digest = OLD.environment_digest AND b.implementation_digest = OLD.implementation_digest;
		END IF;
	END IF;
	SELECT h.run_digest INTO cur FROM kbench_record_history h
	 WHERE h.workload_digest = OLD.workload_digest AND h.protocol_digest = OLD.protocol_digest
	   AND h.environment_digest = OLD.environment_digest
	 ORDER BY h.id DESC LIMIT 1;
	IF FOUND AND cur.run_digest = OLD.digest THEN
		SELECT b.run_digest, b.implementation_digest, b.primary_ns, b.observed_at INTO best FROM kbench_cohort_bests b
		 WHERE b.workload_digest = OLD.workload_digest AND b.protocol_digest = OLD.protocol_digest
		   AND b.environment_digest = OLD.environment_digest
		 ORDER BY b.primary_ns, b.observed_at, b.run_digest LIMIT 1;
		INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
		                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
		VALUES (OLD.workload_digest, OLD.protocol_digest, OLD.environment_digest, best.run_digest, best.implementation_digest,
		        best.primary_ns, OLD.digest, OLD.primary_ns,
		        coalesce(best.observed_at, NEW.retracted_at, now()),
		        CASE WHEN NEW.retracted_at IS NOT NULL AND OLD.retracted_at IS NULL THEN 'retracted' ELSE 'superseded' END);
	END IF;
	RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER records_withdrawal AFTER UPDATE OF retracted_at, superseded_by ON kbench_runs
	FOR EACH ROW
	WHEN ((OLD.retracted_at IS NULL AND NEW.retracted_at IS NOT NULL) OR (OLD.superseded_by IS NULL AND NEW.superseded_by IS NOT NULL))
	EXECUTE FUNCTION _kernelindex.records_after_withdrawal();

-- Recompute the derived record tables from kbench_runs: after a bulk load
-- made with the trigger disabled (bench/synthetic_history.sql), or to start
-- afresh.  The history is replayed in (observed_at, digest) order from the
-- competing runs only, so it holds 'first' and 'faster' entries.
CREATE OR REPLACE FUNCTION kbench_rebuild_records(OUT bests bigint, OUT history bigint)
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
BEGIN
	LOCK TABLE kbench_runs IN SHARE MODE;
	TRUNCATE kbench_cohort_bests, kbench_record_history;
	INSERT INTO kbench_cohort_bests (workload_digest, protocol_digest, environment_digest, implementation_digest,
	                                 run_digest, primary_ns, low_ns, high_ns, observed_at)
	SELECT DISTINCT ON (r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest)
	       r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest,
	       r.digest, r.primary_ns, (kbench_run_spread(r)).low_ns, (kbench_run_spread(r)).high_ns, r.observed_at
	  FROM kbench_runs r
	 WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL
	 ORDER BY r.workload_digest, r.protocol_digest, r.environment_digest, r.implementation_digest,
	          r.primary_ns, r.observed_at, r.digest;
	GET DIAGNOSTICS bests = ROW_COUNT;
	INSERT INTO kbench_record_history (workload_digest, protocol_digest, environment_digest, run_digest,
	                                   implementation_digest, primary_ns, previous_run_digest, previous_primary_ns, at, cause)
	SELECT l.workload_digest, l.protocol_digest, l.environment_digest, l.digest, l.implementation_digest, l.primary_ns,
	       lag(l.digest) OVER c, lag(l.primary_ns) OVER c, l.observed_at,
	       CASE WHEN lag(l.digest) OVER c IS NULL THEN 'first' ELSE 'faster' END
	  FROM (SELECT r.workload_digest, r.protocol_digest, r.environment_digest, r.digest, r.implementation_digest,
	               r.primary_ns, r.observed_at,
	               min(r.primary_ns) OVER (PARTITION BY r.workload_digest, r.protocol_digest, r.environment_digest
	                                       ORDER BY r.observed_at, r.digest
	                                       ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before_min
	          FROM kbench_runs r
	         WHERE r.status = 'passed' AND r.retracted_at IS NULL AND r.superseded_by IS NULL AND r.primary_ns IS NOT NULL) l
	 WHERE l.before_min IS NULL OR l.primary_ns < l.before_min
	WINDOW c AS (PARTITION BY l.workload_digest, l.protocol_digest, l.environment_digest ORDER BY l.observed_at, l.digest)
	 ORDER BY l.observed_at, l.digest;
	GET DIAGNOSTICS history = ROW_COUNT;
END $$;
COMMENT ON FUNCTION kbench_rebuild_records() IS 'recompute kbench_cohort_bests and kbench_record_history from kbench_runs (after a bulk load with the records trigger disabled)';

-- The history of one cohort's leader, oldest first.
CREATE OR REPLACE FUNCTION kbench_record_history_of(cohort kbench_cohort)
	RETURNS SETOF kbench_record_history LANGUAGE sql STABLE AS $$
	SELECT * FROM kbench_record_history h
	 WHERE h.workload_digest = (cohort).workload_digest AND h.protocol_digest = (cohort).protocol_digest
	   AND h.environment_digest = (cohort).environment_digest
	 ORDER BY h.id
$$;
COMMENT ON FUNCTION kbench_record_history_of(kbench_cohort) IS 'the leaders of one cohort in the order they appeared';

-- Reading the records is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_cohort_bests, kbench_record_history TO PUBLIC;
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
CREATE OR REPLACE FUNCTION _kernelindex.records_after_insert() RETURNS trigger
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

CREATE OR REPLACE TRIGGER records AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS kbench_new_runs
	FOR EACH STATEMENT EXECUTE FUNCTION _kernelindex.records_after_insert();
