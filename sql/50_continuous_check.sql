--------------------------------------------------------------------------
-- The CI gate, kbench_check, over the alerts of sql/50_continuous.sql.
-- CREATE OR REPLACE in a part of its own, so that the upgrades run it as it
-- is (links: sql/updates/0.1.0--0.2.0/50_continuous_check.sql,
-- sql/updates/0.2.0--0.3.0/84_check.sql).
--------------------------------------------------------------------------

-- Fail a CI job on a regression: raises SQLSTATE KB001 when an alert that
-- is open or confirmed (acknowledged, suppressed and refuted ones do not
-- block; lapsed ones do again) matches the arguments; else returns a one-line
-- summary.  psql -v ON_ERROR_STOP=1 -c "SELECT kbench_check('my-kernel')"
CREATE OR REPLACE FUNCTION kbench_check(implementation text DEFAULT NULL, operation text DEFAULT NULL, mode text DEFAULT NULL,
                             environment text DEFAULT NULL, since timestamptz DEFAULT NULL)
	RETURNS text
	LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	blocking int;
	confirmed int;
	others int;
	worst text;
BEGIN
	-- the arguments first, so that an error in them is raised here, with one
	-- line of context, not from the resolvers three calls down
	BEGIN
		PERFORM kbench__series_filter(implementation, operation, mode, environment, NULL);
	EXCEPTION WHEN undefined_object OR ambiguous_parameter OR null_value_not_allowed OR invalid_parameter_value THEN
		DECLARE
			m text; d text; h text; c text;
		BEGIN
			GET STACKED DIAGNOSTICS m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT, c = RETURNED_SQLSTATE;
			-- (a RAISE option may not be NULL; a detail or hint absent is '')
			IF d <> '' AND h <> '' THEN
				RAISE EXCEPTION USING MESSAGE = 'kbench_check: ' || m, DETAIL = d, HINT = h, ERRCODE = c;
			ELSIF h <> '' THEN
				RAISE EXCEPTION USING MESSAGE = 'kbench_check: ' || m, HINT = h, ERRCODE = c;
			ELSIF d <> '' THEN
				RAISE EXCEPTION USING MESSAGE = 'kbench_check: ' || m, DETAIL = d, ERRCODE = c;
			END IF;
			RAISE EXCEPTION USING MESSAGE = 'kbench_check: ' || m, ERRCODE = c;
		END;
	END;
	SELECT count(*) FILTER (WHERE a.status IN ('open', 'confirmed')), count(*) FILTER (WHERE a.status = 'confirmed'),
	       count(*) FILTER (WHERE a.status NOT IN ('open', 'confirmed')),
	       (array_agg(format('alert %s: %s %s on %s, %s%s%% (%s)', a.id, a.family, a.workload, a.device, CASE WHEN a.change_pct >= 0 THEN '+' END,
	                         round(a.change_pct::numeric, 1), a.status)
	                  ORDER BY a.status = 'confirmed' DESC, a.change_pct DESC) FILTER (WHERE a.status IN ('open', 'confirmed')))[1]
	  INTO blocking, confirmed, others, worst
	  FROM kbench__gate_alerts(implementation, operation, mode, environment, since) a;
	IF blocking > 0 THEN
		RAISE EXCEPTION 'kbench_check: % regression alert% (% confirmed)', blocking, CASE WHEN blocking > 1 THEN 's' ELSE '' END, confirmed
			USING ERRCODE = 'KB001',
			DETAIL = format('The largest: %s.', worst),
			HINT = 'See kbench_alert_status; acknowledge or suppress an alert with a reason (kbench_alert_acknowledge, kbench_alert_suppress) to let the check pass.';
	END IF;
	RETURN format('ok: no open or confirmed regression alert (%s acknowledged, suppressed or refuted)', others);
END $$;
COMMENT ON FUNCTION kbench_check(text, text, text, text, timestamptz) IS 'CI gate: raises SQLSTATE KB001 when an open or confirmed alert matches, else returns a summary line';
