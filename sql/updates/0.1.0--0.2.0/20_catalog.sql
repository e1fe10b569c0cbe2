-- 0.2.0, catalog (issue 10 items 3-6, the .zst of 7; issue 11 items 3-5):
-- the set-based store, append-only for the owner too, U+0000 refused,
-- the record history dumped and kept per statement, .zst read by libzstd.

-- The store: one INSERT per kind (22_store.sql, a link to sql/22_store.sql) replaces kbench__store.
DROP FUNCTION kbench__store(text, text, jsonb, text, bigint[]);

-- Append-only for everyone short of a superuser disabling triggers.
CREATE OR REPLACE FUNCTION kbench__immutable() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	o jsonb := to_jsonb(OLD);
	n jsonb := to_jsonb(NEW);
	key text := coalesce(o->>'digest', o->>'run_digest', o->>'row_id');
	changed text;
	withdrawal boolean;
BEGIN
	SELECT string_agg(x.key, ', ' ORDER BY x.key) INTO changed
	  FROM jsonb_each(o) x JOIN jsonb_each(n) y USING (key)
	 WHERE x.value IS DISTINCT FROM y.value AND NOT (x.key = ANY (coalesce(TG_ARGV, '{}')));
	IF changed IS NOT NULL THEN
		RAISE EXCEPTION 'cannot change % of % %', changed, TG_TABLE_NAME, key
			USING ERRCODE = 'restrict_violation',
			      DETAIL = 'Catalog rows are content-addressed and append-only: their manifest and what is derived from it never change.',
			      HINT = CASE WHEN TG_TABLE_NAME = 'kbench_runs'
			                  THEN 'Retract it with kbench_retract() or supersede it with kbench_supersede().'
			                  ELSE 'Ingest the corrected manifest: it gets a digest of its own.' END;
	END IF;
	IF TG_TABLE_NAME = 'kbench_runs' THEN
		IF EXISTS (SELECT 1 FROM unnest(OLD.unresolved) u(ref) WHERE u.ref <> ALL (NEW.unresolved)
		             AND NOT EXISTS (SELECT 1 FROM kbench_implementations t WHERE u.ref = 'implementation' AND t.digest = OLD.implementation_digest
		                             UNION ALL SELECT 1 FROM kbench_workloads t WHERE u.ref = 'workload' AND t.digest = OLD.workload_digest
		                             UNION ALL SELECT 1 FROM kbench_protocols t WHERE u.ref = 'protocol' AND t.digest = OLD.protocol_digest
		                             UNION ALL SELECT 1 FROM kbench_environments t WHERE u.ref = 'environment' AND t.digest = OLD.environment_digest))
		   OR EXISTS (SELECT 1 FROM unnest(NEW.unresolved) u(ref) WHERE u.ref <> ALL (OLD.unresolved)) THEN
			RAISE EXCEPTION 'cannot change unresolved of kbench_runs %', key
				USING ERRCODE = 'restrict_violation',
				      DETAIL = 'A reference is marked resolved by the store when its manifest arrives, and only then.';
		END IF;
		withdrawal := (OLD.retracted_at, OLD.retraction_reason, OLD.superseded_by, OLD.supersession_reason)
		              IS DISTINCT FROM (NEW.retracted_at, NEW.retraction_reason, NEW.superseded_by, NEW.supersession_reason);
		IF withdrawal AND coalesce(pg_catalog.current_setting('kbench.withdrawal', true), '') <> OLD.digest THEN
			RAISE EXCEPTION 'cannot change the retraction or supersession of kbench_runs % by UPDATE', key
				USING ERRCODE = 'restrict_violation',
				      HINT = 'Retract it with kbench_retract() or supersede it with kbench_supersede().';
		END IF;
		IF OLD.retracted_at IS NOT NULL
		   AND (NEW.retracted_at, NEW.retraction_reason) IS DISTINCT FROM (OLD.retracted_at, OLD.retraction_reason) THEN
			RAISE EXCEPTION 'run % is already retracted', OLD.digest
				USING ERRCODE = 'restrict_violation', DETAIL = 'A retraction is permanent.';
		END IF;
		IF OLD.superseded_by IS NOT NULL
		   AND (NEW.superseded_by, NEW.supersession_reason) IS DISTINCT FROM (OLD.superseded_by, OLD.supersession_reason) THEN
			RAISE EXCEPTION 'run % is already superseded by %', OLD.digest, OLD.superseded_by
				USING ERRCODE = 'restrict_violation', DETAIL = 'A supersession is permanent.';
		END IF;
		IF NEW.superseded_by IS DISTINCT FROM OLD.superseded_by
		   AND (NEW.superseded_by = OLD.digest OR NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = NEW.superseded_by)) THEN
			RAISE EXCEPTION 'run % is not in the catalog', NEW.superseded_by USING ERRCODE = 'no_data_found';
		END IF;
	ELSIF TG_TABLE_NAME IN ('kbench_workloads', 'kbench_implementations')
	      AND NEW.operation_resolved IS DISTINCT FROM OLD.operation_resolved
	      AND (NOT NEW.operation_resolved
	           OR NOT EXISTS (SELECT 1 FROM kbench_operations t WHERE t.digest = NEW.operation_digest)) THEN
		RAISE EXCEPTION 'cannot change operation_resolved of % %', TG_TABLE_NAME, key
			USING ERRCODE = 'restrict_violation',
			      DETAIL = 'An operation is marked resolved by the store when its manifest arrives, and only then.';
	END IF;
	RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION kbench__no_delete() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'cannot % %: the catalog is append-only', CASE TG_OP WHEN 'TRUNCATE' THEN 'truncate' ELSE 'delete from' END, TG_TABLE_NAME
		USING ERRCODE = 'restrict_violation',
		      HINT = CASE WHEN TG_TABLE_NAME = 'kbench_runs'
		                  THEN 'Retract the run with kbench_retract(digest, reason); it stays, marked and explained.'
		                  ELSE 'Catalog rows are never deleted.' END;
