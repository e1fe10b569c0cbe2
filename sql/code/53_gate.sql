--------------------------------------------------------------------------
-- The CI gate
--------------------------------------------------------------------------

-- The alerts that a gate or a summary selects: effective status open or
-- confirmed (blocking), the others too when all.
CREATE OR REPLACE FUNCTION _kernelindex.gate_alerts(implementation text, operation text, mode text, environment text, since timestamptz)
	RETURNS SETOF kbench_alert_status
	LANGUAGE plpgsql SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
DECLARE
	f record;
BEGIN
	f := _kernelindex.series_filter(implementation, operation, mode, environment, NULL);
	RETURN QUERY
	SELECT s.* FROM kbench_alert_status s
	 WHERE (f.impls IS NULL OR s.family IN (SELECT i.name FROM kbench_implementations i WHERE i.digest = ANY (f.impls))
	                        OR s.family = ANY (f.impls))
	   AND (f.ops IS NULL OR s.workload_digest IN (SELECT w.digest FROM kbench_workloads w WHERE w.operation_digest = ANY (f.ops)))
	   AND (f.protos IS NULL OR s.protocol_digest = ANY (f.protos))
	   AND (f.envs IS NULL OR s.environment_digest = ANY (f.envs))
	   AND (since IS NULL OR s.opened_at >= since)
	 ORDER BY s.id;
END $$;
REVOKE ALL ON FUNCTION _kernelindex.gate_alerts(text, text, text, text, timestamptz) FROM PUBLIC;

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
		PERFORM _kernelindex.series_filter(implementation, operation, mode, environment, NULL);
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
	  FROM _kernelindex.gate_alerts(implementation, operation, mode, environment, since) a;
	IF blocking > 0 THEN
		RAISE EXCEPTION 'kbench_check: % regression alert% (% confirmed)', blocking, CASE WHEN blocking > 1 THEN 's' ELSE '' END, confirmed
			USING ERRCODE = 'KB001',
			DETAIL = format('The largest: %s.', worst),
			HINT = 'See kbench_alert_status; acknowledge or suppress an alert with a reason (kbench_alert_acknowledge, kbench_alert_suppress) to let the check pass.';
	END IF;
	RETURN format('ok: no open or confirmed regression alert (%s acknowledged, suppressed or refuted)', others);
END $$;
COMMENT ON FUNCTION kbench_check(text, text, text, text, timestamptz) IS 'CI gate: raises SQLSTATE KB001 when an open or confirmed alert matches, else returns a summary line';
-- One value as the text of a Markdown table cell (issue 24): the names in
-- it come from whoever ingested the runs, and the table is pasted into a
-- pull request or a CI summary, so nothing in a value may end the cell or
-- the row, or make markup, HTML or a link:
--   - control characters (newlines, tabs) and Unicode line and paragraph
--     separators become spaces: a value stays on its row;
--   - &, < and > become HTML's entities: no tag, no comment, no <autolink>;
--   - the punctuation of Markdown's inline syntax, \ ` * _ ~ | [ ] ( ) !
--     and @, gets a backslash: no cell ends at a |, no code span,
--     emphasis, [link](target) or ![image](target), and no e-mail autolink
--     (mailto:).  What is left linkable is GitHub's bare http(s)://
--     and www. autolinks: no link whose target is not http(s).
CREATE OR REPLACE FUNCTION _kernelindex.markdown_cell(value text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
	RETURN regexp_replace(
	         replace(replace(replace(
	           regexp_replace(value, E'[\\x01-\\x1f\\x7f-\\x9f\\u2028\\u2029]', ' ', 'g'),
	           '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
	         '([][\\`*_~|()!@])', '\\\1', 'g');
COMMENT ON FUNCTION _kernelindex.markdown_cell(text) IS 'a value as Markdown table cell text: no line break, HTML, markup or link';

-- A Markdown table of the matching alerts (all statuses), worst first, to
-- paste into a pull request.  Every value written is a _kernelindex.markdown_cell.
CREATE OR REPLACE FUNCTION kbench_summary_markdown(implementation text DEFAULT NULL, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                                   environment text DEFAULT NULL, since timestamptz DEFAULT NULL)
	RETURNS text
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
	SELECT format(E'**kernelindex: %s blocking of %s alert%s**\n\n', count(*) FILTER (WHERE a.status IN ('open', 'confirmed')),
	              count(*), CASE WHEN count(*) = 1 THEN '' ELSE 's' END)
	       || E'| alert | status | implementation | workload | mode | device | before | after | change | points |\n'
	       || E'|---:|---|---|---|---|---|---:|---:|---:|---:|\n'
	       || coalesce(string_agg(format('| %s | %s | %s | %s | %s | %s | %s µs | %s µs | %s%s%% | %s |',
	                                     a.id, _kernelindex.markdown_cell(a.status), _kernelindex.markdown_cell(a.family),
	                                     _kernelindex.markdown_cell(coalesce(a.workload, a.workload_digest)),
	                                     coalesce(_kernelindex.markdown_cell(a.mode), ''), coalesce(_kernelindex.markdown_cell(a.device), ''),
	                                     round((a.baseline_ns / 1e3)::numeric, 2), round((a.value_ns / 1e3)::numeric, 2),
	                                     CASE WHEN a.change_pct >= 0 THEN '+' END, round(a.change_pct::numeric, 1), a.points),
	                              E'\n' ORDER BY a.status IN ('open', 'confirmed') DESC, a.change_pct DESC, a.id) || E'\n', '')
	  FROM _kernelindex.gate_alerts(implementation, operation, mode, environment, since) a
$$;
COMMENT ON FUNCTION kbench_summary_markdown(text, text, text, text, timestamptz) IS 'the matching alerts as a Markdown table for a pull request';
