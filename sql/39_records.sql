--------------------------------------------------------------------------
-- Records: the best competing run per cohort and implementation, kept by
-- triggers on kbench_runs, and the history of each cohort's leader.
--------------------------------------------------------------------------

-- Derived state, maintained by the triggers below (not dumped: restoring
-- kbench_runs rebuilds it).
CREATE TABLE kbench_cohort_bests (
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	implementation_digest text NOT NULL,
	run_digest text NOT NULL,
	primary_ns bigint NOT NULL,
	low_ns bigint NOT NULL,
	high_ns bigint NOT NULL,
	observed_at timestamptz NOT NULL,
	PRIMARY KEY (workload_digest, protocol_digest, environment_digest, implementation_digest)
);
COMMENT ON TABLE kbench_cohort_bests IS 'derived: each implementation''s best competing run per cohort (lowest primary_ns, then earliest, then digest)';

CREATE TABLE kbench_record_history (
	id bigserial PRIMARY KEY,
	workload_digest text NOT NULL,
	protocol_digest text NOT NULL,
	environment_digest text NOT NULL,
	run_digest text,                      -- the new leader; NULL when no competing run is left
	implementation_digest text,
	primary_ns bigint,
	previous_run_digest text,             -- the leader it displaced
	previous_primary_ns bigint,
	at timestamptz NOT NULL,              -- the new leader's observed_at (the withdrawal's time when none is left)
	cause text NOT NULL CHECK (cause IN ('first', 'faster', 'retracted', 'superseded')),
	recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ON kbench_record_history (workload_digest, protocol_digest, environment_digest, id);
CREATE INDEX ON kbench_record_history (run_digest);
COMMENT ON TABLE kbench_record_history IS 'each cohort''s leaders in the order they appeared: first, faster (beat the leader), retracted / superseded (the leader was withdrawn)';
-- The history says in what order things happened, which the runs alone
-- cannot: pg_dump keeps it (ids and recorded_at included).  pg_restore
-- loads it before kbench_runs (table data in name order), and the records
-- trigger then adds nothing to it (see kbench__records_after_insert).
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');

-- The records trigger on insert (per statement): sql/39_records_insert.sql.

-- After a run is retracted or superseded: its implementation's best and, if
-- it led its cohort, the cohort's leader are recomputed.
CREATE FUNCTION kbench__records_after_withdrawal() RETURNS trigger
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

CREATE TRIGGER records_withdrawal AFTER UPDATE OF retracted_at, superseded_by ON kbench_runs
	FOR EACH ROW
	WHEN ((OLD.retracted_at IS NULL AND NEW.retracted_at IS NOT NULL) OR (OLD.superseded_by IS NULL AND NEW.superseded_by IS NOT NULL))
	EXECUTE FUNCTION kbench__records_after_withdrawal();

-- Recompute the derived record tables from kbench_runs: after a bulk load
-- made with the trigger disabled (bench/synthetic_history.sql), or to start
-- afresh.  The history is replayed in (observed_at, digest) order from the
-- competing runs only, so it holds 'first' and 'faster' entries.
CREATE FUNCTION kbench_rebuild_records(OUT bests bigint, OUT history bigint)
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

-- The current records (kbench_records) and each cohort's record alone
-- (kbench_leaders) are views over kbench_cohort_bests, written once, in
-- sql/50_continuous.sql, with the rule they rank by (the 95% interval of
-- the difference between two bests).
-- kbench_leaders reads the record of each cohort without ranking every
-- implementation first: one ordered index pass over the bests.
CREATE INDEX ON kbench_cohort_bests (workload_digest, protocol_digest, environment_digest, primary_ns, observed_at, run_digest);

-- The history of one cohort's leader, oldest first.
CREATE FUNCTION kbench_record_history_of(cohort kbench_cohort)
	RETURNS SETOF kbench_record_history LANGUAGE sql STABLE AS $$
	SELECT * FROM kbench_record_history h
	 WHERE h.workload_digest = (cohort).workload_digest AND h.protocol_digest = (cohort).protocol_digest
	   AND h.environment_digest = (cohort).environment_digest
	 ORDER BY h.id
$$;
COMMENT ON FUNCTION kbench_record_history_of(kbench_cohort) IS 'the leaders of one cohort in the order they appeared';

-- Reading the records is for everyone, as reading the catalog is.
GRANT SELECT ON kbench_cohort_bests, kbench_record_history TO PUBLIC;
