-- Pictures of the history (docs/REPORTS.md): SVG charts from SQL and a
-- self-contained HTML report.
--
--   kbench_chart(spec jsonb)            draws any chart described as jsonb (the
--                                       four charts below are built on it)
--   kbench_chart_sweep(...)             one operation, pass and device: a metric
--                                       against one swept axis, a line and band
--                                       per implementation
--   kbench_chart_series(...)            one implementation family in a workload
--                                       over its points, regressions marked
--   kbench_chart_roofline(...)          one device: every run against the roofs
--   kbench_chart_records(...)           a cohort's leaders over time
--   kbench_report(...)                  one HTML page: leaders, speedups,
--                                       regressions, alerts, jobs, the charts
--
-- Everything is deterministic: the same rows give the same bytes (no clock,
-- no random ids, numbers printed at a fixed precision).  No JavaScript.  The
-- functions run as their caller (SECURITY INVOKER): they read only what the
-- caller may read, and the report lists only the jobs the caller may see.

--------------------------------------------------------------------------
-- Building blocks (public: they only format text)
--------------------------------------------------------------------------

-- Text made safe for XML/HTML content and attribute values: the five
-- special characters escaped, the control characters XML 1.0 forbids dropped.
CREATE OR REPLACE FUNCTION kbench_svg_escape(s text) RETURNS text
	LANGUAGE sql IMMUTABLE PARALLEL SAFE
	RETURN replace(replace(replace(replace(replace(
	         regexp_replace(coalesce(s, ''), '[\x01-\x08\x0B\x0C\x0E-\x1F\x7F]', '', 'g'),
	         '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
COMMENT ON FUNCTION kbench_svg_escape(text) IS 'text escaped for XML and HTML (& < > " '' and the control characters XML forbids)';

-- A number as a short label: three significant digits and an SI suffix
-- (1.5k, 3.35T, 0.25, 2e-05).
CREATE OR REPLACE FUNCTION kbench_svg_number(v float8) RETURNS text
	LANGUAGE plpgsql STABLE PARALLEL SAFE SET search_path = pg_catalog, pg_temp
	SET extra_float_digits = 1 AS $$
DECLARE
	a float8 := abs(v);
	scale float8 := 1;
	suffix text := '';
	n numeric;
	s text;
BEGIN
	IF v IS NULL OR v <> v OR a = 'Infinity'::float8 THEN
		RETURN '';
	ELSIF a = 0 THEN
		RETURN '0';
	ELSIF a < 1e-3 THEN
		RETURN replace(btrim(to_char(v, '9.9EEEE')), '.0e', 'e');
	END IF;
	a := round(a / 10 ^ (floor(log(a)) - 2)) * 10 ^ (floor(log(a)) - 2);   -- as it will print
	IF a >= 1e15 THEN scale := 1e15; suffix := 'P';
	ELSIF a >= 1e12 THEN scale := 1e12; suffix := 'T';
	ELSIF a >= 1e9 THEN scale := 1e9; suffix := 'G';
	ELSIF a >= 1e6 THEN scale := 1e6; suffix := 'M';
	ELSIF a >= 1e3 THEN scale := 1e3; suffix := 'k';
	END IF;
	n := (v / scale)::numeric;
	s := round(n, greatest(0, 2 - floor(log(abs(n)))::int))::text;
	IF s LIKE '%.%' THEN
		s := regexp_replace(regexp_replace(s, '0+$', ''), '\.$', '');
	END IF;
	RETURN s || suffix;
END $$;
COMMENT ON FUNCTION kbench_svg_number(float8) IS 'a number as a short chart label: three significant digits and an SI suffix (k, M, G, T, P)';
