--------------------------------------------------------------------------
-- Append-only: the trigger functions that keep catalog rows from changing
-- or going (the triggers are in sql/code/20_catalog.sql).  Before
-- the catalog: plpgsql reads the tables only when it runs.
--------------------------------------------------------------------------

-- Refuse an UPDATE that changes any column but the ones named in TG_ARGV,
-- and those only as the catalog itself changes them: a reference marked
-- resolved only when its manifest is there, and a retraction or a
-- supersession only from kbench_retract() / kbench_supersede(), which
-- check their target exists (they name the run in the transaction-local
-- setting kbench.withdrawal for the one UPDATE they make).  Nothing short
-- of a superuser disabling the triggers changes a stored row otherwise.
CREATE OR REPLACE FUNCTION _kernelindex.immutable() RETURNS trigger
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

-- Refuse DELETE and TRUNCATE.
CREATE OR REPLACE FUNCTION _kernelindex.no_delete() RETURNS trigger
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	RAISE EXCEPTION 'cannot % %: the catalog is append-only', CASE TG_OP WHEN 'TRUNCATE' THEN 'truncate' ELSE 'delete from' END, TG_TABLE_NAME
		USING ERRCODE = 'restrict_violation',
		      HINT = CASE WHEN TG_TABLE_NAME = 'kbench_runs'
		                  THEN 'Retract the run with kbench_retract(digest, reason); it stays, marked and explained.'
		                  ELSE 'Catalog rows are never deleted.' END;
END $$;