END $$;

CREATE TRIGGER immutable BEFORE UPDATE ON kbench_measurements
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER immutable BEFORE UPDATE ON kbench_catalog_source_rows
	FOR EACH ROW EXECUTE FUNCTION kbench__immutable();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_projects FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_serving_manifests FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only BEFORE DELETE ON kbench_catalog_source_rows FOR EACH ROW EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_operations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_workloads FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_implementations FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_protocols FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_environments FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_projects FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_serving_manifests FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();
CREATE TRIGGER append_only_truncate BEFORE TRUNCATE ON kbench_catalog_source_rows FOR EACH STATEMENT EXECUTE FUNCTION kbench__no_delete();

-- kbench_retract, kbench_supersede and kbench__withdraw (lossless export:
-- retractions and supersessions go out and come back): 80_first_hour.sql
-- drops the 0.1.0 functions, 81_withdrawal.sql (a link to
-- sql/20_withdrawal.sql) makes them.


-- kbench_export_catalog: 53_export.sql (its last definition, once).


-- .zst read by libzstd, no shell.
CREATE OR REPLACE FUNCTION kbench_import_catalog(path text,
	OUT import_id bigint, OUT lines bigint, OUT inserted bigint, OUT present bigint, OUT skipped bigint, OUT rejected bigint)
	RETURNS record AS 'MODULE_PATHNAME', 'kbench_import_catalog_file' LANGUAGE C VOLATILE;


-- Records and history, per statement.
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

DROP TRIGGER records ON kbench_runs;
CREATE TRIGGER records AFTER INSERT ON kbench_runs REFERENCING NEW TABLE AS kbench_new_runs
	FOR EACH STATEMENT EXECUTE FUNCTION kbench__records_after_insert();


SELECT pg_catalog.pg_extension_config_dump('kbench_record_history', '');
SELECT pg_catalog.pg_extension_config_dump('kbench_record_history_id_seq', '');
