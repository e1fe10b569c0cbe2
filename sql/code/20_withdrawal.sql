--------------------------------------------------------------------------
-- Withdrawal: retracting and superseding runs (they stay in the catalog,
-- marked, with the reason), and the same read from a catalog export.
-- The only writers of those columns (_kernelindex.immutable, 19_append_only.sql,
-- refuses any other UPDATE).  The 0.1.0--0.2.0 modfile drops 0.1.0's
-- kbench_retract and kbench_supersede (they returned the run row).
--------------------------------------------------------------------------

-- Retract a run: it stays in the catalog, marked, with the reason.  The run
-- is named by its digest or a unique prefix; returns its digest.
CREATE OR REPLACE FUNCTION kbench_retract(run_digest text, reason text) RETURNS text
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	d text;
BEGIN
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'a retraction needs a reason' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	d := _kernelindex.resolve_run(run_digest);
	PERFORM pg_catalog.set_config('kbench.withdrawal', d, true);
	UPDATE kbench_runs SET retracted_at = now(), retraction_reason = reason WHERE digest = d;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN d;
END $$;

-- Supersede a run by a newer one (both stay; the old one points to the new).
-- Each is named by its digest or a unique prefix; returns the old one's digest.
CREATE OR REPLACE FUNCTION kbench_supersede(old_digest text, new_digest text, reason text) RETURNS text
	LANGUAGE plpgsql SET search_path = @extschema@, pg_temp AS $$
DECLARE
	o text;
	n text;
BEGIN
	IF reason IS NULL OR btrim(reason) = '' THEN
		RAISE EXCEPTION 'a supersession needs a reason' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	BEGIN
		n := _kernelindex.resolve_run(new_digest, 'superseding');
	EXCEPTION WHEN no_data_found THEN
		RAISE EXCEPTION 'run % is not in the catalog', new_digest USING ERRCODE = 'no_data_found',
			HINT = 'Ingest the superseding run first.';
	END;
	o := _kernelindex.resolve_run(old_digest);
	IF o = n THEN
		RAISE EXCEPTION 'a run cannot supersede itself' USING ERRCODE = 'invalid_parameter_value';
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', o, true);
	UPDATE kbench_runs SET superseded_by = n, supersession_reason = reason WHERE digest = o;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN o;
END $$;

-- A retraction or supersession read from a catalog export, as it was
-- (its time included); false when the superseding run is not in the
-- catalog.  Internal: the catalog import calls it after storing the runs.
CREATE OR REPLACE FUNCTION _kernelindex.withdraw(run_digest text, retracted_at timestamptz, retraction_reason text,
	superseded_by text, supersession_reason text) RETURNS boolean
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp AS $$
BEGIN
	IF superseded_by IS NOT NULL AND (superseded_by = run_digest
	   OR NOT EXISTS (SELECT 1 FROM kbench_runs r WHERE r.digest = withdraw.superseded_by)) THEN
		RETURN false;
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', run_digest, true);
	IF retracted_at IS NOT NULL AND retraction_reason IS NOT NULL THEN
		UPDATE kbench_runs r SET retracted_at = withdraw.retracted_at, retraction_reason = withdraw.retraction_reason
		 WHERE r.digest = run_digest AND r.retracted_at IS NULL;
	END IF;
	IF superseded_by IS NOT NULL AND supersession_reason IS NOT NULL THEN
		UPDATE kbench_runs r SET superseded_by = withdraw.superseded_by, supersession_reason = withdraw.supersession_reason
		 WHERE r.digest = run_digest AND r.superseded_by IS NULL;
	END IF;
	PERFORM pg_catalog.set_config('kbench.withdrawal', '', true);
	RETURN true;
END $$;
REVOKE EXECUTE ON FUNCTION _kernelindex.withdraw(text, timestamptz, text, text, text) FROM PUBLIC;
