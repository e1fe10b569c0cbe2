-- What the catalog export says about a run that kbench reproduced
-- (sql/45_reproductions.sql): {"reproducedByKernelindex": true,
-- "independentReplicationCount": n} for n verified reproductions, else {}.
-- Before the catalog (kbench_export_catalog calls it); plpgsql, so the
-- tables it reads may come later in the install script.
CREATE FUNCTION kbench_reproduction_marks(run_digest text) RETURNS jsonb
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, @extschema@, pg_temp AS $$
DECLARE
	n bigint;
BEGIN
	SELECT count(*) INTO n FROM kbench_reproductions v WHERE v.reported_run = run_digest AND v.verified;
	RETURN CASE WHEN n > 0 THEN jsonb_build_object('reproducedByKernelindex', true, 'independentReplicationCount', n)
	            ELSE '{}'::jsonb END;
END $$;
COMMENT ON FUNCTION kbench_reproduction_marks(text) IS 'what the catalog export adds to a run that kbench reproduced: reproducedByKernelindex, independentReplicationCount';
