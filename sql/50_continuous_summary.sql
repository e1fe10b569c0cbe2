--------------------------------------------------------------------------
-- The alerts as Markdown, for a pull request (after 50_continuous.sql: it
-- reads kbench__gate_alerts).  CREATE OR REPLACE, so that an upgrade runs
-- this part as it is (sql/updates/*/50_continuous_summary.sql link to it).
--------------------------------------------------------------------------

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
CREATE OR REPLACE FUNCTION kbench__markdown_cell(value text) RETURNS text
	LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE SET search_path = pg_catalog, pg_temp
	RETURN regexp_replace(
	         replace(replace(replace(
	           regexp_replace(value, E'[\\x01-\\x1f\\x7f-\\x9f\\u2028\\u2029]', ' ', 'g'),
	           '&', '&amp;'), '<', '&lt;'), '>', '&gt;'),
	         '([][\\`*_~|()!@])', '\\\1', 'g');
COMMENT ON FUNCTION kbench__markdown_cell(text) IS 'a value as Markdown table cell text: no line break, HTML, markup or link';

-- A Markdown table of the matching alerts (all statuses), worst first, to
-- paste into a pull request.  Every value written is a kbench__markdown_cell.
CREATE OR REPLACE FUNCTION kbench_summary_markdown(implementation text DEFAULT NULL, operation text DEFAULT NULL, mode text DEFAULT NULL,
                                                   environment text DEFAULT NULL, since timestamptz DEFAULT NULL)
	RETURNS text
	LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, @extschema@, pg_temp STABLE AS $$
	SELECT format(E'**kernelindex: %s blocking of %s alert%s**\n\n', count(*) FILTER (WHERE a.status IN ('open', 'confirmed')),
	              count(*), CASE WHEN count(*) = 1 THEN '' ELSE 's' END)
	       || E'| alert | status | implementation | workload | mode | device | before | after | change | points |\n'
	       || E'|---:|---|---|---|---|---|---:|---:|---:|---:|\n'
	       || coalesce(string_agg(format('| %s | %s | %s | %s | %s | %s | %s µs | %s µs | %s%s%% | %s |',
	                                     a.id, kbench__markdown_cell(a.status), kbench__markdown_cell(a.family),
	                                     kbench__markdown_cell(coalesce(a.workload, a.workload_digest)),
	                                     coalesce(kbench__markdown_cell(a.mode), ''), coalesce(kbench__markdown_cell(a.device), ''),
	                                     round((a.baseline_ns / 1e3)::numeric, 2), round((a.value_ns / 1e3)::numeric, 2),
	                                     CASE WHEN a.change_pct >= 0 THEN '+' END, round(a.change_pct::numeric, 1), a.points),
	                              E'\n' ORDER BY a.status IN ('open', 'confirmed') DESC, a.change_pct DESC, a.id) || E'\n', '')
	  FROM kbench__gate_alerts(implementation, operation, mode, environment, since) a
$$;
COMMENT ON FUNCTION kbench_summary_markdown(text, text, text, text, timestamptz) IS 'the matching alerts as a Markdown table for a pull request';
